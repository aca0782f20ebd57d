"""Chapter 2, the linguistic family: how recursive, sentence, paragraph and line chunking break.

>>> strip_marks("第一句。第二句！")
('第一句第二句', [0, 1, 2, 4, 5, 6])
"""
from __future__ import annotations

import unicodedata
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from ... import strategies  # noqa: F401  (importing it registers every strategy)
from ...base import chunk, get_strategy
from ...core import Chunk, Document
from ...strategies.structure import markdown_headings
from ...evaluation.stats import deciding_levels
from ..claims import fmt_diff

__all__ = ["strip_marks", "cuts_at_sentence_end", "degenerate_recursive", "long_article_cuts", "straddles",
           "rate_diff", "rate_diffs_holm", "heading_straddles", "paragraph_fallback", "open_lines", "ocr_line_cuts"]

#: A cut "at a sentence end" has one of these between the two chunks' text.
SENT_END = set("。！？；!?;\n")


def strip_marks(text: str) -> tuple[str, list[int]]:
    """The text without punctuation and whitespace, and the original position of each character kept."""
    keep = [i for i, ch in enumerate(text) if not (ch.isspace() or unicodedata.category(ch).startswith("P"))]
    return "".join(text[i] for i in keep), keep


def cuts_at_sentence_end(chunks: Sequence[Chunk], original: str, to_original: Sequence[int] | None = None) -> np.ndarray:
    """Per cut between consecutive chunks: 1.0 when it falls at a sentence end or line break of ``original``.

    A cut spans from the last non-space character of one chunk to the first of the next; with
    ``to_original`` (as from :func:`strip_marks`) both are mapped back to ``original`` first.

    >>> from chunklab.core import Chunk
    >>> cuts_at_sentence_end([Chunk("d", 0, 0, 3, "甲。 "), Chunk("d", 1, 3, 5, "乙丙")], "甲。 乙丙").tolist()
    [1.0]
    """
    out = []
    for c, nxt in zip(chunks, chunks[1:]):
        a = c.start + len(c.text.rstrip()) - 1
        b = nxt.start + len(nxt.text) - len(nxt.text.lstrip())
        if to_original is not None:
            a, b = to_original[a], to_original[b]
        out.append(any(ch in SENT_END for ch in original[a:b]))
    return np.array(out, float)


def degenerate_recursive(doc: Document, sizes: Iterable[int] = (200, 512)) -> dict[str, Any]:
    """Recursive vs fixed on ``doc`` and on ``doc`` stripped of punctuation and whitespace.

    ``rows``: (size, text, recursive chunks, recursive cuts at a sentence end, fixed cuts at one,
    identical chunkings?). ``numbers``: the 512 rates, the share removed, and ``identical_when_stripped``.
    """
    plain_text, keep = strip_marks(doc.text)
    plain = Document(doc.id + "-plain", plain_text)
    rows, same_when_stripped, numbers = [], [], {}
    for size in sizes:
        for label, d, to_orig in (("原文", doc, None), ("去掉标点和空白", plain, keep)):
            rec = chunk(d, "recursive", target=size)
            fix = chunk(d, "fixed", size=size)
            r, f = cuts_at_sentence_end(rec, doc.text, to_orig), cuts_at_sentence_end(fix, doc.text, to_orig)
            same = [(c.start, c.end) for c in rec] == [(c.start, c.end) for c in fix]
            rows.append((size, label, len(rec), f"{r.mean():.1%}", f"{f.mean():.1%}", "是" if same else "否"))
            if to_orig is not None:
                same_when_stripped.append(same)
            if size == 512:
                key = "orig" if to_orig is None else "plain"
                numbers[f"deg_rec_{key}"], numbers[f"deg_fix_{key}"] = float(r.mean()), float(f.mean())
    numbers["deg_removed"] = 1 - len(plain_text) / len(doc.text)
    numbers["identical_when_stripped"] = all(same_when_stripped)
    return {"rows": rows, "numbers": numbers}


def long_article_cuts(law: dict[str, Any], target: int = 512) -> dict[str, Any]:
    """The articles recursive ``target`` cuts (from :func:`~.ch2_geometry.law_structure`'s output).

    ``all_long``: every one of them is at least ``target`` characters; ``example``: (document,
    article, chunks of that document, offset of the cut) for one shorter than 900 characters.
    """
    cut = [law["articles"][i] for i in np.flatnonzero(law["cut_flags"][f"recursive {target}"])]
    doc, art = next((d, a) for d, a in cut if a["end"] - a["start"] < 900)
    chunks = [c for c in law["chunks"][f"recursive {target}"] if c.doc_id == doc.id]
    at = next(c.end for c in chunks if art["start"] < c.end < art["end"])
    return {"n": len(cut), "all_long": all(len(d.text[a["start"]:a["end"]].strip()) >= target for d, a in cut),
            "example": (doc, art, chunks, at)}


def straddles(doc: Document, chunks: Sequence[Chunk]) -> list[bool]:
    """Per chunk: does it hold body text of one section followed by a heading of another?

    >>> from chunklab.core import Document, Chunk
    >>> d = Document("d", "# 甲\\n正文一\\n# 乙\\n正文二")
    >>> straddles(d, [Chunk("d", 0, 0, 12, d.text[:12]), Chunk("d", 1, 12, 15, d.text[12:])])
    [True, False]
    """
    heads = [(s, body) for s, body, _, _ in markdown_headings(doc.text)[0]]
    flags = []
    for c in chunks:
        pos, hit = c.start, False
        for s, body in heads:
            if c.start < s < c.end and doc.text[pos:s].strip():
                hit = True
                break
            if s >= c.start:
                pos = max(pos, body)
        flags.append(hit)
    return flags


def _rate_draws(a: dict[str, Sequence[bool]], b: dict[str, Sequence[bool]], n: int, seed: int):
    """The difference of the two pooled rates and its cluster-bootstrap draws (whole documents)."""
    docs = list(a)
    hits = np.array([[sum(x[d]) for d in docs] for x in (a, b)], float)
    sizes = np.array([[len(x[d]) for d in docs] for x in (a, b)], float)
    w = np.random.default_rng(seed).multinomial(len(docs), np.full(len(docs), 1 / len(docs)), size=n)
    draws = (w @ hits[0]) / (w @ sizes[0]) - (w @ hits[1]) / (w @ sizes[1])
    return hits[0].sum() / sizes[0].sum() - hits[1].sum() / sizes[1].sum(), draws


def rate_diff(a: dict[str, Sequence[bool]], b: dict[str, Sequence[bool]], n: int = 2000, seed: int = 0) -> dict:
    """Difference of two per-chunk rates over the same documents, ``a = {doc: flags}``.

    A cluster bootstrap that resamples whole documents (the same draw for both chunkings), since
    chunks of one document are not independent. Returns ``diff``, ``lo``, ``hi`` (95%).
    """
    diff, draws = _rate_draws(a, b, n, seed)
    return {"diff": diff, "lo": float(np.quantile(draws, 0.025)), "hi": float(np.quantile(draws, 0.975))}


def rate_diffs_holm(a: dict[str, Sequence[bool]], others: dict[str, dict[str, Sequence[bool]]], n: int = 2000,
                    seed: int = 0, alpha: float = 0.05) -> dict[str, dict]:
    """:func:`rate_diff` of ``a`` against each of ``others``, made together and Holm-corrected.

    Each result carries the interval that decides (drawn at Holm's level,
    :func:`~chunklab.evaluation.stats.deciding_levels`), ``level``, ``m`` and ``method`` — so
    :func:`~chunklab.book.claims.fmt_diff` prints it as a corrected interval.

    >>> a = {"x": [True] * 5 + [False] * 5, "y": [True, False]}
    >>> r = rate_diffs_holm(a, {"same": a, "none": {"x": [False] * 10, "y": [False] * 2}})
    >>> r["none"]["m"], r["none"]["level"], r["none"]["significant"]   # the smaller p: tested first
    (2, 0.975, True)
    >>> r["same"]["level"], r["same"]["significant"]                  # then at the usual level
    (0.95, False)
    """
    runs = {k: _rate_draws(a, b, n, seed) for k, b in others.items()}
    ps = []
    for diff, draws in runs.values():
        if np.all(draws == 0):
            ps.append(1.0)
        else:
            tail = min(np.count_nonzero(draws <= 0), np.count_nonzero(draws >= 0))
            ps.append(min(1.0, 2 * (tail + 1) / (len(draws) + 1)))
    out = {}
    for (k, (diff, draws)), p, al in zip(runs.items(), ps, deciding_levels(ps, "holm", alpha)):
        lo, hi = (float(x) for x in np.quantile(draws, [al / 2, 1 - al / 2]))
        out[k] = {"diff": diff, "lo": lo, "hi": hi, "p": p, "level": 1 - al, "m": len(runs), "method": "holm",
                  "significant": bool(lo > 0 or hi < 0)}
    return out


#: The chunkings compared on headings (about 500 characters each).
STRADDLE_SETTINGS = [("fixed", {"size": 500}), ("recursive", {"target": 500}), ("sentence", {"target": 500}),
                     ("markdown", {"target": 500})]


def heading_straddles(md_docs: Sequence[Document]) -> dict[str, Any]:
    """Share of chunks whose body runs across a heading, per chunking in :data:`STRADDLE_SETTINGS`.

    ``numbers``: the sentence and markdown rates, sentence − fixed and sentence − recursive (made
    together, Holm-corrected; intervals resample whole documents) and ``sentence_indistinct`` (both
    deciding intervals hold 0).
    """
    flags = {name: {d.id: straddles(d, chunk(d, name, **p)) for d in md_docs} for name, p in STRADDLE_SETTINGS}
    counts = {k: (sum(map(sum, v.values())), sum(map(len, v.values()))) for k, v in flags.items()}
    vs = rate_diffs_holm(flags["sentence"], {o: flags[o] for o in ("fixed", "recursive")})
    return {"rows": [(k, bad, total, f"{bad / total:.1%}") for k, (bad, total) in counts.items()],
            "numbers": {"straddle_sentence": counts["sentence"][0] / counts["sentence"][1],
                        "straddle_markdown": counts["markdown"][0] / counts["markdown"][1],
                        "straddle_vs_fixed": fmt_diff(vs["fixed"]), "straddle_vs_rec": fmt_diff(vs["recursive"]),
                        "sentence_indistinct": all(r["lo"] < 0 < r["hi"] for r in vs.values())}}


def paragraph_fallback(xb_docs: Sequence[Document], law_docs: Sequence[Document],
                       law_recursive: Sequence[Chunk]) -> dict[str, Any]:
    """Where ``paragraph`` (target 500) is really recursive: documents with half or more fallback chunks.

    ``numbers``: ``para_fb`` (fallback share over all of ``xb_docs``) and ``para_same_on_laws``
    (paragraph 512 gives exactly ``law_recursive``'s chunks).
    """
    rows = []
    for d in xb_docs:
        cs = chunk(d, "paragraph", target=500)
        fb = sum(c.meta.get("level") == "recursive" for c in cs)
        if fb / len(cs) >= 0.5:
            rows.append((d.id, len(cs), fb, f"{fb / len(cs):.0%}"))
    allp = get_strategy("paragraph", target=500).split_documents(xb_docs)
    lawp = [(c.doc_id, c.start, c.end) for c in get_strategy("paragraph", target=512).split_documents(law_docs)]
    return {"rows": rows, "numbers": {
        "para_fb": sum(c.meta.get("level") == "recursive" for c in allp) / len(allp),
        "para_same_on_laws": lawp == [(c.doc_id, c.start, c.end) for c in law_recursive]}}


#: A line ending with one of these closes its sentence (or is a table row, a heading mark's end...).
_CLOSERS = "。！？；：:，,、）)”」|*"


def open_lines(doc: Document) -> tuple[list[str], int]:
    """Non-empty lines (all but the last) ending with no punctuation, and the number of line breaks.

    >>> open_lines(Document("d", "第一行没有标点\\n第二行。\\n第三行"))
    (['第一行没有标点'], 2)
    """
    lines = [ln for ln in doc.text.split("\n") if ln.strip()]
    return [ln for ln in lines[:-1] if ln.rstrip()[-1] not in _CLOSERS], max(1, len(lines) - 1)


def ocr_line_cuts(ocr: Document, handbook: Document, word_spans: Callable[[str], Iterable[tuple]],
                  lines: int = 3) -> dict[str, Any]:
    """Line chunking of a hard-wrapped OCR text: how many breaks fall mid-sentence, and cuts mid-word.

    ``word_spans(text)`` yields ``(word, start, end)`` (``jieba.tokenize`` does). Returns
    ``chunks`` (the OCR text by ``lines`` lines), ``example`` (text either side of a mid-word cut)
    and ``numbers``.
    """
    def share(doc):
        open_, n = open_lines(doc)
        return len(open_) / n

    def cuts_a_word(end, start):
        left, right = ocr.text[end - 6:end], ocr.text[start:start + 6]
        return any(s < len(left) < e for _, s, e in word_spans(left + right))

    hb_open = open_lines(handbook)[0]
    chunks = chunk(ocr, "line", target=500, lines=lines)
    in_word = [c.end for c, nxt in zip(chunks, chunks[1:]) if cuts_a_word(c.end, nxt.start)]
    at = in_word[0]
    return {"chunks": chunks, "example": (ocr.text[at - 10:at], ocr.text[at:at + 10].strip()),
            "numbers": {"wrap_ocr": share(ocr), "wrap_handbook": share(handbook),
                        "wrap_handbook_heads": sum(ln.lstrip().startswith("#") for ln in hb_open) / len(hb_open),
                        "ocr_cuts": len(chunks) - 1, "ocr_in_word_n": len(in_word),
                        "ocr_in_word": len(in_word) / (len(chunks) - 1)}}
