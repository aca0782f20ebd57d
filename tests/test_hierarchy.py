"""Parent-child, sentence-window and multi-granularity indexes: exact spans, budgets, merging."""
from __future__ import annotations

from pathlib import Path

import pytest

from chunklab import Chunk, Document, check_chunks, get_strategy
from chunklab.hierarchy import (ParentChildIndex, SentenceWindowIndex, multi_granularity, section_starts,
                                span_overlap)
from chunklab.length import count_tokens
from chunklab.strategies.linguistic import Recursive

HANDBOOK = Path(__file__).resolve().parents[1] / "data" / "xiaobei" / "employee_handbook.md"

POLICY = (
    "# 休假制度\n\n"
    "## 年假\n\n年假按累计工龄计算。满一年不满十年的，年休假五天。满十年不满二十年的，年休假十天。"
    "未休年假可以结转到次年第一季度。年假需要提前三个工作日申请。\n\n"
    "## 病假\n\n病假需要提供二级及以上医院的证明。病假期间按基本工资的百分之八十发放。"
    "连续病假超过三个月的，按长期病假处理。\n\n"
    "## 婚假\n\n员工依法登记结婚的，享受婚假十天。婚假应在登记后一年内休完。\n"
)
DOCS = [Document("policy", POLICY, title="员工手册"),
        Document("travel", "出差需要提前审批。住宿按城市等级报销。\n\n交通优先乘坐高铁。补贴按天发放。")]


def _index(**kw):
    kw.setdefault("parent", Recursive(target=80))
    kw.setdefault("child", Recursive(target=25))
    return ParentChildIndex(DOCS, **kw)


# -- parent / child --------------------------------------------------------------------------

def test_parents_and_children_have_exact_offsets_and_nest():
    idx = _index()
    docs = {d.id: d for d in DOCS}
    for p in idx.parents:
        assert docs[p.doc_id].text[p.start:p.end] == p.text
    for i, c in enumerate(idx.children):
        assert docs[c.doc_id].text[c.start:c.end] == c.text
        p = idx.parents[c.meta["parent"]]
        assert p.doc_id == c.doc_id and p.start <= c.start and c.end <= p.end
        assert c.meta["parent_span"] == (p.start, p.end)
        assert i in idx.children_of[c.meta["parent"]]
        assert len(c) <= 25 or c.meta.get("oversize")
    # the children of a parent cover every non-whitespace character of it
    for pi, p in enumerate(idx.parents):
        covered = set()
        for ci in idx.children_of[pi]:
            covered.update(range(idx.children[ci].start, idx.children[ci].end))
        assert all(ch.isspace() or pos in covered for pos, ch in enumerate(p.text, start=p.start))
    # parents of each document are a valid chunking of it
    for d in DOCS:
        assert check_chunks(d, [p for p in idx.parents if p.doc_id == d.id]) == []


def test_any_strategy_can_make_parents_and_children_inherit_context():
    idx = ParentChildIndex(DOCS[:1], parent=get_strategy("markdown", target=400, prefix=True),
                           child=Recursive(target=30))
    assert [p.text.split("\n")[0] for p in idx.parents][-2:] == ["## 病假", "## 婚假"]
    for c in idx.children:
        assert c.context == idx.parents[c.meta["parent"]].context
    assert idx.parent_of(idx.children_of[-2][0]).context.endswith("病假")


def test_retrieve_maps_hits_to_parents_in_rank_order_and_deduplicates():
    idx = _index()
    a, b = idx.children_of[1][:2]
    c = idx.children_of[0][0]
    ctx = idx.retrieve([a, c, b, a], budget=10_000, count=len)
    assert [it.index for it in ctx.items] == [1, 0]
    assert ctx.items[0].hits == (a, b) and ctx.items[1].hits == (c,)
    assert all(it.kind == "parent" and it.chunk is idx.parents[it.index] for it in ctx.items)
    assert ctx.tokens == sum(len(it.chunk.text) for it in ctx.items)
    assert not ctx.truncated


def test_retrieve_respects_the_budget_and_reports_what_was_left():
    idx = _index()
    order = [idx.children_of[p][0] for p in range(len(idx.parents))]
    sizes = [count_tokens(p.text) for p in idx.parents]
    budget = sizes[0] + sizes[1] + sizes[2] // 2
    ctx = idx.retrieve(order, budget=budget)           # default count: cl100k tokens
    assert [it.index for it in ctx.items] == [0, 1]
    assert ctx.tokens == sizes[0] + sizes[1] <= budget
    assert ctx.truncated and ctx.unused_hits == tuple(order[2:])
    assert idx.retrieve(order, budget=0).items == ()
    # ranked pairs (index, score) and -1 padding are accepted
    ctx2 = idx.retrieve([(order[0], 3.2), (-1, 0.0)], budget=10_000)
    assert [it.index for it in ctx2.items] == [0]


def test_auto_merge_replaces_children_only_when_most_are_hit():
    idx = _index()
    p = max(range(len(idx.parents)), key=lambda i: len(idx.children_of[i]))
    kids = idx.children_of[p]
    assert len(kids) >= 3
    half = kids[: len(kids) // 2]            # not more than half: children come back
    ctx = idx.retrieve(half, budget=10_000, count=len, auto_merge=True)
    assert [it.kind for it in ctx.items] == ["child"] * len(half)
    assert [it.index for it in ctx.items] == half
    most = kids[: len(kids) // 2 + 1]        # more than half: the parent replaces them
    ctx = idx.retrieve(most, budget=10_000, count=len, auto_merge=True)
    assert [(it.kind, it.index, it.hits) for it in ctx.items] == [("parent", p, tuple(most))]
    # mixed: a merged parent takes the rank of its first hit; other hits stay children
    other = idx.children_of[(p + 1) % len(idx.parents)][0]
    ctx = idx.retrieve([other, *most], budget=10_000, count=len, auto_merge=True, merge_threshold=0.5)
    assert [it.kind for it in ctx.items][1] == "parent"


def test_retrieve_rejects_bad_input():
    idx = _index()
    with pytest.raises(ValueError, match="budget must be an int >= 0"):
        idx.retrieve([0], budget=-1)
    with pytest.raises(ValueError, match="out of range"):
        idx.retrieve([len(idx.children)], budget=10)
    with pytest.raises(TypeError, match="Strategy"):
        ParentChildIndex(DOCS, parent="recursive")
    with pytest.raises(ValueError, match="unique"):
        ParentChildIndex([DOCS[0], DOCS[0]])


@pytest.mark.skipif(not HANDBOOK.exists(), reason="小北 handbook not present")
def test_parent_child_on_the_handbook_defaults():
    doc = Document("handbook", HANDBOOK.read_text(encoding="utf-8"))
    idx = ParentChildIndex(doc)
    assert all(len(p) <= 1200 or p.meta.get("oversize") for p in idx.parents)
    assert all(len(c) <= 200 or c.meta.get("oversize") for c in idx.children)
    ctx = idx.retrieve(range(0, len(idx.children), 7), budget=3000)
    assert 0 < ctx.tokens <= 3000 and len({it.index for it in ctx.items}) == len(ctx.items)


# -- sentence windows -------------------------------------------------------------------------

def test_section_starts():
    doc = Document("d", "甲。\n\n乙。\n\n丙。")
    assert section_starts(doc) == [0, 4, 8]
    assert section_starts(doc, "document") == [0]
    with pytest.raises(ValueError, match="sections must be"):
        section_starts(doc, "chapter")


def test_windows_are_exact_symmetric_and_stay_in_their_section():
    idx = SentenceWindowIndex(DOCS, window=1)
    texts = {d.id: d.text for d in DOCS}
    for i, s in enumerate(idx.sentences):
        doc_id, start, end = idx.window(i)
        assert doc_id == s.doc_id and start <= s.start and s.end <= end
        assert idx.window_chunk(i).text == texts[doc_id][start:end]
        lo, hi = idx.window_units(i)
        same = [j for j in range(len(idx.sentences))
                if idx.sentences[j].doc_id == s.doc_id and idx.sentences[j].meta["section"] == s.meta["section"]]
        assert all(j in same for j in range(lo, hi + 1))          # never crosses a section or document
        # symmetric: one on each side unless the section ends first
        assert i - lo == min(1, i - same[0]) and hi - i == min(1, same[-1] - i)
        assert "\n\n" not in texts[doc_id][start:end]


def test_window_sizes_and_section_choice():
    text = "一。二。三。四。五。\n\n六。七。"
    idx = SentenceWindowIndex(text, window=2)
    assert idx.window_chunk(2).text == "一。二。三。四。五。"
    assert idx.window_chunk(0).text == "一。二。三。"
    assert idx.window_chunk(5).text == "六。七。"
    assert idx.window(2, w=0) == ("doc0", 4, 6)
    whole = SentenceWindowIndex(text, window=2, sections="document")
    assert whole.window_chunk(4).text == "三。四。五。\n\n六。七。"
    md = SentenceWindowIndex(DOCS[0], window=5, sections=get_strategy("markdown", target=1000))
    i = next(k for k, s in enumerate(md.sentences) if s.text.startswith("病假需要"))
    assert md.window_chunk(i).text.startswith("## 病假") and "婚假" not in md.window_chunk(i).text


def test_long_sentences_are_cut():
    idx = SentenceWindowIndex("甲" * 2500 + "。", window=1, max_sentence=1000)
    assert len(idx.sentences) == 3 and all(len(s) <= 1000 for s in idx.sentences)
    assert {s.meta["level"] for s in idx.sentences} == {"recursive"}


def test_sentence_window_retrieve_merges_overlapping_windows_within_budget():
    text = "一。二。三。四。五。六。七。八。九。十。"
    idx = SentenceWindowIndex(text, window=1)
    ctx = idx.retrieve([4, 2, 9], budget=100, count=len)
    assert [it.chunk.text for it in ctx.items] == ["二。三。四。五。六。", "九。十。"]
    assert ctx.items[0].hits == (4, 2)
    small = idx.retrieve([4, 9], budget=6, count=len)
    assert [it.chunk.text for it in small.items] == ["四。五。六。"] and small.unused_hits == (9,)
    # a window bridging two earlier ones merges all three
    bridged = idx.retrieve([1, 5, 3], budget=100, count=len)
    assert [it.chunk.text for it in bridged.items] == ["一。二。三。四。五。六。七。"]
    with pytest.raises(ValueError, match="sentence index must be an int"):
        idx.window(99)


# -- multi-granularity ---------------------------------------------------------------------------

def test_multi_granularity_fuses_and_drops_mostly_repeated_spans():
    doc = DOCS[0]
    small = Recursive(target=30).split(doc)
    big = Recursive(target=120).split(doc)
    j = next(j for j, b in enumerate(big) if span_overlap(b, small[3]) == len(small[3]))
    inner = next(i for i, c in enumerate(small) if i != 3 and span_overlap(big[j], c) == len(c))
    outer = next(i for i, c in enumerate(small) if span_overlap(big[j], c) == 0)
    hits = multi_granularity([3, inner, outer], [j], small, big, k=10)
    # small[3] and big[j] are both ranked first (ties go to the lower fused id: the "a" list);
    # small[inner] lies inside the chosen big[j] and is dropped; small[outer] is new and kept
    assert [(h.source, h.index) for h in hits] == [("a", 3), ("b", j), ("a", outer)]
    assert hits[0].score == pytest.approx(1 / 61) and hits[2].score == pytest.approx(1 / 63)
    assert [(h.source, h.index) for h in multi_granularity([3, inner, outer], [j], small, big, k=1)] == [("a", 3)]
    # the rule is about the *candidate's* length: with max_overlap=1 nothing is dropped
    assert len(multi_granularity([3, inner, outer], [j], small, big, k=10, max_overlap=1.0)) == 4


def test_multi_granularity_keeps_different_documents_apart_and_ignores_padding():
    a = [Chunk("x", 0, 0, 2, "甲乙")]
    b = [Chunk("y", 0, 0, 2, "甲乙")]
    hits = multi_granularity([0, -1], [0, -1], a, b, k=5)
    assert [(h.source, h.chunk.doc_id) for h in hits] == [("a", "x"), ("b", "y")]
    with pytest.raises(ValueError, match="k must be an int >= 1"):
        multi_granularity([0], [0], a, b, k=0)


# -- the registered strategies --------------------------------------------------------------------

def test_parent_child_strategy_units_point_into_parents():
    chunks = get_strategy("parent_child", target=30, parent_target=100).split(DOCS[0])
    assert check_chunks(DOCS[0], chunks) == []
    for c in chunks:
        s, e = c.meta["parent_span"]
        assert s <= c.start and c.end <= e and DOCS[0].text[s:e].strip() == DOCS[0].text[s:e]
    assert len({c.meta["parent"] for c in chunks}) > 1


def test_sentence_window_strategy_windows_match_the_index():
    chunks = get_strategy("sentence_window", neighbours=1).split(DOCS[0])
    idx = SentenceWindowIndex(DOCS[0], window=1)
    assert [(c.start, c.end) for c in chunks] == [(s.start, s.end) for s in idx.sentences]
    assert [c.meta["window"] for c in chunks] == [idx.window(i)[1:] for i in range(len(chunks))]


def test_parent_ranking_ranks_each_parent_once_by_its_best_child():
    import numpy as np

    from chunklab.datasets import load_corpus
    from chunklab.hierarchy import ParentRanking
    from chunklab.retrieval import CorpusIndex

    docs = list(load_corpus("laws:劳动合同法"))
    index = CorpusIndex(docs)
    pc = ParentChildIndex(docs, parent=Recursive(target=600), child=Recursive(target=120))
    engine = ParentRanking(pc, index, fanout=10)
    questions = ["试用期最长多久", "经济补偿怎么算", "竞业限制的期限", "！！"]
    got = engine.search(questions, k=4)
    children = engine.bm25.search(index.encode_queries(questions), k=40)
    for i in range(len(questions)):
        # the same order as ParentChildIndex.retrieve gives for the child ranking
        want = [it.index for it in pc.retrieve(children.ids[i], budget=10**9, count=len).items][:4]
        row = [p for p in got.ids[i].tolist() if p >= 0]
        assert row == want
        for p, score in zip(row, got.scores[i]):
            best = max(s for c, s in zip(children.ids[i], children.scores[i])
                       if c >= 0 and pc.children[c].meta["parent"] == p)
            assert score == best
    assert (got.ids[3] == -1).all() and np.isnan(got.scores[3]).all()
    with pytest.raises(ValueError, match="fanout must be an int >= 1"):
        ParentRanking(pc, index, fanout=0)
    with pytest.raises(TypeError, match="ParentChildIndex"):
        ParentRanking(object(), index)


def test_sentence_window_parameters_say_what_they_count():
    spec = get_strategy("sentence_window").param_spec()
    assert list(spec) == ["neighbours", "sections", "max_sentence", "prefix"]
    new = get_strategy("sentence_window", neighbours=1, max_sentence=5).split(DOCS[0])
    assert [c.meta["window"] for c in new] == [SentenceWindowIndex(DOCS[0], window=1, max_sentence=5).window(i)[1:]
                                               for i in range(len(new))]
    assert any(c.meta["level"] == "recursive" for c in new)


def test_sentence_window_old_names_still_work_with_a_warning():
    with pytest.warns(DeprecationWarning, match="'window' is deprecated, use 'neighbours'"):
        old = get_strategy("sentence_window", window=1)
    with pytest.warns(DeprecationWarning, match="'max' is deprecated, use 'max_sentence'") as caught:
        capped = get_strategy("sentence_window", max=5)
    assert caught[0].filename == __file__           # the warning points at the caller's line
    assert old.get_params() == get_strategy("sentence_window", neighbours=1).get_params()
    assert capped.max_sentence == 5 and repr(capped) == "SentenceWindow(max_sentence=5)"
    assert old.split(DOCS[0]) == get_strategy("sentence_window", neighbours=1).split(DOCS[0])
    with pytest.raises(ValueError, match="'window' is another name for 'neighbours'"):
        get_strategy("sentence_window", window=1, neighbours=1)
    with pytest.raises(ValueError, match=r"window must be an int in \[0, 1000\], got -1"), \
            pytest.warns(DeprecationWarning):
        get_strategy("sentence_window", window=-1)
