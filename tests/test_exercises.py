"""Every exercise accepts its reference solution and rejects its known wrong answers."""
from __future__ import annotations

import pytest

from chunklab.book.exercises import check, get_exercise, list_exercises

EXERCISES = [ex.id for ex in list_exercises()]


@pytest.mark.parametrize("exercise_id", EXERCISES)
def test_reference_solution_passes(exercise_id):
    ex = get_exercise(exercise_id)
    assert ex.solution is not None, "every exercise ships a reference solution"
    result = check(exercise_id, ex.solution)
    assert result.passed, str(result)


@pytest.mark.slow
@pytest.mark.parametrize("exercise_id", EXERCISES)
def test_wrong_answers_are_rejected_with_a_chinese_reason(exercise_id):
    ex = get_exercise(exercise_id)
    assert ex.wrong, "every exercise ships at least one wrong answer to test its checks"
    for wrong in ex.wrong:
        result = check(exercise_id, wrong)
        assert not result.passed
        messages = [msg for ok, _, msg in result.lines if not ok]
        assert any(any("\u4e00" <= ch <= "\u9fff" for ch in m) for m in messages), messages
        assert "✘" in str(result)


# Backstop: if the guard ever fails again, end the run with stack traces instead of looping
# until CI's time limit (the loop below allocates nothing, so memory stays flat meanwhile).
@pytest.mark.timeout(120, method="thread")
def test_infinite_loop_is_reported_not_hung(monkeypatch):
    import signal
    import threading

    def never_ends(text, size, overlap):
        out, i = [], 0
        while i < len(text):
            i += size - size  # the C25 bug: step 0
        return out

    sent = []
    real_kill = signal.pthread_kill

    def kill(ident, signum):
        sent.append((ident, signum))
        real_kill(ident, signum)

    monkeypatch.setattr(signal, "pthread_kill", kill)
    ex = get_exercise("ex2-fixed")
    old = ex.timeout
    ex.timeout = 1.0
    try:
        result = check("ex2-fixed", never_ends)
    finally:
        ex.timeout = old
    assert not result.passed
    assert any("死循环" in msg for _, _, msg in result.lines)
    # the alarm goes to the main thread itself, not to the process (see chunklab.book.exercises._guard)
    assert sent == [(threading.main_thread().ident, signal.SIGALRM)]


def test_unknown_exercise_suggests():
    with pytest.raises(ValueError, match="did you mean 'ex2-fixed'"):
        get_exercise("ex2-fixd")


def test_html_report():
    result = check("ex2-fixed", get_exercise("ex2-fixed").solution)
    assert "全部通过" in result._repr_html_()
