"""Chapter 2, the last sections: checking other splitters' output, and the explorer's statistics.

Nothing here imports LangChain: the chapter passes its splitter in (as a callable), so these
helpers measure any splitter that returns strings or start indices.
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Callable, Sequence

import numpy as np

from ...core import Chunk, Document
from ...evaluation import chunks_from_strings, structure_metrics

__all__ = ["lost_characters", "offset_audit", "explorer_stats"]


def lost_characters(doc: Document, pieces: Sequence[str]) -> dict[str, Any]:
    """Place a splitter's strings back on ``doc`` and count the non-space characters no piece covers.

    >>> lost_characters(Document("d", "甲。乙。"), ["甲", "乙。"])["lost"]
    {'。': 1}
    """
    chunks = chunks_from_strings(doc, list(pieces))
    covered = np.zeros(len(doc.text), bool)
    for c in chunks:
        covered[c.start:c.end] = True
    lost = Counter(ch for ch, cov in zip(doc.text, covered) if not cov and not ch.isspace())
    return {"chunks": chunks, "lost": dict(lost), "n_lost": sum(lost.values())}


def offset_audit(pairs: Callable[[str, int, int], tuple[Sequence[Any], Sequence[Chunk]]],
                 cases: Sequence[tuple[str, Sequence[Document], Sequence[tuple[int, int]]]]) -> dict[str, Any]:
    """Count chunks whose after-the-fact start index differs from the true one.

    ``pairs(text, size, overlap)`` returns the other splitter's documents (with
    ``metadata["start_index"]``) and chunklab's identical chunks; ``cases`` are (label, documents,
    settings). Rows: (label, setting, chunks, wrong, an example); ``wrong_real`` / ``total_real``
    add up the settings with ``size >= 200`` (the common ones).
    """
    rows, wrong_real, total_real = [], 0, 0
    for label, docs, settings in cases:
        for size, overlap in settings:
            n = wrong = 0
            example = None
            for doc in docs:
                theirs, ours = pairs(doc.text, size, overlap)
                n += len(ours)
                for d, c in zip(theirs, ours):
                    if d.metadata["start_index"] != c.start:
                        wrong += 1
                        example = example or repr(c.text)
            rows.append((label, f"({size}, {overlap})", n, wrong, example or ""))
            if size >= 200:
                wrong_real, total_real = wrong_real + wrong, total_real + n
    return {"rows": rows, "wrong_real": wrong_real, "total_real": total_real}


def explorer_stats(doc: Document, chunks: Sequence[Chunk]) -> dict[str, Any]:
    """What the strategy explorer prints above each view: chunk count and paragraph alignment."""
    m = structure_metrics([doc], chunks)
    return {"块数": m["chunks"], "段落对齐率": m["boundary_alignment"]}
