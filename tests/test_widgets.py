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
