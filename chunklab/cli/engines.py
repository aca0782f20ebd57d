"""How ``eval``, ``compare`` and ``matrix`` rank chunks: ``--retriever`` and ``--embedder``, and how reports say so.

``--retriever`` is ``bm25`` (the default), ``dense`` (cosine similarity of embeddings) or ``hybrid``
(BM25 and dense fused by reciprocal rank fusion); ``--embedder`` names the embedder of the last
two (``lsa``, ``e5-small``, ``use-multilingual``; default ``e5-small``, see
:data:`chunklab.retrieval.embedders.EMBEDDERS`). They map to
:attr:`EvalSettings.engine <chunklab.evaluation.EvalSettings>` and ``EvalSettings.embedder``.

``--embedder`` also takes ``MODULE:ATTR`` (as ``--splitter`` does): any callable ``list[str] ->
vectors``, an object with ``embed_documents`` (LangChain), ``encode`` (sentence-transformers) or
``embed`` (fastembed), or a class making one (its keyword arguments in ``--embedder-args`` where
the subcommand has it); see :func:`embedder_from_spec`. ``--fusion`` and ``--weights`` say how
``hybrid`` fuses its rankings (see :func:`fusion_options`).

A side of ``compare`` may carry its own retriever after ``@``: ``CONFIG@RETRIEVER[:EMBEDDER]``
(``recursive:target=512@dense``, ``recursive@hybrid:lsa``); a side without one uses
``--retriever`` / ``--embedder``. :func:`split_side` reads the suffix.

>>> split_side("recursive:target=512@dense:lsa")
('recursive:target=512', ('dense', 'lsa'))
>>> split_side("recursive:target=512")
('recursive:target=512', None)
>>> split_side("markdown@dense:mymodels:model")
('markdown', ('dense', 'mymodels:model'))
"""
from __future__ import annotations

import argparse
import contextlib
import difflib
import importlib
import inspect
import os
import re
from typing import Any, Iterator, Mapping

import numpy as np

from ..evaluation import EvalSettings
from ..evaluation.settings import parse_weights
from ..params import ParamError
from ..evaluation.metrics import METRIC_RULES
from ..retrieval.dense import FUSIONS
from ..retrieval.embedders import DEFAULT_EMBEDDER, EMBEDDERS, E5Embedder, USEEmbedder, get_embedder
from .output import CLIError

__all__ = ["RETRIEVER_NAMES", "NEEDS_EMBEDDER", "add_retrieval_args", "embedder_arg", "retrieval_options",
           "retriever_name", "split_side", "side_settings", "describe", "retrieval_fields", "embedder_from_spec",
           "MethodEmbedder", "progress_env", "fusion_options", "fusion_text"]

#: The retrievers ``--retriever`` accepts.
RETRIEVER_NAMES: tuple[str, ...] = ("bm25", "dense", "hybrid")
#: The retrievers that embed (and so take an embedder).
NEEDS_EMBEDDER: tuple[str, ...] = ("dense", "hybrid")
#: The input limit, in the model's own tokens, of the named embedders that have one.
_TOKEN_LIMIT = {"e5-small": E5Embedder.max_tokens, "use-multilingual": USEEmbedder.max_tokens}
_SUFFIX = re.compile(r"[A-Za-z0-9_.+-]+(?::[A-Za-z0-9_.+-]*(?::[A-Za-z_][A-Za-z0-9_.]*)?)?")


def _unknown(what: str, value: str, names: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(value, names, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown {what} {value!r}{hint}; the {what}s are {', '.join(names)}"


def embedder_arg(value: str) -> str:
    """argparse type of ``--embedder``: a known name or ``MODULE:ATTR``, else a one-line error listing the names."""
    if value not in EMBEDDERS and ":" not in value:
        raise argparse.ArgumentTypeError(_unknown("embedder", value, EMBEDDERS) + ", or MODULE:ATTR")
    return value


class MethodEmbedder:
    """``list[str] -> 2-D array`` from one method of a user's object (``embed_documents``, ``embed``),
    picklable (a worker process can receive it) when the object is."""

    def __init__(self, obj: Any, method: str) -> None:
        self.obj, self.method = obj, method

    def __call__(self, texts: list[str]) -> np.ndarray:
        return np.asarray([np.asarray(v, dtype=float) for v in getattr(self.obj, self.method)(list(texts))])


def embedder_from_spec(spec: str, args: Mapping[str, Any] | None = None, where: str = "--embedder") -> Any:
    """The embedder named ``MODULE:ATTR`` (``--embedder``), as a chunklab embedder named ``spec``.

    ``ATTR`` (dotted for a class attribute) is a callable ``list[str] -> vectors``, an object with
    ``embed_documents`` (LangChain's ``Embeddings``), ``encode`` (a sentence-transformers model) or
    ``embed`` (fastembed), or a class (or factory) that makes one, called with ``args``. Every
    failure is a one-line :class:`~chunklab.cli.output.CLIError` naming ``where`` and the spec.
    Vectors of a user's model are not kept in the disk cache (its arguments may change).

    >>> emb = embedder_from_spec("builtins:len")  # callable, though not an embedder: it fails when called
    >>> emb.name
    'builtins:len'
    >>> embedder_from_spec("textwrap:nothere")
    Traceback (most recent call last):
    ...
    chunklab.cli.output.CLIError: --embedder textwrap:nothere: module 'textwrap' has no attribute 'nothere'
    """
    module, _, attr = spec.partition(":")
    module, attr = module.strip(), attr.strip()
    head = f"{where} {spec}"
    if not module or not attr:
        raise CLIError(f"{head}: an embedder is a name ({', '.join(EMBEDDERS)}) or MODULE:ATTR, e.g. "
                       f"sentence_transformers:SentenceTransformer with its arguments", where=where)
    try:
        obj: Any = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        raise CLIError(f"{head}: no module named {exc.name or module!r} "
                       f"(pip install {(exc.name or module).split('.')[0].replace('_', '-')})", where=where) from None
    except Exception as exc:  # the module raised while importing
        raise CLIError(f"{head}: cannot import {module!r}: {type(exc).__name__}: {exc}", where=where) from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            close = difflib.get_close_matches(part, [n for n in dir(obj) if not n.startswith("_")], n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise CLIError(f"{head}: module {module!r} has no attribute {part!r}{hint}", where=where)
        obj = getattr(obj, part)
    args = dict(args or {})
    factory = inspect.isclass(obj) or (inspect.ismethod(obj) and inspect.isclass(obj.__self__))
    if factory or args:
        try:
            obj = obj(**args)
        except Exception as exc:
            raise CLIError(f"{head}: cannot be made with {args!r}: {type(exc).__name__}: {exc}", where=where) from None
    for method in ("embed_documents", "embed"):
        if callable(getattr(obj, method, None)) and not callable(getattr(obj, "encode", None)):
            return get_embedder(MethodEmbedder(obj, method), name=spec, cache=False)
    if callable(obj) or callable(getattr(obj, "encode", None)):
        return get_embedder(obj, name=spec, cache=False)
    raise CLIError(f"{head}: a {type(obj).__name__} is not an embedder: give a callable list[str] -> vectors, or an "
                   f"object with embed_documents, encode or embed", where=where)


def add_retrieval_args(sp: argparse.ArgumentParser, compare: bool = False) -> None:
    """``--retriever`` and ``--embedder`` on a subcommand's parser."""
    side = (" (a side written CONFIG@RETRIEVER[:EMBEDDER], e.g. recursive:target=512@dense, uses its own)"
            if compare else "")
    sp.add_argument("--retriever", choices=RETRIEVER_NAMES, default=None,
                    help="how chunks are ranked: bm25 (default; BM25 under --tokenizer), dense (cosine similarity "
                         "of --embedder vectors) or hybrid (both, fused by reciprocal rank fusion)" + side)
    sp.add_argument("--embedder", type=embedder_arg, default=None, metavar="NAME|MODULE:ATTR",
                    help=f"embedder of dense and hybrid retrieval: {', '.join(EMBEDDERS)} (default "
                         f"{DEFAULT_EMBEDDER}; lsa is lexical character n-grams made for Chinese text, poor on "
                         f"English; the others are neural models that ship in their wheels and run offline), or "
                         f"MODULE:ATTR: a callable list[str] -> vectors, or an object with "
                         f"embed_documents/encode/embed, or a class making one")
    sp.add_argument("--fusion", choices=FUSIONS, default=None,
                    help="how hybrid fuses BM25 and dense: rrf (reciprocal rank fusion, the default) or score "
                         "(each ranking's scores min-max normalised per question, then summed)")
    sp.add_argument("--weights", metavar="bm25=W,dense=W", default=None,
                    help="weight of each ranking in the hybrid fusion, e.g. bm25=1,dense=2 (default: equal); "
                         "a name left out weighs 1")
    sp.add_argument("--metric-rules", choices=METRIC_RULES, default=None,
                    help="chunklab (default) or chroma: Chroma's rules for its metrics, where chunklab deviates on "
                         "purpose — a chunk is placed at the first occurrence of its text (a trailing '.' stripped) "
                         "instead of where the splitter cut it, and a chunk that only touches the evidence counts in "
                         "precision_omega's denominator (chunklab's precision_omega reads up to ~1 point above "
                         "Chroma's report); only the metrics change, not what is retrieved")
    sp.add_argument("--progress", action="store_true",
                    help="show the embedding progress bar on stderr even when stderr is not a terminal")


@contextlib.contextmanager
def progress_env(args) -> Iterator[None]:
    """With ``--progress``: ``$CHUNKLAB_PROGRESS=1`` while the command runs, so the embedders draw
    their bar on stderr even when it is not a terminal (see
    :func:`~chunklab.retrieval.embedder_base.progress_enabled`); put back after."""
    if not getattr(args, "progress", False):
        yield
        return
    before = os.environ.get("CHUNKLAB_PROGRESS")
    os.environ["CHUNKLAB_PROGRESS"] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("CHUNKLAB_PROGRESS", None)
        else:
            os.environ["CHUNKLAB_PROGRESS"] = before


def retriever_name(settings: EvalSettings) -> str:
    """The retriever of ``settings`` as ``--retriever`` spells it (``"fast"`` is ``bm25``)."""
    return "bm25" if settings.engine in ("bm25", "fast") else settings.engine_name


def fusion_options(args) -> dict[str, Any]:
    """The ``EvalSettings`` changes for ``--fusion`` and ``--weights`` (``{}`` without them); a bad
    ``--weights`` is a one-line error naming it.

    >>> fusion_options(argparse.Namespace(fusion="score", weights="bm25=1,dense=2"))
    {'fusion': 'score', 'fusion_weights': (('bm25', 1.0), ('dense', 2.0))}
    """
    out: dict[str, Any] = {}
    if getattr(args, "fusion", None):
        out["fusion"] = args.fusion
    if getattr(args, "weights", None) is not None:
        try:
            out["fusion_weights"] = parse_weights(args.weights, "--weights")
        except ParamError as exc:
            raise CLIError(str(exc), where="--weights") from None
    return out


def fusion_text(settings: EvalSettings) -> str:
    """How a hybrid fuses, for a report: ``reciprocal rank fusion`` (equal weights),
    ``reciprocal rank fusion, weights bm25=1, dense=2``, ``normalised score fusion``."""
    words = "normalised score fusion" if settings.fusion == "score" else "reciprocal rank fusion"
    if settings.fusion_weights is not None:
        words += ", weights " + ", ".join(f"{n}={w:g}" for n, w in settings.fusion_weights)
    return words


def retrieval_options(retriever: str | None, embedder: str | None, base: EvalSettings) -> dict[str, Any]:
    """The ``EvalSettings`` changes for ``retriever`` (None: bm25) and ``embedder`` (None: the default)."""
    if retriever in (None, "bm25"):
        # bm25 keeps the engine's older name "fast" (the default), so summaries read as before
        return {"embedder": None} if base.engine in ("bm25", "fast") else {"engine": "bm25", "embedder": None}
    if embedder is not None and ":" in embedder:  # MODULE:ATTR, made once
        return {"engine": retriever, "embedder": _user_embedder(embedder)}
    return {"engine": retriever, "embedder": embedder or DEFAULT_EMBEDDER}


_MADE: dict[str, Any] = {}


def _user_embedder(spec: str) -> Any:
    """:func:`embedder_from_spec` once per spec in a process (both sides of compare share it)."""
    if spec not in _MADE:
        _MADE[spec] = embedder_from_spec(spec)
    return _MADE[spec]


def split_side(spec: str) -> tuple[str, tuple[str, str | None] | None]:
    """``CONFIG@RETRIEVER[:EMBEDDER]`` → ``(CONFIG, (RETRIEVER, EMBEDDER or None))``; without ``@``: ``(spec, None)``.

    An ``@`` followed by something that is not a word (``@`` inside a splitter's JSON) is left in
    the config; a word that is not a retriever or an embedder is a one-line error.
    """
    head, at, tail = spec.rpartition("@")
    if not at or not head.strip() or not _SUFFIX.fullmatch(tail.strip()):
        return spec, None
    retriever, _, embedder = tail.strip().partition(":")
    if retriever not in RETRIEVER_NAMES:
        raise CLIError(f"{spec}: {_unknown('retriever', retriever, RETRIEVER_NAMES)} "
                       f"(a side is CONFIG@RETRIEVER[:EMBEDDER])", where=spec)
    if embedder:
        if embedder not in EMBEDDERS and ":" not in embedder:  # MODULE:ATTR is made when the side runs
            raise CLIError(f"{spec}: {_unknown('embedder', embedder, EMBEDDERS)}", where=spec)
        if retriever not in NEEDS_EMBEDDER:
            raise CLIError(f"{spec}: {retriever} takes no embedder (only {' and '.join(NEEDS_EMBEDDER)} embed)",
                           where=spec)
    return head.strip(), (retriever, embedder or None)


def side_settings(settings: EvalSettings, suffix: tuple[str, str | None] | None, embedder: str | None) -> EvalSettings:
    """The settings of a ``compare`` side: ``settings``, or its own retriever (``embedder``: ``--embedder``)."""
    if suffix is None:
        return settings
    retriever, own = suffix
    return settings.replace(**retrieval_options(retriever, own or embedder, settings))


def _over_limit(summary: Mapping[str, Any]) -> str:
    n = summary.get("embedder_over_limit")
    if n is None:
        return ""
    limit = _TOKEN_LIMIT.get(str(summary.get("embedder")))
    where = f"its {limit}-token limit" if limit else "its token limit"
    return f" (no text over {where})" if not n else f" ({n} text{'s' if n != 1 else ''} over {where})"


def describe(settings: EvalSettings, summary: Mapping[str, Any] | None = None, tokenizer: bool = True) -> str:
    """What ranked, for a report: ``retriever bm25, tokenizer bigram``, ``retriever dense, embedder
    e5-small (no text over its 512-token limit)``; ``summary`` (of a run) adds the over-limit count."""
    name = retriever_name(settings)
    parts = [f"retriever {name}" + (f" (BM25 + dense, {fusion_text(settings)})" if name == "hybrid" else "")]
    if name in NEEDS_EMBEDDER:
        parts.append(f"embedder {settings.embedder_name}" + _over_limit(summary or {}))
    if tokenizer and name != "dense":
        parts.append(f"tokenizer {settings.tokenizer_name}")
    if settings.metric_rules != "chunklab":
        parts.append(f"metric rules {settings.metric_rules}")
    return ", ".join(parts)


def retrieval_fields(settings: EvalSettings, summary: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What ranked, for JSON: ``retriever``, ``embedder`` (None for bm25) and, when counted, ``embedder_over_limit``."""
    out: dict[str, Any] = {"retriever": retriever_name(settings),
                           "embedder": settings.embedder_name if retriever_name(settings) in NEEDS_EMBEDDER else None}
    if out["retriever"] == "hybrid":
        out["fusion"] = settings.fusion
        out["fusion_weights"] = dict(settings.fusion_weights) if settings.fusion_weights is not None else None
    if summary is not None and summary.get("embedder_over_limit") is not None:
        out["embedder_over_limit"] = summary["embedder_over_limit"]
    return out
