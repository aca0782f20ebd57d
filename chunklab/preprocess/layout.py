"""Reading order and running headers/footers, from segment boxes alone.

Reading order. A text layer stores where glyphs are drawn, not the order to
read them in. Reading a two-column page naively — top to bottom, left to
right across the whole page, as pdfplumber's ``extract_text`` does — takes a
line of the left column, then the line of the right column next to it, and
so on: the two columns are interleaved and most sentences are broken.
:func:`find_columns` finds the column *gutters* instead: vertical strips of
the page that (almost) no segment crosses, with enough text on both sides.
:func:`order_page` then reads column by column; a segment that crosses a
gutter (a title over both columns) closes the band above it, so a page with
a spanning title, two columns, a spanning table and two more columns reads
in the right order too.

Running headers and footers. :func:`running_lines` finds segments in the
top or bottom band of the page whose text (digits replaced by ``#``) recurs
on at least half of the pages, and page-number lines (:data:`PAGE_NUMBER_PATTERNS`)
on any page. :func:`remove_running_lines` drops them and returns a record of
what was removed and where, which the pipeline keeps in ``meta["removed"]``.
Left in place they land in the middle of any sentence that runs over a page
break, or over a column break when a header sits above the next column.

Footnotes do the same from the foot of the page: :func:`find_footnotes`
finds them (small type, a footnote mark, nothing of body size below) and
:func:`move_footnotes` takes them out of the page, for the document builder
to put after the body text.
"""
from __future__ import annotations

import math
import re
import statistics
from collections import defaultdict
from dataclasses import dataclass, replace
from typing import Any, Sequence

from .model import Page, Segment

__all__ = ["Placed", "find_columns", "order_page", "running_lines", "remove_running_lines", "is_page_number",
           "PAGE_NUMBER_PATTERNS", "ORDERS", "FOOTNOTE_MARK", "find_footnotes", "move_footnotes"]

_CID = re.compile(r"\(cid:\d+\)")

#: The reading orders :func:`order_page` knows.
ORDERS = ("naive", "columns")

#: Lines that are page numbers, whole-line matches (after stripping): 第 3 页, 第 3 页 / 共 9 页,
#: 3 / 9, - 3 -, 3, Page 3, Page 3 of 9.
PAGE_NUMBER_PATTERNS = tuple(re.compile(p, re.I) for p in (
    r"第\s*\d{1,4}\s*页(\s*[/／]\s*共\s*\d{1,4}\s*页)?",
    r"\d{1,4}\s*[/／]\s*\d{1,4}",
    r"[-–—]?\s*\d{1,4}\s*[-–—]?",
    r"page\s+\d{1,4}(\s+of\s+\d{1,4})?",
))


@dataclass(frozen=True)
class Placed:
    """A segment in reading order: its column (None: spans the columns, or naive order),
    the right edge of that column (to tell a wrapped line from a short one), and whether it
    shares a baseline with the segment before it (naive order)."""

    segment: Segment
    column: int | None
    right: float
    same_line: bool = False


# -- columns -------------------------------------------------------------------------------------

def find_columns(segments: Sequence[Segment], min_gap: float | None = None) -> list[tuple[float, float]]:
    """The columns of a page as ``(x0, x1)`` intervals, left to right (one interval: one column).

    A gutter is a vertical strip at least ``min_gap`` points wide (default:
    0.8 font sizes), inside the text area, crossed by at most 5% of the text
    segments. Each column it leaves must hold at least one segment, be at
    least 15% of the text area wide and wider than the gutters beside it, and
    look like running text (:func:`_looks_like_text`: the segment an average
    character sits in at least half the column's width, or enough long lines;
    one column may have only a few long lines when another is surely text). So the cells of a table, narrow and far apart, do not make columns,
    while the last page of a two-column text with a single line in its right
    column still has two, and so does a real page whose columns also hold many
    tiny segments (subscripts, answer labels). All gutters are tried together,
    then subsets of them (:func:`_gutter_trials`), the widest alone last.

    >>> left = [Segment(1, "甲" * 20, 60, 100 + 15 * i, 260, 110 + 15 * i, 10) for i in range(10)]
    >>> right = [Segment(1, "乙" * 20, 300, 100 + 15 * i, 500, 110 + 15 * i, 10) for i in range(10)]
    >>> find_columns(left + right)
    [(60, 260), (300, 500)]
    >>> find_columns([Segment(1, "丙" * 44, 60, 100 + 15 * i, 500, 110 + 15 * i, 10) for i in range(10)])
    [(60, 500)]
    """
    body = [s for s in segments if s.kind != "table" and s.width > 0]
    if not body:
        return [(min((s.x0 for s in segments), default=0.0), max((s.x1 for s in segments), default=0.0))]
    lo, hi = min(s.x0 for s in body), max(s.x1 for s in body)
    one = [(lo, hi)]
    if len(body) < 6:
        return one
    size = statistics.median(s.size for s in body)
    min_gap = 0.8 * size if min_gap is None else min_gap
    allowed = max(1, int(0.05 * len(body)))
    # coverage on a half-point grid: how many segments cross each x
    n = int(math.ceil((hi - lo) * 2)) + 1
    cover = [0] * (n + 1)
    for s in body:
        a, b = int((s.x0 - lo) * 2), int(math.ceil((s.x1 - lo) * 2))
        cover[a] += 1
        cover[min(b, n)] -= 1
    levels = []
    level = 0
    for i in range(n):
        level += cover[i]
        levels.append(level)
    runs: list[tuple[float, float]] = []
    for a, b in _runs([v <= allowed for v in levels]):
        # inside a sparse stretch (a gutter next to a short column), the gutter is the widest
        # part of it that the fewest segments cross
        low = min(levels[a:b])
        sub = max(_runs([v == low for v in levels[a:b]]), key=lambda r: r[1] - r[0])
        runs.append((lo + (a + sub[0]) / 2, lo + (a + sub[1]) / 2))
    gutters = [(a, b) for a, b in runs if b - a >= min_gap and a > lo and b < hi]
    if not gutters:
        return one
    for trial in _gutter_trials(gutters):
        cols = _columns_from_gutters(body, lo, hi, trial)
        if cols:
            return cols
    return one


def _gutter_trials(gutters: list[tuple[float, float]], limit: int = 6) -> list[list[tuple[float, float]]]:
    """Subsets of the candidate gutters to try, most gutters first, then the widest.

    All of them first (a clean multi-column page), the widest alone last. In between, the subsets
    that leave some out: on a real page a narrow strip of margin text (a binding line, line
    numbers) or a gap between answer options can look like a gutter and must not veto the real one.
    Only the ``limit`` widest candidates are combined (at most 2**6 trials).
    """
    from itertools import combinations

    widest = sorted(gutters, key=lambda g: g[1] - g[0], reverse=True)[:limit]
    trials: list[list[tuple[float, float]]] = [list(gutters)]
    for r in range(len(widest), 0, -1):
        subsets = [sorted(c) for c in combinations(widest, r)]
        subsets.sort(key=lambda c: -sum(b - a for a, b in c))
        trials.extend(c for c in subsets if c != trials[0])
    return trials


def _runs(flags: list[bool]) -> list[tuple[int, int]]:
    """Maximal ``[start, end)`` index ranges where ``flags`` is true."""
    out, start = [], None
    for i, f in enumerate(flags):
        if f and start is None:
            start = i
        elif not f and start is not None:
            out.append((start, i))
            start = None
    if start is not None:
        out.append((start, len(flags)))
    return out


def _columns_from_gutters(body, lo, hi, gutters):
    edges = [lo] + [x for g in gutters for x in g] + [hi]
    bounds = [(edges[i], edges[i + 1]) for i in range(0, len(edges), 2)]
    cols = []
    sure: list[bool] = []
    for k, (a, b) in enumerate(bounds):
        # a segment belongs to the column it starts in (its end may hang into the gutter)
        nxt = bounds[k + 1][0] if k + 1 < len(bounds) else math.inf
        inside = [s for s in body if a - 1 <= s.x0 < nxt - 1 and s.x1 <= nxt]
        if not inside:
            return None
        kind = _looks_like_text(inside, b - a)
        if not kind or b - a < 0.15 * (hi - lo):
            return None
        sure.append(kind == 2)
        cols.append((min(s.x0 for s in inside), max(s.x1 for s in inside)))
    if not any(sure):
        return None
    for g, (a, b) in zip(gutters, cols):
        if g[1] - g[0] > b - a:
            return None
    for g, (a, b) in zip(gutters, cols[1:]):
        if g[1] - g[0] > b - a:
            return None
    return cols


def _text_width(segs: Sequence[Segment]) -> float:
    """The width of the segment an average *character* sits in (the character-weighted median).

    Running text puts most characters in lines nearly as wide as the column, even when a column
    also holds many tiny segments (subscripts, answer labels, marks); table cells put them in
    narrow pieces. Weighting by characters keeps the first a column and the second not.
    """
    weighted = sorted((s.width, max(len(_CID.sub("#", s.text).strip()), 1)) for s in segs)
    half = sum(n for _, n in weighted) / 2
    seen = 0
    for width, n in weighted:
        seen += n
        if seen >= half:
            return width
    return weighted[-1][0]


def _looks_like_text(segs: Sequence[Segment], width: float) -> int:
    """How much a column's segments look like running text rather than table cells: 2, 1 or 0.

    2 (surely text): the segment an average character sits in (:func:`_text_width`) is at
    least half ``width`` wide, or at least a quarter of the column's visual lines are *long*
    (their segments together reach over 0.6 ``width`` and hold 15 characters or more), which
    keeps a real column whose lines are cut into many pieces (answer options spread over the
    line, formulas with sub- and superscripts, stacked fractions) a column. 1 (text, if its
    neighbours are): at least one long line, as in the short last column of a page. 0:
    neither. A glyph without a Unicode mapping, which pdfminer writes as ``(cid:N)``, counts
    as one character.
    """
    if _text_width(segs) >= 0.5 * width:
        return 2
    lines = _lines(list(segs))
    long = 0
    for line in lines:
        extent = max(g.x1 for g in line) - min(g.x0 for g in line)
        chars = sum(len(_CID.sub("#", g.text).replace(" ", "")) for g in line)
        long += extent >= 0.6 * width and chars >= 15
    if lines and long >= 0.25 * len(lines):
        return 2
    return 1 if long else 0


def _column_of(seg: Segment, cols: list[tuple[float, float]], tol: float) -> int | None:
    """The column a segment starts in, or None when it reaches into the next column (it spans).

    Only the start decides, and the end may pass the column's right edge as long as it stays
    out of the next column: punctuation hanging into the gutter (a Chinese line-breaking rule)
    does not make a line span the page.
    """
    k = None
    for i, (a, _) in enumerate(cols):
        if seg.x0 >= a - tol:
            k = i
    if k is None:
        return None
    if k + 1 < len(cols) and seg.x1 > cols[k + 1][0] + tol:
        return None
    return k


def _lines(segs: list[Segment]) -> list[list[Segment]]:
    """Segments grouped into visual lines (tops within a third of the font size), top to bottom."""
    out: list[list[Segment]] = []
    for s in sorted(segs, key=lambda s: (s.top, s.x0)):
        if out and abs(s.top - out[-1][0].top) <= max(s.size, out[-1][0].size) / 3:
            out[-1].append(s)
        else:
            out.append([s])
    for line in out:
        line.sort(key=lambda s: s.x0)
    return out


def order_page(page: Page, mode: str = "columns") -> tuple[list[Placed], list[tuple[float, float]]]:
    """The page's segments in reading order, and the columns used.

    ``"naive"``: visual lines top to bottom, segments of a line left to right
    (what a plain text extractor does). ``"columns"``: :func:`find_columns`,
    then band by band (bands separated by segments that cross a gutter),
    column by column, top to bottom inside a column. With one column both
    orders agree.
    """
    if mode not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}, got {mode!r}")
    segs = list(page.segments)
    if not segs:
        return [], []
    right = max(s.x1 for s in segs)
    if mode == "naive":
        placed = []
        for line in _lines(segs):
            placed += [Placed(s, None, right, same_line=k > 0) for k, s in enumerate(line)]
        return placed, [(min(s.x0 for s in segs), right)]
    cols = find_columns(segs)
    if len(cols) == 1:
        placed = []
        for line in _lines(segs):
            placed += [Placed(s, 0, right, same_line=k > 0) for k, s in enumerate(line)]
        return placed, cols
    tol = 0.5 * statistics.median(s.size for s in segs)
    where = {id(s): _column_of(s, cols, tol) for s in segs}
    col_right = {k: max((s.x1 for s in segs if where[id(s)] == k), default=b) for k, (a, b) in enumerate(cols)}
    placed: list[Placed] = []
    band: dict[int, list[Segment]] = defaultdict(list)

    def flush() -> None:
        for k in sorted(band):
            for line in _lines(band[k]):
                placed.extend(Placed(s, k, col_right[k], same_line=i > 0) for i, s in enumerate(line))
        band.clear()

    for s in sorted(segs, key=lambda s: (s.top, s.x0)):
        k = where[id(s)]
        if k is None:
            flush()
            placed.append(Placed(s, None, right))
        else:
            band[k].append(s)
    flush()
    return placed, cols


# -- running headers and footers -----------------------------------------------------------------

def _key(text: str) -> str:
    return re.sub(r"\d+", "#", re.sub(r"\s+", "", text))


def is_page_number(text: str) -> bool:
    """True for a line that is only a page number (:data:`PAGE_NUMBER_PATTERNS`).

    >>> is_page_number("第 3 页 / 共 9 页"), is_page_number("- 12 -"), is_page_number("第三章")
    (True, True, False)
    """
    t = text.strip()
    return any(p.fullmatch(t) for p in PAGE_NUMBER_PATTERNS)


def running_lines(pages: Sequence[Page], band: float = 0.08, min_share: float = 0.5) -> list[dict[str, Any]]:
    """Segments that are running headers, footers or page numbers, with where they were.

    Candidates lie in the top ``band`` (bottom edge above ``band`` x page
    height) or the bottom ``band`` of a page. A candidate is *running* when its
    text, with whitespace removed and digits replaced by ``#``, occurs in the
    same band on at least ``max(2, min_share x pages with text)`` pages; it is
    a *page number* when it matches :data:`PAGE_NUMBER_PATTERNS` (one page is
    enough). Returns ``{"page", "text", "bbox", "where", "reason"}`` dicts.
    """
    live = [p for p in pages if p.segments and not p.skipped]
    need = max(2, math.ceil(min_share * len(live)))
    cands: list[tuple[Page, Segment, str]] = []
    for p in live:
        for s in p.segments:
            if s.kind == "table":
                continue
            if s.bottom <= band * p.height:
                cands.append((p, s, "header"))
            elif s.top >= (1 - band) * p.height:
                cands.append((p, s, "footer"))
    seen: dict[tuple[str, str], set[int]] = defaultdict(set)
    for p, s, where in cands:
        seen[(where, _key(s.text))].add(p.number)
    found = []
    for p, s, where in cands:
        n = len(seen[(where, _key(s.text))])
        if n >= need:
            reason = f"running {where}: on {n} of {len(live)} pages"
        elif is_page_number(s.text):
            reason = "page number"
        else:
            continue
        found.append({"page": p.number, "text": s.text, "bbox": list(s.bbox), "where": where, "reason": reason})
    return found


def remove_running_lines(pages: Sequence[Page], band: float = 0.08,
                         min_share: float = 0.5) -> tuple[list[Page], list[dict[str, Any]]]:
    """Copies of ``pages`` without the segments :func:`running_lines` finds, and the removal record.

    A page left with no segment is marked skipped (``"only running headers/footers"``).
    """
    removed = running_lines(pages, band, min_share)
    drop = {(r["page"], tuple(r["bbox"]), r["text"]) for r in removed}
    out = []
    for p in pages:
        keep = [s for s in p.segments if (p.number, s.bbox, s.text) not in drop]
        q = replace(p, segments=keep)
        if p.segments and not keep and not p.skipped:
            q.skipped = "only running headers/footers"
        out.append(q)
    return out, removed


# -- footnotes ----------------------------------------------------------------------------------------

#: How a footnote starts: a number, a sign (* † ‡ §), a circled number, superscript digits, or 注1：.
FOOTNOTE_MARK = re.compile(r"^\s*(\d{1,2}(?!\d)|[*†‡§¶]|[\u2460-\u2473]|[\u00b9\u00b2\u00b3\u2070-\u2079]+|注\s*\d*\s*[:：])")


def _body_size(pages: Sequence[Page]) -> float:
    """The font size most characters of ``pages`` are set in."""
    sizes: dict[float, int] = defaultdict(int)
    for page in pages:
        for s in page.segments:
            if s.kind == "text":
                sizes[round(s.size * 2) / 2] += len(s.text)
    return max(sizes, key=sizes.get) if sizes else 0.0


def find_footnotes(page: Page, zone: float = 0.6, ratio: float = 0.88, body: float | None = None) -> list[Segment]:
    """The footnote segments at the foot of ``page`` (run after running footers are removed).

    A footnote block starts with a segment below ``zone`` x page height, set in a font at most
    ``ratio`` times the body size (``body``; default: the size most characters of the page are
    set in — :func:`move_footnotes` passes the whole document's), that begins with a footnote
    mark (:data:`FOOTNOTE_MARK`) and has no body-size text below it; the block is that segment
    and every small segment below it.
    """
    body = body or _body_size([page])
    if not body:
        return []
    small = [s for s in page.segments if s.kind == "text" and s.size <= ratio * body and s.top >= zone * page.height]
    big = [s for s in page.segments if s.size > ratio * body]
    for s in sorted(small, key=lambda s: s.top):
        if FOOTNOTE_MARK.match(s.text) and not any(b.top > s.top for b in big):
            return [t for t in small if t.top >= s.top - 0.1]
    return []


def move_footnotes(pages: Sequence[Page]) -> tuple[list[Page], list[Segment]]:
    """Copies of ``pages`` without their footnotes (:func:`find_footnotes`), and the footnotes.

    Left where they are, footnotes land in the text between the last line of a page and the
    first line of the next, i.e. in the middle of any sentence that runs over the page break.
    :func:`~chunklab.preprocess.pdf.build_document` puts the returned segments after the body,
    each in its own paragraph, with their page and box.
    """
    out, notes = [], []
    body = _body_size(pages)
    for p in pages:
        found = find_footnotes(p, body=body) if p.segments and not p.skipped else []
        if found:
            ids = {id(s) for s in found}
            p = replace(p, segments=[s for s in p.segments if id(s) not in ids])
            notes.extend(found)
        out.append(p)
    return out, notes
