"""Chapter 5, sections 5.8-5.9: access labels (filter before ranking) and the regression gate.

5.8 tags each chunk of fixed 512 with its document's department in ``meta["acl"]`` and simulates
three placements of the filter on one full-depth ranking: before ranking, after the top 5, and after
the top 20. 5.9 runs the repository's paired gate (passed in: it lives in the tests) on chapter 7's
final configuration under both rulers, hit@5 and the same-budget hit.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ...core import Chunk
from ...evaluation import bootstrap_ci, paired_bootstrap, question_metrics
from ...evaluation.stats import paired_many
from ... import get_strategy
from ..claims import fmt_diff, verdict
from .ch5 import Lab

# --------------------------------------------------------------------------------------------
# 5.8 access labels
# --------------------------------------------------------------------------------------------

#: A made-up access table by department; documents not listed are open to everyone ("all").
ACL = {
    "hr": ["employee_handbook", "benefits_policy", "faq_hr", "onboarding_guide", "remote_work_policy"],
    "finance": ["finance_reimbursement", "travel_expense_policy", "expense_faq_notice", "procurement_policy",
                "service_contract"],
    "it": ["it_policy", "faq_it", "infosec_policy", "internal_chat_it", "security_incident_procedure"],
    "engineering": ["product_release_notes", "training_notes_rag"],     # and billing/*, weekly_reports/*
}
_ENGINEERING_PREFIXES = ("billing/", "weekly_reports/")


def group_of(doc_id: str) -> str:
    """The access group of a document under :data:`ACL`."""
    if doc_id.startswith(_ENGINEERING_PREFIXES):
        return "engineering"
    return next((g for g, ids in ACL.items() if doc_id in ids), "all")


def tag(chunks) -> list[Chunk]:
    """The chunks with their documents' access group in ``meta["acl"]`` (text and context untouched)."""
    return [Chunk(c.doc_id, c.index, c.start, c.end, c.text, meta={**c.meta, "acl": group_of(c.doc_id)},
                  context=c.context) for c in chunks]


def users(lab: Lab) -> list[set]:
    """Each question's asker may read what is open to all and the groups of its evidence's documents."""
    return [{"all"} | {group_of(s.doc_id) for s in q.spans} for q in lab.questions]


GROUP_ZH = {"hr": "人事", "finance": "财务", "it": "IT", "engineering": "研发", "all": "全员可见"}


def acl_table(lab: Lab, tagged, allowed: list[set]) -> tuple[list, list]:
    """Per access group: its documents, chunks, one chunk's label and opening, and how many askers may read it."""
    rows = []
    for g in [*ACL, "all"]:
        docs = [d.id for d in lab.docs if group_of(d.id) == g]
        chunks = [c for c in tagged if c.meta["acl"] == g]
        rows.append([f"{GROUP_ZH[g]}（`{g}`）", len(docs), "、".join(docs[:3]) + ("……" if len(docs) > 3 else ""),
                     len(chunks), f'`meta["acl"] = "{chunks[0].meta["acl"]}"`：{chunks[0].text[:16]!r}',
                     sum(g in u for u in allowed)])
    return rows, ["权限组", "文档数", "文档（举例）", "块数", "一块的标签和开头", "能看这组的提问者（题数）"]


def filtered_hits(lab: Lab, result, chunks, allowed: list[set], mode: str, k: int = 5, fetch: int = 20):
    """hit@k and pieces handed over when the ranking is filtered by access group ``"before"`` ranking,
    ``"after"`` the top k, or after the top ``fetch`` (``"fetch"``)."""
    rows = np.full((len(lab.questions), k), -1, dtype=np.int64)
    for qi, row in enumerate(result.ranked):
        ok = [int(i) for i in row[: {"before": len(row), "after": k, "fetch": fetch}[mode]]
              if i >= 0 and chunks[i].meta["acl"] in allowed[qi]]
        rows[qi, :len(ok[:k])] = ok[:k]
    return question_metrics(rows, chunks, lab.gold, k=k, layout=lab.layout)["hit"], (rows >= 0).sum(axis=1)


MODES = {"before": "先过滤再排序", "fetch": "取前 20 → 过滤 → 留 5", "after": "先取前 5 再过滤"}


def acl_experiment(lab: Lab, tagged) -> tuple[dict, list, list, dict]:
    """Both retrievers (BM25; BM25 + e5), ranked to full depth, filtered three ways: results, rows, columns, hits."""
    allowed = users(lab)
    runs = {"BM25": lab.evaluate(tagged, depth=len(tagged)),
            "混合（BM25 + e5）": lab.evaluate(tagged, depth=len(tagged), engine="hybrid", embedder="e5-small")}
    hits, rows = {}, []
    for eng, r in runs.items():
        for mode, label in MODES.items():
            hits[eng, mode] = filtered_hits(lab, r, tagged, allowed, mode)
            rows.append([eng, label, f"{hits[eng, mode][0].mean():.1%}", f"{hits[eng, mode][1].mean():.2f}"])
    return runs, rows, ["检索器", "过滤放在哪", "命中率", "交给模型的平均块数"], hits


def acl_numbers(runs: dict, hits: dict) -> dict:
    """Filter first − filter after the top 5 (one Holm family over both retrievers) and − after the top 20
    (a second family)."""
    gap = paired_many({e: (hits[e, "before"][0], hits[e, "after"][0]) for e in runs}, "holm", metric="hit")
    fetch = paired_many({e: (hits[e, "before"][0], hits[e, "fetch"][0]) for e in runs}, "holm", metric="hit")
    out: dict[str, Any] = {}
    for eng, key in (("BM25", "bm25"), ("混合（BM25 + e5）", "hyb")):
        if not np.array_equal(hits[eng, "after"][0], runs[eng].per_question["hit"]):
            raise AssertionError("filtering after the top k must equal no filter at all")
        out.update({f"acl_{key}_before": float(hits[eng, "before"][0].mean()),
                    f"acl_{key}_after": float(hits[eng, "after"][0].mean()),
                    f"acl_{key}_gap": fmt_diff(gap[eng]), f"acl_{key}_v": verdict(gap[eng], expect=+1),
                    f"acl_{key}_left": float(hits[eng, "after"][1].mean()),
                    f"acl_{key}_none": runs[eng].aggregate["hit"]["mean"]})
    same = all(np.array_equal(hits[e, "before"][0], hits[e, "fetch"][0]) for e in runs)
    out["acl_fetch_text"] = ("命中率完全相同（BM25 和混合检索都是）" if same else
                             "，BM25 差 " + fmt_diff(fetch["BM25"]) + "（" + verdict(fetch["BM25"]) + "），混合检索差 "
                             + fmt_diff(fetch["混合（BM25 + e5）"]) + "（" + verdict(fetch["混合（BM25 + e5）"]) + "）")
    return out


# --------------------------------------------------------------------------------------------
# 5.9 the regression gate
# --------------------------------------------------------------------------------------------

#: Chapter 7's context budget: five chunks of its 512-character baseline.
BUDGET = 5 * 512
#: The repository's regression gate (chapter 5.9 shows it), found from the package, not from the
#: chapter's folder: a trainee's copy of the chapters (``make room``) lives elsewhere.
GATE_TEST = Path(__file__).resolve().parents[3] / "tests" / "test_regression_gate.py"

#: The configuration chapter 7's adoption rule ends with: the router without the breadcrumb prefix
#: and without overlap, nothing added to the index (chapter 7 checks the gate file against its own run).
FINAL = {"strategy": "auto", "params": {"prefix": False, "overlap": 0}, "use_context": False}
GATE_CASES = {"基线配置": FINAL,
              "auto，target=200": {**FINAL, "params": {"prefix": False, "overlap": 0, "target": 200}},
              "auto，target=800": {**FINAL, "params": {"prefix": False, "overlap": 0, "target": 800}},
              "fixed 256": {**FINAL, "strategy": "fixed", "params": {"size": 256}}}


def describe(config: dict) -> str:
    """A configuration of the gate in plain Chinese."""
    params = "，".join(f"{k}={v}" for k, v in config.get("params", {}).items()) or "默认参数"
    ruler = (f"同预算命中率（每题 {config['budget']} 字）" if config.get("budget")
             else f"命中率（{config.get('metric', 'hit')}@{config.get('k', 5)}）")
    return (f"{config['strategy']}（{params}），标题路径{'进' if config.get('use_context') else '不进'}索引，"
            f"尺子是{ruler}")


def _baseline(per_q: dict, n_boot: int = 2000, seed: int = 0, budget: int | None = None) -> dict:
    values = list(per_q.values())
    ci = bootstrap_ci(values, n=n_boot, seed=seed)
    cfg = {"metric": "hit", "k": 5, "n_boot": n_boot, "seed": seed, **({"budget": budget} if budget else {})}
    return {"config": cfg, "mean": ci["mean"], "lo": ci["lo"], "hi": ci["hi"], "n": len(values), "per_question": per_q}


def file_note(config: dict) -> str:
    """How the repository's gate file (its pinned ``config``) stands to the gate this section recommends."""
    same = (config.get("budget") == BUDGET and config.get("strategy") == FINAL["strategy"]
            and config.get("params") == FINAL["params"] and bool(config.get("use_context")) == FINAL["use_context"])
    if same:
        return "钉的正是第 7 章的最终配置，用同预算命中率判定，和下面的演示一致"
    return ("钉的是：" + describe(config) + "。配置不是第 7 章最后采纳的那一个，尺子也不是做决定用的那一把。"
            "下面的表会说明 hit@5 这把尺子在门禁里的毛病："
            "它能拦下明显的退步，却会拦下只是块变短、同样字数下没有测出变差的改动，漏掉块变长了的退步。"
            "按本书的尺子，门禁应当钉第 7 章的最终配置、用同预算命中率判定，也就是表里“配对门禁（同预算）”一列的做法")


def gate_demo(lab: Lab, gate: Callable, budget: int = BUDGET) -> tuple[list, list, dict]:
    """Each of :data:`GATE_CASES` against :data:`FINAL` through ``gate`` (the repository's paired gate):
    under hit@5, under the budget, and under the budget with the baseline's own interval only."""
    per_q, shown = {}, {}
    t = time.perf_counter()
    for name, cfg in GATE_CASES.items():
        chunks = get_strategy(cfg["strategy"], **cfg["params"]).split_documents(lab.docs)
        for ruler, extra in (("k", {}), ("b", {"budget": budget})):
            r = lab.evaluate(chunks, use_context=cfg["use_context"], n_boot=200, **extra)
            per_q[name, ruler] = dict(zip(r.question_ids, map(float, r.per_question["hit"])))
            shown[name, ruler] = (r.aggregate["hit"]["mean"], r.aggregate["retrieved_chars"]["mean"])
    seconds = time.perf_counter() - t
    base = {ruler: _baseline(per_q["基线配置", ruler], budget=budget if ruler == "b" else None) for ruler in ("k", "b")}
    marginal = {k: v for k, v in base["b"].items() if k != "per_question"}
    word = lambda ok: "通过" if ok else "拦下"
    rows, out = [], {}
    for name in GATE_CASES:
        k_ok, b_ok = gate(per_q[name, "k"], base["k"])[0], gate(per_q[name, "b"], base["b"])[0]
        m_ok = gate(per_q[name, "b"], marginal)[0]
        rows.append([name, f"{shown[name, 'k'][0]:.1%}（{shown[name, 'k'][1]:,.0f} 字）", word(k_ok),
                     f"{shown[name, 'b'][0]:.1%}（{shown[name, 'b'][1]:,.0f} 字）", word(b_ok), word(m_ok)])
        out[name] = (k_ok, b_ok, m_ok)
    ids = sorted(per_q["基线配置", "b"])
    # the difference each gate decided on: the gate's own paired bootstrap (one comparison per change)
    diffs = {ruler: {n: paired_bootstrap([per_q[n, ruler][q] for q in ids], [per_q["基线配置", ruler][q] for q in ids],
                                         n=2000, seed=0) for n in GATE_CASES if n != "基线配置"} for ruler in ("k", "b")}
    numbers = {"gate_budget": budget, "gate_mean": base["b"]["mean"], "gate_band": base["b"]["mean"] - base["b"]["lo"],
               "gate_floor": base["b"]["lo"], "gate_base_kchars": shown["基线配置", "k"][1], "gate_seconds": seconds,
               "gate_final": describe({**FINAL, "budget": budget}),
               "gate_n_configs": len(GATE_CASES)}
    caught = lambda ok: "放过了它" if ok else "拦下了它"
    for name, key in (("auto，target=200", "t200"), ("auto，target=800", "t800"), ("fixed 256", "f256")):
        numbers.update({f"gate_{key}_k": shown[name, "k"][0], f"gate_{key}_b": shown[name, "b"][0],
                        f"gate_{key}_kchars": shown[name, "k"][1],
                        f"gate_{key}_gap_k": fmt_diff(diffs["k"][name]), f"gate_{key}_gap_b": fmt_diff(diffs["b"][name]),
                        f"gate_{key}_k_word": caught(out[name][0]), f"gate_{key}_b_word": caught(out[name][1]),
                        f"gate_{key}_m_word": caught(out[name][2])})
    cols = ["配置", "命中率（hit@5）与交出字数", "配对门禁（hit@5）", f"同预算命中率（{budget} 字）与交出字数",
            "配对门禁（同预算）", "只看基线区间下沿（同预算）"]
    return rows, cols, numbers
