"""Embedders: turn a list of strings into a matrix of unit-length row vectors.

An *embedder* is any callable ``list[str] -> numpy.ndarray`` of shape
``(len(texts), dims)`` whose rows have length 1 (so a dot product is a
cosine similarity), with a ``name`` attribute that identifies it. The
semantic chunker and the dense retriever only rely on that protocol.

Three are provided:

* :class:`LSAEmbedder`, the default: character n-gram TF-IDF projected on a
  truncated SVD (latent semantic analysis) fitted on the texts at hand. It
  is offline, deterministic and fast, and it is **not** a neural model: two
  sentences are close when they share characters and character pairs, or
  pairs that co-occur with the same others in the fitting corpus. It sees
  topics (年假 vs 差旅), not paraphrase or negation.
* :class:`SentenceTransformerEmbedder`, an adapter for a sentence-transformers
  model that is already on this machine. It never downloads anything; the
  book does not need it.
* :class:`CachedEmbedder`, which wraps either so repeated texts (widgets that
  re-run on every slider move) are embedded once.

Neural models (multilingual-e5-small, USE multilingual), any ``encode`` object or callable, and
an on-disk cache are in :mod:`chunklab.retrieval.embedders` (:func:`~chunklab.retrieval.get_embedder`).
"""
from __future__ import annotations

import hashlib
import os
from collections import Counter
from typing import Any, Callable, Iterable, Protocol, Sequence, runtime_checkable

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigsh

from ..core import as_document
from ..params import Param
from ..parsing.text import sentence_spans
from .ngrams import MAX_KEY_CHARS, count_matrix, document_frequencies, gram_keys, key_digits, key_to_str

__all__ = ["Embedder", "LSAEmbedder", "SentenceTransformerEmbedder", "CachedEmbedder", "normalize_rows",
           "check_embeddings"]


@runtime_checkable
class Embedder(Protocol):
    """What every embedder offers: a ``name`` and ``__call__(texts) -> (n, d) array``."""

    name: str

    def __call__(self, texts: Sequence[str]) -> np.ndarray: ...


def normalize_rows(matrix: np.ndarray) -> np.ndarray:
    """Scale each row to length 1; an all-zero row stays zero (it has no direction).

    >>> normalize_rows(np.array([[3.0, 4.0], [0.0, 0.0]])).tolist()
    [[0.6, 0.8], [0.0, 0.0]]
    """
    m = np.asarray(matrix, dtype=np.float64)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return np.divide(m, norms, out=np.zeros_like(m), where=norms > 0)


def check_embeddings(vectors: Any, n: int, who: str = "embedder") -> np.ndarray:
    """Validate what an embedder returned for ``n`` texts: a finite 2-D float array with ``n`` rows."""
    arr = np.asarray(vectors, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] != n:
        raise ValueError(f"{who} must return a 2-D array with one row per text ({n} rows), got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{who} returned NaN or infinite values")
    return arr


def _check_texts(texts: Any) -> list[str]:
    if isinstance(texts, str):
        raise TypeError("texts must be a list of strings, got a single str: wrap it in a list")
    texts = list(texts)
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise TypeError(f"texts[{i}] must be str, got {type(t).__name__}")
    return texts


# -- latent semantic analysis --------------------------------------------------

#: The SVD of a fit on ``n`` texts (``svd="auto"``): up to this many, the exact eigendecomposition
#: of the ``n x n`` Gram matrix (``numpy.linalg.eigh``, cubic in ``n``) ...
_DENSE_EIGH_LIMIT = 1000
#: ... up to this many, ARPACK's Lanczos iteration for the top ``dims`` eigenpairs of the same Gram
#: matrix (linear in ``n`` per iteration, never formed as a dense matrix; it agrees with ``eigh`` to
#: about 1e-15, see ``tests/test_embed.py``); above, a seeded randomized SVD (Halko, Martinsson &
#: Tropp 2011), which is approximate in its trailing directions.
_EXACT_SVD_LIMIT = 4000
#: How the SVD is computed (``svd=``): by size, or always one way.
SVD_METHODS = ("auto", "exact", "arpack", "randomized")


class LSAEmbedder:
    """Character n-gram TF-IDF + truncated SVD, fitted on the texts at hand.

    ``fit(texts)`` learns the n-gram vocabulary, the idf weights and ``dims``
    latent directions (capped by the rank of the corpus); calling the fitted
    embedder maps texts into that space and L2-normalises the rows. N-grams
    never seen while fitting are ignored, so a text made only of unseen
    characters maps to the zero vector (similarity 0 with everything).

    What it is: a lexical-topic model. Sentences about 年假 are close to other
    sentences about 年假 and 休假 because those characters co-occur in the
    fitting corpus. What it is not: a neural sentence encoder; it does not
    know that 请假 and 告假 mean the same unless the corpus shows it.

    Fit it on the *corpus* (all documents' sentences, see
    :meth:`from_documents`) rather than on one document: the idf weights and
    the topics are then estimated from many more texts, and one vector space
    is shared by every document. Deterministic: same input, same vectors
    (and a fixed sign for every direction).

    ``svd``: ``"auto"`` (the default) takes the exact eigendecomposition of the Gram matrix up to
    1,000 texts, ARPACK's Lanczos iteration up to 4,000 (the same directions to ~1e-15, without the
    cubic cost) and a fixed-seed randomized SVD above; ``"exact"``, ``"arpack"`` or
    ``"randomized"`` force one. N-grams of up to three characters are counted with integer keys
    (:mod:`chunklab.retrieval.ngrams`), longer ones string by string: same matrices either way.
    Vectors are float64.

    >>> emb = LSAEmbedder(dims=2).fit(["年假按工龄计算", "年假可以结转", "差旅住宿标准", "差旅交通报销"])
    >>> v = emb(["年假结转", "差旅报销"])
    >>> v.shape, bool(v[0] @ v[1] < 0.5)
    ((2, 2), True)
    """

    def __init__(self, dims: int = 128, ngram: tuple[int, int] = (1, 2), sublinear_tf: bool = True,
                 max_features: int | None = 200_000, seed: int = 0, svd: str = "auto") -> None:
        dims = Param("int", 128, low=1).validate("dims", dims)
        if (not isinstance(ngram, tuple) or len(ngram) != 2 or not all(isinstance(x, int) for x in ngram)
                or not 1 <= ngram[0] <= ngram[1] <= 5):
            raise ValueError(f"ngram must be a pair (lo, hi) of ints with 1 <= lo <= hi <= 5, got {ngram!r}")
        max_features = Param("int", 200_000, low=1, none_ok=True).validate("max_features", max_features)
        self.svd = Param("choice", "auto", choices=SVD_METHODS).validate("svd", svd)
        self.dims = dims
        self.ngram = ngram
        self.sublinear_tf = sublinear_tf
        self.max_features = max_features
        self.seed = seed
        self._vocab: dict[str, int] | None = None     # n-gram -> column (built lazily from the keys)
        self._keys: np.ndarray | None = None           # integer keys in column order (ngram hi <= 3)
        self._sorted_keys: np.ndarray | None = None
        self._sorted_cols: np.ndarray | None = None
        self.idf_: np.ndarray | None = None
        self.components_: np.ndarray | None = None   # (n_features, k)
        self.singular_values_: np.ndarray | None = None
        self.svd_used_: str | None = None
        self._fingerprint = "unfitted"

    # -- naming ----------------------------------------------------------------
    @property
    def name(self) -> str:
        """Identifies the embedder *and* what it was fitted on (the cache key depends on both)."""
        lo, hi = self.ngram
        forced = "" if self.svd == "auto" else f"-{self.svd}"
        return f"lsa-char{lo}{hi}-d{self.dims}{forced}-{self._fingerprint}"

    def __repr__(self) -> str:
        k = 0 if self.components_ is None else self.components_.shape[1]
        return f"LSAEmbedder(dims={self.dims}, ngram={self.ngram}, fitted_dims={k})"

    @property
    def fitted(self) -> bool:
        return self.components_ is not None

    @property
    def vocabulary_(self) -> dict[str, int] | None:
        """``{n-gram: column}`` of the fitted vocabulary (None before fitting)."""
        if self._vocab is None and self._keys is not None:
            self._vocab = {key_to_str(k): i for i, k in enumerate(self._keys.tolist())}
        return self._vocab

    @property
    def n_features_(self) -> int:
        """The vocabulary's size (0 before fitting)."""
        if self._keys is not None:
            return len(self._keys)
        return len(self._vocab) if self._vocab is not None else 0

    @property
    def _integer_keys(self) -> bool:
        return self.ngram[1] <= MAX_KEY_CHARS

    # -- features --------------------------------------------------------------
    def _grams(self, text: str) -> Iterable[str]:
        lo, hi = self.ngram
        t = " ".join(text.split())  # runs of whitespace count as one space
        for n in range(lo, hi + 1):
            for i in range(len(t) - n + 1):
                g = t[i:i + n]
                if not g.isspace():
                    yield g

    def _tf(self, texts: Sequence[str]) -> sp.csr_matrix:
        if self._integer_keys:
            keys, rows = gram_keys(texts, *self.ngram)
            m = count_matrix(keys, rows, len(texts), self._sorted_keys, self._sorted_cols, self.n_features_)
        else:
            vocab = self._vocab
            indptr, indices, data = [0], [], []
            for t in texts:
                counts = Counter(g for g in self._grams(t) if g in vocab)
                indices.extend(vocab[g] for g in counts)
                data.extend(counts.values())
                indptr.append(len(indices))
            m = sp.csr_matrix((np.asarray(data, dtype=np.float64), np.asarray(indices, dtype=np.int64),
                               np.asarray(indptr, dtype=np.int64)), shape=(len(texts), len(vocab)))
            m.sort_indices()
        if self.sublinear_tf:
            m.data = 1.0 + np.log(m.data)
        return m

    def _tfidf(self, texts: Sequence[str]) -> sp.csr_matrix:
        m = self._tf(texts) @ sp.diags(self.idf_)
        norms = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
        norms[norms == 0] = 1.0
        return sp.csr_matrix(sp.diags(1.0 / norms) @ m)

    # -- fitting ---------------------------------------------------------------
    def _learn_vocabulary(self, texts: list[str]) -> np.ndarray:
        """Set the vocabulary (most frequent n-grams first, ties in string order); return their document frequencies."""
        n = len(texts)
        if self._integer_keys:
            keys, rows = gram_keys(texts, *self.ngram)
            uniq, df = document_frequencies(keys, rows, n)
            digits = key_digits(uniq, self.ngram[1])
            order = np.lexsort([digits[:, j] for j in range(digits.shape[1] - 1, -1, -1)] + [-df])
            if self.max_features is not None:
                order = order[: self.max_features]
            self._keys = uniq[order]
            self._sorted_cols = np.argsort(self._keys, kind="stable")
            self._sorted_keys = self._keys[self._sorted_cols]
            self._vocab = None
            return df[order].astype(np.float64)
        dfc: Counter[str] = Counter()
        for t in texts:
            dfc.update(set(self._grams(t)))
        grams = sorted(dfc, key=lambda g: (-dfc[g], g))  # deterministic order
        if self.max_features is not None:
            grams = grams[: self.max_features]
        self._vocab = {g: i for i, g in enumerate(grams)}
        self._keys = self._sorted_keys = self._sorted_cols = None
        return np.array([dfc[g] for g in grams], dtype=np.float64)

    def fit(self, texts: Sequence[str]) -> "LSAEmbedder":
        """Learn vocabulary, idf and latent directions from ``texts``; returns ``self``."""
        texts = _check_texts(texts)
        n = len(texts)
        dfs = self._learn_vocabulary(texts)
        self.idf_ = np.log((1.0 + n) / (1.0 + dfs)) + 1.0  # smoothed idf, as in scikit-learn
        x = self._tfidf(texts) if self.n_features_ else sp.csr_matrix((n, 0))
        self.components_, self.singular_values_ = self._svd(x)
        digest = hashlib.sha1()
        for t in texts:
            digest.update(t.encode("utf-8", "surrogatepass") + b"\x00")
        self._fingerprint = digest.hexdigest()[:12]
        return self

    def _svd(self, x: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
        n, f = x.shape
        k = min(self.dims, n, f)
        if k == 0:
            self.svd_used_ = "exact"
            return np.zeros((f, 0)), np.zeros(0)
        method = self.svd
        if method == "auto":
            method = "randomized" if n > _EXACT_SVD_LIMIT else "arpack" if n > _DENSE_EIGH_LIMIT else "exact"
        if method == "arpack" and k >= n - 1:
            method = "exact"  # ARPACK finds at most n - 2 eigenpairs; such a matrix is small anyway
        self.svd_used_ = method
        if method == "randomized":
            v, s = _randomized_svd(x, k, self.seed)
        else:
            # NOTE: with few texts and many n-grams, the n x n Gram matrix X X^T is small;
            # its eigenvectors are the left singular vectors, and V = X^T U / s. eigh is
            # exact and deterministic; ARPACK (a seeded start vector, tolerance 0: machine
            # precision) finds the same top k eigenpairs with matrix-vector products only.
            w, u = _gram_eigh(x, k) if method == "exact" else _gram_arpack(x, k, self.seed)
            keep = w > 1e-10 * max(float(w[0]), 1e-300)
            w, u = w[keep], u[:, keep]
            s = np.sqrt(w)
            v = np.asarray(x.T @ u) / s
        # Fix each direction's sign: its largest-magnitude coordinate is positive.
        if v.shape[1]:
            # NOTE: argmax over the rows of the contiguous transpose: the same first maximum as
            # argmax(axis=0) on v, without striding through a (features x k) array k times.
            idx = np.argmax(np.ascontiguousarray(np.abs(v).T), axis=1)
            signs = np.sign(v[idx, np.arange(v.shape[1])])
            signs[signs == 0] = 1.0
            v = v * signs
        return v, s

    @classmethod
    def from_documents(cls, documents: Iterable[Any], **params: Any) -> "LSAEmbedder":
        """Fit on every sentence of a corpus (``Document`` objects or strings).

        This is the recommended use for semantic chunking: one space for the
        whole corpus, idf estimated over all of it.
        """
        return cls(**params).fit(corpus_sentences(documents))

    # -- transforming ----------------------------------------------------------
    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        texts = _check_texts(texts)
        if not self.fitted:
            raise RuntimeError("LSAEmbedder is not fitted: call .fit(corpus_texts) first, "
                               "or LSAEmbedder.from_documents(documents)")
        if not texts:
            return np.zeros((0, self.components_.shape[1]))
        if not self.n_features_:
            return np.zeros((len(texts), 0))
        return normalize_rows(np.asarray(self._tfidf(texts) @ self.components_))

    def fit_transform(self, texts: Sequence[str]) -> np.ndarray:
        """``fit(texts)`` then embed the same texts."""
        return self.fit(texts)(texts)


def corpus_sentences(documents: Iterable[Any]) -> list[str]:
    """The non-blank sentences of every document (``Document`` objects or strings), in order."""
    texts = []
    for i, d in enumerate(documents):
        doc = as_document(d, f"doc{i}")
        texts.extend(doc.text[s:e] for s, e in sentence_spans(doc.text) if doc.text[s:e].strip())
    return texts


def _gram_eigh(x: sp.csr_matrix, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The top ``k`` eigenpairs of ``x @ x.T``, largest first, by a dense symmetric eigendecomposition."""
    gram = (x @ x.T).toarray()
    w, u = np.linalg.eigh(gram)
    order = np.argsort(-w, kind="stable")[:k]
    return w[order], u[:, order]


def _gram_arpack(x: sp.csr_matrix, k: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The top ``k`` eigenpairs of ``x @ x.T``, largest first, by ARPACK (implicitly restarted Lanczos).

    The Gram matrix is never formed: each step multiplies by ``x.T`` then ``x``. Falls back to
    :func:`_gram_eigh` if ARPACK does not converge.
    """
    n = x.shape[0]
    xt = sp.csr_matrix(x.T)
    op = LinearOperator((n, n), matvec=lambda v: x @ (xt @ v), matmat=lambda v: x @ (xt @ v), dtype=np.float64)
    v0 = np.random.default_rng(seed).standard_normal(n)
    try:
        w, u = eigsh(op, k=k, which="LA", v0=v0, tol=0)
    except ArpackNoConvergence:  # pragma: no cover - not seen on text; the exact path is always right
        return _gram_eigh(x, k)
    order = np.argsort(-w, kind="stable")
    return w[order], u[:, order]


def _randomized_svd(x: sp.csr_matrix, k: int, seed: int, oversample: int = 10, power: int = 4):
    """Top-``k`` right singular vectors and values of ``x`` by a seeded randomized range finder."""
    rng = np.random.default_rng(seed)
    n, f = x.shape
    p = min(k + oversample, n, f)
    q = np.asarray(x @ rng.standard_normal((f, p)))
    q, _ = np.linalg.qr(q)
    for _ in range(power):  # power iterations sharpen the spectrum; QR keeps them stable
        z, _ = np.linalg.qr(np.asarray(x.T @ q))
        q, _ = np.linalg.qr(np.asarray(x @ z))
    b = np.asarray((x.T @ q).T)             # (p, f) = q^T x
    _, s, vt = np.linalg.svd(b, full_matrices=False)
    return vt[:k].T, s[:k]


# -- sentence-transformers adapter ------------------------------------------------

class SentenceTransformerEmbedder:
    """A sentence-transformers model that is already on disk (never downloaded).

    ``model_name_or_path`` is a local directory, or a model name already in the
    Hugging Face cache. The Hub is put in offline mode before loading, so a
    missing model fails at once with a clear message instead of a download.

    Raises ``ImportError`` when the ``sentence-transformers`` package is not
    installed and ``FileNotFoundError`` when the model is not on this machine.
    """

    def __init__(self, model_name_or_path: str, device: str = "cpu", batch_size: int = 32) -> None:
        if not isinstance(model_name_or_path, str) or not model_name_or_path:
            raise TypeError(f"model_name_or_path must be a non-empty str, got {model_name_or_path!r}")
        try:
            import sentence_transformers  # noqa: F401  (optional dependency, imported lazily)
        except ImportError as exc:
            raise ImportError(
                "SentenceTransformerEmbedder needs the optional package 'sentence-transformers' "
                "(pip install sentence-transformers); chunklab's default embedder is LSAEmbedder"
            ) from exc
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
        try:
            self.model = sentence_transformers.SentenceTransformer(
                model_name_or_path, device=device, local_files_only=True)
        except Exception as exc:  # OSError, ValueError, HF errors: all mean "not here"
            raise FileNotFoundError(
                f"sentence-transformers model {model_name_or_path!r} is not available offline "
                f"({type(exc).__name__}: {exc}); download it beforehand or pass a local directory"
            ) from exc
        self.name = f"st:{model_name_or_path}"
        self.batch_size = batch_size

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        texts = _check_texts(texts)
        vecs = self.model.encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                                 show_progress_bar=False, convert_to_numpy=True)
        return check_embeddings(vecs, len(texts), self.name).reshape(len(texts), -1)


# -- cache --------------------------------------------------------------------------

class CachedEmbedder:
    """Remember each text's vector, keyed by ``(embedder.name, text)``.

    Only texts not seen before are passed to the wrapped embedder, in one
    batch. ``hits`` and ``misses`` count lookups. The cache is bounded by
    ``maxsize`` entries (oldest dropped first).

    >>> calls = []
    >>> def fake(texts):
    ...     calls.append(list(texts))
    ...     return np.ones((len(texts), 2)) / np.sqrt(2)
    >>> fake.name = "fake"
    >>> cached = CachedEmbedder(fake)
    >>> _ = cached(["甲", "乙"]); _ = cached(["乙", "丙"])
    >>> calls, cached.hits, cached.misses
    ([['甲', '乙'], ['丙']], 1, 3)
    """

    def __init__(self, embedder: Callable[[Sequence[str]], np.ndarray], maxsize: int = 200_000) -> None:
        if not callable(embedder):
            raise TypeError(f"embedder must be a callable, got {type(embedder).__name__}")
        maxsize = Param("int", 200_000, low=1).validate("maxsize", maxsize)
        self.embedder = embedder
        self.maxsize = maxsize
        self._cache: dict[tuple[str, str], np.ndarray] = {}
        self.hits = 0
        self.misses = 0

    @property
    def name(self) -> str:
        return getattr(self.embedder, "name", repr(self.embedder))

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        texts = _check_texts(texts)
        name = self.name
        missing = list(dict.fromkeys(t for t in texts if (name, t) not in self._cache))
        self.misses += len(missing)
        self.hits += len(texts) - len(missing)
        if missing:
            vecs = check_embeddings(self.embedder(missing), len(missing), name)
            for t, v in zip(missing, vecs):
                self._cache[(name, t)] = v
        if not texts:
            dims = next(iter(self._cache.values())).shape[0] if self._cache else 0
            return np.zeros((0, dims))
        out = np.stack([self._cache[(name, t)] for t in texts])
        while len(self._cache) > self.maxsize:  # dicts keep insertion order: drop the oldest
            self._cache.pop(next(iter(self._cache)))
        return out

    def clear(self) -> None:
        self._cache.clear()
        self.hits = self.misses = 0

    def __len__(self) -> int:
        return len(self._cache)

    def __repr__(self) -> str:
        return f"CachedEmbedder({self.name}, {len(self)} cached, hits={self.hits}, misses={self.misses})"
