"""Chapter 5, section 5.4: fixed k against a fixed context budget (claim C26).

Three fixed windows (256, 512, 2048 characters) under three retrievers (BM25, USE vectors, their RRF
hybrid), each retrieved once 60 deep; every budget point is filled from that one ranking by
:func:`chunklab.evaluation.metrics.select_budget` (the last chunk cut to the room left). Then the
bias of fixed k towards big chunks is tested directly (2048 − 512 under k = 5 minus the same under the
budget), and the two chunkings chapter 1 embedded with e5 are compared on both rulers.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from ...evaluation import bootstrap_ci, question_metrics, select_budget
from ...evaluation.stats import paired_many
from ..claims import claim_row, fmt_diff, verdict
from ...viz.fonts import use_cjk_font
from .ch5 import Lab

SIZES = {"fixed 256": 256, "fixed 512": 512, "fixed 2048": 2048}
BUDGETS = [500, 1000, 1500, 2000, 2500, 3000, 4000, 6000, 8000, 12000]
ENGINES = {"BM25": {"engine": "bm25"},
           "向量（USE）": {"engine": "dense", "embedder": "use-multilingual"},
           "混合（BM25 + USE）": {"engine": "hybrid", "embedder": "use-multilingual"}}
ENG_KEY = {"BM25": "bm25", "向量（USE）": "use", "混合（BM25 + USE）": "hyb"}
#: The pair the register declares for C26 (chapter 6 tests the same pair).
BIG, SMALL = "fixed 2048", "fixed 512"


def within(lab: Lab, result, chunks, budget: int):
    """Per question: hit, delivered characters and pieces of ``result``'s ranking filled into a
    character budget, the last chunk cut to the room left (as ``evaluate(..., budget=)``; no new retrieval)."""
    bounds = lab.layout.chunk_bounds(chunks)
    picked, ends = select_budget(result.ranked, chunks, budget, layout=lab.layout, bounds=bounds, return_ends=True)
    m = question_metrics(picked, chunks, lab.gold, k=picked.shape[1], layout=lab.layout, dedup=True,
                         bounds=bounds, ends=ends)
    return m["hit"], m["retrieved_chars"], (picked >= 0).sum(axis=1)


def size_chunks(lab: Lab, f512) -> tuple[dict, int, int]:
    """The three windows' chunks (``f512`` reused), the smallest budget that fits every chunk, and
    the first budget of :data:`BUDGETS` at or above it."""
    chunks = {label: (f512 if size == 512 else lab.chunk("fixed", size=size)[0]) for label, size in SIZES.items()}
    b_min = max(len(c) for cs in chunks.values() for c in cs)
    return chunks, b_min, min(b for b in BUDGETS if b >= b_min)


@dataclass
class Curves:
    """``runs[engine, chunking]``: the k = 5 result (ranked 60 deep); ``curve[engine, chunking, budget]``:
    (per-question hit, its interval, mean delivered characters, mean pieces)."""

    chunks: dict
    runs: dict
    curve: dict
    b_min: int
    b_star: int


def budget_curves(lab: Lab, chunks: dict, b_min: int, b_star: int) -> Curves:
    runs, curve = {}, {}
    for eng, opts in ENGINES.items():
        for label, cs in chunks.items():
            r = lab.evaluate(cs, depth=60, n_boot=1000, **opts)
            runs[eng, label] = r
            for b in BUDGETS:
                h, chars, pieces = within(lab, r, cs, b)
                curve[eng, label, b] = (h, bootstrap_ci(h, n=500, seed=0), float(chars.mean()), float(pieces.mean()))
    return Curves(chunks, runs, curve, b_min, b_star)


def curve_figure(cv: Curves, n_questions: int):
    """Same-budget hit against the budget, one panel per retriever, with 95% bands."""
    use_cjk_font()
    fig, axes = plt.subplots(1, 3, figsize=(13, 4), sharey=True)
    colours = dict(zip(SIZES, ["#2563eb", "#16a34a", "#dc2626"]))
    for ax, eng in zip(axes, ENGINES):
        for label in SIZES:
            ci = [cv.curve[eng, label, b][1] for b in BUDGETS]
            ax.plot(BUDGETS, [c["mean"] for c in ci], marker="o", ms=3, color=colours[label], label=label)
            ax.fill_between(BUDGETS, [c["lo"] for c in ci], [c["hi"] for c in ci], color=colours[label], alpha=0.15)
        ax.axvspan(0, cv.b_min, color="#9ca3af", alpha=0.2, lw=0)
        ax.axvline(cv.b_star, color="black", lw=0.8, ls="--")
        ax.set_xscale("log")
        ax.set_xticks([500, 1000, 2000, 4000, 8000], ["500", "1000", "2000", "4000", "8000"])
        ax.minorticks_off()
        ax.set_title(eng)
        ax.set_xlabel("上下文预算（字符，对数刻度）")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("同预算命中率（带 95% 区间）")
    axes[0].legend(fontsize=8, loc="lower right")
    fig.suptitle(f"小北，{n_questions} 题；灰色：预算小于最长的块（{cv.b_min} 字，最大的块被截短）；虚线：{cv.b_star} 字")
    fig.tight_layout()
    plt.close(fig)          # shown once, as the cell's value
    return fig


def curve_rows(cv: Curves) -> tuple[list, list]:
    """Every point of the figure: retriever, chunking, budget, same-budget hit [interval], delivered characters."""
    rows = [[eng, label, f"{b:,}", f"{cv.curve[eng, label, b][1]['mean']:.1%} [{cv.curve[eng, label, b][1]['lo']:.1%}, "
             f"{cv.curve[eng, label, b][1]['hi']:.1%}]", f"{cv.curve[eng, label, b][2]:,.0f}"]
            for eng in ENGINES for label in SIZES for b in BUDGETS]
    return rows, ["检索器", "切法", "预算（字）", "同预算命中率 [95% 区间]", "平均交出字数"]


def ranks(cv: Curves) -> dict:
    """``{engine: (chunkings by hit@5, chunkings by same-budget hit at b_star)}``, best first."""
    return {eng: (sorted(SIZES, key=lambda l: -cv.runs[eng, l].aggregate["hit"]["mean"]),
                  sorted(SIZES, key=lambda l: -cv.curve[eng, l, cv.b_star][1]["mean"])) for eng in ENGINES}


def rank_table(cv: Curves) -> tuple[list, list]:
    """k = 5 against the budget b_star: hit, delivered characters and rank of each chunking."""
    rk, rows = ranks(cv), []
    for eng in ENGINES:
        by_k, by_b = rk[eng]
        for label in SIZES:
            r, (_, ci, chars, pieces) = cv.runs[eng, label], cv.curve[eng, label, cv.b_star]
            rows.append([eng, f"`{label}`", f"{r.aggregate['hit']['mean']:.1%}",
                         f"{r.aggregate['retrieved_chars']['mean']:,.0f}", by_k.index(label) + 1, f"{ci['mean']:.1%}",
                         f"{chars:,.0f}", f"{pieces:.1f}", by_b.index(label) + 1])
    return rows, ["检索器", "切法", "命中率（hit@5）", "k=5 时交出字数", "名次", f"同预算命中率（{cv.b_star} 字）",
                  "预算内交出字数", "预算内块数（含截短的一块）", "名次"]


def _delivered(cv: Curves, eng: str, label: str, ruler: str) -> float:
    if ruler == "k":
        return cv.runs[eng, label].aggregate["retrieved_chars"]["mean"]
    return cv.curve[eng, label, cv.b_star][2]


def six_gaps(cv: Curves) -> dict:
    """2048 − 512 under each ruler (``"k"``, ``"b"``) and retriever: six comparisons, one Holm family."""
    per_q = {"k": lambda eng, l: cv.runs[eng, l].per_question["hit"], "b": lambda eng, l: cv.curve[eng, l, cv.b_star][0]}
    return paired_many({(eng, ruler): (f(eng, BIG), f(eng, SMALL)) for eng in ENGINES for ruler, f in per_q.items()},
                       "holm", metric="hit")


def rank_numbers(cv: Curves) -> dict:
    """Prose values of the rank table: 2048 − 512 under both rulers (six comparisons, one Holm family)."""
    rk, gaps = ranks(cv), six_gaps(cv)
    out: dict[str, Any] = {"bmin": cv.b_min, "bstar": cv.b_star, "nrank": len(SIZES),
                           "budget_min": BUDGETS[0], "budget_max": BUDGETS[-1]}
    for eng, key in ENG_KEY.items():
        by_k, by_b = rk[eng]
        out[f"gapk_{key}"] = fmt_diff(gaps[eng, "k"])
        out[f"gapb_{key}"] = fmt_diff(gaps[eng, "b"])
        out[f"rk_{key}"] = by_k.index(BIG) + 1
        out[f"rb_{key}"] = by_b.index(BIG) + 1
        out[f"k2048_{key}"] = cv.runs[eng, BIG].aggregate["hit"]["mean"]
        out[f"b2048_{key}"] = cv.curve[eng, BIG, cv.b_star][1]["mean"]
        out[f"b512_{key}"] = cv.curve[eng, SMALL, cv.b_star][1]["mean"]
        out[f"bbest_{key}"] = by_b[0]
        out[f"bbest_hit_{key}"] = cv.curve[eng, by_b[0], cv.b_star][1]["mean"]
    out["rank_dir"] = ("是同一个方向" if all(rk[e][0].index(BIG) < rk[e][1].index(BIG) for e in ENGINES)
                       else "的方向不尽相同")
    out["kchars_f2048"] = _delivered(cv, "BM25", BIG, "k")
    out["kchars_f512"] = _delivered(cv, "BM25", SMALL, "k")
    fill = [cv.curve[eng, l, b][2] / b for eng in ENGINES for l in SIZES for b in BUDGETS]
    out["fill_min"] = min(fill)
    at = [cv.curve[eng, l, cv.b_star][2] for eng in ENGINES for l in SIZES]
    out["star_chars"] = (f"{len(at)} 组配置平均都交出了 {min(at):,.0f} 字" if round(min(at)) == round(max(at))
                         else f"{len(at)} 组配置平均交出的字数在 {min(at):,.0f} 到 {max(at):,.0f} 之间")
    lowest = {eng: sum(min(SIZES, key=lambda l: cv.curve[eng, l, b][1]["mean"]) == BIG for b in BUDGETS) for eng in ENGINES}
    out["lowest_text"] = (f"三种检索器在全部 {len(BUDGETS)} 个预算点上，固定 2048 都是最低的一条"
                          if all(v == len(BUDGETS) for v in lowest.values()) else
                          "固定 2048 是最低一条的预算点数：" + "，".join(f"{e} {v} / {len(BUDGETS)}" for e, v in lowest.items()))
    return out


@dataclass
class Bias:
    """The bias of fixed k towards 2048: per retriever, (2048 − 512 at k = 5) − (the same under the budget)."""

    rows: list
    columns: list
    numbers: dict
    claim_rows: list


def bias_test(cv: Curves, tokens_per_char: float) -> Bias:
    """Paired bootstrap of the difference in differences, the three retrievers one Holm family;
    also C26's claims rows (judged by the register's criterion)."""
    rk = ranks(cv)
    gaps = {}
    for eng in ENGINES:
        for ruler in ("k", "b"):
            h = {l: (cv.runs[eng, l].per_question["hit"] if ruler == "k" else cv.curve[eng, l, cv.b_star][0])
                 for l in (BIG, SMALL)}
            gaps[eng, ruler] = h[BIG] - h[SMALL]
    did = paired_many({eng: (gaps[eng, "k"], gaps[eng, "b"]) for eng in ENGINES}, method="holm", metric="hit")
    chars = lambda eng, ruler: f"{_delivered(cv, eng, BIG, ruler):,.0f} / {_delivered(cv, eng, SMALL, ruler):,.0f}"
    six = six_gaps(cv)
    rows = [[eng, fmt_diff(six[eng, "k"]), chars(eng, "k"), fmt_diff(six[eng, "b"]), chars(eng, "b"),
             fmt_diff(did[eng]), f"{did[eng]['p_adj']:.4f}"] for eng in ENGINES]
    cols = ["检索器", "2048 − 512（k = 5）", "交出字数（2048 / 512）", f"2048 − 512（预算 {cv.b_star} 字）",
            "交出字数（2048 / 512）", "两者之差（偏袒量）", "Holm 校正后 p"]
    c26 = [claim_row("C26", f"固定 k 与固定预算下的排名（{eng}）", "固定 K 会让大块不公平地占优",
                     f"k=5：2048 第 {rk[eng][0].index(BIG) + 1}（交出 {_delivered(cv, eng, BIG, 'k'):,.0f} 字）；"
                     f"预算 {cv.b_star} 字：2048 第 {rk[eng][1].index(BIG) + 1}（交出 {_delivered(cv, eng, BIG, 'b'):,.0f} 字）；"
                     f"偏袒量（2048−512 的差中差）{fmt_diff(did[eng])}",
                     "比较块长要在同一个上下文预算下比，并核对实际交出的字数；"
                     f"这里按字符计预算（小北在 cl100k 下每字约 {tokens_per_char:.2f} token）",
                     result=did[eng]) for eng in ENGINES]
    numbers = {f"did_{key}": fmt_diff(did[eng]) for eng, key in ENG_KEY.items()}
    numbers.update({f"did_v_{key}": row.verdict for (eng, key), row in zip(ENG_KEY.items(), c26)})
    words = {row.verdict for row in c26}
    numbers["did_same"] = (f"三种检索器的判定都是“{next(iter(words))}”：在这里量过的每一种检索器下都是这个结论" if len(words) == 1
                           else "判定随检索器而变，不能只看一种检索器下结论")
    return Bias(rows, cols, numbers, c26)


@dataclass
class E5:
    rows: list
    columns: list
    numbers: dict
    runs: dict          # (engine, chunking) -> k = 5 result with e5 ("dense" or "hybrid")


def e5_compare(lab: Lab, cv: Curves, md_chunks) -> E5:
    """Markdown heading tree − fixed 512 with e5 (vectors cached by chapter 1), dense and hybrid, k = 5 and
    budget; and e5 − USE on fixed 512. Five comparisons read together: one Holm family."""
    f512 = cv.chunks[SMALL]
    runs = {(eng, label): lab.evaluate(cs, depth=60, engine=eng, embedder="e5-small")
            for eng in ("dense", "hybrid") for label, cs in (("fixed 512", f512), ("markdown", md_chunks))}
    rows, inside = [], {}
    for (eng, label), r in runs.items():
        h, chars, _ = within(lab, r, f512 if label == "fixed 512" else md_chunks, cv.b_star)
        inside[eng, label] = h
        rows.append([{"dense": "向量（e5）", "hybrid": "混合（BM25 + e5）"}[eng], f"`{label}`",
                     f"{r.aggregate['hit']['mean']:.1%}", f"{r.aggregate['retrieved_chars']['mean']:,.0f}",
                     f"{h.mean():.1%}", f"{chars.mean():,.0f}", r.config.get("embedder_over_limit", 0)])
    cols = ["检索器", "切法", "命中率（hit@5）", "k=5 时交出字数", f"同预算命中率（{cv.b_star} 字）", "预算内交出字数",
            "超过 e5 输入上限的块"]
    pairs = {(eng, ruler): (x["markdown"], x["fixed 512"]) for eng in ("dense", "hybrid") for ruler, x in
             (("k", {l: runs[eng, l].per_question["hit"] for l in ("markdown", "fixed 512")}),
              ("b", {l: inside[eng, l] for l in ("markdown", "fixed 512")}))}
    pairs["e5 − use"] = (runs["dense", "fixed 512"].per_question["hit"], cv.runs["向量（USE）", SMALL].per_question["hit"])
    many = paired_many(pairs, "holm", metric="hit")
    out: dict[str, Any] = {}
    v = {}
    for eng, key in (("dense", "e5d"), ("hybrid", "e5")):
        v[eng] = (verdict(many[eng, "k"], expect=+1), verdict(many[eng, "b"], expect=+1))
        out[f"{key}_gap_k"], out[f"{key}_gap_b"] = fmt_diff(many[eng, "k"]), fmt_diff(many[eng, "b"])
        out[f"{key}_v_k"], out[f"{key}_v_b"] = v[eng]
    out["e5_over"] = runs["dense", "markdown"].config.get("embedder_over_limit", 0)
    out["e5_use_gap"] = fmt_diff(many["e5 − use"])
    out["e5_use_v"] = verdict(many["e5 − use"], expect=+1)
    masked = [eng for eng, (vk, vb) in v.items() if vb == "成立" and vk != "成立"]
    name = {"dense": "向量检索", "hybrid": "混合检索"}
    out["e5_note"] = ("两种检索器下，两种口径的判定都不同：固定 k 时，块更长的固定 512 多交了字，掩盖了标题树的优势，和上面 C26 的结论同一个方向"
                      if len(masked) == 2 else
                      f"只有{name[masked[0]]}下两种口径的判定不同：固定 k 时，块更长的固定 512 多交了字，掩盖了标题树的优势"
                      if masked else "两种口径的判定没有出现“固定 k 掩盖标题树优势”的情形")
    out["md_len"] = float(np.mean([len(c) for c in md_chunks]))
    out["f512_len"] = float(np.mean([len(c) for c in f512]))
    return E5(rows, cols, out, runs)
