"""Chapter 3, part 1: what overlap buys and what it costs (the cut example, the cost curve, crowding,
de-duplication, and C3: does a heading tree still need overlap?).

Everything takes a :class:`Lab`, the chapter's corpora and retrievers loaded once. Functions return
plain data (numbers for the prose as a dict, table rows, figures); the chapter shows them and binds
the numbers with :func:`chunklab.book.prose.glue_all`. Part 2 (parent-child, budgets, windows,
length limits, the selection guide and the claims) is :mod:`chunklab.book.lessons.ch3_hierarchy`.
"""
from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
from matplotlib.patches import Patch
import numpy as np

from ... import chunk as _chunk
from ... import get_strategy
from ...datasets import data_dir, load_corpus
from ...datasets.questions import load_questions
from ...evaluation import EvalSettings, evaluate
from ...evaluation.stats import paired_bootstrap, paired_many
from ...retrieval import CorpusIndex
from ...strategies.router import THRESHOLDS, TYPE_NAMES, features, route
from ...viz.fonts import use_cjk_font
from ..claims import VERDICT_ZH, fmt_diff, verdict
from ..criteria import criterion
from ..labels import zh

#: The retrievers the chapter re-runs its main comparisons with. Dense retrieval uses USE: e5 is too
#: slow for the book's build time except on the two chunkings chapter 1 embeds (cached).
ENGINES = {
    "BM25": EvalSettings(engine="bm25", n_boot=1000),
    "向量（USE）": EvalSettings(engine="dense", embedder="use-multilingual", n_boot=1000),
    "混合（BM25+USE）": EvalSettings(engine="hybrid", embedder="use-multilingual", n_boot=1000),
}
#: e5, for the calibration table only.
E5 = {"向量（e5）": EvalSettings(engine="dense", embedder="e5-small", n_boot=1000),
      "混合（BM25+e5）": EvalSettings(engine="hybrid", embedder="e5-small", n_boot=1000)}
#: One colour per retriever, in every figure of the chapter.
ENGINE_COLORS = {"BM25": "#2563eb", "向量（USE）": "#d97706", "混合（BM25+USE）": "#059669"}

SIZE = 500                                                   # the cost curve's chunk length (characters)
FRACS = [0, 0.05, 0.10, 0.15, 0.20, 0.25, 0.33, 0.40, 0.50]  # overlap / size on xiaobei
LAW_FRACS = [0, 0.10, 0.20, 0.33, 0.50]                      # ... and on the laws
POLICY_WORDS = ("制度", "办法", "规范", "手册", "流程")        # a policy's title in the corpus manifest
CUT_QID = "xb-a-292"                                         # the power-cut question, cut in two at 500


class Lab:
    """The chapter's corpora, questions and indexes (each corpus tokenised once, reused by every chunking)."""

    def __init__(self) -> None:
        self.xb = load_corpus("xiaobei")
        self.xb_docs, self.xb_qs = list(self.xb.documents), load_questions("xiaobei")
        self.xb_index = CorpusIndex(self.xb_docs)
        self.laws = load_corpus("laws")
        self.laws_docs, self.laws_qs = list(self.laws.documents), load_questions("laws")
        self.laws_index = CorpusIndex(self.laws_docs)
        self.xb_q = {q.id: q for q in self.xb_qs}

    def summary(self) -> list[str]:
        """Two lines describing the data, in Chinese."""
        return [f"小北：{len(self.xb_docs)} 篇文档，{self.xb.text_chars:,} 字，{len(self.xb_qs)} 个问题",
                f"法规：{len(self.laws_docs)} 部法律，{self.laws.text_chars:,} 字，{len(self.laws_qs)} 个问题"]

    def numbers(self) -> dict[str, int]:
        return {"xb_docs": len(self.xb_docs), "xb_nq": len(self.xb_qs), "law_ndocs": len(self.laws_docs),
                "law_nq": len(self.laws_qs)}

    def corpus(self, which: str):
        """(documents, questions, index) of ``"xb"`` or ``"laws"``."""
        return ((self.xb_docs, self.xb_qs, self.xb_index) if which == "xb"
                else (self.laws_docs, self.laws_qs, self.laws_index))

    def run(self, which: str, strategy: str, tokens: bool = True, **params):
        """Chunk one corpus, retrieve the top 5 with BM25, measure (cl100k tokens of the top 5 too, if asked)."""
        docs, qs, index = self.corpus(which)
        chunks = split_all(docs, strategy, **params)
        return chunks, evaluate(docs, chunks, qs, ENGINES["BM25"], index=index, count_tokens=tokens)

    def run_engines(self, chunks, engines: dict | None = None) -> dict:
        """One chunking of xiaobei evaluated with each retriever (name -> EvalResult)."""
        return {name: evaluate(self.xb_docs, chunks, self.xb_qs, s, index=self.xb_index)
                for name, s in (engines or ENGINES).items()}


def split_all(docs, strategy: str, **params) -> list:
    """Chunk every document with one strategy."""
    return get_strategy(strategy, **params).split_documents(docs)


def hits(r, mask=None) -> np.ndarray:
    """Per-question hit of an EvalResult (or an array), optionally on a subset."""
    v = r.per_question["hit"] if hasattr(r, "per_question") else np.asarray(r)
    return v if mask is None else v[mask]


def hit_diff(a, b, mask=None) -> dict:
    """Paired bootstrap of hit@5, a − b, over the same questions (or the subset ``mask``)."""
    return paired_bootstrap(hits(a, mask), hits(b, mask), metric="hit")


def hit_many(pairs: dict) -> dict:
    """Several hit comparisons shown together (name -> (a, b) or (a, b, mask)), Holm-corrected.

    Each result's ``lo``/``hi`` is the interval that decided it (:func:`paired_many`).
    """
    return paired_many({n: (hits(p[0], p[2] if len(p) > 2 else None), hits(p[1], p[2] if len(p) > 2 else None))
                        for n, p in pairs.items()}, "holm", metric="hit")


def evidence_ceiling(chunks, qs) -> float:
    """Share of questions each of whose evidence spans lies whole inside some chunk (no retrieval).

    >>> from chunklab import Chunk
    >>> from types import SimpleNamespace as S
    >>> q = S(spans=[S(doc_id="d", start=2, end=5)])
    >>> evidence_ceiling([Chunk("d", 0, 0, 4, "abcd"), Chunk("d", 1, 4, 8, "efgh")], [q])
    0.0
    >>> evidence_ceiling([Chunk("d", 0, 0, 6, "abcdef")], [q])
    1.0
    """
    by_doc: dict[str, list] = {}
    for c in chunks:
        by_doc.setdefault(c.doc_id, []).append((c.start, c.end))
    return float(np.mean([all(any(s <= g.start and g.end <= e for s, e in by_doc.get(g.doc_id, ())) for g in q.spans)
                          for q in qs]))


def cut_at(text: str, limit: int) -> int:
    """Character offset where the first ``limit`` cl100k tokens of ``text`` end (on a character boundary).

    >>> cut_at("一二三", 100)
    3
    """
    return _chunk(text[:8 * limit], "token", size=limit)[0].end


def agree(words: dict) -> str:
    """A short computed phrase: one verdict word if every retriever got it, else each retriever's word."""
    v = list(words.values())
    return f"三种检索器都是“{v[0]}”" if len(set(v)) == 1 else "；".join(f"{n}：{w}" for n, w in words.items())


def significant_where(results: dict) -> str:
    """A short computed phrase: on which retrievers the (deciding) interval excludes 0.

    >>> significant_where({"BM25": {"significant": True}, "向量（USE）": {"significant": False}})
    '只在 BM25 上显著'
    """
    sig = [e for e, r in results.items() if r["significant"]]
    if len(sig) == len(results):
        return "在每种检索器上都显著"
    # a space beside Latin letters, none after a full-width bracket
    return ("只在 " + "、".join(sig) + " 上显著").replace("） ", "）") if sig else "在哪种检索器上都不显著"


def retriever_figure(rows: dict, *, xlabel: str, title: str, margin: float | None = None, note: dict | None = None,
                     claimed: float | None = None):
    """Grouped horizontal bars: one group per row label, one bar per retriever, with the deciding interval.

    ``rows`` maps ``(label, engine)`` to a paired result (``diff``, ``lo``, ``hi``, ``significant``).
    A bar whose interval excludes 0 is solid; one that includes 0 is hatched. ``margin`` draws the
    non-inferiority bound at ``-margin``, ``claimed`` the article's difference; ``note`` adds a grey
    line under a row label.
    """
    use_cjk_font()
    labels = list(dict.fromkeys(label for label, _ in rows))
    engines = [e for e in ENGINES if any((lab, e) in rows for lab in labels)]
    fig, ax = plt.subplots(figsize=(9.4, 0.95 * len(labels) + 1.6))
    h = 0.8 / len(engines)
    for j, e in enumerate(engines):
        for i, lab in enumerate(labels):
            r = rows.get((lab, e))
            if r is None:
                continue
            y = i + (j - (len(engines) - 1) / 2) * h
            solid = r["lo"] > 0 or r["hi"] < 0
            ax.barh(y, 100 * r["diff"], height=h * 0.9, color=ENGINE_COLORS[e] if solid else "white",
                    edgecolor=ENGINE_COLORS[e], hatch=None if solid else "///")
            ax.errorbar(100 * r["diff"], y, xerr=[[100 * (r["diff"] - r["lo"])], [100 * (r["hi"] - r["diff"])]],
                        color="black", capsize=3, lw=1)
    ax.axvline(0, color="black", lw=0.8)
    # every whisker, 0, the margin and the claimed size inside the frame (bars alone would pin the axis at 0)
    ends = [100 * v for r in rows.values() for v in (r["lo"], r["hi"])] + [0.0]
    ends += [-100 * margin] if margin is not None else []
    ends += [100 * claimed] if claimed is not None else []
    pad = 0.06 * ((max(ends) - min(ends)) or 1.0)
    ax.set_xlim(min(ends) - pad, max(ends) + pad)
    if margin is not None:
        ax.axvline(-100 * margin, color="#dc2626", ls="--", lw=1, label=f"非劣界值 −{100 * margin:.0f} 个百分点")
    if claimed is not None:
        ax.axvline(100 * claimed, color="#64748b", ls=":", lw=1.5, label=f"原文的幅度 {100 * claimed:+.0f} 个百分点")
    ax.set_yticks(range(len(labels)), [f"{lab}\n{note[lab]}" if note and lab in note else lab for lab in labels])
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    ax.set_title(title, fontsize=11)
    ax.grid(axis="x", alpha=0.3)
    # legend by retriever colour only (solid/hatched is per bar and explained in the footnote)
    handles = [Patch(facecolor=ENGINE_COLORS[e], edgecolor=ENGINE_COLORS[e], label=e) for e in engines]
    ax.legend(handles=handles + ax.get_legend_handles_labels()[0], fontsize=8, loc="upper left",
              bbox_to_anchor=(1.01, 1), borderaxespad=0)
    fig.text(0.01, 0.01, "实心：区间不含 0；斜线：区间含 0（没有测出差别，不等于没有差别）", fontsize=8, color="#475569")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    return fig


def calibration(lab: Lab) -> dict:
    """USE against e5 on the two chunkings chapter 1 embeds: rows, columns and the prose's numbers."""
    f512, md = split_all(lab.xb_docs, "fixed", size=512), split_all(lab.xb_docs, "markdown")
    calib = {"fixed 512 字": {"BM25": evaluate(lab.xb_docs, f512, lab.xb_qs, ENGINES["BM25"], index=lab.xb_index)},
             "markdown（默认参数）": lab.run_engines(md)}
    for label, chunks in (("fixed 512 字", f512), ("markdown（默认参数）", md)):
        calib[label] |= lab.run_engines(chunks, E5)
    cols = ["BM25", "向量（e5）", "向量（USE）", "混合（BM25+e5）", "混合（BM25+USE）"]
    rows = [(label, *(f"{rs[c].aggregate['hit']['mean']:.1%}" if c in rs else "—" for c in cols),
             rs["向量（e5）"].summary()["embedder_over_limit"]) for label, rs in calib.items()]
    rs = calib["markdown（默认参数）"]
    hyb = hit_many({(key, emb): (calib[label]["混合（BM25+e5）" if emb == "e5" else "混合（BM25+USE）"],
                                 calib[label]["BM25"])
                    for key, label, embs in (("f512", "fixed 512 字", ("e5",)), ("md", "markdown（默认参数）", ("e5", "use")))
                    for emb in embs})
    numbers = {"cal_md_dense": fmt_diff(hit_diff(rs["向量（USE）"], rs["向量（e5）"])),
               "cal_md_hybrid": fmt_diff(hit_diff(rs["混合（BM25+USE）"], rs["混合（BM25+e5）"])),
               "e5_over_md": rs["向量（e5）"].summary()["embedder_over_limit"],
               **{f"cal_{k}_hyb_{emb}": f"{fmt_diff(d)}，{verdict(d)}" for (k, emb), d in hyb.items()}}
    return {"rows": rows, "columns": ["切法", *cols, "超过 e5 输入上限的块"], "numbers": numbers,
            "f512": f512, "md": md, "calib": calib}


def cut_example(lab: Lab) -> dict:
    """The power-cut question under fixed 500 with overlap 0 and 50: lines to print and the prose's numbers."""
    q = lab.xb_q[CUT_QID]
    span = q.spans[0]
    doc = lab.xb.by_id[span.doc_id]
    fixed0, r0 = lab.run("xb", "fixed", size=SIZE, overlap=0)
    fixed50, r50 = lab.run("xb", "fixed", size=SIZE, overlap=50)
    cuts = [c.end for c in fixed0 if c.doc_id == doc.id and span.start < c.end < span.end]
    lines = [f"问题：{q.question}", f"证据：{doc.id} [{span.start}, {span.end})，{span.end - span.start} 字：{q.evidence[0]}",
             f"overlap 0 的切点 {cuts} 落在证据中间"]
    for label, r in (("overlap 0 ", r0), ("overlap 50", r50)):
        i = r.question_ids.index(CUT_QID)
        miss = {b["question_id"]: b["symptom"] for b in r.bad_cases}
        lines.append(f"{label}：命中 = {int(r.per_question['hit'][i])}"
                     + (f"（未命中，症状：{zh('symptom', miss[CUT_QID])}）" if CUT_QID in miss else ""))
    ranked0 = list(r0.ranked[r0.question_ids.index(CUT_QID)])
    halves = [(j, min(c.end, span.end) - max(c.start, span.start)) for j, c in enumerate(fixed0)
              if c.doc_id == doc.id and c.start < span.end and span.start < c.end]
    assert len(halves) == 2                                  # one cut: two pieces, as the prose says
    numbers = {"span_chars": span.end - span.start}
    for (j, n), key in zip(halves, ("a", "b")):
        rank = ranked0.index(j) + 1 if j in ranked0 else None
        numbers |= {f"piece_{key}_chars": n, f"piece_{key}_rank": rank}
        lines.append(f"overlap 0 的块 [{fixed0[j].start}, {fixed0[j].end})：装着证据的 {n} / {span.end - span.start} 字，"
                     f"BM25 排第 {rank} 名")
    # the prose: the first piece holds under half the evidence; the second is ranked, but below 5
    assert 2 * halves[0][1] < span.end - span.start and halves[1][0] in ranked0[5:]
    return {"lines": lines, "numbers": numbers, "doc": doc, "span": span, "fixed0": fixed0, "fixed50": fixed50,
            "r0": r0, "r50": r50}


def rescue(lab: Lab, ex: dict) -> dict:
    """What overlap 50 rescues over all questions: cut misses, the evidence ceiling, completeness, hit."""
    r0, r50 = ex["r0"], ex["r50"]
    d = hit_diff(r50, r0)
    n = {"cut0": r0.symptoms["cut"], "cut50": r50.symptoms["cut"],
         "ceil0": evidence_ceiling(ex["fixed0"], lab.xb_qs), "ceil50": evidence_ceiling(ex["fixed50"], lab.xb_qs),
         "cs0": r0.aggregate["complete_single"]["mean"], "cs50": r50.aggregate["complete_single"]["mean"],
         "hit_f0": r0.aggregate["hit"]["mean"], "hit_f50": r50.aggregate["hit"]["mean"],
         "hit_f_ci": fmt_diff(d), "hit_f_verdict": verdict(d)}
    rows = [("因证据被切断而未命中的题", n["cut0"], n["cut50"]),
            ("证据完整上限", f"{n['ceil0']:.1%}", f"{n['ceil50']:.1%}"),
            ("证据完整率@5", f"{n['cs0']:.1%}", f"{n['cs50']:.1%}"),
            ("命中率（hit@5）", f"{n['hit_f0']:.1%}", f"{n['hit_f50']:.1%}")]
    return {"rows": rows, "numbers": n}


def _point(lab: Lab, which: str, strategy: str, frac: float) -> dict:
    key = "size" if strategy == "fixed" else "target"
    chunks, r = lab.run(which, strategy, tokens=which == "xb", **{key: SIZE, "overlap": int(SIZE * frac)})
    a = r.aggregate
    return {"hit": a["hit"]["mean"], "lo": a["hit"]["lo"], "hi": a["hit"]["hi"],
            "inflation": r.structure["overlap_inflation"], "dup": a["duplication"]["mean"],
            "tokens": a.get("retrieved_tokens", {}).get("mean"), "crowded": r.symptoms["crowded"],
            "cut": r.symptoms["cut"], "chunks": chunks, "result": r}


def cost_series(lab: Lab) -> dict:
    """The cost curve's points (BM25): {series name: {overlap fraction: point}}."""
    return {"小北 · fixed 500": {f: _point(lab, "xb", "fixed", f) for f in FRACS},
            "小北 · recursive 500": {f: _point(lab, "xb", "recursive", f) for f in FRACS},
            "法规 · fixed 500": {f: _point(lab, "laws", "fixed", f) for f in LAW_FRACS}}


def cost_figure(series: dict):
    """Four panels against overlap / size: hit@5, index inflation, duplication, two symptoms."""
    use_cjk_font()
    fig, axes = plt.subplots(2, 2, figsize=(10, 7.4))
    axes = axes.ravel()
    for name, pts in series.items():
        xs = [100 * f for f in pts]
        axes[0].plot(xs, [p["hit"] for p in pts.values()], marker="o", label=name)
        axes[0].fill_between(xs, [p["lo"] for p in pts.values()], [p["hi"] for p in pts.values()], alpha=0.12)
        axes[1].plot(xs, [p["inflation"] for p in pts.values()], marker="o", label=name)
        axes[2].plot(xs, [100 * p["dup"] for p in pts.values()], marker="o", label=name)
        axes[3].plot(xs, [p["crowded"] for p in pts.values()], marker="o", label=f"{name}：被挤出")
        axes[3].plot(xs, [p["cut"] for p in pts.values()], marker="x", ls=":", color=axes[3].lines[-1].get_color(),
                     label=f"{name}：被切断")
    titles = ("命中率（hit@5，阴影为 95% 区间）", "索引膨胀（块总字数 ÷ 原文字数）", "top-5 上下文的重复率",
              "两种未命中：被挤出（实线）与被切断（虚线）")
    for ax, title, ylabel in zip(axes, titles, ("hit@5", "倍数", "重复字符占比（%）", "题数")):
        first = ax is axes[0]
        ax.axvspan(10, 20, color="#16a34a", alpha=0.08, label="10–20%（C3/C11 的经验范围）" if first else None)
        ax.axvline(100 / 3, color="#dc2626", ls="--", lw=1, label="三分之一" if first else None)
        ax.set_xlabel("overlap 占块长的比例（%）")
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=11)
        ax.grid(alpha=0.3)
    axes[1].legend(*axes[0].get_legend_handles_labels(), fontsize=8, loc="upper left")
    axes[3].legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    return fig


def cost_rows(series: dict) -> list:
    """The cost curve's numbers, one row per (series, overlap)."""
    return [(name, f"{f:.0%}", f"{p['hit']:.1%} [{p['lo']:.1%}, {p['hi']:.1%}]", f"{p['inflation']:.3f}",
             f"{p['dup']:.1%}", p["crowded"], p["cut"]) for name, pts in series.items() for f, p in pts.items()]


def cost_numbers(series: dict) -> dict:
    """The numbers the cost-curve prose reads (BM25), with the two comparisons it shows (Holm)."""
    fx, rc, lw = series["小北 · fixed 500"], series["小北 · recursive 500"], series["法规 · fixed 500"]
    peak = max(fx, key=lambda f: fx[f]["hit"])
    half = hit_many({"peak": (fx[0.50]["result"], fx[peak]["result"]), "none": (fx[0.50]["result"], fx[0]["result"])})
    tail = [f for f in FRACS if f >= 0.33]
    law = hit_diff(lw[0.10]["result"], lw[0]["result"])
    return {
        "infl_f10": fx[0.10]["inflation"] - 1, "infl_f20": fx[0.20]["inflation"] - 1, "infl_f50": fx[0.50]["inflation"],
        "infl_r10": rc[0.10]["inflation"] - 1, "infl_r20": rc[0.20]["inflation"] - 1,
        "peak_f": peak, "peak_f_hit": fx[peak]["hit"], "hit_f_half": fx[0.50]["hit"],
        "half0_ci": fmt_diff(half["none"]),
        "halfpeak_ci": f"{fmt_diff(half['peak'])}，“一半处更差”的判定：{verdict(half['peak'], expect=-1)}",
        "dup_f_half": fx[0.50]["dup"], "dup_f33": fx[0.33]["dup"],
        "budget_chars": 5 * SIZE, "crowd_f_half": fx[0.50]["crowded"], "crowd_r_half": rc[0.50]["crowded"],
        "tail_fracs": "、".join(f"{f:.0%}" for f in tail),
        "crowd_f_tail": "、".join(str(fx[f]["crowded"]) for f in tail),
        "crowd_r_tail": "、".join(str(rc[f]["crowded"]) for f in tail),
        "law_hit0": lw[0]["hit"], "law_hit10": lw[0.10]["hit"], "law_cut0": lw[0]["cut"], "law_cut10": lw[0.10]["cut"],
        "law_ci": fmt_diff(law), "law_verdict": verdict(law),
        "law_dil0": lw[0]["result"].symptoms["diluted"], "law_dil10": lw[0.10]["result"].symptoms["diluted"],
    }


def overlap_by_retriever(lab: Lab, series: dict) -> dict:
    """fixed 500 at overlap 0, 10%, 50% under the three retrievers: '10% − 0' and '50% − 10%' (six, Holm)."""
    fx = series["小北 · fixed 500"]
    eng = {f: lab.run_engines(fx[f]["chunks"]) for f in (0, 0.10, 0.50)}
    many = hit_many({(t, name): (eng[a][name], eng[b][name])
                     for t, a, b in (("10% − 0", 0.10, 0), ("50% − 10%", 0.50, 0.10)) for name in ENGINES})
    words = {t: {e: verdict(many[t, e], expect=1 if t == "10% − 0" else -1) for e in ENGINES}
             for t in ("10% − 0", "50% − 10%")}
    # the prose: every retriever's bars point the same way (10% above none, 50% below 10%)
    assert all(many["10% − 0", e]["diff"] > 0 > many["50% − 10%", e]["diff"] for e in ENGINES)
    n_zero = sum(r["lo"] <= 0 <= r["hi"] for r in many.values())
    rows = [(e, *(f"{eng[f][e].aggregate['hit']['mean']:.1%}" for f in (0, 0.10, 0.50)),
             fmt_diff(many["10% − 0", e]), words["10% − 0"][e], fmt_diff(many["50% − 10%", e]), words["50% − 10%"][e],
             eng[0.10][e].symptoms["crowded"], eng[0.50][e].symptoms["crowded"]) for e in ENGINES]
    fig = retriever_figure({(f"overlap {t}" if t == "10% − 0" else t, e): r for (t, e), r in many.items()},
                           xlabel="命中率（hit@5）的配对差（百分点）",
                           title="fixed 500：overlap 10% 相对不重叠，50% 相对 10%（三种检索器，六个比较一起 Holm 校正）")
    numbers = {"fx_up_words": agree(words["10% − 0"]), "fx_down_words": agree(words["50% − 10%"]),
               "fx_zero": f"有 {n_zero} 个区间包含 0（斜线条）" if n_zero else "没有一个区间包含 0",
               "fx_sig_note": f"校正后，“10% 比不重叠好”{significant_where({e: many['10% − 0', e] for e in ENGINES})}，"
                              f"“一半比 10% 差”{significant_where({e: many['50% − 10%', e] for e in ENGINES})}",
               **{f"fx_crowd_{k}": eng[0.50][e].symptoms["crowded"]
                  for k, e in zip(("bm25", "dense", "hybrid"), ENGINES)}}
    return {"engines": eng, "many": many, "rows": rows, "figure": fig, "numbers": numbers,
            "columns": ["检索器", "hit@5 · 0", "· 10%", "· 50%", "10% − 0", "判定（10% 更好）", "50% − 10%",
                        "判定（50% 更差）", "被挤出 · 10%", "被挤出 · 50%"]}


def crowding_case(lab: Lab, series: dict, ex: dict) -> dict:
    """The power-cut question at overlap 50%: the top 5, how much each shares with better-ranked ones."""
    half = series["小北 · fixed 500"][0.50]
    chunks, r = half["chunks"], half["result"]
    span = ex["span"]
    i = r.question_ids.index(CUT_QID)
    case = next(b for b in r.bad_cases if b["question_id"] == CUT_QID)
    top = [chunks[j] for j in r.ranked[i][:5]]
    rows = []
    for rank, c in enumerate(top, 1):
        shared = max((min(c.end, o.end) - max(c.start, o.start) for o in top[:rank - 1] if o.doc_id == c.doc_id),
                     default=0)
        holds = c.doc_id == span.doc_id and c.start <= span.start and span.end <= c.end
        rows.append((rank, c.doc_id, f"[{c.start}, {c.end})", max(shared, 0), "是" if holds else ""))
    return {"rows": rows, "top": top, "symptom": zh("symptom", case["symptom"]),
            "numbers": {"crowd_rank": case["container_rank"]}}


def dedup(lab: Lab, series: dict, peak: float) -> dict:
    """Top 5 as ranked against a budget of five chunks' characters filled after merging by offsets (BM25)."""
    budget = 5 * SIZE
    rows, runs = [], {}
    for frac in (0.25, 0.50):
        pt = series["小北 · fixed 500"][frac]
        before = pt["result"]
        after = evaluate(lab.xb_docs, pt["chunks"], lab.xb_qs, ENGINES["BM25"], index=lab.xb_index, budget=budget)
        runs[frac] = (before, after)
        for label, r in (("top-5，不去重", before), (f"预算 {budget} 字，按偏移量去重", after)):
            a = r.aggregate
            rows.append((f"{frac:.0%}", label, f"{a['n_retrieved']['mean']:.2f}", f"{a['retrieved_chars']['mean']:.0f}",
                         f"{a['duplication']['mean']:.1%}", f"{a['hit']['mean']:.1%}", r.symptoms["crowded"]))
    b50, a50 = runs[0.50]
    peak_r = series["小北 · fixed 500"][peak]["result"]
    vs = hit_many({"dedup": (a50, b50), "peak": (a50, peak_r)})
    numbers = {
        "budget_chars": budget, "dd_items_after": a50.aggregate["n_retrieved"]["mean"],
        "dd_chars_before": b50.aggregate["retrieved_chars"]["mean"], "dd_chars_after": a50.aggregate["retrieved_chars"]["mean"],
        "dd_hit_before": b50.aggregate["hit"]["mean"], "dd_hit_after": a50.aggregate["hit"]["mean"],
        "dd_ci": fmt_diff(vs["dedup"]), "dd_verdict": verdict(vs["dedup"]),
        "dd_peak": f"{fmt_diff(vs['peak'])}，“仍更低”的判定：{verdict(vs['peak'], expect=-1)}",
        "peak_chars": peak_r.aggregate["retrieved_chars"]["mean"],
        "dd_crowd_before": b50.symptoms["crowded"], "dd_crowd_after": a50.symptoms["crowded"],
        "dd_more_items": a50.aggregate["n_retrieved"]["mean"] - b50.aggregate["n_retrieved"]["mean"],
    }
    return {"rows": rows, "numbers": numbers,
            "columns": ["overlap", "取法", "平均块数", "交给模型的字数", "块之间重叠的字（合并前）",
                        "hit@5 / 同预算命中率", "被挤出的未命中"]}


def policy_documents(lab: Lab) -> dict:
    """Which xiaobei documents are policies (by their title in the corpus manifest), and what markdown does to them."""
    manifest = {}
    for path in sorted((data_dir() / "xiaobei").glob("MANIFEST_*.md")):
        for line in path.read_text(encoding="utf-8").splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) == 4 and cells[0] in lab.xb.by_id:
                manifest[cells[0]] = cells[1]
    policy = {d for d, title in manifest.items() if any(w in title for w in POLICY_WORDS)}
    has_heads = {d.id for d in lab.xb_docs if features(d)["md_headings"] >= THRESHOLDS["md_headings"]}
    by_type = {d.id: d.meta["type"] for d in lab.xb_docs}
    assert all(len({g.doc_id for g in q.spans}) == 1 for q in lab.xb_qs)   # each question's evidence is in one document
    q_doc = np.array([q.spans[0].doc_id for q in lab.xb_qs])
    md = split_all(lab.xb_docs, "markdown")
    fallback = [c for c in md if c.meta.get("level") == "recursive"]
    rows = [(d, manifest[d], by_type[d], TYPE_NAMES[route(lab.xb.by_id[d]).doc_type], "有" if d in has_heads else "无",
             f"{sum(c.doc_id == d for c in fallback)} / {sum(c.doc_id == d for c in md)}", int((q_doc == d).sum()))
            for d in sorted(policy)]
    old = {d for d, t in by_type.items() if t == "markdown"}
    mask = np.isin(q_doc, sorted(policy))
    growth = {label: _growth(split_all(lab.xb_docs, a[0], **a[1]), split_all(lab.xb_docs, b[0], **b[1]), policy)
              for label, (a, b) in C3_SETTINGS.items()}
    numbers = {**{f"c3_growth_{i}": g for i, g in enumerate(growth.values())},"policy_docs": len(policy), "policy_head_docs": len(policy & has_heads), "nq_pol": int(mask.sum()),
               "old_subset_nq": int(np.isin(q_doc, sorted(old)).sum()), "pol_not_md": len(policy - old),
               "old_not_policy": "、".join(sorted(old - policy)), "md_chunks": len(md), "md_fallback": len(fallback)}
    return {"rows": rows, "mask": mask, "ids": policy, "numbers": numbers,
            "columns": ["文档", "清单中的标题", "meta['type']", "auto 路由判为", "Markdown 标题", "回退块 / 全部块", "问题数"]}


def c3_rule() -> dict:
    """C3's rule as the prose states it before measuring: the register's margin and the verdict words it can give."""
    margin = criterion("C3", "no loss").margin
    return {"margin_pp": round(100 * margin), "margin_per": round(1 / margin),
            **{"vw_" + k.replace("-", "_").replace(" ", "_"): VERDICT_ZH[k]
               for k in ("non-inferior", "contradicted", "not shown")},
            "vw_size_out": VERDICT_ZH["supported, size ruled out"].split("，")[-1]}


#: C3's comparisons: (label, (strategy, params) without overlap, the same with overlap 50). The first is
#: the claim's practical reading and the chapter's primary test: a heading tree without overlap in place of
#: the fixed window with overlap it replaces. The other three show where overlap acts at all.
PRACTICAL = "标题树（无 overlap）替换 fixed 500 + overlap 50"
#: The article's literal comparison (overlap 50 -> 0 inside the heading tree): a contrast here, because
#: chunklab's markdown strategy applies overlap only to its recursive fallback.
LITERAL = "标题树：去掉 overlap 50"
C3_SETTINGS = {
    PRACTICAL: (("markdown", {}), ("fixed", {"size": SIZE, "overlap": 50})),
    "fixed 500：去掉 overlap 50": (("fixed", {"size": SIZE}), ("fixed", {"size": SIZE, "overlap": 50})),
    "recursive 500：去掉 overlap 50": (("recursive", {"target": SIZE}), ("recursive", {"target": SIZE, "overlap": 50})),
    LITERAL: (("markdown", {}), ("markdown", {"overlap": 50})),
}


def _growth(without: list, with_: list, docs: set) -> float:
    """How much larger the index of ``with_`` is than that of ``without``, over the documents ``docs``."""
    return (sum(len(c) for c in with_ if c.doc_id in docs) / sum(len(c) for c in without if c.doc_id in docs)) - 1


def c3_tests(lab: Lab, policy: dict, runs: dict | None = None) -> dict:
    """C3 on the policy questions, 'A − B' of each setting × retriever, judged by the register's margin.

    Two groups, each Holm-corrected: the primary test (:data:`PRACTICAL`, three retrievers) and the
    contrast (the other three settings, nine comparisons), on the questions of ``policy`` (from
    :func:`policy_documents`). ``runs`` may carry already evaluated chunkings: {(strategy, sorted
    params): (chunks, {engine: result})}. ``growth`` is how much larger the index of B is than A's on
    the policy documents, measured from the chunks' offsets.
    """
    runs = dict(runs or {})

    def get(strategy, params):
        key = (strategy, tuple(sorted(params.items())))
        if key not in runs:
            chunks = split_all(lab.xb_docs, strategy, **params)
            runs[key] = (chunks, lab.run_engines(chunks))
        return runs[key]

    margin = criterion("C3", "no loss").margin
    pairs, growth = {}, {}
    for label, (a, b) in C3_SETTINGS.items():
        (ca, ra), (cb, rb) = get(*a), get(*b)
        growth[label] = _growth(ca, cb, policy["ids"])
        for e in ENGINES:
            pairs[label, e] = (ra[e], rb[e], policy["mask"])
    many = hit_many({k: p for k, p in pairs.items() if k[0] == PRACTICAL})
    many |= hit_many({k: p for k, p in pairs.items() if k[0] != PRACTICAL})
    words = {k: verdict(r, margin=margin) for k, r in many.items()}
    role = {PRACTICAL: "本章主检验 · ", LITERAL: "文章字面的比较 · "}
    note = {label: f"{role.get(label, '')}B 的索引比 A 大 {growth[label]:.1%}" for label in C3_SETTINGS}
    fig = retriever_figure(many, margin=margin, note=note, xlabel="命中率（hit@5）的配对差 A − B（百分点；A 不带 overlap）",
                           title=f"制度文件的 {int(policy['mask'].sum())} 题：不带 overlap（A）相对带 overlap 50（B）")
    rows = [(label, e, f"{growth[label]:.1%}", fmt_diff(r), words[label, e]) for (label, e), r in many.items()]
    assert all(many[PRACTICAL, e]["diff"] > 0 for e in ENGINES)   # the prose: every point estimate favours the tree
    assert all(many[PRACTICAL, e]["lo"] <= 0 for e in ENGINES)    # the prose: no retriever shows more hits
    assert all(many["fixed 500：去掉 overlap 50", e]["diff"] <= 0 for e in ENGINES)   # the prose: slightly below 0
    shown = [e for e in ENGINES if words[PRACTICAL, e] == VERDICT_ZH["non-inferior"]]
    literal_shown = [e for e in ENGINES if words[LITERAL, e] == VERDICT_ZH["non-inferior"]]
    split = sorted({sum(many[LITERAL, e]["discordant"]) for e in ENGINES})
    split_n = f"{split[0]}" if len(split) == 1 else f"{split[0]}–{split[-1]}"
    nq = int(policy["mask"].sum())
    literal_note = (f"它直接回答文章的问题：在 chunklab 的标题树里，去掉 overlap 50 的损失在 {'、'.join(literal_shown)} "
                    "上小于界值。但这几乎是由实现决定的：两边几乎是同一套块，overlap 只碰到回退出来的少数块。"
                    if literal_shown else
                    f"两边几乎是同一套块（overlap 只碰到回退出来的少数块），一边对一边错的题每种检索器下只有 {split_n} 个；"
                    f"可 {nq} 题给出的区间仍越过了界值，连文章的字面说法也没能确认。")
    return {"many": many, "words": words, "growth": growth, "figure": fig, "rows": rows, "runs": runs,
            "columns": ["比较（A 替换 B）", "检索器", "B 的索引比 A 大", "配对差 A − B（决定判定的区间）", "判定（非劣）"],
            "numbers": {"c3_shown": "、".join(shown) or "（没有）", "c3_literal_note": literal_note,
                        "c3_unshown": "、".join(e for e in ENGINES if e not in shown) or "（没有）",
                        **{f"c3_diff_{i}_{k}": fmt_diff(many[label, e]) for i, label in enumerate(C3_SETTINGS)
                           for k, e in zip(("bm25", "dense", "hybrid"), ENGINES)},
                        **{f"c3_words_{i}": agree({e: words[label, e] for e in ENGINES})
                           for i, label in enumerate(C3_SETTINGS)}}}
