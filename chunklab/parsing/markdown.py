"""Headings and code fences of Markdown and HTML text: where sections start and what they are called.

One set of Markdown rules lives here: :func:`markdown_headings` (CommonMark
ATX and setext headings outside fenced code) is what the ``markdown``
strategy and the router read, and ``_Headings`` (the heading path above a
table, a dialogue or a question, for the container strategies) takes its ATX
headings from it and adds HTML ``<h1>``..``<h6>``. A code fence is whatever
``_Fences`` says it is, wherever fences are tracked (here, in
:mod:`~chunklab.parsing.tables` and in the router), and every scanner walks
lines with ``_lines``. The HTML side (``_TagScanner``, ``_visible``,
:data:`HTML_BLOCK_TAGS`) is what the ``html`` strategy parses with.
"""
from __future__ import annotations

import bisect
import html
import re
from html.parser import HTMLParser
from typing import Iterator

__all__ = ["markdown_headings", "HTML_BLOCK_TAGS"]


# -- lines ---------------------------------------------------------------------------

def _lines(text: str, start: int, end: int) -> Iterator[tuple[int, int, int]]:
    """``(line_start, line_end, next_line_start)`` for each line of ``text[start:end]``.

    Lines end at ``\\n`` only, so offsets agree with :mod:`html.parser`'s line
    numbers. ``line_end`` is where the ``\\n`` is (``end`` for a last line without
    one), so a CRLF line keeps its ``\\r``: read the line as
    ``text[line_start:line_end].rstrip("\\r")``. A text ending in ``\\n`` has no
    empty last line.

    >>> list(_lines("ab\\r\\n\\ncd", 0, 7))
    [(0, 3, 4), (4, 4, 5), (5, 7, 7)]
    """
    pos = start
    while pos < end:
        nl = text.find("\n", pos, end)
        if nl < 0:
            yield pos, end, end
            return
        yield pos, nl, nl + 1
        pos = nl + 1


# -- CommonMark: code fences and headings ----------------------------------------------

_FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*)|[ \t]*)")
_ATX_CLOSE = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
_SETEXT = re.compile(r" {0,3}(=+|-+)[ \t]*")
_BLOCK_START = re.compile(r" {0,3}(?:[>*+-]|\d{1,9}[.)]|\|)")


class _Fences:
    """Fenced code blocks, followed line by line (CommonMark): the one definition of a fence.

    A fence opens with a line of at least three backticks or tildes indented
    by at most three spaces (a tab is not such an indent), optionally followed
    by an info string, which for a backtick fence may not contain a backtick.
    It closes with a line of the same character, at least as long, and nothing
    but whitespace after it; an unclosed fence runs to the end of the text
    (``open`` then holds its character, length and offset).

    >>> f = _Fences()
    >>> [f.code(0, line) for line in ["```python", "# x", "```", "# y"]]
    [True, True, True, False]
    """

    __slots__ = ("open",)

    def __init__(self) -> None:
        self.open: tuple[str, int, int] | None = None   # (character, length, offset of the fence line)

    def code(self, pos: int, line: str) -> bool:
        """Whether ``line`` (starting at offset ``pos``) is code: it opens or closes a fence, or
        lies inside one. Feed every line, in order."""
        if self.open is None:
            # NOTE: a quick test before the regex, which needs one of these first: most lines
            # of a document are prose, and every scanner feeds every line.
            if not line.startswith((" ", "`", "~")):
                return False
            m = _FENCE_OPEN.fullmatch(line)
            if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
                self.open = (m.group(1)[0], len(m.group(1)), pos)
                return True
            return False
        m = _FENCE_OPEN.fullmatch(line)
        if m and m.group(1)[0] == self.open[0] and len(m.group(1)) >= self.open[1] and not m.group(2).strip():
            self.open = None
        return True


def markdown_headings(text: str, start: int = 0, end: int | None = None, *, setext: bool = True
                      ) -> tuple[list[tuple[int, int, int, str]], list[tuple[int, str]]]:
    """Headings of ``text[start:end]`` as ``(start, body_start, level, title)``, plus warnings.

    Follows CommonMark where it matters for chunking: an ATX heading needs a
    space after its ``#`` marks (``#标题`` is a paragraph), may be indented by at
    most three spaces, may have a closing ``#`` sequence (after a space: the
    title of ``# C#`` is ``C#``) and may be empty (title ``""``); a setext
    heading is one paragraph line underlined with ``=`` (level 1) or ``-``
    (level 2), and ``setext=False`` ignores those; nothing inside a fenced code
    block (``_Fences``) is a heading, and an unclosed fence runs to the end of
    the text (reported as a warning ``(position, message)``). A YAML
    front-matter block (``---`` ... ``---`` at the very start) is skipped.

    >>> t = "# 员工手册\\n## 病假\\n```\\n# 不是标题\\n```"
    >>> [(lvl, title) for _, _, lvl, title in markdown_headings(t)[0]]
    [(1, '员工手册'), (2, '病假')]
    """
    end = len(text) if end is None else end
    heads: list[tuple[int, int, int, str]] = []
    warnings: list[tuple[int, str]] = []
    fences = _Fences()
    prev: tuple[int, str] | None = None           # the previous paragraph line (start, content)
    lines = [(ls, nxt, text[ls:le].rstrip("\r")) for ls, le, nxt in _lines(text, start, end)]
    i = 0
    if start == 0 and lines and lines[0][2].rstrip() == "---":
        for j in range(1, len(lines)):
            if lines[j][2].rstrip() in ("---", "..."):
                i = j + 1
                break
    for ls, nxt, line in lines[i:]:
        if fences.code(ls, line):
            prev = None
            continue
        m = _ATX.fullmatch(line) if "#" in line[:4] else None   # NOTE: the regex needs a '#' there
        if m:
            title = _ATX_CLOSE.sub("", m.group(2) or "").strip()
            heads.append((ls, nxt, len(m.group(1)), title))
            prev = None
            continue
        if not setext:
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
    if fences.open is not None:
        pos = fences.open[2]
        warnings.append((pos, f"unclosed code fence opened at offset {pos} runs to the end"))
    return heads, warnings


# -- the heading path above a container (tables, dialogues, questions) -----------------

_HTML_HEADING = re.compile(r"<h([1-6])\b[^>]*>(.*?)</h\1\s*>", re.I | re.S)
_TAG = re.compile(r"<[^>]*>")


class _Headings:
    """The non-empty ATX headings of :func:`markdown_headings` and the HTML h1–h6 of a range,
    and the heading path in force at any offset.

    Setext headings are left out (``setext=False``), as the container
    strategies always did: in chats and FAQs a ``---`` line under a line of
    text is more often a rule than a heading. ``atx`` maps the start of each
    ATX heading line to its title.
    """

    def __init__(self, text: str, lo: int, hi: int) -> None:
        heads, _ = markdown_headings(text, lo, hi, setext=False)
        found: list[tuple[int, int, str]] = [(s, level, title) for s, _, level, title in heads if title]
        self.atx = {s: title for s, _, title in found}
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
