"""Per-question retrieval metrics on one global coordinate line, and the context budget.

Everything is computed from character offsets. A chunk is a window ``[start, end)`` of a document;
a question's gold evidence is one or more :class:`GoldSpan`-like ``(doc_id, start, end)`` windows
(overlapping spans of one question are merged first). All windows are placed on one global
coordinate line (documents one after another, with a gap), so "overlap" is plain interval
arithmetic.

Definitions (``R`` = the retrieved chunks, best first; ``E`` = the gold characters; ``|x|`` counts
characters):

``hit``
    some chunk of ``R`` *hits* some gold span: it holds at least half of the span's characters
    (``2 * |chunk ∩ span| >= |span|``; a chunk holding the whole span always hits).
``hit_strict``
    some chunk of ``R`` holds a whole gold span.
``mrr``
    ``1 / rank`` of the first hitting chunk (0 when none is in ``R``).
``recall``
    ``|E ∩ union(R)| / |E|``.
``complete_single`` / ``complete_union``
    evidence completeness: every gold span lies entirely inside one chunk of ``R`` / inside the
    union of ``R``.
``precision``, ``iou``, ``precision_omega``
    as in Chroma's report "Evaluating Chunking Strategies for Retrieval" (Smith and Troynikov,
    2024) and its code: ``precision = |E ∩ union(R)| / sum(|c| for c in R)`` — retrieved
    characters counted *with duplicates*, so overlap is penalised; ``iou = |E ∩ union(R)| /
    (sum(|c|) + |E| - |E ∩ union(R)|)``; ``precision_omega`` is the precision reached by
    retrieving exactly the chunks that overlap the evidence, with Chroma's denominator
    ``|union(those chunks) ∪ E|``. (Chroma's code also counts a chunk that merely *touches* a
    span; here a chunk must share at least one character — unless ``metric_rules="chroma"``.)

``metric_rules="chroma"`` (:data:`METRIC_RULES`; ``--metric-rules chroma`` on the command line)
follows Chroma's ``chunking_evaluation`` where chunklab deviates on purpose: each chunk is placed at
the *first* occurrence of its text in its document after a trailing ``"."`` is stripped
(:func:`chroma_bounds`; chunklab places it where the splitter cut it), and a chunk that only
touches a span (ends where it starts, or starts where it ends) counts in precision_Ω's
denominator (``touch=True`` of :func:`precision_omega`). Both rules change the metrics only, not
what is retrieved; with them chunklab gives the numbers of Chroma's own function.

``retrieved_chars``, ``retrieved_tokens``
    tok@k: characters (cl100k tokens with ``count_tokens=True``) handed to the reader, duplicates
    included.
``duplication``
    share of retrieved characters that repeat a character retrieved already
    (``1 - |union(R)| / sum(|c|)``; 0 when nothing is retrieved).
``cite_at_1``, ``cite_distance``
    citation localisation: the top chunk shares a character with a gold span; and the distance in
    characters from the top chunk to the nearest gold span of the same document (0 when they
    overlap, NaN when the top chunk is in another document or nothing was retrieved).
``irrelevant_share``
    claim C16: over the hitting chunks of ``R``, the mean share of their characters outside the
    evidence (NaN when nothing hits).

With a context budget (:func:`select_budget`, claim C26) the retrieved set is de-duplicated, so
the character counts above use ``|union(R)|`` instead of the sum.

Structural metrics of a chunking, independent of questions, are in
:func:`~chunklab.evaluation.structure.structure_metrics`; miss attribution in
:func:`~chunklab.evaluation.misses.attribute_misses`.

>>> from chunklab.core import Document, Chunk
>>> doc = Document("d", "甲乙丙丁戊己庚辛")
>>> chunks = [Chunk("d", 0, 0, 4, "甲乙丙丁"), Chunk("d", 1, 4, 8, "戊己庚辛")]
>>> m = question_metrics([[1, 0]], chunks, [[("d", 5, 7)]], k=1, documents=[doc])
>>> float(m["hit"][0]), float(m["precision"][0]), float(m["iou"][0])
(1.0, 0.5, 0.5)
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..length import count_tokens as _count_tokens
from ..params import Param
from ..retrieval.bm25 import _check_k
from ..retrieval.layout import Layout
from ..retrieval.layout import union as _union

__all__ = ["METRICS", "METRIC_RULES", "Layout", "question_metrics", "precision_omega", "select_budget",
           "chroma_bounds"]

#: Whose rules the metrics follow: chunklab's (the default) or Chroma's, which differ in two places
#: (see :func:`chroma_bounds` and ``touch`` of :func:`precision_omega`).
METRIC_RULES: tuple[str, ...] = ("chunklab", "chroma")

#: Per-question metrics, in the order summaries show them. ``higher`` tells which way is better.
METRICS: dict[str, dict[str, Any]] = {
    "hit": {"higher": True, "doc": "a top-k chunk holds >= half of a gold span"},
    "hit_strict": {"higher": True, "doc": "a top-k chunk holds a whole gold span"},
    "mrr": {"higher": True, "doc": "1 / rank of the first hitting chunk"},
    "recall": {"higher": True, "doc": "share of gold characters inside the top-k"},
    "complete_single": {"higher": True, "doc": "every gold span inside one top-k chunk"},
    "complete_union": {"higher": True, "doc": "every gold span inside the union of the top-k"},
    "precision": {"higher": True, "doc": "Chroma precision (retrieved chars with duplicates)"},
    "iou": {"higher": True, "doc": "Chroma IoU"},
    "precision_omega": {"higher": True, "doc": "Chroma precision_Ω (all chunks overlapping the evidence)"},
    "retrieved_chars": {"higher": False, "doc": "characters retrieved (tok@k, chars)"},
    "duplication": {"higher": False, "doc": "share of retrieved characters that repeat"},
    "cite_at_1": {"higher": True, "doc": "top chunk overlaps the evidence"},
    "cite_distance": {"higher": False, "doc": "chars from the top chunk to the evidence (same doc)"},
    "irrelevant_share": {"higher": False, "doc": "share of a hitting chunk's chars outside the evidence (C16)"},
    "n_retrieved": {"higher": None, "doc": "chunks retrieved"},
}


def _union_len(s: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Length of the union of intervals, row by row (empty intervals have e <= s)."""
    e = np.maximum(e, s)
    order = np.argsort(s, axis=-1, kind="stable")
    s = np.take_along_axis(s, order, axis=-1)
    e = np.take_along_axis(e, order, axis=-1)
    reach = np.maximum.accumulate(e, axis=-1)
    prev = np.concatenate((np.full(s.shape[:-1] + (1,), np.iinfo(np.int64).min // 2), reach[..., :-1]), axis=-1)
    return np.maximum(0, e - np.maximum(s, prev)).sum(axis=-1)


# --------------------------------------------------------------------------------------------
# Per-question metrics
# --------------------------------------------------------------------------------------------

def chroma_bounds(chunks: Sequence[Any], layout: Layout) -> tuple[np.ndarray, np.ndarray]:
    """Global bounds of ``chunks`` under Chroma's placement rule: each chunk at the first occurrence
    of its text in its document, a trailing ``"."`` stripped first (as ``rigorous_document_search``
    of Chroma's ``chunking_evaluation`` does); a text not found keeps the chunk's own offsets.

    >>> from chunklab.core import Chunk, Document
    >>> lay = Layout([Document("d", "ab. ab. x")])
    >>> [b.tolist() for b in chroma_bounds([Chunk("d", 0, 0, 3, "ab."), Chunk("d", 1, 4, 7, "ab.")], lay)]
    [[0, 0], [2, 2]]
    """
    starts, ends = [], []
    for c in chunks:
        text = c.text[:-1] if c.text.endswith(".") else c.text
        at = layout.texts[layout.doc_index(c.doc_id)].find(text)
        if at < 0:
            at, text = c.start, c.text
        starts.append(at)
        ends.append(at + len(text))
    cgs, cge = layout.chunk_bounds(chunks)
    own = np.fromiter((c.start for c in chunks), dtype=np.int64, count=len(chunks))
    off = cgs - own
    return off + np.asarray(starts, dtype=np.int64), off + np.asarray(ends, dtype=np.int64)


def question_metrics(ranked: Any, chunks: Sequence[Any], gold: Any, k: int = 5,
                     documents: Sequence[Any] | None = None, layout: Layout | None = None,
                     dedup: bool = False, count_tokens: bool = False,
                     bounds: tuple[np.ndarray, np.ndarray] | None = None, ends: Any = None,
                     rules: str = "chunklab") -> dict[str, np.ndarray]:
    """Per-question metrics (see the module docstring) for rankings of chunk indices.

    ``ranked`` is an n_questions x depth array of chunk indices, best first, -1 for "none";
    the first ``k`` columns are the retrieved set. ``gold`` is, per question, a list of spans
    (objects with ``doc_id/start/end`` or ``(doc_id, start, end)`` tuples). ``dedup=True`` counts
    retrieved characters once (for budget selections). ``ends`` (same shape as ``ranked``, global
    ends as :func:`select_budget` returns them with ``return_ends=True``) cuts retrieved chunks
    short: a budget's last chunk counts only the part that was delivered. ``rules``: ``"chunklab"``
    or ``"chroma"`` (see the module docstring; with ``"chroma"``, ``bounds`` are ignored and the
    chunks placed by :func:`chroma_bounds`).

    >>> from chunklab.core import Document, Chunk
    >>> doc = Document("d", "0123456789")
    >>> cs = [Chunk("d", 0, 0, 6, "012345"), Chunk("d", 1, 4, 10, "456789")]
    >>> m = question_metrics([[0, 1]], cs, [[("d", 4, 8)]], k=2, documents=[doc])
    >>> float(m["recall"][0]), round(float(m["duplication"][0]), 3), round(float(m["precision"][0]), 3)
    (1.0, 0.167, 0.333)
    """
    k = _check_k(k)
    if layout is None:
        if documents is None:
            raise ValueError("pass documents or layout")
        layout = Layout(documents)
    if rules not in METRIC_RULES:
        raise ValueError(f"rules must be one of {', '.join(map(repr, METRIC_RULES))}, got {rules!r}")
    if rules == "chroma":
        cgs, cge = chroma_bounds(chunks, layout)
    else:
        cgs, cge = bounds if bounds is not None else layout.chunk_bounds(chunks)
    if isinstance(gold, tuple) and len(gold) == 2 and isinstance(gold[0], np.ndarray):
        gs, ge = gold
    else:
        gs, ge = layout.gold_bounds(gold)
    R = np.asarray(ranked, dtype=np.int64)
    if R.ndim != 2 or R.shape[0] != gs.shape[0]:
        raise ValueError(f"ranked must be n_questions x depth with n_questions={gs.shape[0]}, got shape {R.shape}")
    R = R[:, :k]
    if R.shape[1] < k:
        R = np.pad(R, ((0, 0), (0, k - R.shape[1])), constant_values=-1)
    if R.size and R.max() >= len(cgs):
        raise ValueError(f"ranked holds chunk index {int(R.max())}, but there are only {len(cgs)} chunks")
    rv = R >= 0
    Rc = np.where(rv, R, 0)
    cs = np.where(rv, cgs[Rc] if len(cgs) else -1, -1)
    ce = np.where(rv, cge[Rc] if len(cgs) else -1, -1)
    if ends is not None:
        cut = np.asarray(ends, dtype=np.int64)
        if cut.shape != np.asarray(ranked).shape:
            raise ValueError(f"ends must have the shape of ranked {np.asarray(ranked).shape}, got {cut.shape}")
        cut = cut[:, :k]
        if cut.shape[1] < k:
            cut = np.pad(cut, ((0, 0), (0, k - cut.shape[1])), constant_values=-1)
        ce = np.where(rv & (cut >= 0), np.minimum(ce, np.maximum(cut, cs)), ce)
    clen = ce - cs
    gv = ge > gs
    glen = np.where(gv, ge - gs, 0)
    E = glen.sum(axis=1)

    lo = np.maximum(cs[:, :, None], gs[:, None, :])
    hi = np.minimum(ce[:, :, None], ge[:, None, :])
    inter = np.maximum(0, hi - lo) * (rv[:, :, None] & gv[:, None, :])
    hit_pair = (inter > 0) & (2 * inter >= glen[:, None, :])
    hit_chunk = hit_pair.any(axis=2)
    contains = (cs[:, :, None] <= gs[:, None, :]) & (ce[:, :, None] >= ge[:, None, :]) & rv[:, :, None] & gv[:, None, :]
    hit = hit_chunk.any(axis=1)
    first = np.argmax(hit_chunk, axis=1)
    mrr = np.where(hit, 1.0 / (first + 1), 0.0)

    # Union of the chunks' intersections with each gold span (per span, over the k chunks).
    ls = np.where(inter > 0, lo, 0).transpose(0, 2, 1)
    he = np.where(inter > 0, hi, 0).transpose(0, 2, 1)
    cov_span = _union_len(ls, he) if k else np.zeros(gs.shape, dtype=np.int64)
    covered = cov_span.sum(axis=1)
    recall = np.where(E > 0, covered / np.maximum(E, 1), 0.0)
    complete_single = np.all(contains.any(axis=1) | ~gv, axis=1)
    complete_union = np.all((cov_span >= glen) | ~gv, axis=1)

    total = clen.sum(axis=1)
    union_r = _union_len(np.where(rv, cs, 0), np.where(rv, ce, 0))
    denom = union_r if dedup else total
    precision = np.where(denom > 0, covered / np.maximum(denom, 1), 0.0)
    iou_den = denom + E - covered
    iou = np.where(iou_den > 0, covered / np.maximum(iou_den, 1), 0.0)
    duplication = np.where(total > 0, 1 - union_r / np.maximum(total, 1), 0.0)

    cite = (inter[:, 0, :] > 0).any(axis=1) & rv[:, 0]
    top_doc = layout.doc_of(cs[:, 0])
    g_doc = layout.doc_of(np.maximum(gs, 0))
    gap = np.maximum(0, np.maximum(gs - ce[:, :1], cs[:, :1] - ge))
    gap = np.where(gv & (g_doc == top_doc[:, None]) & rv[:, :1], gap, np.iinfo(np.int64).max)
    dist = gap.min(axis=1).astype(float)
    dist[dist >= np.iinfo(np.int64).max / 2] = np.nan

    in_ev = inter.sum(axis=2)
    irr = np.where(hit_chunk, 1 - in_ev / np.maximum(clen, 1), 0.0)
    n_hit = hit_chunk.sum(axis=1)
    irrelevant = np.where(n_hit > 0, irr.sum(axis=1) / np.maximum(n_hit, 1), np.nan)

    out = {
        "hit": hit.astype(float), "hit_strict": contains.any(axis=(1, 2)).astype(float), "mrr": mrr,
        "recall": recall, "complete_single": complete_single.astype(float),
        "complete_union": complete_union.astype(float), "precision": precision, "iou": iou,
        "precision_omega": precision_omega(cgs, cge, gs, ge, touch=rules == "chroma"),
        "retrieved_chars": denom.astype(float), "duplication": duplication,
        "cite_at_1": cite.astype(float), "cite_distance": dist, "irrelevant_share": irrelevant,
        "n_retrieved": rv.sum(axis=1).astype(float),
    }
    if count_tokens:
        texts = [c.text for c in chunks]
        cache: dict[int, int] = {}

        def tok(i: int) -> int:
            if i not in cache:
                cache[i] = _count_tokens(texts[i])
            return cache[i]

        if ends is None:
            out["retrieved_tokens"] = np.array([sum(tok(int(i)) for i in row if i >= 0) for row in R], dtype=float)
        else:  # a cut chunk counts the tokens of the part delivered
            out["retrieved_tokens"] = np.array(
                [sum(tok(int(i)) if e == cge[i] else _count_tokens(texts[i][:int(e - cgs[i])])
                     for i, e in zip(row, erow) if i >= 0) for row, erow in zip(R, ce)], dtype=float)
    return out


def _overlapping(order: np.ndarray, s_sorted: np.ndarray, cge: np.ndarray, maxlen: int, a: int, b: int,
                 touch: bool = False) -> np.ndarray:
    """Indices of chunks sharing at least one character with ``[a, b)`` (``touch``: or touching it)."""
    lo = np.searchsorted(s_sorted, a - maxlen, side="left")
    hi = np.searchsorted(s_sorted, b, side="right" if touch else "left")
    cand = order[lo:hi]
    return cand[cge[cand] >= a] if touch else cand[cge[cand] > a]


def precision_omega(cgs: np.ndarray, cge: np.ndarray, gs: np.ndarray, ge: np.ndarray, touch: bool = False) -> np.ndarray:
    """Chroma's precision_Ω per question from global chunk and (padded) gold bounds.

    precision_Ω is the length of the gold covered by chunks, divided by the length of the union of
    the chunks overlapping the gold plus the gold they miss. ``touch=True`` (Chroma's rule) also
    counts in the denominator a chunk that only touches a span (ends at its start or starts at its
    end). Questions with one gold span are computed for all at once (see
    :func:`_precision_omega_single`); the others one by one (:func:`_precision_omega_loop`).

    >>> cgs, cge = np.array([0, 10, 20]), np.array([10, 20, 30])
    >>> gs, ge = np.array([[10]]), np.array([[20]])
    >>> float(precision_omega(cgs, cge, gs, ge)[0]), round(float(precision_omega(cgs, cge, gs, ge, touch=True)[0]), 4)
    (1.0, 0.3333)
    """
    n = gs.shape[0]
    out = np.zeros(n)
    if len(cgs) == 0 or n == 0:
        return out
    valid = ge > gs
    single = valid.sum(axis=1) == 1
    if single.any():
        col = np.argmax(valid, axis=1)
        rows = np.flatnonzero(single)
        out[rows] = _precision_omega_single(cgs, cge, gs[rows, col[rows]], ge[rows, col[rows]], touch)
    rest = np.flatnonzero(~single)
    if len(rest):
        out[rest] = _precision_omega_loop(cgs, cge, gs[rest], ge[rest], touch)
    return out


def _precision_omega_single(cgs: np.ndarray, cge: np.ndarray, a: np.ndarray, b: np.ndarray,
                            touch: bool = False) -> np.ndarray:
    """precision_Ω of gold spans ``[a, b)``, one per question, without a loop.

    With L / R the smallest start / largest end of the chunks overlapping ``[a, b)``, their union
    is ``[L, a)`` + the covered part of ``[a, b)`` + ``[b, R)`` (the chunk starting at L reaches
    past a, the one ending at R starts before b, and any chunk covering a point of ``[a, b)``
    overlaps it). So the denominator is ``max(0, a - L) + max(0, R - b) + |gold|`` and the
    numerator the covered part of ``[a, b)``, read off the union of all chunks. With ``touch``, the
    chunks counted are those with ``start <= b`` and ``end >= a``.
    """
    order = np.argsort(cgs, kind="stable")
    s = cgs[order]
    e = np.maximum(cge[order], s)
    reach = np.maximum.accumulate(e)
    # L: the first chunk in start order whose end passes a is the first where the running max does
    first = np.searchsorted(reach, a, side="left" if touch else "right")
    last = np.searchsorted(s, b, side="right" if touch else "left") - 1  # chunks starting before b (touch: at b)
    hit = (last >= 0) & ((reach[np.maximum(last, 0)] >= a) if touch else (reach[np.maximum(last, 0)] > a))
    L = s[np.minimum(first, len(s) - 1)]
    R = reach[np.maximum(last, 0)]
    # the union of all chunks as disjoint components, with cumulative lengths
    new = np.ones(len(s), dtype=bool)
    new[1:] = s[1:] > reach[:-1]
    us = s[new]
    ue = reach[np.r_[np.flatnonzero(new)[1:] - 1, len(s) - 1]]
    before = np.concatenate(([0], np.cumsum(ue - us)[:-1]))

    def covered_below(x: np.ndarray) -> np.ndarray:
        j = np.searchsorted(us, x, side="right") - 1
        jj = np.maximum(j, 0)
        part = before[jj] + np.clip(x - us[jj], 0, ue[jj] - us[jj])
        return np.where(j >= 0, part, 0)

    num = (covered_below(b) - covered_below(a)).astype(float)
    den = np.maximum(0, a - L) + np.maximum(0, R - b) + (b - a)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(hit & (num > 0), num / den, 0.0)


def _precision_omega_loop(cgs: np.ndarray, cge: np.ndarray, gs: np.ndarray, ge: np.ndarray,
                          touch: bool = False) -> np.ndarray:
    """precision_Ω question by question, for any number of gold spans (padding: ``ge <= gs``)."""
    n = gs.shape[0]
    out = np.zeros(n)
    if len(cgs) == 0:
        return out
    order = np.argsort(cgs, kind="stable")
    s_sorted = cgs[order]
    maxlen = int((cge - cgs).max())
    for qi in range(n):
        spans = [(int(a), int(b)) for a, b in zip(gs[qi], ge[qi]) if b > a]
        chunk_iv: list[tuple[int, int]] = []
        num_iv: list[tuple[int, int]] = []
        for a, b in spans:
            for c in _overlapping(order, s_sorted, cge, maxlen, a, b, touch):
                s, e = int(cgs[c]), int(cge[c])
                chunk_iv.append((s, e))
                if min(e, b) > max(s, a):
                    num_iv.append((max(s, a), min(e, b)))
        num = sum(e - s for s, e in _union(num_iv))
        if num:
            unused = _subtract(spans, _union(num_iv))
            den = sum(e - s for s, e in _union(chunk_iv + unused))
            out[qi] = num / den
    return out


def _subtract(spans: list[tuple[int, int]], cover: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out = []
    for a, b in spans:
        pos = a
        for s, e in cover:
            if e <= pos or s >= b:
                continue
            if s > pos:
                out.append((pos, s))
            pos = max(pos, e)
        if pos < b:
            out.append((pos, b))
    return out


# --------------------------------------------------------------------------------------------
# Context budget (claim C26)
# --------------------------------------------------------------------------------------------

_BUDGET = Param("int", 2000, "context budget", low=1)
_UNIT = Param("choice", "chars", "unit of the budget", choices=("chars", "tokens"))
#: How a budget is filled when the next chunk does not fit, most faithful to "the same amount of
#: text" first: ``"cut"`` takes the part of it that fits (as a prompt builder truncates the last
#: passage) and stops; ``"skip"`` passes over it and tries the next ones down the ranking;
#: ``"stop"`` ends the filling there (the book's rule before 2026-12, which let a configuration of
#: large chunks deliver far less text than the budget).
BUDGET_FILLS = ("cut", "skip", "stop")
_FILL = Param("choice", "cut", "how a budget is filled past a chunk that does not fit", choices=BUDGET_FILLS)


def _cut_end(text: str, s: int, e: int, cover: list[tuple[int, int]], room: int, unit: str) -> int:
    """The largest end ``x <= e`` such that the new part of ``[s, x)`` costs at most ``room``."""
    def cost(x: int) -> int:
        new = _subtract([(s, x)], cover)
        if unit == "chars":
            return sum(b - a for a, b in new)
        return sum(_count_tokens(text[a - s:b - s]) for a, b in new)
    if unit == "chars":
        # walk the new pieces: the cut falls inside the piece where the room runs out
        x, left = s, room
        for a, b in _subtract([(s, e)], cover):
            if b - a >= left:
                return a + left
            left -= b - a
            x = b
        return x
    lo, hi = s, e   # tokens: bisect on the end (cost is monotone in x)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if cost(mid) <= room:
            lo = mid
        else:
            hi = mid - 1
    return lo


def select_budget(ranked: Any, chunks: Sequence[Any], budget: int, unit: str = "chars",
                  layout: Layout | None = None, documents: Sequence[Any] | None = None,
                  bounds: tuple[np.ndarray, np.ndarray] | None = None, fill: str = "cut",
                  return_ends: bool = False) -> Any:
    """Fill a context budget from each ranking, de-duplicated by offsets.

    Walk the ranking best first. A chunk whose characters are all covered by chunks already taken
    is skipped; otherwise it costs only its *new* characters (``unit="chars"``) or the cl100k
    tokens of its new pieces (``unit="tokens"``). When the next chunk does not fit, ``fill``
    decides (:data:`BUDGET_FILLS`): ``"cut"`` (default) takes its beginning up to the room left and
    stops, so every configuration delivers the whole budget when its ranking is deep enough;
    ``"skip"`` tries the chunks further down; ``"stop"`` ends the filling. Returns
    n_questions x max_selected chunk indices, -1 padded; with ``return_ends`` also the global end
    of each taken piece (a cut chunk ends early; pass them to :func:`question_metrics` as ``ends``).

    >>> from chunklab.core import Document, Chunk
    >>> doc = Document("d", "0123456789")
    >>> cs = [Chunk("d", 0, 0, 6, "012345"), Chunk("d", 1, 4, 10, "456789"), Chunk("d", 2, 2, 4, "23")]
    >>> select_budget([[0, 2, 1]], cs, budget=10, documents=[doc]).tolist()
    [[0, 1]]
    >>> big = [Chunk("d", 0, 0, 8, "01234567"), Chunk("d", 1, 8, 10, "89")]
    >>> select_budget([[0, 1]], big, budget=5, documents=[doc], fill="stop").tolist()
    [[-1]]
    >>> idx, ends = select_budget([[0, 1]], big, budget=5, documents=[doc], return_ends=True)
    >>> idx.tolist(), ends.tolist()   # the first chunk, cut to its first 5 characters
    ([[0]], [[5]])
    >>> select_budget([[0, 1]], big, budget=5, documents=[doc], fill="skip").tolist()
    [[1]]
    """
    budget = _BUDGET.validate("budget", budget)
    unit = _UNIT.validate("unit", unit)
    fill = _FILL.validate("fill", fill)
    if layout is None:
        layout = Layout(documents if documents is not None else [])
    cgs, cge = bounds if bounds is not None else layout.chunk_bounds(chunks)
    rows: list[list[int]] = []
    row_ends: list[list[int]] = []
    for row in np.asarray(ranked, dtype=np.int64):
        taken: list[int] = []
        ends: list[int] = []
        cover: list[tuple[int, int]] = []
        used = 0
        for i in row:
            if i < 0 or used >= budget:
                break
            s, e = int(cgs[i]), int(cge[i])
            new = _subtract([(s, e)], cover)
            if not new:
                continue
            if unit == "chars":
                cost = sum(b - a for a, b in new)
            else:
                # New pieces are global [a, b) inside the chunk's global [s, e): slice the chunk's text.
                text = chunks[i].text
                cost = sum(_count_tokens(text[a - s:b - s]) for a, b in new)
            if used + cost > budget:
                if fill == "skip":
                    continue
                if fill == "cut":
                    x = _cut_end(chunks[i].text, s, e, cover, budget - used, unit)
                    if x > s and _subtract([(s, x)], cover):
                        taken.append(int(i))
                        ends.append(x)
                break
            used += cost
            taken.append(int(i))
            ends.append(e)
            cover = _union(cover + [(s, e)])
        rows.append(taken)
        row_ends.append(ends)
    width = max((len(r) for r in rows), default=0) or 1
    out = np.full((len(rows), width), -1, dtype=np.int64)
    end_arr = np.full((len(rows), width), -1, dtype=np.int64)
    for i, (r, en) in enumerate(zip(rows, row_ends)):
        out[i, :len(r)] = r
        end_arr[i, :len(en)] = en
    return (out, end_arr) if return_ends else out
