"""Glyph junk out of a PDF's text layer: ``(cid:N)`` placeholders and private-use characters.

A font embedded without a Unicode map draws the right glyphs, but its text layer names none of
them: pdfminer writes each such glyph as ``(cid:258)``. Icon and symbol fonts (and some Chinese
fonts) map glyphs to the Unicode private-use areas (U+E000-U+F8FF, planes 15 and 16), which no
reader, tokeniser or embedder can interpret. Both kinds are noise for retrieval: ``(cid:258)``
becomes the BM25 terms ``cid`` and ``258``, and a question never contains them.

:func:`drop_junk` removes them from the segments of the pages *before* the text is assembled
(:func:`chunklab.preprocess.pipeline` with ``junk="drop"``, which the folder corpus's PDF reader
uses), so the document's text is the cleaned text and every offset (spans, per-character boxes,
table cells, figures) refers to it. What was dropped is counted per page, never lost silently:
the pipeline puts the counts in ``meta["glyphs_dropped"]``.
"""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Sequence

from .model import Page, Segment

__all__ = ["JUNK", "JUNK_MODES", "drop_junk", "clean_text", "junk_counts"]

# A glyph without a Unicode mapping as pdfminer writes it ("(cid:NNNN)"), or one private-use character.
# (A plain comment: Appendix A would print the pattern, whose backslashes read as TeX on the site.)
JUNK = re.compile(r"\(cid:\d+\)|[\ue000-\uf8ff\U000f0000-\U000ffffd\U00100000-\U0010fffd]")
#: What :func:`chunklab.preprocess.pipeline` does with glyph junk.
JUNK_MODES = ("keep", "drop")


def junk_counts(text: str) -> dict[str, int]:
    """``{"cid": n, "private_use": m}``: the glyph junk in ``text``.

    >>> junk_counts("(cid:12)(cid:7)标题\\ue001")
    {'cid': 2, 'private_use': 1}
    """
    cid = pua = 0
    for m in JUNK.finditer(text):
        if m.group(0).startswith("(cid:"):
            cid += 1
        else:
            pua += 1
    return {"cid": cid, "private_use": pua}


def clean_text(text: str, collapse: bool = True) -> tuple[str, list[int]]:
    """``text`` without glyph junk, and the indices of ``text`` kept (in order).

    With ``collapse``, a space left at either end or next to another space by a removal is dropped
    too (``"(cid:3) 标题"`` is ``"标题"``, not ``" 标题"``); spaces elsewhere are kept as they are.

    >>> clean_text("第(cid:3) 一\\ue000 章")
    ('第 一 章', [0, 8, 9, 11, 12])
    """
    junk = [False] * len(text)
    for m in JUNK.finditer(text):
        for i in range(m.start(), m.end()):
            junk[i] = True
    kept: list[int] = []
    for i, ch in enumerate(text):
        if junk[i]:
            continue
        if collapse and ch == " ":
            after_removal = i > 0 and junk[i - 1] or i + 1 < len(text) and junk[i + 1]
            if after_removal and (not kept or text[kept[-1]] == " "):
                continue
        kept.append(i)
    if collapse:
        while kept and text[kept[-1]] == " " and kept[-1] + 1 < len(text):   # a removal followed it
            kept.pop()
    return "".join(text[i] for i in kept), kept


def _remap(kept: list[int], n: int) -> list[int]:
    """Old offset (0..n) -> new offset: how many kept characters lie before it."""
    new = [0] * (n + 1)
    j = 0
    for o in range(n + 1):
        while j < len(kept) and kept[j] < o:
            j += 1
        new[o] = j
    return new


def _clean_segment(seg: Segment) -> tuple[Segment | None, dict[str, int]]:
    counts = junk_counts(seg.text)
    if not counts["cid"] and not counts["private_use"]:
        return seg, counts
    table = seg.kind == "table"
    text, kept = clean_text(seg.text, collapse=not table)
    if not text.strip():
        return None, counts
    changes: dict[str, Any] = {"text": text}
    if seg.chars and len(seg.chars) == len(seg.text):
        changes["chars"] = tuple(seg.chars[i] for i in kept)
    elif seg.chars:
        changes["chars"] = None
    if seg.cells:
        new = _remap(kept, len(seg.text))
        changes["cells"] = tuple((new[c[0]], new[c[1]], *c[2:]) for c in seg.cells)
    return replace(seg, **changes), counts


def drop_junk(pages: Sequence[Page], footnotes: Sequence[Segment] = ()
              ) -> tuple[list[Page], list[Segment], list[dict[str, int]]]:
    """The pages (and footnote segments) with glyph junk removed from every segment's text.

    Per-character boxes and table cell offsets follow the text; a segment left with nothing but
    spaces is dropped, and a page left with no segment is skipped with that reason. Returns the
    pages, the footnotes and one ``{"page", "cid", "private_use"}`` per page that had junk.
    """
    per_page: dict[int, dict[str, int]] = {}

    def clean(segs: Sequence[Segment]) -> list[Segment]:
        out = []
        for seg in segs:
            new, counts = _clean_segment(seg)
            if counts["cid"] or counts["private_use"]:
                tally = per_page.setdefault(seg.page, {"page": seg.page, "cid": 0, "private_use": 0})
                tally["cid"] += counts["cid"]
                tally["private_use"] += counts["private_use"]
            if new is not None:
                out.append(new)
        return out

    out_pages = []
    for page in pages:
        if not page.segments:
            out_pages.append(page)
            continue
        segs = clean(page.segments)
        skipped = page.skipped
        if not segs and not skipped:
            skipped = "no text left once glyphs without a Unicode mapping or private-use characters were dropped"
        out_pages.append(replace(page, segments=segs, skipped=skipped))
    notes = clean(footnotes)
    return out_pages, notes, [per_page[p] for p in sorted(per_page)]
