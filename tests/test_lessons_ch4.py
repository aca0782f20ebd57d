"""Chapter 4's helpers (chunklab.book.lessons.ch4*): the properties its prose relies on.

Small inputs only: the billing module and one standard-library file, hand-made documents, single
PDF pages. The retrieval runs (several minutes with a cold embedding cache) are left to the chapter.
"""
from __future__ import annotations

import pytest

from chunklab.base import get_strategy
from chunklab.core import Chunk, Document
from chunklab.book.lessons import ch4_code, ch4_dialogue, ch4_pdf, ch4_tables
from chunklab.book.lessons.ch4 import corpora, sign_test


@pytest.fixture(scope="module")
def data():
    return corpora()


@pytest.fixture(scope="module")
def billing(data):
    return [d for d in data.xb_docs if d.meta.get("type") == "python"]


def test_function_spans_include_decorators_and_nested_functions():
    doc = Document("m", "import x\n\n@dec\ndef f(a):\n    def g():\n        return 1\n    return g\n")
    spans = {name: (a, b) for name, a, b in ch4_code.function_spans(doc)}
    assert doc.text[spans["f"][0]:spans["f"][1]].startswith("@dec\ndef f")
    assert doc.text[spans["g"][0]:spans["g"][1]] == "def g():\n        return 1"
    assert ch4_code.function_spans(Document("bad", "def (:\n")) == []


def test_code_keeps_billing_functions_whole_where_recursive_cuts(billing):
    cuts = ch4_code.function_cuts(billing, targets=(1500,))
    (target, fit, rec, code), = cuts["rows"]
    assert fit > 0 and code == 0 and cuts["holds"]
    assert 0 <= rec <= fit


def test_the_one_function_code_cuts_at_500_is_the_nested_convert(data):
    string = [d for d in data.std_docs if d.id == "string"]
    cuts = ch4_code.function_cuts(string, targets=(500,))
    assert [(doc, name) for doc, name, _, _ in cuts["cut_by_code"][500]] == [("string", "convert")]
    (_, _, length, (outer, outer_length)), = cuts["cut_by_code"][500]
    assert length <= 500 < outer_length and outer == "substitute"     # nested in a method cut further
    assert not cuts["holds"] and cuts["numbers"]["whole_check"] == "核对不符"
    assert "convert" in cuts["numbers"]["code_cut_example"]
    assert cuts["numbers"]["code_cut_outer"].startswith("substitute")


def test_long_function_parts_fit_the_cap_and_carry_the_signature(data):
    lf = ch4_code.long_function(data.xb["billing/refunds"], "evaluate_refund")
    assert lf["tokens"] > 800 and lf["n_parts"] > 1
    assert lf["max_part"] <= 800 and all(t <= 800 for _, t, _ in lf["rows"])
    assert lf["with_sig"] == lf["n_parts"]


def test_parse_failures_name_the_conflicted_file(data):
    pf = ch4_code.parse_failures(data.xb_docs, get_strategy("code", target=1500))
    assert list(pf["failed"]) == ["billing/legacy_sync"]
    n_chunks, level, error = pf["failed"]["billing/legacy_sync"]
    assert level == "recursive" and error.startswith("SyntaxError")


def test_call_neighbours_find_calls_defined_elsewhere(data, billing):
    rows = {r["symbol"]: dict(r["calls"]) for r in ch4_code.call_neighbours(data.xb["billing/refunds"], billing)}
    assert rows["evaluate_refund"]["money"] == "billing/pricing"
    assert rows["RefundPolicyEngine.evaluate"]["evaluate_refund"] == "billing/refunds"
    assert rows["audit"] == {}          # its own nested wrapper/inner are not neighbours


def test_sign_test():
    assert sign_test([1, 1, 1, 0], [0, 0, 0, 0]) == (3, 0, 0.25)
    assert sign_test([1, 0], [1, 0]) == (0, 0, 1.0)
    up, down, p = sign_test([1] * 5 + [0] * 5, [0] * 5 + [1] * 5)
    assert (up, down) == (5, 5) and p == 1.0


def test_dialogue_never_separates_a_question_from_its_reply(data):
    pc = ch4_dialogue.pair_check(data.xb["support_dialogues"])
    assert len(pc["pairs"]) > 0
    assert pc["separated"]["dialogue（4 轮一窗）"] == []
    assert len(pc["separated"]["recursive 500"]) > 0 and len(pc["separated"]["fixed 512"]) > 0


def test_figure_context_adds_the_caption_and_keeps_the_text():
    c = Chunk("d", 0, 0, 2, "甲乙", meta={"figures": [{"caption": "图 1 流程", "description": "节点 A"}]},
              context="标题")
    out, = ch4_pdf.figure_context([c])
    assert out.text == "甲乙" and (out.start, out.end) == (0, 2)
    assert out.context == "标题\n图：图 1 流程；描述：节点 A"
    plain = Chunk("d", 1, 2, 4, "丙丁")
    assert ch4_pdf.figure_context([plain]) == [plain]


def test_caption_in_context_brings_the_figure_chunk_to_the_top(data):
    demo = ch4_pdf.caption_demo(data.xb["billing/README"], caption="图 3 客服工作台「一键算退款」界面截图",
                                after="审计日志写入 logger", query="一键算退款的界面截图")
    assert demo["ranks"]["context + 正文"] == 1
    assert demo["ranks"]["只索引正文"] != 1
    assert "一键算退款" not in demo["holder"].text and "界面截图" in demo["holder"].context


def test_formula_cuts_are_all_repaired(data):
    f = ch4_pdf.formula_cuts(data.xb_docs)
    assert f["n"] > 0 and f["cuts"] > 0 and f["after"] == 0
    doc, at = f["example"]
    assert any(a < at < b for a, b, _ in ch4_pdf.find_formulas(doc.text))


def test_footnote_demo_reunites_the_crossing_sentence():
    demo = ch4_pdf.footnote_demo()
    assert demo["whole"] == {"脚注留在原处": False, "脚注移到正文之后": True}
    assert [n["page"] for n in demo["footnotes"]] == [1]


def test_pipeline_steps_and_reasons_read_in_chinese():
    doc = Document("d", "", meta={"preprocess": [
        {"step": "extract", "engine": "pdfplumber", "pages": 2, "tables": True, "ocr": False, "skipped_pages": []},
        {"step": "reading_order", "order": "columns", "columns": {1: 2}}]})
    lines = ch4_pdf.describe_steps(doc)
    assert lines[0].startswith("抽取文本层：") and "OCR 关" in lines[0]
    assert lines[1] == "恢复阅读顺序：按栏读；每页的栏数：第 1 页 2 栏"
    assert ch4_pdf.reason_zh("running footer: on 3 of 4 pages") == "重复的页脚：4 页里有 3 页出现"
    assert ch4_pdf.reason_zh("something new").startswith("（原文）")


def test_merged_cell_transcription_repeats_column_names():
    from chunklab.book.pdfgen import answer_key, external_pdf
    path = external_pdf("njurepo-example.pdf")
    if path is None:
        pytest.skip("the external report template is not on this machine (tools/system_deps.sh book)")
    m = ch4_pdf.merged_cells(path, answer_key()["njurepo-example.pdf"])
    ok, n = m["scores"]["fill"]
    assert ok == n and m["scores"]["empty"][0] < n
    assert m["rows"]["fill"]["repeated"] > 0 and m["rows"]["empty"]["repeated"] == 0


def test_exam_figure_enlarges_the_left_column_top():
    from chunklab.book.pdfgen import answer_key, external_pdf
    import matplotlib.pyplot as plt
    from chunklab.viz.fonts import use_cjk_font
    use_cjk_font()
    path = external_pdf("exam-zh-example-multiple.pdf")
    if path is None:
        pytest.skip("the external exam is not on this machine (tools/system_deps.sh book)")
    ek = answer_key()["exam-zh-example-multiple.pdf"]
    fig = ch4_pdf.exam_figure(path, ek["page"], [(14.0, 574.0), (652.0, 1141.0)], resolution=100)
    overview, detail = fig.axes
    # the detail shows about half the page's width at the figure's full width: twice the overview's scale
    (a0, a1), (z0, z1) = overview.images[0].get_extent()[:2], detail.images[0].get_extent()[:2]
    assert (a1 - a0) / (z1 - z0) > 2
    plt.close(fig)


def _r(diff, lo, hi, discordant=(0, 0)):
    return {"diff": diff, "lo": lo, "hi": hi, "significant": bool(lo > 0 or hi < 0), "metric": "hit",
            "discordant": discordant, "m": 6}


def test_prefix_note_reads_no_change_as_cannot_tell_not_as_the_same():
    from chunklab.book.claims import verdict
    zero, cancel = _r(0.0, -0.162, 0.162), _r(0.0, -0.184, 0.184, (1, 1))
    prefix = {("BM25", "小北"): zero, ("USE 向量检索", "小北"): cancel, ("e5 向量检索", "小北"): zero,
              ("BM25", "stdlib"): _r(0.09, -0.03, 0.24, (5, 0))}
    notes = ch4_code.prefix_xb_notes(prefix, 36)
    assert verdict(zero) != "等效"
    assert notes["pre_xb_lead"].endswith("三种检索器下加不加前缀，命中的题数都一样。")
    note = notes["pre_xb_zero_note"]
    assert note.startswith("BM25、e5 上一题都没有变") and "不等于“等效”" in note
    assert f"±{zero['hi']:.1%}" in note and "USE 上变好、变坏的各 1 道" in note
    # a retriever under which the count changed: no "all the same", no zero note for it
    changed = {**prefix, ("USE 向量检索", "小北"): _r(0.03, -0.1, 0.16, (2, 1))}
    notes = ch4_code.prefix_xb_notes(changed, 36)
    assert "都一样" not in notes["pre_xb_lead"] and "USE" not in notes["pre_xb_zero_note"]


def test_c6_lower_end_note_follows_the_interval():
    assert "恰好是 0" in ch4_tables.lo_note({"lo": 0.0, "hi": 0.15})
    assert ch4_tables.lo_note({"lo": -0.0265, "hi": 0.17}) == "区间含 0，不显著。"
    assert "排除了 0" in ch4_tables.lo_note({"lo": 0.01, "hi": 0.17})
    assert "0.0%" in ch4_tables.lo_note({"lo": -0.0003, "hi": 0.17})


def test_table_exploration_sentences_follow_significance():
    keys = ("total", "step1", "step2", "whole", "whole_use")
    weak = ch4_tables.exploration_notes({k: _r(0.13, -0.02, 0.30) for k in keys})
    strong = ch4_tables.exploration_notes({k: _r(0.13, 0.02, 0.30) for k in keys})
    # not significant: no plain "leads / contradicts", the verdict word is in the sentence
    assert "不显著" in weak["t_whole_head"] and "推翻不了" in weak["t_whole_head"]
    assert "方向一致但不显著" in weak["t_whole_takeaway"] and "不足以推翻" in weak["t_whole_takeaway"]
    assert "不足以确定" in weak["t_total_head"] and "方向一致但不显著" in weak["t_total_short"]
    assert weak["t_steps_note"].startswith("两步各自都没有排除 0")
    assert strong["t_whole_head"] == "按行切在检索上领先整表，和文章 000 的“绝不按行切”不一致。"
    assert "成立" in strong["t_whole_takeaway"] and "不显著" not in strong["t_whole_half"]
    assert strong["t_steps_note"].startswith("两步各自都排除了 0")
    opposite = ch4_tables.exploration_notes({**{k: _r(0.13, -0.02, 0.30) for k in keys},
                                             "whole_use": _r(-0.05, -0.2, 0.1)})
    assert opposite["t_whole_use_side"] == "方向相反" and weak["t_whole_use_side"] == "方向相同"
