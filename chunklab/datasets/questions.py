"""Labeled questions: a public JSONL format, a validator, and a generated scale set.

The format: one JSON object per line (blank lines are skipped)::

    {"id": "law-001", "question": "试用期最长能约定多久？",
     "evidence": "劳动合同期限三个月以上不满一年的，试用期不得超过一个月",
     "doc": "劳动合同法", "type": "条款", "difficulty": "hard"}

``id`` (unique in the file), ``question`` and ``evidence`` are required;
``evidence`` is one verbatim string or a list of them that together answer the
question. ``type`` is one of :data:`TYPES` (or ``known-item`` for generated
sets); ``doc`` (a document id, title or short title) restricts where evidence
is searched; ``difficulty`` is ``easy`` (the question shares the key term
with the evidence) or ``hard`` (it shares almost no words); ``note`` is free
text. Any other key is an error, so a misspelt key cannot be silently ignored.

Locating is exact on the raw text: every evidence string must occur exactly
once in the corpus, or exactly once in ``doc`` when given; overlapping
occurrences count. Evidence never crosses a document boundary: an occurrence
that would run from one document into the next is not one, and when it is the
only one the problem says so. A file with no question at all (empty, or only
blank lines) is a problem too; question files are read by
:func:`~chunklab.datasets.files.read_text_file` (regular files only, UTF-8, at
most ``max_file_bytes``; an error names the file and line). :func:`load_questions` turns each string into a
:class:`GoldSpan` and raises :class:`EvidenceError` (or
:class:`QuestionFormatError`) listing *every* offending line.

>>> from chunklab.datasets import Corpus
>>> from chunklab import Document
>>> corpus = Corpus("demo", [Document("规章", "第一条　迟到三次扣款。\\n\\n第二条　病假需证明。")])
>>> q = parse_questions(['{"id": "q1", "question": "病假要什么", "evidence": "病假需证明", "type": "条款"}'], corpus)[0]
>>> q.spans
(GoldSpan(doc_id='规章', start=17, end=22),)
"""
from __future__ import annotations

import bisect
import difflib
import functools
import json
import os
import random
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

from ..params import Param
from . import Corpus, data_dir, load_corpus
from .files import read_text_file

__all__ = [
    "TYPES", "GENERATED_TYPES", "DIFFICULTIES", "NAMED_SETS", "GoldSpan", "Question", "Problem",
    "QuestionError", "QuestionFormatError", "EvidenceError", "parse_questions", "check_questions",
    "load_questions", "generate_scale_questions", "dump_questions", "summarize",
]

#: Content types of hand-labeled questions.
TYPES = ("条款", "表格", "代码", "对话", "散文", "FAQ")
#: Types of generated questions (kept apart from hand-labeled ones).
GENERATED_TYPES = ("known-item",)
DIFFICULTIES = ("easy", "hard")

_REQUIRED = ("id", "question", "evidence")
_OPTIONAL = ("type", "doc", "difficulty", "note")

#: Named question sets: name -> (file under the data folder, or None if generated; corpus name).
NAMED_SETS: dict[str, tuple[str | None, str]] = {
    "xiaobei": ("xiaobei/questions.jsonl", "xiaobei"),
    "laws": ("laws/questions.jsonl", "laws"),
    "stdlib": ("stdlib/questions.jsonl", "stdlib"),
    "laws-scale": (None, "laws"),
}

#: Size of the scale set: the number of questions of article 002's experiment (claim C20).
SCALE_SIZE = 2267


@dataclass(frozen=True)
class GoldSpan:
    """Where one evidence string lies: ``corpus[doc_id].text[start:end]``."""

    doc_id: str
    start: int
    end: int


@dataclass(frozen=True)
class Question:
    """A labeled question with its evidence located in a corpus (one span per evidence string)."""

    id: str
    question: str
    evidence: tuple[str, ...]
    spans: tuple[GoldSpan, ...]
    type: str | None = None
    difficulty: str | None = None
    doc: str | None = None
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The public-format record (spans are not stored: they are recomputed on load)."""
        d: dict[str, Any] = {"id": self.id, "question": self.question,
                             "evidence": self.evidence[0] if len(self.evidence) == 1 else list(self.evidence)}
        for key in ("doc", "type", "difficulty", "note"):
            if getattr(self, key) is not None:
                d[key] = getattr(self, key)
        return d


@dataclass(frozen=True)
class Problem:
    """One offending line of a question file."""

    source: str
    line: int
    id: str | None
    message: str
    evidence: str | None = None

    def __str__(self) -> str:
        where = f"{self.source}:{self.line}" if self.line else f"{self.source}:"
        qid = f" [{self.id}]" if self.id else ""
        ev = f" evidence {_preview(self.evidence)}:" if self.evidence is not None else ""
        return f"{where}{qid}{ev} {self.message}"

    def to_json(self) -> dict[str, Any]:
        return {"file": self.source, "line": self.line, "id": self.id, "evidence": self.evidence,
                "message": self.message}


class QuestionError(ValueError):
    """Problems in a question file; ``problems`` lists every one of them."""

    def __init__(self, problems: Sequence[Problem], what: str = "problem") -> None:
        self.problems = list(problems)
        n = len(self.problems)
        lines = "\n".join(f"  {p}" for p in self.problems[:200])
        more = f"\n  … and {n - 200} more" if n > 200 else ""
        super().__init__(f"{n} {what}{'s' if n != 1 else ''} in question file:\n{lines}{more}")


class QuestionFormatError(QuestionError):
    """A line that is not a valid question record (bad JSON, missing or unknown key, bad value)."""


class EvidenceError(QuestionError):
    """Evidence strings not found, or found more than once, in the corpus (or in their ``doc``)."""


def _preview(s: str | None, n: int = 24) -> str:
    if s is None:
        return ""
    s = s.replace("\n", "⏎")
    return repr(s if len(s) <= n else s[:n] + "…")


# -- locating ----------------------------------------------------------------

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

    def find(self, s: str, limit: int = 20) -> list[tuple[str, int]]:
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
def _locator(corpus: Corpus) -> _Locator:
    return _Locator(corpus)


def _find_in(text: str, s: str, limit: int = 20) -> list[int]:
    out = []
    i = text.find(s)
    while i >= 0 and len(out) < limit:
        out.append(i)
        i = text.find(s, i + 1)
    return out


def _hits_message(hits: list[tuple[str, int]], limit: int) -> str:
    n = f"at least {limit}" if len(hits) >= limit else str(len(hits))
    shown = ", ".join(f"{d}@{i}" for d, i in hits[:5])
    return f"found {n} times: {shown}{' …' if len(hits) > 5 else ''} (add text, or set doc)"


# -- parsing -----------------------------------------------------------------

def _check_record(obj: Any, source: str, line: int, seen: dict[str, int]) -> tuple[dict | None, list[Problem]]:
    if not isinstance(obj, dict):
        return None, [Problem(source, line, None, f"expected a JSON object, got {type(obj).__name__}")]
    qid = obj.get("id") if isinstance(obj.get("id"), str) else None
    probs: list[Problem] = []

    def bad(msg: str) -> None:
        probs.append(Problem(source, line, qid, msg))

    for key in obj:
        if key not in _REQUIRED + _OPTIONAL:
            close = difflib.get_close_matches(key, _REQUIRED + _OPTIONAL, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            bad(f"unknown key {key!r}{hint} (allowed: {', '.join(_REQUIRED + _OPTIONAL)})")
    for key in _REQUIRED:
        if key not in obj:
            bad(f"missing key {key!r}")
    if "id" in obj:
        if not isinstance(obj["id"], str) or not obj["id"].strip():
            bad(f"id must be a non-empty string, got {obj['id']!r}")
        elif obj["id"] in seen:
            bad(f"duplicate id {obj['id']!r} (first on line {seen[obj['id']]})")
        else:
            seen[obj["id"]] = line
    if "question" in obj and (not isinstance(obj["question"], str) or not obj["question"].strip()):
        bad(f"question must be a non-empty string, got {obj['question']!r}")
    ev = obj.get("evidence")
    if "evidence" in obj:
        evs = [ev] if isinstance(ev, str) else ev
        if not isinstance(evs, list) or not evs or not all(isinstance(e, str) and e.strip() for e in evs):
            bad(f"evidence must be a non-empty string or a non-empty list of them, got {_preview(json.dumps(ev, ensure_ascii=False), 40)}")
    if obj.get("type") is not None and obj["type"] not in TYPES + GENERATED_TYPES:
        bad(f"type must be one of {', '.join(TYPES + GENERATED_TYPES)}, got {obj['type']!r}")
    if obj.get("difficulty") is not None and obj["difficulty"] not in DIFFICULTIES:
        bad(f"difficulty must be one of {', '.join(DIFFICULTIES)}, got {obj['difficulty']!r}")
    for key in ("doc", "note"):
        if obj.get(key) is not None and not isinstance(obj[key], str):
            bad(f"{key} must be a string, got {obj[key]!r}")
    return (None if probs else obj), probs


def _locate(rec: dict, corpus: Corpus, source: str, line: int) -> tuple[Question | None, list[Problem]]:
    evs = (rec["evidence"],) if isinstance(rec["evidence"], str) else tuple(rec["evidence"])
    qid = rec["id"]
    probs: list[Problem] = []
    doc_key = rec.get("doc")
    doc = None
    if doc_key is not None:
        found = corpus.find(doc_key)
        if not found:
            close = difflib.get_close_matches(doc_key, list(corpus.by_id), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            return None, [Problem(source, line, qid, f"doc {doc_key!r} is not a document id or title of corpus {corpus.name!r}{hint}")]
        if len(found) > 1:
            return None, [Problem(source, line, qid, f"doc {doc_key!r} names {len(found)} documents: {', '.join(d.id for d in found[:5])}; use the id")]
        doc = found[0]
    spans = []
    limit = 20
    for e in evs:
        if doc is not None:
            hits = [(doc.id, i) for i in _find_in(doc.text, e, limit)]
        else:
            hits = _locator(corpus).find(e, limit)
        if len(hits) == 1:
            spans.append(GoldSpan(hits[0][0], hits[0][1], hits[0][1] + len(e)))
            continue
        if not hits:
            where = f"in doc {doc.id!r}" if doc is not None else f"in corpus {corpus.name!r}"
            msg = f"not found {where}"
            across = _locator(corpus).crossing(e) if doc is None else None
            if across is not None:
                msg = (f"crosses a document boundary (from {across[0]!r} into {across[1]!r}): evidence may never "
                       f"span two documents")
            elif doc is not None and _locator(corpus).find(e, 1):
                msg += f" (but found in {_locator(corpus).find(e, 1)[0][0]!r})"
        else:
            msg = _hits_message(hits, limit)
        probs.append(Problem(source, line, qid, msg, evidence=e))
    if probs:
        return None, probs
    q = Question(qid, rec["question"], evs, tuple(spans), rec.get("type"), rec.get("difficulty"),
                 doc_key, rec.get("note"))
    return q, []


def _check_lines(lines: Iterable[str], corpus: Corpus, source: str) -> tuple[list[Question], list[Problem], list[Problem]]:
    questions: list[Question] = []
    fmt: list[Problem] = []
    ev: list[Problem] = []
    seen: dict[str, int] = {}
    for n, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as e:
            fmt.append(Problem(source, n, None, f"invalid JSON: {e.msg} at column {e.colno}"))
            continue
        rec, probs = _check_record(obj, source, n, seen)
        fmt.extend(probs)
        if rec is None:
            continue
        q, probs = _locate(rec, corpus, source, n)
        ev.extend(probs)
        if q is not None:
            questions.append(q)
    return questions, fmt, ev


def parse_questions(lines: Iterable[str], corpus: Corpus | str, source: str = "<lines>") -> list[Question]:
    """Questions from JSONL lines (an open file works), located in ``corpus``; raise on any problem."""
    corpus = load_corpus(corpus) if isinstance(corpus, str) else corpus
    questions, fmt, ev = _check_lines(lines, corpus, source)
    if fmt:
        raise QuestionFormatError(fmt + ev)
    if ev:
        raise EvidenceError(ev)
    return questions


# -- files and named sets ----------------------------------------------------

def _resolve(path_or_name: str | os.PathLike, corpus: Corpus | str | None) -> tuple[Path | None, Corpus, str]:
    """(file or None for a generated set, corpus, display name)."""
    name = os.fspath(path_or_name)
    if isinstance(path_or_name, str) and name in NAMED_SETS:
        rel, corpus_name = NAMED_SETS[name]
        corpus = load_corpus(corpus_name) if corpus is None else corpus
        corpus = load_corpus(corpus) if isinstance(corpus, str) else corpus
        if rel is None:
            return None, corpus, name
        path = data_dir() / rel
        if not path.is_file():
            raise FileNotFoundError(f"question set {name!r}: {path} does not exist (yet)")
        return path, corpus, name
    path = Path(name)
    if path.is_dir():
        raise IsADirectoryError(f"question file {name!r} is a folder, not a JSONL file")
    if not path.exists():
        raise FileNotFoundError(
            f"question file {name!r} does not exist (named sets: {', '.join(NAMED_SETS)})"
        )
    if corpus is None:
        raise TypeError(f"load_questions({name!r}) needs a corpus (a Corpus or a corpus name)")
    corpus = load_corpus(corpus) if isinstance(corpus, str) else corpus
    return path, corpus, name


def _read_lines(path: Path, max_file_bytes: int | None) -> list[str]:
    """The lines of a question file, numbered as a text editor numbers them (see read_text_file)."""
    text = read_text_file(path, max_file_bytes)
    return text.split("\n")


def _empty_file(lines: list[str], source: str) -> list[Problem]:
    if any(line.strip() for line in lines):
        return []
    return [Problem(source, 0, None, "no questions: the file is empty or holds only blank lines")]


def check_questions(path_or_name: str | os.PathLike, corpus: Corpus | str | None = None, *,
                    max_file_bytes: int | None = None) -> tuple[list[Question], list[Problem]]:
    """Like :func:`load_questions` but return ``(located questions, problems)`` instead of raising.

    A file that cannot be read (missing, a folder, not UTF-8, over ``max_file_bytes``) still
    raises, with one line naming it, as :func:`load_questions` does.
    """
    path, corpus, name = _resolve(path_or_name, corpus)
    if path is None:
        return list(_scale_cached(corpus)), []
    lines = _read_lines(path, max_file_bytes)
    empty = _empty_file(lines, str(path))
    if empty:
        return [], empty
    questions, fmt, ev = _check_lines(lines, corpus, str(path))
    return questions, fmt + ev


def load_questions(path_or_name: str | os.PathLike, corpus: Corpus | str | None = None, *,
                   max_file_bytes: int | None = None) -> list[Question]:
    """Load and locate a question file, or a named set (:data:`NAMED_SETS`: ``xiaobei``, ``laws``,
    ``stdlib``, ``laws-scale``) whose corpus is then the default.

    Raises :class:`QuestionFormatError` or :class:`EvidenceError` listing every offending line (a
    file without any question is a :class:`QuestionFormatError` too). ``max_file_bytes``: the
    largest question file read (default :data:`~chunklab.datasets.files.MAX_FILE_BYTES`).

    >>> qs = load_questions("stdlib")
    >>> qs[0].type, load_corpus("stdlib")[qs[0].spans[0].doc_id].text[qs[0].spans[0].start:qs[0].spans[0].end] == qs[0].evidence[0]
    ('代码', True)
    """
    path, corpus, name = _resolve(path_or_name, corpus)
    if path is None:
        return list(_scale_cached(corpus))
    lines = _read_lines(path, max_file_bytes)
    empty = _empty_file(lines, str(path))
    if empty:
        raise QuestionFormatError(empty)
    return parse_questions(lines, corpus, str(path))


def dump_questions(questions: Iterable[Question], path: str | os.PathLike) -> None:
    """Write questions in the public JSONL format (e.g. to export the generated scale set)."""
    with open(path, "w", encoding="utf-8") as f:
        for q in questions:
            f.write(json.dumps(q.to_json(), ensure_ascii=False) + "\n")


def summarize(questions: Sequence[Question]) -> dict[str, Any]:
    """Counts per type and per difficulty (``None`` as ``"-"``).

    >>> summarize([])
    {'questions': 0, 'evidence': 0, 'by_type': {}, 'by_difficulty': {}}
    """
    return {
        "questions": len(questions),
        "evidence": sum(len(q.evidence) for q in questions),
        "by_type": dict(Counter(q.type or "-" for q in questions).most_common()),
        "by_difficulty": dict(Counter(q.difficulty or "-" for q in questions).most_common()),
    }


# -- the generated scale set ---------------------------------------------------

_SENTENCE = re.compile(r"[^。；！？\n]+")
_CLAUSE_END = re.compile(r"[，、：]")
_TEMPLATES = ("{}的规定是什么？", "法律上“{}”是怎么规定的？", "{}——这是哪一条的规定？")


def _candidates(body: str, lo: int = 20, hi: int = 60) -> list[tuple[int, int]]:
    """Sentence-ish spans of an article body, ``lo``–``hi`` characters, between punctuation."""
    out = []
    for m in _SENTENCE.finditer(body):
        s, e = m.start(), m.end()
        while s < e and body[s].isspace():
            s += 1
        if lo <= e - s <= hi:
            out.append((s, e))
        elif e - s > hi:
            # Too long: windows of whole clauses (cut after ，、：), each lo..hi long.
            cuts = [s] + [c.end() for c in _CLAUSE_END.finditer(body, s, e)] + [e]
            for i in range(len(cuts) - 1):
                for j in range(i + 1, len(cuts)):
                    a, b = cuts[i], cuts[j]
                    b2 = b - 1 if b < e else b  # drop the clause's own trailing comma
                    if b2 - a > hi:
                        break
                    if b2 - a >= lo:
                        out.append((a, b2))
                        break
    return out


def generate_scale_questions(corpus: Corpus | str | None = None, n: int = SCALE_SIZE, seed: int = 0) -> list[Question]:
    """Known-item questions for timing benchmarks, generated deterministically from a legal corpus.

    Articles are visited in a seeded random order (``random.Random(seed)``); from each, one
    span of 20–60 characters between punctuation (a sentence, or whole clauses of a long one)
    becomes the evidence if it occurs exactly once in the whole corpus (else the next span,
    else the next article). The question is that span with about one character in eight
    dropped, put in one of three question templates. Ids are ``scale-0000``…, type
    ``known-item``, ``doc`` the law's id, ``note`` the law and article number. The default
    ``n`` is 2,267, the size of article 002's experiment (claim C20).

    >>> qs = generate_scale_questions("laws:劳动合同法", n=2)
    >>> qs[0].id, qs[0].type, len(qs)
    ('scale-0000', 'known-item', 2)
    """
    corpus = load_corpus(corpus if corpus is not None else "laws") if not isinstance(corpus, Corpus) else corpus
    n = Param("int", 2267, low=1).validate("n", n)
    articles = [(d, a) for d in corpus for a in d.meta.get("articles", ())]
    if not articles:
        raise ValueError(f"corpus {corpus.name!r} has no meta['articles']: generate from a legal corpus ('laws')")
    rng = random.Random(seed)
    order = list(range(len(articles)))
    rng.shuffle(order)
    loc = _locator(corpus)
    out: list[Question] = []
    for idx in order:
        if len(out) == n:
            break
        doc, art = articles[idx]
        base = art["body_start"]
        body = doc.text[base:art["end"]]
        cands = _candidates(body)
        rng.shuffle(cands)
        for s, e in cands:
            ev = body[s:e]
            if len(loc.find(ev, 2)) != 1:
                continue
            inner = list(range(1, len(ev) - 1))
            rng.shuffle(inner)
            drop = set(inner[: max(1, len(ev) // 8)])
            noisy = "".join(ch for k, ch in enumerate(ev) if k not in drop)
            template = _TEMPLATES[rng.randrange(len(_TEMPLATES))]
            out.append(Question(
                f"scale-{len(out):04d}", template.format(noisy), (ev,),
                (GoldSpan(doc.id, base + s, base + e),), "known-item", None, doc.id,
                f"{doc.meta.get('short_title', doc.id)}{art['number']}",
            ))
            break
    if len(out) < n:
        raise ValueError(f"corpus {corpus.name!r} gives only {len(out)} scale questions, fewer than n={n}")
    return out


@functools.lru_cache(maxsize=4)
def _scale_cached(corpus: Corpus) -> tuple[Question, ...]:
    return tuple(generate_scale_questions(corpus))
