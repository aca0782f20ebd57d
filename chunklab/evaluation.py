"""Evaluation: every metric the articles name, per question, with bootstrap confidence intervals.

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
    span; here a chunk must share at least one character.)
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

Structural metrics of a chunking, independent of questions, are in :func:`structure_metrics`;
miss attribution in :func:`attribute_misses`.

>>> from chunklab.core import Document, Chunk
>>> doc = Document("d", "甲乙丙丁戊己庚辛")
>>> chunks = [Chunk("d", 0, 0, 4, "甲乙丙丁"), Chunk("d", 1, 4, 8, "戊己庚辛")]
>>> m = question_metrics([[1, 0]], chunks, [[("d", 5, 7)]], k=1, documents=[doc])
>>> float(m["hit"][0]), float(m["precision"][0]), float(m["iou"][0])
(1.0, 0.5, 0.5)
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Iterable, Sequence

import numpy as np

__all__ = [
    "METRICS", "SYMPTOMS", "Layout", "question_metrics", "select_budget", "structure_metrics",
    "attribute_misses", "bootstrap_ci", "bootstrap_many", "paired_bootstrap", "compare", "evaluate", "EvalResult",
    "chunks_from_strings", "split_with",
]

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

#: Miss symptoms (article 000 §1.2), in the order the rules are tried. See :func:`attribute_misses`.
SYMPTOMS = ("not_indexed", "too_small", "cut", "diluted", "crowded", "ranked_low")


# --------------------------------------------------------------------------------------------
# Global coordinates
# --------------------------------------------------------------------------------------------

class Layout:
    """Documents placed one after another on one line (with a one-character gap between them).

    >>> from chunklab.core import Document
    >>> lay = Layout([Document("a", "12"), Document("b", "345")])
    >>> int(lay.to_global("b", 1))
    4
    """

    def __init__(self, documents: Sequence[Any]) -> None:
        docs = list(documents)
        self.doc_ids = [d.id for d in docs]
        self.pos = {d: i for i, d in enumerate(self.doc_ids)}
        if len(self.pos) != len(self.doc_ids):
            raise ValueError("documents must have distinct ids")
        self.lens = np.array([len(d.text) for d in docs], dtype=np.int64)
        self.offsets = np.concatenate(([0], np.cumsum(self.lens + 1)[:-1])).astype(np.int64) if docs else np.zeros(0, np.int64)

    def doc_index(self, doc_id: str) -> int:
        try:
            return self.pos[doc_id]
        except KeyError:
            raise ValueError(f"unknown document id {doc_id!r} (not in the corpus)") from None

    def to_global(self, doc_id: str, pos: int) -> int:
        return int(self.offsets[self.doc_index(doc_id)] + pos)

    def doc_of(self, g: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.offsets, g, side="right") - 1

    def chunk_bounds(self, chunks: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
        n = len(chunks)
        d = np.fromiter((self.doc_index(c.doc_id) for c in chunks), dtype=np.int64, count=n)
        s = np.fromiter((c.start for c in chunks), dtype=np.int64, count=n)
        e = np.fromiter((c.end for c in chunks), dtype=np.int64, count=n)
        return self.offsets[d] + s, self.offsets[d] + e

    def gold_bounds(self, span_lists: Sequence[Sequence[Any]]) -> tuple[np.ndarray, np.ndarray]:
        """Global gold spans, merged per question and padded: ``(gs, ge)`` of shape n_questions x M.

        Padding entries are ``(-2, -2)`` (they overlap nothing).
        """
        merged: list[list[tuple[int, int]]] = []
        for qi, spans in enumerate(span_lists):
            iv = []
            for sp_ in spans:
                doc_id, s, e = _span_fields(sp_)
                d = self.doc_index(doc_id)
                if not (0 <= s < e <= self.lens[d]):
                    raise ValueError(
                        f"question {qi}: gold span [{s}, {e}) must be non-empty and inside document {doc_id!r} "
                        f"(length {int(self.lens[d])})")
                iv.append((int(self.offsets[d] + s), int(self.offsets[d] + e)))
            if not iv:
                raise ValueError(f"question {qi} has no gold span")
            merged.append(_union(iv))
        m = max((len(x) for x in merged), default=1)
        gs = np.full((len(merged), m), -2, dtype=np.int64)
        ge = np.full((len(merged), m), -2, dtype=np.int64)
        for i, iv in enumerate(merged):
            for j, (s, e) in enumerate(iv):
                gs[i, j], ge[i, j] = s, e
        return gs, ge


def _span_fields(span: Any) -> tuple[str, int, int]:
    if hasattr(span, "doc_id"):
        return span.doc_id, int(span.start), int(span.end)
    doc_id, s, e = span
    return doc_id, int(s), int(e)


def _union(iv: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for s, e in sorted(iv):
        if out and s <= out[-1][1]:
            if e > out[-1][1]:
                out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return out


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

def question_metrics(ranked: Any, chunks: Sequence[Any], gold: Any, k: int = 5,
                     documents: Sequence[Any] | None = None, layout: Layout | None = None,
                     dedup: bool = False, count_tokens: bool = False,
                     bounds: tuple[np.ndarray, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """Per-question metrics (see the module docstring) for rankings of chunk indices.

    ``ranked`` is an n_questions x depth array of chunk indices, best first, -1 for "none";
    the first ``k`` columns are the retrieved set. ``gold`` is, per question, a list of spans
    (objects with ``doc_id/start/end`` or ``(doc_id, start, end)`` tuples). ``dedup=True`` counts
    retrieved characters once (for budget selections).

    >>> from chunklab.core import Document, Chunk
    >>> doc = Document("d", "0123456789")
    >>> cs = [Chunk("d", 0, 0, 6, "012345"), Chunk("d", 1, 4, 10, "456789")]
    >>> m = question_metrics([[0, 1]], cs, [[("d", 4, 8)]], k=2, documents=[doc])
    >>> float(m["recall"][0]), round(float(m["duplication"][0]), 3), round(float(m["precision"][0]), 3)
    (1.0, 0.167, 0.333)
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be an int >= 1, got {k!r}")
    if layout is None:
        if documents is None:
            raise ValueError("pass documents or layout")
        layout = Layout(documents)
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
        "precision_omega": precision_omega(cgs, cge, gs, ge),
        "retrieved_chars": denom.astype(float), "duplication": duplication,
        "cite_at_1": cite.astype(float), "cite_distance": dist, "irrelevant_share": irrelevant,
        "n_retrieved": rv.sum(axis=1).astype(float),
    }
    if count_tokens:
        from .length import count_tokens as _ct

        texts = [c.text for c in chunks]
        cache: dict[int, int] = {}

        def tok(i: int) -> int:
            if i not in cache:
                cache[i] = _ct(texts[i])
            return cache[i]

        out["retrieved_tokens"] = np.array([sum(tok(int(i)) for i in row if i >= 0) for row in R], dtype=float)
    return out


def _overlapping(order: np.ndarray, s_sorted: np.ndarray, cge: np.ndarray, maxlen: int, a: int, b: int) -> np.ndarray:
    """Indices of chunks sharing at least one character with ``[a, b)``."""
    lo = np.searchsorted(s_sorted, a - maxlen, side="left")
    hi = np.searchsorted(s_sorted, b, side="left")
    cand = order[lo:hi]
    return cand[cge[cand] > a]


def precision_omega(cgs: np.ndarray, cge: np.ndarray, gs: np.ndarray, ge: np.ndarray) -> np.ndarray:
    """Chroma's precision_Ω per question from global chunk and (padded) gold bounds.

    precision_Ω = |gold covered by chunks| / |union of the chunks overlapping the gold, plus the
    gold they miss|. Questions with one gold span are computed for all at once (see
    :func:`_precision_omega_single`); the others one by one (:func:`_precision_omega_loop`).
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
        out[rows] = _precision_omega_single(cgs, cge, gs[rows, col[rows]], ge[rows, col[rows]])
    rest = np.flatnonzero(~single)
    if len(rest):
        out[rest] = _precision_omega_loop(cgs, cge, gs[rest], ge[rest])
    return out


def _precision_omega_single(cgs: np.ndarray, cge: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """precision_Ω of gold spans ``[a, b)``, one per question, without a loop.

    With L / R the smallest start / largest end of the chunks overlapping ``[a, b)``, their union
    is ``[L, a)`` + the covered part of ``[a, b)`` + ``[b, R)`` (the chunk starting at L reaches
    past a, the one ending at R starts before b, and any chunk covering a point of ``[a, b)``
    overlaps it). So the denominator is ``max(0, a - L) + max(0, R - b) + |gold|`` and the
    numerator the covered part of ``[a, b)``, read off the union of all chunks.
    """
    order = np.argsort(cgs, kind="stable")
    s = cgs[order]
    e = np.maximum(cge[order], s)
    reach = np.maximum.accumulate(e)
    # L: the first chunk in start order whose end passes a is the first where the running max does
    first = np.searchsorted(reach, a, side="right")
    last = np.searchsorted(s, b, side="left") - 1  # chunks starting before b
    hit = (last >= 0) & (reach[np.maximum(last, 0)] > a)
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


def _precision_omega_loop(cgs: np.ndarray, cge: np.ndarray, gs: np.ndarray, ge: np.ndarray) -> np.ndarray:
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
            for c in _overlapping(order, s_sorted, cge, maxlen, a, b):
                s, e = int(cgs[c]), int(cge[c])
                chunk_iv.append((s, e))
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

def select_budget(ranked: Any, chunks: Sequence[Any], budget: int, unit: str = "chars",
                  layout: Layout | None = None, documents: Sequence[Any] | None = None,
                  bounds: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Fill a context budget from each ranking, de-duplicated by offsets.

    Walk the ranking best first. A chunk whose characters are all covered by chunks already taken
    is skipped; otherwise it costs only its *new* characters (``unit="chars"``) or the cl100k
    tokens of its new pieces (``unit="tokens"``). The first chunk that does not fit ends the
    filling (no smaller chunk further down is tried), so a chunk larger than the whole budget
    retrieves nothing. Returns n_questions x max_selected chunk indices, -1 padded.

    >>> from chunklab.core import Document, Chunk
    >>> doc = Document("d", "0123456789")
    >>> cs = [Chunk("d", 0, 0, 6, "012345"), Chunk("d", 1, 4, 10, "456789"), Chunk("d", 2, 2, 4, "23")]
    >>> select_budget([[0, 2, 1]], cs, budget=10, documents=[doc]).tolist()
    [[0, 1]]
    """
    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or budget < 1:
        raise ValueError(f"budget must be an int >= 1, got {budget!r}")
    if unit not in ("chars", "tokens"):
        raise ValueError(f"unit must be 'chars' or 'tokens', got {unit!r}")
    if layout is None:
        layout = Layout(documents if documents is not None else [])
    cgs, cge = bounds if bounds is not None else layout.chunk_bounds(chunks)
    if unit == "tokens":
        from .length import count_tokens as _ct
    rows: list[list[int]] = []
    for row in np.asarray(ranked, dtype=np.int64):
        taken: list[int] = []
        cover: list[tuple[int, int]] = []
        used = 0
        for i in row:
            if i < 0:
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
                cost = sum(_ct(text[a - s:b - s]) for a, b in new)
            if used + cost > budget:
                break
            used += cost
            taken.append(int(i))
            cover = _union(cover + [(s, e)])
        rows.append(taken)
    width = max((len(r) for r in rows), default=0) or 1
    out = np.full((len(rows), width), -1, dtype=np.int64)
    for i, r in enumerate(rows):
        out[i, :len(r)] = r
    return out


# --------------------------------------------------------------------------------------------
# Structure of a chunking (claims C15, C18, C21)
# --------------------------------------------------------------------------------------------

def _span_of(a: Any) -> tuple[int, int]:
    if isinstance(a, dict):
        return int(a["start"]), int(a["end"])
    if hasattr(a, "start"):
        return int(a.start), int(a.end)
    return int(a[0]), int(a[1])


def _paragraph_starts(text: str) -> np.ndarray:
    """Positions that start a paragraph: the first non-space character of the text or of a line."""
    arr = [m.end() for m in _PARA.finditer(text)]
    return np.array(arr, dtype=np.int64)


_PARA = re.compile(r"(?:^|\n)[^\S\n]*(?=\S)")


class _Structure:
    """Per-corpus positions used by :func:`structure_metrics`, computed once and cached."""

    def __init__(self, documents: Sequence[Any]) -> None:
        self.layout = Layout(documents)
        texts = [d.text for d in documents]
        joined = "\n".join(texts)  # the layout's one-character gaps, as newlines
        n = len(joined)
        space = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32)
        ws = np.isin(space, np.array([ord(c) for c in _WS], dtype=np.uint32)) if n else np.zeros(0, bool)
        # next_non_ws[p]: the first position >= p that is not whitespace (n if none).
        idx = np.where(ws, n, np.arange(n))
        self.next_non_ws = np.concatenate((np.minimum.accumulate(idx[::-1])[::-1], [n])).astype(np.int64)
        # prev_end[p]: the smallest q <= p with text[q:p] all whitespace (right-trim of an end at p).
        idx2 = np.where(ws, n + 1, np.arange(n) + 1)
        last = np.maximum.accumulate(np.where(idx2 == n + 1, 0, idx2))
        self.trim_end = np.concatenate(([0], last)).astype(np.int64)
        ps = []
        art_s, art_e = [], []
        self.has_articles = False
        for d, off in zip(documents, self.layout.offsets):
            ps.append(_paragraph_starts(d.text) + off)
            arts = d.meta.get("articles", ()) or ()
            if arts:
                self.has_articles = True
                sp_ = np.array([_span_of(a) for a in arts], dtype=np.int64).reshape(-1, 2) + off
                art_s.append(sp_[:, 0]); art_e.append(sp_[:, 1])
        self.para_starts = np.unique(np.concatenate(ps)) if ps else np.zeros(0, np.int64)
        if art_s:
            s_, e_ = np.concatenate(art_s), np.concatenate(art_e)
            s2 = self.next_non_ws[np.minimum(s_, n)]
            e2 = self.trim_end[np.minimum(e_, n)]
            ok = e2 > s2
            self.art_s, self.art_e = s2[ok], e2[ok]
        else:
            self.art_s = self.art_e = np.zeros(0, np.int64)
        self.art_starts = np.unique(self.art_s)
        self.doc_chars = int(sum(len(t) for t in texts))
        self.parse_failed = [bool(d.meta.get("parse_failed")) for d in documents]


#: Every whitespace character (str.isspace) below U+3001; U+3000 is the ideographic space.
_WS = "".join(chr(c) for c in range(0x3001) if chr(c).isspace())
_STRUCT_CACHE: dict[tuple[int, ...], tuple[Any, _Structure]] = {}


def _structure(documents: Sequence[Any]) -> _Structure:
    key = tuple(id(d) for d in documents)
    hit = _STRUCT_CACHE.get(key)
    if hit is None:
        if len(_STRUCT_CACHE) >= 4:
            _STRUCT_CACHE.clear()
        hit = _STRUCT_CACHE[key] = (list(documents), _Structure(documents))  # keeps ids alive
    return hit[1]


def structure_metrics(documents: Sequence[Any], chunks: Sequence[Any], ingest_seconds: float | None = None) -> dict[str, Any]:
    """Question-free measures of a chunking.

    * ``chunks``, ``total_chars`` (sum of chunk lengths), ``doc_chars``, ``overlap_inflation``
      (``total_chars / doc_chars``: 1.0 without overlap);
    * ``parse_failure_rate``: share of documents whose ``meta["parse_failed"]`` is true, and
      ``chunk_parse_failure_rate`` for chunks;
    * ``boundary_alignment`` (C15): share of chunks whose first non-space character starts a
      paragraph (the first non-space character of the document or of a line) or an article
      (``meta["articles"]`` spans — dicts with ``start``/``end``, objects, or pairs — at their
      first non-space character); ``paragraph_alignment`` and ``clause_alignment`` separately
      (the latter None without articles);
    * ``clause_cut_rate`` (C21): share of articles whose span (trimmed of surrounding whitespace)
      lies in no single chunk; None when no document has ``meta["articles"]``;
    * ``len_mean``, ``len_median``, ``len_p90``, ``len_max``, ``len_min``, ``len_std`` (C18, chars);
    * ``ingest_seconds`` when given.

    Per-corpus positions are cached, so measuring many chunkings of one corpus is cheap.

    >>> from chunklab.core import Document, Chunk
    >>> d = Document("d", "第一条 甲。\\n第二条 乙。", meta={"articles": [(0, 6), (7, 13)]})
    >>> m = structure_metrics([d], [Chunk("d", 0, 0, 9, "第一条 甲。\\n第二"), Chunk("d", 1, 9, 13, "条 乙。")])
    >>> m["boundary_alignment"], m["clause_cut_rate"], m["overlap_inflation"]
    (0.5, 0.5, 1.0)
    """
    st = _structure(documents)
    lens = np.array([c.end - c.start for c in chunks], dtype=float)
    out: dict[str, Any] = {
        "chunks": len(chunks),
        "total_chars": int(lens.sum()),
        "doc_chars": st.doc_chars,
        "overlap_inflation": float(lens.sum() / st.doc_chars) if st.doc_chars else float("nan"),
        "parse_failure_rate": float(np.mean(st.parse_failed)) if st.parse_failed else 0.0,
        "chunk_parse_failure_rate": float(np.mean([bool(c.meta.get("parse_failed")) for c in chunks])) if chunks else 0.0,
    }
    n = len(chunks)
    gs, ge = st.layout.chunk_bounds(chunks)
    starts = st.next_non_ws[gs] if n else gs
    in_para = _in_sorted(starts, st.para_starts)
    in_art = _in_sorted(starts, st.art_starts)
    out["boundary_alignment"] = float((in_para | in_art).mean()) if n else float("nan")
    out["paragraph_alignment"] = float(in_para.mean()) if n else float("nan")
    out["clause_alignment"] = (float(in_art.mean()) if n else float("nan")) if st.has_articles else None
    if st.has_articles:
        if len(st.art_s) == 0:
            out["clause_cut_rate"] = 0.0
        elif n == 0:
            out["clause_cut_rate"] = 1.0
        else:
            order = np.argsort(gs, kind="stable")
            s_sorted, reach = gs[order], np.maximum.accumulate(ge[order])
            j = np.searchsorted(s_sorted, st.art_s, side="right") - 1
            cut = (j < 0) | (reach[np.maximum(j, 0)] < st.art_e)
            out["clause_cut_rate"] = float(cut.mean())
    else:
        out["clause_cut_rate"] = None
    if n:
        out.update(len_mean=float(lens.mean()), len_median=float(np.median(lens)),
                   len_p90=float(np.percentile(lens, 90)), len_max=int(lens.max()), len_min=int(lens.min()),
                   len_std=float(lens.std()))
    else:
        out.update(len_mean=float("nan"), len_median=float("nan"), len_p90=float("nan"), len_max=0, len_min=0,
                   len_std=float("nan"))
    if ingest_seconds is not None:
        out["ingest_seconds"] = float(ingest_seconds)
    return out


def _in_sorted(x: np.ndarray, sorted_values: np.ndarray) -> np.ndarray:
    """``np.isin(x, sorted_values)`` for a sorted array, by binary search (no hashing or sorting)."""
    if len(sorted_values) == 0:
        return np.zeros(len(x), dtype=bool)
    pos = np.minimum(np.searchsorted(sorted_values, x), len(sorted_values) - 1)
    return sorted_values[pos] == x


def _skip_ws(text: str, p: int) -> int:
    while p < len(text) and text[p].isspace():
        p += 1
    return p


def _rskip_ws(text: str, p: int) -> int:
    while p > 0 and text[p - 1].isspace():
        p -= 1
    return p


# --------------------------------------------------------------------------------------------
# Miss attribution (article 000 §1.2)
# --------------------------------------------------------------------------------------------

def attribute_misses(ranked: Any, hit: np.ndarray, gold: tuple[np.ndarray, np.ndarray], bounds: tuple[np.ndarray, np.ndarray],
                     k: int, question_ids: Sequence[str] | None = None, dilution: float = 0.1,
                     crowd_overlap: float = 0.5, retrieved: Any = None) -> list[dict[str, Any]]:
    """Label each missed question (``hit == 0``) with one symptom; rules tried in this order.

    The *evidence* is the question's longest gold span ``g``; "overlapping" means sharing a
    character; ranks count from 1 in the ranking given (its depth may exceed ``k``).

    1. ``not_indexed`` — no chunk overlaps ``g`` (the chunker dropped it).
    2. ``too_small`` — no chunk holds ``g``; it overlaps several chunks, each shorter than
       ``|g| / 2`` (pieces too small to carry their subject or condition).
    3. ``cut`` — no chunk holds ``g``; its pieces are in different chunks.
    4. ``diluted`` — chunks hold ``g``, but ``g`` is less than ``dilution`` (10%) of the shortest
       of them, and none ranks in the top k.
    5. ``crowded`` — chunks hold ``g`` and rank below k, while the top k holds near duplicates: two
       chunks sharing more than ``crowd_overlap`` (50%) of the shorter one's characters.
    6. ``ranked_low`` — a chunk holding ``g`` exists and ranks below k.

    Each record: ``question_id``, ``symptom``, ``evidence`` (global ``[start, end)``),
    ``container_rank`` (best rank of a chunk holding ``g`` within the ranking, else None),
    ``n_pieces`` (chunks overlapping ``g``). ``retrieved`` (default: the first ``k`` columns of
    ``ranked``) is the set checked for crowding, e.g. a budget selection.
    """
    cgs, cge = bounds
    gs, ge = gold
    R = np.asarray(ranked, dtype=np.int64)
    out: list[dict[str, Any]] = []
    if len(cgs) == 0:
        order = np.zeros(0, dtype=np.int64); s_sorted = cgs; maxlen = 0
    else:
        order = np.argsort(cgs, kind="stable"); s_sorted = cgs[order]; maxlen = int((cge - cgs).max())
    for qi in np.flatnonzero(np.asarray(hit) == 0):
        lens = ge[qi] - gs[qi]
        j = int(np.argmax(lens))
        a, b = int(gs[qi, j]), int(ge[qi, j])
        glen = b - a
        pieces = _overlapping(order, s_sorted, cge, maxlen, a, b) if len(cgs) else np.zeros(0, np.int64)
        holders = pieces[(cgs[pieces] <= a) & (cge[pieces] >= b)]
        row = R[qi]
        rank = None
        if len(holders):
            pos = np.flatnonzero(np.isin(row, holders))
            rank = int(pos[0]) + 1 if len(pos) else None
        if len(pieces) == 0:
            sym = "not_indexed"
        elif len(holders) == 0:
            small = np.all((cge[pieces] - cgs[pieces]) * 2 < glen)
            sym = "too_small" if len(pieces) >= 2 and small else "cut"
        elif glen < dilution * int((cge[holders] - cgs[holders]).min()):
            sym = "diluted"
        elif _crowded(row[:k] if retrieved is None else np.asarray(retrieved)[qi], cgs, cge, crowd_overlap):
            sym = "crowded"
        else:
            sym = "ranked_low"
        out.append({
            "question_id": question_ids[qi] if question_ids is not None else int(qi),
            "symptom": sym, "evidence": (a, b), "container_rank": rank, "n_pieces": int(len(pieces)),
        })
    return out


def _crowded(top: np.ndarray, cgs: np.ndarray, cge: np.ndarray, share: float) -> bool:
    top = [int(i) for i in top if i >= 0]
    for x in range(len(top)):
        for y in range(x + 1, len(top)):
            i, j = top[x], top[y]
            ov = min(cge[i], cge[j]) - max(cgs[i], cgs[j])
            shorter = min(cge[i] - cgs[i], cge[j] - cgs[j])
            if ov > 0 and ov > share * shorter:
                return True
    return False


# --------------------------------------------------------------------------------------------
# Bootstrap
# --------------------------------------------------------------------------------------------

@lru_cache(maxsize=8)
@lru_cache(maxsize=4)
def _resample_weights(m: int, n: int, seed: int) -> np.ndarray:
    """n x m matrix: how often each of m items is drawn in each of n bootstrap resamples.

    Cached (read-only): a matrix of configurations resamples the same questions every time.
    """
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, m, size=(n, m))
    w = np.bincount((idx + (np.arange(n) * m)[:, None]).ravel(), minlength=n * m).reshape(n, m)
    w = w.astype(np.float64)
    w.flags.writeable = False
    return w


def _check_boot(n: Any, seed: Any) -> None:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be an int >= 1, got {n!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"seed must be an int, got {seed!r}")


def _boot_means(values: np.ndarray, n: int, seed: int) -> np.ndarray:
    """Bootstrap means of ``values`` (NaNs ignored: each resample's mean is over its non-NaN draws)."""
    v = np.asarray(values, dtype=float)
    w = _resample_weights(len(v), int(n), int(seed))
    ok = ~np.isnan(v)
    if ok.all():
        return w @ v / len(v)
    num = w @ np.where(ok, v, 0.0)
    den = w @ ok.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return num / den


def bootstrap_ci(values: Sequence[float], n: int = 2000, seed: int = 0, level: float = 0.95) -> dict[str, float]:
    """Mean with a percentile bootstrap interval (NaN values ignored).

    >>> r = bootstrap_ci([0, 1, 1, 1], n=200, seed=0)
    >>> r["mean"], r["lo"] <= r["mean"] <= r["hi"]
    (0.75, True)
    """
    _check_boot(n, seed)
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    v = np.asarray(values, dtype=float)
    if len(v) == 0 or np.isnan(v).all():
        return {"mean": float("nan"), "lo": float("nan"), "hi": float("nan"), "n": int((~np.isnan(v)).sum())}
    means = _boot_means(v, n, seed)
    a = (1 - level) / 2
    lo, hi = np.nanpercentile(means, [100 * a, 100 * (1 - a)])
    return {"mean": float(np.nanmean(v)), "lo": float(lo), "hi": float(hi), "n": int((~np.isnan(v)).sum())}


def bootstrap_many(values: dict[str, Sequence[float]], n: int = 2000, seed: int = 0,
                   level: float = 0.95) -> dict[str, dict[str, float]]:
    """:func:`bootstrap_ci` of several metrics over the same questions, with the same resamples.

    The NaN-free metrics share one matrix product, which is what makes it cheap in the matrix.
    """
    _check_boot(n, seed)
    names = list(values)
    arrs = {k: np.asarray(v, dtype=float) for k, v in values.items()}
    out: dict[str, dict[str, float]] = {}
    clean = [k for k in names if len(arrs[k]) and not np.isnan(arrs[k]).any()]
    if clean:
        m = len(arrs[clean[0]])
        if any(len(arrs[k]) != m for k in clean):
            raise ValueError("all metrics must have one value per question")
        w = _resample_weights(m, int(n), int(seed))
        means = w @ np.column_stack([arrs[k] for k in clean]) / m
        a = (1 - level) / 2
        qs = np.percentile(means, [100 * a, 100 * (1 - a)], axis=0)
        for j, k in enumerate(clean):
            out[k] = {"mean": float(arrs[k].mean()), "lo": float(qs[0, j]), "hi": float(qs[1, j]), "n": m}
    for k in names:
        if k not in out:
            out[k] = bootstrap_ci(arrs[k], n=n, seed=seed, level=level)
    return {k: out[k] for k in names}


def paired_bootstrap(a: Sequence[float], b: Sequence[float], n: int = 2000, seed: int = 0,
                     level: float = 0.95) -> dict[str, Any]:
    """Paired bootstrap of ``mean(a - b)`` over the same questions (pairs with a NaN dropped).

    ``significant`` is true when the interval excludes 0.

    >>> r = paired_bootstrap([1, 1, 1, 0] * 10, [0, 1, 0, 0] * 10, n=500)
    >>> r["diff"], r["significant"]
    (0.5, True)
    """
    _check_boot(n, seed)
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"a and b must be 1-D arrays of the same length, got shapes {a.shape} and {b.shape}")
    ok = ~(np.isnan(a) | np.isnan(b))
    d = a[ok] - b[ok]
    if len(d) == 0:
        return {"diff": float("nan"), "lo": float("nan"), "hi": float("nan"), "significant": False, "n": 0}
    means = _boot_means(d, n, seed)
    al = (1 - level) / 2
    lo, hi = np.percentile(means, [100 * al, 100 * (1 - al)])
    return {"diff": float(d.mean()), "lo": float(lo), "hi": float(hi),
            "significant": bool(lo > 0 or hi < 0), "n": int(len(d))}


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------

@dataclass
class EvalResult:
    """The outcome of :func:`evaluate`: per-question arrays, aggregates with CIs, structure, bad cases."""

    config: dict[str, Any]
    k: int
    question_ids: list[str]
    per_question: dict[str, np.ndarray]
    aggregate: dict[str, dict[str, float]]
    structure: dict[str, Any]
    bad_cases: list[dict[str, Any]]
    timings: dict[str, float] = field(default_factory=dict)
    budget: int | None = None
    ranked: np.ndarray | None = field(default=None, repr=False)

    @property
    def symptoms(self) -> dict[str, int]:
        """Count of misses per symptom (every symptom listed, zeros included)."""
        counts = {s: 0 for s in SYMPTOMS}
        for b in self.bad_cases:
            counts[b["symptom"]] += 1
        return counts

    def summary(self) -> dict[str, Any]:
        """One flat dict: ``config`` keys, ``<metric>`` means with ``<metric>_lo/_hi``, structure, symptoms."""
        out: dict[str, Any] = dict(self.config)
        out["k"] = self.k
        if self.budget is not None:
            out["budget"] = self.budget
        out["questions"] = len(self.question_ids)
        for name, agg in self.aggregate.items():
            out[name] = agg["mean"]
            out[f"{name}_lo"] = agg["lo"]
            out[f"{name}_hi"] = agg["hi"]
        for name, v in self.structure.items():
            out[name] = v
        for s, c in self.symptoms.items():
            out[f"miss_{s}"] = c
        for name, v in self.timings.items():
            out[f"{name}_seconds"] = v
        return out

    def table(self, metrics: Sequence[str] | None = None) -> str:
        """A small text table: metric, mean, 95% interval."""
        names = list(metrics or self.aggregate)
        lines = [f"{'metric':<18}{'mean':>10}  95% CI"]
        for n in names:
            a = self.aggregate[n]
            lines.append(f"{n:<18}{a['mean']:>10.4f}  [{a['lo']:.4f}, {a['hi']:.4f}]")
        return "\n".join(lines)

    def to_records(self) -> list[dict[str, Any]]:
        """One dict per question: ``question_id`` and every per-question metric (plain floats)."""
        names = list(self.per_question)
        cols = [self.per_question[n] for n in names]
        return [{"question_id": q, **{n: float(c[i]) for n, c in zip(names, cols)}}
                for i, q in enumerate(self.question_ids)]


def compare(a: EvalResult, b: EvalResult, metrics: Sequence[str] = ("hit", "recall", "mrr", "iou"),
            n: int = 2000, seed: int = 0, names: tuple[str, str] = ("a", "b")) -> dict[str, dict[str, Any]]:
    """Paired comparison of two results on the same questions, metric by metric.

    Each entry: ``mean_a``, ``mean_b``, ``diff`` (a - b), ``lo``, ``hi``, ``significant`` and
    ``winner`` — a name only when the interval excludes 0 (respecting whether higher is better),
    else None.
    """
    if list(a.question_ids) != list(b.question_ids):
        pos = {q: i for i, q in enumerate(b.question_ids)}
        if set(pos) != set(a.question_ids):
            raise ValueError("results must be on the same questions (question ids differ)")
        perm = np.array([pos[q] for q in a.question_ids])
    else:
        perm = None
    out = {}
    for m in metrics:
        if m not in a.per_question or m not in b.per_question:
            raise ValueError(f"unknown metric {m!r} (known: {', '.join(a.per_question)})")
        va = a.per_question[m]
        vb = b.per_question[m] if perm is None else b.per_question[m][perm]
        r = paired_bootstrap(va, vb, n=n, seed=seed)
        higher = METRICS.get(m, {}).get("higher", True)
        winner = None
        if r["significant"] and higher is not None:
            better_a = (r["diff"] > 0) == bool(higher)
            winner = names[0] if better_a else names[1]
        out[m] = {"mean_a": float(np.nanmean(va)), "mean_b": float(np.nanmean(vb)), **r, "winner": winner}
    return out


# --------------------------------------------------------------------------------------------
# The entry point
# --------------------------------------------------------------------------------------------

def evaluate(corpus_documents: Sequence[Any], chunks: Sequence[Any], questions: Sequence[Any], k: int = 5,
             tokenizer: str = "bigram", engine: Any = "fast", budget: int | None = None,
             budget_unit: str = "chars", use_context: bool = False, depth: int | None = None,
             index: Any = None, embedder: Callable | None = None, n_boot: int = 2000, seed: int = 0,
             count_tokens: bool = False, config: dict[str, Any] | None = None,
             ingest_seconds: float | None = None) -> EvalResult:
    """Retrieve for every question and measure.

    ``engine``: ``"fast"`` (:class:`~chunklab.retrieval.BM25Fast`, via ``index`` — a
    :class:`~chunklab.retrieval.CorpusIndex` built once and reused across chunkings — or one built
    here), ``"reference"`` (rank-bm25), ``"dense"`` or ``"hybrid"`` (BM25 + dense by reciprocal rank
    fusion; both need ``embedder``). Rankings go ``depth`` deep (default ``max(k, 50)``): the
    top ``k`` are scored, the rest serve the budget and the miss attribution. With ``budget``, the
    retrieved set is :func:`select_budget` of the ranking instead of its top ``k``.

    >>> from chunklab.core import Document, Chunk
    >>> from collections import namedtuple
    >>> Q = namedtuple("Q", "id question spans")
    >>> doc = Document("d", "合同的订立。合同的效力。违约责任。")
    >>> cs = [Chunk("d", 0, 0, 6, "合同的订立。"), Chunk("d", 1, 6, 12, "合同的效力。"), Chunk("d", 2, 12, 17, "违约责任。")]
    >>> r = evaluate([doc], cs, [Q("q1", "合同效力", [("d", 6, 11)])], k=1, n_boot=100)
    >>> r.aggregate["hit"]["mean"], r.symptoms["cut"]
    (1.0, 0)
    """
    from . import retrieval as rt

    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be an int >= 1, got {k!r}")
    if len(chunks) == 0:
        raise ValueError("chunks must hold at least one chunk")
    questions = list(questions)
    depth = max(k, 50) if depth is None else max(int(depth), k)
    layout = Layout(corpus_documents)
    bounds = layout.chunk_bounds(chunks)
    gold = layout.gold_bounds([q.spans for q in questions])
    qtexts = [q.question for q in questions]
    timings: dict[str, float] = {}

    t0 = time.perf_counter()
    ranking = None
    if isinstance(engine, str):
        if engine not in ("fast", "reference", "dense", "hybrid"):
            raise ValueError(f"engine must be 'fast', 'reference', 'dense' or 'hybrid', got {engine!r}")
        texts = None
        if engine in ("fast", "hybrid"):
            if index is None:
                index = rt.CorpusIndex(corpus_documents, tokenizer=tokenizer)
            bm = index.index_chunks(chunks, use_context=use_context)
            timings["index"] = time.perf_counter() - t0
            t1 = time.perf_counter()
            ranking = bm.search(index.encode_queries(qtexts), k=depth)
            timings["search"] = time.perf_counter() - t1
        elif engine == "reference":
            texts = [c.embed_text if use_context else c.text for c in chunks]
            ref = rt.BM25Reference(texts, tokenizer=tokenizer)
            timings["index"] = time.perf_counter() - t0
            t1 = time.perf_counter()
            ranking = ref.search(qtexts, k=depth)
            timings["search"] = time.perf_counter() - t1
        if engine in ("dense", "hybrid"):
            if embedder is None:
                raise ValueError(f"engine {engine!r} needs an embedder: a callable list[str] -> 2-D array")
            texts = [c.embed_text if use_context else c.text for c in chunks]
            t2 = time.perf_counter()
            dense = rt.DenseIndex(texts, embedder)
            timings["index"] = timings.get("index", 0.0) + time.perf_counter() - t2
            t1 = time.perf_counter()
            dr = dense.search(qtexts, k=depth)
            ranking = dr if ranking is None else rt.fuse([ranking, dr], k=depth)
            timings["search"] = timings.get("search", 0.0) + time.perf_counter() - t1
    elif hasattr(engine, "search"):
        t1 = time.perf_counter()
        ranking = engine.search(qtexts, k=depth)
        timings["search"] = time.perf_counter() - t1
    else:
        raise TypeError(f"engine must be a name or an object with .search(queries, k), got {type(engine).__name__}")

    t3 = time.perf_counter()
    ranked = ranking.ids
    if budget is not None:
        retrieved = select_budget(ranked, chunks, budget, unit=budget_unit, layout=layout, bounds=bounds)
        kk = retrieved.shape[1]
    else:
        retrieved, kk = ranked[:, :k], k
    pq = question_metrics(retrieved, chunks, gold, k=kk, layout=layout, dedup=budget is not None,
                          count_tokens=count_tokens, bounds=bounds)
    agg = bootstrap_many(pq, n=n_boot, seed=seed)
    ids = [str(getattr(q, "id", i)) for i, q in enumerate(questions)]
    bad = attribute_misses(ranked, pq["hit"], gold, bounds, kk, question_ids=ids, retrieved=retrieved)
    structure = structure_metrics(corpus_documents, chunks, ingest_seconds=ingest_seconds)
    timings["metrics"] = time.perf_counter() - t3
    cfg = dict(config or {})
    cfg.setdefault("engine", engine if isinstance(engine, str) else type(engine).__name__)
    cfg.setdefault("tokenizer", tokenizer if isinstance(tokenizer, str) else getattr(tokenizer, "name", "?"))
    cfg.setdefault("use_context", use_context)
    return EvalResult(cfg, k, ids, pq, agg, structure, bad, timings, budget, ranked)


# --------------------------------------------------------------------------------------------
# Adapters for other libraries' splitters
# --------------------------------------------------------------------------------------------

def _candidates_of(text: str, cand: str, prev_s: int, prev_e: int,
                   overlap: int | None) -> tuple[tuple[int, int] | None, tuple[int, int] | None]:
    """The two ways ``cand`` can follow ``[prev_s, prev_e)``: adjacent, and overlapping (or later)."""
    adjacent = None
    p = prev_e
    while True:
        if text.startswith(cand, p):
            adjacent = (p, p + len(cand))
            break
        if p >= len(text) or not text[p].isspace():
            break
        p += 1
    start_at = prev_s + 1 if overlap is None else max(prev_s + 1, prev_e - overlap)
    skip = adjacent[0] if adjacent is not None else -1
    pos = text.find(cand, start_at)
    while pos != -1 and (pos + len(cand) <= prev_e or pos == skip):
        pos = text.find(cand, pos + 1)
    return adjacent, (None if pos == -1 else (pos, pos + len(cand)))


def _candidates(text: str, piece: str, prev_s: int, prev_e: int,
                overlap: int | None) -> tuple[tuple[int, int] | None, tuple[int, int] | None]:
    """Like :func:`_candidates_of`; the piece verbatim first, stripped of whitespace only when
    the verbatim piece does not continue the sequence (neither adjacent nor overlapping)."""
    adj, oth = _candidates_of(text, piece, prev_s, prev_e, overlap)
    stripped = piece.strip()
    if adj is not None or (oth is not None and oth[0] < prev_e) or not stripped or stripped == piece:
        return adj, oth
    adj2, oth2 = _candidates_of(text, stripped, prev_s, prev_e, overlap)
    if oth is None or (oth2 is not None and oth2[0] < oth[0]):
        oth = oth2
    return adj2, oth


def _place_all(text: str, pieces: Sequence[str], overlap: int | None,
               budget: int) -> list[tuple[int, int] | None]:
    """Place every piece (the rules are in :func:`chunks_from_strings`); None where one cannot be.

    A depth-first search: each piece's places are tried in order of preference, and a piece that
    fits nowhere sends the search back to the latest piece with an untried place. When that fails
    too (or after ``budget`` steps in all), the greedy placements are restored, the piece is given
    up (None) and the search goes on; the pieces before it are then fixed.
    """
    n = len(pieces)
    result: list[tuple[int, int] | None] = [None] * n
    alts_of: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    taken = [0] * n
    kind_of = [-1] * n  # 0: only an adjacent place existed, 1: only an overlapping one, -1: else
    votes = [0, 0]
    placed: list[int] = []  # indices of placed pieces, in order
    floor = 0  # the search never revises placed[:floor]
    i = steps = 0
    while i < n:
        steps += 1
        piece = pieces[i]
        if not piece:
            i += 1  # an empty piece: nothing to place
            continue
        alts: list[tuple[int, int]] = []
        kind = -1
        if not placed:
            for cand in (piece, piece.strip()):
                pos = text.find(cand) if cand else -1
                if pos != -1:
                    alts.append((pos, pos + len(cand)))
                    break
        else:
            ps, pe = result[placed[-1]]  # type: ignore[misc]
            adj, oth = _candidates(text, piece, ps, pe, overlap)
            overlapping = oth is not None and oth[0] < pe
            if adj is not None and overlapping:  # ambiguous: go with what this splitter did so far
                alts = [oth, adj] if votes[1] > votes[0] else [adj, oth]  # type: ignore[list-item]
            else:
                alts = [x for x in (adj, oth) if x is not None]
                kind = 0 if adj is not None else (1 if overlapping else -1)
        if alts:
            alts_of[i], taken[i], kind_of[i], result[i] = alts, 0, kind, alts[0]
            if kind >= 0:
                votes[kind] += 1
            placed.append(i)
            i += 1
            continue
        snapshot = (list(result), list(placed), list(taken), list(votes))
        revised = False
        while steps < budget and len(placed) > floor:
            steps += 1
            j = placed[-1]
            if taken[j] + 1 < len(alts_of[j]):
                taken[j] += 1
                result[j] = alts_of[j][taken[j]]
                for x in range(j + 1, n):
                    result[x] = None
                i, revised = j + 1, True
                break
            placed.pop()
            result[j] = None
            if kind_of[j] >= 0:
                votes[kind_of[j]] -= 1
        if not revised:
            result, placed, taken, votes = (list(x) for x in snapshot)  # type: ignore[assignment]
            floor = len(placed)
            i += 1  # piece i stays None
    return result


def chunks_from_strings(document: Any, pieces: Sequence[str], strategy: str = "external",
                        on_missing: str = "raise", overlap: int | None = None) -> list[Any]:
    """Place another splitter's strings back into ``document`` as :class:`~chunklab.Chunk` s.

    The search is sequential and never jumps backwards. Piece ``i`` may go

    * right where piece ``i-1`` ended, or after whitespace there (the splitter went on where it
      left off, as a splitter without overlap always does), or
    * at its first occurrence after piece ``i-1``'s start that does not lie wholly inside piece
      ``i-1`` (a lossless splitter never emits a chunk inside its predecessor). When the
      splitter's largest overlap in characters is known (``overlap``; :func:`split_with` reads
      LangChain's ``chunk_overlap``), this search starts no earlier than ``overlap`` characters
      before piece ``i-1``'s end.

    When only one of these exists it is taken, and it tells how this splitter behaves (adjacent
    or overlapping). When both exist, text repeats back to back (after ``甲乙。甲乙。`` at 0 in
    ``甲乙。`` x 4, is the next ``甲乙。甲乙。`` at 3 or at 6?) and the behaviour seen so far in
    the document decides (adjacent on a tie). If a later piece then fits nowhere, the search goes
    back and tries the other place. A piece not found verbatim is retried with surrounding
    whitespace stripped (splitters often strip it); an empty piece is skipped. A piece that fits
    nowhere (e.g. one holding U+FFFD from a token splitter cutting a character) raises
    ``ValueError`` naming it, or is dropped with ``on_missing="skip"`` (``meta["missing"]`` on the
    next chunk counts drops).

    >>> from chunklab.core import Document
    >>> d = Document("d", "ab ab ab")
    >>> [(c.start, c.end) for c in chunks_from_strings(d, ["ab ab", "ab"])]
    [(0, 5), (6, 8)]
    >>> [(c.start, c.end) for c in chunks_from_strings(d, ["ab ab", "ab ab"])]
    [(0, 5), (3, 8)]
    """
    from .core import Chunk

    if on_missing not in ("raise", "skip"):
        raise ValueError(f"on_missing must be 'raise' or 'skip', got {on_missing!r}")
    if overlap is not None and (isinstance(overlap, bool) or not isinstance(overlap, int) or overlap < 0):
        raise ValueError(f"overlap must be an int >= 0 or None, got {overlap!r}")
    text = document.text
    pieces = list(pieces)
    places = _place_all(text, pieces, overlap, budget=50 * len(pieces) + 1000)
    out: list[Any] = []
    missing = last_end = 0
    for i, (piece, found) in enumerate(zip(pieces, places)):
        if not piece:
            continue  # an empty piece holds no text: nothing to place, nothing lost
        if found is None:
            if on_missing == "raise":
                preview = piece[:30].replace("\n", "⏎")
                raise ValueError(f"piece {i} ({preview!r}) was not found in document {document.id!r} "
                                 f"after position {last_end}")
            missing += 1
            continue
        s, e = found
        meta = {"strategy": strategy}
        if missing:
            meta["missing"] = missing
            missing = 0
        out.append(Chunk(document.id, len(out), s, e, text[s:e], meta))
        last_end = e
    return out


def _piece_text(item: Any) -> str:
    if isinstance(item, str):
        return item
    text = getattr(item, "text", None)
    if isinstance(text, str):
        return text
    raise TypeError(f"a splitter returned {type(item).__name__}, expected str or an object with .text")


def _char_overlap_hint(splitter: Any) -> int | None:
    """The splitter's overlap in characters, when it states one and measures it in characters.

    LangChain keeps ``_chunk_overlap`` measured with ``_length_function``; only when that is
    ``len`` is it a number of characters (with a token counter, 3 tokens may be 9 characters and
    a hint in the wrong unit would start the search too late).
    """
    overlap = getattr(splitter, "_chunk_overlap", None)
    if not isinstance(overlap, int) or isinstance(overlap, bool) or overlap < 0:
        return None
    return overlap if getattr(splitter, "_length_function", len) is len else None


def split_with(splitter: Any, documents: Sequence[Any], strategy: str | None = None,
               on_missing: str = "raise") -> list[Any]:
    """Chunk ``documents`` with another library's splitter and map its strings back to offsets.

    ``splitter`` is an object with ``split_text`` (LangChain), an object with ``chunk`` returning
    objects with ``.text`` (chonkie's chunkers), or any callable ``str -> list[str]`` (semchunk's
    ``chunkerify`` result, a plain function). The library's own offsets, where it reports any, are
    not used: every splitter goes through the same sequential search
    (:func:`chunks_from_strings`), so one mapping is tested for all of them. LangChain's
    ``chunk_overlap`` is passed on as the search's overlap hint when it is measured in characters.

    >>> from chunklab.core import Document
    >>> [(c.start, c.end) for c in split_with(lambda t: t.split("。"), [Document("d", "甲。乙。")])]
    [(0, 1), (2, 3)]
    """
    if hasattr(splitter, "split_text"):
        fn = splitter.split_text
    elif callable(getattr(splitter, "chunk", None)):
        fn = splitter.chunk
    elif callable(splitter):
        fn = splitter
    else:
        raise TypeError(f"splitter must be callable or have split_text() or chunk(), got {type(splitter).__name__}")
    name = strategy or type(splitter).__name__
    overlap = _char_overlap_hint(splitter)
    out: list[Any] = []
    for d in documents:
        pieces = [_piece_text(x) for x in fn(d.text)]
        out.extend(chunks_from_strings(d, pieces, strategy=name, on_missing=on_missing, overlap=overlap))
    return out
