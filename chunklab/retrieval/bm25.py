"""BM25 engines and the ranking rule they share.

* :class:`BM25Reference` wraps ``rank_bm25.BM25Okapi`` unchanged.
* :class:`BM25Fast` computes the same scores (same idf, same epsilon floor, repeated query tokens
  counted with their repeats) with scipy sparse matrices, for all queries of a run in one product;
  when the compiled ranker ``chunklab._topk`` was built, it ranks without building the score matrix.

Ranking rule shared by every BM25 engine here: a query's ranking holds the chunks with a non-zero
score, by score descending, ties broken by chunk order (lower index first). A chunk sharing no
token with the query is never "retrieved", so a question with no usable token retrieves nothing
rather than the first k chunks of the corpus. :class:`Ranking` and :func:`top_k` implement that
rule for a dense score matrix (the dense retriever ranks with them too).

>>> engine = BM25Fast.from_texts(["民法典第一条", "刑法第二条", "合同的订立"])
>>> engine.search(["合同订立"], k=2).ids.tolist()
[[2, -1]]
"""
from __future__ import annotations

from typing import Any, NamedTuple, Sequence

import numpy as np
import scipy.sparse as sp

from ..params import Param
from .tokenizers import Tokenizer, get_tokenizer

__all__ = ["Ranking", "BM25Reference", "BM25Fast", "top_k"]

# --------------------------------------------------------------------------------------------
# Rankings
# --------------------------------------------------------------------------------------------

class Ranking(NamedTuple):
    """Top-k of each query: ``ids`` (n_queries x k, -1 where fewer than k chunks scored) and ``scores`` (NaN there)."""

    ids: np.ndarray
    scores: np.ndarray


#: The one declaration of a top-k, shared by every function of chunklab that takes one.
TOP_K = Param("int", 5, "results per query (top k)", low=1)


def _check_k(k: Any, name: str = "k") -> int:
    """``k`` as an int; a one-line error names ``name``, the value and the range (an int >= 1).

    >>> _check_k(0)
    Traceback (most recent call last):
    ...
    chunklab.params.ParamError: k must be an int >= 1, got 0
    """
    return TOP_K.validate(name, k)


def top_k(scores: np.ndarray, k: int, valid: np.ndarray | None = None, *, zero_invalid: bool = False,
          overwrite: bool = False) -> Ranking:
    """Top-``k`` of each row of a dense score matrix: score descending, ties by lower column.

    ``valid`` (same shape, bool) marks the entries that may be ranked (default: all);
    ``zero_invalid=True`` instead excludes the entries that are exactly 0 (no shared term).
    ``overwrite=True`` lets the function reuse ``scores`` as scratch space (it must be a float
    array the caller no longer needs), saving a copy of a large matrix.

    >>> top_k(np.array([[0.5, 2.0, 2.0, 1.0]]), 3).ids.tolist()
    [[1, 2, 3]]
    >>> top_k(np.array([[0.0, 2.0, 0.0, 1.0]]), 3, zero_invalid=True).ids.tolist()
    [[1, 3, -1]]
    """
    k = _check_k(k)
    scores = np.atleast_2d(np.asarray(scores, dtype=float))
    nq, n = scores.shape
    s = scores if overwrite else scores.copy()
    if valid is not None:
        s[~valid] = -np.inf
    if zero_invalid:
        s[s == 0] = -np.inf
    ids = np.full((nq, k), -1, dtype=np.int64)
    out = np.full((nq, k), np.nan)
    if n == 0 or nq == 0:
        return Ranking(ids, out)
    kk = min(k, n)
    if kk < n:
        part = np.argpartition(-s, kk - 1, axis=1)[:, :kk]
    else:
        part = np.tile(np.arange(n), (nq, 1))
    ps = np.take_along_axis(s, part, axis=1)
    # NOTE: argpartition picks arbitrarily among scores tied with the k-th; redo those rows so
    # ties always go to the lower index (the rule every engine here shares).
    kth = ps.min(axis=1)
    n_ge = (s >= kth[:, None]).sum(axis=1)
    for r in np.flatnonzero(n_ge > kk):
        above = np.flatnonzero(s[r] > kth[r])
        tied = np.flatnonzero(s[r] == kth[r])[: kk - len(above)]
        part[r] = np.concatenate((above, tied))
    ps = np.take_along_axis(s, part, axis=1)
    order = np.lexsort((part, -ps), axis=1) if nq else part
    part = np.take_along_axis(part, order, axis=1)
    ps = np.take_along_axis(ps, order, axis=1)
    ok = np.isfinite(ps)
    ids[:, :kk] = np.where(ok, part, -1)
    out[:, :kk] = np.where(ok, ps, np.nan)
    return Ranking(ids, out)



# --------------------------------------------------------------------------------------------
# BM25
# --------------------------------------------------------------------------------------------

def _check_bm25_params(k1: float, b: float, epsilon: float) -> None:
    if not (isinstance(k1, (int, float)) and k1 >= 0):
        raise ValueError(f"k1 must be a number >= 0, got {k1!r}")
    if not (isinstance(b, (int, float)) and 0 <= b <= 1):
        raise ValueError(f"b must be a number in [0, 1], got {b!r}")
    if not isinstance(epsilon, (int, float)):
        raise ValueError(f"epsilon must be a number, got {epsilon!r}")


try:  # the compiled ranker (chunklab/_topk.c); optional, see setup.py
    from .. import _topk as _TOPK
except ImportError:  # pragma: no cover - depends on the build
    _TOPK = None


def _topk_compiled(q: sp.csr_matrix, wt: sp.csr_matrix, k: int, ids: np.ndarray, scores: np.ndarray) -> None:
    """Fill ``ids`` / ``scores`` with the top-k of ``q @ wt`` using chunklab._topk (see its source)."""
    i64 = np.int64
    _TOPK.topk_product(
        q.shape[0], wt.shape[0], wt.shape[1], k,
        np.ascontiguousarray(q.indptr, dtype=i64), np.ascontiguousarray(q.indices, dtype=i64),
        np.ascontiguousarray(q.data, dtype=np.float64),
        np.ascontiguousarray(wt.indptr, dtype=i64), np.ascontiguousarray(wt.indices, dtype=np.int32),
        np.ascontiguousarray(wt.data, dtype=np.float64), ids, scores)


class BM25Reference:
    """``rank_bm25.BM25Okapi`` over tokenised texts, behind the same ``search`` as :class:`BM25Fast`.

    Slow (a Python loop over all chunks per query token); it exists to check the fast engine.

    >>> ref = BM25Reference(["民法典第一条", "刑法第二条", "合同的订立"])
    >>> ref.search(["合同订立"], k=1).ids.tolist()
    [[2]]
    """

    def __init__(self, texts: Sequence[str] | None = None, tokenizer: str | Tokenizer = "bigram",
                 k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25,
                 tokenized: Sequence[Sequence[str]] | None = None) -> None:
        from rank_bm25 import BM25Okapi

        _check_bm25_params(k1, b, epsilon)
        self.tokenizer = get_tokenizer(tokenizer)
        if tokenized is None:
            if texts is None:
                raise ValueError("pass texts or tokenized")
            tokenized = [self.tokenizer(t) for t in texts]
        tokenized = [list(t) for t in tokenized]
        if not tokenized:
            raise ValueError("texts must hold at least one text")
        self.n = len(tokenized)
        self._docs = tokenized
        self.bm25 = BM25Okapi(tokenized, k1=k1, b=b, epsilon=epsilon)

    def get_scores(self, query_tokens: Sequence[str]) -> np.ndarray:
        """Scores of every chunk for a tokenised query (``BM25Okapi.get_scores``)."""
        return np.asarray(self.bm25.get_scores(list(query_tokens)), dtype=float)

    def search(self, queries: Sequence[str], k: int = 5, tokenized: bool = False) -> Ranking:
        """Top-k chunks per query; ``queries`` are strings, or token lists with ``tokenized=True``."""
        k = _check_k(k)
        rows = []
        masks = []
        for q in queries:
            toks = list(q) if tokenized else self.tokenizer(q)
            rows.append(self.get_scores(toks))
            qs = set(toks)
            masks.append(np.array([bool(qs.intersection(d)) for d in self.bm25.doc_freqs]))
        if not rows:
            return Ranking(np.zeros((0, k), dtype=np.int64), np.zeros((0, k)))
        s = np.vstack(rows)
        return top_k(s, k, valid=np.vstack(masks) & (s != 0))


class BM25Fast:
    """BM25Okapi's scores from a sparse chunk x term count matrix.

    Same formulas as ``rank_bm25.BM25Okapi`` (k1=1.5, b=0.75, epsilon=0.25 by default):

    * ``idf(t) = log(N - n_t + 0.5) - log(n_t + 0.5)`` over the terms present in the chunks; a
      negative idf is replaced by ``epsilon * mean(idf)``, the mean taken over *all* present terms
      before replacement;
    * ``score(q, d) = sum over query tokens t (with repeats) of idf(t) * tf (k1 + 1) / (tf + k1 (1 - b + b |d| / avgdl))``
      where ``|d|`` counts d's tokens and ``avgdl`` is their mean over the chunks.

    Where rank-bm25 divides 0 by 0 (``k1 = 0``; or ``b = 1`` and an empty chunk) and returns NaN,
    a term absent from a chunk contributes 0 here.

    Scores are the product ``Q @ W.T`` of query term counts and the chunk x term weights:
    :meth:`score_matrix` returns it (sparse), :meth:`search` ranks it without building it when
    the compiled ranker is there (``kernel``). Build it with :meth:`from_texts`, :meth:`from_tokens`, or
    :meth:`CorpusIndex.index_chunks <chunklab.retrieval.CorpusIndex.index_chunks>`.

    >>> e = BM25Fast.from_tokens([["a", "b"], ["b", "c"], ["c"], ["d"], ["e"]])
    >>> e.search([["c", "c"]], k=3, tokenized=True).ids.tolist()
    [[2, 1, -1]]
    """

    def __init__(self, tf: sp.spmatrix, k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25,
                 vocab: dict[str, int] | None = None, tokenizer: str | Tokenizer | None = None) -> None:
        _check_bm25_params(k1, b, epsilon)
        # Work column-wise (CSC): search multiplies queries by the transposed weights, and the
        # transpose of a CSC matrix is a CSR matrix over the same arrays, so no conversion is needed.
        tf = sp.csc_matrix(tf, dtype=np.float64)
        tf.sum_duplicates()
        tf.eliminate_zeros()
        self._build(tf, None, k1, b, epsilon, vocab, tokenizer, owned=False)

    @classmethod
    def _from_counts(cls, tf: sp.csc_matrix, doc_len: np.ndarray, k1: float = 1.5, b: float = 0.75,
                     epsilon: float = 0.25, tokenizer: str | Tokenizer | None = None) -> "BM25Fast":
        """An engine over a canonical CSC count matrix without zeros and its row sums ``doc_len``.

        The matrix is taken over (its data become the weights): what
        :meth:`CorpusIndex.index_chunks <chunklab.retrieval.CorpusIndex.index_chunks>` builds.
        """
        _check_bm25_params(k1, b, epsilon)
        self = cls.__new__(cls)
        self._build(tf, doc_len, k1, b, epsilon, None, tokenizer, owned=True)
        return self

    def _build(self, tf: sp.csc_matrix, doc_len: np.ndarray | None, k1: float, b: float, epsilon: float,
               vocab: dict[str, int] | None, tokenizer: str | Tokenizer | None, owned: bool) -> None:
        self.k1, self.b, self.epsilon = float(k1), float(b), float(epsilon)
        self.n, self.n_terms = tf.shape
        if self.n == 0:
            raise ValueError("the index must hold at least one chunk")
        self.vocab = vocab
        self.tokenizer = get_tokenizer(tokenizer) if tokenizer is not None else None
        if doc_len is None:
            doc_len = np.bincount(tf.indices, weights=tf.data, minlength=self.n)
        self.doc_len = np.asarray(doc_len, dtype=np.float64)
        total = self.doc_len.sum()
        self.avgdl = total / self.n
        df = np.diff(tf.indptr)
        present = df > 0
        idf = np.zeros(self.n_terms)
        idf[present] = np.log(self.n - df[present] + 0.5) - np.log(df[present] + 0.5)
        self.average_idf = float(idf[present].sum() / present.sum()) if present.any() else 0.0
        neg = present & (idf < 0)
        idf[neg] = self.epsilon * self.average_idf
        self.idf = idf
        self.df = df
        # Weight matrix W[d, t] = idf(t) * tf (k1 + 1) / (tf + K_d).
        if self.avgdl > 0:
            kd = self.k1 * (1 - self.b + self.b * self.doc_len / self.avgdl)
        else:
            kd = np.full(self.n, self.k1 * (1 - self.b))
        t = tf.data
        if _TOPK is not None and tf.indices.dtype == np.int32:
            # the same operations in the same order, in one pass (the data become the weights
            # when the matrix is ours)
            w = t if owned else np.empty_like(t)
            _TOPK.bm25_weights(self.n, self.n_terms, np.ascontiguousarray(tf.indptr, dtype=np.int64), tf.indices,
                               t, idf, np.ascontiguousarray(kd, dtype=np.float64), self.k1, w)
        else:
            terms = np.repeat(np.arange(self.n_terms), df)
            w = idf[terms] * (t * (self.k1 + 1) / (t + kd[tf.indices]))
        indices, indptr = (tf.indices, tf.indptr) if owned else (tf.indices.copy(), tf.indptr.copy())
        self._weights_csc = _canonical(sp.csc_matrix((w, indices, indptr), shape=tf.shape, copy=False))
        self._wt = self._weights_csc.T  # terms x chunks, CSR
        self._weights = None
        #: how :meth:`search` ranks: ``"compiled"`` (chunklab._topk, when it was built) or
        #: ``"numpy"`` (scipy product + :func:`top_k`); both give identical rankings.
        self.kernel = "compiled" if _TOPK is not None else "numpy"

    @property
    def weights(self) -> sp.csr_matrix:
        """The chunk x term BM25 weight matrix (CSR)."""
        if self._weights is None:
            self._weights = self._weights_csc.tocsr()
        return self._weights

    # -- construction --------------------------------------------------------------------------
    @classmethod
    def from_tokens(cls, token_lists: Sequence[Sequence[str]], **params: Any) -> "BM25Fast":
        """Index pre-tokenised chunks (lists of strings)."""
        vocab: dict[str, int] = {}
        indptr = [0]
        indices: list[int] = []
        for toks in token_lists:
            for t in toks:
                indices.append(vocab.setdefault(t, len(vocab)))
            indptr.append(len(indices))
        data = np.ones(len(indices))
        tf = sp.csr_matrix((data, np.array(indices, dtype=np.int64), np.array(indptr)),
                           shape=(len(token_lists), max(len(vocab), 1)))
        return cls(tf, vocab=vocab, **params)

    @classmethod
    def from_texts(cls, texts: Sequence[str], tokenizer: str | Tokenizer = "bigram", **params: Any) -> "BM25Fast":
        """Tokenise ``texts`` and index them."""
        tok = get_tokenizer(tokenizer)
        return cls.from_tokens([tok(t) for t in texts], tokenizer=tok, **params)

    # -- queries -------------------------------------------------------------------------------
    def encode(self, queries: Sequence[Any], tokenized: bool = False) -> sp.csr_matrix:
        """Query term-count matrix (n_queries x n_terms); tokens unknown to the index are dropped."""
        if self.vocab is None:
            raise ValueError("this engine has no vocabulary: encode queries with its CorpusIndex")
        if not tokenized and self.tokenizer is None:
            raise ValueError("this engine has no tokenizer: pass token lists with tokenized=True")
        indptr = [0]
        indices: list[int] = []
        for q in queries:
            toks = q if tokenized else self.tokenizer(q)
            indices.extend(self.vocab[t] for t in toks if t in self.vocab)
            indptr.append(len(indices))
        return _count_matrix(indices, indptr, self.n_terms)

    def get_scores(self, query_tokens: Sequence[str]) -> np.ndarray:
        """Scores of every chunk for one tokenised query, like ``BM25Okapi.get_scores``."""
        q = self.encode([list(query_tokens)], tokenized=True)
        return self.score_matrix(q).toarray().ravel()

    def score_matrix(self, q: sp.spmatrix) -> sp.csr_matrix:
        """Scores of all queries (rows of ``q``) against all chunks: one sparse product."""
        q = self._fit(sp.csr_matrix(q, dtype=np.float64))
        return q @ self._wt

    def search(self, queries: Any, k: int = 5, tokenized: bool = False, block: int = 256) -> Ranking:
        """Top-k chunks of each query (strings, token lists with ``tokenized=True``, or a count matrix).

        Ranked by score, ties to the lower chunk index; chunks sharing no term (score 0) are not
        ranked. With the compiled kernel (``self.kernel == "compiled"``) each query's scores are
        accumulated in one dense row and the k best kept in a heap, so the score matrix is never
        built. Otherwise scores are computed ``block`` queries at a time (memory stays bounded)
        and ranked by :func:`top_k`. Same additions in the same order: identical results.
        """
        k = _check_k(k)
        q = queries if sp.issparse(queries) else self.encode(queries, tokenized=tokenized)
        q = self._fit(sp.csr_matrix(q, dtype=np.float64))
        nq = q.shape[0]
        ids = np.full((nq, k), -1, dtype=np.int64)
        scores = np.full((nq, k), np.nan)
        if _TOPK is not None and self.kernel == "compiled":
            _topk_compiled(q, self._wt, k, ids, scores)
            return Ranking(ids, scores)
        for lo in range(0, nq, block):
            hi = min(nq, lo + block)
            s = (q[lo:hi] @ self._wt).toarray()  # nearly dense, so ranked as a dense block
            rk = top_k(s, k, zero_invalid=True, overwrite=True)  # s is ours: no copy
            ids[lo:hi] = rk.ids
            scores[lo:hi] = rk.scores
        return Ranking(ids, scores)

    def _fit(self, q: sp.csr_matrix) -> sp.csr_matrix:
        if q.shape[1] == self.n_terms:
            return q
        if q.shape[1] > self.n_terms:  # query-only columns carry no weight
            return q[:, : self.n_terms]
        q = q.copy()
        q.resize(q.shape[0], self.n_terms)
        return q


def _canonical(m: sp.spmatrix) -> sp.spmatrix:
    """``m``, marked as canonical (sorted indices, no duplicates), which the caller guarantees."""
    m.has_canonical_format = True
    return m


def _count_matrix(indices: Sequence[int] | np.ndarray, indptr: Sequence[int] | np.ndarray, n_cols: int) -> sp.csr_matrix:
    m = sp.csr_matrix((np.ones(len(indices)), np.asarray(indices, dtype=np.int64), np.asarray(indptr, dtype=np.int64)),
                      shape=(len(indptr) - 1, max(n_cols, 1)))
    m.sum_duplicates()
    return m

