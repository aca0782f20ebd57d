"""Declared parameters and their validation, in one place (scikit-learn style).

Every strategy declares its knobs as :class:`Param` objects; the registry,
the widgets (sliders are built from ``low``/``high``) and the error messages all
read the same declaration.
"""
from __future__ import annotations

import ast
import json
import numbers
import reprlib
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

__all__ = ["Param", "ParamError", "parse_params", "loads_json", "read_bounded", "foreign_items"]


class ParamError(ValueError):
    """A parameter value outside its declared range (a ``ValueError``)."""


@dataclass(frozen=True)
class Param:
    """One strategy parameter.

    ``kind`` is one of ``int``, ``float``, ``bool``, ``choice``, ``str``,
    ``strs`` (a sequence of strings) or ``callable``. ``low``/``high`` bound
    numbers (inclusive); ``choices`` lists allowed values for ``choice``;
    ``none_ok`` allows ``None`` (meaning "derived from other parameters").
    ``ui_high`` is a sensible slider end when ``high`` is open. ``bounds``
    states a range that depends on other parameters in their names, e.g.
    ``"[0, target)"``; the message then reads ``an int in [0, target) = [0, 99]``
    (only for a range with both ``low`` and ``high``). The cross-parameter
    checks of the strategies build such a ``Param`` on the spot and call
    :meth:`validate`, so every range error has one form:
    ``NAME must be an int in [LOW, HIGH], got VALUE``.

    >>> Param("int", 0, low=0, high=9, bounds="[0, size)").validate("overlap", 10)
    Traceback (most recent call last):
    ...
    chunklab.params.ParamError: overlap must be an int in [0, size) = [0, 9], got 10
    """

    kind: str
    default: Any
    doc: str = ""
    low: float | None = None
    high: float | None = None
    choices: Sequence[Any] = ()
    none_ok: bool = False
    ui_high: float | None = None
    bounds: str = ""

    def allowed(self) -> str:
        """Human-readable allowed range, used in error messages."""
        if self.kind in ("int", "float"):
            word = "an int" if self.kind == "int" else "a number"
            if self.low is not None and self.high is not None:
                named = f"{self.bounds} = " if self.bounds else ""
                rng = f"{word} in {named}[{_fmt(self.low)}, {_fmt(self.high)}]"
            elif self.low is not None:
                rng = f"{word} >= {_fmt(self.low)}"
            elif self.high is not None:
                rng = f"{word} <= {_fmt(self.high)}"
            else:
                rng = word
        elif self.kind == "bool":
            rng = "True or False"
        elif self.kind == "choice":
            rng = "one of " + ", ".join(repr(c) for c in self.choices)
        elif self.kind == "strs":
            rng = "a list of strings"
        elif self.kind == "callable":
            rng = "a callable"
        else:
            rng = "a string"
        return rng + (" or None" if self.none_ok else "")

    def validate(self, name: str, value: Any) -> Any:
        """Return the (normalised) value or raise naming ``name``, the value and the range."""
        if value is None and self.none_ok:
            return None
        bad = f"{name} must be {self.allowed()}, got {value!r}"
        if self.kind == "int":
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise TypeError(bad)
            value = int(value)
        elif self.kind == "float":
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise TypeError(bad)
            value = float(value)
            if value != value:  # NaN
                raise ParamError(bad)
        elif self.kind == "bool":
            if not isinstance(value, bool):
                raise TypeError(bad)
            return value
        elif self.kind == "choice":
            if value not in self.choices:
                raise ParamError(bad)
            return value
        elif self.kind == "strs":
            if isinstance(value, str) or not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
                raise TypeError(bad)
            return tuple(value)
        elif self.kind == "callable":
            if not callable(value):
                raise TypeError(bad)
            return value
        elif self.kind == "str":
            if not isinstance(value, str):
                raise TypeError(bad)
            return value
        if self.low is not None and value < self.low:
            raise ParamError(bad)
        if self.high is not None and value > self.high:
            raise ParamError(bad)
        return value

    def describe(self) -> dict[str, Any]:
        """Plain-data description for ``list_strategies()`` and the widgets."""
        d = {"kind": self.kind, "default": self.default, "doc": self.doc, "allowed": self.allowed()}
        if self.low is not None:
            d["low"] = self.low
        if self.high is not None:
            d["high"] = self.high
        if self.ui_high is not None:
            d["ui_high"] = self.ui_high
        if self.choices:
            d["choices"] = list(self.choices)
        return d


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def parse_params(items: Sequence[str] | None) -> dict[str, Any]:
    """Turn ``["target=512", "prefix=true", "separators=['\\n']"]`` into typed values.

    >>> parse_params(["target=512", "prefix=true", "max=none", "mode=rows"])
    {'target': 512, 'prefix': True, 'max': None, 'mode': 'rows'}
    """
    out: dict[str, Any] = {}
    for item in items or ():
        if "=" not in item:
            raise ParamError(f"--param expects key=value, got {item!r}")
        key, raw = item.split("=", 1)
        low = raw.strip().lower()
        if low in ("true", "false"):
            value: Any = low == "true"
        elif low in ("none", "null"):
            value = None
        else:
            try:
                value = ast.literal_eval(raw)
            except (ValueError, SyntaxError):
                value = raw
            except (RecursionError, MemoryError):
                raise ParamError(f"--param {key.strip()}: the value is nested too deeply to read") from None
        out[key.strip()] = value
    return out


def loads_json(text: str) -> Any:
    """``json.loads`` for text a user gave: nesting too deep for Python's parser (``[[[[…``) is a
    ``json.JSONDecodeError`` like any other malformed JSON, not a RecursionError traceback.

    >>> loads_json("[" * 100_000)
    Traceback (most recent call last):
    ...
    json.decoder.JSONDecodeError: nested too deeply to read: line 1 column 1 (char 0)
    """
    try:
        return json.loads(text)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply to read", text if isinstance(text, str) else "", 0) from None


def read_bounded(items: Iterable[Any], max_items: int, max_size: int, size: Callable[[Any], int],
                 error: Callable[[bool], str]) -> list[Any]:
    """``list(items)``, read one at a time and stopped past ``max_items`` items or past ``max_size``
    in all (``size`` of each): then a ValueError with the one line ``error(too_many_items)``, where an
    iterator that never ends would fill memory.

    >>> read_bounded(iter("abc"), 5, 10, len, lambda many: "too many" if many else "too long")
    ['a', 'b', 'c']
    >>> read_bounded(iter(int, 1), 5, 10, lambda x: 0, lambda many: "too many" if many else "too long")
    Traceback (most recent call last):
    ValueError: too many
    """
    out: list[Any] = []
    total = 0
    for item in items:
        total += size(item)
        if len(out) >= max_items or total > max_size:
            raise ValueError(error(len(out) >= max_items))
        out.append(item)
    return out


def foreign_items(produce: Callable[[], Any], what: str, where: str = "", expected: str = "items") -> Iterator[Any]:
    """The items of ``produce()``, another library's output, read lazily by a caller that wants an
    iterable of ``expected``: a ``str``, ``bytes``, a mapping or anything not iterable is a TypeError
    (a string would be read as its characters, a dict as its keys), and an ``exit()`` while producing
    (which would end the whole program with no output) is a RuntimeError; both name ``what`` and ``where``.

    >>> list(foreign_items(lambda: iter(["甲", "乙"]), "splitter 'f'"))
    ['甲', '乙']
    >>> list(foreign_items(lambda: "甲乙", "splitter 'f'", " for document 'd'", "strings"))
    Traceback (most recent call last):
    TypeError: splitter 'f' returned str '甲乙' for document 'd'; expected an iterable of strings
    """
    try:
        out = produce()
        if isinstance(out, (str, bytes, bytearray, Mapping)) or not hasattr(out, "__iter__"):
            raise TypeError(f"{what} returned {type(out).__name__} {reprlib.repr(out)}{where}; "
                            f"expected an iterable of {expected}")
        yield from out
    except SystemExit as exc:
        raise RuntimeError(f"{what} called exit({exc.code!r}){where}") from None
