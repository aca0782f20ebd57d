"""Chapter 5's helpers (chunklab.book.lessons.ch5*): the properties its prose relies on, on 小北 with BM25."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from chunklab.book.lessons import ch5, ch5_budget, ch5_diagnose, ch5_ops, ch5_stats


@pytest.fixture(scope="module")
def lab():
    return ch5.Lab.load("xiaobei")


@pytest.fixture(scope="module")
def two(lab):
    return ch5.two_chunkings(lab)


@pytest.fixture(scope="module")
def f512(lab):
    return lab.chunk("fixed", size=512)[0]


def _gate():
    spec = importlib.util.spec_from_file_location("regression_gate", Path(__file__).with_name("test_regression_gate.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_block_level_numbers(lab, two):
    numbers = ch5.block_numbers(lab, two, ch5.parse_failures_item(lab))
    assert numbers["auto_align"] > numbers["ovl_align"]              # 5.1: the router starts chunks at line starts
    assert 1.2 < numbers["ovl_infl"] < 512 / (512 - 128) + 0.01     # 128 of 512 characters indexed twice
    assert numbers["failed_docs"] == numbers["audit_failed"] >= 1    # the broken script falls back, audit agrees
    rows, cols = ch5.block_table(two)
    assert len(rows) == 2 and len(rows[0]) == len(cols)


def test_validate_names_each_bad_line():
    report, code = ch5.run_validate(ch5.BAD_QUESTIONS)
    assert code == 1
    for bad in ("typo-1", "vague-1"):
        assert bad in report
    assert "questoin" in report or "question" in report
    assert "ok-1" not in report


def test_c27_numbers_and_claims(lab, two):
    numbers = ch5.c27_numbers(lab, two)
    assert numbers["two_n"] > 0
    assert numbers["two_hit"] >= numbers["two_complete_union"]       # hit is the looser ruler
    assert "Holm" in numbers["c27_gap_hit"]                         # five gaps, one Holm family
    c8, c27 = ch5.claim_rows(lab, two, [])
    assert (c8.cid, c27.cid) == ("C8", "C27") and c8.holds and c27.holds


def test_tokens_per_char_reconciles_with_chapter_7(lab):
    t = ch5.tokens_per_char(lab)
    assert t["tpc_all"] < t["tpc_prose"]          # code packs several characters into a token
    chars_per_token = lab.corpus.text_chars / sum(ch5.count_tokens(d.text) for d in lab.docs)   # chapter 7's figure
    assert abs(1 / t["tpc_all"] - chars_per_token) < 1e-9


def test_budget_fill_delivers_the_budget(lab, f512):
    r = lab.evaluate(f512, depth=60)
    for budget in (1000, 2500):
        hit, chars, pieces = ch5_budget.within(lab, r, f512, budget)
        assert chars.max() <= budget and chars.mean() > 0.95 * budget
        assert hit.mean() >= r.per_question["hit"].mean() - 0.2
    hit_k, _, _ = ch5_budget.within(lab, r, f512, 10 ** 6)
    assert hit_k.mean() >= r.per_question["hit"].mean()              # a huge budget holds the top 5 and more


def test_power_experiment_counts_only_meaningful_calls():
    rng = np.random.default_rng(0)
    b = (rng.random(400) < 0.6).astype(float)
    real = b.copy()
    real[np.flatnonzero(b == 0)[:60]] = 1.0                           # +15 points, decided on the full set
    noise = np.where(rng.random(400) < 0.5, b, rng.permutation(b))    # no real difference
    power = ch5_stats.power_experiment({"real": (real, b), "none": (noise, b)}, sizes=[25, 50, 100, 200],
                                       repeats=20, n_boot=200)
    widths = [float(cell.split(" 个点 / ")[0]) for cell in power.rows[0][3:]]       # percentage points
    assert widths == sorted(widths, reverse=True)                     # more questions, narrower intervals
    assert "正确胜者" in power.rows[0][2] and "任一方向" in power.rows[1][2]
    assert [c for c in power.columns if c.startswith("n =")] == ["n = 25", "n = 50", "n = 100", "n = 200"]
    assert power.numbers["c200"] > power.numbers["c50"]
    assert power.numbers["n_2pt"] > power.numbers["n_5pt"] > 0                # a smaller difference needs more
    assert power.numbers["delta_small"] == ch5_stats.EQUIVALENCE_MARGINS["hit"]


def test_power_table_prints_the_interval_5_6_prints():
    """The full-set column uses the book's default resamples: the same pair, the same interval as 5.6."""
    a = (np.arange(300) % 3 == 0).astype(float)
    b = (np.arange(300) % 4 == 0).astype(float)
    power = ch5_stats.power_experiment({"x": (a, b), "y": (b, a)}, sizes=[25, 50, 200], repeats=2, n_boot=100)
    many = ch5_stats.paired_many({"x": (a, b)}, method="none")
    assert power.rows[0][1].startswith(ch5_stats.fmt_diff(many["x"]))


def test_null_simulation_correction_lowers_false_alarms():
    rng = np.random.default_rng(1)
    arrays = {f"p{i}": ((rng.random(150) < 0.7).astype(float), (rng.random(150) < 0.7).astype(float)) for i in range(6)}
    share = ch5_stats.null_simulation(arrays, batches=30, n_boot=200)
    assert share["none"] >= share["bh"] >= share["holm"]
    assert list(share["each"]) == list(arrays)                        # one false-alarm rate per comparison
    assert max(share["each"].values()) <= share["none"]               # one call is a batch with at least one


def test_null_numbers_explain_the_gap_by_each_comparisons_rate():
    """5.6: a share off the theory is explained by each comparison's own rate (the simulated
    comparisons are independent), not by comparisons sharing chunkings."""
    low = {"none": 0.32, "holm": 0.04, "bh": 0.04, "each": {f"p{i}": 0.035 for i in range(10)}}
    words = ch5_stats.null_numbers(low, 10, 200)
    assert words["sim_vs_theory"].startswith("低于理论值 40%")
    assert "不到名义上的 5%" in words["sim_vs_theory"] and "相差在误差之内" in words["sim_vs_theory"]
    assert "共用" not in words["sim_vs_theory"]
    assert abs(words["sim_indep"] - (1 - 0.965 ** 10)) < 1e-12 and abs(words["sim_each"] - 0.035) < 1e-12
    near = {**low, "none": 0.38, "each": {f"p{i}": 0.048 for i in range(10)}}
    assert ch5_stats.null_numbers(near, 10, 200)["sim_vs_theory"].startswith("和理论值 40% 的差在模拟误差")


def test_guard_example_widens_what_the_bootstrap_alone_calls():
    """5.6's guard paragraph: 6 against 0 of 30 passes Holm's first step on the bootstrap alone, not on
    the exact test; the printed interval is wider than the bootstrap's and reaches towards 0."""
    g = ch5_stats.guard_numbers(m=10)
    assert g["guard_boot_p"] < 0.005 < g["guard_p"] == g["guard_ci_p"]
    assert g["guard_holm_note"].endswith("自助法的 p 过得了，精确检验的过不了")
    boot_lo = float(g["guard_boot_ci"].split("[")[1].split("%")[0])
    lo = float(g["guard_ci"].split("[")[1].split("%")[0])
    assert 0 < lo < boot_lo and g["guard_widened"] and g["guard_discordant"] == "(6, 0)"
    assert g["guard_widened_word"] == "True"          # the prose shows the value as Python prints it, not 1
    assert g["guard_same_v"] == "未能区分" and g["guard_same_half"] > g["guard_margin"]


def test_wilson_and_two_sample():
    p, lo, hi = ch5_diagnose.wilson(np.zeros(10))
    assert p == 0 and lo == 0 and 0.2 < hi < 0.35                     # 0 of 10 still allows up to about 28%
    r = ch5_diagnose.two_sample(np.ones(20), np.zeros(20))
    assert r["diff"] == 1 and r["significant"]


def test_filter_before_ranking_never_loses_a_hit(lab, f512):
    tagged = ch5_ops.tag(f512)
    assert [c.text for c in tagged] == [c.text for c in f512]
    assert ch5_ops.group_of("billing/invoice.py") == "engineering" and ch5_ops.group_of("employee_handbook") == "hr"
    allowed = ch5_ops.users(lab)
    r = lab.evaluate(tagged, depth=len(tagged))
    before, _ = ch5_ops.filtered_hits(lab, r, tagged, allowed, "before")
    after, left = ch5_ops.filtered_hits(lab, r, tagged, allowed, "after")
    assert np.array_equal(after, r.per_question["hit"])              # the evidence is always readable by its asker
    assert np.all(before >= after) and before.mean() > after.mean()
    assert left.mean() < 5


def test_gate_demo_shows_why_the_gate_needs_the_budget(lab):
    rows, cols, numbers = ch5_ops.gate_demo(lab, _gate().gate)
    decisions = {row[0]: (row[2], row[4]) for row in rows}
    assert decisions["基线配置"] == ("通过", "通过")
    assert decisions["fixed 256"][1] == "拦下"
    assert decisions["auto，target=200"] == ("拦下", "通过")          # fixed k blocks a change that only delivers less
    assert decisions["auto，target=800"] == ("通过", "拦下")          # ... and misses one that delivers more
    assert numbers["gate_t800_m_word"] == "放过了它"                  # the baseline's own band misses it too
    baseline = _gate().load_baseline()
    if ch5_ops.file_note(baseline["config"]).startswith("钉的正是"):    # 5.9 says the file and the demo agree
        assert abs(numbers["gate_mean"] - baseline["mean"]) < 1e-12


def test_file_note_follows_the_repositorys_gate():
    pinned = _gate().load_baseline()["config"]
    pinned_final = (pinned.get("budget") == ch5_ops.BUDGET and pinned["strategy"] == ch5_ops.FINAL["strategy"]
                    and pinned["params"] == ch5_ops.FINAL["params"]
                    and bool(pinned.get("use_context")) == ch5_ops.FINAL["use_context"])
    assert ("钉的正是第 7 章的最终配置" in ch5_ops.file_note(pinned)) == pinned_final
    assert "一致" in ch5_ops.file_note({**ch5_ops.FINAL, "budget": ch5_ops.BUDGET, "k": 5, "metric": "hit"})
    older = {**pinned, "strategy": "auto", "params": {"prefix": True}, "budget": None, "use_context": True}
    assert "不是第 7 章最后采纳的那一个" in ch5_ops.file_note(older)          # an older pin is named as such


def test_c8_note_uses_the_sample_size_of_5_5(lab, two):
    c8 = ch5.claim_rows(lab, two, [], {"delta_small": 0.02, "n_2pt": 2521.4})[0]
    assert "2 个点" in c8.note and "2,521" in c8.note
