"""The source articles' claims, by id, and a side-by-side table of their numbers and ours.

The register mirrors the project's claims list (ids C1–C30 are stable). A
chapter never states an article's number as fact: it cites the id and shows
the article's figure beside the figure measured at build time, with a note on
any difference (:func:`claim_table`).
"""
from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass
from typing import Iterable, Sequence

from ..evaluation.stats import decide
from .criteria import LEVEL_TOLERANCE, Criterion, criterion

__all__ = ["Claim", "CLAIMS", "claim", "claim_table", "claim_row", "ClaimRow", "verdict", "fmt_diff",
           "shown_claims", "shown_criteria", "contradictions", "take_uncorrected", "VERDICT_ZH", "LEVEL_ZH", "same_level", "LEVEL_TOLERANCE"]


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

#: The criterion kinds (:mod:`chunklab.book.criteria`) in the tables' words.
_KIND_ZH = {"direction": "看方向", "magnitude": "看方向和幅度", "non-inferiority": "非劣", "equivalence": "等效",
            "level": "看水平", "check": "核对", "background": "背景"}
_HOW_ZH = {"reproduce": "复现", "check": "核对", "context": "背景（无法复测）", "show": "演示机制",
           "follow": "照做", "implement": "实现"}

#: The book's verdict words, one per :data:`chunklab.evaluation.stats.VERDICTS` entry.
VERDICT_ZH = {
    "supported": "成立",
    "supported, size ruled out": "成立，幅度不符",
    "same direction, not significant": "方向一致但不显著",
    "same direction, size ruled out": "方向一致但不显著，幅度不符",
    "opposite direction, not significant": "方向相反但不显著",
    "contradicted": "不成立（显著反向）",
    "equivalent": "等效",
    "inconclusive": "未能区分",
    "non-inferior": "成立（非劣）",
    "not shown": "未能确认",
}
#: Verdicts of level claims (one figure against the article's, :func:`same_level`).
LEVEL_ZH = {True: "同一水平", False: "水平不符"}
#: Verdicts of claims that are not a paired comparison: a checked fact, or no measurement at all.
CHECK_ZH = {True: "核对相符", False: "核对不符"}
UNMEASURED_ZH = {"context": "背景数字，未复测", "follow": "照做（非可检验论断）", "show": "机制演示（无数字可比）",
                 "implement": "已实现（见各章）", "check": "未核对", "reproduce": "未复测"}


def claim(cid: str) -> Claim:
    """Look up a claim by id (``"C15"``); a clear error for an unknown id."""
    if cid not in CLAIMS:
        raise ValueError(f"unknown claim id {cid!r} (known: C1–C30)")
    return CLAIMS[cid]


def verdict(result: dict, expect: int = 1, margin: float | None = None, *, equivalence: float | None = None,
            claimed: float | None = None) -> str:
    """The book's verdict word for a paired comparison: the one function every chapter uses.

    ``result`` comes from :func:`~chunklab.evaluation.stats.paired_bootstrap` or, when a chapter
    makes many comparisons at once, :func:`~chunklab.evaluation.stats.paired_many` (then the
    corrected significance and the adjusted interval decide). See
    :func:`~chunklab.evaluation.stats.decide` for ``expect``, ``margin``, ``equivalence`` and
    ``claimed``. A claims table does not call this with rules of its own: :func:`claim_row` takes
    them from the register (:mod:`chunklab.book.criteria`).

    >>> verdict({"diff": 0.013, "lo": -0.002, "hi": 0.030, "significant": False})
    '方向一致但不显著'
    >>> verdict({"diff": 0.05, "lo": 0.01, "hi": 0.09, "significant": True}, expect=-1)
    '不成立（显著反向）'
    >>> verdict({"diff": 0.0, "lo": -0.081, "hi": 0.081, "metric": "hit"})
    '未能区分'
    >>> verdict({"diff": 0.0, "lo": -0.011, "hi": 0.011, "metric": "hit"})
    '等效'
    """
    _log_verdict(result)
    return VERDICT_ZH[decide(result, expect=expect, margin=margin, equivalence=equivalence, claimed=claimed)]


#: Uncorrected comparisons given a verdict since the log was last taken (ids of their results):
#: the chapter tests take it after every cell, and fail a cell that judged two or more of them —
#: a group shown together must be corrected (paired_many) or reduced to one declared primary.
_UNCORRECTED: list[int] = []


def _log_verdict(result: dict) -> None:
    if not result.get("m", 1) > 1:
        _UNCORRECTED.append(id(result))


def take_uncorrected() -> int:
    """How many distinct uncorrected comparisons were judged since the last call (and reset)."""
    n = len(set(_UNCORRECTED))
    _UNCORRECTED.clear()
    return n


#: A printed difference with its interval, then (in the same row or sentence) a verdict word.
_ROW = re.compile(r"\[([-+]?[\d.]+)(%?), ([-+]?[\d.]+)%?\][^\[\]]{0,80}?("
                  r"不成立（显著反向）|成立（非劣）|成立，幅度不符|成立|方向一致但不显著|方向相反但不显著|未能区分|等效)")


def contradictions(text: str) -> list[str]:
    """Rows of ``text`` whose printed interval contradicts the verdict word that follows it.

    "成立" / "不成立" need an interval that excludes 0; the "不显著" words, 未能区分 and 等效 need one
    that includes it (成立（非劣） is judged against a margin, not 0, and is not checked here).
    The chapter tests run this over every executed chapter's output and prose.

    >>> contradictions("C1 | +10.3% [+1.9%, +19.6%] | 方向一致但不显著 |")
    ['[+1.9%, +19.6%] … 方向一致但不显著']
    >>> contradictions("+10.3% [-0.5%, +21.0%]（98.8% 区间，Holm 校正） | 方向一致但不显著")
    []
    """
    bad = []
    for m in _ROW.finditer(text):
        lo, hi, word = float(m.group(1)), float(m.group(3)), m.group(4)
        excludes = lo > 0 or hi < 0
        if word == "成立（非劣）":
            continue
        if (word.startswith("成立") or word.startswith("不成立")) != excludes:
            bad.append(f"[{m.group(1)}{m.group(2)}, {m.group(3)}{m.group(2)}] … {word}")
    return bad


def same_level(ours: float, theirs: float, tolerance: float = LEVEL_TOLERANCE) -> bool:
    """Is our figure within ``tolerance`` (relative) of the article's? The ``holds=`` of a level claim.

    >>> same_level(0.977, 0.94), same_level(512, 1200)
    (True, False)
    """
    if not theirs:
        raise ValueError("theirs must be a non-zero figure")
    return abs(ours / theirs - 1) <= tolerance


def _decimals(values: Sequence[float], pct: bool) -> int:
    """Decimals for a difference and its interval, shared by the three: the usual (1 for a
    percentage, 3 otherwise), or as many as show the first significant digit of the smallest
    non-zero value that would otherwise print as zero."""
    base = 1 if pct else 3
    scale = 100 if pct else 1
    need = base
    for v in values:
        x = abs(v) * scale
        if x and round(x, base) == 0:
            need = max(need, -math.floor(math.log10(x)))
    return need


def _signed(x: float, pct: bool, decimals: int) -> str:
    """A signed figure that never hides a non-zero value as zero: an exact 0 prints unsigned."""
    if x == 0:
        return f"{0:.{decimals}f}" + ("%" if pct else "")
    return f"{x:+.{decimals}%}" if pct else f"{x:+.{decimals}f}"


def fmt_diff(result: dict, pct: bool = True) -> str:
    """``+1.3% [-0.2%, +3.0%]``: a paired difference with the interval that decided its verdict.

    When the interval is not the usual 95% one (a multiplicity-adjusted interval from
    :func:`~chunklab.evaluation.stats.paired_many`), its confidence is said:
    ``+10.3% [-0.5%, +21.0%]（98.8% 区间，Holm 校正）`` — also when a corrected comparison's deciding
    level is the usual 95% (the last step of Holm's procedure), so no row of a corrected table looks
    uncorrected. An exact zero prints ``0.0%``; a value that only rounds to zero gets the decimals
    for two significant digits, shared by the three figures (``+0.048% [+0.013%, +0.100%]``), so
    ``[0.0%, …]`` is a true zero.

    >>> fmt_diff({"diff": 0.013, "lo": -0.002, "hi": 0.03})
    '+1.3% [-0.2%, +3.0%]'
    >>> fmt_diff({"diff": 0.064, "lo": 0.0, "hi": 0.149}), fmt_diff({"diff": 0.064, "lo": 0.0002, "hi": 0.149})
    ('+6.4% [0.0%, +14.9%]', '+6.40% [+0.02%, +14.90%]')
    >>> fmt_diff({"diff": 0.02, "lo": -0.01, "hi": 0.05, "level": 0.95, "method": "holm", "m": 3})
    '+2.0% [-1.0%, +5.0%]（95.0% 区间，Holm 校正）'
    >>> fmt_diff({"diff": 0.103, "lo": -0.005, "hi": 0.21, "level": 0.9875, "method": "holm", "m": 4})
    '+10.3% [-0.5%, +21.0%]（98.8% 区间，Holm 校正）'
    """
    vals = [float(result[k]) for k in ("diff", "lo", "hi")]
    d = _decimals(vals, pct)
    text = f"{_signed(vals[0], pct, d)} [{_signed(vals[1], pct, d)}, {_signed(vals[2], pct, d)}]"
    level = result.get("level", 0.95)
    corrected = result.get("m", 1) > 1 and result.get("method") in ("holm", "bh")
    if level is not None and (abs(level - 0.95) > 1e-9 or corrected):
        how = {"holm": "，Holm 校正", "bh": "，BH 校正"}.get(result.get("method", ""), "")
        text += f"（{level:.1%} 区间{how}）"
    return text


@dataclass(frozen=True)
class ClaimRow:
    """One row of a claims table: the article's number, ours, and the verdict computed from ours.

    The rule comes from the row's declared criterion (:func:`chunklab.book.criteria.criterion` of
    ``cid`` and ``part``), never from the chapter: ``result`` (a paired comparison) for a
    direction / magnitude / non-inferiority / equivalence criterion, ``value`` (our figure) for a
    level criterion, ``holds`` (bool) for a check; a background criterion takes none of them.
    """
    cid: str
    what: str
    theirs: str
    ours: str
    note: str = ""
    part: str = ""
    result: dict | None = None
    value: float | None = None
    holds: bool | None = None

    @property
    def criterion(self) -> Criterion:
        return criterion(self.cid, self.part)

    @property
    def verdict(self) -> str:
        c = self.criterion
        if c.kind in ("direction", "magnitude", "non-inferiority", "equivalence"):
            if self.result is None:
                return UNMEASURED_ZH[claim(self.cid).how]
            return VERDICT_ZH[decide(
                self.result, expect=c.expect,
                margin=c.margin if c.kind == "non-inferiority" else None,
                equivalence=c.margin if c.kind == "equivalence" else None,
                claimed=c.claimed if c.kind == "magnitude" else None)]
        if c.kind == "level":
            if self.value is None:
                return UNMEASURED_ZH[claim(self.cid).how]
            return LEVEL_ZH[same_level(self.value, c.claimed, c.tolerance)]  # type: ignore[arg-type]
        if c.kind == "check" and self.holds is not None:
            return CHECK_ZH[bool(self.holds)]
        return UNMEASURED_ZH[claim(self.cid).how]


_NEEDS = {"direction": "result", "magnitude": "result", "non-inferiority": "result", "equivalence": "result",
          "level": "value", "check": "holds"}


def claim_row(cid: str, what: str, theirs: str, ours: str, note: str = "", *, part: str = "",
              result: dict | None = None, value: float | None = None, holds: bool | None = None) -> ClaimRow:
    """A validated :class:`ClaimRow` judged by the declared criterion of ``(cid, part)``.

    What the row must carry follows the criterion's kind: ``result`` (a paired comparison with
    ``diff``, ``lo``, ``hi``), ``value`` (a level claim's figure) or ``holds`` (a check); giving
    another one is an error, so a chapter cannot judge a claim by a rule of its own.

    >>> claim_row("C15", "固定 512 的段落对齐率", "9.6%", "9.8%", value=0.098).verdict
    '同一水平'
    >>> claim_row("C15", "固定 512 的段落对齐率", "9.6%", "9.8%", holds=True)
    Traceback (most recent call last):
    ...
    ValueError: C15: its declared criterion is level (see chunklab.book.criteria): give value=, not holds=
    """
    claim(cid)
    c = criterion(cid, part)
    given = {k: v for k, v in (("result", result), ("value", value), ("holds", holds)) if v is not None}
    need = _NEEDS.get(c.kind)
    wrong = [k for k in given if k != need]
    if wrong:
        what_needed = f"give {need}=" if need else "give none of result=, value=, holds="
        raise ValueError(f"{cid}{'/' + part if part else ''}: its declared criterion is {c.kind} "
                         f"(see chunklab.book.criteria): {what_needed}, not {wrong[0]}=")
    if result is not None and not {"diff", "lo", "hi"} <= set(result):
        raise ValueError(f"{cid}: result must be a paired comparison with diff, lo and hi")
    row = ClaimRow(cid, what, theirs, ours, note, part, result, value, holds)
    row.verdict  # validates now, not when rendered
    if result is not None:
        _log_verdict(result)
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
            colour = "#1a7f37" if v in ("成立", "成立（非劣）", "核对相符", "同一水平", "等效") else (
                "#b42318" if v.startswith("不成立") or v in ("核对不符", "水平不符") or "幅度不符" in v else "#555")
            trs.append(
                f"<tr><td><b>{html.escape(r.cid)}</b><br><span style='font-size:11px;color:#666'>"
                f"{html.escape(c.source)} · {_HOW_ZH.get(c.how, c.how)} · {_KIND_ZH[r.criterion.kind]}</span></td>"
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

    >>> t = claim_table([claim_row("C15", "固定 512 的段落对齐率", "9.6%", "9.8%", "同一量级", value=0.098)])
    >>> "C15" in t._repr_html_() and "同一水平" in str(t)
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


def shown_criteria() -> list[tuple[str, str, str]]:
    """``(claim id, part, kind)`` of every row shown in this process, as its verdict was computed.

    The chapter tests compare each with the register: a row judged by another kind than its
    register entry (a register edited after the row was shown, a row built by hand) fails them.
    """
    return [(r.cid, r.part, r.criterion.kind) for t in _SHOWN for r in t.rows]
