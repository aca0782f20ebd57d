"""Chapter 7 (四周迭代): the four weeks' bookkeeping and the numbers the chapter's prose reads.

The chapter writes its adoption rule in a visible cell and hands it to :class:`Iteration`; the
iteration measures each week's single change under both rulers (hit@5 and the same-context
budget), compares it with the configuration in use (paired, Holm-corrected together), applies
the rule and keeps the configuration the rule adopted. The ``week*`` functions run one week and
return the values its prose shows (bind them with ``glue_all(values, "ch7_")``).

A rule is ``rule(p_budget, p_k, simpler) -> "adopt" | "refuse" | "need_more_data"``:
``p_budget``/``p_k`` are paired comparisons (candidate minus current) as
:func:`~chunklab.evaluation.stats.paired_many` returns them, ``simpler`` says whether the candidate
removes a mechanism (declared with the candidate, before it is measured).
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Callable, Sequence

import numpy as np

from chunklab.base import get_strategy
from chunklab.book.claims import VERDICT_ZH, fmt_diff, verdict
from chunklab.book.labels import zh
from chunklab.book.tables import table
from chunklab.datasets.questions import check_questions, summarize
from chunklab.evaluation import compare, evaluate
from chunklab.evaluation.diagnose import diagnose
from chunklab.evaluation.stats import EQUIVALENCE_MARGINS, decide, paired_bootstrap, paired_many
from chunklab.hierarchy import ParentChildIndex, ParentRanking
from chunklab.length import count_tokens
from chunklab.retrieval import CorpusIndex
from chunklab.strategies.container import find_tables
from chunklab.strategies.router import ROUTES, TYPE_NAMES
from chunklab.tools.versioning import chunk_corpus

__all__ = ["K", "TYPES", "OUTCOME_ZH", "RULERS", "Iteration", "setup_numbers", "question_table", "roles_table",
           "week1", "route_table", "week2", "week3", "week4", "apply_rule"]

K = 5
TYPES = ["条款", "表格", "代码", "FAQ", "对话", "散文"]
#: The rule's three outcomes, as the tables print them.
OUTCOME_ZH = {"adopt": "采纳", "refuse": "不采纳", "need_more_data": "暂不采纳（要更多题才分得出）"}
RULERS = {"k": "命中率（hit@5）", "b": "同预算命中率"}

W1_LABEL = "第 1 周 fixed 512 字"
TOKEN_LABEL = "（对照）fixed 512 token"
W2_LABEL = "第 2 周 auto 路由"
W3A_LABEL = "第 3 周a + 标题路径"
W3B_LABEL = "第 3 周b + 表格转写"
PC_A = "第 4 周 父 1200 / 子 200 token"
PC_B = "第 4 周 父 = 当前的块 / 子 200 字"
OVERLAP0 = "第 4 周 overlap 50 → 0"
CANDIDATES = [PC_A, PC_B, OVERLAP0]

_SMALL = "\n"   # the table prints the interval under the value


class Iteration:
    """One run of the four weeks on a corpus and its questions, judged by ``rule``.

    ``results[label]``: config, chunks, ``k`` (hit@5 result) and ``b`` (same-budget result);
    ``decisions[label]``: against, k, b (the deciding comparisons), simpler, outcome, adopted;
    ``current``: the label in use; ``after[week]``: the label in use at the end of that week.
    """

    def __init__(self, corpus: Any, rule: Callable[..., str], questions: Sequence[Any] | None = None,
                 k: int = K) -> None:
        self.corpus = corpus
        self.docs = list(corpus.documents)
        if questions is None:
            questions, self.problems = check_questions(corpus.name)
        else:
            self.problems = []
        self.qs = list(questions)
        self.index = CorpusIndex(self.docs)          # tokenised once, for every configuration
        self.k = k
        self.budget = k * 512                         # the baseline's context: 5 chunks of <= 512 characters
        self.rule = rule
        self.results: dict[str, dict] = {}
        self.decisions: dict[str, dict] = {}
        self.current: str | None = None
        self.after: dict[int, str] = {}
        self.diag: dict[int, Any] = {}

    # -- measuring ------------------------------------------------------------------------
    def measure(self, label: str, config: dict) -> dict:
        """Chunk the corpus as ``config`` says; evaluate at k=5 and at the fixed budget."""
        by_doc = chunk_corpus(config, self.docs)
        chunks = [c for d in self.docs for c in by_doc[d.id]]
        ctx = config.get("use_context", False)
        r_k = evaluate(self.docs, chunks, self.qs, k=self.k, index=self.index, use_context=ctx)
        r_b = evaluate(self.docs, chunks, self.qs, k=self.k, index=self.index, use_context=ctx, budget=self.budget)
        self.results[label] = {"config": config, "chunks": chunks, "k": r_k, "b": r_b}
        return self.results[label]

    def measure_parent_child(self, label: str, parent: Any, child: Any, use_context: bool) -> dict:
        """Search children, hand over parents (:class:`~chunklab.hierarchy.ParentRanking`), both rulers."""
        pc = ParentChildIndex(self.docs, parent=parent, child=child)
        engine = ParentRanking(pc, self.index, use_context=use_context)
        r_k = evaluate(self.docs, pc.parents, self.qs, k=self.k, engine=engine)
        r_b = evaluate(self.docs, pc.parents, self.qs, k=self.k, engine=engine, budget=self.budget)
        self.results[label] = {"config": None, "chunks": pc.parents, "k": r_k, "b": r_b, "index": pc,
                               "engine": engine}
        return self.results[label]

    def hit(self, label: str, lens: str = "k") -> dict:
        return self.results[label][lens].aggregate["hit"]

    def chars(self, label: str, lens: str = "k") -> float:
        """Mean characters handed to the reader per question (under the budget: what was delivered)."""
        return float(self.results[label][lens].aggregate["retrieved_chars"]["mean"])

    def pair(self, a: str, b: str, lens: str = "k", mask: Any = None) -> tuple:
        va, vb = self.results[a][lens].per_question["hit"], self.results[b][lens].per_question["hit"]
        return (va, vb) if mask is None else (va[mask], vb[mask])

    def rulers(self, pairs: Sequence[tuple[str, str]], mask: Any = None) -> dict:
        """Candidate-minus-current comparisons under both rulers, Holm-corrected together."""
        return paired_many({(a, lens): self.pair(a, b, lens, mask) for a, b in pairs for lens in ("k", "b")},
                           "holm", metric="hit")

    # -- deciding -------------------------------------------------------------------------
    def record(self, label: str, against: str, simpler: bool, family: dict | None = None) -> dict:
        """Compare ``label`` with ``against`` under both rulers and apply the rule."""
        family = family or self.rulers([(label, against)])
        p_k, p_b = family[label, "k"], family[label, "b"]
        outcome = self.rule(p_b, p_k, simpler)
        if outcome not in OUTCOME_ZH:
            raise ValueError(f"the rule must return one of {sorted(OUTCOME_ZH)}, got {outcome!r}")
        self.decisions[label] = {"against": against, "k": p_k, "b": p_b, "simpler": simpler,
                                 "outcome": outcome, "adopted": outcome == "adopt"}
        return self.decisions[label]

    def step(self, label: str, config: dict, simpler: bool = False) -> dict:
        """Measure one week's single change against the configuration in use and apply the rule."""
        self.measure(label, config)
        if self.record(label, self.current, simpler)["adopted"]:
            self.current = label
        return self.decisions[label]

    def cfg(self, label: str) -> dict:
        return self.results[label]["config"]

    # -- showing --------------------------------------------------------------------------
    def step_table(self, steps: Sequence[tuple[str, str | None]]):
        """One row per (label, label compared against or None): both rulers, the deciding intervals, the rule."""
        rows = []
        for label, prev in steps:
            control = self.rulers([(label, prev)]) if prev is not None else None
            decision = self.decisions.get(label)
            if decision is not None and decision["against"] != prev:
                decision = None                     # compared here with another configuration: a control row
            row = [label, len(self.results[label]["chunks"])]
            for lens in ("k", "b"):
                a = self.hit(label, lens)
                row.append(f"{a['mean']:.1%}{_SMALL}[{a['lo']:.1%}, {a['hi']:.1%}]")
                if prev is None:
                    row.append("—")
                else:
                    p = decision[lens] if decision is not None else control[label, lens]
                    row.append(f"{fmt_diff(p)}{_SMALL}{verdict(p)}")
                row.append(f"{self.chars(label, lens):.0f}")
            if decision is not None:
                row.append(OUTCOME_ZH[decision["outcome"]] + ("（更简单）" if decision["simpler"] else ""))
            else:
                row.append("—" if prev is None else "（对照，不参与）")
            rows.append(row)
        return table(rows, ["配置", "块数", "命中率（hit@5）", "配对差值", "交给模型的字数", "同预算命中率", "配对差值",
                            "交给模型的字数", "采纳规则"], align="lrrrrrrrl",
                     caption="命中率下面是 95% 区间；差值下面是判定，差值的区间是做判定的那个（Holm 校正时注明）；"
                             "“配对差值”是与当时的当前配置的差；“交给模型的字数”是每题的平均值。")

    def by_type(self, labels: Sequence[str], lens: str = "b"):
        """hit per question type, one row per configuration, with the characters handed over."""
        types = [q.type for q in self.qs]
        rows = []
        for label in labels:
            h = self.results[label][lens].per_question["hit"]
            rows.append([label] + [f"{np.mean([x for x, t in zip(h, types) if t == ty]):.1%}" for ty in TYPES]
                        + [f"{self.chars(label, lens):.0f}"])
        return table(rows, ["配置"] + [f"{t}（{types.count(t)} 题）" for t in TYPES] + ["交给模型的字数（每题平均）"],
                     caption=f"{RULERS[lens]}，按问题类型")

    def decision_values(self, key: str, label: str) -> dict:
        """The prose values of one decision: differences, verdicts and the rule's outcome."""
        d = self.decisions[label]
        return {f"{key}_dk": fmt_diff(d["k"]), f"{key}_db": fmt_diff(d["b"]), f"{key}_vk": verdict(d["k"]),
                f"{key}_vb": verdict(d["b"]), f"{key}_dec": OUTCOME_ZH[d["outcome"]],
                f"{key}_hit": self.hit(label)["mean"], f"{key}_bhit": self.hit(label, "b")["mean"]}


# ------------------------------------------------------------------------------------------
# The chapter's setup, its question set and the four weeks' plan
# ------------------------------------------------------------------------------------------

def setup_numbers(it: Iteration) -> dict:
    """Corpus, questions, budget and the rule's words, for the prose before week 1."""
    s = summarize(it.qs)
    return {"ndocs": len(it.docs), "budget": it.budget, "doc_ratio": 800 / len(it.docs),   # article 000: 800 PDFs
            "word_sup": VERDICT_ZH["supported"], "word_contra": VERDICT_ZH["contradicted"],
            "margin_pts": 100 * EQUIVALENCE_MARGINS["hit"],
            "nq": len(it.qs), "nprob": len(it.problems), "ntypes": len(s["by_type"]),
            "min_type": min(s["by_type"].values()), "nev": s["evidence"],
            "multi": sum(len(q.spans) > 1 for q in it.qs),
            "cpt": it.corpus.text_chars / sum(count_tokens(d.text) for d in it.docs)}


def question_table(it: Iteration):
    """Questions per type and difficulty."""
    types, diffs = [q.type for q in it.qs], [q.difficulty for q in it.qs]
    rows = []
    for t in TYPES:
        e = sum(1 for x, d in zip(types, diffs) if x == t and d == "easy")
        h = sum(1 for x, d in zip(types, diffs) if x == t and d == "hard")
        rows.append([t, e, h, e + h])
    rows.append(["合计", diffs.count("easy"), diffs.count("hard"), len(it.qs)])
    return table(rows, ["类型", "easy", "hard", "合计"])


#: Who does what in the four weeks. Article 000 staffs them with one algorithm engineer and one
#: engineer (no days per week survive in our copy of it); the business annotator is the book's addition.
ROLES = [
    ("第 1 周", "标注集 + 可复现的基线 + 失败清单",
     "业务：写题、从原文摘证据\n算法：基线、评测、按症状归因\n工程：把评测脚本接进仓库",
     "`check_questions` / `validate`；`evaluate`、`diagnose`；`eval`"),
    ("第 2 周", "按内容类型路由切分（一个 `chunk_size` → 每类一种切法）",
     "算法：路由规则与回退链\n工程：切分服务按类型分发",
     "`chunklab.route`、策略 `auto`；`compare`"),
    ("第 3 周", "块的上下文：标题路径；表格逐行转写（分两步判）",
     "算法：前缀与转写\n工程：索引加 context 字段、重建索引",
     "参数 `prefix`、评测选项 `use_context`；配置项 `transcribe_tables`"),
    ("第 4 周", "父子块与 overlap 的候选；版本绑定、增量重切、上线自检",
     "算法：候选对比\n工程：索引版本、增量重切、CI 里的 `audit`",
     "`ParentChildIndex`、`ParentRanking`；`index_version`、`plan_rechunk`；`audit`"),
]


def roles_table():
    return table(ROLES, ["周", "这一周只改的一件事", "谁做什么（文章：1 算法 + 1 工程；业务标注是本书加的）",
                         "在 chunklab 里"], align="llll")


# ------------------------------------------------------------------------------------------
# Week 1: the baseline and its misses
# ------------------------------------------------------------------------------------------

W1_CONFIG = {"strategy": "fixed", "params": {"size": 512}}


def week1(it: Iteration) -> dict:
    """Measure the baseline (and the token-window control), attribute its misses; the prose values."""
    it.measure(W1_LABEL, W1_CONFIG)
    it.current = W1_LABEL
    it.after[1] = W1_LABEL
    it.measure(TOKEN_LABEL, {"strategy": "token", "params": {"size": 512}})
    w1 = it.results[W1_LABEL]
    n_diff = int((w1["k"].per_question["hit"] != w1["b"].per_question["hit"]).sum())
    out = {"w1_same": "基线在两把尺子下的命中率相同：预算就是按它的 5 块定的。" if n_diff == 0 else (
        f"基线在两把尺子下的命中率几乎相同（{n_diff} 道题不同）：预算是按它的 5 块定的，"
        "但文档末尾的块不足 512 字，同预算时省下的字会装进排名在后面的块（放不下的截到剩下的字数）。")}
    h = it.hit(W1_LABEL)
    p_tok = it.rulers([(TOKEN_LABEL, W1_LABEL)])[TOKEN_LABEL, "k"]          # as in the table
    out.update(w1_hit=h["mean"], w1_lo=h["lo"], w1_hi=h["hi"], w1_bhit=it.hit(W1_LABEL, "b")["mean"],
               w1_bchars=it.chars(W1_LABEL, "b"), w1_chars=it.chars(W1_LABEL),
               tok_hit=it.hit(TOKEN_LABEL)["mean"], tok_d=fmt_diff(p_tok), tok_v=verdict(p_tok),
               tok_chunks=len(it.results[TOKEN_LABEL]["chunks"]), w1_chunks=len(w1["chunks"]),
               w1_top5_share=it.k / len(w1["chunks"]))
    # misses attributed by counterfactuals (chapter 5): re-retrieve each miss on a changed chunking
    diag = it.diag[1] = diagnose(w1["k"], it.docs, w1["chunks"], it.qs, index=it.index)
    sym = diag.symptoms
    n_miss = sum(sym.values())
    shown = sorted((s for s in sym if sym[s]), key=lambda s: -sym[s])
    boundary = sum(sym.get(s, 0) for s in ("not_indexed", "too_small", "cut", "diluted"))
    out.update(w1_miss=n_miss, w1_sym_list="；".join(f"{zh('symptom', s)}（`{s}`）{sym[s]} 题" for s in shown),
               w1_top=f"{zh('symptom', shown[0])}（`{shown[0]}`）", w1_top_n=sym[shown[0]],
               w1_geom=boundary, w1_geom_share=boundary / n_miss, w1_cut=sym.get("cut", 0),
               w1_diluted=sym.get("diluted", 0), w1_low=sym.get("ranked_low", 0),
               w1_rerank=sum(1 for b in diag.bad_cases if b["symptom"] == "ranked_low" and b["rerank"]))
    return out


def cut_table_row(it: Iteration, doc_id: str = "travel_expense_policy"):
    """The first table row of ``doc_id`` that no baseline chunk holds whole: (document, its chunks, row)."""
    doc = next(d for d in it.docs if d.id == doc_id)
    chunks = [c for c in it.results[W1_LABEL]["chunks"] if c.doc_id == doc_id]
    row = next(r for t in find_tables(doc.text) for r in t.rows
               if not any(c.start <= r.start and r.end <= c.end for c in chunks))
    return doc, chunks, row


# ------------------------------------------------------------------------------------------
# Week 2: routing by content type
# ------------------------------------------------------------------------------------------

def route_table(decisions: dict):
    """The router's decisions ({document id: RouteDecision}) counted by content type, with the fallback chain."""
    count = Counter(r.doc_type for r in decisions.values())
    rows = [[TYPE_NAMES[kind], n, " → ".join(ROUTES[kind]),
             f"`{next(i for i, r in decisions.items() if r.doc_type == kind)}`"] for kind, n in count.most_common()]
    return table(rows, ["判定的内容类型", "文档数", "首选切法 → 回退链", "例子"], align="lrll")


# ------------------------------------------------------------------------------------------
# Week 2: the step
# ------------------------------------------------------------------------------------------

W2_CONFIG = {"strategy": "auto", "params": {"prefix": False}}


def week2(it: Iteration) -> dict:
    """Routing instead of one window (adds a mechanism: not simpler); the prose values."""
    it.step(W2_LABEL, W2_CONFIG, simpler=False)
    it.after[2] = it.current
    w1, w2 = it.results[W1_LABEL], it.results[W2_LABEL]
    out = it.decision_values("w2", W2_LABEL)
    out.update(w2_chars=it.chars(W2_LABEL), w2_bchars=it.chars(W2_LABEL, "b"),
               w2_strict=w2["k"].aggregate["hit_strict"]["mean"], w1_strict=w1["k"].aggregate["hit_strict"]["mean"])
    p_strict = compare(w2["k"], w1["k"], metrics=("hit_strict",))["hit_strict"]   # one declared secondary comparison
    out.update(w2_strict_d=fmt_diff(p_strict), w2_strict_v=verdict(p_strict))
    diag = it.diag[2] = diagnose(w2["k"], it.docs, w2["chunks"], it.qs, index=it.index)
    out.update(w2_cut=diag.symptoms.get("cut", 0), w2_diluted=diag.symptoms.get("diluted", 0),
               w2_miss=sum(diag.symptoms.values()), w2_low=diag.symptoms.get("ranked_low", 0))
    # what week 2 actually rescued of week 1's boundary misses (same ruler as the attribution: hit@5)
    hit2 = dict(zip(w2["k"].question_ids, w2["k"].per_question["hit"]))
    boundary = [b["question_id"] for b in it.diag[1].bad_cases if b["symptom"] in ("cut", "diluted")]
    rescued = sum(1 for q in boundary if hit2[q] > 0)
    out.update(w2_rescued=rescued, w2_rescued_share=rescued / len(boundary) if boundary else float("nan"),
               w2_boundary=len(boundary))
    types = np.array([q.type for q in it.qs])
    # six types shown together: Holm-corrected among themselves; the printed interval is the deciding one
    gain = paired_many({t: it.pair(W2_LABEL, W1_LABEL, "b", mask=types == t) for t in TYPES}, "holm", metric="hit")
    best = max(gain, key=lambda t: gain[t]["diff"])
    sup = [t for t in TYPES if decide(gain[t]) == "supported"]
    out.update(w2_best=best, w2_best_d=fmt_diff(gain[best]), w2_best_v=verdict(gain[best]),
               w2_types_sup="、".join(sup) + f"这 {len(sup)} 类" if sup else "没有一类")
    return out


# ------------------------------------------------------------------------------------------
# Week 3: heading paths, then table transcriptions, judged one at a time
# ------------------------------------------------------------------------------------------

def week3(it: Iteration) -> dict:
    """Two context-only changes, each judged on its own (both add a mechanism); the prose values."""
    base = it.cfg(it.current)
    w3a = {**base, "params": {k: v for k, v in base.get("params", {}).items() if k != "prefix"}, "use_context": True}
    it.step(W3A_LABEL, w3a, simpler=False)
    w3b = {**it.cfg(it.current), "transcribe_tables": True, "use_context": True}   # transcriptions live in the context
    it.step(W3B_LABEL, w3b, simpler=False)
    it.after[3] = it.current
    out = {**it.decision_values("w3a", W3A_LABEL), **it.decision_values("w3b", W3B_LABEL)}
    against = it.decisions[W3B_LABEL]["against"]
    out.update(w3b_against=against, w3_after=it.after[3], w3_hit=it.hit(it.after[3])["mean"],
               w3_bhit=it.hit(it.after[3], "b")["mean"])
    n = sum(it.decisions[x]["adopted"] for x in (W3A_LABEL, W3B_LABEL))
    out["w3_story"] = {
        2: "两步都被采纳，第三周结束时的配置是路由 + 标题路径 + 表格转写。",
        1: f"只有一步被采纳：第三周结束时的配置是“{it.after[3]}”，另一步不进入后面的配置。",
        0: f"两步都没有被采纳：第三周结束时的配置仍是“{it.after[3]}”。后面几周不为没有测出的收益增加复杂度。",
    }[n]
    waiting = [x for x in (W3A_LABEL, W3B_LABEL) if it.decisions[x]["outcome"] == "need_more_data"]
    out["w3_waiting"] = ("" if not waiting else
                         "、".join(f"“{x}”" for x in waiting) + "是暂不采纳：区间的上端伸出了界值，可能有值得要的收益。"
                         "要分得出，就得加题（第 5 章 5.5 节的公式可以估要多少道）；本章不加题，按规则保持当前配置往下走。")
    # the table questions alone, both rulers corrected together
    table_q = np.array([q.type == "表格" for q in it.qs])
    rows = paired_many({lens: it.pair(W3B_LABEL, against, lens, mask=table_q) for lens in RULERS}, "holm",
                       metric="hit")
    it.results[W3B_LABEL]["table_rows"] = (table_q, rows)
    out.update(tab_n=int(table_q.sum()), tab_dk=fmt_diff(rows["k"]), tab_vk=verdict(rows["k"]),
               tab_db=fmt_diff(rows["b"]), tab_vb=verdict(rows["b"]))
    return out


def table_question_table(it: Iteration):
    """The table questions before and after the transcriptions, both rulers."""
    table_q, res = it.results[W3B_LABEL]["table_rows"]
    against = it.decisions[W3B_LABEL]["against"]
    rows = [(name, int(table_q.sum()), f"{it.results[against][lens].per_question['hit'][table_q].mean():.1%}",
             f"{it.results[W3B_LABEL][lens].per_question['hit'][table_q].mean():.1%}", fmt_diff(res[lens]),
             verdict(res[lens]), f"{it.results[W3B_LABEL][lens].per_question['retrieved_chars'][table_q].mean():.0f}")
            for lens, name in RULERS.items()]
    return table(rows, ["尺子", "表格题数", "转写前", "转写后", "配对差值 [区间]", "判定", "转写后交给模型的字数"])


def transcribed_chunk(it: Iteration, row: Any, doc_id: str = "travel_expense_policy"):
    """The week-3b chunk holding ``row`` (a table row cut in week 1)."""
    return next(c for c in it.results[W3B_LABEL]["chunks"]
                if c.doc_id == doc_id and c.start <= row.start and row.end <= c.end)


# ------------------------------------------------------------------------------------------
# Week 4: parent-child candidates and overlap, judged together
# ------------------------------------------------------------------------------------------

def week4_candidates(it: Iteration) -> list[tuple[str, bool]]:
    """Measure the three candidates against the configuration in use; (label, simpler) for each.

    Parent-child adds an index layer (not simpler); dropping overlap removes duplicated text (simpler).
    """
    base = it.cfg(it.current)
    params = base.get("params", {})
    it.measure_parent_child(PC_A, get_strategy("recursive", target=1200, length="tokens"),
                            get_strategy("recursive", target=200, length="tokens"), use_context=False)
    it.measure_parent_child(PC_B, get_strategy(base["strategy"], **params), get_strategy("recursive", target=200),
                            use_context=base.get("use_context", False))
    it.measure(OVERLAP0, {**base, "params": {**params, "overlap": 0}})
    return [(PC_A, False), (PC_B, False), (OVERLAP0, True)]


def week4_decide(it: Iteration, candidates: Sequence[tuple[str, bool]]) -> str | None:
    """Judge the candidates together (3 x 2 comparisons, Holm); adopt the passing one with the largest gain."""
    base = it.current
    family = it.rulers([(c, base) for c, _ in candidates])
    for c, simpler in candidates:
        it.record(c, base, simpler, family)
    passed = [c for c, _ in candidates if it.decisions[c]["adopted"]]
    adopted = max(passed, key=lambda c: it.decisions[c]["b"]["diff"]) if passed else None
    if adopted is not None and it.results[adopted]["config"] is not None:
        it.current = adopted
    it.after[4] = it.current
    return adopted


def _stop_fill(it: Iteration, label: str):
    """The same-budget result with the budget filled the old way (stop at the first chunk that does not fit)."""
    r = it.results[label]
    how = {"engine": r["engine"]} if "engine" in r else {
        "index": it.index, "use_context": (r["config"] or {}).get("use_context", False)}
    return evaluate(it.docs, r["chunks"], it.qs, k=it.k, budget=it.budget, budget_fill="stop", **how)


def week4(it: Iteration, adopted: str | None) -> dict:
    """The prose values of week 4 (after :func:`week4_decide`)."""
    base = it.after[3]
    out: dict[str, Any] = {}
    for key, label in (("pca", PC_A), ("pcb", PC_B), ("ov", OVERLAP0)):
        out.update(it.decision_values(key, label))
    pc = it.results[PC_A]
    out.update(pca_chars=it.chars(PC_A), w3_chars=it.chars(base), pca_bchars=it.chars(PC_A, "b"),
               w3_bchars=it.chars(base, "b"), pca_items_b=pc["b"].aggregate["n_retrieved"]["mean"],
               w3_items_b=it.results[base]["b"].aggregate["n_retrieved"]["mean"],
               pca_parent_len=float(np.mean([p.end - p.start for p in pc["index"].parents])))
    # the old fill (stop at the first chunk that does not fit): which part of the penalty was an under-filled budget
    old = {label: _stop_fill(it, label) for label in (base, *CANDIDATES)}
    d_new = np.subtract(*it.pair(PC_A, base, "b"))
    d_old = np.subtract(old[PC_A].per_question["hit"], old[base].per_question["hit"])
    shift = paired_bootstrap(d_new, d_old)                     # one declared secondary comparison
    # the rule's outcomes had the budget been filled the old way (the same six comparisons, corrected together)
    old_family = paired_many({**{(c, "k"): it.pair(c, base) for c in CANDIDATES},
                              **{(c, "b"): (old[c].per_question["hit"], old[base].per_question["hit"])
                                 for c in CANDIDATES}}, "holm", metric="hit")
    old_outcome = {c: it.rule(old_family[c, "b"], old_family[c, "k"], it.decisions[c]["simpler"]) for c in CANDIDATES}
    changed = [c for c in CANDIDATES if old_outcome[c] != it.decisions[c]["outcome"]]
    out["w4_fill_story"] = ("按旧装法，规则对三个候选的结论也一样。" if not changed else
                            "按旧装法，规则对" + "、".join(
                                f"“{c}”的结论会是“{OUTCOME_ZH[old_outcome[c]]}”，而不是现在的“"
                                f"{OUTCOME_ZH[it.decisions[c]['outcome']]}”" for c in changed)
                            + "：装满预算改变了决定。")
    out.update(pca_old_chars=old[PC_A].aggregate["retrieved_chars"]["mean"],
               pca_old_items=old[PC_A].aggregate["n_retrieved"]["mean"],
               w3_old_chars=old[base].aggregate["retrieved_chars"]["mean"],
               pca_old_diff=float(np.mean(d_old)), pca_fill_shift=fmt_diff(shift),
               pca_fill_note="：那时的劣势有一部分只是预算没装满" if shift["lo"] > 0 else
               "；区间含 0，这批题说明不了装法改变了劣势")
    # what dropping the overlap changes, measured: chunks that overlap their neighbour, characters indexed
    chunks_50, chunks_0 = it.results[base]["chunks"], it.results[OVERLAP0]["chunks"]
    overlapping = sum(1 for a, b in zip(chunks_50, chunks_50[1:]) if a.doc_id == b.doc_id and b.start < a.end)
    chars_50, chars_0 = (sum(c.end - c.start for c in cs) for cs in (chunks_50, chunks_0))
    d_ov = it.decisions[OVERLAP0]
    out.update(ov_overlapping=overlapping, ov_nchunks=len(chunks_50), ov_saved=chars_50 - chars_0,
               ov_saved_share=(chars_50 - chars_0) / chars_50, ov_b_lo_pts=-100 * d_ov["b"]["lo"],
               ov_b_hi_pts=100 * d_ov["b"]["hi"], ov_k_lo_pts=-100 * d_ov["k"]["lo"])
    out.update(overlap_reading(d_ov))
    if adopted is None:
        out["w4_story"] = ("三个候选都没有拿出规则要求的证据，于是不增加复杂度，把时间花在后面两件事上：索引版本与上线自检。"
                           "这不是说父子块没用：在章节很长、答案需要大段上下文的语料上，或生成端的上下文不那么紧张时，结论可能不同。")
    elif it.decisions[adopted]["simpler"]:
        out["w4_story"] = ("两个父子块候选没有拿出证据，不增加那一层索引；去掉 overlap 的候选走的是“不差且更简单”"
                           "那一支：它不是测出了收益，而是在事先登记的界值内没有测出值得在意的损失，换来一个更小、没有重复文字的索引。")
    else:
        out["w4_story"] = "它在同预算下拿出了规则要求的证据；代价是多一层索引（或多一个参数）要维护，下面的版本绑定与自检同样适用。"
    if adopted is None:
        out["w4_decision"] = "三个候选都不采纳，第三周结束时的配置就是最终配置"
    else:
        out["w4_decision"] = f"采纳「{adopted}」" + ("（更简单，且在同预算下最坏也不比当前配置差过界值）" if it.decisions[adopted]["simpler"]
                                                 and it.decisions[adopted]["b"]["lo"] <= 0 else "")
    return out


def overlap_reading(d: dict, margin: float = EQUIVALENCE_MARGINS["hit"]) -> dict:
    """How the overlap step's two intervals read against the margin (``d``: its decision):
    ``ov_within`` (the intervals against the margin) and ``ov_reading`` (what the outcome says)."""
    pts = f"{100 * margin:.0f}"
    b_ok, k_ok = d["b"]["lo"] >= -margin, d["k"]["lo"] >= -margin
    if b_ok and k_ok and d["b"]["hi"] <= margin and d["k"]["hi"] <= margin:
        within = f"两个区间都整个落在 ±{pts} 个点的界值之内"
    elif b_ok and k_ok:
        within = f"两个区间的下端都没有低于 −{pts} 个点的界值"
    elif b_ok and d["k"]["hi"] >= 0:
        within = (f"做决定的同预算区间，下端没有低于 −{pts} 个点的界值；hit@5 的区间下端低于界值，"
                  "但规则里 hit@5 只是护栏，整个区间落在 0 以下才拦下，这里没有")
    elif b_ok:
        within = f"做决定的同预算区间，下端没有低于 −{pts} 个点的界值；但 hit@5 的区间整个落在 0 以下，护栏拦下了它"
    else:
        within = f"但做决定的同预算区间，下端低于 −{pts} 个点的界值"
    if d["outcome"] == "refuse":
        reading = "区间说明去掉 overlap 会让命中率下降，按规则不采纳。"
    elif d["outcome"] == "need_more_data":
        reading = f"区间还容得下超过 {pts} 个点的损失，这批题说不清去掉 overlap 吃不吃亏，按规则暂不采纳、加题再量。"
    elif k_ok:
        reading = "这个结论没有说 overlap“没有作用”，说的是作用小到不值得保留这份重复。"
    else:
        reading = ("这个结论没有说 overlap“没有作用”，说的是在做决定的同预算尺子上，作用小到不值得保留这份重复；"
                   f"hit@5 上超过 {pts} 个点的损失，这批题还排除不了。")
    return {"ov_within": within, "ov_reading": reading}


def apply_rule(it: Iteration, rule: Callable[[dict, bool], Any]):
    """A reader's one-ruler rule (exercise 7.3) applied to this run's steps, beside the chapter's rule."""
    rows = []
    for label, d in it.decisions.items():
        theirs = rule(dict(d["b"]), d["simpler"])
        rows.append([label, fmt_diff(d["b"]), "是" if d["simpler"] else "否", OUTCOME_ZH.get(theirs, repr(theirs)),
                     OUTCOME_ZH[d["outcome"]]])
    return table(rows, ["这一步", "同预算配对差值", "更简单", "你的规则", "本章的规则（另有 hit@5 护栏）"], align="lrcll")
