"""ipywidgets explorers with a static fallback.

Each explorer is an object that displays as a live widget in JupyterLab and,
in the static site, as real HTML computed at build time: the result for the
default setting plus a few precomputed settings that can be switched with
plain HTML/CSS (radio tabs, no JavaScript, nothing fetched). Both come from
one ``_repr_mimebundle_``; the site's build prefers ``text/html`` (see
``nb_mime_priority_overrides`` in ``_config.yml``), JupyterLab the widget.

Updates run when a slider is released (``continuous_update=False``) and are
debounced; an exception inside an update is shown in the explorer's own
output area, never lost to the kernel log.
"""
from __future__ import annotations

import html
import itertools
import threading
import time
import traceback
from typing import Any, Callable, Mapping, Sequence

from .base import get_strategy, list_strategies
from .core import Document
from .viz import show_chunks

__all__ = ["Explorer", "StrategyExplorer", "param_widgets", "static_tabs", "Debouncer"]

_uid = itertools.count()

LIVE_HINT = "这是构建时预先计算的静态视图。在 JupyterLab 中运行本章（<code>make lab</code>），即可拖动滑块实时调整。"


def static_tabs(panels: Sequence[tuple[str, str]], hint: str = LIVE_HINT) -> str:
    """Switchable panels in pure HTML/CSS: ``[(label, html), ...]``; the first is shown by default."""
    gid = f"clt{next(_uid)}"
    css = [f"<style>.{gid} > input{{display:none}}",
           f".{gid} > label{{display:inline-block;padding:3px 10px;margin:0 4px 4px 0;border:1px solid #cbd5e1;"
           f"border-radius:14px;cursor:pointer;font-size:13px;font-family:sans-serif}}",
           f".{gid} > .clp{{display:none}}"]
    body = []
    for i, (label, content) in enumerate(panels):
        rid = f"{gid}r{i}"
        css.append(f"#{rid}:checked ~ .clp{i}{{display:block}} #{rid}:checked + label{{background:#1e3a8a;color:#fff}}")
        body.append(f'<input type="radio" name="{gid}" id="{rid}"{" checked" if i == 0 else ""}>'
                    f'<label for="{rid}">{html.escape(label)}</label>')
    for i, (_, content) in enumerate(panels):
        body.append(f'<div class="clp clp{i}">{content}</div>')
    css.append("</style>")
    note = f'<p style="font-size:12px;color:#555;font-family:sans-serif">💡 {hint}</p>' if hint else ""
    return "".join(css) + f'<div class="{gid}">' + "".join(body) + "</div>" + note


class Debouncer:
    """Call ``fn`` once, ``wait`` seconds after the last of a burst of triggers."""

    def __init__(self, fn: Callable[[], None], wait: float = 0.15) -> None:
        self.fn, self.wait = fn, wait
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()

    def __call__(self, *_: Any) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = threading.Timer(self.wait, self.fn)
            self._timer.daemon = True
            self._timer.start()

    def flush(self) -> None:
        """Run a pending call now (used by tests and by ``Explorer.update``)."""
        with self._lock:
            pending = self._timer is not None
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        if pending:
            self.fn()


def param_widgets(strategy_name: str, values: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Widgets for a strategy's parameters, built from the registry's declared ranges.

    Integers become sliders from ``low`` to ``ui_high`` (or ``high``), choices
    dropdowns, booleans checkboxes; list and callable parameters keep their
    defaults. A parameter that may be None gets the slider plus a checkbox.
    """
    import ipywidgets as w

    entry = next(e for e in list_strategies() if e["name"] == strategy_name)
    values = dict(values or {})
    out: dict[str, Any] = {}
    style = {"description_width": "80px"}
    layout = w.Layout(width="360px")
    for name, p in entry["params"].items():
        v = values.get(name, p["default"])
        if p["kind"] == "int":
            lo = int(p.get("low", 0))
            hi = int(min(p.get("high", 10_000), p.get("ui_high", p.get("high", 10_000))))
            hi = max(hi, lo + 1, v or 0)
            start = v if v is not None else min(max(lo, 500), hi)
            out[name] = w.IntSlider(value=start, min=lo, max=hi, description=name, continuous_update=False,
                                    style=style, layout=layout, disabled=v is None)
        elif p["kind"] == "float":
            lo, hi = float(p.get("low", 0.0)), float(p.get("high", p.get("ui_high", 1.0)))
            out[name] = w.FloatSlider(value=v, min=lo, max=hi, step=(hi - lo) / 100 or 0.01, description=name,
                                      continuous_update=False, style=style, layout=layout)
        elif p["kind"] == "choice":
            out[name] = w.Dropdown(options=list(p["choices"]), value=v, description=name, style=style, layout=layout)
        elif p["kind"] == "bool":
            out[name] = w.Checkbox(value=bool(v), description=name, style=style)
    return out


class Explorer:
    """Base: a live widget and a static HTML fallback from one object."""

    def __init__(self) -> None:
        import ipywidgets as w

        self.out = w.Output()
        self.status = w.HTML()
        self.error: str | None = None
        self.last_ms: float = 0.0
        self._debounce = Debouncer(self.update)

    # subclasses: controls(), render() -> html, static_panels() -> [(label, html)]
    def controls(self) -> list:  # pragma: no cover - abstract
        raise NotImplementedError

    def render(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def static_panels(self) -> list[tuple[str, str]]:
        return [("默认设置", self.render())]

    def update(self, *_: Any) -> None:
        """Recompute and redraw; an exception is shown in the output area."""
        t0 = time.perf_counter()
        try:
            content = self.render()
            self.error = None
        except Exception as exc:  # noqa: BLE001 - shown to the reader, not swallowed
            self.error = f"{type(exc).__name__}: {exc}"
            tb = traceback.format_exc(limit=3)
            content = (f'<div style="color:#b91c1c;font-family:monospace;white-space:pre-wrap">⚠ {html.escape(self.error)}'
                       f'\n\n{html.escape(tb)}</div>')
        self.last_ms = (time.perf_counter() - t0) * 1000
        # Setting the outputs directly works with or without a running kernel (tests, scripts).
        self.out.outputs = ({"output_type": "display_data", "metadata": {},
                             "data": {"text/html": content, "text/plain": "chunklab explorer output"}},)
        self.status.value = f'<span style="font-size:12px;color:#666">更新用时 {self.last_ms:.0f} ms</span>'

    @property
    def widget(self):
        import ipywidgets as w

        if not hasattr(self, "_box"):
            self._box = w.VBox([*self.controls(), self.status, self.out])
            self.update()
        return self._box

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = dict(self.widget._repr_mimebundle_(include=include, exclude=exclude) or {})
        bundle["text/html"] = static_tabs(self.static_panels())
        bundle["text/plain"] = repr(self)
        return bundle


class StrategyExplorer(Explorer):
    """Pick a document and a strategy, turn its knobs, see where the cuts fall.

    ``documents`` maps a label to a :class:`Document`. ``presets`` lists
    ``(label, strategy, params)`` settings precomputed for the static site.
    ``stats`` (optional) maps ``(document, chunks)`` to extra figures shown
    beside the viewer, e.g. alignment and clause-cut rates.
    """

    def __init__(self, documents: Mapping[str, Document], strategy: str = "recursive",
                 params: Mapping[str, Any] | None = None, *, presets: Sequence[tuple[str, str, dict]] = (),
                 strategies: Sequence[str] | None = None, around: int | None = None, radius: int = 1200,
                 stats: Callable[[Document, list], Mapping[str, Any]] | None = None) -> None:
        super().__init__()
        if not documents:
            raise ValueError("documents must map at least one label to a Document")
        self.documents = dict(documents)
        self.doc_label = next(iter(self.documents))
        self.strategy = strategy
        self.params = dict(params or {})
        self.presets = list(presets)
        self.strategy_names = list(strategies or [e["name"] for e in list_strategies()])
        self.around, self.radius = around, radius
        self.stats_fn = stats
        get_strategy(strategy, **self.params)  # fail early on a bad default

    def __repr__(self) -> str:
        return f"StrategyExplorer({self.doc_label!r}, {get_strategy(self.strategy, **self.params)!r})"

    def controls(self) -> list:
        import ipywidgets as w

        self.doc_w = w.Dropdown(options=list(self.documents), value=self.doc_label, description="文档",
                                layout=w.Layout(width="360px"))
        self.strat_w = w.Dropdown(options=self.strategy_names, value=self.strategy, description="策略",
                                  layout=w.Layout(width="360px"))
        self.param_box = w.VBox()
        self._build_params()
        self.doc_w.observe(self._on_doc, names="value")
        self.strat_w.observe(self._on_strategy, names="value")
        return [w.HBox([self.doc_w, self.strat_w]), self.param_box]

    def _build_params(self) -> None:
        self.param_ws = param_widgets(self.strategy, self.params)
        for name, wd in self.param_ws.items():
            wd.observe(lambda change, name=name: self._on_param(name, change), names="value")
        self.param_box.children = list(self.param_ws.values())

    def _on_doc(self, change) -> None:
        self.doc_label = change["new"]
        self._debounce()

    def _on_strategy(self, change) -> None:
        self.strategy = change["new"]
        self.params = {}
        self._build_params()
        self._debounce()

    def _on_param(self, name: str, change) -> None:
        self.params[name] = change["new"]
        self._debounce()

    def set(self, **params: Any) -> None:
        """Set parameters programmatically (as a reader would with the sliders) and update now."""
        for k, v in params.items():
            if k == "strategy":
                self.strat_w.value = v
            elif k == "document":
                self.doc_w.value = v
            else:
                self.param_ws[k].value = v
        self._debounce.flush()

    def chunks(self):
        doc = self.documents[self.doc_label]
        return doc, get_strategy(self.strategy, **self.params).split(doc)

    def render(self, strategy: str | None = None, params: Mapping[str, Any] | None = None) -> str:
        doc = self.documents[self.doc_label]
        name = strategy or self.strategy
        s = get_strategy(name, **(self.params if params is None else params))
        chunks = s.split(doc)
        view = show_chunks(doc, chunks, around=self.around, radius=self.radius)
        extra = ""
        if self.stats_fn is not None:
            figures = self.stats_fn(doc, chunks)
            extra = " · ".join(f"{html.escape(str(k))} {v:.1%}" if isinstance(v, float) else
                               f"{html.escape(str(k))} {html.escape(str(v))}" for k, v in figures.items())
            extra = f'<div class="cl-stats">{extra}</div>'
        head = f'<div class="cl-stats"><b>{html.escape(repr(s))}</b> · 文档：{html.escape(self.doc_label)}</div>'
        return head + extra + view.html

    def static_panels(self) -> list[tuple[str, str]]:
        panels = [("默认设置", self.render())]
        for label, name, params in self.presets:
            panels.append((label, self.render(name, params)))
        return panels
