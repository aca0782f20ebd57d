"""The runnable self-check (``chunklab audit``): each item passes on a good chunking and fails on a bad one."""
from __future__ import annotations

import json

import pytest

from chunklab import Document
from chunklab.tools.audit import THRESHOLDS, AuditItem, audit, format_report
from chunklab.cli import main
from chunklab.datasets import Corpus
from chunklab.datasets.questions import parse_questions

HANDBOOK = ("# 员工手册\n\n## 年假\n\n员工累计工作满一年不满十年的，年休假五天；满十年不满二十年的，十天。\n\n"
            "## 病假\n\n病假需二级及以上医院开具证明，单次不超过三十天，病假期间按基本工资的百分之六十发放。\n\n"
            "## 住宿标准\n\n| 城市 | 总监及以下 | 总监以上 |\n|---|---|---|\n| 北京 | 600 元/晚 | 900 元/晚 |\n"
            "| 其他 | 400 元/晚 | 700 元/晚 |\n")
CODE = ('"""计费。"""\n\n\ndef price(amount, rate):\n    """含税价。"""\n    total = amount * (1 + rate)\n'
        '    return round(total, 2)\n\n\ndef refund(order):\n    """退款金额。"""\n    if order.paid:\n'
        '        return order.amount\n    return 0\n')
DOCS = [Document("handbook", HANDBOOK, title="员工手册"), Document("billing", CODE, title="billing.py")]
CORPUS = Corpus("audit-test", DOCS)
GOOD = {"strategy": "auto", "params": {"target": 120, "max": 200}, "use_context": True, "transcribe_tables": True}
BAD = {"strategy": "fixed", "params": {"size": 40}}


def _questions(per_type: int = 20):
    evidence = {
        "条款": ("年假几天", "年休假五天"), "表格": ("北京住宿多少钱", "| 北京 | 600 元/晚 | 900 元/晚 |"),
        "代码": ("含税价怎么算", "total = amount * (1 + rate)"),
    }
    lines = []
    for t, (q, ev) in evidence.items():
        for i in range(per_type):
            lines.append(json.dumps({"id": f"{t}-{i}", "question": q, "evidence": ev, "type": t}, ensure_ascii=False))
    return parse_questions(lines, CORPUS)


def _by_name(items):
    assert all(isinstance(i, AuditItem) for i in items)
    return {i.name: i for i in items}


def test_good_configuration_passes_everything():
    items = _by_name(audit(CORPUS, GOOD, _questions(), max_ci_width=1.0))
    failed = {n: i.detail for n, i in items.items() if not i.passed}
    assert not failed, failed
    assert list(items) == ["content_type", "breadcrumb", "table_rows", "table_text", "code_symbols", "labeled_set",
                           "evidence_whole", "hit_ci", "parse_failures", "offsets", "token_limit", "overlap",
                           "reproducible"]
    assert all(i.title and i.detail for i in items.values())


def test_fixed_windows_fail_the_structural_items():
    items = _by_name(audit(DOCS, BAD, _questions(), max_ci_width=1.0))
    for name in ("content_type", "breadcrumb", "table_rows", "table_text", "code_symbols", "evidence_whole"):
        assert not items[name].passed, name
    assert "应为 markdown" in items["content_type"].detail
    assert "被切断" in items["table_rows"].detail and "被切断" in items["code_symbols"].detail
    for name in ("labeled_set", "offsets", "token_limit", "overlap", "reproducible", "parse_failures"):
        assert items[name].passed, (name, items[name].detail)


def test_breadcrumb_needs_the_context_indexed():
    item = _by_name(audit(DOCS, {**GOOD, "use_context": False}, _questions(), max_ci_width=1.0))["breadcrumb"]
    assert not item.passed and "use_context=False" in item.detail


def test_without_questions_the_question_items_fail():
    items = _by_name(audit(DOCS, GOOD))
    assert [n for n, i in items.items() if not i.passed] == ["labeled_set", "evidence_whole", "hit_ci"]


def test_labeled_set_thresholds():
    items = _by_name(audit(DOCS, GOOD, _questions(per_type=5), max_ci_width=1.0))
    assert not items["labeled_set"].passed
    assert "不足的类型" in items["labeled_set"].detail
    # 15 questions: the interval is not trusted, whatever its width
    assert not items["hit_ci"].passed and "区间不可信" in items["hit_ci"].detail


def test_overlap_tokens_and_parse_failures():
    items = _by_name(audit(DOCS, {"strategy": "fixed", "params": {"size": 40, "overlap": 20}}))
    assert not items["overlap"].passed
    items = _by_name(audit(DOCS, GOOD, token_limit=10))
    assert not items["token_limit"].passed and "超限" in items["token_limit"].detail
    broken = DOCS + [Document("scan", "", meta={"parse_failed": True})]
    items = _by_name(audit(broken, GOOD, max_parse_failures=0.1))
    assert not items["parse_failures"].passed and "scan" in items["parse_failures"].detail


def test_not_applicable_items_pass():
    items = _by_name(audit([Document("n", "通知：本周五停电检修，请提前保存文件。", title="公告")], GOOD))
    assert items["table_rows"].passed and "不适用" in items["table_rows"].detail
    assert items["code_symbols"].passed and "不适用" in items["code_symbols"].detail


def test_bad_arguments():
    with pytest.raises(ValueError, match="unknown threshold"):
        audit(DOCS, GOOD, max_overlapp=0.1)
    with pytest.raises(ValueError, match="no documents"):
        audit([], GOOD)
    assert set(THRESHOLDS) >= {"max_overlap", "min_per_type"}


def test_format_report():
    text = format_report([AuditItem("a", True, "好", "甲"), AuditItem("b", False, "坏", "乙")])
    assert text.splitlines()[0].startswith("PASS  甲 [a]") and "FAIL  乙 [b]" in text
    assert text.endswith("1/2 passed, 1 failed")


def test_cli_pass_fail_and_json(tmp_path, capsys):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "handbook.md").write_text(HANDBOOK, encoding="utf-8")
    (folder / "billing.py").write_text(CODE, encoding="utf-8")
    q = tmp_path / "q.jsonl"
    q.write_text("\n".join(json.dumps(x.to_json(), ensure_ascii=False) for x in _questions()), encoding="utf-8")
    cfg = tmp_path / "good.json"
    cfg.write_text(json.dumps(GOOD), encoding="utf-8")
    base = ["audit", "--corpus", str(folder), "--questions", str(q)]
    assert main(base + ["--strategy", "fixed", "--param", "size=40"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  表格不被切到行中间 [table_rows]" in out and "PASS  每块可回溯到原文 [offsets]" in out
    assert main(base + ["--config", str(cfg), "--json"]) in (0, 1)
    report = json.loads(capsys.readouterr().out)
    assert report["config"]["strategy"] == "auto" and len(report["index_version"]) == 16
    names = {i["name"]: i["passed"] for i in report["items"]}
    assert all(v for k, v in names.items() if k != "hit_ci")
    assert main(base + ["--strategy", "auto", "--context", "--transcribe-tables", "--param", "target=120",
                        "--param", "max=200"]) in (0, 1)
    assert "table_text" in capsys.readouterr().out


def test_cli_errors_exit_2(capsys):
    assert main(["audit", "--corpus", "no-such-corpus"]) == 2
    assert capsys.readouterr().err.startswith("error: ")
    assert main(["audit", "--corpus", "xiaobei", "--strategy", "fixed", "--param", "size=0"]) == 2
    assert main(["audit"]) == 2  # --corpus is required (argparse exits 2)


def test_parse_failures_count_fallbacks_and_say_when_ocr_was_not_checked():
    broken_code = Document("broken.py", CODE.replace("def refund(order):", "def refund(order:"), title="broken.py")
    items = _by_name(audit(DOCS + [broken_code], GOOD, max_parse_failures=0.5))
    item = items["parse_failures"]
    # the code strategy could not parse it and fell back: counted, though the document has no record
    assert "1/3" in item.detail and "1 篇解析失败后走了回退" in item.detail and "broken.py" in item.detail
    assert "OCR 未检查" in item.detail
    assert not _by_name(audit(DOCS + [broken_code], GOOD))["parse_failures"].passed  # 1/3 > 5%


def test_parse_failures_read_the_ocr_records():
    from chunklab.preprocess.model import NO_TEXT_LAYER

    def pdf_doc(skipped, ocr_pages):
        meta = {"preprocess": [{"step": "extract", "pages": 3}, {"step": "ocr", "pages": ocr_pages}],
                "skipped_pages": skipped}
        return Document("scan", "通知：本周五停电检修。\n", title="scan", meta=meta)

    done = _by_name(audit(DOCS + [pdf_doc([], [2])], GOOD))["parse_failures"]
    assert done.passed and "OCR 读出 1 页" in done.detail and "没有扫描页缺文字" in done.detail
    left = pdf_doc([{"page": 3, "reason": f"{NO_TEXT_LAYER}; OCR unavailable: no tesseract"}], [])
    item = _by_name(audit(DOCS + [left], GOOD))["parse_failures"]
    assert not item.passed and "1 页扫描件没有文字" in item.detail and "scan 第 3 页" in item.detail
