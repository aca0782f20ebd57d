"""Linguistic strategies: cut where the language says a unit ends.

``recursive`` tries separators from the most desirable (a blank line) to the
least (between any two characters); ``sentence``, ``paragraph`` and ``line``
pack whole units up to ``target`` and hand a unit longer than the cap to
``recursive``, recording that they did in ``meta["level"]``.
"""
from __future__ import annotations

import re
from functools import lru_cache
from itertools import accumulate
from typing import Iterable, Sequence

from ..base import Span, Strategy, iter_pieces, register, size_params
from ..core import Document
from ..length import Sizer, span_lengths, span_sizer
from ..packing import pack, summed
from ..params import Param, ParamError
from ..parsing.text import _BLANK_LINE, sentence_spans

__all__ = ["Recursive", "Sentence", "Paragraph", "Line", "DEFAULT_SEPARATORS", "LANGCHAIN_SEPARATORS",
           "sentence_spans", "pack_units"]

#: Separators for Chinese and English text, most desirable first (regular expressions).
#: NOTE the order is the whole algorithm: a piece is only cut at a later level when it is
#: still too long after every earlier level. Sentence ends come before clause marks, and
#: the empty string (cut anywhere) is last so the splitter always terminates.
DEFAULT_SEPARATORS: tuple[str, ...] = (
    r"\n[ \t\u3000]*\n\s*",                                     # blank line: paragraph
    r"\n",                                                      # line
    r"(?:[。！？!?…]+|(?<![0-9])\.(?=\s))[”’」』）)\]\"']*",    # sentence end (+ closing quotes)
    r"[；;]",                                                   # clause in a sentence
    r"[，,、：:]",                                              # phrase
    r"[ \t\u3000]+",                                            # word gap
    "",                                                         # anywhere
)

#: LangChain's RecursiveCharacterTextSplitter defaults (literal strings), for ``langchain_compat``.
LANGCHAIN_SEPARATORS: tuple[str, ...] = ("\n\n", "\n", " ", "")


@lru_cache(maxsize=256)
def _compile(sep: str, is_regex: bool) -> re.Pattern:
    return re.compile(sep if is_regex else re.escape(sep))


@lru_cache(maxsize=256)
def _compile_group(sep: str, is_regex: bool) -> re.Pattern:
    return re.compile(f"({sep if is_regex else re.escape(sep)})")


def _split_by(text: str, s: int, e: int, sep: str, is_regex: bool, keep: str | bool) -> list[tuple[int, int]]:
    """Pieces of ``text[s:e]`` cut at ``sep``; the separator is attached to the
    end of the piece before it (``keep="end"``) or the start of the piece after
    it (``"start"``). Pieces tile the range exactly; empty pieces are dropped.

    NOTE: ``re.split`` with a capturing group runs in C and returns text and
    separators alternately; their lengths give every offset exactly, which is
    much faster than a Python loop over ``finditer`` and never searches for a
    piece's text (so repeated text cannot be misplaced).
    """
    if sep == "":
        return [(i, i + 1) for i in range(s, e)]
    pattern = _compile_group(sep, is_regex)
    if pattern.groups != 1:  # the user's regex has groups of its own: take the slow, safe path
        return _split_by_finditer(text, s, e, _compile(sep, is_regex), keep)
    parts = pattern.split(text[s:e])
    bounds = list(accumulate(map(len, parts), initial=s))
    # parts[2i] is text, parts[2i+1] a separator; bounds[j] is where parts[j] starts.
    out: list[tuple[int, int]] = []
    last = len(parts) - 1
    if keep == "end":
        out = [(bounds[j], bounds[j + 2]) for j in range(0, last, 2)]
        out.append((bounds[last], e))
    else:
        out.append((s, bounds[1] if last else e))
        out.extend((bounds[j], bounds[j + 2] if j + 2 <= last else e) for j in range(1, last, 2))
    return [(a, b) for a, b in out if b > a]


def _split_by_finditer(text, s, e, pattern, keep):
    out: list[tuple[int, int]] = []
    pos = s
    for m in pattern.finditer(text, s, e):
        ms, me = m.start(), m.end()
        if me == ms:
            continue
        if keep == "end":
            out.append((pos, me)); pos = me
        else:
            out.append((pos, ms)); pos = ms
    out.append((pos, e))
    return [(a, b) for a, b in out if b > a]


@register
class Recursive(Strategy):
    """Recursive splitting over ordered separators, greedy merge up to ``target``.

    The algorithm follows LangChain's ``RecursiveCharacterTextSplitter`` step
    for step, on ``(start, end)`` spans instead of strings: pick the first
    separator that occurs in the text; cut there; pieces shorter than
    ``target`` are merged greedily (neighbours share at most ``overlap``);
    a piece that is still too long is split again with the separators after
    the chosen one. Then fragments shorter than ``min`` are merged into a
    neighbour as long as the result stays within ``max``.

    ``keep_separator="end"`` (default) leaves 。 at the end of its sentence;
    ``"start"`` (LangChain's default, ``keep_separator=True``) moves it to the
    start of the next piece. Dropping separators (LangChain's
    ``keep_separator=False``) is not offered: a separator that falls between
    two chunks would be lost. ``langchain_compat=True`` selects LangChain's
    separators and separator placement, to reproduce its chunk texts exactly.

    >>> [c.text for c in Recursive(target=6).split("第一句话。第二句话。第三句。")]
    ['第一句话。', '第二句话。', '第三句。']
    """

    name = "recursive"
    family = "linguistic"
    summary = {"zh": "按分隔符优先级递归切分（段落→行→句→分句→字），再贪心合并到 target",
               "en": "recursive split over ordered separators, greedy merge up to target"}
    params = {
        **size_params(target=500),
        "separators": Param("strs", None, "ordered separators (None: Chinese-aware defaults)", none_ok=True),
        "separator_regex": Param("bool", True, "treat separators as regular expressions"),
        "keep_separator": Param("choice", "end", "where a separator goes: end of the piece before it, or start of the next",
                                choices=("end", "start")),
        "langchain_compat": Param("bool", False, "LangChain's separators and separator placement"),
    }

    def _check(self) -> None:
        super()._check()
        if self.separators is not None and len(self.separators) == 0:
            raise ParamError("separators must be a non-empty list of strings or None, got []")
        if self.separators is not None and self.separator_regex:
            for sep in self.separators:
                try:
                    re.compile(sep)
                except re.error as exc:
                    raise ParamError(f"separators contains an invalid regular expression {sep!r}: {exc}") from None
        if self.langchain_compat:
            self.drop_contained = False  # LangChain emits such duplicates; so do we in this mode
            if self.separators is None:
                self.separators = LANGCHAIN_SEPARATORS
                self.separator_regex = False
            if "keep_separator" not in self._given:
                self.keep_separator = "start"

    def __init__(self, **kwargs):
        self._given = set(kwargs)
        super().__init__(**kwargs)

    #: Documents longer than twice this many characters are split block by block (same result).
    _block: int = 1 << 15

    @property
    def _seps(self) -> Sequence[str]:
        return self.separators if self.separators is not None else DEFAULT_SEPARATORS

    def _spans(self, doc: Document, start: int, end: int) -> Iterable[Span]:
        text = doc.text
        size = self.sizer(text)
        regex = self.separator_regex if self.separators is not None else True
        raw = self._split(text, start, end, list(self._seps), regex, size)
        spans = merge_small(raw, self.min, self.cap, size)
        cap = self.cap
        for s, e in spans:
            # A chunk over the cap can only be a single unbreakable piece (a character longer
            # than the cap in tokens).
            yield s, e, ({"oversize": True} if size(s, e) > cap else {})

    def _split(self, text, s, e, seps, regex, size) -> list[tuple[int, int]]:
        sep, rest = seps[-1], []
        for i, cand in enumerate(seps):
            if cand == "":
                sep = cand
                break
            if _compile(cand, regex).search(text, s, e):
                sep, rest = cand, seps[i + 1:]
                break
        if sep and e - s > 2 * self._block and (self.separators is None or not regex):
            return self._split_blocks(text, s, e, sep, rest, regex, size)
        pieces = _split_by(text, s, e, sep, regex, self.keep_separator)
        lens = span_lengths(pieces, size)
        out: list[tuple[int, int]] = []
        first = self._merge_or_split(text, pieces, lens, rest, regex, size, out)
        if first < len(pieces):
            out.extend(self._merge(pieces, lens, first, len(pieces)))
        return out

    def _merge_or_split(self, text, pieces, lens, rest, regex, size, out) -> int:
        """Append to ``out`` the merged runs of pieces shorter than ``target`` and each longer
        piece split with the separators ``rest``; return where the trailing run of short
        pieces (not merged yet) starts."""
        target = self.target
        first = 0  # first piece of the current run of "good" (short enough) pieces
        for i, n in enumerate(lens):
            if n < target:
                continue
            if i > first:
                out.extend(self._merge(pieces, lens, first, i))
            a, b = pieces[i]
            out.extend(self._split(text, a, b, rest, regex, size) if rest else [(a, b)])
            first = i + 1
        return first

    def _split_blocks(self, text, s, e, sep, rest, regex, size) -> list[tuple[int, int]]:
        """The same result as one pass of :meth:`_split` over ``[s, e)``, computed block by block.

        NOTE: on a multi-megabyte document the single pass builds lists of ~10^5 pieces, and
        walking them thrashes the CPU caches (~1.5x slower per character than the same text
        as many small documents). Blocks of ``_block`` characters keep the working set small.
        The result is identical because (1) each block ends before its last, possibly
        incomplete piece, which the next block starts with, so every piece is found exactly
        as a full scan finds it; (2) the greedy merge of a run of short pieces only ever
        carries its current chunk forward, so merging a run's prefix, keeping back the last
        (unfinished) chunk's pieces and resuming from them replays the same state.
        """
        out: list[tuple[int, int]] = []
        carry_p: list[tuple[int, int]] = []
        carry_l: list[int] = []
        for block in self._blocks(text, s, e, sep, regex, self.keep_separator):
            lens = carry_l + span_lengths(block, size)
            pieces = carry_p + block
            first = self._merge_or_split(text, pieces, lens, rest, regex, size, out)
            carry_p, carry_l = [], []
            if first < len(pieces):
                chunks = self._merge(pieces, lens, first, len(pieces))
                last = chunks.pop()  # unfinished: later pieces may still join it
                out.extend(chunks)
                lo = len(pieces) - 1
                while pieces[lo][0] != last[0]:
                    lo -= 1
                carry_p, carry_l = pieces[lo:], lens[lo:]
        if carry_p:
            out.append((carry_p[0][0], carry_p[-1][1]))
        return out

    def _blocks(self, text, s, e, sep, regex, keep):
        """Lists of consecutive pieces of ``[s, e)``, exactly those a single scan would give."""
        pos, size = s, self._block
        while True:
            if e - pos <= 2 * size:
                yield _split_by(text, pos, e, sep, regex, keep)
                return
            pieces = _split_by(text, pos, pos + size, sep, regex, keep)
            if len(pieces) < 2:  # no separator in the window: widen it
                size *= 2
                continue
            yield pieces[:-1]
            pos, size = pieces[-1][0], self._block

    def _merge(self, pieces: list[tuple[int, int]], lens: list[int], first: int, stop: int) -> list[tuple[int, int]]:
        """Greedy merge of ``pieces[first:stop]`` up to ``target`` with at most ``overlap`` carried over.

        Mirrors LangChain's ``_merge_splits`` with separators kept (so joining
        two pieces adds nothing). Pieces tile their range, so a chunk is simply
        the span from its first piece's start to its last piece's end.
        """
        target, overlap = self.target, self.overlap
        out: list[tuple[int, int]] = []
        lo = first     # index of the first piece of the current chunk
        total = 0
        for i in range(first, stop):
            n = lens[i]
            if total + n > target:
                if i > lo:
                    out.append((pieces[lo][0], pieces[i - 1][1]))
                    # Drop pieces from the front until what is left fits the overlap and leaves room.
                    while lo < i and (total > overlap or (total + n > target and total > 0)):
                        total -= lens[lo]
                        lo += 1
            total += n
        if lo < stop:
            out.append((pieces[lo][0], pieces[stop - 1][1]))
        return out


def merge_small(spans: list[tuple[int, int]], min_len: int, cap: int, size: Sizer) -> list[tuple[int, int]]:
    """Merge spans shorter than ``min_len`` into the previous span (or the next,
    for the first one) when the merged span stays within ``cap``; ``size(a, b)``
    measures a span (:meth:`Strategy.sizer`). ``min_len <= 0`` changes nothing."""
    if min_len <= 0 or len(spans) < 2:
        return spans
    out: list[tuple[int, int]] = []
    for s, e in spans:
        if out and (size(s, e) < min_len or size(*out[-1]) < min_len) and size(out[-1][0], e) <= cap:
            out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return out


# -- unit-based strategies ------------------------------------------------

def pack_units(units: list[tuple[int, int]], target: int, overlap: int, measure, text: str,
               max_units: int | None = None) -> list[tuple[int, int]]:
    """Greedily pack consecutive units ``(start, end)`` of ``text`` into spans up to ``target``.

    :func:`chunklab.packing.pack` over spans, with a run's length the sum of
    its units' lengths (``measure`` of each unit's text; None: characters),
    at most ``max_units`` units per span and whole units worth at most
    ``overlap`` carried into the next span. A unit is never cut here; units
    longer than the cap are handled by the caller before packing.

    >>> t = "甲。乙乙。丙。"
    >>> [t[s:e] for s, e in pack_units([(0, 2), (2, 5), (5, 7)], 5, 0, None, t)]
    ['甲。乙乙。', '丙。']
    """
    size = span_sizer(text, measure)
    ranges = pack(len(units), summed(span_lengths(units, size)), target, overlap, max_units)
    return [(units[i][0], units[j - 1][1]) for i, j in ranges]


def _unit_limit(noun: str, ui_high: int) -> Param:
    return Param("int", None, f"at most this many {noun} per chunk (None: no limit)", low=1, high=100_000,
                 none_ok=True, ui_high=ui_high)


class _UnitStrategy(Strategy):
    """Shared machinery: find units, pack them, send over-long units to ``recursive``."""

    family = "linguistic"
    #: Name of the parameter that caps the number of units per chunk (None: no such cap).
    unit_param: str | None = None

    @property
    def max_units(self) -> int | None:
        return getattr(self, self.unit_param) if self.unit_param else None

    def _units(self, text: str, start: int, end: int) -> list[tuple[int, int]]:  # pragma: no cover
        raise NotImplementedError

    def _fallback(self) -> Recursive:
        return Recursive(target=self.target, max=self.max, overlap=min(self.overlap, self.target - 1),
                         length=self.length)

    def _spans(self, doc: Document, start: int, end: int) -> Iterable[Span]:
        text = doc.text
        size = self.sizer(text)
        cap = self.cap
        run: list[tuple[int, int]] = []
        lens: list[int] = []   # the length of each unit of `run`, measured once

        def flush():
            ranges = pack(len(run), summed(lens), self.target, self.overlap, self.max_units)
            for s, e in merge_small([(run[i][0], run[j - 1][1]) for i, j in ranges], self.min, cap, size):
                yield s, e, {}
            run.clear()
            lens.clear()

        for a, b in self._units(text, start, end):
            length = size(a, b)
            if length > cap:
                yield from flush()
                for s, e, meta in self._fallback()._spans(doc, a, b):
                    yield s, e, {**meta, "level": "recursive", "fallback_from": self.name}
            else:
                run.append((a, b))
                lens.append(length)
        yield from flush()


@register
class Sentence(_UnitStrategy):
    """Whole sentences, packed up to ``target`` (and at most ``sentences`` per chunk).

    Sentence ends: 。！？!?… with closing quotes/brackets, an English full stop
    followed by whitespace, and line breaks; ``clauses=True`` also cuts at ；;.
    A sentence longer than the cap goes to ``recursive`` (recorded).

    >>> [c.text for c in Sentence(target=10, sentences=1).split("第一句。第二句！")]
    ['第一句。', '第二句！']
    """

    name = "sentence"
    summary = {"zh": "按句号等句末标点切成句子，再把若干句合并到 target", "en": "whole sentences packed up to target"}
    params = {
        **size_params(target=500),
        "sentences": _unit_limit("sentences", ui_high=20),
        "clauses": Param("bool", False, "also end a unit at ；;"),
    }

    unit_param = "sentences"

    def _units(self, text, start, end):
        return sentence_spans(text, start, end, self.clauses)


_NEWLINE = re.compile(r"\n")


@register
class Paragraph(_UnitStrategy):
    """Paragraphs (separated by blank lines), merged up to ``target`` (and at most ``paragraphs`` per chunk).

    A paragraph longer than the cap goes to ``recursive`` and its chunks say so
    (``meta["level"] == "recursive"``). ``paragraphs=1`` gives one paragraph per
    chunk (article 002's "paragraph boundary" baseline, claim C19).

    >>> [c.text for c in Paragraph(target=5).split("第一段。\\n\\n第二段。")]
    ['第一段。', '第二段。']
    >>> [c.text for c in Paragraph(target=100, paragraphs=1).split("甲。\\n\\n乙。")]
    ['甲。', '乙。']
    """

    name = "paragraph"
    summary = {"zh": "按空行切段落，短段合并到 target，超长段落交给 recursive", "en": "blank-line paragraphs merged up to target"}
    params = {
        **size_params(target=500, max=None),
        "paragraphs": _unit_limit("paragraphs", ui_high=20),
    }

    unit_param = "paragraphs"

    def _units(self, text, start, end):
        return list(iter_pieces(text, start, end, _BLANK_LINE))


@register
class Line(_UnitStrategy):
    """Lines, merged up to ``target`` and at most ``lines`` per chunk.

    Suits logs, chat transcripts and lists, where a line is a record.

    >>> [c.text for c in Line(target=100, lines=1).split("客服：您好\\n用户：退款")]
    ['客服：您好', '用户：退款']
    """

    name = "line"
    summary = {"zh": "按行切（日志、对话、清单），每块最多 lines 行", "en": "lines (logs, chats, lists), at most `lines` per chunk"}
    params = {
        **size_params(target=500),
        "lines": _unit_limit("lines", ui_high=50),
    }

    unit_param = "lines"

    def _units(self, text, start, end):
        return list(iter_pieces(text, start, end, _NEWLINE))
