"""``explain`` (one question's miss, explained) and the data of ``report`` (rendered by
:mod:`chunklab.tools.report`; the subcommand itself is in the package's ``__init__``, beside
``matrix``, whose runner it shares).

Why a ``report`` subcommand rather than ``--report FILE`` on ``eval``/``compare``/``matrix``: the page
a team sends holds what those three commands each see a part of (the measured configuration with its
misses explained and its breakdowns, optionally a paired comparison and a grid), and it needs the
chunks themselves for the chunk viewer, which none of them keeps. One subcommand with the same
corpus, question, strategy, retriever and ruler options as ``eval`` (``--compare CONFIG`` adds the
``compare`` table, ``--grid FILE`` the ``matrix``) measures once and writes one page.

``explain QID`` takes the same options as ``eval`` (``--corpus``/``--questions`` as options, as every
other subcommand writes them) and evaluates the one question: its ranking does not depend on the
other questions, so the result is the one ``eval`` has for it, and the counterfactual test of
:func:`~chunklab.evaluation.diagnose.diagnose` costs one more retrieval.
"""
from __future__ import annotations

import difflib
import platform
import sys
import time
from typing import Any, Sequence

from .._version import __version__
from ..evaluation import evaluate
from ..evaluation.diagnose import diagnose
from ..evaluation.stats import decide
from ..tools.report_explain import explain, format_explanation, worst_misses
from .configs import eval_chunker, load_inputs, settings_from_args, where_note
from .engines import describe, retrieval_fields
from .output import CLIError, emit, warn

__all__ = ["cmd_explain", "evaluate_kept", "run_facts", "headline", "comparison_rows", "symptom_table",
           "explained_misses", "versions", "HEADLINE"]

#: The metrics of the report's headline table (``eval``'s table).
HEADLINE = ("hit", "hit_strict", "recall", "mrr", "complete_single", "precision", "iou", "duplication")


def evaluate_kept(corpus, questions: Sequence[Any], chunker, settings, index=None) -> tuple[Any, list]:
    """:func:`~chunklab.evaluation.evaluate` of one chunker, with the chunks it measured (for the viewer)."""
    chunks, seconds = chunker.chunks(corpus.documents)
    if not chunks:
        raise CLIError(f"{chunker.label} made no chunks of corpus {corpus.name!r}")
    result = evaluate(corpus.documents, chunks, questions, settings, index=index, ingest_seconds=seconds,
                      config=chunker.config)
    return result, chunks


def versions() -> dict[str, str]:
    """chunklab's, Python's and the main libraries' versions, for a report's "what ran"."""
    out = {"chunklab": __version__, "python": platform.python_version()}
    for name in ("numpy", "matplotlib"):
        mod = sys.modules.get(name)
        if mod is not None and getattr(mod, "__version__", None):
            out[name] = mod.__version__
    return out


def ruler_text(result, args) -> str:
    """``k=5``, or ``budget 2000 chars, delivered 1,987 [1,950, 2,000] characters per question``."""
    if result.budget is None:
        k_used = result.k_used if result.k_used is not None else result.k
        return f"top k={k_used} chunks per question" + (f" (asked {result.k})" if k_used != result.k else "")
    agg = result.aggregate["retrieved_chars"]
    return (f"context budget {result.budget} {args.budget_unit} per question; delivered {agg['mean']:,.0f} "
            f"[{agg['lo']:,.0f}, {agg['hi']:,.0f}] characters")


def run_facts(corpus, questions: Sequence[Any], args, label: str, settings, result) -> dict[str, Any]:
    """The report's "what ran": corpus, documents, characters, questions, what was measured, the retriever, the ruler."""
    return {"corpus": corpus.name, "documents": len(corpus), "chars": corpus.text_chars, "questions": len(questions),
            "questions_file": args.questions, "where": where_note(args), "config": label,
            "retriever": describe(settings, result.summary()), "ruler": ruler_text(result, args)}


def headline(result) -> list[dict[str, Any]]:
    """``[{"metric", "mean", "lo", "hi"}]`` of :data:`HEADLINE` (and tokens when counted)."""
    names = [m for m in HEADLINE + ("retrieved_chars", "retrieved_tokens") if m in result.aggregate]
    return [{"metric": m, **{k: result.aggregate[m][k] for k in ("mean", "lo", "hi")}} for m in names]


def comparison_rows(cmp: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows of :func:`~chunklab.evaluation.compare`'s result with the verdict word of
    :func:`~chunklab.evaluation.stats.decide` on the claim "A is higher than B"."""
    return [{"metric": m, "mean_a": r["mean_a"], "mean_b": r["mean_b"], "diff": r["diff"], "lo": r["lo"],
             "hi": r["hi"], "verdict": decide(r, expect=1)} for m, r in cmp.items()]


def symptom_table(result, questions: Sequence[Any], examples: int = 3) -> dict[str, dict[str, Any]]:
    """``{symptom: {"count", "examples": [{"id", "question"}]}}`` (every symptom, zeros included)."""
    text = {str(getattr(q, "id", i)): q.question for i, q in enumerate(questions)}
    out = {s: {"count": n, "examples": []} for s, n in result.symptoms.items()}
    for b in result.bad_cases:
        ex = out[b["symptom"]]["examples"]
        if len(ex) < examples:
            ex.append({"id": str(b["question_id"]), "question": text.get(str(b["question_id"]), "")})
    return out


def explained_misses(result, documents, chunks, questions: Sequence[Any], n: int) -> tuple[Any, list[dict[str, Any]]]:
    """The result with its misses tested by counterfactuals (:func:`~chunklab.evaluation.diagnose.diagnose`),
    and :func:`~chunklab.tools.report_explain.explain` of its ``n`` worst misses."""
    if not result.bad_cases:
        return result, []
    tested = diagnose(result, documents, chunks, questions)
    return tested, [explain(tested, documents, chunks, questions, qid) for qid in worst_misses(tested, n)]


def _find(questions: Sequence[Any], qid: str, source: str) -> list[Any]:
    ids = [str(getattr(q, "id", i)) for i, q in enumerate(questions)]
    if qid not in ids:
        close = difflib.get_close_matches(qid, ids, n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else f" (ids: {', '.join(ids[:5])}{' …' if len(ids) > 5 else ''})"
        raise CLIError(f"QID: no question {qid!r} in {source}{hint}", where="QID")
    return [questions[ids.index(qid)]]


def cmd_explain(args) -> int:
    """One question: its evidence, the chunks holding it and their ranks, what was retrieved instead, the
    symptom with its counterfactual test, and the suggested change."""
    t0 = time.perf_counter()
    settings = settings_from_args(args)
    chunker = eval_chunker(args)
    corpus, questions = load_inputs(args)
    one = _find(questions, str(args.qid), args.questions)
    result, chunks = evaluate_kept(corpus, one, chunker, settings)
    if result.bad_cases:
        result = diagnose(result, corpus.documents, chunks, one)
    e = explain(result, corpus.documents, chunks, one, str(args.qid), max_chars=args.max_chars)
    summary = result.summary()
    payload = {**e, "config": chunker.label, "corpus": corpus.name, **retrieval_fields(settings, summary),
               "seconds": time.perf_counter() - t0}
    if not args.json:
        warn(summary.get("warnings", ()))

    def text() -> str:
        return f"{chunker.label} on {corpus.name}, {describe(settings, summary)}\n" + format_explanation(e)

    emit(args, payload, text)
    return 0
