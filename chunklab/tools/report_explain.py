"""One question explained: its evidence, the chunks that hold it and where they ranked, what ranked
instead, the miss symptom with its counterfactual test, and what to change.

:func:`explain` reads an :class:`~chunklab.evaluation.EvalResult` (best one passed through
:func:`~chunklab.evaluation.diagnose.diagnose`, whose counterfactual test then names the symptom) and
the chunks it was computed on; :func:`format_explanation` prints it (``python -m chunklab explain``),
and the report (:mod:`chunklab.tools.report`) shows the same dict for its worst misses.
:func:`worst_misses` chooses those. A holding chunk that is not in the ranking at all is said to rank
"beyond depth N" (N: how deep the ranking went), never "-".

What to change for each symptom is :data:`SYMPTOM_ADVICE`, the English twin of
:data:`chunklab.viz.labels.SYMPTOM_ADVICE_ZH` (one mapping per language).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..evaluation.metrics import select_budget
from ..preprocess.pdf import pages_of
from ..retrieval import Layout

__all__ = ["SYMPTOM_ADVICE", "explain", "worst_misses", "rank_text", "format_explanation", "counterfactual_text"]

#: For each miss symptom, what to change first (the English twin of ``chunklab.viz.labels.SYMPTOM_ADVICE_ZH``).
SYMPTOM_ADVICE: dict[str, str] = {
    "not_indexed": "check parsing and cleaning: the evidence's text never reached the index (OCR scanned pages; "
                   "a document that failed to parse needs a fallback)",
    "too_small": "make chunks larger (raise target / min): merge short sentences into paragraphs, group table "
                 "rows; or retrieve a sentence window / parent chunk to bring the context back",
    "cut": "split by structure (headings, clauses, tables, code AST), or add a little overlap as a stopgap; "
           "first look at where the cut falls",
    "diluted": "test with evaluation.diagnose that a smaller chunk is found; then lower the chunk size, split "
               "large chunks at headings or clauses, or retrieve small chunks and hand the reader their parent",
    "crowded": "lower the overlap, de-duplicate retrieved chunks by document and offsets, or fill a context "
               "budget instead of a fixed k",
    "ranked_low": "probably not the chunking: add a heading-path prefix, rewrite the query, try hybrid "
                  "retrieval or a re-ranker; first check that the labels miss no equivalent answer elsewhere",
}


def rank_text(rank: int | None, depth: int, ranked: int | None = None) -> str:
    """A rank as a report says it: ``"3"``, or for a chunk not in the ranking ``"beyond depth 50"`` (the
    ranking went ``depth`` deep), or, when the ranking held only ``ranked`` chunks (BM25 ranks only the
    chunks that share a term with the question), ``"not ranked (score 0; 12 chunks ranked)"``.

    >>> rank_text(3, 50), rank_text(None, 50), rank_text(None, 50, ranked=12)
    ('3', 'beyond depth 50', 'not ranked (score 0; 12 chunks ranked)')
    """
    if rank is not None:
        return str(rank)
    if ranked is not None and ranked < depth:
        return f"not ranked (score 0; {ranked} chunk{'s' if ranked != 1 else ''} ranked)"
    return f"beyond depth {depth}"


def _spans(q: Any) -> list[tuple[str, int, int]]:
    out = []
    for s in getattr(q, "spans", ()) or ():
        out.append((s.doc_id, int(s.start), int(s.end)) if hasattr(s, "doc_id") else (s[0], int(s[1]), int(s[2])))
    return out


def _short(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _retrieved(result: Any, chunks: Sequence[Any], layout: Layout, bounds: Any) -> np.ndarray:
    """The retrieved chunk indices per question (n x slots, -1 padded): the top k, or the budget's fill."""
    ranked = np.asarray(result.ranked)
    if result.budget is not None:
        s = result.settings
        return np.asarray(select_budget(ranked, chunks, result.budget, unit=s.budget_unit, layout=layout,
                                        bounds=bounds, fill=s.budget_fill))
    k = result.k_used if result.k_used is not None else result.k
    return ranked[:, :k]


def counterfactual_text(case: dict[str, Any] | None, depth: int) -> str | None:
    """What the counterfactual test of :func:`~chunklab.evaluation.diagnose.diagnose` found for one miss
    (None when the miss was labelled from geometry only)."""
    if not case or case.get("window_hit") is None:
        return None
    if case.get("nothing_retrieved"):
        return "nothing was retrieved for this question: its words, not the chunking, are what to change"
    if case["window_hit"]:
        return ("cut out as a chunk of its own (the evidence with a margin), the evidence was retrieved: "
                "the chunking, not the retriever, lost it")
    if case["symptom"] == "crowded":
        return "dropping near duplicates of better-ranked chunks brings a holding chunk into the retrieved set"
    reach = (f"a re-ranker over the top {depth} could still reach a holding chunk (rank {case['container_rank']})"
             if case.get("rerank") else f"no holding chunk is within the ranking's depth {depth}")
    return f"even cut out as a chunk of its own, the evidence was not retrieved; {reach}"


def explain(result: Any, documents: Sequence[Any], chunks: Sequence[Any], questions: Sequence[Any], qid: str, *,
            max_chars: int = 400, retrieved_shown: int = 5) -> dict[str, Any]:
    """One question of ``result`` (computed on ``chunks`` and ``questions``) explained, as plain data.

    Keys: ``id``, ``question``, ``type``, ``difficulty``, ``hit`` (bool), ``ruler`` (``k``, ``budget``,
    ``depth``: how deep the ranking went), ``evidence`` (one ``{"doc", "start", "end", "text"[, "pages"]}``
    per span), ``holding`` (every chunk sharing a character with the evidence, best ranked first: its
    ``doc``, ``start``, ``end``, ``rank`` (None beyond the depth) and ``rank_text``, ``retrieved``,
    ``holds`` (share of the best-covered span inside it), ``whole`` (it holds a span whole),
    ``evidence_share`` (share of the chunk that is evidence), ``text`` and ``marks`` (the evidence's
    ``[start, end)`` within ``text``)), ``retrieved`` (the first ``retrieved_shown`` retrieved chunks:
    ``rank``, ``doc``, ``start``, ``end``, ``evidence`` (shares a character with it), ``text`` cut to
    ``max_chars``), ``symptom`` (None for a hit), ``tested`` (the symptom came from the counterfactual
    test), ``counterfactual`` (:func:`counterfactual_text`) and ``advice`` (:data:`SYMPTOM_ADVICE`).
    """
    ids = [str(i) for i in result.question_ids]
    if str(qid) not in ids:
        raise KeyError(f"no question {qid!r} in the result")
    qi = ids.index(str(qid))
    q = list(questions)[qi]
    layout = Layout(documents)
    by_id = {d.id: d for d in documents}
    bounds = layout.chunk_bounds(chunks)
    cgs, cge = (np.asarray(b) for b in bounds)
    ranked = np.asarray(result.ranked)
    row = ranked[qi]
    depth = int(ranked.shape[1])
    got = [int(i) for i in _retrieved(result, chunks, layout, bounds)[qi] if i >= 0]
    rank_of = {int(c): r + 1 for r, c in enumerate(row) if c >= 0}
    n_ranked = len(rank_of)
    spans = _spans(q)
    glob = [(layout.to_global(d, s), layout.to_global(d, e)) for d, s, e in spans]
    evidence = []
    for d, s, e in spans:
        item = {"doc": d, "start": s, "end": e, "text": by_id[d].text[s:e]}
        if by_id[d].meta.get("spans"):
            item["pages"] = pages_of(by_id[d], s, e)
        evidence.append(item)
    touching = sorted({int(i) for a, b in glob for i in np.flatnonzero((cgs < b) & (cge > a))},
                      key=lambda i: (rank_of.get(i, depth + 1), i))
    holding = []
    for i in touching:
        c = chunks[i]
        a0, b0 = int(cgs[i]), int(cge[i])
        inside = [(max(a, a0), min(b, b0)) for a, b in glob if min(b, b0) > max(a, a0)]
        holds = max((min(b, b0) - max(a, a0)) / max(1, b - a) for a, b in glob)
        covered = sum(y - x for x, y in inside)
        holding.append({"doc": c.doc_id, "start": c.start, "end": c.end, "rank": rank_of.get(i),
                        "rank_text": rank_text(rank_of.get(i), depth, n_ranked), "retrieved": i in got,
                        "holds": float(holds), "whole": any(a0 <= a and b <= b0 for a, b in glob),
                        "evidence_share": covered / max(1, b0 - a0), "text": c.text,
                        "marks": [(x - a0, y - a0) for x, y in inside]})
    retrieved = []
    for r, i in enumerate(got[:retrieved_shown]):
        c = chunks[i]
        a0, b0 = int(cgs[i]), int(cge[i])
        retrieved.append({"rank": rank_of.get(i, r + 1), "doc": c.doc_id, "start": c.start, "end": c.end,
                          "evidence": any(min(b, b0) > max(a, a0) for a, b in glob),
                          "text": _short(c.text, max_chars)})
    hit = bool(result.per_question["hit"][qi])
    case = next((b for b in result.bad_cases if str(b["question_id"]) == str(qid)), None)
    symptom = None if hit or case is None else case["symptom"]
    return {"id": str(qid), "question": q.question, "type": getattr(q, "type", None),
            "difficulty": getattr(q, "difficulty", None), "hit": hit,
            "ruler": {"k": result.k_used if result.k_used is not None else result.k, "budget": result.budget,
                      "depth": depth},
            "evidence": evidence, "holding": holding, "retrieved": retrieved, "symptom": symptom,
            "tested": bool(case and case.get("window_hit") is not None),
            "counterfactual": None if hit else counterfactual_text(case, depth),
            "advice": SYMPTOM_ADVICE.get(symptom) if symptom else None}


def worst_misses(result: Any, n: int) -> list[str]:
    """The ids of the ``n`` worst misses: no chunk holding the evidence in the ranking first, then the
    holding chunk ranked lowest; question order breaks ties."""
    cases = list(result.bad_cases)
    order = sorted(range(len(cases)), key=lambda i: (cases[i]["container_rank"] is not None,
                                                     -(cases[i]["container_rank"] or 0), i))
    return [str(cases[i]["question_id"]) for i in order[:n]]


def format_explanation(e: dict[str, Any], width: int = 160) -> str:
    """:func:`explain`'s dict as the text ``python -m chunklab explain`` prints."""
    ruler = f"budget {e['ruler']['budget']}" if e["ruler"]["budget"] is not None else f"k={e['ruler']['k']}"
    tags = ", ".join(f"{k} {e[k]}" for k in ("type", "difficulty") if e.get(k))
    lines = [f"question {e['id']}: {e['question']}" + (f"  ({tags})" if tags else ""),
             f"outcome: {'hit' if e['hit'] else 'MISS'} ({ruler}, ranking depth {e['ruler']['depth']})"]
    for ev in e["evidence"]:
        pages = f" p.{ev['pages'][0]}" if ev.get("pages") else ""
        lines.append(f"evidence in {ev['doc']} [{ev['start']}:{ev['end']}]{pages}: {_short(ev['text'], width)!r}")
    if not e["holding"]:
        lines.append("no chunk shares a character with the evidence (it never reached the index)")
    lines.append("chunks holding evidence (rank; share of the evidence held; share of the chunk that is evidence):")
    for h in e["holding"]:
        where = f"rank {h['rank_text']}" if h["rank"] is not None else h["rank_text"]
        lines.append(f"  {where:<21} {h['doc']} [{h['start']}:{h['end']}]  holds {h['holds']:.0%}"
                     f"{' (whole)' if h['whole'] else ''}, {h['evidence_share']:.0%} of the chunk"
                     f"{'  retrieved' if h['retrieved'] else ''}")
    lines.append("retrieved" + (" instead:" if not e["hit"] else ":"))
    for r in e["retrieved"]:
        text = " ".join(r["text"].split())
        lines.append(f"  #{r['rank']} {r['doc']} [{r['start']}:{r['end']}]{'  (evidence)' if r['evidence'] else ''}: "
                     f"{_short(text, width)}")
    if not e["retrieved"]:
        lines.append("  nothing (no chunk scored above 0)")
    if e["symptom"]:
        how = "counterfactual test" if e["tested"] else "geometry only; explain runs the counterfactual test"
        lines.append(f"symptom: {e['symptom']} ({how})")
        if e["counterfactual"]:
            lines.append(f"test: {e['counterfactual']}")
        lines.append(f"suggested change: {e['advice']}")
    return "\n".join(lines)
