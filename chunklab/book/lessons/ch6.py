"""Chapter 6 helpers: the 27-cell matrix under two rulers, the size curve, recursive vs fixed
(C17), one paragraph per chunk vs 2048 (C19, C16), overlap, and the layered candidate set (C24).

Every function returns plain data (rows, dicts of prose values, figures, claim rows); the chapter
calls each in one line and binds the dict with :func:`chunklab.book.prose.glue_all`.
"""
from __future__ import annotations

import itertools
import random
import time
from dataclasses import dataclass, field
from importlib.metadata import version
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from ... import get_strategy
from ...base import list_strategies
from ...evaluation import bootstrap_ci, evaluate, paired_bootstrap
from ...evaluation.matrix import ARTICLE_002_GRID, expand_grid, run_matrix
from ...evaluation.matrix_pick import recommend, simplicity
from ...evaluation.stats import EQUIVALENCE_MARGINS, paired_many
from ...retrieval import BM25Reference, get_tokenizer
from ...strategies.linguistic import sentence_spans
from ...viz.fonts import use_cjk_font
from ..claims import LEVEL_TOLERANCE, claim_row, fmt_diff, verdict
from ..labels import zh

#: The context budget of the fixed-budget ruler: what k = 5 hands over at the grid's smallest size.
LAW_BUDGET = 5 * 512
#: The sizes of the article's grid, and the grid extended downwards (fixed budget only).
SIZES = (512, 1024, 2048)
CURVE = (64, 128, 256, 512, 1024, 2048)
#: Neighbouring sizes compared on the extended curve ("the smaller one is better").
STEPS = ((64, 128), (128, 256), (256, 512))
#: The equivalence margin of hit@5 (2 points), as the prose says it.
HIT_MARGIN = EQUIVALENCE_MARGINS["hit"]
#: The colour scale of every hit heatmap in the chapter: the whole range a hit rate can take.
HIT_SCALE = (0.0, 1.0)
SHARED = ("target", "max", "min", "overlap", "prefix")


def chars_range(values) -> str:
    """Delivered characters of several runs: "2,560", or "2,521–2,560" when they differ.

    >>> chars_range([2560.0, 2521.2])
    '2,521–2,560'
    """
    lo, hi = (f"{x:,.0f}" for x in (min(values), max(values)))
    return lo if lo == hi else f"{lo}–{hi}"


def size_of(params: dict) -> int:
    """The size knob of a config: ``size`` for fixed windows, ``target`` otherwise."""
    return params.get("size", params.get("target"))


def label(name: str, size: int, overlap: int = 0, **extra) -> str:
    """The matrix label of a config, e.g. ``recursive(target=512, overlap=0)``."""
    key = "size" if name == "fixed" else "target"
    more = "".join(f", {k}={v}" for k, v in extra.items())
    return f"{name}({key}={size}, overlap={overlap}{more})"


# ---------------------------------------------------------------------------------------------
# 6.2 and 6.3: the strategies and their knobs
# ---------------------------------------------------------------------------------------------


def strategy_rows() -> tuple[list[list[str]], dict[str, int]]:
    """One row per registered strategy (family, name, shared knobs, private knobs, summary)."""
    rows = []
    for s in list_strategies():
        p = s["params"]
        shared = [("size" if k == "target" and "size" in p else k) for k in SHARED
                  if k in p or (k == "target" and "size" in p)]
        private = [k for k in p if k not in SHARED + ("size", "length")]
        rows.append([zh("family", s["family"]), f"`{s['name']}`", " ".join(f"`{k}`" for k in shared),
                     " ".join(f"`{k}`" for k in private) or "—", s["summary_zh"]])
    all_four = sum(all(k in s["params"] for k in ("target", "max", "min", "overlap")) for s in list_strategies())
    return rows, {"n_strategies": len(rows), "n_all_shared": all_four}


#: One knob changed at a time from the clause defaults (section 6.3).
KNOBS = {"默认：target 500、max 1200、min 150": {}, "只改 target → 200": {"target": 200},
         "只改 max → 600": {"max": 600}, "只改 min → 0": {"min": 0},
         "只改 merge → target（短条款合并到 target）": {"merge": "target"}}


def knob_rows(docs) -> tuple[str, list[list[Any]]]:
    """The law with most over-long articles, and one row per :data:`KNOBS` setting of ``clause`` on it."""
    doc = max(docs, key=lambda d: sum(a["end"] - a["start"] > 600 for a in d.meta["articles"]))
    rows = []
    for name, params in KNOBS.items():
        cs = get_strategy("clause", **params).split(doc)
        lens = np.array([len(c) for c in cs])
        fell = sum(c.meta.get("level") != "clause" for c in cs)
        rows.append([name, len(cs), f"{lens.mean():.0f}", int(lens.min()), int(lens.max()), fell])
    return f"{doc.title}：{len(doc.text):,} 字，{len(doc.meta['articles'])} 条", rows


# ---------------------------------------------------------------------------------------------
# 6.4: the matrix at the article's scale
# ---------------------------------------------------------------------------------------------


def rank_bm25_estimate(docs, questions, n_configs: int, seconds: float) -> dict[str, Any]:
    """Time rank-bm25 on the first config (index + 5 random questions, seed 0) and scale it up
    to ``n_configs`` × ``len(questions)``, as :func:`chunklab.tools.bench.bench_matrix` does."""
    tok = get_tokenizer("bigram")
    chunks = get_strategy("fixed", size=512).split_documents(docs)
    t = time.perf_counter()
    ref = BM25Reference(tokenized=[tok(c.text) for c in chunks], tokenizer=tok)
    build = time.perf_counter() - t
    sample = random.Random(0).sample(list(questions), 5)
    t = time.perf_counter()
    for q in sample:
        ref.get_scores(tok(q.question))
    per_q = (time.perf_counter() - t) / len(sample)
    hours = n_configs * (build + per_q * len(questions)) / 3600
    return {"ref_version": version("rank-bm25"), "ref_chunks": len(chunks), "ref_build": build,
            "ref_perq_ms": per_q * 1000, "ref_hours": hours, "scale_seconds": seconds}


def _heatmap(ax, records, row, col, value, title):
    """A heatmap on the fixed scale :data:`HIT_SCALE`, each cell labelled with its value."""
    rows = sorted({r[row] for r in records})
    cols = sorted({r[col] for r in records}, key=lambda c: float(c.rstrip("%")))
    grid = np.full((len(rows), len(cols)), np.nan)
    for r in records:
        grid[rows.index(r[row]), cols.index(r[col])] = r[value]
    im = ax.imshow(grid, cmap="viridis", vmin=HIT_SCALE[0], vmax=HIT_SCALE[1], aspect="auto")
    ax.set_xticks(range(len(cols)), cols)
    ax.set_yticks(range(len(rows)), rows)
    ax.set_xlabel("overlap（占块长）")
    for i in range(len(rows)):
        for j in range(len(cols)):
            v = grid[i, j]
            ax.text(j, i, f"{v:.3f}", ha="center", va="center", fontsize=8, color="white" if v < 0.6 else "black")
    ax.set_title(title, fontsize=10)
    return im


def _cell(strategy: str, size: int, overlap: int) -> dict[str, str]:
    return {"row": f"{strategy} {size:>4}", "col": f"{round(100 * overlap / size)}%"}


def scale_figure(scale) -> tuple[Any, list[list[Any]], dict[str, float]]:
    """The generated questions' hit@5 over the 27 cells on the 0–1 scale, its rows, min and max."""
    use_cjk_font()
    records = [{**_cell(r["strategy"], size_of(r), r["overlap"]), "hit": r["hit"]} for r in scale.rows]
    fig, ax = plt.subplots(figsize=(5.6, 5.2))
    im = _heatmap(ax, records, "row", "col", "hit", "生成题集（laws-scale）上的命中率（hit@5）")
    ax.set_ylabel("切法 / 块长")
    fig.colorbar(im, ax=ax, shrink=0.8)
    fig.tight_layout()
    rows = [[r["row"], r["col"], f"{r['hit']:.4f}"] for r in records]
    hits = [r["hit"] for r in scale.rows]
    return fig, rows, {"scale_min": min(hits), "scale_max": max(hits),
                       "scale_spread_pp": 100 * (max(hits) - min(hits))}


# ---------------------------------------------------------------------------------------------
# 6.5: the same grid on the hand-written questions, two rulers
# ---------------------------------------------------------------------------------------------


@dataclass
class HandMatrix:
    """The 27 configs on the hand-written law questions: per config, results under both rulers."""

    configs: list[dict[str, Any]]
    k: dict[str, Any]                   # label -> EvalResult, fixed k = 5
    budget: dict[str, Any]              # label -> EvalResult, fixed budget LAW_BUDGET
    rows: list[dict[str, Any]] = field(default_factory=list)
    para_same: bool = True              # paragraph's boundaries equal recursive's on the spot checks


#: Paragraph and recursive boundaries compared on these (size, overlap) cells.
SPOT_CHECK = [(512, 0), (1024, 102), (2048, 410)]


def hand_matrix(docs, questions, index) -> HandMatrix:
    """Evaluate the article's 27 configs on ``questions`` under fixed k = 5 and the fixed budget."""
    configs, _ = expand_grid(ARTICLE_002_GRID)
    m = HandMatrix(configs, {}, {})
    spans = {}
    for cfg in configs:
        chunks = get_strategy(cfg["strategy"], **cfg["params"]).split_documents(docs)
        m.k[cfg["label"]] = evaluate(docs, chunks, questions, k=5, index=index, n_boot=500)
        m.budget[cfg["label"]] = evaluate(docs, chunks, questions, budget=LAW_BUDGET, index=index, n_boot=500)
        if (size_of(cfg["params"]), cfg["params"]["overlap"]) in SPOT_CHECK:
            spans[cfg["label"]] = [(c.doc_id, c.start, c.end) for c in chunks]
        size = size_of(cfg["params"])
        r, b = m.k[cfg["label"]], m.budget[cfg["label"]]
        m.rows.append({"label": cfg["label"], "strategy": cfg["strategy"], "size": size,
                       "overlap": f"{round(100 * cfg['params']['overlap'] / size)}%",
                       **{x: r.aggregate[x]["mean"] for x in ("hit", "mrr", "recall", "precision", "iou")},
                       "hit_budget": b.aggregate["hit"]["mean"], "chars_k": r.aggregate["retrieved_chars"]["mean"],
                       "chars_budget": b.aggregate["retrieved_chars"]["mean"],
                       "clause_cut_rate": r.structure["clause_cut_rate"]})
    m.para_same = all(spans[f"recursive(target={t}, overlap={o})"] == spans[f"paragraph(target={t}, overlap={o})"]
                      for t, o in SPOT_CHECK)
    return m


def hand_figure(m: HandMatrix) -> tuple[Any, list[list[Any]], list[str]]:
    """Two heatmaps on the same 0–1 scale (fixed k, fixed budget) and the data beneath them."""
    use_cjk_font()
    fig, axes = plt.subplots(1, 2, figsize=(11, 5.2), sharey=True)
    for ax, metric, title in ((axes[0], "hit", "固定 k = 5：命中率（hit@5）"),
                              (axes[1], "hit_budget", f"固定预算 {LAW_BUDGET:,} 字：同预算命中率")):
        records = [{"row": f"{r['strategy']} {r['size']:>4}", "col": r["overlap"], metric: r[metric]} for r in m.rows]
        im = _heatmap(ax, records, "row", "col", metric, title)
    axes[0].set_ylabel("切法 / 块长")
    fig.colorbar(im, ax=axes, shrink=0.8)
    rows = [[f"`{r['label']}`", f"{r['hit']:.3f}", f"{r['chars_k']:,.0f}", f"{r['hit_budget']:.3f}",
             f"{r['chars_budget']:,.0f}"] for r in m.rows]
    cols = ["配置", "命中率（hit@5）", "固定 k：每题交付字数", "同预算命中率", "固定预算：每题交付字数"]
    return fig, rows, cols


def hand_numbers(m: HandMatrix) -> dict[str, Any]:
    """The prose values of the two hand-written heatmaps."""
    hk = [r["hit"] for r in m.rows]
    hb = [r["hit_budget"] for r in m.rows]
    best_b = max(m.rows, key=lambda r: r["hit_budget"])["size"]
    n2048 = max(m.budget[c["label"]].aggregate["n_retrieved"]["mean"] for c in m.configs
                if size_of(c["params"]) == 2048)
    return {"hand_min": min(hk), "hand_max": max(hk), "hand_bmin": min(hb), "hand_bmax": max(hb),
            "hand_best_k": max(m.rows, key=lambda r: r["hit"])["size"], "hand_best_b": best_b,
            "hand_best_b_edge": "，也是网格里最小的一档：最优点可能在网格之外，下文把块长往小里延伸再量"
            if best_b == min(SIZES) else "", "law_budget": LAW_BUDGET,
            "512_gap": max(abs(r["hit"] - r["hit_budget"]) for r in m.rows if r["size"] == 512),
            "2048_items": n2048, "k_chars_2048": max(r["chars_k"] for r in m.rows if r["size"] == 2048),
            "k_chars_512": chars_range([r["chars_k"] for r in m.rows if r["size"] == 512]),
            "b_chars": chars_range([r["chars_budget"] for r in m.rows]),
            "para_same": "完全相同" if m.para_same else "并不相同"}


def size_tests(m: HandMatrix) -> tuple[dict[tuple, dict], list[list[Any]], dict[str, Any]]:
    """2048 − 512 on hit, for fixed and recursive at three overlaps, under both rulers: 12 comparisons
    corrected together (Holm). Returns the results by (ruler, strategy, share), table rows, prose values."""
    pairs, chars = {}, {}
    for name in ("fixed", "recursive"):
        for share in (0, 0.1, 0.2):
            big, small = (label(name, n, round(share * n)) for n in (2048, 512))
            for ruler, res in (("固定 k", m.k), ("固定预算", m.budget)):
                pairs[ruler, name, share] = (res[big].per_question["hit"], res[small].per_question["hit"])
            chars[name, share] = [m.budget[x].aggregate["retrieved_chars"]["mean"] for x in (big, small)]
    flat = paired_many({" ".join(map(str, key)): p for key, p in pairs.items()}, "holm", metric="hit")
    tests = {key: flat[" ".join(map(str, key))] for key in pairs}
    rows = []
    for name in ("fixed", "recursive"):
        for share in (0, 0.1, 0.2):
            cells = []
            for ruler in ("固定 k", "固定预算"):
                c = tests[ruler, name, share]
                cells += [fmt_diff(c).replace("（", "\n（"), verdict(c, expect=+1)]
            rows.append([f"`{name}`", f"{share:.0%}", *cells, " / ".join(f"{x:,.0f}" for x in chars[name, share])])
    k_v = sorted({verdict(c, expect=+1) for key, c in tests.items() if key[0] == "固定 k"})
    b_v = sorted({verdict(c, expect=+1) for key, c in tests.items() if key[0] == "固定预算"})
    rec_k = [m.k[label("recursive", n)].aggregate["hit"]["mean"] for n in SIZES]
    rec_b = [m.budget[label("recursive", n)].aggregate["hit"]["mean"] for n in SIZES]
    numbers = {"size_k_verdicts": "、".join(k_v), "size_b_verdicts": "、".join(b_v),
               "size_k_rec": fmt_diff(tests["固定 k", "recursive", 0]),
               "size_b_rec": fmt_diff(tests["固定预算", "recursive", 0]),
               "rec_b512": rec_b[0], "rec_b1024": rec_b[1], "rec_b2048": rec_b[2],
               "rec_k512": rec_k[0], "rec_k2048": rec_k[2],
               "rec_order": "顺序与固定 k 下正好相反" if rec_b[0] > rec_b[1] > rec_b[2] and rec_k[0] < rec_k[1] < rec_k[2]
               else "顺序与固定 k 下并不完全相反",
               "rec_b_chars": chars_range([m.budget[label("recursive", n)].aggregate["retrieved_chars"]["mean"]
                                           for n in SIZES])}
    return tests, rows, numbers


SIZE_COLUMNS = ["切法", "overlap", "固定 k：2048 − 512", "判定", "固定预算：2048 − 512", "判定",
                "预算下交付字数（2048 / 512）"]


def size_curve(docs, questions, index) -> dict[tuple[str, int], Any]:
    """Fixed and recursive (no overlap) at :data:`CURVE` sizes under the fixed budget (depth 200,
    so that 64-character chunks can fill it)."""
    curve = {}
    for name in ("fixed", "recursive"):
        for n in CURVE:
            chunks = get_strategy(name, **{"size" if name == "fixed" else "target": n, "overlap": 0}).split_documents(docs)
            curve[name, n] = evaluate(docs, chunks, questions, budget=LAW_BUDGET, depth=200, index=index, n_boot=500)
    return curve


def curve_steps(curve) -> tuple[dict[str, dict], list[list[Any]], dict[str, Any]]:
    """Neighbouring sizes of the curve compared ("the smaller is better"), 6 comparisons under Holm."""
    steps = paired_many({f"{name} {a} − {b}": (curve[name, a].per_question["hit"], curve[name, b].per_question["hit"])
                         for name in ("fixed", "recursive") for a, b in STEPS}, "holm", metric="hit")
    rows = [[f"`{name}`", *(f"{fmt_diff(steps[f'{name} {a} − {b}'])}\n{verdict(steps[f'{name} {a} − {b}'], expect=+1)}"
                            for a, b in STEPS)] for name in ("fixed", "recursive")]
    peak = {name: max(CURVE, key=lambda n: curve[name, n].aggregate["hit"]["mean"]) for name in ("fixed", "recursive")}
    sig = {(name, a): steps[f"{name} {a} − {b}"]["significant"] for name in ("fixed", "recursive") for a, b in STEPS}
    # the recursive sizes this batch cannot tell from the peak: the peak and its neighbours with no
    # significant step between them
    p = CURVE.index(peak["recursive"])
    tied = [peak["recursive"]] + [CURVE[j] for j in (p - 1, p + 1) if 0 <= j < len(CURVE) and
                                  not steps.get(f"recursive {min(CURVE[j], CURVE[p])} − {max(CURVE[j], CURVE[p])}",
                                                {"significant": True})["significant"]]
    numbers = {"peak_fixed": peak["fixed"], "peak_rec": peak["recursive"],
               "rec_best": " 或 ".join(str(n) for n in sorted(tied)),
               "peaks_inside": "两者都落在延伸后的网格里面，两侧都有量过的一档"
               if all(CURVE[0] < p < CURVE[-1] for p in peak.values()) else "至少一个落在延伸后网格的边上，还得再延伸",
               "curve_chars": chars_range([r.aggregate["retrieved_chars"]["mean"] for r in curve.values()]),
               # the prose: recursive is pinned on both sides of 128-256; fixed by none of its steps
               "rec_pinned": int(sig["recursive", 256] and steps["recursive 256 − 512"]["diff"] > 0
                                 and not sig["recursive", 128] and sig["recursive", 64]
                                 and steps["recursive 64 − 128"]["diff"] < 0),
               "fixed_open": int(not any(sig["fixed", a] for a, _ in STEPS))}
    numbers["rec_pinned_text"] = ("递归切分两头都定住了：256 档显著好于 512 档，64 档显著差于 128 档，128 档与 256 档之间分不出"
                                  if numbers["rec_pinned"] else "递归切分的高点这批题还没有两头定住，下面的“最好的一档”只是与高点分不出的几档")
    numbers["fixed_open_text"] = (f"固定切分的三步都不显著：高点在 {peak['fixed']} 档，但这批题分不清它和相邻的几档"
                                  if numbers["fixed_open"] else "固定切分有显著的一步，逐档看上面的表")
    for name in ("fixed", "recursive"):
        for a, b in STEPS:
            c = steps[f"{name} {a} − {b}"]
            numbers[f"step_{name}_{a}"] = f"{fmt_diff(c)}，{verdict(c, expect=+1)}"
    return steps, rows, numbers


def size_figure(m: HandMatrix, curve) -> tuple[Any, list[list[Any]], list[str]]:
    """Hit over block length: the article's sizes under fixed k (left), the extended curve under the
    fixed budget (right), each point with its 95% interval; and the data beneath."""
    use_cjk_font()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    colours = {"fixed": "tab:gray", "recursive": "tab:blue"}
    data = []
    for ax, sizes, get, title in (
            (axes[0], SIZES, lambda name, n: m.k[label(name, n)], "固定 k = 5：命中率（hit@5）"),
            (axes[1], CURVE, lambda name, n: curve[name, n], f"固定预算 {LAW_BUDGET:,} 字：同预算命中率")):
        for name in ("fixed", "recursive"):
            aggs = [get(name, n).aggregate for n in sizes]
            ys = np.array([a["hit"]["mean"] for a in aggs])
            lo = ys - np.array([a["hit"]["lo"] for a in aggs])
            hi = np.array([a["hit"]["hi"] for a in aggs]) - ys
            ax.errorbar(range(len(sizes)), ys, yerr=[lo, hi], marker="o", capsize=3, color=colours[name], label=name)
            data += [[title.split("：")[0], f"`{name}`", n, f"{a['hit']['mean']:.3f} [{a['hit']['lo']:.3f}, "
                      f"{a['hit']['hi']:.3f}]", f"{a['retrieved_chars']['mean']:,.0f}"] for n, a in zip(sizes, aggs)]
        ax.set_xticks(range(len(sizes)), [str(n) for n in sizes])
        ax.set_xlabel("块长（字）")
        ax.set_title(title, fontsize=10)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("命中率（点为均值，竖线为 95% 区间）")
    axes[0].legend()
    fig.tight_layout()
    return fig, data, ["尺子", "切法", "块长", "命中率与 95% 区间", "每题交付字数"]


# ---------------------------------------------------------------------------------------------
# 6.5: recursive vs fixed (C17), one paragraph per chunk vs 2048 (C19, C16), overlap
# ---------------------------------------------------------------------------------------------

C17_METRICS = ("hit", "mrr", "iou")        # hit@5 is the primary metric, declared before looking


def recursive_vs_fixed(m: HandMatrix, n_questions: int) -> tuple[list[list[Any]], Any, dict[str, Any]]:
    """The 9 same-size pairs, recursive − fixed on hit@5 (primary), MRR and IoU, each metric's 9
    corrected together; the C17 row judged on the pooled hit@5 difference; prose values."""
    pairs = {(size_of(c["params"]), c["params"]["overlap"]): (m.k[label("recursive", size_of(c["params"]),
                                                                        c["params"]["overlap"])], m.k[c["label"]])
             for c in m.configs if c["strategy"] == "fixed"}
    tests = {x: paired_many({f"{s}/{o}": (rec.per_question[x], fix.per_question[x]) for (s, o), (rec, fix) in pairs.items()},
                            "holm", metric=x) for x in C17_METRICS}
    rows = []
    for (size, ov), (rec, fix) in pairs.items():
        cells = []
        for x in C17_METRICS:
            c = tests[x][f"{size}/{ov}"]
            mark = (" ★" if c["diff"] > 0 else " ✗") if c["significant"] else ""
            cells.append(fmt_diff(c, pct=x != "mrr").replace("（", "\n（") + mark)
        rows.append([size, f"{round(100 * ov / size)}%", cells[0], verdict(tests["hit"][f"{size}/{ov}"], expect=+1),
                     *cells[1:], f"{fix.structure['clause_cut_rate']:.1%} → {rec.structure['clause_cut_rate']:.1%}"])
    pooled = paired_bootstrap(np.mean([rec.per_question["hit"] for rec, _ in pairs.values()], axis=0),
                              np.mean([fix.per_question["hit"] for _, fix in pairs.values()], axis=0), metric="hit")
    n = len(pairs)
    row = claim_row("C17", "9 组同尺寸配对：递归胜过固定（主指标 hit@5）", "9 / 9",
                    f"hit@5 {sum(c['diff'] > 0 for c in tests['hit'].values())}/{n} 组更高，Holm 校正后显著 "
                    f"{sum(c['significant'] and c['diff'] > 0 for c in tests['hit'].values())} 组；9 组平均差 {fmt_diff(pooled)}",
                    f"按命中率选切法时，法律手写题上递归与固定的差别在等效界以内：别指望换成递归就多命中；"
                    f"换递归是为了块更完整（条款切断率，见第 2 章 C21）。{n_questions} 道手写题、BM25，"
                    "判定用 9 组的平均差", part="hit", result=pooled)
    cut = {name: m.k[label(name, 512)].structure["clause_cut_rate"] for name in ("fixed", "recursive")}
    numbers = {"c17_pairs": n, "c17_pooled": fmt_diff(pooled), "c17_verdict": row.verdict,
               "eq_pp": round(100 * HIT_MARGIN), "cut_fixed512": cut["fixed"], "cut_rec512": cut["recursive"],
               "c17_iou_all": "每一组都是递归更高" if all(c["diff"] > 0 for c in tests["iou"].values())
               else "并非每一组都是递归更高",
               "c17_cut_all": "每一组都下降" if all(r.structure["clause_cut_rate"] < f.structure["clause_cut_rate"]
                                                 for r, f in pairs.values()) else "并非每一组都下降"}
    for x in C17_METRICS:
        numbers[f"c17_wins_{x}"] = sum(c["diff"] > 0 for c in tests[x].values())
        numbers[f"c17_sig_{x}"] = sum(c["significant"] and c["diff"] > 0 for c in tests[x].values())
    return rows, row, numbers


C17_COLUMNS = ["块长", "overlap", "Δ hit@5（主）", "hit@5 判定", "Δ MRR", "Δ IoU", "条款切断率（固定 → 递归）"]


def paragraph_vs_2048(m: HandMatrix, docs, questions, index) -> tuple[list[list[Any]], list[Any], dict[str, Any]]:
    """One paragraph per chunk vs fixed 2048: the table rows, the C19 and C16 claim rows, prose values."""
    para = get_strategy("paragraph", target=2048, paragraphs=1).split_documents(docs)
    r_para = evaluate(docs, para, questions, k=5, index=index, n_boot=500)
    r_big = m.k[label("fixed", 2048)]
    rows = [[f"`{name}`", r.structure["chunks"], f"{r.structure['len_mean']:.0f}",
             *(f"{r.aggregate[x]['mean']:.4f}" for x in ("precision", "recall", "hit")),
             f"{r.aggregate['irrelevant_share']['mean']:.1%}"]
            for name, r in (("paragraph, 一段一块", r_para), ("fixed 2048", r_big))]
    pp, pr = r_para.aggregate["precision"]["mean"], r_para.aggregate["recall"]["mean"]
    bp, br = r_big.aggregate["precision"]["mean"], r_big.aggregate["recall"]["mean"]
    irr = r_big.aggregate["irrelevant_share"]["mean"]
    c19_p = paired_bootstrap(r_para.per_question["precision"], r_big.per_question["precision"], metric="precision")
    c19_r = paired_bootstrap(r_para.per_question["recall"], r_big.per_question["recall"], metric="recall")
    ci = bootstrap_ci(r_big.per_question["irrelevant_share"])
    level = f"水平规则：与原文数字的相对差不超过 {LEVEL_TOLERANCE:.0%}"
    claims = [
        claim_row("C19", "precision 之比：一段一块 / 2048 大块", "9.2×（0.1172 vs 0.0128）",
                  f"{pp / bp:.1f}×（{pp:.4f} vs {bp:.4f}）；差 {fmt_diff(c19_p, pct=False)}",
                  f"小块交出去的字里有用的多得多；倍数随两种块的长度之比变（本语料一段平均 "
                  f"{r_para.structure['len_mean']:.0f} 字），换语料要重量。{level}（这里 {pp / bp / 9.2 - 1:+.0%}）",
                  part="precision", value=pp / bp),
        claim_row("C19", "recall 之比：一段一块 / 2048 大块", "68%（0.647 vs 0.947）",
                  f"{pr / br:.0%}（{pr:.3f} vs {br:.3f}）；差 {fmt_diff(c19_r, pct=False)}",
                  f"小块更容易漏掉证据的一部分：小块干净、大块全，是取舍不是赢家。{level}（这里 {pr / br / 0.68 - 1:+.0%}）",
                  part="recall", value=pr / br),
        claim_row("C16", "2048 窗口下命中块里与答案无关的字符占比", "约 94%",
                  f"{irr:.1%} [{ci['lo']:.1%}, {ci['hi']:.1%}]",
                  f"大块命中时，模型要从一大段里找那一句；我们的证据是一句话，比原文的答案短，无关占比因此偏高。"
                  f"{level}（这里 {irr / 0.94 - 1:+.1%}）", value=irr),
    ]
    numbers = {"c19_pratio": pp / bp, "c19_rratio": pr / br, "c16_irr": irr, "c16_ci": f"[{ci['lo']:.1%}, {ci['hi']:.1%}]",
               "c16_tol": f"{LEVEL_TOLERANCE:.0%}", "c19_p": fmt_diff(c19_p, pct=False),
               "c19_r": fmt_diff(c19_r, pct=False), "c16_check": claims[2].verdict,
               "c19_p_v": claims[0].verdict, "c19_r_v": claims[1].verdict}
    return rows, claims, numbers


PARA_COLUMNS = ["切法", "块数", "平均长", "precision", "recall", "hit@5", zh("metric", "irrelevant_share")]


def overlap_tests(m: HandMatrix) -> tuple[dict[str, dict], list[list[Any]], dict[str, Any]]:
    """Each overlap setting − the same config without overlap, on hit@5, fixed and recursive
    (12 comparisons under Holm); each judged equivalent (interval within ±2 points) or not decided."""
    pairs, base = {}, {}
    for c in m.configs:
        ov = c["params"]["overlap"]
        if ov == 0 or c["strategy"] == "paragraph":
            continue
        size = size_of(c["params"])
        pairs[c["label"]] = (m.k[c["label"]].per_question["hit"], m.k[label(c["strategy"], size)].per_question["hit"])
        base[c["label"]] = (c["strategy"], size)
    tests = paired_many(pairs, "holm", metric="hit")
    by_base: dict[tuple, list[str]] = {}
    for lab, c in tests.items():
        by_base.setdefault(base[lab], []).append(
            f"{fmt_diff(c).replace('（', chr(10) + '（')}\n{verdict(c, expect=+1)}"
            f"（索引膨胀 {m.k[lab].structure['overlap_inflation']:.2f}×）")
    rows = [[f"`{name}`", size, *cells] for (name, size), cells in by_base.items()]
    words = [verdict(c, expect=+1) for c in tests.values()]
    numbers = {"ov_n": len(tests), "ov_sig": sum(c["significant"] for c in tests.values()),
               "ov_sig_marginal": sum(c["significant_marginal"] for c in tests.values()),
               "ov_equiv": words.count("等效"), "ov_undecided": sum(w.endswith("不显著") or w == "未能区分" for w in words),
               "ov_bound": max(max(abs(c["lo"]), abs(c["hi"])) for c in tests.values()),
               "ov_cut0": m.k[label("fixed", 512)].structure["clause_cut_rate"],
               "ov_cut20": m.k[label("fixed", 512, 102)].structure["clause_cut_rate"],
               "ov_fix512": fmt_diff(tests[label("fixed", 512, 102)]),
               "ov_infl_max": max(m.k[x].structure["overlap_inflation"] for x in tests)}
    return tests, rows, numbers


OVERLAP_COLUMNS = ["切法", "块长", "overlap 10%：Δ hit@5、判定（索引膨胀）", "overlap 20%：Δ hit@5、判定（索引膨胀）"]


# ---------------------------------------------------------------------------------------------
# 6.9: the layered candidate set (C24) and how to stop
# ---------------------------------------------------------------------------------------------

#: The size-sensitive strategies whose layer 2 is run on xiaobei, and the layer-3 knobs tried at the
#: size layer 2 picks for each.
LAYER3_KNOBS = {"recursive": {"overlap": [0, 0.1, 0.2], "prefix": [False, True]},
                "markdown": {"overlap": [0, 50], "prefix": [False, True]},
                "auto": {"overlap": [0, 50, 100], "prefix": [False, True]}}


def pick_layer(docs, questions, grid, budget: int) -> dict[str, Any]:
    """Run ``grid`` under the fixed ``budget`` and apply the book's rule for picking
    (:meth:`~chunklab.evaluation.matrix.MatrixResult.recommend`): every config compared with the best
    on the same questions (paired, Holm-corrected), the group not distinguishable from the best, and
    the simplest of that group (:func:`~chunklab.evaluation.matrix_pick.simplicity`).

    Returns ``rows`` (matrix rows), ``best`` and ``pick`` (rows), ``group`` (labels), ``tests``
    (label -> best − config, corrected), ``seconds``."""
    res = run_matrix(docs, questions, grid, progress=False, use_context=True, budget=budget)
    # Every config is indexed with its context (use_context=True), so that a config with the prefix
    # knob on is measured with it; "simpler" then reads the prefix knob itself, not use_context,
    # which is on for all of them here.
    knobs = [{k: v for k, v in r.items() if k != "use_context"} for r in res.rows]
    rec = recommend(knobs, res.per_question, res.best("hit")["label"], metric="hit")
    by_label = {r["label"]: r for r in knobs}
    return {"rows": knobs, "best": by_label[rec["best"]], "pick": by_label[rec["pick"]], "group": rec["group"],
            "tests": rec["tests"], "seconds": res.seconds}


def tied_with_pick(picked: dict[str, Any]) -> list[str]:
    """Labels of the group that :func:`~chunklab.evaluation.matrix_pick.simplicity` ranks level with
    the pick on every knob (only the label broke the tie): the rule cannot choose among them."""
    key = simplicity(picked["pick"])[:-1]
    return [r["label"] for r in picked["rows"] if r["label"] in picked["group"]
            and r["label"] != picked["pick"]["label"] and simplicity(r)[:-1] == key]


def layer_rows(picked: dict[str, Any]) -> list[list[Any]]:
    """One table row per config of a :func:`pick_layer` run: hit with its interval, the corrected
    difference from the best, whether it is in the group, chars, chunks."""
    out = []
    for r in picked["rows"]:
        c = picked["tests"].get(r["label"])
        mark = "最高" if c is None else fmt_diff(c).replace("（", "\n（")
        tag = ("✔ 选中" if r["label"] == picked["pick"]["label"] else "✔") if r["label"] in picked["group"] else ""
        out.append([f"`{r['label']}`", f"{r['hit']:.3f} [{r['hit_lo']:.3f}, {r['hit_hi']:.3f}]", mark, tag,
                    f"{r['retrieved_chars']:,.0f}", r["chunks"]])
    return out


LAYER_COLUMNS = ["配置", "同预算命中率与 95% 区间", "最高一组减它（Holm 校正）", "与最高分不出", "每题交付字数", "块数"]


def pick_sizes(docs, questions, layer2, budget: int) -> dict[str, dict[str, Any]]:
    """Layer 2: :func:`pick_layer` on each strategy's sizes separately (the sizes of one strategy
    compete with each other, not with other strategies); strategy -> its pick result."""
    return {g["strategy"]: pick_layer(docs, questions, [g], budget) for g in layer2}


def layer3_grid(picks: dict[str, int]) -> list[dict[str, Any]]:
    """Layer 3 as grid entries: the :data:`LAYER3_KNOBS` of each strategy at the size layer 2 picked."""
    return [{"strategy": s, "target": t, **LAYER3_KNOBS[s]} for s, t in picks.items()]


def count_layers(layers: dict[str, list[dict]]) -> tuple[list[list[Any]], int]:
    """Expand each layer, drop configs equal to an earlier one (same chunks: the strategy's repr
    shows its non-default parameters), and count; returns table rows and the total."""
    seen, rows = set(), []
    for name, grid in layers.items():
        configs, skipped = expand_grid(grid)
        new = 0
        for c in configs:
            key = (c["strategy"], repr(get_strategy(c["strategy"], **c["params"])))
            if key not in seen:
                seen.add(key)
                new += 1
        rows.append([name, len(configs), new, len(skipped)])
    rows.append(["合计", "", len(seen), ""])
    return rows, len(seen)


def count_over_picks(layers: dict[str, list[dict]], layer2: list[dict]) -> tuple[int, int]:
    """The smallest and largest total of :func:`count_layers` over every size layer 2 could pick
    (each strategy of ``layer2`` at each of its sizes, layer 3 built by :func:`layer3_grid`): how
    much the count depends on the picks."""
    sizes = {g["strategy"]: g["target"] for g in layer2}
    totals = {count_layers({**layers, "3": layer3_grid(dict(zip(sizes, combo)))})[1]
              for combo in itertools.product(*sizes.values())}
    return min(totals), max(totals)


def edge_note(layer2: list[dict], picked2: dict[str, dict[str, Any]]) -> str:
    """What the layer-2 picks on a grid's edge mean: a best size on the edge leaves the optimum
    possibly outside the grid; a pick on the smallest edge with the best inside only says a still
    smaller size might also be indistinguishable (and simpler)."""
    sizes = {g["strategy"]: g["target"] for g in layer2}
    best_edge, pick_edge = [], []
    for s, p in picked2.items():
        lo, hi = min(sizes[s]), max(sizes[s])
        best, pick = p["best"]["target"], p["pick"]["target"]
        if best in (lo, hi):
            best_edge.append(f"{s} 的 {best}（{lo}–{hi} 里{'最小' if best == lo else '最大'}的一档）")
        elif pick in (lo, hi):
            pick_edge.append(f"{s} 的 {pick}")
    out = []
    if best_edge:
        out.append("最高的一档落在网格边上的有 " + "、".join(best_edge)
                   + "：最优点可能在网格之外，真要定尺寸，下一轮先往那一侧延伸一档")
    if pick_edge:
        out.append("、".join(pick_edge) + " 是按规则挑出的网格里最小的一档，但最高的一档在网格中间："
                   "再小一档也许同样分不出、又更简单，要知道就得往小里再量一档")
    return "；".join(out) if out else "最高的一档和挑出的一档都在各自网格的中间"


def c24_row(total: int, n_methods: int, full_product: int) -> Any:
    """The C24 claim row, judged on the count of a set we wrote by the article's recipe."""
    return claim_row("C24", "完整候选集的规模", "40–60 组，分层", f"{total} 组（三层；第 3 层用第 2 层选出的尺寸）",
                     f"这个数由我们放进去的切法和档位决定，说明照这个分层思路写出的候选集会落在几十组，"
                     f"不说明 40–60 对任何语料都合适；{n_methods} 种切法若乘满 3 档尺寸 × 3 档 overlap × 前缀开关，"
                     f"是 {full_product} 组", holds=40 <= total <= 60)



def explorer_rows(m: HandMatrix) -> list[dict[str, Any]]:
    """The 27 hand-written results as rows for :class:`chunklab.viz.widgets.MatrixExplorer`."""
    return [{"切法": r["strategy"], "块长": r["size"], "切法 / 块长": f"{r['strategy']} {r['size']:>4}",
             "overlap": r["overlap"], "label": r["label"], "hit": r["hit"], "mrr": r["mrr"], "recall": r["recall"],
             "precision": r["precision"], "iou": r["iou"], "条款切断率": r["clause_cut_rate"]} for r in m.rows]


def sentence_length(docs, sizes: str = "") -> dict[str, Any]:
    """Median and mean length (characters) of the sentences inside the laws' articles, and the
    chunk sizes named in ``sizes`` (e.g. ``"128 或 256"``, the best recursive sizes of
    :func:`curve_steps`) in median sentences, as "4–8"."""
    lens = [e - s for d in docs for a in d.meta.get("articles", ())
            for s, e in sentence_spans(d.text, a["start"], a["end"])]
    median = float(np.median(lens))
    in_sents = sorted({f"{int(n) / median:.0f}" for n in sizes.replace("或", " ").split()}, key=float)
    return {"sent_median": median, "sent_mean": float(np.mean(lens)), "sizes_in_sentences": "–".join(in_sents)}
