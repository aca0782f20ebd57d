"""Chapter 1 (why chunking sets the recall ceiling): the corpus setup and sections 1.1-1.3.

:func:`setup` loads the 小北 corpus, its questions, the BM25 index and the e5 embedder once and
returns a :class:`Lab` that every helper of the chapter takes. Each section helper returns a dict:
``numbers`` (the values the prose shows, bound with ``glue_all(numbers, "ch1_")``), and the tables
and figures the section displays. Sections 1.4 (C1, three retrievers, difficulty, laws) live in
:mod:`chunklab.book.lessons.ch1_retrieval`, sections 1.5-1.6 (symptoms, content types) in
:mod:`chunklab.book.lessons.ch1_types`.
"""
from __future__ import annotations

import logging
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import jieba
import numpy as np
import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch
from matplotlib.ticker import NullLocator

from ... import get_strategy
from ...book.claims import fmt_diff, verdict
from ...book.tables import table
from ...datasets import load_corpus
from ...datasets.questions import load_questions
from ...evaluation import Layout, bootstrap_ci, evaluate, paired_bootstrap, question_metrics
from ...evaluation.stats import paired_many
from ...parsing.text import sentence_spans
from ...retrieval import CorpusIndex, get_embedder
from ...retrieval.dense import RRF_CONSTANT

#: The context budget (characters) under which the chapter compares chunkings of different sizes.
BUDGET = 2500
#: The chunkings of sections 1.2-1.3: fixed windows of five sizes, then the boundary-aware ones.
CONFIGS = [("fixed", {"size": s}) for s in (128, 256, 512, 1024, 2048)] + [
    ("token", {"size": 512}), ("sentence", {}), ("recursive", {}), ("markdown", {}), ("auto", {})]
#: Figure colours: ceiling, evidence completeness in the top 5, evidence completeness under the budget.
GREEN, BLUE, RED = "#16a34a", "#2563eb", "#dc2626"


def new_figure(figsize: tuple[float, float], *args: Any, **kwargs: Any) -> tuple[Figure, Any]:
    """``plt.subplots(*args, figsize=figsize, **kwargs)``, closed at once: a cell shows the figure
    only where it is returned (pyplot's figure loads the notebook's inline backend, which renders it)."""
    fig, axes = plt.subplots(*args, figsize=figsize, **kwargs)
    plt.close(fig)
    return fig, axes


def label(name: str, params: dict[str, Any]) -> str:
    """``fixed size=512``: a chunking's name as the chapter's tables write it."""
    return name + ("" if not params else " " + ",".join(f"{k}={v}" for k, v in params.items()))


@dataclass
class Lab:
    """The 小北 corpus, questions, index and embedder, loaded once; chunkings and runs cached by label."""

    docs: list
    questions: list
    handbook: Any
    index: Any
    layout: Any
    gold: Any
    e5: Any
    rrf_c: float
    chunkings: dict = field(default_factory=dict)
    runs: dict = field(default_factory=dict)       # (label, budget) -> EvalResult (BM25); (label, "ceiling") -> array
    started: float = field(default_factory=time.perf_counter)

    def elapsed(self) -> float:
        """Seconds since :func:`setup` began (the chapter's execution time, embedding included)."""
        return time.perf_counter() - self.started

    @property
    def by_qid(self) -> dict:
        return {q.id: q for q in self.questions}

    def chunks(self, lab: str, name: str | None = None, **params: Any) -> list:
        """The chunks of the whole corpus under chunking ``lab`` (``name``/``params`` when new)."""
        if lab not in self.chunkings:
            self.chunkings[lab] = get_strategy(name or lab, **params).split_documents(self.docs)
        return self.chunkings[lab]

    def run(self, lab: str, budget: int | None = None, n_boot: int = 1000):
        """BM25, top 5 (or a ``budget`` of characters) for chunking ``lab``; computed once."""
        key = (lab, budget)
        if key not in self.runs:
            self.runs[key] = evaluate(self.docs, self.chunks(lab), self.questions, k=5, index=self.index,
                                      budget=budget, n_boot=n_boot)
        return self.runs[key]

    def ceiling(self, chunks: list) -> np.ndarray:
        """Per question: is every gold span held whole by some chunk (the retriever returning all chunks)?"""
        everything = np.tile(np.arange(len(chunks)), (len(self.questions), 1))
        return question_metrics(everything, chunks, self.gold, k=len(chunks), layout=self.layout)["complete_single"]


def setup() -> Lab:
    """Load 小北 (documents, questions, BM25 index, the e5 embedder) and return the chapter's :class:`Lab`."""
    started = time.perf_counter()
    jieba.setLogLevel(logging.WARNING)
    xb = load_corpus("xiaobei")
    docs = list(xb.documents)
    questions = load_questions("xiaobei")
    layout = Layout(docs)
    return Lab(docs=docs, questions=questions, handbook=xb["employee_handbook"], index=CorpusIndex(docs),
               layout=layout, gold=layout.gold_bounds([q.spans for q in questions]),
               e5=get_embedder("e5-small"), rrf_c=RRF_CONSTANT.default, started=started)


def setup_numbers(lab: Lab) -> dict[str, Any]:
    """Sizes the introduction and section 1.1 quote."""
    rrf = lab.rrf_c
    return {"n_docs": len(lab.docs), "xb_chars": sum(len(d.text) for d in lab.docs), "n_q": len(lab.questions),
            "e5_dims": int(lab.e5.dims), "e5_max_tokens": int(lab.e5.max_tokens),
            "rrf_c": int(rrf) if float(rrf).is_integer() else rrf,
            "n_easy": sum(q.difficulty == "easy" for q in lab.questions),
            "n_hard": sum(q.difficulty == "hard" for q in lab.questions)}


# ---------------------------------------------------------------- 1.1 the pipeline, whole documents

def pipeline_figure() -> Figure:
    """The four steps of a RAG pipeline, the chunk defined once in the first."""
    fig, ax = new_figure((9.6, 3.0))
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 3)
    ax.axis("off")
    steps = [("切分", "文档 → 块\n每块记下 [start, end)"), ("索引", "每块一个表示\n（BM25 词项 / 向量）"),
             ("检索", "问题 vs 每一块\n取分数最高的 k 块"), ("生成", "只读这 k 块\n写出答案")]
    for i, (name, sub) in enumerate(steps):
        x = 0.2 + i * 2.5
        ax.add_patch(FancyBboxPatch((x, 1.1), 1.9, 1.2, boxstyle="round,pad=0.05",
                                    fc="#fde68a" if i == 0 else "#dbeafe", ec="#334155"))
        ax.text(x + 0.95, 1.95, name, ha="center", va="center", fontsize=15)
        ax.text(x + 0.95, 1.45, sub, ha="center", va="center", fontsize=9)
        if i < 3:
            ax.add_patch(FancyArrowPatch((x + 1.95, 1.7), (x + 2.45, 1.7), arrowstyle="-|>", mutation_scale=16,
                                         color="#334155"))
    ax.text(5, 0.55, "块在这里被定义一次，之后每一步的单位都是它：索引给整块打分，检索整块取回，模型只看到被取回的块",
            ha="center", va="center", fontsize=10, color="#7c2d12")
    ax.annotate("", xy=(0.2, 0.8), xytext=(9.9, 0.8), arrowprops=dict(arrowstyle="-", color="#7c2d12", lw=1))
    ax.set_title("RAG 链路的四步", fontsize=12)
    fig.tight_layout()
    return fig


def whole_documents(lab: Lab) -> dict[str, Any]:
    """Why not index whole documents: the embedder's limit, the context they cost, and the budget.

    Each document becomes one chunk. The e5 model reads at most ``max_tokens`` of its own tokens,
    so a question whose evidence starts after them is invisible to a whole-document vector. BM25
    retrieves whole documents well, but the top 5 deliver tens of thousands of characters; under
    the chapter's 2,500-character budget the evidence is rarely among the first characters.
    """
    lab.chunks("whole", "fixed", size=max(len(d.text) for d in lab.docs))
    counts = lab.e5.token_counts([d.text for d in lab.docs])
    limit = int(lab.e5.max_tokens)
    stop = dict(zip((d.id for d in lab.docs), _reading_stops([d.text for d in lab.docs], limit, lab.e5.token_counts)))
    beyond = float(np.mean([q.spans[0].start >= stop[q.spans[0].doc_id] for q in lab.questions]))
    rows, numbers = [], {}
    for lab_, name in (("whole", "整篇文档一块"), ("markdown", "Markdown 标题树")):
        lab.chunks(lab_)
        k5, b = lab.run(lab_), lab.run(lab_, BUDGET)
        chars = float(k5.aggregate["retrieved_chars"]["mean"])
        rows.append([name, len(lab.chunks(lab_)), f"{k5.aggregate['hit']['mean']:.1%}", f"{chars:,.0f}",
                     f"{b.aggregate['hit']['mean']:.1%}"])
        key = "whole" if lab_ == "whole" else "md"
        numbers[f"wd_{key}_hit"] = k5.aggregate["hit"]["mean"]
        numbers[f"wd_{key}_chars"] = chars
        numbers[f"wd_{key}_hit_b"] = b.aggregate["hit"]["mean"]
    hit_b = lambda lab_: lab.run(lab_, BUDGET).per_question["hit"]
    numbers["wd_diff_b"] = fmt_diff(paired_bootstrap(hit_b("whole"), hit_b("markdown"), metric="hit"))
    numbers.update(wd_over=sum(n > limit for n in counts), wd_tokens_mean=float(np.mean(counts)),
                   wd_beyond=beyond, wd_ratio=round(numbers["wd_whole_chars"] / BUDGET))
    tab = table(rows, ["切法（BM25）", "块数", "命中率（hit@5）", "前 5 块每题交付（字）", f"同预算命中率（{BUDGET:,} 字）"])
    return {"numbers": numbers, "table": tab}


def _reading_stops(texts: list[str], limit: int, count) -> list[int]:
    """For each text, the shortest prefix whose token count (``count(prefixes)``) reaches ``limit``:
    an embedder that reads ``limit`` tokens never sees what starts there (``len(text) + 1`` when the
    whole text stays under it). One binary search per text, all texts counted in one call per step,
    first within ``4 * limit`` characters (counting costs time in proportion to the characters).

    >>> _reading_stops(["abcdefgh", "ab"], 3, lambda texts: [len(t) for t in texts])
    [3, 3]
    """
    cap = 4 * limit
    head = count([t[:cap] for t in texts])
    longer = [i for i, (t, n) in enumerate(zip(texts, head)) if n < limit and len(t) > cap]
    full = dict(zip(longer, count([texts[i] for i in longer])))
    lo = [0] * len(texts)
    hi = [min(len(t), cap) if n >= limit else (len(t) if full.get(i, 0) >= limit else len(t) + 1)
          for i, (t, n) in enumerate(zip(texts, head))]
    while any(a < b for a, b in zip(lo, hi)):
        mids = [(a + b) // 2 for a, b in zip(lo, hi)]
        reached = count([t[:m] for t, m in zip(texts, mids)])
        for i, (a, b, m, n) in enumerate(zip(lo, hi, mids, reached)):
            if a < b:
                lo[i], hi[i] = (a, m) if n >= limit else (m + 1, b)
    return lo


# ---------------------------------------------------------------- 1.2 the ceiling

def _ci(a: dict) -> str:
    return f"{a['mean']:.3f} [{a['lo']:.3f}, {a['hi']:.3f}]"


def char_range(values) -> str:
    """Delivered characters per question, in words: '都是 2,500 字' or '在 2,497 到 2,500 字之间'."""
    lo, hi = f"{min(values):,.0f}", f"{max(values):,.0f}"
    return f"都是 {lo} 字" if lo == hi else f"在 {lo} 到 {hi} 字之间"


def ceilings(lab: Lab, n_boot: int = 1000) -> dict[str, Any]:
    """Section 1.2: the ceiling, evidence completeness in the top 5 and under the budget, per chunking.

    Returns ``rows`` (one dict per chunking of :data:`CONFIGS`), ``table``, ``figure`` and
    ``numbers``; it also stores each chunking's ceiling per question in ``lab.runs[label, "ceiling"]``.
    ``n_boot``: bootstrap resamples of the table's intervals.
    """
    rows = []
    for name, params in CONFIGS:
        lab_ = label(name, params)
        chunks = lab.chunks(lab_, name, **params)
        cl = lab.ceiling(chunks)
        lab.runs[lab_, "ceiling"] = cl
        r_k, r_b = lab.run(lab_, n_boot=n_boot), lab.run(lab_, BUDGET, n_boot=n_boot)
        rows.append({"label": lab_, "name": name, "chunks": len(chunks), "len_mean": r_k.structure["len_mean"],
                     "ceiling": float(cl.mean()), "ceiling_ci": bootstrap_ci(cl, n=n_boot),
                     "cs_k": r_k.aggregate["complete_single"], "cs_b": r_b.aggregate["complete_single"],
                     "hit_b": r_b.aggregate["hit"], "chars_b": float(r_b.aggregate["retrieved_chars"]["mean"])})
    by = {r["label"]: r for r in rows}
    tab = table([[f"`{r['label']}`", r["chunks"], f"{r['len_mean']:.0f}", _ci(r["ceiling_ci"]), _ci(r["cs_k"]),
                  _ci(r["cs_b"]), _ci(r["hit_b"])] for r in rows],
                ["切法", "块数", "平均块长（字）", "证据完整上限", "证据完整率@5", f"证据完整率（{BUDGET:,} 字预算）",
                 "同预算命中率"], folded="展开数据表")
    numbers: dict[str, Any] = {}
    for key, lab_ in [("f128", "fixed size=128"), ("f512", "fixed size=512"), ("f2048", "fixed size=2048"),
                      ("tok512", "token size=512"), ("md", "markdown"), ("auto", "auto"), ("rec", "recursive"),
                      ("sent", "sentence")]:
        numbers[f"ceil_{key}"] = by[lab_]["ceiling"]
        numbers[f"csk_{key}"] = by[lab_]["cs_k"]["mean"]
    numbers["chars_b"] = char_range([r["chars_b"] for r in rows])
    numbers["n_boot"] = n_boot
    numbers.update(_ceiling_readings(lab, rows, by))
    return {"rows": rows, "table": tab, "figure": ceiling_figure(rows), "numbers": numbers}


def _ceiling_readings(lab: Lab, rows: list, by: dict) -> dict[str, Any]:
    """The numbers of section 1.2's bullets: labels inside one sentence, the gaps, fixed k against a budget."""
    sent = {d.id: sentence_spans(d.text) for d in lab.docs}

    def in_one_sentence(sp) -> bool:
        return sum(1 for s, e in sent[sp.doc_id] if s < sp.end and sp.start < e) == 1

    one = np.array([all(in_one_sentence(sp) for sp in q.spans) for q in lab.questions], dtype=float)
    one_sent_ceiling = lab.ceiling(lab.chunks("sentence sentences=1", "sentence", sentences=1))
    cs = lambda lab_, budget=None: lab.run(lab_, budget).per_question["complete_single"]
    # Each pair below is shown together in one sentence: Holm-corrected as a pair.
    gaps = paired_many({lab_: (lab.runs[lab_, "ceiling"], cs(lab_)) for lab_ in ("fixed size=512", "markdown")},
                       "holm", metric="complete_single")
    bigs = paired_many({st: (cs("fixed size=2048", b), cs("fixed size=512", b)) for st, b in (("k", None), ("b", BUDGET))},
                       "holm", metric="complete_single")
    ctx_k = lambda lab_: float(lab.run(lab_).aggregate["retrieved_chars"]["mean"])
    fixed = [r for r in rows if r["name"] == "fixed"]
    best = max(fixed, key=lambda r: r["cs_b"]["mean"])
    i = fixed.index(best)
    # The best fixed size under the budget against its neighbours, paired (a pair read together: Holm).
    near = paired_many({r["label"]: (cs(best["label"], BUDGET), cs(r["label"], BUDGET))
                        for r in fixed[max(i - 1, 0):i] + fixed[i + 1:i + 2]}, "holm", metric="complete_single")
    struct = [by[x]["ceiling"] for x in ("sentence", "recursive", "markdown", "auto")]
    return {"q_one_sentence": float(one.mean()), "ceil_one_sent": float(one_sent_ceiling.mean()),
            "gap_f512": fmt_diff(gaps["fixed size=512"]), "gap_md": fmt_diff(gaps["markdown"]),
            "big_k": fmt_diff(bigs["k"]), "big_b": fmt_diff(bigs["b"]),
            "big_ratio": round(ctx_k("fixed size=2048") / ctx_k("fixed size=512"), 1),
            "md_full": "满分" if by["markdown"]["ceiling"] == 1 and by["auto"]["ceiling"] == 1 else "接近满分",
            "struct_ceil_lo": min(struct), "struct_ceil_hi": max(struct),
            "best_fixed_b": int(best["label"].split("=")[1]), "best_fixed_b_cs": best["cs_b"]["mean"],
            "best_fixed_b_note": "逐题配对，它" + "；".join(
                f"减 {lab_.split('=')[1]} 字 {fmt_diff(res)}，" + _side(res) for lab_, res in near.items()),
            "best_fixed_b_near_sig": sum(res["significant"] for res in near.values())}


def _side(res: dict) -> str:
    """Where a paired difference's deciding interval lies, in words (before the chapter has named its verdicts)."""
    if not res["significant"]:
        return "区间含 0，分不出高低"
    return "区间整个在 0 的右边" if res["diff"] > 0 else "区间整个在 0 的左边"


def ceiling_figure(rows: list) -> Figure:
    """Left: fixed windows against their mean length. Right: the other chunkings, one row each.

    The right panel names each chunking on its own row (no labels that can overlap) and repeats
    fixed 512 as the reference; its three measures sit a little apart on each row, each with its
    95% interval, so markers with close values do not hide one another. The left panel shades the
    same intervals.
    """
    fixed = [r for r in rows if r["name"] == "fixed"]
    other = [r for r in rows if r["name"] != "fixed" or r["label"] == "fixed size=512"]
    fig, (left, right) = new_figure((10, 4.2), 1, 2, gridspec_kw={"width_ratios": [1.25, 1]})
    xs = [r["len_mean"] for r in fixed]
    series = [("ceiling", "证据完整上限（不经检索）", GREEN, "o-"), ("cs_k", "证据完整率@5（取前 5 块）", BLUE, "s--"),
              ("cs_b", f"证据完整率（{BUDGET:,} 字预算）", RED, "^-")]
    ci = lambda r, key: r["ceiling_ci"] if key == "ceiling" else r[key]
    for key, name, colour, style in series:
        ys = [ci(r, key)["mean"] for r in fixed]
        left.plot(xs, ys, style, color=colour, label=name)
        left.fill_between(xs, [ci(r, key)["lo"] for r in fixed], [ci(r, key)["hi"] for r in fixed], color=colour,
                          alpha=0.12, lw=0)
    for r in fixed:
        left.annotate(f"{r['label'].split('=')[1]} 字", (r["len_mean"], r["ceiling"]), textcoords="offset points",
                      xytext=(0, 7), ha="center", fontsize=8, color="#166534")
    left.set_xscale("log")
    ticks = [100, 200, 500, 1000, 2000]
    left.set_xticks(ticks, [str(t) for t in ticks])
    left.xaxis.set_minor_locator(NullLocator())
    left.set_xlabel("平均块长（字，对数刻度）")
    left.set_ylabel("题目占比")
    left.set_ylim(0.35, 1.04)
    left.set_title("固定长度切分：随块长变化", fontsize=11)
    left.grid(alpha=0.3)
    for y, r in enumerate(other):
        for (key, _, colour, style), dy in zip(series, (-0.22, 0, 0.22)):
            a = ci(r, key)
            right.errorbar([a["mean"]], [y + dy], xerr=[[a["mean"] - a["lo"]], [a["hi"] - a["mean"]]], fmt=style[0],
                           color=colour, ms=6, mec="black", mew=0.5, capsize=2, lw=1.2)
    right.set_yticks(range(len(other)), [f"{r['label']}（{r['len_mean']:.0f} 字）" for r in other], fontsize=9)
    right.invert_yaxis()
    low = min(ci(r, key)["lo"] for r in other for key, *_ in series)
    right.set_xlim(np.floor(low * 20 - 1) / 20, 1.03)       # zoomed to the rows' values: close markers stay apart
    right.set_xlabel("题目占比")
    right.set_title("其余切法（括号里是平均块长；横线是 95% 区间）", fontsize=11)
    right.grid(axis="x", alpha=0.3)
    handles, names = left.get_legend_handles_labels()
    fig.legend(handles, names, loc="lower center", ncol=3, fontsize=9, frameon=False)
    fig.suptitle("小北语料：证据完整上限与检索后的证据完整率", fontsize=12)
    fig.tight_layout(rect=(0, 0.08, 1, 0.96))
    return fig


# ---------------------------------------------------------------- 1.3 too big and too small

def rank_table(lab: Lab, q, configs) -> tuple[Any, dict]:
    """For one question: the chunks that overlap its evidence, their length, share and BM25 rank."""
    sp = q.spans[0]
    rows, out = [], {}
    for lab_ in configs:
        chunks = lab.chunks(lab_)
        r = evaluate(lab.docs, chunks, [q], k=5, index=lab.index, depth=len(chunks), n_boot=1)
        ranking = list(r.ranked[0])
        for ci, c in enumerate(chunks):
            if c.doc_id == sp.doc_id and c.start < sp.end and sp.start < c.end:
                inside = min(c.end, sp.end) - max(c.start, sp.start)
                rank = ranking.index(ci) + 1 if ci in ranking else None
                whole = "（完整）" if c.start <= sp.start and sp.end <= c.end else ""
                rows.append([f"`{lab_}`", f"[{c.start}:{c.end})", len(c), f"{inside}/{sp.end - sp.start}{whole}",
                             rank if rank else "无分（与问题不共享词项）"])
                out.setdefault(lab_, []).append((rank, len(c), inside))
    return table(rows, ["切法", "与证据重叠的块", "块长（字）", "装着证据的字数", "BM25 排名"]), out


def size_demo(lab: Lab, qid: str = "xb-a-023") -> dict[str, Any]:
    """Section 1.3's single question under 128-, 2048-character windows and the heading tree."""
    q = lab.by_qid[qid]
    sp = q.spans[0]
    tab, demo = rank_table(lab, q, ["fixed size=128", "fixed size=2048", "markdown"])
    best_small = min(r for r, _, _ in demo["fixed size=128"] if r)
    big_rank, big_len, big_in = demo["fixed size=2048"][0]
    md_rank, md_len, _ = demo["markdown"][0]
    words = lambda rank: f"排第 {rank}，{'在' if rank <= 5 else '不在'}前 5 之内"
    big_c = next(c for c in lab.chunks("fixed size=2048")
                 if c.doc_id == sp.doc_id and c.start <= sp.start and sp.end <= c.end)
    ranks = [best_small, big_rank, md_rank]
    numbers = {"demo_ev_len": len(q.evidence[0]), "demo_pieces": len(demo["fixed size=128"]),
               "demo_small_rank": words(best_small), "demo_big_rank": words(big_rank), "demo_big_len": big_len,
               "demo_big_share": big_in / big_len,
               "demo_big_secs": "、".join(re.findall(r"^#{2,3} (\S+ \S+)", big_c.text, re.M)),
               "demo_md_rank": words(md_rank), "demo_md_len": md_len, "demo_rank_spread": max(ranks) - min(ranks)}
    return {"numbers": numbers, "table": tab, "question": q, "big_holder": big_c}


def size_tests(lab: Lab) -> dict[str, Any]:
    """Small chunks lose the ceiling, big ones lose in retrieval: heading tree against 128 and 2048 windows.

    Five comparisons made together (Holm): the ceiling and the evidence completeness under the
    budget against each window, and the same-budget hit against the 128-character window.
    """
    cs = lambda lab_: lab.run(lab_, BUDGET).per_question["complete_single"]
    hit = lambda lab_: lab.run(lab_, BUDGET).per_question["hit"]
    pairs = {("ceiling", "128"): (lab.runs["markdown", "ceiling"], lab.runs["fixed size=128", "ceiling"]),
             ("ceiling", "2048"): (lab.runs["markdown", "ceiling"], lab.runs["fixed size=2048", "ceiling"]),
             ("budget", "128"): (cs("markdown"), cs("fixed size=128")),
             ("budget", "2048"): (cs("markdown"), cs("fixed size=2048")),
             ("hit", "128"): (hit("markdown"), hit("fixed size=128"))}
    tests = paired_many(pairs, method="holm", metric={key: "hit" if key[0] == "hit" else "complete_single" for key in pairs})
    rows = [[f"`fixed size={n}`", fmt_diff(tests["ceiling", n]), verdict(tests["ceiling", n]),
             fmt_diff(tests["budget", n]), verdict(tests["budget", n])] for n in ("128", "2048")]
    tab = table(rows, ["标题树 减去", "证据完整上限之差", "判定", f"证据完整率之差（{BUDGET:,} 字预算）", "判定"])
    numbers: dict[str, Any] = {}
    for (what, n), res in tests.items():
        numbers[f"size_{what}_{n}"] = fmt_diff(res)
        numbers[f"size_{what}_{n}_v"] = verdict(res)
    numbers["size_hit_128_note"] = _side(tests["hit", "128"])      # "标题树减它只有 …，<note>"
    numbers.update(hit_b_f128=float(hit("fixed size=128").mean()), size_m=len(pairs),
                   size_top_level=f"{max(r['level'] for r in tests.values()):.1%}")
    return {"numbers": numbers, "table": tab, "tests": tests}


def crowding(lab: Lab, sizes=(128, 256, 512)) -> dict[str, Any]:
    """Top-5 slots taken by fragments of one section (seed 000 §1), per fixed window size.

    A retrieved chunk belongs to the heading-tree chunk that starts last at or before its middle; a
    question is *crowded* when three or more of its top 5 (BM25, fixed k) come from one section.
    Also: for the questions with two or more evidence spans, the share whose spans are all held
    whole by the top 5 (``complete_union``).
    """
    md = lab.chunks("markdown")
    starts = {}
    for i, c in enumerate(md):
        starts.setdefault(c.doc_id, []).append((c.start, c.end, i))
    two = np.array([len(q.spans) > 1 for q in lab.questions])

    def section(c) -> int:
        mid = (c.start + c.end) // 2
        return [i for s, _, i in starts[c.doc_id] if s <= mid][-1]      # the section the middle falls in

    rows, numbers, crowded_q, union_q = [], {}, {}, {}
    for size in sizes:
        lab_ = f"fixed size={size}"
        chunks = lab.chunks(lab_, "fixed", size=size)
        r = lab.run(lab_)
        most = np.array([max(Counter(section(chunks[i]) for i in row[:5] if i >= 0).values(), default=0)
                         for row in np.asarray(r.ranked)])
        crowded_q[size] = (most >= 3).astype(float)
        union_q[size] = r.per_question["complete_union"][two]
        crowded, union = float(crowded_q[size].mean()), float(union_q[size].mean())
        rows.append([f"`{lab_}`", f"{crowded:.1%}", f"{union:.1%}"])
        numbers[f"crowd_{size}"] = crowded
        numbers[f"crowd_union_{size}"] = union
    numbers["crowd_two"] = int(two.sum())
    lo, hi = min(sizes), max(sizes)          # the smallest window against the largest, paired; read together: Holm
    tests = paired_many({"crowd": (crowded_q[lo], crowded_q[hi]), "union": (union_q[lo], union_q[hi])}, "holm")
    numbers["crowd_d"] = fmt_diff(tests["crowd"])
    numbers["crowd_union_d"] = fmt_diff(tests["union"])
    tab = table(rows, ["切法（BM25，前 5 块）", "前 5 块里有 ≥3 块来自同一节的题", f"多段证据题（{int(two.sum())} 道）：每段都完整取回"])
    return {"numbers": numbers, "table": tab}
