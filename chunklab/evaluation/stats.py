"""Bootstrap confidence intervals of per-question means, single, shared and paired."""
from __future__ import annotations

import math
import numbers
from functools import lru_cache
from typing import Any, Sequence

import numpy as np
from scipy import special

from ..params import Param

__all__ = ["bootstrap_ci", "bootstrap_many", "paired_bootstrap", "paired_many", "mcnemar_exact", "adjust_pvalues",
           "deciding_levels", "decide",
           "EQUIVALENCE_MARGINS",
           "VERDICTS", "CORRECTIONS"]


#: Resample-by-item matrices up to this many entries (n_boot x items) are built whole, as they
#: always were: their results are the same to the last bit. Larger ones are built in blocks of rows.
_WHOLE_MAX = 1 << 23
#: Matrices up to this many entries (16 MB) are kept in the cache; larger ones are rebuilt each time.
_CACHE_MAX = 1 << 21
#: Entries per block of rows beyond :data:`_WHOLE_MAX` (about 24 bytes an entry while a block is built).
_BLOCK = 1 << 21


def _weights(m: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """n x m matrix: how often each of m items is drawn in each of n resamples (the next n x m draws of ``rng``)."""
    idx = rng.integers(0, m, size=(n, m))
    w = np.bincount((idx + (np.arange(n) * m)[:, None]).ravel(), minlength=n * m).reshape(n, m)
    return w.astype(np.float64)


@lru_cache(maxsize=8)
def _cached_weights(m: int, n: int, seed: int) -> np.ndarray:
    w = _weights(m, n, np.random.default_rng(seed))
    w.flags.writeable = False
    return w


def _resample_weights(m: int, n: int, seed: int) -> np.ndarray:
    """n x m matrix: how often each of m items is drawn in each of n bootstrap resamples.

    Cached (read-only) when small: a matrix of configurations resamples the same questions every
    time. A large one is not kept (100,000 questions x 2,000 resamples would be 1.6 GB).
    """
    if m * n <= _CACHE_MAX:
        return _cached_weights(m, n, seed)
    return _weights(m, n, np.random.default_rng(seed))


def _products(m: int, n: int, seed: int, *xs: np.ndarray) -> list[np.ndarray]:
    """``[w @ x for x in xs]`` with ``w = _resample_weights(m, n, seed)``, in O(m + n) memory.

    Up to :data:`_WHOLE_MAX` entries ``w`` is built whole; beyond, in blocks of rows drawn one
    after the other from the same generator (the same draws in the same order as one big draw),
    so memory stays at about :data:`_BLOCK` entries whatever the number of questions.
    """
    if m * n <= _WHOLE_MAX:
        w = _resample_weights(m, n, seed)
        return [w @ x for x in xs]
    rng = np.random.default_rng(seed)
    rows = max(1, _BLOCK // m)
    if rows >= 64:
        rows -= rows % 64   # whole blocks of 64 rows: the same BLAS rounding as one product (one thread)
    outs = [np.empty((n,) + x.shape[1:]) for x in xs]
    for start in range(0, n, rows):
        w = _weights(m, min(rows, n - start), rng)
        for out, x in zip(outs, xs):
            out[start:start + len(w)] = w @ x
        del w
    return outs


_N = Param("int", 2000, "bootstrap resamples", low=1)
_SEED = Param("int", 0, "bootstrap seed", low=0)


def _check_boot(n: Any, seed: Any) -> None:
    _N.validate("n", n)
    _SEED.validate("seed", seed)


def _boot_means(values: np.ndarray, n: int, seed: int, clusters: Any = None) -> np.ndarray:
    """Bootstrap means of ``values`` (NaNs ignored: each resample's mean is over its non-NaN draws).

    With ``clusters`` (one label per value, e.g. the document a chunk belongs to) whole clusters
    are resampled instead of single values (a cluster bootstrap): values of one document are not
    independent, and resampling them one by one makes the interval too narrow.
    """
    v = np.asarray(values, dtype=float)
    ok = ~np.isnan(v)
    if clusters is not None:
        labels = np.asarray(clusters)
        if labels.shape != v.shape:
            raise ValueError(f"clusters must give one label per value ({len(v)}), got shape {labels.shape}")
        _, inv = np.unique(labels, return_inverse=True)
        sums = np.bincount(inv, weights=np.where(ok, v, 0.0))
        counts = np.bincount(inv, weights=ok.astype(float))
        num, den = _products(len(sums), int(n), int(seed), sums, counts)
        with np.errstate(invalid="ignore", divide="ignore"):
            return num / den
    if ok.all():
        return _products(len(v), int(n), int(seed), v)[0] / len(v)
    num, den = _products(len(v), int(n), int(seed), np.where(ok, v, 0.0), ok.astype(float))
    with np.errstate(invalid="ignore", divide="ignore"):
        return num / den


def _check_level(level: Any) -> float:
    if isinstance(level, bool) or not isinstance(level, numbers.Real) or not 0 < level < 1:
        raise ValueError(f"level must be a number in (0, 1), got {level!r}")
    return float(level)


def bootstrap_ci(values: Sequence[float], n: int = 2000, seed: int = 0, level: float = 0.95,
                 clusters: Sequence[Any] | None = None) -> dict[str, float]:
    """Mean with a percentile bootstrap interval (NaN values ignored).

    ``clusters`` (one label per value) resamples whole clusters: use it for rates over chunks or
    clauses, which cluster within documents (the result then has ``clusters``, their number).

    >>> r = bootstrap_ci([0, 1, 1, 1], n=200, seed=0)
    >>> r["mean"], r["lo"] <= r["mean"] <= r["hi"]
    (0.75, True)
    >>> c = bootstrap_ci([0, 0, 0, 1, 1, 1], n=500, clusters=["a", "a", "a", "b", "b", "b"])
    >>> c["lo"], c["hi"], c["clusters"]   # two documents: the interval is as wide as it can be
    (0.0, 1.0, 2)
    """
    _check_boot(n, seed)
    level = _check_level(level)
    v = np.asarray(values, dtype=float)
    if len(v) == 0 or np.isnan(v).all():
        return {"mean": float("nan"), "lo": float("nan"), "hi": float("nan"), "n": int((~np.isnan(v)).sum())}
    means = _boot_means(v, n, seed, clusters)
    a = (1 - level) / 2
    lo, hi = np.nanpercentile(means, [100 * a, 100 * (1 - a)])
    out = {"mean": float(np.nanmean(v)), "lo": float(lo), "hi": float(hi), "n": int((~np.isnan(v)).sum())}
    if clusters is not None:
        out["clusters"] = int(len(np.unique(np.asarray(clusters))))
    return out


def bootstrap_many(values: dict[str, Sequence[float]], n: int = 2000, seed: int = 0,
                   level: float = 0.95) -> dict[str, dict[str, float]]:
    """:func:`bootstrap_ci` of several metrics over the same questions, with the same resamples.

    The NaN-free metrics share one matrix product, which is what makes it cheap in the matrix.
    """
    _check_boot(n, seed)
    level = _check_level(level)
    names = list(values)
    arrs = {k: np.asarray(v, dtype=float) for k, v in values.items()}
    out: dict[str, dict[str, float]] = {}
    if len({len(v) for v in arrs.values()}) > 1:
        raise ValueError("all metrics must have one value per question")
    clean = [k for k in names if len(arrs[k]) and not np.isnan(arrs[k]).any()]
    if clean:
        m = len(arrs[clean[0]])
        means = _products(m, int(n), int(seed), np.column_stack([arrs[k] for k in clean]))[0] / m
        a = (1 - level) / 2
        qs = np.percentile(means, [100 * a, 100 * (1 - a)], axis=0)
        for j, k in enumerate(clean):
            out[k] = {"mean": float(arrs[k].mean()), "lo": float(qs[0, j]), "hi": float(qs[1, j]), "n": m}
    for k in names:
        if k not in out:
            out[k] = bootstrap_ci(arrs[k], n=n, seed=seed, level=level)
    return {k: out[k] for k in names}


def _deciding_ends(means: np.ndarray, alpha: float) -> tuple[float, float]:
    """The ends of a paired difference's interval at error rate ``alpha``: order statistics of the
    resampled means, chosen so that the interval excludes 0 exactly when the p-value of
    :func:`paired_bootstrap` is below ``alpha``.

    NOTE: the p-value counts resamples at or beyond 0, ``2 * (count + 1) / (N + 1)``; it is below
    ``alpha`` when fewer than ``alpha / 2 * (N + 1) - 1`` resamples are <= 0, i.e. when the
    ``j``-th smallest resample (0-based) is above 0, ``j`` the largest integer under that bound.
    An interpolated percentile can fall between a resampled 0 and the next value and exclude 0
    while the p-value does not (ch4's prefix comparison did). Beyond what N resamples can show
    (``j < 0``) the interval is widened to reach 0.
    """
    m = np.sort(np.asarray(means, dtype=float))
    m = m[~np.isnan(m)]
    j = math.ceil(alpha / 2 * (len(m) + 1) - 1 - 1e-9) - 1
    if j < 0:
        return float(min(m[0], 0.0)), float(max(m[-1], 0.0))
    return float(m[j]), float(m[len(m) - 1 - j])


def mcnemar_exact(a: Sequence[float], b: Sequence[float]) -> dict[str, Any]:
    """McNemar's exact test on paired 0/1 outcomes: the two-sided sign test on the discordant pairs.

    ``up``: pairs where only ``a`` is 1; ``down``: only ``b``; ``p``: twice the smaller binomial
    tail of ``min(up, down)`` under Binomial(up + down, 1/2), at most 1 (1 when no pair differs).

    >>> mcnemar_exact([1, 1, 1, 0], [0, 0, 0, 0])
    {'up': 3, 'down': 0, 'p': 0.25}
    >>> round(mcnemar_exact([1] * 9 + [0] + [0] * 20, [0] * 9 + [1] + [0] * 20)["p"], 4)   # 9 against 1
    0.0215
    """
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"a and b must be 1-D arrays of the same length, got shapes {x.shape} and {y.shape}")
    ok = ~(np.isnan(x) | np.isnan(y))
    x, y = x[ok], y[ok]
    if not np.isin(x, (0, 1)).all() or not np.isin(y, (0, 1)).all():
        raise ValueError("mcnemar_exact needs 0/1 outcomes (a hit or a miss per question)")
    up, down = int(np.sum(x > y)), int(np.sum(x < y))
    return {"up": up, "down": down, "p": _sign_p(up, down)}


def _sign_p(up: int, down: int) -> float:
    nd = up + down
    return 1.0 if nd == 0 else float(min(1.0, 2 * special.bdtr(min(up, down), nd, 0.5)))


def _tango_z(up: int, down: int, n: int, delta: float) -> float:
    """Tango's (1998) score statistic for ``diff = delta`` on ``up`` against ``down`` of ``n`` pairs."""
    w = -up - down + (2 * n - up + down) * delta
    q = (math.sqrt(max(w * w + 8 * n * down * delta * (1 - delta), 0.0)) - w) / (4 * n)   # restricted MLE of P(down)
    var = n * (2 * q + delta * (1 - delta))
    num = up - down - n * delta
    return num / math.sqrt(var) if var > 0 else math.copysign(math.inf, num) if num else 0.0


def _tango_ends(up: int, down: int, n: int, z: float) -> tuple[float, float]:
    """Tango's score interval for a paired difference of proportions (the ``delta`` where its
    statistic is within ``+-z``), by bisection: the statistic falls as ``delta`` rises."""
    d = (up - down) / n

    def solve(lo: float, hi: float, target: float) -> float:
        for _ in range(80):
            mid = (lo + hi) / 2
            if _tango_z(up, down, n, mid) > target:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2

    eps = 1e-12
    lower = -1.0 if _tango_z(up, down, n, -1 + eps) <= z else solve(-1 + eps, d, z)
    upper = 1.0 if _tango_z(up, down, n, 1 - eps) >= -z else solve(d, 1 - eps, -z)
    return lower, upper


def _discordant_ends(up: int, down: int, n: int, alpha: float) -> tuple[float, float, float]:
    """The small-sample guard for a paired difference of 0/1 outcomes: ``(lo, hi, p)`` that any
    interval deciding on ``up`` against ``down`` discordant pairs out of ``n`` must contain.

    The envelope of two intervals a bootstrap is too narrow beside when few pairs differ:
    McNemar's exact interval (a Clopper-Pearson interval for the share of discordant pairs going
    ``a``'s way, scaled to the difference; it excludes 0 exactly when :func:`mcnemar_exact`'s p is
    below ``alpha``) and Tango's (1998) score interval, which keeps its width when no pair differs:
    ``[0, 0]`` from 30 identical outcomes does not show two chunkings equivalent (Tango: +-11
    points), from 1,000 it nearly does (+-0.4). ``p`` is the larger of the two tests' p-values.
    """
    nd = up + down
    if nd:
        p_lo = 0.0 if up == 0 else float(special.betaincinv(up, nd - up + 1, alpha / 2))
        p_hi = 1.0 if up == nd else float(special.betaincinv(up + 1, nd - up, 1 - alpha / 2))
        ex_lo, ex_hi = nd / n * (2 * p_lo - 1), nd / n * (2 * p_hi - 1)
        p_score = float(2 * special.ndtr(-abs(up - down) / math.sqrt(nd)))
    else:
        ex_lo = ex_hi = 0.0
        p_score = 1.0
    t_lo, t_hi = _tango_ends(up, down, n, float(special.ndtri(1 - alpha / 2)))
    return min(ex_lo, t_lo), max(ex_hi, t_hi), max(_sign_p(up, down), p_score)


def _guarded(r: dict[str, Any], lo: float, hi: float, alpha: float) -> None:
    """Set ``r``'s deciding interval to the envelope of the bootstrap's ``lo``/``hi`` and, for 0/1
    outcomes, :func:`_discordant_ends` at the same error rate ``alpha``; ``p`` becomes the larger
    of the bootstrap's and the guard's (the guard's tests do not depend on ``alpha``)."""
    if "discordant" in r:
        g_lo, g_hi, g_p = _discordant_ends(*r["discordant"], r["n"], alpha)
        r["widened"] = bool(g_lo < lo or g_hi > hi)
        r["p"] = max(r["p"], g_p)
        lo, hi = min(lo, g_lo), max(hi, g_hi)
    r.update(lo=float(lo), hi=float(hi), significant=bool(lo > 0 or hi < 0))


def _paired(a: Sequence[float], b: Sequence[float], n: int, seed: int, level: float,
            clusters: Sequence[Any] | None, metric: str | None) -> tuple[dict[str, Any], np.ndarray]:
    """:func:`paired_bootstrap`'s result and its bootstrap means (kept for adjusted intervals)."""
    _check_boot(n, seed)
    level = _check_level(level)
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"a and b must be 1-D arrays of the same length, got shapes {a.shape} and {b.shape}")
    ok = ~(np.isnan(a) | np.isnan(b))
    d = a[ok] - b[ok]
    # NOTE: equal values computed in another order differ in the last bits (an IoU of identical
    # chunkings gave -1e-17): such a difference is no difference, and must not name a winner.
    d[np.abs(d) <= 1e-12 * np.maximum(1.0, np.maximum(np.abs(a[ok]), np.abs(b[ok])))] = 0.0
    extra: dict[str, Any] = {} if metric is None else {"metric": metric}
    labels = None
    if clusters is not None:
        labels = np.asarray(clusters)
        if labels.shape != a.shape:
            raise ValueError(f"clusters must give one label per pair ({len(a)}), got shape {labels.shape}")
        labels = labels[ok]
        extra["clusters"] = int(len(np.unique(labels)))
    if len(d) == 0:
        return ({"diff": float("nan"), "lo": float("nan"), "hi": float("nan"), "significant": False, "n": 0,
                 "p": 1.0, "level": level, **extra}, np.full(1, np.nan))
    means = _boot_means(d, n, seed, labels)
    lo, hi = _deciding_ends(means, 1 - level)
    if np.all(d == 0):
        p = 1.0
    else:
        below = (np.count_nonzero(means <= 0) + 1) / (len(means) + 1)
        above = (np.count_nonzero(means >= 0) + 1) / (len(means) + 1)
        p = min(1.0, 2 * min(below, above))
    if labels is None and np.isin(a[ok], (0, 1)).all() and np.isin(b[ok], (0, 1)).all():
        # 0/1 outcomes (hit, ...): the small-sample guard, see _discordant_ends
        extra["discordant"] = (int(np.sum(d > 0)), int(np.sum(d < 0)))
    # lo, hi, significant (and for 0/1 outcomes p) are set by _guarded; named here to keep the keys' order
    r = {"diff": float(d.mean()), "lo": lo, "hi": hi, "significant": False, "n": int(len(d)), "p": float(p),
         "level": level, **extra}
    _guarded(r, lo, hi, 1 - level)
    return r, means


def paired_bootstrap(a: Sequence[float], b: Sequence[float], n: int = 2000, seed: int = 0,
                     level: float = 0.95, *, clusters: Sequence[Any] | None = None,
                     metric: str | None = None) -> dict[str, Any]:
    """Paired bootstrap of ``mean(a - b)`` over the same questions (pairs with a NaN dropped).

    ``significant`` is true when the interval excludes 0. ``p`` is the two-sided bootstrap p-value,
    ``2 * min(share of resampled means <= 0, share >= 0)`` (with the usual +1 so it is never 0); it
    is what :func:`paired_many` corrects when many comparisons are made at once.

    For 0/1 outcomes (hit, ...; without ``clusters``) a bootstrap is too sure of itself when few
    questions differ: 6 against 0 out of 30 resamples to 0 only when none of the six is drawn
    (0.1%), although McNemar's exact test gives p = 0.031. The result then also has
    ``discordant`` (questions only ``a`` hits, only ``b`` hits); its interval is widened to the
    envelope of the bootstrap's, McNemar's exact interval and Tango's score interval (``widened``
    says whether that changed the bootstrap's interval) and ``p`` is the largest of the three
    tests', so the interval that decides is never narrower than the exact test allows.

    ``metric`` names what was measured (``"hit"``, ``"mrr"``, ...): it is recorded in the result,
    and :func:`decide` reads the metric's declared equivalence margin from
    :data:`EQUIVALENCE_MARGINS` with it. ``clusters`` (one label per pair, e.g. the document of a
    chunk or clause) resamples whole clusters (see :func:`bootstrap_ci`).

    >>> r = paired_bootstrap([1, 1, 1, 0] * 10, [0, 1, 0, 0] * 10, n=500, metric="hit")
    >>> r["diff"], r["significant"], r["metric"], r["discordant"]
    (0.5, True, 'hit', (20, 0))
    >>> few = paired_bootstrap([1] * 6 + [0] * 24, [0] * 30, metric="hit")   # 6 against 0
    >>> few["significant"], few["widened"], round(few["p"], 3)
    (True, True, 0.031)
    >>> same = paired_bootstrap([1] * 15 + [0] * 15, [1] * 15 + [0] * 15, metric="hit")
    >>> decide(same)     # identical on 30 questions: not yet shown to be within 2 points
    'inconclusive'
    """
    return _paired(a, b, n, seed, level, clusters, metric)[0]


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


def deciding_levels(p: Sequence[float], method: str = "holm", alpha: float = 0.05) -> list[float]:
    """The error rate at which each comparison's interval is drawn so that it decides as ``method``.

    A comparison is significant when its interval at confidence ``1 - level`` excludes 0. Holm:
    the comparison with the j-th smallest p (0-based) is tested at ``alpha / (m - j)`` until the
    first one that fails; that one and every later one are drawn at the failing level (so no
    interval after the stop can exclude 0). Benjamini–Hochberg: with R of m rejected, every
    interval is drawn at ``R * alpha / m`` (Benjamini and Yekutieli's false-coverage-rate
    intervals; ``alpha / m`` when R = 0). ``"none"``: ``alpha`` for all.

    >>> deciding_levels([0.001, 0.03, 0.04], "holm")   # 0.03 > 0.05/2: the step-down stops there
    [0.016666666666666666, 0.025, 0.025]
    >>> deciding_levels([0.001, 0.03, 0.04], "bh")     # BH rejects all three
    [0.05, 0.05, 0.05]
    """
    if method not in CORRECTIONS:
        raise ValueError(f"method must be one of {', '.join(CORRECTIONS)}, got {method!r}")
    adj = adjust_pvalues(p, method)
    m = len(adj)
    if method == "none":
        return [alpha] * m
    if method == "bh":
        r = sum(x < alpha for x in adj)
        return [alpha * (max(r, 1) / m)] * m
    order = np.argsort(np.asarray(p, dtype=float), kind="stable")
    out = [0.0] * m
    level = alpha / m
    stopped = False
    for j, i in enumerate(order):
        if not stopped:
            level = alpha / (m - j)
            stopped = not adj[i] < alpha
        out[i] = level
    return out


def paired_many(pairs: dict[str, tuple[Sequence[float], Sequence[float]]], method: str = "holm",
                n: int = 2000, seed: int = 0, level: float = 0.95, *,
                metric: str | dict[str, str] | None = None) -> dict[str, dict[str, Any]]:
    """:func:`paired_bootstrap` of several comparisons made together, corrected for their number.

    Each result gains ``p_adj`` (the p-value adjusted by ``method``, see :func:`adjust_pvalues`),
    ``m`` (how many comparisons) and ``method``. Its interval ``lo``/``hi`` is **the one that
    decides**: drawn at the adjusted error rate of :func:`deciding_levels` (``level`` says at which
    confidence, e.g. 0.9875 for the first of four under Holm), and ``significant`` is "that
    interval excludes 0" — so a printed row can never look self-contradictory. The ordinary 95%
    interval and answer stay in ``lo_marginal``/``hi_marginal`` and ``significant_marginal``.
    ``metric`` names what every comparison measured, or, as a dict, each comparison's own metric
    (a group may mix hit, MRR, ...; see :func:`paired_bootstrap`).

    >>> r = paired_many({"x": ([1, 0] * 20, [0, 0] * 20), "y": ([1, 0, 0, 0] * 10, [0, 0, 1, 0] * 10)})
    >>> r["x"]["significant"], r["y"]["significant"], r["x"]["m"], r["x"]["level"]
    (True, False, 2, 0.975)
    >>> r["x"]["lo"] <= r["x"]["lo_marginal"]    # the deciding interval is the wider one
    True
    """
    if method not in CORRECTIONS:
        raise ValueError(f"method must be one of {', '.join(CORRECTIONS)}, got {method!r}")
    level = _check_level(level)
    metrics = metric if isinstance(metric, dict) else {name: metric for name in pairs}
    unknown = set(metrics) - set(pairs)
    if unknown or not set(pairs) <= set(metrics):
        raise ValueError(f"metric must name one metric for every comparison ({', '.join(map(str, pairs))}), "
                         f"got {metric!r}")
    runs = {name: _paired(a, b, n, seed, level, None, metrics[name]) for name, (a, b) in pairs.items()}
    res = {name: r for name, (r, _) in runs.items()}
    ps = [r["p"] for r in res.values()]
    adj = adjust_pvalues(ps, method)
    alphas = deciding_levels(ps, method, 1 - level)
    for (r, means), pa, al in zip(runs.values(), adj, alphas):
        r.update(lo_marginal=r["lo"], hi_marginal=r["hi"], significant_marginal=r["significant"],
                 p_adj=pa, m=len(res), method=method)
        if r["n"] == 0:
            continue
        lo, hi = _deciding_ends(means, al)
        r["level"] = 1 - al
        _guarded(r, lo, hi, al)
    return res


#: Equivalence margins, declared once, on each metric's own scale (a share of questions for the
#: 0/1 and 0–1 per-question metrics). A difference whose whole interval lies within ±margin is
#: "equivalent" (:func:`decide`): too small to change a chunking decision. Why 2 points: a team
#: choosing a chunking does not act on less than one question in fifty; a narrower margin needs
#: many more questions to ever be met (the interval must fit inside it). A metric without an entry
#: has no equivalence margin: there only identical outcomes are equivalent, and a zero difference
#: with a wide interval is "inconclusive".
EQUIVALENCE_MARGINS: dict[str, float] = {
    "hit": 0.02, "hit_strict": 0.02, "mrr": 0.02, "recall": 0.02, "complete_single": 0.02,
    "complete_union": 0.02, "cite_at_1": 0.02,
}

#: The verdicts :func:`decide` returns, in English (the book's words are in ``chunklab.book.claims``).
VERDICTS = ("supported", "supported, size ruled out", "same direction, not significant",
            "same direction, size ruled out", "opposite direction, not significant", "contradicted",
            "equivalent", "inconclusive", "non-inferior", "not shown")


def decide(result: dict[str, Any], expect: int = 1, margin: float | None = None, *,
           equivalence: float | None = None, claimed: float | None = None) -> str:
    """The verdict on a claim from a paired comparison (:func:`paired_bootstrap` / :func:`paired_many`).

    The interval ``lo``/``hi`` of ``result`` is the one that decides (for :func:`paired_many`, the
    multiplicity-adjusted one). ``expect``: the direction the claim predicts for ``diff = a - b``
    (+1: a is higher, -1: a is lower). In order:

    1. An interval excluding 0 (``significant``) gives "supported" (the predicted side) or
       "contradicted".
    2. Otherwise, an interval wholly inside ±``equivalence`` is "equivalent" (the interval rule
       for equivalence; the margin defaults to the metric's entry in :data:`EQUIVALENCE_MARGINS`,
       read from ``result["metric"]``; without one, only ``[0, 0]`` is equivalent — identical
       outcomes on every question, and for 0/1 outcomes enough of them, see :func:`paired_bootstrap`).
    3. Otherwise the point estimate's side: "same direction, not significant" or "opposite
       direction, not significant"; an exact zero is "inconclusive" — a zero with a wide interval
       says nothing.

    ``claimed`` (a claim with a size: the article's effect on the same scale as ``diff``): when the
    interval excludes it, a "supported" or "same direction" verdict says so ("..., size ruled out").

    With ``margin`` the claim is "a is no worse than b" (non-inferiority): "non-inferior" when the
    interval's worse end stays within ``margin`` of 0, "contradicted" when the interval lies wholly
    on the worse side, else "not shown" (``expect=+1``: a lower ``diff`` is worse).

    >>> decide({"diff": 0.05, "lo": 0.01, "hi": 0.09, "significant": True})
    'supported'
    >>> decide({"diff": 0.0, "lo": -0.109, "hi": 0.109, "metric": "hit"})   # a zero, a wide interval
    'inconclusive'
    >>> decide({"diff": 0.0, "lo": -0.011, "hi": 0.011, "metric": "hit"})   # inside ±2 points
    'equivalent'
    >>> decide({"diff": 0.064, "lo": 0.0, "hi": 0.149}, claimed=0.34)      # C6: +34 points ruled out
    'same direction, size ruled out'
    >>> decide({"diff": 0.10, "lo": 0.02, "hi": 0.19, "significant": True}, claimed=0.18)
    'supported'
    >>> r = {"diff": 0.103, "lo": -0.005, "hi": 0.21, "significant": False, "level": 0.9875}
    >>> decide(r)   # Holm-adjusted: the printed interval (98.75%) is the one that decided
    'same direction, not significant'
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
    if equivalence is None:
        # a metric without a declared margin: only identical outcomes ([0, 0]) are equivalent
        equivalence = EQUIVALENCE_MARGINS.get(result.get("metric"), 0.0)  # type: ignore[arg-type]
    elif not equivalence >= 0:
        raise ValueError(f"equivalence must be >= 0, got {equivalence!r}")
    if claimed is not None and (math.isnan(claimed) or claimed * expect <= 0):
        raise ValueError(f"claimed must be an effect in the expected direction (expect={expect}), got {claimed!r}")
    ruled_out = claimed is not None and not lo <= claimed <= hi
    if result.get("significant", lo > 0 or hi < 0):
        if diff * expect > 0:
            return "supported, size ruled out" if ruled_out else "supported"
        return "contradicted"
    if -equivalence <= lo and hi <= equivalence:
        return "equivalent"
    if diff * expect > 0:
        return "same direction, size ruled out" if ruled_out else "same direction, not significant"
    if diff == 0:
        return "inconclusive"
    return "opposite direction, not significant"
