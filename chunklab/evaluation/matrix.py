"""The method x parameter matrix: many chunkings of one corpus, measured on the same questions.

A grid is plain data, one dict per strategy; every list is a dimension of the cross product and
a scalar is fixed::

    [{"strategy": "fixed", "size": [512, 1024, 2048], "overlap": [0, 0.1, 0.2]},
     {"strategy": "recursive", "target": [512, 1024], "overlap": [0, 50]}]

``overlap`` given as a float in ``[0, 1)`` is a *share* of the config's ``size`` (or ``target``)
and becomes ``round(share * size)`` characters; an int is used as is. A combination the strategy
rejects (e.g. ``overlap >= target``) is skipped and listed with the strategy's own error message; a
combination that makes the same chunker as an earlier one (same strategy, same parameters once
defaults are filled in) runs once and is listed as a duplicate. A grid that is not a list of
dicts, or a parameter given as an empty list, is an error.

Work that does not depend on the configuration is done once: the corpus is tokenised into a
:class:`~chunklab.retrieval.CorpusIndex` and the questions are encoded once; each config then
chunks, indexes from token positions, ranks all questions in one call (:meth:`BM25Fast.search
<chunklab.retrieval.BM25Fast.search>`) and measures.

>>> from chunklab.core import Document
>>> configs, skipped = expand_grid([{"strategy": "fixed", "size": [4, 8], "overlap": [0, 0.5, 6]}])
>>> [c["params"] for c in configs][:3], skipped[0]["reason"][:22]
([{'size': 4, 'overlap': 0}, {'size': 4, 'overlap': 2}, {'size': 8, 'overlap': 0}], 'overlap must be an int')
"""
from __future__ import annotations

import csv
import hashlib
import io
import itertools
import json
import math
import os
import time
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any, Sequence

from ..base import get_strategy
from ..core import Document
from ..datasets.questions import Question
from ..retrieval import CorpusIndex
from .run import evaluate
from .settings import EvalSettings

__all__ = ["expand_grid", "run_matrix", "MatrixResult", "ARTICLE_002_GRID", "MATRIX_SETTINGS"]

#: Article 002's experiment (claim C20): 3 methods x 3 sizes x 3 overlaps = 27 configs.
ARTICLE_002_GRID: list[dict[str, Any]] = [
    {"strategy": "fixed", "size": [512, 1024, 2048], "overlap": [0, 0.1, 0.2]},
    {"strategy": "recursive", "target": [512, 1024, 2048], "overlap": [0, 0.1, 0.2]},
    {"strategy": "paragraph", "target": [512, 1024, 2048], "overlap": [0, 0.1, 0.2]},
]


def _label(strategy: str, params: dict[str, Any]) -> str:
    inner = ", ".join(f"{k}={v}" for k, v in params.items())
    return f"{strategy}({inner})"


def _short(value: Any, n: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= n else text[: n - 1] + "…"


def expand_grid(grid: Sequence[dict[str, Any]] | dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Expand a grid into configs ``{"strategy", "params", "label"}`` and skipped combinations.

    Each skipped entry has ``strategy``, ``params``, ``label`` and ``reason``; a duplicate also
    ``duplicate_of`` (the label of the config that runs instead).

    >>> expand_grid([{"strategy": "fixed", "size": 8, "overlap": 0}, {"strategy": "fixed", "overlap": 0, "size": 8}])[1][0]["reason"]
    'duplicate of fixed(size=8, overlap=0): runs once'
    >>> expand_grid(None)
    Traceback (most recent call last):
    ...
    ValueError: a grid is a list of dicts like {"strategy": "fixed", "size": [512, 1024]} (or one such dict), got None
    """
    if isinstance(grid, dict):
        grid = [grid]
    if not isinstance(grid, (list, tuple)):
        raise ValueError('a grid is a list of dicts like {"strategy": "fixed", "size": [512, 1024]} (or one such '
                         f"dict), got {_short(grid)}")
    configs: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    made: dict[str, str] = {}  # the chunker's full parameters -> label of the config that makes it
    for gi, entry in enumerate(grid):
        if not isinstance(entry, dict) or "strategy" not in entry:
            raise ValueError(f"grid entry {gi} must be a dict with a 'strategy' key, got {_short(entry)}")
        name = entry["strategy"]
        keys = [k for k in entry if k != "strategy"]
        for k in keys:
            if isinstance(entry[k], (list, tuple)) and not entry[k]:
                raise ValueError(f"grid entry {gi} ({name!r}): {k!r} is an empty list; give at least one value")
        values = [v if isinstance(v, (list, tuple)) else [v] for v in (entry[k] for k in keys)]
        for combo in itertools.product(*values):
            params = dict(zip(keys, combo))
            reason = None
            ov = params.get("overlap")
            if isinstance(ov, float):
                ref = params.get("size", params.get("target"))
                if not 0 <= ov < 1:
                    reason = f"overlap given as a float must be a share in [0, 1), got {ov!r}"
                elif not isinstance(ref, int):
                    reason = "a fractional overlap needs an int 'size' or 'target' in the same config"
                else:
                    params["overlap"] = int(round(ov * ref))
            label = _label(name, params)
            strategy = None
            if reason is None:
                try:
                    strategy = get_strategy(name, **params)
                except (ValueError, TypeError) as exc:
                    reason = str(exc)
            if reason is not None:
                skipped.append({"strategy": name, "params": params, "label": label, "reason": reason})
                continue
            key = f"{type(strategy).__name__}:{name}:{sorted(strategy.get_params().items(), key=lambda kv: kv[0])!r}"
            if key in made:
                skipped.append({"strategy": name, "params": params, "label": label,
                                "reason": f"duplicate of {made[key]}: runs once", "duplicate_of": made[key]})
                continue
            made[key] = label
            configs.append({"strategy": name, "params": params, "label": label})
    return configs, skipped


@dataclass
class MatrixResult:
    """Rows (one flat dict per config: ``label``, ``strategy``, parameters, metrics with CIs,
    structure, miss symptom counts, timings), the skipped combinations, and the total time.

    To draw a metric over two parameters, pass the rows to :func:`chunklab.viz.plots.metric_heatmap`,
    e.g. ``metric_heatmap([r for r in res.rows if r["strategy"] == "fixed"], "size", "overlap", "hit")``.
    """

    rows: list[dict[str, Any]]
    skipped: list[dict[str, Any]]
    seconds: float
    setup_seconds: float = 0.0
    results: list[Any] = field(default_factory=list, repr=False)
    #: One-line notes about the run (k above some configs' chunk counts, configs that retrieved
    #: nothing), each said once; kept out of the rows.
    warnings: list[str] = field(default_factory=list)

    def best(self, metric: str = "hit") -> dict[str, Any]:
        """The row with the highest ``metric``."""
        if not self.rows:
            raise ValueError("no configs ran")
        return max(self.rows, key=lambda r: (r.get(metric, float("-inf")), r["label"]))

    def _columns(self) -> list[str]:
        cols: list[str] = []
        for r in self.rows:
            for k in r:
                if k not in cols:
                    cols.append(k)
        return cols

    def to_csv(self, path: str | os.PathLike | None = None) -> str:
        """The rows as CSV (returned; also written to ``path`` when given)."""
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=self._columns(), lineterminator="\n")
        w.writeheader()
        for r in self.rows:
            w.writerow(r)
        text = buf.getvalue()
        if path is not None:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        return text

    def to_json(self, path: str | os.PathLike | None = None) -> str:
        """``{"rows", "skipped", "seconds"}`` as JSON (NaN written as null)."""
        def clean(v: Any) -> Any:
            if isinstance(v, float) and not math.isfinite(v):
                return None
            if isinstance(v, dict):
                return {k: clean(x) for k, x in v.items()}
            if isinstance(v, (list, tuple)):
                return [clean(x) for x in v]
            return v

        text = json.dumps(clean({"rows": self.rows, "skipped": self.skipped, "seconds": self.seconds}),
                          ensure_ascii=False, indent=1)
        if path is not None:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        return text


# --------------------------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------------------------

#: Per-process cache of the configuration-independent work, keyed by a corpus fingerprint, so a
#: worker process of an executor tokenises the corpus once however many configs it runs.
_STATE: dict[str, tuple[Any, Any, Any]] = {}


def _fingerprint(documents: Sequence[Any], tokenizer: str) -> str:
    h = hashlib.sha1(tokenizer.encode())
    for d in documents:
        h.update(d.id.encode()); h.update(b"\0"); h.update(str(len(d.text)).encode()); h.update(b"\1")
        h.update(d.text[:64].encode()); h.update(d.text[-64:].encode())
    return h.hexdigest()


def _plain_docs(documents: Sequence[Any]) -> list[tuple]:
    return [(d.id, d.text, d.title, dict(d.meta)) for d in documents]


def _plain_questions(questions: Sequence[Any]) -> list[tuple]:
    return [(str(getattr(q, "id", i)), q.question, [tuple(_span(s)) for s in q.spans])
            for i, q in enumerate(questions)]


def _span(s: Any) -> tuple[str, int, int]:
    if hasattr(s, "doc_id"):
        return (s.doc_id, int(s.start), int(s.end))
    return (s[0], int(s[1]), int(s[2]))


@dataclass(frozen=True)
class _Q:
    id: str
    question: str
    spans: tuple


def _state(key: str, documents: Any, questions: Any, tokenizer: str) -> tuple[Any, Any, Any]:
    st = _STATE.get(key)
    if st is None:
        if documents and isinstance(documents[0], tuple):
            documents = [Document(i, t, title, meta) for i, t, title, meta in documents]
        if questions and isinstance(questions[0], tuple):
            questions = [_Q(i, q, tuple(s)) for i, q, s in questions]
        index = CorpusIndex(documents, tokenizer=tokenizer)
        index.encode_queries([q.question for q in questions])
        st = _STATE[key] = (documents, questions, index)
    return st


def _run_config(key: str, documents: Any, questions: Any, cfg: dict[str, Any], settings: EvalSettings) -> dict[str, Any]:
    docs, qs, index = _state(key, documents, questions, settings.tokenizer)
    t0 = time.perf_counter()
    chunks = get_strategy(cfg["strategy"], **cfg["params"]).split_documents(docs)
    ingest = time.perf_counter() - t0
    res = evaluate(docs, chunks, qs, settings, index=index, ingest_seconds=ingest,
                   config={"label": cfg["label"], "strategy": cfg["strategy"], **cfg["params"]})
    row = res.summary()
    row.pop("warnings", None)  # said once per run by run_matrix, not in every row
    row["seconds"] = time.perf_counter() - t0
    if res.warnings:
        row[_WARNINGS] = list(res.warnings)
    return row


_WARNINGS = "__warnings__"


def _run_warnings(rows: list[dict[str, Any]], k: int, budget: int | None) -> list[str]:
    """The warnings of a run's rows (removed from them), each said once."""
    out: list[str] = []
    for r in rows:
        for w in r.pop(_WARNINGS, ()):
            out.append(f"{r['label']}: {w}")
    small = [r for r in rows if isinstance(r.get("chunks"), int) and r["chunks"] < k]
    if budget is None and small:
        fewest = min(r["chunks"] for r in small)
        out.insert(0, f"k={k} is more than the chunks of {len(small)} of {len(rows)} configs (fewest: {fewest}): "
                      f"each of them retrieves all its chunks, so k is clamped to its number of chunks")
    return out


#: :func:`run_matrix`'s defaults: those of :class:`~chunklab.evaluation.settings.EvalSettings` but
#: 1,000 bootstrap resamples (a matrix has many rows).
MATRIX_SETTINGS = EvalSettings(n_boot=1000)


def run_matrix(documents: Sequence[Document], questions: Sequence[Question],
               grid: Sequence[dict[str, Any]] | dict[str, Any], settings: EvalSettings | None = None, *,
               executor: Executor | None = None, progress: bool = True, **options: Any) -> MatrixResult:
    """Run every config of ``grid`` (see :func:`expand_grid`) on ``documents`` and ``questions``.

    ``settings`` (default :data:`MATRIX_SETTINGS`), with single options given by keyword on top
    (``run_matrix(docs, qs, grid, k=5, budget=2000)``), is passed to
    :func:`~chunklab.evaluation.evaluate` for every config: ``budget`` / ``budget_unit`` (a fixed
    context budget instead of k), ``count_tokens`` (tok@k in cl100k tokens), ``use_context``,
    ``n_boot``, ``seed``. Every config ranks with BM25 on one shared
    :class:`~chunklab.retrieval.CorpusIndex`, so ``engine`` must be ``"bm25"`` (or ``"fast"``) and
    ``tokenizer`` a name.

    ``executor``: any ``concurrent.futures.Executor`` (threads, processes, or a Dask/Ray executor
    with the same interface); documents and questions are sent as plain tuples, and each worker
    tokenises the corpus once. Without one, configs run in this process, sharing one
    :class:`~chunklab.retrieval.CorpusIndex`. Rows come back in grid order.
    """
    s = EvalSettings.resolve(settings, options, default=MATRIX_SETTINGS)
    if not isinstance(s.tokenizer, str):
        raise ValueError(f"tokenizer must be a tokenizer name, got {s.tokenizer!r}")
    if s.engine not in ("bm25", "fast"):
        raise ValueError(f"engine must be 'bm25' or 'fast' (run_matrix ranks every config with BM25 on one "
                         f"shared CorpusIndex), got {s.engine_name!r}")
    t0 = time.perf_counter()
    documents = list(documents)
    questions = list(questions)
    configs, skipped = expand_grid(grid)
    key = _fingerprint(documents, s.tokenizer)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(configs), desc="matrix", unit="config")
    rows: list[dict[str, Any]] = []
    setup = 0.0
    if executor is None:
        ts = time.perf_counter()
        _state(key, documents, questions, s.tokenizer)
        setup = time.perf_counter() - ts
        try:
            for cfg in configs:
                rows.append(_run_config(key, documents, questions, cfg, s))
                if bar is not None:
                    bar.update(1)
        finally:
            _STATE.pop(key, None)
    else:
        pdocs, pqs = _plain_docs(documents), _plain_questions(questions)
        futures = [executor.submit(_run_config, key, pdocs, pqs, cfg, s) for cfg in configs]
        try:
            for f in futures:
                rows.append(f.result())
                if bar is not None:
                    bar.update(1)
        finally:
            _STATE.pop(key, None)  # a thread executor shares this process's cache
    if bar is not None:
        bar.close()
    warnings = _run_warnings(rows, s.k, s.budget)
    return MatrixResult(rows, skipped, time.perf_counter() - t0, setup, warnings=warnings)
