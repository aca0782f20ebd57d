"""The data model, the registry and the bad-input rules."""
from __future__ import annotations

import pytest

import chunklab
from chunklab import Chunk, Document, check_chunks
from chunklab.params import ParamError


def test_chunk_rejects_text_that_does_not_match_its_span():
    with pytest.raises(ValueError, match="span"):
        Chunk("d", 0, 0, 2, "abc")
    with pytest.raises(ValueError, match="start <= end"):
        Chunk("d", 0, 3, 1, "")


def test_chunk_is_immutable_and_meta_is_read_only():
    c = Chunk("d", 0, 0, 2, "ab", {"level": "x"})
    with pytest.raises(AttributeError):
        c.start = 1  # type: ignore[misc]
    with pytest.raises(TypeError):
        c.meta["level"] = "y"  # type: ignore[index]


def test_embed_text_keeps_context_out_of_text():
    c = Chunk("d", 0, 0, 4, "病假工资", context="员工手册 > 3.2 病假")
    assert c.text == "病假工资"
    assert c.embed_text == "员工手册 > 3.2 病假\n病假工资"
    assert Chunk("d", 0, 0, 1, "a").embed_text == "a"


def test_prefix_goes_to_context_not_text():
    doc = Document("h", "第一句。第二句。", title="员工手册")
    chunks = chunklab.chunk(doc, "sentence", target=4, prefix=True)
    assert [c.text for c in chunks] == ["第一句。", "第二句。"]
    assert all(c.context == "员工手册" for c in chunks)
    assert check_chunks(doc, chunks) == []


def test_check_chunks_reports_problems():
    doc = Document("d", "abc def")
    good = chunklab.chunk(doc, "fixed", size=3)
    assert check_chunks(doc, good) == []
    assert any("in no chunk" in p for p in check_chunks(doc, good[:1]))
    assert any("before the previous" in p for p in check_chunks(doc, [good[1], good[0]]))


@pytest.mark.parametrize(
    "name, params, exc, words",
    [
        ("recursive", {"target": 0}, ParamError, ["target must be an int in [1, 100000], got 0"]),
        ("recursive", {"target": -5}, ParamError, ["target", "-5"]),
        ("recursive", {"target": 1.5}, TypeError, ["target", "an int", "1.5"]),
        ("recursive", {"target": True}, TypeError, ["target", "True"]),
        ("recursive", {"target": 100, "overlap": 100}, ParamError, ["overlap", "[0, 99]", "100"]),
        ("recursive", {"target": 100, "min": 101}, ParamError, ["min", "[0, 100]", "101"]),
        ("recursive", {"target": 100, "max": 50}, ParamError, ["max", ">= target", "50"]),
        ("recursive", {"length": "words"}, ParamError, ["length", "'chars'", "'tokens'", "words"]),
        ("recursive", {"taget": 5}, ParamError, ["unknown parameter 'taget'", "did you mean 'target'"]),
        ("fixed", {"size": 10, "overlap": 10}, ParamError, ["overlap", "[0, 9]", "10"]),
        ("fixed", {"size": 0}, ParamError, ["size must be an int in [1, 1000000], got 0"]),
        ("sliding_window", {"window": 10, "step": 11}, ParamError, ["step", "[1, 10]", "11"]),
        ("token", {"size": 5, "overlap": 7}, ParamError, ["overlap", "[0, 4]", "7"]),
        ("recursive", {"separators": ["("]}, ParamError, ["separators", "invalid regular expression"]),
    ],
)
def test_bad_parameters_name_the_parameter_value_and_range(name, params, exc, words):
    with pytest.raises(exc) as info:
        chunklab.get_strategy(name, **params)
    for w in words:
        assert w in str(info.value)


def test_unknown_strategy_suggests_the_closest_name():
    with pytest.raises(ValueError, match="did you mean 'recursive'"):
        chunklab.get_strategy("recursiv")


def test_bad_text_types():
    with pytest.raises(TypeError, match="decode it first"):
        chunklab.chunk(b"\xe4\xbd\xa0", "fixed")
    with pytest.raises(TypeError, match="got int"):
        chunklab.chunk(42, "fixed")
    with pytest.raises(TypeError, match="decode it first"):
        Document("d", b"abc")


def test_repr_shows_only_non_defaults():
    assert repr(chunklab.get_strategy("recursive", target=512, overlap=50)) == "Recursive(target=512, overlap=50)"
    assert repr(chunklab.get_strategy("fixed")) == "Fixed()"


def test_list_strategies_describes_every_parameter():
    entries = {e["name"]: e for e in chunklab.list_strategies()}
    rec = entries["recursive"]
    assert rec["family"] == "linguistic"
    assert rec["params"]["target"]["default"] == 500
    assert rec["params"]["target"]["low"] == 1
    assert rec["params"]["overlap"]["allowed"].startswith("an int")
    assert entries["fixed"]["family"] == "geometric"
    assert "切" in entries["fixed"]["summary_zh"]


def test_every_chunk_records_its_strategy_and_level():
    chunks = chunklab.chunk("段一。\n\n" + "长" * 50, "paragraph", target=10)
    assert chunks[0].meta == {"strategy": "paragraph", "level": "paragraph"}
    assert chunks[1].meta["level"] == "recursive"
    assert chunks[1].meta["fallback_from"] == "paragraph"


@pytest.mark.parametrize("name, params, message", [
    ("recursive", {"target": 100, "overlap": 100}, "overlap must be an int in [0, target) = [0, 99], got 100"),
    ("recursive", {"target": 100, "min": 101}, "min must be an int in [0, target] = [0, 100], got 101"),
    ("fixed", {"size": 10, "overlap": 10}, "overlap must be an int in [0, size) = [0, 9], got 10"),
    ("token", {"size": 5, "overlap": 7}, "overlap must be an int in [0, size) = [0, 4], got 7"),
    ("sliding_window", {"window": 10, "step": 11}, "step must be an int in [1, window] = [1, 10], got 11"),
    ("dialogue", {"turns": 2, "overlap_turns": 2}, "overlap_turns must be an int in [0, turns) = [0, 1], got 2"),
    ("clause", {"target": 0}, "target must be an int in [1, 100000], got 0"),
    ("auto", {"target": 0}, "target must be an int in [1, 100000], got 0"),
])
def test_range_errors_have_one_form(name, params, message):
    with pytest.raises(ParamError) as info:
        chunklab.get_strategy(name, **params)
    assert str(info.value) == message


def test_a_bound_named_after_other_parameters():
    from chunklab.params import Param

    p = Param("int", 0, low=0, high=9, bounds="[0, size)")
    assert p.allowed() == "an int in [0, size) = [0, 9]"
    assert p.validate("overlap", 9) == 9
    with pytest.raises(TypeError, match=r"overlap must be an int in \[0, size\) = \[0, 9\], got '3'"):
        p.validate("overlap", "3")
    assert Param("int", 0, low=0, high=9).allowed() == "an int in [0, 9]"


def test_clause_and_auto_derive_min_from_an_integral_target():
    import numpy as np

    assert chunklab.get_strategy("clause", target=np.int64(100)).min == 100
    assert chunklab.get_strategy("auto", target=np.int64(100)).get_params()["min"] == 100
    with pytest.raises(TypeError, match="target must be an int"):
        chunklab.get_strategy("clause", target="100")
