"""Counterfactual miss diagnosis: which change would have turned each miss into a hit.

:func:`~chunklab.evaluation.misses.attribute_misses` (run by every
:func:`~chunklab.evaluation.evaluate`) labels misses from geometry alone. :func:`diagnose` tests
each label by re-retrieving the question on a changed chunking or ranking: ``crowded`` (dropping
near duplicates from the ranking brings the evidence chunk into the top k), ``diluted`` (cutting
the evidence's window out as a chunk of its own gets it retrieved), ``ranked_low`` (neither; its
``rerank`` flag says whether the evidence chunk is within the ranking's depth, where a re-ranker
could still find it). A question that retrieved nothing at all keeps its label and is marked
``nothing_retrieved`` (with ``retrieved`` 0): its words, not the chunking, are what to change.
"""
from __future__ import annotations

import dataclasses
import warnings
from typing import Any, Mapping, Sequence

import numpy as np

from ..core import Chunk
from ..retrieval.embedders import EMBEDDERS
from ..retrieval.layout import Layout
from .metrics import select_budget
from .misses import _longest_span, attribute_misses
from .run import evaluate

__all__ = ["WINDOW_PAD", "diagnose", "window_chunks"]

#: Characters of context kept on each side of the evidence in :func:`diagnose`'s window chunk.
WINDOW_PAD = 50


def window_chunks(chunks: Sequence[Chunk], texts: Mapping[str, str],
                  windows: Sequence[tuple[str, int, int]]) -> tuple[list[Chunk], list[int]]:
    """``chunks`` re-cut so that each window ``(doc_id, start, end)`` is a chunk of its own.

    Every chunk loses the part of it inside a window (it may become two pieces, keeping its
    ``context`` and ``meta``); the window gets the context of the chunk holding its first
    character. Windows must not overlap. Returns the chunks in document order, renumbered, and the
    position of each window among them.

    >>> cs = [Chunk("d", 0, 0, 6, "甲乙丙丁戊己"), Chunk("d", 1, 6, 10, "庚辛壬癸")]
    >>> new, pos = window_chunks(cs, {"d": "甲乙丙丁戊己庚辛壬癸"}, [("d", 4, 8)])
    >>> [c.text for c in new], pos
    (['甲乙丙丁', '戊己庚辛', '壬癸'], [1])
    """
    by_doc: dict[str, list[tuple[int, int]]] = {}
    for d, s, e in windows:
        by_doc.setdefault(d, []).append((int(s), int(e)))
    rows: list[tuple[str, int, int, str, Mapping[str, Any], int]] = []
    for c in chunks:
        pieces = [(c.start, c.end)]
        for s, e in by_doc.get(c.doc_id, ()):
            nxt = []
            for ps, pe in pieces:
                if pe <= s or ps >= e:
                    nxt.append((ps, pe))
                    continue
                if ps < s:
                    nxt.append((ps, s))
                if pe > e:
                    nxt.append((e, pe))
            pieces = nxt
        rows.extend((c.doc_id, ps, pe, c.context, c.meta, -1) for ps, pe in pieces if pe > ps)
    for w, (d, s, e) in enumerate(windows):
        ctx = next((c.context for c in chunks if c.doc_id == d and c.start <= s < c.end), "")
        rows.append((d, int(s), int(e), ctx, {"window": True}, w))
    first = {}
    for i, c in enumerate(chunks):
        first.setdefault(c.doc_id, i)
    rows.sort(key=lambda r: (first.get(r[0], len(chunks)), r[0], r[1], r[2]))
    out: list[Chunk] = []
    pos = [0] * len(windows)
    counter: dict[str, int] = {}
    for d, s, e, ctx, meta, w in rows:
        n = counter.get(d, 0)
        counter[d] = n + 1
        if w >= 0:
            pos[w] = len(out)
        out.append(Chunk(d, n, s, e, texts[d][s:e], meta=dict(meta), context=ctx))
    return out, pos


def diagnose(result: Any, documents: Sequence[Any], chunks: Sequence[Chunk], questions: Sequence[Any], *,
             index: Any = None, embedder: Any = None, pad: int = WINDOW_PAD) -> Any:
    """``result`` (an :class:`~chunklab.evaluation.EvalResult`) with its misses attributed by counterfactuals.

    For every missed question, the *window* — its longest gold span plus ``pad`` characters on
    each side (within the document) — is cut out of the chunks as a chunk of its own
    (:func:`window_chunks`), and the question is retrieved again with the result's settings
    (same engine, embedder, k or budget). Misses whose windows touch the same chunks are run in
    separate rounds, so no question's counterfactual changes another's evidence. Each bad case
    gains ``window_hit``; the symptoms of misses whose evidence lies whole in a chunk become the
    tested ones of :func:`attribute_misses`. ``index``: the :class:`~chunklab.retrieval.CorpusIndex`
    the result was computed with (BM25 and hybrid; saves re-tokenising); ``embedder``: the one
    given to ``evaluate`` (default: the settings' embedder, else the name the result recorded). The result's ``config`` records
    ``misses="counterfactual"`` and ``window_pad``.

    Cost: one retrieval of the missed questions per round (a few rounds), over chunks that differ
    only around the windows; a dense engine embeds the windows and the cut pieces (cached on disk).
    """

    s = result.settings
    if s is None or not isinstance(s.engine, str):
        raise ValueError("diagnose needs a result of evaluate() with a named engine (bm25, dense, hybrid, reference)")
    if pad < 0:
        raise ValueError(f"pad must be >= 0, got {pad!r}")
    questions = list(questions)
    ids = [str(getattr(q, "id", i)) for i, q in enumerate(questions)]
    if ids != list(result.question_ids):
        raise ValueError("questions must be the ones the result was computed on, in the same order")
    layout = index.layout if index is not None and index.layout.matches(documents) else Layout(documents)
    texts = {d.id: d.text for d in documents}
    bounds = layout.chunk_bounds(chunks)
    gold = layout.gold_bounds([q.spans for q in questions])
    cgs, cge = bounds
    hit = np.asarray(result.per_question["hit"])
    missed = np.flatnonzero(hit == 0)
    # the window of each miss, and the region of chunks it touches
    items = []
    for qi in missed:
        a, b = _longest_span(gold, qi)
        doc_id, la = layout.to_local(a)
        n = len(texts[doc_id])
        ws, we = max(0, la - pad), min(n, la + (b - a) + pad)
        off = a - la
        touch = np.flatnonzero((cgs < off + we) & (cge > off + ws))
        lo = min([ws + off] + [int(cgs[t]) for t in touch])
        hi = max([we + off] + [int(cge[t]) for t in touch])
        items.append((int(qi), (doc_id, ws, we), (lo, hi)))
    rounds: list[list[tuple[int, tuple[str, int, int], tuple[int, int]]]] = []
    for it in items:
        for rd in rounds:
            if all(it[2][1] <= o[2][0] or o[2][1] <= it[2][0] for o in rd):
                rd.append(it)
                break
        else:
            rounds.append([it])
    opts = {"k": s.k, "budget": s.budget, "budget_unit": s.budget_unit, "budget_fill": s.budget_fill, "engine": s.engine,
            "use_context": s.use_context, "depth": s.depth, "n_boot": 1, "seed": s.seed, "rrf_constant": s.rrf_constant,
            "fusion": s.fusion, "fusion_weights": s.fusion_weights, "metric_rules": s.metric_rules}
    if index is None:
        opts["tokenizer"] = s.tokenizer
    emb = embedder if embedder is not None else s.embedder
    if emb is None and s.engine in ("dense", "hybrid"):

        named = result.config.get("embedder")           # evaluate(..., embedder="e5-small") records the name
        if named not in EMBEDDERS:
            raise ValueError(f"diagnose needs the embedder of this {s.engine} result: pass embedder=")
        emb = named
    window_hit: dict[int, bool] = {}
    for rd in rounds:
        new, _ = window_chunks(chunks, texts, [w for _, w, _ in rd])
        qs = [questions[qi] for qi, _, _ in rd]
        with warnings.catch_warnings():  # n_boot=1 on a few questions: all-NaN resamples are expected
            warnings.simplefilter("ignore", RuntimeWarning)
            r = evaluate(documents, new, qs, index=index, embedder=emb, **opts)
        for (qi, _, _), h in zip(rd, r.per_question["hit"]):
            window_hit[qi] = bool(h)
    retrieved = None
    if result.budget is not None and result.ranked is not None:
        retrieved = select_budget(result.ranked, chunks, result.budget, unit=s.budget_unit, layout=layout, bounds=bounds,
                                  fill=s.budget_fill)
    k = result.k_used if result.k_used is not None else result.k
    bad = attribute_misses(result.ranked, hit, gold, bounds, k, question_ids=ids, retrieved=retrieved,
                           window_hit=window_hit)
    config = {**result.config, "misses": "counterfactual", "window_pad": pad}
    return dataclasses.replace(result, bad_cases=bad, config=config)
