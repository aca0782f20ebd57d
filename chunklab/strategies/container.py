"""Container strategies: tables, dialogues and FAQs, whose unit is not a sentence.

A table row means nothing without its header; an answer means nothing without
its question; "可以" means nothing without the turn it replies to. These
strategies find those containers, keep each one whole when it fits, and when
it does not, cut only between its own units (rows, turns) and repeat what a
part needs to be understood (the header, the question) in
:attr:`Chunk.context`. The chunk text is always the untouched source.

Text outside any container goes to ``recursive`` and its chunks say so
(``meta["level"] == "recursive"``, ``meta["fallback_from"]``); a document
with no container at all is chunked by ``recursive`` as a whole, recorded the
same way, so a router can count how often a strategy found nothing to do.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Iterable, Iterator, Sequence

from ..base import Span, Strategy, register, size_params
from ..core import Chunk, Document, trim_span
from ..params import Param, ParamError

__all__ = ["Table", "Dialogue", "QAPair", "fallback_spans", "find_tables", "transcribe_row", "transcribe_tables",
           "find_turns", "bigram_jaccard"]


def fallback_spans(strategy: Strategy, doc: Document, start: int, end: int, **meta) -> Iterator[Span]:
    """``recursive`` over ``doc.text[start:end]`` with ``strategy``'s sizes, each span
    recording ``level="recursive"``, ``fallback_from=strategy.name`` and ``meta``."""
    from .linguistic import Recursive

    target = strategy.target
    rec = Recursive(target=target, max=strategy.max, min=min(getattr(strategy, "min", 0), target),
                    overlap=min(getattr(strategy, "overlap", 0), target - 1), length=strategy.length)
    for s, e, m in rec._spans(doc, start, end):
        yield s, e, {**meta, **m, "level": "recursive", "fallback_from": strategy.name}


def _skip_space(text: str, s: int, e: int) -> int:
    """First offset in ``[s, e)`` that is not whitespace (``e`` if none)."""
    while s < e and text[s].isspace():
        s += 1
    return s


def _size_fn(strategy: Strategy, text: str):
    if strategy.length == "chars":
        return lambda a, b: b - a
    return lambda a, b: strategy.measure(text[a:b])


def _lines(text: str, lo: int, hi: int) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of each line of ``text[lo:hi]``, without its line break (``\\r`` kept)."""
    pos = lo
    while pos < hi:
        nl = text.find("\n", pos, hi)
        e = hi if nl < 0 else nl
        yield pos, e
        pos = e + 1


# -- headings: the path above a container ------------------------------------------

_FENCE = re.compile(r"[ \t]{0,3}(`{3,}|~{3,})")


def _next_fence(fence: str | None, line: str) -> str | None:
    """The open code fence after a fence ``line``: it opens one, or closes ``fence`` when it
    uses the same character at least as many times (CommonMark)."""
    mark = _FENCE.match(line).group(1)
    if fence is None:
        return mark[0] * len(mark)
    return None if mark.startswith(fence) else fence
_ATX = re.compile(r"[ \t]{0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*\r?$")
_HTML_HEADING = re.compile(r"<h([1-6])\b[^>]*>(.*?)</h\1\s*>", re.I | re.S)
_TAG = re.compile(r"<[^>]*>")


class _Headings:
    """Markdown ATX headings (outside fenced code) and HTML h1–h6 of a range, and the
    heading path in force at any offset."""

    def __init__(self, text: str, lo: int, hi: int) -> None:
        found: list[tuple[int, int, str]] = []
        fence = None
        for s, e in _lines(text, lo, hi):
            line = text[s:e]
            if _FENCE.match(line):
                fence = _next_fence(fence, line)
                continue
            if fence is None and line[:4].lstrip().startswith("#"):
                m = _ATX.match(line)
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


# -- tables -------------------------------------------------------------------

@dataclass
class _Row:
    start: int
    end: int
    cells: list[str]


@dataclass
class _TableInfo:
    """A table found in a document; offsets are document offsets."""

    start: int                  # first character of the table (or of its caption line)
    end: int                    # end of the table (and of a note line directly below it)
    fmt: str                    # "markdown" or "html"
    caption: str = ""
    columns: list[str] = field(default_factory=list)
    body_start: int = 0         # where the first data row starts (end of header rows)
    rows: list[_Row] = field(default_factory=list)
    ragged: list[int] = field(default_factory=list)   # 1-based data row numbers
    merged: int = 0             # cells filled from a colspan / rowspan
    error: str = ""             # non-empty: not parsed, handed to recursive


_DELIM = re.compile(r"[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*\r?$")
_PIPE_SPLIT = re.compile(r"(?<!\\)\|")
#: A line directly below a table that belongs to it (a note on the table).
_NOTE = re.compile(r"[ \t]*[*（(]?(?:注|说明|备注|数据来源|来源|Note|Source)[^\n]{0,3}?[:：]")
#: Sentence ends: a line ending with one is prose, not a caption.
_PROSE_END = re.compile(r"[。！？!?.]\s*$")


def _md_cells(line: str) -> list[str]:
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|") and not s.endswith("\\|"):
        s = s[:-1]
    return [c.strip().replace("\\|", "|") for c in _PIPE_SPLIT.split(s)]


def _caption_above(text: str, lo: int, start: int) -> tuple[int, str]:
    """The caption line directly above a table (one blank line allowed): a line of at most
    60 characters that is not a table row and does not end like a sentence."""
    pos = start
    for _ in range(2):
        if pos <= lo:
            return start, ""
        ls = text.rfind("\n", lo, pos - 1) + 1
        ls = max(ls, lo)
        line = text[ls:pos].strip()
        if not line:
            pos = ls
            continue
        if len(line) <= 60 and not line.startswith("|") and not _PROSE_END.search(line) and "<" not in line:
            caption = line.lstrip("#").strip().strip("*").strip()
            return ls, caption
        return start, ""
    return start, ""


def _note_below(text: str, end: int, hi: int) -> int:
    """Extend ``end`` over a note line directly below the table (``注：…``)."""
    if end >= hi:
        return end
    ls = end + 1 if text[end] == "\n" else end
    m = _NOTE.match(text, ls, hi)
    if not m:
        return end
    le = text.find("\n", ls, hi)
    return hi if le < 0 else le


class _RowParser(HTMLParser):
    """Cells of one ``<tr>``: text, tag (td/th) and colspan/rowspan."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.cells: list[tuple[str, str, int, int]] = []
        self._cur: list[str] | None = None
        self._tag = ""
        self._span = (1, 1)
        self._depth = 0

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self._depth += 1
        if self._depth:
            return
        if tag in ("td", "th"):
            self._close()
            a = dict(attrs)
            self._cur, self._tag = [], tag
            self._span = (_int_attr(a.get("colspan")), _int_attr(a.get("rowspan")))
        elif tag == "br" and self._cur is not None:
            self._cur.append(" ")

    def handle_endtag(self, tag):
        if tag == "table" and self._depth:
            self._depth -= 1
            return
        if tag in ("td", "th") and not self._depth:
            self._close()

    def handle_data(self, data):
        if self._cur is not None:
            self._cur.append(data)

    def _close(self):
        if self._cur is not None:
            self.cells.append((" ".join("".join(self._cur).split()), self._tag, *self._span))
            self._cur = None

    def close(self):
        super().close()
        self._close()


def _int_attr(v) -> int:
    try:
        return max(1, min(int(str(v).strip()), 1000))
    except (TypeError, ValueError):
        return 1


_HTML_TABLE_TOKENS = re.compile(r"<(/?)(table|tr|thead|tbody|tfoot|caption)\b[^>]*>", re.I)


def _html_table(text: str, start: int, hi: int) -> _TableInfo:
    """Parse the HTML table starting at ``start``; rows are located with a depth-aware scan so
    nested tables stay inside their cell."""
    depth, end = 0, -1
    tr_starts: list[int] = []
    thead_rows: set[int] = set()
    in_thead = False
    caption = ""
    for m in _HTML_TABLE_TOKENS.finditer(text, start, hi):
        closing, tag = m.group(1) == "/", m.group(2).lower()
        if tag == "table":
            depth += -1 if closing else 1
            if depth == 0:
                end = m.end()
                break
            continue
        if depth != 1 or closing:
            if depth == 1 and tag == "thead" and closing:
                in_thead = False
            continue
        if tag == "tr":
            if in_thead:
                thead_rows.add(len(tr_starts))
            tr_starts.append(m.start())
        elif tag == "thead":
            in_thead = True
        elif tag == "caption":
            ce = re.compile(r"</caption\s*>", re.I).search(text, m.end(), hi)
            if ce:
                caption = " ".join(_TAG.sub("", text[m.end():ce.start()]).split())
    if end < 0:
        nxt = re.compile(r"<table\b", re.I).search(text, start + 1, hi)
        return _TableInfo(start, nxt.start() if nxt else hi, "html", error="unclosed <table>: no matching </table>")
    info = _TableInfo(start, end, "html", caption=caption)
    if not tr_starts:
        info.error = "<table> without <tr> rows"
        return info
    raw: list[tuple[int, int, list[tuple[str, str, int, int]]]] = []
    bounds = tr_starts + [end]
    for i, s in enumerate(tr_starts):
        e = bounds[i + 1]
        p = _RowParser()
        p.feed(text[s:e])
        p.close()
        raw.append((s, e, p.cells))
    # expand colspan / rowspan into a grid; a spanned cell repeats its value (counted in `merged`)
    pending: dict[int, tuple[int, str]] = {}
    grid: list[list[str]] = []
    widths: list[int] = []
    for _, _, cells in raw:
        row: list[str] = []
        col = 0
        it = iter(cells)
        cell = next(it, None)
        while cell is not None or any(c >= col for c in pending):
            if col in pending:
                left, value = pending[col]
                row.append(value)
                info.merged += 1
                if left > 1:
                    pending[col] = (left - 1, value)
                else:
                    del pending[col]
                col += 1
                continue
            if cell is None:
                col += 1
                row.append("")
                continue
            value, _, cspan, rspan = cell
            for k in range(cspan):
                row.append(value)
                if k:
                    info.merged += 1
                if rspan > 1:
                    pending[col] = (rspan - 1, value)
                col += 1
            cell = next(it, None)
        grid.append(row)
        widths.append(len(cells))
    # header rows: <thead> rows, else leading rows made only of <th>, else the first row
    n_head = 0
    if thead_rows:
        n_head = max(thead_rows) + 1
    else:
        while n_head < len(raw) - 1 and raw[n_head][2] and all(c[1] == "th" for c in raw[n_head][2]):
            n_head += 1
        n_head = n_head or 1
    n_head = min(n_head, len(raw))
    info.columns = _combine_headers(grid[:n_head])
    info.body_start = raw[n_head][0] if n_head < len(raw) else end
    width = len(info.columns)
    for i in range(n_head, len(raw)):
        s, e, cells = raw[i]
        info.rows.append(_Row(s, e, grid[i]))
        if len(grid[i]) != width:
            info.ragged.append(i - n_head + 1)
    if info.rows:
        info.rows[-1].end = end
    return info


def _combine_headers(rows: list[list[str]]) -> list[str]:
    """One name per column from one or more header rows: ``住宿限额 / 总监及以下``."""
    width = max((len(r) for r in rows), default=0)
    cols = []
    for k in range(width):
        parts: list[str] = []
        for r in rows:
            v = r[k] if k < len(r) else ""
            if v and (not parts or parts[-1] != v):
                parts.append(v)
        cols.append(" / ".join(parts))
    return cols


def find_tables(text: str, lo: int = 0, hi: int | None = None) -> list[_TableInfo]:
    """Markdown pipe tables and HTML ``<table>``s in ``text[lo:hi]``, in order.

    A Markdown table is a header line with a ``|---|`` delimiter line below
    it, or at least two consecutive lines starting with ``|`` (the first is
    taken as the header). Rows whose cell count differs from the header's are
    kept and listed in ``ragged`` (1-based data row numbers). An HTML
    ``<table>`` without ``</table>`` or without rows is returned with
    ``error`` set.

    >>> t = find_tables("| 城市 | 限额 |\\n|---|---|\\n| 北京 | 600 |\\n| 上海 |\\n")[0]
    >>> t.columns, [r.cells for r in t.rows], t.ragged
    (['城市', '限额'], [['北京', '600'], ['上海']], [2])
    """
    hi = len(text) if hi is None else hi
    tables: list[_TableInfo] = []
    lines = list(_lines(text, lo, hi))
    fence = None
    html = re.compile(r"<table\b", re.I)
    i = 0
    floor = lo   # captions may not reach into the previous table
    while i < len(lines):
        s, e = lines[i]
        line = text[s:e]
        if _FENCE.match(line):
            fence = _next_fence(fence, line)
            i += 1
            continue
        if fence is not None:
            i += 1
            continue
        info = None
        hm = html.search(line)
        if hm:
            info = _html_table(text, s + hm.start(), hi)
            if not info.error:
                _frame(text, info, floor, hi)
        elif "|" in line and i + 1 < len(lines):
            ns, ne = lines[i + 1]
            has_delim = _DELIM.match(text, ns, ne) is not None and "|" in text[ns:ne] and "-" in text[ns:ne]
            pipe_start = line.lstrip().startswith("|") and text[ns:ne].lstrip().startswith("|")
            if has_delim or pipe_start:
                j = i + 2 if has_delim else i + 1
                while j < len(lines):
                    rs, re_ = lines[j]
                    row = text[rs:re_]
                    if not row.strip() or "|" not in row or (not has_delim and not row.lstrip().startswith("|")):
                        break
                    j += 1
                header = _md_cells(line)
                info = _TableInfo(s, lines[j - 1][1], "markdown", columns=header)
                body = i + 2 if has_delim else i + 1
                info.body_start = lines[body][0] if body < j else info.end
                for k in range(body, j):
                    rs, re_ = lines[k]
                    cells = _md_cells(text[rs:re_])
                    info.rows.append(_Row(rs, re_, cells))
                    if len(cells) != len(header):
                        info.ragged.append(k - body + 1)
                _frame(text, info, floor, hi)
        if info is None:
            i += 1
            continue
        tables.append(info)
        floor = info.end
        while i < len(lines) and lines[i][0] < info.end:
            i += 1
    return tables


def _frame(text: str, info: _TableInfo, floor: int, hi: int) -> None:
    """Widen a parsed table to the caption line above it (unless it has one; never above
    ``floor``) and the note lines below it."""
    if not info.caption:
        cs, cap = _caption_above(text, floor, info.start)
        if cap:
            info.start, info.caption = cs, cap
    info.end = _note_below(text, info.end, hi)


def transcribe_row(columns: list[str], cells: list[str]) -> str:
    """One table row as a sentence: ``列名：值`` pairs joined by ``；``, empty cells skipped,
    cells beyond the header named ``列N``.

    >>> transcribe_row(["城市", "职级", "住宿限额"], ["北京", "总监及以下", "600 元/晚"])
    '城市：北京；职级：总监及以下；住宿限额：600 元/晚'
    >>> transcribe_row(["城市", ""], ["上海", "", "备注"])
    '城市：上海；列3：备注'
    """
    parts = []
    for k, value in enumerate(cells):
        if not value:
            continue
        name = columns[k] if k < len(columns) and columns[k] else f"列{k + 1}"
        parts.append(f"{name}：{value}")
    return "；".join(parts)


def transcribe_tables(document: Document, chunks: Sequence[Chunk]) -> list[Chunk]:
    """Add each table row lying inside a chunk to that chunk's context, as a sentence.

    Tables are found in the whole document (Markdown pipe tables and HTML
    tables, :func:`find_tables`; tables that do not parse are skipped); a row
    inside a chunk becomes ``列名：值；列名：值`` (:func:`transcribe_row`),
    with the column names of its table even when the header row is in another
    chunk. Rows already transcribed in the context are not repeated.
    ``Chunk.text`` and the offsets never change; ``meta["transcribed_rows"]``
    counts the rows added. This is what the ``transcribe_tables`` key of an index
    configuration (:mod:`chunklab.versioning`) does after any strategy.

    >>> from chunklab import Document, chunk
    >>> doc = Document("d", "| 城市 | 限额 |\\n|---|---|\\n| 北京 | 600 |")
    >>> [c.context for c in transcribe_tables(doc, chunk(doc, "fixed", size=100))]
    ['城市：北京；限额：600']
    """
    text = document.text
    rows = []
    for t in find_tables(text):
        if t.error:
            continue
        for r in t.rows:
            sentence = transcribe_row(t.columns, r.cells)
            if sentence:
                rows.append((*trim_span(text, r.start, r.end), sentence))
    if not rows:
        return list(chunks)
    out = []
    for c in chunks:
        extra = [s for a, b, s in rows if c.start <= a and b <= c.end and s not in c.context]
        if extra:
            context = "\n".join([c.context, *extra] if c.context else extra)
            c = c._replace(context=context, meta={**c.meta, "transcribed_rows": len(extra)})
        out.append(c)
    return out


@register
class Table(Strategy):
    """Markdown and HTML tables kept whole, or cut between rows with the header repeated.

    ``mode="whole"``: one chunk per table, including the caption line directly
    above it (at most one blank line between, at most 60 characters, not a
    sentence) and a ``注：…`` note line directly below. A table longer than
    the cap is cut between rows as in ``rows`` mode (``level="table_rows"``).
    ``mode="rows"``: at most ``rows`` data rows per chunk; the first chunk
    holds the caption and header rows, later ones carry the caption and the
    header in :attr:`Chunk.context` (never in the text). A row, and the
    header with the first row, are never cut: one longer than the cap is kept
    whole and flagged ``meta["oversize"]``.

    ``transcribe`` adds each row of the chunk as a sentence
    (``城市：北京；职级：总监及以下；住宿限额：600 元/晚``) to the context; ``"auto"``
    does so for tables wider than 10 columns. Ragged rows are kept and
    listed in ``meta["ragged_rows"]``; colspan/rowspan cells of HTML tables
    are repeated into every column/row they cover (counted in
    ``meta["merged_cells"]``). An HTML table that does not parse goes to
    ``recursive`` with ``meta["parse_failed"]`` and ``meta["parse_error"]``.
    Text around the tables goes to ``recursive`` (recorded in
    ``meta["level"]``). Every chunk's ``meta["path"]`` is the heading path above it.

    >>> doc = "住宿标准\\n| 城市 | 限额 |\\n|---|---|\\n| 北京 | 600 |\\n| 上海 | 500 |"
    >>> [c.context for c in Table(mode="rows", rows=1, transcribe=True).split(doc)]
    ['城市：北京；限额：600', '住宿标准\\n| 城市 | 限额 |\\n城市：上海；限额：500']
    """

    name = "table"
    family = "container"
    summary = {"zh": "表格整表一块（含表题）或按行分组并在上下文里重复表头；宽表转写成句子",
               "en": "tables whole (with caption) or by row groups with the header repeated; wide tables transcribed"}
    params = {
        **size_params(target=1000),
        "mode": Param("choice", "whole", "'whole': one chunk per table; 'rows': `rows` data rows per chunk",
                      choices=("whole", "rows")),
        "rows": Param("int", 10, "data rows per chunk in 'rows' mode", low=1, high=100_000, ui_high=50),
        "transcribe": Param("choice", "auto", "rows as sentences in the context ('auto': tables wider than 10 columns)",
                            choices=("auto", True, False)),
    }

    #: Tables with more columns than this are transcribed when ``transcribe="auto"``.
    WIDE = 10

    def _check(self) -> None:
        super()._check()
        if self.transcribe not in ("auto",) and not isinstance(self.transcribe, bool):
            raise ParamError(f"transcribe must be one of 'auto', True, False, got {self.transcribe!r}")

    def _spans(self, doc: Document, start: int, end: int) -> Iterable[Span]:
        text = doc.text
        headings = _Headings(text, start, end)
        pos = start
        for index, t in enumerate(find_tables(text, start, end)):
            # headings with nothing but the table under them join the table
            if not t.error and t.start > pos and all(
                    headings.is_heading_line(ls) for ls, le in _lines(text, pos, t.start) if text[ls:le].strip()):
                t.start = _skip_space(text, pos, t.start)
            if t.start > pos:
                yield from self._around(doc, pos, t.start, headings)
            path = headings.path_at(t.start)
            if t.error:
                yield from fallback_spans(self, doc, t.start, t.end, kind="table", format=t.fmt, table=index,
                                          parse_failed=True, parse_error=t.error, path=path)
            else:
                yield from self._table(doc, t, index, path)
            pos = t.end
        if pos < end:
            yield from self._around(doc, pos, end, headings)

    def _around(self, doc, a, b, headings) -> Iterator[Span]:
        for s, e, m in fallback_spans(self, doc, a, b):
            yield s, e, {**m, "path": headings.path_at(_skip_space(doc.text, s, e))}

    def _table(self, doc: Document, t: _TableInfo, index: int, path: list[str]) -> Iterator[Span]:
        text = doc.text
        size = _size_fn(self, text)
        cap = self.cap
        transcribe = self.transcribe if isinstance(self.transcribe, bool) else len(t.columns) > self.WIDE
        base = {"kind": "table", "format": t.fmt, "table": index, "columns": len(t.columns),
                "header": list(t.columns), "caption": t.caption, "path": path, "transcribed": transcribe}
        if t.merged:
            base["merged_cells"] = t.merged
        whole = self.mode == "whole" and size(t.start, t.end) <= cap
        if whole or not t.rows:
            meta = {**base, "row_range": (1, len(t.rows)) if t.rows else None,
                    "ragged_rows": list(t.ragged)}
            if size(t.start, t.end) > cap:
                meta["oversize"] = True
            if transcribe:
                meta["context"] = "\n".join(filter(None, (transcribe_row(t.columns, r.cells) for r in t.rows)))
            yield t.start, t.end, meta
            return
        # row groups: the head (caption, header rows) travels with the first data row
        units = [(r.start, r.end) for r in t.rows]
        units[0] = (t.start, units[0][1])
        units[-1] = (units[-1][0], t.end)
        # tile: the gap between rows (the line break) belongs to the row before it
        units = [(a, units[k + 1][0] if k + 1 < len(units) else b) for k, (a, b) in enumerate(units)]
        limit = self.rows if self.mode == "rows" else None
        groups: list[tuple[int, int]] = []   # row index ranges [i, j)
        i = 0
        while i < len(units):
            j = i + 1
            while j < len(units) and (limit is None or j - i < limit) and size(units[i][0], units[j][1]) <= cap:
                j += 1
            groups.append((i, j))
            i = j
        header_line = "| " + " | ".join(t.columns) + " |" if t.columns else ""
        level = "table" if self.mode == "rows" else "table_rows"
        for i, j in groups:
            s, e = units[i][0], units[j - 1][1]
            meta = {**base, "row_range": (i + 1, j), "ragged_rows": [r for r in t.ragged if i < r <= j]}
            if level != "table":
                meta.update(level=level, fallback_from="table")
            if size(s, e) > cap:
                meta["oversize"] = True
            ctx = []
            if i > 0:
                ctx += [x for x in (t.caption, header_line) if x]
            if transcribe:
                ctx += [x for x in (transcribe_row(t.columns, r.cells) for r in t.rows[i:j]) if x]
            if ctx:
                meta["context"] = "\n".join(ctx)
            yield s, e, meta


# -- dialogue -----------------------------------------------------------------------

_TIME = r"(?:\[[ \t]*)?(?:\d{4}[-/.年]\d{1,2}[-/.月]\d{1,2}日?[ \tT]*)?\d{1,2}:\d{2}(?::\d{2})?(?:[ \t]*\])?"
#: A turn line: optional timestamp, a speaker label (no spaces; an optional part in
#: parentheses, 客服（小林）), then a colon. ``https://`` is not a speaker.
_TURN = re.compile(
    rf"[ \t\u3000]*(?:(?P<time>{_TIME})[ \t\u3000]*)?"
    r"(?P<speaker>[^\s:：\[\]【】()（）<>|#*`\"“”'，,。；;！!？?]{1,20}"
    r"(?:[ \u3000][^\s:：\[\]【】()（）<>|#*`\"“”'，,。；;！!？?]{1,20}){0,2}"  # up to three words
    r"(?:[（(][^）)\n]{1,16}[）)])?)"
    r"[ \t]*[:：](?!//)"
)
#: Speaker labels accepted even when they occur only once.
ROLE_WORDS = frozenset({
    "用户", "客户", "顾客", "买家", "卖家", "客服", "人工客服", "坐席", "机器人", "助手", "AI", "系统",
    "医生", "患者", "老师", "学生", "主持人", "嘉宾", "记者", "采访者", "受访者", "面试官", "候选人",
    "User", "Agent", "Assistant", "Customer", "Bot", "System", "Interviewer",
})
#: Session headers: a 【…】 line, a Markdown heading, or a rule line naming a session.
_SESSION = re.compile(
    r"[ \t]*(?:【[^】\n]{1,80}】|#{1,6}[ \t]+\S[^\n]{0,80}"
    r"|[=\-*~]{2,}[ \t]*[^\n]{0,40}?(?:会话|对话|通话|session|chat|conversation)[^\n]{0,40}?[ \t]*[=\-*~]*)[ \t]*\r?$",
    re.I,
)


@dataclass
class _Turn:
    start: int
    end: int
    speaker: str
    body: int          # where the words start (after "speaker：")
    time: str = ""


@dataclass
class _Session:
    start: int
    end: int
    title: str = ""
    turns: list[_Turn] = field(default_factory=list)


_SPACE = re.compile(r"[ \u3000]")


def _speaker_ok(name: str) -> bool:
    if not any(ch.isalpha() for ch in name) or name.lower().startswith(("http", "ftp", "mailto")):
        return False
    words = _SPACE.split(re.sub(r"[（(].*$", "", name))
    # several words: a name ("Agent Smith", "客服 小林"), not code or prose ("if not x", "Note that")
    return len(words) == 1 or all(w[:1].isupper() or (w[:1].isalpha() and not w[:1].isascii()) for w in words)


def find_turns(text: str, lo: int = 0, hi: int | None = None) -> list[_Session]:
    """Sessions and speaker turns of ``text[lo:hi]``.

    A turn starts at a line ``speaker：`` (optionally after a timestamp such as
    ``[10:02:15]`` or ``2025-03-14 10:02``); lines that start no turn belong to
    the turn above. A speaker label counts when it has a timestamp, is a
    known role (:data:`ROLE_WORDS`, also with a name in parentheses,
    ``客服（小林）``) or occurs at least twice; a one-word label seen once also
    counts when the line directly above or below it is such a turn. A label may
    have up to three words when each is capitalised or CJK (``Agent Smith``,
    ``客服 小林``; not ``if not x`` or ``Note that``). When at least three quarters of
    the turns carry a timestamp, a label line without one is not a turn (a header field such
    as ``渠道：在线客服``; it belongs to the turn after it). A session header line starts a
    new session. Sessions tile ``[lo, hi)``; the text between a session's
    start and its first turn belongs to that turn.

    >>> s = find_turns("【会话 1】\\n用户：能退吗？\\n客服：可以。\\n")[0]
    >>> s.title, [t.speaker for t in s.turns]
    ('会话 1', ['用户', '客服'])
    """
    hi = len(text) if hi is None else hi
    cands: list[tuple[int, int, str, str, int]] = []   # line start, body start, speaker, time, line no.
    headers: list[tuple[int, str]] = []
    counts: dict[str, int] = {}
    for lineno, (s, e) in enumerate(_lines(text, lo, hi)):
        if _SESSION.match(text, s, e) and not _TURN.match(text, s, e):
            title = text[s:e].strip().strip("【】=-*~#").strip()
            headers.append((s, title))
            continue
        m = _TURN.match(text, s, e)
        if m and _speaker_ok(m.group("speaker")):
            sp = m.group("speaker")
            cands.append((s, m.end(), sp, (m.group("time") or "").strip("[] \t"), lineno))
            counts[sp] = counts.get(sp, 0) + 1
    def strong(c) -> bool:
        return bool(c[3]) or counts[c[2]] >= 2 or re.sub(r"[（(].*$", "", c[2]) in ROLE_WORDS

    # a one-word label seen once counts when a strong turn sits on the line directly above or
    # below it; a label of several words must be strong itself ("The reason is: …" is prose)
    turns = [c for k, c in enumerate(cands)
             if strong(c) or (not _SPACE.search(c[2]) and any(
                 0 <= k + d < len(cands) and strong(cands[k + d]) and abs(cands[k + d][4] - c[4]) == 1
                 for d in (-1, 1)))]
    # In a timestamped transcript, a label line without a timestamp is a header field
    # (渠道：…, 客户：…), not a turn: taken as a turn it would become the session's opener.
    timed = sum(1 for t in turns if t[3])
    if timed >= 2 and len(turns) - timed <= 0.25 * len(turns):
        turns = [t for t in turns if t[3]]
    turns = [t[:4] for t in turns]
    bounds = [lo] + [h[0] for h in headers if h[0] > lo] + [hi]
    titles = [""] + [h[1] for h in headers if h[0] > lo]
    if headers and headers[0][0] == lo:
        titles[0] = headers[0][1]
    sessions = [_Session(a, b, title) for a, b, title in zip(bounds, bounds[1:], titles) if b > a]
    k = 0
    for sess in sessions:
        while k < len(turns) and turns[k][0] < sess.end:
            s, body, sp, tm = turns[k]
            sess.turns.append(_Turn(s, sess.end, sp, body, tm))
            k += 1
        for a, b in zip(sess.turns, sess.turns[1:]):
            a.end = b.start
        if sess.turns:
            sess.turns[0].start = sess.start   # the header and any preamble go with the first turn
    return sessions


_NON_WORD = re.compile(r"[\W_]+")


def bigram_jaccard(a: str, b: str) -> float:
    """Jaccard similarity of the character-bigram sets of ``a`` and ``b`` (punctuation and
    spaces removed); 0.0 when either has no bigram.

    >>> round(bigram_jaccard("退款多久到账", "退款什么时候到账"), 2)
    0.2
    """
    def grams(s: str) -> set[str]:
        s = _NON_WORD.sub("", s)
        return {s[i:i + 2] for i in range(len(s) - 1)}
    ga, gb = grams(a), grams(b)
    if not ga or not gb:
        return 0.0
    return len(ga & gb) / len(ga | gb)


@register
class Dialogue(Strategy):
    """Windows of ``turns`` speaker turns that never separate a reply from its question.

    Turns are found by :func:`find_turns`. Inside a session (sessions are never
    merged), a window holds at most ``turns`` turns and at most ``target``
    length (one turn always fits). A window should end after a reply: the
    first speaker of a session is taken as the one asking, and a window that
    would end on that speaker's turn is shortened to the last turn of another
    speaker, or, when it holds none, lengthened to include the reply as long
    as it stays within the cap; when neither is possible it is cut there and
    ``meta["split_exchange"]`` says so. Neighbouring windows share
    ``overlap_turns`` turns (fewer when the cap does not allow them).

    ``topic_breaks=True`` also starts a new window where the character-bigram
    Jaccard similarity of the 3 turns before and the 3 turns after a reply
    falls below ``threshold`` (``meta["topic_break"]``); without such breaks
    the windows are the fixed ones above. Short chat turns share few bigrams
    even on one topic (0.02–0.07 is common), so calibrate ``threshold`` on
    your own transcripts; a break needs at least two turns since the last one. A turn longer than the cap goes to
    ``recursive``; a document with fewer than two turns goes to ``recursive``
    as a whole (``meta["no_turns"]``). ``meta["path"]`` is the session header.

    >>> chat = "用户：能开发票吗？\\n客服：可以。\\n用户：多久到？\\n客服：三天。"
    >>> [c.text for c in Dialogue(turns=3).split(chat)]
    ['用户：能开发票吗？\\n客服：可以。', '用户：多久到？\\n客服：三天。']
    """

    name = "dialogue"
    family = "container"
    summary = {"zh": "对话按发言轮次开窗（N 轮一块），不把回答和它回答的问题拆开；会话不跨界",
               "en": "speaker-turn windows that keep each reply with the turn it answers; sessions never merged"}
    params = {
        **{k: v for k, v in size_params(target=800).items() if k not in ("overlap", "min")},
        "turns": Param("int", 6, "at most this many turns per window", low=1, high=10_000, ui_high=30),
        "overlap_turns": Param("int", 0, "turns shared by neighbouring windows, < turns", low=0, high=10_000,
                               ui_high=10),
        "topic_breaks": Param("bool", False, "start a new window where lexical similarity drops"),
        "threshold": Param("float", 0.02, "bigram Jaccard below this is a topic break", low=0.0, high=1.0),
    }

    #: Turns on each side of a boundary compared for a topic break.
    TOPIC_WINDOW = 3

    def _check(self) -> None:
        super()._check()
        if self.overlap_turns >= self.turns:
            raise ParamError(f"overlap_turns must be an int in [0, turns) = [0, {self.turns - 1}], "
                             f"got {self.overlap_turns}")

    def _spans(self, doc: Document, start: int, end: int) -> Iterable[Span]:
        sessions = find_turns(doc.text, start, end)
        if sum(len(s.turns) for s in sessions) < 2:
            yield from fallback_spans(self, doc, start, end, no_turns=True)
            return
        for k, sess in enumerate(sessions):
            path = [sess.title] if sess.title else []
            if not sess.turns:
                yield from fallback_spans(self, doc, sess.start, sess.end, kind="dialogue", session=k,
                                          path=path, no_turns=True)
                continue
            yield from self._session(doc, sess, k, path)

    def _session(self, doc: Document, sess: _Session, k: int, path: list[str]) -> Iterator[Span]:
        text = doc.text
        size = _size_fn(self, text)
        cap = self.cap
        turns = sess.turns
        opener = turns[0].speaker
        base = {"kind": "dialogue", "session": k, "path": path}
        if sess.title:
            base["session_title"] = sess.title
        # runs of turns that fit the cap, separated by over-long turns and topic breaks
        breaks = self._topic_breaks(text, turns, opener) if self.topic_breaks else {}
        run: list[int] = []
        for i, t in enumerate(turns):
            if size(t.start, t.end) > cap:
                yield from self._windows(text, turns, run, opener, base, breaks)
                run = []
                yield from fallback_spans(self, doc, t.start, t.end, **base, speakers=[t.speaker],
                                          turn_range=(i + 1, i + 1))
                continue
            if i in breaks and run:
                yield from self._windows(text, turns, run, opener, base, breaks)
                run = []
            run.append(i)
        yield from self._windows(text, turns, run, opener, base, breaks)

    def _topic_breaks(self, text: str, turns: list[_Turn], opener: str) -> dict[int, float]:
        """Turn indices that start a new topic, with the similarity measured there."""
        w = self.TOPIC_WINDOW
        out: dict[int, float] = {}
        last = 0
        for b in range(2, len(turns) - 1):
            if turns[b - 1].speaker == opener or b - last < 2:
                continue   # never between a question and its reply; no one-turn topics
            left = " ".join(text[t.body:t.end] for t in turns[max(0, b - w):b])
            right = " ".join(text[t.body:t.end] for t in turns[b:b + w])
            sim = bigram_jaccard(left, right)
            if sim < self.threshold:
                out[b] = round(sim, 4)
                last = b
        return out

    def _windows(self, text, turns, run, opener, base, breaks) -> Iterator[Span]:
        if not run:
            return
        size = _size_fn(self, text)
        cap, limit = self.cap, self.turns
        ts = [turns[i] for i in run]
        n = len(ts)

        def good_end(j: int) -> bool:   # may a window end after ts[j]?
            return j == n - 1 or ts[j].speaker != opener or ts[j + 1].speaker == opener

        i, done = 0, 0   # done: turns already covered by earlier windows
        while done < n:
            j = max(i + 1, done + 1)
            while j < n and j - i < limit and size(ts[i].start, ts[j].end) <= self.target:
                j += 1
            split = False
            if not good_end(j - 1):
                k = j - 2
                while k >= max(i, done) and not good_end(k):
                    k -= 1
                if k >= max(i, done):
                    j = k + 1
                else:
                    k = j
                    while k < n and not good_end(k - 1) and size(ts[i].start, ts[k].end) <= cap:
                        k += 1
                    if good_end(k - 1) and size(ts[i].start, ts[k - 1].end) <= cap:
                        j = k
                    else:
                        split = True
            meta = {**base, "turns": j - i, "turn_range": (run[i] + 1, run[j - 1] + 1),
                    "speakers": list(dict.fromkeys(t.speaker for t in ts[i:j]))}
            if ts[i].time:
                meta["time"] = ts[i].time
            if i == 0 and run[0] in breaks:
                meta["topic_break"] = True
                meta["similarity"] = breaks[run[0]]
            if split:
                meta["split_exchange"] = True
            yield ts[i].start, ts[j - 1].end, meta
            done = j
            if j >= n:
                break
            # carry back up to `overlap_turns` turns, as long as the next window can still grow
            i = max(j - self.overlap_turns, i + 1)
            while i < j and size(ts[i].start, ts[j].end) > cap:
                i += 1


# -- FAQ / question-answer pairs ----------------------------------------------------------

_QUESTION = re.compile(r"[ \t\u3000]*(?:[-*+][ \t]+)?(?:\*\*)?(?:问题?|Q|Question)[ \t]*\d{0,3}[ \t]*(?:\*\*)?[ \t]*[:：][ \t]*")
_ANSWER = re.compile(r"[ \t\u3000]*(?:[-*+][ \t]+)?(?:\*\*)?(?:答案?|回答|答复|A|Answer)[ \t]*\d{0,3}[ \t]*(?:\*\*)?[ \t]*[:：]",
                     re.M)


@dataclass
class _Unit:
    start: int
    end: int
    question: str = ""       # empty: not a question (a section heading or preamble)
    heading_only: bool = False


def _find_qa(text: str, lo: int, hi: int, headings: _Headings) -> list[_Unit]:
    """Tile ``[lo, hi)`` into question units and the text between them."""
    cuts: list[tuple[int, str]] = []
    lines = list(_lines(text, lo, hi))
    for idx, (s, e) in enumerate(lines):
        if headings.is_heading_line(s):
            m = _ATX.match(text, s, e)
            title = m.group(2).strip() if m else text[s:e].strip()
            cuts.append((s, title if title.endswith(("？", "?")) else ""))
            continue
        m = _QUESTION.match(text, s, e)
        if m and text[m.end():e].strip():
            # the question runs to the answer mark or the first blank line
            parts = [text[m.end():e].strip()]
            for s2, e2 in lines[idx + 1:idx + 6]:
                line = text[s2:e2]
                if not line.strip() or _ANSWER.match(line) or _QUESTION.match(line):
                    break
                parts.append(line.strip())
            cuts.append((s, " ".join(parts)))
    units: list[_Unit] = []
    bounds = [c[0] for c in cuts]
    if not bounds or bounds[0] > lo:
        bounds.insert(0, lo)
        cuts.insert(0, (lo, ""))
    bounds.append(hi)
    for (s, q), e in zip(cuts, bounds[1:]):
        if e > s:
            body = text[s:e]
            nl = text.find("\n", s, e)
            rest = "" if nl < 0 else text[nl + 1:e]
            only_heading = not q and headings.is_heading_line(s) and not rest.strip()
            units.append(_Unit(s, e, q, only_heading))
    return units


def _section_path(headings: _Headings, pos: int) -> list[str]:
    """The heading path at ``pos`` without question headings (those are units, not sections)."""
    return [p for p in headings.path_at(pos) if not p.endswith(("？", "?"))]


@register
class QAPair(Strategy):
    """One chunk per question and its answer.

    Questions: lines starting ``问：`` / ``问题：`` / ``Q:`` / ``Q：`` / ``Question:``
    (optionally numbered, bold or bulleted), and Markdown headings ending in
    ？ or ?. A unit runs from its question to the next question or the next
    heading; ``meta["question"]`` holds the question text (up to the answer
    mark ``答：`` / ``A:`` or a blank line) and ``meta["answered"]`` whether an
    answer follows. A unit longer than the cap goes to ``recursive`` with
    the question in each part's context. A heading with nothing under it
    joins the question after it; other text outside questions (an intro, a
    section preamble) goes to ``recursive``, recorded; a document without
    questions goes to ``recursive`` as a whole (``meta["no_questions"]``).
    ``meta["path"]`` is the heading path plus the question.

    >>> faq = "# 报销FAQ\\n问：发票丢了怎么办？\\n答：开具遗失证明。\\n问：多久到账？\\n答：5 个工作日。"
    >>> [(c.text, c.meta["question"]) for c in QAPair().split(faq)][1]
    ('问：多久到账？\\n答：5 个工作日。', '多久到账？')
    """

    name = "qa_pair"
    family = "container"
    summary = {"zh": "FAQ 按「问+答」成对切，一问一块；问句写入元数据",
               "en": "FAQ question + answer pairs, one per chunk, the question in meta"}
    params = {k: v for k, v in size_params(target=800).items() if k != "min"}

    def _spans(self, doc: Document, start: int, end: int) -> Iterable[Span]:
        text = doc.text
        headings = _Headings(text, start, end)
        units = _find_qa(text, start, end, headings)
        if not any(u.question for u in units):
            yield from fallback_spans(self, doc, start, end, no_questions=True,
                                      path=_section_path(headings, start))
            return
        size = _size_fn(self, text)
        carry = None   # a bare heading waiting for the question after it
        for k, u in enumerate(units):
            s = carry if carry is not None else u.start
            carry = None
            if not u.question:
                if u.heading_only and k + 1 < len(units) and units[k + 1].question:
                    carry = s
                    continue
                for a, b, m in fallback_spans(self, doc, s, u.end):
                    yield a, b, {**m, "path": _section_path(headings, _skip_space(text, a, b))}
                continue
            path = _section_path(headings, u.start) + [u.question]
            body = text[u.start:u.end]
            answered = bool(_ANSWER.search(body)) or bool("".join(body.split("\n")[1:]).strip())
            meta = {"kind": "qa", "question": u.question, "answered": answered, "path": path}
            if size(s, u.end) <= self.cap:
                yield s, u.end, meta
            else:
                yield from fallback_spans(self, doc, s, u.end, **meta, context=f"问：{u.question}")
