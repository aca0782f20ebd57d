"""Linguistic strategies: cut where the language says a unit ends.

``recursive`` tries separators from the most desirable (a blank line) to the
least (between any two characters); ``sentence``, ``paragraph`` and ``line``
pack whole units up to ``target`` and hand a unit longer than the cap to
``recursive``, recording that they did in ``meta["level"]``.
"""
from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from functools import lru_cache
from itertools import accumulate, islice
from types import MappingProxyType
from typing import Any, Iterable, Mapping, Sequence

from ..base import Span, Strategy, iter_pieces, register, size_params
from ..core import Document
from ..length import Sizer, counts_chars, span_lengths, span_sizer
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


#: The default separators but "": none of them matches the empty string (see :func:`_scanner`).
_DEFAULT_NONEMPTY = frozenset(sep for sep in DEFAULT_SEPARATORS if sep)


@lru_cache(maxsize=256)
def _scanner(sep: str, is_regex: bool) -> tuple[re.Pattern, bool] | None:
    """``(pattern, context_free)`` for a separator that :func:`_bounds` may scan with
    ``finditer``, or None (a user's regular expression: :func:`_split_by`, as always).

    The fast scan needs a pattern that never matches the empty string (so every match moves
    a boundary): a non-empty literal, or one of :data:`DEFAULT_SEPARATORS`. ``context_free``
    says that matching inside ``text[s:e]`` with ``finditer(text, s, e)`` gives the same
    matches as matching the slice: true unless the pattern looks behind (a lookbehind sees the
    characters before ``s``, a slice does not).
    """
    if not is_regex:
        return _compile(sep, False), True
    if sep in _DEFAULT_NONEMPTY:
        return _compile(sep, True), "(?<" not in sep
    return None


_END, _START = re.Match.end, re.Match.start

#: The meta of a span with nothing to say, shared: read-only, since callers copy meta to extend it.
#: NOTE: a new dict per chunk cost ~5% of a split of the laws at target 256.
_NO_META: Mapping[str, Any] = MappingProxyType({})


def _nested_repeat(pattern: str) -> bool:
    r"""Does ``pattern`` repeat a group that can itself match a repeated piece (``(a+)+``, ``(a*b?)*``)?

    Such patterns backtrack exponentially on a near-miss (41 ``a`` then ``b`` against ``(a+)+$``),
    so user-supplied separators that contain one are refused. Read from the parsed pattern (the
    standard library's parser), not from its text.

    >>> _nested_repeat("(a+)+$"), _nested_repeat(r"(?:\n\s*)+"), _nested_repeat("[。！？]+"), _nested_repeat("(ab)+")
    (True, True, False, False)
    """
    from re import _parser  # type: ignore[attr-defined]  # the stdlib's own parser, kept for this use

    repeats = {_parser.MAX_REPEAT, _parser.MIN_REPEAT, getattr(_parser, "POSSESSIVE_REPEAT", None)}

    def walk(items, inside: bool) -> bool:
        for op, av in items:
            if op in repeats:
                lo, hi, sub = av
                if hi > 1 and inside:
                    return True
                if walk(sub, inside or hi > 1):
                    return True
            elif op == _parser.SUBPATTERN:
                if walk(av[-1], inside):
                    return True
            elif op == _parser.BRANCH:
                if any(walk(b, inside) for b in av[1]):
                    return True
            elif op in (_parser.ASSERT, _parser.ASSERT_NOT):
                if walk(av[1], inside):
                    return True
        return False

    return walk(_parser.parse(pattern), False)


def _bounds(text: str, s: int, e: int, sep: str, is_regex: bool, keep: str, must_occur: bool = True,
            ) -> list[int] | None:
    """Boundaries ``[s, ..., e]`` (strictly increasing) of the pieces of ``text[s:e]`` cut at
    ``sep``, piece ``i`` being ``[b[i], b[i + 1])``; None when ``must_occur`` and ``sep`` does
    not occur there. ``e > s``.

    Exactly the pieces of :func:`_split_by` (and "occurs" is decided, as it always was, by
    ``search(text, s, e)``), found faster: ``finditer`` gives each cut as an integer (C calls
    ``Match.end`` or ``Match.start`` through ``map``) and no piece's text is ever built.
    """
    if sep == "":
        return list(range(s, e + 1))
    scan = _scanner(sep, is_regex)
    if scan is None:
        if must_occur and not _compile(sep, is_regex).search(text, s, e):
            return None
        pieces = _split_by(text, s, e, sep, is_regex, keep)
        return [a for a, _ in pieces] + [e]
    pattern, context_free = scan
    cut = _END if keep == "end" else _START
    if context_free:
        cuts = list(map(cut, pattern.finditer(text, s, e)))
        if not cuts and must_occur:
            return None
    else:
        # NOTE: the split itself has always matched the slice (re.split of text[s:e]); only
        # the test for "occurs" looks at text[s:e] in place, where a lookbehind sees text[s-1].
        if must_occur and not pattern.search(text, s, e):
            return None
        cuts = list(map(cut, pattern.finditer(text[s:e])))
        if s:
            cuts = [c + s for c in cuts]
    # A match is never empty, so cuts strictly increase; a match can only cut at s with
    # keep="start" and at e with keep="end".
    if not cuts or cuts[0] != s:
        cuts.insert(0, s)
    if cuts[-1] != e:
        cuts.append(e)
    return cuts


def _split_by(text: str, s: int, e: int, sep: str, is_regex: bool, keep: str | bool) -> list[tuple[int, int]]:
    """Pieces of ``text[s:e]`` cut at ``sep``; the separator is attached to the
    end of the piece before it (``keep="end"``) or the start of the piece after
    it (``"start"``). Pieces tile the range exactly; empty pieces are dropped.

    NOTE: ``re.split`` with a capturing group runs in C and returns text and
    separators alternately; their lengths give every offset exactly, and a
    piece's text is never searched for (so repeated text cannot be misplaced).
    :func:`_bounds` uses this for a user's regular expression, whose empty
    matches (which ``re.split`` cuts at) and groups it does not reason about.
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
    neighbour as long as the result stays within ``max``. Lengths in
    characters take a faster route to the same chunks: a piece is a pair of
    integer boundaries and the merge searches them (:meth:`_merge_chars`).

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
                if _nested_repeat(sep):
                    raise ParamError(f"separators contains {sep!r}, a repeated group that itself repeats (such as "
                                     "(a+)+): matching it can take exponential time; write it without the nested "
                                     "repeat, or pass separator_regex=False to use the separators as plain text")
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

    @property
    def _seps(self) -> Sequence[str]:
        return self.separators if self.separators is not None else DEFAULT_SEPARATORS

    def _spans(self, doc: Document, start: int, end: int) -> Iterable[Span]:
        text = doc.text
        size = self.sizer(text)
        regex = self.separator_regex if self.separators is not None else True
        raw: list[tuple[int, int]] = []
        self._split(text, start, end, tuple(self._seps), regex, size, counts_chars(size), raw)
        spans = merge_small(raw, self.min, self.cap, size)
        cap = self.cap
        # A chunk over the cap can only be a single unbreakable piece (a character longer than
        # the cap in tokens, or a piece no separator cuts).
        if counts_chars(size):
            return [(s, e, _NO_META if e - s <= cap else {"oversize": True}) for s, e in spans]
        return [(s, e, _NO_META if size(s, e) <= cap else {"oversize": True}) for s, e in spans]

    def _split(self, text, s, e, seps, regex, size, chars, out) -> None:
        """Append to ``out`` the chunks of ``[s, e)``: cut at the first of ``seps`` that occurs,
        merge the pieces shorter than ``target``, split each longer piece with the later ones."""
        if chars and e - s <= self.target:
            # NOTE: the pieces of a span no longer than target merge back into the span itself,
            # whatever the separators, so nothing needs to be scanned (a short document is one chunk).
            if e > s:
                out.append((s, e))
            return
        if e <= s:
            return
        bounds, rest = None, ()
        for i, sep in enumerate(seps):
            bounds = _bounds(text, s, e, sep, regex, self.keep_separator)
            if bounds is not None:
                rest = seps[i + 1:] if sep else ()
                break
        if bounds is None:
            # No separator occurs in [s, e), yet the split has always been made at the last one:
            # a regex with a lookbehind can match in the slice text[s:e] and not in place.
            bounds = _bounds(text, s, e, seps[-1], regex, self.keep_separator, must_occur=False)
        if chars:
            self._merge_chars(text, bounds, rest, regex, size, out)
        else:
            self._merge_sized(text, bounds, rest, regex, size, out)

    def _merge_chars(self, text, b, rest, regex, size, out) -> None:
        """:meth:`_merge_sized` for lengths in characters, with the same result, in a number of
        steps proportional to the chunks rather than the pieces.

        The pieces ``[b[i], b[i + 1])`` tile their range, so a run's length is ``b[j] - b[i]``
        and the greedy merge becomes a search: the chunk starting at piece ``lo`` takes the
        pieces up to the last boundary within ``b[lo] + target`` (``bisect``), and what it
        carries into the next chunk is where both overlap rules first hold (``bisect`` again).
        A piece of ``target`` or more (split again with ``rest``) can only be the piece that
        ends a chunk, or a chunk's first piece, so only those are tested.
        """
        target, overlap = self.target, self.overlap
        n = len(b) - 1
        append, right, left = out.append, bisect_right, bisect_left
        i = 0
        while i < n:
            # A run starts at piece i: first the long pieces that start it, split on their own.
            while i < n and b[i + 1] - b[i] >= target:
                if rest:
                    self._split(text, b[i], b[i + 1], rest, regex, size, True, out)
                else:
                    append((b[i], b[i + 1]))
                i += 1
            if i == n:
                return
            # The current chunk holds pieces lo .. i-1 (none yet), and b[i] - b[lo] <= target.
            lo = i
            while True:
                j = right(b, b[lo] + target, i, n + 1) - 1  # the last piece that fits ends at b[j]
                if j == n:  # the rest of the run fits
                    append((b[lo], b[n]))
                    return
                bj, nxt = b[j], b[j + 1]
                if nxt - bj >= target:  # a long piece ends the run
                    break
                # piece j does not fit: close the chunk and carry at most `overlap` of it into
                # the next, leaving room for piece j
                append((b[lo], bj))
                lo = left(b, bj - overlap, left(b, nxt - target, lo, j), j) if overlap else j
                i = j + 1
            if j > lo:
                append((b[lo], bj))
            i = j

    def _merge_sized(self, text, b, rest, regex, size, out) -> None:
        """Merge the runs of pieces ``[b[i], b[i + 1])`` shorter than ``target`` (:meth:`_merge`)
        and split each longer piece with the separators ``rest``, appending to ``out``."""
        target = self.target
        lens = span_lengths(zip(b, islice(b, 1, None)), size)
        first = 0  # first piece of the current run of "good" (short enough) pieces
        for i, n in enumerate(lens):
            if n < target:
                continue
            if i > first:
                self._merge(b, lens, first, i, out)
            if rest:
                self._split(text, b[i], b[i + 1], rest, regex, size, False, out)
            else:
                out.append((b[i], b[i + 1]))
            first = i + 1
        if first < len(lens):
            self._merge(b, lens, first, len(lens), out)

    def _merge(self, b: list[int], lens: list[int], first: int, stop: int, out: list[tuple[int, int]]) -> None:
        """Greedy merge of pieces ``first .. stop-1`` up to ``target`` with at most ``overlap`` carried over.

        Mirrors LangChain's ``_merge_splits`` with separators kept (so joining
        two pieces adds nothing). Pieces tile their range, so a chunk is simply
        the span from its first piece's start to its last piece's end.
        """
        target, overlap = self.target, self.overlap
        lo = first     # index of the first piece of the current chunk
        total = 0
        for i in range(first, stop):
            n = lens[i]
            if total + n > target:
                if i > lo:
                    out.append((b[lo], b[i]))
                    # Drop pieces from the front until what is left fits the overlap and leaves room.
                    while lo < i and (total > overlap or (total + n > target and total > 0)):
                        total -= lens[lo]
                        lo += 1
            total += n
        if lo < stop:
            out.append((b[lo], b[stop]))


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
