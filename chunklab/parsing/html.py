"""HTML read as text: the visible text of a page, with its headings as Markdown ``#`` lines.

An HTML file indexed raw puts CSS, tags and entities into chunks, the index and the embeddings
(an ITIL manual's first chunks were its stylesheet), and evidence copied from a browser (``->``
where the source says ``-&gt;``, a space where it says ``&nbsp;``) is found nowhere.
:func:`html_to_text` reads a page the way a browser shows it, with :mod:`html.parser` (no
dependency):

* ``<script>``, ``<style>``, ``<noscript>``, ``<template>``, ``<svg>`` and the ``<head>`` are dropped
  (the ``<title>`` is kept apart as the title); comments are dropped;
* entities are decoded (``&gt;`` is ``>``, ``&#25991;`` is ``文``); a no-break space is a space, a
  soft hyphen and zero-width spaces vanish, as they do when text is copied from a browser;
* whitespace outside ``<pre>`` collapses to one space, as a browser renders it;
* block elements (``<p>``, ``<div>``, ``<li>``, ``<br>``, ...) end lines; paragraphs, lists, tables and
  headings are separated by a blank line; list items start with ``"- "``;
* headings ``<h1>``-``<h6>`` become Markdown heading lines (``## 安装``): the heading-aware
  strategies (``markdown``, ``hierarchy``) and the router see the page's structure in the text
  itself, so the choice needs no side channel and ``chunklab text page.html`` shows it;
* a table becomes a Markdown table, one row a line (``| 参数 | 说明 |``, a ``| --- |`` line after the
  first row), as a PDF's ruled tables do; a table inside a cell is flattened into the cell;
* ``<pre>`` keeps its text verbatim inside a Markdown code fence (so a ``# comment`` in a shell
  example is not a heading).

The text returned *is* the document's text: chunk offsets and evidence refer to it, as they refer to
a PDF's extracted text (:func:`chunklab.datasets.files.html_document`).
"""
from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any, NamedTuple

__all__ = ["HtmlText", "html_to_text", "BLOCK_TAGS", "SKIP_TAGS"]

#: Elements whose content is never shown.
SKIP_TAGS = frozenset({"script", "style", "noscript", "template", "svg", "head", "iframe", "object"})
#: Elements that end a line before and after them.
BLOCK_TAGS = frozenset({
    "address", "article", "aside", "blockquote", "body", "caption", "center", "dd", "details", "dialog", "dir",
    "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "header", "hgroup", "hr", "html",
    "legend", "li", "main", "menu", "nav", "ol", "p", "section", "summary", "tbody", "tfoot", "thead", "ul",
})
#: Block elements followed by a blank line (paragraph-like).
_PARAGRAPH = frozenset({"p", "blockquote", "ul", "ol", "dl", "figure", "hr", "section", "article", "details"})
_HEADINGS = {f"h{i}": i for i in range(1, 7)}
#: What a ``<head>`` may hold; another element starts the body (the ``</head>`` was left out).
_HEAD_CONTENT = frozenset({"meta", "link", "style", "script", "title", "base", "noscript", "template"})
_INVISIBLE = dict.fromkeys(map(ord, "\u00ad\u200b\u200c\u200d\u2060\ufeff"))


class HtmlText(NamedTuple):
    """The text of an HTML page (:func:`html_to_text`), its title (``<title>``, else the first
    heading, else ``""``) and counts of what was read: ``headings``, ``tables``, ``pre`` blocks and
    ``dropped`` elements (script, style, ...)."""

    text: str
    title: str
    stats: dict[str, int]


def _collapse(data: str) -> str:
    return re.sub(r"[ \t\n\r\f\v\u00a0]+", " ", data.translate(_INVISIBLE))


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.pending = 0          # line breaks owed before the next text
        self.skip: list[str] = []  # open elements whose content is dropped
        self.pre = 0
        self.pre_start = False
        self.heading: list[Any] | None = None   # [level, pieces]
        self.tables: list[dict[str, Any]] = []  # open tables: rows, the current row and cell
        self.title: list[str] | None = None
        self.titles: list[str] = []
        self.stats = {"headings": 0, "tables": 0, "pre": 0, "dropped": 0}

    # -- output ----------------------------------------------------------------------------
    def _last(self) -> str:
        for piece in reversed(self.out):
            if piece:
                return piece[-1]
        return "\n"

    def brk(self, n: int) -> None:
        self.pending = max(self.pending, n)

    def write(self, s: str, verbatim: bool = False) -> None:
        if not s:
            return
        cell = self.tables[-1]["cell"] if self.tables and self.tables[-1]["cell"] is not None else None
        if self.heading is not None or cell is not None:
            (self.heading[1] if self.heading is not None else cell).append(s)
            return
        if not verbatim and not s.strip(" "):   # whitespace alone neither starts a line nor ends one
            if self.pending or self._last() in " \n":
                return
        if self.pending and self.out:
            while self.out and self.out[-1].endswith(" ") and not self.pre:
                self.out[-1] = self.out[-1].rstrip(" ")
            self.out.append("\n" * self.pending)
        self.pending = 0
        if not verbatim and self._last() in " \n":
            s = s.lstrip(" ")
        self.out.append(s)

    # -- parser callbacks ------------------------------------------------------------------------
    def handle_starttag(self, tag: str, attrs) -> None:  # noqa: ANN001
        if tag == "title" and self.title is None and not self.titles:
            self.title = []
            return
        if self.skip == ["head"] and tag not in _HEAD_CONTENT:   # an unclosed <head> ends at the body
            self.skip.pop()
        if self.skip:
            if tag in SKIP_TAGS and tag != "head":
                self.stats["dropped"] += 1
            if tag == self.skip[-1]:
                self.skip.append(tag)
            return
        if tag in SKIP_TAGS:
            self.skip.append(tag)
            self.stats["dropped"] += tag != "head"
            return
        if tag in _HEADINGS or tag in BLOCK_TAGS or tag in ("table", "pre"):
            self._end_heading()   # a block inside an unclosed heading ends it
        if tag in _HEADINGS:
            self.brk(2)
            self.heading = [_HEADINGS[tag], []]
        elif tag == "br":
            if self.pre:
                self.write("\n", verbatim=True)
            elif self.tables and self.tables[-1]["cell"] is not None:
                self._cell_space()
            else:
                self.brk(1)
        elif tag == "pre":
            self.brk(2)
            self.write("```\n", verbatim=True)
            self.pre += 1
            self.pre_start = True
            self.stats["pre"] += 1
        elif tag == "table":
            self._cell_space()
            self.tables.append({"rows": [], "row": None, "cell": None})
            if len(self.tables) == 1:
                self.brk(2)
                self.stats["tables"] += 1
        elif tag == "tr" and self.tables:
            self._end_row()
            self.tables[-1]["row"] = []
        elif tag in ("td", "th") and self.tables:
            t = self.tables[-1]
            self._end_cell()
            if t["row"] is None:
                t["row"] = []
            t["cell"] = []
        elif tag in BLOCK_TAGS:
            self._cell_space()
            self.brk(2 if tag in _PARAGRAPH else 1)
            if tag == "li":
                self.write("- ")

    def handle_startendtag(self, tag: str, attrs) -> None:  # noqa: ANN001
        if tag in ("br", "hr"):
            self.handle_starttag(tag, attrs)
            if tag == "hr":
                self.brk(2)

    def handle_endtag(self, tag: str) -> None:
        if tag == "title" and self.title is not None:
            title = " ".join(_collapse("".join(self.title)).split())
            if title:
                self.titles.append(title)
            self.title = None
            return
        if self.skip:
            if tag == self.skip[-1]:
                self.skip.pop()
            return
        if tag in _HEADINGS:
            self._end_heading()
        elif tag == "pre" and self.pre:
            if self._last() != "\n":
                self.write("\n", verbatim=True)
            self.write("```", verbatim=True)
            self.pre -= 1
            self.brk(2)
        elif tag in ("td", "th") and self.tables:
            self._end_cell()
        elif tag == "tr" and self.tables:
            self._end_row()
        elif tag == "table" and self.tables:
            self._end_table()
        elif tag in BLOCK_TAGS:
            self._cell_space()
            self.brk(2 if tag in _PARAGRAPH else 1)

    def handle_data(self, data: str) -> None:
        if self.title is not None:
            self.title.append(data)
            return
        if self.skip:
            return
        if self.pre:
            if self.pre_start and data.startswith("\n"):   # a browser ignores the newline after <pre>
                data = data[1:]
            self.pre_start = False
            self.write(data.replace("\u00a0", " ").translate(_INVISIBLE), verbatim=True)
            return
        text = _collapse(data)
        if text.strip() or (text and self._last() not in " \n"):
            self.write(text)

    # -- structures --------------------------------------------------------------------------
    def _cell_space(self) -> None:
        if self.tables and self.tables[-1]["cell"] is not None:
            self.tables[-1]["cell"].append(" ")

    def _end_heading(self) -> None:
        if self.heading is None:
            return
        level, pieces = self.heading
        self.heading = None
        title = " ".join("".join(pieces).split())
        if title:
            self.stats["headings"] += 1
            if not self.titles:
                self.titles.append(title)
            self.brk(2)
            self.write("#" * level + " " + title)
        self.brk(2)

    def _end_cell(self) -> None:
        t = self.tables[-1]
        if t["cell"] is not None:
            text = " ".join("".join(t["cell"]).split()).replace("|", "\\|")
            t["cell"] = None
            if t["row"] is None:
                t["row"] = []
            t["row"].append(text)

    def _end_row(self) -> None:
        self._end_cell()
        t = self.tables[-1]
        if t["row"]:
            t["rows"].append(t["row"])
        t["row"] = None

    def _end_table(self) -> None:
        self._end_row()
        t = self.tables.pop()
        rows = [r for r in t["rows"] if any(c for c in r)]
        if self.tables:   # a table in a cell: its rows flattened into that cell
            self.write(" ".join(" ".join(c for c in r if c) for r in rows) + " ")
            return
        if not rows:
            self.brk(2)
            return
        width = max(len(r) for r in rows)
        lines = ["| " + " | ".join(r + [""] * (width - len(r))) + " |" for r in rows]
        lines.insert(1, "| " + " | ".join(["---"] * width) + " |")
        self.brk(2)
        self.write("\n".join(lines))
        self.brk(2)

    def finish(self) -> str:
        self.close()
        self._end_heading()
        while self.tables:
            self._end_table()
        if self.pre:
            if self._last() != "\n":
                self.write("\n", verbatim=True)
            self.write("```", verbatim=True)
        text = "".join(self.out)
        return "\n".join(line.rstrip(" ") for line in text.split("\n")).strip("\n")


def html_to_text(source: str) -> HtmlText:
    """The visible text of the HTML ``source`` (see the module docstring), its title and counts.

    >>> t = html_to_text("<html><head><title>手册</title><style>p{color:red}</style></head><body>"
    ...                  "<h1>安装</h1><p>运行&nbsp;<code>make</code> -&gt; 完成&#x3002;</p>"
    ...                  "<table><tr><th>参数</th><th>说明</th></tr><tr><td>-v</td><td>详细</td></tr></table>"
    ...                  "<pre>\\n# 注释\\nmake  all\\n</pre></body></html>")
    >>> print(t.text)
    # 安装
    <BLANKLINE>
    运行 make -> 完成。
    <BLANKLINE>
    | 参数 | 说明 |
    | --- | --- |
    | -v | 详细 |
    <BLANKLINE>
    ```
    # 注释
    make  all
    ```
    >>> t.title, t.stats
    ('手册', {'headings': 1, 'tables': 1, 'pre': 1, 'dropped': 1})
    """
    reader = _Reader()
    reader.feed(source)
    text = reader.finish()
    return HtmlText(text, reader.titles[0] if reader.titles else "", dict(reader.stats))
