"""Chapter 4, §4.1 (code): functions cut or kept whole, long functions, the prefix, neighbours.

* :func:`function_cuts` checks every function and method of the Python corpora against the chunks
  of ``recursive`` and ``code`` at several targets (C5 "whole").
* :func:`long_function` splits ``evaluate_refund`` by tokens (C5 "long").
* :func:`code_retrieval` compares the four configurations under BM25 (fixed k=5 and a 4000-character
  budget) and the path-and-signature prefix under three retrievers on both corpora (C5 "prefix").
* :func:`call_neighbours` lists what a function's chunk does not carry: the functions it calls.
"""
from __future__ import annotations

import ast
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from ...base import get_strategy
from ...core import Document
from ...evaluation.stats import paired_many
from ...length import length_function
from ..claims import CHECK_ZH, fmt_diff, verdict
from .ch4 import corpora, rate, run, sign_test, split_corpus

__all__ = ["function_spans", "function_cuts", "long_function", "parse_failures", "CODE_CONFIGS",
           "code_retrieval", "code_numbers", "code_figure", "code_table_rows", "prefix_rows", "call_neighbours",
           "RETRIEVERS", "prefix_xb_notes"]

#: The four configurations of §4.1: label, strategy for Python files, whether ``context`` is indexed.
CODE_CONFIGS = [("recursive", ("recursive", {"target": 1500}), False),
                ("recursive + 标题前缀", ("recursive", {"target": 1500, "prefix": True}), True),
                ("code", ("code", {"target": 1500}), False),
                ("code + 路径签名前缀", ("code", {"target": 1500}), True)]

#: The retrievers the prefix is measured under: label and evaluation options. The two embedders are
#: the ones the other chapters use (ch1-ch3, ch5-ch7), so their embeddings are cached by the build.
RETRIEVERS = [("BM25", {}), ("USE 向量检索", {"engine": "dense", "embedder": "use-multilingual"}),
              ("e5 向量检索", {"engine": "dense", "embedder": "e5-small"})]


def function_spans(doc: Document) -> list[tuple[str, int, int]]:
    """``(name, start, end)`` of every function and method of a Python document, from its AST
    (decorators included); a file that does not parse has none.

    >>> function_spans(Document("m", "x = 1\\n\\ndef f(a):\\n    return a\\n"))
    [('f', 7, 29)]
    """
    try:
        tree = ast.parse(doc.text)
    except SyntaxError:
        return []
    lines = doc.text.splitlines(keepends=True)
    starts = np.cumsum([0] + [len(x) for x in lines])

    def pos(lineno, col):
        return int(starts[lineno - 1]) + len(lines[lineno - 1].encode()[:col].decode(errors="ignore"))

    out = []
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = n.decorator_list[0] if n.decorator_list else n
            out.append((n.name, pos(first.lineno, first.col_offset) - bool(n.decorator_list),
                        pos(n.end_lineno, n.end_col_offset)))
    return out


def function_cuts(docs: list[Document] | None = None, targets=(500, 1000, 1500)) -> dict[str, Any]:
    """For each target: how many functions fit in a chunk (length <= target), and how many of those
    ``recursive`` and ``code`` cut (no chunk holds the whole function); the cut ones are named.

    Returns ``rows`` (target, fit, recursive cut, code cut), ``cut_by_code`` ({target: [(doc id,
    function, length, (enclosing function, its length) or None)]}), ``n_files``, ``n_functions``,
    ``holds`` (code cut none at any target) and the prose values in ``numbers``.
    """
    docs = corpora().py_docs if docs is None else docs
    spans = {d.id: function_spans(d) for d in docs}
    rows, cut_by_code = [], {}
    for target in targets:
        strategies = {"recursive": get_strategy("recursive", target=target),
                      "code": get_strategy("code", target=target)}
        fit, cut, named = 0, {"recursive": 0, "code": 0}, []
        for d in docs:
            chunks = {name: s.split(d) for name, s in strategies.items()}
            for fname, a, b in spans[d.id]:
                if b - a > target:
                    continue
                fit += 1
                for name, cs in chunks.items():
                    whole = any(c.start <= a and b <= c.end for c in cs)
                    cut[name] += not whole
                    if name == "code" and not whole:
                        outer = min(((n, y - x) for n, x, y in spans[d.id] if x <= a and b <= y and y - x > b - a),
                                    key=lambda o: o[1], default=None)
                        named.append((d.id, fname, b - a, outer))
        rows.append((target, fit, cut["recursive"], cut["code"]))
        cut_by_code[target] = named
    numbers = {"py_files": len(docs), "n_functions": sum(len(v) for v in spans.values())}
    for target, fit, rec, code in rows:
        numbers.update({f"fit{target}": fit, f"rec_cut{target}": rec, f"rec_cut{target}_share": rec / fit if fit else 0.0,
                        f"code_cut{target}": code})
    first = next(((t, named[0]) for t, named in cut_by_code.items() if named), None)
    numbers["code_cut_example"] = (f"{first[1][0]} 模块里的 {first[1][1]}（{first[1][2]} 字）"
                                   if first else "")
    outer = first[1][3] if first else None
    numbers["code_cut_outer"] = (f"{outer[0]}（{outer[1]} 字）" if outer else "")
    numbers["code_cut_nested"] = sum(1 for named in cut_by_code.values() for c in named if c[3] is not None)
    numbers["code_cut_all"] = sum(len(named) for named in cut_by_code.values())
    numbers["whole_check"] = CHECK_ZH[all(r[3] == 0 for r in rows)]
    return {"rows": rows, "cut_by_code": cut_by_code, "n_files": len(docs),
            "n_functions": numbers["n_functions"], "holds": all(r[3] == 0 for r in rows), "numbers": numbers}


def long_function(doc: Document, name: str = "evaluate_refund") -> dict[str, Any]:
    """``name`` split by ``code`` with token lengths (cl100k, target 400, max 800): its parts, each
    part's tokens and first line, and whether every part's context carries the signature."""
    tokens = length_function("tokens")
    chunks = get_strategy("code", length="tokens", target=400, max=800).split(doc)
    parts = [c for c in chunks if c.meta.get("name") == name]
    a, b = next((a, b) for n, a, b in function_spans(doc) if n == name)
    rows = [(c.meta["part"], tokens(c.text), c.text.strip().splitlines()[0]) for c in parts]
    return {"chunks": chunks, "parts": parts, "rows": rows, "tokens": tokens(doc.text[a:b]),
            "n_parts": len(parts), "max_part": max(r[1] for r in rows),
            "with_sig": sum(f"{name}(" in c.context for c in parts)}


def parse_failures(docs: list[Document], strategy) -> dict[str, Any]:
    """Which Python files ``strategy`` could not parse, with the parser's message for each."""
    failed = {}
    for d in docs:
        if d.meta.get("type") != "python":
            continue
        chunks = strategy.split(d)
        if any(c.meta.get("parse_failed") for c in chunks):
            failed[d.id] = (len(chunks), chunks[0].meta.get("level"), chunks[0].meta.get("parse_error"))
    return {"n_files": sum(d.meta.get("type") == "python" for d in docs), "failed": failed}


def _code_chunks(spec, docs, other=None):
    name, params = spec
    s = get_strategy(name, **params)
    return split_corpus(docs, lambda d: s if other is None or d.meta.get("type") == "python" else other)


def code_retrieval() -> dict[str, Any]:
    """§4.1's measurements.

    ``results[(corpus, label, budget)]``: BM25, the four :data:`CODE_CONFIGS`, fixed k=5 (budget
    None) and a 4000-character budget; on 小北 the non-Python documents are cut by ``recursive`` 500.
    ``prefix[(retriever, corpus)]``: ``code`` with its context indexed vs not, 4000-character budget.
    Two families of comparisons, each Holm-corrected on its own: ``symbol`` (does cutting by symbol
    beat ``recursive``: stdlib k=5, stdlib budget, 小北 budget) and ``prefix`` (the prefix under
    three retrievers on two corpora).
    """
    cor = corpora()
    code_q = [q for q in cor.xb_questions
              if q.type == "代码" and cor.xb[q.spans[0].doc_id].meta.get("type") == "python"]
    rec500 = get_strategy("recursive", target=500)
    results, chunk_sets = {}, {}
    for label, spec, use_ctx in CODE_CONFIGS:
        chunk_sets[("stdlib", label)] = std_chunks = _code_chunks(spec, cor.std_docs)
        chunk_sets[("小北", label)] = xb_chunks = _code_chunks(spec, cor.xb_docs, rec500)
        for budget in (None, 4000):
            results[("stdlib", label, budget)] = run(cor.std_docs, cor.std_index, std_chunks,
                                                     cor.std_questions, use_ctx, budget)
            results[("小北", label, budget)] = run(cor.xb_docs, cor.xb_index, xb_chunks, code_q, use_ctx, budget)
    prefix_runs = {}
    for retriever, engine in RETRIEVERS:
        for corpus, docs, index, qs in (("stdlib", cor.std_docs, cor.std_index, cor.std_questions),
                                        ("小北", cor.xb_docs, cor.xb_index, code_q)):
            for use_ctx in (False, True):
                if not engine:
                    label = "code + 路径签名前缀" if use_ctx else "code"
                    prefix_runs[(retriever, corpus, use_ctx)] = results[(corpus, label, 4000)]
                else:
                    prefix_runs[(retriever, corpus, use_ctx)] = run(
                        docs, index, chunk_sets[(corpus, "code")], qs, use_ctx, 4000, **engine)

    def pq(corpus, label, budget):
        return results[(corpus, label, budget)].per_question["hit"]

    symbol = paired_many({
        "k5": (pq("stdlib", "recursive", None), pq("stdlib", "code", None)),
        "std": (pq("stdlib", "code + 路径签名前缀", 4000), pq("stdlib", "recursive", 4000)),
        "xbc": (pq("小北", "code + 路径签名前缀", 4000), pq("小北", "recursive", 4000)),
    }, "holm", metric="hit")
    prefix = paired_many({(r, c): (prefix_runs[(r, c, True)].per_question["hit"],
                                   prefix_runs[(r, c, False)].per_question["hit"])
                          for r, _ in RETRIEVERS for c in ("stdlib", "小北")}, "holm", metric="hit")
    up, down, exact = sign_test(prefix_runs[("BM25", "stdlib", True)].per_question["hit"],
                                prefix_runs[("BM25", "stdlib", False)].per_question["hit"])
    mean_len = {lab: float(np.mean([len(c) for c in chunk_sets[("stdlib", lab)]])) for lab in ("recursive", "code")}
    return {"results": results, "prefix_runs": prefix_runs, "symbol": symbol, "prefix": prefix,
            "code_q": code_q, "std_sign": (up, down, exact), "mean_len": mean_len}


def code_numbers(res: dict[str, Any]) -> dict[str, Any]:
    """The prose values of §4.1's retrieval part (bound by the chapter with ``glue_all``)."""
    out: dict[str, Any] = {"xb_code_q": len(res["code_q"]),
                           "std_len_rec": res["mean_len"]["recursive"], "std_len_code": res["mean_len"]["code"]}
    tags = {"recursive": "rec", "code": "code", "code + 路径签名前缀": "codectx"}
    for corpus, key in (("stdlib", "std"), ("小北", "xbc")):
        for label, tag in tags.items():
            for budget, btag in ((None, "k5"), (4000, "b4k")):
                r = res["results"][(corpus, label, budget)]
                out[f"{key}_{tag}_{btag}"] = rate(r)
                out[f"{key}_{tag}_{btag}_chars"] = rate(r, "retrieved_chars")
    for label, tag in tags.items():
        delivered = res["results"][("stdlib", label, 4000)].per_question["retrieved_chars"]
        out[f"std_{tag}_short"] = int((delivered < 4000).sum())
        out[f"std_{tag}_empty"] = int((delivered == 0).sum())
    empty = {out[f"std_{t}_empty"] for t in tags.values()}
    out["std_empty"] = (f"每种配置下都有 {empty.pop()} 道" if len(empty) == 1 else
                        "分别有 " + "、".join(str(out[f"std_{t}_empty"]) for t in tags.values()) + " 道")
    for name, r in res["symbol"].items():
        out[f"{name}_ci"], out[f"{name}_verdict"] = fmt_diff(r), verdict(r)
    keys = {"BM25": "bm25", "USE 向量检索": "use", "e5 向量检索": "e5"}
    for (retriever, corpus), r in res["prefix"].items():
        k = f"pre_{keys[retriever]}_{'std' if corpus == 'stdlib' else 'xb'}"
        out[f"{k}_ci"], out[f"{k}_verdict"] = fmt_diff(r), verdict(r)
        out[f"{k}_with"] = rate(res["prefix_runs"][(retriever, corpus, True)])
        out[f"{k}_without"] = rate(res["prefix_runs"][(retriever, corpus, False)])
    up, down, exact = res["std_sign"]
    out.update(pre_up=up, pre_down=down, pre_exact=exact)
    out.update(prefix_xb_notes(res["prefix"], len(res["code_q"])))
    return out


def prefix_xb_notes(prefix: dict, n_q: int) -> dict[str, str]:
    """The sentences after 小北's three prefix comparisons, worded from the results.

    ``pre_xb_lead``: whether the prefix changed the number of questions hit under every retriever.
    ``pre_xb_zero_note``: where not one question changed, the interval still has a width (stats'
    guard for few discordant questions), so "no change" is read as "cannot tell", not as "the same";
    where questions changed both ways and cancelled, it says how many.

    >>> r0 = {"diff": 0.0, "lo": -0.162, "hi": 0.162, "significant": False, "metric": "hit",
    ...       "discordant": (0, 0), "m": 6}
    >>> r1 = dict(r0, lo=-0.184, hi=0.184, discordant=(1, 1))
    >>> notes = prefix_xb_notes({("BM25", "小北"): r0, ("USE 向量检索", "小北"): r1}, 36)
    >>> notes["pre_xb_lead"]
    '在小北的计费代码上，两种检索器下加不加前缀，命中的题数都一样。'
    >>> print(notes["pre_xb_zero_note"])
    BM25 上一题都没有变，可这还不等于“等效”：36 道题里 0 道变化，区间仍是 ±16.2%——题这么少，这个范围内的任何差值，这批题都排除不了。USE 上变好、变坏的各 1 道，正好抵消。所以这只说明在这批题上看不出作用，不说明前缀没有作用。
    """
    xb = {name: r for (name, corpus), r in prefix.items() if corpus == "小北"}
    count = {2: "两", 3: "三"}.get(len(xb), str(len(xb)))
    if all(r["discordant"][0] == r["discordant"][1] for r in xb.values()):
        lead = f"在小北的计费代码上，{count}种检索器下加不加前缀，命中的题数都一样。"
    else:
        lead = "在小北的计费代码上，加不加前缀，命中的题数有的检索器下变了，差值见上。"
    same = {n: r for n, r in xb.items() if r["discordant"] == (0, 0)}
    cancel = {n: r["discordant"][0] for n, r in xb.items() if r["discordant"][0] == r["discordant"][1] > 0}
    note = ""
    if same:
        note = f"{'、'.join(n.split()[0] for n in same)} 上一题都没有变"
        if "等效" in {verdict(r) for r in same.values()}:
            note += "。"
        else:
            note += (f"，可这还不等于“等效”：{n_q} 道题里 0 道变化，区间仍是 ±{max(r['hi'] for r in same.values()):.1%}"
                     "——题这么少，这个范围内的任何差值，这批题都排除不了。")
    if cancel:
        note += "，".join(f"{n.split()[0]} 上变好、变坏的各 {k} 道" for n, k in cancel.items()) + "，正好抵消。"
    if note:
        note += "所以这只说明在这批题上看不出作用，不说明前缀没有作用。"
    return {"pre_xb_lead": lead, "pre_xb_zero_note": note}


def code_figure(res: dict[str, Any]):
    """Hit of the four configurations on both corpora, fixed k=5 vs a 4000-character budget."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.4), sharey=True)
    labels = [c[0] for c in CODE_CONFIGS]
    for ax, corpus in zip(axes, ("stdlib", "小北")):
        for j, budget in enumerate((None, 4000)):
            agg = [res["results"][(corpus, lab, budget)].aggregate["hit"] for lab in labels]
            means = [a["mean"] for a in agg]
            y = np.arange(len(labels)) + (0.2 if j else -0.2)
            ax.barh(y, means, height=0.38, color="#2563eb" if j else "#93c5fd",
                    label="固定 4000 字预算" if j else "固定 k=5")
            ax.errorbar(means, y, xerr=[[m - a["lo"] for m, a in zip(means, agg)],
                                        [a["hi"] - m for m, a in zip(means, agg)]],
                        fmt="none", color="black", capsize=3)
        ax.set_yticks(range(len(labels)), labels)
        ax.set_xlim(0, 1)
        ax.set_xlabel("命中率（横线：95% 区间）")
        ax.set_title("标准库代码题" if corpus == "stdlib" else "小北代码题")
    axes[0].invert_yaxis()
    handles, names = axes[0].get_legend_handles_labels()
    fig.legend(handles, names, loc="upper center", ncol=2, fontsize=9, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 0.9))
    return fig


def code_table_rows(res: dict[str, Any]) -> list[list[str]]:
    """One row per configuration: hit [interval] and characters delivered, for both corpora and rulers."""
    rows = []
    for label, _, _ in CODE_CONFIGS:
        row = [label]
        for corpus in ("stdlib", "小北"):
            for budget in (None, 4000):
                a = res["results"][(corpus, label, budget)].aggregate
                row.append(f"{a['hit']['mean']:.1%} [{a['hit']['lo']:.0%}, {a['hit']['hi']:.0%}]，"
                           f"{a['retrieved_chars']['mean']:.0f} 字")
        rows.append(row)
    return rows


def _defined(docs: list[Document]) -> dict[str, str]:
    """Function and method names defined in ``docs`` -> the file that defines them (first one)."""
    out: dict[str, str] = {}
    for d in docs:
        try:
            tree = ast.parse(d.text)
        except SyntaxError:
            continue
        for n in ast.walk(tree):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.setdefault(n.name, d.id)
    return out


def _calls(node: ast.AST) -> list[str]:
    names = []
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            f = n.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if name and name not in names:
                names.append(name)
    return names


def call_neighbours(doc: Document, docs: list[Document]) -> list[dict[str, Any]]:
    """For each top-level function and method of ``doc``: the functions of ``docs`` it calls that are
    defined outside its own span, with the file defining each. ``code`` keeps none of them in the
    chunk or its context: answering "what does X call / who calls X" needs a call graph.

    Each row: ``symbol`` (qualified name), ``calls`` [(name, defining doc id)].
    """
    defined = _defined(docs)
    tree = ast.parse(doc.text)
    rows = []

    def visit(body, prefix=""):
        for n in body:
            if isinstance(n, ast.ClassDef):
                visit(n.body, f"{prefix}{n.name}.")
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                own = {m.name for m in ast.walk(n) if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}
                calls = [(c, defined[c]) for c in _calls(n) if c in defined and c not in own]
                rows.append({"symbol": prefix + n.name, "calls": calls})

    visit(tree.body)
    return rows


def prefix_rows(res: dict[str, Any]) -> list[list[str]]:
    """The prefix comparisons: retriever, corpus, hit without and with the prefix, difference, verdict."""
    rows = []
    for (retriever, corpus), r in res["prefix"].items():
        runs = res["prefix_runs"]
        rows.append([retriever, "标准库" if corpus == "stdlib" else "小北",
                     f"{rate(runs[(retriever, corpus, False)]):.1%}", f"{rate(runs[(retriever, corpus, True)]):.1%}",
                     fmt_diff(r), verdict(r)])
    return rows
