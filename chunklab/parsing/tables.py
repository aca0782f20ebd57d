"""Tables in text: find Markdown pipe tables and HTML ``<table>`` elements and read their rows.

:func:`find_tables` locates each table (with the caption line above it and a
note line below it), its header and its rows as document offsets;
:func:`transcribe_row` turns one row into a ``列名：值`` sentence. The ``table``
strategy and ``transcribe_tables`` (:mod:`chunklab.strategies.container`)
build chunks from these.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

from .markdown import _TAG, _Fences, _lines

__all__ = ["find_tables", "transcribe_row"]


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
    lines = [(s, e) for s, e, _ in _lines(text, lo, hi)]
    fences = _Fences()
    html = re.compile(r"<table\b", re.I)
    i = 0
    floor = lo   # captions may not reach into the previous table
    while i < len(lines):
        s, e = lines[i]
        line = text[s:e]
        if fences.code(s, line):
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
