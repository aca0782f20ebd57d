"""Preprocessing before chunking: PDF text with pages and positions, reading order, tables, OCR.

Parsing decides whether the evidence can be read at all: a sentence that the
extractor broke in two, or that a running footer cut through, cannot be
retrieved whole by any chunking. This package makes each step visible and
testable on PDFs generated from the 小北 corpus (:mod:`chunklab.book.pdfgen`):

* :mod:`.model` — the pages, segments and boxes the other modules share, and the
  reasons a page is skipped;
* :mod:`.chars` — characters to segments (lines cut at gaps, sub- and
  superscripts joined to their line);
* :mod:`.pdf` — the text layer as segments with page numbers and boxes,
  assembled into a :class:`~chunklab.Document` whose ``meta["spans"]`` maps
  every character range back to the page (:func:`locate`, :func:`pages_of`);
* :mod:`.layout` — reading order (column detection from segment boxes),
  running header/footer/page-number removal, and footnotes moved out of the
  flow of the text;
* :mod:`.tables` — ruled and rule-only (three-line) tables to Markdown tables for the
  ``table`` strategy, merged cells filled, tables across a page break joined;
* :mod:`.atoms` — spans that must stay whole in one chunk (formulas), and the
  boundary repair that keeps them whole after any strategy (:func:`keep_whole`);
* :mod:`.glyphs` — ``(cid:N)`` placeholders and private-use characters out of the text;
* :mod:`.cache` — the extraction cache, keyed by the file's content and the extractor;
* :mod:`.ocr` — Tesseract for pages without a text layer, and the character
  error rate (:func:`cer`).

:func:`pipeline` runs them in order and records each step in
``meta["preprocess"]``; :func:`cached_pipeline` runs it once per file content (:mod:`.cache`);
:func:`extract_many` runs it over many files and
returns the failures instead of raising. :func:`with_pages` puts the page
numbers of each chunk of such a document into the chunk's ``meta["pages"]``;
:func:`attach_figures` links each chunk to the figures anchored in it (images
never enter the text), and :func:`describe_figures` fills a figure's
``description`` field with any describer (a vision model; here OCR stands in).
A PDF in a folder corpus goes through :func:`cached_pipeline` too, glyph junk dropped
(:mod:`.glyphs`; :func:`chunklab.datasets.files.pdf_document`).
"""
from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

from ..core import Chunk, Document
from .layout import ORDERS, find_columns, find_footnotes, move_footnotes, order_page, remove_running_lines, running_lines
from .ocr import cer, ocr_available, ocr_image, ocr_unavailable_reason
from .pdf import PdfError, Region, _extract_step, build_document, extract_pdf, locate, pages_of, read_pages
from .atoms import find_formulas, keep_whole
from .cache import ExtractCacheWarning, cached_extract, extract_cache_dir
from .glyphs import JUNK_MODES, drop_junk
from .tables import join_continued_tables, to_markdown

__all__ = [
    "pipeline", "cached_pipeline", "extract_cache_dir", "ExtractCacheWarning", "extract_many", "Failure", "PdfError", "Region", "extract_pdf", "read_pages", "build_document",
    "locate", "pages_of", "find_columns", "order_page", "running_lines", "remove_running_lines",
    "to_markdown", "ocr_available", "ocr_unavailable_reason", "ocr_image", "cer", "ORDERS", "with_pages",
    "attach_figures", "describe_figures", "find_footnotes", "move_footnotes", "ocr_describer", "find_formulas", "keep_whole", "join_continued_tables",
]


def pipeline(path: str | Path, doc_id: str | None = None, *, order: str = "columns", headers: bool = True,
             tables: bool = True, ocr: bool | str = "auto", lang: str = "chi_sim", password: str | None = None,
             title: str | None = None, pages: Sequence[int] | None = None, merged: str = "fill",
             join_tables: bool = True, footnotes: bool = True, max_page_chars: int | None = None,
             max_file_chars: int | None = None, max_ocr_pages: int | None = None, junk: str = "keep") -> Document:
    """A PDF to a :class:`~chunklab.Document` ready for chunking.

    Steps, each switchable and each recorded in ``meta["preprocess"]``:

    1. ``extract`` — the text layer, page by page (:func:`read_pages`); with
       ``tables`` ruled tables are found on the way and kept aside; with
       ``ocr`` (``"auto"``: when Tesseract and ``lang`` are installed) pages
       that are only an image are read by Tesseract;
    2. ``headers_footers`` — running headers, footers and page numbers
       removed (``headers=True``), listed in ``meta["removed"]``;
    3. ``reading_order`` — ``"columns"`` (layout-aware) or ``"naive"``;
    4. ``tables`` — each table placed in the text as a Markdown table,
       listed in ``meta["tables"]``; merged cells filled (``merged="fill"``)
       or left empty (``"empty"``); with ``join_tables`` a table that runs over
       a page break becomes one table.

    With ``footnotes``, footnotes at the foot of a page are moved after the body text
    (:func:`move_footnotes`), listed in ``meta["footnotes"]``, so that a sentence running over a
    page break stays whole.

    ``pages``: only these 1-based page numbers (a long file, a few pages of
    interest); running headers then need at least two of them. Images on pages
    with text are recorded in ``meta["figures"]``, anchored by offset, never
    placed in the text.

    Pages that give no text are listed in ``meta["skipped_pages"]`` with the
    reason. Raises :class:`PdfError` for a file that cannot be read at all, or whose
    text is over ``max_page_chars`` on a page or ``max_file_chars`` in all, or that has more than
    ``max_ocr_pages`` pages to read by OCR (see :func:`~chunklab.preprocess.pdf.read_pages`);
    ``meta["ocr_pages"]`` counts the pages read by OCR.

    ``junk="drop"`` removes glyph junk (``(cid:N)`` placeholders of glyphs without a Unicode
    mapping, private-use characters) from the text before it is assembled
    (:func:`~chunklab.preprocess.glyphs.drop_junk`), so offsets refer to the cleaned text; the
    counts go to ``meta["glyphs_dropped"]`` (``cid``, ``private_use``, ``pages``) and a
    ``glyph_junk`` step. The folder corpus's reader drops it; the default ``"keep"`` shows the text
    layer as it is (chapter 4 counts the unmapped glyphs).
    """
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
    if junk not in JUNK_MODES:
        raise ValueError(f"junk must be one of {JUNK_MODES}, got {junk!r}")
    if ocr not in (True, False, "auto"):
        raise ValueError(f"ocr must be True, False or 'auto', got {ocr!r}")
    path = Path(path)
    if ocr is True and not ocr_available(lang):
        raise RuntimeError(f"ocr=True but OCR cannot run: {ocr_unavailable_reason(lang)}")
    numbers = pages
    pages = read_pages(path, password=password, tables=tables, ocr=bool(ocr), lang=lang, pages=numbers,
                       merged=merged, max_page_chars=max_page_chars, max_file_chars=max_file_chars,
                       max_ocr_pages=max_ocr_pages)
    steps: list[dict[str, Any]] = [_extract_step(pages, tables, ocr)]
    if numbers is not None:
        steps[0]["only_pages"] = [p.number for p in pages]
    ocr_pages = [p.number for p in pages if p.ocr]
    if ocr:
        steps.append({"step": "ocr", "pages": ocr_pages, "lang": lang,
                      "available": ocr_available(lang), "reason": ocr_unavailable_reason(lang),
                      "unmapped_segments": {p.number: p.ocr_segments for p in pages if p.ocr_segments}})
    unmapped = {p.number: p.unmapped for p in pages if p.unmapped}
    if unmapped:   # glyphs the text layer cannot name: a quality signal worth monitoring
        steps[0]["unmapped_glyphs"] = unmapped
    removed: list[dict[str, Any]] = []
    if headers:
        pages, removed = remove_running_lines(pages)
        steps.append({"step": "headers_footers", "removed": len(removed),
                      "texts": sorted({r["text"] for r in removed})})
    notes = []
    if footnotes:
        pages, notes = move_footnotes(pages)
        steps.append({"step": "footnotes", "moved": len(notes), "to": "after the body text"})
    dropped: list[dict[str, int]] = []
    if junk == "drop":
        pages, notes, dropped = drop_junk(pages, notes)
        steps.append({"step": "glyph_junk", "cid": sum(d["cid"] for d in dropped),
                      "private_use": sum(d["private_use"] for d in dropped), "pages": [d["page"] for d in dropped]})
    joins = join_continued_tables(pages) if tables and join_tables else []
    doc = build_document(pages, doc_id or path.stem, title=title, order=order,
                         meta={"source": str(path), "removed": removed}, footnotes=notes)
    cols = doc.meta.get("columns", {})
    steps.append({"step": "reading_order", "order": order,
                  "columns": {p: len(c) for p, c in cols.items()} if cols else None})
    if tables:
        steps.append({"step": "tables", "found": len(doc.meta["tables"]), "format": "markdown", "merged": merged,
                      "joined_across_pages": joins})
    if doc.meta.get("figures"):
        steps.append({"step": "figures", "found": len(doc.meta["figures"]), "in_text": False})
    meta = dict(doc.meta)
    meta["preprocess"] = steps
    if junk == "drop":
        meta["glyphs_dropped"] = {"cid": sum(d["cid"] for d in dropped),
                                  "private_use": sum(d["private_use"] for d in dropped), "pages": dropped}
    return Document(doc.id, doc.text, title=doc.title, meta=meta)


def cached_pipeline(path: str | Path, doc_id: str | None = None, *, cache: str | Path | bool | None = None,
                    **options: Any) -> Document:
    """:func:`pipeline`, extracted once per file content: a second call for the same bytes with the
    same options (and the same extractor) reads the document from the extraction cache
    (:mod:`chunklab.preprocess.cache`; ``cache``: a folder, ``False``, or None for
    ``$CHUNKLAB_EXTRACT_CACHE`` / the user's cache folder). ``meta["extract_cache"]["status"]`` says
    ``hit`` when the text came from the cache. A cache that cannot be used warns once and extracts."""
    return cached_extract(pipeline, path, doc_id, cache=cache, **options)


@dataclass(frozen=True)
class Failure:
    """A file :func:`extract_many` could not read, and why."""

    path: str
    error: str


def extract_many(paths: Iterable[str | Path], **options: Any) -> tuple[list[Document], list[Failure]]:
    """:func:`pipeline` over many files: the documents that worked, and a :class:`Failure` per file that did not.

    A bad file (missing, truncated, password-protected, not a PDF) never stops the
    run; pages skipped inside a good file are in that document's ``meta["skipped_pages"]``.
    Document ids are the file stems, made unique with ``-2``, ``-3`` ... when two files share one.
    """
    docs: list[Document] = []
    failures: list[Failure] = []
    used: dict[str, int] = {}
    for p in paths:
        path = Path(p)
        stem = path.stem
        used[stem] = used.get(stem, 0) + 1
        doc_id = stem if used[stem] == 1 else f"{stem}-{used[stem]}"
        try:
            docs.append(pipeline(path, doc_id, **options))
        except (PdfError, OSError) as exc:
            failures.append(Failure(str(path), str(exc)))
    return docs, failures


def with_pages(documents: Document | Sequence[Document], chunks: Iterable[Chunk]) -> list[Chunk]:
    """``chunks`` with ``meta["pages"]``, the page numbers (1-based, ascending) each chunk's text comes
    from (:func:`pages_of`), for chunks of documents made from a PDF (documents with ``meta["spans"]``);
    other chunks are returned unchanged. Offsets stay those of the extracted text.

    >>> doc = Document("d", "甲乙", meta={"spans": [
    ...     {"page": 1, "start": 0, "end": 1, "bbox": [0, 0, 1, 1]}, {"page": 2, "start": 1, "end": 2, "bbox": [0, 0, 1, 1]}]})
    >>> [dict(c.meta) for c in with_pages(doc, [Chunk("d", 0, 0, 1, "甲"), Chunk("d", 1, 0, 2, "甲乙")])]
    [{'pages': [1]}, {'pages': [1, 2]}]
    """
    docs = [documents] if isinstance(documents, Document) else list(documents)
    paged = {d.id: d for d in docs if d.meta.get("spans")}
    if not paged:
        return list(chunks)
    return [c._replace(meta={**c.meta, "pages": pages_of(paged[c.doc_id], c)}) if c.doc_id in paged else c
            for c in chunks]


def attach_figures(document: Document, chunks: Iterable[Chunk]) -> list[Chunk]:
    """``chunks`` with ``meta["figures"]``: the figures of ``document`` (``meta["figures"]``, from
    :func:`pipeline`) whose anchor offset falls inside the chunk (``start < anchor <= end``, the
    anchor being the end of the text the figure follows) or whose caption the chunk overlaps.

    Each entry is ``{"id", "page", "bbox", "caption", "description"}``. ``Chunk.text`` never
    changes: a figure, its caption field and its description are metadata, so an index that
    embeds only text never sees them and a generator can still be handed the image.

    >>> doc = Document("d", "甲乙丙丁", meta={"figures": [
    ...     {"id": "p1-fig1", "page": 1, "bbox": [0, 0, 9, 9], "anchor": 2, "caption": None,
    ...      "caption_span": None, "description": None}]})
    >>> [[f["id"] for f in c.meta.get("figures", [])] for c in attach_figures(doc, [
    ...     Chunk("d", 0, 0, 2, "甲乙"), Chunk("d", 1, 2, 4, "丙丁")])]
    [['p1-fig1'], []]
    """
    figures = document.meta.get("figures") or []
    out = []
    for c in chunks:
        if c.doc_id != document.id or not figures:
            out.append(c)
            continue
        linked = []
        for f in figures:
            cap = f.get("caption_span")
            if c.start < f["anchor"] <= c.end or (c.start == 0 and f["anchor"] == 0) or (
                    cap and c.start < cap[1] and cap[0] < c.end):
                linked.append({k: f[k] for k in ("id", "page", "bbox", "caption", "description")})
        out.append(c._replace(meta={**c.meta, "figures": linked}) if linked else c)
    return out


def ocr_describer(lang: str = "chi_sim+eng"):
    """A describer for :func:`describe_figures` that OCRs the figure (a stand-in for a vision
    model: it reads the words drawn in a figure, it does not describe a picture)."""
    def describe(image) -> str:
        with tempfile.TemporaryDirectory() as tmp:
            png = Path(tmp) / "figure.png"
            image.save(png)
            return ocr_image(png, lang=lang, psm=6).strip()

    return describe


def describe_figures(document: Document, describe, resolution: int = 150) -> Document:
    """A copy of ``document`` whose figures have ``description = describe(image)``.

    ``describe`` takes a PIL image of the figure's box (rendered from ``meta["source"]`` at
    ``resolution`` dpi) and returns text. The description goes into the figure record only,
    never into ``document.text``.
    """
    import pdfplumber

    figures = [dict(f) for f in document.meta.get("figures") or []]
    if figures:
        with pdfplumber.open(document.meta["source"]) as pdf:
            for f in figures:
                page = pdf.pages[f["page"] - 1]
                x0, top, x1, bottom = f["bbox"]
                box = (max(0, x0), max(0, top), min(float(page.width), x1), min(float(page.height), bottom))
                img = page.crop(box).to_image(resolution=resolution).original.convert("RGB")
                f["description"] = describe(img)
    return Document(document.id, document.text, title=document.title, meta={**document.meta, "figures": figures})
