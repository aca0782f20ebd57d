"""Command line: ``python -m chunklab SUBCOMMAND``.

Every subcommand prints a human-readable report, or one JSON document with ``--json``. An error
(a missing file, a bad parameter, evidence not found) is one line on stderr (many bad lines: the
first and "N more") and exit status 2, never a traceback; with ``--json`` it is also one JSON
object ``{"error": ..., "where": ...}`` on stdout. Warnings (k clamped to the number of chunks,
nothing retrievable) are ``warning:`` lines on stderr, or a ``"warnings"`` list in the JSON. When
the reader of stdout goes away (``| head``) the command stops quietly with status 141 (128 +
SIGPIPE), as a Unix tool does. The limits are in the README's command-line section.

``eval``, ``compare`` and ``matrix`` measure a chunklab strategy or another library's splitter
(``--splitter MODULE:ATTR``, see :mod:`chunklab.cli.configs`), rank with ``--retriever`` (``bm25``,
the default, under the tokeniser ``--tokenizer``, default ``bigram``; ``dense`` or ``hybrid`` with
``--embedder``, default ``e5-small``; see :mod:`chunklab.cli.engines`; the report says what ran), and
read questions as JSONL or
in the CSV layout of Chroma's chunking benchmark (:mod:`chunklab.datasets.chroma`). A folder
corpus may hold PDFs: they go through the preprocessing pipeline and their chunks carry their pages.

``report`` writes one offline HTML page and its Markdown twin of a run (:mod:`chunklab.tools.report`;
why a subcommand: :mod:`chunklab.cli.report`), ``explain QID`` one question's miss in full, and
``eval --save`` / ``--baseline`` keep a run and gate a later one against it (:mod:`chunklab.cli.runs`).
``matrix`` prints the cost (characters, with ``--tokens`` also tokens, delivered per question) beside
the quality column named by its ruler, and recommends the simplest config not distinguishable from
the best (:mod:`chunklab.evaluation.matrix_pick`). ``export`` writes a corpus's chunks as JSONL or
Parquet for a vector store, optionally embedded (:mod:`chunklab.cli.export`). ``--metric-rules
chroma`` measures with Chroma's rules (:mod:`chunklab.evaluation.metrics`); ``--fusion`` and
``--weights`` say how ``hybrid`` fuses its rankings.

The package: :mod:`chunklab.cli.output` (printing, errors), :mod:`chunklab.cli.configs` (what is measured: corpus,
questions, settings, chunker), :mod:`chunklab.cli.engines` (``--retriever``, ``--embedder``),
:mod:`chunklab.cli.commands` (the subcommands), :mod:`chunklab.cli.report` (``explain``, the report's data),
:mod:`chunklab.cli.runs` (saved runs), :mod:`chunklab.cli.benchmarks` (``bench``), and here
``matrix``, ``report``, :func:`build_parser` and :func:`main`.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Sequence

from .._version import __version__
from ..datasets.files import MAX_FILE_BYTES, read_text_file
from ..datasets.questions import QuestionError
from ..evaluation import compare
from ..evaluation.distributed import parse_scheduler
from ..evaluation.matrix import ARTICLE_002_GRID, MATRIX_SETTINGS, PER_QUESTION_KEPT, expand_grid, run_matrix
from ..params import loads_json
from ..preprocess.pdf import MAX_FILE_CHARS, MAX_OCR_PAGES, MAX_PAGE_CHARS
from ..retrieval import CorpusIndex
from ..tools.audit import EMBEDDING_TOKEN_LIMIT
from ..tools.report import write_report
from .benchmarks import add_bench_parser
from .export import add_export_parser
from .commands import cmd_audit, cmd_chunk, cmd_compare, cmd_eval, cmd_strategies, cmd_text, cmd_validate
from .commands import auto_routes, by_groups
from .configs import (TOKENIZER_NAMES, WHERE_KEYS, eval_chunker, evaluate_chunker, load_inputs, parse_config, parse_where,
                      settings_from_args, splitter_chunker, where_fields, where_note)
from .configs import side_chunker
from .engines import add_retrieval_args, describe, retrieval_fields, retriever_name, side_settings, split_side
from .engines import progress_env
from .report import (cmd_explain, comparison_rows, evaluate_kept, explained_misses, headline, run_facts,
                     symptom_table, versions)
from .output import (CLIError, Parser, UsageError, cap, emit, fail, pipe_closed, question_error,
                     pdf_limits, runtime_warnings_as_lines, warn, where_of)

__all__ = ["main", "build_parser", "settings_from_args", "parse_config", "CLIError"]


def _read_grid(spec: str | None, cap: int) -> Any:
    """The grid named by ``--grid``: ``article002`` or a JSON file (a list of dicts, or one dict)."""
    if spec in (None, "article002"):
        return ARTICLE_002_GRID
    path = Path(spec)
    if not path.exists():
        raise CLIError(f"grid file not found: {path} (or use --grid article002)", where=str(path))
    text = read_text_file(path, cap)
    try:
        grid = loads_json(text)
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
        except OSError:
            continue
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            return name
        except OSError:  # a full disk: leave no empty or partial file behind
            Path(name).unlink(missing_ok=True)
    return None


def _workers(jobs: int, n_configs: int) -> tuple[int, str | None]:
    """Worker processes for ``--jobs``: at most one per config and one per CPU core (and a note when fewer)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    workers = max(1, min(jobs, n_configs, cores))
    note = f"--jobs {jobs}: {workers} worker process{'es' if workers != 1 else ''} ({n_configs} configs, {cores} CPU cores)"
    return workers, None if workers == jobs else note


def _splitter_row(corpus, questions, chunker, settings) -> tuple[dict[str, Any], list[str], dict[str, list[float]]]:
    """The matrix row of another library's splitter: measured like a grid config, on an index of its own;
    with its warnings and its per-question values (for the paired test against the best)."""
    t0 = time.perf_counter()
    index = CorpusIndex(corpus.documents, tokenizer=settings.tokenizer)
    res = evaluate_chunker(corpus, questions, chunker, settings, index=index,
                           config={"label": chunker.label, **chunker.config})
    row = res.summary()
    warnings = [f"{chunker.label}: {w}" for w in row.pop("warnings", ())]
    row["seconds"] = time.perf_counter() - t0
    per_q = {m: [float(x) for x in res.per_question[m]] for m in PER_QUESTION_KEPT if m in res.per_question}
    return row, warnings, per_q


def ruler_label(args, metric: str = "hit") -> str:
    """The name of a quality column under the run's ruler: ``hit@5``, or ``hit@budget 2000`` (chars) /
    ``hit@budget 2000 tokens``: under ``--budget`` a column never reads ``hit@5``."""
    if not getattr(args, "budget", None):
        return f"{metric}@{args.k}"
    unit = getattr(args, "budget_unit", "chars")
    return f"{metric}@budget {args.budget}" + (" tokens" if unit == "tokens" else "")


def matrix_mark(label: str, pick: dict[str, Any]) -> str:
    """A row's place against the best: ``best``, ``recommended``, ``≈ best`` (in the group) or ``below best``."""
    marks = []
    if label == pick["pick"]:
        marks.append("recommended")
    if label == pick["best"]:
        marks.append("best")
    elif label in pick["group"]:
        marks.append("≈ best")
    elif label in pick["tests"]:
        marks.append("below best")
    return ", ".join(marks)


def run_matrix_cli(args, corpus, questions, settings, grid: Any) -> tuple[Any, list[str], dict[str, Any]]:
    """The matrix of ``args`` (grid, ``--splitter``, ``--jobs``/``--scheduler``) on loaded inputs: the
    :class:`~chunklab.evaluation.matrix.MatrixResult` (engine named as the text names it), its warnings,
    and its recommendation (:meth:`~chunklab.evaluation.matrix.MatrixResult.recommend` on hit)."""
    configs, _ = expand_grid(grid)
    workers, note = _workers(args.jobs, len(configs))
    executor = ProcessPoolExecutor(max_workers=workers) if workers > 1 else None
    try:
        res = run_matrix(corpus.documents, questions, grid, settings, executor=executor,
                         scheduler=args.scheduler, progress=not args.json)
    finally:
        if executor is not None:
            executor.shutdown()
    warnings = ([note] if note else []) + list(res.warnings)
    if args.splitter is not None:  # one more row, after the grid's
        row, notes, per_q = _splitter_row(corpus, questions, splitter_chunker(args.splitter, args.splitter_args),
                                          settings)
        res.rows.append(row)
        res.per_question[row["label"]] = per_q
        warnings += notes
    engine = retriever_name(settings)  # "bm25", as the text says, not the engine's older name "fast"
    res.engine = engine
    for r in res.rows:
        if r.get("engine") in ("bm25", "fast"):
            r["engine"] = engine
    return res, warnings, res.recommend("hit")


def cmd_matrix(args) -> int:
    """Every config of the grid on the same questions. Beside each quality column the cost: characters
    delivered per question, and cl100k tokens with ``--tokens`` (tiktoken's encoder is loaded, and its
    cache written, only when asked); the ruler is in the column's name; the configs not
    distinguishable from the best (paired, Holm-corrected) are marked, the simplest of them recommended."""
    limit = cap(args)
    settings = settings_from_args(args, MATRIX_SETTINGS)
    if args.jobs < 1:
        raise CLIError(f"--jobs must be an int >= 1, got {args.jobs}", where="--jobs")
    if args.scheduler is not None:
        if args.jobs != 1:
            raise CLIError("--scheduler and --jobs are exclusive (the Dask workers run the configs)", where="--scheduler")
        try:
            parse_scheduler(args.scheduler)
        except ValueError as exc:
            raise CLIError(str(exc), where="--scheduler") from None
    if args.splitter_args and not args.splitter:
        raise CLIError("--splitter-args needs --splitter MODULE:ATTR", where="--splitter-args")
    if args.splitter:
        splitter_chunker(args.splitter, args.splitter_args)  # a bad splitter fails before the run
    out = _check_out(Path(args.out)) if args.out else None
    grid = _read_grid(args.grid, limit)
    try:
        configs, skipped = expand_grid(grid)
    except ValueError as exc:
        raise CLIError(f"{args.grid}: {exc}", where=args.grid) from None
    if not configs:
        reasons = "; ".join(f"{sk['label']}: {sk['reason']}" for sk in skipped[:3])
        if not skipped:
            raise CLIError(f"the grid {args.grid} has no configs", where=args.grid)
        raise CLIError(f"no config of the grid can run ({len(skipped)} skipped: {reasons})", where=args.grid)
    corpus, questions = load_inputs(args)
    res, warnings, pick = run_matrix_cli(args, corpus, questions, settings, grid)
    ruler = ruler_label(args)
    payload: dict[str, Any] = {"seconds": res.seconds, "tokenizer": settings.tokenizer_name,
                               **retrieval_fields(settings), "engine": res.engine, **where_fields(args),
                               "ruler": {"metric": "hit", "label": ruler, "k": args.k, "budget": args.budget,
                                         "budget_unit": args.budget_unit if args.budget else None,
                                         "cost": ["retrieved_chars"] + (["retrieved_tokens"] if args.tokens else [])},
                               "recommendation": pick, "rows": res.rows, "skipped": res.skipped}
    if warnings:
        payload["warnings"] = warnings
    failed = saved = None
    extra = {"ruler": payload["ruler"], "recommendation": pick}  # a .json --out says them too
    if out is not None:
        try:
            res.to_json(out, extra) if out.suffix == ".json" else res.to_csv(out)
        except OSError as exc:  # checked before the run, but a disk can fill: keep the results
            failed = f"cannot write --out {out} ({exc.strerror or exc})"
            saved = _save_elsewhere(res.to_json(None, extra) if out.suffix == ".json" else res.to_csv(), out)
            failed += f"; the results are in {saved} instead" if saved else "; the results are printed below"
            payload.update({"error": failed, "where": str(out), "saved_to": saved})

    def text() -> str:
        lines = [f"{len(res.rows)} configs in {res.seconds:.1f} s ({len(res.skipped)} skipped), "
                 f"{describe(settings)}{where_note(args)}",
                 f"quality: {ruler} [95% CI]; cost: characters" + (" and cl100k tokens" if args.tokens else "")
                 + " delivered per question (mean)" + ("" if args.tokens else "; --tokens adds tokens")]
        for r in sorted(res.rows, key=lambda r: (-r["hit"], r["label"])):
            over = r.get("embedder_over_limit")
            tokens = f" ({r['retrieved_tokens']:.0f} tokens)" if r.get("retrieved_tokens") is not None else ""
            delivered = (f"  delivered {r['retrieved_chars']:.0f} chars{tokens}"
                         if r.get("retrieved_chars") is not None else "")
            mark = matrix_mark(r["label"], pick)
            lines.append(f"{r['label']:<40} {ruler} {r['hit']:.3f} [{r['hit_lo']:.3f}, {r['hit_hi']:.3f}]"
                         f"{delivered}  chunks {r.get('chunks', '?')}" + (f"  over the token limit {over}" if over else "")
                         + (f"  {mark}" if mark else ""))
        m = len(pick["tests"])
        lines.append(f"recommended: {pick['pick']} — the simplest of the {len(pick['group'])} configs not "
                     f"distinguishable from the best ({pick['best']}) on {ruler} (paired bootstrap against the best, "
                     f"Holm-corrected over {m} comparison{'s' if m != 1 else ''}; {pick['simpler']})")
        for sk in res.skipped:
            lines.append(f"skipped {sk}")
        if failed and not saved:
            lines.append(res.to_json(None, extra) if out is not None and out.suffix == ".json" else res.to_csv())
        return "\n".join(lines)

    if not args.json:
        warn(warnings)
    emit(args, payload, text)
    if failed:
        print(f"error: {failed}", file=sys.stderr)
        return 2
    return 0


def cmd_report(args) -> int:
    """One self-contained HTML page and its Markdown twin (:mod:`chunklab.tools.report`): what ran, the
    headline with intervals, ``--compare``'s paired table with verdicts, ``--grid``'s matrix with cost
    and the recommended pick, the misses by symptom, the tables per type, difficulty and document, and
    the worst misses explained (see :mod:`chunklab.cli.report` for why this is a subcommand)."""
    t0 = time.perf_counter()
    out = Path(args.out)
    if out.suffix.lower() not in (".html", ".htm"):
        raise CLIError(f"--out must end in .html (the Markdown twin is written beside it as .md), got {out.name!r}",
                       where="--out")
    for f in (out.with_suffix(".html"), out.with_suffix(".md")):
        _check_out_file(f)
    if args.misses < 0:
        raise CLIError(f"--misses must be an int >= 0, got {args.misses}", where="--misses")
    settings = settings_from_args(args, embedder_alone=args.compare is not None)
    chunker = eval_chunker(args)
    other = None
    if args.compare is not None:
        spec, suffix = split_side(args.compare)
        other = (side_chunker(spec, args), side_settings(settings, suffix, args.embedder))
    grid = _read_grid(args.grid, cap(args)) if args.grid else None
    corpus, questions = load_inputs(args)
    index = CorpusIndex(corpus.documents, tokenizer=settings.tokenizer) if retriever_name(settings) != "dense" else None
    result, chunks = evaluate_kept(corpus, questions, chunker, settings, index=index)
    result, misses = explained_misses(result, corpus.documents, chunks, questions, args.misses)
    data: dict[str, Any] = {
        "title": f"chunklab report: {chunker.label} on {Path(corpus.name).name or corpus.name}",
        "created": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "versions": versions(),
        "command": "python -m chunklab " + " ".join(sys.argv[1:] if args.argv is None else args.argv),
        "run": run_facts(corpus, questions, args, chunker.label, settings, result),
        "headline": headline(result), "symptoms": symptom_table(result, questions),
        "by": by_groups(result, questions, WHERE_KEYS), "misses": misses}
    warnings = list(result.summary().get("warnings", ()))
    routes = auto_routes(chunker.config, corpus.documents)
    if routes is not None:  # auto: the report's routes section
        data["routes"] = routes
    if other is not None:
        side, side_s = other
        rb = evaluate_chunker(corpus, questions, side, side_s, index=index if retriever_name(side_s) != "dense" else None)
        data["comparison"] = {"a": f"{chunker.label} — {describe(settings, tokenizer=False)}",
                              "b": f"{side.label} — {describe(side_s, tokenizer=False)}",
                              "rows": comparison_rows(compare(result, rb, names=(chunker.label, side.label)))}
    if grid is not None:
        args.scheduler, args.jobs = None, 1
        res, notes, pick = run_matrix_cli(args, corpus, questions, settings, grid)
        warnings += notes
        data["matrix"] = {"ruler": ruler_label(args), "rows": res.rows, "recommendation": pick}
    html_path, md_path = write_report(data, out)
    payload = {"html": str(html_path), "markdown": str(md_path), "seconds": time.perf_counter() - t0,
               "questions": len(questions), "misses_explained": [m["id"] for m in misses]}
    if warnings:
        payload["warnings"] = warnings
        if not args.json:
            warn(warnings)
    emit(args, payload, lambda: f"wrote {html_path} and {md_path} ({len(questions)} questions, "
                                f"{len(misses)} misses explained)")
    return 0


def _check_out_file(path: Path) -> None:
    """A report file, checked before the run: its folder exists and it can be written."""
    if path.is_dir():
        raise CLIError(f"--out {path} is a folder: give a file name ending in .html", where="--out")
    if not path.parent.is_dir():
        raise CLIError(f"--out: folder {path.parent} does not exist", where="--out")
    if not os.access(path if path.exists() else path.parent, os.W_OK):
        raise CLIError(f"--out {path} cannot be written", where="--out")


#: ``--routes`` of eval and compare.
ROUTES_HELP = ("with the auto strategy, list every document's route (document -> strategy, the features that "
               "decided, any fallback); without it the list is printed up to 20 documents, else a count per "
               "route (JSON: 'routes' always)")


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="python -m chunklab", description="Chunk documents and measure the result.")
    p.add_argument("--version", action="version", version=f"chunklab {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("strategies", help="list strategies, their parameters and ranges")
    s.add_argument("--json", action="store_true", help="print one JSON list instead of the table")
    s.set_defaults(func=cmd_strategies)

    def where(sp) -> None:
        sp.add_argument("--where", action="append", metavar="KEY=VALUE",
                        help=f"keep only the questions whose KEY ({', '.join(WHERE_KEYS)}) is VALUE (KEY=A,B: "
                             f"either; repeatable, all must hold)")

    def max_file(sp) -> None:
        sp.add_argument("--max-file-mb", type=float, default=None, metavar="MB",
                        help=f"largest file read, in MB (default {MAX_FILE_BYTES // 1_000_000}); a bigger one is an error")
        sp.add_argument("--max-page-chars", type=int, default=None, metavar="N",
                        help=f"most characters a PDF page's text may hold (default {MAX_PAGE_CHARS:,}); "
                             f"more is an error naming the file and page")
        sp.add_argument("--max-pdf-chars", type=int, default=None, metavar="N",
                        help=f"most characters a PDF file's text may hold (default {MAX_FILE_CHARS:,}); "
                             f"more is an error naming the file")
        sp.add_argument("--max-ocr-pages", type=int, default=None, metavar="N",
                        help=f"most pages of a PDF file read by OCR, about 0.5 s each (default {MAX_OCR_PAGES:,}); "
                             f"more is an error naming the file and page")

    s = sub.add_parser("chunk", help="chunk one file and print the chunks")
    s.add_argument("file", help="the file to chunk (.md, .txt, .py, .html, .pdf, ...)")
    s.add_argument("--strategy", "-s", default="recursive", help="a chunklab strategy (default recursive; see strategies)")
    s.add_argument("--param", "-p", action="append", metavar="KEY=VALUE", help="strategy parameter (repeatable)")
    s.add_argument("--json", action="store_true", help="print the chunks as a JSON list (offsets, meta, text)")
    max_file(s)
    s.set_defaults(func=cmd_chunk)

    s = sub.add_parser("text", help="print one file's text exactly as chunklab sees it (PDF page marks on lines of their own)")
    s.add_argument("file", help="the file whose text to print")
    s.add_argument("--json", action="store_true",
                   help='one JSON object: path, doc_id, chars, pages [{"page", "start", "end"}], text')
    max_file(s)
    s.set_defaults(func=cmd_text)
    def corpus_args(sp, questions_required: bool = True, compare: bool = False) -> None:
        sp.add_argument("--corpus", "-c", help="xiaobei, laws, laws:民法典, stdlib, or a folder of your "
                                                ".md/.txt/.py/.pdf/... files")
        sp.add_argument("--questions", "-q", required=questions_required,
                        help="JSONL file, Chroma-benchmark CSV (question,references,corpus_id), or named set")
        sp.add_argument("--k", type=int, default=5,
                        help="chunks retrieved per question (default 5; more than the chunks counts as all of them)")
        max_file(sp)
        where(sp)
        sp.add_argument("--budget", type=int, default=None,
                        help="fill a fixed context budget (de-duplicated by offsets) instead of taking k chunks")
        sp.add_argument("--budget-unit", choices=("chars", "tokens"), default="chars",
                        help="unit of --budget: characters, or cl100k tokens (default chars)")
        sp.add_argument("--tokens", action="store_true", help="also measure tok@k in cl100k tokens (retrieved_tokens)")
        sp.add_argument("--context", action="store_true", help="index Chunk.context with the text (prefix)")
        sp.add_argument("--tokenizer", choices=TOKENIZER_NAMES, default=None,
                        help="how BM25 splits text into terms: bigram (default; Chinese character pairs, "
                             "words lower-cased), unigram_bigram, words (English words), jieba (Chinese words)")
        add_retrieval_args(sp, compare=compare)
        sp.add_argument("--splitter-args", metavar="JSON", default=None,
                        help='keyword arguments of the splitter, a JSON object, e.g. \'{"chunk_size": 500}\'')
        sp.add_argument("--json", action="store_true", help="print one JSON document instead of the text report")

    s = sub.add_parser("eval", help="evaluate one strategy (or another library's splitter) on a corpus and its questions")
    s.add_argument("--strategy", "-s", default=None, help="a chunklab strategy (default recursive)")
    s.add_argument("--param", "-p", action="append", metavar="KEY=VALUE", help="strategy parameter (repeatable)")
    s.add_argument("--splitter", metavar="MODULE:ATTR", default=None,
                   help="another library's splitter instead of --strategy, e.g. "
                        "langchain_text_splitters:RecursiveCharacterTextSplitter (arguments: --splitter-args)")
    s.add_argument("--misses", type=int, default=0, metavar="N",
                   help="also list N missed questions with their symptom (JSON: key 'misses'); "
                        "'explain QID' tells one of them in full")
    s.add_argument("--save", metavar="FILE.json", default=None,
                   help="also write this run (eval --json with per-question outcomes) to FILE.json, to compare a "
                        "later run against it with --baseline")
    s.add_argument("--baseline", metavar="FILE.json", default=None,
                   help="compare this run with one saved by --save, question by question (paired, Holm-corrected "
                        "over hit, mrr, recall); exit status 1 when a metric is worse beyond the noise")
    s.add_argument("--by", action="append", metavar="KEY",
                   help=f"after the table, hit (95%% CI) and mrr per group of questions: KEY one of "
                        f"{', '.join(WHERE_KEYS)} (repeatable; JSON: key 'by')")
    s.add_argument("--routes", action="store_true", help=ROUTES_HELP)
    corpus_args(s)
    s.set_defaults(func=cmd_eval)

    s = sub.add_parser("compare", help="paired comparison of two configurations, e.g. fixed:size=512 recursive:target=512",
                       description="Paired comparison of two configurations on the same questions. A side may "
                                   "rank its own way: recursive:target=512 recursive:target=512@dense compares "
                                   "BM25 with dense retrieval (e5-small) on the same chunks.")
    side = ("a chunklab config NAME:KEY=VALUE,...; 'splitter' (the --splitter one); or "
            "splitter:MODULE:ATTR[:JSON] (arguments: --splitter-args, then JSON); optionally followed by "
            "@RETRIEVER[:EMBEDDER], how this side ranks (e.g. recursive:target=512@dense, markdown@hybrid:lsa)")
    s.add_argument("a", help=side)
    s.add_argument("b", help=side)
    s.add_argument("--splitter", metavar="MODULE:ATTR", default=None,
                   help="the splitter a side written 'splitter' stands for")
    s.add_argument("--routes", action="store_true", help=ROUTES_HELP)
    corpus_args(s, compare=True)
    s.set_defaults(func=cmd_compare)

    s = sub.add_parser("matrix", help="run a strategies x parameters grid")
    s.add_argument("--grid", default="article002", help="JSON grid file, or 'article002' (27 configs)")
    s.add_argument("--out", help="write the result table (.csv or .json)")
    s.add_argument("--jobs", type=int, default=1,
                   help="worker processes (at most one per config and per CPU core)")
    s.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="run the configs on Dask: tcp://host:8786 (a running scheduler), a scheduler file "
                        "PATH.json, or local:N (a LocalCluster of N worker processes)")
    s.add_argument("--splitter", metavar="MODULE:ATTR", default=None,
                   help="also measure another library's splitter (one more row; arguments: --splitter-args)")
    corpus_args(s)
    s.set_defaults(func=cmd_matrix)

    s = sub.add_parser("report", help="write one self-contained HTML report (and its Markdown twin) of a run",
                       description="Measure a configuration (as eval does; --compare and --grid add a paired "
                                   "comparison and a matrix) and write one offline HTML page and a .md beside it.")
    s.add_argument("--out", "-o", required=True, metavar="FILE.html",
                   help="the HTML page to write; the Markdown twin goes beside it (FILE.md)")
    s.add_argument("--strategy", "-s", default=None, help="a chunklab strategy (default recursive)")
    s.add_argument("--param", "-p", action="append", metavar="KEY=VALUE", help="strategy parameter (repeatable)")
    s.add_argument("--splitter", metavar="MODULE:ATTR", default=None,
                   help="another library's splitter instead of --strategy (arguments: --splitter-args)")
    s.add_argument("--compare", metavar="CONFIG", default=None,
                   help="also compare with this configuration, paired, with verdicts (a side as compare writes it, "
                        "e.g. fixed:size=512 or recursive@dense)")
    s.add_argument("--grid", metavar="FILE", default=None,
                   help="also run this matrix grid (a JSON file, or article002): heatmap, cost and the recommended pick")
    s.add_argument("--misses", type=int, default=5, metavar="N",
                   help="explain the N worst misses in the chunk viewer (default 5)")
    corpus_args(s, compare=True)
    s.set_defaults(func=cmd_report, argv=None)

    s = sub.add_parser("explain", help="one question explained: evidence, holding chunks and their ranks, what "
                                       "ranked instead, the symptom with its counterfactual test, the suggested change")
    s.add_argument("qid", metavar="QID", help="the id of the question (as in the question file)")
    s.add_argument("--strategy", "-s", default=None, help="a chunklab strategy (default recursive)")
    s.add_argument("--param", "-p", action="append", metavar="KEY=VALUE", help="strategy parameter (repeatable)")
    s.add_argument("--splitter", metavar="MODULE:ATTR", default=None,
                   help="another library's splitter instead of --strategy (arguments: --splitter-args)")
    s.add_argument("--max-chars", type=int, default=400, metavar="N",
                   help="characters of each retrieved chunk shown (default 400)")
    corpus_args(s)
    s.set_defaults(func=cmd_explain)

    add_bench_parser(sub, max_file)
    add_export_parser(sub, max_file)

    s = sub.add_parser("validate", help="check that every evidence string is found exactly once (or at its offsets)")
    s.add_argument("--corpus", "-c", help="corpus name (xiaobei, laws, laws:民法典, stdlib) or folder path")
    s.add_argument("--questions", "-q", required=True,
                   help="JSONL question file, Chroma-benchmark CSV, or a named set")
    s.add_argument("--json", action="store_true", help="print the report as JSON")
    max_file(s)
    where(s)
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



def _unknown_first(argv: list[str]) -> str | None:
    """argparse reports a missing required option before an unknown one (``eval --bogus`` says
    "--questions is required"); the unknown option is the mistake to name first."""
    parser = build_parser()
    stack = [parser]
    while stack:  # every (sub)parser's required options become optional for this one look
        for action in stack.pop()._actions:
            action.required = False
            if isinstance(action, argparse._SubParsersAction):
                stack.extend(action.choices.values())
    try:
        _, extra = parser.parse_known_args(argv)
    except (UsageError, SystemExit):
        return None
    return f"unrecognized arguments: {' '.join(extra)}" if extra else None


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    as_json = "--json" in argv
    try:
        try:
            args = build_parser().parse_args(argv)
        except UsageError as exc:
            message = _unknown_first(argv) or exc.message
            m = re.match(r"argument ([^:]+): ", message)
            return fail(message, m.group(1) if m else None, as_json)
        except SystemExit as exc:  # --help or --version, already printed
            sys.stdout.flush()
            return int(exc.code or 0) if not isinstance(exc.code, str) else 2
        as_json = bool(getattr(args, "json", False))
        try:
            parse_where(getattr(args, "where", None))  # a bad --where fails before anything is read
            if getattr(args, "func", None) is cmd_report:
                args.argv = argv
            with runtime_warnings_as_lines(), pdf_limits(args), progress_env(args):
                status = int(args.func(args) or 0)
            sys.stdout.flush()
            return status
        except BrokenPipeError:
            raise
        except QuestionError as exc:
            return fail(*question_error(exc, args), as_json)
        except (CLIError, ValueError, TypeError, OSError, KeyError, ImportError) as exc:
            msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
            return fail(msg, where_of(exc), as_json)
    except BrokenPipeError:
        return pipe_closed()
    except KeyboardInterrupt:  # pragma: no cover
        print("interrupted", file=sys.stderr)
        return 130
