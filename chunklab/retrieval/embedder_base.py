"""The interface every embedder of :mod:`chunklab.retrieval.embedders` offers, and the adapters for user objects.

:class:`NeuralEmbedder` does the work the models share — symmetric and retrieval modes, batches,
float32 unit rows, the token limit and what happens past it (counted in :class:`EmbedStats`),
the memory and disk caches, the progress bar — and a subclass supplies ``_encode`` (and, for a
model with a limit, ``_token_counts``). :class:`EncodeEmbedder` and :class:`CallableEmbedder`
bring a sentence-transformers-like object or a plain callable to the same interface.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
import os
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ..params import Param, ParamError
from .embed import _check_texts, check_embeddings
from .embed_cache import EmbeddingCache

__all__ = ["MODES", "OVERFLOW", "EmbedStats", "NeuralEmbedder", "EncodeEmbedder", "CallableEmbedder",
           "progress_enabled"]

#: ``mode`` values: ``None`` is the symmetric mode of ``embedder(texts)``.
MODES = ("query", "passage")
#: What happens to an input longer than the model's limit.
OVERFLOW = ("truncate", "window", "error")
#: Below this many texts to embed, the automatic progress bar stays off.
_PROGRESS_MIN = 256


@dataclass
class EmbedStats:
    """What an embedder did, cumulated over its calls (subtract two copies for one run).

    ``texts``: inputs asked for; ``embedded``: texts computed by the model; ``cache_hits``: the
    other inputs (from the memory or disk cache, or repeated in the same call); ``over_limit``: inputs longer than ``max_tokens``;
    ``tokens_over``: their tokens past the limit, summed; ``truncated``: inputs that were cut to
    fit; ``max_tokens_seen``: the longest input, in tokens (0: not counted); ``seconds``: time in
    the model (wall clock), ``cpu_seconds``: the process's CPU time meanwhile (all its threads).
    """

    texts: int = 0
    embedded: int = 0
    cache_hits: int = 0
    over_limit: int = 0
    tokens_over: int = 0
    truncated: int = 0
    max_tokens_seen: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0

    def copy(self) -> "EmbedStats":
        return dataclasses.replace(self)

    def __sub__(self, other: "EmbedStats") -> "EmbedStats":
        out = {f.name: getattr(self, f.name) - getattr(other, f.name) for f in dataclasses.fields(self)}
        out["max_tokens_seen"] = self.max_tokens_seen
        return EmbedStats(**out)

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def progress_enabled(progress: bool | None, total: int) -> bool:
    """Whether to draw a progress bar for ``total`` texts.

    ``True``/``False`` decide; ``None`` (the default everywhere) follows ``$CHUNKLAB_PROGRESS``
    (``1`` on, ``0`` off) when it is set, and otherwise shows a bar only for at least 256 texts
    and only when stderr is a terminal — so never in a notebook, a test or the book's build.
    """
    if progress is not None:
        return bool(progress)
    env = os.environ.get("CHUNKLAB_PROGRESS", "").strip()
    if env in ("0", "1"):
        return env == "1"
    isatty = getattr(sys.stderr, "isatty", None)
    return total >= _PROGRESS_MIN and bool(isatty and isatty())


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def _bar(enabled: bool, total: int, desc: str):
    if not enabled:
        return _NoBar()
    from tqdm import tqdm  # optional at import time; a requirement of the project

    return tqdm(total=total, desc=desc, unit="text", file=sys.stderr, leave=False)


# -- the common interface ---------------------------------------------------------------------

class NeuralEmbedder:
    """The interface every embedder of this module offers; subclasses supply the model.

    ``batch_size``: texts per model call. ``cache``: ``"auto"`` (on disk at the default place
    for the named models, in memory only for user objects), ``True`` (on disk, default place),
    ``False``/``None`` (memory only), a folder, or an :class:`EmbeddingCache`. ``progress``: see
    :func:`progress_enabled`. ``overflow``: see the module docstring.
    """

    #: The modes the model distinguishes (empty: all modes embed the same way).
    modes: tuple[str, ...] = ()
    #: The mode of ``embedder(texts)`` for a model with modes.
    symmetric_mode: str | None = None
    #: The model's input limit in its tokens, or None.
    max_tokens: int | None = None
    _disk_by_default = False

    def __init__(self, name: str, *, batch_size: int = 64, cache: Any = "auto", progress: bool | None = None,
                 overflow: str = "truncate", memory_size: int = 100_000) -> None:
        if not isinstance(name, str) or not name:
            raise TypeError(f"name must be a non-empty str, got {name!r}")
        self.name = name
        self.batch_size = Param("int", 64, low=1).validate("batch_size", batch_size)
        self.overflow = Param("choice", "truncate", choices=OVERFLOW).validate("overflow", overflow)
        if progress is not None and not isinstance(progress, bool):
            raise TypeError(f"progress must be True, False or None, got {progress!r}")
        self.progress = progress
        self.memory_size = Param("int", 100_000, low=1).validate("memory_size", memory_size)
        self.disk = _disk_cache(cache, self._disk_by_default)
        self.stats = EmbedStats()
        self.dims: int | None = None
        self._memory: dict[tuple[str, str], tuple[np.ndarray, int]] = {}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, dims={self.dims}, max_tokens={self.max_tokens})"

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_memory"] = {}
        return state

    # -- public --------------------------------------------------------------------------
    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` in the symmetric mode (comparing texts with each other)."""
        return self.embed(texts, None)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Embed search queries (e5: the ``"query: "`` prefix)."""
        return self.embed(texts, "query")

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Embed the texts searched (e5: the ``"passage: "`` prefix)."""
        return self.embed(texts, "passage")

    def embed(self, texts: Sequence[str], mode: str | None = None) -> np.ndarray:
        """``(len(texts), dims)`` float32 rows of length 1; ``mode``: None, ``"query"`` or ``"passage"``."""
        texts = _check_texts(texts)
        if mode is not None and mode not in MODES:
            raise ParamError(f"mode must be one of {', '.join(map(repr, MODES))} or None, got {mode!r}")
        mode = (mode or self.symmetric_mode) if self.modes else None
        key_mode = mode or "text"
        found: dict[str, tuple[np.ndarray, int]] = {}
        unique = list(dict.fromkeys(texts))
        for t in unique:
            hit = self._memory.get((key_mode, t))
            if hit is not None:
                found[t] = hit
        todo = [t for t in unique if t not in found]
        if todo and self.disk is not None:
            for i, hit in self.disk.get(self.name, key_mode, todo).items():
                found[todo[i]] = hit
            todo = [t for t in todo if t not in found]
        if self.overflow == "error" and self.max_tokens is not None:
            self._refuse_long(unique, found, todo, mode)
        fresh = self._compute(todo, mode, key_mode) if todo else {}
        found.update(fresh)
        self._remember(key_mode, {**{t: found[t] for t in unique if t not in fresh}, **fresh})
        n = len(texts)
        self.stats.texts += n
        self.stats.embedded += len(fresh)
        self.stats.cache_hits += n - len(fresh)
        if self.max_tokens is not None:
            for t in texts:
                tokens = found[t][1]
                self.stats.max_tokens_seen = max(self.stats.max_tokens_seen, tokens)
                if tokens > self.max_tokens:
                    self.stats.over_limit += 1
                    self.stats.tokens_over += tokens - self.max_tokens
                    self.stats.truncated += self.overflow == "truncate"
        if not texts:
            return np.zeros((0, self.dims or 0), dtype=np.float32)
        return np.stack([found[t][0] for t in texts])

    # -- internals -------------------------------------------------------------------------
    def _compute(self, todo: list[str], mode: str | None, key_mode: str) -> dict[str, tuple[np.ndarray, int]]:
        out: dict[str, tuple[np.ndarray, int]] = {}
        bar = _bar(progress_enabled(self.progress, len(todo)), len(todo), self.name)
        pending_t: list[str] = []
        pending_v: list[np.ndarray] = []
        pending_n: list[int] = []
        try:
            for a in range(0, len(todo), self.batch_size):
                batch = todo[a:a + self.batch_size]
                counts = self._token_counts(batch, mode)
                inputs = list(batch)
                if counts is not None and self.max_tokens is not None and self.overflow == "truncate":
                    for i, c in enumerate(counts):
                        if c > self.max_tokens:
                            inputs[i] = self._truncate(batch[i], mode)
                t0, c0 = time.perf_counter(), time.process_time()
                vecs = check_embeddings(self._encode(inputs, mode), len(inputs), self.name)
                self.stats.seconds += time.perf_counter() - t0
                self.stats.cpu_seconds += time.process_time() - c0
                vecs = _unit_rows(vecs)
                self.dims = vecs.shape[1]
                toks = counts if counts is not None else [-1] * len(batch)
                for t, v, c in zip(batch, vecs, toks):
                    out[t] = (v, int(c))
                pending_t += batch
                pending_v.append(vecs)
                pending_n += list(toks)
                if self.disk is not None and len(pending_t) >= 4096:   # a long run keeps its work
                    self.disk.put(self.name, key_mode, pending_t, np.concatenate(pending_v), pending_n)
                    pending_t, pending_v, pending_n = [], [], []
                bar.update(len(batch))
        finally:
            bar.close()
            if self.disk is not None and pending_t:
                self.disk.put(self.name, key_mode, pending_t, np.concatenate(pending_v), pending_n)
        return out

    def _refuse_long(self, unique: list[str], found: dict, todo: list[str], mode: str | None) -> None:
        """``overflow="error"``: a one-line ValueError if any text (cached or not) is over the limit."""
        counts = (self._token_counts(todo, mode) if todo else []) or []
        over = [(t, found[t][1]) for t in unique if t in found and found[t][1] > self.max_tokens]
        over += [(t, c) for t, c in zip(todo, counts) if c > self.max_tokens]
        if over:
            t, c = over[0]
            raise ValueError(f"{self.name}: {len(over)} text(s) longer than the model's {self.max_tokens} tokens, "
                             f"the first of {c} tokens ({t[:20]!r}...); overflow='error' embeds none of them: "
                             f"shorten them, or use overflow='truncate' or 'window'")

    def _remember(self, key_mode: str, items: dict[str, tuple[np.ndarray, int]]) -> None:
        for t, hit in items.items():
            self._memory.pop((key_mode, t), None)
            self._memory[(key_mode, t)] = hit   # most recent last
        while len(self._memory) > self.memory_size:
            self._memory.pop(next(iter(self._memory)))

    def _encode(self, texts: list[str], mode: str | None) -> np.ndarray:
        raise NotImplementedError

    def _token_counts(self, texts: list[str], mode: str | None) -> list[int] | None:
        """Each text's length in the model's tokens (as the model will count it), or None."""
        return None

    def token_counts(self, texts: Sequence[str], mode: str | None = "passage") -> list[int]:
        """Each text's length in the model's own tokens, as :meth:`embed` counts it against the limit.

        A ValueError for a model that does not count tokens (it has no input limit to check).
        """
        counts = self._token_counts(list(texts), mode)
        if counts is None:
            raise ValueError(f"embedder {self.name!r} does not count tokens (it has no token limit)")
        return list(counts)

    def _truncate(self, text: str, mode: str | None) -> str:
        """The longest prefix of ``text`` within ``max_tokens`` (bisection on the character count)."""
        lo, hi = 0, len(text)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self._token_counts([text[:mid]], mode)[0] <= self.max_tokens:
                lo = mid
            else:
                hi = mid - 1
        return text[:lo]


def _unit_rows(vecs: np.ndarray) -> np.ndarray:
    v = np.asarray(vecs, dtype=np.float32)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    if np.allclose(norms, 1.0, atol=1e-5):
        return np.ascontiguousarray(v)       # the models normalise already: keep their bits
    return np.divide(v, norms, out=np.zeros_like(v), where=norms > 0)


def _disk_cache(cache: Any, by_default: bool) -> EmbeddingCache | None:
    if isinstance(cache, EmbeddingCache):
        return cache
    if cache == "auto":
        return _shared_cache(None) if by_default else None
    if cache is True:
        return _shared_cache(None)
    if cache is False or cache is None:
        return None
    if isinstance(cache, (str, os.PathLike)):
        return _shared_cache(os.fspath(cache))
    raise TypeError(f"cache must be 'auto', True, False, None, a folder or an EmbeddingCache, got {cache!r}")


@functools.lru_cache(maxsize=None)
def _shared_cache(root: str | None) -> EmbeddingCache:
    """One cache object per folder in a process, so embedders share its index."""
    return EmbeddingCache(root)


def _clean(text: str) -> str:
    """What a C string can carry: NUL becomes a space, a lone surrogate U+FFFD (same length)."""
    if "\x00" in text:
        text = text.replace("\x00", " ")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
        text = "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text)
    return text


# -- user objects ---------------------------------------------------------------------------------

class EncodeEmbedder(NeuralEmbedder):
    """An object with the sentence-transformers ``encode(list[str]) -> array`` method.

    With ``encode_query`` / ``encode_document`` (sentence-transformers 5) the two retrieval modes
    use them. ``max_seq_length`` and a ``tokenizer`` (as sentence-transformers models have) give
    the token limit and counts; the model truncates by itself, and the counts say how often.
    ``name``: what the model is (the disk cache needs one to be on; default: the class name,
    memory only).
    """

    def __init__(self, model: Any, name: str | None = None, *, batch_size: int = 64, cache: Any = "auto",
                 progress: bool | None = None) -> None:
        if not callable(getattr(model, "encode", None)):
            raise TypeError(f"model must have an encode(list[str]) method, got {type(model).__name__}")
        cache = _user_cache(cache, name)
        super().__init__(name or f"encode:{type(model).__name__}", batch_size=batch_size, cache=cache,
                         progress=progress)
        self.model = model
        if callable(getattr(model, "encode_query", None)) and callable(getattr(model, "encode_document", None)):
            self.modes, self.symmetric_mode = MODES, None
        limit = getattr(model, "max_seq_length", None)
        self.max_tokens = limit if isinstance(limit, int) and limit > 0 else None
        self._quiet = _accepts(model.encode, "show_progress_bar")

    def _call(self, fn: Callable, texts: list[str]) -> np.ndarray:
        kw = {"show_progress_bar": False} if self._quiet else {}
        return np.asarray(fn(texts, **kw))

    def _encode(self, texts: list[str], mode: str | None) -> np.ndarray:
        if mode == "query" and self.modes:
            return self._call(self.model.encode_query, texts)
        if mode == "passage" and self.modes:
            return self._call(self.model.encode_document, texts)
        return self._call(self.model.encode, texts)

    def _token_counts(self, texts: list[str], mode: str | None) -> list[int] | None:
        tok = getattr(self.model, "tokenizer", None)
        if self.max_tokens is None or not callable(tok):
            return None
        try:
            return [len(tok(t)["input_ids"]) for t in texts]
        except Exception:  # a tokenizer of another shape: no counts rather than a wrong one
            return None

    def _truncate(self, text: str, mode: str | None) -> str:
        return text  # the model truncates by itself (counted in stats.over_limit / truncated)


class CallableEmbedder(NeuralEmbedder):
    """A plain callable ``list[str] -> (n, d) array``, with the interface of the others (one mode, no limit)."""

    def __init__(self, fn: Callable[[list[str]], Any], name: str | None = None, *, batch_size: int = 64,
                 cache: Any = "auto", progress: bool | None = None) -> None:
        if not callable(fn):
            raise TypeError(f"fn must be a callable list[str] -> array, got {type(fn).__name__}")
        given = name or getattr(fn, "name", None)
        cache = _user_cache(cache, given if isinstance(given, str) else None)
        super().__init__(given or f"callable:{getattr(fn, '__qualname__', type(fn).__name__)}",
                         batch_size=batch_size, cache=cache, progress=progress)
        self.fn = fn

    def _encode(self, texts: list[str], mode: str | None) -> np.ndarray:
        return np.asarray(self.fn(texts))


def _user_cache(cache: Any, name: str | None) -> Any:
    """A user model's cache: in memory unless asked for; on disk only under a name (the key needs one)."""
    if cache == "auto":
        return None
    if cache is not None and cache is not False and name is None:
        raise TypeError("an on-disk cache needs the model's name: pass name='...' (it keys the vectors)")
    return cache


def _accepts(fn: Callable, name: str) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
