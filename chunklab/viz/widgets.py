"""ipywidgets explorers with a static fallback.

Each explorer is an object that displays as a live widget in JupyterLab and,
in the static site, as real HTML computed at build time: the result for the
default setting plus a few precomputed settings that can be switched with
plain HTML/CSS (radio tabs, no JavaScript, nothing fetched). Both come from
one ``_repr_mimebundle_``; JupyterLab shows the widget, the site's build
(``CHUNKLAB_STATIC_SITE=1``) gets only the HTML, so pages carry no widget state
for explorers.

Updates run when a slider is released (``continuous_update=False``) and are
debounced; an exception inside an update is shown in the explorer's own
output area as one Chinese line (:func:`~chunklab.viz.controls.error_zh`; the
original message is the line's tooltip), never lost to the kernel log. The
controls fit their parameters (:mod:`chunklab.viz.controls`), and one update of
:class:`StrategyExplorer` draws at most ``max_chunks`` chunks.
"""
from __future__ import annotations

import bisect
import html
import inspect
import itertools
import os
import threading
import time
from typing import Any, Callable, Mapping, Sequence

from ..base import get_strategy, list_strategies
from ..core import Document
from ..evaluation import EvalSettings, evaluate
from ..params import Param
from ..retrieval import CorpusIndex
from .labels import METRIC_ZH, SYMPTOM_ZH, strategy_label
from .chunks import chunk_stats, show_chunks
from .controls import (LINKS, SHOWN_WHEN, SIZE_STOPS, accept_value, declared_params, error_zh, param_widgets,
                       size_stops)
from .plots import metric_heatmap

__all__ = ["Explorer", "StrategyExplorer", "EvaluationExplorer", "MatrixExplorer", "param_widgets", "static_tabs",
           "Debouncer", "SYMPTOM_ZH", "error_zh", "size_stops", "SIZE_STOPS", "LINKS", "SHOWN_WHEN", "MAX_CHUNKS"]

_uid = itertools.count()
#: At most this many chunks are drawn by one update of a :class:`StrategyExplorer` (default).
MAX_CHUNKS = 200


#: Shares that use much of 0-1 (hit, MRR, recall...): their heatmaps use a fixed 0-1 colour scale.
#: Chroma's precision and IoU (around 0.01) and the cost measures scale to the data instead.
SHARE_METRICS = frozenset({"hit", "hit_strict", "mrr", "recall", "complete_single", "complete_union", "cite_at_1"})


def static_site() -> bool:
    """True while the book's static site is being built (``CHUNKLAB_STATIC_SITE=1``)."""
    return os.environ.get("CHUNKLAB_STATIC_SITE", "") not in ("", "0")

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
    note = f'<p style="font-size:12px;color:#555;font-family:sans-serif">提示：{hint}</p>' if hint else ""
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

    def cancel(self) -> bool:
        """Drop a pending call; True if there was one."""
        with self._lock:
            pending = self._timer is not None
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        return pending

    def flush(self) -> None:
        """Run a pending call now (used by tests and by ``Explorer.update``)."""
        if self.cancel():
            self.fn()


class Explorer:
    """Base: a live widget and a static HTML fallback from one object."""

    def __init__(self) -> None:
        # Widgets are created only when the explorer is shown live (see ``widget``): a widget
        # created in the kernel is saved in the notebook's widget state even if never shown.
        self.error: str | None = None      # the exception as raised ("ParamError: overlap must be ...")
        self.error_zh: str | None = None   # the line the reader sees (:func:`error_zh`)
        self.last_ms: float = 0.0
        self._notes: list[str] = []        # one-off Chinese notes shown above the next output
        self._debounce = Debouncer(self.update)

    # subclasses: controls(), render() -> html, static_panels() -> [(label, html)]
    def controls(self) -> list:  # pragma: no cover - abstract
        raise NotImplementedError

    def render(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def static_panels(self) -> list[tuple[str, str]]:
        return [("默认设置", self.render())]

    def _error_html(self, exc: BaseException) -> str:
        """The error as one Chinese line, no traceback; the original message is its tooltip."""
        self.error = f"{type(exc).__name__}: {exc}"
        self.error_zh = error_zh(exc)
        return (f'<div class="cl-error" style="color:#b91c1c;font-family:sans-serif;font-size:13px" '
                f'title="{html.escape(self.error)}">⚠ {html.escape(self.error_zh)}</div>')

    def _show(self, content: str, t0: float) -> None:
        notes = "".join(f'<div class="cl-note" style="color:#92400e;font-family:sans-serif;font-size:13px">'
                        f'{html.escape(n)}</div>' for n in self._notes)
        self._notes = []
        self.last_ms = (time.perf_counter() - t0) * 1000
        # Setting the outputs directly works with or without a running kernel (tests, scripts).
        self.out.outputs = ({"output_type": "display_data", "metadata": {},
                             "data": {"text/html": notes + content, "text/plain": "chunklab explorer output"}},)
        self.status.value = f'<span style="font-size:12px;color:#666">更新用时 {self.last_ms:.0f} ms</span>'

    def update(self, *_: Any) -> None:
        """Recompute and redraw; an exception is shown in the output area as one Chinese line."""
        t0 = time.perf_counter()
        try:
            content = self.render()
            self.error = self.error_zh = None
        except Exception as exc:  # noqa: BLE001 - shown to the reader, not swallowed
            content = self._error_html(exc)
        self._show(content, t0)

    def show_error(self, exc: BaseException) -> None:
        """Show ``exc`` in the output area (as :meth:`update` does) without recomputing."""
        self._show(self._error_html(exc), time.perf_counter())

    @property
    def widget(self):
        import ipywidgets as w

        if not hasattr(self, "_box"):
            self.out, self.status = w.Output(), w.HTML()
            self._box = w.VBox([*self.controls(), self.status, self.out])
            self.update()
        return self._box

    def _repr_mimebundle_(self, include=None, exclude=None):
        # Building the static site (the Makefile sets CHUNKLAB_STATIC_SITE=1): the page shows the
        # precomputed panels, so no live widget is created and no widget state is embedded.
        bundle = {} if static_site() else dict(self.widget._repr_mimebundle_(include=include, exclude=exclude) or {})
        bundle["text/html"] = static_tabs(self.static_panels())
        bundle["text/plain"] = repr(self)
        return bundle


class _StrategyControlsMixin:
    """Strategy dropdown plus registry-driven parameter widgets (shared by the explorers)."""

    def _strategy_controls(self) -> list:
        import ipywidgets as w

        self.strat_w = w.Dropdown(options=self.strategy_names, value=self.strategy, description="策略",
                                  layout=w.Layout(width="360px"))
        self.param_box = w.VBox()
        self._build_params()
        self.strat_w.observe(self._on_strategy, names="value")
        return [self.strat_w, self.param_box]

    def _build_params(self) -> None:
        self.param_spec = declared_params(self.strategy)
        self.param_ws = param_widgets(self.strategy, self.params)
        for name, wd in self.param_ws.items():
            wd.observe(lambda change, name=name: self._on_param(name, change), names="value")
        self.param_box.children = list(self.param_ws.values())

    def _on_strategy(self, change) -> None:
        self.strategy = change["new"]
        self.params = {}
        self._build_params()
        self._debounce()

    def _on_param(self, name: str, change) -> None:
        self.params[name] = change["new"]
        self._debounce()

    def _set(self, values: Mapping[str, Any], own: Mapping[str, Any]) -> None:
        """Set controls as a reader would, then update now. ``own``: the explorer's other
        controls by key. A parameter value its control cannot take (outside the range the
        control allows now, e.g. ``overlap`` >= ``target``) is refused: nothing changes and
        the explorer shows why, in Chinese."""
        values = dict(values)
        if "strategy" in values:           # first: the parameters below belong to it
            self.strat_w.value = values.pop("strategy")
        refused: dict[str, Any] = {}
        for key, v in values.items():
            if key in own:
                own[key].value = v
            elif key in self.param_ws:
                if accept_value(self.param_ws[key], v):
                    self.params[key] = self.param_ws[key].value
                else:
                    refused[key] = v
            elif key in self.param_spec:   # no control (lists, callables): taken as given
                self.params[key] = v
            else:
                refused[key] = v
        self._debounce.cancel()
        if refused:
            try:
                get_strategy(self.strategy, **{**self.params, **refused})
            except Exception as exc:  # noqa: BLE001 - shown to the reader
                self.show_error(exc)
                return
            self.params.update(refused)
        self.update()


class StrategyExplorer(_StrategyControlsMixin, Explorer):
    """Pick a document and a strategy, turn its knobs, see where the cuts fall.

    ``documents`` maps a label to a :class:`Document`. ``presets`` lists
    ``(label, strategy, params)`` or ``(label, strategy, params, document label)``
    settings precomputed for the static site.
    ``stats`` (optional) maps ``(document, chunks)`` to extra figures shown
    beside the viewer, e.g. alignment and clause-cut rates.
    ``max_chunks`` caps the chunks one view draws (the rest are counted, not drawn):
    a tiny size on a long document would otherwise send megabytes to the browser.
    """

    def __init__(self, documents: Mapping[str, Document], strategy: str = "recursive",
                 params: Mapping[str, Any] | None = None, *, presets: Sequence[tuple[str, str, dict]] = (),
                 strategies: Sequence[str] | None = None, around: int | None = None, radius: int = 1200,
                 stats: Callable[[Document, list], Mapping[str, Any]] | None = None,
                 max_chunks: int = MAX_CHUNKS) -> None:
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
        self.max_chunks = Param("int", MAX_CHUNKS, low=1).validate("max_chunks", max_chunks)
        get_strategy(strategy, **self.params)  # fail early on a bad default

    def __repr__(self) -> str:
        return f"StrategyExplorer({self.doc_label!r}, {get_strategy(self.strategy, **self.params)!r})"

    def controls(self) -> list:
        import ipywidgets as w

        self.doc_w = w.Dropdown(options=list(self.documents), value=self.doc_label, description="文档",
                                layout=w.Layout(width="360px"))
        self.doc_w.observe(self._on_doc, names="value")
        strat_w, param_box = self._strategy_controls()
        return [w.HBox([self.doc_w, strat_w]), param_box]

    def _on_doc(self, change) -> None:
        self.doc_label = change["new"]
        self._debounce()

    def set(self, **params: Any) -> None:
        """Set parameters programmatically (as a reader would with the sliders) and update now.

        ``strategy`` and ``document`` pick those; a value a control cannot take is refused
        and the reason shown (see :meth:`_set`)."""
        self._set(params, {"document": self.doc_w})

    def chunks(self):
        doc = self.documents[self.doc_label]
        return doc, get_strategy(self.strategy, **self.params).split(doc)

    def render(self, strategy: str | None = None, params: Mapping[str, Any] | None = None,
               document: str | None = None) -> str:
        label = document or self.doc_label
        if label not in self.documents:
            raise ValueError(f"document must be one of {list(self.documents)}, got {label!r}")
        doc = self.documents[label]
        name = strategy or self.strategy
        s = get_strategy(name, **(self.params if params is None else params))
        chunks = s.split(doc)
        view = self._view_html(doc, chunks)
        extra = ""
        if self.stats_fn is not None:
            figures = self.stats_fn(doc, chunks)
            extra = " · ".join(f"{html.escape(str(k))} {v:.1%}" if isinstance(v, float) else
                               f"{html.escape(str(k))} {html.escape(str(v))}" for k, v in figures.items())
            extra = f'<div class="cl-stats">{extra}</div>'
        head = f'<div class="cl-stats"><b>{html.escape(repr(s))}</b> · 文档：{html.escape(label)}</div>'
        return head + extra + view

    def _view_html(self, doc: Document, chunks: Sequence) -> str:
        """The chunk viewer, drawing at most ``max_chunks`` chunks of its window."""
        text = doc.text
        mine = [c for c in chunks if c.doc_id == doc.id]
        lo, hi = 0, len(text)
        if len(text) > _VIEW_MAX_CHARS:   # show_chunks's window, computed the same way
            centre = self.around if self.around is not None else (mine[0].start if mine else 0)
            lo, hi = max(0, centre - self.radius), min(len(text), centre + self.radius)
        visible = sorted((c for c in mine if c.end > lo and c.start < hi), key=lambda c: (c.start, c.end))
        cap = self.max_chunks
        if len(visible) <= cap:
            return show_chunks(doc, chunks, around=self.around, radius=self.radius).html
        # Too many: draw ``cap`` consecutive chunks around the centre, over exactly their span.
        centre = self.around if self.around is not None else visible[0].start
        first = max(0, min(bisect.bisect_left([c.start for c in visible], centre) - cap // 2, len(visible) - cap))
        shown = visible[first:first + cap]
        a = max(lo, shown[0].start)
        b = min(hi, max(c.end for c in shown))
        if first + cap < len(visible) and visible[first + cap].start > a:
            b = min(b, visible[first + cap].start)
        if (b - a) % 2:   # show_chunks draws [around - radius, around + radius): one more character
            if b < len(text):
                b += 1
            else:
                a -= 1
        view = show_chunks(doc, shown, around=(a + b) // 2, radius=(b - a) // 2, max_chars=0, stats=False)
        st = chunk_stats(doc, mine)
        line = (f'<div class="cl-stats">{st["chunks"]} 块 · 平均 {st["mean_len"]:.0f} 字 · 最长 {st["max_len"]} 字 · '
                f'{st["overlapping_pairs"]} 对相邻块有重叠（平均 {st["mean_overlap"]:.0f} 字） · '
                f'{st["fell_back"]} 块来自回退 · 索引膨胀 {st["inflation"]:.2f}×</div>')
        hidden = len(visible) - len(shown)
        note = (f'<div class="cl-stats cl-cap" style="color:#92400e">视窗内有 {len(visible)} 块，一次最多画 {cap} 块：'
                f'这里只画出第 {shown[0].index}–{shown[-1].index} 块，另有 {hidden} 块未画出（它们的文字也省略了）。'
                f'调大块长即可看全。</div>')
        return line + note + view.html

    def static_panels(self) -> list[tuple[str, str]]:
        panels = [("默认设置", self.render())]
        for preset in self.presets:
            label, name, params, *document = preset  # an optional 4th item names the document
            panels.append((label, self.render(name, params, document[0] if document else None)))
        return panels


#: ``show_chunks`` windows documents longer than this (its ``max_chars`` default).
_VIEW_MAX_CHARS = inspect.signature(show_chunks).parameters["max_chars"].default


class EvaluationExplorer(_StrategyControlsMixin, Explorer):
    """Strategy and parameters → hit@k, recall@k, MRR, evidence completeness with 95% intervals,
    and the misses grouped by symptom, each openable to show question, gold span and retrieved chunks.

    The corpus is tokenised once (:class:`~chunklab.retrieval.CorpusIndex`), so an update costs
    one chunking, one index build and one search.

    The evaluation options are an :class:`~chunklab.evaluation.EvalSettings` (``settings``,
    default :data:`SETTINGS`: 500 bootstrap resamples), with single options (``k``,
    ``use_context``, ``n_boot`` …) given by keyword on top; the ``k`` slider and the context
    checkbox replace ``settings.k`` and ``settings.use_context``.
    """

    #: ``(metric, code name)``: each row reads "Chinese name code name" (:meth:`metric_label`),
    #: the Chinese name from :data:`chunklab.viz.labels.METRIC_ZH`, ``@k`` with the current k.
    METRICS = (("hit", "hit@k"), ("recall", "recall@k"), ("mrr", "MRR"), ("complete_single", "complete_single"))
    #: The explorer's default options (fewer bootstrap resamples than ``evaluate``: it redraws live).
    SETTINGS = EvalSettings(n_boot=500)

    def __init__(self, documents: Sequence[Document], questions: Sequence[Any], strategy: str = "recursive",
                 params: Mapping[str, Any] | None = None, *, settings: EvalSettings | None = None,
                 presets: Sequence[tuple[str, str, dict]] = (), strategies: Sequence[str] | None = None,
                 max_cases: int = 6, **options: Any) -> None:
        super().__init__()
        self.settings = EvalSettings.resolve(settings, options, default=self.SETTINGS)
        self.documents = list(documents)
        self.by_id = {d.id: d for d in self.documents}
        self.questions = list(questions)
        if not self.questions:
            raise ValueError("questions must hold at least one question")
        self.strategy, self.params = strategy, dict(params or {})
        self.presets = list(presets)
        self.strategy_names = list(strategies or [e["name"] for e in list_strategies()])
        self.max_cases = max_cases
        self.index = CorpusIndex(self.documents)
        self.result = None
        get_strategy(strategy, **self.params)

    def __repr__(self) -> str:
        return f"EvaluationExplorer({len(self.questions)} questions, {get_strategy(self.strategy, **self.params)!r}, k={self.k})"

    @property
    def k(self) -> int:
        """``settings.k`` (setting it replaces the settings)."""
        return self.settings.k

    @k.setter
    def k(self, value: int) -> None:
        self.settings = self.settings.replace(k=value)

    @property
    def use_context(self) -> bool:
        """``settings.use_context`` (setting it replaces the settings)."""
        return self.settings.use_context

    @use_context.setter
    def use_context(self, value: bool) -> None:
        self.settings = self.settings.replace(use_context=value)

    @property
    def n_boot(self) -> int:
        """``settings.n_boot``."""
        return self.settings.n_boot

    def metric_label(self, metric: str, code: str) -> str:
        """The row label, e.g. "命中率（hit@5）": the Chinese name, then the code name with the current k in
        brackets, as the glossary writes it (only once when the two are the same, "MRR").

        >>> ex = EvaluationExplorer.__new__(EvaluationExplorer); ex.settings = EvalSettings(k=5)
        >>> [ex.metric_label(m, c) for m, c in EvaluationExplorer.METRICS]
        ['命中率（hit@5）', '召回率（recall@5）', 'MRR', '证据完整率（complete_single）']
        """
        code = code.replace("@k", f"@{self.k}")
        zh = METRIC_ZH.get(metric, code)
        return zh if zh == code else f"{zh}（{code}）"

    def controls(self) -> list:
        import ipywidgets as w

        self.k_w = w.IntSlider(value=self.k, min=1, max=20, description="k", continuous_update=False,
                               tooltip="取回前 k 块", layout=w.Layout(width="360px"))
        # indent=False and an automatic width: the label is never cut off
        self.ctx_w = w.Checkbox(value=self.use_context, description="索引时带上 context（标题路径前缀）",
                                indent=False, layout=w.Layout(width="auto"))
        self.k_w.observe(lambda ch: (setattr(self, "k", ch["new"]), self._debounce()), names="value")
        self.ctx_w.observe(lambda ch: (setattr(self, "use_context", ch["new"]), self._debounce()), names="value")
        return [*self._strategy_controls(),
                w.HBox([self.k_w, self.ctx_w], layout=w.Layout(flex_flow="row wrap", align_items="center"))]

    def set(self, **values: Any) -> None:
        """Set ``strategy``, ``k``, ``use_context`` or parameters as a reader would, and update now."""
        self._set(values, {"k": self.k_w, "use_context": self.ctx_w})

    def evaluate(self, strategy: str | None = None, params: Mapping[str, Any] | None = None):
        name = strategy or self.strategy
        s = get_strategy(name, **(self.params if params is None else params))
        chunks = s.split_documents(self.documents)
        return s, chunks, evaluate(self.documents, chunks, self.questions, self.settings, index=self.index)

    def render(self, strategy: str | None = None, params: Mapping[str, Any] | None = None) -> str:
        s, chunks, r = self.evaluate(strategy, params)
        if strategy is None and params is None:
            self.result = r
        rows = "".join(
            f"<tr><td>{html.escape(self.metric_label(m, code))}</td>"
            f"<td style='text-align:right'><b>{r.aggregate[m]['mean']:.3f}</b></td>"
            f"<td style='color:#555'>[{r.aggregate[m]['lo']:.3f}, {r.aggregate[m]['hi']:.3f}]</td></tr>"
            for m, code in self.METRICS)
        table = (f"<table style='font-size:13px;border-collapse:collapse'><tr><th>指标</th><th>均值</th>"
                 f"<th>95% 置信区间</th></tr>{rows}</table>")
        st = r.structure
        head = (f'<div class="cl-stats"><b>{html.escape(strategy_label(s))}</b> · {len(self.questions)} 个问题 · '
                f'{st["chunks"]} 块 · 平均 {st.get("len_mean", 0):.0f} 字 · k={self.k}'
                f'{" · 带 context" if self.use_context else ""}</div>')
        return head + table + self._cases_html(r, chunks)

    def _cases_html(self, r, chunks) -> str:
        by_q = {str(getattr(q, "id", i)): q for i, q in enumerate(self.questions)}
        groups: dict[str, list] = {}
        for case in r.bad_cases:
            groups.setdefault(case["symptom"], []).append(case)
        order = {qid: i for i, qid in enumerate(r.question_ids)}
        parts = [f'<div class="cl-stats" style="margin-top:6px">未命中 {len(r.bad_cases)} 题，按症状：</div>']
        for sym, cases in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            items = []
            for case in cases[:self.max_cases]:
                q = by_q[case["question_id"]]
                items.append(self._case_html(q, r.ranked[order[case["question_id"]]][:self.k], chunks, case))
            more = f"<div style='color:#666'>……另有 {len(cases) - self.max_cases} 题</div>" if len(cases) > self.max_cases else ""
            parts.append(f"<details><summary>{html.escape(SYMPTOM_ZH.get(sym, sym))}：{len(cases)} 题</summary>"
                         f"{''.join(items)}{more}</details>")
        return "".join(parts)

    def _case_html(self, q, top, chunks, case) -> str:
        span = q.spans[0]
        doc = self.by_id[span.doc_id]
        gold = html.escape(doc.text[span.start:span.end])
        ret = []
        for rank, ci in enumerate(top, 1):
            if ci < 0:
                continue
            c = chunks[int(ci)]
            overl = c.doc_id == span.doc_id and c.start < span.end and span.start < c.end
            mark = " ⟵ 含证据片段" if overl else ""
            ret.append(f"<li><code>{html.escape(c.doc_id)} [{c.start}:{c.end}]</code>{mark}<br>"
                       f"<span style='color:#444'>{html.escape(c.text[:120])}{'…' if len(c.text) > 120 else ''}</span></li>")
        where = f"最好的完整包含块排第 {case['container_rank']}" if case.get("container_rank") else "没有块完整包含证据"
        return (f"<details style='margin-left:1em'><summary>{html.escape(q.question)}</summary>"
                f"<div style='font-size:13px'><b>证据</b>（{html.escape(span.doc_id)} [{span.start}:{span.end}]，{where}）："
                f"<div style='background:#dcfce7;padding:2px 4px'>{gold}</div><b>检索到的前 {len(top)} 块</b>："
                f"<ol>{''.join(ret)}</ol></div></details>")

    def static_panels(self) -> list[tuple[str, str]]:
        panels = [("默认设置", self.render())]
        for label, name, params in self.presets:
            panels.append((label, self.render(name, params)))
        return panels


class MatrixExplorer(Explorer):
    """Metric and axes pickers over a matrix result (rows of dicts) → heatmap and table.

    Row and column are always different axes: picking for one the other's axis swaps them
    (with a note saying so).
    """

    #: Row keys that are parameters (axes), never metrics, even though they are numbers.
    PARAM_KEYS = ("size", "target", "max", "min", "overlap", "window", "step", "k", "budget", "rows", "turns")

    def __init__(self, rows: Sequence[Mapping[str, Any]], *, metric: str = "hit", row: str = "strategy",
                 col: str | None = None, metrics: Sequence[str] | None = None, axes: Sequence[str] | None = None,
                 static_metrics: Sequence[str] = ()) -> None:
        super().__init__()
        self.rows = [dict(r) for r in rows]
        if not self.rows:
            raise ValueError("rows must hold at least one matrix result")
        first = self.rows[0]
        if axes is None:
            axes = [k for k, v in first.items()
                    if k in self.PARAM_KEYS or k in (row, col) or not isinstance(v, (int, float)) or isinstance(v, bool)]
        self.axes = [a for a in axes if a in first]
        numeric = [k for k, v in first.items() if isinstance(v, (int, float)) and not isinstance(v, bool)
                   and k not in self.axes and not k.endswith(("_lo", "_hi"))]
        self.metrics = list(metrics or numeric)
        if metric not in self.metrics:
            raise ValueError(f"metric must be one of {self.metrics}, got {metric!r}")
        if col is not None and col == row:
            raise ValueError(f"row and col must be different axes, both are {row!r}")
        self.metric, self.row = metric, row
        self.col = col or next((a for a in self.axes if a != row), None)
        if self.col is None:
            raise ValueError(f"need a second axis besides {row!r} for the columns (axes: {self.axes})")
        self.static_metrics = list(static_metrics)
        self._syncing = False

    def __repr__(self) -> str:
        return f"MatrixExplorer({len(self.rows)} configs, metric={self.metric!r})"

    @staticmethod
    def metric_label(metric: str) -> str:
        """The metric's Chinese name and code name ("命中率（hit）"), or the name alone if it has none.

        >>> MatrixExplorer.metric_label("hit"), MatrixExplorer.metric_label("mrr"), MatrixExplorer.metric_label("条款切断率")
        ('命中率（hit）', 'MRR', '条款切断率')
        """
        zh = METRIC_ZH.get(metric)
        if zh is None:
            return metric
        return zh if zh.lower() == metric.lower() else f"{zh}（{metric}）"

    def controls(self) -> list:
        import ipywidgets as w

        self.metric_w = w.Dropdown(options=[(self.metric_label(m), m) for m in self.metrics], value=self.metric,
                                   description="指标")
        self.row_w = w.Dropdown(options=self.axes, value=self.row, description="行")
        self.col_w = w.Dropdown(options=self.axes, value=self.col, description="列")
        self.metric_w.observe(lambda ch: (setattr(self, "metric", ch["new"]), self._debounce()), names="value")
        self.row_w.observe(lambda ch: self._on_axis("row", ch), names="value")
        self.col_w.observe(lambda ch: self._on_axis("col", ch), names="value")
        return [w.HBox([self.metric_w, self.row_w, self.col_w])]

    def _on_axis(self, which: str, change) -> None:
        if self._syncing:
            return
        new, old = change["new"], change["old"]
        other = "col" if which == "row" else "row"
        if new == getattr(self, other):   # keep row != col: the other one takes the old axis
            self._syncing = True
            try:
                getattr(self, f"{other}_w").value = old
            finally:
                self._syncing = False
            setattr(self, other, old)
            names = {"row": "行", "col": "列"}
            self._notes.append(f"行和列不能是同一个轴：{names[which]}改成了 {new}，{names[other]}换成了 {old}（行列互换）。")
        setattr(self, which, new)
        self._debounce()

    def set(self, **values: Any) -> None:
        """Set ``metric``, ``row`` or ``col`` as a reader would, and update now."""
        for key, v in values.items():
            {"metric": self.metric_w, "row": self.row_w, "col": self.col_w}[key].value = v
        self._debounce.cancel()
        self.update()

    def render(self, metric: str | None = None) -> str:
        import base64
        import io

        import matplotlib.pyplot as plt

        metric = metric or self.metric
        cells: dict[tuple, list[float]] = {}
        for r in self.rows:
            cells.setdefault((r.get(self.row), r.get(self.col)), []).append(r[metric])
        records = [{self.row: a, self.col: b, metric: max(v)} for (a, b), v in cells.items()]
        share = metric in SHARE_METRICS          # a share is drawn on 0-1, as chapter 6's heatmaps are
        fig = metric_heatmap(records, self.row, self.col, metric, scale=(0, 1) if share else None,
                             title=f"{metric}（同一格有多个配置时取最大值{'，色标固定 0–1' if share else ''}）")
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=110)
        plt.close(fig)
        img = base64.b64encode(buf.getvalue()).decode()
        top = sorted(self.rows, key=lambda r: -r[metric])[:10]
        trs = "".join(f"<tr><td>{html.escape(str(r.get('label', r.get('strategy'))))}</td>"
                      f"<td style='text-align:right'>{r[metric]:.4f}</td></tr>" for r in top)
        return (f'<img alt="{html.escape(metric)} 热力图" src="data:image/png;base64,{img}" style="max-width:100%">'
                f"<table style='font-size:13px'><tr><th>配置（前 10）</th><th>{html.escape(metric)}</th></tr>{trs}</table>")

    def static_panels(self) -> list[tuple[str, str]]:
        panels = [(self.metric, self.render())]
        for m in self.static_metrics:
            if m != self.metric:
                panels.append((m, self.render(m)))
        return panels
