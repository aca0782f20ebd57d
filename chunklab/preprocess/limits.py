"""Limits on what a PDF may make chunklab do: characters per page and per file, pages read by OCR.

A page is parsed by pdfminer into one object per glyph, however long its content stream: a 7.7 KB
file whose one compressed stream inflates to 2 MB of text lines took 4.4 GB. :func:`_parse_layout`
parses a page as pdfplumber's ``Page.layout`` does, but stops past a number of characters.
"""
from __future__ import annotations

import contextlib
import contextvars
from typing import Any, Iterator

from ..params import Param

__all__ = ["MAX_PAGE_CHARS", "MAX_FILE_CHARS", "MAX_OCR_PAGES", "char_limits", "ocr_limits"]

#: Characters a page's text layer may hold (a dense page of Chinese has 2,000 to 4,000).
MAX_PAGE_CHARS = 200_000
#: Characters a whole file's text layers may hold (5,000 dense pages).
MAX_FILE_CHARS = 20_000_000
_CHAR_LIMITS: contextvars.ContextVar[tuple[int, int]] = contextvars.ContextVar(
    "chunklab_pdf_char_limits", default=(MAX_PAGE_CHARS, MAX_FILE_CHARS))


@contextlib.contextmanager
def char_limits(max_page_chars: int | None = None, max_file_chars: int | None = None) -> Iterator[None]:
    """Within the block, :func:`~chunklab.preprocess.pdf.read_pages` (every PDF reader of chunklab) uses these limits
    (None: the default). The command line's ``--max-page-chars`` / ``--max-pdf-chars`` set them."""
    page = Param("int", MAX_PAGE_CHARS, low=1, none_ok=True).validate("max_page_chars", max_page_chars)
    whole = Param("int", MAX_FILE_CHARS, low=1, none_ok=True).validate("max_file_chars", max_file_chars)
    token = _CHAR_LIMITS.set((MAX_PAGE_CHARS if page is None else page, MAX_FILE_CHARS if whole is None else whole))
    try:
        yield
    finally:
        _CHAR_LIMITS.reset(token)


#: Pages of one file read by OCR (Tesseract takes about 0.5 s a page: 200 pages, under 2 minutes).
MAX_OCR_PAGES = 200
_OCR_LIMIT: contextvars.ContextVar[int] = contextvars.ContextVar("chunklab_ocr_pages", default=MAX_OCR_PAGES)


@contextlib.contextmanager
def ocr_limits(max_ocr_pages: int | None = None) -> Iterator[None]:
    """Within the block, :func:`~chunklab.preprocess.pdf.read_pages` reads at most ``max_ocr_pages``
    pages of a file by OCR (None: :data:`MAX_OCR_PAGES`); the command line's ``--max-ocr-pages``."""
    n = Param("int", MAX_OCR_PAGES, low=0, none_ok=True).validate("max_ocr_pages", max_ocr_pages)
    token = _OCR_LIMIT.set(MAX_OCR_PAGES if n is None else n)
    try:
        yield
    finally:
        _OCR_LIMIT.reset(token)


class _TooManyChars(Exception):
    pass


def _parse_layout(pp, limit: int) -> int:
    """Parse a page's layout as pdfplumber's ``Page.layout`` does, stopping past ``limit`` characters
    (pdfminer would otherwise make an object of every glyph of a stream however long)."""
    from pdfminer.pdfinterp import PDFPageInterpreter
    from pdfplumber.page import PDFPageAggregatorWithMarkedContent

    class Capped(PDFPageAggregatorWithMarkedContent):
        count = 0

        def render_char(self, *args: Any, **kwargs: Any) -> Any:
            self.count += 1
            if self.count > limit:
                raise _TooManyChars()
            return super().render_char(*args, **kwargs)

    from pdfplumber.utils.exceptions import PdfminerException

    device = Capped(pp.pdf.rsrcmgr, pageno=pp.page_number, laparams=pp.pdf.laparams)
    try:
        PDFPageInterpreter(pp.pdf.rsrcmgr, device).process_page(pp.page_obj)
    except _TooManyChars:
        raise
    except Exception as exc:   # as pdfplumber's own Page.layout reports it
        raise PdfminerException(exc) from exc
    pp._layout = device.get_result()
    return device.count
