"""Container strategies: tables, dialogues and FAQs, whose unit is not a sentence.

A table row means nothing without its header; an answer means nothing without
its question; "可以" means nothing without the turn it replies to. These
strategies find those containers, keep each one whole when it fits, and when
it does not, cut only between its own units (rows, turns) and repeat what a
part needs to be understood (the header, the question) in
:attr:`Chunk.context`. The chunk text is always the untouched source.

Text outside any container goes to ``recursive`` and its chunks say so
(``meta["level"] == "recursive"``, ``meta["fallback_from"]``); a document
with no container at all is chunked by ``recursive`` as a whole, recorded the
same way, so a router can count how often a strategy found nothing to do.
"""
from __future__ import annotations

from typing import Iterable, Iterator, Sequence

from ..base import Span, Strategy, register, size_params
from ..core import Chunk, Document, trim_span
from ..packing import pack, spanned
from ..params import Param, ParamError
from ..parsing.dialogue import _ANSWER, _Session, _Turn, _find_qa, _section_path, bigram_jaccard, find_turns
from ..parsing.markdown import _Headings, _lines
from ..parsing.tables import _TableInfo, find_tables, transcribe_row
from .linguistic import Recursive

__all__ = ["Table", "Dialogue", "QAPair", "fallback_spans", "find_tables", "transcribe_row", "transcribe_tables",
           "find_turns", "bigram_jaccard"]


def fallback_spans(strategy: Strategy, doc: Document, start: int, end: int, **meta) -> Iterator[Span]:
    """``recursive`` over ``doc.text[start:end]`` with ``strategy``'s sizes, each span
    recording ``level="recursive"``, ``fallback_from=strategy.name`` and ``meta``."""
    target = strategy.target
    rec = Recursive(target=target, max=strategy.max, min=min(getattr(strategy, "min", 0), target),
                    overlap=min(getattr(strategy, "overlap", 0), target - 1), length=strategy.length)
    for s, e, m in rec._spans(doc, start, end):
        yield s, e, {**meta, **m, "level": "recursive", "fallback_from": strategy.name}


# -- tables -------------------------------------------------------------------

def transcribe_tables(document: Document, chunks: Sequence[Chunk]) -> list[Chunk]:
    """Add each table row lying inside a chunk to that chunk's context, as a sentence.

    Tables are found in the whole document (Markdown pipe tables and HTML
    tables, :func:`~chunklab.parsing.tables.find_tables`; tables that do not parse are skipped); a row
    inside a chunk becomes ``列名：值；列名：值`` (:func:`~chunklab.parsing.tables.transcribe_row`),
    with the column names of its table even when the header row is in another
    chunk. Rows already transcribed in the context are not repeated.
    ``Chunk.text`` and the offsets never change; ``meta["transcribed_rows"]``
    counts the rows added. This is what the ``transcribe_tables`` key of an index
    configuration (:mod:`chunklab.tools.versioning`) does after any strategy.

    >>> from chunklab import Document, chunk
    >>> doc = Document("d", "| 城市 | 限额 |\\n|---|---|\\n| 北京 | 600 |")
    >>> [c.context for c in transcribe_tables(doc, chunk(doc, "fixed", size=100))]
    ['城市：北京；限额：600']
    """
    text = document.text
    rows = []
    for t in find_tables(text):
        if t.error:
            continue
        for r in t.rows:
            sentence = transcribe_row(t.columns, r.cells)
            if sentence:
                rows.append((*trim_span(text, r.start, r.end), sentence))
    if not rows:
        return list(chunks)
    out = []
    for c in chunks:
        extra = [s for a, b, s in rows if c.start <= a and b <= c.end and s not in c.context]
        if extra:
            context = "\n".join([c.context, *extra] if c.context else extra)
            c = c._replace(context=context, meta={**c.meta, "transcribed_rows": len(extra)})
        out.append(c)
    return out


@register
class Table(Strategy):
    """Markdown and HTML tables kept whole, or cut between rows with the header repeated.

    ``mode="whole"``: one chunk per table, including the caption line directly
    above it (at most one blank line between, at most 60 characters, not a
    sentence) and a ``注：…`` note line directly below. A table longer than
    the cap is cut between rows as in ``rows`` mode (``level="table_rows"``).
    ``mode="rows"``: at most ``rows`` data rows per chunk; the first chunk
    holds the caption and header rows, later ones carry the caption and the
    header in :attr:`Chunk.context` (never in the text). A row, and the
    header with the first row, are never cut: one longer than the cap is kept
    whole and flagged ``meta["oversize"]``.

    ``transcribe`` adds each row of the chunk as a sentence
    (``城市：北京；职级：总监及以下；住宿限额：600 元/晚``) to the context; ``"auto"``
    does so for tables wider than 10 columns. Ragged rows are kept and
    listed in ``meta["ragged_rows"]``; colspan/rowspan cells of HTML tables
    are repeated into every column/row they cover (counted in
    ``meta["merged_cells"]``). An HTML table that does not parse goes to
    ``recursive`` with ``meta["parse_failed"]`` and ``meta["parse_error"]``.
    Text around the tables goes to ``recursive`` (recorded in
    ``meta["level"]``). Every chunk's ``meta["path"]`` is the heading path above it.

    >>> doc = "住宿标准\\n| 城市 | 限额 |\\n|---|---|\\n| 北京 | 600 |\\n| 上海 | 500 |"
    >>> [c.context for c in Table(mode="rows", rows=1, transcribe=True).split(doc)]
    ['城市：北京；限额：600', '住宿标准\\n| 城市 | 限额 |\\n城市：上海；限额：500']
    """

    name = "table"
    family = "container"
    summary = {"zh": "表格整表一块（含表题）或按行分组并在上下文里重复表头；宽表转写成句子",
               "en": "tables whole (with caption) or by row groups with the header repeated; wide tables transcribed"}
    params = {
        **size_params(target=1000),
        "mode": Param("choice", "whole", "'whole': one chunk per table; 'rows': `rows` data rows per chunk",
                      choices=("whole", "rows")),
        "rows": Param("int", 10, "data rows per chunk in 'rows' mode", low=1, high=100_000, ui_high=50),
        "transcribe": Param("choice", "auto", "rows as sentences in the context ('auto': tables wider than 10 columns)",
                            choices=("auto", True, False)),
    }

    #: Tables with more columns than this are transcribed when ``transcribe="auto"``.
    WIDE = 10

    def _check(self) -> None:
        super()._check()
        if self.transcribe not in ("auto",) and not isinstance(self.transcribe, bool):
            raise ParamError(f"transcribe must be one of 'auto', True, False, got {self.transcribe!r}")

    def _spans(self, doc: Document, start: int, end: int) -> Iterable[Span]:
        text = doc.text
        headings = _Headings(text, start, end)
        pos = start
        for index, t in enumerate(find_tables(text, start, end)):
            # headings with nothing but the table under them join the table
            if not t.error and t.start > pos and all(
                    headings.is_heading_line(ls) for ls, le, _ in _lines(text, pos, t.start) if text[ls:le].strip()):
                t.start = trim_span(text, pos, t.start)[0]
            if t.start > pos:
                yield from self._around(doc, pos, t.start, headings)
            path = headings.path_at(t.start)
            if t.error:
                yield from fallback_spans(self, doc, t.start, t.end, kind="table", format=t.fmt, table=index,
                                          parse_failed=True, parse_error=t.error, path=path)
            else:
                yield from self._table(doc, t, index, path)
            pos = t.end
        if pos < end:
            yield from self._around(doc, pos, end, headings)

    def _around(self, doc, a, b, headings) -> Iterator[Span]:
        for s, e, m in fallback_spans(self, doc, a, b):
            yield s, e, {**m, "path": headings.path_at(trim_span(doc.text, s, e)[0])}

    def _table(self, doc: Document, t: _TableInfo, index: int, path: list[str]) -> Iterator[Span]:
        text = doc.text
        size = self.sizer(text)
        cap = self.cap
        transcribe = self.transcribe if isinstance(self.transcribe, bool) else len(t.columns) > self.WIDE
        base = {"kind": "table", "format": t.fmt, "table": index, "columns": len(t.columns),
                "header": list(t.columns), "caption": t.caption, "path": path, "transcribed": transcribe}
        if t.merged:
            base["merged_cells"] = t.merged
        whole = self.mode == "whole" and size(t.start, t.end) <= cap
        if whole or not t.rows:
            meta = {**base, "row_range": (1, len(t.rows)) if t.rows else None,
                    "ragged_rows": list(t.ragged)}
            if size(t.start, t.end) > cap:
                meta["oversize"] = True
            if transcribe:
                meta["context"] = "\n".join(filter(None, (transcribe_row(t.columns, r.cells) for r in t.rows)))
            yield t.start, t.end, meta
            return
        # row groups: the head (caption, header rows) travels with the first data row
        units = [(r.start, r.end) for r in t.rows]
        units[0] = (t.start, units[0][1])
        units[-1] = (units[-1][0], t.end)
        # tile: the gap between rows (the line break) belongs to the row before it
        units = [(a, units[k + 1][0] if k + 1 < len(units) else b) for k, (a, b) in enumerate(units)]
        limit = self.rows if self.mode == "rows" else None
        # row index ranges [i, j) up to the cap; overlap 0: a row is never repeated
        groups = pack(len(units), spanned(units, size), cap, 0, limit)
        header_line = "| " + " | ".join(t.columns) + " |" if t.columns else ""
        level = "table" if self.mode == "rows" else "table_rows"
        for i, j in groups:
            s, e = units[i][0], units[j - 1][1]
            meta = {**base, "row_range": (i + 1, j), "ragged_rows": [r for r in t.ragged if i < r <= j]}
            if level != "table":
                meta.update(level=level, fallback_from="table")
            if size(s, e) > cap:
                meta["oversize"] = True
            ctx = []
            if i > 0:
                ctx += [x for x in (t.caption, header_line) if x]
            if transcribe:
                ctx += [x for x in (transcribe_row(t.columns, r.cells) for r in t.rows[i:j]) if x]
            if ctx:
                meta["context"] = "\n".join(ctx)
            yield s, e, meta


# -- dialogue -----------------------------------------------------------------------

@register
class Dialogue(Strategy):
    """Windows of ``turns`` speaker turns that never separate a reply from its question.

    Turns are found by :func:`~chunklab.parsing.dialogue.find_turns`. Inside a session (sessions are never
    merged), a window holds at most ``turns`` turns and at most ``target``
    length (one turn always fits). A window should end after a reply: the
    first speaker of a session is taken as the one asking, and a window that
    would end on that speaker's turn is shortened to the last turn of another
    speaker, or, when it holds none, lengthened to include the reply as long
    as it stays within the cap; when neither is possible it is cut there and
    ``meta["split_exchange"]`` says so. Neighbouring windows share
    ``overlap_turns`` turns (fewer when the cap does not allow them).

    ``topic_breaks=True`` also starts a new window where the character-bigram
    Jaccard similarity of the 3 turns before and the 3 turns after a reply
    falls below ``threshold`` (``meta["topic_break"]``); without such breaks
    the windows are the fixed ones above. Short chat turns share few bigrams
    even on one topic (0.02–0.07 is common), so calibrate ``threshold`` on
    your own transcripts; a break needs at least two turns since the last one. A turn longer than the cap goes to
    ``recursive``; a document with fewer than two turns goes to ``recursive``
    as a whole (``meta["no_turns"]``). ``meta["path"]`` is the session header.

    >>> chat = "用户：能开发票吗？\\n客服：可以。\\n用户：多久到？\\n客服：三天。"
    >>> [c.text for c in Dialogue(turns=3).split(chat)]
    ['用户：能开发票吗？\\n客服：可以。', '用户：多久到？\\n客服：三天。']
    """

    name = "dialogue"
    family = "container"
    summary = {"zh": "对话按发言轮次开窗（N 轮一块），不把回答和它回答的问题拆开；会话不跨界",
               "en": "speaker-turn windows that keep each reply with the turn it answers; sessions never merged"}
    params = {
        **{k: v for k, v in size_params(target=800).items() if k not in ("overlap", "min")},
        "turns": Param("int", 6, "at most this many turns per window", low=1, high=10_000, ui_high=30),
        "overlap_turns": Param("int", 0, "turns shared by neighbouring windows, < turns", low=0, high=10_000,
                               ui_high=10),
        "topic_breaks": Param("bool", False, "start a new window where lexical similarity drops"),
        "threshold": Param("float", 0.02, "bigram Jaccard below this is a topic break", low=0.0, high=1.0),
    }

    #: Turns on each side of a boundary compared for a topic break.
    TOPIC_WINDOW = 3

    def _check(self) -> None:
        super()._check()
        Param("int", 0, low=0, high=self.turns - 1, bounds="[0, turns)").validate("overlap_turns", self.overlap_turns)

    def _spans(self, doc: Document, start: int, end: int) -> Iterable[Span]:
        sessions = find_turns(doc.text, start, end)
        if sum(len(s.turns) for s in sessions) < 2:
            yield from fallback_spans(self, doc, start, end, no_turns=True)
            return
        for k, sess in enumerate(sessions):
            path = [sess.title] if sess.title else []
            if not sess.turns:
                yield from fallback_spans(self, doc, sess.start, sess.end, kind="dialogue", session=k,
                                          path=path, no_turns=True)
                continue
            yield from self._session(doc, sess, k, path)

    def _session(self, doc: Document, sess: _Session, k: int, path: list[str]) -> Iterator[Span]:
        text = doc.text
        size = self.sizer(text)
        cap = self.cap
        turns = sess.turns
        opener = turns[0].speaker
        base = {"kind": "dialogue", "session": k, "path": path}
        if sess.title:
            base["session_title"] = sess.title
        # runs of turns that fit the cap, separated by over-long turns and topic breaks
        breaks = self._topic_breaks(text, turns, opener) if self.topic_breaks else {}
        run: list[int] = []
        for i, t in enumerate(turns):
            if size(t.start, t.end) > cap:
                yield from self._windows(text, turns, run, opener, base, breaks)
                run = []
                yield from fallback_spans(self, doc, t.start, t.end, **base, speakers=[t.speaker],
                                          turn_range=(i + 1, i + 1))
                continue
            if i in breaks and run:
                yield from self._windows(text, turns, run, opener, base, breaks)
                run = []
            run.append(i)
        yield from self._windows(text, turns, run, opener, base, breaks)

    def _topic_breaks(self, text: str, turns: list[_Turn], opener: str) -> dict[int, float]:
        """Turn indices that start a new topic, with the similarity measured there."""
        w = self.TOPIC_WINDOW
        out: dict[int, float] = {}
        last = 0
        for b in range(2, len(turns) - 1):
            if turns[b - 1].speaker == opener or b - last < 2:
                continue   # never between a question and its reply; no one-turn topics
            left = " ".join(text[t.body:t.end] for t in turns[max(0, b - w):b])
            right = " ".join(text[t.body:t.end] for t in turns[b:b + w])
            sim = bigram_jaccard(left, right)
            if sim < self.threshold:
                out[b] = round(sim, 4)
                last = b
        return out

    def _windows(self, text, turns, run, opener, base, breaks) -> Iterator[Span]:
        if not run:
            return
        size = self.sizer(text)
        cap, limit = self.cap, self.turns
        ts = [turns[i] for i in run]
        n = len(ts)

        def good_end(j: int) -> bool:   # may a window end after ts[j]?
            return j == n - 1 or ts[j].speaker != opener or ts[j + 1].speaker == opener

        i, done = 0, 0   # done: turns already covered by earlier windows
        while done < n:
            j = max(i + 1, done + 1)
            while j < n and j - i < limit and size(ts[i].start, ts[j].end) <= self.target:
                j += 1
            split = False
            if not good_end(j - 1):
                k = j - 2
                while k >= max(i, done) and not good_end(k):
                    k -= 1
                if k >= max(i, done):
                    j = k + 1
                else:
                    k = j
                    while k < n and not good_end(k - 1) and size(ts[i].start, ts[k].end) <= cap:
                        k += 1
                    if good_end(k - 1) and size(ts[i].start, ts[k - 1].end) <= cap:
                        j = k
                    else:
                        split = True
            meta = {**base, "turns": j - i, "turn_range": (run[i] + 1, run[j - 1] + 1),
                    "speakers": list(dict.fromkeys(t.speaker for t in ts[i:j]))}
            if ts[i].time:
                meta["time"] = ts[i].time
            if i == 0 and run[0] in breaks:
                meta["topic_break"] = True
                meta["similarity"] = breaks[run[0]]
            if split:
                meta["split_exchange"] = True
            yield ts[i].start, ts[j - 1].end, meta
            done = j
            if j >= n:
                break
            # carry back up to `overlap_turns` turns, as long as the next window can still grow
            i = max(j - self.overlap_turns, i + 1)
            while i < j and size(ts[i].start, ts[j].end) > cap:
                i += 1


# -- FAQ / question-answer pairs ----------------------------------------------------------

@register
class QAPair(Strategy):
    """One chunk per question and its answer.

    Questions: lines starting ``问：`` / ``问题：`` / ``Q:`` / ``Q：`` / ``Question:``
    (optionally numbered, bold or bulleted), and Markdown headings ending in
    ？ or ?. A unit runs from its question to the next question or the next
    heading; ``meta["question"]`` holds the question text (up to the answer
    mark ``答：`` / ``A:`` or a blank line) and ``meta["answered"]`` whether an
    answer follows. A unit longer than the cap goes to ``recursive`` with
    the question in each part's context. A heading with nothing under it
    joins the question after it; other text outside questions (an intro, a
    section preamble) goes to ``recursive``, recorded; a document without
    questions goes to ``recursive`` as a whole (``meta["no_questions"]``).
    ``meta["path"]`` is the heading path plus the question.

    >>> faq = "# 报销FAQ\\n问：发票丢了怎么办？\\n答：开具遗失证明。\\n问：多久到账？\\n答：5 个工作日。"
    >>> [(c.text, c.meta["question"]) for c in QAPair().split(faq)][1]
    ('问：多久到账？\\n答：5 个工作日。', '多久到账？')
    """

    name = "qa_pair"
    family = "container"
    summary = {"zh": "FAQ 按「问+答」成对切，一问一块；问句写入元数据",
               "en": "FAQ question + answer pairs, one per chunk, the question in meta"}
    params = {k: v for k, v in size_params(target=800).items() if k != "min"}

    def _spans(self, doc: Document, start: int, end: int) -> Iterable[Span]:
        text = doc.text
        headings = _Headings(text, start, end)
        units = _find_qa(text, start, end, headings)
        if not any(u.question for u in units):
            yield from fallback_spans(self, doc, start, end, no_questions=True,
                                      path=_section_path(headings, start))
            return
        size = self.sizer(text)
        carry = None   # a bare heading waiting for the question after it
        for k, u in enumerate(units):
            s = carry if carry is not None else u.start
            carry = None
            if not u.question:
                if u.heading_only and k + 1 < len(units) and units[k + 1].question:
                    carry = s
                    continue
                for a, b, m in fallback_spans(self, doc, s, u.end):
                    yield a, b, {**m, "path": _section_path(headings, trim_span(text, a, b)[0])}
                continue
            path = _section_path(headings, u.start) + [u.question]
            body = text[u.start:u.end]
            answered = bool(_ANSWER.search(body)) or bool("".join(body.split("\n")[1:]).strip())
            meta = {"kind": "qa", "question": u.question, "answered": answered, "path": path}
            if size(s, u.end) <= self.cap:
                yield s, u.end, meta
            else:
                yield from fallback_spans(self, doc, s, u.end, **meta, context=f"问：{u.question}")
