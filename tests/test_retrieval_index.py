"""The compiled index builders (chunklab/_topk.c) against their numpy twins, and the index's shortcuts.

Every shortcut of :class:`~chunklab.retrieval.CorpusIndex` must give exactly what the plain way
gives: the count matrix and BM25 weights (bitwise), the columns of new tokens (same numbers, in
the same order), the gold bounds.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunklab.core import Chunk, Document
from chunklab.retrieval import CorpusIndex
from chunklab.retrieval import bm25 as bm25_module
from chunklab.retrieval import corpus_index as ci_module
from chunklab.retrieval.bm25 import _TOPK
from chunklab.retrieval.tokenizers import BigramTokenizer, UnigramBigramTokenizer, WordsTokenizer

pytestmark = pytest.mark.skipif(_TOPK is None, reason="chunklab._topk was not built")

ALPHABET = list("民法典合同甲乙丙") + list("abAB12") + list("，。 \n_")


@pytest.fixture(scope="module")
def law():
    from chunklab.datasets import load_corpus

    return list(load_corpus("laws:劳动合同法")) + list(load_corpus("laws:民法典"))[:1]


def _numpy_only(monkeypatch):
    monkeypatch.setattr(ci_module, "_TOPK", None)
    monkeypatch.setattr(bm25_module, "_TOPK", None)


def _windows(docs, size, overlap, context=""):
    out = []
    for d in docs:
        s = 0
        while s < len(d.text):
            e = min(s + size, len(d.text))
            out.append(Chunk(d.id, len(out), s, e, d.text[s:e], context=context))
            if e == len(d.text):
                break
            s = e - overlap
    return out


def _same_engine(a, b):
    for x, y in ((a._weights_csc, b._weights_csc),):
        assert x.shape == y.shape
        assert np.array_equal(x.indptr, y.indptr) and np.array_equal(x.indices, y.indices)
        assert np.array_equal(x.data, y.data)  # bitwise: the same operations in the same order
    assert np.array_equal(a.doc_len, b.doc_len) and np.array_equal(a.idf, b.idf) and a.avgdl == b.avgdl


@pytest.mark.parametrize("tokenizer", ["bigram", "unigram_bigram", "words"])
def test_compiled_index_equals_the_numpy_index(law, tokenizer, monkeypatch):
    chunks = _windows(law, 97, 13, context="劳动合同法 > 第一章 abc")
    fast = CorpusIndex(law, tokenizer=tokenizer)
    with monkeypatch.context() as m:
        _numpy_only(m)
        slow = CorpusIndex(law, tokenizer=tokenizer)
        for name in ("vocab_keys", "tok_col", "tok_start", "tok_end", "run_start", "run_end", "run_kind"):
            assert np.array_equal(getattr(fast, name), getattr(slow, name)), name
        want = [slow.index_chunks(chunks, use_context=ctx) for ctx in (False, True)]
        want_tf = slow.term_counts(chunks)
    assert fast.tok_start.dtype == np.int32 and fast.tok_col.dtype == np.int32
    got = [fast.index_chunks(chunks, use_context=ctx) for ctx in (False, True)]
    for a, b in zip(got, want):
        _same_engine(a, b)
    got_tf = fast.term_counts(chunks)
    assert (got_tf != want_tf).nnz == 0 and got_tf.has_canonical_format
    assert fast._extra == slow._extra  # the cut edges' new tokens got the same columns


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(st.sampled_from(ALPHABET), min_size=1, max_size=60), data=st.data())
def test_compiled_counts_equal_numpy_counts_on_any_cuts(text, data):
    doc = Document("d", text)
    cuts = data.draw(st.lists(st.tuples(st.integers(0, len(text)), st.integers(0, len(text))), min_size=1, max_size=8))
    chunks = [Chunk("d", i, min(a, b), max(a, b), text[min(a, b):max(a, b)]) for i, (a, b) in enumerate(cuts)]
    fast, slow = CorpusIndex([doc]), CorpusIndex([doc])
    got = fast.index_chunks(chunks)
    topk = ci_module._TOPK
    try:
        ci_module._TOPK = bm25_module._TOPK = None
        want = slow.index_chunks(chunks)
    finally:
        ci_module._TOPK = bm25_module._TOPK = topk
    _same_engine(got, want)


@pytest.mark.parametrize("cls", [BigramTokenizer, UnigramBigramTokenizer, WordsTokenizer])
def test_cut_pieces_shortcut_equals_tokenising_the_pieces(law, cls):
    plain = type("Plain", (cls,), {})  # the same rules under another type: the general path
    docs = law[:1] + [Document("en", "GDPR and gdpr, Article_12 applies. İstanbul ǅemal 2024年")]
    chunks = _windows(docs, 7, 2)
    a, b = CorpusIndex(docs, tokenizer=cls()), CorpusIndex(docs, tokenizer=plain())
    assert type(a.tokenizer) in ci_module._PIECE_RULES and type(b.tokenizer) not in ci_module._PIECE_RULES
    for i in range(2):  # twice: the second time the new tokens have their columns already
        gs, ge = a.layout.chunk_bounds(chunks)
        ra, ca = a._edge_tokens(gs, ge)
        rb, cb = b._edge_tokens(gs, ge)
        assert np.array_equal(ra, rb) and np.array_equal(ca, cb) and a._extra == b._extra
    assert len(ra) > 0


@pytest.mark.parametrize("tokenizer", ["bigram", "unigram_bigram", "words"])
def test_questions_tokenised_at_once_equal_one_by_one(law, tokenizer):
    texts = ["劳动合同应当具备哪些条款？", "试用期最长多久", "GDPR 与 gdpr Ab12 新词汇ＡＢ", "甲", "", "！！",
             "İstanbul ǅ 〇二〇", "合同法 unigram 测试 ab_c", "违约金\n\n第九十条"]
    a, b = CorpusIndex(law[:1], tokenizer=tokenizer), CorpusIndex(law[:1], tokenizer=tokenizer)
    ma, mb = a._count_many(texts), b._count_texts(texts)
    assert ma.shape == mb.shape and (ma != mb).nnz == 0
    assert np.array_equal(ma.indices, mb.indices) and np.array_equal(ma.indptr, mb.indptr)
    assert a._extra == b._extra and list(a._words.items()) == list(b._words.items())
    # a lone surrogate cannot be encoded in one pass: the texts are tokenised one by one
    odd = texts + ["甲\ud800乙"]
    assert (a._count_many(odd) != b._count_texts(odd)).nnz == 0


def test_the_index_remembers_the_gold_bounds_of_unchanging_spans(law):
    index = CorpusIndex(law[:1])
    d = law[0].id
    spans = [((d, 0, 5),), ((d, 10, 20), (d, 15, 30))]
    gs, ge = index.layout.gold_bounds(spans)
    again = index.layout.gold_bounds(list(spans))
    assert again[0] is gs and not gs.flags.writeable  # the same (read-only) arrays
    assert ge.tolist() == [[5], [30]]  # overlapping spans of a question merged
    mutable = [[(d, 0, 5)]]  # a list can change between calls: never remembered
    first = index.layout.gold_bounds(mutable)
    mutable[0][0] = (d, 1, 6)
    assert index.layout.gold_bounds(mutable)[0][0, 0] == 1 and first[0].flags.writeable


def test_compiled_builders_reject_inconsistent_arrays():
    i64, i32 = np.int64, np.int32
    tok = np.array([0, 1, 1], dtype=i32)
    lo, hi = np.array([0], dtype=i64), np.array([3], dtype=i64)
    none = np.zeros(0, dtype=i64)
    df, rl = np.zeros(2, dtype=i64), np.zeros(1, dtype=i64)
    assert _TOPK.csc_counts(1, 2, tok, lo, hi, none, none, rl, df) == 2 and df.tolist() == [1, 1]
    with pytest.raises(ValueError, match="token column out of range"):
        _TOPK.csc_counts(1, 1, tok, lo, hi, none, none, rl, np.zeros(1, dtype=i64))
    with pytest.raises(ValueError, match="token range out of bounds"):
        _TOPK.csc_counts(1, 2, tok, lo, np.array([4], dtype=i64), none, none, rl, df)
    with pytest.raises(ValueError, match="sorted by row"):
        _TOPK.csc_counts(1, 2, tok, lo, hi, np.array([1], dtype=i64), np.array([0], dtype=i64), rl, df)
    indptr = np.array([0, 1, 2], dtype=i64)
    ind, dat = np.zeros(2, dtype=i32), np.zeros(2)
    _TOPK.csc_fill(1, 2, tok, lo, hi, none, none, rl, indptr, ind, dat)
    assert ind.tolist() == [0, 0] and dat.tolist() == [1.0, 2.0] and rl.tolist() == [3]
    with pytest.raises(ValueError, match="indptr does not match these rows"):
        _TOPK.csc_fill(1, 2, tok, lo, hi, none, none, rl, np.array([0, 2, 2], dtype=i64), ind, dat)
    codes = np.zeros(5, dtype=i32)
    distinct = np.frombuffer(_TOPK.factorize(np.array([7, -3, 7, 2**40, -3], dtype=i64), codes), dtype=i64)
    assert distinct.tolist() == [7, -3, 2**40] and codes.tolist() == [0, 1, 0, 2, 1]


def test_factorize_many_keys_equals_unique():
    rng = np.random.default_rng(0)
    keys = rng.integers(-2**50, 2**50, 5000)[rng.integers(0, 5000, 200_000)]
    distinct, codes = ci_module._factorize(keys)
    assert np.array_equal(distinct[codes], keys) and len(distinct) == len(np.unique(keys))


@pytest.mark.parametrize("tokenizer", ["bigram", "unigram_bigram", "words"])
@pytest.mark.parametrize("block", [7, 1 << 18])
def test_index_of_one_chunking_equals_the_full_index(law, tokenizer, block, monkeypatch):
    """An index built for one chunking (no positions kept) gives the full index's engine bitwise,
    however the corpus is cut into blocks and in whatever order the chunks come."""
    monkeypatch.setattr(ci_module, "_TOKEN_BLOCK", block)
    docs = law + [Document("empty", ""), Document("tail", "甲乙 ab")]
    chunks = _windows(docs, 97, 13, context="劳动合同法 > 第一章 abc")
    chunks += [Chunk(d.id, len(chunks) + i, len(d.text), len(d.text), "") for i, d in enumerate(docs)]
    chunks = [chunks[i] for i in np.random.default_rng(0).permutation(len(chunks))]
    full = CorpusIndex(docs, tokenizer=tokenizer)
    one = CorpusIndex(docs, tokenizer=tokenizer, chunks=chunks)
    assert one._single is not None and len(one.tok_start) == 0
    for name in ("vocab_keys", "tok_col", "run_start", "run_end", "run_kind"):
        assert np.array_equal(getattr(full, name), getattr(one, name)), name
    for ctx in (False, True):
        _same_engine(one.index_chunks(chunks, use_context=ctx), full.index_chunks(chunks, use_context=ctx))
    assert one._extra == full._extra  # the cut edges' new tokens got the same columns
    assert (one.term_counts(chunks) != full.term_counts(chunks)).nnz == 0
    with pytest.raises(ValueError, match="one chunking"):
        one.index_chunks(chunks[1:])


def test_index_of_one_chunking_falls_back_to_a_full_index(law, monkeypatch):
    chunks = _windows(law, 97, 13)
    monkeypatch.setattr(ci_module, "_TOPK", None)
    idx = CorpusIndex(law, chunks=chunks)
    assert idx._single is None and len(idx.tok_start) == len(idx.tok_col)
    idx.index_chunks(chunks[:3])  # any chunking
