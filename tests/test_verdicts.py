"""Verdict words come from one function of the paired CI, corrected for many comparisons."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from chunklab.book.claims import (VERDICT_ZH, claim_row, claim_table, fmt_diff, shown_claims, shown_criteria,
                                  verdict)
from chunklab.book.criteria import KINDS, REGISTER, Criterion, register_rows
from chunklab.evaluation.stats import (mcnemar_exact, VERDICTS, adjust_pvalues, bootstrap_ci, bootstrap_many, deciding_levels, decide,
                                       paired_bootstrap, paired_many)


def test_every_verdict_has_a_chinese_word():
    assert set(VERDICT_ZH) == set(VERDICTS)
    assert len(set(VERDICT_ZH.values())) == len(VERDICTS)


@pytest.mark.parametrize("diff,lo,hi,expect,word", [
    (0.05, 0.01, 0.09, 1, "成立"),
    (0.05, 0.01, 0.09, -1, "不成立（显著反向）"),
    (0.013, -0.002, 0.03, 1, "方向一致但不显著"),
    (-0.013, -0.03, 0.002, 1, "方向相反但不显著"),
    (0.0, 0.0, 0.0, 1, "等效"),
    (0.0, -0.081, 0.081, 1, "未能区分"),
])
def test_verdict_from_the_interval(diff, lo, hi, expect, word):
    assert verdict({"diff": diff, "lo": lo, "hi": hi}, expect=expect) == word


def test_margin_means_no_worse():
    # C3 on the policy subset: -0.9% [-2.2%, 0.0%] does not show "no loss" within 1 point
    r = {"diff": -0.009, "lo": -0.022, "hi": 0.0, "significant": False}
    assert verdict(r, margin=0.01) == "未能确认"
    assert verdict(r, margin=0.03) == "成立（非劣）"
    assert verdict({"diff": -0.05, "lo": -0.08, "hi": -0.02, "significant": True}, margin=0.01) == "不成立（显著反向）"
    with pytest.raises(ValueError, match="margin"):
        decide(r, margin=-1)
    with pytest.raises(ValueError, match="expect"):
        decide(r, expect=0)


def test_corrected_significance_decides():
    r = {"diff": 0.004, "lo": 0.002, "hi": 0.006, "significant": False, "significant_marginal": True}
    assert verdict(r) == "方向一致但不显著"


def test_p_value_agrees_with_the_interval():
    rng = np.random.default_rng(1)
    for shift in (0.0, 0.05, 0.1, 0.2):
        a = (rng.random(300) < 0.5 + shift).astype(float)
        b = (rng.random(300) < 0.5).astype(float)
        r = paired_bootstrap(a, b, n=2000)
        if r["significant"]:
            assert r["p"] <= 0.06
        else:
            assert r["p"] >= 0.04


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=30))
def test_adjustments_are_ordered_and_bounded(ps):
    holm, bh = adjust_pvalues(ps, "holm"), adjust_pvalues(ps, "bh")
    for p, h, b in zip(ps, holm, bh):
        assert p - 1e-12 <= b <= h + 1e-12 <= 1 + 1e-12
    order = np.argsort(ps, kind="stable")
    for seq in (holm, bh):  # monotone in the raw p-values
        s = np.asarray(seq)[order]
        assert np.all(np.diff(s) >= -1e-12)


def test_paired_many_corrects():
    rng = np.random.default_rng(0)
    base = (rng.random(200) < 0.5).astype(float)
    pairs = {f"c{i}": ((rng.random(200) < 0.53).astype(float), base) for i in range(10)}
    res = paired_many(pairs, "holm")
    assert all(r["m"] == 10 and r["p_adj"] >= r["p"] for r in res.values())
    assert sum(r["significant"] for r in res.values()) <= sum(r["significant_marginal"] for r in res.values())
    with pytest.raises(ValueError, match="method"):
        paired_many(pairs, "bonferoni")


def test_claim_rows_compute_their_verdict_and_are_recorded():
    before = len(shown_claims())
    r = {"diff": 0.013, "lo": -0.002, "hi": 0.03, "significant": False}
    t = claim_table([claim_row("C9", "hit@5", "62% → 80%", fmt_diff(r), part="hit", result=r),
                     claim_row("C10", "默认 overlap", "200", "200", holds=True),
                     claim_row("C7", "扫描件占比", "120/800", "—")])
    html = t._repr_html_()
    # C9 is declared a magnitude claim (+18 points): an interval ending at +3 rules the size out
    assert "方向一致但不显著，幅度不符" in html and "核对相符" in html and "背景数字，未复测" in html
    rows = shown_claims()[before:]
    assert [c for c, _, _ in rows] == ["C9", "C10", "C7"] and all(v == again for _, v, again in rows)
    assert shown_criteria()[before:] == [("C9", "hit", "magnitude"), ("C10", "", "check"), ("C7", "", "background")]
    r.update(lo=0.001, significant=True)  # a result changed after its table was shown: the check sees it
    assert shown_claims()[before][1:] == ("方向一致但不显著，幅度不符", "成立，幅度不符")
    with pytest.raises(TypeError, match="claim_row"):
        claim_table([("C9", "a", "b", "c", "d")])
    with pytest.raises(ValueError, match="give result=, not holds="):
        claim_row("C9", "a", "b", "c", part="hit", result=r, holds=True)
    with pytest.raises(ValueError, match="unknown claim"):
        claim_row("C31", "a", "b", "c")


def test_a_claim_row_cannot_bring_its_own_rule():
    r = {"diff": 0.05, "lo": 0.01, "hi": 0.09, "significant": True}
    with pytest.raises(TypeError):
        claim_row("C11", "a", "b", "c", part="10%", result=r, expect=-1)  # no expect/margin arguments
    with pytest.raises(ValueError, match="declared parts: '10%', '50%'"):
        claim_row("C11", "a", "b", "c", result=r)
    with pytest.raises(ValueError, match="criterion is level .*give value=, not result="):
        claim_row("C15", "a", "b", "c", result=r)
    with pytest.raises(ValueError, match="criterion is background"):
        claim_row("C13", "a", "b", "c", holds=True)
    # the declared direction is used: C11/50% predicts a *lower* hit
    assert claim_row("C11", "a", "b", "c", part="50%", result=r).verdict == "不成立（显著反向）"
    # level: within the declared tolerance of the article's figure, or not
    assert claim_row("C21", "a", "b", "c", part="fixed", value=0.186 * 1.19).verdict == "同一水平"
    assert claim_row("C21", "a", "b", "c", part="fixed", value=0.186 * 1.21).verdict == "水平不符"
    # non-inferiority with the declared 2-point margin
    c3 = {"diff": -0.009, "lo": -0.019, "hi": 0.0, "significant": False}
    assert claim_row("C3", "a", "b", "c", part="no loss", result=c3).verdict == "成立（非劣）"
    assert claim_row("C3", "a", "b", "c", part="no loss", result={**c3, "lo": -0.021}).verdict == "未能确认"


def test_the_register_covers_every_claim_and_reads_on_its_own():
    ids = {cid for cid, _ in REGISTER}
    assert ids == {f"C{i}" for i in range(1, 31)}
    for (cid, part), c in REGISTER.items():
        assert (c.cid, c.part) == (cid, part) and c.kind in KINDS and c.why and c.metric and c.ruler
        assert c.rule and "None" not in c.rule
    rows = register_rows()
    assert len(rows) == len(REGISTER) and [r[0] for r in rows][:2] == ["C1", "C1"]
    with pytest.raises(ValueError, match="needs claimed"):
        Criterion("C99", "", "magnitude", "hit", "k=5", "why")
    with pytest.raises(ValueError, match="kind must be one of"):
        Criterion("C99", "", "vibes", "hit", "k=5", "why")


@pytest.mark.parametrize("result,kw,code", [
    # a zero with a wide interval says nothing; inside the declared margin it is equivalence
    ({"diff": 0.0, "lo": -0.109, "hi": 0.109, "metric": "hit"}, {}, "inconclusive"),
    ({"diff": 0.0, "lo": -0.0199, "hi": 0.0199, "metric": "hit"}, {}, "equivalent"),
    ({"diff": 0.0, "lo": -0.0201, "hi": 0.0199, "metric": "hit"}, {}, "inconclusive"),
    ({"diff": 0.004, "lo": -0.011, "hi": 0.019, "metric": "mrr"}, {}, "equivalent"),
    ({"diff": 0.004, "lo": -0.011, "hi": 0.019}, {}, "same direction, not significant"),  # no metric: no margin
    ({"diff": 0.0, "lo": 0.0, "hi": 0.0}, {}, "equivalent"),               # identical on every question
    ({"diff": 0.004, "lo": -0.011, "hi": 0.019}, {"equivalence": 0.02}, "equivalent"),
    # significance decides before equivalence
    ({"diff": 0.01, "lo": 0.005, "hi": 0.015, "metric": "hit"}, {}, "supported"),
    # magnitude: the claimed size inside or outside the interval
    ({"diff": 0.064, "lo": 0.0, "hi": 0.149}, {"claimed": 0.34}, "same direction, size ruled out"),
    ({"diff": 0.064, "lo": 0.0, "hi": 0.149}, {"claimed": 0.14}, "same direction, not significant"),
    ({"diff": 0.2, "lo": 0.1, "hi": 0.3, "significant": True}, {"claimed": 0.34}, "supported, size ruled out"),
    ({"diff": 0.2, "lo": 0.1, "hi": 0.3, "significant": True}, {"claimed": 0.05}, "supported, size ruled out"),
    ({"diff": 0.2, "lo": 0.1, "hi": 0.3, "significant": True}, {"claimed": 0.3}, "supported"),
    ({"diff": -1.2, "lo": -1.8, "hi": -0.6, "significant": True}, {"claimed": -2.0, "expect": -1},
     "supported, size ruled out"),
    ({"diff": -0.05, "lo": -0.09, "hi": -0.01, "significant": True}, {"claimed": 0.34}, "contradicted"),
    # non-inferiority with expect=-1 (a higher diff is worse)
    ({"diff": 0.005, "lo": -0.01, "hi": 0.015}, {"margin": 0.02, "expect": -1}, "non-inferior"),
    ({"diff": 0.05, "lo": 0.03, "hi": 0.07, "significant": True}, {"margin": 0.02, "expect": -1}, "contradicted"),
    ({"diff": 0.01, "lo": -0.01, "hi": 0.04}, {"margin": 0.02, "expect": -1}, "not shown"),
])
def test_decide_cases(result, kw, code):
    assert decide(result, **kw) == code


def test_decide_refuses_a_claimed_size_against_its_own_direction():
    with pytest.raises(ValueError, match="claimed"):
        decide({"diff": 0.1, "lo": 0.0, "hi": 0.2}, claimed=-0.3)
    with pytest.raises(ValueError, match="equivalence"):
        decide({"diff": 0.1, "lo": 0.0, "hi": 0.2}, equivalence=-0.1)


def test_the_interval_printed_is_the_one_that_decided():
    rng = np.random.default_rng(3)
    base = (rng.random(150) < 0.5).astype(float)
    pairs = {f"c{i}": ((rng.random(150) < 0.5 + 0.03 * i).astype(float), base) for i in range(6)}
    for method in ("holm", "bh"):
        res = paired_many(pairs, method, n=1000, metric="hit")
        for r in res.values():
            assert r["significant"] == (r["lo"] > 0 or r["hi"] < 0)
            assert r["lo"] <= r["lo_marginal"] <= r["hi_marginal"] <= r["hi"]   # never narrower
            assert r["level"] >= 0.95 and r["metric"] == "hit"
            assert r["significant"] <= r["significant_marginal"]
            text = fmt_diff(r)
            assert (("区间" in text) == (abs(r["level"] - 0.95) > 1e-9))
    none = paired_many(pairs, "none", n=1000)
    assert all(r["lo"] == r["lo_marginal"] and r["level"] == 0.95 for r in none.values())


def test_deciding_levels_follow_the_step_down():
    # Holm stops at the second comparison: it and every later one are drawn at the stopping level
    assert deciding_levels([0.001, 0.03, 0.04], "holm") == pytest.approx([0.05 / 3, 0.025, 0.025])
    assert deciding_levels([0.04, 0.001, 0.03], "holm") == pytest.approx([0.025, 0.05 / 3, 0.025])
    assert deciding_levels([0.001, 0.002, 0.004], "holm") == pytest.approx([0.05 / 3, 0.025, 0.05])
    assert deciding_levels([0.2, 0.3], "bh") == pytest.approx([0.025, 0.025])          # none rejected
    assert deciding_levels([0.01, 0.3], "bh") == pytest.approx([0.025, 0.025])         # one of two
    assert deciding_levels([0.01, 0.3], "none") == [0.05, 0.05]
    with pytest.raises(ValueError, match="method"):
        deciding_levels([0.1], "bonferroni")


def test_cluster_bootstrap_widens_the_interval_of_clustered_rates():
    # 20 documents, each all-cut or all-whole: 200 chunks are really 20 observations
    flags = np.repeat((np.arange(20) % 2).astype(float), 10)
    docs = np.repeat(np.arange(20), 10)
    iid = bootstrap_ci(flags, n=2000)
    clu = bootstrap_ci(flags, n=2000, clusters=docs)
    assert clu["mean"] == iid["mean"] == 0.5 and clu["clusters"] == 20
    assert (clu["hi"] - clu["lo"]) > 2 * (iid["hi"] - iid["lo"])
    pr = paired_bootstrap(flags, np.zeros(200), n=2000, clusters=docs)
    assert pr["clusters"] == 20 and pr["hi"] - pr["lo"] > 2 * (iid["hi"] - iid["lo"])
    with pytest.raises(ValueError, match="clusters"):
        bootstrap_ci(flags, clusters=docs[:-1])


def test_fmt_diff_never_shows_a_nonzero_as_zero():
    assert fmt_diff({"diff": 0.0, "lo": 0.0, "hi": 0.0}) == "0.0% [0.0%, 0.0%]"
    assert fmt_diff({"diff": 0.0004, "lo": -0.0003, "hi": 0.01}) == "+0.04% [-0.03%, +1.00%]"
    assert fmt_diff({"diff": 0.00048, "lo": 0.00013, "hi": 0.001}) == "+0.05% [+0.01%, +0.10%]"
    assert fmt_diff({"diff": 0.0004, "lo": 0.0, "hi": 0.001}, pct=False) == "+0.0004 [0.0000, +0.0010]"
    assert fmt_diff({"diff": 0.1, "lo": 0.05, "hi": 0.15}) == "+10.0% [+5.0%, +15.0%]"


def test_bootstrap_arguments_found_by_the_mutation_run():
    # a numpy float is a level like any other; metrics of different lengths are refused even with NaNs
    assert bootstrap_ci([1, 0, 1], level=np.float32(0.9))["n"] == 3
    with pytest.raises(ValueError, match="one value per question"):
        bootstrap_many({"a": [1, 0, 1], "b": [1, float("nan")]})
    with pytest.raises(ValueError, match="level"):
        paired_bootstrap([1, 0], [0, 1], level=1.0)


def test_paired_many_takes_a_metric_per_comparison():
    a, b = [1, 0] * 300, [1, 0] * 300
    res = paired_many({"h": (a, b), "r": (a, b)}, metric={"h": "hit", "r": "retrieved_chars"})
    assert res["h"]["metric"] == "hit" and res["r"]["metric"] == "retrieved_chars"
    assert decide(res["h"]) == "equivalent"
    with pytest.raises(ValueError, match="one metric for every comparison"):
        paired_many({"h": (a, b), "r": (a, b)}, metric={"h": "hit"})


def test_float_noise_is_no_difference_and_names_no_winner():
    a = np.array([0.1 + 0.2, 0.5, 0.7])
    b = np.array([0.3, 0.5, 0.7])          # 0.1 + 0.2 - 0.3 == 5.5e-17
    r = paired_bootstrap(a, b, metric="iou")
    assert r["diff"] == 0.0 and r["lo"] == r["hi"] == 0.0 and not r["significant"] and r["p"] == 1.0


def test_interval_and_p_value_agree_on_significance():
    # The deciding interval's ends are resampled means (no interpolation): with few questions
    # that differ (the ch4 prefix case: 5 of 55, all one way), interpolation put the lower end
    # above 0 while the p-value said "not significant".
    rng = np.random.default_rng(7)
    for trial in range(300):
        n = int(rng.integers(20, 120))
        k = int(rng.integers(1, 12))
        a = np.zeros(n)
        b = np.zeros(n)
        flips = rng.choice(n, size=k, replace=False)
        a[flips[: int(rng.integers(0, k + 1))]] = 1.0
        b[flips] = 1.0 - a[flips]
        r = paired_bootstrap(a, b, n=2000, seed=trial)
        assert r["significant"] == (r["p"] < 0.05), (trial, r)
    # a case where an interpolated end excluded 0 while p = 0.026 > 0.025 (4 of 21 questions differ)
    four = np.r_[np.ones(4), np.zeros(17)]
    r = paired_bootstrap(four, np.zeros(21), n=2000, seed=2, level=0.975)
    assert r["p"] > 0.025 and r["lo"] <= 0 and not r["significant"]
    five_of_55 = np.r_[np.ones(5), np.zeros(50)]
    r = paired_many({"prefix": (five_of_55, np.zeros(55)), "other": (five_of_55, np.zeros(55))}, "holm")
    for x in r.values():
        assert x["significant"] == (x["p_adj"] < 0.05)


# --- the small-sample guard for 0/1 outcomes (few discordant questions) -----------------------

def _brute_sign_p(up, down):
    from math import comb
    n = up + down
    return 1.0 if n == 0 else min(1.0, 2 * sum(comb(n, i) for i in range(min(up, down) + 1)) / 2 ** n)


@pytest.mark.parametrize("up,down", [(0, 0), (1, 0), (5, 0), (6, 0), (9, 1), (7, 3), (20, 20), (40, 12)])
def test_mcnemar_exact_is_the_binomial_sign_test(up, down):
    a = [1] * up + [0] * down + [1] * 5 + [0] * 5
    b = [0] * up + [1] * down + [1] * 5 + [0] * 5
    r = mcnemar_exact(a, b)
    assert (r["up"], r["down"]) == (up, down)
    assert r["p"] == pytest.approx(_brute_sign_p(up, down), rel=1e-9)
    with pytest.raises(ValueError, match="0/1"):
        mcnemar_exact([0.5, 1], [0, 1])


def test_few_discordant_questions_do_not_decide_more_than_mcnemar_allows():
    # 6 against 0 out of 30: a bootstrap never resamples to 0 (p ~ 0.001), the exact test says 0.031
    a, b = [1] * 6 + [0] * 24, [0] * 30
    alone = paired_bootstrap(a, b, metric="hit")
    assert alone["significant"] and alone["p"] == pytest.approx(_brute_sign_p(6, 0))
    # beside a second comparison Holm asks for p < 0.025 first: the exact test does not get there
    res = paired_many({"six": (a, b), "none": ([1, 0] * 15, [1, 0] * 15)}, metric="hit")
    assert not res["six"]["significant"] and res["six"]["lo"] <= 0 <= res["six"]["hi"]
    assert res["six"]["widened"] and decide(res["six"]) == "same direction, not significant"
    # 5 against 0 is not significant even alone (exact p = 0.0625)
    assert not paired_bootstrap([1] * 5 + [0] * 25, [0] * 30, metric="hit")["significant"]


@pytest.mark.parametrize("n,verdict", [(30, "inconclusive"), (100, "inconclusive"), (600, "equivalent")])
def test_identical_outcomes_are_equivalent_only_on_enough_questions(n, verdict):
    a = ([1, 0] * n)[:n]
    r = paired_bootstrap(a, a, metric="hit")
    assert r["diff"] == 0 and r["lo"] < 0 < r["hi"] and r["discordant"] == (0, 0)
    assert decide(r) == verdict


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1)), min_size=1, max_size=80),
       st.sampled_from([0.9, 0.95, 0.99]))
def test_guarded_interval_decides_like_its_p_value_and_contains_the_exact_one(pairs, level):
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    r = paired_bootstrap(a, b, n=400, level=level, metric="hit")
    ex = mcnemar_exact(a, b)
    assert r["discordant"] == (ex["up"], ex["down"])
    assert r["p"] >= ex["p"] - 1e-12                  # never surer than the exact test
    if r["significant"]:
        assert ex["p"] < 1 - level + 1e-9
    assert r["lo"] <= r["diff"] <= r["hi"]
