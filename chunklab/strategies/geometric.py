"""Geometric strategies: cut by position alone, blind to what the text says.

``fixed`` and ``sliding_window`` count characters; ``token`` counts cl100k_base
tokens but always cuts on a character boundary (cutting raw token ids can split
a multi-byte character, claim C28; :func:`naive_token_chunks` shows it).
"""
from __future__ import annotations

import re
from typing import Any, Iterable

import numpy as np

from ..base import Span, Strategy, register
from ..core import Document
from ..length import get_encoding
from ..params import Param

__all__ = ["Fixed", "SlidingWindow", "Token", "naive_token_chunks", "token_char_offsets"]

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _windows(n: int, size: int, step: int) -> Iterable[tuple[int, int]]:
    """Windows ``[i, i+size)`` every ``step`` over ``range(n)``; the tail is kept.

    Stops as soon as a window reaches ``n``, so the last window is never a
    sub-window of the one before it. ``step >= 1`` is what guarantees
    termination (claim C25: ``size > 0`` and ``0 <= overlap < size``).
    """
    i = 0
    while True:
        end = min(i + size, n)
        yield i, end
        if end >= n:
            return
        i += step


def _check_overlap(overlap: Any, size: int, of: str = "size") -> int:
    """``overlap``, which must be an int in ``[0, size)`` (``size`` is named ``of``): a window
    must advance by at least one character or token, or splitting would never end (claim C25)."""
    return Param("int", 0, low=0, high=size - 1, bounds=f"[0, {of})").validate("overlap", overlap)


@register
class Fixed(Strategy):
    """Fixed-size windows of ``size`` characters, neighbours sharing ``overlap``.

    Cuts anywhere, mid-word and mid-clause: the baseline every other strategy
    is measured against. The tail shorter than ``size`` is kept as its own chunk.
    ``target`` is accepted for ``size`` (the name the other strategies use);
    giving both is an error.

    >>> [c.text for c in Fixed(size=4, overlap=1).split("一二三四五六七")]
    ['一二三四', '四五六七']
    >>> Fixed(target=4, overlap=1).size
    4
    """

    name = "fixed"
    family = "geometric"
    summary = {"zh": "按固定字符数切，可带重叠；不看内容", "en": "fixed-size character windows with optional overlap"}
    params = {
        "size": Param("int", 512, "window length in characters", low=1, high=1_000_000, ui_high=4096),
        "overlap": Param("int", 0, "characters shared by neighbouring windows, < size", low=0,
                         high=1_000_000, ui_high=1024),
    }
    aliases = {"target": "size"}

    def _check(self) -> None:
        _check_overlap(self.overlap, self.size)

    def _spans(self, doc: Document, start: int, end: int) -> Iterable[Span]:
        for s, e in _windows(end - start, self.size, self.size - self.overlap):
            yield start + s, start + e, {}


@register
class SlidingWindow(Strategy):
    """Windows of ``window`` characters started every ``step`` characters.

    The same geometry as ``fixed`` described the other way round (overlap =
    window - step). ``step`` may not exceed ``window``: that would skip text.
    The size vocabulary of the other strategies is accepted too: ``target``
    for ``window``, and ``overlap`` for ``step = window - overlap`` (``overlap``
    in ``[0, window)``); giving a name and its alias (``window`` and
    ``target``, ``step`` and ``overlap``) is an error.

    >>> [c.text for c in SlidingWindow(window=3, step=2).split("一二三四五")]
    ['一二三', '三四五']
    >>> SlidingWindow(target=3, overlap=1).get_params()
    {'window': 3, 'step': 2, 'prefix': False}
    """

    name = "sliding_window"
    family = "geometric"
    summary = {"zh": "滑动窗口：窗口长 window，每次前移 step", "en": "sliding window of `window` chars moved by `step`"}
    params = {
        "window": Param("int", 512, "window length in characters", low=1, high=1_000_000, ui_high=4096),
        "step": Param("int", 256, "distance between window starts, <= window", low=1, high=1_000_000,
                      ui_high=4096),
    }
    #: NOTE: "target" first: the "overlap" hook reads the window it gives.
    aliases = {"target": "window", "overlap": "step"}

    def _from_alias(self, alias: str, value: Any, kwargs: dict[str, Any]) -> Any:
        if alias != "overlap":
            return super()._from_alias(alias, value, kwargs)
        window = self.params["window"]
        size = window.validate("window", kwargs.get("window", window.default))
        return size - _check_overlap(value, size, of="window")

    def _check(self) -> None:
        # NOTE: a step longer than the window would skip the text between two windows.
        Param("int", 1, low=1, high=self.window, bounds="[1, window]").validate("step", self.step)

    def _spans(self, doc: Document, start: int, end: int) -> Iterable[Span]:
        for s, e in _windows(end - start, self.window, self.step):
            yield start + s, start + e, {}


def token_char_offsets(text: str) -> tuple[list[int], np.ndarray]:
    """Token ids of ``text`` and, for each token boundary, the character offset at or before it.

    Returns ``(ids, bounds)`` with ``len(bounds) == len(ids) + 1``. A token
    boundary that falls inside a multi-byte UTF-8 character is moved back to
    the start of that character, so slicing ``text`` at ``bounds`` never
    splits a character. A lone surrogate (which has no UTF-8 form) is counted
    as U+FFFD, one character for one character, as tiktoken's ``encode`` does,
    so the offsets still index ``text`` itself.

    >>> ids, bounds = token_char_offsets("a" + chr(0xD800) + "b")
    >>> int(bounds[-1])
    3
    """
    enc = get_encoding()
    # NOTE: the replacement keeps the length in code points, so bounds computed on the replaced
    # text are bounds of the original.
    text = _LONE_SURROGATE.sub("\ufffd", text)
    ids = enc.encode_ordinary(text)
    raw = text.encode("utf-8")
    byte_len = np.fromiter((len(enc.decode_single_token_bytes(t)) for t in ids), dtype=np.int64, count=len(ids))
    byte_bounds = np.concatenate([[0], np.cumsum(byte_len)])
    arr = np.frombuffer(raw, dtype=np.uint8)
    is_start = np.ones(len(arr) + 1, dtype=bool)
    is_start[:-1] = (arr & 0xC0) != 0x80
    starts_before = np.concatenate([[0], np.cumsum(is_start[:-1])])
    # A boundary in the middle of a character belongs to the character that contains it.
    bounds = starts_before[byte_bounds] - (~is_start[byte_bounds]).astype(np.int64)
    return ids, bounds


def naive_token_chunks(text: str, size: int) -> list[str]:
    """The common mistake: decode every ``size`` token ids separately.

    Shown in chapter 2 and the tests: a Chinese character encoded across two
    tokens is torn in half and comes back as U+FFFD replacement characters.
    """
    enc = get_encoding()
    ids = enc.encode_ordinary(text)
    return [enc.decode(ids[i:i + size]) for i in range(0, len(ids), size)]


@register
class Token(Strategy):
    """Windows of ``size`` cl100k_base tokens, with ``overlap`` tokens shared.

    Cuts are moved to character boundaries, so no chunk holds half a
    character; a window that would be empty after that move is skipped
    (its tokens belong to the next window). ``target`` is accepted for
    ``size``; giving both is an error.

    >>> [c.text for c in Token(size=2).split("hello world again")]
    ['hello world', 'again']
    """

    name = "token"
    family = "geometric"
    summary = {"zh": "按 cl100k_base token 数切，切点对齐到字符边界", "en": "cl100k_base token windows cut on character boundaries"}
    params = {
        "size": Param("int", 512, "window length in tokens", low=1, high=1_000_000, ui_high=2048),
        "overlap": Param("int", 0, "tokens shared by neighbouring windows, < size", low=0, high=1_000_000,
                         ui_high=512),
    }
    aliases = {"target": "size"}

    def _check(self) -> None:
        _check_overlap(self.overlap, self.size)

    def _spans(self, doc: Document, start: int, end: int) -> Iterable[Span]:
        ids, bounds = token_char_offsets(doc.text[start:end])
        for s, e in _windows(len(ids), self.size, self.size - self.overlap):
            cs, ce = int(bounds[s]), int(bounds[e])
            if e == len(ids):
                ce = end - start
            if ce > cs:
                yield start + cs, start + ce, {"tokens": e - s}
