"""Structure of a chunking, independent of questions (claims C15, C18, C21).

Chunk sizes, overlap inflation, parse failures, alignment of chunk starts with paragraphs and
articles, and articles cut apart: see :func:`structure_metrics`, and :func:`structure_flags` for the
0/1 per chunk and per article behind its ratios.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..retrieval.layout import Layout

__all__ = ["structure_flags", "structure_metrics"]


def _span_of(a: Any) -> tuple[int, int]:
    if isinstance(a, dict):
        return int(a["start"]), int(a["end"])
    if hasattr(a, "start"):
        return int(a.start), int(a.end)
    return int(a[0]), int(a[1])


class _Structure:
    """Per-corpus positions used by :func:`structure_metrics`, computed once and cached.

    Whitespace is kept as its maximal runs on the layout line (the one-character gaps between
    documents count as whitespace), not as per-character arrays: the corpus costs a few bytes
    per line, not per character.
    """

    def __init__(self, documents: Sequence[Any]) -> None:
        self.layout = Layout(documents)
        lens, offsets = self.layout.lens, self.layout.offsets
        self.n = n = int(lens.sum() + max(len(lens) - 1, 0))  # length of the line, gaps included
        ws_s, ws_e, ps = [], [], []
        for i, (d, off) in enumerate(zip(documents, offsets.tolist())):
            a, b, para = _space_runs(d.text)
            ws_s.append(a + off); ws_e.append(b + off); ps.append(para + off)
            if i < len(lens) - 1:  # the gap after the document
                g = off + len(d.text)
                ws_s.append(np.array([g], dtype=np.int64)); ws_e.append(np.array([g + 1], dtype=np.int64))
        s_ = np.concatenate(ws_s) if ws_s else np.zeros(0, np.int64)
        e_ = np.concatenate(ws_e) if ws_e else np.zeros(0, np.int64)
        # runs touching across a gap are one run
        new = np.ones(len(s_), dtype=bool)
        new[1:] = s_[1:] != e_[:-1]
        last = np.ones(len(s_), dtype=bool)
        last[:-1] = new[1:]
        self.ws_start, self.ws_end = s_[new], e_[last]
        art_s, art_e = [], []
        self.has_articles = False
        for d, off in zip(documents, offsets):
            arts = d.meta.get("articles", ()) or ()
            if arts:
                self.has_articles = True
                sp_ = np.array([_span_of(a) for a in arts], dtype=np.int64).reshape(-1, 2) + off
                art_s.append(sp_[:, 0]); art_e.append(sp_[:, 1])
        self.para_starts = np.unique(np.concatenate(ps)) if ps else np.zeros(0, np.int64)
        if art_s:
            s_, e_ = np.concatenate(art_s), np.concatenate(art_e)
            s2 = self.next_non_ws(np.minimum(s_, n))
            e2 = self.trim_end(np.minimum(e_, n))
            ok = e2 > s2
            self.art_s, self.art_e = s2[ok], e2[ok]
        else:
            self.art_s = self.art_e = np.zeros(0, np.int64)
        self.art_starts = np.unique(self.art_s)
        self.doc_chars = int(lens.sum())
        self.parse_failed = [bool(d.meta.get("parse_failed")) for d in documents]

    def next_non_ws(self, x: np.ndarray) -> np.ndarray:
        """The first position ``>= x`` that is not whitespace (``n`` if none), for each of ``x`` (in ``0..n``)."""
        x = np.asarray(x, dtype=np.int64)
        if not len(self.ws_start):
            return x
        r = np.searchsorted(self.ws_start, x, side="right") - 1
        rc = np.maximum(r, 0)
        inside = (r >= 0) & (x < self.ws_end[rc])
        return np.where(inside, self.ws_end[rc], x)

    def trim_end(self, x: np.ndarray) -> np.ndarray:
        """The smallest ``q <= x`` with ``[q, x)`` all whitespace (an end at ``x`` trimmed on the right)."""
        x = np.asarray(x, dtype=np.int64)
        if not len(self.ws_start):
            return x
        r = np.searchsorted(self.ws_start, x - 1, side="right") - 1
        rc = np.maximum(r, 0)
        inside = (x > 0) & (r >= 0) & (x - 1 < self.ws_end[rc])
        return np.where(inside, self.ws_start[rc], x)


def _space_runs(text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Maximal runs ``[start, end)`` of whitespace characters of ``text``, and its paragraph starts.

    A paragraph starts at the first non-space character of the text or of a line: at 0 when the
    text starts with one, else at the end of a whitespace run that starts the text or holds a
    newline (what ``(?:^|\\n)[^\\S\\n]*(?=\\S)`` finds). Three int64 arrays.
    """
    if not text:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    ws = np.isin(codes, _WS_CODES)
    d = np.diff(ws.view(np.int8), prepend=np.int8(0), append=np.int8(0))
    a, b = np.flatnonzero(d == 1).astype(np.int64), np.flatnonzero(d == -1).astype(np.int64)
    nl = np.flatnonzero(codes == 10)
    opens = (b < len(codes)) & ((a == 0) | (np.searchsorted(nl, a) < np.searchsorted(nl, b)))
    para = b[opens]
    if not ws[0]:
        para = np.concatenate(([0], para)).astype(np.int64)
    return a, b, para


#: Every whitespace character (str.isspace) below U+3001; U+3000 is the ideographic space.
_WS = "".join(chr(c) for c in range(0x3001) if chr(c).isspace())
_WS_CODES = np.array([ord(c) for c in _WS], dtype=np.uint32)
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
    in_para, in_art, cut = _flags(st, chunks)
    out["boundary_alignment"] = float((in_para | in_art).mean()) if n else float("nan")
    out["paragraph_alignment"] = float(in_para.mean()) if n else float("nan")
    out["clause_alignment"] = (float(in_art.mean()) if n else float("nan")) if st.has_articles else None
    if st.has_articles:
        out["clause_cut_rate"] = float(cut.mean()) if len(cut) else 0.0
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


def structure_flags(documents: Sequence[Any], chunks: Sequence[Any]) -> dict[str, np.ndarray]:
    """The 0/1 behind :func:`structure_metrics`' ratios, for confidence intervals and paired tests.

    ``"aligned"``: per chunk (in ``chunks``' order), True when its first non-space character
    starts a paragraph or an article (C15; its mean is ``boundary_alignment``). ``"cut"``: per
    article of ``documents`` (their order, then ``meta["articles"]`` order; articles that are
    only whitespace are left out), True when no single chunk holds the article trimmed of
    surrounding whitespace (C21; its mean is ``clause_cut_rate``).

    >>> from chunklab.core import Document, Chunk
    >>> d = Document("d", "第一条 甲。\\n第二条 乙。", meta={"articles": [(0, 6), (7, 13)]})
    >>> f = structure_flags([d], [Chunk("d", 0, 0, 9, "第一条 甲。\\n第二"), Chunk("d", 1, 9, 13, "条 乙。")])
    >>> f["aligned"].tolist(), f["cut"].tolist()
    ([True, False], [False, True])
    """
    in_para, in_art, cut = _flags(_structure(documents), chunks)
    return {"aligned": in_para | in_art, "cut": cut}


def _flags(st: _Structure, chunks: Sequence[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per chunk: starts a paragraph, starts an article; per article: cut (see :func:`structure_flags`)."""
    gs, ge = st.layout.chunk_bounds(chunks)
    starts = st.next_non_ws(gs) if len(chunks) else gs
    in_para = _in_sorted(starts, st.para_starts)
    in_art = _in_sorted(starts, st.art_starts)
    if not len(chunks):
        cut = np.ones(len(st.art_s), dtype=bool)
    else:
        order = np.argsort(gs, kind="stable")
        s_sorted, reach = gs[order], np.maximum.accumulate(ge[order])
        j = np.searchsorted(s_sorted, st.art_s, side="right") - 1
        cut = (j < 0) | (reach[np.maximum(j, 0)] < st.art_e)
    return in_para, in_art, cut


def _in_sorted(x: np.ndarray, sorted_values: np.ndarray) -> np.ndarray:
    """``np.isin(x, sorted_values)`` for a sorted array, by binary search (no hashing or sorting)."""
    if len(sorted_values) == 0:
        return np.zeros(len(x), dtype=bool)
    pos = np.minimum(np.searchsorted(sorted_values, x), len(sorted_values) - 1)
    return sorted_values[pos] == x
