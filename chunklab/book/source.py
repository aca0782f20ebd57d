"""Listings of chunklab's own source in the chapters, the same on the site and in JupyterLab.

A chapter shows the code it explains by calling :func:`show_source` in a code cell tagged
``remove-input``::

    show_source("chunklab.evaluation.misses.attribute_misses", lines=(1, 24))
    show_source("chunklab.strategies.linguistic", start_at="DEFAULT_SEPARATORS: tuple",
                end_before="#: LangChain's")

The listing is the object's current source (:func:`inspect.getsource`, dedented), so it never
drifts from the code that ran. It is displayed as a fenced ``python`` code block in a
``text/markdown`` output: the site renders it like any code block of the book (Sphinx's
highlighting, copy button), JupyterLab like a code block in a Markdown cell. A Sphinx
``{literalinclude}`` would show nothing in JupyterLab.

Anything that is not found — the object, a line range past its end, a marker — raises
``LookupError`` naming it: a listing is never silently empty.

>>> print(source_text("chunklab.book.source.fence", lines=(1, 1)))
def fence(code: str, language: str = "python") -> str:
>>> print(source_text("chunklab.book.source.fence", start_at="longest =", end_before="return"))
longest = max((len(m) for m in re.findall(r"`+", code)), default=0)
ticks = "`" * max(FENCE_MIN, longest + 1)
>>> source_text("chunklab.book.source.fence", start_at="no such line")
Traceback (most recent call last):
LookupError: chunklab.book.source.fence: no line contains 'no such line'
>>> source_text("chunklab.book.nosuch")
Traceback (most recent call last):
LookupError: chunklab.book.nosuch: chunklab.book has no attribute 'nosuch'
>>> source_text("nosuchpackage.f")
Traceback (most recent call last):
LookupError: nosuchpackage.f: no such module
"""
from __future__ import annotations

import importlib
import inspect
import re
import textwrap
from types import ModuleType
from typing import Any

__all__ = ["fence", "show_source", "source_text"]

#: The shortest code fence (a longer one when the code itself contains a run of backticks).
FENCE_MIN = 3


def fence(code: str, language: str = "python") -> str:
    """``code`` as a fenced Markdown code block, the fence longer than any backtick run inside.

    >>> print(fence("x = '```'"))
    ````python
    x = '```'
    ````
    """
    longest = max((len(m) for m in re.findall(r"`+", code)), default=0)
    ticks = "`" * max(FENCE_MIN, longest + 1)
    return f"{ticks}{language}\n{code}\n{ticks}"


def _resolve(target: str) -> Any:
    """The object named by a dotted path: the longest importable module prefix, then attributes."""
    parts = target.split(".")
    for cut in range(len(parts), 0, -1):
        modname = ".".join(parts[:cut])
        try:
            obj: Any = importlib.import_module(modname)
        except ModuleNotFoundError as exc:
            if exc.name is None or not (modname + ".").startswith(exc.name + "."):
                raise  # the module exists but one of its own imports is missing: say so
            continue
        for i, attr in enumerate(parts[cut:], start=cut):
            try:
                obj = getattr(obj, attr)
            except AttributeError:
                raise LookupError(f"{target}: {'.'.join(parts[:i])} has no attribute {attr!r}") from None
        return obj
    raise LookupError(f"{target}: no such module")


def _name(obj: Any) -> str:
    module = getattr(obj, "__module__", None) or ""
    qualname = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or repr(obj)
    return qualname if not module or isinstance(obj, ModuleType) else f"{module}.{qualname}"


def source_text(obj: Any, *, lines: tuple[int, int] | None = None, start_at: str | None = None,
                end_before: str | None = None) -> str:
    """The dedented source of ``obj`` (an object or its dotted name), or a part of it.

    ``lines=(first, last)`` keeps those lines of the object's source (1-based, both included);
    ``start_at`` starts at the first line containing that text, ``end_before`` stops before the
    next line containing that text — the options of Sphinx's ``literalinclude``.
    """
    if isinstance(obj, str):
        label, obj = obj, _resolve(obj)
    else:
        label = _name(obj)
    if isinstance(obj, property):
        obj = obj.fget
    try:
        src = inspect.getsource(inspect.unwrap(obj))
    except (OSError, TypeError) as exc:
        raise LookupError(f"{label}: no source to show ({exc})") from None
    rows = src.splitlines()
    if lines is not None:
        first, last = lines
        if not 1 <= first <= last <= len(rows):
            raise LookupError(f"{label}: lines {first}-{last} asked, the source has {len(rows)} lines")
        rows = rows[first - 1:last]
    if start_at is not None:
        at = next((i for i, row in enumerate(rows) if start_at in row), None)
        if at is None:
            raise LookupError(f"{label}: no line contains {start_at!r}")
        rows = rows[at:]
    if end_before is not None:
        at = next((i for i, row in enumerate(rows) if i > 0 and end_before in row), None)
        if at is None:
            raise LookupError(f"{label}: no line after the start contains {end_before!r}")
        rows = rows[:at]
    text = textwrap.dedent("\n".join(rows)).strip("\n")
    if not text.strip():
        raise LookupError(f"{label}: the listing is empty")
    return text


def show_source(obj: Any, *, lines: tuple[int, int] | None = None, start_at: str | None = None,
                end_before: str | None = None) -> None:
    """Display :func:`source_text` as a highlighted Python code block (see the module docstring)."""
    from IPython.display import display

    code = source_text(obj, lines=lines, start_at=start_at, end_before=end_before)
    display({"text/markdown": fence(code), "text/plain": code}, raw=True)

