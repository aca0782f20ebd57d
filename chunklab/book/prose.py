"""Numbers in the chapters' prose: :func:`glue` binds a value to a name that ``{eval}`` shows.

A chapter computes a value in a code cell and writes it into a sentence further down::

    glue("ch1_hit", r.aggregate["hit"]["mean"], display=False)      # in a code cell

    固定 512 的 hit@5 是 {eval}`f"{ch1_hit:.1%}"`。                     # in the prose

``{eval}`` is MyST's inline expression: the book build (MyST-NB, ``nb_execution_mode: inline``)
evaluates it in the chapter's kernel while it executes the chapter, and JupyterLab
(jupyterlab-myst) evaluates it in the notebook's kernel after Run All. Both show the same text
because of two rules that :func:`glue` enforces:

- **A prose value is a plain ``str``, ``int`` or ``float``** (numpy scalars are converted, a
  ``bool`` is an ``int``). Anything else would show as its ``repr`` — ``np.float64(0.5)`` — or,
  for a display object such as ``IPython.display.Markdown``, as a block in JupyterLab. A string is
  shown as text: Markdown in it shows literally, and it must be one line.
- **A name is bound once.** The site evaluates an expression where it stands, JupyterLab only
  after the last cell ran; a name bound again later with another value would read differently in
  the two. Binding the same value again (re-running a cell) is fine.

The signature is MyST-NB's ``glue(name, variable, display=True)``, so chapters written for
``{glue:text}`` only change their import. ``display=True`` also shows the value as the cell's output.

>>> ns = {}
>>> glue("ch0_share", 0.25, namespace=ns)
>>> f"{ns['ch0_share']:.1%}"
'25.0%'
>>> import numpy as np
>>> glue("ch0_n", np.int64(7), namespace=ns); type(ns["ch0_n"]).__name__
'int'
>>> glue("ch0_n", 7, namespace=ns)          # the same value again: allowed
>>> glue("ch0_n", 8, namespace=ns)
Traceback (most recent call last):
ValueError: glue: 'ch0_n' is already bound to 7, not 8: a prose value is bound once per chapter (restart the kernel to recompute)
>>> glue("ch0 share", 1, namespace=ns)
Traceback (most recent call last):
ValueError: glue: 'ch0 share' is not a Python identifier: {eval} reads the value by this name
>>> glue("ch0_list", [1, 2], namespace=ns)
Traceback (most recent call last):
TypeError: glue: 'ch0_list' must be a str, int or float (numpy scalars are converted), not list
"""
from __future__ import annotations

import keyword
import math
import sys
from typing import Any, Mapping, MutableMapping

__all__ = ["glue", "glue_all", "prose_value"]


def prose_value(name: str, value: Any) -> str | int | float:
    """``value`` as the plain Python scalar that ``{eval}`` shows the same way everywhere.

    >>> prose_value("x", True), prose_value("x", "固定 512")
    (1, '固定 512')
    """
    if type(value).__module__ == "numpy" and hasattr(value, "item") and getattr(value, "ndim", None) == 0:
        value = value.item()
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, str):
        if "\n" in value or "\r" in value:
            raise ValueError(f"glue: {name!r} is a string with a line break; prose values are one line")
        return str(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    raise TypeError(f"glue: {name!r} must be a str, int or float (numpy scalars are converted), "
                    f"not {type(value).__name__}")


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def _user_namespace(depth: int) -> MutableMapping[str, Any]:
    """The IPython kernel's user namespace, or else the globals of the caller ``depth`` frames up."""
    ipython = None
    if "IPython" in sys.modules:
        ipython = sys.modules["IPython"].get_ipython()
    if ipython is not None:
        return ipython.user_ns
    return sys._getframe(depth + 1).f_globals


def glue(name: str, value: Any, display: bool = False, *,
         namespace: MutableMapping[str, Any] | None = None) -> None:
    """Bind ``value`` to ``name`` in the chapter's namespace, for ``{eval}`\\`name\\``` in the prose.

    ``namespace`` defaults to the running kernel's user namespace (outside IPython: the caller's
    globals). Raises ``ValueError`` (one line, naming the key) when ``name`` is not an identifier or
    is already bound to a different value, and ``TypeError`` for a value that is not a ``str``,
    ``int`` or ``float``.
    """
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
        raise ValueError(f"glue: {name!r} is not a Python identifier: {{eval}} reads the value by this name")
    value = prose_value(name, value)
    ns = namespace if namespace is not None else _user_namespace(1)
    if name in ns and not _same(ns[name], value):
        raise ValueError(f"glue: {name!r} is already bound to {ns[name]!r}, not {value!r}: a prose value "
                         "is bound once per chapter (restart the kernel to recompute)")
    ns[name] = value
    if display:
        from IPython.display import display as _display
        _display(value)


def glue_all(values: Mapping[str, Any], prefix: str = "", *,
             namespace: MutableMapping[str, Any] | None = None) -> None:
    """:func:`glue` every ``name: value`` of ``values`` (each name after ``prefix``), in one line.

    A chapter's helper returns the numbers its prose needs as a dict; the chapter binds them with
    ``glue_all(numbers, "ch6_")`` instead of a row of ``glue`` calls.

    >>> ns = {}
    >>> glue_all({"n": 3, "share": 0.5}, "ch0_", namespace=ns); sorted(ns)
    ['ch0_n', 'ch0_share']
    """
    ns = namespace if namespace is not None else _user_namespace(1)
    for name, value in values.items():
        glue(f"{prefix}{name}", value, namespace=ns)
