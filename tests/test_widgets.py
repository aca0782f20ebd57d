"""Drive the explorers by setting widget values, as a reader would."""
from __future__ import annotations

import pytest

pytest.importorskip("ipywidgets")

from chunklab import Document  # noqa: E402
from chunklab.viz.widgets import (Debouncer, EvaluationExplorer, MatrixExplorer, StrategyExplorer,  # noqa: E402
                              param_widgets, static_tabs)

DOC = Document("h", "### 3.1 年假\n员工累计工作满一年不满十年的，年休假五天。\n\n### 3.2 病假\n病假期间按基本工资的百分之六十发放。")


def _html(explorer):
    return "".join(o.get("data", {}).get("text/html", "") for o in explorer.out.outputs)


def test_param_widgets_follow_the_registry():
    ws = param_widgets("recursive")
    assert ws["target"].min == 1 and ws["target"].value == 500
    assert ws["length"].options == ("chars", "tokens")
    assert ws["max"].disabled  # None: derived from target


def test_strategy_explorer_updates_when_sliders_move():
    ex = StrategyExplorer({"手册": DOC}, "recursive", {"target": 200})
    ex.widget  # builds controls and renders once
    first = _html(ex)
    assert "1 块" in first
    ex.set(target=20)
    second = _html(ex)
    assert second != first and "块" in second and "1 块" not in second
    ex.set(strategy="fixed")
    assert "Fixed()" in _html(ex)


def test_errors_are_shown_in_the_explorer():
    ex = StrategyExplorer({"手册": DOC}, "recursive", {"target": 50})
    ex.widget
    ex.set(overlap=50)  # overlap must be < target
    assert ex.error and "overlap" in ex.error
    assert "overlap must be" in _html(ex)
    ex.set(overlap=0)
    assert ex.error is None


def test_static_view_has_presets_and_the_live_hint():
    ex = StrategyExplorer({"手册": DOC}, "recursive", {"target": 200},
                          presets=[("固定 20 字", "fixed", {"size": 20})])
    bundle = ex._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    static = bundle["text/html"]
    assert "默认设置" in static and "固定 20 字" in static and "make lab" in static
    assert "<script" not in static


def test_static_tabs_are_pure_css():
    out = static_tabs([("A", "<p>a</p>"), ("B", "<p>b</p>")])
    assert out.count('type="radio"') == 2 and "checked" in out and "<script" not in out


def test_debouncer_coalesces_bursts():
    calls = []
    d = Debouncer(lambda: calls.append(1), wait=10)
    for _ in range(5):
        d()
    d.flush()
    assert calls == [1]


def test_evaluation_explorer_reacts_and_opens_bad_cases():
    from chunklab.datasets import load_corpus
    from chunklab.datasets.questions import load_questions

    corpus = load_corpus("xiaobei")
    qs = load_questions("xiaobei", corpus)[:60]
    docs = [corpus.by_id[d] for d in sorted({q.spans[0].doc_id for q in qs})]
    ex = EvaluationExplorer(docs, qs, "fixed", {"size": 512}, k=5,
                            presets=[("递归 300", "recursive", {"target": 300})])
    ex.widget
    first = _html(ex)
    assert "hit@5" in first and "95% 置信区间" in first
    first_hit = ex.result.aggregate["hit"]["mean"]
    ex.set(k=1)
    assert "hit@1" in _html(ex)
    assert ex.result.aggregate["hit"]["mean"] <= first_hit
    ex.set(strategy="markdown")
    assert "Markdown" in _html(ex) or "markdown" in _html(ex).lower()
    html_out = _html(ex)
    if ex.result.bad_cases:
        assert "<details>" in html_out and "证据" in html_out
    static = ex._repr_mimebundle_()["text/html"]
    assert "递归 300" in static


def test_matrix_explorer_switches_metric_and_axes():
    rows = [{"strategy": s, "size": n, "overlap": o, "label": f"{s}-{n}-{o}", "hit": h, "mrr": h / 2}
            for s, n, o, h in [("fixed", 512, 0, 0.5), ("fixed", 1024, 0, 0.6),
                               ("recursive", 512, 0, 0.7), ("recursive", 1024, 0.1, 0.65)]]
    ex = MatrixExplorer(rows, metric="hit", row="strategy", col="size", static_metrics=["mrr"])
    ex.widget
    a = _html(ex)
    assert "data:image/png;base64" in a and "recursive-512-0" in a
    ex.set(metric="mrr")
    b = _html(ex)
    assert b != a and "mrr" in b
    with pytest.raises(ValueError, match="metric must be one of"):
        MatrixExplorer(rows, metric="nope")


def test_strategy_presets_may_name_their_document():
    other = Document("law", "第一条　为了规范合同行为，制定本法。\n\n第二条　本法适用于合同。")
    ex = StrategyExplorer({"手册": DOC, "法律": other}, "recursive", {"target": 200},
                          presets=[("法律·条款", "clause", {"target": 50, "max": 100, "min": 0}, "法律")])
    static = ex._repr_mimebundle_()["text/html"]
    assert "文档：法律" in static and "文档：手册" in static
    with pytest.raises(ValueError, match="document must be one of"):
        ex.render("fixed", {}, "nope")


def test_static_site_build_embeds_no_widget(monkeypatch):
    ex = StrategyExplorer({"手册": DOC}, "recursive", {"target": 200})
    monkeypatch.setenv("CHUNKLAB_STATIC_SITE", "1")
    bundle = ex._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" not in bundle
    assert "默认设置" in bundle["text/html"]
    assert not hasattr(ex, "_box") and not hasattr(ex, "out")  # no widget was created


def test_evaluation_explorer_holds_one_settings_object():
    from chunklab.core import Document
    from chunklab.evaluation import EvalSettings
    from chunklab.params import ParamError

    Q = __import__("collections").namedtuple("Q", "id question spans")
    doc = Document("d", "合同的订立。合同的效力。违约责任。")
    qs = [Q("q1", "合同效力", [("d", 6, 11)])]
    ex = EvaluationExplorer([doc], qs, "sentence", {"target": 6}, k=2)
    assert ex.settings == EvalSettings(k=2, n_boot=500) and (ex.k, ex.use_context, ex.n_boot) == (2, False, 500)
    ex.k = 1
    ex.use_context = True
    assert ex.settings == EvalSettings(k=1, n_boot=500, use_context=True)
    _, _, r = ex.evaluate()
    assert r.settings == ex.settings and r.k == 1
    given = EvalSettings(k=3, n_boot=100, seed=2)
    assert EvaluationExplorer([doc], qs, "sentence", {"target": 6}, settings=given).settings is given
    with pytest.raises(ParamError, match="k must be an int >= 1, got 0"):
        EvaluationExplorer([doc], qs, "sentence", {"target": 6}, k=0)
    with pytest.raises(TypeError, match=r"unknown evaluation option 'nboot' \(did you mean 'n_boot'\?\)"):
        EvaluationExplorer([doc], qs, "sentence", {"target": 6}, nboot=10)


# -- issue #19: ranges, bounds, optional caps, modes, errors, caps on output ------------------------

LONG = Document("long", ("第一条　为了规范合同行为，保护当事人的合法权益，制定本法。\n" * 120)[:3500])


def _visible_text(markup):
    """What a reader sees: tags (and their attributes, e.g. tooltips) removed, entities decoded."""
    import html
    import re

    return html.unescape(re.sub(r"<[^>]+>", "", markup))


def test_size_sliders_move_over_sensible_stops_within_the_declared_range():
    from chunklab.viz.widgets import SIZE_STOPS

    ws = param_widgets("fixed")
    size = ws["size"]
    assert size.min == 1 and size.max == 1_000_000  # the declared range: anything in it may be set
    assert size.value == 512 and size.continuous_update is False
    assert size.options[0] == 32 and size.options[-1] == 4096  # ui_high; no drag reaches 1
    assert set(size.options) <= set(SIZE_STOPS) and len(size.options) <= 16
    assert param_widgets("token")["size"].options[-1] == 2048
    assert param_widgets("parent_child")["parent_target"].options[-1] == 8192
    assert param_widgets("recursive")["overlap"].options[0] == 0
    # a value in range set programmatically becomes one more stop
    assert size.accept(20) and size.value == 20 and 20 in size.options
    assert not size.accept(0) and not size.accept(2.5) and size.value == 20
    # short ranges stay plain sliders over their ui range
    rows = param_widgets("table")["rows"]
    assert (rows.min, rows.max, rows.value) == (1, 50, 10)


def test_overlap_and_the_other_linked_ranges_follow_their_bound_live():
    ws = param_widgets("recursive")
    target, overlap, mn = ws["target"], ws["overlap"], ws["min"]
    assert overlap.max == 499 and mn.max == 500
    overlap.value = 256
    events = []
    overlap.observe(lambda ch: events.append((ch["old"], ch["new"])), names="value")
    target.value = 128
    assert overlap.max == 127 and max(overlap.options) <= 127 and overlap.value <= 127
    assert mn.max == 128 and ws["max"].inner.min == 128
    assert events == [(256, overlap.value)]  # one change, no transient jump to the first stop
    target.value = 1024
    assert overlap.max == 1023 and overlap.value == events[-1][1] and len(events) == 1
    assert not overlap.accept(1024) and overlap.accept(1000) and overlap.value == 1000

    fixed = param_widgets("fixed")
    fixed["size"].value = 64
    assert fixed["overlap"].max == 63
    window = param_widgets("sliding_window")
    window["window"].value = 128
    assert window["step"].max == 128 and window["step"].value == 128  # step <= window
    dialogue = param_widgets("dialogue")
    dialogue["turns"].value = 3
    assert dialogue["overlap_turns"].max == 2


def test_the_explorer_keeps_overlap_below_target_and_says_why_in_one_chinese_line():
    ex = StrategyExplorer({"手册": DOC}, "recursive", {"target": 50})
    ex.widget
    assert ex.param_ws["overlap"].max == 49
    ex.set(overlap=50)
    assert ex.params.get("overlap", 0) == 0  # refused: the control and the parameters keep 0
    assert ex.error_zh == "参数 overlap 的值 50 超出允许范围：应为 [0, target) 内的整数，即 [0, 49]"
    shown = _visible_text(_html(ex))
    assert shown == "⚠ " + ex.error_zh  # one line: no traceback, no English
    assert "Traceback" not in _html(ex) and "\n" not in shown
    ex.set(target=64)
    assert ex.param_ws["overlap"].max == 63 and ex.error is None
    ex.set(overlap=32)
    assert ex.params["overlap"] == 32 and "overlap=32" in _visible_text(_html(ex))


def test_errors_are_translated_parameter_value_and_range():
    from chunklab.params import ParamError
    from chunklab.viz.widgets import error_zh

    assert error_zh(TypeError("target must be an int in [1, 100000], got 'a'")) == \
        "参数 target 的值 'a' 超出允许范围：应为 [1, 100000] 内的整数"
    assert error_zh(ParamError("lines must be an int in [1, 100000] or None, got 0")) == \
        "参数 lines 的值 0 超出允许范围：应为 [1, 100000] 内的整数，或不设（None）"
    assert error_zh(ParamError("k must be an int >= 1, got 0")) == "参数 k 的值 0 超出允许范围：应为不小于 1 的整数"
    assert error_zh(ParamError("unknown parameter 'targt' for strategy 'recursive'; did you mean 'target'? "
                               "(allowed: max, target)")) == "策略 recursive 没有参数 targt（是不是 target？）"
    ex = StrategyExplorer({"手册": DOC}, "recursive", {"target": 200})
    ex.widget
    ex.set(length="pages")
    assert _visible_text(_html(ex)) == "⚠ 参数 length 的值 'pages' 超出允许范围：应为以下之一：'chars'、'tokens'"


def test_an_optional_cap_has_a_checkbox_that_enables_its_slider():
    ws = param_widgets("recursive")
    mx = ws["max"]
    assert mx.value is None and mx.disabled and not mx.check.value and ">max<" in mx.name.value
    assert mx.inner.layout.display == "none" and mx.note.layout.display != "none"  # no misleading number
    assert "等于 target" in mx.note.value
    mx.check.value = True
    assert mx.value == 500 == ws["target"].value  # ticking starts at the cap None stood for
    assert not mx.disabled and not mx.inner.disabled and mx.inner.layout.display != "none"
    mx.inner.value = 768
    assert mx.value == 768
    ws["target"].value = 1024  # max >= target, live
    assert mx.value == 1024 and mx.inner.min == 1024
    mx.check.value = False
    assert mx.value is None and mx.disabled

    ex = StrategyExplorer({"手册": DOC}, "recursive", {"target": 20})
    ex.widget
    ex.set(max=40)
    assert ex.params["max"] == 40 and ex.param_ws["max"].check.value and "max=40" in _html(ex)
    ex.set(max=10)  # below target: refused
    assert ex.params["max"] == 40 and "应不小于 target（20）" in ex.error_zh
    ex.param_ws["max"].check.value = False  # the reader unticks the box
    ex._debounce.flush()
    assert ex.params["max"] is None and ex.error is None and "max=" not in _html(ex).split("</b>")[0]


def test_only_the_selected_modes_controls_are_shown():
    ws = param_widgets("semantic")
    shown = lambda: {n for n in ("k", "percentile", "value") if ws[n].layout.display != "none"}  # noqa: E731
    assert ws["threshold"].value == "std" and shown() == {"k"}
    for mode, param in (("percentile", "percentile"), ("absolute", "value"), ("std", "k")):
        ws["threshold"].value = mode
        assert shown() == {param}
    table = param_widgets("table")
    assert table["rows"].layout.display == "none"
    table["mode"].value = "rows"
    assert table["rows"].layout.display != "none"
    dialogue = param_widgets("dialogue")
    assert dialogue["threshold"].layout.display == "none"
    dialogue["topic_breaks"].value = True
    assert dialogue["threshold"].layout.display != "none"

    ex = StrategyExplorer({"手册": DOC}, "recursive", {"target": 200})
    ex.widget
    ex.set(strategy="semantic", threshold="absolute", value=0.2)
    assert ex.param_ws["k"].layout.display == "none" and ex.param_ws["value"].layout.display != "none"
    assert ex.error is None and "threshold='absolute'" in _visible_text(_html(ex))


def test_one_update_draws_at_most_max_chunks_and_says_how_many_it_left_out():
    import re

    from chunklab.viz.chunks import show_chunks
    from chunklab.viz.widgets import MAX_CHUNKS

    ex = StrategyExplorer({"长文": LONG}, "fixed", {"size": 512})
    ex.widget
    ex.set(size=1)  # what a 60 px drag used to do
    out = _html(ex)
    total = len(ex.chunks()[1])
    assert total > 3000
    assert out.count('class="cl-b') == MAX_CHUNKS  # chunk markers drawn
    assert f"{total} 块 · 平均 1 字" in out  # the stats still count every chunk
    assert f"另有 {total - MAX_CHUNKS} 块未画出" in out
    assert len(out) < 60_000  # was 548 KB
    small = StrategyExplorer({"长文": LONG}, "fixed", {"size": 64}, max_chunks=10)
    small.widget
    assert _html(small).count('class="cl-b') == 10 and "一次最多画 10 块" in _html(small)
    # centred on ``around`` in a long document
    long = Document("L", "字" * 50_000)
    ex = StrategyExplorer({"L": long}, "fixed", {"size": 5}, around=20_000, radius=1500)
    ex.widget
    markers = [int(i) for i in re.findall(r'class="cl-b"[^>]*>(\d+)<', _html(ex))]
    assert len(markers) == MAX_CHUNKS and markers[0] <= 4000 <= markers[-1]
    # under the cap the view is exactly the chunk viewer's (the static panels are unchanged)
    ex = StrategyExplorer({"长文": LONG}, "fixed", {"size": 512})
    doc, chunks = ex.chunks()
    assert ex.render().endswith(show_chunks(doc, chunks, around=None, radius=1200).html)


def test_dragging_is_debounced_into_one_update():
    ex = StrategyExplorer({"手册": DOC}, "recursive", {"target": 200})
    ex.widget
    calls = []
    render = ex.render
    ex.render = lambda *a, **k: (calls.append(1), render(*a, **k))[1]
    ex._debounce.wait = 10
    for v in ex.param_ws["target"].options:  # a drag across the whole slider
        ex.param_ws["target"].value = v
    assert calls == []
    ex._debounce.flush()
    assert calls == [1] and ex.params["target"] == ex.param_ws["target"].options[-1]


def test_matrix_row_and_column_stay_different():
    rows = [{"strategy": s, "size": n, "overlap": o, "label": f"{s}-{n}-{o}", "hit": h, "mrr": h / 2}
            for s, n, o, h in [("fixed", 512, 0, 0.5), ("fixed", 1024, 0, 0.6),
                               ("recursive", 512, 0, 0.7), ("recursive", 1024, 0.1, 0.65)]]
    ex = MatrixExplorer(rows, metric="hit", row="strategy", col="size")
    ex.widget
    ex.set(row="size")  # the column's axis: row and column swap
    assert (ex.row, ex.col) == (ex.row_w.value, ex.col_w.value) == ("size", "strategy")
    assert "行和列不能是同一个轴" in _visible_text(_html(ex))
    ex.set(metric="mrr")
    assert "行和列不能是同一个轴" not in _html(ex)  # said once
    ex.set(col="size")
    assert (ex.row, ex.col) == ("strategy", "size")
    ex.set(col="overlap")
    assert (ex.row, ex.col) == ("strategy", "overlap")
    assert dict((v, k) for k, v in ex.metric_w.options) == {"hit": "命中率（hit）", "mrr": "MRR"}
    with pytest.raises(ValueError, match="row and col must be different"):
        MatrixExplorer(rows, row="size", col="size")


def test_evaluation_explorer_labels_are_chinese_and_whole():
    from chunklab.datasets.questions import GoldSpan, Question

    doc = Document("d", "合同的订立。合同的效力。违约责任。")
    qs = [Question("q1", "合同效力", ("合同的效力",), (GoldSpan("d", 6, 11),))]
    ex = EvaluationExplorer([doc], qs, "sentence", {"target": 6}, k=2)
    ex.widget
    shown = _visible_text(_html(ex))
    for label in ("命中率（hit@2）", "召回率（recall@2）", "MRR", "证据完整率（complete_single）"):
        assert label in shown
    ex.set(k=1)
    assert "命中率（hit@1）" in _visible_text(_html(ex))
    assert ex.ctx_w.description == "索引时带上 context（标题路径前缀）"
    assert ex.ctx_w.indent is False and ex.ctx_w.layout.width == "auto"  # the label is never cut off
    for name, wd in param_widgets("recursive").items():  # names fit their label width
        if hasattr(wd, "style") and getattr(wd.style, "description_width", ""):
            assert int(wd.style.description_width.rstrip("px")) >= 8 * len(name)
        if type(wd).__name__ == "Checkbox":
            assert wd.layout.width == "auto" and wd.description == name
