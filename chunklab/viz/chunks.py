"""Seeing chunks: an HTML chunk viewer that draws chunks over their document.

:func:`show_chunks` draws the document with alternating chunk colours and
shades overlaps from the chunks' real offsets (never from the ``overlap``
parameter: the recursive splitter's overlaps vary from chunk to chunk). It
returns an object that renders as HTML in JupyterLab and in the static site,
with no kernel and no JavaScript. All document text is HTML-escaped.
"""
from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any, Sequence

from ..core import Chunk, Document, as_document

__all__ = ["ChunkView", "show_chunks", "chunk_stats", "fell_back", "PALETTE"]

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
            out.append(f'<span class="{cls}" title="{html.escape(_tooltip(c))}">{html.escape(str(c.index))}</span>')
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
            out.append(f'<span class="cl-seg" style="background:{PALETTE[int(c.index) % len(PALETTE)]}" '
                       f'title="{html.escape(_tooltip(c))}">{piece}</span>')
        else:
            tip = html.escape(" ∩ ".join(f"#{c.index}" for c in covering))
            out.append(f'<span class="cl-seg cl-ov" title="重叠：{tip}">{piece}</span>')
    if hi < len(text):
        out.append(f'<span class="cl-elide">\n…（后 {len(text) - hi} 字省略）…</span>')
    out.append("</div>")
    return ChunkView("".join(out), chunk_stats(doc, chunks))
