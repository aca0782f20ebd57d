"""Chapter 7 helpers (chunklab.book.lessons.ch7, ch7_ops): the properties the prose relies on."""
from __future__ import annotations

import json

import numpy as np
import pytest

import chunklab

from chunklab.book.lessons import ch7 as L
from chunklab.book.lessons import ch7_ops as O
from chunklab.book.exercises.ch7 import RULE_CASES, _reference_rule
from chunklab.datasets import load_corpus
from chunklab.datasets.questions import check_questions
from chunklab.evaluation.stats import EQUIVALENCE_MARGINS
from chunklab.tools.versioning import build_manifest, chunk_corpus, plan_rechunk
from chunklab.viz.fonts import use_cjk_font

MARGIN = EQUIVALENCE_MARGINS["hit"]


def chapter_rule(p_budget, p_k, simpler):
    """The rule of chapters/ch7_iteration.md (tests/test_exercises_ch7_rule.py checks that they are the same)."""
    if p_k["hi"] < 0:
        return "refuse"
    lo, hi = p_budget["lo"], p_budget["hi"]
    if lo > 0:
        return "adopt"
    if hi < 0:
        return "refuse"
    if simpler:
        return "adopt" if lo >= -MARGIN else "need_more_data"
    return "refuse" if hi <= MARGIN else "need_more_data"


@pytest.fixture(scope="module")
def xiaobei():
    xb = load_corpus("xiaobei")
    qs, problems = check_questions("xiaobei")
    assert not problems
    return xb, qs


@pytest.fixture(scope="module")
def weeks13(xiaobei):
    """Weeks 1-3 on every question, judged by the chapter's rule (a few seconds)."""
    xb, qs = xiaobei
    it = L.Iteration(xb, chapter_rule, questions=qs)
    return it, {**L.setup_numbers(it), **L.week1(it), **L.week2(it), **L.week3(it)}


@pytest.fixture(scope="module")
def run(weeks13):
    """Week 4 after :func:`weeks13`, and the path (a few seconds more)."""
    it, values = weeks13
    values = dict(values)
    candidates = L.week4_candidates(it)
    adopted = L.week4_decide(it, candidates)
    values.update(L.week4(it, adopted))
    values.update(O.path_numbers(it))
    return it, values, candidates, adopted


def test_the_rule_alone_moves_the_configuration(xiaobei):
    xb, qs = xiaobei
    few = qs[::6]
    refuse = L.Iteration(xb, lambda *_: "refuse", questions=few)
    L.week1(refuse)
    L.week2(refuse)
    assert refuse.current == refuse.after[2] == L.W1_LABEL
    assert refuse.decisions[L.W2_LABEL]["outcome"] == "refuse" and not refuse.decisions[L.W2_LABEL]["adopted"]
    adopt = L.Iteration(xb, lambda *_: "adopt", questions=few)
    L.week1(adopt)
    L.week2(adopt)
    assert adopt.current == L.W2_LABEL
    wrong = L.Iteration(xb, lambda *_: True, questions=few)
    L.week1(wrong)
    with pytest.raises(ValueError, match="must return one of"):
        L.week2(wrong)


def test_week1_counts_add_up(weeks13):
    it, v = weeks13
    misses = int((it.results[L.W1_LABEL]["k"].per_question["hit"] == 0).sum())
    assert v["w1_miss"] == misses
    assert v["w1_geom"] == v["w1_cut"] + v["w1_diluted"] <= misses
    assert v["w1_top5_share"] == pytest.approx(5 / v["w1_chunks"])
    assert 0 <= v["w1_rerank"] <= v["w1_low"]
    assert v["nq"] == len(it.qs) and v["nprob"] == 0


def test_week2_rescues_only_part_of_the_boundary_misses(weeks13):
    """The prose: the boundary misses point to a new chunking, but routing rescues only part of them."""
    _, v = weeks13
    assert v["w2_boundary"] == v["w1_geom"]
    assert 0 < v["w2_rescued"] < v["w2_boundary"]
    assert 0.3 < v["w2_rescued_share"] < 0.7
    assert v["w2_dec"] == "采纳" and v["w2_vb"] == "成立"


def test_the_outcomes_the_chapter_describes(run):
    it, v, candidates, adopted = run
    out = {label: d["outcome"] for label, d in it.decisions.items()}
    assert out[L.W2_LABEL] == "adopt"
    assert out[L.W3B_LABEL] == "refuse"          # equivalent at the budget, more complex
    assert out[L.PC_A] == "refuse"               # a measured loss at the budget
    assert [s for _, s in candidates] == [False, False, True]
    assert adopted == L.OVERLAP0 and out[L.OVERLAP0] == "adopt"
    d = it.decisions[L.OVERLAP0]
    assert d["b"]["lo"] <= 0 <= d["b"]["hi"] and d["b"]["lo"] >= -MARGIN   # the no-worse-and-simpler branch
    assert it.decisions[L.PC_A]["k"]["lo"] > 0 > it.decisions[L.PC_A]["b"]["hi"]   # the two rulers disagree


def test_the_final_configuration_is_routing_without_prefix_or_overlap(run):
    it, v, _, _ = run
    final = it.cfg(it.current)
    assert final == {"strategy": "auto", "params": {"prefix": False, "overlap": 0}}
    assert v["final_desc"] == "`auto`，`overlap=0`，`prefix=False`，块的 context 不进索引"
    assert json.loads(v["final_json"])["overlap"] == 0
    assert v["n_adopted"] == 2 and v["n_steps"] == 6
    assert v["w2_rank"].startswith("是四周里")                # week 2's takeaway calls routing the largest step


def test_exercise_cases_named_after_steps_decide_as_those_steps_did(run):
    """Exercise 7.3's cases "(like week 2's routing)" etc. must read true of this run."""
    it, _, _, _ = run
    steps = {"第 2 周的路由": L.W2_LABEL, "父子块在同预算下": L.PC_A, "overlap 50 → 0": L.OVERLAP0,
             "表格转写": L.W3B_LABEL, "标题路径": L.W3A_LABEL}
    named = 0
    for name, result, simpler in RULE_CASES:
        for key, label in steps.items():
            if key in name:
                d = it.decisions[label]
                assert simpler == d["simpler"] and _reference_rule(result, simpler) == d["outcome"], name
                named += 1
    assert named == len(steps)


def test_overlap_acts_on_few_chunks(run):
    _, v, _, _ = run
    assert 0 < v["ov_overlapping"] < 0.05 * v["ov_nchunks"]
    assert 0 < v["ov_saved_share"] < 0.01
    assert v["ov_b_lo_pts"] < 100 * MARGIN                              # the deciding ruler: within the margin
    # the prose's reading of both intervals follows them
    assert v["ov_within"].startswith("两个区间") == (v["ov_k_lo_pts"] < 100 * MARGIN)
    # hit@5's lower end beyond the margin: the prose says so, and qualifies "too small to keep"
    assert ("hit@5 的区间下端低于界值" in v["ov_within"]) == (v["ov_k_lo_pts"] > 100 * MARGIN)
    assert ("这批题还排除不了" in v["ov_reading"]) == (v["ov_k_lo_pts"] > 100 * MARGIN)
    assert "同预算下最坏也不比当前配置差过界值" in v["w4_decision"]


def _ov(b, k, outcome):
    return {"b": {"lo": b[0], "hi": b[1]}, "k": {"lo": k[0], "hi": k[1]}, "outcome": outcome}


@pytest.mark.parametrize("b, k, outcome, within, reading", [
    ((-0.01, 0.01), (-0.015, 0.01), "adopt", "两个区间都整个落在", "说的是作用小到"),
    ((-0.01, 0.03), (-0.015, 0.01), "adopt", "两个区间的下端都没有低于", "说的是作用小到"),
    ((-0.013, 0.013), (-0.022, 0.006), "adopt", "hit@5 的区间下端低于界值，但规则里 hit@5 只是护栏", "这批题还排除不了"),
    ((-0.013, 0.013), (-0.05, -0.01), "refuse", "hit@5 的区间整个落在 0 以下，护栏拦下了它", "会让命中率下降"),
    ((-0.03, 0.01), (-0.01, 0.01), "need_more_data", "但做决定的同预算区间，下端低于", "说不清"),
])
def test_overlap_reading_follows_both_intervals(b, k, outcome, within, reading):
    r = L.overlap_reading(_ov(b, k, outcome), MARGIN)
    assert within in r["ov_within"] and reading in r["ov_reading"]


def test_fill_story_names_the_old_outcome(run):
    """Under the old fill the rule may decide differently; the sentence names both outcomes, or none changed."""
    it, v, _, _ = run
    story = v["w4_fill_story"]
    if story.startswith("按旧装法，规则对三个候选"):
        return
    assert "的结论会是“" in story and "而不是现在的“" in story
    for label in L.CANDIDATES:
        if f"“{label}”" in story:
            assert f"而不是现在的“{L.OUTCOME_ZH[it.decisions[label]['outcome']]}”" in story


def test_budget_practice_follows_the_verdicts():
    gain = {"diff": 0.08, "lo": 0.05, "hi": 0.11, "significant": True, "metric": "hit"}
    small_k = {"diff": 0.01, "lo": -0.02, "hi": 0.04, "significant": False, "metric": "hit"}
    assert "值得做" in O.budget_practice(gain, small_k, 2560) and "低估" in O.budget_practice(gain, small_k, 2560)
    unsure = {"diff": 0.01, "lo": -0.01, "hi": 0.03, "significant": False, "metric": "hit"}
    assert "值得做" not in O.budget_practice(unsure, small_k, 2560).replace("不能拿它说改动值得做", "")


def test_step_table_marks_controls_and_simpler_steps(run):
    it, _, candidates, _ = run
    t = it.step_table([(it.after[3], None)] + [(c, it.after[3]) for c, _ in candidates])
    assert len(t.cells) == 4 and t.cells[0][-1] == "—"
    assert t.cells[3][-1] == "采纳（更简单）"
    control = it.step_table([(L.W1_LABEL, None), (L.TOKEN_LABEL, L.W1_LABEL)])
    assert control.cells[1][-1] == "（对照，不参与）"


def test_apply_rule_shows_a_readers_rule_beside_the_chapters(run):
    it, _, _, _ = run
    t = L.apply_rule(it, lambda result, simpler: "adopt" if result["lo"] > 0 else "refuse")
    rows = {r[0]: r for r in t.cells}
    assert rows[L.OVERLAP0][3] == "不采纳" and rows[L.OVERLAP0][4] == "采纳"


def test_config_zh_and_audit_argv_name_only_non_default_parameters():
    final = {"strategy": "auto", "params": {"prefix": False, "overlap": 0}}
    assert O.config_zh(final) == "`auto`，`overlap=0`，`prefix=False`，块的 context 不进索引"
    argv = O.audit_argv({**final, "use_context": True})
    assert argv[:5] == ["audit", "--corpus", "xiaobei", "--strategy", "auto"]
    assert sorted(a for a in argv if a.startswith("--param")) == ["--param=overlap=0", "--param=prefix=False"]
    assert "--context" in argv and "--transcribe-tables" not in argv


def test_gate_sentence_says_whether_the_gate_pins_the_final_configuration(tmp_path):
    final = {"strategy": "auto", "params": {"prefix": False, "overlap": 0}}
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps({"config": {"strategy": "auto", "params": {"overlap": 0, "prefix": False},
                                           "use_context": False}}), encoding="utf-8")
    assert "钉的就是这份配置" in O.gate_sentence(final, path)
    assert "但它的尺子是命中率（hit@5）" in O.gate_sentence(final, path, 2560)       # the file names no budget
    path.write_text(json.dumps({"config": {"strategy": "auto", "params": {"overlap": 0, "prefix": False},
                                           "use_context": False, "budget": 2560}}), encoding="utf-8")
    assert "尺子也是本章做决定的同预算命中率（每题 2560 字）" in O.gate_sentence(final, path, 2560)
    assert "不是本章做决定的每题 1000 字" in O.gate_sentence(final, path, 1000)
    path.write_text(json.dumps({"config": {"strategy": "auto", "params": {}, "use_context": True}}), encoding="utf-8")
    assert "另一份配置" in O.gate_sentence(final, path)
    assert "无从比较" in O.gate_sentence(final, tmp_path / "missing.json")


def test_incremental_rechunking_touches_only_the_edited_document(xiaobei):
    xb, _ = xiaobei
    docs = list(xb.documents)
    final = {"strategy": "auto", "params": {"prefix": False, "overlap": 0}}
    new_docs = O.edit_sick_pay(docs)
    changed = [a.id for a, b in zip(docs, new_docs) if a.text != b.text]
    assert changed == ["employee_handbook"] and "70%" in new_docs[[d.id for d in docs].index(changed[0])].text
    old_by_doc = chunk_corpus(final, docs)
    plan = plan_rechunk(build_manifest(final, docs, old_by_doc), new_docs, final)
    t = O.time_rechunk(plan, old_by_doc, new_docs, final)
    assert t["inc_docs"] == 1 and t["full_docs"] == len(docs)
    assert 0 < t["inc_chunks"] < t["full_chunks"]
    with pytest.raises(ValueError, match="exactly once"):
        O.edit_sick_pay(new_docs)                 # the 60% sentence is gone after the edit


def test_claim_rows_are_c9_only(run):
    it, _, _, _ = run
    rows = O.claim_rows(it)
    assert [r.cid for r in rows] == ["C9", "C9"]
    assert np.isfinite(rows[0].result["lo"])


def test_rule_figure_draws_every_judged_step_with_the_margin_band(run):
    it, _, _, _ = run
    use_cjk_font()                              # as the chapter does: no missing-glyph warnings
    fig = O.rule_figure(it, MARGIN)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == len(it.decisions) == 6
    assert labels[-1] == f"{L.OVERLAP0}（更简单）" and sum("更简单" in x for x in labels) == 1
    band = ax.patches[0].get_x(), ax.patches[0].get_x() + ax.patches[0].get_width()   # the ±margin band
    assert band == pytest.approx((-100 * MARGIN, 100 * MARGIN))


def test_route_table_counts_every_document_once(xiaobei):
    xb, _ = xiaobei
    decisions = {d.id: chunklab.route(d) for d in xb.documents}
    t = L.route_table(decisions)
    assert sum(int(r[1]) for r in t.cells) == len(decisions)
    assert all(r[3].strip("`") in decisions for r in t.cells)
