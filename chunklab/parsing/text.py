"""Sentences and sections of plain text, as ``(start, end)`` offsets.

:func:`sentence_spans` cuts text after sentence ends (Chinese and English);
:func:`section_starts` gives the offsets where sections begin (blank-line
paragraphs, the whole document, or the chunk starts of a strategy), and
:func:`window_bounds` the ``±w`` window of units that stays inside one
section. The ``sentence``, ``paragraph`` and ``sentence_window`` strategies
and :mod:`chunklab.hierarchy` are built on these.
"""
from __future__ import annotations

import re
from typing import Sequence

from ..base import Strategy, iter_pieces
from ..core import Document

__all__ = ["sentence_spans", "section_starts", "window_bounds"]


# -- sentences -----------------------------------------------------------------------

#: A sentence ends at 。！？!?… (or ；; when ``clauses=True``) plus any closing quotes and
#: brackets, or at an English full stop followed by whitespace, or at a line break. A full stop
#: right after a digit ("4. ") numbers a list item and does not end a sentence.
_SENT_END = re.compile(r"(?:[。！？!?…]+|(?<![0-9])\.(?=\s))[”’」』）)\]\"']*|\n+")
_SENT_END_CLAUSE = re.compile(r"(?:[。！？!?…；;]+|(?<![0-9])\.(?=\s))[”’」』）)\]\"']*|\n+")


def sentence_spans(text: str, start: int = 0, end: int | None = None, clauses: bool = False) -> list[tuple[int, int]]:
    """Sentence spans of ``text[start:end]``, each including its end mark and closing quotes.

    >>> t = "他说：“好。”然后走了！Then he left. OK"
    >>> [t[s:e] for s, e in sentence_spans(t)]
    ['他说：“好。”', '然后走了！', 'Then he left.', ' OK']
    """
    end = len(text) if end is None else end
    return list(iter_pieces(text, start, end, _SENT_END_CLAUSE if clauses else _SENT_END))


# -- sections ------------------------------------------------------------------------

#: A blank line (possibly with spaces) ends a paragraph, in the ``paragraph`` strategy and here.
_BLANK_LINE = re.compile(r"\n[ \t\u3000]*\n\s*")


def section_starts(doc: Document, sections: Strategy | str | None = "paragraph") -> list[int]:
    """Offsets where sections of ``doc`` begin (always including 0).

    ``sections`` is ``"paragraph"`` (blank lines), ``"document"`` (one
    section), or a strategy whose chunk starts begin sections (e.g. a
    markdown-heading strategy). Sections tile the document: each runs to the
    next start, so nothing falls outside a section.

    >>> section_starts(Document("d", "甲。\\n\\n乙。丙。"))
    [0, 4]
    """
    text = doc.text
    if sections is None or sections == "document":
        return [0]
    if sections == "paragraph":
        return [0, *(s for s, _ in list(iter_pieces(text, 0, len(text), _BLANK_LINE))[1:])]
    if isinstance(sections, Strategy):
        return sorted({0, *(c.start for c in sections.split(doc))})
    raise ValueError(f"sections must be 'paragraph', 'document', None or a Strategy, got {sections!r}")


def window_bounds(sections: Sequence[int], i: int, w: int) -> tuple[int, int]:
    """First and last unit of the ``±w`` window around unit ``i`` within its section.

    >>> window_bounds([0, 0, 0, 1, 1], 2, 1), window_bounds([0, 0, 0, 1, 1], 3, 2)
    ((1, 2), (3, 4))
    """
    lo = i
    while lo > 0 and i - lo < w and sections[lo - 1] == sections[i]:
        lo -= 1
    hi = i
    while hi + 1 < len(sections) and hi - i < w and sections[hi + 1] == sections[i]:
        hi += 1
    return lo, hi
