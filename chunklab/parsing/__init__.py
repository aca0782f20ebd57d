"""Parsers the strategies build on: they find units in text and return offsets, never chunks.

* :mod:`~chunklab.parsing.text`: sentences, sections and windows of plain text.
* :mod:`~chunklab.parsing.markdown`: Markdown and HTML headings, code fences and lines.
* :mod:`~chunklab.parsing.clauses`: headings and numbered clauses of laws and contracts.
* :mod:`~chunklab.parsing.tables`: Markdown and HTML tables, their headers and rows.
* :mod:`~chunklab.parsing.dialogue`: speaker turns, sessions and FAQ question units.

These modules import each other and the layer below (:mod:`chunklab.core`, and
:mod:`chunklab.base` for ``iter_pieces`` and the ``Strategy`` type), never
:mod:`chunklab.strategies`.
"""
from .clauses import CLAUSE_KINDS, classify_clause_line
from .dialogue import ROLE_WORDS, bigram_jaccard, find_turns
from .markdown import HTML_BLOCK_TAGS, markdown_headings
from .tables import find_tables, transcribe_row
from .text import section_starts, sentence_spans, window_bounds

__all__ = [
    "sentence_spans", "section_starts", "window_bounds",
    "markdown_headings", "HTML_BLOCK_TAGS",
    "CLAUSE_KINDS", "classify_clause_line",
    "find_tables", "transcribe_row",
    "find_turns", "bigram_jaccard", "ROLE_WORDS",
]
