"""Chapter 3 exercises: merging overlapping hits, small-to-big under a budget, index inflation.

* ``ex3-merge`` — merge retrieved spans of the same document that overlap or touch, keeping rank
  order (article 000 §3.1: de-duplicate and merge by document after retrieval).
* ``ex3-parents`` — map ranked child hits to their parents, each parent once, until a token budget
  is spent (claim C4; the same rule as :meth:`chunklab.hierarchy.ParentChildIndex.retrieve`).
* ``ex3-inflation`` — index inflation and the share of duplicated characters, from real spans
  (claims C3, C11; the same numbers as ``structure_metrics(...)["overlap_inflation"]``).
"""
from __future__ import annotations

import math

from hypothesis import strategies as st

from . import Exercise, Failure, exercise, property_check

# --------------------------------------------------------------------------------------------
# ex3-merge
# --------------------------------------------------------------------------------------------


def _reference_merge(hits):
    """Merge spans of one document that overlap or touch; a passage keeps its best rank."""
    passages: list[list] = []          # [doc_id, start, end], in rank order of their first member
    for doc_id, start, end in hits:
        touching = [p for p in passages if p[0] == doc_id and p[1] <= end and start <= p[2]]
        if not touching:
            passages.append([doc_id, start, end])
            continue
        keep = touching[0]             # the best-ranked of the passages it joins
        keep[1] = min([start] + [p[1] for p in touching])
        keep[2] = max([end] + [p[2] for p in touching])
        gone = {id(p) for p in touching[1:]}
        passages = [p for p in passages if id(p) not in gone]
    return [tuple(p) for p in passages]


def _as_spans(result, what="merge_hits"):
    try:
        out = [(str(d), int(s), int(e)) for d, s, e in result]
    except (TypeError, ValueError):
        raise Failure(f"{what} 应返回 (doc_id, start, end) 三元组的列表，例如 [('手册', 0, 120)]。") from None
    return out


def _merge_examples(candidate) -> None:
    cases = [
        ([("手册", 0, 10), ("手册", 8, 20), ("合同", 0, 5)], [("手册", 0, 20), ("合同", 0, 5)],
         "同一文档里重叠的两段应合并成一段"),
        ([("手册", 0, 5), ("手册", 5, 9)], [("手册", 0, 9)],
         "首尾相接（前一段的 end 等于后一段的 start）的两段是连续的原文，也应合并"),
        ([("手册", 0, 5), ("合同", 2, 6)], [("手册", 0, 5), ("合同", 2, 6)],
         "不同文档的片段即使偏移量重叠也不能合并"),
        ([("合同", 0, 5), ("手册", 0, 5), ("合同", 3, 8)], [("合同", 0, 8), ("手册", 0, 5)],
         "合并后的段落应排在它最靠前成员的名次上（不要按文档或偏移量重新排序）"),
        ([("手册", 0, 5), ("手册", 10, 15), ("手册", 4, 11)], [("手册", 0, 15)],
         "后来的片段把前面两段连了起来时，三段应合成一段"),
        ([("手册", 10, 20), ("手册", 12, 15)], [("手册", 10, 20)],
         "被已有段落完全包含的片段不产生新段落"),
        ([], [], "没有命中时返回空列表"),
    ]
    for hits, want, why in cases:
        got = _as_spans(candidate(list(hits)))
        if got != want:
            raise Failure(f"{why}：merge_hits({hits}) 应得到 {want}，你的结果是 {got}。")


_hit = st.tuples(st.sampled_from(["手册", "合同"]), st.integers(0, 40), st.integers(1, 12)).map(
    lambda t: (t[0], t[1], t[1] + t[2]))


def _merge_properties(candidate) -> None:
    def prop(hits):
        got = _as_spans(candidate(list(hits)))
        for doc in {d for d, _, _ in hits} | {d for d, _, _ in got}:
            want_chars = {p for d, s, e in hits if d == doc for p in range(s, e)}
            got_chars = {p for d, s, e in got if d == doc for p in range(s, e)}
            if got_chars != want_chars:
                extra, lost = sorted(got_chars - want_chars), sorted(want_chars - got_chars)
                raise Failure(f"输入 {hits}：文档 {doc!r} 的字符集合变了"
                              f"（多出 {extra[:5]}，丢失 {lost[:5]}）。合并只能去掉重复，不能丢字也不能添字。")
            mine = sorted((s, e) for d, s, e in got if d == doc)
            for (s1, e1), (s2, e2) in zip(mine, mine[1:]):
                if s2 <= e1:
                    raise Failure(f"输入 {hits}：结果里同一文档 {doc!r} 的 ({s1}, {e1}) 和 ({s2}, {e2}) "
                                  "仍然重叠或相接，应合并成一段。")
        ranks = []
        for d, s, e in got:
            inside = [i for i, (hd, hs, he) in enumerate(hits) if hd == d and s <= hs and he <= e]
            if not inside:
                raise Failure(f"输入 {hits}：结果里的 ({d!r}, {s}, {e}) 不包含任何一个命中片段。")
            ranks.append(min(inside))
        if ranks != sorted(ranks):
            raise Failure(f"输入 {hits}：结果 {got} 的顺序不对。每段应排在它最靠前成员的名次上，"
                          "这样模型先读到的仍是检索器最有把握的内容。")

    property_check(prop, st.lists(_hit, max_size=8))


exercise(Exercise(
    id="ex3-merge",
    title="练习 3.1 按文档和偏移量合并重复命中",
    task="实现 merge_hits(hits) -> [(doc_id, start, end), ...]：hits 是按名次排好的命中片段；"
         "同一文档中重叠或首尾相接的片段合并成一段，不同文档绝不合并；合并后的段落排在它最靠前成员的名次上。",
    checks=[("手算的例子：重叠、相接、跨文档、名次、桥接、包含", _merge_examples),
            ("随机命中上的性质：字符不增不减、同文档段落互不相接、保持名次顺序", _merge_properties)],
    solution=_reference_merge,
    wrong=[
        # de-duplicates by document only: the second hit of a document is dropped even when disjoint
        lambda hits: [h for i, h in enumerate(hits) if h[0] not in {x[0] for x in hits[:i]}],
        # the textbook interval merge: right spans, but sorted by document and offset, not by rank
        lambda hits: [tuple(p) for p in __import__("functools").reduce(
            lambda acc, h: (acc[:-1] + [[h[0], acc[-1][1], max(acc[-1][2], h[2])]]
                            if acc and acc[-1][0] == h[0] and h[1] <= acc[-1][2] else acc + [list(h)]),
            sorted(hits), [])],
        # merges only strictly overlapping spans, not touching ones
        lambda hits: [tuple(p) for p in __import__("functools").reduce(
            lambda acc, h: _merge_strict(acc, h), hits, [])],
    ],
))


def _merge_strict(acc, h):
    doc_id, start, end = h
    touching = [p for p in acc if p[0] == doc_id and p[1] < end and start < p[2]]
    if not touching:
        return acc + [[doc_id, start, end]]
    keep = touching[0]
    keep[1] = min([start] + [p[1] for p in touching])
    keep[2] = max([end] + [p[2] for p in touching])
    gone = {id(p) for p in touching[1:]}
    return [p for p in acc if id(p) not in gone]


# --------------------------------------------------------------------------------------------
# ex3-parents
# --------------------------------------------------------------------------------------------


def _reference_parents(child_hits, parent_of, parent_tokens, budget):
    """Parents of ranked child hits, each once, in rank order, until the next one does not fit."""
    out: list[int] = []
    used = 0
    for c in child_hits:
        if c < 0:                      # -1 pads a short ranking
            continue
        p = parent_of[c]
        if p in out:                   # a parent already taken absorbs its other children
            continue
        if used + parent_tokens[p] > budget:
            break                      # stop: the context stays a prefix of the ranking
        used += parent_tokens[p]
        out.append(p)
    return out


def _as_ids(result):
    try:
        return [int(x) for x in result]
    except (TypeError, ValueError):
        raise Failure("parents_for 应返回父块编号（int）的列表，例如 [2, 0]。") from None


def _parents_examples(candidate) -> None:
    parent_of = [0, 0, 0, 1, 1, 2, 2]
    tokens = [900, 400, 700]
    cases = [
        ([4, 1, 3, 0], 2000, [1, 0], "两个子块命中同一父块时，这个父块只取一次，也只算一次 token"),
        ([5, 0, 3], 1600, [2, 0], "按名次取父块，放不下的那个及其后的都不要"),
        ([5, 3, 0], 1100, [2, 1], "预算正好用完（700 + 400 = 1100）时，最后那个父块是放得下的"),
        ([0, 5, 3], 1300, [0], "第一个放不下的父块（700 放不进剩下的 400）就停下：不往后挑更小的父块，"
                               "这样交给模型的始终是排名的一个前缀"),
        ([3, -1, -1], 5000, [1], "-1 是排名不足时的空位，应跳过，不能当作子块编号"),
        ([], 100, [], "没有命中时返回空列表"),
        ([0], 100, [], "第一个父块就超出预算时返回空列表"),
    ]
    for hits, budget, want, why in cases:
        got = _as_ids(candidate(list(hits), list(parent_of), list(tokens), budget))
        if got != want:
            raise Failure(f"{why}：parents_for({hits}, parent_of={parent_of}, parent_tokens={tokens}, "
                          f"budget={budget}) 应得到 {want}，你的结果是 {got}。")


def _parents_properties(candidate) -> None:
    def prop(parent_of, tokens, hits, budget):
        n_parents = max(parent_of) + 1
        tokens = (tokens * n_parents)[:n_parents]
        hits = [h % len(parent_of) if h >= 0 else -1 for h in hits]
        got = _as_ids(candidate(list(hits), list(parent_of), list(tokens), budget))
        want = _reference_parents(hits, parent_of, tokens, budget)
        if got != want:
            spent = sum(tokens[p] for p in got if 0 <= p < len(tokens))
            raise Failure(f"parents_for({hits}, parent_of={parent_of}, parent_tokens={tokens}, budget={budget}) "
                          f"应得到 {want}，你的结果是 {got}（共 {spent} token）。")

    property_check(prop, st.lists(st.integers(0, 4), min_size=1, max_size=8),
                   st.lists(st.integers(1, 9), min_size=1, max_size=5).map(lambda xs: [10 * x for x in xs]),
                   st.lists(st.integers(-1, 20), min_size=1, max_size=10), st.integers(0, 25).map(lambda x: 10 * x))


exercise(Exercise(
    id="ex3-parents",
    title="练习 3.2 在 token 预算内把子块命中换成父块",
    task="实现 parents_for(child_hits, parent_of, parent_tokens, budget) -> [父块编号, ...]：child_hits 是按名次排好的"
         "子块编号（-1 为空位），parent_of[c] 是子块 c 的父块，parent_tokens[p] 是父块 p 的 token 数。按名次换成父块，"
         "同一父块只取一次；累计 token 不超过 budget；遇到第一个放不下的父块就停止。",
    checks=[("手算的例子：去重、预算、恰好用完、停止规则、空位", _parents_examples),
            ("随机命中上与参考实现逐一比对", _parents_properties)],
    solution=_reference_parents,
    wrong=[
        # no de-duplication: a parent hit twice is returned (and paid for) twice
        lambda hits, parent_of, tokens, budget: _take(
            [parent_of[c] for c in hits if c >= 0], tokens, budget, dedup=False, stop=True),
        # skips a parent that does not fit and keeps looking further down
        lambda hits, parent_of, tokens, budget: _take(
            [parent_of[c] for c in hits if c >= 0], tokens, budget, dedup=True, stop=False),
        # treats -1 as a child id (Python's last element)
        lambda hits, parent_of, tokens, budget: _take(
            [parent_of[c] for c in hits], tokens, budget, dedup=True, stop=True),
        # a strict budget: a parent that fits exactly is refused
        lambda hits, parent_of, tokens, budget: _take(
            [parent_of[c] for c in hits if c >= 0], tokens, budget - 1, dedup=True, stop=True),
    ],
))


def _take(parents, tokens, budget, dedup, stop):
    out, used = [], 0
    for p in parents:
        if dedup and p in out:
            continue
        if used + tokens[p] > budget:
            if stop:
                break
            continue
        used += tokens[p]
        out.append(p)
    return out


# --------------------------------------------------------------------------------------------
# ex3-inflation
# --------------------------------------------------------------------------------------------


def _reference_inflation(chunks, doc_lengths):
    """``inflation``: indexed characters / document characters; ``duplicated``: share of indexed
    characters that repeat one indexed already (per document)."""
    total = sum(e - s for _, s, e in chunks)
    doc_chars = sum(doc_lengths.values())
    union = 0
    by_doc: dict[str, list[tuple[int, int]]] = {}
    for d, s, e in chunks:
        by_doc.setdefault(d, []).append((s, e))
    for spans in by_doc.values():
        reach = None
        for s, e in sorted(spans):
            if reach is None or s >= reach:
                union += e - s
                reach = e
            elif e > reach:
                union += e - reach
                reach = e
    return {"inflation": total / doc_chars if doc_chars else 0.0,
            "duplicated": 1 - union / total if total else 0.0}


def _as_stats(result):
    if not isinstance(result, dict) or not {"inflation", "duplicated"} <= set(result):
        raise Failure("index_stats 应返回 {'inflation': ..., 'duplicated': ...} 这样的 dict。")
    try:
        return float(result["inflation"]), float(result["duplicated"])
    except (TypeError, ValueError):
        raise Failure("inflation 和 duplicated 应是数字。") from None


def _close(a, b):
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def _inflation_examples(candidate) -> None:
    cases = [
        ([("手册", 0, 10), ("手册", 8, 18), ("手册", 16, 20)], {"手册": 20}, (24 / 20, 4 / 24),
         "三块共 24 字，覆盖 20 字的文档，其中 4 字重复"),
        ([("手册", 0, 10), ("合同", 0, 10)], {"手册": 10, "合同": 10}, (1.0, 0.0),
         "两个文档各自的 [0, 10) 是不同的字符：偏移量只在同一文档内可比"),
        ([("手册", 0, 6), ("手册", 8, 10)], {"手册": 10}, (8 / 10, 0.0),
         "切分器丢掉的空白（[6, 8) 不在任何块里）会让膨胀率低于 1，但这不是重复"),
        ([("手册", 0, 30)], {"手册": 30, "合同": 30}, (30 / 60, 0.0),
         "分母是所有文档的总字数，包括没有切出块的文档"),
        ([("手册", 0, 10), ("手册", 2, 8)], {"手册": 10}, (16 / 10, 6 / 16),
         "一块完全落在另一块里面时，它的 6 个字全是重复"),
    ]
    for chunks, lengths, (inf, dup), why in cases:
        got = _as_stats(candidate(list(chunks), dict(lengths)))
        if not (_close(got[0], inf) and _close(got[1], dup)):
            raise Failure(f"{why}：index_stats({chunks}, {lengths}) 应得到 inflation={inf:.4f}, "
                          f"duplicated={dup:.4f}，你的结果是 inflation={got[0]:.4f}, duplicated={got[1]:.4f}。")


def _inflation_properties(candidate) -> None:
    def prop(lengths, raw):
        docs = {"手册": lengths[0], "合同": lengths[1]}
        chunks = []
        for d, a, b in raw:
            n = docs[d]
            s, e = sorted((a % (n + 1), b % (n + 1)))
            if s < e:
                chunks.append((d, s, e))
        if not chunks:
            return
        got = _as_stats(candidate(list(chunks), dict(docs)))
        want = _reference_inflation(chunks, docs)
        if not (_close(got[0], want["inflation"]) and _close(got[1], want["duplicated"])):
            raise Failure(f"index_stats({chunks}, {docs}) 应得到 inflation={want['inflation']:.4f}, "
                          f"duplicated={want['duplicated']:.4f}，你的结果是 inflation={got[0]:.4f}, "
                          f"duplicated={got[1]:.4f}。")

    property_check(prop, st.tuples(st.integers(1, 40), st.integers(1, 40)),
                   st.lists(st.tuples(st.sampled_from(["手册", "合同"]), st.integers(0, 60), st.integers(0, 60)),
                            min_size=1, max_size=6))


exercise(Exercise(
    id="ex3-inflation",
    title="练习 3.3 从真实偏移量计算索引膨胀",
    task="实现 index_stats(chunks, doc_lengths) -> {'inflation': ..., 'duplicated': ...}：chunks 是 (doc_id, start, end) "
         "的列表，doc_lengths 把文档 id 映射到字数。inflation = 块的总字数 / 文档总字数；duplicated = 块里重复出现的字"
         "所占比例（1 − 每个文档内块的并集字数之和 / 块的总字数）。",
    checks=[("手算的例子：重叠、跨文档、丢空白、空文档、包含", _inflation_examples),
            ("随机切分上与参考实现比对", _inflation_properties)],
    solution=_reference_inflation,
    wrong=[
        # the parameter formula instead of real spans: overlap / (size - overlap) is not measured
        lambda chunks, lengths: {"inflation": sum(e - s for _, s, e in chunks) / sum(lengths.values()),
                                 "duplicated": 1 - 1 / (sum(e - s for _, s, e in chunks) / sum(lengths.values()))},
        # offsets compared across documents: 手册[0,10) and 合同[0,10) counted as one
        lambda chunks, lengths: {
            "inflation": sum(e - s for _, s, e in chunks) / sum(lengths.values()),
            "duplicated": 1 - len({p for _, s, e in chunks for p in range(s, e)}) / sum(e - s for _, s, e in chunks)},
        # only the documents that have chunks in the denominator
        lambda chunks, lengths: {
            "inflation": sum(e - s for _, s, e in chunks) / sum(lengths[d] for d in {c[0] for c in chunks}),
            "duplicated": _reference_inflation(chunks, lengths)["duplicated"]},
    ],
))
