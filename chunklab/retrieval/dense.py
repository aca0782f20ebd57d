"""Dense retrieval and rank fusion.

:class:`DenseIndex` ranks chunks by cosine similarity with any embedder (see
``chunklab.retrieval.embed``); :func:`rrf` and :func:`fuse` combine several rankings by
reciprocal rank fusion (hybrid retrieval: BM25 + dense), with a weight per ranking if asked, or by
normalised score fusion (``method="score"``: each ranking's scores min-max scaled to [0, 1] per
query, then a weighted sum). Without weights, ``fuse`` is plain equal-weight RRF, as it always was.
"""
from __future__ import annotations

import itertools
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from ..params import Param
from .bm25 import Ranking, _check_k, top_k

__all__ = ["DenseIndex", "RRF_CONSTANT", "FUSIONS", "rrf", "rrf_scores", "fuse", "check_weights"]


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


#: How :func:`fuse` combines rankings: reciprocal rank fusion, or normalised score fusion.
FUSIONS: tuple[str, ...] = ("rrf", "score")


def check_weights(weights: Sequence[float] | None, n: int) -> list[float] | None:
    """``weights`` as ``n`` floats >= 0, not all 0 (None stays None); else a one-line ValueError.

    >>> check_weights([1, 2], 2), check_weights(None, 2)
    ([1.0, 2.0], None)
    >>> check_weights([0, 0], 2)
    Traceback (most recent call last):
    ...
    ValueError: fusion weights must be numbers >= 0, not all 0, one per ranking (2), got [0, 0]
    """
    if weights is None:
        return None
    try:
        out = [float(w) for w in weights]
    except (TypeError, ValueError):
        out = []
    if len(out) != n or not all(np.isfinite(w) and w >= 0 for w in out) or not any(out):
        raise ValueError(f"fusion weights must be numbers >= 0, not all 0, one per ranking ({n}), got {weights!r}")
    return out


def _weighted_rrf(rows: Sequence[np.ndarray], weights: Sequence[float], c: float) -> dict[int, float]:
    score: dict[int, float] = {}
    for row, w in zip(rows, weights):
        for r, i in enumerate(row, start=1):
            i = int(i)
            if i >= 0:
                score[i] = score.get(i, 0.0) + w / (c + r)
    return {i: score[i] for i in sorted(score, key=lambda i: (-score[i], i))}


def _score_fusion(rows: Sequence[np.ndarray], scores: Sequence[np.ndarray], weights: Sequence[float]) -> dict[int, float]:
    """Per ranking, its scores min-max scaled to [0, 1] over the ids it ranked (all equal: 1), weighted
    and summed; an id a ranking did not return gets 0 from it."""
    fused: dict[int, float] = {}
    for row, sc, w in zip(rows, scores, weights):
        ok = (row >= 0) & np.isfinite(sc)
        if not ok.any():
            continue
        vals = sc[ok].astype(float)
        lo, hi = float(vals.min()), float(vals.max())
        norm = (vals - lo) / (hi - lo) if hi > lo else np.ones_like(vals)
        for i, v in zip(row[ok].tolist(), norm.tolist()):
            fused[int(i)] = fused.get(int(i), 0.0) + w * v
    return {i: fused[i] for i in sorted(fused, key=lambda i: (-fused[i], i))}


def fuse(rankings: Sequence[Ranking], k: int = 5, rrf_constant: float = 60, weights: Sequence[float] | None = None,
         method: str = "rrf") -> Ranking:
    """Hybrid retrieval: fuse several engines' :class:`Ranking <chunklab.retrieval.Ranking>` s (same queries) query by query.

    ``method="rrf"`` (the default): each query's ids are :func:`rrf` of the engines' ids for it,
    each ranking's terms multiplied by its weight in ``weights`` (None: all 1, plain RRF, exactly
    as before weights existed); ``method="score"``: each ranking's scores min-max normalised to
    [0, 1] over the ids it returned for the query, multiplied by its weight and summed (an id a
    ranking did not return adds 0). Cut to ``k`` (padded with -1); the scores of the result are the
    fused scores (NaN in the padding); ties go to the lower id.

    >>> a = Ranking(np.array([[0, 1]]), np.array([[2.0, 1.0]]))
    >>> b = Ranking(np.array([[1, -1]]), np.array([[0.9, np.nan]]))
    >>> fuse([a, b], k=3, rrf_constant=1).ids.tolist()
    [[1, 0, -1]]
    >>> fuse([a, b], k=3, rrf_constant=1, weights=[3, 1]).ids.tolist()
    [[0, 1, -1]]
    >>> fuse([a, b], k=3, method="score").ids.tolist(), fuse([a, b], k=3, method="score", weights=[1, 3]).ids.tolist()
    ([[0, 1, -1]], [[1, 0, -1]])
    """
    k = _check_k(k)
    c = RRF_CONSTANT.validate("rrf_constant", rrf_constant)
    if method not in FUSIONS:
        raise ValueError(f"fusion method must be one of {', '.join(map(repr, FUSIONS))}, got {method!r}")
    w = check_weights(weights, len(rankings))
    nq = rankings[0].ids.shape[0]
    ids = np.full((nq, k), -1, dtype=np.int64)
    sc = np.full((nq, k), np.nan)
    for qi in range(nq):
        if method == "score":
            fused = _score_fusion([r.ids[qi] for r in rankings], [np.asarray(r.scores[qi]) for r in rankings],
                                  w or [1.0] * len(rankings))
        elif w is None:  # plain RRF: the one code path of before, so default results cannot move
            fused = _rrf_scores([r.ids[qi] for r in rankings], c)
        else:
            fused = _weighted_rrf([r.ids[qi] for r in rankings], w, c)
        for j, (i, score) in enumerate(itertools.islice(fused.items(), k)):
            ids[qi, j], sc[qi, j] = i, score
    return Ranking(ids, sc)
