"""Extraction once: a PDF's extracted document cached by the file's content and the extractor.

Extracting a PDF takes seconds to minutes (layout analysis, tables, OCR of scanned pages); every
command that reads a folder with PDFs would otherwise do it again. :func:`chunklab.preprocess.cached_pipeline` runs
:func:`~chunklab.preprocess.pipeline` once per *content*: the key is the SHA-256 of the file's
bytes together with everything the result depends on (:func:`cache_key`): the options, the
source code of this package (so a changed extractor never serves an old result), the versions
of pdfplumber, pdfminer and Tesseract, the OCR engine in use, and the page and OCR limits. The
entry holds the text, the title and the whole ``meta`` (page spans, tables, figures, skipped pages,
dropped glyph junk); the document returned from the cache equals the one extracted, except that
``meta["source"]`` is the path it was read from now and ``meta["extract_cache"]`` says where the text came
from: ``{"status": "hit" | "miss" | "off" | "unusable", "dir": ...}``.

Where: ``$CHUNKLAB_EXTRACT_CACHE`` if set (``off`` turns the cache off), else
``$XDG_CACHE_HOME/chunklab/extract`` (``~/.cache/chunklab/extract``). One gzip-compressed JSON file
per entry, written atomically (a temporary file renamed), so concurrent commands never read half
an entry. A cache that cannot be read or written (read-only, full disk, a damaged entry) never
fails a command: one :class:`ExtractCacheWarning` says so, and the PDF is extracted. Results with
a page that could not be parsed, or whose OCR failed, are not stored (the failure may pass).
Deleting the folder is always safe.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import os
import tempfile
import warnings
from pathlib import Path
from typing import Any, Callable

from ..core import Document
from . import ocr as ocr_mod
from . import pdf as pdf_mod
from .limits import _CHAR_LIMITS, _OCR_LIMIT

__all__ = ["ExtractCacheWarning", "extract_cache_dir", "cache_key", "cached_extract", "CACHE_FORMAT", "OFF"]

#: The layout of an entry; a change makes every older entry a miss.
CACHE_FORMAT = 1
#: ``$CHUNKLAB_EXTRACT_CACHE`` values that turn the cache off.
OFF = ("off", "0", "none", "false", "no")
_INT_KEYS = "\u0000int-keys"
_warned: set[str] = set()
_source_hash: list[str] = []


class ExtractCacheWarning(UserWarning):
    """The extraction cache could not be used (read-only, damaged, full): the PDF was extracted."""


def extract_cache_dir() -> Path | None:
    """``$CHUNKLAB_EXTRACT_CACHE`` (None when it says ``off``), else the user's cache folder
    (``$XDG_CACHE_HOME/chunklab/extract``, ``~/.cache/chunklab/extract``)."""
    env = os.environ.get("CHUNKLAB_EXTRACT_CACHE")
    if env is not None and env.strip():
        return None if env.strip().lower() in OFF else Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "chunklab" / "extract"


def _extractor_source() -> str:
    """SHA-256 of this package's source files: a changed extractor is another extractor."""
    if not _source_hash:
        h = hashlib.sha256()
        for p in sorted(Path(__file__).parent.glob("*.py")):
            h.update(p.name.encode())
            h.update(p.read_bytes())
        _source_hash.append(h.hexdigest())
    return _source_hash[0]


def _name(fn: Any) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


def _versions() -> dict[str, Any]:
    import pdfminer
    import pdfplumber

    return {"pdfplumber": pdfplumber.__version__, "pdfminer": getattr(pdfminer, "__version__", "?")}


def cache_key(data: bytes, options: dict[str, Any]) -> str:
    """The entry's name: SHA-256 over the file's bytes and what extraction depends on (module docstring)."""
    lang = options.get("lang", "chi_sim")
    ocr_state = {"unavailable": ocr_mod.ocr_unavailable_reason(lang), "engine": ocr_mod.tesseract_version(),
                 # a replaced OCR function (a test's stub) is another engine
                 "functions": [_name(ocr_mod.ocr_lines), _name(ocr_mod.ocr_unavailable_reason),
                               _name(ocr_mod.tesseract_version)]}
    ident = {"format": CACHE_FORMAT, "file": hashlib.sha256(data).hexdigest(), "options": options,
             "source": _extractor_source(), "versions": _versions(), "ocr": ocr_state,
             "limits": {"chars": list(_CHAR_LIMITS.get()), "ocr_pages": _OCR_LIMIT.get(),
                        "max_ocr_pixels": pdf_mod.MAX_OCR_PIXELS, "min_ocr_dpi": pdf_mod.MIN_OCR_DPI,
                        "unmapped_min": pdf_mod.UNMAPPED_MIN}}
    return hashlib.sha256(json.dumps(ident, sort_keys=True, default=str).encode()).hexdigest()


def _encode(value: Any) -> Any:
    """JSON-ready, keeping dicts with int keys (``columns``, ``ocr``) as int keys on the way back."""
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value):
            return {k: _encode(v) for k, v in value.items()}
        if all(isinstance(k, int) and not isinstance(k, bool) for k in value):
            return {_INT_KEYS: [[k, _encode(v)] for k, v in value.items()]}
        raise TypeError("a dict with keys other than str or int")
    if isinstance(value, (list, tuple)):
        return [_encode(v) for v in value]
    return value


def _decode(value: Any) -> Any:
    if isinstance(value, dict):
        if _INT_KEYS in value and len(value) == 1:
            return {int(k): _decode(v) for k, v in value[_INT_KEYS]}
        return {k: _decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


def _warn(folder: Path, what: str, exc: BaseException) -> None:
    message = (f"extraction cache {folder}: {what} ({type(exc).__name__}: {' '.join(str(exc).split())}); "
               f"PDFs are extracted without it (set $CHUNKLAB_EXTRACT_CACHE to another folder, or to 'off')")
    if str(folder) not in _warned:   # once per folder: one problem is enough to know
        _warned.add(str(folder))
        warnings.warn(message, ExtractCacheWarning, stacklevel=3)


def _storable(doc: Document) -> bool:
    return not any("could not be parsed" in s["reason"] or "OCR failed" in s["reason"]
                   for s in doc.meta.get("skipped_pages") or ())


def _read(entry: Path, folder: Path) -> dict[str, Any] | None:
    try:
        with gzip.open(entry, "rt", encoding="utf-8") as f:
            stored = json.load(f)
        if not isinstance(stored, dict) or stored.get("format") != CACHE_FORMAT or not isinstance(stored.get("text"), str):
            raise ValueError("not an entry of this format")
        return stored
    except FileNotFoundError:
        return None
    except (OSError, EOFError, ValueError, TypeError) as exc:   # damaged, unreadable: extract again
        _warn(folder, f"entry {entry.name} cannot be read", exc)
        return None


def _write(entry: Path, folder: Path, doc: Document) -> bool:
    tmp = None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        payload = {"format": CACHE_FORMAT, "text": doc.text, "title": doc.title, "meta": _encode(dict(doc.meta))}
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".json.gz")
        with os.fdopen(fd, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=3, mtime=0) as f:
            f.write(json.dumps(payload, ensure_ascii=False).encode("utf-8"))
        os.replace(tmp, entry)
        return True
    except (OSError, TypeError, ValueError) as exc:
        _warn(folder, "cannot write to it", exc)
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        return False


def cached_extract(extract: Callable[..., Document], path: str | os.PathLike, doc_id: str | None = None,
                   cache: str | os.PathLike | bool | None = None, **options: Any) -> Document:
    """``extract(path, doc_id, **options)`` (:func:`chunklab.preprocess.pipeline`; use
    :func:`chunklab.preprocess.cached_pipeline`), from the cache when this content was extracted
    before with the same extractor and options.

    ``cache``: a folder, ``False`` (no cache), or None (:func:`extract_cache_dir`). The result's
    ``meta["extract_cache"]`` is ``{"status", "dir"}``: ``hit`` (read from the cache), ``miss``
    (extracted and stored), ``off`` or ``unusable`` (extracted; the cache was off, or could not be
    read or written; ``not stored``: a page failed, see :func:`_storable`). Errors of the
    extraction itself are raised as ``extract`` raises them.
    """
    p = Path(path)
    doc_id = doc_id or p.stem
    folder = None if cache is False else (Path(cache) if cache not in (None, True) else extract_cache_dir())
    if folder is None:
        doc = extract(p, doc_id, **options)
        return Document(doc.id, doc.text, title=doc.title, meta={**doc.meta, "extract_cache": {"status": "off"}})
    try:
        data = p.read_bytes()
    except OSError:
        data = None   # pipeline says what is wrong with the file
    if data is None:
        return extract(p, doc_id, **options)
    entry = folder / f"{cache_key(data, options)}.json.gz"
    stored = _read(entry, folder)
    if stored is not None:
        meta = _decode(stored["meta"])
        meta["source"] = str(p)
        meta["extract_cache"] = {"status": "hit", "dir": str(folder)}
        return Document(doc_id, stored["text"], title=stored.get("title"), meta=meta)
    doc = extract(p, doc_id, **options)
    status = "miss" if _storable(doc) and _write(entry, folder, doc) else "unusable"
    if status == "unusable" and not _storable(doc):
        status = "not stored"
    return Document(doc.id, doc.text, title=doc.title,
                    meta={**doc.meta, "extract_cache": {"status": status, "dir": str(folder)}})
