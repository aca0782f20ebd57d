"""The whitespace runs behind structure_metrics: the same answers as per-character arrays and the regex."""
from __future__ import annotations

import random
import re

import numpy as np

from chunklab.core import Document
from chunklab.evaluation.structure import _WS, _space_runs, _Structure

_PARA = re.compile(r"(?:^|\n)[^\S\n]*(?=\S)")


def _dense(documents):
    """next_non_ws and trim_end as arrays over the joined text (the former implementation)."""
    joined = "\n".join(d.text for d in documents)
    n = len(joined)
    ws = np.array([c in _WS for c in joined], dtype=bool)
    idx = np.where(ws, n, np.arange(n))
    nxt = np.concatenate((np.minimum.accumulate(idx[::-1])[::-1], [n])) if n else np.array([0])
    last = np.maximum.accumulate(np.where(ws, 0, np.arange(n) + 1)) if n else np.zeros(0, int)
    return n, nxt, np.concatenate(([0], last))


def test_whitespace_runs_match_per_character_arrays():
    rng = random.Random(0)
    alphabet = ["甲", "a", " ", "\n", "\u3000", "\t", "。"]
    for _ in range(1500):
        docs = [Document(f"d{i}", "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 8))))
                for i in range(rng.randrange(1, 5))]
        n, nxt, trim = _dense(docs)
        st = _Structure(docs)
        x = np.arange(n + 1)
        assert st.n == n
        assert st.next_non_ws(x).tolist() == nxt.tolist()
        assert st.trim_end(x).tolist() == trim.tolist()


def test_paragraph_starts_match_the_regex():
    rng = random.Random(1)
    alphabet = ["甲", "a", " ", "\n", "\u3000", "\t", "\u2028", "\x1c", "。"]
    for _ in range(5000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 12)))
        assert _space_runs(text)[2].tolist() == [m.end() for m in _PARA.finditer(text)]
