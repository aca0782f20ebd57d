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


# --- answers that raise --------------------------------------------------------------------
# The report shows the reader's error, the input as a call of the reader's function and the
# reader's own lines; never hypothesis' test function, its "Falsifying example"/"Failing test
# case" notes or "# or any other generated value" comments, nor chunklab's or hypothesis' frames.

_HYPOTHESIS_WORDS = ("falsifying", "failing test case", "generated value", "hypothesis", "explanation:")


def _has_chinese(text):
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def _crashes(result):
    return [msg for ok, _, msg in result.lines if not ok and "你的函数抛出了异常" in msg]


def _assert_clean_crash_report(result, error, message, call_pattern, reader_line):
    import html
    import re

    assert not result.passed
    crashes = _crashes(result)
    assert crashes, str(result)
    for msg in crashes:
        assert f"{error}: {message}" in msg, msg
        assert re.search(call_pattern, msg), msg
        assert reader_line in msg, msg  # the reader's line that raised, not a chunklab/hypothesis frame
        assert _has_chinese(msg.replace("你的函数抛出了异常", "")), msg
        for word in _HYPOTHESIS_WORDS:
            assert word not in msg.lower(), msg
        assert "exercises/__init__.py" not in msg and "site-packages" not in msg, msg
    page = result._repr_html_()
    text = str(result)
    for shown in (page, text):
        assert error in shown and "未通过" in shown
        for word in _HYPOTHESIS_WORDS:
            assert word not in shown.lower()
    assert html.escape(message) in page


def fixed_dividing(text, size, overlap):
    share = overlap / (size - 1)  # ZeroDivisionError when size == 1
    step = size - overlap
    out, i = [], 0
    while True:
        out.append((i, min(i + size, len(text))))
        if i + size >= len(text):
            return out
        i += step


def test_raising_answer_fixed_reports_smallest_input_as_a_call():
    result = check("ex2-fixed", fixed_dividing)
    lines = dict((desc, (ok, msg)) for ok, desc, msg in result.lines)
    assert lines["两个手算的例子"] == (True, "")  # the examples never have size == 1
    _assert_clean_crash_report(result, "ZeroDivisionError", "division by zero",
                               r"fixed_dividing\('.', 1, 0\)",  # shrunk: one character, size 1, overlap 0
                               "share = overlap / (size - 1)")
    (msg,) = _crashes(result)
    assert "随机测试找到" in msg  # says the input is the smallest hypothesis found


def split_peeking(text):
    first = text[0]  # IndexError on the empty text
    return get_exercise("ex2-sentences").solution(first + text[1:])


def test_raising_answer_sentences_on_an_example_and_a_property():
    result = check("ex2-sentences", split_peeking)
    _assert_clean_crash_report(result, "IndexError", "string index out of range",
                               r"split_peeking\(''\)", "first = text[0]")
    example, prop = _crashes(result)
    assert "引发异常的调用：\n    split_peeking('')" in example  # a hand-written example: not "shrunk"
    assert "随机测试找到" not in example and "随机测试找到" in prop


def _mean_change(diffs):
    import statistics

    return statistics.mean(diffs)  # StatisticsError when there are no changes


def paired_changes_only(a, b, n=1000, seed=0):
    _mean_change([x - y for x, y in zip(a, b) if x != y])
    return get_exercise("ex5-paired").solution(a, b, n=n, seed=seed)


def test_raising_answer_paired_shows_keywords_and_the_readers_frames_not_the_stdlib():
    import statistics

    try:
        statistics.mean([])
    except statistics.StatisticsError as exc:
        message = str(exc)
    result = check("ex5-paired", paired_changes_only)
    _assert_clean_crash_report(result, "statistics.StatisticsError", message,
                               r"paired_changes_only\(\[.*\], \[.*\], n=\d+, seed=0\)",
                               "return statistics.mean(diffs)")
    for msg in _crashes(result):
        # both of the reader's frames, outermost first; none of statistics.py's
        assert msg.index("在 paired_changes_only 中") < msg.index("在 _mean_change 中"), msg
        assert "statistics.py" not in msg, msg


def test_raising_lambda_is_shown_as_your_function():
    result = check("ex2-fixed", lambda text, size, overlap: [(0, len(text))][size])
    _assert_clean_crash_report(result, "IndexError", "list index out of range",
                               r"your_function\('[^']+', \d+, \d+\)", "[(0, len(text))][size]")
    example, prop = _crashes(result)
    assert "your_function('一二三四五六七', 4, 1)" in example
    assert "your_function('。', 1, 0)" in prop or "your_function('甲', 1, 0)" in prop, prop


def test_error_in_the_checks_on_an_odd_return_value_is_not_blamed_on_the_function():
    from chunklab.book.exercises import _EXERCISES, Exercise, exercise

    def check_sum(candidate):
        candidate([1, 2], limit=3) + 1  # TypeError when the answer returns a list

    exercise(Exercise(id="test-odd-return", title="测试", task="", checks=[("加一", check_sum)]))
    try:
        result = check("test-odd-return", lambda xs, limit: list(xs))
    finally:
        del _EXERCISES["test-odd-return"]
    (line,) = result.lines
    ok, _, msg = line
    assert not ok
    assert "检查你的函数返回的结果时出错：TypeError" in msg and "你的函数抛出了异常" not in msg
    assert "your_function([1, 2], limit=3)" in msg
