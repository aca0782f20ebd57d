"""How each article claim is judged: one declared criterion per claim row, read before measuring.

A claims table (:func:`chunklab.book.claims.claim_table`) takes its rule from here, never from the
chapter: :func:`chunklab.book.claims.claim_row` looks up ``(claim id, part)`` and computes the
verdict with this entry's kind, metric, direction, size, margin or tolerance. A chapter cannot
pass a rule of its own, so a row cannot be judged by another criterion than the one declared.

Kinds (what the verdict word answers):

``direction``
    a paired comparison; does the difference go the way the claim says? (The metric's
    equivalence margin, :data:`chunklab.evaluation.stats.EQUIVALENCE_MARGINS`, words an interval
    inside it as 等效.)
``magnitude``
    as ``direction``, and the claim's size ``claimed`` (on the difference's scale) is checked too:
    an interval that excludes it says 幅度不符.
``non-inferiority``
    "a is no worse than b" within ``margin``.
``equivalence``
    "a and b do not differ" within ``margin``.
``level``
    one figure the article measured on its own corpus (``claimed``); ours is the same level when
    within ``tolerance`` (relative) of it.
``check``
    a fact checked by code (a library's default, a limit, a count against a threshold).
``background``
    a number from someone's private data or a vendor's documentation: not re-measured.

The register is meant to be read on its own: ``python -m chunklab.book.criteria`` prints it, and
the glossary appendix shows it as a table.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Criterion", "REGISTER", "KINDS", "LEVEL_TOLERANCE", "criterion", "register_rows"]

#: What a criterion can be (see the module docstring).
KINDS = ("direction", "magnitude", "non-inferiority", "equivalence", "level", "check", "background")

#: Level claims: ours is "the same level" within this relative distance of the article's figure.
#: Why a fifth: our corpora, questions and evidence lengths all differ from the articles'; inside a
#: fifth the same mechanism explains both figures, beyond it the difference needs its own
#: explanation (and the chapter gives one). Declared once, for every level claim.
LEVEL_TOLERANCE = 0.20

#: Non-inferiority margin for "loses no hit@5" (C3): two points, the equivalence margin of hit.
NO_LOSS_MARGIN = 0.02


@dataclass(frozen=True)
class Criterion:
    """The declared rule for one row of a claim (``part`` tells rows of one claim apart)."""
    cid: str
    part: str
    kind: str
    metric: str           # the primary metric (or the quantity checked)
    ruler: str            # fixed k, a budget, or "—"
    why: str              # why this criterion, this metric, this margin
    expect: int = 1       # direction the claim predicts for diff = a - b
    claimed: float | None = None    # magnitude: the article's effect; level: the article's figure
    margin: float | None = None     # non-inferiority / equivalence margin
    tolerance: float | None = None  # level: relative tolerance

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"{self.cid}/{self.part}: kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if self.expect not in (1, -1):
            raise ValueError(f"{self.cid}/{self.part}: expect must be 1 or -1, got {self.expect!r}")
        need = {"magnitude": "claimed", "level": "claimed", "non-inferiority": "margin", "equivalence": "margin"}
        if self.kind in need and getattr(self, need[self.kind]) is None:
            raise ValueError(f"{self.cid}/{self.part}: a {self.kind} criterion needs {need[self.kind]}")
        if self.kind == "level" and self.tolerance is None:
            raise ValueError(f"{self.cid}/{self.part}: a level criterion needs tolerance")

    @property
    def rule(self) -> str:
        """The rule in one line of Chinese, for tables."""
        if self.kind == "direction":
            side = "更高" if self.expect > 0 else "更低"
            return f"方向：差值{side}，配对区间不含 0 为成立（区间整个落在指标的等效界内为等效）"
        if self.kind == "magnitude":
            return f"方向 + 幅度：同方向且区间不排除原文的 {self.claimed:+g}（排除则加“幅度不符”）"
        if self.kind == "non-inferiority":
            return f"非劣：区间差的一端不低于 −{self.margin:g}"
        if self.kind == "equivalence":
            return f"等效：区间整体落在 ±{self.margin:g} 之内"
        if self.kind == "level":
            return f"水平：与原文 {self.claimed:g} 的相对差不超过 {self.tolerance:.0%}"
        if self.kind == "check":
            return "核对：代码给出的事实与原文一致"
        return "背景：无法复测，只作背景"


def _c(cid: str, part: str, kind: str, metric: str, ruler: str, why: str, **kw: object) -> Criterion:
    return Criterion(cid, part, kind, metric, ruler, why, **kw)  # type: ignore[arg-type]


_LEVEL = {"tolerance": LEVEL_TOLERANCE}
_HIT = "hit@5（至少一块含证据的一半）"

#: Every claim row's criterion, keyed by (claim id, part). Written before the chapters measure.
REGISTER: dict[tuple[str, str], Criterion] = {(c.cid, c.part): c for c in [
    _c("C1", "rank", "check", "单题证据块名次", "BM25 全排名",
       "文章只给了一道题的名次：核对固定 512 token 掉出前 5、标题树进前 5 这个现象是否出现"),
    _c("C1", "mixed", "check", "证据块是否混入 3.1 节", "—", "文章的机制描述：核对证据块里是否真有相邻一节"),
    _c("C1", "hit", "direction", _HIT, "固定 k=5，以及同预算",
       "文章没有全体题目的数字，只能检验方向：标题树切分在全部题目上命中更多"),
    _c("C2", "chunks", "level", "块数的相对变化（语义 vs 固定 512）", "—",
       "原文给了幅度（少 35%），按水平规则比较块数的相对变化", claimed=-0.35, **_LEVEL),
    _c("C2", "hit", "magnitude", _HIT, "固定 k=5",
       "原文 62% → 68%，是 +6 个百分点的效应：既看方向也看这个幅度是否被区间排除", claimed=0.06),
    _c("C3", "inflation", "check", "索引膨胀（总字数之比）", "—",
       "原文说约 15%：核对 15% 是否落在 overlap 10% 与 20% 两点的实测膨胀之间"),
    _c("C3", "no loss", "non-inferiority", _HIT, "固定 k=5",
       "“不损失”是非劣论断：差值区间的下端不低于 −2 个百分点（hit 的等效界）", margin=NO_LOSS_MARGIN),
    _c("C4", "hit", "magnitude", _HIT, "固定 k=5",
       "原文 68% → 76%，+8 个百分点：既看方向也看幅度", claimed=0.08),
    _c("C4", "items", "magnitude", "交给模型的上下文条数", "固定 k=5",
       "原文 5 → 3 条，少 2 条：既看方向（更少）也看幅度", expect=-1, claimed=-2.0),
    _c("C4", "budget", "direction", _HIT, "同预算",
       "原文没有固定预算；同预算下只检验方向（父子块命中更多）"),
    _c("C5", "whole", "check", "被切开的函数个数", "—", "核对“不从函数中间下刀”：能完整放下的函数被切开的个数为 0"),
    _c("C5", "long", "check", "超长函数的分段", "—", "核对超过 800 token 的函数被分段、每段不超过 800 token 且带签名"),
    _c("C5", "prefix", "direction", _HIT, "同预算",
       "原文只说前缀是“强检索信号”，没有数字：检验方向（加前缀命中更多）"),
    _c("C6", "hit", "magnitude", _HIT, "固定 k=5",
       "原文 54% → 88%，+34 个百分点：预先声明的主对比，既看方向也看这个幅度", claimed=0.34),
    _c("C7", "", "background", "扫描件比例与问答上限", "—", "作者私有语料上的数字，无法复测"),
    _c("C8", "", "check", "题集规模与每类题数", "—", "核对我们的题集是否达到 50 题、每类 20 题的下限"),
    _c("C9", "hit", "magnitude", _HIT, "固定 k=5",
       "原文 62% → 80% 以上，至少 +18 个百分点：既看方向也看这个幅度", claimed=0.18),
    _c("C9", "budget", "direction", _HIT, "同预算",
       "原文只报 hit@5；本书做决定用的同预算尺子上只检验方向"),
    _c("C10", "", "check", "LangChain 默认参数", "—", "从已安装的类签名读出并比对"),
    _c("C11", "10%", "direction", _HIT, "固定 k=5",
       "“10–20% 是合适范围”的可检验部分：overlap 10% 比不重叠命中更多"),
    _c("C11", "50%", "direction", _HIT, "固定 k=5",
       "“不要超过三分之一”的可检验部分：50%（超过三分之一）比 10% 命中更少。"
       "三分之一这个拐点本身没有检验：成本曲线上有 33% 的点，但命中率的配对比较只在 10% 与 50% 之间做", expect=-1),
    _c("C12", "", "check", "MarkdownHeaderTextSplitter 的 strip_headers 默认值", "—", "从已安装的类签名读出"),
    _c("C13", "", "background", "嵌入模型输入上限", "—", "厂商文档中的数字，本机无法复测"),
    _c("C14", "", "check", "截断后向量是否变化", "—", "核对换掉模型读不到的尾巴后余弦相似度不低于 0.9999"),
    _c("C15", "", "level", "固定 512 的段落对齐率", "—", "单个数字：按水平规则比较；区间按文档整体重抽样",
       claimed=0.096, **_LEVEL),
    _c("C16", "", "level", "2048 窗口命中块里与答案无关的字符占比", "固定 k=5", "单个数字：按水平规则比较",
       claimed=0.94, **_LEVEL),
    _c("C17", "hit", "direction", _HIT, "固定 k=5",
       "原文只说 9 组全部成立、没有说用哪个指标；它的矩阵按命中率排名，所以主指标取 hit@5，"
       "用 9 组的平均差（每题先对 9 组取平均再配对）检验方向。边界质量（条款切断率）是 C21 的事"),
    _c("C18", "mean", "level", "recursive 512 的平均块长", "—", "单个数字：按水平规则比较", claimed=420.0, **_LEVEL),
    _c("C18", "max", "level", "recursive 512 的最长块", "—", "单个数字：按水平规则比较", claimed=1200.0, **_LEVEL),
    _c("C19", "precision", "level", "precision 之比（一段一块 / 2048）", "固定 k=5",
       "原文给的是倍数 9.2×：按水平规则比较倍数（此前只看方向）", claimed=9.2, **_LEVEL),
    _c("C19", "recall", "level", "recall 之比（一段一块 / 2048）", "固定 k=5",
       "原文给的是比例 68%：按水平规则比较（此前只看方向）", claimed=0.68, **_LEVEL),
    _c("C20", "", "check", "27 组矩阵的耗时", "—", "核对本机单进程在原文的 148 秒以内跑完"),
    _c("C21", "fixed", "level", "固定 512 的条款切断率", "—",
       "原文给的是两个数字：各按水平规则比较（此前只看方向）；区间按法规整体重抽样", claimed=0.186, **_LEVEL),
    _c("C21", "recursive", "level", "递归 512 的条款切断率", "—",
       "同上；0.9% 这样小的数字，水平规则对它很严", claimed=0.009, **_LEVEL),
    _c("C22", "", "check", "默认配置的四个旋钮", "—", "核对路由器 auto 的默认值是否与这组数一致"),
    _c("C23", "hit", "direction", _HIT, "固定 k=5",
       "“投入产出比最高”无法直接检验；可检验的部分是前缀提高命中率（预先指定的合并检验）"),
    _c("C23", "budget", "direction", _HIT, "同预算", "同上，在同预算尺子上"),
    _c("C24", "", "check", "候选集规模", "—", "核对分层候选集是否落在 40–60 组之内"),
    _c("C25", "", "check", "固定长度切分的参数约束", "—", "核对 overlap ≥ size 时循环不前进、chunklab 拒绝这种参数"),
    _c("C26", "", "direction", "hit（固定 k 下 2048 块对 512 块的优势减去同预算下的；第 5 章用固定切分，第 6 章用递归切分）",
       "固定 k 与同预算",
       "“固定 K 让大块占优”：差中差为正，即固定 k 比同预算更偏袒大块"),
    _c("C27", "", "check", "验收指标是否都能算", "—", "核对 7 项指标都由 evaluate 算出"),
    _c("C28", "", "check", "按 token id 切开多字节字符", "—", "核对直接切出现 U+FFFD、对齐字符边界后没有"),
    _c("C29", "", "check", "LangChain chunk_size 的单位", "—", "从已安装的类签名读出 length_function"),
    _c("C30", "by type", "direction", _HIT, "固定 k=5",
       "每种文档类型：推荐切法比递归 500 命中更多；几种类型一起做 Holm 校正"),
    _c("C30", "untested", "background", "论文、小说", "—", "语料里没有这两类文档：未检验的设计经验"),
]}


def criterion(cid: str, part: str = "") -> Criterion:
    """The declared criterion of a claim row; a clear error naming the known parts otherwise.

    >>> criterion("C6", "hit").claimed
    0.34
    >>> criterion("C6")
    Traceback (most recent call last):
    ...
    ValueError: claim C6 has no criterion for part '' (declared parts: 'hit')
    """
    if (cid, part) not in REGISTER:
        parts = [p for c, p in REGISTER if c == cid]
        if not parts:
            raise ValueError(f"claim {cid} has no declared criterion (see chunklab.book.criteria.REGISTER)")
        raise ValueError(f"claim {cid} has no criterion for part {part!r} (declared parts: "
                         f"{', '.join(repr(p) for p in parts)})")
    return REGISTER[cid, part]


def register_rows() -> list[tuple[str, str, str, str, str, str]]:
    """``(id, part, kind, primary metric, ruler, rule + why)`` for every entry, in claim order."""
    def order(key: tuple[str, str]) -> tuple[int, str]:
        return int(key[0][1:]), key[1]
    return [(c.cid, c.part or "—", c.kind, c.metric, c.ruler, f"{c.rule}。{c.why}")
            for _, c in sorted(REGISTER.items(), key=lambda kv: order(kv[0]))]


if __name__ == "__main__":  # pragma: no cover
    for row in register_rows():
        print(" | ".join(row))
