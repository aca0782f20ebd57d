"""Dense retrieval and rank fusion.

:class:`DenseIndex` ranks chunks by cosine similarity with any embedder (see
``chunklab.retrieval.embed``); :func:`rrf` and :func:`fuse` combine several rankings by
reciprocal rank fusion (hybrid retrieval: BM25 + dense).
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence

import numpy as np

from .bm25 import Ranking, _check_k, top_k

__all__ = ["DenseIndex", "rrf", "fuse"]


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
    """Hybrid retrieval: fuse several engines' :class:`Ranking <chunklab.retrieval.Ranking>` s (same queries) query by query.

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

