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

from .bm25 import BM25Fast, _count_matrix
from .layout import Layout
from .tokenizers import _CJK_RUN, _SHIFT, _WORD_BASE, Tokenizer, get_tokenizer

__all__ = ["CorpusIndex"]


class CorpusIndex:
    """A corpus tokenised once, with every token's position, ready to index any chunking of it.

    A chunk ``[s, e)`` of a document holds the corpus tokens that lie entirely inside it (for
    bigrams: the pairs starting at ``s .. e-2``), plus the tokens its cut edges create (a cut
    word's remaining piece; under ``bigram`` a single remaining character of a CJK run). The row
    is therefore exactly what tokenising ``chunk.text`` would give, without re-tokenising: rows are
    gathered from position ranges with numpy.

    Queries are tokenised once too and cached (:meth:`encode_queries`).

    >>> from chunklab.core import Document, Chunk
    >>> idx = CorpusIndex([Document("d", "合同的订立。合同的效力。违约责任。")])
    >>> cs = [Chunk("d", 0, 0, 6, "合同的订立。"), Chunk("d", 1, 6, 12, "合同的效力。"),
    ...       Chunk("d", 2, 12, 17, "违约责任。")]
    >>> idx.index_chunks(cs).search(idx.encode_queries(["合同效力"]), k=2).ids.tolist()
    [[1, 0]]
    """

    def __init__(self, documents: Sequence[Any], tokenizer: str | Tokenizer = "bigram") -> None:
        self.tokenizer = get_tokenizer(tokenizer)
        #: The corpus on one line (see :class:`~chunklab.retrieval.layout.Layout`): token positions
        #: are global, and :func:`~chunklab.evaluation.evaluate` measures on this same layout.
        self.layout = Layout(documents)
        self._words: dict[str, int] = {}
        self._words_lock = threading.Lock()
        self._query_cache: dict[tuple[str, ...], sp.csr_matrix] = {}
        self._context_cache: dict[str, np.ndarray] = {}
        if self.tokenizer.positional:
            ks, ss, es, rss, res, rks = [], [], [], [], [], []
            for off, text in zip(self.layout.offsets, self.layout.texts):
                k, s, e, rs, re_, rk = self.tokenizer.positions(text, self._word_key)
                ks.append(k); ss.append(s + off); es.append(e + off)
                rss.append(rs + off); res.append(re_ + off); rks.append(rk)
            keys = np.concatenate(ks) if ks else np.zeros(0, dtype=np.int64)
            self.tok_start = np.concatenate(ss) if ss else np.zeros(0, dtype=np.int64)
            self.tok_end = np.concatenate(es) if es else np.zeros(0, dtype=np.int64)
            self.run_start = np.concatenate(rss) if rss else np.zeros(0, dtype=np.int64)
            self.run_end = np.concatenate(res) if res else np.zeros(0, dtype=np.int64)
            self.run_kind = np.concatenate(rks) if rks else np.zeros(0, dtype=np.int8)
            self.vocab_keys, self.tok_col = np.unique(keys, return_inverse=True)
            self.tok_col = self.tok_col.astype(np.int32 if len(self.vocab_keys) < 2**30 else np.int64)
        else:
            self.vocab_keys = np.zeros(0, dtype=np.int64)
            self.tok_col = np.zeros(0, dtype=np.int64)
            self.tok_start = self.tok_end = np.zeros(0, dtype=np.int64)
        # Token ends in start order never decrease for the run tokenisers (a pair ends after the
        # unigram at its start, and runs do not overlap): then "ends by ge" is a prefix of the
        # tokens and a chunk's tokens are one contiguous slice.
        self._ends_sorted = bool(np.all(np.diff(self.tok_end) >= 0))
        self._extra: dict[int, int] = {}  # keys outside the corpus vocabulary (query-only) -> column
        self._ones_buf = np.zeros(0)  # see _ones
        self._lock = threading.Lock()  # new columns may be added from several threads

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
        m = self._count_texts(queries)
        self._query_cache[key] = m
        return m

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
        n = len(chunks)
        gs, ge = self.layout.chunk_bounds(chunks) if bounds is None else bounds
        if not self.tokenizer.positional:
            return self._count_texts(c.embed_text if use_context else c.text for c in chunks)
        lo = np.searchsorted(self.tok_start, gs, side="left")
        hi = np.searchsorted(self.tok_start, ge, side="left")
        if self._ends_sorted:
            hi = np.maximum(lo, np.minimum(hi, np.searchsorted(self.tok_end, ge, side="right")))
        counts = hi - lo
        total = int(counts.sum())
        flat = np.arange(total) - np.repeat(np.cumsum(counts) - counts - lo, counts)
        if self._ends_sorted:
            row_counts, cols = counts, self.tok_col[flat]
        else:
            keep = self.tok_end[flat] <= np.repeat(ge, counts)
            cols = self.tok_col[flat[keep]]
            row_counts = np.bincount(np.repeat(np.arange(n), counts)[keep], minlength=n)
        # Rows of the corpus tokens come in chunk order; the few extra tokens (cut edges, context)
        # are a second matrix, added once both are column-wise.
        extra_rows: list[np.ndarray] = []
        extra_cols: list[np.ndarray] = []
        fr, fc = self._edge_tokens(gs, ge)  # runs cut by a chunk boundary
        extra_rows.append(fr); extra_cols.append(fc)
        if use_context:
            for i, c in enumerate(chunks):
                if c.context:
                    cols_c = self._context_cols(c.context)
                    extra_rows.append(np.full(len(cols_c), i)); extra_cols.append(cols_c)
        shape = (n, max(self.n_terms, 1))
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
        er = np.concatenate(extra_rows).astype(np.int64)
        if len(er):
            ec = np.concatenate(extra_cols).astype(np.int64)
            e = sp.csc_matrix((np.ones(len(ec)), (er, ec)), shape=shape)  # sums its duplicates
            c = (c + e).tocsc()
            c.sort_indices()
        return c

    def _ones(self, n: int) -> np.ndarray:
        """A read-only view of ``n`` ones (reused: the count matrices' data before summing)."""
        buf = self._ones_buf
        if len(buf) < n:
            buf = self._ones_buf = np.ones(max(n, 1024))
            buf.flags.writeable = False
        return buf[:n]

    def _edge_tokens(self, gs: np.ndarray, ge: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rows: list[int] = []
        toks: list[str] = []
        if len(self.run_start) == 0 or len(gs) == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        nonempty = ge > gs
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
            for i, ai, bi in zip(idx[need], a[need], b[need]):
                piece = self.layout.text(int(ai), int(bi))
                # The piece is one run of the chunk's text: its tokens minus the corpus tokens
                # already gathered inside [ai, bi).
                want = self.tokenizer(piece)
                inside = self._corpus_tokens_inside(int(ai), int(bi))
                for t in inside:
                    want.remove(t)
                rows.extend([int(i)] * len(want))
                toks.extend(want)
        if not toks:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        return np.array(rows, dtype=np.int64), self._cols_of_tokens(toks, grow=True)

    def _corpus_tokens_inside(self, a: int, b: int) -> list[str]:
        lo, hi = np.searchsorted(self.tok_start, [a, b])
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
        return BM25Fast(self.term_counts(chunks, use_context=use_context, bounds=bounds), k1=k1, b=b, epsilon=epsilon,
                        tokenizer=self.tokenizer)
