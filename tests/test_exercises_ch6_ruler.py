"""Exercise 6.3 (pick the ruler for a question): the reference answer's rules, and the checker's
explanations of wrong choices."""
from __future__ import annotations

import pytest

from chunklab.book.exercises import check
from chunklab.book.exercises.ch6 import RULER_SCENARIOS, _reference_ruler


def test_the_four_scenarios_have_the_answers_the_trainer_guide_gives():
    got = [_reference_ruler(sc) for sc in RULER_SCENARIOS]
    assert got == [("budget", "chars_differ"), ("fixed_k", "same_chars"), ("budget", "chars_differ"),
                   ("budget", "prompt_budget")]


@pytest.mark.parametrize("lens, want", [((500, 600), "same_chars"), ((500, 601), "chars_differ")])
def test_the_twenty_percent_line(lens, want):
    sc = {"question": "边界", "mean_chars": {"a": lens[0], "b": lens[1]}, "prompt_budget": None}
    assert _reference_ruler(sc)[1] == want


def test_a_prompt_budget_wins_even_when_lengths_are_equal():
    sc = {"question": "预算", "mean_chars": {"a": 500, "b": 500}, "prompt_budget": 2560}
    assert _reference_ruler(sc) == ("budget", "prompt_budget")


def test_fixed_k_on_different_sizes_is_explained_by_the_delivered_text():
    result = check("ex6-ruler", lambda sc: ("fixed_k", "same_chars"))
    assert not result.passed
    msg = next(m for ok, _, m in result.lines if not ok)
    assert "应选 'budget'" in msg and "倍" in msg and "256" in msg


def test_right_ruler_wrong_reason_names_both_reasons():
    def answer(sc):
        ruler, reason = _reference_ruler(sc)
        return ruler, ("chars_differ" if ruler == "budget" else reason)

    result = check("ex6-ruler", answer)
    assert not result.passed
    msg = next(m for ok, _, m in result.lines if not ok)
    assert "选对了" in msg and "'prompt_budget'" in msg and "'chars_differ'" in msg


def test_a_malformed_answer_gets_a_chinese_message():
    result = check("ex6-ruler", lambda sc: "budget")
    assert not result.passed
    assert "两项" in next(m for ok, _, m in result.lines if not ok)
