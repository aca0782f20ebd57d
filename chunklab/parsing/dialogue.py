"""Dialogue and FAQ text: find speaker turns, sessions and question/answer units.

:func:`find_turns` splits a chat or interview transcript into sessions and
speaker turns; :func:`bigram_jaccard` is the lexical similarity used to spot a
change of topic between turns; ``_find_qa`` tiles an FAQ into question units.
The ``dialogue`` and ``qa_pair`` strategies (:mod:`chunklab.strategies.container`)
build chunks from these.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .markdown import _Headings, _lines

__all__ = ["find_turns", "bigram_jaccard", "ROLE_WORDS"]


# -- dialogue -----------------------------------------------------------------------

_TIME = r"(?:\[[ \t]*)?(?:\d{4}[-/.年]\d{1,2}[-/.月]\d{1,2}日?[ \tT]*)?\d{1,2}:\d{2}(?::\d{2})?(?:[ \t]*\])?"
#: A turn line: optional timestamp, a speaker label (no spaces; an optional part in
#: parentheses, 客服（小林）), then a colon. ``https://`` is not a speaker.
_TURN = re.compile(
    rf"[ \t\u3000]*(?:(?P<time>{_TIME})[ \t\u3000]*)?"
    r"(?P<speaker>[^\s:：\[\]【】()（）<>|#*`\"“”'，,。；;！!？?]{1,20}"
    r"(?:[ \u3000][^\s:：\[\]【】()（）<>|#*`\"“”'，,。；;！!？?]{1,20}){0,2}"  # up to three words
    r"(?:[（(][^）)\n]{1,16}[）)])?)"
    r"[ \t]*[:：](?!//)"
)
#: Speaker labels accepted even when they occur only once.
ROLE_WORDS = frozenset({
    "用户", "客户", "顾客", "买家", "卖家", "客服", "人工客服", "坐席", "机器人", "助手", "AI", "系统",
    "医生", "患者", "老师", "学生", "主持人", "嘉宾", "记者", "采访者", "受访者", "面试官", "候选人",
    "User", "Agent", "Assistant", "Customer", "Bot", "System", "Interviewer",
})
#: Session headers: a 【…】 line, a Markdown heading, or a rule line naming a session.
_SESSION = re.compile(
    r"[ \t]*(?:【[^】\n]{1,80}】|#{1,6}[ \t]+\S[^\n]{0,80}"
    r"|[=\-*~]{2,}[ \t]*[^\n]{0,40}?(?:会话|对话|通话|session|chat|conversation)[^\n]{0,40}?[ \t]*[=\-*~]*)[ \t]*\r?$",
    re.I,
)


@dataclass
class _Turn:
    start: int
    end: int
    speaker: str
    body: int          # where the words start (after "speaker：")
    time: str = ""


@dataclass
class _Session:
    start: int
    end: int
    title: str = ""
    turns: list[_Turn] = field(default_factory=list)


_SPACE = re.compile(r"[ \u3000]")


def _speaker_ok(name: str) -> bool:
    if not any(ch.isalpha() for ch in name) or name.lower().startswith(("http", "ftp", "mailto")):
        return False
    words = _SPACE.split(re.sub(r"[（(].*$", "", name))
    # several words: a name ("Agent Smith", "客服 小林"), not code or prose ("if not x", "Note that")
    return len(words) == 1 or all(w[:1].isupper() or (w[:1].isalpha() and not w[:1].isascii()) for w in words)


def find_turns(text: str, lo: int = 0, hi: int | None = None) -> list[_Session]:
    """Sessions and speaker turns of ``text[lo:hi]``.

    A turn starts at a line ``speaker：`` (optionally after a timestamp such as
    ``[10:02:15]`` or ``2025-03-14 10:02``); lines that start no turn belong to
    the turn above. A speaker label counts when it has a timestamp, is a
    known role (:data:`ROLE_WORDS`, also with a name in parentheses,
    ``客服（小林）``) or occurs at least twice; a one-word label seen once also
    counts when the line directly above or below it is such a turn. A label may
    have up to three words when each is capitalised or CJK (``Agent Smith``,
    ``客服 小林``; not ``if not x`` or ``Note that``). When at least three quarters of
    the turns carry a timestamp, a label line without one is not a turn (a header field such
    as ``渠道：在线客服``; it belongs to the turn after it). A session header line starts a
    new session. Sessions tile ``[lo, hi)``; the text between a session's
    start and its first turn belongs to that turn.

    >>> s = find_turns("【会话 1】\\n用户：能退吗？\\n客服：可以。\\n")[0]
    >>> s.title, [t.speaker for t in s.turns]
    ('会话 1', ['用户', '客服'])
    """
    hi = len(text) if hi is None else hi
    cands: list[tuple[int, int, str, str, int]] = []   # line start, body start, speaker, time, line no.
    headers: list[tuple[int, str]] = []
    counts: dict[str, int] = {}
    for lineno, (s, e, _) in enumerate(_lines(text, lo, hi)):
        if _SESSION.match(text, s, e) and not _TURN.match(text, s, e):
            title = text[s:e].strip().strip("【】=-*~#").strip()
            headers.append((s, title))
            continue
        m = _TURN.match(text, s, e)
        if m and _speaker_ok(m.group("speaker")):
            sp = m.group("speaker")
            cands.append((s, m.end(), sp, (m.group("time") or "").strip("[] \t"), lineno))
            counts[sp] = counts.get(sp, 0) + 1
    def strong(c) -> bool:
        return bool(c[3]) or counts[c[2]] >= 2 or re.sub(r"[（(].*$", "", c[2]) in ROLE_WORDS

    # a one-word label seen once counts when a strong turn sits on the line directly above or
    # below it; a label of several words must be strong itself ("The reason is: …" is prose)
    turns = [c for k, c in enumerate(cands)
             if strong(c) or (not _SPACE.search(c[2]) and any(
                 0 <= k + d < len(cands) and strong(cands[k + d]) and abs(cands[k + d][4] - c[4]) == 1
                 for d in (-1, 1)))]
    # In a timestamped transcript, a label line without a timestamp is a header field
    # (渠道：…, 客户：…), not a turn: taken as a turn it would become the session's opener.
    timed = sum(1 for t in turns if t[3])
    if timed >= 2 and len(turns) - timed <= 0.25 * len(turns):
        turns = [t for t in turns if t[3]]
    turns = [t[:4] for t in turns]
    bounds = [lo] + [h[0] for h in headers if h[0] > lo] + [hi]
    titles = [""] + [h[1] for h in headers if h[0] > lo]
    if headers and headers[0][0] == lo:
        titles[0] = headers[0][1]
    sessions = [_Session(a, b, title) for a, b, title in zip(bounds, bounds[1:], titles) if b > a]
    k = 0
    for sess in sessions:
        while k < len(turns) and turns[k][0] < sess.end:
            s, body, sp, tm = turns[k]
            sess.turns.append(_Turn(s, sess.end, sp, body, tm))
            k += 1
        for a, b in zip(sess.turns, sess.turns[1:]):
            a.end = b.start
        if sess.turns:
            sess.turns[0].start = sess.start   # the header and any preamble go with the first turn
    return sessions


_NON_WORD = re.compile(r"[\W_]+")


def bigram_jaccard(a: str, b: str) -> float:
    """Jaccard similarity of the character-bigram sets of ``a`` and ``b`` (punctuation and
    spaces removed); 0.0 when either has no bigram.

    >>> round(bigram_jaccard("退款多久到账", "退款什么时候到账"), 2)
    0.2
    """
    def grams(s: str) -> set[str]:
        s = _NON_WORD.sub("", s)
        return {s[i:i + 2] for i in range(len(s) - 1)}
    ga, gb = grams(a), grams(b)
    if not ga or not gb:
        return 0.0
    return len(ga & gb) / len(ga | gb)


# -- FAQ / question-answer pairs ----------------------------------------------------------

_QUESTION = re.compile(r"[ \t\u3000]*(?:[-*+][ \t]+)?(?:\*\*)?(?:问题?|Q|Question)[ \t]*\d{0,3}[ \t]*(?:\*\*)?[ \t]*[:：][ \t]*")
_ANSWER = re.compile(r"[ \t\u3000]*(?:[-*+][ \t]+)?(?:\*\*)?(?:答案?|回答|答复|A|Answer)[ \t]*\d{0,3}[ \t]*(?:\*\*)?[ \t]*[:：]",
                     re.M)


@dataclass
class _Unit:
    start: int
    end: int
    question: str = ""       # empty: not a question (a section heading or preamble)
    heading_only: bool = False


def _find_qa(text: str, lo: int, hi: int, headings: _Headings) -> list[_Unit]:
    """Tile ``[lo, hi)`` into question units and the text between them."""
    cuts: list[tuple[int, str]] = []
    lines = [(s, e) for s, e, _ in _lines(text, lo, hi)]
    for idx, (s, e) in enumerate(lines):
        if headings.is_heading_line(s):
            title = headings.atx.get(s)
            if title is None:   # an HTML heading: the line as written
                title = text[s:e].strip()
            cuts.append((s, title if title.endswith(("？", "?")) else ""))
            continue
        m = _QUESTION.match(text, s, e)
        if m and text[m.end():e].strip():
            # the question runs to the answer mark or the first blank line
            parts = [text[m.end():e].strip()]
            for s2, e2 in lines[idx + 1:idx + 6]:
                line = text[s2:e2]
                if not line.strip() or _ANSWER.match(line) or _QUESTION.match(line):
                    break
                parts.append(line.strip())
            cuts.append((s, " ".join(parts)))
    units: list[_Unit] = []
    bounds = [c[0] for c in cuts]
    if not bounds or bounds[0] > lo:
        bounds.insert(0, lo)
        cuts.insert(0, (lo, ""))
    bounds.append(hi)
    for (s, q), e in zip(cuts, bounds[1:]):
        if e > s:
            nl = text.find("\n", s, e)
            rest = "" if nl < 0 else text[nl + 1:e]
            only_heading = not q and headings.is_heading_line(s) and not rest.strip()
            units.append(_Unit(s, e, q, only_heading))
    return units


def _section_path(headings: _Headings, pos: int) -> list[str]:
    """The heading path at ``pos`` without question headings (those are units, not sections)."""
    return [p for p in headings.path_at(pos) if not p.endswith(("？", "?"))]
