"""One of each: the packer, the span length, the Markdown rules and the size vocabulary that
every strategy shares (one definition each, used everywhere)."""
from __future__ import annotations

import pytest

import chunklab
from chunklab import Document, check_chunks
from chunklab.core import trim_span
from chunklab.length import count_tokens, span_lengths, span_sizer
from chunklab.packing import pack, spanned, summed
from chunklab.params import ParamError
from chunklab.parsing.markdown import _Fences, _Headings, _lines, markdown_headings
from chunklab.parsing.tables import find_tables
from chunklab.strategies.linguistic import pack_units


# -- the packer ---------------------------------------------------------------------

def _reference_pack(lengths, target, overlap, max_units=None):
    """The greedy packer written out with a running total (the chapter 2 exercise)."""
    out, i, n = [], 0, len(lengths)
    while i < n:
        j, total = i, 0
        while j < n and (j == i or (total + lengths[j] <= target and (max_units is None or j - i < max_units))):
            total += lengths[j]
            j += 1
        out.append((i, j))
        if j == n:
            break
        k, carried = j, 0
        while k - 1 > i and carried + lengths[k - 1] <= overlap:
            carried += lengths[k - 1]
            k -= 1
        i = k
    return out


@pytest.mark.parametrize("lengths", [[], [7], [3, 3, 3, 5], [1, 9, 1, 1, 8, 2, 2, 2, 10, 1], [5] * 12])
@pytest.mark.parametrize("target, overlap, max_units", [(6, 0, None), (6, 3, None), (10, 4, 2), (3, 2, None)])
def test_pack_with_summed_lengths_is_the_greedy_packer(lengths, target, overlap, max_units):
    got = pack(len(lengths), summed(lengths), target, overlap, max_units)
    assert got == _reference_pack(lengths, target, overlap, max_units)
    if lengths:
        assert got[0][0] == 0 and got[-1][1] == len(lengths)
        assert all(b[0] > a[0] for a, b in zip(got, got[1:]))       # always moves forward


def test_pack_edge_cases():
    assert pack(0, summed([]), 5) == []
    assert pack(1, summed([50]), 5) == [(0, 1)]                        # a unit longer than target stays whole
    assert pack(3, summed([50, 1, 1]), 5) == [(0, 1), (1, 3)]
    assert pack(4, summed([1, 1, 1, 1]), 100, max_units=3) == [(0, 3), (3, 4)]
    # overlap 0 carries nothing; a carried unit may leave a range inside the previous one
    assert pack(4, summed([3, 3, 3, 5]), 6, overlap=3) == [(0, 2), (1, 3), (2, 3), (3, 4)]


def test_summed_and_spanned_measure_a_run_differently():
    text = "甲。    乙。"
    units = [(0, 2), (6, 8)]                                 # the spaces between them belong to no unit
    size = span_sizer(text)
    assert summed(span_lengths(units, size))(0, 2) == 4
    assert spanned(units, size)(0, 2) == 8
    assert pack(2, summed(span_lengths(units, size)), 4) == [(0, 2)]
    assert pack(2, spanned(units, size), 4) == [(0, 1), (1, 2)]


def test_pack_units_is_the_packer_over_spans():
    text = "第一句。第二句话。第三句。第四。"
    units = chunklab.strategies.linguistic.sentence_spans(text)
    lengths = [e - s for s, e in units]
    for target, overlap in ((8, 0), (9, 4), (100, 0)):
        want = [(units[i][0], units[j - 1][1]) for i, j in _reference_pack(lengths, target, overlap)]
        assert pack_units(units, target, overlap, None, text) == want
    tokens = [count_tokens(text[s:e]) for s, e in units]
    want = [(units[i][0], units[j - 1][1]) for i, j in _reference_pack(tokens, 12, 0)]
    assert pack_units(units, 12, 0, count_tokens, text) == want


# -- the span length ----------------------------------------------------------------

def test_one_span_length_for_every_strategy():
    text = "hello world 你好"
    chars = chunklab.get_strategy("sentence").sizer(text)
    tokens = chunklab.get_strategy("sentence", length="tokens").sizer(text)
    assert chars(0, 11) == 11 and chars(3, 3) == 0
    assert tokens(0, 11) == count_tokens("hello world")
    assert chunklab.get_strategy("fixed").sizer(text)(0, 5) == 5        # no `length` parameter: characters
    assert span_lengths([(0, 5), (6, 11)], chars) == [5, 5]
    assert span_lengths([(0, 5), (6, 11)], tokens) == [count_tokens("hello"), count_tokens("world")]
    # a trimmed span is measured with trim_span
    assert chars(*trim_span("  甲乙 \n", 0, 6)) == 2


# -- one set of Markdown rules ------------------------------------------------------

def _paths(text: str, name: str) -> list:
    return [c.meta["path"] for c in chunklab.chunk(text, name) if c.meta.get("kind") == "table"]


def test_heading_title_is_the_same_for_markdown_and_containers():
    # "# C#" is the heading "C#" (a closing '#' sequence needs a space before it), everywhere
    text = "# C#\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    assert markdown_headings(text)[0][0][3] == "C#"
    assert _paths(text, "table") == [["C#"]]
    faq = "# C#\n问：怎么装？\n答：这样装。\n"
    assert [c.meta["path"] for c in chunklab.chunk(faq, "qa_pair")] == [["C#", "怎么装？"]]
    assert [c.meta["path"] for c in chunklab.chunk(text, "markdown")] == [["C#"]]


@pytest.mark.parametrize("text", [
    # a tab-indented ``` is not a fence (a tab is not an indent of at most three spaces)
    "# 总则\n\t```\n# 附则\n\t```\n| a | b |\n|---|---|\n| 1 | 2 |\n",
    # a backtick fence's info string may not contain a backtick: not a fence
    "# 总则\n``` a`b\n# 附则\n| a | b |\n|---|---|\n| 1 | 2 |\n",
])
def test_what_is_not_a_fence_is_the_same_everywhere(text):
    heads = [(s, title) for s, _, _, title in markdown_headings(text)[0]]
    assert [(s, title) for s, _, title in _Headings(text, 0, len(text)).items] == heads
    assert [t for _, t in heads] == ["总则", "附则"]
    assert _paths(text, "table") == [["附则"]]
    assert [c.meta["path"] for c in chunklab.chunk(text, "markdown")][-1] == ["附则"]


def test_a_fence_closes_only_with_a_bare_fence_line():
    # "```python" inside an open fence does not close it: the table under it is code
    text = ("# 总则\n```\n# 不是标题\n```python\n| a | b |\n|---|---|\n| 1 | 2 |\n```\n"
            "# 附则\n| c | d |\n|---|---|\n| 3 | 4 |\n")
    assert [t for _, _, _, t in markdown_headings(text)[0]] == ["总则", "附则"]
    assert [h[2] for h in _Headings(text, 0, len(text)).items] == ["总则", "附则"]
    assert [t.columns for t in find_tables(text)] == [["c", "d"]]
    assert _paths(text, "table") == [["附则"]]


def test_fences_are_commonmark_fences():
    f = _Fences()
    lines = ["~~~~", "~~~", "```", "~~~~~ x", "~~~~  ", "# out"]
    assert [f.code(0, line) for line in lines] == [True, True, True, True, True, False]
    f = _Fences()
    assert f.code(7, "   ```js") and f.open == ("`", 3, 7)
    assert not _Fences().code(0, "    ```")                             # four spaces: indented code


def test_front_matter_is_not_a_heading_for_containers_either():
    text = "---\ntitle: x\n# yaml comment\n---\n# 正文\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    assert [h[2] for h in _Headings(text, 0, len(text)).items] == ["正文"]
    assert _paths(text, "table") == [["正文"]]


def test_lines_keep_the_carriage_return_in_the_span():
    text = "ab\r\n\ncd"
    assert list(_lines(text, 0, len(text))) == [(0, 3, 4), (4, 4, 5), (5, 7, 7)]
    assert list(_lines(text, 0, 5)) == [(0, 3, 4), (4, 4, 5)]
    assert list(_lines("x\n", 0, 2)) == [(0, 1, 2)]                     # no empty last line
    crlf = "# 标题\r\n| a | b |\r\n|---|---|\r\n| 1 | 2 |\r\n"
    assert markdown_headings(crlf)[0][0][3] == "标题"
    assert _paths(crlf, "table") == [["标题"]]


# -- one size vocabulary ------------------------------------------------------------

DOC = Document("d", "北辰智联员工手册第三章考勤与休假。员工应按时上下班。" * 3)


@pytest.mark.parametrize("name, canonical", [
    ("fixed", {"size": 4, "overlap": 1}),
    ("token", {"size": 4, "overlap": 1}),
    ("sliding_window", {"window": 4, "step": 3}),
])
def test_size_strategies_accept_target_and_overlap(name, canonical):
    aliased = chunklab.get_strategy(name, target=4, overlap=1)
    assert chunklab.chunk(DOC, name, target=4, overlap=1) == chunklab.chunk(DOC, name, **canonical)
    assert aliased.get_params() == chunklab.get_strategy(name, **canonical).get_params()
    assert repr(aliased) == repr(chunklab.get_strategy(name, **canonical))
    assert check_chunks(DOC, aliased.split(DOC)) == []


def test_size_vocabulary_keeps_the_canonical_names():
    entries = {e["name"]: e for e in chunklab.list_strategies()}
    assert list(entries["fixed"]["params"]) == ["size", "overlap", "prefix"]
    assert list(entries["token"]["params"]) == ["size", "overlap", "prefix"]
    assert list(entries["sliding_window"]["params"]) == ["window", "step", "prefix"]
    assert chunklab.chunk(DOC, "fixed", target=8) == chunklab.chunk(DOC, "fixed", size=8)
    with pytest.raises(ParamError, match=r"step must be an int in \[1, window\] = \[1, 8\], got 256"):
        chunklab.get_strategy("sliding_window", target=8)        # as with window=8: the default step is 256
    assert chunklab.chunk(DOC, "sliding_window", target=300) == chunklab.chunk(DOC, "sliding_window", window=300)
    assert chunklab.chunk(DOC, "sliding_window", overlap=100) == \
        chunklab.chunk(DOC, "sliding_window", window=512, step=412)


@pytest.mark.parametrize("name, params, words", [
    ("fixed", {"target": 4, "size": 4}, ["'target' is another name for 'size'", "not both"]),
    ("token", {"target": 4, "size": 4}, ["'target' is another name for 'size'"]),
    ("sliding_window", {"target": 4, "window": 4}, ["'target' is another name for 'window'"]),
    ("sliding_window", {"overlap": 1, "step": 3}, ["'overlap' is another name for 'step'"]),
])
def test_an_alias_and_its_name_together_are_an_error(name, params, words):
    with pytest.raises(ParamError) as info:
        chunklab.get_strategy(name, **params)
    assert "\n" not in str(info.value)
    for w in words:
        assert w in str(info.value)


@pytest.mark.parametrize("name, params, exc, message", [
    ("fixed", {"target": 0}, ParamError, "target must be an int in [1, 1000000], got 0"),
    ("token", {"target": 2_000_000}, ParamError, "target must be an int in [1, 1000000], got 2000000"),
    ("fixed", {"target": 1.5}, TypeError, "target must be an int in [1, 1000000], got 1.5"),
    ("sliding_window", {"target": 0}, ParamError, "target must be an int in [1, 1000000], got 0"),
    ("sliding_window", {"target": 4, "overlap": 4}, ParamError, "overlap must be an int in [0, window) = [0, 3], got 4"),
    ("sliding_window", {"overlap": -1}, ParamError, "overlap must be an int in [0, window) = [0, 511], got -1"),
    ("fixed", {"target": 4, "overlap": 4}, ParamError, "overlap must be an int in [0, size) = [0, 3], got 4"),
])
def test_an_alias_is_validated_like_its_name_and_named_in_errors(name, params, exc, message):
    with pytest.raises(exc) as info:
        chunklab.get_strategy(name, **params)
    assert str(info.value) == message


def test_unknown_parameters_suggest_aliases_too():
    with pytest.raises(ParamError, match=r"did you mean 'target'\?.*aliases: target for size\)"):
        chunklab.get_strategy("fixed", targt=5)


def test_an_alias_must_not_shadow_a_parameter():
    from chunklab.base import Strategy, register

    class Bad(Strategy):
        name, family = "bad_alias", "geometric"
        params = {"size": chunklab.params.Param("int", 1)}
        aliases = {"prefix": "size"}

    with pytest.raises(ValueError, match="alias 'prefix'"):
        register(Bad)
