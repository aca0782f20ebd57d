"""Bootstrap confidence intervals of per-question means, single, shared and paired."""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Sequence

import numpy as np

from ..params import Param

__all__ = ["bootstrap_ci", "bootstrap_many", "paired_bootstrap"]


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
