"""The entry point: retrieve for every question, measure, and compare two results.

:func:`evaluate` ties the other modules together: it ranks chunks for each question, scores the
ranking (:mod:`~chunklab.evaluation.metrics`), bootstraps the means
(:mod:`~chunklab.evaluation.stats`), measures the chunking's structure
(:mod:`~chunklab.evaluation.structure`) and labels the misses (:mod:`~chunklab.evaluation.misses`).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from ..retrieval import BM25Reference, CorpusIndex, DenseIndex, fuse
from .metrics import METRICS, Layout, question_metrics, select_budget
from .misses import SYMPTOMS, attribute_misses
from .stats import bootstrap_many, paired_bootstrap
from .structure import structure_metrics

__all__ = ["EvalResult", "compare", "evaluate"]


@dataclass
class EvalResult:
    """The outcome of :func:`evaluate`: per-question arrays, aggregates with CIs, structure, bad cases."""

    config: dict[str, Any]
    k: int
    question_ids: list[str]
    per_question: dict[str, np.ndarray]
    aggregate: dict[str, dict[str, float]]
    structure: dict[str, Any]
    bad_cases: list[dict[str, Any]]
    timings: dict[str, float] = field(default_factory=dict)
    budget: int | None = None
    ranked: np.ndarray | None = field(default=None, repr=False)

    @property
    def symptoms(self) -> dict[str, int]:
        """Count of misses per symptom (every symptom listed, zeros included)."""
        counts = {s: 0 for s in SYMPTOMS}
        for b in self.bad_cases:
            counts[b["symptom"]] += 1
        return counts

    def summary(self) -> dict[str, Any]:
        """One flat dict: ``config`` keys, ``<metric>`` means with ``<metric>_lo/_hi``, structure, symptoms."""
        out: dict[str, Any] = dict(self.config)
        out["k"] = self.k
        if self.budget is not None:
            out["budget"] = self.budget
        out["questions"] = len(self.question_ids)
        for name, agg in self.aggregate.items():
            out[name] = agg["mean"]
            out[f"{name}_lo"] = agg["lo"]
            out[f"{name}_hi"] = agg["hi"]
        for name, v in self.structure.items():
            out[name] = v
        for s, c in self.symptoms.items():
            out[f"miss_{s}"] = c
        for name, v in self.timings.items():
            out[f"{name}_seconds"] = v
        return out

    def table(self, metrics: Sequence[str] | None = None) -> str:
        """A small text table: metric, mean, 95% interval."""
        names = list(metrics or self.aggregate)
        lines = [f"{'metric':<18}{'mean':>10}  95% CI"]
        for n in names:
            a = self.aggregate[n]
            lines.append(f"{n:<18}{a['mean']:>10.4f}  [{a['lo']:.4f}, {a['hi']:.4f}]")
        return "\n".join(lines)

    def to_records(self) -> list[dict[str, Any]]:
        """One dict per question: ``question_id`` and every per-question metric (plain floats)."""
        names = list(self.per_question)
        cols = [self.per_question[n] for n in names]
        return [{"question_id": q, **{n: float(c[i]) for n, c in zip(names, cols)}}
                for i, q in enumerate(self.question_ids)]


def compare(a: EvalResult, b: EvalResult, metrics: Sequence[str] = ("hit", "recall", "mrr", "iou"),
            n: int = 2000, seed: int = 0, names: tuple[str, str] = ("a", "b")) -> dict[str, dict[str, Any]]:
    """Paired comparison of two results on the same questions, metric by metric.

    Each entry: ``mean_a``, ``mean_b``, ``diff`` (a - b), ``lo``, ``hi``, ``significant`` and
    ``winner`` — a name only when the interval excludes 0 (respecting whether higher is better),
    else None.
    """
    if list(a.question_ids) != list(b.question_ids):
        pos = {q: i for i, q in enumerate(b.question_ids)}
        if set(pos) != set(a.question_ids):
            raise ValueError("results must be on the same questions (question ids differ)")
        perm = np.array([pos[q] for q in a.question_ids])
    else:
        perm = None
    out = {}
    for m in metrics:
        if m not in a.per_question or m not in b.per_question:
            raise ValueError(f"unknown metric {m!r} (known: {', '.join(a.per_question)})")
        va = a.per_question[m]
        vb = b.per_question[m] if perm is None else b.per_question[m][perm]
        r = paired_bootstrap(va, vb, n=n, seed=seed)
        higher = METRICS.get(m, {}).get("higher", True)
        winner = None
        if r["significant"] and higher is not None:
            better_a = (r["diff"] > 0) == bool(higher)
            winner = names[0] if better_a else names[1]
        out[m] = {"mean_a": float(np.nanmean(va)), "mean_b": float(np.nanmean(vb)), **r, "winner": winner}
    return out


# --------------------------------------------------------------------------------------------
# The entry point
# --------------------------------------------------------------------------------------------

def evaluate(corpus_documents: Sequence[Any], chunks: Sequence[Any], questions: Sequence[Any], k: int = 5,
             tokenizer: str = "bigram", engine: Any = "fast", budget: int | None = None,
             budget_unit: str = "chars", use_context: bool = False, depth: int | None = None,
             index: Any = None, embedder: Callable | None = None, n_boot: int = 2000, seed: int = 0,
             count_tokens: bool = False, config: dict[str, Any] | None = None,
             ingest_seconds: float | None = None) -> EvalResult:
    """Retrieve for every question and measure.

    ``engine``: ``"fast"`` (:class:`~chunklab.retrieval.BM25Fast`, via ``index`` — a
    :class:`~chunklab.retrieval.CorpusIndex` built once and reused across chunkings — or one built
    here), ``"reference"`` (rank-bm25), ``"dense"`` or ``"hybrid"`` (BM25 + dense by reciprocal rank
    fusion; both need ``embedder``). Rankings go ``depth`` deep (default ``max(k, 50)``): the
    top ``k`` are scored, the rest serve the budget and the miss attribution. With ``budget``, the
    retrieved set is :func:`~chunklab.evaluation.metrics.select_budget` of the ranking instead of
    its top ``k``.

    >>> from chunklab.core import Document, Chunk
    >>> from collections import namedtuple
    >>> Q = namedtuple("Q", "id question spans")
    >>> doc = Document("d", "合同的订立。合同的效力。违约责任。")
    >>> cs = [Chunk("d", 0, 0, 6, "合同的订立。"), Chunk("d", 1, 6, 12, "合同的效力。"), Chunk("d", 2, 12, 17, "违约责任。")]
    >>> r = evaluate([doc], cs, [Q("q1", "合同效力", [("d", 6, 11)])], k=1, n_boot=100)
    >>> r.aggregate["hit"]["mean"], r.symptoms["cut"]
    (1.0, 0)
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be an int >= 1, got {k!r}")
    if len(chunks) == 0:
        raise ValueError("chunks must hold at least one chunk")
    questions = list(questions)
    depth = max(k, 50) if depth is None else max(int(depth), k)
    layout = Layout(corpus_documents)
    bounds = layout.chunk_bounds(chunks)
    gold = layout.gold_bounds([q.spans for q in questions])
    qtexts = [q.question for q in questions]
    timings: dict[str, float] = {}

    t0 = time.perf_counter()
    ranking = None
    if isinstance(engine, str):
        if engine not in ("fast", "reference", "dense", "hybrid"):
            raise ValueError(f"engine must be 'fast', 'reference', 'dense' or 'hybrid', got {engine!r}")
        texts = None
        if engine in ("fast", "hybrid"):
            if index is None:
                index = CorpusIndex(corpus_documents, tokenizer=tokenizer)
            bm = index.index_chunks(chunks, use_context=use_context)
            timings["index"] = time.perf_counter() - t0
            t1 = time.perf_counter()
            ranking = bm.search(index.encode_queries(qtexts), k=depth)
            timings["search"] = time.perf_counter() - t1
        elif engine == "reference":
            texts = [c.embed_text if use_context else c.text for c in chunks]
            ref = BM25Reference(texts, tokenizer=tokenizer)
            timings["index"] = time.perf_counter() - t0
            t1 = time.perf_counter()
            ranking = ref.search(qtexts, k=depth)
            timings["search"] = time.perf_counter() - t1
        if engine in ("dense", "hybrid"):
            if embedder is None:
                raise ValueError(f"engine {engine!r} needs an embedder: a callable list[str] -> 2-D array")
            texts = [c.embed_text if use_context else c.text for c in chunks]
            t2 = time.perf_counter()
            dense = DenseIndex(texts, embedder)
            timings["index"] = timings.get("index", 0.0) + time.perf_counter() - t2
            t1 = time.perf_counter()
            dr = dense.search(qtexts, k=depth)
            ranking = dr if ranking is None else fuse([ranking, dr], k=depth)
            timings["search"] = timings.get("search", 0.0) + time.perf_counter() - t1
    elif hasattr(engine, "search"):
        t1 = time.perf_counter()
        ranking = engine.search(qtexts, k=depth)
        timings["search"] = time.perf_counter() - t1
    else:
        raise TypeError(f"engine must be a name or an object with .search(queries, k), got {type(engine).__name__}")

    t3 = time.perf_counter()
    ranked = ranking.ids
    if budget is not None:
        retrieved = select_budget(ranked, chunks, budget, unit=budget_unit, layout=layout, bounds=bounds)
        kk = retrieved.shape[1]
    else:
        retrieved, kk = ranked[:, :k], k
    pq = question_metrics(retrieved, chunks, gold, k=kk, layout=layout, dedup=budget is not None,
                          count_tokens=count_tokens, bounds=bounds)
    agg = bootstrap_many(pq, n=n_boot, seed=seed)
    ids = [str(getattr(q, "id", i)) for i, q in enumerate(questions)]
    bad = attribute_misses(ranked, pq["hit"], gold, bounds, kk, question_ids=ids, retrieved=retrieved)
    structure = structure_metrics(corpus_documents, chunks, ingest_seconds=ingest_seconds)
    timings["metrics"] = time.perf_counter() - t3
    cfg = dict(config or {})
    cfg.setdefault("engine", engine if isinstance(engine, str) else type(engine).__name__)
    cfg.setdefault("tokenizer", tokenizer if isinstance(tokenizer, str) else getattr(tokenizer, "name", "?"))
    cfg.setdefault("use_context", use_context)
    return EvalResult(cfg, k, ids, pq, agg, structure, bad, timings, budget, ranked)
