"""Chapter 3's helpers (chunklab.book.lessons.ch3 and ch3_hierarchy): the properties its prose relies on."""
from __future__ import annotations

from types import SimpleNamespace as S

import numpy as np
import pytest

from chunklab import get_strategy
from chunklab.book.criteria import criterion
from chunklab.book.lessons import ch3, ch3_hierarchy as ch3h
from chunklab.core import Chunk, Document
from chunklab.hierarchy import ParentChildIndex
from chunklab.length import count_tokens
from chunklab.strategies.linguistic import Recursive


def test_evidence_ceiling_needs_a_chunk_holding_every_span():
    q = S(spans=[S(doc_id="a", start=2, end=5), S(doc_id="b", start=0, end=3)])
    whole_a = Chunk("a", 0, 0, 6, "x" * 6)
    assert ch3.evidence_ceiling([whole_a], [q]) == 0.0                       # b's span is held by nothing
    assert ch3.evidence_ceiling([whole_a, Chunk("b", 0, 0, 3, "yyy")], [q]) == 1.0
    assert ch3.evidence_ceiling([Chunk("a", 0, 0, 4, "xxxx"), Chunk("a", 1, 4, 6, "xx"),
                                 Chunk("b", 0, 0, 3, "yyy")], [q]) == 0.0   # a's span is cut at 4


def test_cut_at_ends_where_the_token_limit_ends():
    text = "远程办公期间遇到停电、断网等导致无法工作的情况，员工应在 30 分钟内告知直属上级。" * 20
    n = ch3.cut_at(text, 50)
    assert 0 < n < len(text)
    assert count_tokens(text[:n]) <= 50 < count_tokens(text[:n + 5])


def test_agree_names_each_retriever_only_when_they_differ():
    assert ch3.agree({"BM25": "成立", "向量（USE）": "成立"}) == "三种检索器都是“成立”"
    assert ch3.agree({"BM25": "成立", "向量（USE）": "未能确认"}) == "BM25：成立；向量（USE）：未能确认"


def test_significant_where_names_only_the_retrievers_whose_interval_excludes_zero():
    yes, no = {"significant": True}, {"significant": False}
    assert ch3.significant_where({"BM25": yes, "向量（USE）": yes}) == "在每种检索器上都显著"
    assert ch3.significant_where({"BM25": no, "向量（USE）": no}) == "在哪种检索器上都不显著"
    assert ch3.significant_where({"BM25": no, "向量（USE）": yes, "混合（BM25+USE）": yes}) == \
        "只在 向量（USE）、混合（BM25+USE）上显著"


def test_fill_cut_cuts_the_first_item_that_does_not_fit_and_stops():
    doc = "第一条 规定甲。" * 40 + "第二条 规定乙。" * 40 + "第三条 规定丙。"
    items = [Chunk("d", 0, 0, 320, doc[:320]), Chunk("d", 1, 320, 640, doc[320:640]), Chunk("d", 2, 640, 648, doc[640:])]
    first = count_tokens(items[0].text)
    out = ch3h.fill_cut(items, first + 20)
    assert [c.index for c in out] == [0, 1]                  # the third is never reached
    assert out[1].start == 320 and out[1].end < 640          # the second is cut, keeping its beginning
    assert sum(count_tokens(c.text) for c in out) <= first + 20
    assert out[1].text == doc[out[1].start:out[1].end]       # offsets stay exact
    assert ch3h.fill_cut(items, 10**6) == items


def test_tenant_demo_windows_stay_inside_documents_and_the_filter_keeps_one_tenant():
    demo = ch3h.tenant_demo("甲")
    docs = {d.id: d for d in ch3h.TENANT_DOCS}
    for c in demo["raw"] + demo["kept"]:
        assert c.text == docs[c.doc_id].text[c.start:c.end]   # a window is a span of one document
    raw_meta = [docs[c.doc_id].meta for c in demo["raw"]]
    assert {m["tenant"] for m in raw_meta} == {"甲", "乙"} and not all(m["current"] for m in raw_meta)
    assert [c.doc_id for c in demo["kept"]] == ["甲/差旅办法@2024"]
    assert "个人承担" in demo["crossing"].text and "600" in demo["crossing"].text   # two versions in one file mix
    assert demo["numbers"] == {"tenant_raw_docs": 3, "tenant_kept_docs": 1}


def test_over_limit_counts_evidence_past_the_cut_only():
    text = "前言。" * 400 + "证据在这里。" + "结尾。" * 10
    doc = Document("d", text)
    pos = text.index("证据")
    long_chunk = Chunk("d", 0, 0, len(text), text)
    early = S(spans=[S(doc_id="d", start=0, end=3)])
    late = S(spans=[S(doc_id="d", start=pos, end=pos + 6)])
    out = ch3h.over_limit([("整篇", [doc], [early, late], [long_chunk])])
    assert count_tokens(text) > 512
    assert out["hidden"]["整篇"] == (1, 2)                    # only the late evidence is past 512 tokens
    short = [Chunk("d", 0, 0, pos, text[:pos]), Chunk("d", 1, pos, len(text), text[pos:])]
    assert ch3h.over_limit([("分开", [doc], [late], short)])["hidden"]["分开"] == (0, 1)


def test_retriever_figure_hatches_intervals_that_include_zero():
    rows = {("甲", "BM25"): {"diff": 0.03, "lo": 0.01, "hi": 0.05},
            ("甲", "向量（USE）"): {"diff": 0.01, "lo": -0.02, "hi": 0.04}}
    fig = ch3.retriever_figure(rows, xlabel="x", title="t", margin=0.02)
    bars = [p for p in fig.axes[0].patches]
    assert len(bars) == 2 and bars[0].get_hatch() is None and bars[1].get_hatch() == "///"
    assert any(abs(line.get_xdata()[0] + 2) < 1e-9 for line in fig.axes[0].lines)   # the margin at -2 points
    lo, hi = fig.axes[0].get_xlim()
    assert lo < -2 and hi > 5                     # every whisker and the margin inside the frame
    assert all(h.get_hatch() is None for h in fig.axes[0].get_legend().legend_handles[:2])   # legend: colour only


def test_c3_primary_test_removes_an_overlap_that_acts_and_uses_the_register():
    (a, b) = ch3.C3_SETTINGS[ch3.PRACTICAL]
    assert a == ("markdown", {}) and b[0] == "fixed" and b[1]["overlap"] == 50
    # the article's literal comparison (overlap 50 -> 0 inside the heading tree) is kept as a contrast
    assert ch3.C3_SETTINGS[ch3.LITERAL] == (("markdown", {}), ("markdown", {"overlap": 50}))
    assert all(b_[1].get("overlap") == 50 and "overlap" not in a_[1] for a_, b_ in ch3.C3_SETTINGS.values())
    c = criterion("C3", "no loss")
    assert c.kind == "non-inferiority" and c.margin > 0


@pytest.fixture(scope="module")
def lab():
    return ch3.Lab()


def test_policy_documents_are_chosen_by_title_not_by_extension(lab):
    pol = ch3.policy_documents(lab)
    ids = {r[0] for r in pol["rows"]}
    assert "faq_hr" not in ids and "faq_hr" in pol["numbers"]["old_not_policy"]
    assert all(any(w in r[1] for w in ch3.POLICY_WORDS) for r in pol["rows"])
    assert pol["numbers"]["pol_not_md"] >= 1                   # some policies are .txt clause texts
    assert pol["mask"].sum() == pol["numbers"]["nq_pol"] == sum(r[-1] for r in pol["rows"])


def test_matched_parents_have_the_sections_length_and_differ_from_1200(lab):
    docs = [d for d in lab.xb_docs if d.id in {"remote_work_policy", "travel_expense_policy", "employee_handbook"}]
    assert len(docs) == 3
    sections = get_strategy("markdown").split_documents(docs)
    target = ch3h.matched_target(docs, sections)
    tok = lambda cs: float(np.mean([count_tokens(c.text) for c in cs]))   # noqa: E731
    matched = Recursive(target=target, length="tokens").split_documents(docs)
    big = Recursive(target=1200, length="tokens").split_documents(docs)
    assert abs(tok(matched) - tok(sections)) / tok(sections) < 0.2     # the control holds the size fixed
    assert tok(big) > 2 * tok(sections)                                 # ... which the 1200-token parents do not
    pc = ParentChildIndex(docs, parent=Recursive(target=target, length="tokens"), child=Recursive(target=200, length="tokens"))
    assert all(pc.parent_of(j).start <= c.start and c.end <= pc.parent_of(j).end for j, c in enumerate(pc.children))


def test_overlap_grows_the_policy_index_far_less_in_a_heading_tree_than_in_fixed_windows(lab):
    g = ch3.policy_documents(lab)["numbers"]
    labels = list(ch3.C3_SETTINGS)
    fixed, tree = g[f"c3_growth_{labels.index('fixed 500：去掉 overlap 50')}"], g[f"c3_growth_{labels.index('标题树：去掉 overlap 50')}"]
    assert 0.08 < fixed < 0.12 and 0 <= tree < 0.03 and tree < fixed / 4   # the prose: overlap barely acts in the tree
