"""Command line: ``python -m chunklab SUBCOMMAND``.

Every subcommand prints a human-readable report, or one JSON document with ``--json``. An error
(a missing file, a bad parameter, evidence not found) is one line on stderr (many bad lines: the
first and "N more") and exit status 2, never a traceback; with ``--json`` it is also one JSON
object ``{"error": ..., "where": ...}`` on stdout. Warnings (k clamped to the number of chunks,
nothing retrievable) are ``warning:`` lines on stderr, or a ``"warnings"`` list in the JSON. When
the reader of stdout goes away (``| head``) the command stops quietly with status 141 (128 +
SIGPIPE), as a Unix tool does. The limits are in the README's command-line section.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import shlex
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from ._version import __version__
from .base import get_strategy, list_strategies
from .core import Document
from .datasets import Corpus, load_corpus
from .datasets.files import MAX_FILE_BYTES, read_text_file
from .datasets.questions import (NAMED_SETS, QuestionError, check_questions, generate_scale_questions,
                                 load_questions, summarize)
from .evaluation import EvalSettings, compare, evaluate
from .evaluation.matrix import ARTICLE_002_GRID, MATRIX_SETTINGS, expand_grid, run_matrix
from .params import parse_params
from .retrieval import CorpusIndex, Layout
from .tools import bench
from .tools.audit import EMBEDDING_TOKEN_LIMIT, audit, format_report
from .tools.versioning import canonical_config, index_version

__all__ = ["main", "build_parser"]


class CLIError(Exception):
    """An error reported to the user as one line, exit status 2; ``where`` names the file or option."""

    def __init__(self, message: str, where: str | None = None) -> None:
        super().__init__(message)
        self.where = where


class _UsageError(SystemExit):
    """A usage error found by argparse (exit status 2), reported by :func:`main` like every other error."""

    def __init__(self, message: str) -> None:
        super().__init__(2)
        self.message = message


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (with where to find help) and exit status 2."""

    def error(self, message: str):  # type: ignore[override]
        raise _UsageError(f"{message} (see: {self.prog} --help)")


def _jsonable(value: Any) -> Any:
    """``value`` with NaN and infinities as null (JSON has neither) and numpy scalars as numbers."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item") and callable(value.item) and getattr(value, "ndim", 1) == 0:
        value = value.item()  # numpy scalar
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _dumps(payload: Any, indent: int | None = 2) -> str:
    data = _jsonable(payload)
    text = json.dumps(data, ensure_ascii=False, indent=indent, default=str, allow_nan=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (a question file may hold "\ud800"): JSON's own escapes
        text = json.dumps(data, ensure_ascii=True, indent=indent, default=str, allow_nan=False)
    return text


def _emit(args, payload: Any, text: Callable[[], str]) -> None:
    if getattr(args, "json", False):
        print(_dumps(payload))
    else:
        print(text())


def _warn(warnings: Iterable[str]) -> None:
    """Each warning once, as a ``warning:`` line on stderr."""
    for w in dict.fromkeys(warnings):
        print(f"warning: {w}", file=sys.stderr)


def _cap(args) -> int:
    """``--max-file-mb`` in bytes."""
    mb = getattr(args, "max_file_mb", None)
    if mb is None:
        return MAX_FILE_BYTES
    if not (mb > 0 and math.isfinite(mb)):
        raise CLIError(f"--max-file-mb must be a number > 0, got {mb:g}", where="--max-file-mb")
    return max(1, round(mb * 1_000_000))


# -- subcommands -------------------------------------------------------------

def cmd_strategies(args) -> int:
    entries = list_strategies()

    def text() -> str:
        lines = []
        for e in entries:
            params = ", ".join(f"{k}={v['default']!r}" for k, v in e["params"].items())
            lines.append(f"{e['name']:<16} {e['family']:<11} {e['summary_zh']}\n{'':<28}{params}")
        return "\n".join(lines)

    _emit(args, entries, text)
    return 0


def cmd_chunk(args) -> int:
    path = Path(args.file)
    try:  # the corpus loader's reader: same BOM, newline and UTF-8 rules, so the same offsets
        text = read_text_file(path, _cap(args))
    except FileNotFoundError:
        raise CLIError(f"file not found: {path}", where=str(path)) from None
    except IsADirectoryError:
        raise CLIError(f"{path} is a folder, not a file: chunk reads one file (give a folder to eval or "
                       f"validate as --corpus)", where=str(path)) from None
    doc = Document(path.stem, text, title=path.stem, meta={"path": str(path)})
    strategy = get_strategy(args.strategy, **parse_params(args.param))
    chunks = strategy.split(doc)
    payload = [
        {"index": c.index, "start": c.start, "end": c.end, "length": len(c), "meta": dict(c.meta),
         "context": c.context, "text": c.text}
        for c in chunks
    ]

    def text_out() -> str:
        rows = [f"{strategy!r}: {len(chunks)} chunks from {len(text)} characters"]
        for c in chunks:
            preview = c.text[:60].replace("\n", "⏎")
            rows.append(f"#{c.index:<4} [{c.start}:{c.end}] len={len(c):<5} {c.meta.get('level', '')}  {preview}")
        return "\n".join(rows)

    _emit(args, payload, text_out)
    return 0


def cmd_validate(args) -> int:
    """Exit 0 when every evidence string is found exactly once, 1 when some line has a problem."""
    cap = _cap(args)
    if args.corpus:
        corpus = load_corpus(args.corpus, max_file_bytes=cap)
    elif args.questions in NAMED_SETS:
        corpus = load_corpus(NAMED_SETS[args.questions][1], max_file_bytes=cap)
    else:
        raise CLIError("--corpus is required when --questions is a file", where="--corpus")
    # the same reading and locating rules as eval's load_questions: only the reporting differs
    questions, problems = check_questions(args.questions, corpus, max_file_bytes=cap)
    report = {"questions_file": args.questions, "corpus": corpus.name, "ok": not problems,
              **summarize(questions), "problems": [p.to_json() for p in problems]}

    def text() -> str:
        lines = [f"{args.questions}: {len(questions)} questions located, {report['evidence']} evidence strings, "
                 f"corpus {corpus.name!r} ({len(corpus)} documents, {corpus.text_chars:,} chars)",
                 "by type:       " + (", ".join(f"{k} {v}" for k, v in report["by_type"].items()) or "-"),
                 "by difficulty: " + (", ".join(f"{k} {v}" for k, v in report["by_difficulty"].items()) or "-")]
        if problems:
            lines.append(f"FAILED: {len(problems)} problems on {len({p.line for p in problems})} lines:")
            lines.extend(f"  {p}" for p in problems)
        else:
            lines.append("OK: every evidence string found exactly once")
        return "\n".join(lines)

    _emit(args, report, text)
    return 1 if problems else 0


def cmd_audit(args) -> int:
    """Every item of article 000's checklist as PASS or FAIL; exit 1 when some item fails."""
    cap = _cap(args)
    if args.config:
        try:
            config = json.loads(read_text_file(args.config, cap))
        except json.JSONDecodeError as exc:
            raise CLIError(f"{args.config} is not valid JSON: {exc}", where=f"{args.config}:{exc.lineno}") from None
    else:
        config = {"strategy": args.strategy, "params": parse_params(args.param),
                  "use_context": args.context, "transcribe_tables": args.transcribe_tables}
    canon = canonical_config(config)
    corpus = load_corpus(args.corpus, max_file_bytes=cap)
    questions = load_questions(args.questions, corpus, max_file_bytes=cap) if args.questions else None
    items = audit(corpus, canon, questions, k=args.k, token_limit=args.token_limit)
    version = index_version(canon, corpus.documents)
    failed = sum(not it.passed for it in items)
    payload = {"corpus": args.corpus, "config": canon, "index_version": version, "ok": not failed,
               "items": [it._asdict() for it in items]}

    def text() -> str:
        head = (f"chunklab audit: {get_strategy(canon['strategy'], **canon['params'])!r} on {args.corpus}, "
                f"use_context={canon['use_context']}, transcribe_tables={canon['transcribe_tables']}, "
                f"index version {version}")
        return head + "\n" + format_report(items)

    _emit(args, payload, text)
    return 1 if failed else 0



def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m chunklab", description="Chunk documents and measure the result.")
    p.add_argument("--version", action="version", version=f"chunklab {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("strategies", help="list strategies, their parameters and ranges")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_strategies)

    def max_file(sp) -> None:
        sp.add_argument("--max-file-mb", type=float, default=None, metavar="MB",
                        help=f"largest file read, in MB (default {MAX_FILE_BYTES // 1_000_000}); a bigger one is an error")

    s = sub.add_parser("chunk", help="chunk one file and print the chunks")
    s.add_argument("file")
    s.add_argument("--strategy", "-s", default="recursive")
    s.add_argument("--param", "-p", action="append", metavar="KEY=VALUE")
    s.add_argument("--json", action="store_true")
    max_file(s)
    s.set_defaults(func=cmd_chunk)
    def corpus_args(sp, questions_required: bool = True) -> None:
        sp.add_argument("--corpus", "-c", help="xiaobei, laws, laws:民法典, stdlib, or a folder of your .md/.txt/.py")
        sp.add_argument("--questions", "-q", required=questions_required, help="JSONL file or named set")
        sp.add_argument("--k", type=int, default=5,
                        help="chunks retrieved per question (default 5; more than the chunks counts as all of them)")
        max_file(sp)
        sp.add_argument("--budget", type=int, default=None,
                        help="fill a fixed context budget (de-duplicated by offsets) instead of taking k chunks")
        sp.add_argument("--budget-unit", choices=("chars", "tokens"), default="chars",
                        help="unit of --budget: characters, or cl100k tokens (default chars)")
        sp.add_argument("--tokens", action="store_true", help="also measure tok@k in cl100k tokens (retrieved_tokens)")
        sp.add_argument("--context", action="store_true", help="index Chunk.context with the text (prefix)")
        sp.add_argument("--json", action="store_true")

    s = sub.add_parser("eval", help="evaluate one strategy on a corpus and its questions")
    s.add_argument("--strategy", "-s", default="recursive")
    s.add_argument("--param", "-p", action="append", metavar="KEY=VALUE")
    s.add_argument("--misses", type=int, default=0, metavar="N",
                   help="also list N missed questions with their symptom (JSON: key 'misses')")
    corpus_args(s)
    s.set_defaults(func=cmd_eval)

    s = sub.add_parser("compare", help="paired comparison of two configurations, e.g. fixed:size=512 recursive:target=512")
    s.add_argument("a")
    s.add_argument("b")
    corpus_args(s)
    s.set_defaults(func=cmd_compare)

    s = sub.add_parser("matrix", help="run a strategies x parameters grid")
    s.add_argument("--grid", default="article002", help="JSON grid file, or 'article002' (27 configs)")
    s.add_argument("--out", help="write the result table (.csv or .json)")
    s.add_argument("--jobs", type=int, default=1,
                   help="worker processes (at most one per config and per CPU core)")
    corpus_args(s)
    s.set_defaults(func=cmd_matrix)

    s = sub.add_parser("bench", help="benchmarks with a reference in the same run; prints JSON")
    s.add_argument("name", choices=("chunk", "matrix", "widget"))
    s.add_argument("--corpus", "-c", default=None)
    s.add_argument("--questions", "-q", default=None)
    s.add_argument("--json", action="store_true", help="one-line JSON")
    max_file(s)
    s.set_defaults(func=cmd_bench)

    s = sub.add_parser("validate", help="check that every evidence string is found exactly once")
    s.add_argument("--corpus", "-c", help="corpus name (xiaobei, laws, laws:民法典, stdlib) or folder path")
    s.add_argument("--questions", "-q", required=True, help="JSONL question file, or a named set")
    s.add_argument("--json", action="store_true", help="print the report as JSON")
    max_file(s)
    s.set_defaults(func=cmd_validate)

    s = sub.add_parser("audit", help="article 000's self-check list, measured: each item PASS or FAIL")
    s.add_argument("--corpus", "-c", required=True, help="xiaobei, laws, laws:民法典, stdlib, or a folder")
    s.add_argument("--strategy", "-s", default="auto", help="strategy name (default: auto)")
    s.add_argument("--param", "-p", action="append", metavar="KEY=VALUE", help="strategy parameter (repeatable)")
    s.add_argument("--config", help="a JSON file with the configuration (overrides --strategy/--param)")
    s.add_argument("--context", action="store_true", help="index Chunk.context with the text (use_context)")
    s.add_argument("--transcribe-tables", action="store_true", help="transcribe table rows into the context")
    s.add_argument("--questions", "-q", help="labeled questions: a named set (xiaobei, laws, stdlib) or a JSONL file")
    s.add_argument("--k", type=int, default=5,
                   help="chunks retrieved per question (default 5; more than the chunks counts as all of them)")
    s.add_argument("--token-limit", type=int, default=EMBEDDING_TOKEN_LIMIT,
                   help=f"embedding model limit in cl100k tokens (default {EMBEDDING_TOKEN_LIMIT})")
    s.add_argument("--json", action="store_true", help="print one JSON document")
    max_file(s)
    s.set_defaults(func=cmd_audit)
    return p


def parse_config(spec: str) -> tuple[str, dict[str, Any]]:
    """``"recursive:target=512,overlap=50"`` → ``("recursive", {"target": 512, "overlap": 50})``.

    >>> parse_config("fixed:size=512")
    ('fixed', {'size': 512})
    """
    name, _, rest = spec.partition(":")
    items = [p for p in rest.split(",") if p.strip()] if rest else []
    return name.strip(), parse_params(items)


def _load(args):
    """The corpus and questions named by ``--corpus`` / ``--questions`` (questions may be a named set)."""

    corpus_name = args.corpus
    if corpus_name is None:
        if args.questions in NAMED_SETS:
            corpus_name = NAMED_SETS[args.questions][1]
        else:
            raise CLIError("--corpus is required when --questions is a file")
    cap = _cap(args)
    corpus = load_corpus(corpus_name, max_file_bytes=cap)
    if args.questions is None:
        raise CLIError("--questions is required (a JSONL file or a named set: " + ", ".join(NAMED_SETS) + ")")
    questions = load_questions(args.questions, corpus, max_file_bytes=cap)
    if not questions:
        raise CLIError(f"no questions in {args.questions}")
    return corpus, questions


def settings_from_args(args, base: EvalSettings | None = None) -> EvalSettings:
    """The evaluation options of ``eval``, ``compare`` and ``matrix`` (``--k``, ``--budget``,
    ``--budget-unit``, ``--tokens``, ``--context``), on top of ``base`` (default: the defaults)."""
    return EvalSettings.resolve(base, {"k": args.k, "budget": args.budget, "budget_unit": args.budget_unit,
                                       "count_tokens": args.tokens, "use_context": args.context})


def _evaluate(corpus, questions, name: str, params: dict, settings: EvalSettings, index=None):
    strategy = get_strategy(name, **params)
    t0 = time.perf_counter()
    chunks = strategy.split_documents(corpus.documents)
    ingest = time.perf_counter() - t0
    return evaluate(corpus.documents, chunks, questions, settings, index=index, ingest_seconds=ingest,
                    config={"strategy": name, **params})


def cmd_eval(args) -> int:

    if args.misses < 0:
        raise CLIError(f"--misses must be an int >= 0, got {args.misses}")
    settings = settings_from_args(args)
    corpus, questions = _load(args)
    result = _evaluate(corpus, questions, args.strategy, parse_params(args.param), settings)
    summary = result.summary()
    by_id = {str(getattr(q, "id", i)): q for i, q in enumerate(questions)}
    layout = Layout(corpus.documents)
    misses = []
    for case in result.bad_cases[: args.misses]:
        q = by_id.get(str(case["question_id"]))
        a, b = case["evidence"]  # global offsets: back to the document and its own offsets
        doc_id, start = layout.to_local(a)
        misses.append({**case, "evidence": {"doc": doc_id, "start": start, "end": start + (b - a)},
                       "question": getattr(q, "question", None), "evidence_text": layout.text(a, b)})
    payload = {**summary, "misses": misses} if args.misses else summary
    if not args.json:  # with --json they are the summary's "warnings"
        _warn(summary.get("warnings", ()))

    def text() -> str:
        lines = [f"{args.strategy} {parse_params(args.param)} on {corpus.name}: {len(questions)} questions, "
                 f"k={args.k}" + (f", budget={args.budget}" if args.budget else ""),
                 result.table(["hit", "hit_strict", "recall", "mrr", "complete_single", "precision", "iou",
                               "duplication"]),
                 "misses by symptom: " + ", ".join(f"{k} {v}" for k, v in result.symptoms.items()),
                 f"chunks {summary.get('chunks')}, mean length {summary.get('len_mean', 0):.0f}, "
                 f"boundary alignment {summary.get('boundary_alignment', 0):.1%}"]
        for m in misses:
            rank = m["container_rank"] if m["container_rank"] is not None else "-"
            lines.append(f"  miss {m['question_id']} [{m['symptom']}] rank of a holding chunk {rank}: "
                         f"{(m['question'] or '')[:40]}")
        return "\n".join(lines)

    _emit(args, payload, text)
    return 0


def cmd_compare(args) -> int:

    settings = settings_from_args(args)
    corpus, questions = _load(args)
    index = CorpusIndex(corpus.documents)
    (na, pa), (nb, pb) = parse_config(args.a), parse_config(args.b)
    ra = _evaluate(corpus, questions, na, pa, settings, index=index)
    rb = _evaluate(corpus, questions, nb, pb, settings, index=index)
    result = compare(ra, rb, names=(args.a, args.b))
    _warn([f"{label}: {w}" for label, r in ((args.a, ra), (args.b, rb)) for w in r.summary().get("warnings", ())])

    def text() -> str:
        lines = [f"A = {args.a}\nB = {args.b}\n{len(questions)} questions, k={args.k}",
                 f"{'metric':<10}{'A':>8}{'B':>8}{'A-B':>9}  95% CI            winner"]
        for m, r in result.items():
            lines.append(f"{m:<10}{r['mean_a']:>8.3f}{r['mean_b']:>8.3f}{r['diff']:>+9.3f}  "
                         f"[{r['lo']:+.3f}, {r['hi']:+.3f}]  {r['winner'] or '— (no real difference)'}")
        return "\n".join(lines)

    _emit(args, result, text)
    return 0


def _read_grid(spec: str | None, cap: int) -> Any:
    """The grid named by ``--grid``: ``article002`` or a JSON file (a list of dicts, or one dict)."""
    if spec in (None, "article002"):
        return ARTICLE_002_GRID
    path = Path(spec)
    if not path.exists():
        raise CLIError(f"grid file not found: {path} (or use --grid article002)", where=str(path))
    text = read_text_file(path, cap)
    try:
        grid = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CLIError(f"{path} is not valid JSON: {exc}", where=f"{path}:{exc.lineno}") from None
    if not isinstance(grid, (list, dict)):
        raise CLIError(f'{path}: a grid is a JSON list of objects like {{"strategy": "fixed", "size": [512, 1024]}}, '
                       f"got {json.dumps(grid)[:60]}", where=str(path))
    return grid


def _check_out(out: Path) -> Path:
    """``--out``, checked before the run (rather than failing after it, losing the results)."""
    problem = (f"--out {out} is a folder: give a file name ending in .csv or .json" if out.is_dir() else
               f"--out must end in .csv or .json, got {out.name!r}" if out.suffix not in (".csv", ".json") else
               f"--out: folder {out.parent} does not exist" if not out.parent.exists() else
               f"--out: {out.parent} is not a folder" if not out.parent.is_dir() else
               f"--out {out} exists and is not a regular file" if out.exists() and not out.is_file() else None)
    if problem:
        raise CLIError(problem, where=str(out))
    try:
        if not os.access(out if out.exists() else out.parent, os.W_OK):
            raise PermissionError("not writable" if out.exists() else f"cannot create files in {out.parent}")
        if out.exists():
            open(out, "ab").close()  # opened for writing, left unchanged
        else:
            fd, probe = tempfile.mkstemp(dir=out.parent, prefix=".chunklab-probe-")
            os.close(fd)
            os.unlink(probe)
    except OSError as exc:
        raise CLIError(f"--out {out} cannot be written ({exc.strerror or exc}); checked before the run",
                       where=str(out)) from None
    return out


def _save_elsewhere(text: str, out: Path) -> str | None:
    """Write ``text`` beside ``out``, else in the temporary folder, else here; the path, or None."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for folder in (out.parent, Path(tempfile.gettempdir()), Path.cwd()):
        try:
            fd, name = tempfile.mkstemp(dir=folder, prefix=f"{out.stem}-unsaved-{stamp}-", suffix=out.suffix)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            return name
        except OSError:
            continue
    return None


def _workers(jobs: int, n_configs: int) -> tuple[int, str | None]:
    """Worker processes for ``--jobs``: at most one per config and one per CPU core (and a note when fewer)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    workers = max(1, min(jobs, n_configs, cores))
    note = f"--jobs {jobs}: {workers} worker process{'es' if workers != 1 else ''} ({n_configs} configs, {cores} CPU cores)"
    return workers, None if workers == jobs else note


def cmd_matrix(args) -> int:
    cap = _cap(args)
    settings = settings_from_args(args, MATRIX_SETTINGS)
    if args.jobs < 1:
        raise CLIError(f"--jobs must be an int >= 1, got {args.jobs}", where="--jobs")
    out = _check_out(Path(args.out)) if args.out else None
    grid = _read_grid(args.grid, cap)
    try:
        configs, skipped = expand_grid(grid)
    except ValueError as exc:
        raise CLIError(f"{args.grid}: {exc}", where=args.grid) from None
    if not configs:
        reasons = "; ".join(f"{sk['label']}: {sk['reason']}" for sk in skipped[:3])
        if not skipped:
            raise CLIError(f"the grid {args.grid} has no configs", where=args.grid)
        raise CLIError(f"no config of the grid can run ({len(skipped)} skipped: {reasons})", where=args.grid)
    corpus, questions = _load(args)
    workers, note = _workers(args.jobs, len(configs))
    executor = ProcessPoolExecutor(max_workers=workers) if workers > 1 else None
    try:
        res = run_matrix(corpus.documents, questions, grid, settings, executor=executor, progress=not args.json)
    finally:
        if executor is not None:
            executor.shutdown()
    warnings = ([note] if note else []) + list(res.warnings)
    payload: dict[str, Any] = {"seconds": res.seconds, "rows": res.rows, "skipped": res.skipped}
    if warnings:
        payload["warnings"] = warnings
    failed = saved = None
    if out is not None:
        try:
            (res.to_json if out.suffix == ".json" else res.to_csv)(out)
        except OSError as exc:  # checked before the run, but a disk can fill: keep the results
            failed = f"cannot write --out {out} ({exc.strerror or exc})"
            saved = _save_elsewhere(res.to_json() if out.suffix == ".json" else res.to_csv(), out)
            failed += f"; the results are in {saved} instead" if saved else "; the results are printed below"
            payload.update({"error": failed, "where": str(out), "saved_to": saved})

    def text() -> str:
        lines = [f"{len(res.rows)} configs in {res.seconds:.1f} s ({len(res.skipped)} skipped)"]
        for r in sorted(res.rows, key=lambda r: -r["hit"]):
            lines.append(f"{r['label']:<40} hit@{args.k} {r['hit']:.3f} [{r['hit_lo']:.3f}, {r['hit_hi']:.3f}]"
                         f"  chunks {r.get('chunks', '?')}")
        for sk in res.skipped:
            lines.append(f"skipped {sk}")
        if failed and not saved:
            lines.append(res.to_json() if out is not None and out.suffix == ".json" else res.to_csv())
        return "\n".join(lines)

    if not args.json:
        _warn(warnings)
    _emit(args, payload, text)
    if failed:
        print(f"error: {failed}", file=sys.stderr)
        return 2
    return 0


def cmd_bench(args) -> int:

    cap = _cap(args)
    if args.name == "chunk":
        result = bench.bench_chunk(load_corpus(args.corpus or "laws", max_file_bytes=cap).documents)
    elif args.name == "matrix":
        corpus = load_corpus(args.corpus or "laws", max_file_bytes=cap)
        result = bench.bench_matrix(corpus.documents,
                                    load_questions(args.questions or "laws-scale", corpus, max_file_bytes=cap))
    else:  # widget: the largest document of --corpus (default: the 民法典)
        corpus = load_corpus(args.corpus or "laws:民法典", max_file_bytes=cap)
        doc = max(corpus.documents, key=lambda d: len(d.text))
        if args.questions is not None:
            qs = load_questions(args.questions, corpus, max_file_bytes=cap)
        elif any(d.meta.get("articles") for d in corpus.documents):
            # known-item questions generated from this document's articles (as for laws-scale)

            qs = generate_scale_questions(Corpus(corpus.name, [doc]), n=200)
        else:
            raise CLIError("bench widget on this corpus needs --questions (questions are generated "
                           "only for legal corpora)")
        result = bench.bench_widget(doc, qs)
    print(_dumps(result, indent=None if args.json else 2))
    return 0


def _one_line(message: Any, limit: int = 2000) -> str:
    text = " ".join(str(message).split("\n")).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _fail(message: Any, where: str | None, as_json: bool) -> int:
    """Report an error: one line on stderr, and with ``--json`` one JSON object on stdout; status 2."""
    line = _one_line(message)
    print(f"error: {line}", file=sys.stderr)
    if as_json:
        print(_dumps({"error": line, "where": where}, indent=None))
    return 2


def _question_error(exc: QuestionError, args) -> tuple[str, str | None]:
    """The first problem of a question file, and how many more (``validate`` lists them all)."""
    n = len(exc.problems)
    if not n:
        return "a problem in the question file", None
    p = exc.problems[0]
    first = str(p).strip()
    where = f"{p.source}:{p.line}" if p.line else p.source
    if n == 1:
        return f"1 problem in the question file: {first}", where
    corpus = shlex.quote(str(getattr(args, "corpus", None) or "CORPUS"))
    questions = shlex.quote(str(getattr(args, "questions", None) or "FILE"))
    return (f"{n} problems in the question file, the first: {first} (and {n - 1} more; "
            f"`python -m chunklab validate --corpus {corpus} --questions {questions}` lists all of them)"), where


def _where(exc: BaseException) -> str | None:
    where = getattr(exc, "where", None) or getattr(exc, "path", None) or getattr(exc, "filename", None)
    return None if where is None else str(where)


def _pipe_closed() -> int:
    """The reader of stdout went away (``| head``): stop quietly, as Unix tools do.

    As the Python documentation recommends (``signal`` module, note on SIGPIPE), stdout is pointed
    at devnull so that the interpreter's last flush cannot fail again; the status is 141 (128 +
    SIGPIPE), what a shell reports for a Unix tool stopped the same way.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
    return 141


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    as_json = "--json" in argv
    try:
        try:
            args = build_parser().parse_args(argv)
        except _UsageError as exc:
            m = re.match(r"argument ([^:]+): ", exc.message)
            return _fail(exc.message, m.group(1) if m else None, as_json)
        except SystemExit as exc:  # --help or --version, already printed
            sys.stdout.flush()
            return int(exc.code or 0) if not isinstance(exc.code, str) else 2
        as_json = bool(getattr(args, "json", False))
        try:
            status = int(args.func(args) or 0)
            sys.stdout.flush()
            return status
        except BrokenPipeError:
            raise
        except QuestionError as exc:
            return _fail(*_question_error(exc, args), as_json)
        except (CLIError, ValueError, TypeError, OSError, KeyError, ModuleNotFoundError) as exc:
            msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
            return _fail(msg, _where(exc), as_json)
    except BrokenPipeError:
        return _pipe_closed()
    except KeyboardInterrupt:  # pragma: no cover
        print("interrupted", file=sys.stderr)
        return 130
