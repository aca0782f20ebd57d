"""Bootstrap confidence intervals of per-question means, single, shared and paired."""
from __future__ import annotations

import math
from functools import lru_cache
from typing import Any, Sequence

import numpy as np

from ..params import Param

__all__ = ["bootstrap_ci", "bootstrap_many", "paired_bootstrap", "paired_many", "adjust_pvalues", "decide",
           "VERDICTS", "CORRECTIONS"]


@lru_cache(maxsize=8)
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


_N = Param("int", 2000, "bootstrap resamples", low=1)
_SEED = Param("int", 0, "bootstrap seed", low=0)


def _check_boot(n: Any, seed: Any) -> None:
    _N.validate("n", n)
    _SEED.validate("seed", seed)


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

    ``significant`` is true when the interval excludes 0. ``p`` is the two-sided bootstrap p-value,
    ``2 * min(share of resampled means <= 0, share >= 0)`` (with the usual +1 so it is never 0); it
    is what :func:`paired_many` corrects when many comparisons are made at once.

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
        return {"diff": float("nan"), "lo": float("nan"), "hi": float("nan"), "significant": False, "n": 0,
                "p": 1.0, "level": level}
    means = _boot_means(d, n, seed)
    al = (1 - level) / 2
    lo, hi = np.percentile(means, [100 * al, 100 * (1 - al)])
    if np.all(d == 0):
        p = 1.0
    else:
        below = (np.count_nonzero(means <= 0) + 1) / (len(means) + 1)
        above = (np.count_nonzero(means >= 0) + 1) / (len(means) + 1)
        p = min(1.0, 2 * min(below, above))
    return {"diff": float(d.mean()), "lo": float(lo), "hi": float(hi),
            "significant": bool(lo > 0 or hi < 0), "n": int(len(d)), "p": float(p), "level": level}


#: The corrections for many comparisons :func:`adjust_pvalues` knows.
CORRECTIONS = ("holm", "bh", "none")


def adjust_pvalues(p: Sequence[float], method: str = "holm") -> list[float]:
    """p-values adjusted for ``len(p)`` comparisons made together.

    ``"holm"`` (Holm's step-down, controls the chance of *any* false positive) or ``"bh"``
    (Benjamini–Hochberg, controls the expected *share* of false positives among the positives);
    ``"none"`` returns them unchanged. A comparison is significant at level ``alpha`` when its
    adjusted p-value is below ``alpha``.

    >>> [round(x, 3) for x in adjust_pvalues([0.01, 0.04, 0.03], "holm")]
    [0.03, 0.06, 0.06]
    >>> [round(x, 3) for x in adjust_pvalues([0.01, 0.04, 0.03], "bh")]
    [0.03, 0.04, 0.04]
    """
    if method not in CORRECTIONS:
        raise ValueError(f"method must be one of {', '.join(CORRECTIONS)}, got {method!r}")
    ps = np.asarray(p, dtype=float)
    if ps.ndim != 1 or np.isnan(ps).any() or (ps < 0).any() or (ps > 1).any():
        raise ValueError("p must be a 1-D sequence of p-values in [0, 1]")
    m = len(ps)
    if method == "none" or m == 0:
        return [float(x) for x in ps]
    order = np.argsort(ps, kind="stable")
    ranked = ps[order]
    if method == "holm":
        adj = np.maximum.accumulate((m - np.arange(m)) * ranked)
    else:
        adj = np.minimum.accumulate((m / np.arange(m, 0, -1) * ranked[::-1]))[::-1]
    out = np.empty(m)
    out[order] = np.minimum(adj, 1.0)
    return [float(x) for x in out]


def paired_many(pairs: dict[str, tuple[Sequence[float], Sequence[float]]], method: str = "holm",
                n: int = 2000, seed: int = 0, level: float = 0.95) -> dict[str, dict[str, Any]]:
    """:func:`paired_bootstrap` of several comparisons made together, corrected for their number.

    Each result gains ``p_adj`` (the p-value adjusted by ``method``, see :func:`adjust_pvalues`),
    ``m`` (how many comparisons), ``method``, and ``significant`` becomes ``p_adj < 1 - level``;
    the uncorrected answer stays in ``significant_marginal``. The intervals ``lo``/``hi`` are the
    ordinary (marginal) ones: a comparison whose interval just clears 0 may still not be
    significant once corrected.

    >>> r = paired_many({"x": ([1, 0] * 20, [0, 0] * 20), "y": ([1, 0, 0, 0] * 10, [0, 0, 1, 0] * 10)})
    >>> r["x"]["significant"], r["y"]["significant"], r["x"]["m"]
    (True, False, 2)
    """
    if method not in CORRECTIONS:
        raise ValueError(f"method must be one of {', '.join(CORRECTIONS)}, got {method!r}")
    res = {name: paired_bootstrap(a, b, n=n, seed=seed, level=level) for name, (a, b) in pairs.items()}
    adj = adjust_pvalues([r["p"] for r in res.values()], method)
    for r, pa in zip(res.values(), adj):
        r["significant_marginal"] = r["significant"]
        r.update(p_adj=pa, m=len(res), method=method, significant=bool(pa < 1 - level) and r["n"] > 0)
    return res


#: The verdicts :func:`decide` returns, in English (the book's words are in ``chunklab.book.claims``).
VERDICTS = ("supported", "same direction, not significant", "opposite direction, not significant",
            "contradicted", "no difference", "non-inferior", "not shown")


def decide(result: dict[str, Any], expect: int = 1, margin: float | None = None) -> str:
    """The verdict on a claim from a paired comparison (:func:`paired_bootstrap` / :func:`paired_many`).

    ``expect``: the direction the claim predicts for ``diff = a - b`` (+1: a is higher, -1: a is
    lower). ``significant`` (the corrected one when the result comes from :func:`paired_many`)
    decides between "supported" / "contradicted" and the two "not significant" verdicts; an exact
    zero everywhere is "no difference".

    With ``margin`` the claim is "a is no worse than b" (e.g. "dropping overlap loses nothing"):
    "non-inferior" when the interval's worse end stays within ``margin`` of 0, "contradicted" when
    the interval lies wholly on the worse side, else "not shown". (``expect`` says which side is
    worse: +1 means a lower ``diff`` is worse.)

    >>> decide({"diff": 0.05, "lo": 0.01, "hi": 0.09, "significant": True})
    'supported'
    >>> decide({"diff": -0.009, "lo": -0.022, "hi": 0.0, "significant": False}, expect=1, margin=0.01)
    'not shown'
    """
    if expect not in (1, -1):
        raise ValueError(f"expect must be 1 or -1, got {expect!r}")
    diff, lo, hi = (float(result[k]) for k in ("diff", "lo", "hi"))
    if any(math.isnan(x) for x in (diff, lo, hi)):
        return "not shown"
    if margin is not None:
        if not margin >= 0:
            raise ValueError(f"margin must be >= 0, got {margin!r}")
        worse_end = lo if expect > 0 else -hi
        best_end = hi if expect > 0 else -lo
        if worse_end >= -margin:
            return "non-inferior"
        if best_end < 0 and result.get("significant", best_end < 0):
            return "contradicted"
        return "not shown"
    if diff == 0 and lo == 0 and hi == 0:
        return "no difference"
    if result.get("significant", lo > 0 or hi < 0):
        return "supported" if diff * expect > 0 else "contradicted"
    if diff * expect > 0:
        return "same direction, not significant"
    if diff == 0:
        return "no difference"
    return "opposite direction, not significant"
