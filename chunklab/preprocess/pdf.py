"""Digital PDF extraction: text with page numbers and positions, kept in ``Document.meta``.

pdfplumber (over pdfminer.six) gives every character of a page's text layer
with its box. :mod:`chunklab.preprocess.chars` turns those characters into
*segments* — runs of characters on one baseline with no wide gap, i.e. a line
of one column — and this module reads pages (tables, figures, OCR) and
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

Limits: a page may hold at most :data:`MAX_PAGE_CHARS` characters and a file
:data:`MAX_FILE_CHARS` (:func:`char_limits`, ``--max-page-chars`` and
``--max-pdf-chars`` raise them); past either, :func:`read_pages` stops parsing
and raises :class:`PdfError` naming the file, the page and the limit (a 7.7 KB
file whose one compressed stream inflates to 2 MB of text lines took 4.4 GB).
Each page's parsed objects are released once the page is read, so memory grows
with the text extracted, not with the pages' parse trees.
"""
from __future__ import annotations

import bisect
import contextlib
import math
import re
import statistics
import tempfile
from pathlib import Path
from typing import Any, Sequence

from ..core import Chunk, Document
from ..params import Param
from . import ocr as ocr_mod
from .chars import _inside, _latin, segments_from_chars
from .layout import _CID, FOOTNOTE_MARK, order_page
from .limits import (_CHAR_LIMITS, _OCR_LIMIT, MAX_FILE_CHARS, MAX_OCR_PAGES, MAX_PAGE_CHARS, _parse_layout,
                     _TooManyChars, char_limits, ocr_limits)
from .model import EMPTY_PAGE, NO_TEXT_LAYER, Page, Region, Segment
from .tables import find_rule_tables, find_tables

__all__ = [
    "PdfError", "Segment", "Page", "Region", "read_pages", "build_document", "figure_records",
    "extract_pdf", "locate", "pages_of", "EMPTY_PAGE", "NO_TEXT_LAYER", "MAX_PAGE_CHARS", "MAX_FILE_CHARS",
    "char_limits", "ocr_limits", "MAX_OCR_PAGES", "MAX_OCR_PIXELS", "MIN_OCR_DPI",
]

#: Pixels a page is rendered with for OCR at most (6,300 x 6,300; A0 at 160 dpi): a larger page
#: is rendered at a lower resolution (30,000 x 30,000 pixels for a 14,400 pt page died of memory).
MAX_OCR_PIXELS = 40_000_000
#: Below this resolution (the page too large for :data:`MAX_OCR_PIXELS`) a page is not OCRed:
#: its reading fails with a reason that names the page box.
MIN_OCR_DPI = 50


def _fit_dpi(width: float, height: float, dpi: float) -> float:
    """``dpi``, or less, so that a ``width`` x ``height`` pt page renders to at most :data:`MAX_OCR_PIXELS`."""
    area = max(width, 1.0) * max(height, 1.0) / (72.0 * 72.0)   # square inches
    return min(float(dpi), math.sqrt(MAX_OCR_PIXELS / area))


def _too_large(width: float, height: float) -> str:
    return (f"the page box ({width:,.0f} x {height:,.0f} pt) is too large to render for OCR: at "
            f"{MIN_OCR_DPI} dpi it would take {round(width * height * (MIN_OCR_DPI / 72) ** 2):,} pixels, "
            f"more than the {MAX_OCR_PIXELS:,} allowed")

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
        if not pdf.pages:  # the page tree is parsed lazily; parse it here so its errors surface here
            loop = _tree_loops(pdf.doc.catalog.get("Pages"))
            pdf.close()
            raise PdfError(path, "its page tree refers to itself (a loop), so it has no pages" if loop
                           else "the PDF has no pages")
        return pdf
    except PdfError:
        raise
    except Exception as exc:  # pdfplumber wraps pdfminer's errors in PdfminerException
        inner = exc.args[0] if exc.args and isinstance(exc.args[0], BaseException) else exc
        if isinstance(inner, PDFPasswordIncorrect):
            what = "a wrong password was given" if password else "no password was given"
            raise PdfError(path, f"password-protected PDF: {what} (from Python: read_pages(..., password=...) or "
                                 f"pipeline(..., password=...); the command line reads no passwords: decrypt a "
                                 f"copy first, e.g. qpdf --decrypt --password=PASSWORD in.pdf out.pdf)") from exc
        if isinstance(inner, PSEOF):
            raise PdfError(path, "truncated or damaged PDF: unexpected end of file") from exc
        if isinstance(inner, PDFSyntaxError):
            raise PdfError(path, f"not a readable PDF: {inner}") from exc
        raise PdfError(path, f"cannot open PDF: {type(inner).__name__}: {inner}") from exc


def _tree_loops(root) -> bool:
    """Does the page tree from ``root`` (an object reference) reach a node twice? pdfminer skips the
    second visit silently, so a tree that holds itself reads as a PDF of no pages."""
    from pdfminer.pdftypes import PDFObjRef, resolve1

    seen, todo = set(), [root]
    while todo:
        ref = todo.pop()
        if isinstance(ref, PDFObjRef):
            if ref.objid in seen:
                return True
            seen.add(ref.objid)
        node = resolve1(ref)
        kids = resolve1(node.get("Kids")) if isinstance(node, dict) else None
        todo.extend(kids if isinstance(kids, list) and len(seen) < 1_000_000 else [])
    return False


def read_pages(path: str | Path, password: str | None = None, tables: bool = False,
               ocr: bool | str = False, lang: str = "chi_sim", pages: Sequence[int] | None = None,
               merged: str = "fill", max_page_chars: int | None = None,
               max_file_chars: int | None = None, max_ocr_pages: int | None = None) -> list[Page]:
    """Every page of the PDF at ``path`` (or the 1-based page numbers in ``pages``) as a :class:`Page`.

    ``tables``: find ruled tables (:func:`chunklab.preprocess.tables.find_tables`,
    merged cells handled as ``merged`` says) and tables drawn with horizontal
    rules only (:func:`~chunklab.preprocess.tables.find_rule_tables`); each
    becomes one ``kind="table"`` segment holding a Markdown table, and its
    characters leave the text flow. ``ocr``: ``True``, ``False`` or ``"auto"``
    (OCR when Tesseract and ``lang`` are installed) for pages with an image and
    no text layer. Images on a page with text are kept as figure boxes
    (``Page.figures``), out of the text. A page that yields no segments has
    ``skipped`` set to the reason. Raises :class:`PdfError` when the file cannot
    be read, ``ValueError`` for a page number that is not in the file.

    ``max_page_chars`` / ``max_file_chars`` (default: :func:`char_limits`'s, else
    :data:`MAX_PAGE_CHARS` / :data:`MAX_FILE_CHARS`): a page, or the pages read, with more
    characters is a :class:`PdfError` naming the page and the limit. Each page's parse is
    released once it has been read. ``max_ocr_pages`` (default: :func:`ocr_limits`'s, else
    :data:`MAX_OCR_PAGES`): a page that would be one more read by OCR is a :class:`PdfError`.
    """
    path = Path(path)
    dflt_page, dflt_file = _CHAR_LIMITS.get()
    max_page = Param("int", dflt_page, low=1, none_ok=True).validate("max_page_chars", max_page_chars)
    max_file = Param("int", dflt_file, low=1, none_ok=True).validate("max_file_chars", max_file_chars)
    max_page = dflt_page if max_page is None else max_page
    max_file = dflt_file if max_file is None else max_file
    max_ocr = Param("int", _OCR_LIMIT.get(), low=0, none_ok=True).validate("max_ocr_pages", max_ocr_pages)
    pdf = _open(path, password)
    out: list[Page] = []
    total = 0
    with pdf:
        numbers = list(range(1, len(pdf.pages) + 1)) if pages is None else [int(n) for n in pages]
        bad = [n for n in numbers if not 1 <= n <= len(pdf.pages)]
        if bad:
            raise ValueError(f"{path}: no page {bad[0]} (the file has {len(pdf.pages)} pages)")
        run = ocr_mod.OcrRun(str(path), _OCR_LIMIT.get() if max_ocr is None else max_ocr, max(numbers, default=0))
        with contextlib.closing(run):
            for number in numbers:
                pp = pdf.pages[number - 1]
                try:
                    total += _read_page(path, pp, number, out, tables, (ocr and run), lang, merged, max_page,
                                        max_file - total, max_file)
                finally:
                    pp.close()   # its parse (pdfminer's objects, pdfplumber's dicts) is not needed again
    return out


def _read_page(path: Path, pp, number: int, out: list[Page], tables: bool, ocr: bool | str, lang: str,
               merged: str, max_page: int, file_left: int, max_file: int) -> int:
    """Read page ``number`` (pdfplumber's ``pp``) into a new :class:`Page` appended to ``out``;
    the number of characters its text layer holds."""
    page = Page(number, float(pp.width), float(pp.height))
    out.append(page)
    n_chars = 0
    try:
        try:
            n_chars = _parse_layout(pp, min(max_page, file_left))
        except _TooManyChars:
            if file_left < max_page:
                raise PdfError(path, f"page {number} takes the pages read past {max_file:,} "
                                     f"characters, the limit per file (raise it with --max-pdf-chars N, or "
                                     f"max_file_chars=)") from None
            raise PdfError(path, f"page {number} has more than {max_page:,} characters, the limit per page "
                                 f"(raise it with --max-page-chars N, or max_page_chars=)") from None
        chars = list(pp.chars)
        page.n_images = len(pp.images)
        if tables and chars:
            found = find_tables(pp, number, merged=merged)
            found += find_rule_tables(pp, number, exclude=[t.bbox for t in found])
            if found:
                page.segments.extend(found)
                chars = [c for c in chars if not any(_inside(c, t.bbox) for t in found)]
        page.segments.extend(segments_from_chars(chars, number))
        page.unmapped = sum(g.text.count("(cid:") for g in page.segments)
        if page.unmapped and ocr:
            _ocr_unmapped(pp, page, lang)
        if page.segments:
            page.figures = [
                tuple(round(float(im[k]), 2) for k in ("x0", "top", "x1", "bottom")) for im in pp.images
                if (float(im["x1"]) - float(im["x0"])) * (float(im["bottom"]) - float(im["top"]))
                >= 400.0]   # at least 20 x 20 points: not a bullet or a rule drawn as an image
    except PdfError:
        raise
    except Exception as exc:   # one bad page must not lose the others
        page.segments = []
        page.skipped = f"page could not be parsed: {type(exc).__name__}: {exc}"
        return n_chars
    if page.segments:
        return n_chars
    if page.n_images == 0:
        page.skipped = EMPTY_PAGE
        return n_chars
    _ocr_page(pp, page, ocr, lang)
    return n_chars


#: A segment with at least this many glyphs that have no Unicode mapping (pdfminer writes each
#: as ``(cid:N)``), and more such glyphs than ordinary characters, is read again by OCR.
UNMAPPED_MIN = 3


def _ocr_unmapped(pp, page: Page, lang: str) -> None:
    """OCR, in place, the segments whose glyphs the PDF draws without a Unicode mapping.

    A font embedded without a ToUnicode map (common for bold or decorative faces in TeX
    output) draws the right glyphs, but the text layer only has glyph ids: a heading such as
    ``一、选择题`` comes out as ``(cid:258)(cid:48814)…``. Only such segments are rendered (300 dpi,
    their box), stacked into one image and read by a single Tesseract call; each line read
    goes back to the segment whose band it lies in. The count goes to ``Page.ocr_segments``.
    """
    if ocr_mod.ocr_unavailable_reason(lang):
        return
    from PIL import Image

    targets = []
    for k, g in enumerate(page.segments):
        if g.kind != "text":
            continue
        n = len(_CID.findall(g.text))
        if n >= UNMAPPED_MIN and n >= len(_CID.sub("", g.text).replace(" ", "")):
            targets.append(k)
    if not targets:
        return
    dpi = _fit_dpi(page.width, page.height, 300)
    if dpi < MIN_OCR_DPI:   # the glyphs stay unmapped (counted in page.unmapped)
        return
    whole = pp.to_image(resolution=dpi).original.convert("L")   # render once, crop each segment
    f = dpi / 72.0
    todo = []
    for k in targets:
        g = page.segments[k]
        box = (max(0.0, g.x0 - 2), max(0.0, g.top - 2), min(page.width, g.x1 + 2), min(page.height, g.bottom + 2))
        todo.append((k, whole.crop(tuple(int(round(v * f)) for v in box))))
    gap = 40
    width = max(im.width for _, im in todo) + 2 * gap
    height = sum(im.height + gap for _, im in todo) + gap
    sheet = Image.new("L", (width, height), 255)
    bands = []
    y = gap
    for k, im in todo:
        sheet.paste(im, (gap, y))
        bands.append((k, y, y + im.height))
        y += im.height + gap
    try:
        with tempfile.TemporaryDirectory() as tmp:
            png = Path(tmp) / "unmapped.png"
            sheet.save(png)
            lines = ocr_mod.ocr_lines(png, lang=lang, psm=6)
    except (ocr_mod.OcrError, OSError, ValueError):
        return
    read: dict[int, list[str]] = {}
    for ln in lines:
        mid = (ln.top + ln.bottom) / 2
        for k, top, bottom in bands:
            if top - gap / 2 <= mid <= bottom + gap / 2:
                read.setdefault(k, []).append(ln.text)
                break
    for k, texts in read.items():
        g = page.segments[k]
        text = "".join(texts).strip()
        if text:
            page.segments[k] = Segment(g.page, text, g.x0, g.top, g.x1, g.bottom, g.size, kind="ocr")
    page.ocr_segments = len(read)


def _ocr_page(pp, page: Page, ocr: bool | str, lang: str) -> None:
    """OCR an image-only page in place (or record why not)."""
    if not ocr:
        page.skipped = f"{NO_TEXT_LAYER}; OCR is off"
        return
    reason = ocr_mod.ocr_unavailable_reason(lang)
    if reason:
        page.skipped = f"{NO_TEXT_LAYER}; OCR unavailable: {reason}"
        return
    if isinstance(ocr, ocr_mod.OcrRun) and not ocr.start(page.number):
        raise PdfError(Path(ocr.name), f"page {page.number} needs OCR, but {ocr.limit:,} pages have been "
                       f"read by OCR already, the limit per file (about 0.5 s a page; raise it with "
                       f"--max-ocr-pages N, or max_ocr_pages=)")
    # Render at the resolution of the largest embedded image: upsampling a 200 dpi scan to
    # 300 dpi made Tesseract worse (CER 3.5% -> 9% on the generated scan).
    # Every failure (a page box too large to render, memory, the renderer, Tesseract) is recorded
    # as "OCR failed" with its reason, which pdf_document turns into an error naming file and page.
    try:
        img = max(pp.images, key=lambda im: im["srcsize"][0] * im["srcsize"][1])
        width_pt = max(float(img["x1"]) - float(img["x0"]), 1.0)
        dpi: float = int(min(400, max(150, round(img["srcsize"][0] / (width_pt / 72)))))
        if _fit_dpi(page.width, page.height, dpi) < dpi:    # at most MAX_OCR_PIXELS
            dpi = round(_fit_dpi(page.width, page.height, dpi) - 0.005, 2)
        if dpi < MIN_OCR_DPI:
            page.skipped = f"{NO_TEXT_LAYER}; OCR failed: {_too_large(page.width, page.height)}"
            return
        with tempfile.TemporaryDirectory() as tmp:
            png = Path(tmp) / f"page{page.number}.png"
            pp.to_image(resolution=dpi).original.convert("L").save(png)
            lines = ocr_mod.ocr_lines(png, lang=lang)
    except (ocr_mod.OcrError, OSError) as exc:
        page.skipped = f"{NO_TEXT_LAYER}; OCR failed: {' '.join(str(exc).split())}"
        return
    except Exception as exc:   # MemoryError included: one page's failure, said with its reason
        page.skipped = f"{NO_TEXT_LAYER}; OCR failed: {type(exc).__name__}: {' '.join(str(exc).split())}"
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
                   meta: dict[str, Any] | None = None, footnotes: Sequence[Segment] = ()) -> Document:
    """Assemble pages into a :class:`~chunklab.Document` in the reading order ``order``.

    ``order``: ``"naive"`` (top to bottom, left to right across the whole page)
    or ``"columns"`` (layout-aware, see :func:`~chunklab.preprocess.layout.order_page`).
    ``meta`` (extra keys) is merged into the document's meta, which holds:

    ``spans``
        one dict per text segment or table cell, in text order: ``page``,
        ``start``, ``end``, ``bbox``, ``kind`` (``text``, ``ocr``, ``cell``) and
        ``chars`` (per-character ``[x0, x1]``, or None).
    ``tables``
        one dict per table: ``page``, ``start``, ``end``, ``bbox``, ``rows``, ``cols``, ``kind``
        (``ruled`` or ``rules``), ``merged`` (``[row, col, rowspan, colspan]`` of merged cells),
        ``pages`` (more than one when it was joined across a page break).
    ``figures``
        one dict per image on a page with text (:func:`figure_records`): never in the text.
    ``skipped_pages``
        ``{"page", "reason"}`` for every page that gave no text.
    ``columns``
        page number -> the column intervals ``[x0, x1]`` used (``"columns"`` order).
    ``footnotes``
        ``{"page", "start", "end", "bbox"}`` of each segment of ``footnotes`` (from
        :func:`~chunklab.preprocess.layout.move_footnotes`), placed after the body text, one
        paragraph per footnote line that starts with a mark.
    """
    parts: list[str] = []
    pos = 0
    spans: list[dict[str, Any]] = []
    tables: list[dict[str, Any]] = []
    columns: dict[int, list[list[float]]] = {}
    skipped = []
    figures: list[dict[str, Any]] = []
    prev = None
    pitch = _line_pitches(pages)
    for page in pages:
        if page.skipped or not page.segments:
            skipped.append({"page": page.number, "reason": page.skipped or EMPTY_PAGE})
            continue
        placed, cols = order_page(page, order)
        if order == "columns":
            columns[page.number] = [[round(a, 2), round(b, 2)] for a, b in cols]
        where: list[tuple[Segment, int, int]] = []
        for cur in placed:
            if prev is not None:
                sep = _separator(prev, cur, pitch)
                parts.append(sep)
                pos += len(sep)
            seg = cur.segment
            start, end = pos, pos + len(seg.text)
            if seg.kind == "table":
                for cell in seg.cells:
                    cs, ce, box = cell[0], cell[1], cell[2]
                    if ce > cs:
                        spans.append({"page": cell[3] if len(cell) > 3 else seg.page, "start": start + cs,
                                      "end": start + ce, "bbox": list(box), "kind": "cell", "chars": None})
                rows = seg.text.count("\n") + 1
                tables.append({"page": seg.page, "start": start, "end": end, "bbox": list(seg.bbox),
                               "rows": rows - 1, "cols": seg.text.split("\n")[0].count(" | ") + 1,
                               "kind": seg.table_kind or "ruled", "merged": [list(m) for m in seg.spans],
                               "pages": list(seg.pages or (seg.page,))})
            else:
                spans.append({"page": seg.page, "start": start, "end": end, "bbox": list(seg.bbox),
                              "kind": seg.kind, "chars": [list(c) for c in seg.chars] if seg.chars else None})
            parts.append(seg.text)
            where.append((seg, start, end))
            pos = end
            prev = cur
        figures.extend(figure_records(page, where, cols, len(figures)))
    notes = []
    for k, seg in enumerate(footnotes):
        sep = "\n\n" if (k == 0 or FOOTNOTE_MARK.match(seg.text)) else "\n"
        if pos:
            parts.append(sep)
            pos += len(sep)
        start, end = pos, pos + len(seg.text)
        spans.append({"page": seg.page, "start": start, "end": end, "bbox": list(seg.bbox), "kind": "footnote",
                      "chars": [list(c) for c in seg.chars] if seg.chars else None})
        notes.append({"page": seg.page, "start": start, "end": end, "bbox": list(seg.bbox)})
        parts.append(seg.text)
        pos = end
    text = "".join(parts)
    m: dict[str, Any] = {
        "type": "pdf", "n_pages": len(pages), "page_sizes": [[p.width, p.height] for p in pages],
        "order": order, "spans": spans, "tables": tables, "skipped_pages": skipped, "figures": figures,
    }
    if footnotes:
        m["footnotes"] = notes
    if order == "columns":
        m["columns"] = columns
    ocr_pages = {p.number: p.ocr for p in pages if p.ocr}
    if ocr_pages:
        m["ocr"], m["ocr_pages"] = ocr_pages, len(ocr_pages)
    m.update(meta or {})
    return Document(doc_id, text, title=title, meta=m)


#: A caption line: 图 3, 图 3-1, 图 5.1:, Figure 2, Fig. 2.
CAPTION = re.compile(r"^\s*(图|Figure|Fig\.)\s*[0-9A-Za-z一二三四五六七八九十]")


def figure_records(page: Page, placed: Sequence[tuple[Segment, int, int]], cols: Sequence[tuple[float, float]],
                   first_id: int = 0) -> list[dict[str, Any]]:
    """One record per figure box of ``page``, anchored in the text by offsets, never put in it.

    ``placed`` holds ``(segment, start, end)`` of the page's segments in the text. A figure's
    ``anchor`` is the end of the lowest segment above it in its column (the text it follows
    when reading), or the start of the page's first segment when nothing is above it. Its
    ``caption`` is a line just below (or just above) it that starts like a caption
    (:data:`CAPTION`), with ``caption_span`` its ``[start, end)`` in the text; ``description`` is
    None until a describer fills it (:func:`chunklab.preprocess.describe_figures`).
    """
    out = []
    for k, box in enumerate(page.figures):
        x0, top, x1, bottom = box
        cx = (x0 + x1) / 2
        col = next(((a, b) for a, b in cols if a - 5 <= cx <= b + 5), (x0, x1))
        same_col = [(g, s, e) for g, s, e in placed if g.x1 > col[0] and g.x0 < col[1]]
        above = [t for t in same_col if t[0].bottom <= top + 2]
        if above:
            anchor = max(above, key=lambda t: (t[0].bottom, t[2]))[2]
        else:
            anchor = placed[0][1] if placed else 0
        caption = None
        for g, s, e in sorted(same_col, key=lambda t: abs(t[0].top - bottom)):
            near_below = bottom - 2 <= g.top <= bottom + 3 * g.size
            near_above = top - 3 * g.size <= g.bottom <= top + 2
            if (near_below or near_above) and CAPTION.match(g.text):
                caption = (g, s, e)
                break
        out.append({"id": f"p{page.number}-fig{first_id + k + 1}", "page": page.number, "bbox": list(box),
                    "anchor": anchor, "caption": caption[0].text if caption else None,
                    "caption_span": [caption[1], caption[2]] if caption else None, "description": None})
    return out


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
