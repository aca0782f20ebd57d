"""Spans that must stay whole inside one chunk (formulas), and the repair that keeps them whole.

A formula cut in two is worse than a sentence cut in two: ``5 × 181 ÷ 365 +``
in one chunk and ``10 × 184 ÷ 365 ≈ 7.52 天`` in the next answers nothing, and
a LaTeX block split between ``\\begin{aligned}`` and ``\\end{aligned}`` does not
even parse. :func:`find_formulas` finds the spans: LaTeX display and inline
math (``$$…$$``, ``\\[…\\]``, ``\\begin{equation}…\\end{equation}`` and the
other display environments, ``$…$``, ``\\(…\\)``) and plain-text arithmetic
(numbers, with an optional unit, joined by operators: an equation, or at
least two operators). :func:`keep_whole` then moves every chunk boundary that falls
strictly inside such a span to the span's start, after any strategy: the
chunks still tile the same text, offsets stay exact, and a chunk may grow
past its size limit by at most one formula.
"""
from __future__ import annotations

import re
from typing import Iterable, Sequence

from ..core import Chunk, Document

__all__ = ["find_formulas", "keep_whole", "cuts_inside", "FORMULA_PATTERNS"]

_NUM = r"\d+(?:[.,]\d+)*%?"
_UNIT = r"(?:\s*(?:元/晚|元/天|元|天|晚|小时|分钟|个|次|%))?"
_OP = r"\s*[×÷+\-−=≈*/]\s*"
#: Named patterns, tried in this order; a span found by an earlier pattern is not searched again.
FORMULA_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("latex_env", re.compile(r"\\begin\{(equation|align|gather|multline|eqnarray|aligned|cases)\*?\}.*?"
                             r"\\end\{\1\*?\}", re.S)),
    ("latex_display", re.compile(r"\$\$.+?\$\$|\\\[.+?\\\]", re.S)),
    ("latex_inline", re.compile(r"(?<![\\$])\$(?!\$)[^$\n]+?(?<!\\)\$|\\\(.+?\\\)")),
    ("arithmetic", re.compile(rf"\(?{_NUM}{_UNIT}\)?(?:{_OP}\(?{_NUM}{_UNIT}\)?)+")),
)


def find_formulas(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, kind)`` of every formula in ``text``, in order, not overlapping.

    Arithmetic needs ``=`` or ``≈``, or at least two operators not all ``-`` or ``/``: ``5 × 4 = 20``
    and ``399×12×3`` are formulas, ``7×24 小时`` (a notation), ``3/4`` and ``2025-03-01`` are not.

    >>> t = "折算为 5 × 181 ÷ 365 + 10 × 184 ÷ 365 ≈ 7.52 天。见 $$a^2 + b^2 = c^2$$ 与 $x_1$。"
    >>> [(t[a:b], k) for a, b, k in find_formulas(t)]
    [('5 × 181 ÷ 365 + 10 × 184 ÷ 365 ≈ 7.52 天', 'arithmetic'), ('$$a^2 + b^2 = c^2$$', 'latex_display'), ('$x_1$', 'latex_inline')]
    """
    taken: list[tuple[int, int, str]] = []
    for kind, pattern in FORMULA_PATTERNS:
        for m in pattern.finditer(text):
            a, b = m.span()
            ops = re.findall(r"[×÷+\-−*/]", m.group()) if kind == "arithmetic" else []
            if kind == "arithmetic" and not (re.search(r"[=≈]", m.group())
                                             or (len(ops) >= 2 and set(ops) - set("-−/"))):
                continue   # a date (2025-03-01) or a ratio is not a formula
            if any(a < e and s < b for s, e, _ in taken):
                continue
            taken.append((a, b, kind))
    return sorted(taken)


def cuts_inside(chunks: Iterable[Chunk], spans: Sequence[tuple[int, int, str]] | Sequence[tuple[int, int]]) -> list[tuple[int, int, int]]:
    """``(position, span start, span end)`` for every chunk start or end strictly inside a span.

    >>> cuts_inside([Chunk("d", 0, 0, 3, "1×2"), Chunk("d", 1, 3, 5, "=2")], [(0, 5)])
    [(3, 0, 5)]
    """
    out = set()
    spans = sorted((s[0], s[1]) for s in spans)
    for c in chunks:
        for p in (c.start, c.end):
            for a, b in spans:
                if a < p < b:
                    out.add((p, a, b))
    return sorted(out)


def keep_whole(document: Document, chunks: Sequence[Chunk],
               spans: Sequence[tuple[int, int, str]] | Sequence[tuple[int, int]] | None = None) -> list[Chunk]:
    """``chunks`` with every boundary that falls strictly inside a span moved to the span's start.

    ``spans`` default to :func:`find_formulas` of the document. Each chunk's start and end go
    through the same monotone map (a position inside a span becomes the span's start), so chunks
    that tiled the text still tile it, overlaps stay overlaps, and no boundary is left inside a
    span; a chunk that lay wholly inside one span becomes empty and is dropped. Repaired chunks
    get ``meta["kept_whole"]`` (the number of their boundaries that moved); indexes are renumbered.

    >>> doc = Document("d", "前文 5 × 4 = 20 元。后文")
    >>> fixed = [Chunk("d", 0, 0, 8, doc.text[:8]), Chunk("d", 1, 8, len(doc.text), doc.text[8:])]
    >>> [c.text for c in keep_whole(doc, fixed)]
    ['前文 ', '5 × 4 = 20 元。后文']
    """
    if spans is None:
        spans = find_formulas(document.text)
    inside = sorted((s[0], s[1]) for s in spans if s[1] - s[0] > 1)

    def snap(p: int) -> int:
        for a, b in inside:
            if a < p < b:
                return a
            if a >= p:
                break
        return p

    out: list[Chunk] = []
    for c in chunks:
        s, e = snap(c.start), snap(c.end)
        if e <= s:
            continue
        moved = (s != c.start) + (e != c.end)
        meta = {**c.meta, "kept_whole": moved} if moved else dict(c.meta)
        out.append(Chunk(c.doc_id, len(out), s, e, document.text[s:e], meta=meta, context=c.context))
    return out
