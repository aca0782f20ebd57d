"""Other libraries' splitters in chunklab's harness: chonkie and semchunk (optional test extras).

``split_with`` never reads a library's own offsets: it places the strings by a sequential search.
chonkie and semchunk *do* report offsets, which makes them a check of that search on real
documents: the places we find must be the places they say. Skipped when a library is missing
(they are installed by requirements-test.txt).
"""
from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunklab import Document
from chunklab.core import check_chunks
from chunklab.datasets import load_corpus
from chunklab.evaluation import evaluate, split_with

chonkie = pytest.importorskip("chonkie")
semchunk = pytest.importorskip("semchunk")


def _docs():
    """All 小北 documents, 40 laws and the standard-library modules (about 0.9M characters)."""
    docs = list(load_corpus("xiaobei")) + list(load_corpus("laws"))[:40] + list(load_corpus("stdlib"))
    assert len(docs) > 80
    return docs


def _chonkie_spans(chunker, text):
    return [(c.start_index, c.end_index) for c in chunker.chunk(text)]


def _semchunk_spans(chunker, text, overlap=None):
    return [tuple(x) for x in chunker(text, offsets=True, overlap=overlap)[1]]


def _ours(splitter, doc):
    chunks = split_with(splitter, [doc])
    assert all(doc.text[c.start:c.end] == c.text for c in chunks)
    return [(c.start, c.end) for c in chunks]


@pytest.mark.parametrize("overlap", [0, 64])
def test_chonkie_token_chunker_places_match_its_own_offsets(overlap):
    chunker = chonkie.TokenChunker(tokenizer="character", chunk_size=256, chunk_overlap=overlap)
    for doc in _docs():
        assert _ours(chunker, doc) == _chonkie_spans(chunker, doc.text), doc.id


def test_chonkie_recursive_chunker_is_lossless_and_placed_where_it_says():
    chunker = chonkie.RecursiveChunker(tokenizer="character", chunk_size=200)
    for doc in _docs():
        chunks = split_with(chunker, [doc], strategy="chonkie-recursive")
        assert [(c.start, c.end) for c in chunks] == _chonkie_spans(chunker, doc.text), doc.id
        assert check_chunks(doc, chunks) == [], doc.id
        assert all(c.meta["strategy"] == "chonkie-recursive" for c in chunks)


@pytest.mark.parametrize("overlap", [None, 64])
def test_semchunk_places_match_its_own_offsets(overlap):
    # semchunk strips whitespace around its chunks, so the search's whitespace rules are exercised.
    chunker = semchunk.chunkerify(len, 256)
    for doc in _docs():
        ours = _ours(lambda t: chunker(t, overlap=overlap), doc)
        assert ours == _semchunk_spans(chunker, doc.text, overlap), doc.id


def test_semchunk_with_a_token_counter():
    from chunklab.length import count_tokens

    chunker = semchunk.chunkerify(count_tokens, 128)
    for doc in list(load_corpus("xiaobei"))[:10]:
        assert _ours(chunker, doc) == _semchunk_spans(chunker, doc.text), doc.id


_ALPHABET = "甲乙。 \n，ab"


def test_repetitive_text_without_overlap_is_placed_exactly():
    # A seven-letter alphabet repeats everywhere, so most pieces also occur earlier, overlapping
    # their predecessor: a "first occurrence after the previous start" search misplaces about one
    # text in forty here (seen before the adjacency rule). A splitter without overlap must come out
    # exactly where it says. Seeded cases rather than hypothesis: its short texts rarely repeat enough.
    rng = random.Random(7)
    for case in range(400):
        text = "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(1, 240)))
        size = rng.randint(3, 30)
        doc = Document("d", text)
        rec = chonkie.RecursiveChunker(tokenizer="character", chunk_size=size)
        assert _ours(rec, doc) == _chonkie_spans(rec, text), (case, text, size)
        sem = semchunk.chunkerify(len, size)
        assert _ours(sem, doc) == _semchunk_spans(sem, text), (case, text, size)


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=_ALPHABET, max_size=200), st.integers(3, 30), st.data())
def test_repetitive_text_with_overlap_is_placed_in_order_and_never_lost(text, size, data):
    # With overlap, back-to-back repeats are ambiguous by nature; what must hold is that every
    # piece is placed (no error, none dropped), verbatim, in order, never inside its predecessor.
    overlap = data.draw(st.integers(0, size - 1))
    tok = chonkie.TokenChunker(tokenizer="character", chunk_size=size, chunk_overlap=overlap)
    doc = Document("d", text)
    pieces = [c.text for c in tok.chunk(text)]
    chunks = split_with(tok, [doc])
    assert [c.text for c in chunks] == pieces
    for a, b in zip(chunks, chunks[1:]):
        assert a.start < b.start and b.end > a.end


def test_other_splitters_run_through_the_whole_harness():
    from chunklab.datasets.questions import load_questions
    from chunklab.base import get_strategy

    corpus = load_corpus("xiaobei")
    docs = list(corpus)
    questions = load_questions("xiaobei")
    runs = {
        "chonkie": split_with(chonkie.RecursiveChunker(tokenizer="character", chunk_size=400), docs),
        "semchunk": split_with(semchunk.chunkerify(len, 400), docs),
        "chunklab": [c for d in docs for c in get_strategy("recursive", target=400).split(d)],
    }
    for name, chunks in runs.items():
        res = evaluate(docs, chunks, questions, k=5, n_boot=200)
        agg = res.aggregate
        assert len(res.question_ids) == len(questions), name
        for m in ("hit", "recall", "mrr", "iou"):
            assert 0.0 <= agg[m]["lo"] <= agg[m]["mean"] <= agg[m]["hi"] <= 1.0, (name, m)
        # 400-character chunks of any sensible splitter find the evidence for most 小北 questions
        assert agg["hit"]["mean"] > 0.5, name
        assert not math.isnan(agg["iou"]["mean"]), name


def test_overlap_is_checked_by_its_declaration():
    from chunklab.evaluation import chunks_from_strings
    from chunklab.params import ParamError

    d = Document("d", "甲乙丙丁")
    with pytest.raises(ParamError, match=r"^overlap must be an int >= 0 or None, got -1$"):
        chunks_from_strings(d, ["甲乙"], overlap=-1)
    with pytest.raises(TypeError, match=r"^overlap must be an int >= 0 or None, got 1.5$"):
        chunks_from_strings(d, ["甲乙"], overlap=1.5)
    assert [(c.start, c.end) for c in chunks_from_strings(d, ["甲乙", "乙丙"], overlap=1)] == [(0, 2), (1, 3)]
