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

Cell text is rebuilt from the cell's characters the way body text is
(:func:`chunklab.preprocess.chars.segments_from_chars`), so a word space that is
only a gap between glyphs (TeX sets no space characters) stays a space; a line
break inside a cell is dropped between two Chinese characters and becomes a
space otherwise; ``|`` is escaped as ``\\|``.

The hard cases of real documents:

* **Merged cells.** A cell spanning several grid columns or rows leaves the
  positions it covers empty in pdfplumber's grid. :func:`grid_spans` finds the
  spans from the cell boxes; with ``merged="fill"`` (the default) every covered
  position repeats the spanning cell's text, so a row chunk of ``| Inet-2.1 |
  6000 | ... |`` still carries the ``2%`` that a merged cell above it shares;
  ``merged="empty"`` leaves them empty. The spans are kept in the segment
  (``Segment.spans``) and then in ``meta["tables"]``.
* **Rule-only tables** (three-line tables, 三线表, LaTeX ``booktabs``): only
  horizontal rules, no grid. pdfplumber's line finder needs both directions, so
  :func:`find_rule_tables` finds them from groups of horizontal rules of equal
  length and the text between them: columns are the x ranges text occupies,
  rows the text lines (a line whose first column is empty continues the row
  above), the rows above the second rule are the header.
* **Tables across pages** are joined later, once running headers are gone
  (:func:`join_continued_tables`).
"""
from __future__ import annotations

import re
from typing import Any, Sequence

from .chars import _inside, segments_from_chars
from .model import Segment

__all__ = ["TABLE_SETTINGS", "MERGED", "clean_cell", "to_markdown", "grid_spans", "fill_merged", "find_tables",
           "find_rule_tables", "join_continued_tables", "table_rows"]

#: What :func:`find_tables` puts in the positions a merged cell covers.
MERGED = ("fill", "empty")

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


def grid_spans(cells: Sequence[Sequence[Any]], xs: Sequence[float], ys: Sequence[float],
               tol: float = 1.0) -> list[tuple[int, int, int, int]]:
    """``(row, col, rowspan, colspan)`` of every cell that covers more than one grid position.

    ``cells[i][j]`` is the box ``(x0, top, x1, bottom)`` of the cell that starts at row ``i``,
    column ``j``, or None where a merged cell covers the position; ``xs`` and ``ys`` are the grid's
    column and row edges.

    >>> grid_spans([[(0, 0, 20, 10), None], [(0, 10, 10, 20), (10, 10, 20, 20)]], [0, 10, 20], [0, 10, 20])
    [(0, 0, 1, 2)]
    """
    out = []
    for i, row in enumerate(cells):
        for j, box in enumerate(row):
            if box is None:
                continue
            x0, top, x1, bottom = box
            colspan = sum(1 for k in range(len(xs) - 1) if xs[k] >= x0 - tol and xs[k + 1] <= x1 + tol)
            rowspan = sum(1 for k in range(len(ys) - 1) if ys[k] >= top - tol and ys[k + 1] <= bottom + tol)
            if colspan > 1 or rowspan > 1:
                out.append((i, j, max(rowspan, 1), max(colspan, 1)))
    return out


def fill_merged(rows: list[list[str]], spans: Sequence[tuple[int, int, int, int]]) -> list[list[str]]:
    """``rows`` with every position a merged cell covers holding that cell's text.

    >>> fill_merged([["网络", ""], ["2%", "10%"]], [(0, 0, 1, 2)])
    [['网络', '网络'], ['2%', '10%']]
    """
    out = [list(r) for r in rows]
    for i, j, rs, cs in spans:
        for a in range(i, min(i + rs, len(out))):
            for b in range(j, min(j + cs, len(out[a]))):
                if (a, b) != (i, j) and not out[a][b]:
                    out[a][b] = out[i][j]
    return out


def _text_lines(segs: Sequence[Any]) -> list[list[Any]]:
    """``segs`` grouped into text lines, taken in ``(top, x0)`` order: a segment joins the current
    line when its top is within a third of its font size of the top of the line's first segment."""
    lines: list[list[Any]] = []
    for g in sorted(segs, key=lambda g: (g.top, g.x0)):
        if lines and abs(g.top - lines[-1][0].top) <= g.size / 3:
            lines[-1].append(g)
        else:
            lines.append([g])
    return lines


def _cell_text(chars: Sequence[dict], box: tuple[float, float, float, float]) -> str:
    """The text of the characters inside ``box``, lines joined as in :func:`clean_cell`."""
    inside = [c for c in chars if _inside(c, box)]
    lines = _text_lines(segments_from_chars(inside, 0))
    return clean_cell("\n".join(" ".join(g.text for g in ln) for ln in lines))


def _edges(values: Sequence[float], tol: float = 1.0) -> list[float]:
    out: list[float] = []
    for v in sorted(values):
        if not out or v - out[-1] > tol:
            out.append(v)
    return out


def _table_segment(page_number: int, rows: list[list[str]], boxes: list[list[tuple | None]], bbox, size: float,
                   spans: Sequence[tuple[int, int, int, int]] = (), kind: str = "ruled") -> Segment:
    text, cells = to_markdown(rows)
    located = []
    for i, j, s, e in cells:
        box = boxes[i][j] if i < len(boxes) and j < len(boxes[i]) else None
        if box is None:   # a position a merged cell covers: cite the merged cell's box
            box = next((boxes[a][b] for a, b, rs, cs in spans if a <= i < a + rs and b <= j < b + cs), None)
        if box is not None and e > s:
            located.append((s, e, tuple(round(v, 2) for v in box)))
    return Segment(page_number, text, *(round(v, 2) for v in bbox), round(size, 2), kind="table",
                   cells=tuple(located), spans=tuple(spans), table_kind=kind, pages=(page_number,))


def find_tables(page: Any, page_number: int, settings: dict[str, Any] | None = None,
                merged: str = "fill") -> list[Segment]:
    """The ruled tables of a pdfplumber page as ``kind="table"`` segments (see the module docstring).

    ``merged``: ``"fill"`` or ``"empty"`` (:data:`MERGED`). A table whose cells are all empty is skipped.
    """
    if merged not in MERGED:
        raise ValueError(f"merged must be one of {MERGED}, got {merged!r}")
    every = list(page.chars)
    chars = [c for c in every if not c["text"].isspace()]
    segments = []
    for table in page.find_tables(settings or TABLE_SETTINGS):
        boxes = [list(r.cells) for r in table.rows]
        n = max((len(r) for r in boxes), default=0)
        boxes = [r + [None] * (n - len(r)) for r in boxes]
        rows = [[_cell_text(every, b) if b is not None else "" for b in r] for r in boxes]
        if not any(any(r) for r in rows):
            continue
        xs = _edges([v for b in table.cells for v in (b[0], b[2])])
        ys = _edges([v for b in table.cells for v in (b[1], b[3])])
        spans = grid_spans(boxes, xs, ys) if len(xs) == n + 1 and len(ys) == len(boxes) + 1 else []
        if merged == "fill":
            rows = fill_merged(rows, spans)
        x0, top, x1, bottom = table.bbox
        inside = [c["size"] for c in chars if x0 <= c["x0"] <= x1 and top <= c["top"] <= bottom]
        size = sorted(inside)[len(inside) // 2] if inside else 10.0
        segments.append(_table_segment(page_number, rows, boxes, table.bbox, size, spans))
    return segments


# -- rule-only (three-line) tables ------------------------------------------------------------------

def _hrules(page: Any, min_width: float = 30.0) -> list[tuple[float, float, float]]:
    """Horizontal rules ``(y, x0, x1)``: drawn lines, and rectangles at most 2 points high."""
    out = []
    for ln in page.lines:
        if abs(ln["top"] - ln["bottom"]) < 1.0 and ln["x1"] - ln["x0"] >= min_width:
            out.append(((ln["top"] + ln["bottom"]) / 2, ln["x0"], ln["x1"]))
    for r in page.rects:
        if r["bottom"] - r["top"] <= 2.0 and r["x1"] - r["x0"] >= min_width:
            out.append(((r["top"] + r["bottom"]) / 2, r["x0"], r["x1"]))
    return sorted(out)


def _vertical_near(page: Any, x0: float, x1: float, top: float, bottom: float) -> bool:
    for ln in page.lines:
        if abs(ln["x0"] - ln["x1"]) < 1.0 and top - 1 <= ln["top"] and ln["bottom"] <= bottom + 1 and x0 - 1 <= ln["x0"] <= x1 + 1:
            return True
    return False


def table_rows(segs: Sequence[Any], rules: Sequence[float]) -> tuple[list[list[str]], list[list[tuple]], int] | None:
    """Rows of cells from the text segments between a rule-only table's rules.

    Returns ``(rows, boxes, header_rows)`` or None when the text does not form at least two columns.
    Columns are the x ranges the segments occupy (a gap no segment crosses separates two
    columns); each text line is a row, except that a line whose first column is empty continues
    the row above; the lines above the second rule make one header row.
    """
    if not segs:
        return None
    spans = sorted((g.x0, g.x1) for g in segs)
    cols: list[list[float]] = []
    for a, b in spans:
        if cols and a <= cols[-1][1] + 1.0:
            cols[-1][1] = max(cols[-1][1], b)
        else:
            cols.append([a, b])
    if len(cols) < 2:
        return None
    lines = _text_lines(segs)
    head_end = rules[1] if len(rules) >= 3 else None

    def col_of(g) -> int:
        return next(k for k, (a, b) in enumerate(cols) if a - 1.0 <= g.x0 <= b + 1.0)

    rows: list[list[list[str]]] = []
    boxes: list[list[tuple | None]] = []
    in_header: list[bool] = []
    for line in lines:
        header = head_end is not None and line[0].bottom <= head_end
        cells: list[list[str]] = [[] for _ in cols]
        for g in line:
            cells[col_of(g)].append(g.text)
        top = min(g.top for g in line)
        bottom = max(g.bottom for g in line)
        cont = rows and not cells[0] and in_header[-1] == header
        if cont or (header and rows and in_header[-1]):
            for k, c in enumerate(cells):
                rows[-1][k].extend(c)
                if c:
                    a, t0, b, b0 = boxes[-1][k] or (cols[k][0], top, cols[k][1], bottom)
                    boxes[-1][k] = (a, min(t0, top), b, max(b0, bottom))
            continue
        rows.append(cells)
        boxes.append([(cols[k][0], top, cols[k][1], bottom) if c else None for k, c in enumerate(cells)])
        in_header.append(header)
    header_rows = sum(in_header)
    text_rows = [[clean_cell("\n".join(c)) for c in r] for r in rows]
    if len(text_rows) < 2:
        return None
    return text_rows, boxes, header_rows


def find_rule_tables(page: Any, page_number: int, exclude: Sequence[tuple[float, float, float, float]] = (),
                     tol: float = 2.0) -> list[Segment]:
    """Tables drawn with horizontal rules only (three-line tables), as ``kind="table"`` segments.

    A candidate is a run of at least two horizontal rules of the same extent (within ``tol``
    points), with no vertical rule at their ends, not inside ``exclude`` (the ruled tables
    already found). The run is cut where the text between two rules holds a line as wide as
    the rules in one piece (a paragraph, not cells). The text between the first and the last
    rule must form at least two columns and two rows (:func:`table_rows`).
    """
    rules = [r for r in _hrules(page)
             if not any(b[0] - 1 <= r[1] and r[2] <= b[2] + 1 and b[1] - 1 <= r[0] <= b[3] + 1 for b in exclude)]
    groups: dict[tuple[int, int], list[tuple[float, float, float]]] = {}
    for r in rules:
        key = next((k for k in groups if abs(k[0] - r[1]) <= tol and abs(k[1] - r[2]) <= tol), None)
        groups.setdefault(key or (r[1], r[2]), []).append(r)
    chars = [c for c in page.chars if c.get("text")]
    out = []
    for (x0, x1), rs in groups.items():
        ys = _edges([r[0] for r in rs], tol=1.0)
        if len(ys) < 2:
            continue
        runs: list[list[float]] = [[ys[0]]]
        for y in ys[1:]:
            between = [c for c in chars if runs[-1][-1] < (c["top"] + c["bottom"]) / 2 < y
                       and x0 - tol <= c["x0"] and c["x1"] <= x1 + tol]
            segs = segments_from_chars(between, page_number)
            if any(g.width >= 0.9 * (x1 - x0) for g in segs) or not segs:
                runs.append([y])
            else:
                runs[-1].append(y)
        for run in runs:
            if len(run) < 2 or _vertical_near(page, x0, x1, run[0], run[-1]):
                continue
            inside = [c for c in chars if run[0] < (c["top"] + c["bottom"]) / 2 < run[-1]
                      and x0 - tol <= c["x0"] and c["x1"] <= x1 + tol]
            segs = segments_from_chars(inside, page_number)
            found = table_rows(segs, run)
            if found is None:
                continue
            rows, boxes, _ = found
            size = sorted(g.size for g in segs)[len(segs) // 2]
            out.append(_table_segment(page_number, rows, boxes, (x0, run[0], x1, run[-1]), size, kind="rules"))
    return sorted(out, key=lambda g: (g.top, g.x0))


# -- tables across pages ----------------------------------------------------------------------------

def join_continued_tables(pages: Sequence[Any], tol: float = 3.0) -> list[dict[str, Any]]:
    """Join a table that ends one page with the table that starts the next, in place.

    Two tables are one when the first is the lowest segment of its page, the second the highest
    of the next page (run after running headers and footers are removed), and both have the
    same number of columns and the same left and right edges (within ``tol`` points). The
    second's first row is dropped when it repeats the first's header. The joined table keeps
    each cell's own page (``Segment.cells`` entries get a fourth item, the page) and lists its
    pages in ``Segment.pages``. Returns one record per join:
    ``{"pages": [p, q], "rows_added": n, "header_repeated": bool}``.
    """
    joins: list[dict[str, Any]] = []
    for p, q in zip(pages, pages[1:]):
        if not p.segments or not q.segments or q.number != p.number + 1:
            continue
        last = max(p.segments, key=lambda g: g.bottom)
        first = min(q.segments, key=lambda g: g.top)
        if last.kind != "table" or first.kind != "table":
            continue
        a_lines, b_lines = last.text.split("\n"), first.text.split("\n")
        if a_lines[0].count(" | ") != b_lines[0].count(" | "):
            continue
        if abs(last.x0 - first.x0) > tol or abs(last.x1 - first.x1) > tol:
            continue
        repeated = b_lines[0] == a_lines[0]
        keep = [k for k in range(len(b_lines)) if k != 1 and not (repeated and k == 0)]
        if not keep:
            continue
        starts = [0]
        for ln in b_lines:
            starts.append(starts[-1] + len(ln) + 1)
        new_start = {}
        pos = len(last.text) + 1
        for k in keep:
            new_start[k] = pos
            pos += len(b_lines[k]) + 1
        cells = [c if len(c) > 3 else (*c, last.page) for c in last.cells]
        for c in first.cells:
            k = max(i for i in range(len(b_lines)) if starts[i] <= c[0])
            if k in new_start:
                shift = new_start[k] - starts[k]
                cells.append((c[0] + shift, c[1] + shift, c[2], c[3] if len(c) > 3 else first.page))
        text = last.text + "\n" + "\n".join(b_lines[k] for k in keep)
        merged = Segment(last.page, text, last.x0, last.top, last.x1, last.bottom, last.size, kind="table",
                         cells=tuple(cells), spans=last.spans, table_kind=last.table_kind,
                         pages=tuple(last.pages or (last.page,)) + (first.page,))
        p.segments[p.segments.index(last)] = merged
        q.segments.remove(first)
        joins.append({"pages": [p.number, q.number], "rows_added": len(keep), "header_repeated": repeated})
    return joins
