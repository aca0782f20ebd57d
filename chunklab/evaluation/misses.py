"""Miss attribution (article 000 §1.2): one symptom for each question whose evidence was not hit."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .metrics import _overlapping

__all__ = ["SYMPTOMS", "attribute_misses"]

#: Miss symptoms (article 000 §1.2), in the order the rules are tried. See :func:`attribute_misses`.
SYMPTOMS = ("not_indexed", "too_small", "cut", "diluted", "crowded", "ranked_low")


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
