"""Document structure: cut where the author put a boundary (a heading, a clause number).

Three strategies read the structure the document states explicitly:

``markdown``
    ATX (``#`` .. ``######``) and setext (``===`` / ``---``) headings; one
    section (a heading and its body, up to the next heading of any level) per
    chunk, with the heading path in ``meta["path"]``.
``html``
    The same over ``<h1>`` .. ``<h6>``, parsed with the standard library's
    :mod:`html.parser`; chunks are raw spans of the original HTML (tags
    included); over-long sections are cut at block elements (``<p>``,
    ``<li>``, ``<table>``, ``<pre>``, ``<div>`` ...).
``clause``
    Laws, contracts and policies: 第X编 / 分编 / 章 / 节 headings and
    第X条 (or 一、 （一） 1. 1.1 1.1.1) clauses; one clause per chunk, the clause
    number in ``meta["clause"]``, and an explicit fallback chain
    (:data:`CLAUSE_FALLBACK_CHAIN`) for clauses longer than ``max``.

All three keep headings in the chunk text by default and put the heading path
in ``meta["path"]``; with ``prefix=True`` the base class turns the document
title plus that path into a breadcrumb in :attr:`~chunklab.Chunk.context`.
Every chunk records the level that produced it in ``meta["level"]``
(``"markdown"``, ``"recursive"``, ``"fixed"``, ...).
"""
from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

from ..base import Span, Strategy, register, size_params
from ..core import Document
from ..core import trim_span as _trim
from ..length import Sizer
from ..packing import pack, spanned
from ..params import Param, ParamError
from ..parsing.clauses import _heading_like, classify_clause_line
from ..parsing.markdown import HTML_BLOCK_TAGS, _TagScanner, _lines, _visible, markdown_headings
from .geometric import Fixed, Token
from .linguistic import DEFAULT_SEPARATORS, Recursive

__all__ = [
    "Markdown", "Html", "Clause", "CLAUSE_FALLBACK_CHAIN", "CLAUSE_SEPARATORS", "HTML_BLOCK_TAGS",
    "markdown_headings", "classify_clause_line",
]

def _common_prefix(seqs: list[tuple]) -> tuple:
    first = seqs[0]
    n = len(first)
    for s in seqs[1:]:
        n = min(n, len(s))
        for i in range(n):
            if s[i] != first[i]:
                n = i
                break
    return first[:n]


# ---------------------------------------------------------------------------
# Sections: shared by markdown and html
# ---------------------------------------------------------------------------

@dataclass
class _Section:
    """One heading and its body. ``start`` is where the heading starts, ``body``
    where the heading ends (``body == start`` for the preamble before the first
    heading), ``end`` where the next heading starts. ``stack`` identifies the
    section and its ancestors (section indices), ``titles`` their heading texts."""

    start: int
    body: int
    end: int
    stack: tuple[int, ...]
    titles: tuple[str, ...]
    empty: bool = False          # no content besides the heading
    warning: str | None = None

    @property
    def path(self) -> list[str]:
        return [t for t in self.titles if t]


def _build_sections(text: str, bounds: list[tuple[int, int, int, str]], start: int, end: int,
                    has_content: Callable[[int, int], bool]) -> list[_Section]:
    """Sections from headings ``(start, body_start, level, title)`` in document order.

    The heading path is a stack: a heading of level L closes every open heading
    of level >= L. Text before the first heading is a preamble section with an
    empty path (omitted when it is only whitespace).
    """
    sections: list[_Section] = []
    first = bounds[0][0] if bounds else end
    if text[start:first].strip():
        sections.append(_Section(start, start, first, (), (), empty=not has_content(start, first)))
    open_: list[tuple[int, int, str]] = []  # (level, section index, title)
    for i, (hs, body, level, title) in enumerate(bounds):
        while open_ and open_[-1][0] >= level:
            open_.pop()
        open_.append((level, len(sections), title))
        he = bounds[i + 1][0] if i + 1 < len(bounds) else end
        sections.append(_Section(hs, body, he, tuple(x[1] for x in open_), tuple(x[2] for x in open_),
                                 empty=not has_content(body, he)))
    return sections


class _SectionStrategy(Strategy):
    """Shared machinery of ``markdown`` and ``html``: group sections, split long ones."""

    family = "structure"

    def _sections(self, text: str, start: int, end: int) -> tuple[list[_Section], object]:  # pragma: no cover
        """The sections of ``text[start:end]`` and whatever :meth:`_split_long` needs."""
        raise NotImplementedError

    def _split_long(self, doc: Document, a: int, b: int, meta: dict, parsed: object = None) -> Iterable[Span]:
        """A span longer than the cap: ``recursive`` on it, recorded."""
        rec = Recursive(target=self.target, max=self.max, min=self.min, overlap=self.overlap, length=self.length)
        for s, e, m in rec._spans(doc, a, b):
            yield s, e, {**meta, **m, "level": "recursive", "fallback_from": self.name}

    def _joins(self, group: list[_Section], nxt: _Section, size: Sizer) -> bool:
        """Does section ``nxt`` join the chunk being built from ``group``?

        1. Headings with no body of their own (``## 第三章`` directly followed by
           ``### 3.1``) join their first descendant when the result fits the cap.
        2. With ``min > 0``, a chunk shorter than ``min`` takes in the next section
           when that section is a sibling or a descendant of the chunk's last
           section (it has the same parent) and the result stays within ``target``.
        """
        a, b = group[0].start, nxt.end
        last = group[-1]
        if all(s.empty for s in group) and nxt.stack[:len(last.stack)] == last.stack and size(a, b) <= self.cap:
            return True
        if self.min and size(a, group[-1].end) < self.min:
            parent = last.stack[:-1]
            if nxt.stack[:len(parent)] == parent and size(a, b) <= self.target:
                return True
        return False

    def _spans(self, doc: Document, start: int, end: int) -> Iterable[Span]:
        text = doc.text
        size = self.sizer(text)
        sections, parsed = self._sections(text, start, end)
        if self.strip_headers:
            for sec in sections:
                meta = {"path": sec.path}
                if sec.warning:
                    meta["parse_warning"] = sec.warning
                if sec.body > sec.start:
                    head = {**meta, "heading_only": True}
                    if size(*_trim(text, sec.start, sec.body)) > self.cap:
                        head["oversize"] = True  # a heading line is kept whole, never cut
                    yield sec.start, sec.body, head
                yield from self._emit(doc, sec.body, sec.end, meta, size, parsed)
            return
        trimmed = self.sizer(text, trimmed=True)
        groups: list[list[_Section]] = []
        for sec in sections:
            if groups and self._joins(groups[-1], sec, trimmed):
                groups[-1].append(sec)
            else:
                groups.append([sec])
        for g in groups:
            with_body = [s for s in g if not s.empty] or [g[-1]]
            depth = len(_common_prefix([s.stack for s in with_body]))
            meta: dict = {"path": [t for t in with_body[0].titles[:depth] if t]}
            if len(g) > 1:
                meta["sections"] = len(g)
            if all(s.empty for s in g):
                meta["heading_only"] = True
            warnings = [s.warning for s in g if s.warning]
            if warnings:
                meta["parse_warning"] = "; ".join(warnings)
            yield from self._emit(doc, g[0].start, g[-1].end, meta, size, parsed)

    def _emit(self, doc: Document, a: int, b: int, meta: dict, size: Sizer, parsed: object) -> Iterable[Span]:
        a, b = _trim(doc.text, a, b)
        if a >= b:
            return
        if size(a, b) <= self.cap:
            yield a, b, meta
        else:
            yield from self._split_long(doc, a, b, meta, parsed)


# ---------------------------------------------------------------------------
# markdown
# ---------------------------------------------------------------------------

@register
class Markdown(_SectionStrategy):
    """One Markdown section (heading + body) per chunk, with its heading path.

    Headings are found by :func:`~chunklab.parsing.markdown.markdown_headings` (``#`` lines inside fenced
    code are not headings). Each chunk's ``meta["path"]`` lists the heading
    texts from the root, e.g. ``["员工手册", "第三章 考勤与休假", "3.2 病假"]``.

    Edge behaviour:

    * text before the first heading is a section with an empty path;
    * a heading with no body (``## 第三章`` directly followed by ``### 3.1``)
      joins the following section when the result fits the cap, so headings
      are not left alone; a bodiless heading that cannot join is its own chunk,
      flagged ``meta["heading_only"]``;
    * ``min > 0``: a chunk shorter than ``min`` takes in the next sibling or
      child section while the result stays within ``target`` (never across a
      heading of a higher level); ``meta["sections"]`` counts merged sections;
    * a section longer than the cap is split by ``recursive`` (with ``target``,
      ``min`` and ``overlap``), recorded as ``meta["level"] == "recursive"``,
      ``meta["fallback_from"] == "markdown"``; ``overlap`` applies only there;
    * ``strip_headers=True`` (LangChain's default) takes heading lines out of
      the body chunks. To lose nothing, each heading line becomes a chunk of
      its own flagged ``meta["heading_only"] = True`` (skip those when
      indexing) and the heading survives in ``meta["path"]`` / the context;
      sections are then never merged;
    * an unclosed code fence runs to the end of the document and the chunks of
      its section carry ``meta["parse_warning"]``.

    >>> [c.meta["path"] for c in Markdown().split("# 手册\\n## 病假\\n病假需提交证明。")]
    [['手册', '病假']]
    """

    name = "markdown"
    summary = {"zh": "按 Markdown 标题树切：一节一块，块带标题路径；超长节交给 recursive",
               "en": "one Markdown section per chunk with its heading path; long sections go to recursive"}
    params = {
        **size_params(target=500, max=1200, min=0),
        "strip_headers": Param("bool", False, "take heading lines out of body chunks (they become heading_only chunks)"),
    }

    def _sections(self, text: str, start: int, end: int) -> tuple[list[_Section], None]:
        heads, warnings = markdown_headings(text, start, end)
        sections = _build_sections(text, heads, start, end, lambda a, b: bool(text[a:b].strip()))
        for pos, msg in warnings:
            for sec in sections:
                if sec.start <= pos < sec.end:
                    sec.warning = msg
        return sections, None


# ---------------------------------------------------------------------------
# html
# ---------------------------------------------------------------------------

@register
class Html(_SectionStrategy):
    """One HTML section (``<hN>`` and what follows up to the next heading) per chunk.

    The document is scanned with :class:`html.parser.HTMLParser`; its
    ``getpos()`` (line, column) is turned into an absolute offset, so every
    chunk is a raw span of the *original* HTML, tags included, and
    ``meta["path"]`` holds the visible texts of the enclosing headings.

    Edge behaviour: markup before the first heading (``<html><head>...``) with
    no visible text joins the first section when it fits; a section longer
    than the cap is cut before block elements (:data:`~chunklab.parsing.markdown.HTML_BLOCK_TAGS`), the
    blocks packed up to ``target`` (``meta["split"] == "blocks"``), and a block
    still longer than the cap goes to ``recursive`` (recorded). Malformed HTML
    (unclosed tags, stray ``<``) does not raise: the parser is lenient, and an
    unclosed heading's title is its first line of text. Merging with ``min``
    and ``strip_headers`` work as in ``markdown``.

    >>> h = "<h1>手册</h1><p>总则。</p><h2>病假</h2><p>需证明。</p>"
    >>> [(c.text, c.meta["path"]) for c in Html().split(h)]
    [('<h1>手册</h1><p>总则。</p>', ['手册']), ('<h2>病假</h2><p>需证明。</p>', ['手册', '病假'])]
    """

    name = "html"
    summary = {"zh": "按 HTML 的 h1–h6 标题树切，块是原始 HTML 片段；超长节按块级元素再切",
               "en": "one HTML section per chunk (raw HTML spans) with its heading path"}
    params = {
        **size_params(target=500, max=1200, min=0),
        "strip_headers": Param("bool", False, "take <hN> elements out of body chunks (they become heading_only chunks)"),
    }

    def _scan(self, text: str, start: int, end: int) -> _TagScanner:
        sub = text[start:end]
        line_starts = [0] + [m.end() for m in re.finditer("\n", sub)]
        scanner = _TagScanner(line_starts, start)
        scanner.feed(sub)
        scanner.close()
        return scanner

    def _sections(self, text: str, start: int, end: int) -> tuple[list[_Section], list[int]]:
        try:
            scanner = self._scan(text, start, end)
        except Exception as exc:  # html.parser is lenient; this is a last line of defence
            sec = _Section(start, start, end, (), (), warning=f"html.parser failed: {exc!r}")
            return [sec], []
        ends = scanner.head_ends
        bounds: list[tuple[int, int, int, str]] = []
        heads = scanner.heads
        for i, (hs, tag_end, level) in enumerate(heads):
            limit = heads[i + 1][0] if i + 1 < len(heads) else end
            k = bisect_right(ends, tag_end - 1)
            if k < len(ends) and ends[k] < limit:
                close = text.find(">", ends[k], limit)
                body = close + 1 if close >= 0 else ends[k]
                title = _visible(text[tag_end:ends[k]])
            else:  # unclosed heading: its title is the first line of text after the tag
                nl = text.find("\n", tag_end, limit)
                body = tag_end
                title = _visible(text[tag_end:nl if nl >= 0 else limit])[:80]
            bounds.append((hs, max(body, tag_end), level, title))
        return _build_sections(text, bounds, start, end, lambda a, b: bool(_visible(text[a:b]))), scanner.blocks

    def _split_long(self, doc: Document, a: int, b: int, meta: dict, parsed: object = None) -> Iterable[Span]:
        text = doc.text
        size = self.sizer(text)
        blocks: list[int] = parsed or []  # type: ignore[assignment]
        i = bisect_right(blocks, a)
        cuts = [a]
        while i < len(blocks) and blocks[i] < b:
            if blocks[i] > cuts[-1]:
                cuts.append(blocks[i])
            i += 1
        cuts.append(b)
        units = list(zip(cuts, cuts[1:]))
        run: list[tuple[int, int]] = []

        def flush():
            # blocks are measured as whole spans: the markup between them counts
            for i, j in pack(len(run), spanned(run, size), self.target, self.overlap):
                yield run[i][0], run[j - 1][1], {**meta, "split": "blocks"}
            run.clear()

        for u in units:
            if size(*u) > self.cap:
                yield from flush()
                yield from super()._split_long(doc, u[0], u[1], meta)
            else:
                run.append(u)
        yield from flush()


# ---------------------------------------------------------------------------
# clause
# ---------------------------------------------------------------------------

#: Where an over-long clause goes, in order. NOTE the order is the point of chapter 6 (claim
#: C21): cutting a long clause with ``fixed`` straight away breaks far more clauses than
#: cutting it at paragraph and sentence boundaries first, so ``fixed`` is only the last net.
CLAUSE_FALLBACK_CHAIN: tuple[str, ...] = ("recursive", "fixed")

#: Separators of the ``recursive`` level inside ``clause``: paragraph, line, sentence end,
#: semicolon (the first four of :data:`~chunklab.strategies.linguistic.DEFAULT_SEPARATORS`).
#: No comma and no "anywhere": a piece with none of these and still too long goes to ``fixed``.
CLAUSE_SEPARATORS: tuple[str, ...] = DEFAULT_SEPARATORS[:4]


@dataclass
class _Block:
    start: int
    end: int
    path: tuple[str, ...]
    number: str | None          # the clause number; None for heading / preamble text


@register
class Clause(Strategy):
    """Clause-aware chunking for laws, contracts and policies: one clause per chunk.

    Lines are classified by :func:`~chunklab.parsing.clauses.classify_clause_line`. Which numbering is
    "the clause" is decided per document: 第X条 if the document has any
    (then 一、（一）1. lines are items inside articles and never cut points);
    otherwise the coarsest numbering kind present, except that a kind whose
    lines all read as headings (short, no sentence punctuation, e.g.
    ``一、总则``) while a finer kind exists becomes a heading level instead.
    编 / 分编 / 章 / 节 lines and such heading-like numbered lines build
    ``meta["path"]``; the clause number goes to ``meta["clause"]`` (and all
    numbers of a merged chunk to ``meta["clauses"]``).

    Edge behaviour:

    * heading lines and text before the first clause are never left alone
      when avoidable: they join the clause that follows if the result fits
      ``max`` (or if that clause is itself longer than ``max``: they go down
      the fallback chain with it); otherwise they are a chunk of their own
      (``meta["clause"]`` is None);
    * ``min`` defaults to 150 (claim C22) but is lowered to ``target`` when
      ``target`` is smaller and ``min`` was not given;
    * ``merge="min"`` (default): a clause shorter than ``min`` takes in the
      next clauses of the same chapter while it is shorter than ``min`` and the
      result stays within ``target`` (forward only). ``merge="target"`` packs
      neighbouring clauses of the same chapter greedily up to ``target`` (with
      ``overlap`` as whole clauses). ``merge="none"``: one clause per chunk;
    * a clause no longer than ``max`` is never cut;
    * a clause longer than ``max`` goes down ``fallback`` (default
      :data:`CLAUSE_FALLBACK_CHAIN`): ``recursive`` with
      :data:`CLAUSE_SEPARATORS` only (paragraph, line, sentence, semicolon),
      then ``fixed`` windows of ``max`` for any piece still longer. Each chunk
      records its level in ``meta["level"]`` (``"clause"``, ``"recursive"`` or
      ``"fixed"``) and why in ``meta["fallback_reason"]``. ``fallback=("fixed",)``
      skips the recursive level (to measure what it is worth); ``fallback=()``
      keeps over-long clauses whole, flagged ``meta["oversize"]``;
    * no clause marks at all: the whole document goes to the first fallback
      level, with ``meta["fallback_reason"] == "no clause marks"``.

    >>> t = "第一章　总则\\n第一条　为了规范考勤，制定本制度。\\n第二条　本制度适用于全体员工。"
    >>> [(c.meta["clause"], c.meta["path"]) for c in Clause(min=0).split(t)]
    [('第一条', ['第一章　总则']), ('第二条', ['第一章　总则'])]
    """

    name = "clause"
    family = "structure"
    summary = {"zh": "按条款切（第X条、一、（一）、1.1），一条一块；超长条款走 recursive → fixed 回退链",
               "en": "one clause per chunk (第X条, 一、, 1.1 ...); long clauses go down recursive -> fixed"}
    params = {
        **size_params(target=500, max=1200, min=150, overlap=0),
        "merge": Param("choice", "min", "which neighbouring clauses merge: shorter than min / up to target / none",
                       choices=("min", "target", "none")),
        "fallback": Param("strs", CLAUSE_FALLBACK_CHAIN,
                          "levels for clauses longer than max, in the order of CLAUSE_FALLBACK_CHAIN"),
    }

    def __init__(self, **kwargs) -> None:
        if "min" not in kwargs and "target" in kwargs:
            target = self.params["target"].validate("target", kwargs["target"])
            kwargs["min"] = min(self.params["min"].default, target)
        super().__init__(**kwargs)

    def _check(self) -> None:
        super()._check()
        levels = tuple(self.fallback)
        order = [CLAUSE_FALLBACK_CHAIN.index(x) if x in CLAUSE_FALLBACK_CHAIN else -1 for x in levels]
        if -1 in order or order != sorted(set(order)):
            raise ParamError(
                f"fallback must be an ordered subset of {CLAUSE_FALLBACK_CHAIN} "
                f"(e.g. ('recursive', 'fixed'), ('fixed',) or ()), got {levels}"
            )
        self.fallback = levels

    # -- parsing -------------------------------------------------------------
    def _blocks(self, text: str, start: int, end: int) -> list[_Block] | None:
        """Heading blocks and clause blocks in order, or None when there are no clause marks."""
        lines = []
        for ls, le, _ in _lines(text, start, end):
            line = text[ls:le].rstrip("\r")
            lines.append((ls, line, classify_clause_line(line)))
        kinds = sorted({c[1] for _, _, c in lines if c and c[0] == "clause"})
        if not kinds:
            return None
        unit = kinds[0]
        heading_kinds: set[int] = set()
        if unit != 0:
            for i, k in enumerate(kinds):
                if i + 1 < len(kinds) and all(_heading_like(line) for _, line, c in lines
                                              if c and c[0] == "clause" and c[1] == k):
                    heading_kinds.add(k)
                    continue
                unit = k
                break
        heading_ranks = [c[1] for _, _, c in lines if c and c[0] == "heading" and c[1] >= 0]
        appendix_rank = min(heading_ranks, default=2)

        marks: list[tuple[int, str, int, str]] = []   # (start, "heading"/"clause", rank, title/number)
        for ls, line, c in lines:
            if not c:
                continue
            if c[0] == "heading":
                marks.append((ls, "heading", c[1] if c[1] >= 0 else appendix_rank, c[2]))
            elif c[1] == unit:
                marks.append((ls, "clause", 0, c[2]))
            elif c[1] in heading_kinds:
                marks.append((ls, "heading", 10 + c[1], line.strip()))

        blocks: list[_Block] = []
        if marks and marks[0][0] > start and text[start:marks[0][0]].strip():
            blocks.append(_Block(*_trim(text, start, marks[0][0]), (), None))
        stack: list[tuple[int, str]] = []
        for i, (ms, kind, rank, value) in enumerate(marks):
            me = marks[i + 1][0] if i + 1 < len(marks) else end
            ms, me = _trim(text, ms, me)
            if kind == "heading":
                while stack and stack[-1][0] >= rank:
                    stack.pop()
                stack.append((rank, value))
                blocks.append(_Block(ms, me, tuple(t for _, t in stack), None))
            else:
                blocks.append(_Block(ms, me, tuple(t for _, t in stack), value))
        return blocks

    # -- splitting -----------------------------------------------------------
    def _spans(self, doc: Document, start: int, end: int) -> Iterable[Span]:
        text = doc.text
        size = self.sizer(text)
        blocks = self._blocks(text, start, end)
        if blocks is None:
            yield from self._fallback(doc, start, end, {"fallback_reason": "no clause marks"}, size)
            return
        # Heading / preamble blocks join the clause that follows them when the result fits.
        units: list[_Block] = []
        pending: list[_Block] = []
        for b in blocks:
            if b.number is None:
                pending.append(b)
                continue
            if pending and (size(pending[0].start, b.end) <= self.cap or size(b.start, b.end) > self.cap):
                # joined; an over-long clause takes its headings down the fallback chain with it
                b = _Block(pending[0].start, b.end, b.path, b.number)
            elif pending:
                units.append(_Block(pending[0].start, pending[-1].end, pending[-1].path, None))
            pending = []
            units.append(b)
        if pending:
            units.append(_Block(pending[0].start, pending[-1].end, pending[-1].path, None))

        run: list[_Block] = []
        for u in units:
            if run and u.path != run[-1].path:
                yield from self._flush(run, size)
            if size(u.start, u.end) > self.cap:
                yield from self._flush(run, size)
                meta = {"path": list(u.path), "clause": u.number, "fallback_reason": "clause longer than max"}
                yield from self._fallback(doc, u.start, u.end, meta, size)
            else:
                run.append(u)
        yield from self._flush(run, size)

    def _flush(self, run: list[_Block], size: Sizer) -> Iterator[Span]:
        """Emit a run of clauses of one chapter (all within the cap), merged per ``merge``."""
        if not run:
            return
        if self.merge == "target":
            # clauses are measured as whole spans: the line breaks between them count
            ranges = pack(len(run), spanned([(u.start, u.end) for u in run], size), self.target, self.overlap)
        elif self.merge == "min" and self.min:
            ranges, i = [], 0
            while i < len(run):
                j = i + 1
                while j < len(run) and size(run[i].start, run[j - 1].end) < self.min \
                        and size(run[i].start, run[j].end) <= self.target:
                    j += 1
                ranges.append((i, j))
                i = j
        else:
            ranges = [(i, i + 1) for i in range(len(run))]
        for i, j in ranges:
            numbers = [u.number for u in run[i:j] if u.number]
            meta = {"path": list(run[i].path), "clause": numbers[0] if numbers else None}
            if len(numbers) > 1:
                meta["clauses"] = numbers
            yield run[i].start, run[j - 1].end, meta
        run.clear()

    def _fallback(self, doc: Document, a: int, b: int, meta: dict, size: Sizer) -> Iterator[Span]:
        """Send ``[a, b)`` down the fallback chain, recording the level of every piece."""
        meta = {**meta, "fallback_from": "clause"}
        levels = self.fallback
        if not levels:
            yield a, b, {**meta, "level": "clause", **({"oversize": True} if size(a, b) > self.cap else {})}
            return
        if levels[0] == "fixed":
            yield from self._fixed(doc, a, b, meta)
            return
        rec = Recursive(target=self.target, max=self.max, min=self.min, overlap=self.overlap, length=self.length,
                        separators=CLAUSE_SEPARATORS)
        for s, e, m in rec._spans(doc, a, b):
            if size(s, e) > self.cap:
                if "fixed" in levels:
                    yield from self._fixed(doc, s, e, meta)
                else:
                    yield s, e, {**meta, "level": "recursive", "oversize": True}
            else:
                yield s, e, {**meta, "level": "recursive"}

    def _fixed(self, doc: Document, a: int, b: int, meta: dict) -> Iterator[Span]:
        cap = self.cap
        overlap = min(self.overlap, cap - 1)
        last = Fixed(size=cap, overlap=overlap) if self.length == "chars" else Token(size=cap, overlap=overlap)
        for s, e, m in last._spans(doc, a, b):
            yield s, e, {**meta, **m, "level": "fixed"}
