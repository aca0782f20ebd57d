"""Documents and chunks: the data model every strategy, evaluator and chapter shares.

The one rule of the package lives here: a :class:`Chunk` is a window ``[start, end)``
into its :class:`Document`, and ``document.text[chunk.start:chunk.end] == chunk.text``
always. Anything a strategy adds for retrieval (a breadcrumb, a table transcription,
a summary) goes into :attr:`Chunk.context`, never into :attr:`Chunk.text`.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping, NamedTuple

__all__ = ["Document", "Chunk", "as_document", "check_chunks", "trim_span"]


def _freeze(meta: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(meta or {}))


@dataclass(frozen=True)
class Document:
    """A text to be chunked.

    ``id`` names the document inside a corpus, ``title`` is used for context
    prefixes, ``meta`` carries anything a loader knows (source path, article
    spans, page boxes...).

    >>> Document("d1", "第一条 总则。").text
    '第一条 总则。'
    """

    id: str
    text: str
    title: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __reduce__(self):
        return (Document, (self.id, self.text, self.title, dict(self.meta)))

    def __post_init__(self) -> None:
        if isinstance(self.text, (bytes, bytearray)):
            raise TypeError("text must be str, got bytes: decode it first, e.g. data.decode('utf-8')")
        if not isinstance(self.text, str):
            raise TypeError(f"text must be str, got {type(self.text).__name__}")
        if not isinstance(self.id, str):
            raise TypeError(f"id must be str, got {type(self.id).__name__}")
        object.__setattr__(self, "meta", _freeze(self.meta))

    def __len__(self) -> int:
        return len(self.text)

    def __repr__(self) -> str:
        title = f", title={self.title!r}" if self.title else ""
        return f"Document(id={self.id!r}, {len(self.text)} chars{title})"


class _ChunkFields(NamedTuple):
    doc_id: str
    index: int
    start: int
    end: int
    text: str
    meta: Mapping[str, Any]
    context: str


class Chunk(_ChunkFields):
    """An immutable window ``[start, end)`` of one document.

    ``context`` is the enrichment text used for retrieval only (title,
    heading path, table transcription, summary). :attr:`embed_text` is what an
    index should embed: ``context`` followed by ``text``. ``meta`` is a
    read-only mapping (strategy, fallback level, heading path, ...).

    A chunk is a named tuple underneath: cheap to create (strategies make
    millions of them in the matrix runs), immutable, and picklable for worker
    processes. The constructor checks that ``text`` fits the span.

    >>> c = Chunk("d1", 0, 0, 3, "第一条", context="民法典 > 总则")
    >>> c.embed_text
    '民法典 > 总则\\n第一条'
    >>> len(c), c.start, c.end
    (3, 0, 3)
    """

    __slots__ = ()

    def __new__(cls, doc_id: str, index: int, start: int, end: int, text: str,
                meta: Mapping[str, Any] | None = None, context: str = "") -> "Chunk":
        for name, value, kind in (("doc_id", doc_id, str), ("text", text, str), ("context", context, str)):
            if not isinstance(value, kind):
                raise TypeError(f"Chunk.{name} must be a str, got {type(value).__name__}")
        for name, value in (("index", index), ("start", start), ("end", end)):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise TypeError(f"Chunk.{name} must be an int, got {type(value).__name__} {value!r}")
        index, start, end = int(index), int(start), int(end)
        if index < 0:
            raise ValueError(f"Chunk.index must be an int >= 0, got {index}")
        if not (0 <= start <= end):
            raise ValueError(f"chunk offsets must satisfy 0 <= start <= end, got [{start}, {end})")
        if len(text) != end - start:
            raise ValueError(f"chunk text has {len(text)} chars but its span [{start}, {end}) has {end - start}")
        return tuple.__new__(cls, (doc_id, index, start, end, text, _freeze(meta), context))

    def __reduce__(self):
        return (Chunk, (self.doc_id, self.index, self.start, self.end, self.text, dict(self.meta), self.context))

    def _replace(self, **changes: Any) -> "Chunk":
        """A copy with some fields changed, checked like a new chunk."""
        fields = {**dict(zip(self._fields, self)), **changes}
        return Chunk(**fields)

    @property
    def embed_text(self) -> str:
        """Text to index: the enrichment ``context`` (if any), a newline, then ``text``."""
        return f"{self.context}\n{self.text}" if self.context else self.text

    def __len__(self) -> int:
        return self.end - self.start

    def __hash__(self) -> int:
        return hash((self.doc_id, self.index, self.start, self.end, self.text, self.context))

    def __repr__(self) -> str:
        preview = self.text[:20].replace("\n", "⏎")
        more = "…" if len(self.text) > 20 else ""
        return f"Chunk({self.doc_id!r}#{self.index} [{self.start}:{self.end}] {preview!r}{more})"


def trim_span(text: str, start: int, end: int) -> tuple[int, int]:
    """``[start, end)`` with leading and trailing whitespace of ``text`` moved out of it.

    >>> trim_span("  甲乙 ", 0, 5)
    (2, 4)
    """
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def as_document(obj: Any, doc_id: str = "doc") -> Document:
    """Accept a :class:`Document` or a ``str``; reject anything else clearly."""
    if isinstance(obj, Document):
        return obj
    if isinstance(obj, str):
        return Document(doc_id, obj)
    if isinstance(obj, (bytes, bytearray)):
        raise TypeError("text must be str, got bytes: decode it first, e.g. data.decode('utf-8')")
    raise TypeError(f"expected a str or a chunklab.Document, got {type(obj).__name__}")


def check_chunks(document: Document, chunks: list[Chunk]) -> list[str]:
    """Return a list of invariant violations (empty when all is well).

    Checks exact offsets, document order, and that every non-whitespace
    character of the document lies in at least one chunk. Used by the tests,
    the exercise checkers and the "invariant checker" of chapter 2.
    """
    problems: list[str] = []
    text = document.text
    covered = bytearray(len(text) + 1)
    prev_start = -1
    for i, c in enumerate(chunks):
        if c.doc_id != document.id:
            problems.append(f"chunk {i}: doc_id {c.doc_id!r} != {document.id!r}")
        if c.index != i:
            problems.append(f"chunk {i}: index is {c.index}")
        if text[c.start:c.end] != c.text:
            problems.append(f"chunk {i}: text differs from document[{c.start}:{c.end}]")
        if c.start < prev_start:
            problems.append(f"chunk {i}: starts at {c.start}, before the previous chunk ({prev_start})")
        prev_start = c.start
        covered[c.start:c.end] = b"\x01" * (c.end - c.start)
    for pos, ch in enumerate(text):
        if not covered[pos] and not ch.isspace():
            problems.append(f"character {ch!r} at {pos} is in no chunk")
            break
    return problems
