"""Self-checked exercises (练习) for the chapters.

A reader writes or changes a function; :func:`check` runs an exercise's checks
against it — plain examples and hypothesis property tests — and reports in
plain Chinese what is wrong, with the smallest failing input hypothesis found.
Each chapter's exercises live in their own module (``ch1``, ``ch2``, ...) and
register themselves with :func:`exercise`.

>>> from chunklab.book.exercises import check
>>> def my_fixed(text, size, overlap):          # a correct answer to ex2-fixed
...     step = size - overlap
...     out, i = [], 0
...     while True:
...         out.append((i, min(i + size, len(text))))
...         if i + size >= len(text):
...             return out
...         i += step
>>> check("ex2-fixed", my_fixed).passed
True
"""
from __future__ import annotations

import html
import importlib
import signal
import threading
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

__all__ = ["Exercise", "CheckResult", "Failure", "exercise", "check", "get_exercise", "list_exercises"]

#: Chapter modules that define exercises; imported on first use.
CHAPTER_MODULES = ("ch1", "ch2", "ch3", "ch4", "ch5", "ch6", "ch7")


class Failure(AssertionError):
    """Raised by a check with a message for the reader (Chinese)."""


@dataclass
class Exercise:
    """An exercise: an id, a title, what the function must do, and its checks.

    Each check is ``(description, fn)``: ``fn(candidate)`` returns None or
    raises :class:`Failure` (or any exception, reported as a crash of the
    reader's code). ``solution`` is the reference answer (tests use it to
    show the checks accept a right answer); ``wrong`` are known wrong answers
    the checks must reject.
    """

    id: str
    title: str
    task: str
    checks: list[tuple[str, Callable[[Callable], None]]]
    solution: Callable | None = None
    wrong: list[Callable] = field(default_factory=list)
    timeout: float = 5.0


@dataclass
class CheckResult:
    exercise: Exercise
    passed: bool
    lines: list[tuple[bool, str, str]]  # (ok, check description, message)

    def _repr_html_(self) -> str:
        # Plain text badges: emoji glyphs are missing from many readers' fonts.
        badge = ('<span style="background:#166534;color:#fff;border-radius:3px;padding:0 5px">全部通过</span>'
                 if self.passed else
                 '<span style="background:#b91c1c;color:#fff;border-radius:3px;padding:0 5px">未通过</span> 见下：')
        head = badge
        rows = []
        for ok, desc, msg in self.lines:
            colour = "#166534" if ok else "#b91c1c"
            mark = "✔" if ok else "✘"
            detail = f'<div style="margin-left:1.6em;white-space:pre-wrap;color:#333">{html.escape(msg)}</div>' if msg else ""
            rows.append(f'<div style="color:{colour}">{mark} {html.escape(desc)}</div>{detail}')
        return (f'<div style="border:1px solid #cbd5e1;border-radius:6px;padding:8px 12px;font-size:14px">'
                f'<b>{html.escape(self.exercise.title)}</b>：{head}{"".join(rows)}</div>')

    def __str__(self) -> str:
        out = [f"{self.exercise.title}: {'全部通过' if self.passed else '未通过'}"]
        for ok, desc, msg in self.lines:
            out.append(f"  {'✔' if ok else '✘'} {desc}" + (f"\n      {msg}" if msg else ""))
        return "\n".join(out)


_EXERCISES: dict[str, Exercise] = {}


def exercise(ex: Exercise) -> Exercise:
    """Register an exercise (used by the chapter modules)."""
    if ex.id in _EXERCISES:
        raise ValueError(f"exercise id {ex.id!r} is registered twice")
    _EXERCISES[ex.id] = ex
    return ex


def _load_all() -> None:
    for name in CHAPTER_MODULES:
        try:
            importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise


def get_exercise(exercise_id: str) -> Exercise:
    _load_all()
    if exercise_id not in _EXERCISES:
        import difflib

        close = difflib.get_close_matches(exercise_id, list(_EXERCISES), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ValueError(f"unknown exercise {exercise_id!r}{hint}")
    return _EXERCISES[exercise_id]


def list_exercises() -> list[Exercise]:
    _load_all()
    return list(_EXERCISES.values())


class _Timeout(BaseException):
    """Not an ``Exception``: hypothesis must not catch it and retry (and hang again) while shrinking."""


def _guard(candidate: Callable, seconds: float) -> Callable:
    """Wrap ``candidate`` so that one call longer than ``seconds`` raises :class:`_Timeout`.

    A timer thread sends SIGALRM to the *main thread* (``signal.pthread_kill``), whose Python
    handler raises inside the reader's loop. NOTE: not ``setitimer``: its signal goes to the
    process, and when the kernel hands it to another thread (a Rust library's worker pool,
    say), CPython 3.11 records it without waking the main thread, so a busy loop there never
    sees it (a test run was killed for memory after minutes of an "infinite loop" exercise).
    Only calls made in the main thread (where notebooks and pytest run the checks) are guarded;
    elsewhere the candidate runs unguarded.
    """
    if (threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGALRM")
            or not hasattr(signal, "pthread_kill")):
        return candidate
    main_ident = threading.main_thread().ident
    timed_out = False

    def guarded(*args, **kwargs):
        nonlocal timed_out
        if timed_out:  # one endless call is enough: later calls fail at once
            raise _Timeout()
        armed = [True]

        def on_alarm(signum, frame):
            if armed[0]:
                raise _Timeout()

        old = signal.signal(signal.SIGALRM, on_alarm)
        timer = threading.Timer(seconds, signal.pthread_kill, (main_ident, signal.SIGALRM))
        timer.daemon = True
        timer.start()
        try:
            return candidate(*args, **kwargs)
        except _Timeout as exc:
            timed_out = True
            # The interrupted frames may hold a huge list the loop was filling; let it go now
            # rather than when whoever keeps the traceback (hypothesis does) lets go of it.
            traceback.clear_frames(exc.__traceback__)
            raise _Timeout() from None
        finally:
            armed[0] = False  # a signal sent just as the call returned is ignored
            timer.cancel()
            timer.join()
            signal.signal(signal.SIGALRM, old if old is not None else signal.SIG_DFL)

    return guarded


def check(exercise_id: str, candidate: Callable) -> CheckResult:
    """Run every check of ``exercise_id`` against ``candidate`` and report in Chinese.

    A call of the reader's function that runs longer than the exercise's timeout is reported as "可能陷入死循环"
    (e.g. a fixed-size splitter whose step is 0), instead of hanging the notebook.
    """
    ex = get_exercise(exercise_id)
    if not callable(candidate):
        raise TypeError(f"candidate must be a function, got {type(candidate).__name__}")
    lines: list[tuple[bool, str, str]] = []
    guarded = _guard(candidate, ex.timeout)
    for desc, fn in ex.checks:
        try:
            fn(guarded)
            lines.append((True, desc, ""))
        except Failure as f:
            lines.append((False, desc, str(f)))
        except _Timeout:
            lines.append((False, desc, f"运行超过 {ex.timeout:g} 秒仍未结束：可能陷入了死循环"
                                       "（例如步长为 0 或负数时，窗口永远不前进）。"))
        except Exception as exc:  # noqa: BLE001 - the reader's code crashed; say where
            tb = traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-2)
            lines.append((False, desc, f"你的函数抛出了异常：{type(exc).__name__}: {exc}\n" + "".join(tb[-2:])))
    return CheckResult(ex, all(ok for ok, _, _ in lines), lines)


def property_check(prop: Callable[..., None], *strategies: Any, max_examples: int = 150) -> None:
    """Run ``prop`` under hypothesis; turn the minimal counter-example into a :class:`Failure`.

    ``prop`` raises :class:`Failure` with a Chinese message; the message shown to the reader
    is the one for the *smallest* input hypothesis could find.
    """
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    failures: list[str] = []

    @settings(max_examples=max_examples, deadline=None, database=None, derandomize=True, report_multiple_bugs=False,
              suppress_health_check=list(HealthCheck))
    @given(st.tuples(*strategies))
    def run(args):
        try:
            prop(*args)
        except Failure as f:
            failures.append(str(f))
            raise

    try:
        run()
    except Failure:
        raise Failure(failures[-1]) from None
