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
<chunklab.retrieval.BM25Fast.search>`) and measures. With a process pool that forks its workers
(``chunklab matrix --jobs N`` on Linux), that work is done before the workers start and they
inherit it: tasks carry only the config. Dense and hybrid retrieval (``engine="dense"`` /
``"hybrid"`` with an ``embedder``) run each config through the same
:func:`~chunklab.evaluation.evaluate`.

>>> from chunklab.core import Document
>>> configs, skipped = expand_grid([{"strategy": "fixed", "size": [4, 8], "overlap": [0, 0.5, 6]}])
>>> [c["params"] for c in configs][:3], skipped[0]["reason"][:22]
([{'size': 4, 'overlap': 0}, {'size': 4, 'overlap': 2}, {'size': 8, 'overlap': 0}], 'overlap must be an int')
"""
from __future__ import annotations

import contextlib
import csv
import dataclasses
import hashlib
import io
import itertools
import json
import math
import os
import tempfile
import time
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Sequence

from ..base import get_strategy
from ..core import Document
from ..datasets.questions import Question
from ..retrieval import CorpusIndex
from .distributed import parse_scheduler, run_on_dask
from .run import _needs_index, evaluate
from .settings import EvalSettings
from .matrix_pick import SIMPLER, recommend, simplicity
from .structure import structure_metrics

__all__ = ["expand_grid", "run_matrix", "MatrixResult", "ARTICLE_002_GRID", "MATRIX_SETTINGS", "simplicity",
           "SIMPLER", "PER_QUESTION_KEPT"]

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
    #: The retriever every config ranked with (``"fast"``/``"bm25"``, ``"dense"``, ``"hybrid"``;
    #: each row says it too, under ``engine``) and, for dense and hybrid, the embedder's name.
    engine: str | None = None
    embedder: str | None = None
    #: Configs not measured again because their chunks are exactly those of another config (see
    #: :func:`run_matrix`'s ``share``): label -> the label of the config measured.
    shared: dict[str, str] = field(default_factory=dict)
    #: Per config (by label), the per-question values of :data:`PER_QUESTION_KEPT` (question order of
    #: :attr:`question_ids`): what :meth:`recommend` pairs. Kept out of the rows.
    per_question: dict[str, dict[str, list[float]]] = field(default_factory=dict, repr=False)
    question_ids: list[str] = field(default_factory=list, repr=False)

    def recommend(self, metric: str = "hit", method: str = "holm", n: int = 2000, seed: int = 0,
                  level: float = 0.95) -> dict[str, Any]:
        """The configs not distinguishable from the best on ``metric``, and the simplest of them:
        :func:`~chunklab.evaluation.matrix_pick.recommend` of :attr:`rows` and :attr:`per_question`."""
        if not self.rows:
            raise ValueError("no configs ran")
        return recommend(self.rows, self.per_question, self.best(metric)["label"], metric=metric, method=method,
                         n=n, seed=seed, level=level)

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
            write_atomic(path, text)
        return text

    def to_json(self, path: str | os.PathLike | None = None, extra: dict[str, Any] | None = None) -> str:
        """``{"rows", "skipped", "seconds", "engine", "embedder", "shared"}`` as JSON (NaN written as null),
        and the keys of ``extra`` after them (e.g. the command line's ``ruler`` and ``recommendation``)."""
        def clean(v: Any) -> Any:
            if isinstance(v, float) and not math.isfinite(v):
                return None
            if isinstance(v, dict):
                return {k: clean(x) for k, x in v.items()}
            if isinstance(v, (list, tuple)):
                return [clean(x) for x in v]
            return v

        text = json.dumps(clean({"rows": self.rows, "skipped": self.skipped, "seconds": self.seconds,
                                 "engine": self.engine, "embedder": self.embedder, "shared": self.shared,
                                 **(extra or {})}),
                          ensure_ascii=False, indent=1)
        if path is not None:
            write_atomic(path, text)
        return text


#: The per-question values a matrix keeps for each config (:attr:`MatrixResult.per_question`).
PER_QUESTION_KEPT = ("hit", "mrr", "recall", "retrieved_chars", "retrieved_tokens")


def write_atomic(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all: into a temporary file in the same folder, then
    ``os.replace``; on failure (a full disk) the temporary file is removed and ``path`` is as it was."""
    path = os.fspath(path)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or ".", prefix=f".{os.path.basename(path)}.tmp-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        try:  # the mode the file has, or a new file's (mkstemp's is 0600)
            mode = os.stat(path).st_mode & 0o7777
        except OSError:
            mode = 0o666 & ~_umask()
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# --------------------------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------------------------

#: Per-process cache of the configuration-independent work, keyed by a fingerprint of the corpus,
#: the questions and the tokeniser, so a worker process of an executor tokenises the corpus once
#: however many configs it runs. A process pool that forks its workers after :func:`run_matrix`
#: filled it hands it to them as it is (nothing is sent or tokenised again); a worker keeps the
#: newest :data:`_KEEP` states.
_STATE: dict[str, tuple[Any, Any, Any]] = {}
_KEEP = 2


class _MissingState(LookupError):
    """A task sent without the corpus reached a worker that does not hold it (it is sent again with it)."""


def _fingerprint(documents: Sequence[Any], tokenizer: str, questions: Sequence[Any]) -> str:
    h = hashlib.sha1(tokenizer.encode())
    for d in documents:
        h.update(d.id.encode()); h.update(b"\0"); h.update(str(len(d.text)).encode()); h.update(b"\1")
        h.update(d.text[:64].encode()); h.update(d.text[-64:].encode())
    for q in _plain_questions(questions):  # the questions too: a worker that stays alive may see other ones
        h.update(b"\2"); h.update(repr(q).encode())
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


#: The retrievers :func:`run_matrix` runs.
_ENGINES = ("bm25", "fast", "dense", "hybrid")


def _state(key: str, documents: Any, questions: Any, tokenizer: str, index: bool = True) -> tuple[Any, Any, Any]:
    """``(documents, questions, CorpusIndex or None)`` of ``key``, made once per process.

    ``documents``/``questions`` None: the caller expects this process to hold them already
    (:class:`_MissingState` when it does not). ``index=False``: no CorpusIndex is needed (dense).
    """
    st = _STATE.get(key)
    if st is None:
        if documents is None or questions is None:
            raise _MissingState(key)
        if documents and isinstance(documents[0], tuple):
            documents = [Document(i, t, title, meta) for i, t, title, meta in documents]
        if questions and isinstance(questions[0], tuple):
            questions = [_Q(i, q, tuple(s)) for i, q, s in questions]
        # the per-corpus positions of the structure metrics, computed once here (a forked worker
        # inherits them with the rest)
        structure_metrics(documents, [])
        while len(_STATE) >= _KEEP:
            _STATE.pop(next(iter(_STATE)))
        st = _STATE[key] = (documents, questions, None)
    if index and st[2] is None:
        docs, qs, _ = st
        idx = CorpusIndex(docs, tokenizer=tokenizer)
        idx.encode_queries([q.question for q in qs])
        st = _STATE[key] = (docs, qs, idx)
    return st


def _run_config(key: str, documents: Any, questions: Any, cfg: dict[str, Any], settings: EvalSettings) -> dict[str, Any]:
    return _run_group(key, documents, questions, [cfg], settings)[0]


def _run_group(key: str, documents: Any, questions: Any, cfgs: list[dict[str, Any]],
               settings: EvalSettings) -> list[dict[str, Any]]:
    """The rows of ``cfgs``, in order (a group from :func:`_groups`: one task of an executor).

    A config whose chunks are those of the config measured before it in the group, in all that
    :func:`~chunklab.evaluation.evaluate` reads of them (see :func:`_same_chunks`), is not measured
    again: its row is that measurement under its own label and parameters, with its own chunking
    time and 0 s of index, search and metrics, and ``_SAME`` names the config measured.
    """
    docs, qs, index = _state(key, documents, questions, settings.tokenizer, _needs_index(settings))
    rows: list[dict[str, Any]] = []
    last: tuple[str, Any, Any] | None = None  # (label, chunks, EvalResult) of the last measured config
    for cfg in cfgs:
        t0 = time.perf_counter()
        chunks = get_strategy(cfg["strategy"], **cfg["params"]).split_documents(docs)
        ingest = time.perf_counter() - t0
        config = {"label": cfg["label"], "strategy": cfg["strategy"], **cfg["params"]}
        if last is not None and _same_chunks(last[1], chunks):
            res, same = _measured_as(last[2], config, ingest), last[0]
        else:
            res = evaluate(docs, chunks, qs, settings, index=index, ingest_seconds=ingest, config=config)
            same, last = None, (cfg["label"], chunks, res)
        row = res.summary()
        row.pop("warnings", None)  # said once per run by run_matrix, not in every row
        row["seconds"] = time.perf_counter() - t0
        row[_PER_Q] = {m: [float(x) for x in res.per_question[m]] for m in PER_QUESTION_KEPT if m in res.per_question}
        if res.warnings:
            row[_WARNINGS] = list(res.warnings)
        if same is not None:
            row[_SAME] = same
        rows.append(row)
    return rows


def _same_chunks(a: Sequence[Any], b: Sequence[Any]) -> bool:
    """Whether two chunkings are the same to BM25 evaluation: the same chunks in the same order, by
    document, offsets, text, context and ``meta["parse_failed"]`` (other metadata, such as the
    strategy's name, is not measured)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if (x.start != y.start or x.end != y.end or x.doc_id != y.doc_id or x.text != y.text
                or x.context != y.context or bool(x.meta.get("parse_failed")) != bool(y.meta.get("parse_failed"))):
            return False
    return True


def _measured_as(res: Any, config: dict[str, Any], ingest: float) -> Any:
    """``res`` (an EvalResult) as :func:`~chunklab.evaluation.evaluate` would give it for the same
    chunks under ``config``: its config keys, its chunking time, no index, search or metrics time."""
    cfg = {**config, **{k: v for k, v in res.config.items() if k not in config}}  # + what evaluate added
    return dataclasses.replace(res, config=cfg, structure={**res.structure, "ingest_seconds": float(ingest)},
                               timings={k: 0.0 for k in res.timings})


def _groups(configs: list[dict[str, Any]], share: bool) -> list[list[int]]:
    """Config positions in groups run by one task: with ``share``, the configs with the same
    parameters under different strategies (they may well cut the same chunks, e.g. ``recursive`` and
    ``paragraph`` on text whose paragraphs are its first separator), else one config per group."""
    if not share:
        return [[i] for i in range(len(configs))]
    groups: dict[str, list[int]] = {}
    for i, c in enumerate(configs):
        groups.setdefault(repr(sorted(c["params"].items())), []).append(i)
    return list(groups.values())


def _shares_state(executor: Executor) -> bool:
    """Whether ``executor``'s workers will see this process's :data:`_STATE` as it is now: threads,
    or a process pool that has not started its workers yet and will fork them."""
    if isinstance(executor, ThreadPoolExecutor):
        return True
    if isinstance(executor, ProcessPoolExecutor):
        ctx = getattr(executor, "_mp_context", None)
        started = getattr(executor, "_processes", None)
        return ctx is not None and ctx.get_start_method() == "fork" and not started
    return False


def _cost_order(configs: list[dict[str, Any]], groups: list[list[int]]) -> list[int]:
    """Group positions, the costliest guess first (the smallest size: the most chunks), so a pool's
    workers finish together."""
    def size(g: int) -> float:
        p = configs[groups[g][0]]["params"]
        v = p.get("size", p.get("target"))
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else math.inf
    return sorted(range(len(groups)), key=lambda g: (size(g), -len(groups[g])))


def _run_on_executor(executor: Executor, key: str, documents: list[Any], questions: list[Any],
                     configs: list[dict[str, Any]], groups: list[list[int]], s: EvalSettings,
                     open_bar: Callable[[], Any]) -> list[dict[str, Any]]:
    """Every group of configs (:func:`_groups`) as one task of ``executor``; rows in grid order.

    Tasks carry the corpus only when the workers cannot already hold it (see :func:`_shares_state`);
    a task that reaches a worker without it anyway is sent again with it. The progress bar (and
    its monitor thread) is opened once the tasks are sent, i.e. after a pool forked its workers.
    """
    plain: list[tuple[list, list]] = []

    def submit(g: int, by_value: bool) -> Future:
        if by_value and not plain:
            plain.append((_plain_docs(documents), _plain_questions(questions)))
        d, q = plain[0] if by_value else (None, None)
        return executor.submit(_run_group, key, d, q, [configs[i] for i in groups[g]], s)

    by_value = not _shares_state(executor)
    futures: dict[int, Future] = {g: submit(g, by_value) for g in _cost_order(configs, groups)}

    def results() -> Iterator[tuple[list[int], list[dict[str, Any]]]]:
        for g in sorted(futures, key=lambda g: groups[g][0]):
            try:
                out = futures[g].result()
            except _MissingState:
                out = submit(g, True).result()
            yield groups[g], out

    return _in_grid_order(len(configs), results(), open_bar())


def _in_grid_order(n: int, results: Iterable[tuple[list[int], list[dict[str, Any]]]],
                   bar: Any) -> list[dict[str, Any]]:
    """The rows of ``n`` configs from ``(group, its rows)`` pairs, in grid order; the bar counts
    each group as it comes."""
    rows: list[Any] = [None] * n
    for group, out in results:
        for i, row in zip(group, out):
            rows[i] = row
        if bar is not None:
            bar.update(len(out))
    return rows


_WARNINGS = "__warnings__"
_SAME = "__same_as__"
_PER_Q = "__per_question__"


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


def _forget(key: str) -> None:
    """Drop this process's state for ``key`` (run on every Dask worker after a run)."""
    _STATE.pop(key, None)


def _cpu_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _clamp_local(scheduler: str, n_configs: int) -> tuple[str, str | None]:
    """``local:N`` starts at most one worker process per config and per CPU core, as ``--jobs`` does.

    The scheduler to use, and a note (said once among the run's warnings) when that is fewer than N.
    """
    kind, n = parse_scheduler(scheduler)
    if kind != "local":
        return scheduler, None
    cores = _cpu_cores()
    workers = max(1, min(n, n_configs, cores))
    if workers == n:
        return scheduler, None
    return (f"local:{workers}",
            f"--scheduler {scheduler.strip()}: {workers} worker process{'es' if workers != 1 else ''} "
            f"({n_configs} configs, {cores} CPU cores)")


#: :func:`run_matrix`'s defaults: those of :class:`~chunklab.evaluation.settings.EvalSettings` but
#: 1,000 bootstrap resamples (a matrix has many rows).
MATRIX_SETTINGS = EvalSettings(n_boot=1000)


def run_matrix(documents: Sequence[Document], questions: Sequence[Question],
               grid: Sequence[dict[str, Any]] | dict[str, Any], settings: EvalSettings | None = None, *,
               executor: Executor | None = None, scheduler: str | None = None, progress: bool = True,
               share: bool = True, **options: Any) -> MatrixResult:
    """Run every config of ``grid`` (see :func:`expand_grid`) on ``documents`` and ``questions``.

    ``settings`` (default :data:`MATRIX_SETTINGS`), with single options given by keyword on top
    (``run_matrix(docs, qs, grid, k=5, budget=2000)``), is passed to
    :func:`~chunklab.evaluation.evaluate` for every config: ``budget`` / ``budget_unit`` (a fixed
    context budget instead of k), ``count_tokens`` (tok@k in cl100k tokens), ``use_context``,
    ``n_boot``, ``seed``, and the retriever: ``engine``

    * ``"bm25"`` (or ``"fast"``, the default): every config ranks with BM25 on one shared
      :class:`~chunklab.retrieval.CorpusIndex` (the corpus is tokenised once; ``tokenizer`` must
      be a name);
    * ``"dense"``: cosine similarity of ``embedder`` vectors (a name: ``"lsa"``, ``"e5-small"``,
      ``"use-multilingual"``; or an embedder object), no CorpusIndex;
    * ``"hybrid"``: BM25 on the shared index and dense, fused by reciprocal rank fusion.

    Each config is then :func:`~chunklab.evaluation.evaluate` of its chunking with these settings,
    so a row equals that call's ``summary()`` (timings aside); rows and the result say which
    retriever (``engine``) and embedder (``embedder``) ran.

    ``share`` (BM25): configs with the same parameters under different strategies run one after
    the other, and one whose chunks are exactly those of the config before it (same documents,
    offsets, texts, contexts and parse failures) is not measured again: its row is the same
    measurement (its own chunking time, 0 s of index, search and metrics) and
    :attr:`MatrixResult.shared` names the config it shares. ``share=False`` measures every config.

    ``executor``: any ``concurrent.futures.Executor`` (threads, processes, or a Dask/Ray executor
    with the same interface). The corpus is tokenised here first; threads share that work, and so
    do the workers of a process pool that has not started yet and forks them (Linux's default):
    their tasks carry only the config. Other workers get the documents and questions as plain
    tuples and tokenise the corpus once each. Without one, configs run in this process, sharing
    one :class:`~chunklab.retrieval.CorpusIndex`. Rows come back in grid order (the costliest
    configs are sent first, so the workers finish together).

    ``scheduler``: run the configs on Dask distributed instead (not with ``executor``):
    ``"tcp://host:8786"`` for a running scheduler, or ``"local:N"`` for a ``LocalCluster`` of N
    worker processes (at most one per config and per CPU core, like ``--jobs``; a warning says so
    when that is fewer than N); the corpus and questions are sent to each worker once, and configs lost with
    a worker are run again (:func:`~chunklab.evaluation.distributed.run_on_dask`).
    """
    if executor is not None and scheduler is not None:
        raise ValueError("give executor or scheduler (--scheduler), not both")
    s = EvalSettings.resolve(settings, options, default=MATRIX_SETTINGS)
    if not isinstance(s.tokenizer, str):
        raise ValueError(f"tokenizer must be a tokenizer name, got {s.tokenizer!r}")
    if not isinstance(s.engine, str) or s.engine not in _ENGINES:
        raise ValueError(f"engine must be one of {', '.join(map(repr, _ENGINES))} (a retriever run_matrix builds "
                         f"over each config's chunks), got {s.engine_name!r}")
    if s.engine in ("dense", "hybrid") and s.embedder is None:
        raise ValueError(f"engine {s.engine!r} needs an embedder: embedder='lsa', 'e5-small', 'use-multilingual' "
                         f"or an embedder object")
    t0 = time.perf_counter()
    documents = list(documents)
    questions = list(questions)
    configs, skipped = expand_grid(grid)
    groups = _groups(configs, share and s.engine in ("bm25", "fast"))
    key = _fingerprint(documents, s.tokenizer, questions)
    bar = None

    def open_bar() -> Any:
        nonlocal bar
        if progress and bar is None:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(configs), desc="matrix", unit="config")
        return bar

    setup = 0.0
    local_note = None
    if scheduler is not None:
        scheduler, local_note = _clamp_local(scheduler, len(configs))
        open_bar()
        run_key = f"{key}-{time.time_ns()}"  # run-scoped: long-lived workers never reuse a stale corpus
        rows = run_on_dask(scheduler, _run_config, configs, per_task=(s,), progress=bar,
                           shared=(run_key, _plain_docs(documents), _plain_questions(questions)),
                           names=[c["label"] for c in configs], cleanup=(_forget, (run_key,)))
    else:
        if executor is None:  # a pool's bar opens once its tasks are sent (see _run_on_executor)
            open_bar()
        ts = time.perf_counter()
        _state(key, documents, questions, s.tokenizer, _needs_index(s))  # before a forking pool starts
        setup = time.perf_counter() - ts
        try:
            if executor is None:
                ran = ((g, _run_group(key, documents, questions, [configs[i] for i in g], s)) for g in groups)
                rows = _in_grid_order(len(configs), ran, bar)
            else:
                rows = _run_on_executor(executor, key, documents, questions, configs, groups, s, open_bar)
        finally:
            _STATE.pop(key, None)  # a thread executor shares this process's cache
    if bar is not None:
        bar.close()
    warnings = ([local_note] if local_note else []) + _run_warnings(rows, s.k, s.budget)
    shared = {r["label"]: r.pop(_SAME) for r in rows if _SAME in r}
    per_question = {r["label"]: r.pop(_PER_Q) for r in rows if _PER_Q in r}
    return MatrixResult(rows, skipped, time.perf_counter() - t0, setup, warnings=warnings, engine=s.engine_name,
                        embedder=s.embedder_name if s.engine in ("dense", "hybrid") else None, shared=shared,
                        per_question=per_question, question_ids=[str(getattr(q, "id", i)) for i, q in enumerate(questions)])
