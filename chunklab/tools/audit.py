"""The pre-launch self-check of article 000, as measurements: ``python -m chunklab audit``.

Article 000 ends with a checklist (strategy by content type, breadcrumbs,
tables whole and transcribed, code cut at symbols, a labeled set with a hit@k
regression, scans OCR'd). A checklist that people tick by hand drifts from
the index it describes; here every item is a number measured on the actual
chunks of a corpus under a configuration, with a threshold:

===================  ===========================================================================
``content_type``     every document is cut by the first strategy of its content type's route
                     (:data:`chunklab.strategies.router.ROUTES`), or routed by ``auto``
``breadcrumb``       at least ``context_share`` (90%) of the chunks carry a title/path context,
                     and the context is indexed (``use_context``)
``table_rows``       no table row is cut: each lies inside one chunk
``table_text``       at least 95% of the table rows are transcribed into a containing chunk's context
``code_symbols``     no Python function or method of at most 800 cl100k tokens is cut (longer
                     ones may be split by logical segment, claim C5; classes may be cut
                     between their methods)
``labeled_set``      at least 50 questions, at least 20 per content type, every evidence located
``evidence_whole``   at least 95% of the questions have every evidence span inside one chunk
                     (the recall ceiling)
``hit_ci``           hit@k measured on at least 50 questions, with a 95% bootstrap interval no
                     wider than 0.10
``parse_failures``   at most 5% of the documents failed to parse: a ``meta["parse_failed"]`` record, an empty
                     text, or a strategy's fallback (a chunk with ``meta["parse_failed"]``); and no
                     scanned PDF page left without text (checked only for documents with
                     :func:`chunklab.preprocess.pipeline` records; otherwise the detail says so)
``offsets``          every chunk is ``document.text[start:end]``, in order, covering all non-space text
``token_limit``      no chunk (with its indexed context) is over the embedding limit (8191 cl100k tokens)
``overlap``          overlap adds at most 20% to the indexed characters
``reproducible``     chunking twice gives the same chunks; the index version is reported
===================  ===========================================================================

The article's item "long documents use parent-child chunks" is deliberately
not a rule here: whether small-to-big pays depends on the corpus and the
context budget (chapter 7 measures it); ``evidence_whole`` and ``hit_ci``
measure what it is meant to achieve.

>>> from chunklab import Document
>>> items = audit([Document("d", "# 手册\\n## 病假\\n病假需提交证明。")], {"strategy": "auto", "use_context": True})
>>> [(i.name, i.passed) for i in items][:3]
[('content_type', True), ('breadcrumb', True), ('table_rows', True)]
"""
from __future__ import annotations

import ast
from collections import Counter
from typing import Any, Mapping, NamedTuple, Sequence

import numpy as np

from ..core import Chunk, Document, check_chunks
from ..core import trim_span as _trim
from ..datasets import Corpus, load_corpus
from ..datasets.questions import load_questions
from ..evaluation import evaluate
from ..length import count_tokens
from ..params import Param
from ..parsing.tables import find_tables, transcribe_row
from ..preprocess.model import NO_TEXT_LAYER
from ..retrieval.bm25 import TOP_K
from ..strategies.router import ROUTES, TYPE_NAMES, detect, features
from .versioning import canonical_config, chunk_corpus, index_version

__all__ = ["AuditItem", "audit", "format_report", "THRESHOLDS", "EMBEDDING_TOKEN_LIMIT"]

#: text-embedding-3-small's input limit in tokens (claim C13, vendor documentation).
EMBEDDING_TOKEN_LIMIT = 8191
_TOKEN_LIMIT = Param("int", EMBEDDING_TOKEN_LIMIT, "embedding model limit in cl100k tokens", low=1)

#: The default thresholds of :func:`audit` (each can be passed as a keyword argument).
THRESHOLDS: dict[str, float] = {
    "context_share": 0.90,
    "table_text_share": 0.95,
    "min_questions": 50,
    "min_per_type": 20,
    "evidence_whole_share": 0.95,
    "max_ci_width": 0.10,
    "max_parse_failures": 0.05,
    "max_overlap": 0.20,
    "code_split_tokens": 800,
}


class AuditItem(NamedTuple):
    """One check: a stable ``name``, whether it ``passed``, the measured ``detail`` and a Chinese ``title``."""

    name: str
    passed: bool
    detail: str
    title: str = ""




def _contained(chunks: Sequence[Chunk], s: int, e: int) -> list[Chunk]:
    """The chunks (of one document, sorted by start) that hold ``[s, e)`` whole."""
    return [c for c in chunks if c.start <= s and e <= c.end]


def _pct(x: float) -> str:
    return f"{x:.1%}"


# -- the checks ---------------------------------------------------------------------------------

def _check_content_type(docs, by_doc, name) -> AuditItem:

    types: Counter = Counter()
    wrong: list[str] = []
    for d in docs:
        kind, _ = detect(features(d))
        types[kind] += 1
        chunks = by_doc[d.id]
        if chunks and "route" in chunks[0].meta:
            continue          # routed by "auto": its decision is the route
        if ROUTES[kind][0] != name:
            wrong.append(f"{d.id}（{TYPE_NAMES[kind]}，应为 {ROUTES[kind][0]}）")
    mix = "、".join(f"{TYPE_NAMES[k]} {v}" for k, v in types.most_common())
    if wrong:
        return AuditItem("content_type", False, f"{len(docs)} 篇文档分属 {len(types)} 类（{mix}）；"
                         f"{len(wrong)} 篇没有用其类型的首选切法，例如 {'；'.join(wrong[:3])}",
                         "切法按内容类型区分")
    return AuditItem("content_type", True, f"{len(docs)} 篇文档分属 {len(types)} 类（{mix}），"
                     "每篇都用其类型的首选切法", "切法按内容类型区分")


def _check_breadcrumb(chunks, use_context, share_min) -> AuditItem:
    with_ctx = [c for c in chunks if c.context.strip()]
    share = len(with_ctx) / len(chunks) if chunks else 0.0
    example = f"，例如「{with_ctx[0].context.splitlines()[0][:40]}」" if with_ctx else ""
    ok = share >= share_min and use_context
    why = "" if use_context else "；但 context 没有进索引（use_context=False），检索用不上它"
    return AuditItem("breadcrumb", ok, f"{_pct(share)} 的块带标题/路径前缀（阈值 ≥ {_pct(share_min)}）{example}{why}",
                     "每块带标题路径")


def _tables(docs):

    out = {}
    for d in docs:
        ts = [t for t in find_tables(d.text) if not t.error]
        if ts:
            out[d.id] = ts
    return out


def _check_table_rows(docs, by_doc, tables) -> AuditItem:
    total, cut = 0, []
    for d in docs:
        for t in tables.get(d.id, ()):
            for i, r in enumerate(t.rows, 1):
                s, e = _trim(d.text, r.start, r.end)
                if s >= e:
                    continue
                total += 1
                if not _contained(by_doc[d.id], s, e):
                    cut.append(f"{d.id} 表格第 {i} 行「{d.text[s:e][:24]}」")
    if not total:
        return AuditItem("table_rows", True, "语料中没有表格（不适用）", "表格不被切到行中间")
    if cut:
        return AuditItem("table_rows", False, f"{len(tables)} 篇文档共 {total} 行表格，{len(cut)} 行被切断"
                         f"（{_pct(len(cut) / total)}），例如 {cut[0]}", "表格不被切到行中间")
    return AuditItem("table_rows", True, f"{len(tables)} 篇文档共 {total} 行表格，没有一行被切断", "表格不被切到行中间")


def _check_table_text(docs, by_doc, tables, share_min) -> AuditItem:

    total, done = 0, 0
    for d in docs:
        for t in tables.get(d.id, ()):
            for r in t.rows:
                sentence = transcribe_row(t.columns, r.cells)
                if not sentence:
                    continue
                total += 1
                s, e = _trim(d.text, r.start, r.end)
                if any(sentence in c.context for c in _contained(by_doc[d.id], s, e)):
                    done += 1
    if not total:
        return AuditItem("table_text", True, "语料中没有表格（不适用）", "表格有转写文本")
    share = done / total
    return AuditItem("table_text", share >= share_min,
                     f"{total} 行表格中 {done} 行在所在块的 context 里有转写句（{_pct(share)}，阈值 ≥ {_pct(share_min)}）",
                     "表格有转写文本")


def _python_symbols(text: str) -> list[tuple[str, int, int]] | None:
    """``(name, start, end)`` of every function and method (decorators included); None if not Python.

    Classes are not listed: a class is a container, and cutting it between its methods is right.
    """
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno:
            first = min([node.lineno] + [dec.lineno for dec in node.decorator_list])
            s = starts[first - 1]
            e = starts[min(node.end_lineno, len(starts) - 1)]
            out.append((node.name, *_trim(text, s, e)))
    return out


def _check_code(docs, by_doc, split_tokens) -> AuditItem:

    n_files, total, cut = 0, 0, []
    for d in docs:
        if detect(features(d))[0] != "code":
            continue
        symbols = _python_symbols(d.text)
        if symbols is None:
            continue
        n_files += 1
        chunks = by_doc[d.id]
        for name, s, e in symbols:
            if count_tokens(d.text[s:e]) > split_tokens:
                continue      # a long one may be split by logical segment (claim C5)
            total += 1
            if not _contained(chunks, s, e):
                cut.append(f"{d.id}.{name}")
    if not n_files:
        return AuditItem("code_symbols", True, "语料中没有 Python 源文件（不适用）", "代码按符号切，函数不截断")
    if cut:
        return AuditItem("code_symbols", False, f"{n_files} 个 Python 文件中不超过 {split_tokens:g} token 的函数（含方法）{total} 个，"
                         f"{len(cut)} 个被切断，例如 {'、'.join(cut[:3])}", "代码按符号切，函数不截断")
    return AuditItem("code_symbols", True, f"{n_files} 个 Python 文件中不超过 {split_tokens:g} token 的函数（含方法）{total} 个，全部完整",
                     "代码按符号切，函数不截断")


def _check_labeled_set(docs, questions, min_total, min_per_type) -> AuditItem:
    title = "有标注集（问题 → 证据）"
    if not questions:
        return AuditItem("labeled_set", False, "没有标注集：无法度量切分改动的效果（用 --questions 指定）", title)
    by_id = {d.id: d for d in docs}
    bad = 0
    for q in questions:
        for sp, ev in zip(q.spans, q.evidence):
            d = by_id.get(sp.doc_id)
            if d is None or d.text[sp.start:sp.end] != ev:
                bad += 1
    types = Counter(getattr(q, "type", None) or "-" for q in questions)
    low = {k: v for k, v in types.items() if v < min_per_type}
    ok = len(questions) >= min_total and not low and not bad
    counts = "、".join(f"{k} {v}" for k, v in types.most_common())
    detail = f"{len(questions)} 题（阈值 ≥ {min_total:g}），按类型：{counts}（每类阈值 ≥ {min_per_type:g}）"
    if low:
        detail += f"；不足的类型：{'、'.join(low)}"
    detail += f"；{bad} 条证据在语料中对不上" if bad else "；证据全部能在原文定位"
    return AuditItem("labeled_set", ok, detail, title)


def _check_evidence_whole(docs, by_doc, questions, share_min) -> AuditItem:
    title = "证据不被切断（证据完整上限）"
    if not questions:
        return AuditItem("evidence_whole", False, "没有标注集，无法度量", title)
    whole = 0
    for q in questions:
        if all(_contained(by_doc.get(sp.doc_id, ()), sp.start, sp.end) for sp in q.spans):
            whole += 1
    share = whole / len(questions)
    return AuditItem("evidence_whole", share >= share_min,
                     f"{_pct(share)} 的问题，其每段证据都完整落在某一块里（阈值 ≥ {_pct(share_min)}）；"
                     "这是任何检索器在这份切分上 hit_strict 的上限", title)


def _check_hit(docs, chunks, questions, k, use_context, width_max, min_total) -> tuple[AuditItem, Any]:
    title = f"hit@{k} 已测量且置信区间足够窄"
    if not questions:
        return AuditItem("hit_ci", False, "没有标注集，无法度量 hit@k", title), None

    r = evaluate(docs, chunks, questions, k=k, use_context=use_context)
    a = r.aggregate["hit"]
    width = a["hi"] - a["lo"]
    # NOTE: a percentile bootstrap of a handful of all-hit questions has width 0; the interval
    # only means something with enough questions, so the count is part of the check.
    few = len(questions) < min_total
    notes = ""
    if r.k_note:  # k above the number of chunks: measured with every chunk, said once
        notes += f"；k={k} 多于 {r.k_used} 块，按 {r.k_used} 计"
    if r.warnings:
        notes += "；" + "；".join(r.warnings)
    return AuditItem("hit_ci", width <= width_max and not few,
                     f"hit@{k} = {a['mean']:.3f}，95% CI [{a['lo']:.3f}, {a['hi']:.3f}]（宽 {width:.3f}，阈值 ≤ {width_max:g}；"
                     f"{len(questions)} 题{f'，少于 {min_total:g} 题，区间不可信' if few else ''}；BM25 字符二元组{notes}）", title), r


def _check_parse(docs, chunks, by_doc, rate_max) -> AuditItem:
    """Documents that failed to parse, from their records; scanned pages, from the OCR records.

    A document failed when its ``meta["parse_failed"]`` is set, when its text is empty, or when a
    strategy could not parse it and fell back (a chunk with ``meta["parse_failed"]``, e.g. Python
    with a syntax error cut by ``recursive``). OCR is judged only where it has a record: documents
    extracted by :func:`chunklab.preprocess.pipeline` list the pages read by OCR and the scanned
    pages left without text (``meta["skipped_pages"]``); a scanned page without text fails the
    item. Without such records the detail says that OCR was not checked.
    """

    title = "解析失败已统计（含回退）；扫描件已 OCR（有记录时）"
    record = [d.id for d in docs if d.meta.get("parse_failed") or not d.text.strip()]
    fallback = [d.id for d in docs if d.id not in record and any(c.meta.get("parse_failed") for c in by_doc[d.id])]
    failed = record + fallback
    rate = len(failed) / len(docs) if docs else 0.0
    chunk_rate = float(np.mean([bool(c.meta.get("parse_failed")) for c in chunks])) if chunks else 0.0
    detail = (f"文档解析失败率 {_pct(rate)}（{len(failed)}/{len(docs)}，阈值 ≤ {_pct(rate_max)}；"
              f"其中 {len(record)} 篇有失败记录或为空，{len(fallback)} 篇解析失败后走了回退切分），"
              f"块级解析失败率 {_pct(chunk_rate)}")
    if failed:
        detail += f"；例如 {failed[0]}"
    extracted = [d for d in docs if any(st.get("step") == "extract" for st in d.meta.get("preprocess", ()) or ())]
    scanned_left = []
    ocr_pages = 0
    for d in extracted:
        for st in d.meta.get("preprocess", ()):
            if st.get("step") == "ocr":
                ocr_pages += len(st.get("pages", ()))
        for sp in d.meta.get("skipped_pages", ()) or ():
            if isinstance(sp, dict) and str(sp.get("reason", "")).startswith(NO_TEXT_LAYER):
                scanned_left.append(f"{d.id} 第 {sp.get('page')} 页")
    if not extracted:
        detail += "；OCR 未检查：没有文档带 PDF 抽取记录（meta[\"preprocess\"]），无从得知哪些是扫描件"
    elif scanned_left:
        detail += (f"；{len(extracted)} 篇从 PDF 抽取，OCR 读出 {ocr_pages} 页，"
                   f"{len(scanned_left)} 页扫描件没有文字（OCR 未运行或失败），例如 {scanned_left[0]}")
    else:
        detail += f"；{len(extracted)} 篇从 PDF 抽取，OCR 读出 {ocr_pages} 页，没有扫描页缺文字"
    return AuditItem("parse_failures", rate <= rate_max and not scanned_left, detail, title)


def _check_offsets(docs, by_doc) -> AuditItem:
    problems = []
    for d in docs:
        for p in check_chunks(d, list(by_doc[d.id])):
            problems.append(f"{d.id}: {p}")
    n = sum(len(v) for v in by_doc.values())
    if problems:
        return AuditItem("offsets", False, f"{len(problems)} 处问题，例如 {problems[0]}", "每块可回溯到原文")
    return AuditItem("offsets", True, f"{n} 块的 [start, end) 都与原文一致、按序排列，覆盖全部非空白字符",
                     "每块可回溯到原文")


def _check_tokens(chunks, use_context, limit) -> AuditItem:

    worst, worst_chunk, over = 0, None, 0
    for c in chunks:
        n = count_tokens(c.embed_text if use_context else c.text)
        over += n > limit
        if n > worst:
            worst, worst_chunk = n, c
    where = f"（{worst_chunk.doc_id} 第 {worst_chunk.index} 块）" if worst_chunk is not None else ""
    what = "块文本加 context" if use_context else "块文本"
    return AuditItem("token_limit", over == 0,
                     f"{what}最长 {worst} 个 cl100k token{where}，上限 {limit}；超限 {over} 块",
                     "不超过嵌入模型的 token 上限")


def _check_overlap(docs, chunks, max_overlap) -> AuditItem:
    doc_chars = sum(len(d.text) for d in docs)
    total = sum(len(c) for c in chunks)
    extra = total / doc_chars - 1 if doc_chars else 0.0
    shown = max(extra, 0.0)
    return AuditItem("overlap", extra <= max_overlap,
                     f"块总长是原文的 {total / doc_chars if doc_chars else 0:.3f} 倍：重叠让索引多出 {_pct(shown)} 的字符"
                     f"（阈值 ≤ {_pct(max_overlap)}）", "重叠不超过 20%")


def _check_reproducible(config, docs, by_doc) -> AuditItem:

    again = chunk_corpus(config, docs)
    same = all([tuple(c) for c in again[d.id]] == [tuple(c) for c in by_doc[d.id]] for d in docs)
    version = index_version(config, docs)
    return AuditItem("reproducible", same,
                     f"两次切分结果{'完全一致' if same else '不一致'}；索引版本 {version}（配置 + chunklab 版本 + 语料的内容哈希）",
                     "切分可复现，绑定索引版本")


# -- the entry points ---------------------------------------------------------------------------

def _load(corpus, questions):

    if isinstance(corpus, str):
        corpus = load_corpus(corpus)
    docs = list(corpus.documents) if isinstance(corpus, Corpus) else list(corpus)
    if not docs:
        raise ValueError("the corpus has no documents")
    for d in docs:
        if not isinstance(d, Document):
            raise TypeError(f"corpus must hold chunklab.Document objects, got {type(d).__name__}")
    if isinstance(questions, str):

        questions = load_questions(questions, corpus if isinstance(corpus, Corpus) else Corpus("audit", docs))
    return docs, (list(questions) if questions is not None else None)


def audit(corpus: Any, config: Mapping[str, Any] | str, questions: Any = None, *, k: int = 5,
          token_limit: int = EMBEDDING_TOKEN_LIMIT, **thresholds: float) -> list[AuditItem]:
    """Run every check on ``corpus`` (a Corpus, a list of documents, or a corpus name) chunked by ``config``.

    ``config`` is a configuration as in :mod:`chunklab.tools.versioning` (or a strategy
    name); ``questions`` a list of located questions, a named set or a JSONL path
    (None: the three checks that need questions fail). ``thresholds`` override
    :data:`THRESHOLDS` by name. Returns the items in the order of the module
    docstring; the hit@k evaluation is attached to the ``hit_ci`` item's
    detail only (run :func:`chunklab.evaluation.evaluate` for the full result).
    ``k`` (an int >= 1) above the number of chunks counts as the number of chunks, and the
    ``hit_ci`` detail says so; ``token_limit`` is an int >= 1.
    """
    k = TOP_K.validate("k", k)
    token_limit = _TOKEN_LIMIT.validate("token_limit", token_limit)

    unknown = [t for t in thresholds if t not in THRESHOLDS]
    if unknown:
        raise ValueError(f"unknown threshold {unknown[0]!r} (known: {', '.join(THRESHOLDS)})")
    th = {**THRESHOLDS, **thresholds}
    canon = canonical_config(config)
    docs, qs = _load(corpus, questions)
    by_doc = chunk_corpus(canon, docs)
    chunks = [c for d in docs for c in by_doc[d.id]]
    if not chunks:
        raise ValueError("the configuration produced no chunks")
    use_context = canon["use_context"]
    tables = _tables(docs)
    items = [
        _check_content_type(docs, by_doc, canon["strategy"]),
        _check_breadcrumb(chunks, use_context, th["context_share"]),
        _check_table_rows(docs, by_doc, tables),
        _check_table_text(docs, by_doc, tables, th["table_text_share"]),
        _check_code(docs, by_doc, th["code_split_tokens"]),
        _check_labeled_set(docs, qs, th["min_questions"], th["min_per_type"]),
        _check_evidence_whole(docs, by_doc, qs, th["evidence_whole_share"]),
        _check_hit(docs, chunks, qs, k, use_context, th["max_ci_width"], th["min_questions"])[0],
        _check_parse(docs, chunks, by_doc, th["max_parse_failures"]),
        _check_offsets(docs, by_doc),
        _check_tokens(chunks, use_context, token_limit),
        _check_overlap(docs, chunks, th["max_overlap"]),
        _check_reproducible(canon, docs, by_doc),
    ]
    return items


def format_report(items: Sequence[AuditItem]) -> str:
    """``PASS``/``FAIL`` lines, one per item, and a count."""
    lines = []
    for it in items:
        lines.append(f"{'PASS' if it.passed else 'FAIL'}  {it.title or it.name} [{it.name}]\n      {it.detail}")
    passed = sum(it.passed for it in items)
    lines.append(f"{passed}/{len(items)} passed" + ("" if passed == len(items) else f", {len(items) - passed} failed"))
    return "\n".join(lines)
