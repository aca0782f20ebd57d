"""Hierarchy strategies: the retrieval units of a two-level index, as a plain chunking.

``parent_child`` and ``sentence_window`` return the small units that get
indexed (children, sentences); each carries the span of the larger unit that
is read after a hit (``meta["parent_span"]``, ``meta["window"]``). The index
structures that use those spans at query time (budgets, de-duplication,
auto-merge) are in :mod:`chunklab.hierarchy`.
"""
from __future__ import annotations

from typing import Iterable, Sequence

from ..base import Span, Strategy, register, size_params
from ..core import Document
from ..core import trim_span as _trim
from ..params import Param
from ..parsing.text import section_starts, sentence_spans, window_bounds
from .linguistic import Recursive

__all__ = ["ParentChild", "SentenceWindow", "sentence_units"]


@register
class ParentChild(Strategy):
    """Children of ``target`` cut inside parents of ``parent_target`` (both ``recursive``).

    Each chunk is a child; ``meta["parent"]`` numbers its parent within the
    document and ``meta["parent_span"]`` is the parent's exact ``(start, end)``.
    A child never straddles two parents. Build a
    :class:`chunklab.hierarchy.ParentChildIndex` to retrieve parents by budget.

    >>> cs = ParentChild(target=5, parent_target=12).split("第一章。甲甲甲。乙乙乙。\\n\\n第二章。丙丙丙。")
    >>> [(c.text, c.meta["parent"], c.meta["parent_span"]) for c in cs][2:4]
    [('乙乙乙。', 0, (0, 12)), ('第二章。', 1, (14, 22))]
    """

    name = "parent_child"
    family = "hierarchy"
    summary = {"zh": "小块检索、大块生成：在父块（约 1200）内部切子块（约 200），子块记录父块位置",
               "en": "small-to-big: children (~200) cut inside parents (~1200); each child records its parent span"}
    params = {
        **size_params(target=200),
        "parent_target": Param("int", 1200, "target length of a parent (the text read after a hit)", low=1,
                               high=1_000_000, ui_high=8192),
    }

    def _spans(self, doc: Document, start: int, end: int) -> Iterable[Span]:
        text = doc.text
        parents = Recursive(target=self.parent_target, length=self.length)
        child = Recursive(target=self.target, max=self.max, min=self.min, overlap=self.overlap, length=self.length)
        pi = 0
        for ps, pe, _ in parents._spans(doc, start, end):
            ps, pe = _trim(text, ps, pe)
            if ps >= pe:
                continue
            for s, e, meta in child._spans(doc, ps, pe):
                yield s, e, {**meta, "parent": pi, "parent_span": (ps, pe)}
            pi += 1


def sentence_units(doc: Document, start: int, end: int, starts: Sequence[int], max_len: int | None = None,
                   ) -> list[tuple[int, int, int, str]]:
    """``(start, end, section, level)`` of every sentence in ``doc.text[start:end]``, trimmed.

    Sentences are cut inside each section, so none crosses a section start;
    a sentence longer than ``max_len`` characters is cut by ``recursive``
    (``level`` is then ``"recursive"``, else ``"sentence"``). ``section``
    numbers the sections of ``starts`` (0-based).
    """
    text = doc.text
    bounds = [*starts, len(text)]
    out: list[tuple[int, int, int, str]] = []
    for si in range(len(bounds) - 1):
        a, b = max(bounds[si], start), min(bounds[si + 1], end)
        if a >= b:
            continue
        for s, e in sentence_spans(text, a, b):
            s, e = _trim(text, s, e)
            if s >= e:
                continue
            if max_len is not None and e - s > max_len:
                for rs, re_, _ in Recursive(target=max_len)._spans(doc, s, e):
                    rs, re_ = _trim(text, rs, re_)
                    if rs < re_:
                        out.append((rs, re_, si, "recursive"))
            else:
                out.append((s, e, si, "sentence"))
    return out


@register
class SentenceWindow(Strategy):
    """One sentence per chunk; ``meta["window"]`` is the span of ``±neighbours`` sentences to read.

    The window stays inside the sentence's section (``sections``: blank-line
    paragraphs, or the whole document) and is otherwise symmetric. Sentences
    longer than ``max_sentence`` characters are cut by ``recursive`` (None:
    never). A :class:`chunklab.hierarchy.SentenceWindowIndex` does the same
    over a corpus and merges overlapping windows at query time.

    The old names ``window`` (for ``neighbours``) and ``max`` (for
    ``max_sentence``) are still accepted, with a DeprecationWarning: in every
    other strategy ``window`` is a length in characters (``sliding_window``)
    and ``max`` the hard cap on a chunk's length.

    >>> cs = SentenceWindow(neighbours=1).split("一。二。三。\\n\\n四。")
    >>> [(c.text, c.meta["window"]) for c in cs]
    [('一。', (0, 4)), ('二。', (0, 6)), ('三。', (2, 6)), ('四。', (8, 10))]
    """

    name = "sentence_window"
    family = "hierarchy"
    summary = {"zh": "以单句为检索单元，命中后取前后各 neighbours 句作上下文，不跨段落/章节",
               "en": "single sentences as retrieval units, read with ±neighbours sentences within their section"}
    params = {
        "neighbours": Param("int", 2, "sentences read on each side of a hit", low=0, high=1000, ui_high=10),
        "sections": Param("choice", "paragraph", "what a window may not cross", choices=("paragraph", "document")),
        "max_sentence": Param("int", 1000, "sentences longer than this are cut by recursive (None: never)", low=1,
                              high=1_000_000, none_ok=True, ui_high=4096),
    }
    aliases = {"window": "neighbours", "max": "max_sentence"}
    deprecated = frozenset(aliases)

    def _spans(self, doc: Document, start: int, end: int) -> Iterable[Span]:
        units = sentence_units(doc, start, end, section_starts(doc, self.sections), self.max_sentence)
        sections = [u[2] for u in units]
        for i, (s, e, si, level) in enumerate(units):
            lo, hi = window_bounds(sections, i, self.neighbours)
            meta = {"section": si, "window": (units[lo][0], units[hi][1])}
            if level != "sentence":
                meta.update(level=level, fallback_from=self.name)
            yield s, e, meta
