"""Documents from files: a folder of your own (and the 小北 corpus), and the Python standard library.

Ids, titles and ``meta`` of a folder's documents (:func:`load_folder`):

- every file whose suffix is in :data:`SUFFIX_TYPES` is read by
  :func:`read_text_file` (UTF-8, a BOM dropped, ``\\r\\n`` and ``\\r`` become
  ``\\n``, at most :data:`MAX_FILE_BYTES`), recursively, in sorted path order;
  hidden files and folders, ``__pycache__`` and excluded names are skipped;
- only regular files are documents: a FIFO, socket or device file is left out
  without being opened, and a symbolic link counts only when it leads to a
  regular file (a broken link or a link loop is left out; links to folders are
  not followed, so a folder cannot loop); a folder that cannot be listed is an
  error naming it, never a silent gap;
- the id is the path relative to the folder, with ``/`` separators and
  without its suffix (``billing/refunds``), so a question file can name a
  document the short way; a file keeps its suffix only where that short id
  would clash: when another file has the same path without suffix (``a.md``
  and ``a.txt`` become ``a.md`` and ``a.txt``; ``a.pdf`` beside ``a.md``
  likewise), or when the short id is another file's full relative path (``a.md``
  and ``a.md.txt``: the latter is ``a.md.txt``). Ids are therefore unique, and a
  folder whose files do not clash keeps the ids it always had (the 小北 corpus:
  ``employee_handbook``, ``billing/refunds``, ``weekly_reports/2025-w18``).
  Files in different folders never clash (``decoder.py`` is ``decoder``,
  ``json/decoder.py`` is ``json/decoder``). A question's ``doc`` may also
  give the relative path, the file name or its stem
  (:meth:`~chunklab.datasets.Corpus.lookup`);
- the title is the first Markdown ``# `` heading, else the first non-empty
  line; for Python the first line of the module docstring, else the file
  name; for HTML the ``<title>`` or first heading;
- an HTML file (``.html``, ``.htm``) is read as its visible text
  (:func:`html_document`): script and style dropped, entities decoded, headings
  as Markdown ``#`` lines; offsets refer to that text, and
  ``meta["source_kind"]`` is ``"html"``;
- ``meta = {"path": "billing/refunds.py", "type": "python"}``;
- a PDF (:data:`PDF_SUFFIXES`) goes through the preprocessing pipeline of
  chapter 4 (:func:`chunklab.preprocess.pipeline`: reading order, running
  headers and footers removed, ruled tables as Markdown, OCR of scanned pages
  with Tesseract): the document's text is the extracted text, so offsets
  (chunks, evidence) refer to it, and ``meta["spans"]`` maps every range
  back to its page (:func:`pdf_document`, :func:`chunklab.preprocess.pages_of`);
  glyph junk (``(cid:N)``, private-use characters) is dropped before the text is
  assembled and counted in ``meta["glyphs_dropped"]``, and the extraction is
  done once per file content (:mod:`chunklab.preprocess.cache`:
  ``meta["extract_cache"]["status"]`` is ``hit`` when the text came from it).
"""
from __future__ import annotations

import ast
import fnmatch
import html
import os
import re
import stat
import sys
import sysconfig
from collections import Counter
from pathlib import Path
from typing import Any, Iterable

from ..core import Document
from ..parsing.html import html_to_text
from ..preprocess import PdfError, cached_pipeline, ocr_available, ocr_unavailable_reason
from ..preprocess.model import NO_TEXT_LAYER

__all__ = ["SUFFIX_TYPES", "PDF_SUFFIXES", "HTML_SUFFIXES", "html_document", "STDLIB_MODULES", "XIAOBEI_EXCLUDE", "MAX_FILE_BYTES", "TextFileError",
           "read_text_file", "check_max_file_bytes", "load_folder", "load_stdlib", "file_document", "pdf_document",
           "document_from_file", "folder_ids", "extraction_info", "extraction_lines"]

#: The largest file chunklab reads (bytes) unless told otherwise: 100 MB. A corpus folder, a
#: question file, a grid: a bigger file is refused with a message naming it (raise the limit with
#: ``max_file_bytes=``, or ``--max-file-mb`` on the command line).
MAX_FILE_BYTES = 100_000_000

#: File suffixes read as documents, and the ``meta["type"]`` each gets.
SUFFIX_TYPES = {
    ".md": "markdown", ".markdown": "markdown", ".txt": "text", ".py": "python",
    ".html": "html", ".htm": "html", ".rst": "rst", ".csv": "csv", ".tsv": "csv",
}

#: File suffixes read as HTML: the document's text is the page's visible text (:func:`html_document`).
HTML_SUFFIXES = tuple(k for k, v in SUFFIX_TYPES.items() if v == "html")

#: File suffixes read as PDFs, through the preprocessing pipeline (:func:`pdf_document`).
PDF_SUFFIXES = (".pdf",)

#: Names (glob patterns, matched against the file name) left out of the 小北 corpus.
XIAOBEI_EXCLUDE = ("MANIFEST*",)

#: Standard-library modules of the ``stdlib`` corpus: module name -> path relative to the stdlib folder.
STDLIB_MODULES = {
    "json": "json/__init__.py",
    "json.decoder": "json/decoder.py",
    "json.encoder": "json/encoder.py",
    "json.scanner": "json/scanner.py",
    "json.tool": "json/tool.py",
    "textwrap": "textwrap.py",
    "difflib": "difflib.py",
    "argparse": "argparse.py",
    "heapq": "heapq.py",
    "bisect": "bisect.py",
    "string": "string.py",
    "fnmatch": "fnmatch.py",
    "shlex": "shlex.py",
    "csv": "csv.py",
}

_SKIP_DIRS = {"__pycache__", "node_modules"}


class TextFileError(ValueError):
    """A file that is not a readable text document: too large, or not UTF-8. ``path`` names it."""

    def __init__(self, message: str, path: str) -> None:
        super().__init__(message)
        self.path = path


def _os_error(cls: type, message: str, path: str) -> OSError:
    err = cls(message)
    err.path = path  # type: ignore[attr-defined]  # where the CLI says it happened
    return err


def check_max_file_bytes(max_file_bytes: int | None) -> int:
    """``max_file_bytes`` as an int >= 1, or :data:`MAX_FILE_BYTES` for None.

    >>> check_max_file_bytes(None) == MAX_FILE_BYTES, check_max_file_bytes(10)
    (True, 10)
    """
    if max_file_bytes is None:
        return MAX_FILE_BYTES
    if isinstance(max_file_bytes, bool) or not isinstance(max_file_bytes, int) or max_file_bytes < 1:
        raise ValueError(f"max_file_bytes must be an int >= 1 (or None: {MAX_FILE_BYTES:,}), got {max_file_bytes!r}")
    return max_file_bytes


_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"))


def _refuse_non_regular(path: str, mode: int) -> None:
    if stat.S_ISDIR(mode):
        raise _os_error(IsADirectoryError, f"{path} is a folder, not a file", path)
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
        raise _os_error(OSError, f"{path} is {kind}, not a regular file: only regular files are read", path)


def _too_large(path: str, size: int, cap: int) -> TextFileError:
    return TextFileError(f"{path} is {size:,} bytes, over the limit of {cap:,} bytes for one file "
                         f"(raise it with max_file_bytes=..., or --max-file-mb on the command line)", path)


def _check_regular_file(p: str, max_file_bytes: int | None) -> int:
    """Check that ``p`` is a regular file within the size cap (one-line errors naming ``p``); return the cap."""
    cap = check_max_file_bytes(max_file_bytes)
    try:
        st = os.stat(p)  # follows symbolic links; a loop is ELOOP
    except FileNotFoundError:
        raise _os_error(FileNotFoundError, f"file not found: {p}", p) from None
    except PermissionError:
        raise _os_error(PermissionError, f"cannot read {p}: permission denied", p) from None
    except OSError as e:
        raise _os_error(OSError, f"cannot read {p}: {e.strerror or e}", p) from None
    _refuse_non_regular(p, st.st_mode)
    if st.st_size > cap:
        raise _too_large(p, st.st_size, cap)
    return cap


def read_text_file(path: str | os.PathLike, max_file_bytes: int | None = None) -> str:
    """The text of one file, read the way every chunklab loader reads files.

    * only a regular file is read (a symbolic link is followed to one); a folder, FIFO, socket
      or device is refused before it is opened, so nothing can hang or stream forever;
    * a file of more than ``max_file_bytes`` bytes (default :data:`MAX_FILE_BYTES`) is refused;
    * the bytes must be UTF-8: otherwise a :class:`TextFileError` names the file, the byte
      offset and the line;
    * a leading BOM is dropped, and ``\\r\\n`` and a lone ``\\r`` become ``\\n`` (Python's
      universal newlines), so offsets are the same whoever reads the file.

    Errors are one line naming the file: :class:`FileNotFoundError`, :class:`IsADirectoryError`,
    :class:`PermissionError` or :class:`OSError` (not a regular file), :class:`TextFileError`
    (too large, not UTF-8).

    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     f = pathlib.Path(tmp) / "a.md"
    ...     _ = f.write_bytes("\\ufeff# 标题\\r\\n正文\\r".encode("utf-8"))
    ...     read_text_file(f)
    '# 标题\\n正文\\n'
    """
    p = os.fspath(path)
    cap = _check_regular_file(p, max_file_bytes)
    try:
        # NOTE: O_NONBLOCK: if the path was swapped for a FIFO since the stat, open does not wait.
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except PermissionError:
        raise _os_error(PermissionError, f"cannot read {p}: permission denied", p) from None
    except OSError as e:
        raise _os_error(type(e) if isinstance(e, FileNotFoundError) else OSError,
                        f"cannot read {p}: {e.strerror or e}", p) from None
    with os.fdopen(fd, "rb") as f:
        _refuse_non_regular(p, os.fstat(f.fileno()).st_mode)
        try:
            data = f.read(cap + 1)
        except OSError as e:
            raise _os_error(OSError, f"cannot read {p}: {e.strerror or e}", p) from None
    if len(data) > cap:  # it grew since the stat
        raise _too_large(p, len(data), cap)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise TextFileError(f"{p}: not UTF-8 text ({e.reason} at byte {e.start}, line {line})", p) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _title(text: str, kind: str, fallback: str) -> str:
    if kind == "python":
        try:
            doc = ast.get_docstring(ast.parse(text), clean=True)
        except (SyntaxError, ValueError):
            m = re.match(r'\s*(?:[rRuU]?)("""|\'\'\')\s*(.*)', text)
            doc = m.group(2).rstrip("\"'") if m else None
        first = doc.strip().splitlines()[0].strip() if doc and doc.strip() else ""
        return first or fallback
    if kind == "html":
        m = re.search(r"<title[^>]*>(.*?)</title>", text, re.S | re.I) or re.search(
            r"<h1[^>]*>(.*?)</h1>", text, re.S | re.I)
        if m:
            t = html.unescape(re.sub(r"<[^>]+>", "", m.group(1))).strip()
            if t:
                return t
    if kind == "markdown":
        m = re.search(r"^# +(.+?)\s*#*\s*$", text, re.M)
        if m:
            return m.group(1).strip()
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return fallback


def file_document(path: str | os.PathLike, doc_id: str, rel: str | None = None,
                  max_file_bytes: int | None = None) -> Document:
    """One file as a :class:`Document` (type from its suffix, title as described above), read by
    :func:`read_text_file`; an HTML file (:data:`HTML_SUFFIXES`) as its visible text (:func:`html_document`)."""
    p = Path(path)
    kind = SUFFIX_TYPES.get(p.suffix.lower(), "text")
    text = read_text_file(p, max_file_bytes)
    if kind == "html":
        return html_document(text, doc_id, rel or p.name)
    return Document(doc_id, text, title=_title(text, kind, p.name), meta={"path": rel or p.name, "type": kind})


def html_document(source: str, doc_id: str, rel: str) -> Document:
    """An HTML page's source as a :class:`Document` whose text is the page's visible text
    (:func:`chunklab.parsing.html.html_to_text`: script and style dropped, entities decoded, block
    elements as line breaks, headings as Markdown ``#`` lines, tables as Markdown rows, ``<pre>`` fenced):
    offsets (chunks, evidence) refer to that text, as a PDF's refer to its extracted text.
    ``meta``: ``path``, ``type="html"``, ``source_kind="html"``, ``source_chars`` (the length of the
    HTML) and ``html`` (counts of headings, tables, ``<pre>`` blocks and dropped elements). The title
    is the ``<title>``, else the first heading, else the file name.

    >>> d = html_document("<title>帮助</title><h2>用法</h2><p>a&nbsp;-&gt;&nbsp;b</p>", "help", "help.html")
    >>> d.text, d.title, d.meta["source_kind"]
    ('## 用法\\n\\na -> b', '帮助', 'html')
    """
    page = html_to_text(source)
    return Document(doc_id, page.text, title=page.title or Path(rel).name,
                    meta={"path": rel, "type": "html", "source_kind": "html", "source_chars": len(source),
                          "html": page.stats})


def _ocr_lang() -> str:
    """Tesseract's languages for scanned pages: Chinese and English when both are installed."""
    return "chi_sim+eng" if ocr_available("chi_sim+eng") else "chi_sim"


def pdf_document(path: str | os.PathLike, doc_id: str, rel: str | None = None,
                 max_file_bytes: int | None = None) -> Document:
    """One PDF as a :class:`Document`: :func:`chunklab.preprocess.pipeline` with OCR of scanned pages.

    The text is the pipeline's (reading order by columns, running headers and footers removed,
    ruled tables as Markdown tables, glyph junk dropped); ``meta`` keeps the pipeline's (``spans`` with
    the page of every range, ``n_pages``, ``tables``, ``skipped_pages``, ``preprocess``,
    ``glyphs_dropped``) plus ``path``, ``type="pdf"`` and ``extract_cache`` (the document comes from
    the extraction cache when this content was extracted before: :func:`~chunklab.preprocess.cached_pipeline`). The title is the first non-empty line, else the file name. Scanned pages are
    read by Tesseract in Chinese and English (``chi_sim+eng``) when both are installed, else in
    Chinese (``chi_sim``): on the book's generated scan the two give about the same character error
    rate (3.9% and 3.5%), and the first also reads English scans.

    A page that needs OCR (an image without a text layer) when Tesseract or its language data is
    missing, or a page that cannot be parsed, is an error naming the file and the pages: a corpus
    with a silent gap would be measured wrongly. Empty pages are fine. Errors are one line:
    :class:`~chunklab.preprocess.PdfError` (a ``ValueError``), or the same errors as
    :func:`read_text_file` for a path that is not a regular file or is too large.
    """
    p = os.fspath(path)
    _check_regular_file(p, max_file_bytes)
    lang = _ocr_lang()
    doc = cached_pipeline(p, doc_id, ocr="auto", lang=lang, junk="drop")
    skipped = doc.meta.get("skipped_pages") or []
    need_ocr = [s["page"] for s in skipped if s["reason"].startswith(NO_TEXT_LAYER) and "OCR unavailable" in s["reason"]]
    if need_ocr:
        raise PdfError(p, f"{_pages(need_ocr)} {'has' if len(need_ocr) == 1 else 'have'} no text layer (scanned) and "
                          f"need{'s' if len(need_ocr) == 1 else ''} OCR, which cannot run here: "
                          f"{ocr_unavailable_reason(lang)}")
    broken = [s for s in skipped if "could not be parsed" in s["reason"] or "OCR failed" in s["reason"]]
    if broken:
        raise PdfError(p, f"{_pages([s['page'] for s in broken])} could not be read: {broken[0]['reason']}")
    name = Path(p).name
    return Document(doc_id, doc.text, title=_title(doc.text, "text", name),
                    meta={**doc.meta, "path": rel or name, "type": "pdf"})


def extraction_info(documents: Iterable[Document]) -> dict[str, Any]:
    """What PDF extraction did for ``documents`` (``{}`` when none is a PDF): ``pdfs`` (their number),
    ``from_cache`` and ``extracted`` (ids: text read from the extraction cache, or extracted now),
    ``cache_dir`` and ``glyphs_dropped`` (id -> ``{"cid", "private_use", "pages"}`` for every PDF
    that had glyph junk dropped from its text)."""
    pdfs = [d for d in documents if (d.meta or {}).get("type") == "pdf"]
    if not pdfs:
        return {}
    status = {d.id: (d.meta.get("extract_cache") or {}) for d in pdfs}
    dropped = {}
    for d in pdfs:
        g = d.meta.get("glyphs_dropped") or {}
        if g.get("cid") or g.get("private_use"):
            dropped[d.id] = {"cid": g["cid"], "private_use": g["private_use"], "pages": [p["page"] for p in g["pages"]]}
    return {"pdfs": len(pdfs), "from_cache": [i for i, s in status.items() if s.get("status") == "hit"],
            "extracted": [i for i, s in status.items() if s.get("status") != "hit"],
            "cache_dir": next((s["dir"] for s in status.values() if s.get("dir")), None), "glyphs_dropped": dropped}


def extraction_lines(info: dict[str, Any]) -> list[str]:
    """:func:`extraction_info` as report lines: where the PDFs' text came from, and the glyph junk dropped."""
    if not info:
        return []

    def few(ids: list[str]) -> str:
        return ", ".join(ids[:5]) + (" …" if len(ids) > 5 else "")

    cached, fresh = info["from_cache"], info["extracted"]
    where = f"extraction cache {info['cache_dir']}" if info.get("cache_dir") else "extraction cache (off)"
    lines = [f"PDFs: {info['pdfs']}; text of {len(cached)} from the {where}"
             + (f" ({few(cached)})" if cached else "") + f", {len(fresh)} extracted now"
             + (f" ({few(fresh)})" if fresh else "")]
    for doc_id, g in info["glyphs_dropped"].items():
        lines.append(f"{doc_id}: dropped from the text {g['cid']} glyphs without a Unicode mapping ((cid:N)) and "
                     f"{g['private_use']} private-use characters, on {_pages(g['pages'])}")
    return lines


def _pages(numbers: list[int]) -> str:
    shown = ", ".join(map(str, numbers[:10])) + (" …" if len(numbers) > 10 else "")
    return f"page{'s' if len(numbers) > 1 else ''} {shown}"


def document_from_file(path: str | os.PathLike, doc_id: str, rel: str | None = None,
                       max_file_bytes: int | None = None) -> Document:
    """One file as a document, read as a folder corpus reads it: a PDF by :func:`pdf_document`,
    anything else as text by :func:`file_document`."""
    if Path(path).suffix.lower() in PDF_SUFFIXES:
        return pdf_document(path, doc_id, rel, max_file_bytes=max_file_bytes)
    return file_document(path, doc_id, rel, max_file_bytes=max_file_bytes)


def folder_ids(rels: list[str]) -> list[str]:
    """The document id of each relative path (``/`` separators) of one folder (see the module docstring).

    >>> folder_ids(["a.md", "a.txt", "b/c.py", "c.py", "d.md", "d.md.txt"])
    ['a.md', 'a.txt', 'b/c', 'c', 'd', 'd.md.txt']
    """
    stems = [r[: -len(Path(r).suffix)] if Path(r).suffix else r for r in rels]
    counts = Counter(stems)  # NOTE: not stems.count(s) per file, which is quadratic (40k files: 17 s)
    full = set(rels)
    return [rel if counts[stem] > 1 or (stem in full and stem != rel) else stem for rel, stem in zip(rels, stems)]


def _walk(root: Path, exclude: Iterable[str]) -> list[Path]:
    """The corpus files under ``root``, sorted by relative path (see the module docstring)."""
    found: list[tuple[str, Path]] = []
    stack: list[tuple[str, str]] = [("", os.fspath(root))]
    while stack:
        rel_dir, folder = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError as e:
            # NOTE: os.walk would skip an unreadable folder silently, and a run would measure
            # a partial corpus; a gap in the corpus is an error.
            cls = PermissionError if isinstance(e, PermissionError) else OSError
            raise _os_error(cls, f"corpus folder {folder}: cannot list it ({e.strerror or e})", folder) from None
        for entry in entries:
            name = entry.name
            if name.startswith("."):
                continue
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if is_dir:
                if name not in _SKIP_DIRS:
                    stack.append((f"{rel_dir}{name}/", entry.path))
                continue
            suffix = Path(name).suffix.lower()
            if (suffix not in SUFFIX_TYPES and suffix not in PDF_SUFFIXES) or any(fnmatch.fnmatch(name, pat) for pat in exclude):
                continue
            try:  # a regular file, or a link to one; never a FIFO, device, socket, broken link or loop
                if not stat.S_ISREG(entry.stat(follow_symlinks=True).st_mode):
                    continue
            except OSError:
                continue
            found.append((rel_dir + name, Path(entry.path)))
    found.sort(key=lambda item: item[0])
    return [p for _, p in found]


def load_folder(root: str | os.PathLike, exclude: Iterable[str] = (), max_file_bytes: int | None = None) -> list[Document]:
    """Every text file and PDF under ``root`` as a document (see the module docstring for ids and titles).

    ``max_file_bytes``: the largest file read (default :data:`MAX_FILE_BYTES`); a bigger one is an
    error naming it.

    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = (pathlib.Path(tmp) / "规章.md").write_text("# 考勤\\n迟到扣款。", encoding="utf-8")
    ...     [(d.id, d.title) for d in load_folder(tmp)]
    [('规章', '考勤')]
    """
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"corpus folder {str(root)!r} does not exist or is not a folder")
    cap = check_max_file_bytes(max_file_bytes)
    exclude = tuple(exclude)
    paths = _walk(root, exclude)
    if not paths:
        raise ValueError(
            f"corpus folder {str(root)!r} has no files with a known suffix "
            f"({', '.join(sorted((*SUFFIX_TYPES, *PDF_SUFFIXES)))})"
        )
    rels = [p.relative_to(root).as_posix() for p in paths]
    return [(pdf_document if Path(rel).suffix.lower() in PDF_SUFFIXES else file_document)(
                p, doc_id, rel, max_file_bytes=cap)
            for p, rel, doc_id in zip(paths, rels, folder_ids(rels))]


def stdlib_dir() -> Path:
    """The running interpreter's standard-library folder."""
    return Path(sysconfig.get_paths()["stdlib"])


def load_stdlib(modules: dict[str, str] | None = None) -> list[Document]:
    """Standard-library modules as documents; id = module name, ``meta["path"]`` relative to the stdlib.

    >>> docs = load_stdlib({"textwrap": "textwrap.py"})
    >>> docs[0].id, docs[0].title
    ('textwrap', 'Text wrapping and filling.')
    """
    root = stdlib_dir()
    docs = []
    version = "%d.%d.%d" % sys.version_info[:3]
    for name, rel in (modules or STDLIB_MODULES).items():
        path = root / rel
        if not path.is_file():
            raise FileNotFoundError(f"stdlib corpus: module {name!r} has no source file {path}")
        d = file_document(path, name, rel)
        docs.append(Document(d.id, d.text, title=d.title,
                             meta={**d.meta, "module": name, "python": version}))
    return docs
