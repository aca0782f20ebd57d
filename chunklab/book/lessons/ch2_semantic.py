"""Chapter 2, the semantic family: what its cuts owe to headings, and semantic vs fixed with e5 (C2).

C2 is measured twice with the same settings, fixed before any retrieval: on the formal policies
(the article's setting) and on the unstructured prose (meeting minutes, announcements, notes),
where the sources say semantic chunking belongs.
"""
from __future__ import annotations

import time
from typing import Any, Sequence

import numpy as np

from ... import strategies  # noqa: F401  (importing it registers every strategy)
from ...base import get_strategy
from ...core import Document
from ...evaluation import evaluate, paired_bootstrap
from ...evaluation.stats import paired_many
from ...retrieval import CorpusIndex, get_embedder
from ...strategies.router import route
from ...strategies.semantic import Semantic, boundary_scores, random_boundary_baseline
from ...strategies.structure import markdown_headings
from ..claims import claim_row, fmt_diff, verdict
from ..criteria import criterion

__all__ = ["without_headings", "heading_credit", "policy_docs", "prose_docs", "SEM_E5", "ENGINES",
           "semantic_vs_fixed", "adjacent_pairs", "e5_speed", "drop_points", "c2_note", "c2_claims"]


def without_headings(doc: Document) -> tuple[Document, list[int]]:
    """The document with its heading lines removed, and where each level <= 3 section now starts.

    >>> d, b = without_headings(Document("d", "# 甲\\n一。\\n## 乙\\n二。"))
    >>> d.text, b
    ('一。\\n二。', [3])
    """
    heads = markdown_headings(doc.text)[0]
    bounds, text, prev = [], "", 0
    for s, body, level, _ in heads:
        text += doc.text[prev:s]
        if level <= 3 and text.strip():
            bounds.append(len(text))
        prev = body
    text += doc.text[prev:]
    return Document(doc.id + "-plain", text), bounds


def heading_credit(docs: Sequence[Document], semantic: Semantic | None = None) -> dict[str, Any]:
    """F1 of semantic cut points against section boundaries: with headings, without, and random cuts.

    Tolerance one sentence; the random baseline makes as many cuts as the semantic chunker did on
    the text without headings. Differences are paired over ``docs`` (few: a rough interval).
    """
    semantic = semantic or Semantic()
    rows, f1 = [], {"with": [], "plain": [], "random": []}
    for d in docs:
        a_full = semantic.analyse(d)
        true_full = [s for s, _, level, _ in markdown_headings(d.text)[0] if level <= 3][1:]
        with_h = boundary_scores(a_full.breakpoint_offsets, true_full, tolerance=1, sentences=a_full.sentences)
        plain, bounds = without_headings(d)
        a_plain = semantic.analyse(plain)
        no_h = boundary_scores(a_plain.breakpoint_offsets, bounds, tolerance=1, sentences=a_plain.sentences)
        rand = random_boundary_baseline(len(a_plain.breakpoints), a_plain.sentences, bounds, tolerance=1)
        for key, r in (("with", with_h), ("plain", no_h), ("random", rand)):
            f1[key].append(r["f1"])
        rows.append((d.id, f"{with_h['f1']:.2f}", f"{no_h['f1']:.2f}", f"{rand['f1']:.2f}"))
    gap = paired_bootstrap(f1["plain"], f1["random"])
    return {"rows": rows, "numbers": {
        "sem_n_docs": len(rows), "sem_f1_with": float(np.mean(f1["with"])), "sem_f1_plain": float(np.mean(f1["plain"])),
        "sem_heading_gain": fmt_diff(paired_bootstrap(f1["with"], f1["plain"]), pct=False),
        "sem_gap": fmt_diff(gap, pct=False), "sem_gap_holds_zero": bool(gap["lo"] < 0 < gap["hi"])}}


def policy_docs(docs: Sequence[Document]) -> list[Document]:
    """Formal policies: routed to headings or clauses, with a document number ("文号") near the top."""
    return [d for d in docs if route(d).doc_type in ("markdown", "clause") and "文号" in d.text[:300]]


def prose_docs(docs: Sequence[Document]) -> list[Document]:
    """Unstructured prose: the documents the router calls "prose" (minutes, announcements, notes)."""
    return [d for d in docs if route(d).doc_type == "prose"]


#: The article's way of semantic chunking (each sentence embedded alone, cut below mean − 1 sd),
#: other knobs at their defaults: fixed before any retrieval.
SEM_E5 = {"embedder": "e5-small", "buffer": 0, "threshold": "std", "k": 1.0}
ENGINES = {"bm25": "BM25", "dense": "e5 向量", "hybrid": "混合 BM25+e5"}


def adjacent_pairs(result, chunks) -> np.ndarray:
    """Per question: how many pairs among its retrieved chunks are neighbours in one document.

    Two neighbours retrieved together mostly say the same thing twice: the seed's "adjacent
    duplication", which spends the context budget without adding evidence.
    """
    pos = [(c.doc_id, c.index) for c in chunks]
    out = []
    for row in result.ranked[:, :result.k_used]:
        got = {pos[i] for i in row if i >= 0}
        out.append(sum((d, i + 1) in got for d, i in got))
    return np.array(out, float)


def semantic_vs_fixed(docs: Sequence[Document], questions: Sequence, *, corpus: Sequence[Document] | None = None,
                      settings: dict | None = None, embedder: str = "e5-small", engines: Sequence[str] = tuple(ENGINES),
                      size: int = 512, n_boot: int = 1000) -> dict[str, Any]:
    """Semantic (``settings``, default :data:`SEM_E5`) vs ``fixed(size)`` on ``docs``.

    The search runs over ``corpus`` (default: ``docs`` alone); its other documents are cut by
    ``fixed(size)`` on both sides, so only ``docs`` differ. Judged on the questions whose evidence
    lies wholly in ``docs``, with each engine; the engines' comparisons of hit@5 are corrected
    together (Holm). Also reports what the threshold did
    (share of sentence gaps cut, sentence length, sentences per chunk), the characters retrieved
    by the dense engine, neighbours retrieved together, and e5's speed without the cache.
    """
    settings = dict(SEM_E5 if settings is None else settings, embedder=embedder)
    ids = {d.id for d in docs}
    qs = [q for q in questions if all(s.doc_id in ids for s in q.spans)]
    corpus = list(docs if corpus is None else corpus)
    others = get_strategy("fixed", size=size).split_documents([d for d in corpus if d.id not in ids])
    sem = get_strategy("semantic", **settings).split_documents(docs)
    fix = get_strategy("fixed", size=size).split_documents(docs)
    index = CorpusIndex(corpus)
    res = {(e, label): evaluate(corpus, chunks + others, qs, k=5, index=index, engine=e, embedder=embedder,
                                n_boot=n_boot)
           for e in engines for label, chunks in (("semantic", sem), ("fixed", fix))}
    tests = paired_many({e: (res[e, "semantic"].per_question["hit"], res[e, "fixed"].per_question["hit"])
                         for e in engines}, method="holm", metric="hit")
    analyses = [Semantic(**settings).analyse(d) for d in docs]   # cached vectors: no new cost
    n_sent = sum(len(a.sentences) for a in analyses)
    per_doc = [sum(c.doc_id == d.id for c in sem) / max(1, sum(c.doc_id == d.id for c in fix)) - 1 for d in docs]
    rows = []
    numbers: dict[str, Any] = {
        "n_docs": len(docs), "n_chars": sum(len(d.text) for d in docs), "n_q": len(qs), "n_corpus": len(corpus),
        "n_sem": len(sem), "n_fixed": len(fix), "rel": len(sem) / len(fix) - 1, "rel_median": float(np.median(per_doc)),
        "gap_share": sum(len(a.breakpoints) for a in analyses) / sum(len(a.sentences) - 1 for a in analyses),
        "sent_len": float(np.median([e - s for a in analyses for s, e in a.sentences])),
        "sent_per_chunk": n_sent / len(sem), "sem_mean": float(np.mean([len(c) for c in sem])),
        "fixed_mean": float(np.mean([len(c) for c in fix])),
    }
    for e in engines:
        f_hit, s_hit = res[e, "fixed"].aggregate["hit"]["mean"], res[e, "semantic"].aggregate["hit"]["mean"]
        rows.append((ENGINES[e], f"{f_hit:.1%}", f"{s_hit:.1%}", fmt_diff(tests[e]), verdict(tests[e])))
        numbers.update({f"{e}_fixed": f_hit, f"{e}_sem": s_hit, f"{e}_diff": fmt_diff(tests[e]),
                        f"{e}_verdict": verdict(tests[e])})
    lead = "dense" if "dense" in engines else engines[0]
    ret = paired_bootstrap(res[lead, "semantic"].per_question["retrieved_chars"],
                           res[lead, "fixed"].per_question["retrieved_chars"])
    adj = {k: adjacent_pairs(res[lead, k], c + others) for k, c in (("semantic", sem), ("fixed", fix))}
    adj_diff = paired_bootstrap(adj["semantic"], adj["fixed"])
    numbers.update({
        "ret_sem": res[lead, "semantic"].aggregate["retrieved_chars"]["mean"],
        "ret_fixed": res[lead, "fixed"].aggregate["retrieved_chars"]["mean"],
        "ret_diff": f"{ret['diff']:+.0f} [{ret['lo']:+.0f}, {ret['hi']:+.0f}]",
        "adj_sem": float(adj["semantic"].mean()), "adj_fixed": float(adj["fixed"].mean()),
        "adj_sem_any": float((adj["semantic"] > 0).mean()), "adj_fixed_any": float((adj["fixed"] > 0).mean()),
        "adj_diff": f"{adj_diff['diff']:+.2f} [{adj_diff['lo']:+.2f}, {adj_diff['hi']:+.2f}]",
    })
    return {"rows": rows, "tests": tests, "results": res, "chunks": {"semantic": sem, "fixed": fix},
            "questions": qs, "analyses": analyses, "numbers": numbers}


def e5_speed(sample: Sequence[str]) -> float:
    """Characters per second e5-small embeds on this machine, measured without the cache."""
    probe = get_embedder("e5-small", cache=False)
    t0 = time.perf_counter()
    probe(list(sample))
    return sum(map(len, sample)) / (time.perf_counter() - t0)


def drop_points(tests: dict[str, dict[str, Any]], engines: Sequence[str]) -> str:
    """How large a fall the ``engines``' intervals still hold, in whole points (lower ends below 0).

    >>> drop_points({"bm25": {"lo": -0.090}, "hybrid": {"lo": -0.113}}, ("bm25", "hybrid"))
    '9 到 11 个百分点'
    >>> drop_points({"bm25": {"lo": -0.069}, "hybrid": {"lo": -0.069}}, ("bm25", "hybrid"))
    '7 个百分点'
    """
    if any(tests[e]["lo"] >= 0 for e in engines):
        raise ValueError("an interval does not reach below 0: no fall to describe")
    falls = sorted(-100 * tests[e]["lo"] for e in engines)
    a, b = f"{falls[0]:.0f}", f"{falls[-1]:.0f}"
    return f"{a} 个百分点" if a == b else f"{a} 到 {b} 个百分点"


def c2_note(t: dict[str, Any], policy: bool) -> str:
    """What one C2 comparison (semantic − fixed, corrected) means for practice, in the row's own terms.

    >>> c2_note({"diff": -0.066, "lo": -0.12, "hi": -0.01, "significant": True}, policy=True)
    '语义切分显著更差：有标题的制度不必用语义切分'
    >>> c2_note({"diff": 0.10, "lo": -0.07, "hi": 0.31, "significant": False}, policy=False)
    '点估计对语义切分有利，但区间跨过 0、题太少：要用，先在自己的文档和检索器上配对比较'
    """
    claimed = criterion("C2", "hit").claimed
    if t["significant"]:
        what = "语义切分显著更差" if t["diff"] < 0 else "语义切分显著更好"
    elif t["diff"] == 0:
        what = "两者命中率相同，但区间很宽" + ("" if policy else "、题太少")
    else:
        lean = "有利" if t["diff"] > 0 else "不利"
        what = f"点估计对语义切分{lean}，但区间跨过 0" + ("" if policy else "、题太少")
        if policy and t["hi"] < claimed:
            what += f"，也排除了原文的 {100 * claimed:+.0f} 个百分点"
    if policy:
        return what + "：有标题的制度不必用语义切分"
    return what + "：要用，先在自己的文档和检索器上配对比较"


def c2_claims(policy: dict[str, Any], prose: dict[str, Any]) -> list:
    """C2's claim rows: the chunk count on the policies, and hit@5 per engine on policies and on prose."""
    n = policy["numbers"]
    rows = [claim_row("C2", "语义切分相对固定 512 的块数（制度）", "少 35%", f"{n['n_sem']} 对 {n['n_fixed']}（{n['rel']:+.0%}）",
                      f"相对变化 {n['rel']:+.2f} 对原文的 {criterion('C2', 'chunks').claimed:+.2f}：块数取决于阈值和 min，"
                      "照搬别人的参数得不到别人的块数，先量自己的块长分布", part="chunks", value=n["rel"])]
    for label, r, what in (("制度", policy, "只在制度内检索"), ("纪要、通知等无结构文本", prose, "在整个小北里检索")):
        for e, name in ENGINES.items():
            if e in r["tests"]:
                t = r["tests"][e]
                rows.append(claim_row(
                    "C2", f"hit@5：语义 − 固定 512（{label}，{name}）", "62% → 68%（+6 个百分点）",
                    f"{r['numbers'][e + '_fixed']:.1%} → {r['numbers'][e + '_sem']:.1%}，差 {fmt_diff(t)}",
                    f"{r['numbers']['n_docs']} 份文档、{r['numbers']['n_q']} 题，{what}，同类文档的三种检索一起校正。"
                    + c2_note(t, policy=r is policy), part="hit", result=t))
    return rows
