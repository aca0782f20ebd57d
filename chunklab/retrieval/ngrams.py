"""Character n-grams of many texts at once, as integer keys: the counting under :class:`~chunklab.retrieval.embed.LSAEmbedder`.

A text is first normalised as ``" ".join(text.split())`` (runs of whitespace become one space,
the edges are stripped); its n-grams are then every substring of ``lo`` to ``hi`` characters
except the all-whitespace ones — exactly what the per-string loop ``LSAEmbedder._grams`` yields.
Here every n-gram is an ``int64`` key instead of a string (its code points, each plus one, as
21-bit digits), so a whole corpus is counted with a few NumPy passes instead of one Python step
per character. Keys of different lengths never collide (every digit is at least 1), and sorting
grams by their digits padded with zeros is sorting the strings, so the vocabularies and matrices
built from keys are identical to the ones built from strings. A key holds at most
:data:`MAX_KEY_CHARS` characters; longer n-grams take the string path.

>>> keys, rows = gram_keys(["ab a", "b"], 1, 2)
>>> [key_to_str(k) for k in keys], rows.tolist()
(['a', 'b', 'a', 'b', 'ab', 'b ', ' a'], [0, 0, 0, 1, 0, 0, 0])
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import scipy.sparse as sp

__all__ = ["MAX_KEY_CHARS", "gram_keys", "key_to_str", "key_digits", "document_frequencies", "count_matrix"]

_BITS = 21                      # every code point (at most 0x10FFFF) plus one fits in 21 bits
_MASK = (1 << _BITS) - 1
#: The longest n-gram a key holds (3 x 21 bits fit a signed 64-bit integer).
MAX_KEY_CHARS = 3
_SPACE = 32


def gram_keys(texts: Sequence[str], lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """Every ``lo``..``hi``-character n-gram of every text, as ``(keys, text_index)`` int64 arrays.

    Grams are listed by length, then by position (the order does not matter to the counts).
    """
    if not 1 <= lo <= hi <= MAX_KEY_CHARS:
        raise ValueError(f"integer n-gram keys hold 1 to {MAX_KEY_CHARS} characters, got ({lo}, {hi})")
    norm = [" ".join(t.split()) for t in texts]
    lens = np.fromiter((len(t) for t in norm), dtype=np.int64, count=len(norm))
    # NOTE: surrogatepass keeps a lone surrogate as one code point (one UTF-32 unit), so each text
    # has exactly len(text) entries, as Python's slicing sees the string.
    cps = np.frombuffer("".join(norm).encode("utf-32-le", "surrogatepass"), dtype="<u4").astype(np.int64)
    total = len(cps)
    text_of = np.repeat(np.arange(len(norm), dtype=np.int64), lens)
    ends = np.repeat(np.cumsum(lens), lens)          # each code point's text end
    digits = cps + 1
    space = cps == _SPACE
    keys_out, rows_out = [], []
    for n in range(lo, hi + 1):
        m = total - n + 1
        if m <= 0:
            continue
        ok = np.arange(m, dtype=np.int64) + n <= ends[:m]   # the gram ends inside its text
        key = digits[:m].copy()
        blank = space[:m].copy()
        for j in range(1, n):
            key <<= _BITS
            key |= digits[j:j + m]
            blank &= space[j:j + m]
        ok &= ~blank
        keys_out.append(key[ok])
        rows_out.append(text_of[:m][ok])
    if not keys_out:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(keys_out), np.concatenate(rows_out)


def key_digits(keys: np.ndarray, width: int) -> np.ndarray:
    """``(len(keys), width)`` code points plus one, left-aligned and padded with 0 (the string order).

    >>> key_digits(gram_keys(["ab"], 1, 2)[0], 2).tolist()
    [[98, 0], [99, 0], [98, 99]]
    """
    keys = np.asarray(keys, dtype=np.int64)
    out = np.zeros((len(keys), width), dtype=np.int64)
    length = np.ones(len(keys), dtype=np.int64)
    for n in range(2, width + 1):
        length[keys >> (_BITS * (n - 1)) > 0] = n
    for j in range(width):
        shift = _BITS * (length - 1 - j)
        has = j < length
        out[has, j] = (keys[has] >> shift[has]) & _MASK
    return out


def key_to_str(key: int) -> str:
    """The n-gram a key stands for.

    >>> key_to_str(gram_keys(["年假"], 2, 2)[0][0])
    '年假'
    """
    key = int(key)
    chars = []
    while key:
        chars.append(chr((key & _MASK) - 1))
        key >>= _BITS
    return "".join(reversed(chars))


def document_frequencies(keys: np.ndarray, rows: np.ndarray, n_texts: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct keys (sorted) and, for each, the number of texts it occurs in."""
    uniq, inv = np.unique(keys, return_inverse=True)
    pairs = np.unique(inv.astype(np.int64) * max(n_texts, 1) + rows)
    return uniq, np.bincount(pairs // max(n_texts, 1), minlength=len(uniq))


def count_matrix(keys: np.ndarray, rows: np.ndarray, n_texts: int, vocab_sorted: np.ndarray,
                 vocab_ids: np.ndarray, n_features: int) -> sp.csr_matrix:
    """Term counts as a CSR matrix ``(n_texts, n_features)`` with sorted indices and float64 data.

    ``vocab_sorted`` are the vocabulary's keys in increasing order and ``vocab_ids[i]`` the
    column of ``vocab_sorted[i]``; keys outside the vocabulary are ignored.
    """
    if len(vocab_sorted) and len(keys):
        at = np.minimum(np.searchsorted(vocab_sorted, keys), len(vocab_sorted) - 1)
        known = vocab_sorted[at] == keys
        cols, rows = vocab_ids[at[known]], rows[known]
    else:
        cols = rows = np.zeros(0, dtype=np.int64)
    cells, counts = np.unique(rows * max(n_features, 1) + cols, return_counts=True)
    r, c = np.divmod(cells, max(n_features, 1))
    indptr = np.zeros(n_texts + 1, dtype=np.int64)
    np.cumsum(np.bincount(r, minlength=n_texts), out=indptr[1:])
    m = sp.csr_matrix((counts.astype(np.float64), c.astype(np.int64), indptr), shape=(n_texts, n_features))
    m.sort_indices()
    return m
