"""Tokenisers, BM25 parity with rank-bm25, the position-based index, dense search and fusion."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rank_bm25 import BM25Okapi

from chunklab.core import Chunk, Document
from chunklab.retrieval import (
    BM25Fast, BM25Reference, CorpusIndex, DenseIndex, Ranking, fuse, get_tokenizer, rrf, tokenize, top_k,
)

# -- tokenisers ---------------------------------------------------------------------------------

def test_bigram_rules():
    assert tokenize("民法典") == ["民法", "法典"]
    assert tokenize("甲，乙") == ["甲", "乙"]  # one-character runs give unigrams
    assert tokenize("第3条") == ["第", "条", "3"]
    assert tokenize("GDPR 与 gdpr") == ["与", "gdpr", "gdpr"]  # words lower-cased
    assert tokenize("。，！  \n") == []
    assert tokenize("") == []


def test_unigram_bigram_and_words():
    assert tokenize("合同法", "unigram_bigram") == ["合", "同", "法", "合同", "同法"]
    assert tokenize("Hello, World_1!", "words") == ["hello", "world_1"]


def test_jieba_tokenizer():
    pytest.importorskip("jieba")
    toks = tokenize("劳动合同的订立", "jieba")
    assert "劳动合同" in toks and "，" not in toks


def test_unknown_tokenizer_names_the_choices():
    with pytest.raises(ValueError, match="tokenizer must be one of 'bigram'"):
        get_tokenizer("bigrams")


# -- BM25 parity ----------------------------------------------------------------------------------

token_lists = st.lists(st.lists(st.sampled_from("abcdefg"), max_size=8), min_size=1, max_size=12).filter(
    lambda docs: any(docs))


@settings(max_examples=200, deadline=None)
@given(docs=token_lists, query=st.lists(st.sampled_from("abcdefgh"), max_size=6))
def test_fast_scores_equal_rank_bm25(docs, query):
    ref = BM25Okapi(docs)
    fast = BM25Fast.from_tokens(docs)
    np.testing.assert_allclose(fast.get_scores(query), ref.get_scores(query), rtol=0, atol=1e-9)


@settings(max_examples=50, deadline=None)
# k1 = 0 and b = 1 are left out: rank-bm25 then divides 0 by 0 (absent terms; empty chunks) and
# gives NaN where BM25Fast gives 0.
@given(docs=token_lists, k1=st.floats(0.01, 3), b=st.floats(0, 0.99), eps=st.floats(0, 1))
def test_fast_parity_with_other_parameters(docs, k1, b, eps):
    ref = BM25Okapi(docs, k1=k1, b=b, epsilon=eps)
    fast = BM25Fast.from_tokens(docs, k1=k1, b=b, epsilon=eps)
    q = ["a", "a", "b", "z"]  # repeated and unknown tokens
    np.testing.assert_allclose(fast.get_scores(q), ref.get_scores(q), rtol=0, atol=1e-9)


def test_negative_idf_uses_epsilon_floor():
    docs = [["a", "b"], ["a"], ["a", "c"]]  # 'a' in every doc: negative idf
    fast = BM25Fast.from_tokens(docs)
    ref = BM25Okapi(docs)
    assert fast.idf[fast.vocab["a"]] == pytest.approx(ref.idf["a"])
    assert ref.idf["a"] == pytest.approx(0.25 * ref.average_idf)


@pytest.fixture(scope="module")
def law():
    from chunklab.datasets import load_corpus

    return list(load_corpus("laws:劳动合同法"))


def _fixed(doc, size, overlap=0):
    out, s, t = [], 0, doc.text
    while s < len(t):
        e = min(s + size, len(t))
        out.append(Chunk(doc.id, len(out), s, e, t[s:e]))
        if e == len(t):
            break
        s = e - overlap
    return out


QUESTIONS = ["劳动合同应当具备哪些条款？", "试用期最长多久", "用人单位解除劳动合同的经济补偿", "竞业限制期限不得超过二年"]


def test_fast_equals_reference_on_law_text(law):
    chunks = [c for d in law for c in _fixed(d, 300, 30)]
    index = CorpusIndex(law)
    fast = index.index_chunks(chunks)
    ref = BM25Reference([c.text for c in chunks])
    q = index.encode_queries(QUESTIONS)
    fast_scores = fast.score_matrix(q).toarray()
    for i, text in enumerate(QUESTIONS):
        np.testing.assert_allclose(fast_scores[i], ref.get_scores(tokenize(text)), rtol=0, atol=1e-9)
    got, want = fast.search(q, k=5), ref.search(QUESTIONS, k=5)
    assert (got.ids == want.ids).all()
    np.testing.assert_allclose(got.scores, want.scores, rtol=0, atol=1e-9)


# -- the position-based index ------------------------------------------------------------------

ALPHABET = list("民法典合同甲乙丙") + list("abAB12") + list("，。 \n_")


def _rows_equal_text_tokenisation(index, chunks, tok, use_context=False):
    m = index.term_counts(chunks, use_context=use_context)
    for i, c in enumerate(chunks):
        toks = tok(c.text) + (tok(c.context) if use_context and c.context else [])
        want = Counter(index._cols_of_tokens(toks, grow=False).tolist()) if toks else Counter()
        row = m.getrow(i)
        got = Counter({int(j): int(v) for j, v in zip(row.indices, row.data)})
        assert got == want, (c.text, toks)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(st.sampled_from(ALPHABET), min_size=1, max_size=40), data=st.data(),
       name=st.sampled_from(["bigram", "unigram_bigram", "words"]))
def test_position_index_equals_text_tokenisation(text, data, name):
    doc = Document("d", text)
    other = Document("e", "合同ab。")
    cuts = data.draw(st.lists(st.tuples(st.integers(0, len(text)), st.integers(0, len(text))), min_size=1, max_size=6))
    chunks = [Chunk("d", i, min(a, b), max(a, b), text[min(a, b):max(a, b)]) for i, (a, b) in enumerate(cuts)]
    chunks.append(Chunk("e", 0, 1, 3, "同a"))
    index = CorpusIndex([doc, other], tokenizer=name)
    assert index._ends_sorted  # the run tokenisers' token ends never decrease
    _rows_equal_text_tokenisation(index, chunks, get_tokenizer(name))
    index._ends_sorted = False  # the general path (a token may end past a later token's end)
    _rows_equal_text_tokenisation(index, chunks, get_tokenizer(name))


def test_position_index_on_law_text_with_context(law):
    doc = law[0]
    chunks = [Chunk(c.doc_id, c.index, c.start, c.end, c.text, context="劳动合同法 > 第一章") for c in _fixed(doc, 97, 13)]
    index = CorpusIndex(law)
    _rows_equal_text_tokenisation(index, chunks, get_tokenizer("bigram"), use_context=True)
    # and the index gives the same scores as indexing the embed texts directly
    fast = index.index_chunks(chunks, use_context=True)
    ref = BM25Reference(tokenized=[tokenize(c.text) + tokenize(c.context) for c in chunks])
    q = index.encode_queries(QUESTIONS)
    np.testing.assert_allclose(fast.score_matrix(q).toarray()[1], ref.get_scores(tokenize(QUESTIONS[1])), atol=1e-9)


def test_jieba_index_falls_back_to_text():
    pytest.importorskip("jieba")
    doc = Document("d", "劳动合同的订立。劳动合同的履行。")
    chunks = [Chunk("d", 0, 0, 8, doc.text[:8]), Chunk("d", 1, 8, 16, doc.text[8:])]
    index = CorpusIndex([doc], tokenizer="jieba")
    _rows_equal_text_tokenisation(index, chunks, get_tokenizer("jieba"))


def test_index_rejects_foreign_chunks():
    index = CorpusIndex([Document("d", "甲乙丙")])
    with pytest.raises(ValueError, match="not in the corpus"):
        index.index_chunks([Chunk("x", 0, 0, 1, "甲")])
    with pytest.raises(ValueError, match="past the end"):
        index.index_chunks([Chunk("d", 0, 0, 4, "甲乙丙丁")])


# -- ranking rules -------------------------------------------------------------------------------

def test_top_k_ties_and_padding():
    r = top_k(np.array([[1.0, 3.0, 3.0, 0.0], [0.0, 0.0, 0.0, 0.0]]), 3,
              valid=np.array([[True] * 4, [False] * 4]))
    assert r.ids.tolist() == [[1, 2, 0], [-1, -1, -1]]
    assert np.isnan(r.scores[1]).all()
    with pytest.raises(ValueError, match="k must be an int >= 1"):
        top_k(np.zeros((1, 2)), 0)


def test_chunks_sharing_no_token_are_not_retrieved():
    e = BM25Fast.from_texts(["合同订立", "违约责任", "劳动报酬", "休息休假", "社会保险"])
    assert e.search(["合同"], k=3).ids.tolist() == [[0, -1, -1]]
    assert e.search(["！！"], k=2).ids.tolist() == [[-1, -1]]


def test_dense_and_rrf():
    emb = lambda ts: np.array([[1.0, 0.0] if "甲" in t else [0.0, 1.0] for t in ts])  # noqa: E731
    d = DenseIndex(["甲方", "乙方", "甲乙"], emb)
    assert d.search(["甲"], k=2).ids.tolist() == [[0, 2]]
    # 2: 1/63 + 1/61 = 0.032266 > 1: 2/62 = 0.032258 > 0: 1/61
    assert rrf([[0, 1, 2], [2, 1]]) == [2, 1, 0]
    a = Ranking(np.array([[0, 1]]), np.array([[2.0, 1.0]]))
    b = Ranking(np.array([[1, -1]]), np.array([[1.0, np.nan]]))
    assert fuse([a, b], k=2).ids.tolist() == [[1, 0]]
    with pytest.raises(TypeError, match="embedder must be a callable"):
        DenseIndex(["x"], None)


# -- the compiled ranker (chunklab/_topk.c) -----------------------------------------------------

def _both_kernels(engine, queries, k):
    import scipy.sparse as sp

    kernel = engine.kernel
    try:
        engine.kernel = "numpy"
        ref = engine.search(queries, k=k)
        engine.kernel = "compiled"
        got = engine.search(queries, k=k)
    finally:
        engine.kernel = kernel
    assert not sp.issparse(got.ids)
    return ref, got


def test_the_compiled_ranker_is_built():
    # CI installs the package with `pip install -e .`, which compiles it; if this fails, BM25Fast
    # still works (numpy path) but the matrix benchmark is several times slower.
    from chunklab.retrieval.bm25 import _TOPK

    assert _TOPK is not None
    assert BM25Fast.from_texts(["甲乙"]).kernel == "compiled"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 300), st.integers(1, 30), st.integers(1, 12), st.integers(0, 2**31 - 1),
       st.sampled_from([0.0, 0.4, 0.9]), st.sampled_from([0.3, 0.01]))
def test_compiled_ranker_equals_numpy_ranker(n_chunks, n_terms, k, seed, tie_share, density):
    # Random count matrices with many exact ties (integer-valued weights) and chunks sharing
    # nothing with a query: both rankers must give the same ids and bitwise-equal scores. The
    # sparse matrices make queries touch few of many chunks (the ranker's touched-list path).
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    tf = sp.random(n_chunks, n_terms, density=density, random_state=rng, format="csr",
                   data_rvs=lambda m: rng.integers(1, 4, m).astype(float))
    if tie_share:  # duplicate some chunks so their scores tie exactly
        rows = [tf[i] if rng.random() > tie_share or i == 0 else tf[i - 1] for i in range(n_chunks)]
        tf = sp.vstack(rows).tocsr()
    engine = BM25Fast(tf)
    q = sp.random(7, n_terms, density=0.3, random_state=rng, format="csr",
                  data_rvs=lambda m: rng.integers(1, 3, m).astype(float))
    ref, got = _both_kernels(engine, q, k)
    assert np.array_equal(ref.ids, got.ids)
    assert np.array_equal(ref.scores, got.scores, equal_nan=True)


def test_compiled_ranker_on_law_text():
    from chunklab.base import get_strategy
    from chunklab.datasets import load_corpus

    docs = list(load_corpus("laws"))[:30]
    index = CorpusIndex(docs)
    chunks = [c for d in docs for c in get_strategy("recursive", target=300, overlap=30).split(d)]
    engine = index.index_chunks(chunks)
    questions = ["试用期最长多久", "合同无效的情形", "未成年人的监护人", "！！", ""]
    ref, got = _both_kernels(engine, index.encode_queries(questions), 50)
    assert np.array_equal(ref.ids, got.ids)
    assert np.array_equal(ref.scores, got.scores, equal_nan=True)
    assert (got.ids[3] == -1).all() and (got.ids[4] == -1).all()
    assert (got.ids[:3, 0] >= 0).all()


def test_compiled_ranker_rejects_inconsistent_arrays():
    from chunklab.retrieval.bm25 import _TOPK

    ids, scores = np.zeros((1, 2), dtype=np.int64), np.zeros((1, 2))
    p = np.array([0, 1], dtype=np.int64)
    with pytest.raises(ValueError, match="out of range"):
        _TOPK.topk_product(1, 1, 1, 2, p, np.array([5], dtype=np.int64), np.ones(1),
                                     p, np.array([0], dtype=np.int32), np.ones(1), ids, scores)
    with pytest.raises(ValueError, match="out_ids"):
        _TOPK.topk_product(1, 1, 1, 3, p, np.array([0], dtype=np.int64), np.ones(1),
                                     p, np.array([0], dtype=np.int32), np.ones(1), ids, scores)


# -- one layout, one RRF, retrievers by name ------------------------------------------------------------

def test_the_index_lays_the_corpus_on_the_evaluation_layout():
    from chunklab.evaluation import Layout as EvaluationLayout
    from chunklab.retrieval import Layout

    docs = [Document("a", "合同的订立"), Document("b", "违约责任。")]
    index = CorpusIndex(docs)
    assert EvaluationLayout is Layout and isinstance(index.layout, Layout)
    assert index.layout.offsets.tolist() == [0, 6] and index.layout.matches(docs)
    assert not index.layout.matches(docs[::-1]) and not index.layout.matches(docs[:1])
    chunks = [Chunk("b", 0, 0, 2, "违约"), Chunk("a", 0, 2, 5, "的订立")]
    gs, ge = index.chunk_bounds(chunks)
    assert gs.tolist() == [6, 2] and ge.tolist() == [8, 5]
    assert index.layout.to_local(7) == ("b", 1) and index.layout.text(6, 8) == "违约"
    # the precomputed bounds give the same matrix as the index computing them
    a = index.term_counts(chunks).toarray()
    b = index.term_counts(chunks, bounds=index.layout.chunk_bounds(chunks)).toarray()
    assert (a == b).all()
    with pytest.raises(ValueError, match="documents must have distinct ids"):
        CorpusIndex([docs[0], docs[0]])
    with pytest.raises(ValueError, match=r"chunk 1 ends at 6, past the end of document 'a' \(length 5\)"):
        Layout(docs).chunk_bounds([chunks[0], Chunk("a", 1, 0, 6, "合同的订立。")])
    with pytest.raises(ValueError, match="chunk 0 refers to unknown document id 'x' \\(not in the corpus\\)"):
        Layout(docs).chunk_bounds([Chunk("x", 0, 0, 1, "甲")])


def test_rrf_scores_are_computed_once_and_read_by_rrf_fuse_and_multi_granularity():
    from chunklab.hierarchy import multi_granularity
    from chunklab.retrieval import rrf_scores

    rankings = [[3, 1, 2, -1], [1, 3, 5]]
    scores = rrf_scores(rankings, rrf_constant=10)
    want = {1: 1 / 12 + 1 / 11, 3: 1 / 11 + 1 / 12, 2: 1 / 13, 5: 1 / 13}
    assert list(scores) == [1, 3, 2, 5] and scores == pytest.approx(want)  # ties go to the lower id
    assert rrf(rankings, rrf_constant=10) == [1, 3, 2, 5] and rrf(rankings, rrf_constant=10, top=2) == [1, 3]
    assert rrf_scores([]) == {} and rrf([[-1]]) == []
    a = Ranking(np.array([[3, 1, 2, -1]]), np.zeros((1, 4)))
    b = Ranking(np.array([[1, 3, 5, -1]]), np.zeros((1, 4)))
    fused = fuse([a, b], k=5, rrf_constant=10)
    assert fused.ids.tolist() == [[1, 3, 2, 5, -1]]
    assert fused.scores[0, :4].tolist() == list(scores.values()) and np.isnan(fused.scores[0, 4])
    small = [Chunk("d", i, 2 * i, 2 * i + 2, "甲乙") for i in range(4)]
    big = [Chunk("d", 0, 20, 24, "丙丁戊己"), Chunk("d", 1, 24, 28, "庚辛壬癸")]
    hits = multi_granularity([3, 1], [1, 0], small, big, k=4, rrf_constant=10)
    assert [(h.source, h.index) for h in hits] == [("a", 3), ("b", 1), ("a", 1), ("b", 0)]
    assert [h.score for h in hits] == [1 / 11, 1 / 11, 1 / 12, 1 / 12]
    # the constant has one name everywhere; the old keywords are gone
    for call in (lambda: rrf(rankings, k=10), lambda: fuse([a, b], rrf_k=10),
                 lambda: multi_granularity([0], [0], small, big, rrf_k=10)):
        with pytest.raises(TypeError, match="unexpected keyword argument"):
            call()
    with pytest.raises(ValueError, match="rrf_constant must be a number >= 0, got -1"):
        rrf(rankings, rrf_constant=-1)


def test_make_retriever_by_name():
    from chunklab.retrieval import RETRIEVERS, make_retriever
    from chunklab.retrieval.factory import BM25Retriever, HybridRetriever, ReferenceRetriever

    doc = Document("d", "合同的订立。合同的效力。违约责任。")
    chunks = [Chunk("d", 0, 0, 6, "合同的订立。"), Chunk("d", 1, 6, 12, "合同的效力。"), Chunk("d", 2, 12, 17, "违约责任。")]
    emb = lambda ts: np.array([[1.0, 0.0] if "效力" in t else [0.0, 1.0] for t in ts])  # noqa: E731
    assert RETRIEVERS == ("bm25", "fast", "reference", "dense", "hybrid")
    got = {name: make_retriever(name, [doc], chunks, embedder=emb) for name in RETRIEVERS}
    assert isinstance(got["bm25"], BM25Retriever) and isinstance(got["fast"], BM25Retriever)
    assert isinstance(got["reference"], ReferenceRetriever) and isinstance(got["hybrid"], HybridRetriever)
    ranks = {name: r.search(["合同效力"], k=3).ids.tolist() for name, r in got.items()}
    assert ranks["bm25"] == ranks["fast"] == ranks["reference"] == [[1, 0, -1]]
    assert ranks["dense"][0][0] == 1 and ranks["hybrid"][0][0] == 1
    index = CorpusIndex([doc])
    assert make_retriever("bm25", [doc], chunks, index=index).index is index
    assert make_retriever("hybrid", [doc], chunks, embedder=emb, rrf_constant=1).search(["合同效力"], k=2).scores[0, 0] == 1.0
    engine = got["dense"]
    assert make_retriever(engine, [doc], chunks) is engine  # an object with .search passes through
    with pytest.raises(ValueError, match="name must be one of 'bm25', 'fast'"):
        make_retriever("bm26", [doc], chunks)
    with pytest.raises(TypeError, match="or an object with .search"):
        make_retriever(None, [doc], chunks)
    with pytest.raises(ValueError, match="retriever 'hybrid' needs an embedder"):
        make_retriever("hybrid", [doc], chunks)
    with pytest.raises(TypeError, match="use_context must be True or False"):
        make_retriever("bm25", [doc], chunks, use_context="yes")


def test_private_names_are_not_reexported():
    import chunklab.retrieval as retrieval

    for name in ("_TOPK", "_check_k", "_topk_compiled"):
        assert name not in vars(retrieval) and name in vars(retrieval.bm25)  # import them from retrieval.bm25
    assert all(not n.startswith("_") for n in retrieval.__all__)
