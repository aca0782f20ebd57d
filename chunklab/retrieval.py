"""Retrieval engines for evaluating chunkings: tokenisers, BM25 (reference and fast), dense, fusion.

Chunking quality exists only as retrieval quality, so the evaluator needs a retriever that is
*exactly* the one the articles used (BM25 on Chinese character bigrams, as in ``rank_bm25``) and
fast enough to run a method x parameter matrix in seconds.

* :class:`BM25Reference` wraps ``rank_bm25.BM25Okapi`` unchanged.
* :class:`BM25Fast` computes the same scores (same idf, same epsilon floor, repeated query tokens
  counted with their repeats) with scipy sparse matrices, for all queries of a run in one product.
* :class:`CorpusIndex` tokenises a corpus *once*, remembering where every token sits; each chunking
  is then indexed from character ranges instead of re-tokenising chunk strings. The result is the
  same matrix that tokenising each chunk's text would give (tested), including the tokens a cut
  creates at a chunk's edge.

Ranking rule shared by every BM25 engine here: a query's ranking holds the chunks with a non-zero
score, by score descending, ties broken by chunk order (lower index first). A chunk sharing no
token with the query is never "retrieved", so a question with no usable token retrieves nothing
rather than the first k chunks of the corpus.

>>> engine = BM25Fast.from_texts(["民法典第一条", "刑法第二条", "合同的订立"])
>>> engine.search(["合同订立"], k=2).ids.tolist()
[[2, -1]]
"""
from __future__ import annotations

import re
import threading
from typing import Any, Callable, Iterable, NamedTuple, Sequence

import numpy as np
import scipy.sparse as sp

__all__ = [
    "TOKENIZERS", "Tokenizer", "BigramTokenizer", "UnigramBigramTokenizer", "WordsTokenizer", "JiebaTokenizer", "get_tokenizer", "tokenize",
    "Ranking", "BM25Reference", "BM25Fast", "CorpusIndex", "DenseIndex", "rrf", "fuse", "top_k",
]

# --------------------------------------------------------------------------------------------
# Tokenisers
# --------------------------------------------------------------------------------------------

#: Code point ranges treated as CJK (one token per character or character pair): kana, CJK
#: extension A, CJK unified ideographs, Hangul syllables, compatibility ideographs, the
#: supplementary ideograph planes, and 〇 (U+3007, used in dates: 二〇二〇年).
CJK_RANGES: tuple[tuple[int, int], ...] = (
    (0x3007, 0x3007), (0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF),
    (0xAC00, 0xD7AF), (0xF900, 0xFAFF), (0x20000, 0x3134F),
)
_CJK_CLASS = "".join(
    f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}" for a, b in CJK_RANGES
)
_CJK_RUN = re.compile(f"[{_CJK_CLASS}]+")
#: A "word": a maximal run of word characters (letters, digits, underscore) that are not CJK.
_WORD_RUN = re.compile(f"[^\\W{_CJK_CLASS}]+")
_ANY_WORD_RUN = re.compile(r"\w+")

# Integer keys: one int64 per distinct token, so corpus tokens can be handled as numpy arrays.
# A single CJK character is its code point (< 2**21); a pair is (a + 1) << 21 | b (>= 2**21);
# a word gets _WORD_BASE + its id in a per-index dictionary.
_SHIFT = 21
_WORD_BASE = 1 << 43

KIND_CJK, KIND_WORD = 0, 1


def _is_cjk_codes(cp: np.ndarray) -> np.ndarray:
    m = np.zeros(cp.shape, dtype=bool)
    for a, b in CJK_RANGES:
        m |= (cp >= a) & (cp <= b)
    return m


def _codes(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.int64)


class Tokenizer:
    """A named tokeniser: ``tok(text) -> list[str]``.

    Tokenisers built on *runs* (``bigram``, ``unigram_bigram``, ``words``) can also describe where
    each token sits (:meth:`positions`), which is what lets :class:`CorpusIndex` build a chunk's
    row from its character range. ``jieba`` cannot (its segmentation depends on context), so an
    index over it re-tokenises chunk texts.
    """

    name: str = ""
    positional: bool = True

    def __call__(self, text: str) -> list[str]:  # pragma: no cover - abstract
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<tokenizer {self.name!r}>"


class _RunTokenizer(Tokenizer):
    """CJK runs and word runs; everything else (punctuation, spaces, symbols) separates runs and is dropped."""

    cjk_unigrams = False  # every CJK char as a token
    cjk_bigrams = True  # overlapping pairs inside a CJK run
    lone_unigram = True  # a CJK run of length 1 gives its char (when pairs are on and unigrams off)

    def _cjk_tokens(self, run: str) -> list[str]:
        out: list[str] = []
        if self.cjk_unigrams:
            out.extend(run)
        if self.cjk_bigrams:
            if len(run) >= 2:
                out.extend(run[i:i + 2] for i in range(len(run) - 1))
            elif self.lone_unigram and not self.cjk_unigrams:
                out.append(run)
        return out

    def __call__(self, text: str) -> list[str]:
        if not isinstance(text, str):
            raise TypeError(f"text must be str, got {type(text).__name__}")
        out: list[str] = []
        for m in _CJK_RUN.finditer(text):
            out.extend(self._cjk_tokens(m.group()))
        out.extend(m.group().lower() for m in _WORD_RUN.finditer(text))
        return out

    # -- positions (vectorised) ---------------------------------------------------------------
    def positions(self, text: str, word_key: Callable[[str], int]):
        """Tokens of ``text`` as int64 keys with ``[start, end)`` positions, plus the runs.

        Returns ``(keys, starts, ends, run_starts, run_ends, run_kinds)``; tokens sorted by start.
        """
        cp = _codes(text)
        n = len(cp)
        cjk = _is_cjk_codes(cp)
        keys, starts, ends = [], [], []
        if n:
            idx = np.arange(n)
            if self.cjk_unigrams:
                p = idx[cjk]
                keys.append(cp[p]); starts.append(p); ends.append(p + 1)
            if self.cjk_bigrams:
                pair = cjk[:-1] & cjk[1:]
                p = idx[:-1][pair]
                keys.append(((cp[p] + 1) << _SHIFT) | cp[p + 1]); starts.append(p); ends.append(p + 2)
                if self.lone_unigram and not self.cjk_unigrams:
                    prev = np.concatenate(([False], cjk[:-1]))
                    nxt = np.concatenate((cjk[1:], [False]))
                    p = idx[cjk & ~prev & ~nxt]
                    keys.append(cp[p]); starts.append(p); ends.append(p + 1)
        wk, ws, we = [], [], []
        for m in _WORD_RUN.finditer(text):
            wk.append(word_key(m.group().lower())); ws.append(m.start()); we.append(m.end())
        keys.append(np.array(wk, dtype=np.int64)); starts.append(np.array(ws, dtype=np.int64))
        ends.append(np.array(we, dtype=np.int64))
        keys = np.concatenate(keys).astype(np.int64)
        starts = np.concatenate(starts).astype(np.int64)
        ends = np.concatenate(ends).astype(np.int64)
        order = np.lexsort((ends, starts))
        # runs
        rs, re_, rk = [], [], []
        if n:
            d = np.diff(np.concatenate(([0], cjk.astype(np.int8), [0])))
            a, b = np.flatnonzero(d == 1), np.flatnonzero(d == -1)
            rs.append(a); re_.append(b); rk.append(np.full(len(a), KIND_CJK))
        rs.append(np.array(ws, dtype=np.int64)); re_.append(np.array(we, dtype=np.int64))
        rk.append(np.full(len(ws), KIND_WORD))
        rs = np.concatenate(rs).astype(np.int64)
        re_ = np.concatenate(re_).astype(np.int64)
        rk = np.concatenate(rk).astype(np.int8)
        rorder = np.argsort(rs, kind="stable")
        return keys[order], starts[order], ends[order], rs[rorder], re_[rorder], rk[rorder]

    def cut_needs_fix(self, kinds: np.ndarray, piece_len: np.ndarray, run_len: np.ndarray) -> np.ndarray:
        """Which cut runs give tokens that the corpus tokens inside the piece do not already hold.

        A chunk edge inside a run leaves a *piece* of the run in the chunk. Tokenising the chunk's
        text sees the piece as a run of its own: a cut word becomes a (new) shorter word, and a
        one-character piece of a longer CJK run becomes a unigram (under ``bigram``). CJK pieces of
        two or more characters give exactly the corpus pairs inside them.
        """
        fix = kinds == KIND_WORD
        if self.cjk_bigrams and self.lone_unigram and not self.cjk_unigrams:
            fix |= (kinds == KIND_CJK) & (piece_len == 1) & (run_len >= 2)
        return fix


class BigramTokenizer(_RunTokenizer):
    """Chinese character bigrams (article 002's setting).

    * a run of CJK characters gives its overlapping pairs: ``民法典`` -> ``民法``, ``法典``;
    * a CJK run of one character gives that character;
    * a run of other word characters (letters, digits, ``_``) is one token, lower-cased;
    * punctuation, whitespace and symbols separate runs and give nothing.

    >>> BigramTokenizer()("民法典 第3条 GDPR，甲")
    ['民法', '法典', '第', '条', '甲', '3', 'gdpr']
    """

    name = "bigram"


class UnigramBigramTokenizer(_RunTokenizer):
    """Every CJK character and every overlapping pair; words as in ``bigram``.

    >>> UnigramBigramTokenizer()("合同法")
    ['合', '同', '法', '合同', '同法']
    """

    name = "unigram_bigram"
    cjk_unigrams = True


class WordsTokenizer(_RunTokenizer):
    """English (and other space-separated) text: maximal runs of word characters, lower-cased.

    A CJK run counts as one word here; use ``bigram`` for Chinese.

    >>> WordsTokenizer()("The cat's hat, 2 hats.")
    ['the', 'cat', 's', 'hat', '2', 'hats']
    """

    name = "words"
    cjk_bigrams = False

    def __call__(self, text: str) -> list[str]:
        if not isinstance(text, str):
            raise TypeError(f"text must be str, got {type(text).__name__}")
        return [m.group().lower() for m in _ANY_WORD_RUN.finditer(text)]

    def positions(self, text: str, word_key: Callable[[str], int]):
        ks, ss, es = [], [], []
        for m in _ANY_WORD_RUN.finditer(text):
            ks.append(word_key(m.group().lower())); ss.append(m.start()); es.append(m.end())
        k = np.array(ks, dtype=np.int64)
        s = np.array(ss, dtype=np.int64)
        e = np.array(es, dtype=np.int64)
        return k, s, e, s.copy(), e.copy(), np.full(len(s), KIND_WORD, dtype=np.int8)


class JiebaTokenizer(Tokenizer):
    """Words from jieba's default (accurate) mode, lower-cased; tokens without a word character dropped.

    jieba is optional: ``pip install jieba``.
    """

    name = "jieba"
    positional = False

    def __init__(self) -> None:
        try:
            import jieba  # noqa: F401
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError("tokenizer 'jieba' needs the jieba package: pip install jieba") from exc
        import logging

        import jieba

        jieba.setLogLevel(logging.WARNING)
        self._jieba = jieba

    def __call__(self, text: str) -> list[str]:
        return [w.lower() for w in self._jieba.lcut(text) if _ANY_WORD_RUN.search(w)]


#: Tokenisers by name.
TOKENIZERS: dict[str, type[Tokenizer]] = {
    "bigram": BigramTokenizer,
    "unigram_bigram": UnigramBigramTokenizer,
    "words": WordsTokenizer,
    "jieba": JiebaTokenizer,
}
_TOKENIZER_CACHE: dict[str, Tokenizer] = {}


def get_tokenizer(name: str | Tokenizer) -> Tokenizer:
    """A tokeniser by name (``bigram``, ``unigram_bigram``, ``words``, ``jieba``), or pass one through.

    >>> get_tokenizer("bigram")("你好")
    ['你好']
    """
    if isinstance(name, Tokenizer):
        return name
    if name not in TOKENIZERS:
        raise ValueError(f"tokenizer must be one of {', '.join(map(repr, TOKENIZERS))}, got {name!r}")
    if name not in _TOKENIZER_CACHE:
        _TOKENIZER_CACHE[name] = TOKENIZERS[name]()
    return _TOKENIZER_CACHE[name]


def tokenize(text: str, tokenizer: str | Tokenizer = "bigram") -> list[str]:
    """Shortcut: ``get_tokenizer(tokenizer)(text)``.

    >>> tokenize("合同订立")
    ['合同', '同订', '订立']
    """
    return get_tokenizer(tokenizer)(text)


# --------------------------------------------------------------------------------------------
# Rankings
# --------------------------------------------------------------------------------------------

class Ranking(NamedTuple):
    """Top-k of each query: ``ids`` (n_queries x k, -1 where fewer than k chunks scored) and ``scores`` (NaN there)."""

    ids: np.ndarray
    scores: np.ndarray


def _check_k(k: Any) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be an int >= 1, got {k!r}")
    return int(k)


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
    from . import _topk as _TOPK
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
    :meth:`CorpusIndex.index_chunks`.

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
        self.k1, self.b, self.epsilon = float(k1), float(b), float(epsilon)
        self.n, self.n_terms = tf.shape
        if self.n == 0:
            raise ValueError("the index must hold at least one chunk")
        self.vocab = vocab
        self.tokenizer = get_tokenizer(tokenizer) if tokenizer is not None else None
        self.doc_len = np.bincount(tf.indices, weights=tf.data, minlength=self.n)
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
        terms = np.repeat(np.arange(self.n_terms), df)
        if self.avgdl > 0:
            kd = self.k1 * (1 - self.b + self.b * self.doc_len / self.avgdl)
        else:
            kd = np.full(self.n, self.k1 * (1 - self.b))
        t = tf.data
        w = idf[terms] * (t * (self.k1 + 1) / (t + kd[tf.indices]))
        self._weights_csc = sp.csc_matrix((w, tf.indices.copy(), tf.indptr.copy()), shape=tf.shape)
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


def _count_matrix(indices: Sequence[int] | np.ndarray, indptr: Sequence[int] | np.ndarray, n_cols: int) -> sp.csr_matrix:
    m = sp.csr_matrix((np.ones(len(indices)), np.asarray(indices, dtype=np.int64), np.asarray(indptr, dtype=np.int64)),
                      shape=(len(indptr) - 1, max(n_cols, 1)))
    m.sum_duplicates()
    return m


# --------------------------------------------------------------------------------------------
# A corpus tokenised once
# --------------------------------------------------------------------------------------------

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
        docs = list(documents)
        self.doc_ids = [d.id for d in docs]
        if len(set(self.doc_ids)) != len(self.doc_ids):
            raise ValueError("documents must have distinct ids")
        self.doc_pos = {d: i for i, d in enumerate(self.doc_ids)}
        self.texts = [d.text for d in docs]
        lens = np.array([len(t) for t in self.texts], dtype=np.int64)
        # Global coordinates: document i occupies [offsets[i], offsets[i] + len); one gap between
        # documents so that nothing from two documents is ever adjacent.
        self.offsets = np.concatenate(([0], np.cumsum(lens + 1)[:-1])).astype(np.int64)
        self.doc_lens = lens
        self._words: dict[str, int] = {}
        self._words_lock = threading.Lock()
        self._query_cache: dict[tuple[str, ...], sp.csr_matrix] = {}
        self._context_cache: dict[str, np.ndarray] = {}
        if self.tokenizer.positional:
            ks, ss, es, rss, res, rks = [], [], [], [], [], []
            for off, text in zip(self.offsets, self.texts):
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
        """Global ``[start, end)`` of each chunk."""
        try:
            d = np.fromiter((self.doc_pos[c.doc_id] for c in chunks), dtype=np.int64, count=len(chunks))
        except KeyError as exc:
            raise ValueError(f"chunk refers to document {exc.args[0]!r}, which is not in the corpus") from None
        s = np.fromiter((c.start for c in chunks), dtype=np.int64, count=len(chunks))
        e = np.fromiter((c.end for c in chunks), dtype=np.int64, count=len(chunks))
        if len(chunks) and np.any(e > self.doc_lens[d]):
            i = int(np.flatnonzero(e > self.doc_lens[d])[0])
            raise ValueError(f"chunk {i} ends at {e[i]}, past the end of document {chunks[i].doc_id!r}")
        return self.offsets[d] + s, self.offsets[d] + e

    def term_counts(self, chunks: Sequence[Any], use_context: bool = False) -> sp.spmatrix:
        """The chunk x term count matrix, gathered from token positions (see the class docstring).

        Returned in CSC form (canonical: sorted, no duplicates), which is what :class:`BM25Fast`
        works on; call ``.tocsr()`` for row access."""
        n = len(chunks)
        if not self.tokenizer.positional:
            return self._count_texts(c.embed_text if use_context else c.text for c in chunks)
        gs, ge = self.chunk_bounds(chunks)
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
                piece = self._global_text(int(ai), int(bi))
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

    def _global_text(self, a: int, b: int) -> str:
        d = int(np.searchsorted(self.offsets, a, side="right") - 1)
        off = int(self.offsets[d])
        return self.texts[d][a - off:b - off]

    def _corpus_tokens_inside(self, a: int, b: int) -> list[str]:
        lo, hi = np.searchsorted(self.tok_start, [a, b])
        out = []
        for j in range(lo, hi):
            if self.tok_end[j] <= b:
                out.append(self._global_text(int(self.tok_start[j]), int(self.tok_end[j])))
        # Corpus word tokens are lower-cased (CJK is unchanged by lower()).
        return [t.lower() for t in out]

    def index_chunks(self, chunks: Sequence[Any], use_context: bool = False, k1: float = 1.5,
                     b: float = 0.75, epsilon: float = 0.25) -> BM25Fast:
        """A :class:`BM25Fast` over ``chunks`` (which must be windows of this corpus's documents).

        With ``use_context=True`` each row also counts the tokens of ``chunk.context`` (tokenised
        on its own), i.e. the chunk is indexed as its ``embed_text`` minus the tokens that the
        joining newline would otherwise split.
        """
        if len(chunks) == 0:
            raise ValueError("chunks must hold at least one chunk")
        return BM25Fast(self.term_counts(chunks, use_context=use_context), k1=k1, b=b, epsilon=epsilon,
                        tokenizer=self.tokenizer)


# --------------------------------------------------------------------------------------------
# Dense retrieval and fusion
# --------------------------------------------------------------------------------------------

class DenseIndex:
    """Cosine top-k with any embedder: ``embedder(list[str]) -> 2-D array`` of L2-normalised rows.

    >>> emb = lambda ts: np.array([[1.0, 0.0] if "甲" in t else [0.0, 1.0] for t in ts])
    >>> DenseIndex(["甲方", "乙方"], emb).search(["甲"], k=1).ids.tolist()
    [[0]]
    """

    def __init__(self, texts: Sequence[str], embedder: Callable[[list[str]], Any]) -> None:
        if not callable(embedder):
            raise TypeError(f"embedder must be a callable list[str] -> array, got {type(embedder).__name__}")
        self.embedder = embedder
        self.matrix = self._embed(list(texts))

    def _embed(self, texts: list[str]) -> np.ndarray:
        m = np.asarray(self.embedder(texts), dtype=float)
        if m.ndim != 2 or m.shape[0] != len(texts):
            raise ValueError(f"embedder must return a 2-D array with one row per text, got shape {m.shape}")
        return m

    def search(self, queries: Sequence[str], k: int = 5) -> Ranking:
        q = self._embed(list(queries))
        return top_k(q @ self.matrix.T, k)


def rrf(rankings: Iterable[Sequence[int]], k: int = 60, top: int | None = None) -> list[int]:
    """Reciprocal rank fusion of rankings (lists of ids, best first; -1 entries ignored).

    ``score(id) = sum over rankings of 1 / (k + rank)`` with ranks starting at 1; ties go to the
    lower id.

    >>> rrf([[3, 1, 2], [1, 3]])
    [1, 3, 2]
    """
    if isinstance(k, bool) or not isinstance(k, (int, float)) or k < 0:
        raise ValueError(f"k must be a number >= 0, got {k!r}")
    score: dict[int, float] = {}
    for ranking in rankings:
        for r, i in enumerate(ranking, start=1):
            i = int(i)
            if i < 0:
                continue
            score[i] = score.get(i, 0.0) + 1.0 / (k + r)
    out = sorted(score, key=lambda i: (-score[i], i))
    return out[:top] if top is not None else out


def fuse(rankings: Sequence[Ranking], k: int = 5, rrf_k: int = 60) -> Ranking:
    """Hybrid retrieval: fuse several engines' :class:`Ranking` s (same queries) query by query.

    Scores of the result are the RRF scores.
    """
    k = _check_k(k)
    nq = rankings[0].ids.shape[0]
    ids = np.full((nq, k), -1, dtype=np.int64)
    sc = np.full((nq, k), np.nan)
    for qi in range(nq):
        fused = rrf([r.ids[qi] for r in rankings], k=rrf_k)[:k]
        ids[qi, :len(fused)] = fused
        for j, i in enumerate(fused):
            sc[qi, j] = sum(1.0 / (rrf_k + list(r.ids[qi]).index(i) + 1) for r in rankings if i in r.ids[qi])
    return Ranking(ids, sc)

