"""Retrievers by name: the one place where an engine is chosen and built over a chunking.

:func:`make_retriever` turns a name (``"bm25"``, ``"reference"``, ``"dense"``, ``"hybrid"``) into an
object with ``search(queries, k) -> Ranking`` over the given chunks; an object that already has a
``search`` method is passed through unchanged. :func:`~chunklab.evaluation.evaluate` builds its
engine here, so every way of ranking chunks is listed once, in this module.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Protocol, Sequence, runtime_checkable

import numpy as np

from ..params import Param
from .bm25 import BM25Reference, Ranking
from .corpus_index import CorpusIndex
from .dense import FUSIONS, RRF_CONSTANT, DenseIndex, fuse
from .embedders import EMBEDDERS, resolve_embedder
from .tokenizers import Tokenizer

__all__ = ["RETRIEVERS", "Retriever", "BM25Retriever", "ReferenceRetriever", "DenseRetriever", "HybridRetriever",
           "check_retriever", "make_retriever"]

#: Retriever names. ``"fast"`` is the older name of ``"bm25"`` and means the same engine.
RETRIEVERS: tuple[str, ...] = ("bm25", "fast", "reference", "dense", "hybrid")
_NAME = Param("choice", "bm25", "retriever name", choices=RETRIEVERS)
_FUSION = Param("choice", "rrf", "how hybrid retrieval fuses its rankings", choices=FUSIONS)
_USE_CONTEXT = Param("bool", False, "index chunk.embed_text (context + text) instead of chunk.text")


@runtime_checkable
class Retriever(Protocol):
    """What evaluation needs of a retriever: rank the chunks for each query."""

    def search(self, queries: Sequence[str], k: int = 5) -> Ranking:
        """Top ``k`` chunk indices (and scores) per query, best first, -1 padded."""
        ...  # pragma: no cover


def check_retriever(value: Any, name: str = "engine") -> Any:
    """``value`` if it names a retriever (see :data:`RETRIEVERS`) or has a ``search`` method; else a one-line error naming ``name``.

    >>> check_retriever("bm26")
    Traceback (most recent call last):
    ...
    chunklab.params.ParamError: engine must be one of 'bm25', 'fast', 'reference', 'dense', 'hybrid', got 'bm26'
    """
    if isinstance(value, str):
        return _NAME.validate(name, value)
    if callable(getattr(value, "search", None)):
        return value
    raise TypeError(f"{name} must be {_NAME.allowed()} or an object with .search(queries, k), "
                    f"got {type(value).__name__}")


def _texts(chunks: Sequence[Any], use_context: bool) -> list[str]:
    return [c.embed_text if use_context else c.text for c in chunks]


class BM25Retriever:
    """BM25 (:class:`~chunklab.retrieval.BM25Fast`) over chunks of a :class:`~chunklab.retrieval.CorpusIndex`'s corpus.

    ``bounds``: the chunks' global bounds on ``index.layout`` when already computed (see
    :meth:`CorpusIndex.term_counts <chunklab.retrieval.CorpusIndex.term_counts>`).
    """

    name = "bm25"

    def __init__(self, index: CorpusIndex, chunks: Sequence[Any], use_context: bool = False,
                 bounds: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        self.index = index
        self.bm25 = index.index_chunks(chunks, use_context=use_context, bounds=bounds)

    def search(self, queries: Sequence[str], k: int = 5) -> Ranking:
        return self.bm25.search(self.index.encode_queries(list(queries)), k=k)


class ReferenceRetriever:
    """rank-bm25 (:class:`~chunklab.retrieval.BM25Reference`) over the chunk texts: slow, the yardstick for ``bm25``."""

    name = "reference"

    def __init__(self, chunks: Sequence[Any], tokenizer: str | Tokenizer = "bigram", use_context: bool = False) -> None:
        self.engine = BM25Reference(_texts(chunks, use_context), tokenizer=tokenizer)

    def search(self, queries: Sequence[str], k: int = 5) -> Ranking:
        return self.engine.search(queries, k=k)


class DenseRetriever:
    """Cosine similarity of ``embedder`` vectors (:class:`~chunklab.retrieval.DenseIndex`) over the chunk texts.

    The chunks are embedded as passages and the queries as queries when the embedder has those
    modes (e5).
    """

    name = "dense"

    def __init__(self, chunks: Sequence[Any], embedder: Callable[[list[str]], Any], use_context: bool = False) -> None:
        self.embedder = embedder
        self.engine = DenseIndex(_texts(chunks, use_context), embedder)

    def search(self, queries: Sequence[str], k: int = 5) -> Ranking:
        return self.engine.search(queries, k=k)


class HybridRetriever:
    """Several retrievers fused by reciprocal rank fusion, or by normalised scores (:func:`~chunklab.retrieval.fuse`).

    Each one ranks ``k`` deep; the fused ranking keeps the first ``k``. ``fusion``: ``"rrf"``
    (default) or ``"score"``; ``weights``: a weight per retriever, by its ``name`` (``{"bm25": 1,
    "dense": 2}``; a retriever not named weighs 1); None (default): equal weights, plain RRF.
    """

    name = "hybrid"

    def __init__(self, retrievers: Sequence[Retriever], rrf_constant: float = 60, fusion: str = "rrf",
                 weights: Mapping[str, float] | None = None) -> None:
        if not retrievers:
            raise ValueError("retrievers must hold at least one retriever")
        self.retrievers = list(retrievers)
        self.rrf_constant = RRF_CONSTANT.validate("rrf_constant", rrf_constant)
        self.fusion = _FUSION.validate("fusion", fusion)
        names = [getattr(r, "name", type(r).__name__) for r in self.retrievers]
        unknown = sorted(set(weights or {}) - set(names))
        if unknown:
            raise ValueError(f"fusion weights name {', '.join(map(repr, unknown))}, not a retriever of this hybrid "
                             f"({', '.join(names)})")
        self.weights = None if weights is None else [float(dict(weights).get(n, 1.0)) for n in names]

    def search(self, queries: Sequence[str], k: int = 5) -> Ranking:
        return fuse([r.search(queries, k=k) for r in self.retrievers], k=k, rrf_constant=self.rrf_constant,
                    weights=self.weights, method=self.fusion)


def make_retriever(name: str | Retriever, documents: Sequence[Any], chunks: Sequence[Any], *,
                   tokenizer: str | Tokenizer = "bigram", index: CorpusIndex | None = None,
                   embedder: str | Callable[[list[str]], Any] | None = None, use_context: bool = False,
                   rrf_constant: float = 60, bounds: tuple[np.ndarray, np.ndarray] | None = None,
                   fusion: str = "rrf", fusion_weights: Mapping[str, float] | None = None) -> Retriever:
    """A retriever over ``chunks`` (windows of ``documents``), by name.

    * ``"bm25"`` (or its older name ``"fast"``): :class:`BM25Retriever` on ``index`` — a
      :class:`~chunklab.retrieval.CorpusIndex` of ``documents`` built once and reused across
      chunkings — or on one built here with ``tokenizer``;
    * ``"reference"``: :class:`ReferenceRetriever` (rank-bm25 with ``tokenizer``; same rankings, slow);
    * ``"dense"``: :class:`DenseRetriever` with ``embedder``: a name (``"lsa"``: fitted on the
      sentences of ``documents``; ``"e5-small"``, ``"use-multilingual"``: see
      :func:`~chunklab.retrieval.get_embedder`), an object with ``encode(list[str])``, or a
      callable ``list[str] -> 2-D array``;
    * ``"hybrid"``: ``bm25`` and ``dense`` fused by reciprocal rank fusion with ``rrf_constant``
      (``fusion="score"``: normalised score fusion), each weighted by ``fusion_weights``
      (``{"bm25": 1, "dense": 2}``; None: equal weights, plain RRF).

    An object with a ``search(queries, k)`` method is returned as it is (the other arguments are
    then ignored). ``use_context=True`` indexes ``chunk.embed_text`` (context + text).
    ``bounds``: ``index.layout.chunk_bounds(chunks)`` when the caller has computed it (with
    ``index=None``, on the layout of ``documents``), so the chunks are not placed twice.

    >>> from chunklab.core import Chunk, Document
    >>> doc = Document("d", "合同的订立。合同的效力。违约责任。")
    >>> cs = [Chunk("d", 0, 0, 6, "合同的订立。"), Chunk("d", 1, 6, 12, "合同的效力。"), Chunk("d", 2, 12, 17, "违约责任。")]
    >>> make_retriever("bm25", [doc], cs).search(["合同效力"], k=2).ids.tolist()
    [[1, 0]]
    >>> make_retriever("dense", [doc], cs, embedder="lsa").search(["违约"], k=1).ids.tolist()
    [[2]]
    >>> make_retriever("dense", [doc], cs)
    Traceback (most recent call last):
    ...
    ValueError: retriever 'dense' needs an embedder: a name (lsa, e5-small, use-multilingual), an object with encode(list[str]) or a callable list[str] -> 2-D array
    """
    name = check_retriever(name, "name")
    if not isinstance(name, str):
        return name
    use_context = _USE_CONTEXT.validate("use_context", use_context)
    rrf_constant = RRF_CONSTANT.validate("rrf_constant", rrf_constant)
    if name in ("dense", "hybrid"):
        if embedder is None:
            raise ValueError(f"retriever {name!r} needs an embedder: a name ({', '.join(EMBEDDERS)}), an object "
                             f"with encode(list[str]) or a callable list[str] -> 2-D array")
        embedder = resolve_embedder(embedder, documents)
    if name == "reference":
        return ReferenceRetriever(chunks, tokenizer=tokenizer, use_context=use_context)
    if name == "dense":
        return DenseRetriever(chunks, embedder, use_context=use_context)
    if index is None:
        index = CorpusIndex(documents, tokenizer=tokenizer)
    bm25 = BM25Retriever(index, chunks, use_context=use_context, bounds=bounds)
    if name == "hybrid":
        return HybridRetriever([bm25, DenseRetriever(chunks, embedder, use_context=use_context)], rrf_constant,
                               fusion=fusion, weights=fusion_weights)
    return bm25
