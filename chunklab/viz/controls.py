"""The explorers' parameter controls, built from the strategies' declarations, and their errors in Chinese.

:func:`param_widgets` gives each parameter a control that fits it: length-like integers
move over a ladder of sensible values (:data:`SIZE_STOPS`) instead of one step per
character; a range that depends on another parameter follows it live (:data:`LINKS`:
``overlap`` stays below ``target``); an optional cap (``None``) gets a checkbox that enables
its slider; a parameter that only matters in one mode is shown only in that mode
(:data:`SHOWN_WHEN`). :func:`accept_value` sets a control programmatically, refusing a value
it cannot take. :func:`error_zh` turns a parameter error into the one Chinese line an explorer
shows. ipywidgets is imported only when a control is built.
"""
from __future__ import annotations

import html
import numbers
import re
from typing import Any, Mapping, Sequence

from ..base import get_strategy
from ..params import Param

__all__ = ["param_widgets", "accept_value", "declared_params", "error_zh", "size_stops", "SIZE_STOPS",
           "LADDER_SPAN", "LINKS", "SHOWN_WHEN", "NONE_MEANS"]


# -- errors in Chinese ---------------------------------------------------------------------------

_KIND_ZH = {"an int": "整数", "a number": "数"}
_WORDS_ZH = {"an int": "整数", "a number": "数", "True or False": "True 或 False", "a list of strings": "字符串列表",
             "a callable": "可调用对象（函数）", "a string": "字符串"}
_RANGE = re.compile(r"(?P<word>an int|a number) in (?:(?P<named>.+?) = )?\[(?P<lo>[^\]]+?), (?P<hi>[^\]]+?)\]")
_ONE_SIDED = re.compile(r"(?P<word>an int|a number) (?P<op>>=|<=) (?P<bound>\S+)")
_MUST_BE = re.compile(r"(?P<name>\w+) must be (?P<rng>.+?), got (?P<got>.+)", re.S)
_AT_LEAST = re.compile(r"(?P<name>\w+) must be >= (?P<other>\w+) \((?P<val>[^)]+)\)(?P<none> or None)?, got (?P<got>.+)", re.S)
_UNKNOWN = re.compile(r"unknown parameter '(?P<name>.+?)' for strategy '(?P<strategy>.+?)'(?:; did you mean '(?P<close>.+?)'\?)?")
_ALIAS = re.compile(r"'(?P<alias>.+?)' is another name for '(?P<canonical>.+?)'")


def _allowed_zh(rng: str) -> str | None:
    """``Param.allowed()`` in Chinese (None if it has an unknown form)."""
    none = rng.endswith(" or None")
    if none:
        rng = rng[:-len(" or None")]
    if m := _RANGE.fullmatch(rng):
        kind = _KIND_ZH[m["word"]]
        text = (f"{m['named']} 内的{kind}，即 [{m['lo']}, {m['hi']}]" if m["named"]
                else f"[{m['lo']}, {m['hi']}] 内的{kind}")
    elif m := _ONE_SIDED.fullmatch(rng):
        text = f"{'不小于' if m['op'] == '>=' else '不大于'} {m['bound']} 的{_KIND_ZH[m['word']]}"
    elif rng.startswith("one of "):
        text = "以下之一：" + rng[len("one of "):].replace(", ", "、")
    elif rng in _WORDS_ZH:
        text = _WORDS_ZH[rng]
    else:
        return None
    space = " " if text[0].isascii() else ""   # the book's spacing: 应为 [0, 9]，应为不小于 1
    return "应为" + space + text + ("，或不设（None）" if none else "")


def error_zh(exc: BaseException) -> str:
    """One Chinese line for an error raised by an explorer's update: parameter, value, allowed range.

    Range errors (``ParamError`` and the ``TypeError`` of a wrong type, both in the one form
    ``NAME must be RANGE, got VALUE``) are translated; anything else keeps its message after a
    Chinese lead. No traceback.

    >>> from chunklab.params import ParamError
    >>> error_zh(ParamError("overlap must be an int in [0, target) = [0, 49], got 50"))
    '参数 overlap 的值 50 超出允许范围：应为 [0, target) 内的整数，即 [0, 49]'
    >>> error_zh(ParamError("max must be >= target (500) or None, got 100"))
    '参数 max 的值 100 超出允许范围：应不小于 target（500），或不设（None）'
    >>> error_zh(ParamError("length must be one of 'chars', 'tokens', got 'x'"))
    "参数 length 的值 'x' 超出允许范围：应为以下之一：'chars'、'tokens'"
    >>> error_zh(RuntimeError("boom"))
    '更新出错（RuntimeError）：boom'
    """
    msg = str(exc).strip()
    if m := _AT_LEAST.fullmatch(msg):
        none = "，或不设（None）" if m["none"] else ""
        return f"参数 {m['name']} 的值 {m['got']} 超出允许范围：应不小于 {m['other']}（{m['val']}）{none}"
    if (m := _MUST_BE.fullmatch(msg)) and (allowed := _allowed_zh(m["rng"])):
        return f"参数 {m['name']} 的值 {m['got']} 超出允许范围：{allowed}"
    if m := _UNKNOWN.match(msg):
        close = f"（是不是 {m['close']}？）" if m["close"] else ""
        return f"策略 {m['strategy']} 没有参数 {m['name']}{close}"
    if m := _ALIAS.match(msg):
        return f"{m['alias']} 与 {m['canonical']} 是同一个参数的两个名字，只能给其中一个"
    if isinstance(exc, (ValueError, TypeError)):
        return f"参数有误：{msg}"
    return f"更新出错（{type(exc).__name__}）：{msg}"


# -- parameter controls ----------------------------------------------------------------------------

#: Stops of a length-like slider (doubling, then 1.5× steps): every drag moves by a sensible
#: amount, and no drag reaches 1. :func:`size_stops` keeps those within a parameter's range.
SIZE_STOPS = (32, 64, 128, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192)
#: An int parameter whose slider would span more values than this moves over stops instead.
LADDER_SPAN = 200

#: Ranges that depend on another parameter (the strategies' cross-parameter checks), followed
#: live by the sliders: ``dependent: (bounding parameters, first present wins; relation;
#: extra stops as fractions of the bound)``.
LINKS: dict[str, tuple[tuple[str, ...], str, tuple[float, ...]]] = {
    "overlap": (("size", "target"), "<", (0.1, 0.25, 0.5)),
    "overlap_turns": (("turns",), "<", ()),
    "min": (("target",), "<=", (0.1, 0.25, 0.5)),
    "max": (("target",), ">=", (1.0, 1.5, 2.0)),
    "step": (("window",), "<=", (0.25, 0.5, 0.75, 1.0)),
}

#: Parameters that matter in one mode only, per strategy: ``parameter: (mode parameter, values)``.
#: The control is shown only while the mode parameter has one of the values.
SHOWN_WHEN: dict[str, dict[str, tuple[str, tuple[Any, ...]]]] = {
    "semantic": {"k": ("threshold", ("std",)), "percentile": ("threshold", ("percentile",)),
                 "value": ("threshold", ("absolute",))},
    "table": {"rows": ("mode", ("rows",))},
    "dialogue": {"threshold": ("topic_breaks", (True,))},
}

#: What ``None`` means, shown beside an optional parameter's checkbox while it is not ticked.
NONE_MEANS = {"max": "不设：等于 target", "lines": "不设：不限行数", "paragraphs": "不设：不限段落数",
              "sentences": "不设：不限句数", "max_sentence": "不设：长句不切"}


def size_stops(low: float | None, high: float | None) -> list[int]:
    """The :data:`SIZE_STOPS` within ``[low, high]``, with 0 first when ``low`` is 0.

    >>> size_stops(1, 4096)
    [32, 64, 128, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096]
    >>> size_stops(0, 1024)
    [0, 32, 64, 128, 256, 384, 512, 768, 1024]
    """
    lo = 0 if low is None else low
    hi = SIZE_STOPS[-1] if high is None else high
    stops = [s for s in ((0,) if lo <= 0 else ()) + SIZE_STOPS if lo <= s <= hi]
    return stops or [int(lo), int(hi)]


_CLASSES: dict[str, type] = {}


def _widget_classes() -> dict[str, type]:
    """The widget classes below, defined on first use (importing this module needs no ipywidgets)."""
    if _CLASSES:
        return _CLASSES
    import ipywidgets as w
    import traitlets as t

    class LadderSlider(w.SelectionSlider):
        """An int slider over stops (``options``) between ``min`` and ``max``.

        ``min``/``max`` bound what the control accepts (the parameter's range, narrowed by
        :data:`LINKS`); the stops are where a drag lands. A value in range set with
        :meth:`accept` becomes one more stop. Changing the range keeps the value when it still
        fits and otherwise moves it to the nearest stop inside, with one change event.
        """

        min = t.Int(0, help="smallest accepted value")
        max = t.Int(0, help="largest accepted value")

        def __init__(self, value: int, stops: Sequence[int], lo: int, hi: int, **kwargs: Any) -> None:
            self._stops = tuple(int(s) for s in stops)
            self._extra: set[int] = set()      # values set with accept()
            self._dynamic: set[int] = set()    # stops that follow a bounding parameter
            self._want: int | None = None
            super().__init__(options=self._options_for(lo, hi, value), value=value, **kwargs)
            self.set_trait("min", lo)
            self.set_trait("max", hi)

        def _candidates(self, lo: int, hi: int) -> list[int]:
            return sorted({s for s in (*self._stops, *self._extra, *self._dynamic) if lo <= s <= hi})

        def _options_for(self, lo: int, hi: int, value: int) -> tuple[int, ...]:
            return tuple(sorted({*self._candidates(lo, hi), value}))

        def _refresh(self, lo: int, hi: int, value: int) -> None:
            self.set_trait("min", lo)
            self.set_trait("max", hi)
            options = self._options_for(lo, hi, value)
            if options == tuple(self._options_values):
                self.value = value
                return
            self._want = value
            try:
                self.options = options
            finally:
                self._want = None

        @t.observe("options")
        def _propagate_options(self, change) -> None:
            # Like the base class, but keep the value (or the one being set) instead of jumping
            # to the first option: a change of range must not send a transient value downstream.
            options = self._options_full
            self.set_trait("_options_labels", tuple(i[0] for i in options))
            self._options_values = tuple(i[1] for i in options)
            if self._initializing_traits_ is True or self.index is None:
                return
            want = self._want if self._want is not None else self.value
            values = self._options_values
            idx = values.index(want) if want in values else 0
            if idx != self.index:
                self.index = idx
            else:
                self.label, self.value = self._options_labels[idx], values[idx]

        def accept(self, value: Any) -> bool:
            """Set ``value`` if it is an int in ``[min, max]`` (adding it as a stop); else False."""
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not self.min <= value <= self.max:
                return False
            value = int(value)
            if value in self._options_values:
                self.value = value
            else:
                self._extra.add(value)
                self._refresh(self.min, self.max, value)
            return True

        def set_limits(self, lo: int, hi: int, extra: Sequence[int] = ()) -> None:
            """Accept ``[lo, hi]`` from now on, with ``extra`` stops; move the value inside if needed."""
            hi = max(lo, hi)
            self._dynamic = {int(e) for e in extra}
            candidates = self._candidates(lo, hi)
            value = self.value
            if value > hi:
                value = max((c for c in candidates if c <= hi), default=hi)
            elif value < lo:
                value = min((c for c in candidates if c >= lo), default=lo)
            self._refresh(lo, hi, value)

    class BoundedIntSlider(w.IntSlider):
        """An ``IntSlider`` over a short range that accepts the parameter's whole range when set
        (:meth:`accept` widens the slider) and follows :data:`LINKS` (:meth:`set_limits`)."""

        def __init__(self, value: int, lo: int, hi: int, ui_hi: int, **kwargs: Any) -> None:
            self._limits, self._ui_hi = (lo, hi), ui_hi
            top = max(lo + 1, value, min(ui_hi, hi))
            super().__init__(value=value, min=lo, max=top, **kwargs)

        def accept(self, value: Any) -> bool:
            lo, hi = self._limits
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not lo <= value <= hi:
                return False
            if value > self.max:
                self.max = int(value)
            if value < self.min:
                self.min = int(value)
            self.value = int(value)
            return True

        def set_limits(self, lo: int, hi: int, extra: Sequence[int] = ()) -> None:
            hi = max(lo, hi)
            self._limits = (lo, hi)
            top = max(lo, min(hi, max(self._ui_hi, self.value)))
            if lo > self.max:
                self.max = top
                self.min = lo
            else:
                self.min = lo
                self.max = top

    class OptionalControl(w.HBox):
        """The parameter's name (in the column of the other controls' names), a checkbox and a
        slider: ``value`` is None while the box is not ticked (the slider is hidden and a note
        says what None means), the slider's value when it is."""

        value = t.Any(None, allow_none=True)
        disabled = t.Bool(False, help="True while the parameter is None (the box is not ticked)")

        def __init__(self, inner, name: str, value: Any, note: str, width: int, tooltip: str = "") -> None:
            self.inner = inner
            self._syncing = False
            self.name = w.HTML(f'<div style="text-align:right;padding-right:8px" title="{html.escape(tooltip)}">'
                               f'{html.escape(name)}</div>', layout=w.Layout(width=f"{width}px"))
            self.check = w.Checkbox(value=value is not None, indent=False, tooltip=tooltip or name,
                                    layout=w.Layout(width="28px"))
            self.note = w.HTML(f'<span style="font-size:12px;color:#666">{html.escape(note)}</span>')
            super().__init__([self.name, self.check, inner, self.note])
            self.value = value
            self._show()
            self.check.observe(self._on_check, names="value")
            self.inner.observe(self._on_inner, names="value")
            self.observe(lambda _: self._show(), names="value")

        @t.validate("value")
        def _valid(self, proposal):
            value = proposal["value"]
            if value is None:
                return None
            self._syncing = True
            try:
                ok = accept_value(self.inner, value)
            finally:
                self._syncing = False
            if not ok:
                raise t.TraitError(f"{value!r} is outside the control's range")
            return self.inner.value

        def _show(self) -> None:
            off = self.value is None
            self._syncing = True
            try:
                self.check.value = not off
            finally:
                self._syncing = False
            self.disabled = self.inner.disabled = off
            self.inner.layout.display = "none" if off else None
            self.note.layout.display = None if off else "none"

        def _on_check(self, change) -> None:
            if not self._syncing:
                self.value = self.inner.value if change["new"] else None

        def _on_inner(self, change) -> None:
            if not self._syncing and self.check.value:
                self.value = change["new"]

        def accept(self, value: Any) -> bool:
            try:
                self.value = value
            except t.TraitError:
                return False
            return True

        def set_limits(self, lo: int, hi: int, extra: Sequence[int] = ()) -> None:
            self.inner.set_limits(lo, hi, extra)

    _CLASSES.update(LadderSlider=LadderSlider, BoundedIntSlider=BoundedIntSlider, OptionalControl=OptionalControl)
    return _CLASSES


def accept_value(wd: Any, value: Any) -> bool:
    """Put ``value`` into control ``wd`` if the control can hold it now; False (and no change) if not:
    a value outside the range the control allows at the moment, or of the wrong type."""
    if hasattr(wd, "accept"):
        return wd.accept(value)
    import ipywidgets as w
    import traitlets as t

    if isinstance(wd, (w.IntSlider, w.FloatSlider)):
        whole = isinstance(wd, w.IntSlider)
        if (isinstance(value, bool) or not isinstance(value, numbers.Integral if whole else numbers.Real)
                or not wd.min <= value <= wd.max):
            return False
    elif isinstance(wd, w.Checkbox):
        if not isinstance(value, bool):
            return False
    elif isinstance(wd, w.Dropdown):
        if value not in wd.options:
            return False
    try:
        wd.value = value
    except t.TraitError:
        return False
    return True


def declared_params(strategy_name: str) -> dict[str, Param]:
    """The declared parameters of a registered strategy (its class's ``param_spec()``)."""
    return type(get_strategy(strategy_name)).param_spec()


def _link(controls: Mapping[str, Any]) -> None:
    """Make the range of each :data:`LINKS` dependent follow its bounding control live."""
    for dep, (bounders, rel, fractions) in LINKS.items():
        src = next((b for b in bounders if b in controls), None)
        if dep not in controls or src is None or not hasattr(controls[dep], "set_limits"):
            continue
        target = controls[dep]
        lo0, hi0 = getattr(target, "inner", target)._declared

        def follow(_=None, target=target, src=controls[src], rel=rel, fractions=fractions, lo0=lo0, hi0=hi0):
            bound = src.value
            if bound is None:
                return
            lo, hi = {"<": (lo0, min(hi0, bound - 1)), "<=": (lo0, min(hi0, bound)),
                      ">=": (max(lo0, bound), hi0)}[rel]
            target.set_limits(lo, hi, [round(bound * f) for f in fractions])
            if rel == ">=" and getattr(target, "value", 0) is None:
                target.inner.accept(max(lo, min(hi, bound)))  # ticking the box starts at the bound

        controls[src].observe(follow, names="value")
        follow()


def _show_when(strategy_name: str, controls: Mapping[str, Any]) -> None:
    """Show the controls of :data:`SHOWN_WHEN` only in their mode (and follow the mode live)."""
    for dep, (mode, values) in SHOWN_WHEN.get(strategy_name, {}).items():
        if dep not in controls or mode not in controls:
            continue

        def apply(_=None, dep=controls[dep], mode=controls[mode], values=values):
            dep.layout.display = None if mode.value in values else "none"

        controls[mode].observe(apply, names="value")
        apply()


def param_widgets(strategy_name: str, values: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Controls for a strategy's parameters, built from the registry's declarations.

    Integers over a short range (``low`` to ``ui_high``, or ``high``) become sliders; over a
    long one (more than :data:`LADDER_SPAN` values: lengths, overlaps) a slider over
    :func:`size_stops`, whose ``min``/``max`` are still the declared range (a value inside it
    set programmatically becomes a stop). Ranges in :data:`LINKS` follow their bound live
    (``overlap`` < ``target``, ``max`` >= ``target`` …). A parameter that may be None gets a
    checkbox that enables its slider when ticked (``value`` None otherwise).
    Floats become sliders with 100 steps, choices dropdowns, booleans checkboxes; list and
    callable parameters keep their values. Controls of :data:`SHOWN_WHEN` are hidden outside
    their mode. Every control's ``value`` is the parameter's value.
    """
    import ipywidgets as w

    classes = _widget_classes()
    spec = declared_params(strategy_name)
    values = dict(values or {})
    shown = [n for n, p in spec.items() if p.kind in ("int", "float", "choice", "bool")]
    width = max(80, 8 * max(map(len, shown), default=0) + 16)   # the longest name fits
    style = {"description_width": f"{width}px"}
    out: dict[str, Any] = {}
    for name, p in spec.items():
        v = values.get(name, p.default)
        common = dict(description=name, tooltip=p.doc, style=style, layout=w.Layout(width=f"{width + 320}px"))
        if p.none_ok and p.kind in ("int", "float"):   # OptionalControl shows the name and a checkbox
            common.update(description="", layout=w.Layout(width="292px"))
        if p.kind == "int":
            lo = int(p.low) if p.low is not None else 0
            hi = int(p.high) if p.high is not None else 2**31 - 1
            ui_hi = int(min(x for x in (p.high, p.ui_high, 10_000) if x is not None))
            start = v if v is not None else min(max(lo, 500), ui_hi)
            if ui_hi - lo > LADDER_SPAN:
                wd = classes["LadderSlider"](start, size_stops(lo, ui_hi), lo, hi, continuous_update=False, **common)
            else:
                wd = classes["BoundedIntSlider"](start, lo, hi, ui_hi, continuous_update=False, **common)
            wd._declared = (lo, hi)
        elif p.kind == "float":
            lo, hi = float(p.low if p.low is not None else 0.0), float(p.high if p.high is not None else p.ui_high or 1.0)
            wd = w.FloatSlider(value=v if v is not None else lo, min=lo, max=hi, step=(hi - lo) / 100 or 0.01,
                               continuous_update=False, **common)
            wd._declared = (lo, hi)
        elif p.kind == "choice":
            out[name] = w.Dropdown(options=list(p.choices), value=v, **common)
            continue
        elif p.kind == "bool":
            # indented by the name column (the box lines up with the sliders), label after the box,
            # automatic width: the label is never cut off
            out[name] = w.Checkbox(value=bool(v), description=name, tooltip=p.doc, indent=True, style=style,
                                   layout=w.Layout(width="auto"))
            continue
        else:
            continue
        if p.none_ok:
            wd = classes["OptionalControl"](wd, name, v, NONE_MEANS.get(name, "不设（None）"), width, tooltip=p.doc)
        out[name] = wd
    _link(out)
    _show_when(strategy_name, out)
    return out
