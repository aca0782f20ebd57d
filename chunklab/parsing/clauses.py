"""Numbered clauses of laws, contracts and policies: classify one line as a heading, a clause or neither.

:func:`classify_clause_line` recognises 第X编 / 分编 / 章 / 节 headings, 附则,
and clause marks (第X条, 一、, （一）, 1., 1.1, 1.1.1 ...; :data:`CLAUSE_KINDS`).
The ``clause`` strategy (:mod:`chunklab.strategies.structure`) decides per
document which of these kinds is "the clause" and builds chunks from them.
"""
from __future__ import annotations

import re

__all__ = ["CLAUSE_KINDS", "classify_clause_line"]


_CN_DIGITS = "零〇一二三四五六七八九十百千万两"
_NUM = rf"(?:[{_CN_DIGITS}]+|[0-9０-９]+)"
_SP = "[ \t\u3000]"
_MD = r"(?:#{1,6}[ \t]+)?"  # a Markdown heading marker may precede a heading or an article mark
_HEADING_MARK = re.compile(rf"{_SP}*{_MD}第{_NUM}(分编|编|章|节)")
_APPENDIX = re.compile(rf"{_SP}*{_MD}附{_SP}*则{_SP}*")
_ARTICLE = re.compile(rf"{_SP}*{_MD}(第{_NUM}条(?:之{_NUM})?)(?=[ \t\u3000:：.．、]|$)")
_CN_ITEM = re.compile(rf"{_SP}*([{_CN_DIGITS}]+)、")
_PAREN_ITEM = re.compile(rf"{_SP}*[（(]([{_CN_DIGITS}]+)[)）]")
_DIGIT_ITEM = re.compile(rf"{_SP}*([0-9０-９]{{1,3}}(?:[.．][0-9０-９]{{1,3}})*)([.．、]?)")
_SENTENCE_PUNCT = re.compile(r"[。；;！？!?，,]")
_HEADING_RANKS = {"编": 0, "分编": 1, "章": 2, "节": 3}
_FULLWIDTH = str.maketrans("０１２３４５６７８９．", "0123456789.")

#: Clause kinds, coarsest first: 0 第X条, 1 一、, 2 （一）, 3 1., 4 1.1, 5 1.1.1 (and deeper).
CLAUSE_KINDS = ("第X条", "一、", "（一）", "1.", "1.1", "1.1.1")


def classify_clause_line(line: str) -> tuple[str, int, str] | None:
    """Classify one line: ``("heading", rank, title)``, ``("clause", kind, number)`` or ``None``.

    Headings are 第X编 (rank 0), 第X分编 (1), 第X章 (2), 第X节 (3) followed by a
    space, a colon or the end of the line (or by a short title with no
    punctuation, ``第一章总则``), and 附则 alone on its line (rank -1: it takes
    the rank of the coarsest heading kind of the document). Clauses are marked
    at the start of the line; ``kind`` indexes :data:`CLAUSE_KINDS`. Numbers
    may be Chinese numerals (零〇百千 included) or Arabic digits, with 之一
    suffixes for articles.

    >>> classify_clause_line("第一百零二条之一　违反本法……")
    ('clause', 0, '第一百零二条之一')
    >>> classify_clause_line("第三章　考勤与休假")
    ('heading', 2, '第三章　考勤与休假')
    >>> classify_clause_line("3.2 病假"), classify_clause_line("3.5倍工资")
    (('clause', 4, '3.2'), None)
    """
    m = _HEADING_MARK.match(line)
    if m:
        rest = line[m.end():]
        if not rest.strip() or rest[0] in " \t\u3000:：" or (
                len(rest) <= 30 and not _SENTENCE_PUNCT.search(rest)):
            return "heading", _HEADING_RANKS[m.group(1)], line.strip().lstrip("#").strip()
    if _APPENDIX.fullmatch(line):
        return "heading", -1, line.strip().lstrip("#").strip()
    m = _ARTICLE.match(line)
    if m:
        return "clause", 0, m.group(1)
    m = _CN_ITEM.match(line)
    if m:
        return "clause", 1, m.group(1)
    m = _PAREN_ITEM.match(line)
    if m:
        return "clause", 2, f"（{m.group(1)}）"
    m = _DIGIT_ITEM.match(line)
    if m:
        number, punct = m.group(1), m.group(2)
        after = line[m.end():]
        depth = number.count(".") + number.count("．") + 1
        if after[:1].isdigit() or after[:1] in ("%", "％"):
            return None
        if depth == 1 and not punct:
            return None
        if depth > 1 and not punct and after and not after[0].isspace():
            return None
        return "clause", 2 + depth, number.translate(_FULLWIDTH)
    return None


def _heading_like(line: str) -> bool:
    """A numbered line that reads as a heading: short, no sentence punctuation."""
    s = line.strip()
    return len(s) <= 30 and not _SENTENCE_PUNCT.search(s)
