"""Chapter 6 helpers, second half: the same readings under three retrievers (and by question
difficulty), the context prefix (C23), and the clause fallback chain.

Every function returns plain data (rows, dicts of prose values, figures, claim rows); the chapter
calls each in one line and binds the dict with :func:`chunklab.book.prose.glue_all`.
"""
from __future__ import annotations

import time
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from ... import get_strategy
from ...core import Document
from ...evaluation import EvalSettings, bootstrap_ci, evaluate, paired_bootstrap, structure_flags, structure_metrics
from ...evaluation.matrix import expand_grid
from ...evaluation.stats import paired_many
from ...strategies.linguistic import sentence_spans
from ...viz.fonts import use_cjk_font
from ..claims import claim_row, fmt_diff, verdict
from .ch6 import LAW_BUDGET, SIZES, chars_range, label

ENGINES = {"BM25": {"engine": "bm25"},
           "向量（USE）": {"engine": "dense", "embedder": "use-multilingual"},
           "混合（BM25 + USE）": {"engine": "hybrid", "embedder": "use-multilingual"}}
RULERS = {"固定 k": {}, "固定预算": {"budget": LAW_BUDGET}}
ENGINE_GRID = [{"strategy": "fixed", "size": list(SIZES), "overlap": 0},
               {"strategy": "recursive", "target": list(SIZES), "overlap": 0},
               {"strategy": "recursive", "target": 512, "overlap": 0.2},
               {"strategy": "recursive", "target": 512, "overlap": 0, "prefix": True}]
PREFIXED = "recursive(target=512, overlap=0, prefix=True)"
DIFFICULTY_ZH = {"easy": "容易题", "hard": "难题（问法与原文用词不同）"}


def engine_runs(docs, questions, index) -> dict[str, Any]:
    """Every config of :data:`ENGINE_GRID` under every retriever and ruler: ``results`` keyed by
    (retriever, ruler, label), the configs, seconds per retriever, characters embedded."""
    configs, _ = expand_grid(ENGINE_GRID)
    chunks = {c["label"]: get_strategy(c["strategy"], **c["params"]).split_documents(docs) for c in configs}
    results, seconds = {}, {}
    for e_name, e_opts in ENGINES.items():
        t = time.perf_counter()
        for c in configs:
            for ruler, r_opts in RULERS.items():
                s = EvalSettings(k=5, use_context=c["params"].get("prefix", False), n_boot=200, **e_opts, **r_opts)
                results[e_name, ruler, c["label"]] = evaluate(docs, chunks[c["label"]], questions, s, index=index)
        seconds[e_name] = time.perf_counter() - t
    embedded = sum(len(c.embed_text) for cs in chunks.values() for c in cs)
    return {"results": results, "configs": configs, "seconds": seconds, "embedded": embedded,
            "n_questions": len(questions)}


def engine_size_figure(runs) -> tuple[Any, list[list[Any]], list[str]]:
    """Hit over block length per retriever (one panel each): solid fixed k, dashed fixed budget."""
    use_cjk_font()
    eng = runs["results"]
    fig, axes = plt.subplots(1, 3, figsize=(12, 4.0), sharey=True)
    data = []
    for ax, e_name in zip(axes, ENGINES):
        for name, colour in (("fixed", "tab:gray"), ("recursive", "tab:blue")):
            for ruler, style in (("固定 k", "-"), ("固定预算", "--")):
                ys = [eng[e_name, ruler, label(name, n)].aggregate["hit"]["mean"] for n in SIZES]
                ax.plot(range(len(SIZES)), ys, style, marker="o", color=colour, label=f"{name}，{ruler}")
                data.append([e_name, f"`{name}`", ruler, *(f"{y:.3f}" for y in ys)])
        ax.set_xticks(range(len(SIZES)), [str(n) for n in SIZES])
        ax.set_xlabel("块长（字）")
        ax.set_title(e_name, fontsize=10)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("命中率")
    axes[0].legend(fontsize=8)
    fig.suptitle(f"劳动法规子集（{runs['n_questions']} 题）：块长在两把尺子下的走向", fontsize=11)
    fig.tight_layout()
    return fig, data, ["检索器", "切法", "尺子", *(f"{n} 档" for n in SIZES)]


def _hit(runs, e_name, ruler, lab):
    return runs["results"][e_name, ruler, lab].per_question["hit"]


#: The readings made under every retriever; each says "the first is better".
READINGS = {
    "切法：递归 − 固定（三档块长平均，固定 k）": lambda r, e: (
        np.mean([_hit(r, e, "固定 k", label("recursive", n)) for n in SIZES], axis=0),
        np.mean([_hit(r, e, "固定 k", label("fixed", n)) for n in SIZES], axis=0)),
    "块长：2048 − 512（递归，固定 k）": lambda r, e: (_hit(r, e, "固定 k", label("recursive", 2048)),
                                              _hit(r, e, "固定 k", label("recursive", 512))),
    "块长：2048 − 512（递归，固定预算）": lambda r, e: (_hit(r, e, "固定预算", label("recursive", 2048)),
                                               _hit(r, e, "固定预算", label("recursive", 512))),
    "overlap：20% − 0（递归 512，固定 k）": lambda r, e: (_hit(r, e, "固定 k", label("recursive", 512, 102)),
                                                   _hit(r, e, "固定 k", label("recursive", 512))),
    "前缀：开 − 关（递归 512，固定 k）": lambda r, e: (_hit(r, e, "固定 k", PREFIXED),
                                            _hit(r, e, "固定 k", label("recursive", 512))),
}


def engine_readings(runs) -> tuple[dict[str, dict], list[list[Any]], dict[str, Any]]:
    """The :data:`READINGS` under the three retrievers, all corrected together (Holm)."""
    tests = paired_many({f"{rd}｜{e}": fn(runs, e) for rd, fn in READINGS.items() for e in ENGINES}, "holm", metric="hit")
    rows = [[rd, *(f"{fmt_diff(tests[f'{rd}｜{e}']).replace('（', chr(10) + '（')}\n{verdict(tests[f'{rd}｜{e}'], expect=+1)}"
                   for e in ENGINES)] for rd in READINGS]
    eng = runs["results"]
    size_k = [tests[f"块长：2048 − 512（递归，固定 k）｜{e}"] for e in ENGINES]
    size_b = [tests[f"块长：2048 − 512（递归，固定预算）｜{e}"] for e in ENGINES]
    sig_any = {rd: [e for e in ENGINES if tests[f"{rd}｜{e}"]["significant"]] for rd in READINGS}
    signs = {rd: {np.sign(tests[f"{rd}｜{e}"]["diff"]) for e in ENGINES} for rd in READINGS}
    dense_prefix = tests[f"前缀：开 − 关（递归 512，固定 k）｜向量（USE）"]
    hybrid_prefix = tests[f"前缀：开 − 关（递归 512，固定 k）｜混合（BM25 + USE）"]
    numbers = {"eng_n": len(tests),
               "eng_size_dir": "三种检索器都是这样" if all(c["diff"] > 0 for c in size_k) and all(c["diff"] < 0 for c in size_b)
               else "并非三种检索器都是这样",
               "eng_size_k_range": f"{min(c['diff'] for c in size_k):+.1%} 到 {max(c['diff'] for c in size_k):+.1%}",
               "eng_size_b_range": f"{min(c['diff'] for c in size_b):+.1%} 到 {max(c['diff'] for c in size_b):+.1%}",
               "eng_b_chars": chars_range([eng[e, "固定预算", label("recursive", n)].aggregate["retrieved_chars"]["mean"]
                                           for e in ENGINES for n in (512, 2048)]),
               "eng_sig_readings": "；".join(f"“{r}”：{'、'.join(es)}" for r, es in sig_any.items() if es) or "没有一项",
               "eng_flip_text": "有显著结论的读法里，有的在另一种检索器下差值正负号相反，要逐条看"
               if any(len(signs[r]) > 1 for r, es in sig_any.items() if es)
               else "这几条显著的结论在三种检索器下差值的正负号都相同；随检索器变化的只是显著与否",
               "eng_method_sig": int(bool(sig_any["切法：递归 − 固定（三档块长平均，固定 k）"])),
               "eng_mixed": "、".join(r.split("：")[0] for r in READINGS if len(signs[r]) > 1) or "没有",
               "eng_marginal": sum(c["significant_marginal"] for c in tests.values()),
               "eng_sig": sum(c["significant"] for c in tests.values()),
               "eng_dense_prefix": fmt_diff(dense_prefix), "eng_dense_prefix_lo": dense_prefix["lo"], "eng_dense_prefix_v": verdict(dense_prefix, expect=+1),
               "eng_hybrid_prefix": fmt_diff(hybrid_prefix), "eng_hybrid_prefix_lo": hybrid_prefix["lo"],
               "eng_chars": "，".join(f"{e} {chars_range([eng[e, '固定预算', c['label']].aggregate['retrieved_chars']['mean'] for c in runs['configs']])}"
                                     for e in ENGINES)}
    for i, rd in enumerate(READINGS):
        numbers[f"eng_line{i}"] = "；".join(f"{e}：{verdict(tests[f'{rd}｜{e}'], expect=+1)}" for e in ENGINES)
    return tests, rows, numbers


ENGINE_COLUMNS = ["读法（每行的说法都是“前者更好”）", *ENGINES]


def by_difficulty(runs, questions, config: str = label("recursive", 512)) -> dict[str, Any]:
    """Hit of one config by question difficulty under the three retrievers and both rulers: a
    figure (bars with 95% intervals), the data beneath, and hybrid − BM25 and hybrid − vector per
    difficulty and ruler, corrected together (Holm)."""
    use_cjk_font()
    levels = [d for d in DIFFICULTY_ZH if any(q.difficulty == d for q in questions)]
    idx = {d: np.array([q.difficulty == d for q in questions]) for d in levels}
    fig, axes = plt.subplots(1, len(RULERS), figsize=(11, 3.8), sharey=True)
    data, pairs = [], {}
    width = 0.8 / len(ENGINES)
    for ax, ruler in zip(axes, RULERS):
        for j, e in enumerate(ENGINES):
            hits = np.asarray(_hit(runs, e, ruler, config), dtype=float)
            cis = [bootstrap_ci(hits[idx[d]]) for d in levels]
            ys = np.array([c["mean"] for c in cis])
            err = [ys - [c["lo"] for c in cis], np.array([c["hi"] for c in cis]) - ys]
            ax.bar(np.arange(len(levels)) + (j - 1) * width, ys, width, yerr=err, capsize=3, label=e)
            data += [[ruler, e, DIFFICULTY_ZH[d], int(idx[d].sum()), f"{c['mean']:.3f} [{c['lo']:.3f}, {c['hi']:.3f}]"]
                     for d, c in zip(levels, cis)]
        ax.set_xticks(range(len(levels)), [f"{DIFFICULTY_ZH[d].split('（')[0]}（{int(idx[d].sum())} 题）" for d in levels])
        ax.set_title(f"{ruler}：{config}", fontsize=10)
        ax.grid(axis="y", alpha=0.3)
        for d in levels:
            hy = np.asarray(_hit(runs, "混合（BM25 + USE）", ruler, config), dtype=float)[idx[d]]
            for other in ("BM25", "向量（USE）"):
                pairs[f"{ruler}｜{DIFFICULTY_ZH[d].split('（')[0]}｜混合 − {other}"] = (
                    hy, np.asarray(_hit(runs, other, ruler, config), dtype=float)[idx[d]])
    axes[0].set_ylabel("命中率（竖线为 95% 区间）")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    tests = paired_many(pairs, "holm", metric="hit")
    rows = [[*name.split("｜"), fmt_diff(c).replace("（", "\n（"), verdict(c, expect=+1)] for name, c in tests.items()]
    said = {n: n.replace("｜", "、", 1).replace("｜", "：") for n in tests}     # "固定 k、容易题：混合 − BM25"
    helps = [said[n] for n, c in tests.items() if c["significant"] and c["diff"] > 0]
    hurts = [said[n] for n, c in tests.items() if c["significant"] and c["diff"] < 0]
    numbers = {"diff_n": len(tests), "diff_helps": "；".join(helps) or "没有一项",
               "diff_hurts": "；".join(hurts) or "没有一项", "diff_nhelps": len(helps), "diff_nhurts": len(hurts),
               "diff_marginal": sum(c["significant_marginal"] for c in tests.values())}
    for d in levels:
        numbers[f"diff_q_{d}"] = int(idx[d].sum())
        for ruler in RULERS:
            for e, short in zip(ENGINES, ("bm25", "dense", "hybrid")):
                numbers[f"diff_{d}_{'k' if ruler == '固定 k' else 'b'}_{short}"] = float(
                    np.asarray(_hit(runs, e, ruler, config))[idx[d]].mean())
    for ruler in RULERS:
        for d in levels:
            for other in ("BM25", "向量（USE）"):
                c = tests[f"{ruler}｜{DIFFICULTY_ZH[d].split('（')[0]}｜混合 − {other}"]
                numbers[f"diff_t_{'k' if ruler == '固定 k' else 'b'}_{d}_{'bm25' if other == 'BM25' else 'dense'}"] = (
                    f"{fmt_diff(c)}，{verdict(c, expect=+1)}")
    numbers.update(_difficulty_prose(tests, numbers))
    return {"figure": fig, "data": data, "rows": rows, "numbers": numbers}


def _state(tests, level: str, other: str) -> tuple[str, list[str]]:
    """How hybrid − ``other`` on ``level`` reads under the two rulers: ``"both"`` (significantly
    better under both), ``"some"`` (under the rulers returned), ``"up"`` (point estimates higher,
    nothing significant) or ``"none"``."""
    cs = {r: tests[f"{r}｜{level}｜混合 − {other}"] for r in RULERS}
    helps = [r for r, c in cs.items() if c["significant"] and c["diff"] > 0]
    if helps:
        return ("both" if len(helps) == len(cs) else "some"), helps
    return ("up" if all(c["diff"] > 0 for c in cs.values()) else "none"), []


def _better(state: tuple[str, list[str]], than: str, unsure: str = "校正后不显著") -> str:
    """The end of "混合检索在……上…" for a :func:`_state`."""
    kind, rulers = state
    pre = " " if than[0].isascii() else ""              # "好于 BM25", "比 BM25 的"
    post = " " if than[-1].isascii() else ""
    return {"both": f"显著好于{pre}{than}", "some": f"在{'、'.join(rulers)}下显著好于{pre}{than}",
            "up": f"比{pre}{than}{post}的点估计高，但{unsure}", "none": f"与{pre}{than}{post}分不出高下"}[kind]


def _difficulty_prose(tests, numbers) -> dict[str, str]:
    """The sentences of 6.6's difficulty reading whose wording follows the verdicts: hybrid − vector
    on the easy questions, hybrid − BM25 on the hard ones, and whether hybrid is worse anywhere."""
    if not all(f"diff_q_{d}" in numbers for d in ("easy", "hard")):
        return {}
    easy, hard = (DIFFICULTY_ZH[d].split("（")[0] for d in ("easy", "hard"))
    dense, n_hard = "单用向量检索（USE）", numbers["diff_q_hard"]
    e, h = _state(tests, easy, "向量（USE）"), _state(tests, hard, "BM25")
    easy_sig, hard_sig = e[0] in ("both", "some"), h[0] in ("both", "some")
    if easy_sig:
        easy_text = f"容易题上，字面匹配已经够用，混合检索{_better(e, dense)}，好处是把向量检索漏掉的字面命中找回来"
    elif e[0] == "up":
        easy_text = (f"容易题上，字面匹配已经够用；混合检索比{dense}的点估计高，看上去是把向量检索漏掉的字面命中找了回来，"
                     "但校正后不显著，这批题还确认不了")
    else:
        easy_text = f"容易题上，字面匹配已经够用；混合检索{_better(e, dense)}"
    if e[0] == "up" and h[0] == "up":
        summary = f"混合检索在{easy}上比单用向量检索、在{hard}上比 BM25 的点估计都高，但校正后都不显著，这批题定不下来"
    else:
        summary = (f"混合检索在{easy}上{_better(e, '单用向量检索')}，在{hard}上"
                   + (_better(h, "BM25") if hard_sig or h[0] == "none" else "的优势这批题定不下来"))
    return {
        "diff_easy_text": easy_text,
        "diff_hard_text": (f"校正后混合检索{_better(h, 'BM25')}" if hard_sig
                           else f"但难题只有 {n_hard} 道，区间太宽，混合比 BM25 好多少这里定不下来"),
        "diff_hurts_text": ("这批题上混合检索没有在哪一类题上显著变差" if numbers["diff_nhurts"] == 0
                            else f"混合检索显著更差的是：{numbers['diff_hurts']}"),
        "diff_takeaway": (f"混合检索在{easy}上{_better(e, dense)}；在{hard}上"
                          f"{_better(h, 'BM25', unsure=f'这 {n_hard} 道题定不下来')}"),
        "diff_summary": summary,
    }


DIFFICULTY_DATA_COLUMNS = ["尺子", "检索器", "难度", "题数", "命中率与 95% 区间"]
DIFFICULTY_TEST_COLUMNS = ["尺子", "难度", "比较", "差值（Holm 校正）", "判定（混合更好）"]


def prefix_runs(corpora) -> tuple[list[list[Any]], Any, dict[str, Any]]:
    """Prefix on − off for several (corpus, strategy) runs: hit@5 (5 under Holm) and MRR (its own
    5 under Holm); the C23 row judged on one pre-declared pooled test. ``corpora`` maps a corpus
    name to ``(corpus, questions, index, [(strategy, params), ...])``."""
    res, labels = {}, []
    for cname, (corpus, qs, idx, runs) in corpora.items():
        for name, params in runs:
            lab = f"{cname} {name} {' '.join(f'{k}={v}' for k, v in params.items())}".strip()
            labels.append(lab)
            for prefix in (False, True):
                chunks = get_strategy(name, prefix=prefix, **params).split_documents(corpus.documents)
                res[lab, prefix] = evaluate(corpus.documents, chunks, qs, k=5, index=idx, use_context=prefix, n_boot=500)
    hit = paired_many({x: (res[x, True].per_question["hit"], res[x, False].per_question["hit"]) for x in labels},
                      "holm", metric="hit")
    mrr = paired_many({x: (res[x, True].per_question["mrr"], res[x, False].per_question["mrr"]) for x in labels},
                      "holm", metric="mrr")
    rows = [[x, f"{res[x, False].aggregate['hit']['mean']:.3f} → {res[x, True].aggregate['hit']['mean']:.3f}",
             fmt_diff(hit[x]).replace("（", "\n（"), verdict(hit[x], expect=+1), fmt_diff(mrr[x], pct=False).replace("（", "\n（")]
            for x in labels]
    pooled = {flag: np.concatenate([np.mean([res[x, flag].per_question["hit"] for x in labels if x.startswith(c)], axis=0)
                                    for c in corpora]) for flag in (True, False)}
    c23 = paired_bootstrap(pooled[True], pooled[False], metric="hit")
    sig_pos = sum(c["significant"] and c["diff"] > 0 for c in hit.values())
    sig_neg = sum(c["significant"] and c["diff"] < 0 for c in hit.values())
    n_q = {c: len(v[1]) for c, v in corpora.items()}
    row = claim_row("C23", "上下文前缀是矩阵里投入产出比最高的一项（可检验的部分：前缀提高 hit@5）", "最高",
                    f"平均差 {fmt_diff(c23)}；{len(hit)} 组里 Holm 校正后显著提升 {sig_pos} 组、显著下降 {sig_neg} 组",
                    "用 BM25 时前缀可以默认打开（成本几乎为零），但别指望它多命中几题；向量检索或混合检索上先自己量（6.6 节）。"
                    f"判定用一个预先指定的合并检验（{'、'.join(f'{c} {n} 题' for c, n in n_q.items())}），原文未给出数字",
                    part="hit", result=c23)
    small, large = hit["小北 recursive target=128"], hit["小北 recursive target=512"]
    numbers = {"pre_n": len(hit), "pre_sigpos": sig_pos, "pre_signeg": sig_neg,
               "pre_marginal": sum(c["significant_marginal"] and c["diff"] > 0 for c in hit.values()),
               "pre_max": fmt_diff(max(hit.values(), key=lambda c: c["diff"])),
               "pre_min_lo": min(c["lo"] for c in hit.values()),
               "pre_mrr_sigpos": sum(c["significant"] and c["diff"] > 0 for c in mrr.values()),
               "pre_mrr_signeg": sum(c["significant"] and c["diff"] < 0 for c in mrr.values()),
               "pre_mrr_max": fmt_diff(max(mrr.values(), key=lambda c: c["diff"]), pct=False),
               "pre_small": fmt_diff(small), "pre_large": fmt_diff(large),
               "pre_small_overlaps": int(small["diff"] > large["diff"] and small["lo"] < large["hi"]),
               "c23": fmt_diff(c23), "c23_verdict": row.verdict}
    return rows, row, numbers


PREFIX_COLUMNS = ["语料与切法", "hit@5（无前缀 → 有前缀）", "Δ hit@5（Holm 校正）", "判定（前缀更好）", "Δ MRR（次要，Holm 校正）"]

#: The two fallback chains compared (clause, max 512).
CHAINS = {"条款 → 递归 → 固定": ("recursive", "fixed"), "条款 → 固定（缺递归一级）": ("fixed",)}
CHAIN_MAX = 512


def fallback_chains(docs, questions, index) -> dict[str, Any]:
    """``clause`` (target 500, max 512) with the full chain and without its recursive level: table
    rows, the chunks, and the counts that reconcile the long articles with the cut articles."""
    long = {d.id: [(a["start"], a["end"]) for a in d.meta["articles"] if a["end"] - a["start"] > CHAIN_MAX]
            for d in docs}
    sentence_docs = [Document(d.id, d.text, d.title,
                              {"articles": [s for a, b in long[d.id] for s in sentence_spans(d.text, a, b)]})
                     for d in docs]       # the sentences inside over-long articles, measured as "articles"
    # one entry per non-blank article, in the order of structure_flags' "cut" flags
    arts = [(d.id, a["start"], a["end"]) for d in docs for a in d.meta.get("articles", ())
            if d.text[a["start"]:a["end"]].strip()]
    is_long = np.array([e - s > CHAIN_MAX for _, s, e in arts])
    # entries the dataset could not number as "第X条" (amendments, decisions): "条目…" / "全文"
    unnumbered = np.array([not str(a.get("number", "")).startswith("第") for d in docs
                           for a in d.meta.get("articles", ()) if d.text[a["start"]:a["end"]].strip()])
    chunks, rows, numbers = {}, [], {}
    for i, (name, fallback) in enumerate(CHAINS.items()):
        cs = get_strategy("clause", target=500, max=CHAIN_MAX, fallback=fallback).split_documents(docs)
        chunks[name] = cs
        r = evaluate(docs, cs, questions, k=5, index=index, n_boot=500)
        sm = structure_metrics(sentence_docs, cs)
        cut = np.asarray(structure_flags(docs, cs)["cut"], dtype=bool)
        levels = [c.meta.get("level") for c in cs]
        rows.append([name, levels.count("recursive"), levels.count("fixed"), f"{cut.mean():.2%}",
                     int((cut & is_long).sum()), int((cut & ~is_long).sum()), f"{sm['clause_cut_rate']:.1%}",
                     f"{r.aggregate['hit']['mean']:.3f}"])
        key = "full" if i == 0 else "gap"
        numbers.update({f"{key}_cut": float(cut.mean()), f"{key}_cut_long": int((cut & is_long).sum()),
                        f"{key}_cut_short": int((cut & ~is_long).sum()), f"sent_{key}": sm["clause_cut_rate"],
                        f"{key}_cut_short_unnumbered": int((cut & ~is_long & unnumbered).sum()),
                        f"{key}_fallback_chunks": sum(bool(c.meta.get("fallback_from")) for c in cs)})
        numbers[f"{key}_hit"] = r.per_question["hit"]
    c = paired_bootstrap(numbers.pop("gap_hit"), numbers.pop("full_hit"), metric="hit")
    numbers.update({"long_n": int(is_long.sum()), "long_share": float(is_long.mean()), "n_articles": len(arts),
                    "n_unnumbered": int(unnumbered.sum()),
                    "chain_dhit": fmt_diff(c), "chain_v": verdict(c, expect=-1)})
    return {"rows": rows, "chunks": chunks, "long": long, "numbers": numbers}


CHAIN_COLUMNS = [f"回退链（clause, max={CHAIN_MAX}）", "递归级切出的块", "固定级切出的块", "条款切断率",
                 f"被切断的条款：超过 {CHAIN_MAX} 字的", "被切断的条款：不超过的", "超长条款内的句子切断率", "hit@5"]
