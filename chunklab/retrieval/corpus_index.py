"""A corpus tokenised once, from which the BM25 index of any chunking is built without re-tokenising.

:class:`CorpusIndex` tokenises a corpus *once*, remembering where every token sits; each chunking
is then indexed from character ranges instead of re-tokenising chunk strings. The result is the
same matrix that tokenising each chunk's text would give (tested), including the tokens a cut
creates at a chunk's edge.
"""
from __future__ import annotations

import threading
from typing import Any, Iterable, Sequence

import numpy as np
import scipy.sparse as sp

from .bm25 import _TOPK, BM25Fast, _canonical, _count_matrix
from .layout import Layout
from .tokenizers import (
    _CJK_RUN, _SHIFT, _WORD_BASE, KIND_CJK, BigramTokenizer, Tokenizer, UnigramBigramTokenizer, WordsTokenizer,
    get_tokenizer,
)

__all__ = ["CorpusIndex"]

#: The tokenisers whose cut pieces give exactly one token each, known without tokenising the piece
#: (see :meth:`CorpusIndex._edge_tokens`; a subclass may change the rules, so only these types).
_PIECE_RULES = (BigramTokenizer, UnigramBigramTokenizer, WordsTokenizer)


def _factorize(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(distinct, codes)`` with ``keys == distinct[codes]`` (the distinct keys in no particular order)."""
    if _TOPK is not None and len(keys) < 2**31 - 1:
        codes = np.empty(len(keys), dtype=np.int32)
        distinct = np.frombuffer(_TOPK.factorize(np.ascontiguousarray(keys, dtype=np.int64), codes), dtype=np.int64)
        return distinct, codes
    distinct, codes = np.unique(keys, return_inverse=True)
    return distinct, codes.astype(np.int32 if len(distinct) < 2**31 - 1 else np.int64)


def _trim_heap() -> None:
    """Give the C heap's free pages back to the system (glibc's ``malloc_trim``; elsewhere nothing).

    Reading a corpus frees many document-sized temporaries; glibc keeps the freed pages inside its
    heap (about 2 bytes per corpus character, issue #21) unless asked to return them.
    """
    global _MALLOC_TRIM
    if _MALLOC_TRIM is None:
        try:
            import ctypes

            _MALLOC_TRIM = ctypes.CDLL(None).malloc_trim
        except (AttributeError, OSError, TypeError):
            _MALLOC_TRIM = False
    if _MALLOC_TRIM:
        _MALLOC_TRIM(0)


_MALLOC_TRIM: Any = None

#: Tokens whose keys :meth:`CorpusIndex._tokenise` makes distinct together (memory: 8 bytes each).
_TOKEN_BLOCK = 1 << 18


class _IndexLayout(Layout):
    """The index's :class:`~chunklab.retrieval.layout.Layout`, remembering the gold bounds of its
    last question set: every chunking of a matrix is measured on the same questions.

    Only spans that cannot change are remembered (each question's spans a tuple of tuples or of
    frozen dataclasses, and the same objects as last time); the arrays are read-only.
    """

    _gold: tuple[list[Any], tuple[np.ndarray, np.ndarray]] | None = None

    def gold_bounds(self, span_lists: Sequence[Sequence[Any]]) -> tuple[np.ndarray, np.ndarray]:
        span_lists = list(span_lists)
        hit = self._gold
        if (hit is not None and len(hit[0]) == len(span_lists)
                and all(a is b for a, b in zip(hit[0], span_lists))):
            return hit[1]
        out = super().gold_bounds(span_lists)
        if all(_frozen(spans) for spans in span_lists):
            for arr in out:
                arr.flags.writeable = False
            self._gold = (span_lists, out)
        return out


def _frozen(spans: Any) -> bool:
    """Whether ``spans`` is a tuple whose items cannot change (tuples, frozen dataclasses)."""
    if type(spans) is not tuple:
        return False
    for sp_ in spans:
        if isinstance(sp_, tuple):
            continue
        params = getattr(type(sp_), "__dataclass_params__", None)
        if params is None or not params.frozen:
            return False
    return True


class CorpusIndex:
    """A corpus tokenised once, with every token's position, ready to index any chunking of it.

    A chunk ``[s, e)`` of a document holds the corpus tokens that lie entirely inside it (for
    bigrams: the pairs starting at ``s .. e-2``), plus the tokens its cut edges create (a cut
    word's remaining piece; under ``bigram`` a single remaining character of a CJK run). The row
    is therefore exactly what tokenising ``chunk.text`` would give, without re-tokenising: rows are
    gathered from position ranges with numpy.

    Queries are tokenised once too and cached (:meth:`encode_queries`).

    ``chunks``: an index for that one chunking only (what :func:`~chunklab.evaluation.evaluate`
    builds when it is given no index): each chunk's token range is found while the corpus is
    read, and the token positions are not kept, which takes about a third of the memory;
    :meth:`index_chunks` and :meth:`term_counts` then accept only those chunks. (With a tokeniser
    other than the run ones, or without chunklab._topk, the index is a full one.)

    >>> from chunklab.core import Document, Chunk
    >>> idx = CorpusIndex([Document("d", "合同的订立。合同的效力。违约责任。")])
    >>> cs = [Chunk("d", 0, 0, 6, "合同的订立。"), Chunk("d", 1, 6, 12, "合同的效力。"),
    ...       Chunk("d", 2, 12, 17, "违约责任。")]
    >>> idx.index_chunks(cs).search(idx.encode_queries(["合同效力"]), k=2).ids.tolist()
    [[1, 0]]
    """

    def __init__(self, documents: Sequence[Any], tokenizer: str | Tokenizer = "bigram", *,
                 chunks: Sequence[Any] | None = None) -> None:
        self.tokenizer = get_tokenizer(tokenizer)
        #: The corpus on one line (see :class:`~chunklab.retrieval.layout.Layout`): token positions
        #: are global, and :func:`~chunklab.evaluation.evaluate` measures on this same layout.
        self.layout = _IndexLayout(documents)
        self._words: dict[str, int] = {}
        self._words_lock = threading.Lock()
        self._query_cache: dict[tuple[str, ...], sp.csr_matrix] = {}
        self._context_cache: dict[str, np.ndarray] = {}
        # Positions are int32 when the corpus line is shorter than 2**31 (searches cast their
        # needles to it, see _pos); token columns are int32 below 2**30 terms.
        n_chars = int(self.layout.offsets[-1] + self.layout.lens[-1]) if len(self.layout) else 0
        self._pos_dtype = np.int32 if n_chars < 2**31 - 1 else np.int64
        #: ``(gs, ge, lo, hi)`` of the one chunking an index built with ``chunks`` serves: its
        #: bounds and each chunk's token range (None: any chunking).
        self._single: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
        if chunks is not None and self.tokenizer.positional and type(self.tokenizer) in _PIECE_RULES \
                and _TOPK is not None:
            self._single = self.layout.chunk_bounds(chunks) + (None, None)  # type: ignore[assignment]
            self._tokenise()
            if not self._compiled:  # the index of one chunking is only for the compiled passes
                self._single = None
        if self._single is None:
            if self.tokenizer.positional:
                self._tokenise()
            else:
                self.vocab_keys = np.zeros(0, dtype=np.int64)
                self.tok_col = np.zeros(0, dtype=np.int64)
                self.tok_start = self.tok_end = np.zeros(0, dtype=self._pos_dtype)
                self._ends_sorted = True  # no tokens
        self._extra: dict[int, int] = {}  # keys outside the corpus vocabulary (query-only) -> column
        self._ones_buf = np.zeros(0)  # see _ones
        self._lock = threading.Lock()  # new columns may be added from several threads

    def _tokenise(self) -> None:
        """Every token's position and column, block of documents by block.

        Positions are written straight into their final arrays (no per-document lists to
        concatenate: that held them twice). Keys are made distinct per block of about
        :data:`_TOKEN_BLOCK` tokens (a small table), then the blocks' distinct keys over the corpus;
        the columns are the distinct keys in increasing order. So no corpus-sized array of keys or
        of 64-bit positions is ever held.

        For an index of one chunking (``self._single``), the positions are kept only for the block
        being read: each chunk's token range ``[lo, hi)`` is found in its block (a chunk lies in
        one document) and the positions are dropped, so that only the token columns are held
        (4 bytes a token instead of 12; memory, issue #21).
        """
        # NOTE (memory, issue #21): the arrays are sized for the most tokens a run tokeniser gives
        # (one per character, two with CJK unigrams) and grow if a tokeniser gives more; pages of
        # the unused tail are never written, so they take no memory.
        pt = self._pos_dtype
        texts, offsets = self.layout.texts, self.layout.offsets.tolist()
        cap = (offsets[-1] + len(texts[-1]) if texts else 0) * (2 if getattr(self.tokenizer, "cjk_unigrams", False) else 1) + 1
        single = self._single is not None
        if single:
            gs, ge = self._single[0], self._single[1]
            by_start = np.argsort(gs, kind="stable")
            sorted_gs = gs[by_start]
            lo_all = np.zeros(len(gs), dtype=np.int64)
            hi_all = np.zeros(len(gs), dtype=np.int64)
        # start, end (the whole corpus, or the current block only), code
        pos = [np.empty(1024 if single else cap, pt), np.empty(1024 if single else cap, pt)]
        code = [np.empty(cap, np.int32)]
        runs = [np.empty(cap, pt), np.empty(cap, pt), np.empty(cap, np.int8)]  # start, end, kind
        blocks: list[tuple[int, int, np.ndarray]] = []  # (first token, end token, the block's distinct keys)
        keys: list[np.ndarray] = []
        n = nr = b0 = 0
        ends_sorted, last_end = True, None
        first_doc = 0  # the first document of the current block

        def fit(arrs: list[np.ndarray], need: int) -> None:
            for i, a in enumerate(arrs):
                if need > len(a):
                    grown = np.empty(max(need, len(a) + len(a) // 2 + 1024), a.dtype)
                    grown[:len(a)] = a
                    arrs[i] = grown

        def flush(next_doc: int) -> None:
            nonlocal keys, b0, first_doc, ends_sorted, last_end
            if n > b0:
                u, c = _factorize(np.concatenate(keys))
                code[0][b0:n] = c
                blocks.append((b0, n, u))
            block = slice(b0 - pos_base, n - pos_base)  # the block's tokens in pos
            e_ = pos[1][block]
            if len(e_):
                ends_sorted = ends_sorted and bool(np.all(np.diff(e_) >= 0)) and (last_end is None or e_[0] >= last_end)
                last_end = e_[-1]
            if single:
                s_ = pos[0][block]
                # the chunks starting in this block's documents [p0, p1) (a chunk ends in its document)
                p0 = offsets[first_doc] if first_doc < len(offsets) else np.inf
                p1 = offsets[next_doc] if next_doc < len(offsets) else np.inf
                a, b = np.searchsorted(sorted_gs, [p0, p1], side="left")
                sel = by_start[a:b]
                if len(sel):
                    cs, ce = self._pos(gs[sel]), self._pos(ge[sel])
                    lo = np.searchsorted(s_, cs, side="left")
                    hi = np.minimum(np.searchsorted(s_, ce, side="left"), np.searchsorted(e_, ce, side="right"))
                    lo_all[sel] = lo + b0
                    hi_all[sel] = np.maximum(lo, hi) + b0
            keys, b0, first_doc = [], n, next_doc

        pos_base = 0  # the token whose position pos[0][0] holds
        for d, (off, text) in enumerate(zip(offsets, texts)):
            k, s, e, rs, re_, rk = self.tokenizer.positions(text, self._word_key)
            m, mr = n + len(k), nr + len(rs)
            fit(pos, m - pos_base); fit(code, m); fit(runs, mr)
            np.add(s, off, out=pos[0][n - pos_base:m - pos_base], casting="unsafe")
            np.add(e, off, out=pos[1][n - pos_base:m - pos_base], casting="unsafe")
            np.add(rs, off, out=runs[0][nr:mr], casting="unsafe")
            np.add(re_, off, out=runs[1][nr:mr], casting="unsafe")
            runs[2][nr:mr] = rk
            keys.append(k)
            n, nr = m, mr
            del k, s, e, rs, re_, rk
            if n - b0 >= _TOKEN_BLOCK:
                flush(d + 1)
                if single:
                    pos_base = n
        flush(len(texts))
        self.run_start, self.run_end, self.run_kind = (a[:nr] for a in runs)
        distinct, where = _factorize(np.concatenate([u for _, _, u in blocks]) if blocks else np.zeros(0, dtype=np.int64))
        order = np.argsort(distinct, kind="stable")
        self.vocab_keys = distinct[order]
        ct = np.int32 if len(distinct) < 2**30 else np.int64
        rank = np.empty(len(distinct), dtype=ct)
        rank[order] = np.arange(len(distinct), dtype=ct)
        del order, distinct
        col = rank[where]  # column of each block's distinct keys, blocks one after another
        del rank, where
        codes = code[0] if ct is np.int32 else code[0].astype(ct)
        u0 = 0
        for a, b, u in blocks:
            codes[a:b] = col[u0:u0 + len(u)][codes[a:b]]
            u0 += len(u)
        self.tok_col = codes[:n]
        # Token ends in start order never decrease for the run tokenisers (a pair ends after the
        # unigram at its start, and runs do not overlap): then "ends by ge" is a prefix of the
        # tokens and a chunk's tokens are one contiguous slice.
        self._ends_sorted = bool(ends_sorted)
        if single:
            self.tok_start = self.tok_end = np.zeros(0, dtype=pt)
            self._single = (self._single[0], self._single[1], lo_all, hi_all)
        else:
            self.tok_start, self.tok_end = pos[0][:n], pos[1][:n]
        del pos, code, blocks, keys
        _trim_heap()

    @property
    def _compiled(self) -> bool:
        """Whether chunklab._topk gathers the count matrices (:meth:`_counts_compiled`): it needs
        sorted token ends and int32 token columns."""
        return self._ends_sorted and _TOPK is not None and self.tok_col.dtype == np.int32

    def _pos(self, x: Any) -> np.ndarray:
        """Positions as the position arrays' dtype (numpy would copy a whole sorted array to search
        it for needles of another dtype)."""
        return np.asarray(x).astype(self._pos_dtype, copy=False)

    # -- keys and columns ----------------------------------------------------------------------
    def _word_key(self, word: str) -> int:
        k = self._words.get(word)
        if k is None:
            with self._words_lock:
                k = self._words.setdefault(word, _WORD_BASE + len(self._words))
        return k

    def _key_of(self, token: str) -> int:
        cps = [ord(c) for c in token]
        if self.tokenizer.name in ("bigram", "unigram_bigram") and _CJK_RUN.fullmatch(token):
            if len(cps) == 1:
                return cps[0]
            if len(cps) == 2:
                return ((cps[0] + 1) << _SHIFT) | cps[1]
        return self._word_key(token)

    @property
    def n_terms(self) -> int:
        return len(self.vocab_keys) + len(self._extra)

    def _cols_of_keys(self, keys: np.ndarray, grow: bool) -> np.ndarray:
        """Columns of int keys; unknown keys get new columns when ``grow`` else -1."""
        keys = np.asarray(keys, dtype=np.int64)
        pos = np.searchsorted(self.vocab_keys, keys)
        pos_c = np.minimum(pos, max(len(self.vocab_keys) - 1, 0))
        known = (len(self.vocab_keys) > 0) & (self.vocab_keys[pos_c] == keys) if len(self.vocab_keys) else np.zeros(len(keys), bool)
        out = np.where(known, pos_c, -1).astype(np.int64)
        unknown = np.flatnonzero(~known)
        if len(unknown):
            with self._lock:
                for i in unknown:
                    key = int(keys[i])
                    col = self._extra.get(key)
                    if col is None and grow:
                        col = self._extra[key] = len(self.vocab_keys) + len(self._extra)
                    out[i] = -1 if col is None else col
        return out

    def _cols_of_tokens(self, tokens: Sequence[str], grow: bool) -> np.ndarray:
        return self._cols_of_keys(np.array([self._key_of(t) for t in tokens], dtype=np.int64), grow)

    # -- queries -------------------------------------------------------------------------------
    def encode_queries(self, queries: Sequence[str]) -> sp.csr_matrix:
        """Query term counts (cached): the same tokeniser and column space as the chunk rows.

        Query tokens absent from the corpus get columns too, so that a chunk whose cut edge
        creates the same token matches them exactly as text tokenisation would.
        """
        key = tuple(queries)
        hit = self._query_cache.get(key)
        if hit is not None:
            # Still valid when chunkings have added columns since: a query has no count there.
            return hit
        m = self._count_many(list(queries))
        self._query_cache[key] = m
        return m

    def _count_many(self, texts: list[str]) -> sp.csr_matrix:
        """:meth:`_count_texts`, with the texts tokenised in one pass when the tokeniser allows it.

        The texts are joined by newlines (which end every run) and their tokens found with
        :meth:`~chunklab.retrieval.tokenizers.Tokenizer.positions`; they are then put in the
        order in which tokenising each text gives them, so that tokens new to the corpus get
        their columns in the same order as :meth:`_count_texts` gives them.
        """
        if type(self.tokenizer) not in _PIECE_RULES or len(texts) < 2 or not all(isinstance(t, str) for t in texts):
            return self._count_texts(texts)
        try:
            k, s, e, rs, _, _ = self.tokenizer.positions("\n".join(texts), self._word_key)
        except UnicodeEncodeError:  # a lone surrogate: tokenise the texts one by one
            return self._count_texts(texts)
        lens = np.fromiter((len(t) + 1 for t in texts), dtype=np.int64, count=len(texts))
        starts = np.cumsum(lens) - lens
        q = np.searchsorted(starts, s, side="right") - 1
        word = k >= _WORD_BASE
        # a text's tokens: its CJK runs first, run by run (under unigram_bigram a run's characters,
        # then its pairs), then its words; each group in text order
        run = np.searchsorted(rs, s, side="right") - 1
        pair = (e - s == 2) & ~word
        order = np.lexsort((s, pair, run, word, q))
        cols = self._cols_of_keys(k[order], grow=True)
        indptr = np.zeros(len(texts) + 1, dtype=np.int64)
        np.cumsum(np.bincount(q, minlength=len(texts)), out=indptr[1:])
        return _count_matrix(cols, indptr, self.n_terms)

    def _count_texts(self, texts: Iterable[str]) -> sp.csr_matrix:
        """Term counts of texts tokenised one by one (rows), in this index's column space."""
        indptr = [0]
        cols: list[int] = []
        for t in texts:
            toks = self.tokenizer(t)
            if toks:
                cols.extend(self._cols_of_tokens(toks, grow=True).tolist())
            indptr.append(len(cols))
        return _count_matrix(cols, indptr, self.n_terms)

    def _context_cols(self, context: str) -> np.ndarray:
        c = self._context_cache.get(context)
        if c is None:
            toks = self.tokenizer(context)
            c = self._cols_of_tokens(toks, grow=True) if toks else np.zeros(0, dtype=np.int64)
            self._context_cache[context] = c
        return c

    # -- chunks --------------------------------------------------------------------------------
    def chunk_bounds(self, chunks: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
        """Global ``[start, end)`` of each chunk (:meth:`Layout.chunk_bounds <chunklab.retrieval.layout.Layout.chunk_bounds>`)."""
        return self.layout.chunk_bounds(chunks)

    def term_counts(self, chunks: Sequence[Any], use_context: bool = False,
                    bounds: tuple[np.ndarray, np.ndarray] | None = None) -> sp.spmatrix:
        """The chunk x term count matrix, gathered from token positions (see the class docstring).

        ``bounds``: the chunks' global bounds when the caller has them already
        (``self.layout.chunk_bounds(chunks)``, which also checks the chunks); computed here otherwise.
        Returned in CSC form (canonical: sorted, no duplicates), which is what
        :class:`BM25Fast <chunklab.retrieval.BM25Fast>` works on; call ``.tocsr()`` for row access."""
        return self._counts(chunks, use_context, bounds)[0]

    def _counts(self, chunks: Sequence[Any], use_context: bool,
                bounds: tuple[np.ndarray, np.ndarray] | None) -> tuple[sp.csc_matrix, np.ndarray | None]:
        """:meth:`term_counts` and, when it comes for free, each chunk's number of tokens (else None)."""
        n = len(chunks)
        gs, ge = self.layout.chunk_bounds(chunks) if bounds is None else bounds
        if not self.tokenizer.positional:
            return self._count_texts(c.embed_text if use_context else c.text for c in chunks), None
        if self._single is not None:
            sgs, sge, lo, hi = self._single
            if not (np.array_equal(gs, sgs) and np.array_equal(ge, sge)):
                raise ValueError("this CorpusIndex was built for one chunking (chunks=...) and can only index that one")
        else:
            pgs, pge = self._pos(gs), self._pos(ge)
            lo = np.searchsorted(self.tok_start, pgs, side="left")
            hi = np.searchsorted(self.tok_start, pge, side="left")
            if self._ends_sorted:
                hi = np.maximum(lo, np.minimum(hi, np.searchsorted(self.tok_end, pge, side="right")))
        # The few tokens that are not corpus tokens (cut edges, context) come as (row, column) pairs.
        extra_rows: list[np.ndarray] = []
        extra_cols: list[np.ndarray] = []
        fr, fc = self._edge_tokens(gs, ge)  # runs cut by a chunk boundary
        extra_rows.append(fr); extra_cols.append(fc)
        if use_context:
            for i, c in enumerate(chunks):
                if c.context:
                    cols_c = self._context_cols(c.context)
                    extra_rows.append(np.full(len(cols_c), i)); extra_cols.append(cols_c)
        er = np.concatenate(extra_rows).astype(np.int64)
        ec = np.concatenate(extra_cols).astype(np.int64)
        shape = (n, max(self.n_terms, 1))
        if self._compiled:
            return self._counts_compiled(lo.astype(np.int64), hi.astype(np.int64), er, ec, shape)
        counts = hi - lo
        total = int(counts.sum())
        flat = np.arange(total) - np.repeat(np.cumsum(counts) - counts - lo, counts)
        if self._ends_sorted:
            row_counts, cols = counts, self.tok_col[flat]
        else:
            keep = self.tok_end[flat] <= np.repeat(ge, counts)
            cols = self.tok_col[flat[keep]]
            row_counts = np.bincount(np.repeat(np.arange(n), counts)[keep], minlength=n)
        idx = np.int32 if max(total, shape[1]) < 2**31 - 1 else np.int64
        indptr = np.zeros(n + 1, dtype=idx)
        np.cumsum(row_counts, out=indptr[1:])
        m = sp.csr_matrix((self._ones(len(cols)), cols.astype(idx, copy=False), indptr), shape=shape, copy=False)
        # NOTE: summing duplicate (chunk, term) entries normally sorts every row's indices, the
        # most expensive step here. Converting to CSC is a linear counting pass that lists each
        # term's chunks in row order, so duplicates end up adjacent and are summed without any
        # sort (converting back is linear too and yields canonical CSR).
        c = m.tocsc()
        c.has_sorted_indices = True
        c.sum_duplicates()
        if len(er):
            e = sp.csc_matrix((np.ones(len(ec)), (er, ec)), shape=shape)  # sums its duplicates
            c = (c + e).tocsc()
            c.sort_indices()
        return c, None

    def _counts_compiled(self, lo: np.ndarray, hi: np.ndarray, er: np.ndarray, ec: np.ndarray,
                         shape: tuple[int, int]) -> tuple[sp.csc_matrix, np.ndarray]:
        """The count matrix by chunklab._topk: two linear passes over the chunks' token ranges.

        The first counts each term's chunks, the second writes them; a chunk's repeated term is
        summed where it was written, and chunks come in order, so the result is canonical CSC.
        """
        n, n_terms = shape
        order = np.argsort(er, kind="stable")  # the extra tokens by chunk
        er, ec = np.ascontiguousarray(er[order]), np.ascontiguousarray(ec[order])
        df = np.empty(n_terms, dtype=np.int64)
        row_len = np.empty(n, dtype=np.int64)
        nnz = _TOPK.csc_counts(n, n_terms, self.tok_col, lo, hi, er, ec, row_len, df)
        indptr = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(df, out=indptr[1:])
        indices = np.empty(nnz, dtype=np.int32)
        data = np.empty(nnz, dtype=np.float64)
        _TOPK.csc_fill(n, n_terms, self.tok_col, lo, hi, er, ec, row_len, indptr, indices, data)
        return _canonical(sp.csc_matrix((data, indices, indptr), shape=shape, copy=False)), row_len

    def _ones(self, n: int) -> np.ndarray:
        """A read-only view of ``n`` ones (reused: the count matrices' data before summing)."""
        buf = self._ones_buf
        if len(buf) < n:
            buf = self._ones_buf = np.ones(max(n, 1024))
            buf.flags.writeable = False
        return buf[:n]

    def _edge_tokens(self, gs: np.ndarray, ge: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, columns)`` of the tokens the chunks' cut edges create (see the class docstring)."""
        rows: list[np.ndarray] = []
        keys: list[int] = []
        if len(self.run_start) == 0 or len(gs) == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        nonempty = ge > gs
        gs, ge = self._pos(gs), self._pos(ge)
        # Left edge: the run containing gs, if it started before gs.
        rl = np.searchsorted(self.run_start, gs, side="right") - 1
        rlc = np.maximum(rl, 0)
        cut_l = nonempty & (rl >= 0) & (self.run_start[rlc] < gs) & (self.run_end[rlc] > gs)
        # Right edge: the last run starting before ge, if it ends after ge.
        rr = np.searchsorted(self.run_start, ge, side="left") - 1
        rrc = np.maximum(rr, 0)
        cut_r = nonempty & (rr >= 0) & (self.run_end[rrc] > ge) & (self.run_start[rrc] < ge)
        same = cut_l & cut_r & (rl == rr)
        cut_r = cut_r & ~same
        known = type(self.tokenizer) in _PIECE_RULES
        texts, offsets = self.layout.texts, self.layout.offsets
        for cut, r, lo_fn, hi_fn in (
            (cut_l, rlc, lambda i, r: gs[i], lambda i, r: np.minimum(self.run_end[r], ge[i])),
            (cut_r, rrc, lambda i, r: np.maximum(self.run_start[r], gs[i]), lambda i, r: ge[i]),
        ):
            idx = np.flatnonzero(cut)
            if len(idx) == 0:
                continue
            ri = r[idx]
            a = lo_fn(idx, ri)
            b = hi_fn(idx, ri)
            need = self.tokenizer.cut_needs_fix(self.run_kind[ri], b - a, self.run_end[ri] - self.run_start[ri])
            sel, a, b, kinds = idx[need], a[need], b[need], self.run_kind[ri][need]
            if known:
                # A piece of a word run is one word, and a one-character piece of a CJK run (bigram)
                # that character; no corpus token lies inside either: one token per piece.
                docs = self.layout.doc_of(a)
                for d, ai, bi, kind in zip(docs.tolist(), (a - offsets[docs]).tolist(),
                                           (b - offsets[docs]).tolist(), kinds.tolist()):
                    piece = texts[d][ai:bi]
                    keys.append(ord(piece) if kind == KIND_CJK else self._word_key(piece.lower()))
                rows.append(sel.astype(np.int64))
                continue
            for i, ai, bi in zip(sel, a, b):
                piece = self.layout.text(int(ai), int(bi))
                # The piece is one run of the chunk's text: its tokens minus the corpus tokens
                # already gathered inside [ai, bi).
                want = self.tokenizer(piece)
                inside = self._corpus_tokens_inside(int(ai), int(bi))
                for t in inside:
                    want.remove(t)
                rows.append(np.full(len(want), int(i), dtype=np.int64))
                keys.extend(self._key_of(t) for t in want)
        if not keys:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        return np.concatenate(rows), self._cols_of_keys(np.array(keys, dtype=np.int64), grow=True)

    def _corpus_tokens_inside(self, a: int, b: int) -> list[str]:
        lo, hi = np.searchsorted(self.tok_start, self._pos([a, b]))
        out = []
        for j in range(lo, hi):
            if self.tok_end[j] <= b:
                out.append(self.layout.text(int(self.tok_start[j]), int(self.tok_end[j])))
        # Corpus word tokens are lower-cased (CJK is unchanged by lower()).
        return [t.lower() for t in out]

    def index_chunks(self, chunks: Sequence[Any], use_context: bool = False, k1: float = 1.5,
                     b: float = 0.75, epsilon: float = 0.25,
                     bounds: tuple[np.ndarray, np.ndarray] | None = None) -> BM25Fast:
        """A :class:`BM25Fast <chunklab.retrieval.BM25Fast>` over ``chunks`` (which must be windows of this corpus's documents).

        With ``use_context=True`` each row also counts the tokens of ``chunk.context`` (tokenised
        on its own), i.e. the chunk is indexed as its ``embed_text`` minus the tokens that the
        joining newline would otherwise split. ``bounds``: see :meth:`term_counts`.
        """
        if len(chunks) == 0:
            raise ValueError("chunks must hold at least one chunk")
        tf, row_len = self._counts(chunks, use_context, bounds)
        if row_len is None:
            return BM25Fast(tf, k1=k1, b=b, epsilon=epsilon, tokenizer=self.tokenizer)
        return BM25Fast._from_counts(tf, row_len, k1=k1, b=b, epsilon=epsilon, tokenizer=self.tokenizer)
