"""Structure of a chunking, independent of questions (claims C15, C18, C21).

Chunk sizes, overlap inflation, parse failures, alignment of chunk starts with paragraphs and
articles, and articles cut apart: see :func:`structure_metrics`.
"""
from __future__ import annotations

import re
from typing import Any, Sequence

import numpy as np

from ..retrieval.layout import Layout

__all__ = ["structure_metrics"]


def _span_of(a: Any) -> tuple[int, int]:
    if isinstance(a, dict):
        return int(a["start"]), int(a["end"])
    if hasattr(a, "start"):
        return int(a.start), int(a.end)
    return int(a[0]), int(a[1])


def _paragraph_starts(text: str) -> np.ndarray:
    """Positions that start a paragraph: the first non-space character of the text or of a line."""
    arr = [m.end() for m in _PARA.finditer(text)]
    return np.array(arr, dtype=np.int64)


_PARA = re.compile(r"(?:^|\n)[^\S\n]*(?=\S)")


class _Structure:
    """Per-corpus positions used by :func:`structure_metrics`, computed once and cached."""

    def __init__(self, documents: Sequence[Any]) -> None:
        self.layout = Layout(documents)
        texts = [d.text for d in documents]
        joined = "\n".join(texts)  # the layout's one-character gaps, as newlines
        n = len(joined)
        space = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32)
        ws = np.isin(space, np.array([ord(c) for c in _WS], dtype=np.uint32)) if n else np.zeros(0, bool)
        # next_non_ws[p]: the first position >= p that is not whitespace (n if none).
        idx = np.where(ws, n, np.arange(n))
        self.next_non_ws = np.concatenate((np.minimum.accumulate(idx[::-1])[::-1], [n])).astype(np.int64)
        # prev_end[p]: the smallest q <= p with text[q:p] all whitespace (right-trim of an end at p).
        idx2 = np.where(ws, n + 1, np.arange(n) + 1)
        last = np.maximum.accumulate(np.where(idx2 == n + 1, 0, idx2))
        self.trim_end = np.concatenate(([0], last)).astype(np.int64)
        ps = []
        art_s, art_e = [], []
        self.has_articles = False
        for d, off in zip(documents, self.layout.offsets):
            ps.append(_paragraph_starts(d.text) + off)
            arts = d.meta.get("articles", ()) or ()
            if arts:
                self.has_articles = True
                sp_ = np.array([_span_of(a) for a in arts], dtype=np.int64).reshape(-1, 2) + off
                art_s.append(sp_[:, 0]); art_e.append(sp_[:, 1])
        self.para_starts = np.unique(np.concatenate(ps)) if ps else np.zeros(0, np.int64)
        if art_s:
            s_, e_ = np.concatenate(art_s), np.concatenate(art_e)
            s2 = self.next_non_ws[np.minimum(s_, n)]
            e2 = self.trim_end[np.minimum(e_, n)]
            ok = e2 > s2
            self.art_s, self.art_e = s2[ok], e2[ok]
        else:
            self.art_s = self.art_e = np.zeros(0, np.int64)
        self.art_starts = np.unique(self.art_s)
        self.doc_chars = int(sum(len(t) for t in texts))
        self.parse_failed = [bool(d.meta.get("parse_failed")) for d in documents]


#: Every whitespace character (str.isspace) below U+3001; U+3000 is the ideographic space.
_WS = "".join(chr(c) for c in range(0x3001) if chr(c).isspace())
_STRUCT_CACHE: dict[tuple[int, ...], tuple[Any, _Structure]] = {}


def _structure(documents: Sequence[Any]) -> _Structure:
    key = tuple(id(d) for d in documents)
    hit = _STRUCT_CACHE.get(key)
    if hit is None:
        if len(_STRUCT_CACHE) >= 4:
            _STRUCT_CACHE.clear()
        hit = _STRUCT_CACHE[key] = (list(documents), _Structure(documents))  # keeps ids alive
    return hit[1]


def structure_metrics(documents: Sequence[Any], chunks: Sequence[Any], ingest_seconds: float | None = None) -> dict[str, Any]:
    """Question-free measures of a chunking.

    * ``chunks``, ``total_chars`` (sum of chunk lengths), ``doc_chars``, ``overlap_inflation``
      (``total_chars / doc_chars``: 1.0 without overlap);
    * ``parse_failure_rate``: share of documents whose ``meta["parse_failed"]`` is true, and
      ``chunk_parse_failure_rate`` for chunks;
    * ``boundary_alignment`` (C15): share of chunks whose first non-space character starts a
      paragraph (the first non-space character of the document or of a line) or an article
      (``meta["articles"]`` spans — dicts with ``start``/``end``, objects, or pairs — at their
      first non-space character); ``paragraph_alignment`` and ``clause_alignment`` separately
      (the latter None without articles);
    * ``clause_cut_rate`` (C21): share of articles whose span (trimmed of surrounding whitespace)
      lies in no single chunk; None when no document has ``meta["articles"]``;
    * ``len_mean``, ``len_median``, ``len_p90``, ``len_max``, ``len_min``, ``len_std`` (C18, chars);
    * ``ingest_seconds`` when given.

    Per-corpus positions are cached, so measuring many chunkings of one corpus is cheap.

    >>> from chunklab.core import Document, Chunk
    >>> d = Document("d", "第一条 甲。\\n第二条 乙。", meta={"articles": [(0, 6), (7, 13)]})
    >>> m = structure_metrics([d], [Chunk("d", 0, 0, 9, "第一条 甲。\\n第二"), Chunk("d", 1, 9, 13, "条 乙。")])
    >>> m["boundary_alignment"], m["clause_cut_rate"], m["overlap_inflation"]
    (0.5, 0.5, 1.0)
    """
    st = _structure(documents)
    lens = np.array([c.end - c.start for c in chunks], dtype=float)
    out: dict[str, Any] = {
        "chunks": len(chunks),
        "total_chars": int(lens.sum()),
        "doc_chars": st.doc_chars,
        "overlap_inflation": float(lens.sum() / st.doc_chars) if st.doc_chars else float("nan"),
        "parse_failure_rate": float(np.mean(st.parse_failed)) if st.parse_failed else 0.0,
        "chunk_parse_failure_rate": float(np.mean([bool(c.meta.get("parse_failed")) for c in chunks])) if chunks else 0.0,
    }
    n = len(chunks)
    gs, ge = st.layout.chunk_bounds(chunks)
    starts = st.next_non_ws[gs] if n else gs
    in_para = _in_sorted(starts, st.para_starts)
    in_art = _in_sorted(starts, st.art_starts)
    out["boundary_alignment"] = float((in_para | in_art).mean()) if n else float("nan")
    out["paragraph_alignment"] = float(in_para.mean()) if n else float("nan")
    out["clause_alignment"] = (float(in_art.mean()) if n else float("nan")) if st.has_articles else None
    if st.has_articles:
        if len(st.art_s) == 0:
            out["clause_cut_rate"] = 0.0
        elif n == 0:
            out["clause_cut_rate"] = 1.0
        else:
            order = np.argsort(gs, kind="stable")
            s_sorted, reach = gs[order], np.maximum.accumulate(ge[order])
            j = np.searchsorted(s_sorted, st.art_s, side="right") - 1
            cut = (j < 0) | (reach[np.maximum(j, 0)] < st.art_e)
            out["clause_cut_rate"] = float(cut.mean())
    else:
        out["clause_cut_rate"] = None
    if n:
        out.update(len_mean=float(lens.mean()), len_median=float(np.median(lens)),
                   len_p90=float(np.percentile(lens, 90)), len_max=int(lens.max()), len_min=int(lens.min()),
                   len_std=float(lens.std()))
    else:
        out.update(len_mean=float("nan"), len_median=float("nan"), len_p90=float("nan"), len_max=0, len_min=0,
                   len_std=float("nan"))
    if ingest_seconds is not None:
        out["ingest_seconds"] = float(ingest_seconds)
    return out


def _in_sorted(x: np.ndarray, sorted_values: np.ndarray) -> np.ndarray:
    """``np.isin(x, sorted_values)`` for a sorted array, by binary search (no hashing or sorting)."""
    if len(sorted_values) == 0:
        return np.zeros(len(x), dtype=bool)
    pos = np.minimum(np.searchsorted(sorted_values, x), len(sorted_values) - 1)
    return sorted_values[pos] == x
