"""The entry point: retrieve for every question, measure, and compare two results.

:func:`evaluate` ties the other modules together: with the options of an
:class:`~chunklab.evaluation.settings.EvalSettings`, it ranks chunks for each question with the
retriever :func:`~chunklab.retrieval.make_retriever` builds, scores the ranking
(:mod:`~chunklab.evaluation.metrics`), bootstraps the means (:mod:`~chunklab.evaluation.stats`),
measures the chunking's structure (:mod:`~chunklab.evaluation.structure`) and labels the misses
(:mod:`~chunklab.evaluation.misses`).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..core import Chunk, Document
from ..datasets.questions import Question
from ..retrieval import CorpusIndex, Layout, make_retriever
from ..retrieval.embedders import EmbedStats, embedder_name, resolve_embedder
from ..retrieval.factory import BM25Retriever
from .metrics import METRICS, question_metrics, select_budget
from .misses import SYMPTOMS, attribute_misses
from .settings import EvalSettings
from .stats import bootstrap_many, paired_bootstrap
from .structure import structure_metrics

__all__ = ["EvalResult", "compare", "evaluate"]


@dataclass
class EvalResult:
    """The outcome of :func:`evaluate`: per-question arrays, aggregates with CIs, structure, bad cases.

    ``ranked`` is the full ranking (n_questions x depth chunk indices, -1 padded); ``budget`` is
    the settings' budget (None: top ``k``). ``k`` is the k asked for; ``k_used`` the one measured
    with, ``min(k, number of chunks)`` (ranking more chunks than there are changes nothing, so the
    metrics are the same). ``warnings`` are one-line notes about the run (e.g. that nothing could
    be retrieved, and why); :meth:`summary` lists them, with the clamping of ``k``, under
    ``"warnings"`` when there are any.
    """

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
    #: The options the result was computed with.
    settings: EvalSettings | None = field(default=None, repr=False)
    #: One-line notes about the run (not Python warnings: nothing is written to stderr).
    warnings: list[str] = field(default_factory=list)
    #: The k measured with: ``min(k, number of chunks)`` (None: ``k``).
    k_used: int | None = None

    @property
    def k_note(self) -> str | None:
        """The note that ``k`` was clamped to the number of chunks, or None."""
        if self.budget is not None or self.k_used is None or self.k_used >= self.k:
            return None
        n = self.k_used
        return (f"k={self.k} is more than the {n} chunk{'s' if n != 1 else ''}: every chunk can be retrieved, "
                f"so k is clamped to {n}")

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
            if self.settings is not None:
                out["budget_fill"] = self.settings.budget_fill
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
        notes = ([self.k_note] if self.k_note else []) + list(self.warnings)
        if notes:
            out["warnings"] = notes
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
    else None; two results with the same value on every question never name one (their mean
    difference may be a rounding error such as -1e-17).
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
        r = paired_bootstrap(va, vb, n=n, seed=seed, metric=m)
        if np.allclose(np.asarray(va, dtype=float), np.asarray(vb, dtype=float), rtol=0, atol=1e-12, equal_nan=True):
            r = {**r, "significant": False}  # identical values: float noise in the mean is no difference
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

def evaluate(documents: Sequence[Document], chunks: Sequence[Chunk], questions: Sequence[Question],
             settings: EvalSettings | None = None, *, index: CorpusIndex | None = None,
             embedder: str | Callable[[list[str]], Any] | None = None, config: Mapping[str, Any] | None = None,
             ingest_seconds: float | None = None, **options: Any) -> EvalResult:
    """Retrieve for every question and measure.

    ``settings`` (an :class:`~chunklab.evaluation.settings.EvalSettings`; default: its defaults)
    says how; single options may be given by keyword instead or on top of it
    (``evaluate(docs, chunks, qs, k=5, budget=2000)``; an unknown name is an error with the closest
    option). Questions are objects with ``question`` (the text), ``spans`` (gold
    ``(doc_id, start, end)`` spans or objects with those fields) and optionally ``id``, like
    :class:`~chunklab.datasets.questions.Question`.

    The engine is built by :func:`~chunklab.retrieval.make_retriever` from ``settings.engine``:
    ``"bm25"`` / ``"fast"`` ranks with BM25 on ``index`` — a :class:`~chunklab.retrieval.CorpusIndex`
    built once and reused across chunkings — or on one built here; ``"dense"`` and ``"hybrid"``
    need an embedder: ``embedder`` (a name such as ``"e5-small"`` or ``"lsa"``, or an object; see
    :func:`~chunklab.retrieval.get_embedder`), else ``settings.embedder``. When ``index`` was
    built on exactly ``documents``, the metrics use its
    :class:`~chunklab.retrieval.Layout` and the chunks are placed on it once. Rankings go
    ``settings.ranking_depth`` deep (at most ``max(number of chunks, 50)``: deeper holds only
    padding): the top ``k`` are scored, the rest serve the budget and the miss attribution. A
    ``k`` above the number of chunks is clamped to it (``EvalResult.k_used``; memory stays
    bounded however large ``k`` is) and the summary says so. With ``budget``, the retrieved set is
    :func:`~chunklab.evaluation.metrics.select_budget` of the ranking instead of its top ``k``.
    When no question retrieved any chunk, ``EvalResult.warnings`` says so and why.

    ``config`` (plain data about the chunking) heads the result's ``summary()``; ``engine``,
    ``tokenizer`` and ``use_context`` are added unless it has them, and with ``"dense"`` or
    ``"hybrid"`` also ``embedder`` (its name) and, for an embedder that counts tokens (e5),
    ``embedder_over_limit`` and ``embedder_tokens_over``: how many chunk texts and questions were
    longer than the model's input limit, and by how many tokens in all (a warning says what
    happened to them). ``ingest_seconds`` (the time the chunking took) is reported with the
    structure. Timings: ``index`` (building a named
    engine), ``search`` and ``metrics``.

    >>> from chunklab.core import Document, Chunk
    >>> from collections import namedtuple
    >>> Q = namedtuple("Q", "id question spans")
    >>> doc = Document("d", "合同的订立。合同的效力。违约责任。")
    >>> cs = [Chunk("d", 0, 0, 6, "合同的订立。"), Chunk("d", 1, 6, 12, "合同的效力。"), Chunk("d", 2, 12, 17, "违约责任。")]
    >>> r = evaluate([doc], cs, [Q("q1", "合同效力", [("d", 6, 11)])], k=1, n_boot=100)
    >>> r.aggregate["hit"]["mean"], r.symptoms["cut"], r.config["engine"]
    (1.0, 0, 'fast')
    >>> evaluate([doc], cs, [Q("q1", "合同效力", [("d", 6, 11)])], kk=1)
    Traceback (most recent call last):
    ...
    TypeError: unknown evaluation option 'kk' (did you mean 'k'?); the options are k, budget, budget_unit, budget_fill, tokenizer, engine, embedder, use_context, depth, n_boot, seed, count_tokens, rrf_constant, fusion, fusion_weights, metric_rules
    """
    s = EvalSettings.resolve(settings, options)
    if len(chunks) == 0:
        raise ValueError("chunks must hold at least one chunk")
    questions = list(questions)
    n_chunks = len(chunks)
    k_used = min(s.k, n_chunks)
    # NOTE: a ranking deeper than the chunks holds only -1 padding, and its arrays grow with
    # questions x depth: a huge k (or depth) is clamped here, before anything is allocated.
    depth = min(s.ranking_depth, max(n_chunks, 50))
    own_seconds = 0.0
    if index is None and _needs_index(s):
        # NOTE (memory, issue #21): an index of this one chunking holds no token positions.
        t = time.perf_counter()
        index = CorpusIndex(documents, tokenizer=s.tokenizer, chunks=chunks)
        own_seconds = time.perf_counter() - t
    shared = index is not None and index.layout.matches(documents)
    layout = index.layout if shared else Layout(documents)
    bounds = layout.chunk_bounds(chunks)
    gold = layout.gold_bounds([q.spans for q in questions])
    qtexts = [q.question for q in questions]
    timings: dict[str, float] = {}

    t0 = time.perf_counter()
    spec = embedder if embedder is not None else s.embedder
    dense = isinstance(s.engine, str) and s.engine in ("dense", "hybrid")
    emb = resolve_embedder(spec, documents) if dense and spec is not None else spec
    before = emb.stats.copy() if dense and isinstance(getattr(emb, "stats", None), EmbedStats) else None
    retriever = make_retriever(s.engine, documents, chunks, tokenizer=s.tokenizer, index=index, embedder=emb,
                               use_context=s.use_context, rrf_constant=s.rrf_constant, fusion=s.fusion,
                               fusion_weights=dict(s.fusion_weights) if s.fusion_weights is not None else None,
                               bounds=bounds if index is None or shared else None)
    if isinstance(s.engine, str):
        timings["index"] = time.perf_counter() - t0 + own_seconds
    t1 = time.perf_counter()
    ranking = retriever.search(qtexts, k=depth)
    timings["search"] = time.perf_counter() - t1

    t3 = time.perf_counter()
    ranked = ranking.ids
    nothing = (_nothing_retrieved(retriever, qtexts, n_chunks)
               if questions and ranked.shape[1] and bool((ranked[:, 0] < 0).all()) else None)
    # NOTE (memory): the engine, with the corpus index when it was built here, is the largest
    # thing alive (about 17 bytes per corpus character for BM25); nothing below needs it, so it
    # goes before the metrics, the bootstrap and the structure allocate theirs.
    del retriever, ranking, index
    if s.budget is not None:
        retrieved, ends = select_budget(ranked, chunks, s.budget, unit=s.budget_unit, layout=layout,
                                        bounds=bounds, fill=s.budget_fill, return_ends=True)
        kk = retrieved.shape[1]
    else:
        retrieved, kk, ends = ranked[:, :k_used], k_used, None
    pq = question_metrics(retrieved, chunks, gold, k=kk, layout=layout, dedup=s.budget is not None,
                          count_tokens=s.count_tokens, bounds=bounds, ends=ends, rules=s.metric_rules)
    agg = bootstrap_many(pq, n=s.n_boot, seed=s.seed)
    ids = [str(getattr(q, "id", i)) for i, q in enumerate(questions)]
    bad = attribute_misses(ranked, pq["hit"], gold, bounds, kk, question_ids=ids, retrieved=retrieved)
    structure = structure_metrics(documents, chunks, ingest_seconds=ingest_seconds)
    timings["metrics"] = time.perf_counter() - t3
    cfg = dict(config or {})
    cfg.setdefault("engine", s.engine_name)
    cfg.setdefault("tokenizer", s.tokenizer_name)
    cfg.setdefault("use_context", s.use_context)
    warnings = []
    if dense:
        cfg.setdefault("embedder", embedder_name(spec))
    if s.engine == "hybrid" and (s.fusion != "rrf" or s.fusion_weights is not None):  # the default reads as before
        cfg.setdefault("fusion", s.fusion)
        cfg.setdefault("fusion_weights", dict(s.fusion_weights) if s.fusion_weights is not None else None)
    if before is not None:
        used = emb.stats - before
        if getattr(emb, "max_tokens", None) is not None:
            cfg.setdefault("embedder_over_limit", used.over_limit)
            cfg.setdefault("embedder_tokens_over", used.tokens_over)
        if used.over_limit:
            warnings.append(_over_limit(emb, used))
    if nothing is not None:
        warnings.append(nothing)
    return EvalResult(cfg, s.k, ids, pq, agg, structure, bad, timings, s.budget, ranked, s, warnings, k_used)


def _needs_index(settings: EvalSettings) -> bool:
    """Whether the settings rank with BM25 (alone or in a hybrid), i.e. on a CorpusIndex."""
    return isinstance(settings.engine, str) and settings.engine in ("bm25", "fast", "hybrid")


def _over_limit(emb: Any, used: EmbedStats) -> str:
    """The note that texts were longer than the embedder's input limit, and what happened to them."""
    what = {"truncate": "each was cut to the longest prefix that fits",
            "window": "each was embedded in windows of the limit, averaged"}.get(getattr(emb, "overflow", ""), "")
    return (f"{used.over_limit} of the {used.texts} texts embedded by {emb.name} were longer than its "
            f"{emb.max_tokens}-token input limit ({used.tokens_over} tokens past it in all)"
            + (f": {what}" if what else ""))


def _nothing_retrieved(retriever: Any, qtexts: list[str], n_chunks: int) -> str:
    """Why no question retrieved any chunk (BM25 ranks only chunks with a score above 0)."""
    head = f"nothing could be retrieved: none of the {len(qtexts)} questions has a chunk scoring above 0"
    if not isinstance(retriever, BM25Retriever):
        return head + " (the questions share no term with the chunks, or the shared terms weigh 0)"
    bm25 = retriever.bm25
    q = retriever.index.encode_queries(qtexts)  # cached: the search encoded the same texts
    cols = np.unique(q.indices)
    cols = cols[cols < bm25.n_terms]
    shared = cols[bm25.df[cols] > 0]
    tok = retriever.index.tokenizer.name
    if q.nnz == 0:
        return head + f": the questions have no tokens at all under the {tok!r} tokenizer"
    if len(shared) == 0:
        return head + f": the questions share no token with the chunks ({tok!r} tokenizer)"
    if np.all(bm25.idf[shared] == 0):
        return head + (f": every token the questions share with the chunks has BM25 idf 0 over these {n_chunks} "
                       f"chunks (idf = log(N - n + 0.5) - log(n + 0.5) is 0 for a term in half of them), so every "
                       f"score is 0")
    return head + ": the tokens the questions share with the chunks weigh 0"
