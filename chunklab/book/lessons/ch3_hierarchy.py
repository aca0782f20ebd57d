"""Chapter 3, part 2: retrieval units apart from generation units (parent-child, auto-merge, sentence
windows, two granularities), budgets, sentence windows that must not cross tenants or versions, the
two length walls, the selection guide and the chapter's claims rows.

Functions take the chapter's :class:`~chunklab.book.lessons.ch3.Lab` and a :class:`Units` built on
it; they return plain data (numbers for the prose, rows, figures).
"""
from __future__ import annotations

import functools
import importlib.metadata
import re

import matplotlib.pyplot as plt
import numpy as np

from ...core import Chunk, Document
from ...evaluation import Layout, question_metrics, select_budget
from ...evaluation.stats import paired_bootstrap, paired_many
from ...hierarchy import ParentChildIndex, SentenceWindowIndex, multi_granularity
from ...length import count_tokens
from ...retrieval import make_retriever
from ... import get_strategy
from ...strategies.linguistic import Recursive
from ...viz.fonts import use_cjk_font
from ...viz.plots import budget_curve
from ..claims import VERDICT_ZH, claim_row, fmt_diff, verdict
from ..criteria import criterion
from .ch3 import ENGINES, LITERAL, PRACTICAL, agree, cut_at, hit_many, retriever_figure, split_all

BUDGETS = [256, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192]
CONFIGS = ["单层 512 token", "父子块 200/1200", "父子块（父块 = 标题节）", "父子块（父块 = 与标题节等长的定长块）",
           "自动合并", "句子窗口 ±2 句"]
UNLIMITED = 10**9
B_MID = 1024                     # the budget where most 1200-token parents do not fit whole
PC_QID = "xb-a-006"              # the leave question: a child hits next to the answer, its parent holds it
TRUNC_QID = "xb-a-088"           # the delay-insurance question: its evidence sits past 512 tokens of a section
LLAMA_WINDOW = 3                 # SentenceWindowNodeParser's default window_size (llama-index-core source)
ntok = functools.lru_cache(maxsize=None)(count_tokens)


def matched_target(docs, sections: list, child_target: int = 200) -> int:
    """The recursive token target whose parents' mean length is closest to the sections' mean (grid of 25)."""
    want = float(np.mean([ntok(p.text) for p in sections]))
    best = None
    for t in range(200, 501, 25):
        parents = Recursive(target=t, length="tokens").split_documents(docs)
        gap = abs(float(np.mean([ntok(p.text) for p in parents])) - want)
        if best is None or gap < best[0]:
            best = (gap, t)
    return best[1]


class Units:
    """The retrieval units of part 2 on xiaobei, and their rankings by each retriever (cached)."""

    def __init__(self, lab) -> None:
        self.lab = lab
        docs = lab.xb_docs
        child = Recursive(target=200, length="tokens")
        self.pc = ParentChildIndex(docs, parent=Recursive(target=1200, length="tokens"), child=child)
        self.pcs = ParentChildIndex(docs, parent=get_strategy("markdown"), child=child)
        self.target_matched = matched_target(docs, self.pcs.parents)
        self.pcm = ParentChildIndex(docs, parent=Recursive(target=self.target_matched, length="tokens"), child=child)
        self.flat = split_all(docs, "recursive", target=512, length="tokens")
        self.sw = SentenceWindowIndex(docs, window=2)
        self.units = {"flat": self.flat, "children": self.pc.children, "section_children": self.pcs.children,
                      "matched_children": self.pcm.children, "sentences": self.sw.sentences}
        self.questions = [q.question for q in lab.xb_qs]
        self.layout = Layout(docs)
        self.gold = self.layout.gold_bounds([q.spans for q in lab.xb_qs])
        self.flat_start = self.layout.chunk_bounds(self.flat)[0]
        self._rankings: dict = {}

    def ranking(self, units: str, engine: str) -> np.ndarray:
        """Rankings (questions x 50) of one set of units by one retriever of ENGINES."""
        if (units, engine) not in self._rankings:
            s = ENGINES[engine]
            self._rankings[units, engine] = make_retriever(
                s.engine, self.lab.xb_docs, self.units[units], index=self.lab.xb_index, embedder=s.embedder
            ).search(self.questions, k=50).ids
        return self._rankings[units, engine]

    def describe(self) -> list[str]:
        lines = [f"父子块（父 1200 token）：{len(self.pc.parents)} 个父块，{len(self.pc.children)} 个子块",
                 f"父子块（父块 = 标题节）：{len(self.pcs.parents)} 个父块，{len(self.pcs.children)} 个子块",
                 f"父子块（父块 = {self.target_matched} token 的定长块）：{len(self.pcm.parents)} 个父块，"
                 f"{len(self.pcm.children)} 个子块",
                 f"单层 512 token：{len(self.flat)} 块", f"句子窗口：{len(self.sw.sentences)} 个句子"]
        return lines

    def score(self, contexts: list) -> dict:
        """contexts: per question, the chunks handed to the model (in order). Means and per-question arrays."""
        pool, ids = [], {}
        width = max(1, max(len(cs) for cs in contexts))
        ranked = np.full((len(contexts), width), -1)
        for i, cs in enumerate(contexts):
            for j, c in enumerate(cs):
                ranked[i, j] = ids.setdefault((c.doc_id, c.start, c.end), len(pool))
                if ranked[i, j] == len(pool):
                    pool.append(c)
        m = question_metrics(ranked, pool or [self.flat[0]], self.gold, k=width, layout=self.layout)
        items = np.array([len(cs) for cs in contexts], dtype=float)
        return {"hit": float(m["hit"].mean()), "items": float(items.mean()),
                "tokens": float(np.mean([sum(ntok(c.text) for c in cs) for cs in contexts])),
                "chars": float(np.mean([sum(len(c) for c in cs) for cs in contexts])),
                "dup": float(m["duplication"].mean()), "empty": float(np.mean(items == 0)),
                "hit_q": m["hit"], "items_q": items}


def cut_piece(c: Chunk, n: int) -> Chunk:
    """Chunk ``c`` cut to its first ``n`` characters (``c`` itself when ``n`` covers it).

    >>> cut_piece(Chunk("d", 0, 10, 14, "甲乙丙丁"), 2).text
    '甲乙'
    """
    return c if n >= len(c) else c._replace(end=c.start + int(n), text=c.text[:int(n)])


def fill_cut(chunks, budget: int) -> list:
    """Fill ``budget`` cl100k tokens from ordered, non-overlapping items, as ``select_budget(fill="cut")`` does:
    the first item that does not fit is cut to the room left, and the filling stops.

    >>> [c.text for c in fill_cut([Chunk("d", 0, 0, 2, "甲乙"), Chunk("d", 1, 2, 4, "丙丁")], 10**6)]
    ['甲乙', '丙丁']
    """
    out, used = [], 0
    for c in chunks:
        t = ntok(c.text)
        if used + t > budget:
            if budget > used:
                n = cut_at(c.text, budget - used)
                if n > 0:
                    out.append(cut_piece(c, n))
            break
        out.append(c)
        used += t
    return out


def parent_example(u: Units) -> dict:
    """The leave question: the child that hits, its parent, and where the flat chunks rank the evidence."""
    lab, pc = u.lab, u.pc
    qi = [q.id for q in lab.xb_qs].index(PC_QID)
    span = lab.xb_q[PC_QID].spans[0]
    child_rank, flat_rank = u.ranking("children", "BM25"), u.ranking("flat", "BM25")
    hit = next(int(j) for j in child_rank[qi][:5]
               if pc.parent_of(j).start <= span.start and span.end <= pc.parent_of(j).end)
    child, parent = pc.children[hit], pc.parent_of(hit)

    def covers(c):
        return 2 * (min(c.end, span.end) - max(c.start, span.start)) >= span.end - span.start

    flat_best = next((r + 1 for r, j in enumerate(flat_rank[qi])
                      if j >= 0 and u.flat[j].doc_id == span.doc_id and covers(u.flat[j])), None)
    assert not covers(child) and (flat_best is None or flat_best > 5)          # the prose relies on both
    where = f"排第 {flat_best} 名" if flat_best else "不在前 50 名之内"
    lines = [f"问题：{lab.xb_q[PC_QID].question}", f"证据：[{span.start}, {span.end})  {lab.xb_q[PC_QID].evidence[0]}",
             f"命中的子块排第 {list(child_rank[qi]).index(hit) + 1} 名：[{child.start}, {child.end})，"
             f"{ntok(child.text)} token；它的父块 [{parent.start}, {parent.end})，{ntok(parent.text)} token",
             "父块里的标题：" + " / ".join(line.strip() for line in parent.text.splitlines() if line.startswith("#")),
             f"单层 512 token：装着证据至少一半的块{where}"]
    return {"lines": lines, "doc": lab.xb.by_id[parent.doc_id], "chunks": [parent._replace(index=0), child._replace(index=1)],
            "around": (child.start + span.end) // 2, "numbers": {"pc_flat_rank": where}}


def top5(u: Units, engine: str) -> dict:
    """The four ways of handing the top 5 to the model, without a budget, for one retriever."""
    fr, cr = u.ranking("flat", engine), u.ranking("children", engine)
    pc = u.pc
    return {
        "单层 512 token，top-5": [[u.flat[j] for j in row[:5] if j >= 0] for row in fr],
        "只用子块（200 token），top-5": [[pc.children[j] for j in row[:5] if j >= 0] for row in cr],
        "父子块：前 5 个子块 → 父块": [pc.retrieve(row[:5], budget=UNLIMITED, count=ntok).chunks for row in cr],
        "自动合并：前 5 个子块": [pc.retrieve(row[:5], budget=UNLIMITED, count=ntok, auto_merge=True).chunks for row in cr],
    }


def parent_child_top5(u: Units) -> dict:
    """C4 at a fixed k=5: the four ways under each retriever, the comparisons the prose reads, and a figure."""
    scores = {e: {name: u.score(cs) for name, cs in top5(u, e).items()} for e in ENGINES}
    s = scores["BM25"]
    s_flat, s_child = s["单层 512 token，top-5"], s["只用子块（200 token），top-5"]
    s_pc, s_am = s["父子块：前 5 个子块 → 父块"], s["自动合并：前 5 个子块"]
    up = hit_many({e: (scores[e]["父子块：前 5 个子块 → 父块"]["hit_q"], scores[e]["单层 512 token，top-5"]["hit_q"])
                   for e in ENGINES})
    items = paired_bootstrap(s_pc["items_q"], s_flat["items_q"])
    c_hit, c_items = criterion("C4", "hit"), criterion("C4", "items")
    words = {e: verdict(up[e], expect=c_hit.expect, claimed=c_hit.claimed) for e in ENGINES}
    parent_tok = np.array([ntok(p.text) for p in u.pc.parents])
    numbers = {f"{k}_{m}": v[m2] for k, v in (("flat", s_flat), ("child", s_child), ("pc", s_pc), ("am", s_am))
               for m, m2 in (("hit", "hit"), ("items", "items"), ("tok", "tokens"))}
    numbers |= {"pc_tok_ratio": s_pc["tokens"] / s_flat["tokens"],
                "child_vs_flat": fmt_diff(paired_bootstrap(s_child["hit_q"], s_flat["hit_q"], metric="hit")),
                "am_vs_child": fmt_diff(paired_bootstrap(s_am["hit_q"], s_child["hit_q"], metric="hit")),
                "pc_parents": len(u.pc.parents), "pc_children": len(u.pc.children), "pc_parent_tok": float(parent_tok.mean()),
                "c4_words": agree(words), "c4_claimed_pp": round(100 * c_hit.claimed),
                "c4_claimed_items": round(-c_items.claimed),
                "c4_items": fmt_diff(items, pct=False),
                "c4_items_word": verdict(items, expect=c_items.expect, claimed=c_items.claimed)}
    rows = [(e, n, f"{x['hit']:.1%}", f"{x['items']:.2f}", f"{x['tokens']:.0f}", f"{x['dup']:.1%}")
            for e in ENGINES for n, x in scores[e].items()]
    fig = retriever_figure({("父子块 − 单层 512 token", e): up[e] for e in ENGINES},
                           xlabel="命中率（hit@5）的配对差（百分点）",
                           title="不限预算、前 5 个子块换成父块：相对单层块（三个比较一起 Holm 校正）",
                           claimed=c_hit.claimed)
    return {"scores": scores, "up": up, "items": items, "rows": rows, "figure": fig, "numbers": numbers,
            "parent_tok": parent_tok,
            "columns": ["检索器", "做法", "hit@5", "交给模型的段数", "token 数（平均）", "重复率"]}


def budget_contexts(u: Units, engine: str, config: str, b: int) -> list:
    """What each question hands to the model under a budget of b cl100k tokens (the last item cut to fit)."""
    if config == "单层 512 token":
        idx, ends = select_budget(u.ranking("flat", engine), u.flat, b, unit="tokens", layout=u.layout, fill="cut",
                                  return_ends=True)
        return [[cut_piece(u.flat[j], g - u.flat_start[j]) for j, g in zip(row, end) if j >= 0]
                for row, end in zip(idx, ends)]
    if config == "句子窗口 ±2 句":
        ordered = [u.sw.retrieve(row, budget=UNLIMITED, count=ntok).chunks for row in u.ranking("sentences", engine)]
    else:
        index, units = {"父子块 200/1200": (u.pc, "children"), "自动合并": (u.pc, "children"),
                        "父子块（父块 = 标题节）": (u.pcs, "section_children"),
                        "父子块（父块 = 与标题节等长的定长块）": (u.pcm, "matched_children")}[config]
        ordered = [index.retrieve(row, budget=UNLIMITED, count=ntok, auto_merge=config == "自动合并").chunks
                   for row in u.ranking(units, engine)]
    return [fill_cut(cs, b) for cs in ordered]


def budget_grid(u: Units) -> dict:
    """Every configuration × retriever × budget, scored: {(engine, config, budget): scores}."""
    return {(e, c, b): u.score(budget_contexts(u, e, c, b)) for e in ENGINES for c in CONFIGS for b in BUDGETS}


def budget_figure(at: dict, n_questions: int):
    """Same-budget hit against the budget, one panel per retriever."""
    use_cjk_font()
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.8), sharey=True)
    for ax, e in zip(axes, ENGINES):
        budget_curve({c: {b: at[e, c, b]["hit"] for b in BUDGETS} for c in CONFIGS}, ax=ax, ylabel="同预算命中率", title=e)
        ax.set_xscale("log", base=2)
    for ax in axes[1:]:
        if ax.get_legend():
            ax.get_legend().remove()
    axes[0].legend(fontsize=7, loc="lower right")
    fig.suptitle(f"固定上下文预算下的同预算命中率（小北，{n_questions} 题；最后一段截到剩余空间）")
    fig.tight_layout()
    return fig


def budget_tests(u: Units, at: dict, parent_tok: np.ndarray) -> dict:
    """The paired comparisons at three budgets (Holm, one group), the unit-vs-size figure, and the prose's numbers."""
    show = [BUDGETS[0], BUDGETS[len(BUDGETS) // 2], BUDGETS[-1]]
    flat = "单层 512 token"
    sec, mat = "父子块（父块 = 标题节）", "父子块（父块 = 与标题节等长的定长块）"
    # two questions, two groups (each Holm-corrected): each way against flat chunks, and sections against
    # fixed-length parents of the same mean length (the parent's unit with its size held fixed)
    versus = [c for c in CONFIGS[1:] if c != mat]
    pairs = {(c, b, e): (at[e, c, b]["hit_q"], at[e, flat, b]["hit_q"]) for c in versus for b in show for e in ENGINES}
    unit_pairs = {("标题节 − 等长定长块", b, e): (at[e, sec, b]["hit_q"], at[e, mat, b]["hit_q"])
                  for b in show for e in ENGINES}
    many = paired_many(pairs, method="holm", metric="hit") | paired_many(unit_pairs, method="holm", metric="hit")
    pairs |= unit_pairs
    words = {k: verdict(r) for k, r in many.items()}
    rows = [(c, f"{b:,}", e, f"{at[e, c, b]['hit']:.1%}" if c in CONFIGS else "—",
             f"{at[e, c, b]['tokens']:,.0f}" if c in CONFIGS else "—", fmt_diff(many[c, b, e]), words[c, b, e])
            for (c, b, e) in pairs]
    sec_tok = np.array([ntok(p.text) for p in u.pcs.parents])
    mat_tok = np.array([ntok(p.text) for p in u.pcm.parents])
    # the old rule (stop at the first item that does not fit), for the prose's comparison
    stop = u.score([u.pc.retrieve(row, budget=B_MID, count=ntok).chunks for row in u.ranking("children", "BM25")])
    cut = at["BM25", "父子块 200/1200", B_MID]
    fill_min = min(at[k]["tokens"] / k[2] for k in at)
    short = {c: [b for b in BUDGETS if at["BM25", c, b]["tokens"] < 0.99 * b] for c in CONFIGS}
    empty_max = max(at[k]["empty"] for k in at)

    def below(c):
        return sum(at[e, c, b]["hit"] < at[e, flat, b]["hit"] for e in ENGINES for b in BUDGETS)

    B = show[1]
    numbers = {
        "show_b": "、".join(f"{b:,}" for b in show), "b_mid": B_MID, "B": B, "b_first": show[0], "b_last": show[-1],
        "budget_points": len(BUDGETS) * len(ENGINES), "parent_tok_max": int(parent_tok.max()),
        "parent_tok_median": float(np.median(parent_tok)), "parent_over_mid": float(np.mean(parent_tok > B_MID)),
        "pc_mid_stop_empty": stop["empty"], "pc_mid_stop_hit": stop["hit"], "pc_mid_stop_tok": stop["tokens"],
        "pc_mid_hit": cut["hit"], "pc_mid_tok": cut["tokens"],
        "flat_mid_hit": at["BM25", flat, B_MID]["hit"], "flat_mid_tok": at["BM25", flat, B_MID]["tokens"],
        "fill_min": fill_min, "sw_top_tok": at["BM25", "句子窗口 ±2 句", BUDGETS[-1]]["tokens"],
        "underfill": "；".join(f"{c}（{'、'.join(f'{b:,}' for b in bs)} token）" for c, bs in short.items() if bs),
        "empty_phrase": "没有一道题拿到空上下文" if empty_max == 0 else f"拿到空上下文的问题占比最多 {empty_max:.1%}",
        "sec_tok_mean": float(sec_tok.mean()), "sec_tok_median": float(np.median(sec_tok)),
        "mat_tok_mean": float(mat_tok.mean()), "mat_tok_median": float(np.median(mat_tok)),
        "matched_target": u.target_matched,
    }
    for key, c in (("flat", flat), ("pc", "父子块 200/1200"), ("pcs", sec), ("pcm", mat), ("am", "自动合并"),
                   ("sw", "句子窗口 ±2 句")):
        numbers |= {f"b_{key}": at["BM25", c, B]["hit"], f"b_{key}_items": at["BM25", c, B]["items"],
                    f"b_{key}_tok": at["BM25", c, B]["tokens"], f"first_{key}_items": at["BM25", c, show[0]]["items"]}
        if c != flat:
            numbers[f"below_{key}"] = below(c)
            if c in versus:
                for end, b in (("first", show[0]), ("last", show[-1])):
                    numbers[f"bv_{key}_{end}"] = agree({e: words[c, b, e] for e in ENGINES})
    numbers["unit_cells"] = len(show) * len(ENGINES)
    for end, b in zip(("first", "mid", "last"), show):
        numbers[f"unit_{end}"] = agree({e: words["标题节 − 等长定长块", b, e] for e in ENGINES})
    numbers["unit_B_bm25"] = fmt_diff(many["标题节 − 等长定长块", B, "BM25"])
    assert VERDICT_ZH["contradicted"] not in {words[sec, b, e] for b in show for e in ENGINES}   # the prose: none behind
    unit = [many["标题节 − 等长定长块", b, e] for b in show for e in ENGINES]
    assert all(r["diff"] <= 0 for r in unit) and not any(r["lo"] > 0 for r in unit)   # the prose: sections never ahead
    assert 2 * sum(r["lo"] <= 0 <= r["hi"] for r in unit) > len(unit)   # the prose: most intervals include 0
    # the takeaway: the 1200-token parent is significantly behind at the two smaller shown budgets; most
    # section-parent comparisons against flat chunks are not significant
    assert all(words["父子块 200/1200", b, e] == VERDICT_ZH["contradicted"] for b in show[:2] for e in ENGINES)
    assert 2 * sum(many[sec, b, e]["lo"] <= 0 <= many[sec, b, e]["hi"] for b in show for e in ENGINES) > len(show) * len(ENGINES)
    return {"many": many, "words": words, "rows": rows, "numbers": numbers, "show": show,
            "columns": ["做法（相对单层 512 token）", "预算（token）", "检索器", "同预算命中率", "交付 token（平均）",
                        "配对差（决定判定的区间）", "判定（更好？）"]}


def unit_figure(budget: dict):
    """Section parents against fixed-length parents of the same mean length, at the three budgets."""
    return retriever_figure({(f"预算 {b:,} token", e): budget["many"]["标题节 − 等长定长块", b, e]
                             for b in budget["show"] for e in ENGINES},
                            xlabel="同预算命中率的配对差：标题节父块 − 等长定长父块（百分点）",
                            title="父块平均长度相同，只换切法：完整的节是否更好？（九个比较一起 Holm 校正）")


def windows(u: Units) -> dict:
    """Sentence windows at a fixed k=5 against single sentences (BM25)."""
    s_sw = u.score([u.sw.retrieve(row[:5], budget=UNLIMITED, count=ntok).chunks for row in u.ranking("sentences", "BM25")])
    s_sent = u.score([[u.sw.sentences[j] for j in row[:5] if j >= 0] for row in u.ranking("sentences", "BM25")])
    return {"s_sw": s_sw, "numbers": {"sw_hit": s_sw["hit"], "sw_tok": s_sw["tokens"], "sw_sent_hit": s_sent["hit"],
                                      "sw_dup": s_sw["dup"],
                                      "sw_vs_sent": fmt_diff(paired_bootstrap(s_sw["hit_q"], s_sent["hit_q"], metric="hit"))}}


def two_granularities(u: Units, s_flat: dict) -> dict:
    """Small (200) and big (800 token) chunks, each with BM25, fused by RRF (multi_granularity)."""
    lab = u.lab
    small = split_all(lab.xb_docs, "recursive", target=200, length="tokens")
    big = split_all(lab.xb_docs, "recursive", target=800, length="tokens")
    queries = lab.xb_index.encode_queries(u.questions)
    sr = lab.xb_index.index_chunks(small).search(queries, k=50).ids
    br = lab.xb_index.index_chunks(big).search(queries, k=50).ids
    fused = [[h.chunk for h in multi_granularity(a, b, small, big, k=5)] for a, b in zip(sr, br)]
    rows = {"小块 200 token，top-5": u.score([[small[j] for j in row[:5] if j >= 0] for row in sr]),
            "大块 800 token，top-5": u.score([[big[j] for j in row[:5] if j >= 0] for row in br]),
            "两种粒度 RRF 融合，top-5": u.score(fused)}
    mg = rows["两种粒度 RRF 融合，top-5"]
    hs, hb = rows["小块 200 token，top-5"]["hit_q"], rows["大块 800 token，top-5"]["hit_q"]
    vs = hit_many({"flat": (mg["hit_q"], s_flat["hit_q"]), "small": (mg["hit_q"], hs), "big": (mg["hit_q"], hb)})
    assert np.mean(hs == hb) > 0.5                             # the prose says "多半同对同错"
    numbers = {"mg_hit": mg["hit"], "mg_dup": mg["dup"], "big_hit": rows["大块 800 token，top-5"]["hit"],
               "small_hit": rows["小块 200 token，top-5"]["hit"], "sb_same": float(np.mean(hs == hb)),
               "sb_only_small": int(((hs > 0) & (hb == 0)).sum()), "sb_only_big": int(((hb > 0) & (hs == 0)).sum()),
               **{f"mg_vs_{k}": fmt_diff(r) for k, r in vs.items()}}
    return {"rows": [(n, f"{s['hit']:.1%}", f"{s['items']:.2f}", f"{s['tokens']:.0f}", f"{s['dup']:.1%}")
                     for n, s in rows.items()], "numbers": numbers, "s_mg": mg, "small": small, "big": big,
            "columns": ["做法", "hit@5", "段数", "token 数（平均）", "重复率"]}


def installed(package: str) -> str | None:
    """The installed version of ``package``, or None."""
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


OSS_PACKAGES = {
    "langchain-text-splitters": "文本切分器（RecursiveCharacterTextSplitter 等），可以充当父、子切分器",
    "langchain-classic": "ParentDocumentRetriever（LangChain 1.x 起所在的包）",
    "langchain": "ParentDocumentRetriever（LangChain 0.x 时所在的包）",
    "llama-index-core": "SentenceWindowNodeParser、MetadataReplacementPostProcessor",
}


def oss_simulation(u: Units, s_sw: dict, s_pc: dict) -> dict:
    """LlamaIndex's sentence windows and LangChain's parent documents, simulated by their rules (BM25)."""
    lab, sw, pc = u.lab, u.sw, u.pc
    versions = {p: installed(p) for p in OSS_PACKAGES}
    sent_ids: dict[str, list[int]] = {}
    for j, s in enumerate(sw.sentences):
        sent_ids.setdefault(s.doc_id, []).append(j)
    position = {j: (d, k) for d, js in sent_ids.items() for k, j in enumerate(js)}

    def llama_window(j):
        d, k = position[j]
        js = sent_ids[d][max(0, k - LLAMA_WINDOW):k + LLAMA_WINDOW]
        start, end = sw.sentences[js[0]].start, sw.sentences[js[-1]].end
        return Chunk(d, j, start, end, lab.xb.by_id[d].text[start:end]), " ".join(sw.sentences[x].text for x in js)

    wins = [llama_window(j) for j in range(len(sw.sentences))]
    sent_chars = sum(len(s) for s in sw.sentences)
    stored = {"LlamaIndex 式句子窗口": sent_chars + sum(len(w) for _, w in wins) + sent_chars,
              "chunklab SentenceWindowIndex": 0,
              "LangChain 式父文档检索": sum(len(c) for c in pc.children) + sum(len(p) for p in pc.parents),
              "chunklab ParentChildIndex": 0}
    llama = u.score([[wins[j][0] for j in row[:5] if j >= 0] for row in u.ranking("sentences", "BM25")])
    seen = {"LlamaIndex 式句子窗口": llama, "chunklab SentenceWindowIndex": s_sw,
            "LangChain 式父文档检索": s_pc, "chunklab ParentChildIndex": s_pc}
    missing = [p for p, v in versions.items() if v is None]
    return {"installed": [(p, v or "未安装", OSS_PACKAGES[p]) for p, v in versions.items()],
            "rows": [(n, f"{stored[n] / lab.xb.text_chars:.2f} 倍", f"{seen[n]['tokens']:.0f}", f"{seen[n]['dup']:.1%}",
                      f"{seen[n]['hit']:.1%}") for n in stored],
            "numbers": {"oss_missing": "、".join(missing) if missing else "（无）",
                        "llama_stored": stored["LlamaIndex 式句子窗口"] / lab.xb.text_chars,
                        "lc_stored": stored["LangChain 式父文档检索"] / lab.xb.text_chars,
                        "llama_dup": llama["dup"], "llama_tok": llama["tokens"], "llama_sents": 2 * LLAMA_WINDOW,
                        "llama_tok_ratio": llama["tokens"] / s_sw["tokens"],
                        "llama_vs_sw": fmt_diff(paired_bootstrap(llama["hit_q"], s_sw["hit_q"], metric="hit"))}}


#: A small multi-tenant library: one travel policy in two versions for tenant 甲, another for tenant 乙,
#: and two unrelated policies (so that the query's words are not in every document).
TENANT_DOCS = [
    Document("甲/差旅办法@2023", "第五条 住宿标准：一线城市每晚不超过 500 元。超标部分由个人承担。",
             meta={"tenant": "甲", "version": "2023", "current": False}),
    Document("甲/差旅办法@2024", "第五条 住宿标准：一线城市每晚不超过 600 元。超标部分须经部门负责人审批。",
             meta={"tenant": "甲", "version": "2024", "current": True}),
    Document("乙/差旅办法@2024", "第五条 住宿标准：一线城市每晚不超过 450 元。超标部分不予报销。",
             meta={"tenant": "乙", "version": "2024", "current": True}),
    Document("甲/考勤制度@2024", "第二条 员工每日九点前打卡。迟到三次记一次旷工。",
             meta={"tenant": "甲", "version": "2024", "current": True}),
    Document("乙/请假流程@2024", "第一条 请假须提前一天在系统中提交。病假须附医院证明。",
             meta={"tenant": "乙", "version": "2024", "current": True}),
]
TENANT_QUERY = "一线城市住宿每晚标准是多少"


def tenant_demo(tenant: str = "甲") -> dict:
    """Sentence windows on a multi-tenant, multi-version library: where the boundary comes from, and the filter.

    Returns lines (Chinese) for three cases: every document as its own document (windows end at the
    document), the hits filtered to ``tenant``'s current version before windows are taken, and the two
    versions flattened into one file without a blank line (the window then reads both versions).
    """
    sw = SentenceWindowIndex(TENANT_DOCS, window=1)
    ranked = [int(j) for j in make_retriever("bm25", TENANT_DOCS, sw.sentences).search([TENANT_QUERY], k=6).ids[0] if j >= 0]
    meta = {d.id: d.meta for d in TENANT_DOCS}
    raw = sw.retrieve(ranked[:3], budget=UNLIMITED, count=len).chunks
    allowed = [j for j in ranked if meta[sw.sentences[j].doc_id]["tenant"] == tenant
               and meta[sw.sentences[j].doc_id]["current"]]
    kept = sw.retrieve(allowed[:3], budget=UNLIMITED, count=len).chunks
    flat_text = TENANT_DOCS[0].text + TENANT_DOCS[1].text
    merged = SentenceWindowIndex([Document("甲/差旅办法（两版拼成一个文件）", flat_text)], window=1)
    i = next(j for j, x in enumerate(merged.sentences) if "600" in x.text)
    crossing = merged.window_chunk(i)

    def show(c):
        return f"    [{c.doc_id}] {c.text.strip()}"

    lines = [f"查询：{TENANT_QUERY}（用户属于租户{tenant}）", "① 不过滤，前 3 个命中句的窗口（±1 句）：",
             *map(show, raw), "② 先按租户和现行版本过滤命中，再取窗口：", *map(show, kept),
             "③ 两个版本被拼进同一个文件、中间没有空行：命中“600 元”那句，窗口读到："]
    lines.append(f"    {crossing.text.strip()}")
    return {"lines": lines, "raw": raw, "kept": kept, "crossing": crossing,
            "numbers": {"tenant_raw_docs": len({c.doc_id for c in raw}), "tenant_kept_docs": len({c.doc_id for c in kept})}}


def over_limit(settings: list, limit: int = 512) -> dict:
    """For each (name, docs, questions, chunks): chunks over 512 and 8191 tokens, and questions whose evidence
    a ``limit``-token embedder would not read (every chunk that holds it is too long, and it lies past the cut)."""
    rows, hidden_of, share = [], {}, {}
    for name, docs, qs, chunks in settings:
        toks = np.array([ntok(c.text) if len(c) < 20000 else count_tokens(c.text) for c in chunks])
        by_doc: dict[str, list] = {}
        for c, t in zip(chunks, toks):
            by_doc.setdefault(c.doc_id, []).append((c, t))
        hidden = contained = 0
        for q in qs:
            g = max(q.spans, key=lambda s: s.end - s.start)
            holders = [(c, t) for c, t in by_doc.get(g.doc_id, []) if c.start <= g.start and g.end <= c.end]
            if holders:
                contained += 1
                hidden += all(t > limit and c.start + cut_at(c.text, limit) < g.end for c, t in holders)
        rows.append((name, len(chunks), f"{np.mean(toks > 512):.1%}", int((toks > 8191).sum()), f"{toks.max():,}",
                     f"{hidden} / {contained}"))
        hidden_of[name], share[name] = (hidden, contained), float(np.mean(toks > 512))
    return {"rows": rows, "hidden": hidden_of, "share": share,
            "columns": ["设置", "块数", "超过 512 token 的块", "超过 8191 token 的块", "最长（token）",
                        "证据被 512 截断的题 / 有完整包含块的题"]}


def length_walls(lab, u: Units, f512: list, md: list) -> dict:
    """Tokens per character, whole documents against 8191 tokens, and the over-limit table of common settings."""
    xb_tok = sum(count_tokens(d.text) for d in lab.xb_docs)
    law_tok = [count_tokens(d.text) for d in lab.laws_docs]

    def han(docs):
        return sum(len(re.findall(r"[\u4e00-\u9fff]", d.text)) for d in docs)

    def whole(docs):
        return [Chunk(d.id, 0, 0, len(d.text), d.text) for d in docs]

    xb, laws = (lab.xb_docs, lab.xb_qs), (lab.laws_docs, lab.laws_qs)
    settings = [("小北 · fixed 512 字", *xb, f512),
                ("小北 · recursive 500 字", *xb, split_all(lab.xb_docs, "recursive", target=500)),
                ("小北 · markdown（max 1200 字）", *xb, md), ("小北 · 父块 1200 token", *xb, u.pc.parents),
                ("小北 · 整篇文档", *xb, whole(lab.xb_docs)),
                ("法规 · recursive 500 字", *laws, split_all(lab.laws_docs, "recursive", target=500)),
                ("法规 · clause（max 1200 字）", *laws, split_all(lab.laws_docs, "clause")),
                ("法规 · 整部法律", *laws, whole(lab.laws_docs))]
    ol = over_limit(settings)
    hid = ol["hidden"]
    numbers = {"xb_tpc": xb_tok / lab.xb.text_chars, "law_tpc": sum(law_tok) / lab.laws.text_chars,
               "xb_han": han(lab.xb_docs) / lab.xb.text_chars, "law_han": han(lab.laws_docs) / lab.laws.text_chars,
               "law_docs_over": sum(t > 8191 for t in law_tok), "law_docs": len(law_tok), "law_doc_max": max(law_tok),
               "hid_parent": hid["小北 · 父块 1200 token"][0], "hid_parent_n": hid["小北 · 父块 1200 token"][1],
               "hid_whole": hid["小北 · 整篇文档"][0], "hid_whole_n": hid["小北 · 整篇文档"][1],
               "over_f512": ol["share"]["小北 · fixed 512 字"], "over_lr500": ol["share"]["法规 · recursive 500 字"]}
    return {"rows": ol["rows"], "columns": ol["columns"], "numbers": numbers}


def truncation_example(lab, md: list) -> dict:
    """The delay-insurance question: the markdown section holding it, cut where 512 cl100k tokens end."""
    q = lab.xb_q[TRUNC_QID]
    span = q.spans[0]
    chunk = next(c for c in md if c.doc_id == span.doc_id and c.start <= span.start and span.end <= c.end)
    cut = chunk.start + cut_at(chunk.text, 512)
    doc = lab.xb.by_id[chunk.doc_id]
    kept = Chunk(doc.id, 0, chunk.start, cut, doc.text[chunk.start:cut])
    dropped = Chunk(doc.id, 1, cut, chunk.end, doc.text[cut:chunk.end])
    assert span.start >= cut                                  # the evidence lies in the dropped tail
    lines = [f"问题：{q.question}", f"块：{' > '.join(chunk.meta['path'])}，[{chunk.start}, {chunk.end})，{ntok(chunk.text)} token",
             f"512 token 在第 {cut} 字处用完；证据在 [{span.start}, {span.end})：{q.evidence[0]}",
             f"被截掉的尾部（{len(dropped)} 字）开头：{dropped.text.strip()[:60]}……"]
    return {"lines": lines, "doc": doc, "chunks": [kept, dropped], "around": cut + 90,
            "numbers": {"trunc_tok": ntok(chunk.text), "trunc_kept": ntok(kept.text), "trunc_drop_chars": len(dropped)}}


OTHER = ["向量（USE）", "混合（BM25+USE）"]     # the retrievers besides BM25, in the guide's columns


def guide(lab, u: Units, series: dict, fx_eng: dict, md_eng: dict, pct: dict, s_sw_by: dict, s_mg: dict,
          mg_units: list) -> dict:
    """The selection guide: one row per setting measured in the chapter (xiaobei, top-5, no budget)."""
    def infl(cs):
        return sum(len(c) for c in cs) / lab.xb.text_chars

    def flat_row(name, p, by_engine, when):
        others = [f"{by_engine[e].aggregate['hit']['mean']:.1%}" if by_engine else "—" for e in OTHER]
        return (name, f"{p['hit']:.1%}", *others, f"{p['tokens']:.0f}", f"{p['dup']:.1%}", f"{len(p['chunks']):,}",
                f"{p['inflation']:.2f}×", when)

    def ctx_row(name, s, by_engine, units, when):
        others = [f"{by_engine[e]['hit']:.1%}" if by_engine else "—" for e in OTHER]
        return (name, f"{s['hit']:.1%}", *others, f"{s['tokens']:.0f}", f"{s['dup']:.1%}", f"{len(units):,}",
                f"{infl(units):.2f}×", when)

    fx, rc = series["小北 · fixed 500"], series["小北 · recursive 500"]
    md, r_md = lab.run("xb", "markdown")
    md_point = {"hit": r_md.aggregate["hit"]["mean"], "tokens": r_md.aggregate["retrieved_tokens"]["mean"],
                "dup": r_md.aggregate["duplication"]["mean"], "chunks": md, "inflation": r_md.structure["overlap_inflation"]}
    by_pc = {e: pct[e]["父子块：前 5 个子块 → 父块"] for e in ENGINES}
    by_am = {e: pct[e]["自动合并：前 5 个子块"] for e in ENGINES}
    s = pct["BM25"]
    rows = [
        flat_row("fixed 500，overlap 0", fx[0], fx_eng[0], "只作回退；没有结构、必须定长时才用，且要配 overlap"),
        flat_row("fixed 500，overlap 10%", fx[0.10], fx_eng[0.10], "定长切分的默认：补住切断，成本可控"),
        flat_row("fixed 500，overlap 50%", fx[0.50], fx_eng[0.50], "不要用：近似重复挤占 top-k，索引近乎翻倍"),
        flat_row("recursive 500，overlap 10%", rc[0.10], None, "无标题结构的散文、纪要：边界对齐句子，少量 overlap 即可"),
        flat_row("markdown 标题树，overlap 0", md_point, md_eng, "有标题的制度、手册：边界即结构，不需要 overlap"),
        ctx_row("父子块 200 / 1200 token", s["父子块：前 5 个子块 → 父块"], by_pc, u.pc.children,
                "不推荐定长大父块；父块要短（标题节或同样短的块）"),
        ctx_row("自动合并（同上，过半才升级）", s["自动合并：前 5 个子块"], by_am, u.pc.children,
                "预算固定时的首选之一：默认交子块，命中集中才交父块"),
        ctx_row("句子窗口 ±2 句", s_sw_by["BM25"], s_sw_by, u.sw.sentences, "预算紧、要用许多小段把上下文铺开时"),
        ctx_row("两种粒度 200 + 800 token 融合", s_mg, None, mg_units, "两路检索器互补时才值得；同一个 BM25 的两种粒度不如单层块"),
    ]
    return {"rows": rows, "columns": ["设置", "hit@5 · BM25", "· 向量", "· 混合", "上下文 token", "重复率", "索引单元",
                                      "索引膨胀", "什么时候用"]}


def windows_by_engine(u: Units) -> dict:
    """Sentence windows of the top 5 sentences, under each retriever (no budget)."""
    return {e: u.score([u.sw.retrieve(row[:5], budget=UNLIMITED, count=ntok).chunks for row in u.ranking("sentences", e)])
            for e in ENGINES}


def claims(series: dict, fx_many: dict, c3: dict, nq_pol: int, pc: dict, budget: dict, at: dict) -> list:
    """The chapter's claims rows (C3, C11, C4), each judged by its register entry."""
    fx = series["小北 · fixed 500"]
    B = budget["numbers"]["B"]
    up, down = fx_many["10% − 0", "BM25"], fx_many["50% − 10%", "BM25"]
    practical = PRACTICAL
    s = pc["scores"]
    flat, par = "单层 512 token，top-5", "父子块：前 5 个子块 → 父块"
    c4b = budget["many"]["父子块 200/1200", B, "BM25"]
    return [
        claim_row("C3", "overlap 取块长 10–20% 时的索引膨胀", "约 15%",
                  f"fixed 500：10% → +{fx[0.10]['inflation'] - 1:.1%}，20% → +{fx[0.20]['inflation'] - 1:.1%}",
                  "按块长的比例估算索引大小只对固定窗口成立；recursive、标题树的 overlap 只回带整句，要从偏移量量。",
                  part="inflation", holds=fx[0.10]["inflation"] - 1 <= 0.15 <= fx[0.20]["inflation"] - 1),
        *[claim_row("C3", f"本章的主检验（不是文章字面的比较）：制度文件从 fixed 500 + overlap 50 换成不带 overlap 的标题树（{e}）",
                    "hit@5 无回退", f"{fmt_diff(c3['many'][practical, e])}（{nq_pol} 题）",
                    "换切法和去掉 overlap 一起检验：成立（非劣）就可以迁移并省下 overlap 的索引膨胀和重复；"
                    "未能确认则要更多的题。",
                    part="no loss", result=c3["many"][practical, e]) for e in ENGINES],
        *[claim_row("C3", f"文章字面的比较：标题树内部去掉 overlap 50（{e}）", "hit@5 无回退",
                    f"{fmt_diff(c3['many'][LITERAL, e])}（{nq_pol} 题）",
                    f"chunklab 的标题树里 overlap 只碰到回退块（索引只差 {c3['growth'][LITERAL]:.1%}），"
                    + ("两边几乎是同一套块：结果主要由实现决定，不能推广成“结构切分让 overlap 多余”。"
                       if c3["words"][LITERAL, e] == VERDICT_ZH["non-inferior"] else
                       f"两边几乎是同一套块；{nq_pol} 题的区间仍越过界值，非劣没有确认。"
                       "即使确认了，也主要由实现决定，不能推广成“结构切分让 overlap 多余”。"),
                    part="no loss", result=c3["many"][LITERAL, e]) for e in ENGINES],
        claim_row("C11", "fixed 500：overlap 10% 相对不重叠（BM25）", "10–20% 是合适范围", fmt_diff(up),
                  "定长切分就配 10% 左右的 overlap；三种检索器的结果见图。" if up["significant"] and up["diff"] > 0 else
                  f"校正后区间含 0，好处还不确定；但它把被切断的未命中从 {fx[0]['cut']} 题降到 {fx[0.10]['cut']} 题，"
                  f"索引只大 {fx[0.10]['inflation'] - 1:.1%}，定长切分仍可配 10% 左右（三种检索器的结果见图）。",
                  part="10%", result=up),
        claim_row("C11", "fixed 500：overlap 50% 相对 10%（BM25）", "不要超过三分之一", fmt_diff(down),
                  ("overlap 开到一半只会更差" if down["significant"] and down["diff"] < 0 else
                   "一半处的点估计更低，但区间含 0，仍不宜开到一半")
                  + f"：近似重复挤占 top-5（{fx[0.50]['crowded']} 题）。三分之一这个拐点本身没有检验。",
                  part="50%", result=down),
        *[claim_row("C4", f"不限预算：单层 512 → 父子块（子 200 / 父 1200 token），{e}", "68% → 76%",
                    f"{s[e][flat]['hit']:.1%} → {s[e][par]['hit']:.1%}（{fmt_diff(pc['up'][e])}）",
                    f"命中更多，是多读了 {s[e][par]['tokens'] / s[e][flat]['tokens']:.1f} 倍 token 换来的；比较要固定预算。",
                    part="hit", result=pc["up"][e]) for e in ENGINES],
        claim_row("C4", "交给模型的上下文条数（BM25，每题配对）", "5 → 3",
                  f"{s['BM25'][flat]['items']:.1f} → {s['BM25'][par]['items']:.1f}（{fmt_diff(pc['items'], pct=False)}）",
                  "条数少了，字数多了：预算按 token 算，不按条数算。", part="items", result=pc["items"]),
        claim_row("C4", f"固定 {B:,} token 预算：父子块相对单层 512（BM25）", "（文章未固定预算）",
                  f"{at['BM25', '父子块 200/1200', B]['hit']:.1%} 对 {at['BM25', '单层 512 token', B]['hit']:.1%}"
                  f"（{fmt_diff(c4b)}）",
                  "同样的 token 下，1200 token 的大父块不如单层块：父块要短。", part="budget", result=c4b),
    ]
