"""Headings and code fences of Markdown and HTML text: where sections start and what they are called.

Two scanners live here, each moved unchanged from the strategy that used it:
:func:`markdown_headings` (CommonMark ATX and setext headings, used by the
``markdown`` strategy and the router) and ``_Headings`` (ATX headings plus
HTML ``<h1>``..``<h6>``, the heading path above a table, a dialogue or a
question, used by the container strategies). Their fence and ATX rules differ
slightly (``_FENCE_OPEN``/``_ATX`` versus ``_FENCE_LINE``/``_ATX_LINE``); the
HTML side (``_TagScanner``, ``_visible``, :data:`HTML_BLOCK_TAGS`) is what the
``html`` strategy parses with.
"""
from __future__ import annotations

import bisect
import html
import re
from html.parser import HTMLParser
from typing import Iterator

__all__ = ["markdown_headings", "HTML_BLOCK_TAGS"]


# -- lines ---------------------------------------------------------------------------

def _lines(text: str, start: int, end: int) -> Iterator[tuple[int, int, str]]:
    """``(line_start, next_line_start, line)`` for each line of ``text[start:end]``.

    Lines end at ``\\n`` only (``\\r`` is stripped from the line's content), so
    offsets agree with :mod:`html.parser`'s line numbers and with CRLF files.
    """
    pos = start
    while pos < end:
        nl = text.find("\n", pos, end)
        nxt = end if nl < 0 else nl + 1
        line = text[pos:nxt].rstrip("\n").rstrip("\r")
        yield pos, nxt, line
        pos = nxt


def _line_spans(text: str, lo: int, hi: int) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of each line of ``text[lo:hi]``, without its line break (``\\r`` kept)."""
    pos = lo
    while pos < hi:
        nl = text.find("\n", pos, hi)
        e = hi if nl < 0 else nl
        yield pos, e
        pos = e + 1


# -- CommonMark headings (the ``markdown`` strategy) ---------------------------------

_FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*)|[ \t]*)")
_ATX_CLOSE = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
_SETEXT = re.compile(r" {0,3}(=+|-+)[ \t]*")
_BLOCK_START = re.compile(r" {0,3}(?:[>*+-]|\d{1,9}[.)]|\|)")


def markdown_headings(text: str, start: int = 0, end: int | None = None
                      ) -> tuple[list[tuple[int, int, int, str]], list[tuple[int, str]]]:
    """Headings of ``text[start:end]`` as ``(start, body_start, level, title)``, plus warnings.

    Follows CommonMark where it matters for chunking: an ATX heading needs a
    space after its ``#`` marks (``#标题`` is a paragraph), may have a closing
    ``#`` sequence and may be empty; a setext heading is one paragraph line
    underlined with ``=`` (level 1) or ``-`` (level 2); nothing inside a fenced
    code block (````` ``` ````` or ``~~~``) is a heading, and an unclosed fence
    runs to the end of the text (reported as a warning ``(position, message)``).
    A YAML front-matter block (``---`` ... ``---`` at the very start) is skipped.

    >>> t = "# 员工手册\\n## 病假\\n```\\n# 不是标题\\n```"
    >>> [(lvl, title) for _, _, lvl, title in markdown_headings(t)[0]]
    [(1, '员工手册'), (2, '病假')]
    """
    end = len(text) if end is None else end
    heads: list[tuple[int, int, int, str]] = []
    warnings: list[tuple[int, str]] = []
    fence: tuple[str, int, int] | None = None  # (char, length, position)
    prev: tuple[int, str] | None = None           # the previous paragraph line (start, content)
    lines = list(_lines(text, start, end))
    i = 0
    if start == 0 and lines and lines[0][2].rstrip() == "---":
        for j in range(1, len(lines)):
            if lines[j][2].rstrip() in ("---", "..."):
                i = j + 1
                break
    for ls, nxt, line in lines[i:]:
        if fence is not None:
            m = _FENCE_OPEN.fullmatch(line)
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= fence[1] and not m.group(2).strip():
                fence = None
            continue
        m = _FENCE_OPEN.fullmatch(line)
        if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
            fence = (m.group(1)[0], len(m.group(1)), ls)
            prev = None
            continue
        m = _ATX.fullmatch(line)
        if m:
            title = _ATX_CLOSE.sub("", m.group(2) or "").strip()
            heads.append((ls, nxt, len(m.group(1)), title))
            prev = None
            continue
        if prev is not None and _SETEXT.fullmatch(line):
            level = 1 if line.strip()[0] == "=" else 2
            heads.append((prev[0], nxt, level, prev[1].strip()))
            prev = None
            continue
        if line.strip() and not _BLOCK_START.match(line) and not line.startswith(("    ", "\t")):
            prev = (ls, line)
        else:
            prev = None
    if fence is not None:
        warnings.append((fence[2], f"unclosed code fence opened at offset {fence[2]} runs to the end"))
    return heads, warnings


# -- the heading path above a container (tables, dialogues, questions) -----------------

_FENCE_LINE = re.compile(r"[ \t]{0,3}(`{3,}|~{3,})")


def _next_fence(fence: str | None, line: str) -> str | None:
    """The open code fence after a fence ``line``: it opens one, or closes ``fence`` when it
    uses the same character at least as many times (CommonMark)."""
    mark = _FENCE_LINE.match(line).group(1)
    if fence is None:
        return mark[0] * len(mark)
    return None if mark.startswith(fence) else fence


_ATX_LINE = re.compile(r"[ \t]{0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*\r?$")
_HTML_HEADING = re.compile(r"<h([1-6])\b[^>]*>(.*?)</h\1\s*>", re.I | re.S)
_TAG = re.compile(r"<[^>]*>")


class _Headings:
    """Markdown ATX headings (outside fenced code) and HTML h1–h6 of a range, and the
    heading path in force at any offset."""

    def __init__(self, text: str, lo: int, hi: int) -> None:
        found: list[tuple[int, int, str]] = []
        fence = None
        for s, e in _line_spans(text, lo, hi):
            line = text[s:e]
            if _FENCE_LINE.match(line):
                fence = _next_fence(fence, line)
                continue
            if fence is None and line[:4].lstrip().startswith("#"):
                m = _ATX_LINE.match(line)
                if m and m.group(2).strip():
                    found.append((s, len(m.group(1)), m.group(2).strip()))
        if "<h" in text[lo:hi] or "<H" in text[lo:hi]:
            for m in _HTML_HEADING.finditer(text, lo, hi):
                title = " ".join(_TAG.sub("", m.group(2)).split())
                if title:
                    found.append((m.start(), int(m.group(1)), title))
            found.sort()
        self.items = found
        self.starts = [f[0] for f in found]
        self.paths: list[list[str]] = []
        stack: list[tuple[int, str]] = []
        for _, level, title in found:
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, title))
            self.paths.append([t for _, t in stack])

    def path_at(self, pos: int) -> list[str]:
        """Titles of the headings enclosing offset ``pos`` (a heading starting at ``pos`` counts)."""
        i = bisect.bisect_right(self.starts, pos) - 1
        return list(self.paths[i]) if i >= 0 else []

    def is_heading_line(self, pos: int) -> bool:
        i = bisect.bisect_left(self.starts, pos)
        return i < len(self.starts) and self.starts[i] == pos


# -- HTML headings and blocks (the ``html`` strategy) ---------------------------------

#: Elements that start a new block: an over-long section is cut only before one of these.
HTML_BLOCK_TAGS = frozenset(
    "address article aside blockquote dd details div dl dt fieldset figcaption figure footer form "
    "header hr li main nav ol p pre section summary table tbody thead tfoot tr ul".split()
)
_HTML_HEADINGS = {f"h{i}": i for i in range(1, 7)}
_INVISIBLE = re.compile(r"<!--.*?(?:-->|$)|<(script|style|head|title)\b.*?(?:</\1\s*>|$)|<[^>]*>?", re.S | re.I)
_SPACES = re.compile(r"\s+")


def _visible(raw: str) -> str:
    """The text a reader sees on the page: tags, comments, ``<head>``, scripts and styles removed."""
    return _SPACES.sub(" ", html.unescape(_INVISIBLE.sub(" ", raw))).strip()


class _TagScanner(HTMLParser):
    """Records where headings and block elements start (and headings end) in the source."""

    def __init__(self, line_starts: list[int], base: int) -> None:
        super().__init__(convert_charrefs=True)
        self.line_starts, self.base = line_starts, base
        self.blocks: list[int] = []
        self.heads: list[tuple[int, int, int]] = []   # (start, end of start tag, level)
        self.head_ends: list[int] = []                # where each </hN> starts

    def _pos(self) -> int:
        line, col = self.getpos()
        return self.base + self.line_starts[line - 1] + col

    def handle_starttag(self, tag, attrs):
        if tag in _HTML_HEADINGS:
            s = self._pos()
            self.heads.append((s, s + len(self.get_starttag_text() or ""), _HTML_HEADINGS[tag]))
            self.blocks.append(s)
        elif tag in HTML_BLOCK_TAGS:
            self.blocks.append(self._pos())

    def handle_endtag(self, tag):
        if tag in _HTML_HEADINGS:
            self.head_ends.append(self._pos())
