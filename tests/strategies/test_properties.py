"""Property tests over EVERY registered strategy, with parameters drawn from the registry.

A strategy added to the registry is tested here without writing a line: its
declared parameter ranges are sampled, invalid combinations are rejected by the
strategy itself (and skipped), and the invariants of the data model are checked.
"""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import chunklab
from chunklab import Document, check_chunks
from chunklab.params import ParamError

# Text that stresses splitters: CJK, punctuation, emoji, combining marks, CRLF, tabs, NUL.
ALPHABET = st.sampled_from(list(
    "北辰智联员工手册第三章考勤与休假年假病假条款一二三四五六七八九十"
    "abcXYZ 019.,;:!?。，；：！？、…“”「」（）()\n\n\r\t\x00#*-|`<>/"
    "\u0301\u3000😀🀄"
))
TEXT = st.one_of(
    st.text(ALPHABET, max_size=400),
    st.text(max_size=200),
    st.builds(lambda a, n, b: a + "甲" * n + b, st.text(ALPHABET, max_size=50), st.integers(0, 3000),
              st.text(ALPHABET, max_size=50)),
)

# Small upper bounds keep examples fast while still forcing many cuts.
UI_CAP = {"int": 300}


def _param_values(spec):
    """A hypothesis strategy for a dict of parameter values within the declared ranges."""
    fields = {}
    for name, p in spec.items():
        if p.kind == "int":
            lo = int(p.low if p.low is not None else 0)
            hi = int(min(p.high if p.high is not None else UI_CAP["int"], max(lo + 1, UI_CAP["int"])))
            s = st.integers(lo, hi)
            if p.none_ok:
                s = st.one_of(st.none(), s)
            fields[name] = s
        elif p.kind == "float":
            lo = p.low if p.low is not None else -10.0
            hi = p.high if p.high is not None else 10.0
            fields[name] = st.floats(lo, hi, allow_nan=False)
        elif p.kind == "bool":
            fields[name] = st.booleans()
        elif p.kind == "choice":
            fields[name] = st.sampled_from(list(p.choices))
        # strs / callable / str parameters keep their defaults here; unit tests cover them.
    return st.fixed_dictionaries(fields)


STRATEGIES = chunklab.strategy_names()


def _make(name, params):
    try:
        return chunklab.get_strategy(name, **params)
    except (ParamError, ValueError, TypeError):
        assume(False)


@pytest.mark.parametrize("name", STRATEGIES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data(), text=TEXT)
def test_invariants(name, data, text):
    spec = chunklab.get_strategy(name).param_spec()
    params = data.draw(_param_values(spec))
    if params.get("length") == "tokens" and len(text) > 600:
        text = text[:600]  # token counting is slow; the char case covers long runs
    strategy = _make(name, params)
    doc = Document("d", text, title="测试")
    chunks = strategy.split(doc)

    # offsets exact, in order, nothing lost
    assert check_chunks(doc, chunks) == []
    if not text.strip():
        assert chunks == []
    # deterministic
    assert [(c.start, c.end) for c in strategy.split(doc)] == [(c.start, c.end) for c in chunks]
    # every chunk records who made it
    for c in chunks:
        assert c.meta["strategy"] == name
        assert "level" in c.meta
    # size bounds and overlap, where the strategy has those knobs
    values = strategy.get_params()
    if "target" in values and values.get("length", "chars") == "chars":
        cap = strategy.cap
        for c in chunks:
            assert len(c) <= cap or c.meta.get("oversize"), (c, cap)
    if "overlap" in values and values.get("length", "chars") == "chars" and name != "token":
        for a, b in zip(chunks, chunks[1:]):
            assert a.end - b.start <= values["overlap"], (a, b)
    if name == "fixed":
        assert all(len(c) <= values["size"] for c in chunks)


@pytest.mark.parametrize("name", STRATEGIES)
def test_long_run_without_separators_terminates(name):
    text = "甲" * 100_000
    chunks = chunklab.get_strategy(name).split(Document("d", text))
    assert check_chunks(Document("d", text), chunks) == []


@pytest.mark.parametrize("name", STRATEGIES)
def test_empty_and_whitespace_documents(name):
    s = chunklab.get_strategy(name)
    assert s.split("") == []
    assert s.split(" \n\t\u3000\n") == []


@pytest.mark.parametrize("name", STRATEGIES)
def test_registry_entry_is_complete(name):
    entry = next(e for e in chunklab.list_strategies() if e["name"] == name)
    assert entry["summary_zh"] and entry["summary_en"]
    assert entry["family"] in chunklab.base.FAMILIES
    for pname, p in entry["params"].items():
        assert p["allowed"], pname
