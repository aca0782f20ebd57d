"""Preprocessing before chunking: PDF text with pages and positions, reading order, tables, OCR.

Parsing decides whether the evidence can be read at all: a sentence that the
extractor broke in two, or that a running footer cut through, cannot be
retrieved whole by any chunking. This package makes each step visible and
testable on PDFs generated from the 小北 corpus (:mod:`chunklab.book.pdfgen`):

* :mod:`.model` — the pages, segments and boxes the other modules share, and the
  reasons a page is skipped;
* :mod:`.pdf` — the text layer as segments with page numbers and boxes,
  assembled into a :class:`~chunklab.Document` whose ``meta["spans"]`` maps
  every character range back to the page (:func:`locate`, :func:`pages_of`);
* :mod:`.layout` — reading order (column detection from segment boxes) and
  running header/footer/page-number removal;
* :mod:`.tables` — ruled tables to Markdown tables for the ``table`` strategy;
* :mod:`.ocr` — Tesseract for pages without a text layer, and the character
  error rate (:func:`cer`).

:func:`pipeline` runs them in order and records each step in
``meta["preprocess"]``; :func:`extract_many` runs it over many files and
returns the failures instead of raising. :func:`with_pages` puts the page
numbers of each chunk of such a document into the chunk's ``meta["pages"]``.
A PDF in a folder corpus goes through :func:`pipeline` too
(:func:`chunklab.datasets.files.pdf_document`).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

from ..core import Chunk, Document
from .layout import ORDERS, find_columns, order_page, remove_running_lines, running_lines
from .ocr import cer, ocr_available, ocr_image, ocr_unavailable_reason
from .pdf import PdfError, Region, _extract_step, build_document, extract_pdf, locate, pages_of, read_pages
from .tables import to_markdown

__all__ = [
    "pipeline", "extract_many", "Failure", "PdfError", "Region", "extract_pdf", "read_pages", "build_document",
    "locate", "pages_of", "find_columns", "order_page", "running_lines", "remove_running_lines",
    "to_markdown", "ocr_available", "ocr_unavailable_reason", "ocr_image", "cer", "ORDERS", "with_pages",
]


def pipeline(path: str | Path, doc_id: str | None = None, *, order: str = "columns", headers: bool = True,
             tables: bool = True, ocr: bool | str = "auto", lang: str = "chi_sim", password: str | None = None,
             title: str | None = None) -> Document:
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
       listed in ``meta["tables"]``.

    Pages that give no text are listed in ``meta["skipped_pages"]`` with the
    reason. Raises :class:`PdfError` for a file that cannot be read at all.
    """
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
    if ocr not in (True, False, "auto"):
        raise ValueError(f"ocr must be True, False or 'auto', got {ocr!r}")
    path = Path(path)
    if ocr is True and not ocr_available(lang):
        raise RuntimeError(f"ocr=True but OCR cannot run: {ocr_unavailable_reason(lang)}")
    pages = read_pages(path, password=password, tables=tables, ocr=bool(ocr), lang=lang)
    steps: list[dict[str, Any]] = [_extract_step(pages, tables, ocr)]
    ocr_pages = [p.number for p in pages if p.ocr]
    if ocr:
        steps.append({"step": "ocr", "pages": ocr_pages, "lang": lang,
                      "available": ocr_available(lang), "reason": ocr_unavailable_reason(lang)})
    removed: list[dict[str, Any]] = []
    if headers:
        pages, removed = remove_running_lines(pages)
        steps.append({"step": "headers_footers", "removed": len(removed),
                      "texts": sorted({r["text"] for r in removed})})
    doc = build_document(pages, doc_id or path.stem, title=title, order=order,
                         meta={"source": str(path), "removed": removed})
    cols = doc.meta.get("columns", {})
    steps.append({"step": "reading_order", "order": order,
                  "columns": {p: len(c) for p, c in cols.items()} if cols else None})
    if tables:
        steps.append({"step": "tables", "found": len(doc.meta["tables"]), "format": "markdown"})
    meta = dict(doc.meta)
    meta["preprocess"] = steps
    return Document(doc.id, doc.text, title=doc.title, meta=meta)


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
