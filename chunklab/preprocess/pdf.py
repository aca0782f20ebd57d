"""Digital PDF extraction: text with page numbers and positions, kept in ``Document.meta``.

pdfplumber (over pdfminer.six) gives every character of a page's text layer
with its box. This module turns those characters into *segments* — runs of
characters on one baseline with no wide gap, i.e. a line of one column — and
assembles segments into a :class:`~chunklab.Document` whose ``meta["spans"]``
says, for every segment, which ``[start, end)`` of the text it became, on
which page, where, and where each of its characters is. :func:`locate` maps
any chunk back to pages and boxes, so a chunk can cite "第 2 页" and be
highlighted on the page.

Coordinates are pdfplumber's: points, origin at the top-left corner of the
page, ``bbox = (x0, top, x1, bottom)``.

How segments become text (:func:`build_document`): in the order given by
:func:`chunklab.preprocess.layout.order_page`, consecutive segments of one
paragraph are joined without a line break when the first fills its column (a
wrapped line: nothing between two Chinese characters, one space between two
Latin words); a wider line pitch, a change of font size, or a short line ends
the paragraph (``\\n\\n`` or ``\\n``). Segments on the same baseline in naive
order are joined with a space, as pdfplumber's own ``extract_text`` does.

Bad input never takes a whole corpus down: :func:`read_pages` raises
:class:`PdfError` (a ``ValueError``) with the reason for a file that cannot be
read at all (missing, empty, truncated, not a PDF, password-protected), and
records a page it cannot use in ``meta["skipped_pages"]`` with the reason
(empty page, a scanned page with OCR off or unavailable, a page that fails to
parse). :func:`chunklab.preprocess.extract_many` collects failures per file.
"""
from __future__ import annotations

import bisect
import statistics
import tempfile
from pathlib import Path
from typing import Any, Sequence

from ..core import Chunk, Document
from . import ocr as ocr_mod
from .layout import order_page
from .model import EMPTY_PAGE, NO_TEXT_LAYER, Page, Region, Segment
from .tables import find_tables

__all__ = [
    "PdfError", "Segment", "Page", "Region", "read_pages", "segments_from_chars", "build_document",
    "extract_pdf", "locate", "pages_of", "EMPTY_PAGE", "NO_TEXT_LAYER",
]

#: A gap wider than this many font sizes between two characters on one baseline starts a new
#: segment (a column gutter, a table cell border); narrower gaps are word spaces.
SEGMENT_GAP = 1.0
#: A gap wider than this many font sizes, with no space character in it, becomes a space.
SPACE_GAP = 0.25
#: A line ending within this many font sizes of its column's right edge counts as wrapped (the
#: paragraph goes on); a shorter one ends its line.
WRAP_SLACK = 2.5
#: A line pitch more than this many times the usual pitch at that font size starts a paragraph.
PARAGRAPH_PITCH = 1.18


class PdfError(ValueError):
    """A PDF that cannot be read at all; ``path`` and ``reason`` say which and why."""

    def __init__(self, path: str | Path, reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{path}: {reason}")


# -- characters to segments ------------------------------------------------------------------

def segments_from_chars(chars: Sequence[dict], page: int) -> list[Segment]:
    """Group pdfplumber characters into segments (see :data:`SEGMENT_GAP`).

    Characters whose ``bottom`` lies within a third of the font size of a line's
    first character share that line; a line is cut into segments at gaps wider
    than ``SEGMENT_GAP`` font sizes. Rotated characters (``upright`` False) are
    kept in the line they sit on.
    """
    ordered = sorted((c for c in chars if c.get("text")), key=lambda c: (c["bottom"], c["x0"]))
    lines: list[list[dict]] = []
    for c in ordered:
        if lines and abs(c["bottom"] - lines[-1][0]["bottom"]) <= max(c["size"], 1.0) / 3:
            lines[-1].append(c)
        else:
            lines.append([c])
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
        if prev is not None and text and not text[-1].isspace() and c["x0"] - prev["x1"] > SPACE_GAP * c["size"]:
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


# -- reading a file ------------------------------------------------------------------------------

def _open(path: Path, password: str | None):
    import pdfplumber
    from pdfminer.pdfdocument import PDFPasswordIncorrect
    from pdfminer.pdfparser import PDFSyntaxError
    from pdfminer.psexceptions import PSEOF

    if not path.exists():
        raise PdfError(path, "no such file")
    if path.is_dir():
        raise PdfError(path, "is a folder, not a PDF file")
    if path.stat().st_size == 0:
        raise PdfError(path, "empty file (0 bytes)")
    try:
        pdf = pdfplumber.open(path, password=password or "")
        _ = pdf.pages  # the page tree is parsed lazily; parse it here so its errors surface here
        return pdf
    except Exception as exc:  # pdfplumber wraps pdfminer's errors in PdfminerException
        inner = exc.args[0] if exc.args and isinstance(exc.args[0], BaseException) else exc
        if isinstance(inner, PDFPasswordIncorrect):
            what = "a wrong password was given" if password else "no password was given"
            raise PdfError(path, f"password-protected PDF: {what} (pass password=...)") from exc
        if isinstance(inner, PSEOF):
            raise PdfError(path, "truncated or damaged PDF: unexpected end of file") from exc
        if isinstance(inner, PDFSyntaxError):
            raise PdfError(path, f"not a readable PDF: {inner}") from exc
        raise PdfError(path, f"cannot open PDF: {type(inner).__name__}: {inner}") from exc


def read_pages(path: str | Path, password: str | None = None, tables: bool = False,
               ocr: bool | str = False, lang: str = "chi_sim") -> list[Page]:
    """Every page of the PDF at ``path`` as a :class:`Page` of segments.

    ``tables``: find ruled tables (:func:`chunklab.preprocess.tables.find_tables`);
    each becomes one ``kind="table"`` segment holding a Markdown table, and
    its characters leave the text flow. ``ocr``: ``True``, ``False`` or
    ``"auto"`` (OCR when Tesseract and ``lang`` are installed) for pages with
    an image and no text layer. A page that yields no segments has ``skipped``
    set to the reason. Raises :class:`PdfError` when the file cannot be read.
    """
    path = Path(path)
    pdf = _open(path, password)
    pages: list[Page] = []
    with pdf:
        for number, pp in enumerate(pdf.pages, 1):
            page = Page(number, float(pp.width), float(pp.height))
            pages.append(page)
            try:
                chars = list(pp.chars)
                page.n_images = len(pp.images)
                if tables and chars:
                    found = find_tables(pp, number)
                    if found:
                        page.segments.extend(found)
                        chars = [c for c in chars if not any(_inside(c, t.bbox) for t in found)]
                page.segments.extend(segments_from_chars(chars, number))
            except Exception as exc:   # one bad page must not lose the others
                page.segments = []
                page.skipped = f"page could not be parsed: {type(exc).__name__}: {exc}"
                continue
            if page.segments:
                continue
            if page.n_images == 0:
                page.skipped = EMPTY_PAGE
                continue
            _ocr_page(pp, page, ocr, lang)
    return pages


def _inside(c: dict, bbox: tuple[float, float, float, float]) -> bool:
    cx, cy = (c["x0"] + c["x1"]) / 2, (c["top"] + c["bottom"]) / 2
    return bbox[0] <= cx <= bbox[2] and bbox[1] <= cy <= bbox[3]


def _ocr_page(pp, page: Page, ocr: bool | str, lang: str) -> None:
    """OCR an image-only page in place (or record why not)."""
    if not ocr:
        page.skipped = f"{NO_TEXT_LAYER}; OCR is off"
        return
    reason = ocr_mod.ocr_unavailable_reason(lang)
    if reason:
        page.skipped = f"{NO_TEXT_LAYER}; OCR unavailable: {reason}"
        return
    # Render at the resolution of the largest embedded image: upsampling a 200 dpi scan to
    # 300 dpi made Tesseract worse (CER 3.5% -> 9% on the generated scan).
    img = max(pp.images, key=lambda im: im["srcsize"][0] * im["srcsize"][1])
    width_pt = max(float(img["x1"]) - float(img["x0"]), 1.0)
    dpi = int(min(400, max(150, round(img["srcsize"][0] / (width_pt / 72)))))
    try:
        with tempfile.TemporaryDirectory() as tmp:
            png = Path(tmp) / f"page{page.number}.png"
            pp.to_image(resolution=dpi).original.convert("L").save(png)
            lines = ocr_mod.ocr_lines(png, lang=lang)
    except (ocr_mod.OcrError, OSError) as exc:
        page.skipped = f"{NO_TEXT_LAYER}; OCR failed: {exc}"
        return
    s = 72.0 / dpi
    for ln in lines:
        height = (ln.bottom - ln.top) * s
        page.segments.append(Segment(page.number, ln.text, round(ln.x0 * s, 2), round(ln.top * s, 2),
                                     round(ln.x1 * s, 2), round(ln.bottom * s, 2), round(height * 0.85, 2),
                                     kind="ocr"))
    page.ocr = {"engine": ocr_mod.tesseract_version(), "lang": lang, "dpi": dpi, "lines": len(lines),
                "mean_confidence": round(sum(ln.confidence for ln in lines) / len(lines), 1) if lines else None}
    if not page.segments:
        page.skipped = f"{NO_TEXT_LAYER}; OCR found no text"


# -- segments to a document --------------------------------------------------------------------------

def _latin(ch: str) -> bool:
    return ch.isascii() and (ch.isalnum() or ch in ".,;:%)")


def _join(prev: Segment, cur: Segment) -> str:
    return " " if _latin(prev.text[-1]) and _latin(cur.text[0]) else ""


def _pitch_key(size: float) -> float:
    return round(size * 2) / 2


def _separator(prev, cur, pitch: dict[float, float]) -> str:
    """What goes between two consecutive placed segments (see the module docstring)."""
    p, c = prev.segment, cur.segment
    if "table" in (p.kind, c.kind):
        return "\n\n"
    if cur.same_line:
        return " "
    if abs(p.size - c.size) > 0.1 * max(p.size, c.size):
        return "\n\n"
    # a line ending within WRAP_SLACK font sizes of its column's right edge was wrapped: a Latin
    # word or number that did not fit moved to the next line and left that much room
    full = p.x1 >= prev.right - WRAP_SLACK * p.size
    if p.page != c.page or prev.column != cur.column or c.top < p.top:
        return _join(p, c) if full else "\n\n"
    step = c.top - p.top
    if step > PARAGRAPH_PITCH * pitch.get(_pitch_key(c.size), 1.6 * c.size):
        return "\n\n"
    return _join(p, c) if full else "\n"


def _line_pitches(pages: Sequence[Page]) -> dict[float, float]:
    """Font size (to half a point) -> the most common distance between a line and the next line
    below it in the same column, over all pages: the line pitch of running text at that size."""
    steps: dict[float, list[float]] = {}
    for page in pages:
        segs = sorted((s for s in page.segments if s.kind != "table"), key=lambda s: s.top)
        for i, s in enumerate(segs):
            for t in segs[i + 1:]:
                if t.top - s.top > 0.5 * s.size and t.x0 < s.x1 and s.x0 < t.x1:
                    step = t.top - s.top
                    if step < 3 * s.size and abs(t.size - s.size) < 0.1 * s.size:
                        steps.setdefault(_pitch_key(s.size), []).append(round(step * 2) / 2)
                    break
    return {k: statistics.mode(v) for k, v in steps.items()}


def build_document(pages: Sequence[Page], doc_id: str, title: str | None = None, order: str = "columns",
                   meta: dict[str, Any] | None = None) -> Document:
    """Assemble pages into a :class:`~chunklab.Document` in the reading order ``order``.

    ``order``: ``"naive"`` (top to bottom, left to right across the whole page)
    or ``"columns"`` (layout-aware, see :func:`~chunklab.preprocess.layout.order_page`).
    ``meta`` (extra keys) is merged into the document's meta, which holds:

    ``spans``
        one dict per text segment or table cell, in text order: ``page``,
        ``start``, ``end``, ``bbox``, ``kind`` (``text``, ``ocr``, ``cell``) and
        ``chars`` (per-character ``[x0, x1]``, or None).
    ``tables``
        one dict per table: ``page``, ``start``, ``end``, ``bbox``, ``rows``, ``cols``.
    ``skipped_pages``
        ``{"page", "reason"}`` for every page that gave no text.
    ``columns``
        page number -> the column intervals ``[x0, x1]`` used (``"columns"`` order).
    """
    parts: list[str] = []
    pos = 0
    spans: list[dict[str, Any]] = []
    tables: list[dict[str, Any]] = []
    columns: dict[int, list[list[float]]] = {}
    skipped = []
    prev = None
    pitch = _line_pitches(pages)
    for page in pages:
        if page.skipped or not page.segments:
            skipped.append({"page": page.number, "reason": page.skipped or EMPTY_PAGE})
            continue
        placed, cols = order_page(page, order)
        if order == "columns":
            columns[page.number] = [[round(a, 2), round(b, 2)] for a, b in cols]
        for cur in placed:
            if prev is not None:
                sep = _separator(prev, cur, pitch)
                parts.append(sep)
                pos += len(sep)
            seg = cur.segment
            start, end = pos, pos + len(seg.text)
            if seg.kind == "table":
                for cs, ce, box in seg.cells:
                    if ce > cs:
                        spans.append({"page": seg.page, "start": start + cs, "end": start + ce,
                                      "bbox": list(box), "kind": "cell", "chars": None})
                rows = seg.text.count("\n") + 1
                tables.append({"page": seg.page, "start": start, "end": end, "bbox": list(seg.bbox),
                               "rows": rows - 1, "cols": seg.text.split("\n")[0].count(" | ") + 1})
            else:
                spans.append({"page": seg.page, "start": start, "end": end, "bbox": list(seg.bbox),
                              "kind": seg.kind, "chars": [list(c) for c in seg.chars] if seg.chars else None})
            parts.append(seg.text)
            pos = end
            prev = cur
    text = "".join(parts)
    m: dict[str, Any] = {
        "type": "pdf", "n_pages": len(pages), "page_sizes": [[p.width, p.height] for p in pages],
        "order": order, "spans": spans, "tables": tables, "skipped_pages": skipped,
    }
    if order == "columns":
        m["columns"] = columns
    ocr_pages = {p.number: p.ocr for p in pages if p.ocr}
    if ocr_pages:
        m["ocr"] = ocr_pages
    m.update(meta or {})
    return Document(doc_id, text, title=title, meta=m)


def extract_pdf(path: str | Path, doc_id: str | None = None, order: str = "naive", password: str | None = None,
                title: str | None = None) -> Document:
    """Plain digital extraction: the text layer of every page, in ``order`` (naive by default),
    with pages and boxes in ``meta`` and no other preprocessing (no header removal, no tables, no OCR).

    For the whole pipeline see :func:`chunklab.preprocess.pipeline`.
    """
    path = Path(path)
    pages = read_pages(path, password=password)
    return build_document(pages, doc_id or path.stem, title=title, order=order,
                          meta={"source": str(path), "preprocess": [_extract_step(pages, False, False)]})


def _extract_step(pages: Sequence[Page], tables: bool, ocr: bool | str) -> dict[str, Any]:
    import pdfplumber
    return {"step": "extract", "engine": f"pdfplumber {pdfplumber.__version__}", "pages": len(pages),
            "tables": bool(tables), "ocr": ocr,
            "skipped_pages": [p.number for p in pages if p.skipped]}


# -- from chunks back to the page -----------------------------------------------------------------

def _range(target: Any, end: int | None) -> tuple[int, int]:
    if isinstance(target, Chunk):
        return target.start, target.end
    if end is None:
        raise TypeError("locate(document, start, end): give end, or pass a Chunk as start")
    return int(target), int(end)


def locate(document: Document, start: int | Chunk, end: int | None = None, merge: bool = False) -> list[Region]:
    """Where the text ``document.text[start:end]`` (or a chunk) sits on the pages.

    One :class:`Region` per segment or table cell the range touches, clipped
    to the characters it covers when their positions are known; with
    ``merge=True``, one region per page (the union of the boxes). Separators
    the assembly inserted (line breaks, spaces) have no position. A document
    without ``meta["spans"]`` (not from a PDF) gives ``[]``.

    >>> doc = Document("d", "甲乙丙", meta={"spans": [
    ...     {"page": 2, "start": 0, "end": 3, "bbox": [10, 20, 40, 30], "chars": [[10, 20], [20, 30], [30, 40]]}]})
    >>> locate(doc, 1, 3)
    [Region(page=2, x0=20, top=20, x1=40, bottom=30)]
    """
    a, b = _range(start, end)
    spans = document.meta.get("spans") or []
    out: list[Region] = []
    i = max(0, bisect.bisect_right(spans, a, key=lambda s: s["start"]) - 1)
    for s in spans[i:]:
        if s["start"] >= b:
            break
        lo, hi = max(a, s["start"]), min(b, s["end"])
        if lo >= hi:
            continue
        x0, top, x1, bottom = s["bbox"]
        chars = s.get("chars")
        if chars:
            x0 = chars[lo - s["start"]][0]
            x1 = chars[hi - 1 - s["start"]][1]
        out.append(Region(s["page"], x0, top, x1, bottom))
    if merge:
        by_page: dict[int, Region] = {}
        for r in out:
            q = by_page.get(r.page)
            by_page[r.page] = r if q is None else Region(
                r.page, min(q.x0, r.x0), min(q.top, r.top), max(q.x1, r.x1), max(q.bottom, r.bottom))
        out = [by_page[p] for p in sorted(by_page)]
    return out


def pages_of(document: Document, start: int | Chunk, end: int | None = None) -> list[int]:
    """The page numbers (1-based, ascending) a range of the document's text comes from.

    >>> doc = Document("d", "甲乙", meta={"spans": [
    ...     {"page": 1, "start": 0, "end": 1, "bbox": [0, 0, 1, 1]}, {"page": 2, "start": 1, "end": 2, "bbox": [0, 0, 1, 1]}]})
    >>> pages_of(doc, 0, 2)
    [1, 2]
    """
    return sorted({r.page for r in locate(document, start, end)})
