"""Metrics on hand-computed cases, budget, bootstrap, comparison, miss symptoms, structure, adapters."""
from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunklab.core import Chunk, Document
from chunklab.evaluation import (
    Layout, attribute_misses, bootstrap_ci, bootstrap_many, chunks_from_strings, compare, evaluate,
    paired_bootstrap, question_metrics, select_budget, split_with, structure_metrics,
)

Q = namedtuple("Q", "id question spans type difficulty", defaults=("t", None))
GoldSpan = namedtuple("GoldSpan", "doc_id start end")

D = Document("D", "0123456789")
E = Document("E", "abcdefghij")


def ch(doc, i, s, e):
    return Chunk(doc.id, i, s, e, doc.text[s:e])


CHUNKS = [ch(D, 0, 0, 6), ch(D, 1, 4, 10), ch(D, 2, 0, 5), ch(D, 3, 7, 10), ch(E, 0, 0, 5)]
G = [GoldSpan("D", 4, 8)]


def metrics(ranked, gold=G, k=2, **kw):
    m = question_metrics([ranked], CHUNKS, [gold], k=k, documents=[D, E], **kw)
    return {name: float(v[0]) for name, v in m.items()}


def test_metrics_case_a():
    m = metrics([0, 1])
    assert m["hit"] == 1 and m["hit_strict"] == 1 and m["mrr"] == 1
    assert m["recall"] == 1 and m["complete_single"] == 1 and m["complete_union"] == 1
    assert m["retrieved_chars"] == 12
    assert m["duplication"] == pytest.approx(2 / 12)
    assert m["precision"] == pytest.approx(4 / 12)  # duplicates count
    assert m["iou"] == pytest.approx(4 / (12 + 4 - 4))
    assert m["precision_omega"] == pytest.approx(4 / 10)  # chunks 0-3 overlap: union [0, 10)
    assert m["cite_at_1"] == 1 and m["cite_distance"] == 0
    assert m["irrelevant_share"] == pytest.approx(((1 - 2 / 6) + (1 - 4 / 6)) / 2)
    assert m["n_retrieved"] == 2


def test_metrics_case_b_partial_pieces():
    m = metrics([3, 2])  # 1 char of the span each: no hit
    assert m["hit"] == 0 and m["mrr"] == 0 and m["hit_strict"] == 0
    assert m["recall"] == 0.5
    assert m["precision"] == pytest.approx(2 / 8)
    assert m["iou"] == pytest.approx(2 / (8 + 4 - 2))
    assert m["duplication"] == 0 and m["complete_union"] == 0
    assert math.isnan(m["irrelevant_share"])


def test_half_rule_and_mrr():
    # chunk 2 holds 1 of 4 gold chars (no hit), chunk 0 holds 2 of 4 (hit at rank 2)
    m = metrics([2, 0])
    assert m["hit"] == 1 and m["mrr"] == 0.5 and m["hit_strict"] == 0


def test_citation_distance():
    assert math.isnan(metrics([4], k=1)["cite_distance"])  # other document
    m = metrics([3], gold=[GoldSpan("D", 0, 2)], k=1)
    assert m["cite_at_1"] == 0 and m["cite_distance"] == 5


def test_nothing_retrieved():
    m = metrics([-1, -1])
    assert m["hit"] == 0 and m["recall"] == 0 and m["precision"] == 0 and m["iou"] == 0
    assert m["duplication"] == 0 and m["n_retrieved"] == 0 and math.isnan(m["cite_distance"])


def test_two_gold_spans():
    m = metrics([2], gold=[GoldSpan("D", 0, 2), GoldSpan("D", 8, 10)], k=1)
    assert m["hit"] == 1 and m["recall"] == 0.5
    assert m["complete_single"] == 0 and m["complete_union"] == 0
    m = metrics([2, 3], gold=[("D", 0, 2), ("D", 8, 10)], k=2)
    assert m["complete_single"] == 1 and m["recall"] == 1


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match="k must be an int >= 1"):
        metrics([0], k=0)
    with pytest.raises(ValueError, match="gold span"):
        metrics([0], gold=[GoldSpan("D", 5, 5)])
    with pytest.raises(ValueError, match="unknown document id"):
        metrics([0], gold=[GoldSpan("X", 0, 1)])


def test_retrieved_tokens():
    m = metrics([0, 1], count_tokens=True)
    from chunklab.length import count_tokens

    assert m["retrieved_tokens"] == count_tokens("012345") + count_tokens("456789")


# -- budget ---------------------------------------------------------------------------------------

def test_budget_deduplicates_by_offsets():
    assert select_budget([[0, 2, 1]], CHUNKS, 10, documents=[D, E]).tolist() == [[0, 1]]  # 6 + 4 new
    assert select_budget([[0, 2, 1]], CHUNKS, 9, documents=[D, E], fill="stop").tolist() == [[0]]
    assert select_budget([[0, 1]], CHUNKS, 5, documents=[D, E], fill="stop").tolist() == [[-1]]  # first does not fit
    # "cut" (the default) takes the part of the next chunk that fits: 6 + 3 new characters of [4, 10)
    idx, ends = select_budget([[0, 2, 1]], CHUNKS, 9, documents=[D, E], return_ends=True)
    assert idx.tolist() == [[0, 1]] and ends[0, 1] - ends[0, 0] == 3
    m = question_metrics(idx, CHUNKS, [G], k=2, documents=[D, E], dedup=True, ends=ends)
    assert m["retrieved_chars"][0] == 9
    # "skip" passes over a chunk that does not fit and takes a smaller one further down
    assert select_budget([[0, 1, 3]], CHUNKS, 9, documents=[D, E], fill="skip").tolist() == [[0, 3]]
    with pytest.raises(ValueError, match="fill must be one of"):
        select_budget([[0]], CHUNKS, 5, documents=[D, E], fill="pad")
    m = question_metrics(select_budget([[0, 2, 1]], CHUNKS, 10, documents=[D, E]), CHUNKS, [G], k=2,
                         documents=[D, E], dedup=True)
    assert m["retrieved_chars"][0] == 10 and m["precision"][0] == pytest.approx(0.4)
    with pytest.raises(ValueError, match="budget must be an int >= 1"):
        select_budget([[0]], CHUNKS, 0, documents=[D, E])


# -- bootstrap and comparison ----------------------------------------------------------------------

def test_bootstrap_is_deterministic_with_a_seed():
    v = np.random.default_rng(1).random(300)
    a, b = bootstrap_ci(v, seed=7), bootstrap_ci(v, seed=7)
    assert a == b and a["lo"] < a["mean"] < a["hi"]
    assert bootstrap_ci(v, seed=8) != a
    many = bootstrap_many({"x": v, "y": v * 2}, seed=7)
    assert many["x"] == pytest.approx(a, rel=1e-12)
    nan = bootstrap_ci([1.0, float("nan"), 0.0], n=50)
    assert nan["mean"] == 0.5 and nan["n"] == 2


def test_paired_bootstrap_and_compare():
    a = np.array([1, 1, 1, 0] * 25, dtype=float)
    b = np.array([0, 1, 0, 0] * 25, dtype=float)
    r = paired_bootstrap(a, b, seed=3)
    assert r["diff"] == 0.5 and r["significant"] and r["lo"] > 0
    same = paired_bootstrap(a, a)
    assert same["diff"] == 0 and not same["significant"]
    with pytest.raises(ValueError, match="same length"):
        paired_bootstrap(a, b[:3])


def _result(hits, dup):
    from chunklab.evaluation import EvalResult

    ids = [f"q{i}" for i in range(len(hits))]
    pq = {"hit": np.array(hits, float), "duplication": np.array(dup, float)}
    return EvalResult({}, 5, ids, pq, bootstrap_many(pq, n=100), {}, [])


def test_compare_names_a_winner_only_when_significant():
    good, bad = _result([1, 1, 1, 0] * 25, [0.1] * 100), _result([0, 1, 0, 0] * 25, [0.3] * 100)
    c = compare(good, bad, metrics=("hit", "duplication"), names=("A", "B"))
    assert c["hit"]["winner"] == "A" and c["duplication"]["winner"] == "A"  # lower duplication wins
    tie = compare(good, _result([1, 1, 1, 0] * 25, [0.1] * 100), metrics=("hit",))
    assert tie["hit"]["winner"] is None


# -- miss symptoms ---------------------------------------------------------------------------------

def _attr(doc, chunks, ranked, span, k=1):
    lay = Layout([doc])
    bounds = lay.chunk_bounds(chunks)
    gold = lay.gold_bounds([[span]])
    return attribute_misses(np.array([ranked]), np.array([0.0]), gold, bounds, k)[0]["symptom"]


def test_symptoms():
    d = Document("d", "x" * 100)
    c = lambda i, s, e: Chunk("d", i, s, e, d.text[s:e])  # noqa: E731
    assert _attr(d, [c(0, 0, 10)], [0], ("d", 50, 60)) == "not_indexed"
    assert _attr(d, [c(0, 0, 3), c(1, 3, 6), c(2, 6, 8), c(3, 8, 100)], [3], ("d", 0, 8)) == "too_small"
    assert _attr(d, [c(0, 0, 6), c(1, 6, 100)], [1], ("d", 4, 8)) == "cut"
    assert _attr(d, [c(0, 0, 100), c(1, 0, 20)], [1, 0], ("d", 50, 55)) == "diluted"
    crowd = [c(0, 0, 10), c(1, 20, 30), c(2, 21, 31)]
    assert _attr(d, crowd, [1, 2, 0], ("d", 2, 6), k=2) == "crowded"
    assert _attr(d, [c(0, 0, 10), c(1, 20, 30), c(2, 40, 50)], [1, 2, 0], ("d", 2, 6), k=2) == "ranked_low"


# -- structure ---------------------------------------------------------------------------------------

def test_structure_metrics():
    text = "第一条 甲。\n  第二条 乙丙丁。\n第三条 戊。"  # 24 chars; 第二条 starts at 9 after two spaces
    arts = [{"start": 0, "end": 6}, {"start": 7, "end": 17}, {"start": 18, "end": 24}]
    d = Document("d", text, meta={"articles": arts})
    chunks = [ch(d, 0, 0, 9), ch(d, 1, 9, 16), ch(d, 2, 16, 24)]
    m = structure_metrics([d], chunks)
    # 0 and 9 start paragraphs (and articles); 16 is inside 第二条
    assert m["boundary_alignment"] == pytest.approx(2 / 3)
    assert m["clause_alignment"] == pytest.approx(2 / 3) and m["paragraph_alignment"] == pytest.approx(2 / 3)
    assert m["clause_cut_rate"] == pytest.approx(1 / 3)  # 第二条 [9, 17) is split at 16
    assert m["overlap_inflation"] == 1.0
    assert m["len_max"] == 9 and m["len_mean"] == 8 and m["len_median"] == 8
    # a chunk starting at the spaces before 第二条 counts as aligned (leading whitespace ignored)
    m2 = structure_metrics([d], [ch(d, 0, 0, 7), ch(d, 1, 7, 24)])
    assert m2["boundary_alignment"] == 1 and m2["clause_cut_rate"] == 0
    m3 = structure_metrics([d], [ch(d, 0, 0, 12), ch(d, 1, 9, 24)])
    assert m3["overlap_inflation"] == pytest.approx(27 / 24)
    bad = Document("b", "甲乙", meta={"parse_failed": True})
    assert structure_metrics([d, bad], chunks)["parse_failure_rate"] == 0.5
    assert structure_metrics([d, bad], chunks)["chunk_parse_failure_rate"] == 0.0
    # a strategy that fell back marks its chunks: the chunk rate counts them
    fell_back = [Chunk("b", 0, 0, 2, "甲乙", {"parse_failed": True}), *chunks]
    assert structure_metrics([d, bad], fell_back)["chunk_parse_failure_rate"] == pytest.approx(1 / len(fell_back))
    assert structure_metrics([Document("p", "甲\n乙")], [Chunk("p", 0, 0, 3, "甲\n乙")])["clause_cut_rate"] is None


# -- evaluate ------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def law():
    from chunklab.datasets import load_corpus

    return list(load_corpus("laws:劳动合同法"))


def _law_questions(doc):
    out = []
    for i, phrase in enumerate(["试用期不得超过一个月", "经济补偿按劳动者在本单位工作的年限", "竞业限制期限内按月给予劳动者经济补偿"]):
        s = doc.text.find(phrase)
        assert s >= 0
        out.append(Q(f"q{i}", phrase[:-2] + "吗？", (GoldSpan(doc.id, s, s + len(phrase)),)))
    return out


def _chunks(doc, size):
    out, s = [], 0
    while s < len(doc.text):
        out.append(ch(doc, len(out), s, min(s + size, len(doc.text))))
        s += size
    return out


def test_evaluate_fast_equals_reference(law):
    doc = law[0]
    qs = _law_questions(doc)
    chunks = _chunks(doc, 200)
    fast = evaluate(law, chunks, qs, k=3, n_boot=100)
    ref = evaluate(law, chunks, qs, k=3, engine="reference", n_boot=100)
    assert (fast.ranked[:, :3] == ref.ranked[:, :3]).all()
    for name in ("hit", "recall", "iou", "precision_omega"):
        np.testing.assert_array_equal(fast.per_question[name], ref.per_question[name])
    s = fast.summary()
    assert s["questions"] == 3 and "hit_lo" in s and "clause_cut_rate" in s and "miss_cut" in s
    recs = fast.to_records()
    assert recs[0]["question_id"] == "q0" and set(fast.per_question) <= set(recs[0])
    assert "hit" in fast.table()
    b = evaluate(law, chunks, qs, k=3, budget=400, n_boot=100)
    assert (b.per_question["retrieved_chars"] <= 400).all()


def test_evaluate_errors(law):
    with pytest.raises(ValueError, match="engine must be"):
        evaluate(law, _chunks(law[0], 500), _law_questions(law[0]), engine="bm26")
    with pytest.raises(ValueError, match="needs an embedder"):
        evaluate(law, _chunks(law[0], 500), _law_questions(law[0]), engine="dense")


# -- adapters -------------------------------------------------------------------------------------------

def test_repeated_text_is_placed_in_order():
    d = Document("d", "甲乙。甲乙。甲乙。")
    assert [c.start for c in chunks_from_strings(d, ["甲乙。", "甲乙。", "甲乙。"])] == [0, 3, 6]
    # back-to-back repeats are ambiguous without the splitter's overlap: is the second piece at 3 or 6?
    d2 = Document("d", "甲乙。甲乙。甲乙。甲乙。")
    assert [c.start for c in chunks_from_strings(d2, ["甲乙。甲乙。"] * 2, overlap=0)] == [0, 6]


def test_stripped_whitespace_and_missing_pieces():
    d = Document("d", "第一条  甲。\n\n第二条 乙。")
    cs = chunks_from_strings(d, ["第一条  甲。", " 第二条 乙。 "])
    assert [(c.start, c.end) for c in cs] == [(0, 7), (9, 15)]
    with pytest.raises(ValueError, match="piece 1"):
        chunks_from_strings(d, ["第一条", "第\ufffd条"])
    cs = chunks_from_strings(d, ["第一条", "第\ufffd条", "乙。"], on_missing="skip")
    assert len(cs) == 2 and cs[1].meta["missing"] == 1


def test_langchain_start_index_misplaces_repeated_text_ours_does_not():
    lc = pytest.importorskip("langchain_text_splitters")
    text = "甲乙。戊。甲乙丙。丙丁。甲乙丙。甲乙。丙丁。丙丁。丙丁。"
    splitter = lc.RecursiveCharacterTextSplitter(chunk_size=4, chunk_overlap=3, separators=["。", ""],
                                                 keep_separator="end", add_start_index=True)
    docs = splitter.create_documents([text])
    pieces = [x.page_content for x in docs]
    theirs = [x.metadata["start_index"] for x in docs]
    assert pieces[-3:] == ["丙丁。"] * 3
    assert theirs[-3:] == [19, 19, 19]  # LangChain puts the three last chunks at the same place
    ours = split_with(splitter, [Document("d", text)])
    assert [c.start for c in ours][-3:] == [19, 22, 25]
    assert all(text[c.start:c.end] == p for c, p in zip(ours, pieces))


def test_budget_in_tokens_counts_the_new_text_of_chunks_anywhere_in_a_document():
    # Regression: the new pieces were sliced with document offsets instead of chunk offsets, so a
    # chunk that does not start at 0 cost (almost) nothing and budgets in tokens never filled.
    from chunklab.length import count_tokens

    doc = Document("T", "甲乙丙丁戊己庚辛壬癸" * 10)
    cs = [ch(doc, 0, 50, 80), ch(doc, 1, 70, 100), ch(doc, 2, 0, 30)]
    cost0, cost1 = count_tokens(doc.text[50:80]), count_tokens(doc.text[80:100])
    assert select_budget([[0, 1, 2]], cs, cost0 + cost1, unit="tokens", documents=[doc]).tolist() == [[0, 1]]
    assert select_budget([[0, 1, 2]], cs, cost0 + cost1 - 1, unit="tokens", documents=[doc],
                         fill="stop").tolist() == [[0]]
    idx, ends = select_budget([[0, 1, 2]], cs, cost0 + cost1 - 1, unit="tokens", documents=[doc], return_ends=True)
    assert idx.tolist() == [[0, 1]]   # cut: the part of chunk 1 whose new text fits
    gs, _ = Layout([doc]).chunk_bounds(cs)
    delivered = doc.text[80:70 + int(ends[0, 1] - gs[1])]   # the new part of chunk 1 = [80, 100)
    assert 0 < len(delivered) < 20 and count_tokens(delivered) <= cost1 - 1


def test_evaluate_dense_and_hybrid(law):
    from chunklab.retrieval.embed import LSAEmbedder
    from chunklab.retrieval import DenseIndex, Ranking, fuse

    doc = law[0]
    qs = _law_questions(doc)
    chunks = _chunks(doc, 200)
    emb = LSAEmbedder(dims=32).fit([c.text for c in chunks])
    dense = evaluate(law, chunks, qs, k=3, engine="dense", embedder=emb, n_boot=100)
    fast = evaluate(law, chunks, qs, k=3, n_boot=100)
    hybrid = evaluate(law, chunks, qs, k=3, engine="hybrid", embedder=emb, n_boot=100)
    # dense ranks by the embedder's cosine; hybrid is BM25 and dense fused by reciprocal rank
    want_dense = DenseIndex([c.text for c in chunks], emb).search([q.question for q in qs], k=50)
    assert (dense.ranked == want_dense.ids).all()
    want_hybrid = fuse([Ranking(fast.ranked, np.zeros(fast.ranked.shape)), want_dense], k=50)
    assert (hybrid.ranked == want_hybrid.ids).all()
    for r in (dense, hybrid):
        assert set(r.per_question) == set(fast.per_question)
        assert 0.0 <= r.aggregate["hit"]["mean"] <= 1.0


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 60), st.integers(0, 25)), min_size=1, max_size=12),
       st.lists(st.lists(st.tuples(st.integers(0, 70), st.integers(1, 20)), min_size=1, max_size=3),
                min_size=1, max_size=6))
def test_precision_omega_without_a_loop_equals_the_loop(chunk_spans, gold_lists):
    # Nested, overlapping, touching, empty and gapped chunks; gold spans inside, across and outside.
    from chunklab.evaluation.metrics import _precision_omega_loop, precision_omega

    cgs = np.array([s for s, _ in chunk_spans], dtype=np.int64)
    cge = cgs + np.array([n for _, n in chunk_spans], dtype=np.int64)
    m = max(len(g) for g in gold_lists)
    gs = np.full((len(gold_lists), m), -2, dtype=np.int64)
    ge = np.full((len(gold_lists), m), -2, dtype=np.int64)
    for i, spans in enumerate(gold_lists):
        merged = sorted((a, a + n) for a, n in spans)
        union = []
        for a, b in merged:
            if union and a <= union[-1][1]:
                union[-1] = (union[-1][0], max(b, union[-1][1]))
            else:
                union.append((a, b))
        for j, (a, b) in enumerate(union):
            gs[i, j], ge[i, j] = a, b
    np.testing.assert_allclose(precision_omega(cgs, cge, gs, ge), _precision_omega_loop(cgs, cge, gs, ge),
                               rtol=0, atol=1e-15)


# -- settings: one validated object for every entry point --------------------------------------------------

def test_settings_validate_every_field_in_one_line():
    from chunklab.evaluation import EvalSettings
    from chunklab.params import ParamError

    s = EvalSettings()
    assert (s.k, s.budget, s.budget_unit, s.tokenizer, s.engine, s.use_context, s.depth, s.n_boot, s.seed,
            s.count_tokens, s.rrf_constant) == (5, None, "chars", "bigram", "fast", False, None, 2000, 0, False, 60)
    bad = [({"k": 0}, ParamError, "k must be an int >= 1, got 0"),
           ({"k": 2.5}, TypeError, "k must be an int >= 1, got 2.5"),
           ({"budget": 0}, ParamError, "budget must be an int >= 1 or None, got 0"),
           ({"budget_unit": "words"}, ParamError, "budget_unit must be one of 'chars', 'tokens', got 'words'"),
           ({"tokenizer": "bigrams"}, ParamError, "tokenizer must be one of 'bigram', 'unigram_bigram'"),
           ({"tokenizer": 3}, TypeError, "tokenizer must be one of"),
           ({"engine": "bm26"}, ParamError, "engine must be one of 'bm25', 'fast', 'reference', 'dense', 'hybrid'"),
           ({"engine": 3}, TypeError, "or an object with .search(queries, k), got int"),
           ({"use_context": 1}, TypeError, "use_context must be True or False, got 1"),
           ({"depth": 0}, ParamError, "depth must be an int >= 1 or None, got 0"),
           ({"n_boot": 0}, ParamError, "n_boot must be an int >= 1, got 0"),
           ({"seed": -1}, ParamError, "seed must be an int >= 0, got -1"),
           ({"count_tokens": "yes"}, TypeError, "count_tokens must be True or False"),
           ({"rrf_constant": -1}, ParamError, "rrf_constant must be a number >= 0, got -1")]
    for options, error, message in bad:
        with pytest.raises(error) as exc:
            EvalSettings(**options)
        assert message in str(exc.value) and "\n" not in str(exc.value)
        with pytest.raises(error):
            s.replace(**options)  # replace() validates like a new object


def test_settings_replace_resolve_and_unknown_options():
    from chunklab.evaluation import EvalSettings
    from chunklab.retrieval import get_tokenizer

    s = EvalSettings(k=3)
    assert s.replace() is s and s.replace(k=4).k == 4 and s.k == 3  # frozen: a copy
    with pytest.raises(AttributeError):
        s.k = 4  # type: ignore[misc]
    assert EvalSettings(k=np.int64(7)).k == 7 and type(EvalSettings(k=np.int64(7)).k) is int
    assert (EvalSettings().ranking_depth, EvalSettings(k=80).ranking_depth, EvalSettings(k=5, depth=3).ranking_depth,
            EvalSettings(depth=100).ranking_depth) == (50, 80, 5, 100)
    with pytest.raises(TypeError, match=r"unknown evaluation option 'budgt' \(did you mean 'budget'\?\)"):
        s.replace(budgt=100)
    with pytest.raises(TypeError, match="unknown evaluation option 'zzz'; the options are k, budget"):
        EvalSettings.resolve(None, {"zzz": 1})
    assert EvalSettings.resolve(None, {"k": 2}) == EvalSettings(k=2)
    assert EvalSettings.resolve(s, {"budget": 10}) == EvalSettings(k=3, budget=10)
    assert EvalSettings.resolve(None, {}, default=s) is s
    with pytest.raises(TypeError, match="settings must be an EvalSettings or None, got int"):
        EvalSettings.resolve(5, {})  # type: ignore[arg-type]
    tok = EvalSettings(tokenizer=get_tokenizer("words"))
    assert tok.tokenizer_name == "words" and tok.as_dict()["tokenizer"] == "words"
    assert set(EvalSettings.PARAMS) == set(EvalSettings.names())


def test_evaluate_with_settings_equals_evaluate_with_keywords(law):
    from chunklab.evaluation import EvalSettings
    from chunklab.retrieval import CorpusIndex

    doc = law[0]
    qs = _law_questions(doc)
    chunks = _chunks(doc, 200)
    s = EvalSettings(k=3, budget=500, n_boot=100, seed=3)
    a = evaluate(law, chunks, qs, s)
    b = evaluate(law, chunks, qs, k=3, budget=500, n_boot=100, seed=3)
    c = evaluate(law, chunks, qs, EvalSettings(k=9), k=3, budget=500, n_boot=100, seed=3)  # options win
    d = evaluate(law, chunks, qs, s, index=CorpusIndex(law))  # the index's layout is shared
    for r in (b, c, d):
        assert r.summary().keys() == a.summary().keys()
        assert {n: v for n, v in r.summary().items() if not n.endswith("_seconds")} == \
               {n: v for n, v in a.summary().items() if not n.endswith("_seconds")}
        assert (r.ranked == a.ranked).all() and r.bad_cases == a.bad_cases
    assert a.settings == s and b.settings == s
    with pytest.raises(TypeError, match=r"unknown evaluation option 'n_boots' \(did you mean 'n_boot'\?\)"):
        evaluate(law, chunks, qs, n_boots=100)
    with pytest.raises(TypeError, match="settings must be an EvalSettings"):
        evaluate(law, chunks, qs, 5)  # the old positional k


def test_bm25_is_the_fast_engine_and_an_index_on_other_documents_still_works(law):
    from chunklab.core import Document
    from chunklab.retrieval import CorpusIndex

    doc = law[0]
    qs = _law_questions(doc)
    chunks = _chunks(doc, 200)
    fast = evaluate(law, chunks, qs, k=3, n_boot=100)
    bm25 = evaluate(law, chunks, qs, k=3, n_boot=100, engine="bm25")
    assert (fast.ranked == bm25.ranked).all() and fast.config["engine"] == "fast" and bm25.config["engine"] == "bm25"
    np.testing.assert_array_equal(fast.per_question["mrr"], bm25.per_question["mrr"])
    # an index of a larger corpus (another document first): same rankings, metrics on the documents given
    wider = CorpusIndex([Document("other", "劳动合同的订立。"), *law])
    w = evaluate(law, chunks, qs, k=3, n_boot=100, index=wider)
    assert (w.ranked == fast.ranked).all()
    np.testing.assert_array_equal(w.per_question["recall"], fast.per_question["recall"])
    # the one chunk check: a chunk past the end of its document, with or without an index
    last = chunks[-1]
    past = chunks[:-1] + [Chunk(doc.id, last.index, last.start, last.end + 1, last.text + "。")]
    for index in (None, CorpusIndex(law)):
        with pytest.raises(ValueError, match="past the end of document"):
            evaluate(law, past, qs, k=3, n_boot=100, index=index)


def test_evaluate_takes_a_retriever_object(law):
    from chunklab.retrieval import Ranking

    class Backwards:
        """Ranks the chunks last to first, whatever the query."""

        def __init__(self, n):
            self.n = n

        def search(self, queries, k=5):
            row = np.arange(self.n)[::-1][:k]
            return Ranking(np.tile(row, (len(queries), 1)), np.zeros((len(queries), len(row))))

    doc = law[0]
    chunks = _chunks(doc, 200)
    r = evaluate(law, chunks, _law_questions(doc), engine=Backwards(len(chunks)), k=2, n_boot=100)
    assert r.ranked[0, :2].tolist() == [len(chunks) - 1, len(chunks) - 2]
    assert r.config["engine"] == "Backwards" and "index" not in r.timings and "search" in r.timings


def test_tested_symptoms_need_the_counterfactual():
    """With ``window_hit`` the holder cases are tested: window retrieved -> diluted; dedup brings it in -> crowded."""
    d = Document("d", "x" * 100)
    c = lambda i, s, e: Chunk("d", i, s, e, d.text[s:e])  # noqa: E731
    lay = Layout([d])

    def attr(chunks, ranked, span, k, window):
        return attribute_misses(np.array([ranked]), np.array([0.0]), lay.gold_bounds([[span]]),
                                lay.chunk_bounds(chunks), k, window_hit={0: window})[0]

    big = [c(0, 0, 100), c(1, 0, 20)]
    assert attr(big, [1, 0], ("d", 50, 55), 1, True)["symptom"] == "diluted"
    low = attr(big, [1, 0], ("d", 50, 55), 1, False)          # the proxy would say diluted
    assert low["symptom"] == "ranked_low" and low["rerank"] and low["window_hit"] is False
    crowd = [c(0, 0, 10), c(1, 20, 30), c(2, 21, 31)]          # 2 repeats 1: dropping it brings 0 in
    assert attr(crowd, [1, 2, 0], ("d", 2, 6), 2, False)["symptom"] == "crowded"
    apart = [c(0, 0, 10), c(1, 20, 30), c(2, 40, 50)]
    assert attr(apart, [1, 2, 0], ("d", 2, 6), 2, False)["symptom"] == "ranked_low"
    assert attr(apart, [1, 2], ("d", 2, 6), 2, False)["rerank"] is False   # the holder is not in the ranking
    assert attr([c(0, 0, 6), c(1, 6, 100)], [1], ("d", 4, 8), 1, True)["symptom"] == "cut"  # geometry first


def test_diagnose_re_retrieves_around_the_evidence():
    from chunklab.evaluation.diagnose import diagnose, window_chunks

    filler = "".join("甲乙丙丁戊己庚辛壬癸子丑寅卯辰巳午未申酉"[i % 20] for i in range(3000))
    ev = "病假需提交二级医院证明"
    text = filler[:1000] + ev + filler[1000:] + "。病假证明第一条。病假说明第二条。"
    doc = Document("d", text)
    n = 1000 + len(ev) + 2000
    chunks = [Chunk("d", 0, 0, n, text[:n]), Chunk("d", 1, n, n + 9, text[n:n + 9]),
              Chunk("d", 2, n + 9, len(text), text[n + 9:])]
    span = [("d", 1000, 1000 + len(ev))]
    qs = [Q("q1", "病假证明", span), Q("q2", "说明第二条", span)]
    r = evaluate([doc], chunks, qs, k=2, n_boot=10)
    assert r.per_question["hit"].tolist() == [0.0, 0.0] and r.symptoms["diluted"] == 2   # the proxy
    d = diagnose(r, [doc], chunks, qs)
    cases = {b["question_id"]: b for b in d.bad_cases}
    assert cases["q1"]["symptom"] == "diluted" and cases["q1"]["window_hit"] is True
    assert cases["q2"]["symptom"] == "ranked_low" and cases["q2"]["window_hit"] is False
    assert d.summary()["miss_diluted"] == 1 and d.config["misses"] == "counterfactual"
    assert r.bad_cases[0]["window_hit"] is None            # the original result is unchanged
    # the two windows overlap: they ran in separate rounds, each cut from the original chunks
    new, pos = window_chunks(chunks, {"d": text}, [("d", 950, 1061)])
    assert "".join(c.text for c in new) == text and new[pos[0]].text == text[950:1061]
    with pytest.raises(ValueError, match="same order"):
        diagnose(r, [doc], chunks, qs[::-1])
    from chunklab.retrieval import make_retriever

    custom = evaluate([doc], chunks, qs, k=2, n_boot=10, engine=make_retriever("bm25", [doc], chunks))
    with pytest.raises(ValueError, match="named engine"):
        diagnose(custom, [doc], chunks, qs)
