"""Self-checked exercises (练习) for the chapters.

A reader writes or changes a function; :func:`check` runs an exercise's checks
against it — plain examples and hypothesis property tests — and reports in
plain Chinese what is wrong, with the smallest failing input hypothesis found. A function
that raises is reported with its error, the (smallest) input that raised it written as a call
of the reader's function, and the reader's own lines where it was raised.
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
import os
import signal
import sysconfig
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
    raises :class:`Failure` (or any other exception: raised inside the reader's
    function, it is reported as a crash of the reader's code; raised by the check
    itself, as an error while checking a returned value). ``solution`` is the
    reference answer (tests use it to show the checks accept a right answer);
    ``wrong`` are known wrong answers the checks must reject.
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


#: Longest rendering of one call shown to the reader (the generated inputs are small; this is a backstop).
_MAX_CALL_CHARS = 1500


class _Call:
    """One call of the reader's function, rendered as Python source: ``my_fixed('。', 1, 0)``."""

    __slots__ = ("text",)

    def __init__(self, name: str, args: tuple, kwargs: dict):
        parts = []
        for value in list(args) + list(kwargs.values()):
            try:
                parts.append(repr(value))
            except Exception:  # noqa: BLE001 - a repr that fails must not hide the reader's error
                parts.append(f"<{type(value).__name__}>")
        names = [""] * len(args) + [f"{k}=" for k in kwargs]
        text = f"{name}({', '.join(n + v for n, v in zip(names, parts))})"
        if len(text) > _MAX_CALL_CHARS:
            text = text[:_MAX_CALL_CHARS] + " …（输入太长，已截断）"
        self.text = text


#: Attribute set on an exception that escaped the reader's function: the :class:`_Call` that raised it.
_CALL_ATTR = "_chunklab_exercise_call"
#: Attribute set by :func:`property_check` on an exception hypothesis shrank to its smallest input.
_SHRUNK_ATTR = "_chunklab_exercise_shrunk"


def _record(candidate: Callable, last: list) -> Callable:
    """Wrap ``candidate`` so that each call is rendered (before it runs: the reader's code may change
    its arguments) and kept in ``last[0]``, and an exception escaping it carries that call.

    The call is rendered as the reader's own function name and arguments, so the report can show
    the input that broke it as a call the reader can paste into a cell, instead of the arguments of
    hypothesis' test function (which are not what the reader's function received).
    """
    name = getattr(candidate, "__name__", "")
    if not isinstance(name, str) or not name.isidentifier():
        name = "your_function"  # a lambda, a functools.partial, ...

    def recorded(*args, **kwargs):
        call = _Call(name, args, kwargs)
        last[:] = [call]
        try:
            return candidate(*args, **kwargs)
        except Exception as exc:  # not BaseException: _Timeout and KeyboardInterrupt pass untouched
            try:
                setattr(exc, _CALL_ATTR, call)
            except (AttributeError, TypeError):
                pass
            raise

    return recorded


def _tagged(exc: BaseException) -> BaseException | None:
    """``exc``, or an exception inside it (an exception group, such as hypothesis' FlakyFailure),
    that escaped the reader's function; None if the error was raised elsewhere."""
    if getattr(exc, _CALL_ATTR, None) is not None:
        return exc
    for sub in getattr(exc, "exceptions", None) or ():
        if isinstance(sub, BaseException):
            found = _tagged(sub)
            if found is not None:
                return found
    return None


def _library_dirs() -> tuple[str, ...]:
    """Folders whose frames are not the reader's code: chunklab, hypothesis, the standard library and
    installed packages."""
    dirs = [os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))]  # the chunklab package
    try:
        import hypothesis

        dirs.append(os.path.dirname(os.path.abspath(hypothesis.__file__)))
    except ImportError:
        pass
    paths = sysconfig.get_paths()
    dirs += [paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if paths.get(k)]
    return tuple(os.path.join(os.path.abspath(d), "") for d in dirs)


def _cell_name(filename: str) -> str:
    """``Cell In[3]`` for a notebook cell's file (as IPython names it in its own tracebacks), else ``filename``."""
    try:
        shell = get_ipython()  # type: ignore[name-defined]  # noqa: F821 - defined in IPython kernels only
        number = shell.compile._filename_map.get(filename)
    except Exception:  # noqa: BLE001 - not in IPython, or an IPython without the map
        return filename
    return f"Cell In[{number}]" if isinstance(number, int) else filename


def _reader_frames(exc: BaseException, recorded: Callable, keep: int = 2) -> list[str]:
    """The last ``keep`` frames of ``exc``'s traceback inside the reader's code, formatted.

    The frames below the innermost call of ``recorded`` are the reader's function and what it
    called; of these, frames in chunklab, hypothesis, the standard library and installed packages
    are left out (an error raised in ``statistics.mean`` is shown at the reader's line that called
    it). If none is left (the reader passed a library function), the innermost frame is shown.
    """
    tbs = []
    tb = exc.__traceback__
    while tb is not None:
        tbs.append(tb)
        tb = tb.tb_next
    start = None
    for i, t in enumerate(tbs):
        if t.tb_frame.f_code is recorded.__code__:
            start = i + 1
    if start is None:
        return []
    below = traceback.extract_tb(exc.__traceback__)[start:]
    libs = _library_dirs()
    mine = [f for f in below if not (f.filename.startswith("<frozen ")
                                     or os.path.abspath(f.filename).startswith(libs))]
    shown = (mine or below[-1:])[-keep:]
    lines = []
    for f in shown:
        lines.append(f"  {_cell_name(f.filename)}, 第 {f.lineno} 行, 在 {f.name} 中\n")
        if f.line:
            lines.append(f"    {f.line.strip()}\n")
    return lines


def _error_name(exc: BaseException) -> str:
    cls = type(exc)
    module = getattr(cls, "__module__", "builtins")
    name = cls.__qualname__
    return name if module in ("builtins", "__main__") else f"{module}.{name}"


def _crash_message(exc: Exception, recorded: Callable, last: list) -> str:
    """Chinese report of an exception: the error, the call that raised it, and where in the reader's code.

    Only the exception's type and message are shown, never its ``__notes__``: hypothesis adds its
    own (a "Falsifying example" of its test function with "# or any other generated value"
    comments), which describe the test rather than the reader's function.
    """
    own = _tagged(exc)
    if own is not None:
        call: _Call = getattr(own, _CALL_ATTR)
        text = str(own)
        lines = [f"你的函数抛出了异常：{_error_name(own)}" + (f": {text}" if text else "") + "\n"]
        if getattr(exc, _SHRUNK_ATTR, False) or getattr(own, _SHRUNK_ATTR, False):
            lines.append("引发异常的调用（随机测试找到、并已尽量化简的输入）：\n")
        else:
            lines.append("引发异常的调用：\n")
        lines.append(f"    {call.text}\n")
        frames = _reader_frames(own, recorded)
        if frames:
            lines.append("出错的位置（你的代码，最内层在最后）：\n")
            lines += frames
        return "".join(lines).rstrip("\n")
    # Raised by the checks themselves, not inside the reader's function: almost always while
    # reading a returned value of an unexpected type or shape.
    text = str(exc)
    lines = [f"检查你的函数返回的结果时出错：{_error_name(exc)}" + (f": {text}" if text else "") + "\n",
             "（通常是返回值的类型或结构和题目要求的不一样。）\n"]
    if last:
        lines.append(f"出错前最后一次调用：\n    {last[0].text}\n")
    return "".join(lines).rstrip("\n")


def check(exercise_id: str, candidate: Callable) -> CheckResult:
    """Run every check of ``exercise_id`` against ``candidate`` and report in Chinese.

    A call of the reader's function that runs longer than the exercise's timeout is reported as "可能陷入死循环"
    (e.g. a fixed-size splitter whose step is 0), instead of hanging the notebook. A call that raises
    is reported with the exception, the (smallest) input that raised it as a call of the reader's
    function, and the reader's lines where it was raised:

    >>> def fixed(text, size, overlap):
    ...     share = overlap / (size - 1)          # divides by 0 when size == 1
    ...     out, i = [], 0
    ...     while True:
    ...         out.append((i, min(i + size, len(text))))
    ...         if i + size >= len(text):
    ...             return out
    ...         i += size - overlap
    >>> print(check("ex2-fixed", fixed))  # doctest: +ELLIPSIS
    练习 2.1 固定长度切分: 未通过
      ✔ 两个手算的例子
      ✘ 随机文本上的性质：覆盖全文、重叠不超标、块不超长、会结束
          你的函数抛出了异常：ZeroDivisionError: division by zero
    引发异常的调用（随机测试找到、并已尽量化简的输入）：
        fixed('。', 1, 0)
    出错的位置（你的代码，最内层在最后）：
      <doctest ...>, 第 2 行, 在 fixed 中
        share = overlap / (size - 1)          # divides by 0 when size == 1
    """
    ex = get_exercise(exercise_id)
    if not callable(candidate):
        raise TypeError(f"candidate must be a function, got {type(candidate).__name__}")
    lines: list[tuple[bool, str, str]] = []
    last: list[_Call] = []
    recorded = _record(candidate, last)
    guarded = _guard(recorded, ex.timeout)
    for desc, fn in ex.checks:
        last.clear()
        try:
            fn(guarded)
            lines.append((True, desc, ""))
        except Failure as f:
            lines.append((False, desc, str(f)))
        except _Timeout:
            lines.append((False, desc, f"运行超过 {ex.timeout:g} 秒仍未结束：可能陷入了死循环"
                                       "（例如步长为 0 或负数时，窗口永远不前进）。"))
        except Exception as exc:  # noqa: BLE001 - the reader's code crashed; say where and on what
            lines.append((False, desc, _crash_message(exc, recorded, last)))
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
    except Exception as exc:  # an error (usually in the reader's function): hypothesis has shrunk its input
        try:
            setattr(exc, _SHRUNK_ATTR, True)
        except (AttributeError, TypeError):
            pass
        raise
