"""Chapter 2, the structure family: headings, clauses, HTML, the router, and what choosing by type is worth (C30)."""
from __future__ import annotations

import re
from collections import Counter
from typing import Any, Sequence

import numpy as np

from ... import strategies  # noqa: F401  (importing it registers every strategy)
from ...base import chunk, get_strategy
from ...core import Document
from ...evaluation import evaluate, paired_bootstrap
from ...evaluation.stats import paired_many
from ...retrieval import CorpusIndex
from ...strategies.container import find_tables
from ...strategies.router import ROUTES, TYPE_NAMES, route
from ..claims import claim_row, fmt_diff, verdict

__all__ = ["markdown_min", "clause_levels", "html_demo", "routing_rows", "inner_tables", "C30_RULES", "by_type"]


def markdown_min(md_docs: Sequence[Document], mins: Sequence[int] = (0, 150)) -> dict[str, Any]:
    """Markdown chunks of ``md_docs`` with each ``min``: count, median length, share under 100 characters."""
    rows, numbers = [], {}
    for mn in mins:
        lens = np.array([len(c) for c in get_strategy("markdown", min=mn).split_documents(md_docs)])
        rows.append((mn, len(lens), f"{np.median(lens):.0f}", f"{(lens < 100).mean():.1%}"))
        numbers[f"md_tiny_{mn}"] = float((lens < 100).mean())
        numbers[f"md_median_{mn}"] = float(np.median(lens))
        numbers[f"md_n_{mn}"] = len(lens)
    return {"rows": rows, "numbers": numbers}


def clause_levels(law_docs: Sequence[Document], law: dict[str, Any], max_len: int = 1200) -> dict[str, Any]:
    """Which level produced clause 512's chunks, and which articles it still cuts (``law``: law_structure).

    The cut articles are of two kinds: longer than ``max_len`` (handed to the fallback chain), and
    the unnumbered items of decisions (no "第X条"); ``numbered_short_cut`` counts the numbered
    short ones (the prose says there are none). ``levels_text``: the chunk counts per level in
    Chinese (``条款本身 13,279 块，递归回退 255 块``).
    """
    levels = Counter(c.meta.get("level") for c in law["chunks"]["clause 512"])
    art_len = np.array([len(d.text[a["start"]:a["end"]].strip()) for d, a in law["articles"]])
    numbers = [a["number"] for _, a in law["articles"]]
    cut = np.asarray(law["cut_flags"]["clause 512"], bool)
    diff = paired_bootstrap(law["cut_flags"]["fixed 512"], law["cut_flags"]["clause 512"], clusters=law["article_law"])
    names = {"clause": "条款本身", "recursive": "递归回退", "fixed": "固定窗口回退"}
    return {"levels": {str(k): v for k, v in levels.items()},
            "levels_text": "，".join(f"{names.get(str(k), str(k))} {v:,} 块" for k, v in levels.most_common()),
            "numbers": {
        "long_articles": sum(1 for d in law_docs for a in d.meta["articles"] if a["end"] - a["start"] > max_len),
        "c21_clause_diff": fmt_diff(diff),
        "clause_cut_long": int((cut & (art_len > max_len)).sum()),
        "clause_cut_other": int((cut & (art_len <= max_len)).sum()),
        "numbered_short_cut": sum(numbers[i].startswith("第") for i in np.flatnonzero(cut & (art_len <= max_len))),
    }}


_TAG = re.compile(r"<[^>]*>")


def html_demo(page: str) -> dict[str, Any]:
    """An HTML page chunked by its headings, and the same page with headings styled as bold paragraphs.

    Returns ``doc`` and ``chunks`` (the page), and ``numbers``: the share of chunk characters that are
    tags, and how many chunks of the styled page still carry a heading path.
    """
    wiki = Document("handbook-ch3.html", page, title="员工手册（Wiki 页面）")
    chunks = chunk(wiki, "html")
    markup = sum(len(m.group()) for c in chunks for m in _TAG.finditer(c.text)) / sum(len(c) for c in chunks)
    styled = Document("styled.html", re.sub(r"<h(\d)>(.*?)</h\1>", r'<p class="title-\1"><strong>\2</strong></p>', page))
    styled_chunks = chunk(styled, "html")
    return {"doc": wiki, "chunks": chunks, "numbers": {
        "html_chunks": len(chunks), "html_path_example": " › ".join(chunks[2].meta["path"]), "html_markup": markup,
        "styled_chunks": len(styled_chunks),
        "styled_with_path": sum(bool(c.meta.get("path")) for c in styled_chunks)}}


def routing_rows(docs: Sequence[Document]) -> list[tuple[str, str, int, str]]:
    """(document type in Chinese, strategy, number of documents, an example) for the router's choices on ``docs``."""
    routed, examples = Counter(), {}
    for d in docs:
        r = route(d)
        routed[(r.doc_type, r.strategy.name)] += 1
        examples.setdefault(r.doc_type, d.id)
    return [(TYPE_NAMES.get(t, t), s, n, examples[t]) for (t, s), n in routed.most_common()]


def inner_tables(docs: Sequence[Document]) -> dict[str, Any]:
    """Markdown tables inside documents the router sends to ``markdown``: how many, the longest."""
    md = [d for d in docs if route(d).strategy.name == "markdown"]
    tables = [t for d in md for t in find_tables(d.text)]
    return {"md_routed": len(md), "inner_tables": len(tables), "inner_longest": max(t.end - t.start for t in tables)}


#: (router's document type, C30's words, the strategy C30 recommends for it)
C30_RULES = [
    ("dialogue", "对话 → 按行", ("line", {"target": 500})),
    ("markdown", "技术文档 → 章节 + 递归", ("markdown", {"target": 500})),
    ("table", "表格 → 表格感知", ("table", {"target": 500})),
    ("ocr", "OCR → 固定", ("fixed", {"size": 500})),
]
GENERIC = ("recursive", {"target": 500})


def by_type(docs: Sequence[Document], questions: Sequence, n_boot: int = 200) -> dict[str, Any]:
    """C30 on a corpus: per document type, its recommended strategy vs recursive 500 (BM25 hit@5).

    Each rule changes only the documents of its type (the others use recursive 500 on both sides)
    and is judged on the questions whose evidence lies wholly in that type (for "table": wholly in
    Markdown tables). The four comparisons are corrected together (Holm). Returns ``rows``,
    ``tests`` ({words: paired result}), ``numbers`` and ``claims`` (four C30 rows and the untested one).
    """
    index = CorpusIndex(docs)
    kind_of = {d.id: route(d).doc_type for d in docs}
    spans = {d.id: [(t.start, t.end) for t in find_tables(d.text)] for d in docs}

    def of_kind(doc, kind):
        return bool(spans[doc.id]) if kind == "table" else kind_of[doc.id] == kind

    def evidence_in(q, kind):
        if kind == "table":
            return all(any(a <= s.start and s.end <= b for a, b in spans[s.doc_id]) for s in q.spans)
        return all(kind_of[s.doc_id] == kind for s in q.spans)

    def run(kind, rule):
        chunks = []
        for d in docs:
            name, params = rule if of_kind(d, kind) else GENERIC
            chunks += get_strategy(name, **params).split(d)
        return evaluate(docs, chunks, questions, k=5, index=index, use_context=True, n_boot=n_boot)

    base = np.asarray(run("none", GENERIC).per_question["hit"])
    pairs, info = {}, {}
    for kind, words, rule in C30_RULES:
        sel = np.array([evidence_in(q, kind) for q in questions])
        hit = np.asarray(run(kind, rule).per_question["hit"])
        pairs[words] = (hit[sel], base[sel])
        info[words] = (kind, rule, sum(of_kind(d, kind) for d in docs), int(sel.sum()))
    tests = paired_many(pairs, method="holm", metric="hit")
    rows = []
    for words, (kind, (name, _), n_docs, n_q) in info.items():
        a, b = pairs[words]
        rows.append((words, "含 Markdown 表格" if kind == "table" else TYPE_NAMES[kind], n_docs, n_q, f"{name} {a.mean():.1%}",
                     f"{b.mean():.1%}", fmt_diff(tests[words]), verdict(tests[words])))
    notes = {"对话 → 按行": "对话按行切不比递归强；路由器对对话用按轮次开窗的 dialogue 策略",
             "技术文档 → 章节 + 递归": "最接近分得出的一组：有标题的文档按标题切是合理的默认",
             "表格 → 表格感知": "表格策略的好处在表头留在块里（见容器一节），这批题上命中率分不出",
             "OCR → 固定": f"只有 {info['OCR → 固定'][3]} 题，说明不了什么；OCR 文本的修复在切分之前（预处理）"}
    claims = [claim_row("C30", f"按文档类型选策略：{w}（BM25 hit@5，推荐 − 递归 500）", "推荐的切法更好",
                        f"{info[w][3]} 题：{fmt_diff(tests[w])}", notes[w], part="by type", result=tests[w])
              for w in info]
    claims.append(claim_row("C30", "论文 → 段落；小说 → 滑窗", "推荐的切法更好", "小北里没有论文和小说",
                            "未检验：有这类文档时自己量", part="untested"))
    md = "技术文档 → 章节 + 递归"
    return {"rows": rows, "tests": tests, "claims": claims, "numbers": {
        "c30_n": len(tests), "c30_pos": sum(r["diff"] > 0 for r in tests.values()),
        "c30_sig": sum(r["significant"] for r in tests.values()),
        "c30_sig_marginal": sum(r["significant_marginal"] for r in tests.values()),
        "c30_md_diff": fmt_diff(tests[md]), "c30_ocr_diff": fmt_diff(tests["OCR → 固定"]),
        "c30_dialogue_diff": fmt_diff(tests["对话 → 按行"]), "c30_ocr_q": info["OCR → 固定"][3],
        "c30_md_closest": min(tests, key=lambda w: tests[w]["p_adj"]) == md and tests[md]["diff"] > 0,
        "router_dialogue": ROUTES["dialogue"][0]}}
