"""ex5-decide: reading a paired interval. The reference agrees with the book's verdict function, and
each known mistake is rejected with the reason that fits it (an interval containing 0 is not a tie)."""
from __future__ import annotations

import itertools

import pytest

from chunklab.book.exercises import check, get_exercise
from chunklab.book.exercises.ch5 import ADOPT, EQUIVALENT, REFUSE, UNDECIDED
from chunklab.evaluation.stats import decide

EX = get_exercise("ex5-decide")
#: stats.decide's verdicts (expect=+1: new − current) and the decision each allows.
ALLOWS = {"supported": ADOPT, "contradicted": REFUSE, "equivalent": EQUIVALENT,
          "same direction, not significant": UNDECIDED, "opposite direction, not significant": UNDECIDED,
          "inconclusive": UNDECIDED}


def test_reference_agrees_with_the_books_verdicts():
    grid = [x / 100 for x in range(-6, 7)]
    for lo, hi in itertools.combinations_with_replacement(grid, 2):
        for margin in (0.0, 0.01, 0.02, 0.05):
            diff = (lo + hi) / 2
            word = decide({"diff": diff, "lo": lo, "hi": hi}, expect=1, equivalence=margin)
            assert EX.solution(diff, lo, hi, margin=margin) == ALLOWS[word], (diff, lo, hi, margin, word)


def _messages(fn):
    result = check("ex5-decide", fn)
    assert not result.passed
    return "\n".join(msg for ok, _, msg in result.lines if not ok)


def test_zero_is_not_a_tie():
    text = _messages(EX.wrong[0])          # contains 0 -> "equivalent"
    assert "不是平手" in text and "需要更多题" in text


def test_point_estimate_is_not_enough():
    text = _messages(EX.wrong[1])
    assert "不能据此采纳" in text or "不是平手" in text


def test_significance_comes_before_the_margin():
    text = _messages(EX.wrong[2])
    assert "先看区间含不含 0" in text and "+0.010" in text


def test_the_margin_is_a_parameter():
    text = _messages(EX.wrong[3])
    assert "margin=0.005" in text


@pytest.mark.parametrize("bad", ["yes", None, 1])
def test_a_return_value_outside_the_four_words_is_named(bad):
    text = _messages(lambda diff, lo, hi, margin=0.02: bad)
    assert "四个词之一" in text
