"""Chapter 5, sections 5.5-5.6: how many questions tell two chunkings apart, and many comparisons at once.

5.5 draws random subsets of n questions and records, for three paired differences, the mean width of
the paired bootstrap interval and how often it excludes 0. 5.6 builds "no difference" batches from
the chapter's own ten comparisons (each question's two results swapped with probability 1/2) and
counts how often at least one comparison is called, uncorrected, with Holm and with
Benjamini-Hochberg; then it corrects the ten real comparisons.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from ...evaluation import evaluate, paired_bootstrap
from ...evaluation.stats import EQUIVALENCE_MARGINS, adjust_pvalues, mcnemar_exact, paired_many
from ...retrieval import CorpusIndex
from ... import get_strategy
from ..claims import fmt_diff, verdict
from ...viz.fonts import use_cjk_font
from .ch5 import Lab

# --------------------------------------------------------------------------------------------
# 5.5 paired comparison and the number of questions
# --------------------------------------------------------------------------------------------


def md_vs_auto(r_md, r_auto) -> tuple[str, dict, dict]:
    """The two hit@5 with their own intervals, their paired difference; printed lines, the result, prose values."""
    lines = []
    for name, r in (("markdown", r_md), ("auto", r_auto)):
        a = r.aggregate["hit"]
        lines.append(f"{name:9s} 命中率（hit@5）= {a['mean']:.3f}  95% 区间 [{a['lo']:.3f}, {a['hi']:.3f}]")
    c = paired_bootstrap(r_md.per_question["hit"], r_auto.per_question["hit"], metric="hit")
    lines.append(f"配对差值 markdown − auto = {c['diff']:+.3f}  95% 区间 [{c['lo']:+.3f}, {c['hi']:+.3f}]  p = {c['p']:.3f}")
    a, b = r_md.aggregate["hit"], r_auto.aggregate["hit"]
    numbers = {"md_hit": a["mean"], "autop_hit": b["mean"], "md_diff": fmt_diff(c),
               "md_sig": "不含 0" if c["significant"] else "含 0", "md_v": verdict(c, expect=+1),
               "md_ci_overlap": "重叠" if a["lo"] <= b["hi"] and b["lo"] <= a["hi"] else "不重叠"}
    return "\n".join(lines), c, numbers


def law_results(laws, law_questions) -> dict:
    """k = 5 BM25 results of fixed 512, recursive 512 and fixed 2048 on the law questions."""
    index = CorpusIndex(laws.documents)
    out = {}
    for label, (name, params) in {"fixed 512": ("fixed", {"size": 512}), "recursive 512": ("recursive", {"target": 512}),
                                  "fixed 2048": ("fixed", {"size": 2048})}.items():
        chunks = get_strategy(name, **params).split_documents(laws.documents)
        out[label] = evaluate(laws.documents, chunks, law_questions, k=5, index=index)
    return out


SUBSETS = [25, 50, 100, 200]
#: The two differences the sample-size rule of thumb is worked for: a large step, and the book's
#: equivalence margin for hit (the smallest difference a decision cares about).
DELTA_BIG, DELTA_SMALL = 0.05, EQUIVALENCE_MARGINS["hit"]


@dataclass
class Power:
    rows: list
    columns: list
    figure: Any
    numbers: dict


def power_experiment(experiments: dict, sizes=SUBSETS, repeats: int = 200, n_boot: int = 1000, seed: int = 0) -> Power:
    """``experiments``: ``{name: (a, b)}`` per-question hits of two chunkings on the same questions.

    For each n of ``sizes`` (smaller than the set), ``repeats`` random subsets of n questions (without
    replacement): the mean width of the paired 95% interval, and how often it excludes 0. Where the full
    set decides the sign (its interval excludes 0) only calls in that direction count ("判出正确胜者");
    where the full set cannot tell, there is no right winner to find, and the share counts calls in
    either direction (each one says more than the full set can).
    """
    rng = np.random.default_rng(seed)
    full, sub = {}, {}
    for name, (a, b) in experiments.items():
        # the full set at the book's default resamples: the same interval 5.6 and chapter 7 print for the pair
        full[name] = paired_bootstrap(a, b, seed=0)
        sign = np.sign(full[name]["diff"]) if full[name]["significant"] else 0
        for n in sizes:
            widths, called = [], 0
            for _ in range(repeats):
                idx = rng.choice(len(a), size=n, replace=False)
                r = paired_bootstrap(a[idx], b[idx], n=n_boot, seed=0)
                widths.append(r["hi"] - r["lo"])
                called += r["significant"] and (sign == 0 or np.sign(r["diff"]) == sign)
            sub[name, n] = (float(np.mean(widths)), called / repeats)
    rows = [[name, fmt_diff(full[name]) + ("" if full[name]["significant"] else "（含 0）"),
             "判出正确胜者" if full[name]["significant"] else "区间不含 0（任一方向；全部题上也分不出）"]
            + [f"{100 * sub[name, n][0]:.1f} 个点 / {sub[name, n][1]:.0%}" for n in sizes] for name in experiments]
    cols = ["配对", "全部题上的差值 [95% 区间]", "比例数的是"] + [f"n = {n}" for n in sizes]

    use_cjk_font()
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for name in experiments:
        style = "-" if full[name]["significant"] else "--"
        axes[0].plot(sizes, [100 * sub[name, n][0] for n in sizes], style, marker="o", label=name)
        axes[1].plot(sizes, [sub[name, n][1] for n in sizes], style, marker="o", label=name)
    axes[0].set_xlabel("题数 n")
    axes[0].set_ylabel("配对差值 95% 区间的宽度（百分点）")
    axes[0].set_title("题越多，区间越窄")
    axes[1].set_xlabel("题数 n")
    axes[1].set_ylabel("区间不含 0 的比例（实线只数方向对的）")
    axes[1].set_ylim(0, 1.05)
    axes[1].set_title(f"每个 n 随机抽 {repeats} 次（虚线：全部题上也分不出）")
    for ax in axes:
        ax.set_xticks(sizes)
        ax.grid(alpha=0.3)
    axes[1].legend(fontsize=8)
    fig.tight_layout()
    plt.close(fig)

    k1, k2 = list(experiments)[:2]
    d1 = abs(full[k1]["diff"])
    a1, b1 = experiments[k1]
    sigma_d = float(np.std(a1 - b1))
    numbers = {"af256": fmt_diff(full[k1]), "af512": fmt_diff(full[k2]), "af256_diff": full[k1]["diff"],
               "af512_diff": full[k2]["diff"], "w25": sub[k1, 25][0], "w200": sub[k1, 200][0],
               "w25_note": "半宽就比差值本身还大" if sub[k1, 25][0] / 2 > d1 else "半宽已小于差值",
               "w200_note": "半宽小于差值" if sub[k1, 200][0] / 2 < d1 else "半宽仍不小于差值",
               "c50": sub[k1, 50][1], "c200": sub[k1, 200][1],
               "small_all_sig": "不含 0" if full[k2]["significant"] else "也含 0",
               "small_c200": sub[k2, 200][1], "small_c50": sub[k2, 50][1], "sigma_d": sigma_d,
               "delta_big": DELTA_BIG, "delta_small": DELTA_SMALL,
               "n_5pt": (2.8 * sigma_d / DELTA_BIG) ** 2, "n_2pt": (2.8 * sigma_d / DELTA_SMALL) ** 2,
               "power_repeats": repeats}
    return Power(rows, cols, fig, numbers)


# --------------------------------------------------------------------------------------------
# 5.6 many comparisons
# --------------------------------------------------------------------------------------------

METHOD_ZH = {"none": "不校正", "holm": "Holm", "bh": "Benjamini–Hochberg"}


def null_simulation(arrays: dict, batches: int = 200, n_boot: int = 500, seed: int = 0) -> dict:
    """Share of "no difference" batches (each question's A and B swapped with probability 1/2) in which
    at least one of the comparisons is called at 5%, uncorrected, with Holm and with BH; and under
    ``"each"``, per comparison, the share of batches in which that comparison alone is called
    (uncorrected). Each comparison draws its own swaps, so within a batch they are independent."""
    rng = np.random.default_rng(seed)
    any_call = {m: 0 for m in METHOD_ZH}
    each = {name: 0 for name in arrays}
    for _ in range(batches):
        null = {}
        for name, (a, b) in arrays.items():
            swap = rng.random(len(a)) < 0.5
            null[name] = (np.where(swap, b, a), np.where(swap, a, b))
        p = [r["p"] for r in paired_many(null, method="none", n=n_boot).values()]     # in the order of arrays
        for name, x in zip(arrays, p):
            each[name] += x < 0.05
        for m in any_call:
            any_call[m] += any(x < 0.05 for x in adjust_pvalues(p, m))
    return {**{m: v / batches for m, v in any_call.items()}, "each": {name: v / batches for name, v in each.items()}}


def null_numbers(share: dict, m: int, batches: int) -> dict:
    """Prose values of the simulation: the three shares, the theory 1 − 0.95^m, the simulation's noise,
    and (when the share is off the theory) each comparison's own false-alarm rate and what ``m``
    independent comparisons at those rates give."""
    fwer = 1 - 0.95 ** m
    half = 1.96 * np.sqrt(share["none"] * (1 - share["none"]) / batches)
    each = np.array(list(share["each"].values()), dtype=float)
    indep = 1 - float(np.prod(1 - each))        # m independent comparisons, each at its measured rate
    if abs(share["none"] - fwer) <= half:
        vs = f"和理论值 {fwer:.0%} 的差在模拟误差（{batches} 批，约 ±{half:.1%}）之内"
    else:
        low = each.mean() < 0.05
        vs = (f"{'低于' if share['none'] < fwer else '高于'}理论值 {fwer:.0%}，差得比模拟误差（约 ±{half:.1%}）还多。"
              f"这不是因为 {m} 组不独立（模拟里每组各自交换，{m} 组互相独立），而是每一组自己"
              + (f"误报得少：各组单独的误报率平均只有 {each.mean():.1%}，不到名义上的 5%。命中只有 0/1 两种结果，"
                 "精确检验本来就偏保守，0/1 指标的 p 值又取几种检验中最大的那个（本节后面细讲）" if low else
                 f"误报得多：各组单独的误报率平均是 {each.mean():.1%}，超过名义上的 5%")
              + f"。按各组实际的误报率算，{m} 组互相独立时至少误报一组的比例是 {indep:.1%}，"
              + ("和模拟的结果相差在误差之内" if abs(share["none"] - indep) <= half else "和模拟的结果仍差得比误差多"))
    return {"sim_none": share["none"], "sim_holm": share["holm"], "sim_bh": share["bh"],
            "sim_se": 1.96 * np.sqrt(0.05 * 0.95 / batches), "sim_n": batches, "sim_vs_theory": vs,
            "sim_each": float(each.mean()), "sim_indep": indep, "holm_first": 1 - 0.05 / m}


def guard_numbers(n: int = 30, wins: int = 6, m: int = 10) -> dict:
    """Prose values of the small-sample guard on two made-up comparisons of ``n`` questions:
    ``wins`` questions only A hits (none only B), and A identical to B; ``m``: how many comparisons
    the chapter corrects together (for what Holm asks of the smallest p).

    >>> g = guard_numbers()
    >>> round(g["guard_p"], 3), g["guard_widened"], g["guard_same_v"], g["guard_boot_p"] < 0.05 / 10 < g["guard_p"]
    (0.031, True, '未能区分', True)
    """
    a, zero = [1] * wins + [0] * (n - wins), [0] * n
    six = paired_bootstrap(a, zero, metric="hit")
    # each question its own cluster: the plain bootstrap, without the 0/1 guard (which needs no clusters)
    boot = paired_bootstrap(a, zero, clusters=np.arange(n))
    same = paired_bootstrap(a, a, metric="hit")
    exact = mcnemar_exact(a, zero)["p"]
    line = 0.05 / m
    word = lambda p: "过得了" if p < line else "过不了"
    return {"guard_n": n, "guard_wins": wins, "guard_miss_all": ((n - wins) / n) ** n,
            "guard_p": exact, "guard_ci": fmt_diff(six), "guard_widened": six["widened"], "guard_widened_word": str(six["widened"]),
            "guard_ci_p": six["p"], "guard_discordant": str(six["discordant"]),
            "guard_boot_ci": fmt_diff(boot), "guard_boot_p": boot["p"],
            "guard_holm_note": (f"本章这样 {m} 组一起按 Holm 校正时，p 最小的一组也要小于 {line:.3g}："
                                f"自助法的 p {word(boot['p'])}，精确检验的{word(exact)}"),
            "guard_same_half": same["hi"], "guard_same_v": verdict(same),
            "guard_margin": EQUIVALENCE_MARGINS["hit"]}


def many_comparisons(pairs: dict) -> tuple[dict, list, list]:
    """``pairs``: ``{name: (result A, result B, metric)}``. Uncorrected, Holm and BH; table rows and columns."""
    arrays = {name: (a.per_question[m], b.per_question[m]) for name, (a, b, m) in pairs.items()}
    many = {method: paired_many(arrays, method=method) for method in ("none", "holm", "bh")}
    for method in many:
        for name in pairs:
            many[method][name]["metric"] = pairs[name][2]          # hit or mrr: the metric each row measures
    yes = lambda r: "（显著）" if r["significant"] else ""
    rows = [[name, fmt_diff(many["none"][name]) + yes(many["none"][name]), f"{many['none'][name]['p']:.4g}"]
            + [x for m in ("holm", "bh") for x in (f"{many[m][name]['p_adj']:.4g}", fmt_diff(many[m][name]) + yes(many[m][name]))]
            for name in pairs]
    cols = ["比较（A − B）", "单独看：差值 [95% 区间]", "p", "Holm 校正后 p", "Holm：做判定的区间", "BH 校正后 p", "BH：做判定的区间"]
    return many, rows, cols


def many_numbers(many: dict, md_name: str) -> dict:
    sig = {m: [n for n in many[m] if many[m][n]["significant"]] for m in many}
    lost = [n for n in sig["none"] if n not in sig["holm"]]
    return {"mc_none": len(sig["none"]), "mc_holm": len(sig["holm"]), "mc_bh": len(sig["bh"]),
            "mc_lost": "、".join(f"“{n}”" for n in lost) if lost else "没有一组",
            "md_holm_p": many["holm"][md_name]["p_adj"], "md_holm_v": verdict(many["holm"][md_name], expect=+1),
            "eq_margin": EQUIVALENCE_MARGINS["hit"]}
