"""Chapter 2: containers, the scorecard of every strategy on xiaobei, and e5's input limit (C13, C14)."""
from __future__ import annotations

import ast
import re
import time
from collections import Counter
from typing import Any, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, MaxNLocator

from ... import strategies  # noqa: F401  (importing it registers every strategy)
from ...base import chunk, get_strategy
from ...core import Chunk, Document
from ...evaluation import evaluate, paired_bootstrap, structure_metrics
from ...evaluation.stats import deciding_levels
from ...length import count_tokens
from ...strategies.container import find_tables, find_turns
from ...strategies.router import route
from ..claims import claim_row, fmt_diff
from ...viz.fonts import use_cjk_font
from ..labels import FAMILY_ZH

__all__ = ["kept", "container_units", "container_failures", "SCORECARD", "scorecard", "E5Limit",
           "boundary_vs_fixed", "over_limit", "hidden_questions", "tail_cost", "limit_claims", "code_symbols", "self_describing", "scorecard_figure"]


def kept(chunks: Sequence[Chunk], text: str, a: int, b: int, head: int | None = None) -> bool:
    """Is ``[a, b)`` (whitespace trimmed) inside one chunk, with the header at ``head`` when given
    (or with the header repeated in the chunk's context)?

    >>> from chunklab.core import Chunk
    >>> kept([Chunk("d", 0, 0, 4, "甲乙丙丁")], "甲乙丙丁", 1, 3), kept([Chunk("d", 0, 0, 2, "甲乙")], "甲乙丙丁", 1, 3)
    (True, False)
    """
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    return any(c.start <= a and b <= c.end and (head is None or c.start <= head or c.context) for c in chunks)


def _table_rows(d):
    return [(r.start, r.end, t.start) for t in find_tables(d.text) for r in t.rows]


def _qa_turns(d):  # a turn of the session's opener (the customer) and the reply that follows it
    out = []
    for s in find_turns(d.text):
        for t1, t2 in zip(s.turns, s.turns[1:]):
            if t1.speaker == s.turns[0].speaker != t2.speaker:
                out.append((t1.start, t2.end, None))
    return out


def _faq_pairs(d):
    return [(c.start, c.end, None) for c in chunk(d, "qa_pair") if c.meta.get("kind") == "qa"]


def container_units(corpus) -> dict[str, Any]:
    """How many container units (table rows with their header, customer turn + reply, FAQ pairs)
    fixed 500 splits, and how many the container's own strategy splits."""
    docs = list(corpus)
    cases = [("表格行（连同表头）", [d for d in docs if find_tables(d.text)], _table_rows, "table", {"mode": "rows"}, True),
             ("对话：客户的一句话 + 紧跟的回复", [corpus["support_dialogues"], corpus["internal_chat_it"]], _qa_turns,
              "dialogue", {}, False),
             ("FAQ 的问题 + 答案", [corpus["faq_hr"], corpus["faq_it"]], _faq_pairs, "qa_pair", {}, False)]
    rows, numbers = [], {}
    for label, ds, units_of, name, params, with_head in cases:
        rate = {}
        for strat, p in (("fixed", {"size": 500}), (name, params)):
            total = split = 0
            for d in ds:
                cs = chunk(d, strat, **p)
                for u in units_of(d):
                    total += 1
                    split += not kept(cs, d.text, u[0], u[1], u[2] if with_head else None)
            rate[strat] = split / total
        rows.append((label, total, f"{rate['fixed']:.1%}", f"{name}：{rate[name]:.1%}"))
        numbers[f"container_fixed_{name}"] = rate["fixed"]
    return {"rows": rows, "numbers": numbers}


def container_failures(corpus) -> dict[str, Any]:
    """Where container strategies fail: ragged tables, sessions split by turn windows, FAQ answers
    pointing elsewhere. ``ragged_example``: (title, header cells, the short row's cells)."""
    tables = [(d, t) for d in corpus for t in find_tables(d.text)]
    ragged = [(d, t) for d, t in tables if t.ragged]
    d, t = ragged[0]
    row = t.rows[t.ragged[0] - 1]
    sessions = find_turns(corpus["support_dialogues"].text)
    per_session = Counter(c.meta.get("session") for c in chunk(corpus["support_dialogues"], "dialogue"))
    faq = [c for c in get_strategy("qa_pair").split_documents([corpus["faq_hr"], corpus["faq_it"]])
           if c.meta.get("kind") == "qa"]
    refs = [c for c in faq if re.search(r"同上|见上|见第|参见|上一问|前一问|上文", c.text)]
    return {"ragged_example": (d.title, list(t.columns), list(row.cells)), "numbers": {
        "n_tables": len(tables), "ragged_tables": len(ragged), "n_sessions": len(sessions),
        "dialogue_chunks": sum(per_session.values()), "split_sessions": sum(n > 1 for n in per_session.values()),
        "faq_pairs": len(faq), "faq_refs": len(refs)}}


#: Every registered strategy at about 500 characters (or its own defaults).
SCORECARD = [("fixed", {"size": 500}), ("sliding_window", {"window": 500, "step": 250}),
             ("token", {"size": 400}), ("line", {"target": 500}), ("paragraph", {"target": 500}),
             ("recursive", {"target": 500}), ("sentence", {"target": 500}), ("markdown", {}),
             ("clause", {}), ("html", {}), ("auto", {}), ("table", {}), ("dialogue", {}),
             ("qa_pair", {}), ("code", {}), ("semantic", {"target": 500}), ("parent_child", {}),
             ("sentence_window", {})]


def _label(name, params):
    return name + (f"({', '.join(f'{k}={v}' for k, v in params.items())})" if params else "")


def scorecard(docs: Sequence[Document], questions: Sequence) -> dict[str, Any]:
    """Every strategy of :data:`SCORECARD` on ``docs``: structure, evidence cut, fallback, time.

    "Evidence cut": gold spans of ``questions`` that no single chunk holds whole (paired between
    strategies, resampling whole documents). Returns ``card`` ({name: measures and chunks}),
    ``rows`` and ``numbers``.
    """
    gold_by_doc: dict[str, list] = {}
    for q in questions:
        for s in q.spans:
            gold_by_doc.setdefault(s.doc_id, []).append((s.start, s.end))
    span_doc = [d for d, spans in gold_by_doc.items() for _ in spans]

    def evidence_cut(chunks):
        by_doc: dict[str, list] = {}
        for c in chunks:
            by_doc.setdefault(c.doc_id, []).append((c.start, c.end))
        return np.array([not any(a <= s and e <= b for a, b in by_doc.get(d, ())) for d, spans in gold_by_doc.items()
                         for s, e in spans], float)

    rows, card = [], {}
    for name, params in SCORECARD:
        t0 = time.perf_counter()
        strategy = get_strategy(name, **params)
        chunks = strategy.split_documents(docs)
        seconds = time.perf_counter() - t0
        m = structure_metrics(docs, chunks)
        fb = sum(c.meta.get("fallback_from") is not None for c in chunks) / len(chunks)
        flags = evidence_cut(chunks)
        card[name] = {"cut": flags.mean(), "cut_flags": flags, "fb": fb, "seconds": seconds, "chunk_list": chunks,
                      "params": params, **m}
        rows.append((FAMILY_ZH[type(strategy).family], _label(name, params), m["chunks"], f"{m['len_mean']:.0f}",
                     m["len_max"], f"{m['boundary_alignment']:.1%}", f"{flags.mean():.1%}", f"{fb:.0%}",
                     f"{1000 * seconds:.0f}"))
    kind_of = {d.id: route(d).doc_type for d in docs}
    tpc = {k: sum(count_tokens(d.text) for d in docs if kind_of[d.id] == k)
           / sum(len(d.text) for d in docs if kind_of[d.id] == k) for k in ("code", "markdown")}
    sem_lens = np.array([len(c) for c in card["semantic"]["chunk_list"]])
    numbers = {
        "card_cut_fixed": card["fixed"]["cut"], "card_cut_token": card["token"]["cut"],
        "card_cut_sw": card["sentence_window"]["cut"],
        "card_cut_token_diff": fmt_diff(paired_bootstrap(card["token"]["cut_flags"], card["fixed"]["cut_flags"],
                                                         clusters=span_doc)),
        "card_cut_rec_diff": fmt_diff(paired_bootstrap(card["fixed"]["cut_flags"], card["recursive"]["cut_flags"],
                                                       clusters=span_doc)),
        "card_sem_ms": 1000 * card["semantic"]["seconds"],
        "sem_ratio": card["semantic"]["seconds"] / max(v["seconds"] for k, v in card.items() if k != "semantic"),
        "tpc_code": tpc["code"], "tpc_md": tpc["markdown"],
        "card_sem_n": card["semantic"]["chunks"], "card_fixed_n": card["fixed"]["chunks"],
        "card_sem_ratio_n": card["semantic"]["chunks"] / card["fixed"]["chunks"],
        "card_sem_median": float(np.median(sem_lens)), "card_sem_short": float((sem_lens < 100).mean()),
        "card_sem_fb": float(np.mean([c.meta.get("level") == "recursive" for c in card["semantic"]["chunk_list"]])),
        "sw_unit_mean": card["sentence_window"]["len_mean"],
    }
    for name in ("fixed", "token"):
        numbers[f"card_{name}_mean"], numbers[f"card_{name}_std"] = card[name]["len_mean"], card[name]["len_std"]
    boundary = boundary_vs_fixed(card, span_doc)
    weakest = min(boundary, key=lambda k: boundary[k]["lo"])
    numbers.update({"card_boundary_n": len(boundary), "card_boundary_all": all(
        r["significant"] and r["diff"] > 0 for r in boundary.values()),
        "card_boundary_weakest": weakest, "card_boundary_weakest_diff": fmt_diff(boundary[weakest])})
    return {"card": card, "boundary": boundary, "rows": rows, "numbers": numbers, "top_fallback": sorted(card, key=lambda k: -card[k]["fb"])[:5]}


def boundary_vs_fixed(card: dict[str, Any], clusters: Sequence[Any]) -> dict[str, dict]:
    """Evidence cut of fixed minus that of every strategy cutting at a language or structure boundary.

    All of them are compared with fixed together (Holm): every non-geometric strategy of the
    scorecard except ``sentence_window``, whose unit is one sentence by design. ``clusters`` (the
    document of each evidence span) makes every interval resample whole documents. Each result's
    interval is the deciding one, with ``level``, ``m`` and ``method`` for
    :func:`~chunklab.book.claims.fmt_diff`.
    """
    names = [n for n in card if get_strategy(n).family != "geometric" and n != "sentence_window"]
    fixed = card["fixed"]["cut_flags"]
    first = {n: paired_bootstrap(fixed, card[n]["cut_flags"], clusters=clusters) for n in names}
    alphas = deciding_levels([first[n]["p"] for n in names], "holm")
    out = {}
    for n, al in zip(names, alphas):
        r = paired_bootstrap(fixed, card[n]["cut_flags"], clusters=clusters, level=1 - al)
        out[n] = {**r, "m": len(names), "method": "holm"}
    return out


class E5Limit:
    """Token counts of passages in e5's own tokens (prefix and special tokens included), and how much
    of a text the model reads: the longest prefix within its limit, as the embedder cuts."""

    def __init__(self, embedder):
        self.embedder = embedder
        self.limit = embedder.max_tokens
        self._tok: dict[str, int] = {}

    def tokens(self, text: str) -> int:
        if text not in self._tok:
            self._tok[text] = self.embedder.token_counts([text])[0]
        return self._tok[text]

    def visible(self, text: str) -> int:
        lo, hi = 0, len(text)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if self.tokens(text[:mid]) <= self.limit else (lo, mid - 1)
        return lo

    def truncation_demo(self, chunks: Sequence[Chunk], filler: str) -> dict[str, Any]:
        """The longest chunk (in tokens), its unread tail swapped for ``filler``: does the vector move?"""
        longest = max(chunks, key=lambda c: self.tokens(c.text))
        seen = self.visible(longest.text)
        vecs = self.embedder.embed_passages([longest.text, longest.text[:seen],
                                             longest.text[:seen] + filler[:len(longest.text) - seen]])
        return {"doc": longest.doc_id, "chars": len(longest), "tokens": self.tokens(longest.text), "seen": seen,
                "same_prefix": float(vecs[0] @ vecs[1]), "same_swapped": float(vecs[0] @ vecs[2])}


def over_limit(lim: E5Limit, card: dict[str, Any]) -> dict[str, Any]:
    """Per scorecard strategy: chunks over e5's limit, their share, the longest, the unread characters."""
    rows, share = [], {}
    for name, params in SCORECARD:
        chunks = card[name]["chunk_list"]
        toks = np.array([lim.tokens(c.text) for c in chunks])
        over = [c for c, t in zip(chunks, toks) if t > lim.limit]
        unseen = sum(len(c) - lim.visible(c.text) for c in over)
        share[name] = len(over) / len(chunks)
        rows.append((_label(name, params), len(chunks), len(over), f"{share[name]:.1%}", int(toks.max()),
                     f"{unseen / sum(len(c) for c in chunks):.2%}"))
    fixed = card["fixed"]["chunk_list"]
    return {"rows": rows, "numbers": {
        "over_configs": sum(v > 0 for v in share.values()), "over_code": share["code"], "over_table": share["table"],
        "over_md": share["markdown"],
        "e5_tpc_xb": sum(lim.tokens(c.text) for c in fixed) / sum(len(c) for c in fixed)}}


def hidden_questions(lim: E5Limit, chunks: Sequence[Chunk], questions: Sequence) -> list[int]:
    """Questions whose every evidence span lies, in each chunk holding it, past where e5 stops reading."""
    tail_from = {(c.doc_id, c.start, c.end): c.start + lim.visible(c.text) for c in chunks
                 if lim.tokens(c.text) > lim.limit}
    by_doc: dict[str, list] = {}
    for c in chunks:
        by_doc.setdefault(c.doc_id, []).append(c)
    out = []
    for i, q in enumerate(questions):
        ok = True
        for s in q.spans:
            holders = [c for c in by_doc.get(s.doc_id, ()) if c.start <= s.start and s.end <= c.end]
            ok = ok and bool(holders) and all(s.start >= tail_from.get((c.doc_id, c.start, c.end), c.end)
                                              for c in holders)
        if ok:
            out.append(i)
    return out


def tail_cost(lim: E5Limit, docs: Sequence[Document], chunks: Sequence[Chunk], questions: Sequence,
              index=None) -> dict[str, Any]:
    """e5 vector search vs BM25 on the questions whose evidence e5 cannot read (and on the rest)."""
    dense = evaluate(docs, chunks, questions, k=5, index=index, engine="dense", embedder="e5-small", n_boot=200)
    bm25 = evaluate(docs, chunks, questions, k=5, index=index, n_boot=200)
    hid = hidden_questions(lim, chunks, questions)
    d, b = np.asarray(dense.per_question["hit"]), np.asarray(bm25.per_question["hit"])
    rest = np.setdiff1d(np.arange(len(questions)), hid)
    return {"numbers": {"hid_n": len(hid), "hid_dense": float(d[hid].mean()), "hid_bm25": float(b[hid].mean()),
                        "hid_diff": fmt_diff(paired_bootstrap(d[hid], b[hid])),
                        "rest_diff": fmt_diff(paired_bootstrap(d[rest], b[rest])), "rest_n": len(rest),
                        "md_over": dense.summary()["embedder_over_limit"]}}


def limit_claims(lim: E5Limit, demo: dict[str, Any]) -> list:
    """C13 (the vendors' limits: background) and C14 (the unread tail does not move the vector)."""
    return [
        claim_row("C13", "嵌入模型的输入上限", "text-embedding-3-small 8191 token；bge-m3 8192 token",
                  f"本书用的 e5-small：{lim.limit} token（含 <s>、</s> 和 passage: 前缀）",
                  "厂商文档里的数字，本机无法复测：块的硬上限按你实际用的模型、用它自己的分词器来定"),
        claim_row("C14", "超过上限的块被截断，尾巴不影响向量", "会被静默截断",
                  f"{demo['chars']} 字的块只读前 {demo['seen']} 字；换掉尾巴后余弦相似度 {demo['same_swapped']:.6f}",
                  "换掉读不到的尾巴，向量不变（余弦 ≥ 0.9999）：尾巴里的证据对向量检索不存在。入库前检查超限块数"
                  "（chunklab 记在 embedder_over_limit）", holds=demo["same_prefix"] > 0.9999 and demo["same_swapped"] > 0.9999),
    ]


def code_symbols(doc: Document) -> list[tuple[str, int, int]]:
    """Top-level functions and classes of a Python document: (name, start offset, end offset)."""
    tree = ast.parse(doc.text)
    starts = np.concatenate([[0], np.cumsum([len(x) for x in doc.text.splitlines(keepends=True)])])
    return [(n.name, int(starts[n.lineno - 1]), int(starts[n.end_lineno - 1]) + n.end_col_offset)
            for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]


def self_describing(chunks: Sequence[Chunk], symbols: Sequence[tuple[str, int, int]]) -> float:
    """Share of chunks overlapping a top-level symbol whose text or context names that symbol.

    >>> from chunklab.core import Chunk
    >>> syms = [("f", 0, 30)]
    >>> self_describing([Chunk("d", 0, 0, 15, "def f(x):\\n    y"), Chunk("d", 1, 15, 30, "return x + y   ")], syms)
    0.5
    """
    ok = total = 0
    for c in chunks:
        owners = [name for name, s, e in symbols if c.start < e and s < c.end]
        if owners:
            total += 1
            ok += any(re.search(rf"(def|class) {name}\b", c.embed_text) or f":: {name}" in c.context
                      or f"class {name}" in c.context for name in owners)
    return ok / total


def scorecard_figure(card: dict[str, Any], title: str = "小北上的全家福：证据切断与回退"):
    """Two bar panels over every scorecard strategy (in registry order, coloured by family): the share
    of evidence spans no chunk holds whole, and the share of chunks from a fallback level."""
    use_cjk_font()
    names = list(card)
    fams = [get_strategy(n).family for n in names]
    colours = dict(zip(FAMILY_ZH, plt.get_cmap("tab10").colors))
    fig, axes = plt.subplots(1, 2, figsize=(8.6, 0.3 * len(names) + 1.6), sharey=True)
    for ax, key, label in ((axes[0], "cut", "证据切断（答案片段没有整块落在任何一块里）"),
                           (axes[1], "fb", "回退（来自回退级的块）")):
        vals = [100 * float(card[n][key]) for n in names]
        ax.barh(range(len(names)), vals, color=[colours[f] for f in fams])
        for i, v in enumerate(vals):
            ax.text(v, i, f" {v:.1f}%" if key == "cut" else f" {v:.0f}%", va="center", fontsize=7.5)
        ax.set_xlabel(label, fontsize=8.5)
        if key == "fb":   # a share of chunks: ticks up to 100% only, room on the right for the labels
            ax.set_xlim(0, 118)
            ax.set_xticks([0, 25, 50, 75, 100])
        else:             # whole-percent ticks, so no label is a rounded 2.5%
            ax.set_xlim(0, max(vals) * 1.3 + 1)
            ax.xaxis.set_major_locator(MaxNLocator(nbins=6, steps=[1, 2, 5, 10], integer=True))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:.0f}%"))
    axes[0].set_yticks(range(len(names)), names, fontsize=8.5)
    axes[0].invert_yaxis()
    handles = [Patch(facecolor=colours[f], label=FAMILY_ZH[f]) for f in dict.fromkeys(fams)]
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=8, frameon=False)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    return fig
