"""Greedy packing: consecutive whole units into chunks up to a target length.

Every strategy that packs whole units (sentences, paragraphs, lines, code
statements, HTML blocks, clauses, table rows) uses the one packer here,
:func:`pack`. What differs between them is only how the length of a run of
units is measured, so the measurement is passed in:

* :func:`summed` adds up the units' own lengths (``sentence``, ``paragraph``,
  ``line``, ``code``). Their units tile the text, so in characters this is the
  length of the span; in tokens it is the sum of per-unit counts, which can
  differ from the count of the joined text by a token at each seam.
* :func:`spanned` measures the whole span from the first unit's start to the
  last unit's end (``html`` blocks, ``clause`` with ``merge="target"``, table
  row groups): text between units counts, and tokens are counted over the
  joined text.

The packer works on unit indices and never looks at text, so it is the same
whatever the units are.
"""
from __future__ import annotations

from itertools import accumulate
from typing import Callable, Sequence

from .length import Sizer

__all__ = ["pack", "summed", "spanned"]

#: ``length(i, j)``: the length of units ``i .. j-1`` taken together.
RunLength = Callable[[int, int], int]


def pack(n: int, length: RunLength, target: int, overlap: int = 0,
         max_units: int | None = None) -> list[tuple[int, int]]:
    """Greedily pack ``n`` consecutive units into index ranges ``[i, j)``.

    A range takes the next unit while ``length(i, j)`` of the result stays
    within ``target`` and it holds at most ``max_units`` units (None: no
    limit). The next range starts with the trailing whole units of the
    previous one whose ``length`` together is at most ``overlap``.

    Edge behaviour:

    * a range always holds at least one unit, even one longer than
      ``target``: units are never cut here, so a caller with a hard cap sends
      over-long units elsewhere before packing;
    * the next range always starts at least one unit after the previous one
      started, so packing terminates; with ``overlap=0`` nothing is carried
      back (a unit of length 0 would be);
    * when the carried units and the unit after them do not fit ``target``
      together, a range holds only carried units and lies inside the previous
      range (the base class drops such a chunk);
    * the last range ends at ``n``; ``n == 0`` gives ``[]``.

    >>> lengths = [3, 3, 3, 5]
    >>> pack(len(lengths), summed(lengths), target=6)
    [(0, 2), (2, 3), (3, 4)]
    >>> pack(len(lengths), summed(lengths), target=6, overlap=3)
    [(0, 2), (1, 3), (2, 3), (3, 4)]
    >>> pack(len(lengths), summed(lengths), target=100, max_units=3)
    [(0, 3), (3, 4)]
    """
    out: list[tuple[int, int]] = []
    i = 0
    while i < n:
        # NOTE: the unit limit bounds the loop instead of being tested with each unit: this
        # loop runs once per unit (sentence, line) of a corpus.
        stop = n if max_units is None else min(n, i + max_units)
        j = i + 1
        while j < stop and length(i, j + 1) <= target:
            j += 1
        out.append((i, j))
        if j >= n:
            break
        k = j
        while k - 1 > i and length(k - 1, j) <= overlap:
            k -= 1
        i = k
    return out


def summed(lengths: Sequence[int]) -> RunLength:
    """``length(i, j)``: the sum of ``lengths[i:j]`` (prefix sums: each call costs O(1)).

    >>> summed([2, 3, 4])(1, 3)
    7
    """
    pre = list(accumulate(lengths, initial=0))
    return lambda i, j: pre[j] - pre[i]


def spanned(units: Sequence[tuple[int, int]], size: Sizer) -> RunLength:
    """``length(i, j)``: ``size`` of the span from ``units[i]``'s start to ``units[j - 1]``'s end.

    ``size(a, b)`` measures ``text[a:b]`` (see :func:`chunklab.length.span_sizer`).

    >>> spanned([(0, 2), (4, 6)], lambda a, b: b - a)(0, 2)
    6
    """
    return lambda i, j: size(units[i][0], units[j - 1][1])
