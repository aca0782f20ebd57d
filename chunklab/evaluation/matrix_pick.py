"""Which configuration of a matrix to take: the simplest of those not distinguishable from the best.

A matrix ranked by its quality column alone rewards the largest chunks (a grid with ``target:
5000`` "wins" on hit while handing the reader ten times the text). The book's rule instead: compare
every config with the best on the same questions (a paired bootstrap, corrected for the number of
comparisons), keep the group whose difference from the best cannot be told from noise, and take the
simplest of that group (:func:`simplicity`, the one definition of "simpler").

>>> rows = [{"label": "big", "target": 4000, "hit": 0.8}, {"label": "small", "target": 500, "hit": 0.75}]
>>> per_q = {"big": {"hit": [1, 1, 1, 0] * 5}, "small": {"hit": [1, 1, 0, 1] * 5}}
>>> r = recommend(rows, per_q, "big")
>>> r["group"], r["pick"], r["tests"]["small"]["significant"]
(['small', 'big'], 'small', False)
"""
from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from .stats import decide, paired_many

__all__ = ["SIMPLER", "simplicity", "recommend"]

#: What :func:`simplicity` orders by, in words (reports print it beside the pick).
SIMPLER = ("simpler = no overlap before overlap, no prefix (use_context) before a prefix, then the smaller "
           "size/target, then fewer parameters, then fewer characters delivered per question")


def _number(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else math.inf


def simplicity(row: Mapping[str, Any]) -> tuple:
    """A sort key of a matrix row (or config dict): the smaller, the simpler the configuration.

    "Simpler" is defined here once, knob by knob, in this order: no ``overlap`` (0 or absent) before
    some; no prefix (``use_context`` or ``prefix`` false or absent) before one; then the smaller
    ``size`` (or ``target``; neither given counts as largest): a smaller chunk hands the reader less
    text per retrieved chunk; then fewer size parameters set (``size``, ``target``, ``overlap``,
    ``min``, ``max``, ``prefix``); then fewer characters delivered per question
    (``retrieved_chars``); the label breaks a tie.

    >>> sorted([{"label": "b", "size": 512, "overlap": 50}, {"label": "a", "size": 1024, "overlap": 0},
    ...         {"label": "c", "size": 256, "overlap": 0}], key=simplicity)[0]["label"]
    'c'
    """
    params = [k for k in ("size", "target", "overlap", "min", "max", "prefix") if k in row]
    overlap = _number(row.get("overlap", 0))
    prefix = bool(row.get("prefix")) or bool(row.get("use_context"))
    size = _number(row.get("size", row.get("target")))
    return (overlap > 0, prefix, size, len(params), _number(row.get("retrieved_chars")), str(row.get("label", "")))


def recommend(rows: Sequence[Mapping[str, Any]], per_question: Mapping[str, Mapping[str, Sequence[float]]],
              best: str, metric: str = "hit", method: str = "holm", n: int = 2000, seed: int = 0,
              level: float = 0.95) -> dict[str, Any]:
    """The group of configs not distinguishable from ``best`` (a label) on ``metric``, and its pick.

    Every other row whose per-question values are in ``per_question`` (label -> metric -> values, the
    same questions in the same order) is compared with the best by a paired bootstrap of ``best -
    config``, all comparisons corrected together (:func:`~chunklab.evaluation.stats.paired_many`,
    Holm by default): a config whose corrected interval does not exclude 0 joins the best's group.
    The *pick* is the simplest config of the group (:func:`simplicity`).

    Returns ``{"metric", "method", "best", "pick", "group" (labels, simplest first), "simpler"
    (:data:`SIMPLER`), "tests": {label: {"diff", "lo", "hi", "level", "p", "p_adj", "significant",
    "verdict"}}}``: ``diff`` is best minus the config, ``verdict`` the word of
    :func:`~chunklab.evaluation.stats.decide` on the claim "the best is higher than this config".
    """
    by_label = {r["label"]: r for r in rows}
    if best not in by_label:
        raise ValueError(f"best must be the label of a row, got {best!r}")
    top = per_question.get(best, {}).get(metric)
    pairs = {} if top is None else {label: (list(top), list(per_question[label][metric])) for label in by_label
                                    if label != best and metric in per_question.get(label, {})}
    tests = paired_many(pairs, method=method, n=n, seed=seed, level=level, metric=metric) if pairs else {}
    out = {label: {"diff": r["diff"], "lo": r["lo"], "hi": r["hi"], "level": r["level"], "p": r["p"],
                   "p_adj": r["p_adj"], "significant": r["significant"], "verdict": decide(r, expect=1)}
           for label, r in tests.items()}
    group = sorted([best] + [label for label, r in tests.items() if not r["significant"]],
                   key=lambda label: simplicity(by_label[label]))
    return {"metric": metric, "method": method, "best": best, "pick": group[0], "group": group,
            "simpler": SIMPLER, "tests": out}
