"""Chapter 4, §4.2 (tables): the C6 protocol and the exploration of how to cut tables.

* :func:`table_questions` — the 口语表格 questions and where their evidence lies.
* :func:`c6_protocol` — the pre-declared comparison (fixed 512 with and without
  ``transcribe_tables``, hit@5) and its three secondary comparisons.
* :func:`table_exploration` — eight ways to store tables, and the gain of "rows + header" over
  fixed 512 split into its two steps (not cutting by fixed length; the table's own rows).
"""
from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from ...base import get_strategy
from ...evaluation import compare
from ...evaluation.stats import paired_many
from ...strategies.container import find_tables, transcribe_tables
from ..claims import fmt_diff, verdict
from ..criteria import criterion
from .ch4 import corpora, rate, run, split_corpus

__all__ = ["table_questions", "c6_protocol", "c6_numbers", "lo_note", "TABLE_CONFIGS", "table_exploration",
           "exploration_notes", "table_figure"]


def table_questions() -> dict[str, Any]:
    """The questions marked 口语表格, how many start inside a Markdown/HTML table, and over how many
    tables and documents those spread."""
    cor = corpora()
    qs = [q for q in cor.xb_questions if q.type == "表格" and q.note and "口语表格" in q.note]
    where, inside = set(), 0
    for q in qs:
        sp = q.spans[0]
        hits = [t for t in find_tables(cor.xb[sp.doc_id].text) if t.start <= sp.start < t.end]
        inside += bool(hits)
        where |= {(sp.doc_id, t.start) for t in hits}
    return {"questions": qs, "n": len(qs), "in_table": inside, "tables": len(where),
            "docs": len({d for d, _ in where})}


def c6_protocol(qs) -> dict[str, Any]:
    """C6 as declared before it ran: the same fixed-512 chunks with and without transcription.

    ``runs[(arm, ruler)]`` for arm 对照/转写 and ruler ``k=5`` (primary), ``3000 字`` (a budget),
    ``每行+表头`` (``table`` one row a chunk, header in context) and ``USE`` (vector retrieval);
    ``primary`` is the paired comparison at k=5 (95%), ``secondary`` the other three, Holm-corrected
    (for 0/1 outcomes stats' deciding interval already covers the exact one, so few discordant
    questions do not make it too narrow).
    """
    cor = corpora()
    fixed = get_strategy("fixed", size=512)
    base = split_corpus(cor.xb_docs, lambda d: fixed)
    treat = [c for d in cor.xb_docs for c in transcribe_tables(d, fixed.split(d))]
    runs = {}
    for arm, chunks in (("对照", base), ("转写", treat)):
        runs[(arm, "k=5")] = run(cor.xb_docs, cor.xb_index, chunks, qs, True)
        runs[(arm, "3000 字")] = run(cor.xb_docs, cor.xb_index, chunks, qs, True, 3000)
        runs[(arm, "USE")] = run(cor.xb_docs, cor.xb_index, chunks, qs, True,
                                 engine="dense", embedder="use-multilingual")
    for arm, tr in (("对照", False), ("转写", True)):
        s = get_strategy("table", target=500, max=1500, mode="rows", rows=1, transcribe=tr)
        runs[(arm, "每行+表头")] = run(cor.xb_docs, cor.xb_index, split_corpus(cor.xb_docs, lambda d: s), qs, True)
    primary = compare(runs[("转写", "k=5")], runs[("对照", "k=5")], metrics=("hit",))["hit"]
    rulers = ("3000 字", "每行+表头", "USE")
    secondary = paired_many({r: (runs[("转写", r)].per_question["hit"], runs[("对照", r)].per_question["hit"])
                             for r in rulers}, "holm", metric="hit")
    return {"runs": runs, "primary": primary, "secondary": secondary,
            "changed": sum(a.context != b.context for a, b in zip(base, treat)), "n_chunks": len(base),
            "claimed": criterion("C6", "hit").claimed}


def c6_rows(res: dict[str, Any]) -> list[list[str]]:
    """The protocol's table: ruler, control, transcribed, characters delivered, difference, verdict."""
    rows = []
    claimed = res["claimed"]
    for ruler, r, word in [("k=5（主对比）", res["primary"], verdict(res["primary"], claimed=claimed))] + \
            [(k, r, verdict(r)) for k, r in res["secondary"].items()]:
        key = ruler.removesuffix("（主对比）")
        b, t = (res["runs"][(arm, key)].aggregate for arm in ("对照", "转写"))
        rows.append([ruler, f"{b['hit']['mean']:.1%}", f"{t['hit']['mean']:.1%}",
                     f"{b['retrieved_chars']['mean']:.0f} / {t['retrieved_chars']['mean']:.0f} 字",
                     fmt_diff(r), word])
    return rows


def c6_numbers(res: dict[str, Any]) -> dict[str, Any]:
    """Prose values of the C6 protocol."""
    c6, claimed = res["primary"], res["claimed"]
    out = {"c6_changed": res["changed"], "c6_base": rate(res["runs"][("对照", "k=5")]),
           "c6_treat": rate(res["runs"][("转写", "k=5")]), "c6_ci": fmt_diff(c6),
           "c6_plain_verdict": verdict(c6), "c6_verdict": verdict(c6, claimed=claimed), "c6_claimed": claimed,
           "c6_outside": not c6["lo"] <= claimed <= c6["hi"], "c6_lo_zero": c6["lo"] == 0}
    for ruler, key in (("3000 字", "b3k"), ("每行+表头", "rows"), ("USE", "use")):
        r = res["secondary"][ruler]
        out[f"c6_{key}_ci"], out[f"c6_{key}_verdict"] = fmt_diff(r), verdict(r)
        for arm, tag in (("对照", "base"), ("转写", "treat")):
            out[f"c6_{key}_{tag}"] = rate(res["runs"][(arm, ruler)])
    # sentences whose wording follows the results (the prose shows them as they are)
    out["c6_lo_note"] = lo_note(c6)
    hi = f"{c6['hi']:+.1%}"
    out["c6_size_note"] = (f"文章的 +{claimed * 100:.0f} 个百分点远在区间上端 {hi} 之外：在我们的数据上，文章说的幅度被排除了。"
                           if out["c6_outside"] else
                           f"文章的 +{claimed * 100:.0f} 个百分点落在区间里（上端 {hi}），我们的数据排除不了它。")
    out["c6_size_short"] = "文章的 +34 个百分点在区间之外" if out["c6_outside"] else "区间没有排除文章的 +34 个百分点"
    return out


def lo_note(r: dict[str, Any]) -> str:
    """What the interval's lower end says about 0, in one sentence: spelled out to two decimals only
    when it would print as 0.0% (then it says whether it is exactly 0).

    >>> lo_note({"lo": 0.0, "hi": 0.149})[:20]
    '区间下端打印成 0.0%，它恰好是 0，'
    >>> lo_note({"lo": -0.0265, "hi": 0.172})
    '区间含 0，不显著。'
    >>> lo_note({"lo": 0.0004, "hi": 0.172})
    '区间下端打印成 0.0%，实际是 +0.04%，在 0 之上，排除了 0。'
    """
    lo, hi = r["lo"], r["hi"]
    if lo == 0:
        return ("区间下端打印成 0.0%，它恰好是 0，不是四舍五入出来的：区间碰到了 0、没有排除 0，"
                "所以方向虽然一致，却不显著。")
    side = "在 0 之上，排除了 0" if lo > 0 else "在 0 之下，没有排除 0"
    if abs(lo) < 0.0005:
        return f"区间下端打印成 {lo:.1%}，实际是 {lo:+.2%}，{side}。"
    if lo < 0 < hi:
        return "区间含 0，不显著。"
    return "区间整个在 0 之上，排除了 0。" if lo > 0 else "区间整个在 0 之下，排除了 0。"


#: The exploration's eight configurations: label, strategy, parameters. Non-table text is cut at 500
#: (``fixed`` at 512) in all of them; only the handling of tables changes.
_SIZE = {"target": 500, "max": 1500}
TABLE_CONFIGS = [
    ("fixed 512", "fixed", {"size": 512}),
    ("recursive 500", "recursive", {"target": 500}),
    ("table 整表", "table", {**_SIZE, "transcribe": False}),
    ("table 整表 + 转写", "table", {**_SIZE, "transcribe": True}),
    ("table 每 3 行 + 表头", "table", {**_SIZE, "mode": "rows", "rows": 3, "transcribe": False}),
    ("table 每 3 行 + 表头 + 转写", "table", {**_SIZE, "mode": "rows", "rows": 3, "transcribe": True}),
    ("table 每行 + 表头", "table", {**_SIZE, "mode": "rows", "rows": 1, "transcribe": False}),
    ("table 每行 + 表头 + 转写", "table", {**_SIZE, "mode": "rows", "rows": 1, "transcribe": True}),
]


def table_exploration(qs) -> dict[str, Any]:
    """The eight :data:`TABLE_CONFIGS` at k=5 and under a 3000-character budget (BM25, context
    indexed), and five comparisons under the budget, Holm-corrected together:

    * ``total`` rows + header − fixed 512, split into two steps:
    * ``step1`` recursive 500 − fixed 512: what not cutting by a fixed length already gives;
    * ``step2`` rows + header − recursive 500: what cutting at the table's own rows adds;
    * ``whole`` rows + header − whole table (BM25), and ``whole_use`` the same under USE vectors.
    Also the mean length of the table chunks of the whole-table and one-row configurations.
    """
    cor = corpora()
    results, chunk_sets = {}, {}
    for label, name, params in TABLE_CONFIGS:
        s = get_strategy(name, **params)
        chunk_sets[label] = chunks = split_corpus(cor.xb_docs, lambda d: s)
        for budget in (None, 3000):
            results[(label, budget)] = run(cor.xb_docs, cor.xb_index, chunks, qs, True, budget)
    for label in ("table 整表", "table 每行 + 表头"):
        results[(label, "USE")] = run(cor.xb_docs, cor.xb_index, chunk_sets[label], qs, True, 3000,
                                      engine="dense", embedder="use-multilingual")

    def pq(label, ruler=3000):
        return results[(label, ruler)].per_question["hit"]

    cmp = paired_many({"total": (pq("table 每行 + 表头"), pq("fixed 512")),
                       "step1": (pq("recursive 500"), pq("fixed 512")),
                       "step2": (pq("table 每行 + 表头"), pq("recursive 500")),
                       "whole": (pq("table 每行 + 表头"), pq("table 整表")),
                       "whole_use": (pq("table 每行 + 表头", "USE"), pq("table 整表", "USE"))},
                      "holm", metric="hit")
    table_len = {label: float(np.mean([len(c) for c in chunk_sets[label] if c.meta.get("kind") == "table"]))
                 for label in ("table 整表", "table 每行 + 表头")}
    return {"results": results, "cmp": cmp, "table_len": table_len}


def exploration_numbers(res: dict[str, Any]) -> dict[str, Any]:
    """Prose values of the exploration."""
    r = res["results"]
    out = {"t_fixed_k5": rate(r[("fixed 512", None)]), "t_fixed_b": rate(r[("fixed 512", 3000)]),
           "t_rec_b": rate(r[("recursive 500", 3000)]), "t_whole_b": rate(r[("table 整表", 3000)]),
           "t_rows1_b": rate(r[("table 每行 + 表头", 3000)]),
           "t_whole_use": rate(r[("table 整表", "USE")]), "t_rows1_use": rate(r[("table 每行 + 表头", "USE")]),
           "t_whole_len": res["table_len"]["table 整表"], "t_rows1_len": res["table_len"]["table 每行 + 表头"],
           "t_total_diff": rate(r[("table 每行 + 表头", 3000)]) - rate(r[("fixed 512", 3000)])}
    for key, c in res["cmp"].items():
        out[f"t_{key}_ci"], out[f"t_{key}_verdict"] = fmt_diff(c), verdict(c)
    out.update(exploration_notes(res["cmp"]))
    return out


def exploration_notes(cmp: dict[str, dict[str, Any]]) -> dict[str, str]:
    """The exploration's sentences whose wording follows its five comparisons (``table_exploration``'s
    ``cmp``): headings, the reading of the two steps, rows vs whole table, and the takeaways.

    >>> ns = {"diff": 0.13, "lo": -0.02, "hi": 0.30, "significant": False, "m": 5}
    >>> notes = exploration_notes({k: ns for k in ("total", "step1", "step2", "whole", "whole_use")})
    >>> notes["t_whole_head"]
    '按行切的点估计领先整表，但区间含 0、不显著；文章 000 的“绝不按行切”在这批题上得不到支持，也推翻不了。'
    >>> exploration_notes({k: dict(ns, lo=0.02, significant=True) for k in ("total", "step1", "step2",
    ...                    "whole", "whole_use")})["t_whole_head"]
    '按行切在检索上领先整表，和文章 000 的“绝不按行切”不一致。'
    """
    def up(key):         # "supported": the interval is above 0
        return cmp[key]["significant"] and cmp[key]["diff"] > 0

    def ahead(key):      # ahead on the point estimate only
        return not cmp[key]["significant"] and cmp[key]["diff"] > 0

    total, whole, v_total, v_whole = cmp["total"], cmp["whole"], verdict(cmp["total"]), verdict(cmp["whole"])
    out = {}
    if up("total"):
        out["t_total_head"] = "“按行切 + 表头”比固定 512 高；其中多少是表格专用切法的功劳，这批题分不清。"
        out["t_total_short"] = f"按行切比固定 512 高（{v_total}）"
    elif ahead("total"):
        out["t_total_head"] = "“按行切 + 表头”的点估计比固定 512 高，但区间含 0，这批题不足以确定；其中多少是表格专用切法的功劳，更分不清。"
        out["t_total_short"] = f"按行切比固定 512 高（{v_total}）"
    else:
        out["t_total_head"] = "“按行切 + 表头”没有比固定 512 高。"
        out["t_total_short"] = f"按行切没有比固定 512 高（{v_total}）"
    steps = [k for k in ("step1", "step2") if cmp[k]["significant"]]
    if not steps:
        out["t_steps_note"] = "两步各自都没有排除 0：差距里多少来自表格专用的切法、多少只是因为不再用固定长度切，这批题分不清"
    else:
        out["t_steps_note"] = ("排除了 0 的只有" + {"step1": "第一步", "step2": "第二步"}[steps[0]]
                               if len(steps) == 1 else "两步各自都排除了 0")
    if all(cmp[k]["diff"] > 0 for k in ("step1", "step2")):
        out["t_steps_note"] += "；两步的方向都指向“别用固定长度切表格”。"
    else:
        out["t_steps_note"] += "。"
    same_side = (whole["diff"] > 0) == (cmp["whole_use"]["diff"] > 0)
    out["t_whole_use_side"] = "方向相同" if same_side else "方向相反"
    if up("whole"):
        out["t_whole_head"] = "按行切在检索上领先整表，和文章 000 的“绝不按行切”不一致。"
        out["t_whole_half"] = "只和“绝不按行切”这半句不一致"
        out["t_whole_takeaway"] = f"高于整表（{v_whole}），和文章 000、001 的“整表一块”不一致"
    elif ahead("whole"):
        out["t_whole_head"] = "按行切的点估计领先整表，但区间含 0、不显著；文章 000 的“绝不按行切”在这批题上得不到支持，也推翻不了。"
        out["t_whole_half"] = "只在方向上和“绝不按行切”这半句不一致（不显著）"
        out["t_whole_takeaway"] = (f"高于整表（{v_whole}）：这批题不支持文章 000、001 的“整表一块”，"
                                   "也不足以推翻它")
    else:
        out["t_whole_head"] = "按行切在检索上没有领先整表。"
        out["t_whole_half"] = "和“绝不按行切”并不矛盾"
        out["t_whole_takeaway"] = f"没有高于整表（{v_whole}）"
    return out


def exploration_rows(res: dict[str, Any]) -> list[list[str]]:
    """One row per configuration: hit@5 and hit under the budget, each with its 95% interval."""
    def cell(x):
        a = x.aggregate["hit"]
        return f"{a['mean']:.1%} [{a['lo']:.0%}, {a['hi']:.0%}]"
    return [[label, cell(res["results"][(label, None)]), cell(res["results"][(label, 3000)])]
            for label, _, _ in TABLE_CONFIGS]


def table_figure(res: dict[str, Any]):
    """Hit of the eight configurations at k=5 and under the 3000-character budget, with intervals."""
    fig, ax = plt.subplots(figsize=(9.5, 4))
    labels = [c[0] for c in TABLE_CONFIGS]
    for j, budget in enumerate((None, 3000)):
        agg = [res["results"][(lab, budget)].aggregate["hit"] for lab in labels]
        y = np.arange(len(labels)) + (0.2 if j else -0.2)
        means = [a["mean"] for a in agg]
        ax.barh(y, means, height=0.38, color="#d97706" if j else "#fcd34d",
                label="固定 3000 字预算" if j else "固定 k=5")
        ax.errorbar(means, y, xerr=[[a["mean"] - a["lo"] for a in agg], [a["hi"] - a["mean"] for a in agg]],
                    fmt="none", color="black", capsize=3)
    ax.set_yticks(range(len(labels)), labels)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("口语化表格题的命中率（横线：95% 区间）")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9, frameon=False)
    fig.tight_layout()
    return fig
