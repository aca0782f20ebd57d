"""Chapter 6 helpers (chunklab.book.lessons.ch6, ch6_engines): the properties the prose relies on."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from chunklab.book.lessons import ch6 as L
from chunklab.book.lessons import ch6_engines as E
from chunklab.core import Document
from chunklab.datasets import load_corpus
from chunklab.datasets.questions import load_questions
from chunklab.evaluation.matrix import ARTICLE_002_GRID, expand_grid
from chunklab.evaluation.matrix_pick import simplicity
from chunklab.retrieval import CorpusIndex


@pytest.fixture(scope="module")
def xiaobei():
    xb = load_corpus("xiaobei")
    return xb, load_questions("xiaobei", xb)


def _result(hits, chars=2560.0, inflation=1.1, cut=0.1):
    hits = np.asarray(hits, dtype=float)
    agg = {m: {"mean": float(hits.mean()), "lo": 0.0, "hi": 1.0} for m in ("hit", "mrr", "recall", "precision", "iou")}
    agg["retrieved_chars"] = {"mean": chars}
    return SimpleNamespace(per_question={"hit": hits}, aggregate=agg,
                           structure={"overlap_inflation": inflation, "clause_cut_rate": cut})


def _fake_matrix(hits_of):
    configs, _ = expand_grid(ARTICLE_002_GRID)
    res = {c["label"]: _result(hits_of(c)) for c in configs}
    return L.HandMatrix(configs, res, res)


def test_the_scale_heatmap_uses_the_fixed_zero_to_one_scale():
    rows = [{"strategy": s, "size": n, "overlap": o, "hit": 0.991 + 0.0001 * i}
            for i, (s, n, o) in enumerate((s, n, round(f * n)) for s in ("fixed", "recursive", "paragraph")
                                          for n in L.SIZES for f in (0, 0.1, 0.2))]
    for r in rows:
        r["target" if r["strategy"] != "fixed" else "size"] = r["size"]
    fig, table_rows, numbers = L.scale_figure(SimpleNamespace(rows=rows))
    assert fig.axes[0].images[0].get_clim() == L.HIT_SCALE == (0.0, 1.0)
    assert len(table_rows) == 27
    assert numbers["scale_spread_pp"] == pytest.approx(0.26, abs=1e-6)


def test_overlap_tells_equivalent_from_undecided():
    same = _fake_matrix(lambda c: [1, 0] * 500)                  # overlap changes nothing on any of 1,000 questions
    _, _, n = L.overlap_tests(same)
    assert n["ov_n"] == 12 and n["ov_equiv"] == 12 and n["ov_undecided"] == 0
    rng = np.random.default_rng(0)
    noisy = _fake_matrix(lambda c: rng.integers(0, 2, 60))       # 60 questions of coin flips: too few to tell
    _, _, n = L.overlap_tests(noisy)
    assert n["ov_sig"] == 0 and n["ov_equiv"] == 0 and n["ov_undecided"] == 12
    # the chapter's "差值恰好为 0 的格子，判定词就是“未能区分”": identical outcomes on the chapter's 340
    # questions are a zero with width, not 等效
    zero = _fake_matrix(lambda c: [1, 0] * 170)
    _, rows, n = L.overlap_tests(zero)
    assert n["ov_equiv"] == 0 and n["ov_undecided"] == 12
    assert all("0.0% [" in cell and "未能区分" in cell for r in rows for cell in r[2:])


def test_size_tests_reads_a_reversal_between_the_rulers():
    configs, _ = expand_grid(ARTICLE_002_GRID)
    big = [1] * 80 + [0] * 20
    small = [1] * 50 + [0] * 50
    k = {c["label"]: _result(big if L.size_of(c["params"]) == 2048 else small) for c in configs}
    b = {c["label"]: _result(small if L.size_of(c["params"]) == 2048 else big) for c in configs}
    _, rows, n = L.size_tests(L.HandMatrix(configs, k, b))
    assert n["size_k_verdicts"] == "成立" and n["size_b_verdicts"] == "不成立（显著反向）"
    assert len(rows) == 6


def test_the_layered_count_does_not_depend_on_the_size_layer_2_picks():
    layers = {"1": [{"strategy": "recursive"}, {"strategy": "fixed"}],
              "2": [{"strategy": "recursive", "target": [256, 512, 1024]}]}
    counts = []
    for t in (256, 512, 1024):
        rows, total = L.count_layers({**layers, "3": L.layer3_grid({"recursive": t})})
        counts.append(total)
        assert rows[-1][2] == total
    assert len(set(counts)) == 1
    # the layer-3 config without overlap and prefix is the layer-2 config again: counted once
    assert rows[2][1] == 6 and rows[2][2] == 5


def test_the_count_over_every_layer_2_pick_brackets_the_count_of_each_pick():
    layers = {"1": [{"strategy": "recursive"}, {"strategy": "auto"}]}
    layer2 = [{"strategy": "recursive", "target": [256, 512]}, {"strategy": "auto", "target": [300, 500]}]
    lo, hi = L.count_over_picks({**layers, "2": layer2}, layer2)
    totals = {L.count_layers({**layers, "2": layer2, "3": L.layer3_grid({"recursive": r, "auto": a})})[1]
              for r in (256, 512) for a in (300, 500)}
    assert (lo, hi) == (min(totals), max(totals))
    # auto below target 500 scales its default overlap, so its layer-2 config is not in layer 3 again
    assert hi > lo


def test_edge_note_tells_a_best_on_the_edge_from_a_pick_on_the_edge():
    layer2 = [{"strategy": "recursive", "target": [256, 512, 1024]}, {"strategy": "markdown", "target": [256, 500, 1024]}]
    picked = {"recursive": {"best": {"target": 256}, "pick": {"target": 256}},
              "markdown": {"best": {"target": 500}, "pick": {"target": 256}}}
    note = L.edge_note(layer2, picked)
    assert "最高的一档落在网格边上的有 recursive 的 256" in note and "最优点可能在网格之外" in note
    assert "markdown 的 256 是按规则挑出的网格里最小的一档" in note and "markdown 的 500" not in note
    inside = {"recursive": {"best": {"target": 512}, "pick": {"target": 512}}}
    assert L.edge_note(layer2[:1], inside) == "最高的一档和挑出的一档都在各自网格的中间"


def test_pick_layer_picks_the_simplest_of_the_group_not_distinguishable_from_the_best(xiaobei):
    xb, qs = xiaobei
    picked = L.pick_layer(xb.documents, qs, [{"strategy": "recursive", "target": [256, 512, 1024]}], 2000)
    by_label = {r["label"]: r for r in picked["rows"]}
    assert picked["best"]["label"] in picked["group"] and picked["pick"]["label"] in picked["group"]
    assert picked["pick"] == min((by_label[x] for x in picked["group"]), key=simplicity)
    for lab, t in picked["tests"].items():
        assert (lab in picked["group"]) == (not t["significant"])
    assert all(abs(r["retrieved_chars"] - 2000) < 1 for r in picked["rows"])     # the same budget for every size


@pytest.fixture(scope="module")
def laws_subset():
    laws = load_corpus("laws")
    docs = [d for d in laws.documents if any(a["end"] - a["start"] > 512 for a in d.meta["articles"])][:12]
    ids = {d.id for d in docs}
    qs = [q for q in load_questions("laws", laws) if all(s.doc_id in ids for s in q.spans)]
    return docs, qs, CorpusIndex(docs)


def test_fallback_chains_reconcile_long_and_cut_articles(laws_subset):
    docs, qs, idx = laws_subset
    n = E.fallback_chains(docs, qs, idx)["numbers"]
    assert n["long_n"] > 0
    # every over-long article is cut by both chains (max = 512); what differs is the shorter ones
    assert n["full_cut_long"] == n["gap_cut_long"] == n["long_n"]
    assert n["gap_cut_short"] >= n["full_cut_short"]
    assert n["sent_gap"] > n["sent_full"]
    assert n["full_cut"] >= n["long_share"]
    # the shorter articles a chain cuts are counted, and some of them are the unnumbered entries
    assert 0 <= n["full_cut_short_unnumbered"] <= n["full_cut_short"]
    assert 0 <= n["gap_cut_short_unnumbered"] <= n["gap_cut_short"]


def _by_difficulty(n_easy, n_hard, hits):
    qs = [SimpleNamespace(difficulty="easy")] * n_easy + [SimpleNamespace(difficulty="hard")] * n_hard
    results = {(e, r, L.label("recursive", 512)): SimpleNamespace(per_question={"hit": np.array(h, float)})
               for e, h in hits.items() for r in E.RULERS}
    return E.by_difficulty({"results": results}, qs)["numbers"]


def test_by_difficulty_names_where_hybrid_helps():
    n = _by_difficulty(120, 40, {"BM25": [1] * 110 + [0] * 10 + [0] * 40,
                                 "向量（USE）": [1] * 60 + [0] * 60 + [1] * 20 + [0] * 20,
                                 "混合（BM25 + USE）": [1] * 112 + [0] * 8 + [1] * 20 + [0] * 20})
    assert n["diff_n"] == 8 and n["diff_q_easy"] == 120 and n["diff_q_hard"] == 40
    assert "容易题：混合 − 向量（USE）" in n["diff_helps"] and n["diff_hurts"] == "没有一项"
    assert all(k.isidentifier() for k in n)
    assert n["diff_easy_k_dense"] == pytest.approx(0.5)
    # the prose follows the verdicts: significant under both rulers reads "显著好于"
    assert n["diff_takeaway"] == "混合检索在容易题上显著好于单用向量检索（USE）；在难题上显著好于 BM25"
    assert "显著好于单用向量检索（USE）" in n["diff_easy_text"] and n["diff_hard_text"].startswith("校正后")
    assert n["diff_hurts_text"] == "这批题上混合检索没有在哪一类题上显著变差"


def test_by_difficulty_does_not_call_point_estimates_significant():
    # the same rates on a tenth of the questions: nothing passes Holm, and no sentence says 显著好于
    n = _by_difficulty(12, 4, {"BM25": [1] * 11 + [0] * 1 + [0] * 4,
                               "向量（USE）": [1] * 6 + [0] * 6 + [1] * 2 + [0] * 2,
                               "混合（BM25 + USE）": [1] * 11 + [0] * 1 + [1] * 2 + [0] * 2})
    assert n["diff_helps"] == "没有一项" and n["diff_nhelps"] == 0
    prose = [n[k] for k in ("diff_easy_text", "diff_hard_text", "diff_takeaway", "diff_summary")]
    assert not any("显著好于" in p for p in prose)
    assert "点估计高" in n["diff_takeaway"] and "这 4 道题定不下来" in n["diff_takeaway"]
    assert "不显著" in n["diff_summary"] and "难题只有 4 道" in n["diff_hard_text"]


def test_curve_steps_names_the_sizes_tied_with_the_peak():
    rng = np.random.default_rng(1)
    base = rng.random(400)
    rate = {64: 0.35, 128: 0.62, 256: 0.61, 512: 0.45, 1024: 0.4, 2048: 0.3}
    curve = {(name, n): SimpleNamespace(per_question={"hit": (base < rate[n]).astype(float)},
                                        aggregate={"hit": {"mean": rate[n]}, "retrieved_chars": {"mean": 2560.0}})
             for name in ("fixed", "recursive") for n in L.CURVE}
    _, rows, n = L.curve_steps(curve)
    assert n["peak_rec"] == 128 and n["rec_best"] == "128 或 256"
    assert n["rec_pinned"] == 1 and "两侧都有量过的一档" in n["peaks_inside"]
    assert n["rec_pinned_text"].startswith("递归切分两头都定住了") and n["fixed_open"] == 0
    assert n["fixed_open_text"] == "固定切分有显著的一步，逐档看上面的表"      # fixed shares recursive's rates here


def test_the_prefix_knob_counts_as_less_simple_although_every_config_is_indexed_with_context(xiaobei):
    xb, qs = xiaobei
    picked = L.pick_layer(xb.documents, qs, [{"strategy": "recursive", "target": 256, "prefix": [False, True]}], 2000)
    assert picked["pick"]["label"].endswith("prefix=False)")
    assert L.tied_with_pick(picked) == []


def test_sentence_length_states_the_best_sizes_in_median_sentences():
    doc = Document("d", "甲乙丙。丁戊己。", "t", {"articles": [{"start": 0, "end": 8}]})
    n = L.sentence_length([doc], "8 或 16")
    assert n["sent_median"] == 4.0
    assert n["sizes_in_sentences"] == "2–4"
    assert L.sentence_length([doc], "8")["sizes_in_sentences"] == "2"
