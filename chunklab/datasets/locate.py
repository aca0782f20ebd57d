"""Where an evidence string lies in a corpus: searched, pinned by offsets, or pinned by occurrence.

:mod:`chunklab.datasets.questions` reads a question record and asks this module where each
evidence string is. Three ways, one per record (see the question format there):

* searched: the evidence must occur exactly once in the corpus, or in its ``doc``;
* pinned by offsets (``start``/``end``, or ``spans``): the text at those offsets of the document
  must equal the evidence;
* pinned by ``occurrence`` (0-based): the n-th occurrence, counted in document order and then by
  position, overlapping occurrences included.

Each function returns ``(doc_id, start)`` or a one-line message saying what is wrong and, when
something can be done about it, only what is missing (no "set doc" when ``doc`` is set).
"""
from __future__ import annotations

import bisect
import difflib
import functools
import json

from ..core import Document
from . import Corpus

__all__ = ["locator", "find_in", "preview", "search", "at_offsets", "nearest", "suggest_doc"]

#: How many occurrences are listed when evidence is ambiguous.
LIMIT = 20


def preview(s: str | None, n: int = 24) -> str:
    """``s`` for a one-line message: line breaks as ⏎, at most ``n`` characters, quoted."""
    if s is None:
        return ""
    s = s.replace("\n", "⏎")
    return repr(s if len(s) <= n else s[:n] + "…")


class _Locator:
    """Finds strings in a whole corpus at once.

    NOTE: the documents are joined with NUL into one string, so a corpus-wide search is
    one C-level ``str.find`` instead of a Python loop over documents: about 0.3 ms per
    search on the 3M-character legal corpus. Evidence may hold a NUL (a document may), so
    an occurrence that runs past the end of its document is dropped, not reported.
    """

    def __init__(self, corpus: Corpus) -> None:
        self.corpus = corpus
        self.ids = [d.id for d in corpus]
        self.starts: list[int] = []
        pos = 0
        for d in corpus:
            self.starts.append(pos)
            pos += len(d.text) + 1
        self.ends = [start + len(d.text) for start, d in zip(self.starts, corpus)]
        self.joined = "\x00".join(d.text for d in corpus)

    def find(self, s: str, limit: int = LIMIT) -> list[tuple[str, int]]:
        """Up to ``limit`` occurrences (overlapping ones too) as ``(doc_id, start)``, each inside one document."""
        out = []
        i = self.joined.find(s)
        while i >= 0 and len(out) < limit:
            k = bisect.bisect_right(self.starts, i) - 1
            if i + len(s) <= self.ends[k]:
                out.append((self.ids[k], i - self.starts[k]))
            i = self.joined.find(s, i + 1)
        return out

    def crossing(self, s: str) -> tuple[str, str] | None:
        """The first and last document of an occurrence of ``s`` that crosses a document boundary, or None."""
        i = self.joined.find(s)
        while i >= 0:
            k = bisect.bisect_right(self.starts, i) - 1
            if i + len(s) > self.ends[k]:
                last = bisect.bisect_right(self.starts, i + len(s) - 1) - 1
                return self.ids[k], self.ids[last]
            i = self.joined.find(s, i + 1)
        return None


@functools.lru_cache(maxsize=8)
def locator(corpus: Corpus) -> _Locator:
    """The (cached) corpus-wide finder of ``corpus``."""
    return _Locator(corpus)


def find_in(text: str, s: str, limit: int = LIMIT) -> list[int]:
    """Up to ``limit`` start offsets of ``s`` in ``text``, overlapping occurrences included."""
    out = []
    i = text.find(s)
    while i >= 0 and len(out) < limit:
        out.append(i)
        i = text.find(s, i + 1)
    return out


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def _fit(e: str, w: str, k: int) -> tuple[int, int, int] | None:
    """The substring of ``w`` closest to ``e`` (Levenshtein, free ends in ``w``) when at most ``k`` edits
    away, as ``(edits, start, end)`` in ``w``; the band ``|j - i| <= 2k`` suffices as ``w`` starts
    ``k`` before where ``e`` would."""
    band = 2 * k
    prev = {j: (0, j) for j in range(0, min(band, len(w)) + 1)}  # (cost, start of the match)
    for i in range(1, len(e) + 1):
        row: dict[int, tuple[int, int]] = {}
        for j in range(max(0, i - band), min(len(w), i + band) + 1):
            best = (prev[j][0] + 1, prev[j][1]) if j in prev else (k + 1, 0)  # e[i-1] left out
            if j - 1 in prev:
                diag = prev[j - 1]
                best = min(best, (diag[0] + (e[i - 1] != w[j - 1]), diag[1]))
            if j - 1 in row:
                best = min(best, (row[j - 1][0] + 1, row[j - 1][1]))  # w[j-1] extra
            row[j] = best
        prev = row
    cost = min(c for c, _ in prev.values())
    hits = [(c, st, j) for j, (c, st) in prev.items() if c == cost]
    if cost > k:
        return None
    _, start, end = min(hits, key=lambda h: (h[2] - h[1] != len(e), h[1]))
    return cost, start, end


def nearest(texts: list[tuple[str, str]], e: str, limit: int = 20) -> tuple[str, int, str, int] | None:
    """The text closest to ``e`` in ``texts`` (``(doc_id, text)`` pairs) when ``e`` is not found there:
    ``(doc_id, start, text, edits)`` with 1 edit for ``e`` under 20 characters, 2 up to 100, 3 beyond;
    None when nothing is that close (or ``e`` is under 4 characters). A typo leaves one of ``edits + 1``
    pieces of ``e`` intact, so only the places of those pieces are tried.

    >>> nearest([("a", "出差结束后十个工作日内提交报销单")], "出差结束后十个工做日内提交")
    ('a', 0, '出差结束后十个工作日内提交', 1)
    """
    n = len(e)
    if n < 4:
        return None
    k = 1 if n < 20 else 2 if n <= 100 else 3
    size = n // (k + 1)
    best: tuple[int, str, int, str] | None = None
    for p in range(k + 1):
        off = p * size
        piece = e[off:off + size] if p < k else e[off:]
        for doc_id, text in texts:
            for pos in find_in(text, piece, limit):
                lo = max(0, pos - off - k)
                fit = _fit(e, text[lo:pos - off + n + k], k)
                if fit and fit[0] and (best is None or fit[0] < best[0]):
                    best = (fit[0], doc_id, lo + fit[1], text[lo + fit[1]:lo + fit[2]])
    return None if best is None else (best[1], best[2], best[3], best[0])


def _did_you_mean(texts: list[tuple[str, str]], e: str) -> str:
    near = nearest(texts, e)
    if near is None:
        return ""
    doc_id, start, text, edits = near
    return (f"; did you mean {preview(text, 40)} (doc {doc_id!r} at {start}, {edits} character"
            f"{'s' if edits > 1 else ''} different)?")


def _not_found(corpus: Corpus, doc: Document | None, e: str) -> str:
    if doc is not None:
        msg = f"not found in doc {doc.id!r}"
        elsewhere = locator(corpus).find(e, 1)
        return msg + (f" (but found in {elsewhere[0][0]!r})" if elsewhere else _did_you_mean([(doc.id, doc.text)], e))
    across = locator(corpus).crossing(e)
    if across is not None:
        return (f"crosses a document boundary (from {across[0]!r} into {across[1]!r}): evidence may never "
                f"span two documents")
    return f"not found in corpus {corpus.name!r}" + _did_you_mean([(d.id, d.text) for d in corpus], e)


def _ambiguous(hits: list[tuple[str, int]], limit: int, doc_set: bool) -> str:
    n = f"at least {limit}" if len(hits) >= limit else str(len(hits))
    shown = ", ".join(f"{d}@{i}" for d, i in hits[:5])
    hints = ["add text so that it occurs once",
             f'pin one with "occurrence" ({"0 for the first, 1 for the second, …" if len(hits) >= limit else f"0 to {len(hits) - 1}"}) '
             f'or "start"']
    if not doc_set and len({d for d, _ in hits}) > 1:
        hints.append("set doc")
    return f"found {n} times: {shown}{' …' if len(hits) > 5 else ''} ({'; '.join(hints)})"


def search(corpus: Corpus, doc: Document | None, e: str,
           occurrence: int | None = None) -> tuple[tuple[str, int] | None, str | None]:
    """Evidence ``e`` by search: its only occurrence, or occurrence number ``occurrence`` (0-based),
    in ``doc`` or (None) in the whole corpus. ``((doc_id, start), None)`` or ``(None, message)``.

    >>> c = Corpus("c", [Document("a", "甲乙甲"), Document("b", "甲")])
    >>> search(c, None, "乙"), search(c, None, "甲", occurrence=2), search(c, c["a"], "甲", occurrence=1)
    ((('a', 1), None), (('b', 0), None), (('a', 2), None))
    >>> search(c, None, "甲")[1]
    'found 3 times: a@0, a@2, b@0 (add text so that it occurs once; pin one with "occurrence" (0 to 2) or "start"; set doc)'
    >>> search(c, c["a"], "甲", occurrence=5)[1]
    "occurrence 5 asked for, but the evidence occurs 2 times in doc 'a' (occurrences count from 0)"
    """
    limit = LIMIT if occurrence is None else max(LIMIT, occurrence + 1)
    if doc is not None:
        hits = [(doc.id, i) for i in find_in(doc.text, e, limit)]
    else:
        hits = locator(corpus).find(e, limit)
    if not hits:
        return None, _not_found(corpus, doc, e)
    if occurrence is not None:
        if occurrence < len(hits):
            return hits[occurrence], None
        where = f"in doc {doc.id!r}" if doc is not None else f"in corpus {corpus.name!r}"
        return None, (f"occurrence {occurrence} asked for, but the evidence occurs {_times(len(hits))} {where} "
                      f"(occurrences count from 0)")
    if len(hits) == 1:
        return hits[0], None
    return None, _ambiguous(hits, limit, doc is not None)


def at_offsets(corpus: Corpus, doc: Document | None, e: str, start: int,
               end: int | None) -> tuple[tuple[str, int] | None, str | None]:
    """Evidence ``e`` pinned at ``[start, end)`` of ``doc`` (``end`` defaults to ``start + len(e)``; ``doc``
    may be None only in a corpus of one document). ``((doc_id, start), None)`` or ``(None, message)``.

    >>> c = Corpus("c", [Document("a", "甲乙甲乙丙丁戊己庚辛壬癸子丑寅卯辰巳午未")])
    >>> at_offsets(c, None, "甲乙", 2, 4)
    (('a', 2), None)
    >>> at_offsets(c, None, "甲乙", 14, 16)[1]
    "the text at 14:16 of doc 'a' is '寅卯', not the evidence (which occurs in 'a' at 0, 2)"
    >>> "1 character earlier" in at_offsets(c, None, "丙丁", 5, 7)[1]   # a dropped BOM, say
    True
    """
    if doc is None:
        if len(corpus) == 1:
            doc = corpus.documents[0]
        else:
            fits = [d.id for d in corpus if d.text.startswith(e, start)]
            hint = f"; the evidence is at {start} in {', '.join(map(repr, fits[:5]))}" if fits else ""
            return None, (f"offsets are positions in one document: set doc (the corpus has {len(corpus)} "
                          f"documents{hint})")
    stop = start + len(e) if end is None else end
    if stop > len(doc.text):
        return None, (f"offsets {start}:{stop} run past the end of doc {doc.id!r} "
                      f"({len(doc.text)} characters)")
    found = doc.text[start:stop]
    if found == e:
        return (doc.id, start), None
    where = find_in(doc.text, e, 6)
    elsewhere = (f"which occurs in {doc.id!r} at {', '.join(map(str, where[:5]))}{' …' if len(where) > 5 else ''}"
                 if where else f"which does not occur in {doc.id!r}")
    length = (f"; end - start is {stop - start} but the evidence has {len(e)} characters"
              if stop - start != len(e) else "")
    early = [start - w for w in where if 0 < start - w <= 8]
    shift = (f"; it is {early[0]} character{'s' if early[0] > 1 else ''} earlier: offsets counted on the raw file "
             "are off when it begins with a byte-order mark or has \\r\\n line ends, which chunklab drops and "
             "reads as one character" if early else "")
    return None, (f"the text at {start}:{stop} of doc {doc.id!r} is {preview(found)}, not the evidence "
                  f"({elsewhere}){length}{shift}")


def suggest_doc(key: str, names: list[str]) -> str | None:
    """The name a wrong ``doc`` most likely meant: the only one starting with ``key`` (``"民法"`` for
    ``"民法典"``; the corpus selector ``laws:民法`` takes a prefix), else the closest by spelling.

    >>> suggest_doc("民法", ["民法典", "刑法"]), suggest_doc("polcy", ["policy", "notes"])
    ('民法典', 'policy')
    """
    starting = sorted({n for n in names if n.startswith(key)}) if key else []
    if len(starting) == 1:
        return starting[0]
    close = difflib.get_close_matches(key, names, n=1)
    return close[0] if close else (starting[0] if starting else None)


def describe(doc: Document) -> str:
    """A document for a list of candidates: its id, and its path when that differs."""
    path = doc.meta.get("path")
    return f"{doc.id!r}" + (f" ({path})" if isinstance(path, str) and path != doc.id else "")


def dumps(value: object) -> str:
    """``value`` as compact JSON for a message."""
    return json.dumps(value, ensure_ascii=False)
