"""Exercise 7.3 (write and apply an adoption rule): the checker's cases, its boundaries and its explanations."""
from __future__ import annotations

from pathlib import Path

import jupytext
import pytest

from chunklab.book.exercises import check, get_exercise
from chunklab.book.exercises.ch7 import MARGIN, RULE_CASES, _reference_rule
from chunklab.evaluation.stats import EQUIVALENCE_MARGINS

EXPECTED = {
    "测出提升（第 2 周的路由那样）": "adopt",
    "测出损失（父子块在同预算下那样）": "refuse",
    "等效且更简单（overlap 50 → 0 那样）": "adopt",
    "等效但更复杂（表格转写那样）": "refuse",
    "分不出、更复杂（标题路径那样）": "need_more_data",
    "分不出、更简单": "need_more_data",
    "不差且更简单，但区间不窄": "adopt",
    "测出很小的损失、更简单": "refuse",
}


def test_margin_is_the_books_equivalence_margin():
    assert MARGIN == EQUIVALENCE_MARGINS["hit"] == 0.02


@pytest.mark.parametrize("name, result, simpler", RULE_CASES, ids=[c[0] for c in RULE_CASES])
def test_named_cases_decide_as_the_task_says(name, result, simpler):
    assert _reference_rule(result, simpler) == EXPECTED[name]


def test_the_five_kinds_of_case_are_all_there():
    outcomes = {(EXPECTED[n], s) for n, _, s in RULE_CASES}
    assert ("adopt", True) in outcomes and ("adopt", False) in outcomes      # simpler branch, and a gain
    assert ("refuse", False) in outcomes and ("need_more_data", False) in outcomes
    assert ("need_more_data", True) in outcomes


def test_boundaries_belong_to_the_adopting_and_refusing_sides():
    # the worse end exactly at -MARGIN is still "no worse" for a simpler candidate
    assert _reference_rule({"diff": 0.0, "lo": -MARGIN, "hi": 0.01}, True) == "adopt"
    assert _reference_rule({"diff": 0.0, "lo": -MARGIN - 0.001, "hi": 0.01}, True) == "need_more_data"
    # the better end exactly at +MARGIN: too small to pay for a more complex candidate
    assert _reference_rule({"diff": 0.0, "lo": -0.01, "hi": MARGIN}, False) == "refuse"
    assert _reference_rule({"diff": 0.0, "lo": -0.01, "hi": MARGIN + 0.001}, False) == "need_more_data"
    # an interval touching 0 is not a measured gain or loss
    assert _reference_rule({"diff": 0.01, "lo": 0.0, "hi": 0.03}, False) == "need_more_data"


def test_old_rule_is_told_about_each_wrong_case():
    old = lambda result, simpler: "adopt" if result["lo"] > 0 else "refuse"   # noqa: E731
    result = check("ex7-rule", old)
    assert not result.passed
    first = result.lines[0]
    assert not first[0]
    message = first[2]
    wrong = [n for n, r, s in RULE_CASES if old(r, s) != EXPECTED[n]]
    assert f"判错 {len(wrong)} 个" in message
    for name in wrong:                       # every wrong decision is named and explained
        assert f"【{name}】" in message
    assert "不差且更简单" in message and "need_more_data" in message


def test_a_rule_returning_something_else_is_told_the_three_answers():
    result = check("ex7-rule", lambda result, simpler: True)
    assert not result.passed
    assert any("三者之一" in msg for ok, _, msg in result.lines if not ok)


def test_every_known_wrong_rule_fails_the_named_cases():
    for wrong in get_exercise("ex7-rule").wrong:
        result = check("ex7-rule", wrong)
        assert not result.passed


def _chapter_adopt():
    """The adoption rule exactly as chapters/ch7_iteration.md writes it (its `def adopt` cell)."""
    nb = jupytext.read(Path(__file__).resolve().parents[1] / "chapters" / "ch7_iteration.md")
    source = next(c.source for c in nb.cells if c.cell_type == "code" and c.source.startswith("def adopt("))
    ns = {"MARGIN": EQUIVALENCE_MARGINS["hit"]}
    exec(source, ns)
    return ns["adopt"]


def test_the_chapters_rule_agrees_with_the_exercise_when_the_guard_is_silent():
    adopt = _chapter_adopt()
    silent = {"diff": 0.0, "lo": -0.01, "hi": 0.01}
    for _, result, simpler in RULE_CASES:
        assert adopt(result, silent, simpler) == _reference_rule(result, simpler)
    # the hit@5 guard: a measured loss there refuses even an equivalent, simpler candidate
    assert adopt(RULE_CASES[2][1], {"diff": -0.03, "lo": -0.05, "hi": -0.01}, True) == "refuse"
