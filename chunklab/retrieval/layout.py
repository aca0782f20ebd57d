"""The global coordinate line: a corpus's documents laid one after another, with a gap.

Retrieval (:class:`~chunklab.retrieval.CorpusIndex` gathers a chunk's tokens from a character range)
and evaluation (every metric is interval arithmetic on character ranges) both work on *one*
line holding every document: document ``i`` occupies ``[offsets[i], offsets[i] + len(text_i))``
and one position is left empty between two documents, so nothing from two documents is ever
adjacent. :class:`Layout` is that line, built once per corpus and shared by both.
"""
from __future__ import annotations

from typing import Any, Iterable, Sequence

import numpy as np

__all__ = ["Layout"]


class Layout:
    """Documents placed one after another on one line (with a one-character gap between them).

    ``doc_ids``, ``texts``, ``lens`` and ``offsets`` are per document, in the given order; ``pos``
    maps a document id to its position. Document ids must be distinct.

    >>> from chunklab.core import Chunk, Document
    >>> lay = Layout([Document("甲", "合同"), Document("乙", "违约责任")])
    >>> lay.offsets.tolist(), lay.to_global("乙", 1), lay.to_local(4)
    ([0, 3], 4, ('乙', 1))
    >>> [b.tolist() for b in lay.chunk_bounds([Chunk("乙", 0, 0, 2, "违约"), Chunk("甲", 0, 0, 2, "合同")])]
    [[3, 0], [5, 2]]
    >>> lay.chunk_bounds([Chunk("甲", 0, 0, 3, "合同。")])
    Traceback (most recent call last):
    ...
    ValueError: chunk 0 ends at 3, past the end of document '甲' (length 2)
    """

    def __init__(self, documents: Iterable[Any]) -> None:
        docs = list(documents)
        self.doc_ids: list[str] = [d.id for d in docs]
        self.pos: dict[str, int] = {d: i for i, d in enumerate(self.doc_ids)}
        if len(self.pos) != len(self.doc_ids):
            raise ValueError("documents must have distinct ids")
        self.texts: list[str] = [d.text for d in docs]
        self.lens = np.array([len(t) for t in self.texts], dtype=np.int64)
        self.offsets = (np.concatenate(([0], np.cumsum(self.lens + 1)[:-1])).astype(np.int64) if docs
                        else np.zeros(0, np.int64))

    def __len__(self) -> int:
        return len(self.doc_ids)

    def __repr__(self) -> str:
        return f"Layout({len(self.doc_ids)} documents, {int(self.lens.sum())} characters)"

    def matches(self, documents: Sequence[Any]) -> bool:
        """True when ``documents`` are this layout's documents: the same ids, in the same order, of the same lengths."""
        return (len(documents) == len(self.doc_ids)
                and all(d.id == i and len(d.text) == n for d, i, n in zip(documents, self.doc_ids, self.lens.tolist())))

    def doc_index(self, doc_id: str) -> int:
        """Position of document ``doc_id``; a ValueError names an id that is not in the corpus."""
        try:
            return self.pos[doc_id]
        except KeyError:
            raise ValueError(f"unknown document id {doc_id!r} (not in the corpus)") from None

    def to_global(self, doc_id: str, pos: int) -> int:
        """Global position of offset ``pos`` of document ``doc_id``."""
        return int(self.offsets[self.doc_index(doc_id)] + pos)

    def to_local(self, g: int) -> tuple[str, int]:
        """``(doc_id, offset)`` of global position ``g`` (the inverse of :meth:`to_global`)."""
        d = int(self.doc_of(np.asarray(g)))
        return self.doc_ids[d], int(g) - int(self.offsets[d])

    def doc_of(self, g: np.ndarray) -> np.ndarray:
        """Document position of each global position in ``g`` (by binary search on the offsets)."""
        return np.searchsorted(self.offsets, g, side="right") - 1

    def text(self, a: int, b: int) -> str:
        """The text at global ``[a, b)``, which must lie within one document."""
        d = int(self.doc_of(np.asarray(a)))
        off = int(self.offsets[d])
        return self.texts[d][a - off:b - off]

    def chunk_bounds(self, chunks: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
        """Global ``[start, end)`` of each chunk, as two int64 arrays.

        The one check of a chunking against its corpus: a chunk of a document that is not in the
        corpus, or ending past the end of its document, is a ValueError naming the chunk.
        """
        n = len(chunks)
        pos = self.pos
        try:
            d = np.fromiter((pos[c.doc_id] for c in chunks), dtype=np.int64, count=n)
        except KeyError as exc:
            i = next(i for i, c in enumerate(chunks) if c.doc_id not in pos)
            raise ValueError(f"chunk {i} refers to unknown document id {exc.args[0]!r} (not in the corpus)") from None
        s = np.fromiter((c.start for c in chunks), dtype=np.int64, count=n)
        e = np.fromiter((c.end for c in chunks), dtype=np.int64, count=n)
        if n and np.any(e > self.lens[d]):
            i = int(np.flatnonzero(e > self.lens[d])[0])
            raise ValueError(f"chunk {i} ends at {e[i]}, past the end of document {chunks[i].doc_id!r} "
                             f"(length {int(self.lens[d[i]])})")
        off = self.offsets[d]
        return off + s, off + e

    def gold_bounds(self, span_lists: Sequence[Sequence[Any]]) -> tuple[np.ndarray, np.ndarray]:
        """Global gold spans, merged per question and padded: ``(gs, ge)`` of shape n_questions x M.

        A span is an object with ``doc_id/start/end`` or a ``(doc_id, start, end)`` tuple; it must be
        non-empty and inside its document, and every question needs one. Overlapping or touching
        spans of one question are merged. Padding entries are ``(-2, -2)`` (they overlap nothing).

        >>> from chunklab.core import Document
        >>> gs, ge = Layout([Document("d", "0123456789")]).gold_bounds([[("d", 0, 2), ("d", 2, 4)], [("d", 5, 6)]])
        >>> gs.tolist(), ge.tolist()
        ([[0], [5]], [[4], [6]])
        """
        merged: list[list[tuple[int, int]]] = []
        for qi, spans in enumerate(span_lists):
            iv = []
            for sp_ in spans:
                doc_id, s, e = span_fields(sp_)
                d = self.doc_index(doc_id)
                if not (0 <= s < e <= self.lens[d]):
                    raise ValueError(
                        f"question {qi}: gold span [{s}, {e}) must be non-empty and inside document {doc_id!r} "
                        f"(length {int(self.lens[d])})")
                iv.append((int(self.offsets[d] + s), int(self.offsets[d] + e)))
            if not iv:
                raise ValueError(f"question {qi} has no gold span")
            merged.append(union(iv))
        m = max((len(x) for x in merged), default=1)
        gs = np.full((len(merged), m), -2, dtype=np.int64)
        ge = np.full((len(merged), m), -2, dtype=np.int64)
        for i, iv in enumerate(merged):
            for j, (s, e) in enumerate(iv):
                gs[i, j], ge[i, j] = s, e
        return gs, ge


def span_fields(span: Any) -> tuple[str, int, int]:
    """``(doc_id, start, end)`` of a span object (``doc_id/start/end``) or tuple."""
    if hasattr(span, "doc_id"):
        return span.doc_id, int(span.start), int(span.end)
    doc_id, s, e = span
    return doc_id, int(s), int(e)


def union(iv: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """The union of intervals, as sorted disjoint intervals (touching ones are merged)."""
    out: list[tuple[int, int]] = []
    for s, e in sorted(iv):
        if out and s <= out[-1][1]:
            if e > out[-1][1]:
                out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return out
