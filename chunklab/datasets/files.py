"""Documents from files: a folder of your own (and the 小北 corpus), and the Python standard library.

Ids, titles and ``meta`` of a folder's documents (:func:`load_folder`):

- every file whose suffix is in :data:`SUFFIX_TYPES` is read as UTF-8 (a BOM
  is dropped, ``\\r\\n`` becomes ``\\n``), recursively, in sorted path order;
  hidden files and folders, ``__pycache__`` and excluded names are skipped;
- the id is the path relative to the folder, with ``/`` separators and
  without its suffix (``billing/refunds``); when two files would share an id
  (``a.md`` and ``a.txt``) both keep their suffix (``a.md``, ``a.txt``);
- the title is the first Markdown ``# `` heading, else the first non-empty
  line; for Python the first line of the module docstring, else the file
  name; for HTML the ``<title>`` or first ``<h1>``;
- ``meta = {"path": "billing/refunds.py", "type": "python"}``.
"""
from __future__ import annotations

import ast
import fnmatch
import html
import os
import re
import sys
import sysconfig
from pathlib import Path
from typing import Iterable

from ..core import Document

__all__ = ["SUFFIX_TYPES", "STDLIB_MODULES", "XIAOBEI_EXCLUDE", "load_folder", "load_stdlib", "file_document"]

#: File suffixes read as documents, and the ``meta["type"]`` each gets.
SUFFIX_TYPES = {
    ".md": "markdown", ".markdown": "markdown", ".txt": "text", ".py": "python",
    ".html": "html", ".htm": "html", ".rst": "rst", ".csv": "csv", ".tsv": "csv",
}

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


def _read(path: Path) -> str:
    try:
        with open(path, encoding="utf-8-sig") as f:  # universal newlines: \r\n -> \n
            return f.read()
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None


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


def file_document(path: str | os.PathLike, doc_id: str, rel: str | None = None) -> Document:
    """One file as a :class:`Document` (type from its suffix, title as described above)."""
    p = Path(path)
    kind = SUFFIX_TYPES.get(p.suffix.lower(), "text")
    text = _read(p)
    return Document(doc_id, text, title=_title(text, kind, p.name), meta={"path": rel or p.name, "type": kind})


def _walk(root: Path, exclude: Iterable[str]) -> list[Path]:
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in _SKIP_DIRS)
        for name in filenames:
            if name.startswith(".") or any(fnmatch.fnmatch(name, pat) for pat in exclude):
                continue
            if Path(name).suffix.lower() in SUFFIX_TYPES:
                found.append(Path(dirpath, name))
    return sorted(found, key=lambda p: p.relative_to(root).as_posix())


def load_folder(root: str | os.PathLike, exclude: Iterable[str] = ()) -> list[Document]:
    """Every text file under ``root`` as a document (see the module docstring for ids and titles).

    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = (pathlib.Path(tmp) / "规章.md").write_text("# 考勤\\n迟到扣款。", encoding="utf-8")
    ...     [(d.id, d.title) for d in load_folder(tmp)]
    [('规章', '考勤')]
    """
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"corpus folder {str(root)!r} does not exist or is not a folder")
    exclude = tuple(exclude)
    paths = _walk(root, exclude)
    if not paths:
        raise ValueError(
            f"corpus folder {str(root)!r} has no files with a known suffix ({', '.join(sorted(SUFFIX_TYPES))})"
        )
    rels = [p.relative_to(root).as_posix() for p in paths]
    stems = [r[: -len(Path(r).suffix)] if Path(r).suffix else r for r in rels]
    clash = {s for s in stems if stems.count(s) > 1}
    return [file_document(p, rel if stem in clash else stem, rel) for p, rel, stem in zip(paths, rels, stems)]


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
