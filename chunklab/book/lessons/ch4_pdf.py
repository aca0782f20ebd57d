"""Chapter 4, §4.4–4.6 (PDFs and the hard cases): what the chapter measures on pages.

* :func:`ocr_check` — the scanned page with and without OCR: character error rate, sentences kept,
  errors by kind.
* :func:`exam_reading_order` / :func:`exam_figure` — the external two-column exam page.
* :func:`formula_cuts` — cuts falling inside a formula, before and after ``keep_whole``.
* :func:`figure_context` / :func:`caption_demo` — a figure's caption put into its chunk's context.
* :func:`merged_cells`, :func:`split_tables`, :func:`footnote_demo` — the other hard cases.
"""
from __future__ import annotations

import difflib
import re
import time
import unicodedata
from collections import Counter
from typing import Any

import matplotlib.pyplot as plt
from matplotlib.patches import Rectangle
import pdfplumber

from ...base import get_strategy
from ...core import Chunk, Document
from ...preprocess import attach_figures, cer, find_formulas, keep_whole, move_footnotes, ocr_available, pipeline
from ...preprocess.atoms import cuts_inside
from ...preprocess.model import Page, Segment
from ...preprocess.ocr import normalize_for_cer
from ...preprocess.pdf import build_document
from ...retrieval import BM25Fast
from ..reading_order import cells_matched, evidence_presence, markdown_grid, order_score, squash

__all__ = ["sentences", "ocr_check", "exam_reading_order", "exam_figure", "formula_cuts", "figure_context",
           "caption_demo", "merged_cells", "split_tables", "footnote_demo", "describe_steps", "reason_zh", "regions_zh"]


def sentences(text: str) -> list[str]:
    """Sentences of a source text (split at 。；;), NFKC-folded, of at least 8 characters.

    >>> sentences("第一条 本办法适用于全体员工。短句。第二条 出差须事先审批；")
    ['第一条 本办法适用于全体员工', '第二条 出差须事先审批']
    """
    folded = unicodedata.normalize("NFKC", text).replace("\n", "")
    return [s for s in (x.strip() for x in folded.replace("；", "。").replace(";", "。").split("。")) if len(s) >= 8]


def _error_kinds(truth: str, got: str) -> Counter:
    a, b = normalize_for_cer(truth, fold_width=True), normalize_for_cer(got, fold_width=True)
    wrong: Counter = Counter()
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op != "equal":
            for ch in a[i1:i2] or b[j1:j2]:
                wrong["标点" if unicodedata.category(ch).startswith("P") else
                      "汉字" if "\u4e00" <= ch <= "\u9fff" else "数字、字母及其他"] += 1
    return wrong


def ocr_check(scan) -> dict[str, Any]:
    """The scanned page (a :mod:`chunklab.book.pdfgen` PDF with ``page_texts``) without and with OCR.

    ``skipped``: the text without OCR (empty) and its ``skipped_pages``; with OCR (when Tesseract's
    ``chi_sim`` is installed, else ``ocr`` is None): CER, CER with full/half width folded, seconds,
    lines, sentences of the source kept verbatim, and the wrong characters by kind.
    """
    skipped = pipeline(scan.path, ocr=False)
    out: dict[str, Any] = {"skipped_chars": len(skipped.text), "skipped_pages": skipped.meta["skipped_pages"],
                           "ocr": None}
    if not ocr_available("chi_sim"):
        return out
    truth = scan.page_texts[0]
    source = sentences(truth)
    t0 = time.perf_counter()
    scanned = pipeline(scan.path, ocr=True)
    seconds = time.perf_counter() - t0
    folded = normalize_for_cer(scanned.text, fold_width=True)
    out["ocr"] = {"text": scanned.text, "seconds": seconds, "lines": scanned.meta["ocr"][1]["lines"],
                  "cer": cer(truth, scanned.text), "cer_fold": cer(truth, scanned.text, fold_width=True),
                  "sentences": len(source), "kept": sum(squash(s) in folded for s in source),
                  "wrong": _error_kinds(truth, scanned.text)}
    return out


def exam_reading_order(path, key: dict[str, Any]) -> dict[str, Any]:
    """The exam page read line by line, by columns, and by columns with OCR of unmapped glyphs (when
    Tesseract is there); each scored against the answer key's labels (:func:`order_score`)."""
    options = [("逐行（naive）", {"order": "naive", "ocr": False}), ("按栏", {"order": "columns", "ocr": False})]
    if ocr_available("chi_sim"):
        options.append(("按栏 + 无映射字形做 OCR", {"order": "columns", "ocr": True}))
    t0 = time.perf_counter()
    runs = {}
    for label, opts in options:
        d = pipeline(path, pages=[key["page"]], **opts)
        runs[label] = (d, order_score(d.text, key["reading_order"]))
    cols = runs["按栏"][0]
    return {"runs": runs, "seconds": time.perf_counter() - t0,
            "columns": cols.meta["columns"][key["page"]],
            "unmapped": cols.meta["preprocess"][0].get("unmapped_glyphs", {}).get(key["page"], 0)}


def exam_figure(path, page: int, columns, *, resolution: int = 150, keep=(0.0, 0.47),
                zoom=(60.0, 580.0, 75.0, 345.0)):
    """The exam page rendered at ``resolution`` dpi, in two panels: above, the band ``keep``
    (fractions of the page height: the title, both columns' first questions and the gutter) with the
    detected columns shaded; below, the region ``zoom`` (x0, x1, top, bottom in points: the top of
    the left column, where the bold headings without a Unicode mapping are) enlarged, so its glyphs
    stay legible at the site's width."""
    with pdfplumber.open(path) as pdf:
        pg = pdf.pages[page - 1]
        w_pt, h_pt = float(pg.width), float(pg.height)
        img = pg.to_image(resolution=resolution).original.convert("RGB")
    sx, sy = img.width / w_pt, img.height / h_pt
    top, bottom = (int(f * img.height) for f in keep)
    band = img.crop((0, top, img.width, bottom))
    x0, x1, z0, z1 = zoom
    detail = img.crop((int(x0 * sx), int(z0 * sy), int(x1 * sx), int(z1 * sy)))
    h_band, h_detail = 10 * band.height / band.width, 10 * detail.height / detail.width
    fig, (ax, az) = plt.subplots(2, 1, figsize=(10, h_band + h_detail + 0.9),
                                 gridspec_kw={"height_ratios": [h_band, h_detail]})
    ax.imshow(band, extent=(0, w_pt, keep[1] * h_pt, keep[0] * h_pt))
    for a, b in columns:
        ax.axvspan(a, b, color="#60a5fa", alpha=0.12)
    ax.add_patch(Rectangle((x0, z0), x1 - x0, z1 - z0, fill=False, edgecolor="#dc2626", lw=1.2))
    ax.set_title(f"exam-zh 示例试卷第 {page} 页上部（蓝底：chunklab 检测出的两栏；红框：下图放大的区域）", fontsize=10)
    az.imshow(detail, extent=(x0, x1, z1, z0))
    az.set_title("放大：左栏上部。加粗的标题（数学(理科)、注意事项、一、选择题）在文本层里没有 Unicode 映射", fontsize=10)
    for a in (ax, az):
        a.axis("off")
    fig.tight_layout()
    return fig


#: The cuttings whose cuts into formulas are counted, smallest first.
FORMULA_CUTTINGS = [("fixed 64", "fixed", {"size": 64}), ("fixed 128", "fixed", {"size": 128}),
                    ("fixed 256", "fixed", {"size": 256}), ("fixed 512", "fixed", {"size": 512}),
                    ("recursive 200", "recursive", {"target": 200}), ("recursive 500", "recursive", {"target": 500})]


def formula_cuts(docs: list[Document]) -> dict[str, Any]:
    """Formulas found in ``docs`` and, per cutting of :data:`FORMULA_CUTTINGS`, the cuts inside one
    before and after :func:`keep_whole`; ``example`` is the first cut of fixed 128 (doc, offset)."""
    formulas = {d.id: find_formulas(d.text) for d in docs}
    rows = []
    for label, name, params in FORMULA_CUTTINGS:
        s = get_strategy(name, **params)
        before = after = 0
        for d in docs:
            chunks = s.split(d)
            before += len(cuts_inside(chunks, formulas[d.id]))
            after += len(cuts_inside(keep_whole(d, chunks), formulas[d.id]))
        rows.append((label, before, after))
    fixed128 = get_strategy("fixed", size=128)
    example = next(((d, p) for d in docs for p, _, _ in cuts_inside(fixed128.split(d), formulas[d.id])), None)
    samples = [(d.id, d.text[a:b]) for d in docs for a, b, _ in formulas[d.id][:1]]
    return {"n": sum(len(v) for v in formulas.values()), "docs": sum(bool(v) for v in formulas.values()),
            "rows": rows, "samples": samples, "example": example,
            "cuts": sum(r[1] for r in rows), "after": sum(r[2] for r in rows)}


def figure_context(chunks) -> list[Chunk]:
    """``chunks`` whose ``meta["figures"]`` (from :func:`~chunklab.preprocess.attach_figures`) have a
    caption or a description: that text is appended to the chunk's ``context`` (one line a figure,
    ``图：caption；描述：description``). ``text`` and the offsets never change, so the chunk still
    cites the page exactly; an index that reads ``context`` (``use_context=True``) now finds it by
    the caption's words.

    >>> c = Chunk("d", 0, 0, 2, "甲乙", meta={"figures": [{"caption": "图 1 流程", "description": None}]})
    >>> figure_context([c])[0].context, figure_context([c])[0].text
    ('图：图 1 流程', '甲乙')
    """
    out = []
    for c in chunks:
        lines = []
        for f in c.meta.get("figures") or []:
            parts = [p for p in (f.get("caption"), f"描述：{f['description']}" if f.get("description") else None) if p]
            if parts:
                lines.append("图：" + "；".join(parts))
        out.append(c._replace(context="\n".join([c.context] * bool(c.context) + lines)) if lines else c)
    return out


def caption_demo(doc: Document, caption: str, after: str, query: str) -> dict[str, Any]:
    """A figure with ``caption`` placed after the first occurrence of ``after`` in ``doc``; the
    document cut by ``recursive`` 300 and linked with :func:`attach_figures`. The BM25 rank (1 is
    best) of the chunk holding the figure for ``query``, indexing ``text`` only and ``context`` +
    ``text`` after :func:`figure_context`."""
    anchor = doc.text.index(after) + len(after)
    figure = {"id": "demo-fig1", "page": 1, "bbox": [0, 0, 1, 1], "anchor": anchor, "caption": caption,
              "caption_span": None, "description": None}
    d = Document(doc.id, doc.text, title=doc.title, meta={**doc.meta, "figures": [figure]})
    chunks = figure_context(attach_figures(d, get_strategy("recursive", target=300).split(d)))
    holder = next(i for i, c in enumerate(chunks) if c.meta.get("figures"))
    ranks = {}
    for label, texts in (("只索引正文", [c.text for c in chunks]),
                         ("context + 正文", [(c.context + "\n" + c.text).strip() for c in chunks])):
        ids = BM25Fast.from_texts(texts).search([query], k=len(chunks)).ids[0].tolist()
        ranks[label] = ids.index(holder) + 1 if holder in ids else None
    return {"chunks": chunks, "holder": chunks[holder], "ranks": ranks, "n_chunks": len(chunks)}


def merged_cells(path, key: dict[str, Any]) -> dict[str, Any]:
    """The report template's page: its ruled table with merged cells filled or left empty, each
    scored cell by cell against the answer key; the tables drawn with rules only; and the row
    ``Inet-2.1`` cut by ``table`` (one row a chunk, transcribed) under both settings, with how many
    of its transcription's ``列名：值`` pairs repeat a column name already said."""
    docs = {m: pipeline(path, pages=[key["page"]], merged=m, ocr=False) for m in ("fill", "empty")}
    ruled = {m: next(t for t in d.meta["tables"] if t["kind"] == "ruled") for m, d in docs.items()}
    scores = {m: cells_matched(markdown_grid(docs[m].text[t["start"]:t["end"]]), key["merged_table"])
              for m, t in ruled.items()}
    fill = docs["fill"]
    rule_tables = [t for t in fill.meta["tables"] if t["kind"] == "rules"]
    rule_ok = [cells_matched(markdown_grid(fill.text[t["start"]:t["end"]]), exp)
               for t, exp in zip(rule_tables, key["rule_tables"])]
    splitter = get_strategy("table", mode="rows", rows=1, transcribe=True)
    rows = {}
    for m, d in docs.items():
        row = next(c for c in splitter.split(d) if c.meta.get("kind") == "table" and "Inet-2.1" in c.text)
        said = row.context.splitlines()[-1]
        names = [p.split("：", 1)[0] for p in said.split("；")]
        rows[m] = {"text": row.text, "transcription": said, "pairs": len(names),
                   "repeated": len(names) - len(set(names))}
    return {"table_text": fill.text[ruled["fill"]["start"]:ruled["fill"]["end"]],
            "merged_found": len(ruled["fill"]["merged"]), "merged_key": key["merged_cells"],
            "scores": scores, "rule_found": len(rule_tables), "rule_key": len(key["rule_tables"]),
            "rule_ok": (sum(a for a, _ in rule_ok), sum(b for _, b in rule_ok)), "rows": rows}


def split_tables(info, caption: str = "员工福利项目汇总") -> dict[str, Any]:
    """The ``benefits_split`` PDF with continued tables joined and not: tables, their pages, row
    chunks, how many of those can find the caption, cells matching the typeset source, and the
    last row's chunk when not joined."""
    docs = {"接成一张": pipeline(info.path, ocr=False), "逐页各一张": pipeline(info.path, ocr=False, join_tables=False)}
    splitter = get_strategy("table", mode="rows", rows=1)
    stats = {}
    for label, d in docs.items():
        tabs = d.meta["tables"]
        row_chunks = [c for c in splitter.split(d) if c.meta.get("kind") == "table"]
        grid = markdown_grid(d.text[tabs[0]["start"]:tabs[0]["end"]])
        for t in tabs[1:]:
            grid += markdown_grid(d.text[t["start"]:t["end"]])[1:]
        stats[label] = {"tables": len(tabs), "pages": [t["pages"] for t in tabs], "rows": len(row_chunks),
                        "with_caption": sum(caption in c.context or caption in c.text for c in row_chunks),
                        "cells": cells_matched(grid, info.tables[0]), "last": row_chunks[-1]}
    return stats


def footnote_demo() -> dict[str, Any]:
    """Two hand-placed pages (a sentence of the travel policy crossing the page break, a footnote in
    8 pt at the bottom of page 1): the document with the footnote left in place and moved after the
    body; for each, the text and whether the crossing sentence is one string again."""
    crossing = '出差住宿费按"城市类别 × 职级"在标准内凭票据实报销，标准为每人每晚的上限金额（含税），见表 2。'
    note, cut = "1 天津、重庆两个直辖市按二类城市执行。", 22

    def line(page, text, top, x1=531.0, size=10.5):
        return Segment(page, text, 64.0, top, x1, top + size, size)

    pages = [Page(1, 595.0, 842.0, [line(1, "第十六条 住宿费标准。", 700.0, 180.0), line(1, crossing[:cut], 717.0),
                                    line(1, note, 790.0, 200.0, 8.0)]),
             Page(2, 595.0, 842.0, [line(2, crossing[cut:], 78.0, 420.0),
                                    line(2, "第十七条 合住规定。两名同性别员工一同出差且职级均在 M1 以下的，", 95.0)])]
    kept = build_document(pages, "demo")
    moved_pages, notes = move_footnotes(pages)
    moved = build_document(moved_pages, "demo", footnotes=notes)
    return {"docs": {"脚注留在原处": kept, "脚注移到正文之后": moved},
            "whole": {label: evidence_presence(d.text, [crossing])[0]
                      for label, d in (("脚注留在原处", kept), ("脚注移到正文之后", moved))},
            "footnotes": moved.meta["footnotes"]}


_STEP_ZH = {"extract": "抽取文本层", "headers_footers": "去页眉页脚", "footnotes": "移出脚注",
            "reading_order": "恢复阅读顺序", "tables": "重建表格", "ocr": "OCR"}
_ORDER_ZH = {"columns": "按栏", "naive": "逐行"}
_ONOFF = {True: "开", False: "关"}


def describe_steps(doc: Document) -> list[str]:
    """``doc.meta["preprocess"]`` as one Chinese line a step (what each step did, counted).

    >>> describe_steps(Document("d", "", meta={"preprocess": [{"step": "footnotes", "moved": 0}]}))
    ['移出脚注：移到正文之后 0 条']
    """
    lines = []
    for s in doc.meta.get("preprocess", []):
        step = s.get("step")
        if step == "extract":
            text = (f"{s.get('engine')}，{s.get('pages')} 页；表格识别{_ONOFF[bool(s.get('tables'))]}，"
                    f"OCR {_ONOFF[bool(s.get('ocr'))]}，跳过 {len(s.get('skipped_pages') or [])} 页")
        elif step == "headers_footers":
            text = f"去掉 {s.get('removed')} 行，其中不同的文字有：{'、'.join(s.get('texts') or []) or '无'}"
        elif step == "footnotes":
            text = f"移到正文之后 {s.get('moved')} 条"
        elif step == "reading_order":
            cols = s.get("columns") or {}
            text = (f"{_ORDER_ZH.get(s.get('order'), s.get('order'))}读；每页的栏数："
                    + "，".join(f"第 {p} 页 {n} 栏" for p, n in cols.items()))
        elif step == "tables":
            text = (f"找到 {s.get('found')} 张，转成 Markdown 表；合并单元格{'按跨度填充' if s.get('merged') == 'fill' else '留空'}；"
                    f"跨页接上 {len(s.get('joined_across_pages') or [])} 处")
        else:
            text = "；".join(f"{k}={v}" for k, v in s.items() if k != "step")
        lines.append(f"{_STEP_ZH.get(step, step)}：{text}")
    return lines


def reason_zh(reason: str) -> str:
    """A removal or skip reason of the pipeline in Chinese (the English one kept when unknown).

    >>> reason_zh("running header: on 4 of 4 pages")
    '重复的页眉：4 页里有 4 页出现'
    >>> reason_zh("no text layer (a scanned page); OCR is off")
    '没有文本层（扫描页），OCR 没有打开'
    """
    m = re.match(r"running (header|footer): on (\d+) of (\d+) pages", reason)
    if m:
        return f"重复的{'页眉' if m.group(1) == 'header' else '页脚'}：{m.group(3)} 页里有 {m.group(2)} 页出现"
    if reason.startswith("no text layer"):
        return "没有文本层（扫描页），OCR " + ("没有打开" if "OCR is off" in reason else "未能读出文字")
    if "page number" in reason:
        return "页码行"
    return f"（原文）{reason}"


def regions_zh(regions) -> list[str]:
    """Regions of :func:`~chunklab.preprocess.locate` as Chinese lines: page, x and y ranges in points."""
    return [f"第 {r.page} 页  x {r.x0:6.1f}–{r.x1:6.1f}  y {r.top:6.1f}–{r.bottom:6.1f}" for r in regions]
