"""Chapter 1's helpers (chunklab.book.lessons.ch1*): the properties its prose states in words.

The chapter writes some conclusions as words (“三种检索器下都在 0 的右边”, “分不出高低”); each
such sentence has a test here that fails when the data stop supporting it.
"""
import numpy as np
import pytest

from chunklab.book.lessons import ch1, ch1_retrieval, ch1_types
from chunklab.viz.fonts import use_cjk_font


@pytest.fixture(scope="module")
def lab():
    use_cjk_font()
    return ch1.setup()


@pytest.fixture(scope="module")
def ceilings(lab):
    return ch1.ceilings(lab, n_boot=200)


@pytest.fixture(scope="module")
def types(lab, ceilings):
    return ch1_types.content_types(lab)


@pytest.fixture(scope="module")
def runs(lab, ceilings):
    return ch1_retrieval.retriever_runs(lab)


def test_label_and_char_range():
    assert ch1.label("fixed", {"size": 512}) == "fixed size=512"
    assert ch1.label("markdown", {}) == "markdown"
    assert ch1.char_range([2500.0, 2500.2]) == "都是 2,500 字"
    assert ch1.char_range([2497.0, 2500.0]) == "在 2,497 到 2,500 字之间"


def test_ceiling_is_one_when_every_document_is_one_chunk(lab, ceilings):
    whole = lab.chunks("whole", "fixed", size=max(len(d.text) for d in lab.docs))
    assert lab.ceiling(whole).mean() == 1.0
    assert lab.runs["fixed size=128", "ceiling"].mean() < 0.7


def test_whole_documents_are_over_the_limit_costly_and_unfocused(lab, ceilings):
    n = ch1.whole_documents(lab)["numbers"]
    assert n["wd_over"] >= len(lab.docs) // 2
    assert n["wd_beyond"] > 0.5                      # most evidence lies past what e5 reads of a whole document
    assert n["wd_whole_chars"] > 10 * ch1.BUDGET     # "是预算的 N 倍"
    assert n["wd_whole_hit_b"] < n["wd_md_hit_b"] - 0.3


def test_ceiling_rises_with_size_but_budget_completeness_does_not(ceilings):
    fixed = [r for r in ceilings["rows"] if r["name"] == "fixed"]
    ceil = [r["ceiling"] for r in fixed]
    assert ceil == sorted(ceil)
    best = ceilings["numbers"]["best_fixed_b"]
    assert best not in (128, 2048)                   # "不随块长一路上升"
    n = ceilings["numbers"]
    assert n["ceil_md"] >= n["ceil_f512"] and n["struct_ceil_lo"] > n["ceil_f512"]
    assert n["big_k"].startswith("+") and n["big_b"].startswith("-")      # fixed k favours big chunks


def test_small_hurts_the_ceiling_big_hurts_retrieval(lab, ceilings):
    sizes = ch1.size_tests(lab)
    n, t = sizes["numbers"], sizes["tests"]
    for key in ("ceiling_128", "budget_128", "budget_2048"):
        assert n[f"size_{key}_v"] == "成立", key
    assert float(n["size_ceiling_2048"].split("%")[0]) < float(n["size_ceiling_128"].split("%")[0]) / 5
    assert t["hit", "128"]["diff"] < t["budget", "128"]["diff"] / 3      # "标题树减它只有 …": hit hides "too small"
    assert (n["size_hit_128_note"] == "区间含 0，分不出高低") == (not t["hit", "128"]["significant"])


def test_crowding_falls_with_size(lab, ceilings):
    n = ch1.crowding(lab)["numbers"]
    assert n["crowd_128"] > n["crowd_256"] >= n["crowd_512"]
    assert n["crowd_union_128"] < n["crowd_union_512"]
    assert n["crowd_two"] > 0


def test_c1_single_question(lab, ceilings):
    n = ch1_retrieval.c1_single(lab)["numbers"]
    assert n["c1_reproduced"] == "没有复现"
    assert n["c1_top_docs"] == "faq_hr"
    assert n["c1_tok_bm25"] <= 5 and n["c1_md_bm25"] <= 5


def test_heading_tree_beats_fixed_512_under_the_budget_for_every_retriever(runs):
    for e in ch1_retrieval.RETRIEVERS:
        res = runs["tests"]["fixed size=512", e, "budget"]
        assert res["significant"] and res["diff"] > 0, e
    for e in ch1_retrieval.RETRIEVERS:                                         # "取前 5 块时差变小"
        assert runs["tests"]["fixed size=512", e, "k"]["diff"] < runs["tests"]["fixed size=512", e, "budget"]["diff"], e
    ret = runs["ret_tests"]
    assert not any(ret[key, "dense"]["significant"] for key in ("fix", "md"))     # "区间都含 0"
    assert all(ret[key, "hybrid"]["diff"] > 0 for key in ("fix", "md"))              # the prose's sentence follows the intervals
    n = runs["numbers"]
    assert (n["ret_hybrid_note"] == "区间都不含 0") == (n["ret_hybrid_sig"] == 2)


def test_hybrid_helps_on_hard_questions_only(lab, runs):
    d = ch1_retrieval.by_difficulty(lab, runs["runs"])
    assert d["numbers"]["dif_m"] == 8                                      # e5 and hybrid against BM25, Holm together
    for key in ("fix", "md"):
        hard, easy = d["tests"][key, "hard", "hybrid"], d["tests"][key, "easy", "hybrid"]
        assert hard["significant"] and hard["diff"] > 0
        assert not easy["significant"]
        dense_hard, dense_easy = d["tests"][key, "hard", "dense"], d["tests"][key, "easy", "dense"]
        assert dense_hard["diff"] > 0 and not dense_hard["significant"]   # "点估计也高于 BM25，但区间含 0"
        assert dense_easy["significant"] and dense_easy["diff"] < 0       # "区间整个在 0 的左边"
        n = d["numbers"]
        assert n[f"dif_{key}_easy_dense"] < min(n[f"dif_{key}_easy_bm25"], n[f"dif_{key}_easy_hybrid"])
        assert n[f"dif_lost_{key}"] > 0 and n[f"dif_gained_{key}"] > n[f"dif_lost_{key}"]


def test_laws_clause_against_fixed(lab):
    law = ch1_retrieval.laws(lab)
    t = law["tests"]
    assert t["bm25", "k"]["significant"] and t["bm25", "k"]["diff"] < 0       # "BM25 下条款反而输"
    assert law["numbers"]["law_budget_decided"] == 0                            # "三种检索器下都分不出高低"
    assert law["numbers"]["law_bm25_budget_v"] == "未能区分"


def test_diagnosis_proxy_overcounts_dilution(lab, ceilings, runs):
    n = ch1_types.diagnosis(lab, runs["runs"]["markdown", "hybrid", "k"].per_question["hit"])["numbers"]
    for key in ("2048", "512", "md"):
        assert n[f"diag_dil_{key}"] < n[f"diag_pdil_{key}"]
    assert n["diag_under10"] > 0.9
    assert 0 < n["low_rescued"] < n["low_n"]
    assert n["low_hard"] > n["hard_all"]
    assert n["low_n"] > n["md_miss"] / 2                                        # "多数是排名靠后"


def test_routing_beats_best_size_but_not_the_heading_tree(types):
    n = types["numbers"]
    assert n["auto_vs_size_v"] == "成立"
    assert not types["auto_tests"]["single"]["significant"]
    assert n["auto_md_types_sig"] == 0                # "没有一类能和噪声分开"
    assert n["size_type_dir"] == n["size_type_m"]    # "差的方向和挑选时一样"
    assert n["size_type_sig"] == 0                   # "最好的块长是否随内容类型而变，这批题还分不出来"


def test_specialists_lose_on_their_own_type_by_size_and_fallback(lab, types):
    s = ch1_types.specialists(lab, types["hits"], types["qtype"])
    n = s["numbers"]
    assert n["spec_m"] == 6
    for name in ch1_types.TESTED:
        assert n[f"spec_{name}_def_md_down"] == 1, name                 # "默认设置减标题树 ... 区间都在 0 的左边"
        assert n[f"spec_{name}_h_500"] > n[f"spec_{name}_h_def"], name  # a smaller target helps (the point estimate)
        assert n[f"spec_{name}_md_sig"] == 0, name                      # the rest: not distinguishable
        gap_before = n[f"spec_{name}_h_md"] - n[f"spec_{name}_h_def"]
        gap_after = n[f"spec_{name}_h_md"] - n[f"spec_{name}_h_500"]
        assert 0 <= gap_after < gap_before / 2, name                    # "损失大半消失"
        assert n[f"spec_{name}_len_def"] > n[f"spec_{name}_len_500"]
    assert ("区间都不含 0" in n["spec_size_note"]) == (n["spec_size_up"] == len(ch1_types.TESTED))
    assert n["spec_table_own"] == 0.0 and n["spec_table_fb"] > 0.5
    assert n["spec_dialogue_fb"] == 0.0
    assert np.isclose(n["spec_dialogue_h_def"], n["spec_dialogue_h_500"])
