"""Command line: ``python -m chunklab SUBCOMMAND``.

Every subcommand prints a human-readable report, or one JSON document with
``--json``. Errors (a missing file, a bad parameter, evidence not found) are one
clear line on stderr and a non-zero exit status, never a traceback.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Callable, Sequence

from ._version import __version__
from .base import get_strategy, list_strategies
from .core import Document
from .datasets import Corpus, load_corpus
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
    """An error reported to the user as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (with where to find help) and exit status 2."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(2, f"error: {message} (see: {self.prog} --help)\n")


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
    return json.dumps(_jsonable(payload), ensure_ascii=False, indent=indent, default=str, allow_nan=False)


def _emit(args, payload: Any, text: Callable[[], str]) -> None:
    if getattr(args, "json", False):
        print(_dumps(payload))
    else:
        print(text())


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
    if not path.is_file():
        raise CLIError(f"file not found: {path}")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise CLIError(f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
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
    questions, problems = check_questions(args.questions, args.corpus)
    if args.corpus:
        corpus = load_corpus(args.corpus)
    elif args.questions in NAMED_SETS:
        corpus = load_corpus(NAMED_SETS[args.questions][1])
    else:
        raise CLIError("--corpus is required when --questions is a file")
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
    if args.config:
        with open(args.config, encoding="utf-8") as f:
            config = json.load(f)
    else:
        config = {"strategy": args.strategy, "params": parse_params(args.param),
                  "use_context": args.context, "transcribe_tables": args.transcribe_tables}
    canon = canonical_config(config)
    items = audit(args.corpus, canon, args.questions, k=args.k, token_limit=args.token_limit)
    version = index_version(canon, load_corpus(args.corpus).documents)
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

    s = sub.add_parser("chunk", help="chunk one file and print the chunks")
    s.add_argument("file")
    s.add_argument("--strategy", "-s", default="recursive")
    s.add_argument("--param", "-p", action="append", metavar="KEY=VALUE")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_chunk)
    def corpus_args(sp, questions_required: bool = True) -> None:
        sp.add_argument("--corpus", "-c", help="xiaobei, laws, laws:民法典, stdlib, or a folder of your .md/.txt/.py")
        sp.add_argument("--questions", "-q", required=questions_required, help="JSONL file or named set")
        sp.add_argument("--k", type=int, default=5, help="chunks retrieved per question (default 5)")
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
    s.add_argument("--jobs", type=int, default=1, help="worker processes")
    corpus_args(s)
    s.set_defaults(func=cmd_matrix)

    s = sub.add_parser("bench", help="benchmarks with a reference in the same run; prints JSON")
    s.add_argument("name", choices=("chunk", "matrix", "widget"))
    s.add_argument("--corpus", "-c", default=None)
    s.add_argument("--questions", "-q", default=None)
    s.add_argument("--json", action="store_true", help="one-line JSON")
    s.set_defaults(func=cmd_bench)

    s = sub.add_parser("validate", help="check that every evidence string is found exactly once")
    s.add_argument("--corpus", "-c", help="corpus name (xiaobei, laws, laws:民法典, stdlib) or folder path")
    s.add_argument("--questions", "-q", required=True, help="JSONL question file, or a named set")
    s.add_argument("--json", action="store_true", help="print the report as JSON")
    s.set_defaults(func=cmd_validate)

    s = sub.add_parser("audit", help="article 000's self-check list, measured: each item PASS or FAIL")
    s.add_argument("--corpus", "-c", required=True, help="xiaobei, laws, laws:民法典, stdlib, or a folder")
    s.add_argument("--strategy", "-s", default="auto", help="strategy name (default: auto)")
    s.add_argument("--param", "-p", action="append", metavar="KEY=VALUE", help="strategy parameter (repeatable)")
    s.add_argument("--config", help="a JSON file with the configuration (overrides --strategy/--param)")
    s.add_argument("--context", action="store_true", help="index Chunk.context with the text (use_context)")
    s.add_argument("--transcribe-tables", action="store_true", help="transcribe table rows into the context")
    s.add_argument("--questions", "-q", help="labeled questions: a named set (xiaobei, laws, stdlib) or a JSONL file")
    s.add_argument("--k", type=int, default=5, help="chunks retrieved per question (default 5)")
    s.add_argument("--token-limit", type=int, default=EMBEDDING_TOKEN_LIMIT,
                   help=f"embedding model limit in cl100k tokens (default {EMBEDDING_TOKEN_LIMIT})")
    s.add_argument("--json", action="store_true", help="print one JSON document")
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
    corpus = load_corpus(corpus_name)
    if args.questions is None:
        raise CLIError("--questions is required (a JSONL file or a named set: " + ", ".join(NAMED_SETS) + ")")
    questions = load_questions(args.questions, corpus)
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

    def text() -> str:
        lines = [f"A = {args.a}\nB = {args.b}\n{len(questions)} questions, k={args.k}",
                 f"{'metric':<10}{'A':>8}{'B':>8}{'A-B':>9}  95% CI            winner"]
        for m, r in result.items():
            lines.append(f"{m:<10}{r['mean_a']:>8.3f}{r['mean_b']:>8.3f}{r['diff']:>+9.3f}  "
                         f"[{r['lo']:+.3f}, {r['hi']:+.3f}]  {r['winner'] or '— (no real difference)'}")
        return "\n".join(lines)

    _emit(args, result, text)
    return 0


def cmd_matrix(args) -> int:
    settings = settings_from_args(args, MATRIX_SETTINGS)
    corpus, questions = _load(args)
    if args.grid in (None, "article002"):
        grid = ARTICLE_002_GRID
    else:
        path = Path(args.grid)
        if not path.is_file():
            raise CLIError(f"grid file not found: {path} (or use --grid article002)")
        try:
            grid = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise CLIError(f"{path} is not valid JSON: {exc}") from None
    if args.jobs < 1:
        raise CLIError(f"--jobs must be an int >= 1, got {args.jobs}")
    out = Path(args.out) if args.out else None
    if out is not None:  # checked now rather than after a long run
        if out.is_dir():
            raise CLIError(f"--out {out} is a folder: give a file name ending in .csv or .json")
        if out.suffix not in (".csv", ".json"):
            raise CLIError(f"--out must end in .csv or .json, got {out.name!r}")
        if not out.parent.is_dir():
            raise CLIError(f"--out: folder {out.parent} does not exist")

    configs, skipped = expand_grid(grid)
    if not configs:
        reasons = "; ".join(f"{sk['label']}: {sk['reason']}" for sk in skipped[:3])
        raise CLIError(f"no config of the grid can run ({len(skipped)} skipped: {reasons})")
    executor = None
    if args.jobs > 1:
        executor = ProcessPoolExecutor(max_workers=args.jobs)
    try:
        res = run_matrix(corpus.documents, questions, grid, settings, executor=executor, progress=not args.json)
    finally:
        if executor is not None:
            executor.shutdown()
    if out is not None:
        (res.to_json if out.suffix == ".json" else res.to_csv)(out)
    payload = {"seconds": res.seconds, "rows": res.rows, "skipped": res.skipped}

    def text() -> str:
        lines = [f"{len(res.rows)} configs in {res.seconds:.1f} s ({len(res.skipped)} skipped)"]
        for r in sorted(res.rows, key=lambda r: -r["hit"]):
            lines.append(f"{r['label']:<40} hit@{args.k} {r['hit']:.3f} [{r['hit_lo']:.3f}, {r['hit_hi']:.3f}]"
                         f"  chunks {r.get('chunks', '?')}")
        for sk in res.skipped:
            lines.append(f"skipped {sk}")
        return "\n".join(lines)

    _emit(args, payload, text)
    return 0


def cmd_bench(args) -> int:

    if args.name == "chunk":
        result = bench.bench_chunk(load_corpus(args.corpus or "laws").documents)
    elif args.name == "matrix":
        corpus = load_corpus(args.corpus or "laws")
        result = bench.bench_matrix(corpus.documents, load_questions(args.questions or "laws-scale", corpus))
    else:  # widget: the largest document of --corpus (default: the 民法典)
        corpus = load_corpus(args.corpus or "laws:民法典")
        doc = max(corpus.documents, key=lambda d: len(d.text))
        if args.questions is not None:
            qs = load_questions(args.questions, corpus)
        elif any(d.meta.get("articles") for d in corpus.documents):
            # known-item questions generated from this document's articles (as for laws-scale)

            qs = generate_scale_questions(Corpus(corpus.name, [doc]), n=200)
        else:
            raise CLIError("bench widget on this corpus needs --questions (questions are generated "
                           "only for legal corpora)")
        result = bench.bench_widget(doc, qs)
    print(_dumps(result, indent=None if args.json else 2))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a usage error already printed
        return int(exc.code or 0) if not isinstance(exc.code, str) else 2

    try:
        return int(args.func(args) or 0)
    except QuestionError as exc:
        n = len(exc.problems)
        first = str(exc.problems[0]).strip() if n else "?"
        rest = ("; `python -m chunklab validate --corpus CORPUS --questions FILE` lists all of them"
                if n > 1 else "")
        print(f"error: {n} problem{'s' if n != 1 else ''} in the question file, the first: {first}{rest}",
              file=sys.stderr)
        return 2
    except (CLIError, ValueError, TypeError, OSError, KeyError, ModuleNotFoundError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print("error: " + " ".join(str(msg).split("\n")), file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # pragma: no cover
        print("interrupted", file=sys.stderr)
        return 130
