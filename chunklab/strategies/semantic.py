"""Semantic chunking: cut where neighbouring sentences stop resembling each other.

The recipe (article 000 §2.3, Kamradt's level 4): split the document into
sentences; embed each sentence together with ``buffer`` neighbours on each
side, which smooths the curve; take the cosine similarity of every pair of
consecutive sentence vectors; cut at the gaps where similarity falls below a
threshold. Three ways to set the threshold:

* ``"std"``: below ``mean - k * std`` of the similarities (article 000);
* ``"percentile"``: the distance ``1 - similarity`` is above its ``percentile``-th
  percentile (Kamradt and LangChain's ``SemanticChunker`` use the 95th);
* ``"absolute"``: below a fixed ``value``.

Then the size knobs: a segment shorter than ``min`` joins the neighbour it is
more similar to (when the result fits the cap), and a segment longer than the
cap goes to ``recursive``, recorded in ``meta["level"]``.

The default embedder is an :class:`~chunklab.retrieval.embed.LSAEmbedder` fitted on the
document's own sentences (``embedder=None`` or ``"lsa"``), so the chunker needs no corpus and no
network. A corpus-level embedder is better (idf and topics estimated from every
document, one vector space for all): build it once with
``LSAEmbedder.from_documents(corpus)`` and pass ``embedder=CachedEmbedder(...)``. A neural model
is named (``embedder="e5-small"`` or ``"use-multilingual"``, see
:func:`~chunklab.retrieval.get_embedder`; windows are embedded in the model's symmetric mode,
cached on disk, and its ``stats`` count any window over its token limit), or given as an object
with ``encode(list[str])`` (sentence-transformers) or as any callable ``list[str] -> array``,
which is called as it is.

Cost: the LSA fit counts n-grams with integer keys and takes its top 128 directions by an exact
eigendecomposition up to 1,000 sentences and by ARPACK's Lanczos iteration above (the same
directions to ~1e-15; a seeded randomized SVD past 4,000 sentences, as before), so a document
costs time in proportion to its length, without a cubic cliff. NumPy's BLAS threads do not help
matrices this small: on a busy machine ``OPENBLAS_NUM_THREADS=1`` is several times faster
(:func:`chunklab.tools.bench.bench_semantic` measures it).
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np

from ..base import Span, Strategy, register, size_params
from ..core import Document, as_document, trim_span
from ..params import Param
from ..retrieval.embed import LSAEmbedder, check_embeddings, normalize_rows
from ..retrieval.embedders import check_embedder, resolve_embedder
from .linguistic import Recursive, sentence_spans

__all__ = ["Semantic", "SemanticAnalysis", "boundary_scores", "random_boundary_baseline", "THRESHOLD_MODES"]

#: Threshold modes, in the order the chapter introduces them.
THRESHOLD_MODES = ("std", "percentile", "absolute")


@dataclass(frozen=True)
class _EmbedderParam(Param):
    """The ``embedder`` knob: None, a name (``"lsa"``, ``"e5-small"``, ...), an ``encode`` object or a callable."""

    def validate(self, name, value):
        return check_embedder(name, value, none_ok=True)


@dataclass(frozen=True)
class SemanticAnalysis:
    """Everything needed to plot a semantic split.

    ``sentences[i]`` is the ``(start, end)`` span of sentence ``i``;
    ``similarities[i]`` compares sentences ``i`` and ``i + 1`` (so it has one
    entry fewer); a *breakpoint* ``j`` means "a new segment starts at
    sentence ``j``", at character offset ``sentences[j][0]``.
    ``candidates`` are the gaps below the threshold; ``breakpoints`` are the
    ones left after short segments were merged (``min``). Cuts made later by
    the ``recursive`` fallback inside over-long segments are not breakpoints.
    """

    sentences: list[tuple[int, int]]
    similarities: np.ndarray
    threshold: float
    mode: str
    candidates: list[int]
    breakpoints: list[int]
    segments: list[tuple[int, int]] = field(default_factory=list)

    @property
    def candidate_offsets(self) -> list[int]:
        return [self.sentences[j][0] for j in self.candidates]

    @property
    def breakpoint_offsets(self) -> list[int]:
        return [self.sentences[j][0] for j in self.breakpoints]


@register
class Semantic(Strategy):
    """Cut at valleys of the similarity between consecutive (buffered) sentences.

    ``buffer``: each sentence is embedded with this many neighbours on each
    side. ``threshold``: ``"std"`` (``k``), ``"percentile"`` (``percentile``)
    or ``"absolute"`` (``value``), see the module docstring. ``min``: shorter
    segments join their more similar neighbour if the result fits the cap;
    segments longer than the cap (``max``, or ``target``) go to ``recursive``
    at ``target`` and their chunks record it. ``embedder``: ``None`` or ``"lsa"``
    fits an ``LSAEmbedder`` on the document's own sentences; a name of
    :data:`~chunklab.retrieval.EMBEDDERS` (``"e5-small"``: a neural model, offline), an object
    with ``encode(list[str])``, or any callable ``list[str] -> (n, d) array`` (see
    :mod:`chunklab.retrieval.embedders`). The threshold is relative by default (``std``,
    ``percentile``), so it carries over between embedders; an ``absolute`` value does not.

    >>> text = ("年假按工龄计算。年假可以结转五天。年假需提前申请。"
    ...         "差旅住宿按城市分级。差旅交通乘坐高铁二等座。差旅补贴按天发放。")
    >>> [c.text for c in Semantic().split(text)]
    ['年假按工龄计算。年假可以结转五天。年假需提前申请。', '差旅住宿按城市分级。差旅交通乘坐高铁二等座。差旅补贴按天发放。']
    """

    name = "semantic"
    family = "semantic"
    summary = {"zh": "相邻句向量相似度出现低谷处下刀（阈值：均值−k·标准差 / 百分位 / 绝对值）",
               "en": "cut where the similarity of neighbouring sentence embeddings dips"}
    params = {
        **{k: v for k, v in size_params(target=1000, min=0).items() if k != "overlap"},
        "buffer": Param("int", 1, "embed each sentence with this many neighbours on each side", low=0, high=100,
                        ui_high=5),
        "threshold": Param("choice", "std", "how the cut threshold is set", choices=THRESHOLD_MODES),
        "k": Param("float", 1.0, "'std' mode: cut below mean - k * std", low=0.0, high=5.0),
        "percentile": Param("float", 95.0, "'percentile' mode: cut where distance is above this percentile",
                            low=0.0, high=100.0),
        "value": Param("float", 0.5, "'absolute' mode: cut where similarity is below this", low=-1.0, high=1.0),
        "embedder": _EmbedderParam("callable", None, "None or 'lsa': LSA fitted on the document; 'e5-small', "
                                   "'use-multilingual'; an encode(list[str]) object; list[str] -> (n, d) array",
                                   none_ok=True),
    }

    # -- analysis --------------------------------------------------------------
    def _sentences(self, text: str, start: int, end: int) -> list[tuple[int, int]]:
        """Sentence spans with whitespace trimmed; whitespace-only pieces dropped."""
        out = []
        for s, e in sentence_spans(text, start, end):
            s, e = trim_span(text, s, e)
            if s < e:
                out.append((s, e))
        return out

    def _similarities(self, text: str, sents: list[tuple[int, int]]) -> np.ndarray:
        n = len(sents)
        if n < 2:
            return np.zeros(0)
        b = self.buffer
        windows = [text[sents[max(0, i - b)][0]:sents[min(n - 1, i + b)][1]] for i in range(n)]
        embedder = self.embedder
        if embedder is None or embedder == "lsa":
            embedder = LSAEmbedder().fit([text[s:e] for s, e in sents])
        else:
            embedder = resolve_embedder(embedder)
        vecs = normalize_rows(check_embeddings(embedder(windows), n, "embedder"))
        sims = np.einsum("ij,ij->i", vecs[:-1], vecs[1:])
        return np.clip(sims, -1.0, 1.0)

    def _threshold(self, sims: np.ndarray) -> tuple[float, np.ndarray]:
        """The threshold (as a similarity) and the mask of gaps to cut."""
        if sims.size == 0:
            return float("nan"), np.zeros(0, dtype=bool)
        if self.threshold == "std":
            thr = float(sims.mean() - self.k * sims.std())
            return thr, sims < thr
        if self.threshold == "percentile":
            dist = 1.0 - sims
            cut = float(np.percentile(dist, self.percentile))
            return 1.0 - cut, dist > cut
        return float(self.value), sims < self.value

    def analyse(self, document: Document | str, start: int = 0, end: int | None = None) -> SemanticAnalysis:
        """The similarity curve, the threshold and the breakpoints of ``document``, for plotting.

        >>> a = Semantic(threshold="std", k=1.0).analyse("年假按工龄计算。年假可以结转。差旅住宿分级。差旅补贴按天。")
        >>> a.similarities.round(2).tolist(), round(a.threshold, 2), a.breakpoints, a.breakpoint_offsets
        ([0.84, 0.73, 0.83], 0.75, [2], [15])
        """
        doc = as_document(document)
        text = doc.text
        end = len(text) if end is None else end
        sents = self._sentences(text, start, end)
        sims = self._similarities(text, sents)
        thr, mask = self._threshold(sims)
        candidates = [int(i) + 1 for i in np.flatnonzero(mask)]
        segments = self._merge_short(text, sents, sims, candidates)
        breakpoints = [a for a, _ in segments[1:]]
        return SemanticAnalysis(sents, sims, thr, self.threshold, candidates, breakpoints, segments)

    analyze = analyse

    def _merge_short(self, text, sents, sims, cuts) -> list[tuple[int, int]]:
        """Segments as sentence-index ranges ``[i, j)``; those shorter than ``min`` join a neighbour.

        A short segment joins the neighbour across the gap of higher similarity,
        provided the merged segment fits the cap; otherwise it stays.
        """
        if not sents:
            return []
        bounds = [0, *cuts, len(sents)]
        segs = [(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1)]
        if self.min <= 0 or len(segs) < 2:
            return segs
        cap = self.cap
        span_size = self.sizer(text)

        def size(i: int, j: int) -> int:   # sentences i .. j-1, measured as one span
            return span_size(sents[i][0], sents[j - 1][1])

        out: list[tuple[int, int]] = []
        k = 0
        while k < len(segs):
            seg = segs[k]
            short = size(*seg) < self.min
            left_ok = bool(out) and (short or size(*out[-1]) < self.min) and size(out[-1][0], seg[1]) <= cap
            right_ok = short and k + 1 < len(segs) and size(seg[0], segs[k + 1][1]) <= cap
            sim_left = sims[seg[0] - 1] if out else -np.inf
            sim_right = sims[seg[1] - 1] if k + 1 < len(segs) else -np.inf
            if left_ok and (not right_ok or sim_left >= sim_right):
                out[-1] = (out[-1][0], seg[1])
            elif right_ok:
                segs[k + 1] = (seg[0], segs[k + 1][1])
            else:
                out.append(seg)
            k += 1
        return out

    # -- splitting -------------------------------------------------------------
    def _fallback(self) -> Recursive:
        return Recursive(target=self.target, max=self.max, length=self.length)

    def _spans(self, doc: Document, start: int, end: int) -> Iterable[Span]:
        analysis = self.analyse(doc, start, end)
        text, sents, cap = doc.text, analysis.sentences, self.cap
        size = self.sizer(text)
        for i, j in analysis.segments:
            a, b = sents[i][0], sents[j - 1][1]
            if size(a, b) > cap:
                for s, e, meta in self._fallback()._spans(doc, a, b):
                    yield s, e, {**meta, "level": "recursive", "fallback_from": self.name}
            else:
                yield a, b, {"sentences": (i, j)}


# -- evaluating breakpoints -----------------------------------------------------------

def _as_units(offsets: Iterable[int], units: Sequence[int] | None) -> list[int]:
    if units is None:
        return sorted(set(int(o) for o in offsets))
    # an offset maps to the index of the nearest unit start at or before it
    return sorted(set(max(0, bisect.bisect_right(units, int(o)) - 1) for o in offsets))


_TOLERANCE = Param("int", 0, "boundaries this far apart still match (characters, or sentences)", low=0)


def boundary_scores(predicted: Iterable[int], true: Iterable[int], tolerance: int = 0,
                    sentences: Sequence[tuple[int, int]] | None = None) -> dict[str, float]:
    """Precision, recall and F1 of predicted boundaries against true ones, within ``tolerance``.

    Boundaries are character offsets. With ``sentences`` (sentence spans, as in
    :attr:`SemanticAnalysis.sentences`) each offset is mapped to the sentence
    it falls in and ``tolerance`` counts sentences; without, it counts
    characters. Matching is one-to-one: each true boundary can justify one
    prediction only (greedy by distance), so two cuts next to one true
    boundary count one hit and one false alarm. ``tolerance`` is checked like
    a strategy parameter: a negative one raises ParamError (a ValueError), a
    non-integer TypeError.

    >>> boundary_scores([10, 52, 90], [12, 50], tolerance=3)
    {'precision': 0.667, 'recall': 1.0, 'f1': 0.8, 'matched': 2, 'predicted': 3, 'true': 2}
    """
    tolerance = _TOLERANCE.validate("tolerance", tolerance)
    starts = [s for s, _ in sentences] if sentences is not None else None
    pred = _as_units(predicted, starts)
    gold = _as_units(true, starts)
    pairs = sorted((abs(p - g), p, g) for p in pred for g in gold if abs(p - g) <= tolerance)
    used_p: set[int] = set()
    used_g: set[int] = set()
    for _, p, g in pairs:
        if p not in used_p and g not in used_g:
            used_p.add(p)
            used_g.add(g)
    m = len(used_p)
    precision = m / len(pred) if pred else 0.0
    recall = m / len(gold) if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": round(precision, 3), "recall": round(recall, 3), "f1": round(f1, 3),
            "matched": m, "predicted": len(pred), "true": len(gold)}


def random_boundary_baseline(n_breaks: int, sentences: Sequence[tuple[int, int]], true: Iterable[int],
                             tolerance: int = 1, trials: int = 200, seed: int = 0) -> dict[str, float]:
    """Mean scores of ``n_breaks`` breakpoints drawn uniformly among sentence gaps (seeded).

    The baseline a semantic chunker must beat: same number of cuts, placed at random.
    """
    n = len(sentences)
    if n < 2:
        return {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    rng = np.random.default_rng(seed)
    true = list(true)
    k = min(n_breaks, n - 1)
    totals = {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    for _ in range(trials):
        picks = rng.choice(np.arange(1, n), size=k, replace=False)
        scores = boundary_scores([sentences[j][0] for j in picks], true, tolerance, sentences)
        for key in totals:
            totals[key] += scores[key] / trials
    return {key: round(v, 3) for key, v in totals.items()}
