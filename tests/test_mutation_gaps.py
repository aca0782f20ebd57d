"""Behaviours a mutation run of evaluation/stats.py and evaluation/metrics.py found unguarded.

Every test here fails under at least one single mechanical change of the code (a flipped
comparison, a dropped line or term, a changed constant); the comments name the mutants.
"""
from __future__ import annotations

import itertools
import math

import pytest

from chunklab.core import Chunk, Document
from chunklab.evaluation.metrics import question_metrics
from chunklab.evaluation.stats import adjust_pvalues, bootstrap_ci, bootstrap_many, decide, paired_bootstrap
from chunklab.params import ParamError

NAN = float("nan")
DIGITS = Document("d", "0123456789")


def _chunk(doc, i, s, e):
    return Chunk(doc.id, i, s, e, doc.text[s:e])


def _one(m):
    """The metrics of a one-question run as plain floats."""
    return {name: float(v[0]) for name, v in m.items()}


# -- stats.py --------------------------------------------------------------------------------------

def test_bootstrap_ci_rejects_bad_n_and_level_naming_them():
    # Mutants: _N's low=1 -> low=0 (n=0 then fails inside numpy, not here); the int check dropped
    # (n=1.5 accepted); "0 < level < 1" -> "0 <= level" / "level <= 1" (level 0 / 1 accepted).
    with pytest.raises(ParamError, match=r"^n must be") as exc:
        bootstrap_ci([0.0, 1.0, 1.0], n=0)
    assert isinstance(exc.value, ValueError)
    with pytest.raises(TypeError, match=r"^n must be") as exc:
        bootstrap_ci([0.0, 1.0, 1.0], n=1.5)
    assert not isinstance(exc.value, ValueError)
    for level in (0, 1):
        with pytest.raises(ValueError, match=r"^level must be"):
            bootstrap_ci([0.0, 1.0, 1.0], level=level)


def test_bootstrap_many_with_an_all_nan_metric():
    # Mutants: the NaN-free test "not np.isnan(...).any()" -> "np.isnan(...).any()" (the NaN
    # columns go through the shared matrix product: "dead" gets n 30, "holes" a NaN mean) or
    # -> "not ....all()" ("holes" in the product: NaN mean and interval); the "if ok.all()" fast
    # path of _boot_means taken always (same); level not passed on to bootstrap_ci for the metrics
    # with NaNs (the partial-NaN metric's interval would be the 95% one).
    vals = {"clean": [1.0, 0.0, 1.0, 1.0, 0.0, 1.0] * 5, "dead": [NAN] * 30,
            "holes": [1.0, NAN, 0.0, 1.0, 1.0, NAN] * 5}
    r = bootstrap_many(vals, n=300, seed=2, level=0.5)
    assert list(r) == ["clean", "dead", "holes"]
    assert math.isnan(r["dead"]["mean"]) and math.isnan(r["dead"]["lo"]) and math.isnan(r["dead"]["hi"])
    assert r["dead"]["n"] == 0
    assert r["clean"] == pytest.approx(bootstrap_ci(vals["clean"], n=300, seed=2, level=0.5), rel=1e-12)
    assert r["clean"]["mean"] == pytest.approx(2 / 3) and r["clean"]["n"] == 30
    assert r["holes"] == bootstrap_ci(vals["holes"], n=300, seed=2, level=0.5)
    assert r["holes"] != bootstrap_ci(vals["holes"], n=300, seed=2)  # the level does matter here
    assert r["holes"]["mean"] == 0.75 and r["holes"]["n"] == 20


def test_paired_bootstrap_where_every_pair_has_a_nan():
    # Mutants: "isnan(a) | isnan(b)" -> "&" (pairs with one NaN kept: n == 4, NaN diff); the
    # len(d) == 0 early return dropped (numpy on an empty array); decide's NaN guard dropped
    # (a NaN result would read "opposite direction, not significant").
    r = paired_bootstrap([NAN, 1.0, NAN, 0.0], [1.0, NAN, NAN, NAN], n=200)
    assert math.isnan(r["diff"]) and math.isnan(r["lo"]) and math.isnan(r["hi"])
    assert r["n"] == 0 and r["significant"] is False and r["p"] == 1.0
    assert decide(r) == "not shown"
    assert decide(r, margin=0.02) == "not shown"


def test_paired_p_value_counts_ties_on_both_sides():
    # d = +1, -1, +1, ... : about 1 resample in 8 has a mean of exactly 0. Counted on both sides
    # (<= 0 and >= 0) each share is above 1/2, so p = min(1, 2 * share) = 1 exactly. Mutants:
    # "means <= 0" -> "< 0" or "means >= 0" -> "> 0" (p about 0.88); the min(1.0, ...) cap dropped
    # (p about 1.13).
    r = paired_bootstrap([1.0, 0.0] * 20, [0.0, 1.0] * 20)
    assert r["diff"] == 0.0 and not r["significant"]
    assert r["p"] == 1.0


@pytest.mark.parametrize("method", ["holm", "bh"])
@pytest.mark.parametrize("bad", [[0.01, NAN], [-0.01, 0.5], [0.5, 1.01]])
def test_adjust_pvalues_rejects_values_that_are_not_p_values(method, bad):
    # Mutants: each of the isnan / "< 0" / "> 1" checks dropped (NaN would sort last and come back
    # NaN; -0.01 and 1.01 would be scaled and clipped into something that looks like a p-value).
    with pytest.raises(ValueError, match=r"\bp\b"):
        adjust_pvalues(bad, method)


def test_margin_with_expect_minus_one():
    # A claim "a is no worse than b" where a *lower* diff is better (e.g. duplication): the worse
    # end is hi. Mutants: "worse_end = lo if expect > 0 else -hi" -> "... else hi" or "... else lo";
    # "best_end = ... else -lo" -> "else lo"; expect ignored (each case below reads differently).
    assert decide({"diff": 0.005, "lo": -0.01, "hi": 0.015}, expect=-1, margin=0.02) == "non-inferior"
    assert decide({"diff": 0.05, "lo": 0.03, "hi": 0.07, "significant": True}, expect=-1,
                  margin=0.02) == "contradicted"
    assert decide({"diff": 0.01, "lo": -0.01, "hi": 0.04}, expect=-1, margin=0.02) == "not shown"
    # the same intervals mirrored, with expect=+1, read the same
    assert decide({"diff": -0.005, "lo": -0.015, "hi": 0.01}, expect=1, margin=0.02) == "non-inferior"
    assert decide({"diff": -0.05, "lo": -0.07, "hi": -0.03, "significant": True}, expect=1,
                  margin=0.02) == "contradicted"
    assert decide({"diff": -0.01, "lo": -0.04, "hi": 0.01}, expect=1, margin=0.02) == "not shown"


# -- metrics.py (question_metrics) -----------------------------------------------------------------

def test_recall_with_chunks_nested_in_one_gold_span():
    # Mutants in _union_len: "prev" from the previous end instead of the running maximum "reach"
    # (a chunk nested in an earlier longer one is counted again: recall 1.1 or 0.75); the
    # np.maximum(0, ...) clip dropped (a nested chunk subtracts). Every ranking order is tried, so
    # the stable tie order of equal starts cannot hide either.
    cs = [_chunk(DIGITS, 0, 2, 4), _chunk(DIGITS, 1, 3, 5), _chunk(DIGITS, 2, 0, 10)]
    for order in itertools.permutations(range(3)):
        m = _one(question_metrics([list(order)], cs, [[("d", 0, 10)]], k=3, documents=[DIGITS]))
        assert m["recall"] == 1.0 and m["complete_union"] == 1.0, order
    # gold [1, 9); retrieved [2,4), [3,5), [2,6), [7,8): covered [2,6) + [7,8) = 5 of 8
    cs = [_chunk(DIGITS, 0, 2, 4), _chunk(DIGITS, 1, 3, 5), _chunk(DIGITS, 2, 2, 6), _chunk(DIGITS, 3, 7, 8)]
    for order in itertools.permutations(range(4)):
        m = _one(question_metrics([list(order)], cs, [[("d", 1, 9)]], k=4, documents=[DIGITS]))
        assert m["recall"] == 5 / 8 and m["complete_union"] == 0.0, order
        assert 0.0 <= m["recall"] <= 1.0


def test_short_ranking_is_padded_with_no_chunk():
    # Mutants: np.pad's constant_values=-1 -> 0 (chunk 0 retrieved twice more: n_retrieved 3,
    # retrieved_chars 10) or -> 1 (the gold chunk "retrieved": hit 1).
    cs = [_chunk(DIGITS, 0, 0, 3), _chunk(DIGITS, 1, 3, 6), _chunk(DIGITS, 2, 6, 10)]
    m = _one(question_metrics([[2]], cs, [[("d", 3, 6)]], k=3, documents=[DIGITS]))
    assert m["hit"] == 0.0 and m["mrr"] == 0.0 and m["recall"] == 0.0
    assert m["n_retrieved"] == 1.0
    assert m["retrieved_chars"] == 4.0  # len of chunk 2 only
    assert m["duplication"] == 0.0


# -- further gaps found by reading the two modules -------------------------------------------------

def test_p_value_is_never_zero():
    # Every resampled mean is 0.5 > 0, so p = 2 * (0 + 1) / (n + 1). Mutants: the "+ 1" of the
    # numerator dropped (p == 0), the "+ 1" of the denominator dropped (2 / n), the factor 2 dropped
    # (1 / (n + 1)). The existing tests only bound p by 0.06 when significant. (Not 0/1 outcomes:
    # those also get McNemar's guard, whose p is larger here.)
    r = paired_bootstrap([0.75] * 40, [0.25] * 40, n=500)
    assert r["significant"] and r["lo"] == r["hi"] == 0.5 and "discordant" not in r
    assert r["p"] == 2 / 501
    g = paired_bootstrap([1.0] * 40, [0.0] * 40, n=500)
    assert g["significant"] and g["p"] == 2 / 501 and g["lo"] < 1.0 == g["hi"]   # p: the larger of the two


def test_bootstrap_ci_ignores_nan_in_each_resample():
    # [1, NaN]: every resample's mean over its non-NaN draws is 1; about a quarter of the resamples
    # draw only the NaN and have no mean. Mutants: nanpercentile -> percentile (NaN lo/hi); the
    # per-resample denominator "w @ ok" -> len(v) (NaN draws counted as 0: lo 0); the
    # "if ok.all()" fast path taken always (NaN means).
    r = bootstrap_ci([1.0, NAN], n=400)
    assert r == {"mean": 1.0, "lo": 1.0, "hi": 1.0, "n": 1}
    # [0, 1] with two items: resamples are {0,0}, {0,1}, {1,1}, so the 95% interval is [0, 1].
    # Mutant in _resample_weights: rng.integers(0, m) -> (0, m - 1) (the last item never drawn:
    # hi 0). The "n" of a NaN-free input is its length.
    r = bootstrap_ci([0.0, 1.0])
    assert r["lo"] == 0.0 and r["hi"] == 1.0 and r["mean"] == 0.5 and r["n"] == 2


def test_margin_boundaries():
    # Mutants in decide's margin branch, each caught by one line:
    # "worse_end >= -margin" -> ">" (the worse end exactly at -margin is still non-inferior)
    assert decide({"diff": 0.0, "lo": -0.25, "hi": 0.25}, margin=0.25) == "non-inferior"
    assert decide({"diff": 0.0, "lo": -0.25, "hi": 0.25}, expect=-1, margin=0.25) == "non-inferior"
    # "best_end < 0" -> "<= 0" (an interval touching 0 is not wholly on the worse side)
    assert decide({"diff": -0.05, "lo": -0.1, "hi": 0.0, "significant": True}, margin=0.01) == "not shown"
    # "and result.get('significant', ...)" dropped: a corrected, non-significant result whose
    # marginal interval lies on the worse side is not "contradicted"
    assert decide({"diff": -0.05, "lo": -0.08, "hi": -0.02, "significant": False}, margin=0.01) == "not shown"
    # "if not margin >= 0" -> "if margin <= 0" (margin 0 is allowed) or -> "if margin < 0" (NaN let through)
    assert decide({"diff": 0.01, "lo": 0.0, "hi": 0.02}, margin=0) == "non-inferior"
    with pytest.raises(ValueError, match="margin"):
        decide({"diff": 0.01, "lo": 0.0, "hi": 0.02}, margin=NAN)


def test_metrics_with_padded_gold_spans_and_rankings_longer_than_k():
    # Two questions: q0 has two gold spans, q1 one, so q1's gold row is padded with (-2, -2).
    # Mutants: "(inter > 0) &" dropped from hit_pair (a padding span has length 0 and 2*0 >= 0:
    # q1 would always hit); "| ~gv" dropped from complete_single (the padding span is never
    # contained: q1 never complete); "gv &" dropped from the cite_distance mask (the
    # padding span at -2 is 2 from a chunk at 0: distance 2 instead of 5); the "gs - ce" term of
    # the gap dropped (gold *after* the top chunk: distance 0).
    cs = [_chunk(DIGITS, 0, 0, 2), _chunk(DIGITS, 1, 6, 10), _chunk(DIGITS, 2, 2, 6)]
    gold = [[("d", 0, 1), ("d", 7, 9)], [("d", 7, 9)]]
    m = question_metrics([[0, 2, 1], [0, 1, 2]], cs, gold, k=1, documents=[DIGITS])
    assert m["hit"].tolist() == [1.0, 0.0] and m["hit_strict"].tolist() == [1.0, 0.0]
    assert m["cite_at_1"].tolist() == [1.0, 0.0]
    assert m["cite_distance"].tolist() == [0.0, 5.0]
    m = question_metrics([[1, 0, 2], [1, 0, 2]], cs, gold, k=1, documents=[DIGITS])
    assert m["complete_single"].tolist() == [0.0, 1.0] and m["complete_union"].tolist() == [0.0, 1.0]
    assert m["recall"].tolist() == [2 / 3, 1.0]
    # Mutant: "R = R[:, :k]" dropped (the ranking's depth, not k, retrieved): k=1 of depth 3
    assert m["n_retrieved"].tolist() == [1.0, 1.0] and m["retrieved_chars"].tolist() == [4.0, 4.0]
    # Mutant: "R.max() >= len(cgs)" -> ">" (index 3 of 3 chunks then fails as an IndexError)
    with pytest.raises(ValueError, match="only 3 chunks"):
        question_metrics([[3], [0]], cs, gold, k=1, documents=[DIGITS])
