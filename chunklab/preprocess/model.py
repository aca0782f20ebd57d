"""The parsed-PDF data model: pages, their text segments and boxes, and why a page was skipped.

:mod:`chunklab.preprocess.pdf` builds pages of segments from a file (:mod:`chunklab.preprocess.tables` makes the table
segments), and :mod:`chunklab.preprocess.layout` orders and filters them. Coordinates are pdfplumber's:
points, origin at the top-left corner of the page, ``bbox = (x0, top, x1, bottom)``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

__all__ = ["Segment", "Page", "Region", "EMPTY_PAGE", "NO_TEXT_LAYER"]

#: ``skipped_pages`` reason prefixes.
EMPTY_PAGE = "empty page: no text and no image"
NO_TEXT_LAYER = "no text layer (a scanned page)"


@dataclass
class Segment:
    """A run of text on one baseline of one page: a line of a column, a table, or an OCR line.

    ``chars`` holds the horizontal extent ``(x0, x1)`` of each character of
    ``text`` (a space inserted for a gap spans the gap); it is None when only the
    segment's box is known (OCR, tables). A table segment's ``text`` is a
    Markdown table and ``cells`` gives ``(start, end, bbox)`` of each cell's text in it
    (``(start, end, bbox, page)`` once a table is joined across pages).
    """

    page: int
    text: str
    x0: float
    top: float
    x1: float
    bottom: float
    size: float
    chars: tuple[tuple[float, float], ...] | None = None
    kind: str = "text"
    cells: tuple[tuple, ...] = ()
    #: tables: ``(row, col, rowspan, colspan)`` of the merged cells; how the table was found
    #: (``"ruled"``: a grid of lines, ``"rules"``: horizontal rules only); the pages it runs over
    spans: tuple[tuple[int, int, int, int], ...] = ()
    table_kind: str = ""
    pages: tuple[int, ...] = ()

    @property
    def bbox(self) -> tuple[float, float, float, float]:
        return (self.x0, self.top, self.x1, self.bottom)

    @property
    def width(self) -> float:
        return self.x1 - self.x0


@dataclass
class Page:
    """One page: its number (1-based), size, segments, and why it was skipped (if it was)."""

    number: int
    width: float
    height: float
    segments: list[Segment] = field(default_factory=list)
    n_images: int = 0
    skipped: str | None = None
    figures: list[tuple[float, float, float, float]] = field(default_factory=list)
    #: glyphs without a Unicode mapping (``(cid:N)``) in the text layer, and segments of them re-read by OCR
    unmapped: int = 0
    ocr_segments: int = 0
    ocr: dict[str, Any] | None = None


class Region(NamedTuple):
    """Where a piece of text sits: page number (1-based) and box in points."""

    page: int
    x0: float
    top: float
    x1: float
    bottom: float
