"""The one Chinese name of every strategy family, miss symptom and metric the book prints.

Each kind of name has one dict, keyed by the name the code uses:

- :data:`FAMILY_ZH` — the strategy families of :data:`chunklab.base.FAMILIES`, in that order;
- :data:`SYMPTOM_ZH` — the miss symptoms of :data:`chunklab.evaluation.SYMPTOMS`, in that order,
  and :data:`SYMPTOM_ADVICE_ZH` — for each, what to change first;
- :data:`METRIC_ZH` — the per-question metrics of :data:`chunklab.evaluation.METRICS` (and a few
  related measures).

:func:`zh` looks a name up and fails with a message that lists the known keys. A chapter that
needs a longer gloss ("容器是文档结构的特化") writes it in its prose; the names stay short.

It lives in :mod:`chunklab.viz` because the explorers print these names too and may not import the
book package; :mod:`chunklab.book.labels` re-exports it for the chapters.

>>> zh("family", "linguistic")
'语言学'
>>> zh("metric", "hit"), zh("metric", "hit_strict")
('命中率', '严格命中率')
>>> try:
...     zh("metric", "hitt")
... except KeyError as e:
...     print(e)  # doctest: +ELLIPSIS
no Chinese name for metric 'hitt' (did you mean 'hit'?); known: hit, hit_strict, mrr, ...
"""
from __future__ import annotations

import difflib
from typing import Mapping

__all__ = ["FAMILY_ZH", "SYMPTOM_ZH", "SYMPTOM_ADVICE_ZH", "METRIC_ZH", "LABELS", "UnknownLabel", "zh",
           "strategy_label"]

#: Strategy families, in the order of ``chunklab.base.FAMILIES``. Short names: "container" and
#: "code" are specialisations of document structure, "hierarchy" separates the retrieval unit from
#: the reading unit — chapters say so in prose rather than in the name.
FAMILY_ZH: dict[str, str] = {
    "geometric": "几何",
    "linguistic": "语言学",
    "structure": "文档结构",
    "container": "容器",
    "code": "代码",
    "semantic": "语义",
    "hierarchy": "层级",
}

#: Miss symptoms, in the order of ``chunklab.evaluation.SYMPTOMS`` (the order the rules are tried).
SYMPTOM_ZH: dict[str, str] = {
    "not_indexed": "未入索引",
    "too_small": "过碎",
    "cut": "被切断",
    "diluted": "被稀释",
    "crowded": "被挤出",
    "ranked_low": "排名靠后",
}

#: For each miss symptom, what to change first (chapter 1's diagnosis table, chapter 5's table).
SYMPTOM_ADVICE_ZH: dict[str, str] = {
    "not_indexed": "检查解析与清洗：证据所在的文字根本没进索引（扫描件先做 OCR，解析失败的文档要走回退链）",
    "too_small": "加大块长（调大 target / min），把短句并进段落、表格按行组切；或改用句子窗口 / 父子块把上下文带回来",
    "cut": "换结构感知的切法（标题树、条款、表格、AST），或加少量 overlap 作为补救；先看刀口落在哪里",
    "diluted": "先用 evaluation.diagnose 检验切小能否救回；确认后再减小块长、按标题或条款拆开大块，或小块检索、大块生成（父子块）",
    "crowded": "减少 overlap，检索后按文档与偏移去重；用上下文预算代替固定 k",
    "ranked_low": "多半不是切分的问题：加标题路径前缀、改写查询、换混合检索或加重排；先确认标注没有漏掉别处的同义答案",
}

#: Metrics, keyed by their names in ``chunklab.evaluation.METRICS`` (definitions there).
#:
#: "证据完整率" means ``complete_single`` and nothing else: the share of questions each of whose
#: gold spans lies whole inside one of the *retrieved* chunks. Everything inside the *union* of the
#: retrieved chunks is ``complete_union``, "并集完整率". The same share over *all* chunks, before any
#: retrieval, is the evidence ceiling, "证据完整上限" (``evidence_whole``, the audit item of that
#: name; it bounds ``complete_single`` at any k, for any retriever — not ``hit_strict``, which on a
#: question with several spans needs only one of them whole). "命中率" is ``hit`` (a retrieved chunk
#: holds at least half of any one gold span), "严格命中率" is ``hit_strict`` (it holds a whole span).
METRIC_ZH: dict[str, str] = {
    "hit": "命中率",
    "hit_strict": "严格命中率",
    "mrr": "MRR",
    "recall": "召回率",
    "complete_single": "证据完整率",
    "complete_union": "并集完整率",
    "precision": "字符精确率",
    "iou": "字符 IoU",
    "precision_omega": "完美召回下的精确率",
    "retrieved_chars": "取回字符数",
    "retrieved_tokens": "取回 token 数",
    "duplication": "上下文重复率",
    "cite_at_1": "引用定位：第 1 块与证据重叠",
    "cite_distance": "引用定位：第 1 块到证据的距离",
    "irrelevant_share": "命中块中无关字符占比",
    "n_retrieved": "取回块数",
    "evidence_whole": "证据完整上限",
}

#: The dicts by kind, for :func:`zh`.
LABELS: Mapping[str, Mapping[str, str]] = {
    "family": FAMILY_ZH,
    "symptom": SYMPTOM_ZH,
    "advice": SYMPTOM_ADVICE_ZH,
    "metric": METRIC_ZH,
}


class UnknownLabel(KeyError):
    """A kind or key :func:`zh` does not know (a ``KeyError`` whose message prints without quotes)."""

    def __str__(self) -> str:
        return str(self.args[0])


def _unknown(what: str, key: str, known) -> UnknownLabel:
    known = list(known)
    close = difflib.get_close_matches(str(key), known, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return UnknownLabel(f"no Chinese name for {what} {key!r}{hint}; known: {', '.join(known)}")


def zh(kind: str, key: str) -> str:
    """The Chinese name of ``key`` of one ``kind``: ``"family"``, ``"symptom"``, ``"advice"`` or ``"metric"``.

    Raises :class:`UnknownLabel` (a ``KeyError``) naming the known keys when either is unknown.

    >>> zh("symptom", "cut"), zh("family", "container")
    ('被切断', '容器')
    >>> try:
    ...     zh("colour", "red")
    ... except KeyError as e:
    ...     print(e)
    no Chinese name for kind 'colour'; known: family, symptom, advice, metric
    """
    table = LABELS.get(kind)
    if table is None:
        raise _unknown("kind", kind, LABELS)
    try:
        return table[key]
    except KeyError:
        raise _unknown(kind, key, table) from None


def strategy_label(strategy) -> str:
    """A strategy as a reader names it: its registered name and the parameters set away from the defaults.

    >>> from chunklab import get_strategy
    >>> strategy_label(get_strategy("auto", prefix=False, overlap=0))
    'auto（overlap=0, prefix=False）'
    >>> strategy_label(get_strategy("recursive"))
    'recursive（默认参数）'
    """
    changed = [f"{k}={v}" for k, v in strategy.changed_params().items()]
    return f"{strategy.name}（{', '.join(changed) if changed else '默认参数'}）"
