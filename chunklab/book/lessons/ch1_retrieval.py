"""Chapter 1, section 1.4: C1 (annual and sick leave), the heading tree against fixed windows under
three retrievers, hit by question difficulty, and the labour-law corpus.

Every helper takes the chapter's :class:`~chunklab.book.lessons.ch1.Lab` and returns a dict with
``numbers`` for the prose and the tables / figures the section shows.
"""
from __future__ import annotations

import re
from typing import Any

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from ... import get_strategy
from ...book.claims import claim_row, fmt_diff, verdict
from ...book.tables import table
from ...datasets import load_corpus
from ...datasets.questions import load_questions
from ...evaluation import evaluate, paired_bootstrap
from ...evaluation.stats import EQUIVALENCE_MARGINS, paired_many
from ...length import count_tokens
from ...retrieval import CorpusIndex, get_embedder, tokenize
from .ch1 import BUDGET, Lab, new_figure

RETRIEVERS = {"bm25": "BM25", "dense": "e5 向量", "hybrid": "混合（BM25 + e5）"}
LAW_RETRIEVERS = {"bm25": "BM25", "dense": "USE 向量", "hybrid": "混合（BM25 + USE）"}
SETTINGS = {"k": ("前 5 块", None), "budget": (f"{BUDGET:,} 字预算", BUDGET)}
#: The two chunkings this chapter embeds with e5 (each costs one pass over 小北).
E5_LABELS = ("fixed size=512", "markdown")
COLOURS = {"bm25": "#2563eb", "dense": "#dc2626", "hybrid": "#7c3aed"}
DIFFICULTY_ZH = {"easy": "易题", "hard": "难题"}


def _headings(c) -> list[str]:
    """The '### x.y title' headings inside a chunk, as 'x.y title'."""
    return [m.group(1) for m in re.finditer(r"^### (\S+ \S+)", c.text, re.M)]


def _ahead(a, b, name_a: str, name_b: str) -> str:
    """Which of two ranks is better, in words."""
    if a == b:
        return "两者同名次"
    name = name_a if (b is None or (a is not None and a < b)) else name_b
    return name + (" " if name[-1].isascii() else "") + "靠前"


def c1_single(lab: Lab, qid: str = "xb-a-001") -> dict[str, Any]:
    """C1's single question: where the token-512 cut falls, and the evidence chunk's rank per retriever."""
    q = lab.by_qid[qid]
    hb = lab.handbook
    tok = [c for c in lab.chunks("token size=512") if c.doc_id == hb.id]
    sp = q.spans[0]
    holder = next(c for c in tok if c.start <= sp.start and sp.end <= c.end)
    prev = next(c for c in tok if c.end == holder.start)
    sec = {n: hb.text.index(f"### {n}") for n in ("3.1 年假", "3.2 病假", "3.3 事假")}
    tpc = sum(count_tokens(d.text) for d in lab.docs) / sum(len(d.text) for d in lab.docs)
    hb_index = CorpusIndex([hb])

    def rank(docs, chunks, engine, index):
        r = evaluate(docs, chunks, [q], k=len(chunks), index=index, engine=engine, embedder=lab.e5,
                     depth=len(chunks), n_boot=1)
        m = r.per_question["mrr"][0]
        return list(r.ranked[0]), (int(round(1 / m)) if m > 0 else None)

    ranks, rankings, rows = {}, {}, []
    for lab_ in ("token size=512", "fixed size=512", "markdown", "auto"):
        chunks = lab.chunks(lab_)
        rk = {}
        for e in (("bm25", "dense", "hybrid") if lab_ in E5_LABELS else ("bm25",)):
            rankings[lab_, e], rk[e] = rank(lab.docs, chunks, e, lab.index)
        rk["hb"] = rank([hb], [c for c in chunks if c.doc_id == hb.id], "bm25", hb_index)[1]
        top = chunks[int(rankings[lab_, "bm25"][0])]
        rk["top_doc"] = top.doc_id
        ranks[lab_] = rk
        where = " > ".join(top.meta.get("path", [])[1:]) or f"[{top.start}:{top.end})"
        snippet = " ".join(top.text.split())[:24]
        cell = lambda e: rk.get(e, "—")
        rows.append([f"`{lab_}`", cell("bm25"), cell("dense"), cell("hybrid"), rk["hb"], f"`{top.doc_id}` {where}：{snippet}…"])
    tab = table(rows, ["切法", "BM25 全语料", "e5 向量 全语料", "混合 全语料", "BM25 仅手册", "全语料 BM25 排第 1 的块"])
    tok_, fix_, md_ = ranks["token size=512"], ranks["fixed size=512"], ranks["markdown"]
    md_chunks = lab.chunks("markdown")
    above = [md_chunks[int(i)] for i in rankings["markdown", "bm25"][: (md_["bm25"] or 1) - 1]]
    qb = set(tokenize(q.question))
    shared = [t for t in dict.fromkeys(tokenize(holder.text)) if t in qb and len(t) == 2]
    faq = next(c for c in md_chunks if c.doc_id == "faq_hr" and "病假期间工资怎么发" in c.text)
    i0 = faq.text.index("问：病假期间工资怎么发")
    top_docs = sorted({r["top_doc"] for r in ranks.values()})
    reproduced = tok_["bm25"] is not None and tok_["bm25"] > 5 and md_["bm25"] is not None and md_["bm25"] <= 5
    dense_rep = (fix_["dense"] is None or fix_["dense"] > 5) and md_["dense"] is not None and md_["dense"] <= 5
    apart = "### 3.2" in prev.text and "### 3.2" not in holder.text
    numbers = {
        "c1_holder_len": len(holder), "c1_holder_tokens": int(holder.meta["tokens"]),
        "xb_tok_per_char": round(tpc, 2), "c1_holder_tpc": round(holder.meta["tokens"] / len(holder), 2),
        "tok512_len": float(np.mean([len(c) for c in lab.chunks("token size=512")])),
        "c1_sec31_len": sec["3.2 病假"] - sec["3.1 年假"], "c1_sec32_len": sec["3.3 事假"] - sec["3.2 病假"],
        "c1_prev_secs": "、".join(_headings(prev)) or "（没有节标题）",
        "c1_holder_secs": "、".join(_headings(holder)) or "（没有节标题）",
        "c1_apart": "标题“3.2 病假”和病假工资那句证据被分进了两块" if apart else "标题“3.2 病假”和病假工资那句证据在同一块里",
        "c1_top_docs": "、".join(top_docs), "c1_top_same": "四种切法下都是它" if len(top_docs) == 1 else "不同切法下不是同一篇",
        "c1_faq": faq.text[i0:i0 + 70].replace("\n", " "),
        "c1_md_above": "、".join(f"{c.doc_id} 的“{' > '.join(c.meta['path'][1:])}”（{len(c)} 字）" for c in above) or "（没有）",
        "c1_shared": "、".join(f"“{t}”" for t in shared),
        "c1_bm25_order": _ahead(md_["bm25"], tok_["bm25"], "标题树", "固定 512 token"),
        "c1_dense_order": _ahead(md_["dense"], fix_["dense"], "标题树", "固定 512 字"),
        "c1_hybrid_order": _ahead(md_["hybrid"], fix_["hybrid"], "标题树", "固定 512 字"),
        "c1_reproduced": "复现了" if reproduced else "没有复现",
        "c1_dense_reproduced": "复现了" if dense_rep else "也没有复现",
    }
    for lab_, key in (("token size=512", "tok"), ("fixed size=512", "fix"), ("markdown", "md")):
        for e in ("bm25", "dense", "hybrid", "hb"):
            if e in ranks[lab_]:
                numbers[f"c1_{key}_{e}"] = ranks[lab_][e]
    rows = [claim_row("C1", "“病假期间工资怎么算”的证据块名次：固定 512 token → 标题树（BM25，全语料）", "第 7 → 第 1",
                      f"第 {tok_['bm25']} → 第 {md_['bm25']}",
                      "单题的名次受偶然因素左右（FAQ 里重复了这条答案）；e5 向量下（固定 512 字）："
                      f"第 {fix_['dense']} → 第 {md_['dense']}。别拿一道题决定切法。", part="rank", holds=reproduced),
            claim_row("C1", "固定 512 token 下，病假证据所在的块里混着 3.1 年假", "是",
                      "是" if "### 3.1" in holder.text else "否",
                      f"我们的块里是 {'、'.join(_headings(holder))}：固定切分同样无视标题，只是刀口位置随文本长短而变。",
                      part="mixed", holds="### 3.1" in holder.text)]
    return {"numbers": numbers, "table": tab, "claim_rows": rows, "sec31": sec["3.1 年假"]}


def retriever_runs(lab: Lab) -> dict[str, Any]:
    """小北: heading tree against fixed 512 (and token 512 under BM25), three retrievers, top 5 and budget.

    ``tests`` holds the seven comparisons of the claims rows (Holm together); ``ret_tests`` the
    four retriever-against-BM25 differences (Holm together).
    """
    runs = {}
    for lab_ in E5_LABELS:
        for e in RETRIEVERS:
            for st, (_, budget) in SETTINGS.items():
                runs[lab_, e, st] = (lab.run(lab_, budget) if e == "bm25" else
                                     evaluate(lab.docs, lab.chunks(lab_), lab.questions, k=5, index=lab.index,
                                              engine=e, embedder=lab.e5, budget=budget, n_boot=1000))
    runs["token size=512", "bm25", "k"] = lab.run("token size=512")
    hit = lambda lab_, e, st: runs[lab_, e, st].per_question["hit"]
    keys = [("token size=512", "bm25", "k")] + [("fixed size=512", e, st) for st in SETTINGS for e in RETRIEVERS]
    tests = paired_many({t: (hit("markdown", t[1], t[2]), hit(*t)) for t in keys}, method="holm", metric="hit")
    ret_tests = paired_many({(key, e): (hit(lab_, e, "k"), hit(lab_, "bm25", "k"))
                             for lab_, key in (("fixed size=512", "fix"), ("markdown", "md")) for e in ("dense", "hybrid")},
                            method="holm", metric="hit")
    chars = lambda key: float(runs[key].aggregate["retrieved_chars"]["mean"])
    numbers: dict[str, Any] = {"xb_m": len(tests), "ret_m": len(ret_tests), "md_chunks": len(lab.chunks("markdown"))}
    for (base, e, st), res in tests.items():
        numbers[f"xb_{'tok' if base.startswith('token') else 'fix'}_{e}_{st}"] = fmt_diff(res)
    for lab_, key in (("fixed size=512", "fix"), ("markdown", "md")):
        for e in RETRIEVERS:
            numbers[f"xbhit_{key}_{e}"] = float(hit(lab_, e, "k").mean())
            if e != "bm25":
                numbers[f"ret_{key}_{e}"] = fmt_diff(ret_tests[key, e])
        numbers[f"xb_ctx_{key}"] = chars((lab_, "bm25", "k"))
    hyb = {key: ret_tests[key, "hybrid"]["significant"] and ret_tests[key, "hybrid"]["diff"] > 0 for key in ("fix", "md")}
    numbers["ret_hybrid_note"] = ("区间都不含 0" if all(hyb.values()) else
                                  "固定 512 字的区间不含 0，标题树的含 0" if hyb["fix"] else
                                  "标题树的区间不含 0，固定 512 字的含 0" if hyb["md"] else "区间都含 0")
    numbers["ret_hybrid_sig"] = sum(hyb.values())
    over = {lab_: runs[lab_, "dense", "k"].summary().get("embedder_over_limit", 0) for lab_ in E5_LABELS}
    numbers["e5_over_md"] = int(over["markdown"])
    numbers["e5_over_fix_words"] = f"有 {int(over['fixed size=512'])} 块" if over["fixed size=512"] else "一块也没有"
    numbers["xb_budget_chars"] = f"{min(chars((l, e, 'budget')) for l in E5_LABELS for e in RETRIEVERS):,.0f}"
    claim_rows = []
    for base, e, st in keys:
        res = tests[base, e, st]
        what = "命中率（hit@5）" if st == "k" else "同预算命中率"
        name = "固定 512 token" if base.startswith("token") else "固定 512 字"
        practice = ("取前 5 块时固定切分靠更长的块多交材料，这一格偏袒它" if st == "k"
                    else "交给模型的字数相同，比的是块切得好不好：结构感知切法值得先试")
        claim_rows.append(claim_row(
            "C1", f"全部题目的{what}：{name} → 标题树（{RETRIEVERS[e]}，{SETTINGS[st][0]}）", "—（文章只给了单题）",
            f"{hit(base, e, st).mean():.1%} → {hit('markdown', e, st).mean():.1%}，差 {fmt_diff(res)}",
            f"{practice}（{len(tests)} 个比较一起做 Holm 校正）", part="hit", result=res))
    return {"runs": runs, "tests": tests, "ret_tests": ret_tests, "numbers": numbers, "claim_rows": claim_rows,
            "figure": difference_figure(tests, [("fixed size=512", e, st) for st in SETTINGS for e in RETRIEVERS],
                                        RETRIEVERS, "小北：标题树 − 固定 512 字")}


def difference_figure(tests: dict, keys: list, names: dict, title: str) -> Figure:
    """Paired differences with their deciding intervals, one row per (retriever, setting); filled = decided."""
    fig, ax = new_figure((7.2, 3.2))
    for y, key in enumerate(keys):
        res = tests[key]
        e = key[-2]
        ax.errorbar(res["diff"], y, xerr=[[res["diff"] - res["lo"]], [res["hi"] - res["diff"]]], fmt="o",
                    color=COLOURS[e], mfc=COLOURS[e] if res["significant"] else "white", capsize=3, lw=1.6)
    ax.set_yticks(range(len(keys)), [f"{names[k[-2]]} · {SETTINGS[k[-1]][0]}" for k in keys], fontsize=9)
    ax.axvline(0, color="#555", lw=1)
    ax.invert_yaxis()
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:+.0%}"))
    ax.grid(axis="x", alpha=0.3)
    ax.set_xlabel("命中率之差（决定判定的区间，Holm 校正；实心点：区间不含 0）")
    ax.set_title(title, fontsize=11)
    fig.tight_layout()
    return fig


def by_difficulty(lab: Lab, runs: dict) -> dict[str, Any]:
    """Hit@5 by question difficulty (easy / hard) for the three retrievers; e5 − BM25 and hybrid − BM25 per difficulty.

    The eight differences (two chunkings × two difficulties × two retrievers against BM25) are
    Holm-corrected together: the prose reads both the hybrid's and e5 alone's against BM25.
    """
    diff = np.array([q.difficulty for q in lab.questions])
    levels = [d for d in DIFFICULTY_ZH if (diff == d).any()]
    hit = lambda lab_, e: runs[lab_, e, "k"].per_question["hit"]
    chunkings = (("fixed size=512", "fix", "固定 512 字"), ("markdown", "md", "标题树"))
    tests = paired_many({(key, d, e): (hit(lab_, e)[diff == d], hit(lab_, "bm25")[diff == d])
                         for lab_, key, _ in chunkings for d in levels for e in ("dense", "hybrid")},
                        method="holm", metric="hit")
    fig, axes = new_figure((8.4, 3.3), 1, 2, sharey=True)
    width = 0.26
    for ax, (lab_, name) in zip(axes, (("fixed size=512", "固定 512 字"), ("markdown", "Markdown 标题树"))):
        for j, e in enumerate(RETRIEVERS):
            ys = [hit(lab_, e)[diff == d].mean() for d in levels]
            bars = ax.bar(np.arange(len(levels)) + (j - 1) * width, ys, width, color=COLOURS[e], label=RETRIEVERS[e])
            ax.bar_label(bars, [f"{y:.0%}" for y in ys], fontsize=8, padding=2)
        ax.set_xticks(range(len(levels)), [f"{DIFFICULTY_ZH[d]}（{int((diff == d).sum())} 道）" for d in levels])
        ax.set_title(name, fontsize=11)
        ax.set_ylim(0, 1.08)
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("命中率（hit@5）")
    handles, names = axes[0].get_legend_handles_labels()
    fig.legend(handles, names, loc="lower center", ncol=3, fontsize=9, frameon=False)
    fig.suptitle("小北：按题目难度分开看三种检索器（取前 5 块）", fontsize=12)
    fig.tight_layout(rect=(0, 0.08, 1, 0.95))
    rows, numbers = [], {}
    for (key, d, e), res in tests.items():
        lab_, name = next((l, n) for l, k, n in chunkings if k == key)
        rows.append([name, DIFFICULTY_ZH[d], f"{RETRIEVERS[e]} − BM25",
                     f"{hit(lab_, 'bm25')[diff == d].mean():.1%} → {hit(lab_, e)[diff == d].mean():.1%}",
                     fmt_diff(res), verdict(res)])
        # hybrid − BM25 keeps its old name (dif_fix_hard); e5 − BM25 is difd_fix_hard
        stem = f"dif_{key}_{d}" if e == "hybrid" else f"difd_{key}_{d}"
        numbers[stem] = fmt_diff(res)
        numbers[f"{stem}_v"] = verdict(res)
        numbers[f"{stem}_up"] = int(res["significant"] and res["diff"] > 0)
    for lab_, key, _ in chunkings:
        for d in levels:
            for e in RETRIEVERS:
                numbers[f"dif_{key}_{d}_{e}"] = float(hit(lab_, e)[diff == d].mean())
    tab = table(rows, ["切法", "难度", "比较", "命中率（BM25 → 对方）", "差 [区间]", "判定"], folded="展开数据表")
    lost = {key: int(((hit(l, "bm25") == 1) & (hit(l, "hybrid") == 0)).sum()) for l, key, _ in chunkings}
    gained = {key: int(((hit(l, "bm25") == 0) & (hit(l, "hybrid") == 1)).sum()) for l, key, _ in chunkings}
    for key in lost:
        numbers[f"dif_lost_{key}"], numbers[f"dif_gained_{key}"] = lost[key], gained[key]
    numbers["dif_m"] = len(tests)
    return {"numbers": numbers, "figure": fig, "table": tab, "tests": tests}


def laws(lab: Lab) -> dict[str, Any]:
    """The labour-law subset: clause against fixed 512 under BM25, USE and hybrid, top 5 and budget."""
    corpus = load_corpus("laws:labour")
    docs = list(corpus.documents)
    ids = {d.id for d in docs}
    all_qs = load_questions("laws")
    qs = [q for q in all_qs if all(sp.doc_id in ids for sp in q.spans)]
    index = CorpusIndex(docs)
    use = get_embedder("use-multilingual")
    chunks = {lab_: get_strategy(name, **params).split_documents(docs)
              for lab_, (name, params) in (("fixed size=512", ("fixed", {"size": 512})), ("clause", ("clause", {})),
                                           ("auto", ("auto", {})))}
    runs = {(lab_, e, st): evaluate(docs, chunks[lab_], qs, k=5, index=index, engine=e, embedder=use, budget=budget,
                                    n_boot=1000)
            for lab_ in ("fixed size=512", "clause") for e in RETRIEVERS for st, (_, budget) in SETTINGS.items()}
    hit = lambda lab_, e, st: runs[lab_, e, st].per_question["hit"]
    keys = [(e, st) for st in SETTINGS for e in RETRIEVERS]
    tests = paired_many({key: (hit("clause", *key), hit("fixed size=512", *key)) for key in keys}, method="holm",
                        metric="hit")
    chars = lambda key: float(runs[key].aggregate["retrieved_chars"]["mean"])
    rows = [[f"{LAW_RETRIEVERS[e]} · {SETTINGS[st][0]}", f"{hit('clause', e, st).mean():.1%}",
             f"{hit('fixed size=512', e, st).mean():.1%}",
             f"{chars(('clause', e, st)):,.0f} / {chars(('fixed size=512', e, st)):,.0f}", fmt_diff(tests[e, st]),
             verdict(tests[e, st])] for e, st in keys]
    tab = table(rows, ["检索器 · 取法", "条款", "固定 512 字", "每题交付（字，条款 / 固定）", "条款 − 固定 [区间]", "判定"],
                folded="展开数据表")
    same = [(c.doc_id, c.start, c.end) for c in chunks["auto"]] == [(c.doc_id, c.start, c.end) for c in chunks["clause"]]
    short = {}
    for lab_ in ("clause", "fixed size=512"):
        r = runs[lab_, "bm25", "budget"]
        s = np.asarray(r.per_question["retrieved_chars"]) < BUDGET
        assert (np.asarray(r.ranked)[s] < 0).any(axis=1).all()      # each ran out of scored chunks
        short[lab_] = int(s.sum())
    numbers = {"law_n_docs": len(docs), "law_chars": sum(len(d.text) for d in docs), "law_q": len(qs),
               "law_q_all": len(all_qs), "law_m": len(tests),
               "law_auto_same": ("auto 把这几部法律都判为条款文本，切出的块与 clause 完全相同，所以这里的结果也就是 auto 的"
                                 if same else "auto 切出的块与 clause 不完全相同，这里只比较 clause"),
               "law_len_fix": float(np.mean([len(c) for c in chunks["fixed size=512"]])),
               "law_len_clause": float(np.mean([len(c) for c in chunks["clause"]])),
               "law_short_clause": short["clause"], "law_short_fix": short["fixed size=512"],
               "law_bm25_fix": float(hit("fixed size=512", "bm25", "k").mean()),
               "law_dense_fix": float(hit("fixed size=512", "dense", "k").mean()),
               "law_dense_vs_bm25": fmt_diff(paired_bootstrap(hit("fixed size=512", "dense", "k"),
                                                              hit("fixed size=512", "bm25", "k"), metric="hit"))}
    for (e, st), res in tests.items():
        numbers[f"law_{e}_{st}"] = fmt_diff(res)
        numbers[f"law_{e}_{st}_v"] = verdict(res)
    numbers["law_margin"] = f"{100 * EQUIVALENCE_MARGINS['hit']:.0f}"
    budget_decided = [e for e in RETRIEVERS if tests[e, "budget"]["significant"]]
    numbers["law_budget_decided"] = len(budget_decided)
    return {"numbers": numbers, "table": tab, "tests": tests,
            "figure": difference_figure(tests, keys, LAW_RETRIEVERS, "劳动法规：条款 − 固定 512 字")}
