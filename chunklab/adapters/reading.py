"""Reading another library's splitter: how to call it, and what its output items mean.

:func:`_reader` finds the method to call (offsets-reporting ones first), :func:`_output` checks
that what it returned is an iterable of pieces and turns each into ``(text, reported start)``.
"""
from __future__ import annotations

import functools
import inspect
import sys
from typing import Any, Callable, Iterator

def _int_or_none(x: Any) -> int | None:
    return x if isinstance(x, int) and not isinstance(x, bool) else None


def _piece_of(item: Any) -> tuple[str, int | None]:
    """A splitter's output item as (text, the start the library reports or None).

    A str; a ``(start, text)`` pair (semantic-text-splitter's ``chunk_indices``); or an object with
    ``.text`` or ``.page_content`` and, maybe, ``.start_index`` (Chonkie), ``.start_char_idx``
    (LlamaIndex) or ``.metadata["start_index"]`` (LangChain's ``add_start_index``).
    """
    if isinstance(item, str):
        return item, None
    if isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], str):
        return item[1], _int_or_none(item[0])
    text = next((t for t in (getattr(item, "text", None), getattr(item, "page_content", None))
                 if isinstance(t, str)), None)
    if text is None:
        raise TypeError(f"a splitter returned {type(item).__name__}, expected str or an object with .text")
    for name in ("start_index", "start_char_idx"):
        start = _int_or_none(getattr(item, name, None))
        if start is not None:
            return text, start
    metadata = getattr(item, "metadata", None)
    if isinstance(metadata, dict):
        return text, _int_or_none(metadata.get("start_index"))
    return text, None


def _output(out: Any, name: str, doc: str) -> Iterator[tuple[str, int | None]]:
    """A splitter's output as :func:`_piece_of` pairs; a ``str``, a ``dict`` or a non-iterable is a TypeError."""
    if isinstance(out, (str, bytes, bytearray, dict)) or not hasattr(out, "__iter__"):
        raise TypeError(f"splitter {name!r} returned {type(out).__name__} {_short(out)} for document {doc!r}; "
                        f"expected an iterable of strings (or of objects with .text)")
    for item in out:
        try:
            piece = _piece_of(item)
        except TypeError:
            raise TypeError(f"splitter {name!r} returned a piece of type {type(item).__name__} {_short(item)} "
                            f"for document {doc!r}; expected str or an object with .text") from None
        yield piece


def _short(x: Any) -> str:
    r = " ".join(repr(x).split())
    return r if len(r) <= 60 else r[:57] + "..."


def _llama_reader(splitter: Any) -> Callable[[str], list[Any]] | None:
    """LlamaIndex node parsers: nodes of a one-document run, which carry ``start_char_idx``."""
    if not callable(getattr(splitter, "get_nodes_from_documents", None)):
        return None
    try:
        from llama_index.core.schema import Document as LlamaDocument  # optional dependency
    except ImportError:
        return None
    return lambda text: splitter.get_nodes_from_documents([LlamaDocument(text=text)])


def _semchunk_reader(splitter: Any) -> Callable[[str], list[Any]] | None:
    """semchunk's chunker (``chunkerify``): called with ``offsets=True`` it reports (start, end)."""
    if not (type(splitter).__module__ or "").startswith("semchunk") or not callable(splitter):
        return None
    return lambda text: [(s, c) for c, (s, _e) in zip(*splitter(text, offsets=True))]


def _reader(splitter: Any) -> tuple[str, Callable[[str], Any]] | None:
    """How to run ``splitter`` on a text: (the method used, text -> output items); None if unknown.

    Methods reporting offsets come first: LlamaIndex's nodes, LangChain's ``create_documents``
    with ``add_start_index``, semantic-text-splitter's ``chunk_indices``, semchunk's
    ``offsets=True``; then ``split_text``, ``chunk`` (Chonkie: chunks carry offsets), ``chunks``
    and a plain call.
    """
    llama = _llama_reader(splitter)
    if llama is not None:
        return "get_nodes_from_documents", llama
    if (callable(getattr(splitter, "split_text", None)) and callable(getattr(splitter, "create_documents", None))
            and getattr(splitter, "_add_start_index", False) is True):
        return "create_documents", lambda text: splitter.create_documents([text])
    if callable(getattr(splitter, "chunk_indices", None)):
        return "chunk_indices", splitter.chunk_indices
    sem = _semchunk_reader(splitter)
    if sem is not None:
        return "offsets", sem
    for name in ("split_text", "chunk", "chunks"):
        fn = getattr(splitter, name, None)
        if callable(fn):
            return name, fn
    if callable(splitter):
        return "call", splitter
    return None


def _char_overlap_hint(splitter: Any) -> int | None:
    """The splitter's overlap in characters, when it states one and measures it in characters.

    Only LangChain's character splitters (``CharacterTextSplitter``,
    ``RecursiveCharacterTextSplitter`` and their subclasses) measure ``_chunk_overlap`` with
    ``_length_function``, a number of characters when that is ``len``. Its ``TokenTextSplitter``
    keeps ``len`` there but counts its overlap in tokens, which may be many more characters (and
    a byte-level token may be less than one); a hint in the wrong unit would start the search too
    late, so there is none.
    """
    overlap = getattr(splitter, "_chunk_overlap", None)
    if not isinstance(overlap, int) or isinstance(overlap, bool) or overlap < 0:
        return None
    if getattr(splitter, "_length_function", None) is not len:
        return None
    lc = sys.modules.get("langchain_text_splitters")  # loaded if the splitter is one of LangChain's
    classes = tuple(getattr(lc, n, None) for n in ("CharacterTextSplitter", "RecursiveCharacterTextSplitter"))
    return overlap if any(classes) and isinstance(splitter, tuple(c for c in classes if c)) else None


def _name_of(splitter: Any) -> str:
    if isinstance(splitter, functools.partial):
        return _name_of(splitter.func)
    name = getattr(splitter, "__name__", None)
    return name if inspect.isroutine(splitter) and isinstance(name, str) and name != "<lambda>" \
        else type(splitter).__name__
