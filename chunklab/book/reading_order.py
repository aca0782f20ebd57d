"""Does the evidence survive extraction? Reading order measured two ways.

The questions of :data:`READING_ORDER_QUESTIONS` are about the two-column
PDF ``remote_work_2col`` (远程办公管理办法, chapters 1 to 4); each evidence
string is a sentence (or clause) of the *source* document, which the PDF
sets across several lines of one column.

* :func:`evidence_presence` — is the evidence still a contiguous string of
  the extracted text? Compared after :func:`squash` (every whitespace
  character removed, on both sides), so line breaks and the spaces an
  extractor inserts do not count: only a sentence actually broken apart
  or reordered does.
* :func:`bm25_hits` — chunk the extracted text, retrieve with BM25 over
  character bigrams (:class:`chunklab.retrieval.BM25Fast`), and count a hit
  when one of the top ``k`` chunks holds the whole evidence (again after
  :func:`squash`). A broken sentence can never be a hit: no chunk holds it.

For a real PDF nobody here wrote there is no source text, only a hand-made
answer key (``data/external/answer_key.json``): :func:`order_score` checks
the order of its labels in the extracted text, :func:`cells_matched` a
table's cells.

>>> squash("每周不超过\\n2 天")
'每周不超过2天'
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ..base import get_strategy
from ..core import Document
from ..parsing.tables import _DELIM, _md_cells
from ..preprocess.ocr import normalize_for_cer
from ..retrieval import BM25Fast

__all__ = ["EvidenceQuestion", "READING_ORDER_QUESTIONS", "squash", "evidence_presence", "bm25_hits",
           "library_text", "order_score", "markdown_grid", "cells_matched"]


@dataclass(frozen=True)
class EvidenceQuestion:
    """A question and the verbatim source sentence that answers it (same keys as the public question format)."""

    id: str
    question: str
    evidence: str
    doc: str = "remote_work_policy"


#: Questions about the two-column page(s); evidence copied from data/xiaobei/remote_work_policy.md
#: (with the Markdown bold markers removed). A test checks every one is in the source.
READING_ORDER_QUESTIONS: tuple[EvidenceQuestion, ...] = (
    EvidenceQuestion("rw-01", "常规远程每周最多可以几天？",
                     "常规远程：在固定或弹性的工作日远程办公，每周不超过 2 天"),
    EvidenceQuestion("rw-02", "试用期员工可以申请远程办公吗？",
                     "试用期员工不得申请常规远程，但在紧急情况下经 M2 级部门负责人批准，可以申请临时远程。"),
    EvidenceQuestion("rw-03", "下一季度的常规远程安排什么时候提交？",
                     "员工应在每个季度开始前 10 个工作日内，在 OA\"远程办公申请\"流程中提交下一季度的常规远程安排"),
    EvidenceQuestion("rw-04", "临时远程最晚什么时候提交申请？",
                     "员工申请临时远程的，应在前一个工作日 18:00 前在 OA 提交申请"),
    EvidenceQuestion("rw-05", "全职远程要经过哪些人审批，批一次管多久？",
                     "须经直属上级、M2 级部门负责人、分管副总裁和人力资源部依次审批，审批有效期为 1 年。"),
    EvidenceQuestion("rw-06", "远程办公日的核心工作时间是几点到几点？",
                     "10:00 至 16:00 为核心工作时间，其中 12:00 至 13:00 为午休。"),
    EvidenceQuestion("rw-07", "远程打卡时没有连 VPN 会怎样？",
                     "未连接 VPN 的远程打卡视为无效，按缺卡处理"),
    EvidenceQuestion("rw-08", "家里的无线路由器需要怎么设置？",
                     "家庭无线路由器应修改默认管理密码，并使用 WPA2 或更高等级的加密方式。"),
    EvidenceQuestion("rw-09", "远程办公时电脑丢了要多久内报告？",
                     "同样应在发现后 30 分钟内报告信息安全部应急热线（分机 6110）。"),
    EvidenceQuestion("rw-10", "远程办公对家里的网络带宽有什么要求？",
                     "远程办公地点具备稳定的宽带网络（下行带宽不低于 50 Mbps）和相对安静、不被他人看到屏幕的工作空间"),
    EvidenceQuestion("rw-11", "开完会多久内要发会议纪要？",
                     "会议组织者应在会后 1 个工作日内将会议纪要发布在团队共享空间"),
    EvidenceQuestion("rw-12", "能在咖啡馆远程办公吗？",
                     "不得在咖啡馆、共享办公空间等公共场所进行常规远程办公。"),
)


def squash(text: str) -> str:
    """``text`` without any whitespace character: the form evidence is compared in."""
    return "".join(ch for ch in text if not ch.isspace())


def evidence_presence(text: str, evidence: Sequence[str]) -> list[bool]:
    """For each evidence string, whether it occurs in ``text`` (both :func:`squash` ed)."""
    flat = squash(text)
    return [squash(e) in flat for e in evidence]


def bm25_hits(document: Document, questions: Sequence[EvidenceQuestion], k: int = 3,
              strategy: str = "recursive", **params: Any) -> list[bool]:
    """Hit@k per question over the chunks of one extracted document (see the module docstring).

    ``strategy`` and ``params`` choose the chunking (default ``recursive`` with
    ``target=200``); the index holds this document's chunks only.
    """

    if strategy == "recursive":
        params.setdefault("target", 200)
    chunks = get_strategy(strategy, **params).split(document)
    if not chunks:
        return [False] * len(questions)
    engine = BM25Fast.from_texts([c.text for c in chunks])
    ranking = engine.search([q.question for q in questions], k=k)
    hits = []
    for q, ids in zip(questions, ranking.ids):
        ev = squash(q.evidence)
        hits.append(any(i >= 0 and ev in squash(chunks[i].text) for i in ids))
    return hits


def library_text(path: str | Path) -> str:
    """What pdfplumber's own ``page.extract_text()`` gives, pages joined by blank lines: the
    "just call the library" baseline, in its default reading order."""
    import pdfplumber

    with pdfplumber.open(Path(path)) as pdf:
        return "\n\n".join(page.extract_text() or "" for page in pdf.pages)


# -- scoring a real PDF against a hand-made answer key --------------------------------------------

def _fold(text: str) -> str:
    """:func:`squash` after NFKC (math italic 𝑥 → x, full-width ， → ,) and with − as -."""
    return normalize_for_cer(text, fold_width=True).replace("−", "-")


def order_score(text: str, keys: Sequence[str]) -> dict[str, Any]:
    """How well ``text`` keeps the reading order of an answer key (labels in reading order).

    Each key is looked up (after :func:`_fold` on both sides) at its first occurrence. Returns
    ``found`` (keys present), ``n``, ``pairs_in_order`` / ``pairs`` (over all pairs of found
    keys, the share whose positions follow the key's order: 1.0 is the reader's order, about
    0.5 a random one) and ``missing`` (the keys not found: text the extractor lost, such as
    glyphs without a Unicode mapping).

    >>> r = order_score("甲 乙 丙", ["甲", "丙", "乙", "丁"])
    >>> r["found"], r["pairs_in_order"], r["pairs"], r["missing"]
    (3, 2, 3, ['丁'])
    """
    folded = _fold(text)
    pos = [(k, folded.find(_fold(k))) for k in keys]
    found = [(k, p) for k, p in pos if p >= 0]
    pairs = in_order = 0
    for i in range(len(found)):
        for j in range(i + 1, len(found)):
            pairs += 1
            in_order += found[i][1] < found[j][1]
    return {"n": len(keys), "found": len(found), "pairs": pairs, "pairs_in_order": in_order,
            "order_accuracy": in_order / pairs if pairs else float("nan"),
            "missing": [k for k, p in pos if p < 0]}


def markdown_grid(table_text: str) -> list[list[str]]:
    """The cells of a Markdown pipe table, row by row (the ``|---|`` line dropped; ``\\|`` kept).

    >>> markdown_grid("| a | b |\\n|---|---|\\n| 1 |  |")
    [['a', 'b'], ['1', '']]
    """
    return [_md_cells(line) for i, line in enumerate(table_text.strip().split("\n"))
            if not (i == 1 and _DELIM.match(line))]


def cells_matched(got: Sequence[Sequence[str]], expected: Sequence[Sequence[str]]) -> tuple[int, int]:
    """``(matched, total)``: positions of ``expected`` whose cell equals ``got``'s at the same
    row and column (missing rows or columns count as wrong).

    >>> cells_matched([["a", "b"], ["1", ""]], [["a", "b"], ["1", "2"]])
    (3, 4)
    """
    total = sum(len(r) for r in expected)
    ok = 0
    for i, row in enumerate(expected):
        for j, cell in enumerate(row):
            ok += i < len(got) and j < len(got[i]) and got[i][j] == cell
    return ok, total
