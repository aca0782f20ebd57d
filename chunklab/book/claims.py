"""The source articles' claims, by id, and a side-by-side table of their numbers and ours.

The register mirrors the project's claims list (ids C1–C30 are stable). A
chapter never states an article's number as fact: it cites the id and shows
the article's figure beside the figure measured at build time, with a note on
any difference (:func:`claim_table`).
"""
from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Iterable, Sequence

from ..evaluation.stats import decide

__all__ = ["Claim", "CLAIMS", "claim", "claim_table", "claim_row", "ClaimRow", "verdict", "fmt_diff",
           "shown_claims", "VERDICT_ZH", "same_level", "LEVEL_TOLERANCE"]


@dataclass(frozen=True)
class Claim:
    id: str
    source: str     # seed article and section
    text: str       # the claim, paraphrased in Chinese
    how: str        # reproduce / check / context


CLAIMS: dict[str, Claim] = {c.id: c for c in [
    Claim("C1", "000 §1.2", "固定 512 token 切分把 3.1 年假与 3.2 病假放进同一块，病假问题排第 7（落在 top-5 外）；按标题树切分排第 1", "reproduce"),
    Claim("C2", "000 §2.3", "800 份制度 PDF 上，语义切分比固定 512 少 35% 的块，hit@5 从 62% 升到 68%", "reproduce"),
    Claim("C3", "000 §3.1", "overlap 取块长的 10–20%，索引约膨胀 15%；按标题树切分后 overlap 从 50 降到 0 不损失 hit@5", "reproduce"),
    Claim("C4", "000 §3.2", "父子块（子 200 / 父 1200 token）让 hit@5 从 68% 升到 76%，上下文条数从 5 降到 3", "reproduce"),
    Claim("C5", "000 §4.1", "代码按函数/类切块并加路径+签名前缀；超过 800 token 的函数按逻辑段再切并保留签名", "reproduce"),
    Claim("C6", "000 §4.2", "表格转述（逐行写成句子）让口语化表格问题的召回从 54% 升到 88%", "reproduce"),
    Claim("C7", "000 §4.3", "800 份制度 PDF 中 120 份是扫描件；跳过它们让问答上限停在 85%", "context"),
    Claim("C8", "000 §5.2", "标注集 50–200 个「问题 → 块」对，每种内容类型至少 20 个", "follow"),
    Claim("C9", "000 §6", "四周迭代让 hit@5 从 62% 升到 80% 以上", "reproduce"),
    Claim("C10", "001", "LangChain RecursiveCharacterTextSplitter 默认分隔符 [\"\\n\\n\",\"\\n\",\" \",\"\"]、默认 overlap 200、新版默认 size 4000（旧文档 1000）", "check"),
    Claim("C11", "001", "overlap 取 10–20%，不要超过三分之一", "reproduce"),
    Claim("C12", "001", "MarkdownHeaderTextSplitter 默认去掉标题行（strip_headers=True）", "check"),
    Claim("C13", "001", "text-embedding-3-small 上限 8191 token、1536 维（可降到 256）；bge-m3 8192 token、1024 维", "context"),
    Claim("C14", "001", "超过嵌入模型上限的块会被静默截断", "show"),
    Claim("C15", "002 §3.1", "固定 512 切分只有 9.6% 的块从段落开头开始（对齐率）", "reproduce"),
    Claim("C16", "002 §3.1", "2048 字窗口下，命中块里约 94% 的字符与答案无关", "reproduce"),
    Claim("C17", "002 §3.2", "9 组同尺寸对比中递归切分全部胜过固定切分", "reproduce"),
    Claim("C18", "002 §3.2", "递归切分 512：平均长度 420、最长 1200（贪心合并不均匀）", "reproduce"),
    Claim("C19", "002 §3.3", "段落块的精确率是 2048 块的 9.2 倍（0.1172 对 0.0128），召回率是它的 68%（0.647 对 0.947）", "reproduce"),
    Claim("C20", "002 §4", "27 组配置（3 方法 × 3 尺寸 × 3 重叠）、2,267 个问题、单核 148 秒，BM25 字符二元组", "reproduce"),
    Claim("C21", "002 §6", "512 时固定切分切断 18.6% 的条款，递归只切断 0.9%", "reproduce"),
    Claim("C22", "002 §6", "常见默认：target 500、max 1200、min 150、overlap 50 字、开启上下文前缀——四个不同的旋钮", "reproduce"),
    Claim("C23", "002 §5", "上下文前缀（元数据传播）是整个矩阵里投入产出比最高的一项", "reproduce"),
    Claim("C24", "002 §4", "完整候选集是 40–60 组分层配置，而不是完全笛卡尔积", "show"),
    Claim("C25", "003", "固定长度切分需要 size > 0 且 0 ≤ overlap < size，否则永不结束", "check"),
    Claim("C26", "003", "比较策略要固定上下文 token 预算而不是固定 K，否则大块不公平地占优", "reproduce"),
    Claim("C27", "003", "要记录证据完整率、Recall@K、引用定位、上下文重复率、索引大小、解析失败率、入库耗时", "implement"),
    Claim("C28", "003", "按 token id 切分会切开多字节字符", "check"),
    Claim("C29", "003", "LangChain 的 1000/200 是字符数（len），不是 token 数", "check"),
    Claim("C30", "003", "按文档类型选策略：对话→按行、技术文档→章节+递归、论文→段落、小说→滑窗、表格→表格感知、OCR→固定", "reproduce"),
]}

_HOW_ZH = {"reproduce": "复现", "check": "核对", "context": "背景（无法复测）", "show": "演示机制",
           "follow": "照做", "implement": "实现"}

#: The book's verdict words, one per :data:`chunklab.evaluation.stats.VERDICTS` entry.
VERDICT_ZH = {
    "supported": "成立",
    "same direction, not significant": "方向一致但不显著",
    "opposite direction, not significant": "方向相反但不显著",
    "contradicted": "不成立（显著反向）",
    "no difference": "无差异",
    "non-inferior": "成立（非劣）",
    "not shown": "未能确认",
}
#: Verdicts of claims that are not a paired comparison: a checked fact, or no measurement at all.
CHECK_ZH = {True: "核对相符", False: "核对不符"}
UNMEASURED_ZH = {"context": "背景数字，未复测", "follow": "照做（非可检验论断）", "show": "机制演示（无数字可比）",
                 "implement": "已实现（见各章）", "check": "未核对", "reproduce": "未复测"}


def claim(cid: str) -> Claim:
    """Look up a claim by id (``"C15"``); a clear error for an unknown id."""
    if cid not in CLAIMS:
        raise ValueError(f"unknown claim id {cid!r} (known: C1–C30)")
    return CLAIMS[cid]


def verdict(result: dict, expect: int = 1, margin: float | None = None) -> str:
    """The book's verdict word for a paired comparison: the one function every chapter uses.

    ``result`` comes from :func:`~chunklab.evaluation.stats.paired_bootstrap` or, when a chapter
    makes many comparisons at once, :func:`~chunklab.evaluation.stats.paired_many` (then the
    corrected significance decides). See :func:`~chunklab.evaluation.stats.decide` for ``expect``
    and ``margin``.

    >>> verdict({"diff": 0.013, "lo": -0.002, "hi": 0.030, "significant": False})
    '方向一致但不显著'
    >>> verdict({"diff": 0.05, "lo": 0.01, "hi": 0.09, "significant": True}, expect=-1)
    '不成立（显著反向）'
    """
    return VERDICT_ZH[decide(result, expect=expect, margin=margin)]


#: Level claims (one figure the article measured on its own corpus, e.g. "9.6% of chunks start at a
#: paragraph"): ours is "the same level" when it is within this relative distance of the article's
#: figure. Declared once for the whole book, before any comparison, and used by every chapter.
LEVEL_TOLERANCE = 0.20


def same_level(ours: float, theirs: float, tolerance: float = LEVEL_TOLERANCE) -> bool:
    """Is our figure within ``tolerance`` (relative) of the article's? The ``holds=`` of a level claim.

    >>> same_level(0.977, 0.94), same_level(512, 1200)
    (True, False)
    """
    if not theirs:
        raise ValueError("theirs must be a non-zero figure")
    return abs(ours / theirs - 1) <= tolerance


def fmt_diff(result: dict, pct: bool = True) -> str:
    """``+1.3% [−0.2%, +3.0%]``: a paired difference with its interval, for tables and prose.

    >>> fmt_diff({"diff": 0.013, "lo": -0.002, "hi": 0.03})
    '+1.3% [-0.2%, +3.0%]'
    """
    f = "{:+.1%}" if pct else "{:+.3f}"
    return f"{f.format(result['diff'])} [{f.format(result['lo'])}, {f.format(result['hi'])}]"


@dataclass(frozen=True)
class ClaimRow:
    """One row of a claims table: the article's number, ours, and the verdict computed from ours.

    Give ``result`` (a paired comparison, with ``expect``/``margin`` as in :func:`verdict`) for a
    measured claim, or ``holds`` (bool) for a checked fact (a default value, a limit). With neither,
    the verdict says the claim was not measured, in words chosen by the register's ``how``.
    """
    cid: str
    what: str
    theirs: str
    ours: str
    note: str = ""
    result: dict | None = None
    expect: int = 1
    margin: float | None = None
    holds: bool | None = None

    @property
    def verdict(self) -> str:
        if self.result is not None:
            return verdict(self.result, self.expect, self.margin)
        if self.holds is not None:
            return CHECK_ZH[bool(self.holds)]
        return UNMEASURED_ZH[claim(self.cid).how]


def claim_row(cid: str, what: str, theirs: str, ours: str, note: str = "", *, result: dict | None = None,
              expect: int = 1, margin: float | None = None, holds: bool | None = None) -> ClaimRow:
    """A validated :class:`ClaimRow` (unknown id, or both ``result`` and ``holds`` → ValueError)."""
    claim(cid)
    if result is not None and holds is not None:
        raise ValueError(f"{cid}: give result (a measured comparison) or holds (a checked fact), not both")
    if result is not None and not {"diff", "lo", "hi"} <= set(result):
        raise ValueError(f"{cid}: result must be a paired comparison with diff, lo and hi")
    row = ClaimRow(cid, what, theirs, ours, note, result, expect, margin, holds)
    row.verdict  # validates expect / margin now, not when rendered
    return row


#: Every claims table built in this process, in order: what the chapter tests read back (:func:`shown_claims`).
_SHOWN: list[ClaimTable] = []


class ClaimTable:
    """A rendered comparison table (HTML in notebooks and the site, text in a terminal)."""

    def __init__(self, rows: Sequence[ClaimRow]) -> None:
        self.rows = list(rows)
        #: each row's verdict as it stands now: what the table shows, however it is rendered later
        self.verdicts = [r.verdict for r in self.rows]

    def _repr_html_(self) -> str:
        trs = []
        for r, v in zip(self.rows, self.verdicts):
            c = claim(r.cid)
            colour = "#1a7f37" if v.startswith("成立") or v == "核对相符" else (
                "#b42318" if v.startswith("不成立") or v == "核对不符" else "#555")
            trs.append(
                f"<tr><td><b>{html.escape(r.cid)}</b><br><span style='font-size:11px;color:#666'>"
                f"{html.escape(c.source)} · {_HOW_ZH.get(c.how, c.how)}</span></td>"
                f"<td>{html.escape(r.what)}</td><td style='text-align:right'>{html.escape(r.theirs)}</td>"
                f"<td style='text-align:right'><b>{html.escape(r.ours)}</b></td>"
                f"<td class='cl-verdict' style='color:{colour};white-space:nowrap'><b>{html.escape(v)}</b></td>"
                f"<td>{html.escape(r.note)}</td></tr>")
        return ("<table class='cl-claims' style='font-size:13px;border-collapse:collapse'>"
                "<tr><th>论断</th><th>度量</th><th>原文数字</th><th>本书实测</th><th>判定</th><th>差异说明</th></tr>"
                + "".join(trs) + "</table>")

    def __str__(self) -> str:
        return "\n".join(f"{r.cid}  {r.what}: 原文 {r.theirs} | 实测 {r.ours} | {v} | {r.note}"
                         for r, v in zip(self.rows, self.verdicts))

    __repr__ = __str__


def claim_table(rows: Iterable[ClaimRow]) -> ClaimTable:
    """A claims table from :func:`claim_row` rows; the verdict column is computed, never typed.

    >>> t = claim_table([claim_row("C15", "固定 512 的段落对齐率", "9.6%", "9.8%", "同一量级", holds=True)])
    >>> "C15" in t._repr_html_() and "核对相符" in str(t)
    True
    """
    rows = list(rows)
    for r in rows:
        if not isinstance(r, ClaimRow):
            raise TypeError(f"claim_table takes claim_row(...) rows (the verdict is computed from the "
                            f"measured result), got {type(r).__name__}: {r!r}")
    table = ClaimTable(rows)
    _SHOWN.append(table)
    return table


def shown_claims() -> list[tuple[str, str, str]]:
    """``(claim id, verdict shown, verdict recomputed)`` for every row shown in this process.

    "Shown" is what its table holds since it was built; "recomputed" is :func:`verdict` of the
    row's result now (so a result changed after it was shown is caught). The chapter tests call
    it in the executed kernel: the two must be equal, and every claim C1–C30 must appear.
    """
    return [(r.cid, v, r.verdict) for t in _SHOWN for r, v in zip(t.rows, t.verdicts)]
