"""Chapter 1, sections 1.5-1.6: miss symptoms tested by counterfactuals, and content types against chunk size.

Every helper takes the chapter's :class:`~chunklab.book.lessons.ch1.Lab` and returns a dict with
``numbers`` for the prose and the tables / figures the section shows. All runs here are BM25
(the chapter embeds only two chunkings with e5), sections 1.6's under the 2,500-character budget.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from IPython.display import Markdown
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ... import get_strategy, route
from ...book.claims import fmt_diff, verdict
from ...book.labels import zh
from ...book.tables import table
from ...datasets.questions import TYPES
from ...evaluation import bootstrap_ci, diagnose
from ...evaluation.diagnose import WINDOW_PAD
from ...evaluation.stats import EQUIVALENCE_MARGINS, paired_many
from .ch1 import BUDGET, Lab, char_range, label, new_figure

# ---------------------------------------------------------------- 1.5 symptoms

DIAG = {"fixed size=32": ("fixed", {"size": 32}), "fixed size=512": ("fixed", {"size": 512}),
        "fixed size=2048": ("fixed", {"size": 2048}),
        "fixed size=512,overlap=256": ("fixed", {"size": 512, "overlap": 256}), "markdown": ("markdown", {})}
SHOWN = ["too_small", "cut", "diluted", "crowded", "ranked_low"]
#: The chunking whose misses supply each symptom's example.
SOURCE = {"too_small": "fixed size=32", "cut": "fixed size=512", "diluted": "fixed size=2048",
          "crowded": "fixed size=512,overlap=256", "ranked_low": "markdown"}
CAUSE = {
    "too_small": "块远比证据短：目标长度或下限设得太小，或按句/按行切了本该成段的内容",
    "cut": "证据跨过了一刀：固定窗口无视段落、条款、表格行的边界",
    "diluted": "装着证据的块太长，分数被其余内容拉低：把证据单独切成一块，它就被检索到了",
    "crowded": "前 k 块里有互相重叠的近重复块：去掉它们，装着证据的块就进了前 k",
    "ranked_low": "证据完整，单独切出来也排不上来，去重也没用：多半是问题和证据用词不同（口语问法、同义词）",
}


def diagnosis(lab: Lab, hybrid_hits: np.ndarray | None = None) -> dict[str, Any]:
    """Section 1.5: tested symptoms (``diagnose``) against the cheap proxies, per chunking, and one example each.

    ``hybrid_hits`` (per question, heading tree, top 5, hybrid retrieval) counts how many of the
    heading tree's ``ranked_low`` misses hybrid retrieval brings into the top 5.
    """
    diag, proxy = {}, {}
    for lab_, (name, params) in DIAG.items():
        lab.chunks(lab_, name, **params)
        proxy[lab_] = lab.run(lab_, n_boot=200)
        diag[lab_] = diagnose(proxy[lab_], lab.docs, lab.chunks(lab_), lab.questions, index=lab.index)
    assert all(r.symptoms["not_indexed"] == 0 for r in diag.values())
    assert all(r.config["misses"] == "counterfactual" for r in diag.values())
    counts = table([[f"`{lab_}`", r.structure["chunks"], f"{r.aggregate['hit']['mean']:.3f}", len(r.bad_cases)]
                    + [r.symptoms[s] for s in SHOWN]
                    + [f"{proxy[lab_].symptoms['diluted']} / {proxy[lab_].symptoms['crowded']}"]
                    for lab_, r in diag.items()],
                   ["切法", "块数", "命中率（hit@5）", "未命中"] + [zh("symptom", s) for s in SHOWN] + ["廉价判据：稀释 / 挤占"])
    by_qid = lab.by_qid
    lines = ["| 症状 | 可能的原因 | 该改什么 | 真实例子（切法：问题 / 证据 / 评测器看到的） |", "| --- | --- | --- | --- |"]
    for sym in SHOWN:
        r = diag[SOURCE[sym]]
        case = next(c for c in r.bad_cases if c["symptom"] == sym)
        lines.append(f"| **{zh('symptom', sym)}** | {CAUSE[sym]} | {zh('advice', sym)} | "
                     f"{_case(sym, case, r, lab.chunks(SOURCE[sym]), by_qid)} |")
    examples = Markdown("\n".join(lines))       # long cells with line breaks: a Markdown table wraps them
    # How circular the proxy is for big chunks: the longest evidence span against the 2048-character chunk holding it.
    gold = lab.gold
    b = lab.layout.chunk_bounds(lab.chunks("fixed size=2048"))
    g_len = (gold[1] - gold[0]).max(axis=1)
    g_start = gold[0][np.arange(len(lab.questions)), (gold[1] - gold[0]).argmax(axis=1)]
    lens = b[1] - b[0]
    holder = np.array([min(lens[(b[0] <= a) & (b[1] >= a + n)], default=0) for a, n in zip(g_start, g_len)])
    held = holder > 0
    md = diag["markdown"]
    low = [c for c in md.bad_cases if c["symptom"] == "ranked_low"]
    hard = bootstrap_ci(np.array([by_qid[c["question_id"]].difficulty == "hard" for c in low], dtype=float), n=1000)
    numbers: dict[str, Any] = {
        "diag_under10": float(np.mean(g_len[held] < 0.1 * holder[held])), "diag_pad": WINDOW_PAD,
        "diag_tiny_dil": sum(c["symptom"] == "diluted" for c in diag["fixed size=32"].bad_cases),
        "low_n": len(low), "low_hard": float(hard["mean"]), "low_hard_ci": f"[{hard['lo']:.0%}, {hard['hi']:.0%}]",
        "hard_all": float(np.mean([q.difficulty == "hard" for q in lab.questions])), "md_miss": len(md.bad_cases)}
    for lab_, key in (("fixed size=2048", "2048"), ("fixed size=512", "512"), ("markdown", "md")):
        numbers[f"diag_miss_{key}"] = len(diag[lab_].bad_cases)
        numbers[f"diag_pdil_{key}"] = proxy[lab_].symptoms["diluted"]
        numbers[f"diag_dil_{key}"] = diag[lab_].symptoms["diluted"]
        numbers[f"diag_low_{key}"] = diag[lab_].symptoms["ranked_low"]
    if hybrid_hits is not None:
        pos = {q.id: i for i, q in enumerate(lab.questions)}
        numbers["low_rescued"] = int(sum(hybrid_hits[pos[c["question_id"]]] for c in low))
    return {"numbers": numbers, "counts": counts, "examples": examples, "diag": diag}


def _case(sym: str, case: dict, r: Any, chunks: list, by_qid: dict) -> str:
    """One missed question, in words: the chunking, question, evidence and what the evaluator saw."""
    q = by_qid[case["question_id"]]
    sp = q.spans[0]
    ev = q.evidence[0].replace("|", "｜").replace("\n", " ")
    ev = ev[:60] + ("…" if len(ev) > 60 else "")
    row = r.ranked[r.question_ids.index(q.id)]
    rank = f"排第 {case['container_rank']}" if case["container_rank"] else "在前 50 名以外"
    if sym in ("too_small", "cut"):
        what = f"证据 {len(q.evidence[0])} 字，被切成 {case['n_pieces']} 块，没有一块完整装着它"
    elif sym == "diluted":
        holder = next(c for c in chunks if c.doc_id == sp.doc_id and c.start <= sp.start and sp.end <= c.end)
        what = (f"装着证据的块长 {len(holder)} 字，证据只占 {len(q.evidence[0]) / len(holder):.1%}，{rank}；"
                f"把证据连同前后 {WINDOW_PAD} 字单独切成一块后，这道题在前 5 块里命中了")
    elif sym == "crowded":
        top = [chunks[int(i)] for i in row[:5] if i >= 0]
        pairs = sum(1 for a in range(len(top)) for b in range(a + 1, len(top))
                    if top[a].doc_id == top[b].doc_id and min(top[a].end, top[b].end) > max(top[a].start, top[b].start))
        what = f"前 5 块里有 {pairs} 对互相重叠的块；装着证据的块{rank}，去掉近重复块后进了前 5"
    else:
        what = f"证据完整地在一块里，该块{rank}；单独切出来也没进前 5；问题难度：{'难' if q.difficulty == 'hard' else '易'}"
    return f"`{SOURCE[sym]}`：**{q.question}**<br>证据：{ev}<br>{what}"


# ---------------------------------------------------------------- 1.6 content types and chunk size

TYPE_CONFIGS = [("fixed", {"size": 512}), ("recursive", {}), ("markdown", {}), ("clause", {}), ("table", {}),
                ("qa_pair", {}), ("dialogue", {}), ("code", {}), ("auto", {})]
SIZES = (128, 256, 384, 512, 768, 1024)
#: Each type-specific strategy, the question type it is named for and the router's type of its documents.
SPECIALISTS = {"code": ("代码", "code"), "table": ("表格", "table"), "qa_pair": ("FAQ", "faq"),
               "dialogue": ("对话", "dialogue")}
#: The target every specialist is re-run with: the heading tree's (and recursive's) default.
MATCHED_TARGET = 500
#: The specialists whose loss on their own type is large enough to ask why (tested); the others are shown only.
TESTED = ("code", "table")


def content_types(lab: Lab) -> dict[str, Any]:
    """Every strategy used for every document; same-budget hit per question type (the heatmap),
    and one strategy (fixed) at many sizes."""
    qtype = np.array([q.type for q in lab.questions])
    types = list(TYPES)
    hits, per_type, overall = {}, {}, {}
    for name, params in TYPE_CONFIGS:
        lab_ = label(name, params)
        lab.chunks(lab_, name, **params)
        h = lab.run(lab_, BUDGET, n_boot=200).per_question["hit"]
        hits[lab_], overall[lab_] = h, bootstrap_ci(h, n=1000)
        per_type[lab_] = {t: bootstrap_ci(h[qtype == t], n=1000) for t in types}
    size_hits = {}
    for sz in SIZES:
        lab.chunks(f"fixed size={sz}", "fixed", size=sz)
        size_hits[sz] = lab.run(f"fixed size={sz}", BUDGET, n_boot=200).per_question["hit"]
    n_type = {t: int((qtype == t).sum()) for t in types}
    labs = list(per_type)
    singles = [l for l in labs if l != "auto"]
    win_strategy = {t: max(singles, key=lambda l: per_type[l][t]["mean"]) for t in types}
    win_size = {t: max(SIZES, key=lambda sz: size_hits[sz][qtype == t].mean()) for t in types}
    best_size = max(SIZES, key=lambda sz: size_hits[sz].mean())
    best_single = max(singles, key=lambda l: overall[l]["mean"])
    # Routing against the best fixed size and against the best single strategy: two comparisons, Holm.
    auto_tests = paired_many({"size": (hits["auto"], size_hits[best_size]), "single": (hits["auto"], hits[best_single])},
                             method="holm", metric="hit")
    type_tests = paired_many({t: (hits["auto"][qtype == t], hits["markdown"][qtype == t]) for t in types},
                             method="holm", metric="hit")
    s_lo, s_hi = min(SIZES), max(s for s in SIZES if s <= 768)
    size_type = {"条款": 1, "表格": 1, "对话": -1}          # expected sign of (short - long)
    size_type_tests = paired_many({t: (size_hits[s_lo][qtype == t], size_hits[s_hi][qtype == t]) for t in size_type},
                                  method="holm", metric="hit")
    md_strategy, auto_strategy = get_strategy("markdown"), get_strategy("auto")
    md_ids = {d.id for d in lab.docs if route(d).doc_type == "markdown"}
    md_docs = len(md_ids)
    chars = lambda lab_: float(lab.run(lab_, BUDGET).aggregate["retrieved_chars"]["mean"])
    und = [(t, r) for t, r in type_tests.items() if verdict(r) == "未能区分"]
    numbers: dict[str, Any] = {
        "n_types": len(types), "n_configs": len(TYPE_CONFIGS),
        "type_n_min": min(n_type.values()), "type_n_max": max(n_type.values()),
        "n_win_strategies": len(set(win_strategy.values())), "n_win_sizes": len(set(win_size.values())),
        "win_size_min": min(win_size.values()), "win_size_max": max(win_size.values()),
        "size_lo": s_lo, "size_hi": s_hi,
        "type_chars": char_range([chars(l) for l in labs] + [chars(f"fixed size={sz}") for sz in SIZES]),
        "best_size": best_size, "best_size_hit": float(size_hits[best_size].mean()),
        "auto_hit": overall["auto"]["mean"], "best_single": best_single, "best_single_hit": overall[best_single]["mean"],
        "md_docs": md_docs, "other_docs": len(lab.docs) - md_docs,
        "q_in_md": float(np.mean([q.spans[0].doc_id in md_ids for q in lab.questions])),
        "md_settings": ("不设最小块长" if not md_strategy.min else f"最小块长 {int(md_strategy.min)} 字") + "、"
                       + ("块间不重叠" if not md_strategy.overlap else f"重叠 {int(md_strategy.overlap)} 字"),
        "auto_min": int(auto_strategy.min), "auto_overlap": int(auto_strategy.overlap),
        "auto_md_types_sig": sum(1 for r in type_tests.values() if r["significant"]),
        "auto_md_undecided": "、".join(f"{t}{' ' if t[-1].isascii() else ''}题" for t, _ in und),
        "auto_md_margin": f"{100 * EQUIVALENCE_MARGINS['hit']:.0f}",
        "size_type_dir": sum(1 for t, x in size_type.items() if np.sign(size_type_tests[t]["diff"]) == x),
        "size_type_sig": sum(1 for t, x in size_type.items()
                             if size_type_tests[t]["significant"] and np.sign(size_type_tests[t]["diff"]) == x),
        "size_type_m": len(size_type)}
    for t, key in (("条款", "clause"), ("表格", "table"), ("对话", "dialogue")):
        numbers[f"win_size_{key}"] = win_size[t]
        numbers[f"size_type_{key}"] = fmt_diff(size_type_tests[t])
    for key, res in auto_tests.items():
        numbers[f"auto_vs_{key}"] = fmt_diff(res)
        numbers[f"auto_vs_{key}_v"] = verdict(res)
    numbers["auto_cmp_chars"] = char_range([chars("auto"), chars(f"fixed size={best_size}"), chars(best_single)])
    type_rows = [[t, n_type[t], f"{per_type['fixed size=512'][t]['mean']:.3f}", f"`{win_strategy[t]}`",
                  f"{per_type[win_strategy[t]][t]['mean']:.3f}", win_size[t], f"{size_hits[win_size[t]][qtype == t].mean():.3f}",
                  f"{per_type['auto'][t]['mean']:.3f}", fmt_diff(type_tests[t])] for t in types]
    type_table = table(type_rows, ["内容类型", "题数", "固定 512", "得分最高的单一策略", "其同预算命中率", "得分最高的固定块长",
                                   "其同预算命中率", "`auto`", "`auto` − 标题树 [区间]"], folded="展开数据表")
    return {"numbers": numbers, "heatmap": _heatmap(per_type, overall, n_type, types), "type_table": type_table,
            "hits": hits, "qtype": qtype, "auto_tests": auto_tests}


def _heatmap(per_type: dict, overall: dict, n_type: dict, types: list) -> Figure:
    labs = list(per_type)
    grid = np.array([[per_type[l][t]["mean"] for t in types] for l in labs])
    fig, ax = new_figure((10.5, 6.6))
    lo = np.floor(grid.min() * 10) / 10
    im = ax.imshow(grid, cmap="viridis", aspect="auto", vmin=lo, vmax=1)
    ax.set_xticks(range(len(types)), [f"{t}\n（{n_type[t]} 题）" for t in types], fontsize=10)
    ax.set_yticks(range(len(labs)), [f"{l}（全部 {overall[l]['mean']:.2f}）" for l in labs], fontsize=10)
    best = grid.max(axis=0)
    for i, l in enumerate(labs):
        for j, t in enumerate(types):
            a = per_type[l][t]
            ax.text(j, i, f"{a['mean']:.2f}\n[{a['lo']:.2f}, {a['hi']:.2f}]", ha="center", va="center", fontsize=9,
                    color="white" if a["mean"] < lo + 0.6 * (1 - lo) else "black")
            if a["mean"] == best[j]:
                ax.add_patch(_rect(j, i))
    ax.set_title(f"每种内容类型下的同预算命中率（{BUDGET:,} 字预算，方括号为 95% 区间，橙框为该列点估计最高，并列都框）", fontsize=11)
    fig.colorbar(im, ax=ax, shrink=0.8, label="同预算命中率")
    fig.tight_layout()
    return fig


def _rect(j: int, i: int) -> Rectangle:
    return Rectangle((j - 0.48, i - 0.46), 0.96, 0.92, fill=False, ec="#f97316", lw=2.2)


def specialists(lab: Lab, hits: dict, qtype: np.ndarray) -> dict[str, Any]:
    """Why the type-specific strategies lose on their own type: their default target and their fallback.

    For each of ``code``, ``table``, ``qa_pair``, ``dialogue``: on the questions of its type, the
    same-budget hit at its default target, at :data:`MATCHED_TARGET` (the heading tree's default),
    and the heading tree's; the share of those questions whose evidence sits in a document the
    router gives that strategy's type; the mean chunk length and fallback share on the documents
    holding the evidence. Three paired differences for each strategy of :data:`TESTED` (six in all,
    Holm): default − heading tree (the loss itself), matched target − default, and matched target −
    heading tree; the others are described only.
    """
    doc_type = {d.id: route(d).doc_type for d in lab.docs}
    rows, pairs, info = [], {}, {}
    for name, (qt, dt) in SPECIALISTS.items():
        m = qtype == qt
        lab_ = f"{name} target={MATCHED_TARGET}"
        lab.chunks(lab_, name, target=MATCHED_TARGET)
        matched = lab.run(lab_, BUDGET, n_boot=200).per_question["hit"]
        ev_docs = {q.spans[0].doc_id for q, keep in zip(lab.questions, m) if keep}
        own = float(np.mean([doc_type[q.spans[0].doc_id] == dt for q, keep in zip(lab.questions, m) if keep]))

        def on_ev(chunks):
            cs = [c for c in chunks if c.doc_id in ev_docs]
            return float(np.mean([len(c) for c in cs])), float(np.mean([c.meta.get("level") == "recursive" for c in cs]))

        len_def, fb_def = on_ev(lab.chunks(name))
        len_500, _ = on_ev(lab.chunks(lab_))
        len_md, _ = on_ev(lab.chunks("markdown"))
        if name in TESTED:
            pairs[name, "def_md"] = (hits[name][m], hits["markdown"][m])
            pairs[name, "size"] = (matched[m], hits[name][m])
            pairs[name, "md"] = (matched[m], hits["markdown"][m])
        info[name] = dict(qt=qt, n=int(m.sum()), own=own, target=int(get_strategy(name).target), fb=fb_def,
                          len_def=len_def, len_500=len_500, len_md=len_md, h_def=float(hits[name][m].mean()),
                          h_500=float(matched[m].mean()), h_md=float(hits["markdown"][m].mean()))
    tests = paired_many(pairs, method="holm", metric="hit")
    for name, d in info.items():
        rows.append([f"`{name}`（{_ti(d['qt'])} {d['n']} 道）", f"{d['own']:.0%}", f"{d['fb']:.0%}",
                     f"{d['target']} → {d['len_def']:.0f}", f"{d['h_def']:.1%}", f"{d['len_500']:.0f}", f"{d['h_500']:.1%}",
                     f"{d['len_md']:.0f}", f"{d['h_md']:.1%}"]
                    + ([fmt_diff(tests[name, k]) for k in ("def_md", "size", "md")] if name in TESTED else ["—"] * 3))
    tab = table(rows, ["策略（对口题）", "证据在对口类型文档里", "证据所在文档的块里回退的", "默认 target → 平均块长",
                       "默认的命中率", f"target={MATCHED_TARGET} 平均块长", "其命中率", "标题树平均块长", "标题树命中率",
                       "默认 − 标题树", f"target={MATCHED_TARGET} − 默认", f"target={MATCHED_TARGET} − 标题树"], folded="展开数据表")
    numbers: dict[str, Any] = {"spec_m": len(tests), "matched_target": MATCHED_TARGET}
    for name, d in info.items():
        for k in ("own", "fb", "len_def", "len_500", "len_md", "h_def", "h_500", "h_md", "target", "n"):
            numbers[f"spec_{name}_{k}"] = d[k]
    for name in TESTED:
        numbers[f"spec_{name}_def_md"] = fmt_diff(tests[name, "def_md"])
        numbers[f"spec_{name}_def_md_v"] = verdict(tests[name, "def_md"])
        numbers[f"spec_{name}_def_md_down"] = int(tests[name, "def_md"]["significant"] and tests[name, "def_md"]["diff"] < 0)
        numbers[f"spec_{name}_size"] = fmt_diff(tests[name, "size"])
        numbers[f"spec_{name}_md"] = fmt_diff(tests[name, "md"])
        numbers[f"spec_{name}_size_up"] = int(tests[name, "size"]["significant"] and tests[name, "size"]["diff"] > 0)
        numbers[f"spec_{name}_md_sig"] = int(tests[name, "md"]["significant"])
    numbers["spec_def_md_down"] = sum(numbers[f"spec_{n}_def_md_down"] for n in TESTED)
    numbers["spec_size_up"] = sum(numbers[f"spec_{n}_size_up"] for n in TESTED)
    numbers["spec_md_sig"] = sum(numbers[f"spec_{n}_md_sig"] for n in TESTED)
    numbers["spec_md_below"] = sum(1 for n in SPECIALISTS if info[n]["h_500"] < info[n]["h_md"])
    up = numbers["spec_size_up"]
    numbers["spec_size_note"] = (
        "两项的区间都不含 0：只改块长，这一步就站得住" if up == len(TESTED) else
        "只有一项的区间不含 0" if up else
        "两项都是点估计上升、区间含 0：单看“只改块长”这一步，这批题（每类几十道）还定不下来；"
        "能下结论的只有一头：默认设置明显输给标题树；改了块长之后，和标题树分不出高低")
    numbers["spec_size_short"] = ("（区间见上）" if up == len(TESTED) else
                                  "（点估计；单看这一步，区间含 0，见上）")
    return {"numbers": numbers, "table": tab, "figure": _specialist_figure(info), "tests": tests}


def _ti(question_type: str) -> str:
    """'代码题', 'FAQ 题': a question type named as questions (a space after Latin letters)."""
    return question_type + (" " if question_type[-1].isascii() else "") + "题"


def _specialist_figure(info: dict) -> Figure:
    fig, ax = new_figure((9, 4))
    names = list(info)
    series = [("h_def", "len_def", "专用策略，默认 target", "#f59e0b"),
              ("h_500", "len_500", f"专用策略，target={MATCHED_TARGET}", "#2563eb"),
              ("h_md", "len_md", "Markdown 标题树", "#16a34a")]
    width = 0.26
    for j, (key, lkey, name, colour) in enumerate(series):
        ys = [info[n][key] for n in names]
        bars = ax.bar(np.arange(len(names)) + (j - 1) * width, ys, width, color=colour, label=name)
        ax.bar_label(bars, [f"{y:.0%}\n{info[n][lkey]:.0f}字" for y, n in zip(ys, names)], fontsize=8, padding=2)
    ax.set_xticks(range(len(names)), [f"{n}\n（{_ti(info[n]['qt'])} {info[n]['n']} 道）" for n in names])
    ax.set_ylim(0, 1.2)
    ax.set_yticks([0, 0.25, 0.5, 0.75, 1.0])
    ax.set_ylabel("同预算命中率")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(loc="upper left", fontsize=8, ncol=3, frameon=False)
    ax.set_title(f"专用策略在对口题上：默认块长、统一 target={MATCHED_TARGET}、标题树（柱顶：命中率 / 证据所在文档的平均块长）",
                 fontsize=10)
    fig.tight_layout()
    return fig
