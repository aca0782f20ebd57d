"""What the command line prints: reports or JSON on stdout, one-line errors and warnings on stderr.

An error (a missing file, a bad parameter, evidence not found) is one line on stderr (many bad
lines: the first and "N more") and exit status 2, never a traceback; with ``--json`` it is also one
JSON object ``{"error": ..., "where": ...}`` on stdout. Warnings are ``warning:`` lines on stderr.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import shlex
import sys
import warnings
from typing import Any, Callable, Iterable, Iterator

from ..datasets.files import MAX_FILE_BYTES
from ..datasets.questions import QuestionError
from ..preprocess.pdf import char_limits, ocr_limits
from ..retrieval.embed_cache import EmbeddingCacheWarning
from ..preprocess.cache import ExtractCacheWarning

__all__ = ["CLIError", "dumps", "emit", "warn", "cap", "fail", "question_error", "where_of", "pipe_closed",
           "runtime_warnings_as_lines", "pdf_limits"]


class CLIError(Exception):
    """An error reported to the user as one line, exit status 2; ``where`` names the file or option."""

    def __init__(self, message: str, where: str | None = None) -> None:
        super().__init__(message)
        self.where = where


class UsageError(SystemExit):
    """A usage error found by argparse (exit status 2), reported by ``main`` like every other error."""

    def __init__(self, message: str) -> None:
        super().__init__(2)
        self.message = message


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (with where to find help) and exit status 2."""

    def error(self, message: str):  # type: ignore[override]
        raise UsageError(f"{message} (see: {self.prog} --help)")


def _jsonable(value: Any) -> Any:
    """``value`` with NaN and infinities as null (JSON has neither) and numpy scalars as numbers."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item") and callable(value.item) and getattr(value, "ndim", 1) == 0:
        value = value.item()  # numpy scalar
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def dumps(payload: Any, indent: int | None = 2) -> str:
    data = _jsonable(payload)
    text = json.dumps(data, ensure_ascii=False, indent=indent, default=str, allow_nan=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (a question file may hold "\ud800"): JSON's own escapes
        text = json.dumps(data, ensure_ascii=True, indent=indent, default=str, allow_nan=False)
    return text


def emit(args, payload: Any, text: Callable[[], str]) -> None:
    """``payload`` as JSON with ``--json``, else the report ``text()``."""
    if getattr(args, "json", False):
        print(dumps(payload))
    else:
        print(text())


def warn(warnings: Iterable[str]) -> None:
    """Each warning once, as a ``warning:`` line on stderr."""
    for w in dict.fromkeys(warnings):
        print(f"warning: {w}", file=sys.stderr)


#: The largest --max-file-mb: a file is read into memory, and past this the size overflows an index.
MAX_FILE_MB = 1_000_000


#: Warnings the library raises while a command runs that the command line shows as ``warning:`` lines.
_LINE_WARNINGS = (EmbeddingCacheWarning, ExtractCacheWarning)


@contextlib.contextmanager
def runtime_warnings_as_lines() -> Iterator[None]:
    """While a command runs, the library's runtime warnings (:data:`_LINE_WARNINGS`, e.g. cached
    vectors computed again) are one ``warning:`` line each on stderr, each said once; others as usual."""
    with warnings.catch_warnings():
        default = warnings.showwarning
        said: set[str] = set()

        def show(message, category, filename, lineno, file=None, line=None):  # noqa: ANN001
            if not issubclass(category, _LINE_WARNINGS):
                return default(message, category, filename, lineno, file, line)
            text = _one_line(message)
            if text not in said:
                said.add(text)
                print(f"warning: {text}", file=sys.stderr)

        warnings.showwarning = show
        yield


@contextlib.contextmanager
def pdf_limits(args) -> Iterator[None]:
    """``--max-page-chars`` / ``--max-pdf-chars`` / ``--max-ocr-pages`` as the PDF readers' limits while the command runs."""
    values = {}
    for flag, name in (("--max-page-chars", "max_page_chars"), ("--max-pdf-chars", "max_pdf_chars")):
        v = getattr(args, name, None)
        if v is not None and v < 1:
            raise CLIError(f"{flag} must be an int >= 1, got {v}", where=flag)
        values[name] = v
    ocr = getattr(args, "max_ocr_pages", None)
    if ocr is not None and ocr < 0:
        raise CLIError(f"--max-ocr-pages must be an int >= 0, got {ocr}", where="--max-ocr-pages")
    with char_limits(values["max_page_chars"], values["max_pdf_chars"]), ocr_limits(ocr):
        yield


def cap(args) -> int:
    """``--max-file-mb`` in bytes."""
    mb = getattr(args, "max_file_mb", None)
    if mb is None:
        return MAX_FILE_BYTES
    if not (0 < mb <= MAX_FILE_MB):
        raise CLIError(f"--max-file-mb must be a number > 0 and <= {MAX_FILE_MB:,} (a terabyte), got {mb:g}",
                       where="--max-file-mb")
    return max(1, round(mb * 1_000_000))


def _one_line(message: Any, limit: int = 2000) -> str:
    text = " ".join(str(message).split("\n")).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def fail(message: Any, where: str | None, as_json: bool) -> int:
    """Report an error: one line on stderr, and with ``--json`` one JSON object on stdout; status 2."""
    line = _one_line(message)
    print(f"error: {line}", file=sys.stderr)
    if as_json:
        print(dumps({"error": line, "where": where}, indent=None))
    return 2


def question_error(exc: QuestionError, args) -> tuple[str, str | None]:
    """The first problem of a question file, and how many more (``validate`` lists them all)."""
    n = len(exc.problems)
    if not n:
        return "a problem in the question file", None
    p = exc.problems[0]
    first = str(p).strip()
    where = f"{p.source}:{p.line}" if p.line else p.source
    if n == 1:
        return f"1 problem in the question file: {first}", where
    corpus = shlex.quote(str(getattr(args, "corpus", None) or "CORPUS"))
    questions = shlex.quote(str(getattr(args, "questions", None) or "FILE"))
    return (f"{n} problems in the question file, the first: {first} (and {n - 1} more; "
            f"`python -m chunklab validate --corpus {corpus} --questions {questions}` lists all of them)"), where


def where_of(exc: BaseException) -> str | None:
    where = getattr(exc, "where", None) or getattr(exc, "path", None) or getattr(exc, "filename", None)
    return None if where is None else str(where)


def pipe_closed() -> int:
    """The reader of stdout went away (``| head``): stop quietly, as Unix tools do.

    As the Python documentation recommends (``signal`` module, note on SIGPIPE), stdout is pointed
    at devnull so that the interpreter's last flush cannot fail again; the status is 141 (128 +
    SIGPIPE), what a shell reports for a Unix tool stopped the same way.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
    return 141
