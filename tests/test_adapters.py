"""Other libraries' splitters in chunklab's harness: LangChain (a main dependency), chonkie,
semchunk and semantic-text-splitter (optional test extras), LlamaIndex (when installed).

``split_with`` uses the offsets a library reports, once checked against the text, and places the
other pieces by a sequential search (``use_offsets=False``: every piece). chonkie, semchunk and
semantic-text-splitter report exact offsets, which makes them a check of both on real documents:
the places we find, with and without their offsets, must be the places they say. A byte-level
token splitter (LangChain's ``TokenTextSplitter``) is checked against places computed from its
tokens. Skipped when a library is missing (the extras are installed by requirements-test.txt).
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
    # the search alone finds the same places (the library's offsets, when it reports any, are checked)
    searched = split_with(splitter, [doc], use_offsets=False)
    assert searched.reported == 0 and searched.searched == len(searched)
    assert [(c.start, c.end) for c in searched] == [(c.start, c.end) for c in chunks], doc.id
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
        assert chunks.reported == len(chunks) and len(chunks.damaged) == chunks.missing == 0, doc.id
        searched = split_with(chunker, [doc], use_offsets=False)
        assert [(c.start, c.end) for c in searched] == [(c.start, c.end) for c in chunks], doc.id


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
    searched = split_with(tok, [doc], use_offsets=False)  # the same rules hold for the search alone
    assert [c.text for c in searched] == pieces
    for a, b in zip(searched, searched[1:]):
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


# -- byte-level token splitters: pieces that cut a character (U+FFFD at their edges) ---------------

def _token_truth(text, size, overlap):
    """Where each window of ``size`` cl100k tokens (moving by ``size - overlap``) lies in ``text``,
    in characters: from the character holding its first byte to the one holding its last."""
    import bisect

    from chunklab.length import get_encoding

    enc = get_encoding()
    ids = enc.encode(text, allowed_special=set(), disallowed_special=())
    token_end = [0]
    for t in ids:
        token_end.append(token_end[-1] + len(enc.decode_single_token_bytes(t)))
    char_at = [0]
    for ch in text:
        char_at.append(char_at[-1] + len(ch.encode("utf-8")))
    out, s = [], 0
    while s < len(ids):
        e = min(s + size, len(ids))
        out.append((bisect.bisect_right(char_at, token_end[s]) - 1, bisect.bisect_left(char_at, token_end[e])))
        if e == len(ids):
            break
        s += size - overlap
    return out


def _edge_damaged(piece):
    return piece[:1] == "\ufffd" or piece[-1:] == "\ufffd"


def _langchain_tokens(size, overlap, **kw):
    from langchain_text_splitters import TokenTextSplitter

    from chunklab.length import get_encoding

    return TokenTextSplitter(encoding_name=get_encoding().name, chunk_size=size, chunk_overlap=overlap, **kw)


@pytest.mark.parametrize("size,overlap", [(100, 20), (200, 50), (64, 0)])
def test_langchain_token_splitter_with_overlap_places_every_piece_where_its_tokens_are(size, overlap):
    # Issue #18: the overlap is counted in tokens, and cl100k cuts Chinese characters in two: before,
    # split_with raised, and with on_missing="skip" kept about a quarter of the pieces.
    docs = list(load_corpus("laws:labour"))
    splitter = _langchain_tokens(size, overlap)
    chunks = split_with(splitter, docs)
    pieces = {d.id: splitter.split_text(d.text) for d in docs}
    n = sum(len(p) for p in pieces.values())
    assert len(chunks) == chunks.pieces == chunks.searched == n and chunks.missing == 0
    damaged = sum(_edge_damaged(p) for ps in pieces.values() for p in ps)
    assert len(chunks.damaged) == damaged > 0.2 * n  # about a third of the pieces cut a character
    for d in docs:
        mine = [c for c in chunks if c.doc_id == d.id]
        assert [(c.start, c.end) for c in mine] == _token_truth(d.text, size, overlap), d.id
        for c, p in zip(mine, pieces[d.id]):
            assert c.meta.get("damaged", False) == _edge_damaged(p)
            if not _edge_damaged(p):
                assert c.text == p
            else:  # the piece is the chunk with its cut characters shown as U+FFFD
                core = p.strip("\ufffd")
                assert core in c.text and len(c.text) - len(core) == (p[0] == "\ufffd") + (p[-1] == "\ufffd")


def test_token_windows_moving_by_one_token_are_placed_exactly():
    # Windows one token apart: consecutive pieces often start or end inside the same character.
    doc = min(load_corpus("laws:labour"), key=lambda d: len(d.text))
    splitter = _langchain_tokens(50, 49)
    chunks = split_with(splitter, [doc])
    assert [(c.start, c.end) for c in chunks] == _token_truth(doc.text, 50, 49)
    assert chunks.missing == 0 and len(chunks.damaged) > 0.2 * len(chunks)


def test_overlap_hint_is_read_only_where_it_counts_characters():
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    from chunklab.adapters import _char_overlap_hint
    from chunklab.length import count_tokens

    assert _char_overlap_hint(RecursiveCharacterTextSplitter(chunk_size=100, chunk_overlap=20)) == 20
    assert _char_overlap_hint(RecursiveCharacterTextSplitter(chunk_size=100, chunk_overlap=20,
                                                             length_function=count_tokens)) is None
    assert _char_overlap_hint(_langchain_tokens(100, 20)) is None  # 20 tokens, not 20 characters


def test_langchain_start_index_is_used_where_it_holds_the_piece():
    docs = list(load_corpus("laws:labour"))
    splitter = _langchain_tokens(100, 20, add_start_index=True)
    chunks = split_with(splitter, docs)
    assert chunks.missing == 0 and chunks.reported > 0.5 * len(chunks)
    held = wrong = 0
    for d in docs:
        mine = [c for c in chunks if c.doc_id == d.id]
        theirs = splitter.create_documents([d.text])
        assert [(c.start, c.end) for c in mine] == _token_truth(d.text, 100, 20), d.id
        for c, x in zip(mine, theirs):
            start = x.metadata["start_index"]
            if start >= 0 and d.text.startswith(x.page_content, start):  # it holds the piece: the same place
                assert c.start == start
                held += 1
            else:  # a cut character, or a search that began too late (20 tokens read as 20 characters)
                wrong += 1
    assert chunks.reported == held and wrong > 0.2 * len(chunks)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="甲乙劳动法。，é𠀀😀 \nab", max_size=120), st.integers(8, 40), st.data())
def test_token_windows_over_multibyte_text_are_placed_exactly(text, size, data):
    overlap = data.draw(st.integers(0, size - 1))
    splitter = _langchain_tokens(size, overlap)
    doc = Document("d", text)
    chunks = split_with(splitter, [doc])
    assert [(c.start, c.end) for c in chunks] == _token_truth(text, size, overlap)
    assert len(chunks.damaged) == sum(_edge_damaged(p) for p in splitter.split_text(text))


def test_replacement_characters_stand_for_one_cut_character_at_the_edges_only():
    from chunklab.evaluation import chunks_from_strings

    d = Document("d", "劳动法。ab劳动")
    # 劳 is three bytes: cut after one, its other two show as two U+FFFD; cut after two, as one
    for piece, span in [("\ufffd\ufffd动法", (0, 3)), ("\ufffd动法", (0, 3)), ("劳动\ufffd", (0, 3)),
                        ("\ufffd", (0, 1))]:
        cs = chunks_from_strings(d, [piece])
        assert [(c.start, c.end) for c in cs] == [span] and cs[0].meta["damaged"] and cs.damaged == [cs[0]], piece
    for piece in ["\ufffd\ufffd\ufffd动法",  # three bytes left after a cut: not a three-byte character
                  "\ufffd劳动",               # 'b' (one byte) cannot be cut
                  "劳\ufffd法"]:              # inside a piece U+FFFD is itself
        with pytest.raises(ValueError, match="was not found"):
            chunks_from_strings(d, [piece])
    # a piece ending in a cut character and the next one starting with it share the character
    cs = chunks_from_strings(d, ["劳动法。ab劳\ufffd", "\ufffd"])
    assert [(c.start, c.end) for c in cs] == [(0, 8), (7, 8)]
    # a document that holds U+FFFD itself: the verbatim piece wins
    d2 = Document("d", "乱\ufffd码。乱码。")
    cs = chunks_from_strings(d2, ["乱\ufffd", "码。乱码。"])
    assert [(c.start, c.end, c.meta.get("damaged")) for c in cs] == [(0, 2, None), (2, 7, None)]


def test_chonkie_token_chunker_with_a_byte_level_tokenizer():
    # chonkie counts each U+FFFD as a character: where a piece starts with two, its start_index is one
    # too low and the text there is not the piece, so that piece is searched.
    from chunklab.length import get_encoding

    chunker = chonkie.TokenChunker(tokenizer=get_encoding(), chunk_size=100, chunk_overlap=20)
    total = 0
    for doc in list(load_corpus("laws:labour"))[:4]:
        theirs = chunker.chunk(doc.text)
        chunks = split_with(chunker, [doc])
        assert [(c.start, c.end) for c in chunks] == _token_truth(doc.text, 100, 20), doc.id
        two = [len(x.text) - len(x.text.lstrip("\ufffd")) >= 2 for x in theirs]
        assert chunks.searched == sum(two) and chunks.reported == len(theirs) - sum(two)
        for c, x, off in zip(chunks, theirs, two):
            assert c.start == x.start_index + off
        total += len(chunks.damaged)
    assert total > 100


# -- semantic-text-splitter --------------------------------------------------------------------------

def _sts():
    return pytest.importorskip("semantic_text_splitter")


@pytest.mark.parametrize("make,n_docs", [
    (lambda m: m.TextSplitter(200), None),
    (lambda m: m.TextSplitter(200, overlap=50), None),
    (lambda m: m.TextSplitter((100, 300), trim=False), None),
    (lambda m: m.TextSplitter.from_tiktoken_model("gpt-4", 100), 30),  # slower: 30 documents
    (lambda m: m.MarkdownSplitter(300, overlap=30), None),
], ids=["chars", "overlap", "range-untrimmed", "tiktoken", "markdown"])
def test_semantic_text_splitter_places_match_its_chunk_indices(make, n_docs):
    splitter = make(_sts())
    for doc in _docs()[:n_docs]:
        theirs = [(s, s + len(p)) for s, p in splitter.chunk_indices(doc.text)]
        chunks = split_with(splitter, [doc])
        assert [(c.start, c.end) for c in chunks] == theirs, doc.id
        assert chunks.reported == len(chunks) == len(theirs), doc.id
        assert _ours(splitter, doc) == theirs, doc.id  # and the search alone finds them too


def test_semantic_text_splitter_with_a_token_counter():
    from chunklab.length import count_tokens

    splitter = _sts().TextSplitter.from_callback(count_tokens, 64, overlap=16)
    for doc in list(load_corpus("xiaobei"))[:10]:
        assert _ours(splitter, doc) == [(s, s + len(p)) for s, p in splitter.chunk_indices(doc.text)], doc.id


def test_chunks_method_without_offsets_is_searched():
    inner = _sts().TextSplitter(150)

    class OnlyChunks:  # an object with .chunks() alone: strings, no offsets
        def chunks(self, text):
            return inner.chunks(text)

    for doc in list(load_corpus("laws:labour"))[:3]:
        chunks = split_with(OnlyChunks(), [doc])
        assert chunks.searched == len(chunks) and chunks.reported == 0
        assert [(c.start, c.end) for c in chunks] == [(s, s + len(p)) for s, p in inner.chunk_indices(doc.text)]


def test_semchunk_chunker_offsets_are_used():
    chunker = semchunk.chunkerify(len, 200)
    for doc in list(load_corpus("laws:labour"))[:3]:
        chunks = split_with(chunker, [doc])
        assert chunks.reported == len(chunks) > 0
        assert [(c.start, c.end) for c in chunks] == _semchunk_spans(chunker, doc.text)


# -- LlamaIndex (not a pinned extra: see requirements-test.txt; runs where it is installed) -----------

@pytest.mark.parametrize("name,kw", [("SentenceSplitter", {"chunk_size": 128, "chunk_overlap": 20}),
                                     ("TokenTextSplitter", {"chunk_size": 96, "chunk_overlap": 16})])
def test_llama_index_node_parsers(name, kw):
    node_parser = pytest.importorskip("llama_index.core.node_parser")
    from llama_index.core.schema import Document as LlamaDocument

    from chunklab.length import get_encoding

    splitter = getattr(node_parser, name)(tokenizer=get_encoding().encode, **kw)
    # 个人信息保护法: LlamaIndex's TokenTextSplitter emits a node that is the end of the one before
    docs = list(load_corpus("laws:labour"))[:4] + list(load_corpus("xiaobei"))[:6]
    docs += list(load_corpus("laws:个人信息保护法"))
    for doc in docs:
        nodes = splitter.get_nodes_from_documents([LlamaDocument(text=doc.text)])
        chunks = split_with(splitter, [doc])
        assert [c.text for c in chunks] == [n.text for n in nodes] and chunks.missing == 0, doc.id
        for c, n in zip(chunks, nodes):  # LlamaIndex finds its nodes with str.find: where it found one, ours agrees
            if n.start_char_idx is not None:
                assert (c.start, c.end) == (n.start_char_idx, n.end_char_idx), doc.id
        assert chunks.reported == sum(n.start_char_idx is not None for n in nodes), doc.id
        searched = split_with(splitter, [doc], use_offsets=False)
        assert [(c.start, c.end) for c in searched] == [(c.start, c.end) for c in chunks], doc.id


# -- how a splitter is read ------------------------------------------------------------------------

class _Doc:  # a LangChain-style document: .page_content and .metadata["start_index"]
    def __init__(self, text, start):
        self.page_content, self.metadata = text, {"start_index": start}


def test_each_kind_of_splitter_is_accepted():
    text = "甲乙。丙丁。甲乙。"
    doc = Document("d", text)
    pieces = ["甲乙。", "丙丁。", "甲乙。"]

    class SplitText:
        def split_text(self, t):
            return pieces

    class Chunk_:
        def chunk(self, t):
            return [_Doc(p, s) for p, s in zip(pieces, (0, 3, 6))]

    class Chunks:
        def chunks(self, t):
            return pieces

    class Indices:
        def chunk_indices(self, t):
            return [(0, "甲乙。"), (3, "丙丁。"), (0, "甲乙。")]  # the last one is wrong: searched

    for splitter, reported in [(SplitText(), 0), (Chunk_(), 3), (Chunks(), 0), (lambda t: pieces, 0),
                               (Indices(), 2)]:
        chunks = split_with(splitter, [doc])
        assert [(c.start, c.end) for c in chunks] == [(0, 3), (3, 6), (6, 9)], splitter
        assert (chunks.reported, chunks.searched) == (reported, 3 - reported), splitter
    with pytest.raises(TypeError, match=r"^splitter must have split_text\(\), chunks\(\) or chunk\(\), or be callable"):
        split_with(object(), [doc])


def test_a_reported_later_repeat_is_revised_when_the_next_pieces_fit_nowhere():
    # LangChain and LlamaIndex find their own pieces with str.find; a piece reported at a later
    # repeat holds the piece, but then the next pieces would have to go backwards.
    from chunklab.evaluation import chunks_from_strings

    d = Document("d", "甲乙。丙丁。甲乙。戊己。")
    cs = chunks_from_strings(d, ["甲乙。", "丙丁。", "甲乙。", "戊己。"], starts=[6, None, None, None])
    assert [c.start for c in cs] == [0, 3, 6, 9] and (cs.reported, cs.searched) == (0, 4)
    cs = chunks_from_strings(d, ["甲乙。", "丙丁。", "甲乙。", "戊己。"], starts=[0, 3, 0, 9])
    assert [c.start for c in cs] == [0, 3, 6, 9] and (cs.reported, cs.searched) == (3, 1)
    # a piece that is the end of its predecessor (LlamaIndex's TokenTextSplitter emits such) goes
    # there, found or reported, but only when it fits nowhere else
    e = Document("e", "甲乙丙丁。戊己庚。")
    for starts in (None, [0, 2, 3]):
        cs = chunks_from_strings(e, ["甲乙丙丁。", "丙丁。", "丁。戊己庚。"], starts=starts)
        assert [(c.start, c.end) for c in cs] == [(0, 5), (2, 5), (3, 9)], starts
    for text, starts in [("丁。丁。", [0, 2]), ("丁。丁。丁。", [0, 4])]:
        assert [c.start for c in chunks_from_strings(Document("f", text), ["丁。丁。", "丁。"])] == starts
    with pytest.raises(ValueError, match="starts has 1 entries for 2 pieces"):
        chunks_from_strings(d, ["甲乙。", "丙丁。"], starts=[0])


def test_placed_chunks_go_to_evaluate_and_pickle_as_they_are():
    import pickle

    from chunklab.datasets.questions import load_questions

    docs = list(load_corpus("xiaobei"))
    chunks = split_with(_langchain_tokens(256, 32), docs)
    assert isinstance(chunks, list) and len(chunks.damaged) > 0 and chunks.missing == 0
    again = pickle.loads(pickle.dumps(chunks))
    assert again == chunks and again.counts() == chunks.counts()
    res = evaluate(docs, chunks, load_questions("xiaobei"), k=5, n_boot=100)
    assert 0.0 <= res.aggregate["hit"]["mean"] <= 1.0


# -- splitter_from_spec --------------------------------------------------------------------------------

def test_splitter_from_spec_builds_classes_and_binds_functions(tmp_path, monkeypatch):
    import functools

    from chunklab.adapters import splitter_from_spec

    ck = splitter_from_spec("chonkie:TokenChunker", {"tokenizer": "character", "chunk_size": 64})
    assert isinstance(ck, chonkie.TokenChunker) and ck.chunk_size == 64
    lc = splitter_from_spec("langchain_text_splitters:RecursiveCharacterTextSplitter",
                            {"chunk_size": 50, "chunk_overlap": 10})
    assert type(lc).__name__ == "RecursiveCharacterTextSplitter"
    wrap = splitter_from_spec("textwrap:wrap", {"width": 30})
    assert isinstance(wrap, functools.partial) and wrap.keywords == {"width": 30}
    import textwrap
    assert splitter_from_spec("textwrap:wrap") is textwrap.wrap
    (tmp_path / "my_splitters.py").write_text(
        "def make(size):\n    return lambda text: [text[i:i + size] for i in range(0, len(text), size)]\n"
        "def cut(text, size=3):\n    return [text[i:i + size] for i in range(0, len(text), size)]\n"
        "SPLITTER = cut\nNUMBER = 3\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    made = splitter_from_spec("my_splitters:make", {"size": 4})  # args fill its parameters: a factory
    assert made("甲乙丙丁戊") == ["甲乙丙丁", "戊"]
    cut = splitter_from_spec("my_splitters:cut", {"size": 2})     # the text is still missing: bound
    assert isinstance(cut, functools.partial) and cut("甲乙丙") == ["甲乙", "丙"]
    doc = Document("d", "甲乙丙丁戊")
    assert [c.text for c in split_with(splitter_from_spec("my_splitters:SPLITTER"), [doc])] == ["甲乙丙", "丁戊"]
    sts = pytest.importorskip("semantic_text_splitter")
    assert isinstance(splitter_from_spec("semantic_text_splitter:TextSplitter", {"capacity": 100}), sts.TextSplitter)


@pytest.mark.parametrize("spec,args,exc,message", [
    ("textwrap", None, ValueError,
     r"splitter spec must be 'module:attr' \(e\.g\. 'chonkie:TokenChunker'\), got 'textwrap'"),
    ("a:b:c", None, ValueError, r"splitter spec must be 'module:attr'"),
    ("no_such_splitters:Thing", None, ModuleNotFoundError,
     r"splitter 'no_such_splitters:Thing': no module named 'no_such_splitters' \(pip install no-such-splitters\)"),
    ("llama_index_nope.core:X", None, ModuleNotFoundError, r"\(pip install llama-index-nope\)"),
    ("chonkie.no_such:X", None, ModuleNotFoundError, r"no module named 'chonkie.no_such' \('chonkie' is installed\)"),
    ("chonkie:tokenchunker", None, AttributeError,
     r"splitter 'chonkie:tokenchunker': module 'chonkie' has no attribute 'tokenchunker'; "
     r"did you mean 'TokenChunker'\?"),
    ("textwrap:TextWrapper.wrapp", None, AttributeError,
     r"'textwrap:TextWrapper' has no attribute 'wrapp'; did you mean 'wrap'\?"),
    ("chonkie:TokenChunker", {"chunk_sise": 5}, TypeError,
     r"splitter 'chonkie:TokenChunker': bad arguments \{'chunk_sise': 5\}: .*unexpected keyword argument 'chunk_sise'"),
    ("langchain_text_splitters:TokenTextSplitter", {"chunk_size": 10, "chunk_overlap": 20}, ValueError,
     r"bad arguments .*larger chunk overlap \(20\) than chunk size \(10\)"),
    ("builtins:str.splitlines", {"keepend": True}, TypeError, r"unexpected keyword argument 'keepend'"),
    ("textwrap:wrap", ["width"], TypeError,
     r"arguments must be a dict of keyword arguments \(a JSON object\), got list"),
    ("math:pi", None, TypeError,
     r"splitter 'math:pi': float is not a splitter \(it has no split_text\(\), chunks\(\) or chunk\(\) "
     r"and is not callable\)"),
    ("math:pi", {"x": 1}, TypeError,
     r"splitter 'math:pi' is a float object, not a class or function: it takes no arguments"),
    ("collections:OrderedDict", None, TypeError, r"OrderedDict is not a splitter"),
])
def test_splitter_from_spec_errors_are_one_line(spec, args, exc, message):
    from chunklab.adapters import splitter_from_spec

    with pytest.raises(exc, match=message) as info:
        splitter_from_spec(spec, args)
    assert "\n" not in str(info.value) and type(info.value) is exc
