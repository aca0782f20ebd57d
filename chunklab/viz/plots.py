"""Plots with Chinese labels: matplotlib figures of chunk lengths, similarities and evaluation results.

Every figure registers a CJK font first (:func:`~chunklab.viz.fonts.use_cjk_font`);
matplotlib itself is imported only when a figure is drawn.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from ..core import Chunk
from .fonts import use_cjk_font

__all__ = ["length_histogram", "similarity_curve", "metric_heatmap", "recall_curves", "paired_bars", "budget_curve"]


def _plt():
    import matplotlib

    use_cjk_font()
    import matplotlib.pyplot as plt

    return matplotlib, plt


def length_histogram(chunk_sets: Mapping[str, Sequence[Chunk]], *, bins: int = 40, ax=None, title: str = "块长度分布"):
    """Overlaid histograms of chunk lengths (characters), one per named chunking."""
    _, plt = _plt()
    fig, ax = (ax.figure, ax) if ax is not None else plt.subplots(figsize=(7, 3.6))
    allmax = max((len(c) for cs in chunk_sets.values() for c in cs), default=1)
    edges = [allmax * i / bins for i in range(bins + 1)]
    for name, cs in chunk_sets.items():
        lens = [len(c) for c in cs]
        ax.hist(lens, bins=edges, alpha=0.55, label=f"{name}（{len(lens)} 块）")
    ax.set_xlabel("块长度（字符）")
    ax.set_ylabel("块数")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    return fig


def similarity_curve(similarities: Sequence[float], threshold: float, breakpoints: Iterable[int] = (), *,
                     true_boundaries: Iterable[int] = (), ax=None, title: str = "相邻句子的语义相似度"):
    """The semantic chunker's curve: similarity between consecutive sentences, its threshold and the cuts."""
    _, plt = _plt()
    fig, ax = (ax.figure, ax) if ax is not None else plt.subplots(figsize=(8, 3.2))
    xs = list(range(len(similarities)))
    ax.plot(xs, similarities, color="#2563eb", lw=1.4, label="相似度")
    ax.axhline(threshold, color="#dc2626", ls="--", lw=1, label=f"阈值 {threshold:.2f}")
    bps = list(breakpoints)
    if bps:
        ax.scatter(bps, [similarities[i] for i in bps], color="#dc2626", zorder=3, label="切点")
    for i, b in enumerate(true_boundaries):
        ax.axvline(b, color="#16a34a", alpha=0.5, lw=1, label="真实章节边界" if i == 0 else None)
    ax.set_xlabel("句子序号")
    ax.set_ylabel("余弦相似度")
    ax.set_title(title)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    return fig


def metric_heatmap(records: Sequence[Mapping[str, Any]], row: str, col: str, value: str, *, ax=None,
                   fmt: str = "{:.3f}", title: str | None = None, cmap: str = "viridis",
                   scale: tuple[float, float] | None = None):
    """Heatmap of ``value`` over two parameters of a tidy result table (list of dicts).

    ``scale=(lo, hi)`` fixes the colour scale (a share on 0-1 should be drawn on 0-1, or a spread
    of half a point fills the whole colour bar); by default it spans the values.
    """
    import numpy as np

    _, plt = _plt()
    rows = sorted({r[row] for r in records}, key=_sort_key)
    cols = sorted({r[col] for r in records}, key=_sort_key)
    grid = np.full((len(rows), len(cols)), np.nan)
    for r in records:
        grid[rows.index(r[row]), cols.index(r[col])] = r[value]
    fig, ax = (ax.figure, ax) if ax is not None else plt.subplots(figsize=(1.2 * len(cols) + 2.5, 0.5 * len(rows) + 1.8))
    lo, hi = scale if scale is not None else (None, None)
    im = ax.imshow(grid, cmap=cmap, aspect="auto", vmin=lo, vmax=hi)
    ax.set_xticks(range(len(cols)), [str(c) for c in cols])
    ax.set_yticks(range(len(rows)), [str(r) for r in rows])
    ax.set_xlabel(col)
    ax.set_ylabel(row)
    finite = grid[np.isfinite(grid)]
    mid = (sum(scale) / 2 if scale is not None else (finite.min() + finite.max()) / 2) if finite.size else 0
    for i in range(len(rows)):
        for j in range(len(cols)):
            if np.isfinite(grid[i, j]):
                ax.text(j, i, fmt.format(grid[i, j]), ha="center", va="center", fontsize=8,
                        color="white" if grid[i, j] < mid else "black")
    ax.set_title(title or value)
    fig.colorbar(im, ax=ax, shrink=0.8)
    fig.tight_layout()
    return fig


def _sort_key(v):
    return (0, v, "") if isinstance(v, (int, float)) else (1, 0, str(v))


def _curves(curves: Mapping[str, Mapping[int, float]], ax, xlabel: str, ylabel: str, title: str):
    _, plt = _plt()
    fig, ax = (ax.figure, ax) if ax is not None else plt.subplots(figsize=(6.5, 3.6))
    for name, pts in curves.items():
        xs = sorted(pts)
        ax.plot(xs, [pts[x] for x in xs], marker="o", label=name)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, 1.02)
    ax.set_title(title)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def recall_curves(curves: Mapping[str, Mapping[int, float]], *, ax=None, ylabel: str = "recall@k",
                  title: str = "不同 k 下的召回"):
    """One line per configuration: metric as a function of k."""
    return _curves(curves, ax, "k（取回的块数）", ylabel, title)


def paired_bars(diffs: Mapping[str, tuple[float, float, float]], *, ax=None, xlabel: str = "差值（B − A）",
                title: str = "配对比较：差值与 95% 置信区间", percent: bool = True):
    """Horizontal bars of paired differences ``{name: (mean, low, high)}`` with their intervals.

    A bar whose interval excludes zero is drawn solid; one that crosses zero is hatched (the
    comparison found no winner — which is not "no difference"). A legend says so. With ``percent``
    (the default: the book's differences are of rates such as hit@5, printed as ``+1.3%`` in its
    tables) the axis reads in percent, as the tables do; ``percent=False`` keeps plain numbers.
    """
    matplotlib, plt = _plt()
    from matplotlib.patches import Patch
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    names = list(diffs)
    fig, ax = (ax.figure, ax) if ax is not None else plt.subplots(figsize=(6.5, 0.5 * len(names) + 1.9))
    solid = dict(facecolor="#2563eb", edgecolor="#334155")
    hatched = dict(facecolor="#cbd5e1", hatch="//", edgecolor="#334155")
    for i, name in enumerate(names):
        m, lo, hi = diffs[name]
        real = lo > 0 or hi < 0
        ax.barh(i, m, **(solid if real else hatched))
        ax.errorbar(m, i, xerr=[[m - lo], [hi - m]], color="black", capsize=4)
    ax.axvline(0, color="black", lw=0.8)
    ax.set_yticks(range(len(names)), names)
    ax.invert_yaxis()  # the first comparison on top, as in the table beside it
    if percent:
        ax.xaxis.set_major_locator(MaxNLocator(nbins=7, steps=[1, 2, 5, 10]))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{100 * x:+.0f}%" if abs(x) > 1e-12 else "0"))
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    ax.legend(handles=[Patch(label="区间不含 0：分出了方向", **solid),
                       Patch(label="区间跨过 0：未分出方向", **hatched),
                       matplotlib.lines.Line2D([], [], color="black", marker="|", markersize=8,
                                               label="横线：区间")],
              loc="upper center", bbox_to_anchor=(0.5, -0.22 if len(names) < 4 else -0.12), ncol=3,
              fontsize=8, frameon=False)
    fig.tight_layout()
    return fig


def budget_curve(curves: Mapping[str, Mapping[int, float]], *, ax=None, ylabel: str = "命中率",
                 title: str = "固定上下文预算下的命中率"):
    """Metric as a function of the context budget (tokens), one line per configuration."""
    return _curves(curves, ax, "上下文预算（token）", ylabel, title)
