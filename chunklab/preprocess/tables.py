"""Ruled tables in a PDF to Markdown tables, which the ``table`` strategy then chunks.

In a text layer a table is only characters at positions: read line by line
its cells run together (``一类：北京、上海、深圳、广州 500 600 700``) and the
header that gives each number its meaning is rows away. pdfplumber's table
finder rebuilds the grid from the ruling lines; :func:`find_tables` turns
each grid into one segment whose text is a Markdown pipe table (first row as
header) and records where each cell's text sits in it and on the page, so a
chunk of the table can still cite its cells' boxes. The table strategy
(``chunklab.get_strategy("table")``) recognises the result like any
Markdown table: whole, or by row groups with the header repeated in the
chunk's context.

Cell text: a line break inside a cell is dropped between two Chinese
characters and becomes a space otherwise; ``|`` is escaped as ``\\|``; an
empty or merged-away cell is ``""``.
"""
from __future__ import annotations

import re
from typing import Any, Sequence

from .model import Segment

__all__ = ["TABLE_SETTINGS", "clean_cell", "to_markdown", "find_tables"]

#: pdfplumber table-finder settings: cells come from drawn ruling lines only ("lines"), which is
#: what a ruled table gives and what never mistakes two text columns for a table.
TABLE_SETTINGS: dict[str, Any] = {"vertical_strategy": "lines", "horizontal_strategy": "lines"}

_CJK = r"\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef"
_BREAK = re.compile(rf"(?<=[{_CJK}])\s*\n\s*(?=[{_CJK}])")


def clean_cell(value: str | None) -> str:
    """One cell's text for a Markdown table.

    >>> clean_cell("M2（高级经理 /\\n总监）"), clean_cell("一类：北京、\\n上海"), clean_cell("a|b"), clean_cell(None)
    ('M2（高级经理 / 总监）', '一类：北京、上海', 'a\\\\|b', '')
    """
    if value is None:
        return ""
    text = _BREAK.sub("", value)
    text = re.sub(r"\s+", " ", text).strip()
    return text.replace("|", "\\|")


def to_markdown(rows: Sequence[Sequence[str]]) -> tuple[str, list[tuple[int, int, int, int]]]:
    """A Markdown pipe table (first row as header) and ``(row, col, start, end)`` of each cell in it.

    Short rows are padded with empty cells.

    >>> md, cells = to_markdown([["城市", "限额"], ["北京", "600"]])
    >>> print(md)
    | 城市 | 限额 |
    |---|---|
    | 北京 | 600 |
    >>> md[cells[3][2]:cells[3][3]]
    '600'
    """
    if not rows:
        raise ValueError("a table needs at least one row")
    n = max(len(r) for r in rows)
    out: list[str] = []
    pos = 0
    cells: list[tuple[int, int, int, int]] = []

    def put(s: str) -> None:
        nonlocal pos
        out.append(s)
        pos += len(s)

    for i, row in enumerate(rows):
        if i:
            put("\n")
        put("|")
        for j in range(n):
            value = row[j] if j < len(row) else ""
            put(" ")
            cells.append((i, j, pos, pos + len(value)))
            put(value)
            put(" |")
        if i == 0:
            put("\n|" + "---|" * n)
    return "".join(out), cells


def find_tables(page: Any, page_number: int, settings: dict[str, Any] | None = None) -> list[Segment]:
    """The ruled tables of a pdfplumber page as ``kind="table"`` segments (see the module docstring).

    A table whose cells are all empty is skipped.
    """
    segments = []
    for table in page.find_tables(settings or TABLE_SETTINGS):
        raw = table.extract()
        rows = [[clean_cell(c) for c in r] for r in raw]
        if not any(any(r) for r in rows):
            continue
        text, cells = to_markdown(rows)
        boxes = []
        for i, j, s, e in cells:
            try:
                box = table.rows[i].cells[j]
            except IndexError:
                box = None
            if box is not None and e > s:
                boxes.append((s, e, tuple(round(v, 2) for v in box)))
        chars = [c for c in page.chars if not c["text"].isspace()]
        x0, top, x1, bottom = table.bbox
        inside = [c["size"] for c in chars if x0 <= c["x0"] <= x1 and top <= c["top"] <= bottom]
        size = sorted(inside)[len(inside) // 2] if inside else 10.0
        segments.append(Segment(page_number, text, round(x0, 2), round(top, 2), round(x1, 2), round(bottom, 2),
                                round(size, 2), kind="table", cells=tuple(boxes)))
    return segments
