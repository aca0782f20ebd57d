"""Dense retrieval and rank fusion.

:class:`DenseIndex` ranks chunks by cosine similarity with any embedder (see
``chunklab.retrieval.embed``); :func:`rrf` and :func:`fuse` combine several rankings by
reciprocal rank fusion (hybrid retrieval: BM25 + dense).
"""
from __future__ import annotations

import itertools
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from ..params import Param
from .bm25 import Ranking, _check_k, top_k

__all__ = ["DenseIndex", "RRF_CONSTANT", "rrf", "rrf_scores", "fuse"]


class DenseIndex:
    """Cosine top-k with any embedder: ``embedder(list[str]) -> 2-D array`` of L2-normalised rows.

    An embedder with retrieval modes (``embed_passages`` / ``embed_queries``, as
    :class:`~chunklab.retrieval.embedders.E5Embedder`) embeds the texts as passages and the
    queries as queries; any other is called the same way for both.

    >>> emb = lambda ts: np.array([[1.0, 0.0] if "甲" in t else [0.0, 1.0] for t in ts])
    >>> DenseIndex(["甲方", "乙方"], emb).search(["甲"], k=1).ids.tolist()
    [[0]]
    """

    def __init__(self, texts: Sequence[str], embedder: Callable[[list[str]], Any]) -> None:
        if not callable(embedder):
            raise TypeError(f"embedder must be a callable list[str] -> array, got {type(embedder).__name__}")
        self.embedder = embedder
        self.matrix = self._embed(list(texts), getattr(embedder, "embed_passages", None))

    def _embed(self, texts: list[str], method: Callable[[list[str]], Any] | None = None) -> np.ndarray:
        m = np.asarray((method or self.embedder)(texts), dtype=float)
        if m.ndim != 2 or m.shape[0] != len(texts):
            raise ValueError(f"embedder must return a 2-D array with one row per text, got shape {m.shape}")
        return m

    def search(self, queries: Sequence[str], k: int = 5) -> Ranking:
        q = self._embed(list(queries), getattr(self.embedder, "embed_queries", None))
        return top_k(q @ self.matrix.T, k)


#: The RRF constant: ``score = sum over rankings of 1 / (rrf_constant + rank)``; 60 as in Cormack et al. (2009).
RRF_CONSTANT = Param("float", 60, "reciprocal rank fusion constant", low=0)


def rrf_scores(rankings: Iterable[Sequence[int]], rrf_constant: float = 60) -> dict[int, float]:
    """Reciprocal rank fusion scores, best first: ``{id: score}`` ordered by score, ties to the lower id.

    ``rankings`` are lists of ids, best first (each id at most once per ranking; -1 entries are
    ignored); ``score(id) = sum over rankings of 1 / (rrf_constant + rank)`` with ranks starting
    at 1. An id absent from every ranking has no entry; no ranking gives an empty dict. This is the
    one place RRF scores are computed (:func:`rrf`, :func:`fuse` and
    :func:`chunklab.hierarchy.multi_granularity` read them from here).

    >>> {i: round(s, 5) for i, s in rrf_scores([[3, 1, 2], [1, 3]], rrf_constant=1).items()}
    {1: 0.83333, 3: 0.83333, 2: 0.25}
    """
    return _rrf_scores(rankings, RRF_CONSTANT.validate("rrf_constant", rrf_constant))


def _rrf_scores(rankings: Iterable[Sequence[int]], c: float) -> dict[int, float]:
    score: dict[int, float] = {}
    for ranking in rankings:
        for r, i in enumerate(ranking, start=1):
            i = int(i)
            if i < 0:
                continue
            score[i] = score.get(i, 0.0) + 1.0 / (c + r)
    return {i: score[i] for i in sorted(score, key=lambda i: (-score[i], i))}


def rrf(rankings: Iterable[Sequence[int]], rrf_constant: float = 60, top: int | None = None) -> list[int]:
    """Reciprocal rank fusion of rankings: the ids of :func:`rrf_scores`, best first (the first ``top``).

    >>> rrf([[3, 1, 2], [1, 3]])
    [1, 3, 2]
    """
    out = list(rrf_scores(rankings, rrf_constant))
    return out[:top] if top is not None else out


def fuse(rankings: Sequence[Ranking], k: int = 5, rrf_constant: float = 60) -> Ranking:
    """Hybrid retrieval: fuse several engines' :class:`Ranking <chunklab.retrieval.Ranking>` s (same queries) query by query.

    Each query's ids are :func:`rrf` of the engines' ids for it, cut to ``k`` (padded with -1);
    the scores of the result are the RRF scores (NaN in the padding).

    >>> a = Ranking(np.array([[0, 1]]), np.array([[2.0, 1.0]]))
    >>> b = Ranking(np.array([[1, -1]]), np.array([[0.9, np.nan]]))
    >>> fuse([a, b], k=3, rrf_constant=1).ids.tolist()
    [[1, 0, -1]]
    """
    k = _check_k(k)
    c = RRF_CONSTANT.validate("rrf_constant", rrf_constant)
    nq = rankings[0].ids.shape[0]
    ids = np.full((nq, k), -1, dtype=np.int64)
    sc = np.full((nq, k), np.nan)
    for qi in range(nq):
        fused = _rrf_scores([r.ids[qi] for r in rankings], c)
        for j, (i, score) in enumerate(itertools.islice(fused.items(), k)):
            ids[qi, j], sc[qi, j] = i, score
    return Ranking(ids, sc)
