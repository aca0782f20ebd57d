"""Characters of a PDF page to segments: runs of characters on one baseline with no wide gap.

pdfplumber gives every character of a page's text layer with its box;
:func:`segments_from_chars` groups them into lines (sub- and superscripts
joined to the line they sit on) and cuts each line at wide gaps (a column
gutter, a table cell border). Used for body text (:mod:`chunklab.preprocess.pdf`)
and for the text of table cells (:mod:`chunklab.preprocess.tables`).
"""
from __future__ import annotations

import statistics
from typing import Sequence

from .model import Segment

__all__ = ["segments_from_chars", "SEGMENT_GAP", "SPACE_GAP", "SPACE_GAP_LATIN", "SCRIPT_SIZE"]

#: A gap wider than this many font sizes between two characters on one baseline starts a new
#: segment (a column gutter, a table cell border); narrower gaps are word spaces.
SEGMENT_GAP = 1.0
#: A gap wider than this many font sizes, with no space character in it, becomes a space.
SPACE_GAP = 0.25
#: The same between two Latin letters or digits: TeX sets a word space as a gap of about a
#: quarter of an em (no space character), which must not glue ``Network Topology`` together.
SPACE_GAP_LATIN = 0.18
#: Characters at most this many times the size of the line they sit on are its sub- or
#: superscripts (:func:`_attach_scripts`).
SCRIPT_SIZE = 0.8


def _latin(ch: str) -> bool:
    return ch.isascii() and (ch.isalnum() or ch in ".,;:%)")


def _inside(c: dict, bbox: tuple[float, float, float, float]) -> bool:
    """Whether the centre of pdfplumber character ``c`` lies in ``bbox`` ``(x0, top, x1, bottom)``."""
    cx, cy = (c["x0"] + c["x1"]) / 2, (c["top"] + c["bottom"]) / 2
    return bbox[0] <= cx <= bbox[2] and bbox[1] <= cy <= bbox[3]


# -- characters to segments ------------------------------------------------------------------

def segments_from_chars(chars: Sequence[dict], page: int, scripts: bool = True) -> list[Segment]:
    """Group pdfplumber characters into segments (see :data:`SEGMENT_GAP`).

    Characters whose ``bottom`` lies within a third of the font size of a line's
    first character share that line; a line is cut into segments at gaps wider
    than ``SEGMENT_GAP`` font sizes. Rotated characters (``upright`` False) are
    kept in the line they sit on. With ``scripts`` (the default), lines of sub- and
    superscripts join the line they belong to (:func:`_attach_scripts`).
    """
    ordered = sorted((c for c in chars if c.get("text")), key=lambda c: (c["bottom"], c["x0"]))
    lines: list[list[dict]] = []
    for c in ordered:
        if lines and abs(c["bottom"] - lines[-1][0]["bottom"]) <= max(c["size"], 1.0) / 3:
            lines[-1].append(c)
        else:
            lines.append([c])
    if scripts:
        lines = _attach_scripts(lines)
    segments: list[Segment] = []
    for line in lines:
        line.sort(key=lambda c: c["x0"])
        run: list[dict] = []
        for c in line:
            if run and c["x0"] - run[-1]["x1"] > SEGMENT_GAP * max(c["size"], run[-1]["size"]):
                seg = _segment(run, page)
                if seg:
                    segments.append(seg)
                run = []
            run.append(c)
        seg = _segment(run, page)
        if seg:
            segments.append(seg)
    return segments


def _attach_scripts(lines: list[list[dict]]) -> list[list[dict]]:
    """Lines of small characters that sit on a line of larger ones, merged into it.

    Subscripts and superscripts (``x₁``, ``e^x``, the ``2`` of ``b²``) are set in a smaller size
    a little below or above the baseline, so grouping by baseline alone puts them on a line of
    their own and a formula comes out in pieces (``𝑥 ,𝑥 ,⋯,𝑥`` then ``1 2 𝑛``). A line whose
    characters are at most :data:`SCRIPT_SIZE` times the size of a neighbouring line, and whose
    vertical middle lies within that line's box widened by 0.45 of its font size, joins it.
    """
    def size(line: list[dict]) -> float:
        return statistics.median(c["size"] for c in line)

    def box(line: list[dict]) -> tuple[float, float]:
        return min(c["top"] for c in line), max(c["bottom"] for c in line)

    out: list[list[dict]] = []
    pending = list(lines)
    for i, line in enumerate(pending):
        small = size(line)
        mid = sum(box(line)) / 2
        host = None
        for j in (i - 1, i + 1):
            if 0 <= j < len(pending) and pending[j] is not line:
                big = size(pending[j])
                top, bottom = box(pending[j])
                if small <= SCRIPT_SIZE * big and top - 0.45 * big <= mid <= bottom + 0.45 * big:
                    if host is None or abs(sum(box(pending[j])) / 2 - mid) < abs(sum(box(host)) / 2 - mid):
                        host = pending[j]
        if host is not None:
            host.extend(line)
            pending[i] = host
        else:
            out.append(line)
    return out


def _segment(run: list[dict], page: int) -> Segment | None:
    text: list[str] = []
    boxes: list[tuple[float, float]] = []
    prev = None
    for c in run:
        t = c["text"]
        if t.isspace():
            if text and not text[-1].isspace():
                text.append(" ")
                boxes.append((c["x0"], c["x1"]))
            prev = c
            continue
        gap = SPACE_GAP_LATIN if _latin(prev["text"][-1:] if prev is not None else "") and _latin(t[:1]) else SPACE_GAP
        if prev is not None and text and not text[-1].isspace() and c["x0"] - prev["x1"] > gap * c["size"] - 0.01:
            text.append(" ")
            boxes.append((prev["x1"], c["x0"]))
        for ch in t:   # a ligature's characters share its box
            text.append(ch)
            boxes.append((c["x0"], c["x1"]))
        prev = c
    while text and text[-1].isspace():
        text.pop()
        boxes.pop()
    if not text:
        return None
    solid = [c for c in run if not c["text"].isspace()]
    return Segment(
        page=page, text="".join(text),
        x0=round(min(c["x0"] for c in solid), 2), top=round(min(c["top"] for c in solid), 2),
        x1=round(max(c["x1"] for c in solid), 2), bottom=round(max(c["bottom"] for c in solid), 2),
        size=round(statistics.median(c["size"] for c in solid), 2),
        chars=tuple((round(a, 2), round(b, 2)) for a, b in boxes),
    )


