"""Seeing chunks: an HTML chunk viewer and matplotlib plots with Chinese labels.

:func:`show_chunks` draws the document with alternating chunk colours and
shades overlaps from the chunks' real offsets (never from the ``overlap``
parameter: the recursive splitter's overlaps vary from chunk to chunk). It
returns an object that renders as HTML in JupyterLab and in the static site,
with no kernel and no JavaScript. All document text is HTML-escaped.
"""
from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from .core import Chunk, Document, as_document

__all__ = ["ChunkView", "show_chunks", "chunk_stats", "fell_back", "length_histogram", "similarity_curve", "metric_heatmap",
           "recall_curves", "paired_bars", "budget_curve", "PALETTE"]

#: Alternating chunk backgrounds (colour-blind-safe pastel pairs) and the overlap shade.
PALETTE = ("#dbeafe", "#fde68a", "#d1fae5", "#fbcfe8")
OVERLAP = "#a78bfa"

_CSS = """
<style>
.cl-view{font-family:"Noto Sans CJK SC","Noto Sans SC","PingFang SC","Microsoft YaHei",sans-serif;
 font-size:14px;line-height:1.9;white-space:pre-wrap;word-break:break-all;border:1px solid #d0d7de;
 border-radius:6px;padding:10px 12px;max-height:28em;overflow-y:auto;background:#fff;color:#111}
.cl-view .cl-seg{border-radius:2px}
.cl-view .cl-ov{background:%(ov)s;color:#111;text-decoration:underline dotted}
.cl-view .cl-gap{color:#888}
.cl-view .cl-b{display:inline-block;font-size:10px;line-height:1;color:#fff;background:#374151;
 border-radius:3px;padding:1px 3px;margin:0 1px;vertical-align:super;font-family:monospace}
.cl-view .cl-b.cl-fb{background:#b91c1c}
.cl-stats{font-family:sans-serif;font-size:13px;color:#333;margin:4px 0}
.cl-elide{color:#999;font-style:italic}
</style>
""" % {"ov": OVERLAP}


@dataclass
class ChunkView:
    """An HTML rendering of chunks over their document (``_repr_html_`` for Jupyter)."""

    html: str
    stats: dict

    def _repr_html_(self) -> str:
        return self.html

    def __str__(self) -> str:  # plain-text fallback (e.g. in a terminal)
        s = self.stats
        return f"ChunkView({s['chunks']} chunks, mean {s['mean_len']:.0f}, max {s['max_len']})"


def fell_back(chunk: Chunk) -> bool:
    """Whether a fallback level produced ``chunk``: its level differs from the strategy that
    was asked for (for the router, the strategy it routed to)."""
    meta = chunk.meta
    intended = meta.get("routed_to", meta.get("strategy"))
    return meta.get("level", intended) != intended


def chunk_stats(document: Document, chunks: Sequence[Chunk]) -> dict[str, Any]:
    """Count, lengths, real overlaps and fallbacks of a chunking, as plain numbers."""
    lens = [len(c) for c in chunks]
    overlaps = [max(0, a.end - b.start) for a, b in zip(chunks, chunks[1:]) if a.doc_id == b.doc_id]
    return {
        "chunks": len(chunks),
        "mean_len": sum(lens) / len(lens) if lens else 0.0,
        "max_len": max(lens) if lens else 0,
        "min_len": min(lens) if lens else 0,
        "overlapping_pairs": sum(1 for o in overlaps if o > 0),
        "mean_overlap": sum(overlaps) / len(overlaps) if overlaps else 0.0,
        "fell_back": sum(1 for c in chunks if fell_back(c)),
        "inflation": (sum(lens) / len(document.text)) if document.text else 0.0,
    }


def _tooltip(c: Chunk) -> str:
    parts = [f"#{c.index}", f"[{c.start}:{c.end})", f"{len(c)} 字"]
    path = c.meta.get("path")
    if path:
        parts.append(" > ".join(map(str, path)))
    if c.meta.get("clause"):
        parts.append(f"条款 {c.meta['clause']}")
    if fell_back(c):
        parts.append(f"回退到 {c.meta['level']}")
    if c.meta.get("oversize"):
        parts.append("超长单元")
    if c.context:
        parts.append("context: " + c.context.replace("\n", " / ")[:80])
    return " · ".join(parts)


def show_chunks(document: Document | str, chunks: Sequence[Chunk], *, around: int | None = None,
                radius: int = 1500, max_chars: int = 6000, stats: bool = True) -> ChunkView:
    """Render ``chunks`` over ``document`` as HTML.

    Each chunk gets one of four alternating background colours; characters
    covered by two or more chunks (real overlap) are shaded violet; a small
    numbered marker shows where each chunk starts (red when the chunk came
    from a fallback level). Hovering a chunk shows index, span, length, path
    or clause and fallback level. Documents longer than ``max_chars`` are
    windowed to ``[around - radius, around + radius)`` (``around`` defaults
    to the start of the first chunk), with the elided parts marked.

    >>> from chunklab import chunk
    >>> doc = Document("d", "<script>alert(1)</script>。第二句。")
    >>> view = show_chunks(doc, chunk(doc, "sentence", target=20))
    >>> "<script>" in view.html, "&lt;script&gt;" in view.html
    (False, True)
    """
    doc = as_document(document)
    text = doc.text
    chunks = [c for c in chunks if c.doc_id == doc.id]
    lo, hi = 0, len(text)
    if len(text) > max_chars:
        centre = around if around is not None else (chunks[0].start if chunks else 0)
        lo, hi = max(0, centre - radius), min(len(text), centre + radius)
    # Boundary sweep: positions where the set of covering chunks changes.
    points = {lo, hi}
    for c in chunks:
        if c.end > lo and c.start < hi:
            points.add(max(lo, c.start))
            points.add(min(hi, c.end))
    cuts = sorted(points)
    starts: dict[int, list[Chunk]] = {}
    for c in chunks:
        if lo <= c.start < hi:
            starts.setdefault(c.start, []).append(c)
    out = [_CSS]
    if stats:
        st = chunk_stats(doc, chunks)
        out.append(
            f'<div class="cl-stats">{st["chunks"]} 块 · 平均 {st["mean_len"]:.0f} 字 · 最长 {st["max_len"]} 字 · '
            f'{st["overlapping_pairs"]} 对相邻块有重叠（平均 {st["mean_overlap"]:.0f} 字） · '
            f'{st["fell_back"]} 块来自回退 · 索引膨胀 {st["inflation"]:.2f}×</div>'
        )
    out.append('<div class="cl-view">')
    if lo > 0:
        out.append(f'<span class="cl-elide">…（前 {lo} 字省略）…\n</span>')
    ci = 0
    ordered = sorted(chunks, key=lambda c: (c.start, c.end))
    active: list[Chunk] = []
    for a, b in zip(cuts, cuts[1:]):
        for c in starts.get(a, ()):
            cls = "cl-b cl-fb" if fell_back(c) else "cl-b"
            out.append(f'<span class="{cls}" title="{html.escape(_tooltip(c))}">{c.index}</span>')
        while ci < len(ordered) and ordered[ci].start <= a:
            active.append(ordered[ci])
            ci += 1
        active = [c for c in active if c.end > a]
        covering = [c for c in active if c.start <= a < c.end]
        piece = html.escape(text[a:b])
        if not covering:
            out.append(f'<span class="cl-gap">{piece}</span>')
        elif len(covering) == 1:
            c = covering[0]
            out.append(f'<span class="cl-seg" style="background:{PALETTE[c.index % len(PALETTE)]}" '
                       f'title="{html.escape(_tooltip(c))}">{piece}</span>')
        else:
            tip = " ∩ ".join(f"#{c.index}" for c in covering)
            out.append(f'<span class="cl-seg cl-ov" title="重叠：{tip}">{piece}</span>')
    if hi < len(text):
        out.append(f'<span class="cl-elide">\n…（后 {len(text) - hi} 字省略）…</span>')
    out.append("</div>")
    return ChunkView("".join(out), chunk_stats(doc, chunks))


# -- plots ---------------------------------------------------------------------

def _plt():
    import matplotlib

    from .fonts import use_cjk_font

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
                   fmt: str = "{:.3f}", title: str | None = None, cmap: str = "viridis"):
    """Heatmap of ``value`` over two parameters of a tidy result table (list of dicts)."""
    import numpy as np

    _, plt = _plt()
    rows = sorted({r[row] for r in records}, key=_sort_key)
    cols = sorted({r[col] for r in records}, key=_sort_key)
    grid = np.full((len(rows), len(cols)), np.nan)
    for r in records:
        grid[rows.index(r[row]), cols.index(r[col])] = r[value]
    fig, ax = (ax.figure, ax) if ax is not None else plt.subplots(figsize=(1.2 * len(cols) + 2.5, 0.5 * len(rows) + 1.8))
    im = ax.imshow(grid, cmap=cmap, aspect="auto")
    ax.set_xticks(range(len(cols)), [str(c) for c in cols])
    ax.set_yticks(range(len(rows)), [str(r) for r in rows])
    ax.set_xlabel(col)
    ax.set_ylabel(row)
    finite = grid[np.isfinite(grid)]
    mid = (finite.min() + finite.max()) / 2 if finite.size else 0
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
                title: str = "配对比较：差值与 95% 置信区间"):
    """Horizontal bars of paired differences ``{name: (mean, low, high)}`` with their intervals.

    A bar whose interval excludes zero is drawn solid; one that crosses zero is hatched (no winner).
    """
    _, plt = _plt()
    names = list(diffs)
    fig, ax = (ax.figure, ax) if ax is not None else plt.subplots(figsize=(6.5, 0.5 * len(names) + 1.5))
    for i, name in enumerate(names):
        m, lo, hi = diffs[name]
        real = lo > 0 or hi < 0
        ax.barh(i, m, color="#2563eb" if real else "#cbd5e1", hatch=None if real else "//", edgecolor="#334155")
        ax.errorbar(m, i, xerr=[[m - lo], [hi - m]], color="black", capsize=4)
    ax.axvline(0, color="black", lw=0.8)
    ax.set_yticks(range(len(names)), names)
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    fig.tight_layout()
    return fig


def budget_curve(curves: Mapping[str, Mapping[int, float]], *, ax=None, ylabel: str = "命中率",
                 title: str = "固定上下文预算下的命中率"):
    """Metric as a function of the context budget (tokens), one line per configuration."""
    return _curves(curves, ax, "上下文预算（token）", ylabel, title)
