"""``python -m chunklab bench NAME``: the benchmarks of :mod:`chunklab.tools.bench` (and
:mod:`chunklab.tools.scale`), each printing one JSON object.

======== ===================================================================== ====================
name     what runs                                                             default corpus
======== ===================================================================== ====================
chunk    chunklab recursive vs LangChain's splitter on the same separators     laws
matrix   article 002's 27-config matrix, rank-bm25 timed on a sample           laws (laws-scale)
         (``--jobs N``: worker processes)
widget   one interactive step: re-chunk, re-index, evaluate 200 questions      laws:民法典
semantic semantic chunking with each of ``--embedders`` (cold and warm disk    laws:劳动合同法
         cache) beside Chonkie's SemanticChunker
scale    the matrix on synthetic corpora of ``--sizes`` MB                      (generated)
======== ===================================================================== ====================
"""
from __future__ import annotations

import argparse
import math
import sys
from typing import Any, Callable

from ..datasets import Corpus, load_corpus
from ..datasets.questions import generate_scale_questions, load_questions
from ..retrieval.embedders import EMBEDDERS
from ..tools import bench, scale
from .output import CLIError, cap, dumps

__all__ = ["BENCHMARKS", "add_bench_parser", "cmd_bench", "parse_sizes", "parse_embedders"]

#: The benchmark names ``bench`` accepts.
BENCHMARKS: tuple[str, ...] = ("chunk", "matrix", "widget", "semantic", "scale")
#: Corpus of ``bench semantic`` when ``--corpus`` is not given: small, so a neural model runs in minutes.
SEMANTIC_CORPUS = "laws:劳动合同法"


def parse_sizes(text: str) -> tuple[float, ...]:
    """``"25,50,100"`` → ``(25, 50, 100)``: corpus sizes in MB, each a number > 0.

    >>> parse_sizes("25, 50,0.5")
    (25, 50, 0.5)
    """
    sizes: list[float] = []
    for part in text.split(","):
        try:
            mb = float(part)
        except ValueError:
            raise CLIError(f"--sizes is a comma-separated list of sizes in MB, e.g. 25,50,100,200; "
                           f"got {part.strip()!r}", where="--sizes") from None
        if not (mb > 0 and math.isfinite(mb)):
            raise CLIError(f"--sizes: each size must be a number of MB > 0, got {part.strip()!r}", where="--sizes")
        sizes.append(int(mb) if mb.is_integer() else mb)
    return tuple(sizes)


def parse_embedders(text: str) -> tuple[str, ...]:
    """``"lsa,e5-small"`` → ``("lsa", "e5-small")``; an unknown name is a one-line error listing the names."""
    names = tuple(dict.fromkeys(p.strip() for p in text.split(",") if p.strip()))
    if not names:
        raise CLIError(f"--embedders names one or more of {', '.join(EMBEDDERS)}, comma-separated", where="--embedders")
    for name in names:
        if name not in EMBEDDERS:
            raise CLIError(f"--embedders: unknown embedder {name!r}; the embedders are {', '.join(EMBEDDERS)}",
                           where="--embedders")
    return names


def add_bench_parser(sub, max_file: Callable[[argparse.ArgumentParser], None]) -> None:
    """The ``bench`` subcommand on the subparsers ``sub``."""
    s = sub.add_parser("bench", help="benchmarks with a reference in the same run; prints JSON",
                       description="Benchmarks, each with a reference in the same run; prints one JSON object. "
                                   "chunk, matrix, widget, semantic, scale (see the README's Benchmarks section).")
    s.add_argument("name", choices=BENCHMARKS, help=f"the benchmark to run: {', '.join(BENCHMARKS)}")
    s.add_argument("--corpus", "-c", default=None,
                   help="corpus (default: laws for chunk and matrix, laws:民法典 for widget, "
                        f"{SEMANTIC_CORPUS} for semantic)")
    s.add_argument("--questions", "-q", default=None, help="questions of matrix and widget")
    s.add_argument("--jobs", type=int, default=None, metavar="N", help="matrix: worker processes (default 1)")
    s.add_argument("--embedders", default=None, metavar="NAMES",
                   help=f"semantic: comma-separated embedders among {', '.join(EMBEDDERS)} (default lsa,e5-small)")
    s.add_argument("--sizes", default=None, metavar="MB,...",
                   help="scale: comma-separated corpus sizes in MB (default "
                        f"{','.join(map(str, scale.SIZES_MB))})")
    s.add_argument("--json", action="store_true", help="one-line JSON")
    max_file(s)
    s.set_defaults(func=cmd_bench)


def _only_for(args, option: str, names: tuple[str, ...]) -> None:
    if getattr(args, option.lstrip("-").replace("-", "_")) is not None and args.name not in names:
        raise CLIError(f"{option} applies to bench {' and '.join(names)}, not bench {args.name}", where=option)


def cmd_bench(args) -> int:
    limit = cap(args)
    _only_for(args, "--jobs", ("matrix",))
    _only_for(args, "--embedders", ("semantic",))
    _only_for(args, "--sizes", ("scale",))
    _only_for(args, "--corpus", ("chunk", "matrix", "widget", "semantic"))
    _only_for(args, "--questions", ("matrix", "widget"))
    result: Any
    if args.name == "chunk":
        result = bench.bench_chunk(load_corpus(args.corpus or "laws", max_file_bytes=limit).documents)
    elif args.name == "matrix":
        if args.jobs is not None and args.jobs < 1:
            raise CLIError(f"--jobs must be an int >= 1, got {args.jobs}", where="--jobs")
        corpus = load_corpus(args.corpus or "laws", max_file_bytes=limit)
        jobs = {} if args.jobs is None else {"jobs": args.jobs}  # without --jobs: bench_matrix's default
        result = bench.bench_matrix(corpus.documents,
                                    load_questions(args.questions or "laws-scale", corpus, max_file_bytes=limit),
                                    **jobs)
    elif args.name == "semantic":
        embedders = {} if args.embedders is None else {"embedders": parse_embedders(args.embedders)}
        corpus = load_corpus(args.corpus or SEMANTIC_CORPUS, max_file_bytes=limit)
        result = bench.bench_semantic(corpus.documents, **embedders)  # without --embedders: its default
    elif args.name == "scale":
        sizes = {} if args.sizes is None else {"sizes_mb": parse_sizes(args.sizes)}  # else bench_scale's default
        result = scale.bench_scale(progress=sys.stderr.isatty(), **sizes)
    else:  # widget: the largest document of --corpus (default: the 民法典)
        corpus = load_corpus(args.corpus or "laws:民法典", max_file_bytes=limit)
        doc = max(corpus.documents, key=lambda d: len(d.text))
        if args.questions is not None:
            qs = load_questions(args.questions, corpus, max_file_bytes=limit)
        elif any(d.meta.get("articles") for d in corpus.documents):
            # known-item questions generated from this document's articles (as for laws-scale)
            qs = generate_scale_questions(Corpus(corpus.name, [doc]), n=200)
        else:
            raise CLIError("bench widget on this corpus needs --questions (questions are generated "
                           "only for legal corpora)")
        result = bench.bench_widget(doc, qs)
    print(dumps(result, indent=None if args.json else 2))
    return 0
