"""Miss attribution: one symptom for each question whose evidence was not hit.

Two levels (the second in :mod:`~chunklab.evaluation.diagnose`, which re-runs the evaluation). :func:`attribute_misses` (run by every :func:`~chunklab.evaluation.evaluate`) reads
the chunk geometry and the ranking only: it is free, but its ``diluted`` is a *proxy* (the
evidence is a small share of the chunk holding it), not a proof that smaller chunks would help.
:func:`~chunklab.evaluation.diagnose.diagnose` re-runs the retriever on counterfactual chunkings, so each symptom of a question
whose evidence lies whole in some chunk names a change that would have turned *this* miss into
a hit: ``crowded`` (drop near duplicates from the ranking), ``diluted`` (cut the evidence's window
out as a chunk of its own), ``ranked_low`` (neither; ``rerank`` says whether a re-ranker over the
ranking's depth could still find the holding chunk).
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from .metrics import _overlapping

__all__ = ["SYMPTOMS", "attribute_misses"]

#: Miss symptoms, in the order the rules are tried. See :func:`attribute_misses` and :func:`~chunklab.evaluation.diagnose.diagnose`.
SYMPTOMS = ("not_indexed", "too_small", "cut", "diluted", "crowded", "ranked_low")


def attribute_misses(ranked: Any, hit: np.ndarray, gold: tuple[np.ndarray, np.ndarray], bounds: tuple[np.ndarray, np.ndarray],
                     k: int, question_ids: Sequence[str] | None = None, dilution: float = 0.1,
                     crowd_overlap: float = 0.5, retrieved: Any = None,
                     window_hit: Mapping[int, bool] | None = None) -> list[dict[str, Any]]:
    """Label each missed question (``hit == 0``); ``g`` = its longest gold span; rules in this order.

    1. ``not_indexed`` — no chunk shares a character with ``g``.
    2. ``too_small`` — no chunk holds ``g``; its pieces (2 or more) are each under ``|g| / 2``.
    3. ``cut`` — no chunk holds ``g``; its pieces are in different chunks.

    Below, some chunk holds ``g`` (a *holder*), but no holder was retrieved. Without ``window_hit``
    (what :func:`~chunklab.evaluation.evaluate` runs) rules 4-5 are cheap proxies:

    4. ``diluted`` — ``g`` is under ``dilution`` (10%) of the shortest holder;
    5. ``crowded`` — the retrieved set holds two chunks sharing more than ``crowd_overlap`` (50%)
       of the shorter one's characters.

    With ``window_hit`` (question index -> bool, from :func:`~chunklab.evaluation.diagnose.diagnose`)
    they are tested:

    4. ``diluted`` — the evidence's window, cut out as a chunk of its own, was retrieved;
    5. ``crowded`` — dropping near duplicates of better-ranked chunks from the ranking brings a
       holder into the retrieved slots.
    6. ``ranked_low`` — none of the above.

    Each record: ``question_id``, ``symptom``, ``evidence`` (global ``[start, end)``),
    ``container_rank`` (best rank of a holder in the ranking, else None), ``n_pieces`` (chunks
    overlapping ``g``), ``rerank`` (a holder is in the ranking, so a re-ranker could reach it) and
    ``window_hit`` (None when not tested), ``retrieved`` (how many chunks were retrieved for the
    question) and ``nothing_retrieved`` (none were: the question shares no term with any chunk, or
    only terms of idf 0; its symptom is still one of :data:`SYMPTOMS`, ``ranked_low`` when a chunk
    holds ``g``). ``retrieved`` (default: the first ``k`` columns of ``ranked``, -1 padded) is the
    retrieved set, e.g. a budget selection.
    """
    cgs, cge = bounds
    R = np.asarray(ranked, dtype=np.int64)
    out: list[dict[str, Any]] = []
    if len(cgs) == 0:
        order = np.zeros(0, dtype=np.int64); s_sorted = cgs; maxlen = 0
    else:
        order = np.argsort(cgs, kind="stable"); s_sorted = cgs[order]; maxlen = int((cge - cgs).max())
    for qi in np.flatnonzero(np.asarray(hit) == 0):
        a, b = _longest_span(gold, qi)
        glen = b - a
        pieces = _overlapping(order, s_sorted, cge, maxlen, a, b) if len(cgs) else np.zeros(0, np.int64)
        holders = pieces[(cgs[pieces] <= a) & (cge[pieces] >= b)]
        row = R[qi]
        got = int((np.asarray(row[:k] if retrieved is None else np.asarray(retrieved)[qi]) >= 0).sum())
        rank = None
        if len(holders):
            pos = np.flatnonzero(np.isin(row, holders))
            rank = int(pos[0]) + 1 if len(pos) else None
        wh = None if window_hit is None else window_hit.get(int(qi))
        if len(pieces) == 0:
            sym = "not_indexed"
        elif len(holders) == 0:
            small = np.all((cge[pieces] - cgs[pieces]) * 2 < glen)
            sym = "too_small" if len(pieces) >= 2 and small else "cut"
        elif window_hit is None:
            if glen < dilution * int((cge[holders] - cgs[holders]).min()):
                sym = "diluted"
            elif _crowded(row[:k] if retrieved is None else np.asarray(retrieved)[qi], cgs, cge, crowd_overlap):
                sym = "crowded"
            else:
                sym = "ranked_low"
        elif wh:
            sym = "diluted"
        else:
            slots = k if retrieved is None else int((np.asarray(retrieved)[qi] >= 0).sum())
            sym = "crowded" if _dedup_brings_in(row, holders, cgs, cge, crowd_overlap, max(slots, 1)) else "ranked_low"
        out.append({
            "question_id": question_ids[qi] if question_ids is not None else int(qi),
            "symptom": sym, "evidence": (a, b), "container_rank": rank, "n_pieces": int(len(pieces)),
            "rerank": rank is not None, "window_hit": wh, "retrieved": got, "nothing_retrieved": got == 0,
        })
    return out


def _longest_span(gold: tuple[np.ndarray, np.ndarray], qi: int) -> tuple[int, int]:
    """Global ``[start, end)`` of question ``qi``'s longest gold span (the first of the longest)."""
    gs, ge = gold
    j = int(np.argmax(ge[qi] - gs[qi]))
    return int(gs[qi, j]), int(ge[qi, j])


def _near_dup(i: int, j: int, cgs: np.ndarray, cge: np.ndarray, share: float) -> bool:
    """Do chunks ``i`` and ``j`` share more than ``share`` of the shorter one's characters?"""
    ov = min(int(cge[i]), int(cge[j])) - max(int(cgs[i]), int(cgs[j]))
    return ov > 0 and ov > share * min(int(cge[i] - cgs[i]), int(cge[j] - cgs[j]))


def _crowded(top: np.ndarray, cgs: np.ndarray, cge: np.ndarray, share: float) -> bool:
    """Do two of the ``top`` chunks share more than ``share`` of the shorter one's characters?"""
    top = [int(i) for i in top if i >= 0]
    return any(_near_dup(top[x], top[y], cgs, cge, share) for x in range(len(top)) for y in range(x + 1, len(top)))


def _dedup_brings_in(row: np.ndarray, holders: np.ndarray, cgs: np.ndarray, cge: np.ndarray, share: float,
                     slots: int) -> bool:
    """Does a holder rank within ``slots`` once near duplicates of better-ranked chunks are dropped?"""
    kept: list[int] = []
    for i in (int(x) for x in row if x >= 0):
        if any(_near_dup(i, j, cgs, cge, share) for j in kept):
            continue
        if i in holders:
            return len(kept) < slots
        kept.append(i)
        if len(kept) >= slots:
            return False
    return False
