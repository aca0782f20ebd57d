"""Verdict words come from one function of the paired CI, corrected for many comparisons."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from chunklab.book.claims import (VERDICT_ZH, claim_row, claim_table, fmt_diff, shown_claims, verdict)
from chunklab.evaluation.stats import VERDICTS, adjust_pvalues, decide, paired_bootstrap, paired_many


def test_every_verdict_has_a_chinese_word():
    assert set(VERDICT_ZH) == set(VERDICTS)
    assert len(set(VERDICT_ZH.values())) == len(VERDICTS)


@pytest.mark.parametrize("diff,lo,hi,expect,word", [
    (0.05, 0.01, 0.09, 1, "成立"),
    (0.05, 0.01, 0.09, -1, "不成立（显著反向）"),
    (0.013, -0.002, 0.03, 1, "方向一致但不显著"),
    (-0.013, -0.03, 0.002, 1, "方向相反但不显著"),
    (0.0, 0.0, 0.0, 1, "无差异"),
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
    t = claim_table([claim_row("C9", "hit@5", "62% → 80%", fmt_diff(r), result=r),
                     claim_row("C10", "默认 overlap", "200", "200", holds=True),
                     claim_row("C7", "扫描件占比", "120/800", "—")])
    html = t._repr_html_()
    assert "方向一致但不显著" in html and "核对相符" in html and "背景数字，未复测" in html
    rows = shown_claims()[before:]
    assert [c for c, _, _ in rows] == ["C9", "C10", "C7"] and all(v == again for _, v, again in rows)
    r.update(lo=0.001, significant=True)  # a result changed after its table was shown: the check sees it
    assert shown_claims()[before][1:] == ("方向一致但不显著", "成立")
    with pytest.raises(TypeError, match="claim_row"):
        claim_table([("C9", "a", "b", "c", "d")])
    with pytest.raises(ValueError, match="not both"):
        claim_row("C9", "a", "b", "c", result=r, holds=True)
    with pytest.raises(ValueError, match="unknown claim"):
        claim_row("C31", "a", "b", "c")
