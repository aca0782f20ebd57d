"""Chapter 5 (evaluating chunking), sections 5.1-5.3 and the chapter's claims table.

The chapter loads 小北 once into a :class:`Lab` (documents, questions, one tokenised index, the
gold bounds) and hands it to the helpers of this module and of ``ch5_budget`` (5.4),
``ch5_stats`` (5.5-5.6), ``ch5_diagnose`` (5.7) and ``ch5_ops`` (5.8-5.9). Each helper returns plain
data: rows for a table, a dict of prose values (the chapter binds them with ``glue_all(..., "ch5_")``),
results the next section reuses.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...core import Chunk
from ...datasets import Corpus, load_corpus
from ...datasets.questions import load_questions, summarize
from ...evaluation import evaluate, paired_bootstrap
from ...evaluation.stats import paired_many
from ...length import count_tokens
from ...retrieval import CorpusIndex
from ... import get_strategy
from ...tools.audit import audit
from ..claims import claim_row, fmt_diff
from ..labels import zh


@dataclass
class Lab:
    """小北 loaded once: its documents, located questions, one BM25 index and the gold bounds."""

    corpus: Corpus
    questions: list
    index: CorpusIndex
    layout: Any
    gold: Any
    by_id: dict = field(default_factory=dict)

    @classmethod
    def load(cls, name: str = "xiaobei") -> "Lab":
        corpus = load_corpus(name)
        questions = load_questions(name, corpus)
        index = CorpusIndex(corpus.documents)          # tokenised once, reused by every configuration
        gold = index.layout.gold_bounds([q.spans for q in questions])
        return cls(corpus, questions, index, index.layout, gold, {q.id: q for q in questions})

    @property
    def docs(self):
        return self.corpus.documents

    def chunk(self, strategy: str, **params) -> tuple[list[Chunk], float]:
        """Chunk every document with one configuration; also return the ingest time in seconds."""
        s = get_strategy(strategy, **params)
        t = time.perf_counter()
        chunks = s.split_documents(self.docs)
        return chunks, time.perf_counter() - t

    def evaluate(self, chunks, **kw):
        """``evaluate`` on this corpus, its questions and its index (k = 5 unless given)."""
        kw.setdefault("k", 5)
        return evaluate(self.docs, chunks, self.questions, index=self.index, **kw)


# --------------------------------------------------------------------------------------------
# 5.1 chunk-level metrics
# --------------------------------------------------------------------------------------------

#: The two configurations of 5.1 and 5.3: the router's defaults (indexed with its breadcrumb) and
#: a fixed 512-character window with 128 characters of overlap.
AUTO, OVERLAP = "auto（路由默认）", "fixed 512 + overlap 128"
CONFIGS = {AUTO: ("auto", {}), OVERLAP: ("fixed", {"size": 512, "overlap": 128})}


@dataclass
class Two:
    """The chunks, ingest times and k = 5 results of :data:`CONFIGS`."""

    chunks: dict
    results: dict


def two_chunkings(lab: Lab) -> Two:
    chunks, results = {}, {}
    for label, (name, params) in CONFIGS.items():
        chunks[label], seconds = lab.chunk(name, **params)
        results[label] = lab.evaluate(chunks[label], use_context=(name == "auto"), ingest_seconds=seconds)
    return Two(chunks, results)


def _failed_docs(chunks) -> list[str]:
    return sorted({c.doc_id for c in chunks if c.meta.get("parse_failed")})


def block_table(two: Two) -> tuple[list, list]:
    """Rows and columns of the chunk-level table (no questions needed)."""
    rows = []
    for label, r in two.results.items():
        st = r.structure
        rows.append([f"`{label}`", st["chunks"], f"{st['len_mean']:.0f}", f"{st['len_median']:.0f}",
                     f"{st['len_p90']:.0f}", st["len_max"], f"{st['paragraph_alignment']:.1%}",
                     f"{st['overlap_inflation']:.2f}×",
                     f"{len(_failed_docs(two.chunks[label]))} 篇 / {st['chunk_parse_failure_rate']:.1%} 块",
                     f"{st['ingest_seconds'] * 1000:.0f} ms"])
    return rows, ["切法", "块数", "平均长", "中位数", "P90", "最长", "段落对齐率", "索引膨胀", "解析失败（回退）", "入库耗时"]


def parse_failures_item(lab: Lab):
    """The ``parse_failures`` item of ``chunklab audit`` on 小北 under the router's defaults."""
    return next(i for i in audit(lab.corpus, {"strategy": "auto", "use_context": True}) if i.name == "parse_failures")


def block_numbers(lab: Lab, two: Two, item) -> dict:
    """Prose values of 5.1; ``item`` is :func:`parse_failures_item`'s audit item."""
    auto, ovl = two.results[AUTO].structure, two.results[OVERLAP].structure
    failed = _failed_docs(two.chunks[AUTO])
    audit_failed = int(item.detail.split("（")[1].split("/")[0])
    if audit_failed != len(failed):
        raise AssertionError(f"audit counts {audit_failed} failed documents, the chunks {len(failed)}")
    return {"xb_docs": len(lab.docs), "xb_q": len(lab.questions), "ovl_infl": ovl["overlap_inflation"],
            "auto_align": auto["paragraph_alignment"], "ovl_align": ovl["paragraph_alignment"],
            "failed_docs": len(failed), "failed_first": failed[0] if failed else "（无）",
            "audit_failed": audit_failed}


# --------------------------------------------------------------------------------------------
# 5.2 the labelled set and its validation
# --------------------------------------------------------------------------------------------

#: A question file with three faulty lines, for ``python -m chunklab validate``.
BAD_QUESTIONS = [
    {"id": "ok-1", "question": "病假工资怎么算？",
     "evidence": "病假期间，公司按员工本人基本工资的 60% 发放病假工资", "type": "散文"},
    {"id": "typo-1", "question": "病假工资怎么算？",                 # 60% written as 70%: not in the corpus
     "evidence": "病假期间，公司按员工本人基本工资的 70% 发放病假工资", "type": "散文"},
    {"id": "vague-1", "question": "要走什么流程？", "evidence": "审批", "type": "条款"},   # occurs many times
    {"id": "key-1", "questoin": "报销时限是多久？", "evidence": "报销", "type": "FAQ"},    # misspelt key
]


def run_validate(questions: list[dict], corpus: str = "xiaobei") -> tuple[str, int]:
    """Write ``questions`` to a JSONL file and run ``python -m chunklab validate`` on it.

    Returns the command's output (the temporary path shown as ``<tmp>``) and its exit code.
    """
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "my_questions.jsonl")
        with open(path, "w", encoding="utf-8") as f:
            f.writelines(json.dumps(q, ensure_ascii=False) + "\n" for q in questions)
        run = subprocess.run([sys.executable, "-m", "chunklab", "validate", "--corpus", corpus, "--questions", path],
                             capture_output=True, text=True)
    if run.stderr:
        raise RuntimeError(run.stderr)
    return run.stdout.replace(tmp, "<tmp>"), run.returncode


def question_sets(lab: Lab, laws: Corpus, law_questions) -> tuple[list, list, dict]:
    """Rows and columns describing the two hand-written sets, and the prose values of 5.2."""
    sets = {"小北": summarize(lab.questions), "法律": summarize(law_questions)}
    types = sorted({t for s in sets.values() for t in s["by_type"]}, key=lambda t: -sets["小北"]["by_type"].get(t, 0))
    rows = [[name, s["questions"], s["evidence"]] + [s["by_type"].get(t, 0) for t in types]
            + [s["by_difficulty"].get("easy", 0), s["by_difficulty"].get("hard", 0)] for name, s in sets.items()]
    xb = sets["小北"]
    numbers = {"xb_min_type": min(xb["by_type"].values()), "xb_ntypes": len(xb["by_type"]),
               "xb_multi": sum(len(q.spans) > 1 for q in lab.questions), "law_q": len(law_questions),
               "xb_hard": xb["by_difficulty"]["hard"]}
    return rows, ["题集", "题数", "证据段数"] + types + ["easy", "hard"], numbers


# --------------------------------------------------------------------------------------------
# 5.3 every metric of one configuration (C27)
# --------------------------------------------------------------------------------------------

_C27_ROWS = [("hit", "pct"), ("hit_strict", "pct"), ("recall", "pct"), ("mrr", "f3"), ("complete_single", "pct"),
             ("complete_union", "pct"), ("precision", "f4"), ("iou", "f4"), ("precision_omega", "f4"),
             ("duplication", "pct"), ("retrieved_chars", "f0"), ("cite_at_1", "pct")]
_FMT = {"pct": "{:.1%}", "f3": "{:.3f}", "f4": "{:.4f}", "f0": "{:.0f}"}
#: auto − fixed 512 + overlap 128 on these five metrics: read together, one Holm family.
C27_GAP = ("hit", "precision", "precision_omega", "duplication", "cite_at_1")


def cut_example(lab: Lab, two: Two, f512) -> tuple[Any, Any]:
    """A question that fixed 512 misses because its evidence was cut, and auto does not miss; and its span."""
    r_f512 = lab.evaluate(f512)
    auto_missed = {b["question_id"] for b in two.results[AUTO].bad_cases}
    cut = next(b for b in r_f512.bad_cases if b["symptom"] == "cut" and b["question_id"] not in auto_missed)
    q = lab.by_id[cut["question_id"]]
    return q, q.spans[0]


def c27_table(two: Two) -> tuple[list, list]:
    """Every retrieval metric with its 95% interval, then the index and ingest rows, for both configurations."""
    rows = []
    for key, f in _C27_ROWS:
        cells = []
        for r in two.results.values():
            a = r.aggregate[key]
            cells.append(f"{_FMT[f].format(a['mean'])} [{_FMT[f].format(a['lo'])}, {_FMT[f].format(a['hi'])}]")
        rows.append([f"{zh('metric', key)} `{key}`"] + cells)
    rows.append([f"{zh('metric', 'cite_distance')}（中位数，字） `cite_distance`"]
                + [f"{np.nanmedian(r.per_question['cite_distance']):.0f}" for r in two.results.values()])
    for label, key, f in (("索引：块数", "chunks", "{}"), ("索引：总字数", "total_chars", "{:,}"),
                          ("索引膨胀", "overlap_inflation", "{:.2f}×"),
                          ("解析失败率（块）", "chunk_parse_failure_rate", "{:.1%}"),
                          ("入库耗时（秒）", "ingest_seconds", "{:.3f}")):
        rows.append([label] + [f.format(r.structure[key]) for r in two.results.values()])
    return rows, ["指标（95% 置信区间）"] + [f"`{k}`" for k in two.results]


def two_span_table(lab: Lab, two: Two) -> tuple[list, list]:
    """auto's hit, strict hit, completeness and recall on the questions with two evidence spans vs one."""
    r = two.results[AUTO]
    two_ = np.array([len(q.spans) == 2 for q in lab.questions])
    rows = [[f"{zh('metric', m)} `{m}`", f"{r.per_question[m][two_].mean():.1%}", f"{r.per_question[m][~two_].mean():.1%}"]
            for m in ("hit", "hit_strict", "complete_single", "complete_union", "recall")]
    return rows, ["指标", f"两段证据（{two_.sum()} 题）", f"一段证据（{(~two_).sum()} 题）"]


def c27_numbers(lab: Lab, two: Two) -> dict:
    """Prose values of 5.3: levels, the Holm-corrected gaps auto − overlap, the two-span questions."""
    r_auto, r_ovl = two.results[AUTO], two.results[OVERLAP]
    out: dict[str, Any] = {}
    for tag, r in (("auto", r_auto), ("ovl", r_ovl)):
        for key in ("hit", "precision", "iou", "duplication", "complete_single", "cite_at_1", "precision_omega"):
            out[f"{tag}_{key}"] = r.aggregate[key]["mean"]
    out["auto_rchars"] = r_auto.aggregate["retrieved_chars"]["mean"]
    gaps = paired_many({m: (r_auto.per_question[m], r_ovl.per_question[m]) for m in C27_GAP}, "holm")
    for key, res in gaps.items():
        res["metric"] = key                       # each comparison is on its own metric
        text = fmt_diff(res)
        if key in ("precision", "precision_omega"):   # shares of a few percent: four decimals, same suffix
            text = f"{res['diff']:+.4f} [{res['lo']:+.4f}, {res['hi']:+.4f}]" + text[text.index("]") + 1:]
        out[f"c27_gap_{key}"] = text
    out["c27_m"] = len(C27_GAP)
    cite = gaps["cite_at_1"]
    out["cite_note"] = ("：这一项固定窗口更好，校正后的区间整个在 0 以下。段落对齐率高的切法，引用定位未必更好" if cite["hi"] < 0
                        else "：这一项固定窗口略高，但校正后的区间含 0" if cite["diff"] < 0 else "")
    two_ = np.array([len(q.spans) == 2 for q in lab.questions])
    out["two_n"] = int(two_.sum())
    for m in ("hit", "hit_strict", "complete_union"):
        out[f"two_{m}"] = float(r_auto.per_question[m][two_].mean())
    same = np.array_equal(r_auto.per_question["hit"][two_], r_auto.per_question["hit_strict"][two_])
    out["two_strict_note"] = "，和命中率一样：这些题的命中都是有一块装下了一整段证据；命中而不完整的题，缺的是另一段" if same else ""
    out["two_gap"] = fmt_diff(paired_bootstrap(r_auto.per_question["hit"][two_], r_auto.per_question["complete_union"][two_]))
    return out


def c27_check(two: Two) -> dict[str, bool]:
    """Which of C27's seven acceptance items ``evaluate`` reports for auto."""
    r = two.results[AUTO]
    return {"证据完整率": "complete_single" in r.aggregate, "Recall@K": "recall" in r.aggregate,
            "引用定位": "cite_at_1" in r.aggregate, "上下文重复率": "duplication" in r.aggregate,
            "索引大小": {"chunks", "total_chars"} <= set(r.structure),
            "解析失败率": "chunk_parse_failure_rate" in r.structure,
            "入库耗时": r.structure.get("ingest_seconds") is not None}


def tokens_per_char(lab: Lab) -> dict:
    """cl100k tokens per character of 小北: the whole corpus (chapter 7's figure, inverted) and its prose only."""
    docs = lab.docs
    prose = "".join(d.text for d in docs if d.meta.get("type") != "python")
    return {"tpc_all": sum(count_tokens(d.text) for d in docs) / lab.corpus.text_chars,
            "tpc_prose": count_tokens(prose) / len(prose)}


# --------------------------------------------------------------------------------------------
# the chapter's claims table (C8, C26, C27)
# --------------------------------------------------------------------------------------------


def claim_rows(lab: Lab, two: Two, c26_rows: list, power: dict | None = None) -> list:
    """C8 (is our set above the floor), C26 (one row per retriever, from ``ch5_budget``), C27.

    ``power``: 5.5's numbers (``ch5_stats.power_experiment(...).numbers``), for C8's note on how many
    questions the book's smallest difference needs."""
    xb = summarize(lab.questions)
    need = c27_check(two)
    size = ("达到下限只是起点：按 5.5 节的粗算，要以 80% 的把握分辨 "
            f"{100 * power['delta_small']:.0f} 个点的差别，约要 {power['n_2pt']:,.0f} 道题；" if power else
            "达到下限只是起点：")
    c8 = claim_row("C8", "标注集规模与每类题数（我们的题集是否达到下限）", "50–200 题，每类 ≥ 20",
                   f"小北 {xb['questions']} 题，{len(xb['by_type'])} 类，每类 ≥ {min(xb['by_type'].values())}",
                   size + "题量按想分辨的最小差别定",
                   holds=xb["questions"] >= 50 and min(xb["by_type"].values()) >= 20)
    c27 = claim_row("C27", "验收指标：证据完整率、Recall@K、引用定位、上下文重复率、索引大小、解析失败率、入库耗时",
                    "7 项都要记录", f"{sum(need.values())} / {len(need)} 项由 evaluate 算出（5.3 节的表）",
                    "一次 evaluate 就能全记下、每项带区间；验收时别只看命中率", holds=all(need.values()))
    return [c8, *c26_rows, c27]
