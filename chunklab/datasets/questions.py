"""Labeled questions: a public JSONL format, a validator, and a generated scale set.

The format: one JSON object per line (blank lines are skipped)::

    {"id": "law-001", "question": "试用期最长能约定多久？",
     "evidence": "劳动合同期限三个月以上不满一年的，试用期不得超过一个月",
     "doc": "劳动合同法", "type": "条款", "difficulty": "hard"}

``id`` (unique in the file), ``question`` and ``evidence`` are required;
``evidence`` is one verbatim string or a list of them that together answer the
question. Optional keys:

``doc``
    the document the evidence is in (it restricts the search): its id, its
    title or short title, or, in a folder corpus, the file's relative path
    (``json/decoder.py``), file name (``csv.py``) or file name without suffix
    (``csv``) when that names one file (:meth:`~chunklab.datasets.Corpus.lookup`;
    an ambiguous name is a problem listing the candidates);
``type``, ``difficulty``
    free labels, counted as written by ``validate`` and the reports. The book's
    sets use the content types :data:`TYPES` (``known-item`` for generated sets)
    and the difficulties :data:`DIFFICULTIES` (``easy``: the question shares the
    key term with the evidence; ``hard``: it shares almost no words); ``medium``
    or any other non-empty string is as valid;
``start``, ``end``
    the evidence's offsets in ``doc`` (characters, ``end`` exclusive and optional),
    for a single evidence string;
``spans``
    ``[{"doc": ..., "start": ..., "end": ...}, ...]``: offsets for each evidence
    string of a list, in order (a span's ``doc`` defaults to the record's);
``occurrence``
    which occurrence (0-based, in document order, then by position) the evidence
    is, for evidence that occurs several times: an int for a single string, a
    list of ints or nulls for a list;
``note``
    free text.

Any other key is an error, so a misspelt key cannot be silently ignored.

Locating is exact on the raw text. Evidence without offsets or ``occurrence``
must occur exactly once in the corpus, or exactly once in ``doc`` when given;
overlapping occurrences count. Offsets need a ``doc`` (unless the corpus has one
document) and are checked: the text at them must equal the evidence, else the
problem names the file, line and the mismatch. Offsets or ``occurrence`` pin
evidence that occurs several times (Chroma's benchmark has references that occur
up to six times in their document). Evidence never crosses a document boundary:
an occurrence that would run from one document into the next is not one, and
when it is the only one the problem says so. A file with no question at all
(empty, or only blank lines) is a problem too; question files are read by
:func:`~chunklab.datasets.files.read_text_file` (regular files only, UTF-8, at
most ``max_file_bytes``; an error names the file and line). A file whose name
ends in ``.csv`` is read in the layout of Chroma's chunking benchmark
(:mod:`chunklab.datasets.chroma`) and checked the same way.
:func:`load_questions` turns each string into a :class:`GoldSpan` and raises
:class:`EvidenceError` (or :class:`QuestionFormatError`) listing *every*
offending line.

>>> from chunklab.datasets import Corpus
>>> from chunklab import Document
>>> corpus = Corpus("demo", [Document("规章", "第一条　迟到三次扣款。\\n\\n第二条　病假需证明。")])
>>> q = parse_questions(['{"id": "q1", "question": "病假要什么", "evidence": "病假需证明", "type": "条款"}'], corpus)[0]
>>> q.spans
(GoldSpan(doc_id='规章', start=17, end=22),)
>>> q = parse_questions(['{"id": "q2", "question": "第几条", "evidence": "条", "occurrence": 1, "difficulty": "medium"}'], corpus)[0]
>>> q.spans, q.difficulty
((GoldSpan(doc_id='规章', start=15, end=16),), 'medium')
"""
from __future__ import annotations

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

from ..core import Document
from ..params import Param, loads_json
from . import Corpus, data_dir, load_corpus
from .chroma import chroma_records, is_chroma_csv
from .files import read_text_file
from .locate import at_offsets, describe, dumps, locator as _locator, preview as _preview, search, suggest_doc

__all__ = [
    "TYPES", "GENERATED_TYPES", "DIFFICULTIES", "NAMED_SETS", "GoldSpan", "Question", "Problem",
    "QuestionError", "QuestionFormatError", "EvidenceError", "parse_questions", "check_questions",
    "load_questions", "generate_scale_questions", "dump_questions", "summarize",
]

#: Content types of the book's hand-labeled questions (``type`` is a free label: these are the known ones).
TYPES = ("条款", "表格", "代码", "对话", "散文", "FAQ")
#: Types of generated questions (kept apart from hand-labeled ones).
GENERATED_TYPES = ("known-item",)
#: Difficulties of the book's questions (``difficulty`` is a free label: these are the known ones).
DIFFICULTIES = ("easy", "hard")

_REQUIRED = ("id", "question", "evidence")
_OPTIONAL = ("type", "doc", "difficulty", "note", "start", "end", "spans", "occurrence")
_SPAN_KEYS = ("doc", "start", "end")

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
    """A labeled question with its evidence located in a corpus (one span per evidence string).

    ``pinned``: the record gave offsets or an occurrence (the spans are then written back as
    ``spans`` by :meth:`to_json`, since the evidence alone may not say where it is).
    """

    id: str
    question: str
    evidence: tuple[str, ...]
    spans: tuple[GoldSpan, ...]
    type: str | None = None
    difficulty: str | None = None
    doc: str | None = None
    note: str | None = None
    pinned: bool = False

    def to_json(self) -> dict[str, Any]:
        """The public-format record (spans are recomputed on load, so written only when pinned)."""
        d: dict[str, Any] = {"id": self.id, "question": self.question,
                             "evidence": self.evidence[0] if len(self.evidence) == 1 else list(self.evidence)}
        for key in ("doc", "type", "difficulty", "note"):
            if getattr(self, key) is not None:
                d[key] = getattr(self, key)
        if self.pinned:
            d["spans"] = [{"doc": s.doc_id, "start": s.start, "end": s.end} for s in self.spans]
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
    """Evidence strings not found, found more than once, or not at their offsets, in the corpus."""


# -- parsing -----------------------------------------------------------------

def _offset(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _check_pins(obj: dict, n_ev: int | None, bad) -> None:
    """The optional keys that say where evidence is: start/end, spans, occurrence."""
    ways = [k for k in ("start", "spans", "occurrence") if obj.get(k) is not None]
    if "end" in obj and obj.get("start") is None:
        bad("end needs start (end alone says nothing about where the evidence begins)")
    if len(ways) > 1:
        bad(f"give one way to pin the evidence, not {' and '.join(ways)}: start/end, spans, or occurrence")
    for key in ("start", "end"):
        if obj.get(key) is not None and not _offset(obj[key]):
            bad(f"{key} must be an int >= 0 (a character offset in doc), got {dumps(obj[key])}")
    if _offset(obj.get("start")) and _offset(obj.get("end")) and obj["end"] <= obj["start"]:
        bad(f"end must be greater than start, got start {obj['start']} and end {obj['end']}")
    if obj.get("start") is not None and n_ev is not None and n_ev > 1:
        bad(f"start/end pin one evidence string; for a list of {n_ev} give spans: "
            f'[{{"doc": ..., "start": ..., "end": ...}}, ...], one per string')
    spans = obj.get("spans")
    if spans is not None:
        if not isinstance(spans, list) or not all(isinstance(x, dict) for x in spans):
            bad(f"spans must be a list of {{doc, start, end}} objects, got {preview_json(spans)}")
        else:
            if n_ev is not None and len(spans) != n_ev:
                bad(f"spans has {len(spans)} entr{'y' if len(spans) == 1 else 'ies'} but there "
                    f"{'is 1 evidence string' if n_ev == 1 else f'are {n_ev} evidence strings'}: one span each, in order")
            for i, sp in enumerate(spans):
                extra = [k for k in sp if k not in _SPAN_KEYS]
                if extra:
                    bad(f"spans[{i}]: unknown key {extra[0]!r} (allowed: doc, start, end)")
                if not _offset(sp.get("start")):
                    bad(f"spans[{i}].start must be an int >= 0, got {dumps(sp.get('start'))}")
                if sp.get("end") is not None and _offset(sp.get("start")) and not (
                        _offset(sp["end"]) and sp["end"] > sp["start"]):
                    bad(f"spans[{i}].end must be an int greater than start, got {dumps(sp.get('end'))}")
                if sp.get("doc") is not None and not isinstance(sp["doc"], str):
                    bad(f"spans[{i}].doc must be a string, got {dumps(sp['doc'])}")
    occ = obj.get("occurrence")
    if occ is not None:
        if isinstance(occ, list):
            if n_ev is not None and len(occ) != n_ev:
                bad(f"occurrence has {len(occ)} entries but there are {n_ev} evidence strings: one each (or null)")
            if not all(o is None or _offset(o) for o in occ):
                bad(f"occurrence must hold ints >= 0 (0 is the first occurrence) or nulls, got {dumps(occ)}")
        elif not _offset(occ):
            bad(f"occurrence must be an int >= 0 (0 is the first occurrence), got {dumps(occ)}")
        elif n_ev is not None and n_ev > 1:
            bad(f"occurrence for a list of {n_ev} evidence strings is a list of {n_ev} (an int or null each)")


def preview_json(value: Any) -> str:
    return _preview(dumps(value), 40)


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
    n_ev = None
    if "evidence" in obj:
        evs = [ev] if isinstance(ev, str) else ev
        if not isinstance(evs, list) or not evs or not all(isinstance(e, str) and e.strip() for e in evs):
            bad(f"evidence must be a non-empty string or a non-empty list of them, got {preview_json(ev)}")
        else:
            n_ev = len(evs)
    known = {"type": TYPES + GENERATED_TYPES, "difficulty": DIFFICULTIES}
    for key, values in known.items():
        value = obj.get(key)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            bad(f"{key} must be a non-empty string (a label such as {', '.join(values)}, or your own), "
                f"got {dumps(value)}")
    for key in ("doc", "note"):
        if obj.get(key) is not None and not isinstance(obj[key], str):
            bad(f"{key} must be a string, got {obj[key]!r}")
    _check_pins(obj, n_ev, bad)
    return (None if probs else obj), probs


def _find_doc(corpus: Corpus, key: str) -> tuple[Document | None, str | None]:
    """The document ``key`` names (see :meth:`Corpus.lookup`), or a message saying why none."""
    found = corpus.lookup(key)
    if len(found) == 1:
        return found[0], None
    if found:
        shown = ", ".join(describe(d) for d in found[:10]) + (" …" if len(found) > 10 else "")
        return None, f"doc {key!r} is ambiguous: it names {len(found)} documents ({shown}); use the id or the relative path"
    names = list(corpus.by_id) + [p for d in corpus if isinstance(p := d.meta.get("path"), str)]
    close = suggest_doc(key, names + [d.title for d in corpus if d.title and d.title not in names])
    hint = f"; did you mean {close!r}?" if close else ""
    return None, (f"doc {key!r} is not a document id or title of corpus {corpus.name!r}, nor a file's "
                  f"relative path, name or stem{hint}")


def _pins(rec: dict, n: int) -> list[dict | None]:
    """For each evidence string: ``{"start", "end", "doc"}``, ``{"occurrence"}`` or None (search)."""
    if rec.get("start") is not None:
        return [{"start": rec["start"], "end": rec.get("end"), "doc": None}]
    if rec.get("spans") is not None:
        return [{"start": sp["start"], "end": sp.get("end"), "doc": sp.get("doc")} for sp in rec["spans"]]
    occ = rec.get("occurrence")
    if occ is None:
        return [None] * n
    occs = occ if isinstance(occ, list) else [occ]
    return [None if o is None else {"occurrence": o} for o in occs]


def _locate(rec: dict, corpus: Corpus, source: str, line: int) -> tuple[Question | None, list[Problem]]:
    evs = (rec["evidence"],) if isinstance(rec["evidence"], str) else tuple(rec["evidence"])
    qid = rec["id"]
    doc_key = rec.get("doc")
    doc = None
    if doc_key is not None:
        doc, msg = _find_doc(corpus, doc_key)
        if msg:
            return None, [Problem(source, line, qid, msg)]
    pins = _pins(rec, len(evs))
    spans: list[GoldSpan] = []
    probs: list[Problem] = []
    for i, (e, pin) in enumerate(zip(evs, pins)):
        where = doc
        if pin is not None and pin.get("doc") is not None:
            where, msg = _find_doc(corpus, pin["doc"])
            if msg:
                probs.append(Problem(source, line, qid, f"spans[{i}]: {msg}", evidence=e))
                continue
            if doc is not None and where is not None and where.id != doc.id:
                probs.append(Problem(source, line, qid, f"spans[{i}].doc {pin['doc']!r} is another document than "
                                     f"the question's doc {doc_key!r}: give one, or make them agree", evidence=e))
                continue
        if pin is not None and "start" in pin:
            hit, msg = at_offsets(corpus, where, e, pin["start"], pin["end"])
        else:
            hit, msg = search(corpus, where, e, None if pin is None else pin["occurrence"])
        if msg:
            probs.append(Problem(source, line, qid, msg, evidence=e))
        else:
            spans.append(GoldSpan(hit[0], hit[1], hit[1] + len(e)))
    if probs:
        return None, probs
    q = Question(qid, rec["question"], evs, tuple(spans), rec.get("type"), rec.get("difficulty"),
                 doc_key, rec.get("note"), pinned=any(p is not None for p in pins))
    return q, []


def _jsonl_items(lines: Iterable[str]) -> Iterable[tuple[int, Any]]:
    """``(line number, parsed object or Problem message)`` for each non-blank JSONL line."""
    for n, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            yield n, loads_json(raw)
        except json.JSONDecodeError as e:
            yield n, _Bad(f"invalid JSON: {e.msg} at column {e.colno}")


class _Bad(str):
    """A line that is no record at all (its message)."""


def _check_items(items: Iterable[tuple[int, Any]], corpus: Corpus,
                 source: str) -> tuple[list[Question], list[Problem], list[Problem]]:
    questions: list[Question] = []
    fmt: list[Problem] = []
    ev: list[Problem] = []
    seen: dict[str, int] = {}
    for n, obj in items:
        if isinstance(obj, _Bad):
            fmt.append(Problem(source, n, None, str(obj)))
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


def _check_lines(lines: Iterable[str], corpus: Corpus, source: str) -> tuple[list[Question], list[Problem], list[Problem]]:
    return _check_items(_jsonl_items(lines), corpus, source)


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
        raise IsADirectoryError(f"question file {name!r} is a folder, not a JSONL (or Chroma CSV) file")
    if not path.exists():
        raise FileNotFoundError(
            f"question file {name!r} does not exist (named sets: {', '.join(NAMED_SETS)})"
        )
    if corpus is None:
        raise TypeError(f"load_questions({name!r}) needs a corpus (a Corpus or a corpus name)")
    corpus = load_corpus(corpus) if isinstance(corpus, str) else corpus
    return path, corpus, name


def _read_items(path: Path, max_file_bytes: int | None) -> tuple[list[tuple[int, Any]], list[Problem]]:
    """The records of a question file with their line numbers (as a text editor numbers them; see
    read_text_file): JSONL, or a Chroma CSV for a ``.csv`` name; and the problem of an empty file."""
    text = read_text_file(path, max_file_bytes)
    if not text.strip():
        return [], [Problem(str(path), 0, None, "no questions: the file is empty or holds only blank lines")]
    if is_chroma_csv(path.name):
        items = [(n, _Bad(r) if isinstance(r, str) else r) for n, r in chroma_records(text)]
        if not items:
            return [], [Problem(str(path), 0, None, "no questions: the CSV file has a header and no rows")]
        return items, []
    return list(_jsonl_items(text.split("\n"))), []


def check_questions(path_or_name: str | os.PathLike, corpus: Corpus | str | None = None, *,
                    max_file_bytes: int | None = None) -> tuple[list[Question], list[Problem]]:
    """Like :func:`load_questions` but return ``(located questions, problems)`` instead of raising.

    A file that cannot be read (missing, a folder, not UTF-8, over ``max_file_bytes``) still
    raises, with one line naming it, as :func:`load_questions` does.
    """
    path, corpus, name = _resolve(path_or_name, corpus)
    if path is None:
        return list(_scale_cached(corpus)), []
    items, empty = _read_items(path, max_file_bytes)
    if empty:
        return [], empty
    questions, fmt, ev = _check_items(items, corpus, str(path))
    return questions, fmt + ev


def load_questions(path_or_name: str | os.PathLike, corpus: Corpus | str | None = None, *,
                   max_file_bytes: int | None = None) -> list[Question]:
    """Load and locate a question file (JSONL; a ``.csv`` name: Chroma's layout), or a named set (:data:`NAMED_SETS`: ``xiaobei``, ``laws``,
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
    items, empty = _read_items(path, max_file_bytes)
    if empty:
        raise QuestionFormatError(empty)
    questions, fmt, ev = _check_items(items, corpus, str(path))
    if fmt:
        raise QuestionFormatError(fmt + ev)
    if ev:
        raise EvidenceError(ev)
    return questions


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


def generate_scale_questions(corpus: Corpus | str | None = None, n: int = SCALE_SIZE, seed: int = 0, *,
                             at_most: bool = False) -> list[Question]:
    """Known-item questions for timing benchmarks, generated deterministically from a legal corpus.

    Articles are visited in a seeded random order (``random.Random(seed)``); from each, one
    span of 20–60 characters between punctuation (a sentence, or whole clauses of a long one)
    becomes the evidence if it occurs exactly once in the whole corpus (else the next span,
    else the next article). The question is that span with about one character in eight
    dropped, put in one of three question templates. Ids are ``scale-0000``…, type
    ``known-item``, ``doc`` the law's id, ``note`` the law and article number. The default
    ``n`` is 2,267, the size of article 002's experiment (claim C20). A corpus giving fewer than
    ``n`` is an error, unless ``at_most=True`` (then all it gives are returned).

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
    if len(out) < n and not at_most:
        raise ValueError(f"corpus {corpus.name!r} gives only {len(out)} scale questions, fewer than n={n}")
    return out


@functools.lru_cache(maxsize=4)
def _scale_cached(corpus: Corpus) -> tuple[Question, ...]:
    return tuple(generate_scale_questions(corpus))
