"""Tokenisers: turn a text into the tokens that BM25 counts, and say where each token sits.

The articles' retriever is BM25 on Chinese character bigrams (as in ``rank_bm25``), so the default
tokeniser is :class:`BigramTokenizer`; ``unigram_bigram``, ``words`` (English) and ``jieba`` are the
alternatives, all reachable by name through :func:`get_tokenizer`. The run-based tokenisers can also
give every token's ``[start, end)`` position as an int64 key, which is what lets
:class:`~chunklab.retrieval.CorpusIndex` tokenise a corpus once and build any chunking's rows
from character ranges.
"""
from __future__ import annotations

import re
from typing import Callable

import numpy as np

__all__ = ["TOKENIZERS", "Tokenizer", "BigramTokenizer", "UnigramBigramTokenizer", "WordsTokenizer",
           "JiebaTokenizer", "get_tokenizer", "tokenize"]

#: Code point ranges treated as CJK (one token per character or character pair): kana, CJK
#: extension A, CJK unified ideographs, Hangul syllables, compatibility ideographs, the
#: supplementary ideograph planes, and 〇 (U+3007, used in dates: 二〇二〇年).
CJK_RANGES: tuple[tuple[int, int], ...] = (
    (0x3007, 0x3007), (0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF),
    (0xAC00, 0xD7AF), (0xF900, 0xFAFF), (0x20000, 0x3134F),
)
_CJK_CLASS = "".join(
    f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}" for a, b in CJK_RANGES
)
_CJK_RUN = re.compile(f"[{_CJK_CLASS}]+")
#: A "word": a maximal run of word characters (letters, digits, underscore) that are not CJK.
_WORD_RUN = re.compile(f"[^\\W{_CJK_CLASS}]+")
_ANY_WORD_RUN = re.compile(r"\w+")

# Integer keys: one int64 per distinct token, so corpus tokens can be handled as numpy arrays.
# A single CJK character is its code point (< 2**21); a pair is (a + 1) << 21 | b (>= 2**21);
# a word gets _WORD_BASE + its id in a per-index dictionary.
_SHIFT = 21
_WORD_BASE = 1 << 43

KIND_CJK, KIND_WORD = 0, 1


def _is_cjk_codes(cp: np.ndarray) -> np.ndarray:
    m = np.zeros(cp.shape, dtype=bool)
    for a, b in CJK_RANGES:
        m |= (cp >= a) & (cp <= b)
    return m


def _codes(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.int64)


class Tokenizer:
    """A named tokeniser: ``tok(text) -> list[str]``.

    Tokenisers built on *runs* (``bigram``, ``unigram_bigram``, ``words``) can also describe where
    each token sits (:meth:`positions`), which is what lets
    :class:`CorpusIndex <chunklab.retrieval.CorpusIndex>` build a chunk's row from its character
    range. ``jieba`` cannot (its segmentation depends on context), so an index over it
    re-tokenises chunk texts.
    """

    name: str = ""
    positional: bool = True

    def __call__(self, text: str) -> list[str]:  # pragma: no cover - abstract
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<tokenizer {self.name!r}>"


class _RunTokenizer(Tokenizer):
    """CJK runs and word runs; everything else (punctuation, spaces, symbols) separates runs and is dropped."""

    cjk_unigrams = False  # every CJK char as a token
    cjk_bigrams = True  # overlapping pairs inside a CJK run
    lone_unigram = True  # a CJK run of length 1 gives its char (when pairs are on and unigrams off)

    def _cjk_tokens(self, run: str) -> list[str]:
        out: list[str] = []
        if self.cjk_unigrams:
            out.extend(run)
        if self.cjk_bigrams:
            if len(run) >= 2:
                out.extend(run[i:i + 2] for i in range(len(run) - 1))
            elif self.lone_unigram and not self.cjk_unigrams:
                out.append(run)
        return out

    def __call__(self, text: str) -> list[str]:
        if not isinstance(text, str):
            raise TypeError(f"text must be str, got {type(text).__name__}")
        out: list[str] = []
        for m in _CJK_RUN.finditer(text):
            out.extend(self._cjk_tokens(m.group()))
        out.extend(m.group().lower() for m in _WORD_RUN.finditer(text))
        return out

    # -- positions (vectorised) ---------------------------------------------------------------
    def positions(self, text: str, word_key: Callable[[str], int]):
        """Tokens of ``text`` as int64 keys with ``[start, end)`` positions, plus the runs.

        Returns ``(keys, starts, ends, run_starts, run_ends, run_kinds)``; tokens sorted by start.
        """
        cp = _codes(text)
        n = len(cp)
        cjk = _is_cjk_codes(cp)
        keys, starts, ends = [], [], []
        if n:
            idx = np.arange(n)
            if self.cjk_unigrams:
                p = idx[cjk]
                keys.append(cp[p]); starts.append(p); ends.append(p + 1)
            if self.cjk_bigrams:
                pair = cjk[:-1] & cjk[1:]
                p = idx[:-1][pair]
                keys.append(((cp[p] + 1) << _SHIFT) | cp[p + 1]); starts.append(p); ends.append(p + 2)
                if self.lone_unigram and not self.cjk_unigrams:
                    prev = np.concatenate(([False], cjk[:-1]))
                    nxt = np.concatenate((cjk[1:], [False]))
                    p = idx[cjk & ~prev & ~nxt]
                    keys.append(cp[p]); starts.append(p); ends.append(p + 1)
        wk, ws, we = [], [], []
        for m in _WORD_RUN.finditer(text):
            wk.append(word_key(m.group().lower())); ws.append(m.start()); we.append(m.end())
        keys.append(np.array(wk, dtype=np.int64)); starts.append(np.array(ws, dtype=np.int64))
        ends.append(np.array(we, dtype=np.int64))
        keys = np.concatenate(keys).astype(np.int64)
        starts = np.concatenate(starts).astype(np.int64)
        ends = np.concatenate(ends).astype(np.int64)
        order = np.lexsort((ends, starts))
        # runs
        rs, re_, rk = [], [], []
        if n:
            d = np.diff(np.concatenate(([0], cjk.astype(np.int8), [0])))
            a, b = np.flatnonzero(d == 1), np.flatnonzero(d == -1)
            rs.append(a); re_.append(b); rk.append(np.full(len(a), KIND_CJK))
        rs.append(np.array(ws, dtype=np.int64)); re_.append(np.array(we, dtype=np.int64))
        rk.append(np.full(len(ws), KIND_WORD))
        rs = np.concatenate(rs).astype(np.int64)
        re_ = np.concatenate(re_).astype(np.int64)
        rk = np.concatenate(rk).astype(np.int8)
        rorder = np.argsort(rs, kind="stable")
        return keys[order], starts[order], ends[order], rs[rorder], re_[rorder], rk[rorder]

    def cut_needs_fix(self, kinds: np.ndarray, piece_len: np.ndarray, run_len: np.ndarray) -> np.ndarray:
        """Which cut runs give tokens that the corpus tokens inside the piece do not already hold.

        A chunk edge inside a run leaves a *piece* of the run in the chunk. Tokenising the chunk's
        text sees the piece as a run of its own: a cut word becomes a (new) shorter word, and a
        one-character piece of a longer CJK run becomes a unigram (under ``bigram``). CJK pieces of
        two or more characters give exactly the corpus pairs inside them.
        """
        fix = kinds == KIND_WORD
        if self.cjk_bigrams and self.lone_unigram and not self.cjk_unigrams:
            fix |= (kinds == KIND_CJK) & (piece_len == 1) & (run_len >= 2)
        return fix


class BigramTokenizer(_RunTokenizer):
    """Chinese character bigrams (article 002's setting).

    * a run of CJK characters gives its overlapping pairs: ``民法典`` -> ``民法``, ``法典``;
    * a CJK run of one character gives that character;
    * a run of other word characters (letters, digits, ``_``) is one token, lower-cased;
    * punctuation, whitespace and symbols separate runs and give nothing.

    >>> BigramTokenizer()("民法典 第3条 GDPR，甲")
    ['民法', '法典', '第', '条', '甲', '3', 'gdpr']
    """

    name = "bigram"


class UnigramBigramTokenizer(_RunTokenizer):
    """Every CJK character and every overlapping pair; words as in ``bigram``.

    >>> UnigramBigramTokenizer()("合同法")
    ['合', '同', '法', '合同', '同法']
    """

    name = "unigram_bigram"
    cjk_unigrams = True


class WordsTokenizer(_RunTokenizer):
    """English (and other space-separated) text: maximal runs of word characters, lower-cased.

    A CJK run counts as one word here; use ``bigram`` for Chinese.

    >>> WordsTokenizer()("The cat's hat, 2 hats.")
    ['the', 'cat', 's', 'hat', '2', 'hats']
    """

    name = "words"
    cjk_bigrams = False

    def __call__(self, text: str) -> list[str]:
        if not isinstance(text, str):
            raise TypeError(f"text must be str, got {type(text).__name__}")
        return [m.group().lower() for m in _ANY_WORD_RUN.finditer(text)]

    def positions(self, text: str, word_key: Callable[[str], int]):
        ks, ss, es = [], [], []
        for m in _ANY_WORD_RUN.finditer(text):
            ks.append(word_key(m.group().lower())); ss.append(m.start()); es.append(m.end())
        k = np.array(ks, dtype=np.int64)
        s = np.array(ss, dtype=np.int64)
        e = np.array(es, dtype=np.int64)
        return k, s, e, s.copy(), e.copy(), np.full(len(s), KIND_WORD, dtype=np.int8)


class JiebaTokenizer(Tokenizer):
    """Words from jieba's default (accurate) mode, lower-cased; tokens without a word character dropped.

    jieba is optional: ``pip install jieba``.
    """

    name = "jieba"
    positional = False

    def __init__(self) -> None:
        try:
            import jieba  # noqa: F401
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError("tokenizer 'jieba' needs the jieba package: pip install jieba") from exc
        import logging

        import jieba

        jieba.setLogLevel(logging.WARNING)
        self._jieba = jieba

    def __call__(self, text: str) -> list[str]:
        return [w.lower() for w in self._jieba.lcut(text) if _ANY_WORD_RUN.search(w)]


#: Tokenisers by name.
TOKENIZERS: dict[str, type[Tokenizer]] = {
    "bigram": BigramTokenizer,
    "unigram_bigram": UnigramBigramTokenizer,
    "words": WordsTokenizer,
    "jieba": JiebaTokenizer,
}
_TOKENIZER_CACHE: dict[str, Tokenizer] = {}


def get_tokenizer(name: str | Tokenizer) -> Tokenizer:
    """A tokeniser by name (``bigram``, ``unigram_bigram``, ``words``, ``jieba``), or pass one through.

    >>> get_tokenizer("bigram")("你好")
    ['你好']
    """
    if isinstance(name, Tokenizer):
        return name
    if name not in TOKENIZERS:
        raise ValueError(f"tokenizer must be one of {', '.join(map(repr, TOKENIZERS))}, got {name!r}")
    if name not in _TOKENIZER_CACHE:
        _TOKENIZER_CACHE[name] = TOKENIZERS[name]()
    return _TOKENIZER_CACHE[name]


def tokenize(text: str, tokenizer: str | Tokenizer = "bigram") -> list[str]:
    """Shortcut: ``get_tokenizer(tokenizer)(text)``.

    >>> tokenize("合同订立")
    ['合同', '同订', '订立']
    """
    return get_tokenizer(tokenizer)(text)

