"""Chapter 1 exercises: which chunk holds the evidence, evidence completeness, and choosing a size.

Spans are half-open ``[start, end)`` character windows, as everywhere in chunklab: a chunk
``(s, e)`` holds a gold span ``(a, b)`` when ``s <= a`` and ``b <= e`` — sharing characters is
not enough, and a span that ends exactly where the chunk ends is inside it.
"""
from __future__ import annotations

import math

from hypothesis import strategies as st

from . import Exercise, Failure, exercise, property_check

# --------------------------------------------------------------------------------------------
# ex1-find: the chunk that holds a gold span
# --------------------------------------------------------------------------------------------


def _reference_find(chunks: list[tuple[int, int]], gold: tuple[int, int]) -> int | None:
    a, b = gold
    for i, (s, e) in enumerate(chunks):
        if s <= a and b <= e:
            return i
    return None


def _call_find(candidate, chunks, gold):
    got = candidate(list(chunks), tuple(gold))
    if got is not None and (isinstance(got, bool) or not isinstance(got, int)):
        raise Failure(f"函数应返回块的下标（int）或 None，你返回了 {got!r}（{type(got).__name__}）。")
    return got


def _find_examples(candidate) -> None:
    chunks = [(0, 10), (10, 20), (20, 30)]
    cases = [
        ((12, 18), 1, "证据 [12, 18) 完整地落在第 1 块 [10, 20) 里"),
        ((15, 20), 1, "证据 [15, 20) 的终点 20 恰好等于块 [10, 20) 的终点：区间左闭右开，它仍然完整落在块里"),
        ((10, 12), 1, "证据 [10, 12) 从块 [10, 20) 的起点开始，它完整落在这一块里"),
        ((8, 12), None, "证据 [8, 12) 跨过了 10 这一刀，被切成两半，没有任何一块完整包含它"),
        ((0, 30), None, "证据 [0, 30) 比每一块都长，没有任何一块能完整包含它"),
    ]
    for gold, want, why in cases:
        got = _call_find(candidate, chunks, gold)
        if got != want:
            raise Failure(f"块 {chunks}，证据 {gold}：应返回 {want}，你返回了 {got}。\n（{why}。）")
    got = _call_find(candidate, [(0, 8), (4, 12), (8, 16)], (5, 9))
    if got != 1:
        raise Failure(f"有重叠的块 [(0, 8), (4, 12), (8, 16)]，证据 (5, 9)：第一个完整包含它的是下标 1，你返回了 {got}。\n"
                      "（只有部分重叠的块 (0, 8) 不算；要返回第一个完整包含证据的块。）")
    got = _call_find(candidate, [], (0, 1))
    if got is not None:
        raise Failure(f"没有块时应返回 None，你返回了 {got!r}。")


def _find_properties(candidate) -> None:
    def prop(cuts, a, length):
        bounds = sorted(set([0, 60] + cuts))
        chunks = list(zip(bounds, bounds[1:]))
        b = min(60, a + length)
        want = _reference_find(chunks, (a, b))
        got = _call_find(candidate, chunks, (a, b))
        if got != want:
            raise Failure(f"块 {chunks}，证据 ({a}, {b})：应返回 {want}，你返回了 {got}。")

    property_check(prop, st.lists(st.integers(1, 59), max_size=6), st.integers(0, 58), st.integers(1, 12))


exercise(Exercise(
    id="ex1-find",
    title="练习 1.1 哪一块装着证据",
    task="实现 find_chunk(chunks, gold) -> int | None：chunks 是 [(start, end), ...]，gold 是 (start, end)，"
         "区间都是左闭右开；返回第一个完整包含 gold 的块的下标，没有则返回 None。",
    checks=[("手算的例子：边界、跨刀、重叠块", _find_examples), ("随机切法上的性质", _find_properties)],
    solution=_reference_find,
    wrong=[
        # off by one: a span ending exactly at the chunk's end is rejected
        lambda chunks, gold: next((i for i, (s, e) in enumerate(chunks) if s <= gold[0] and gold[1] < e), None),
        # partial overlap counted as containing
        lambda chunks, gold: next((i for i, (s, e) in enumerate(chunks) if s < gold[1] and gold[0] < e), None),
        # only looks at where the evidence starts
        lambda chunks, gold: next((i for i, (s, e) in enumerate(chunks) if s <= gold[0] < e), None),
    ],
))


# --------------------------------------------------------------------------------------------
# ex1-completeness: the recall ceiling of a chunking
# --------------------------------------------------------------------------------------------


def _reference_completeness(chunks: list[tuple[str, int, int]],
                            questions: list[list[tuple[str, int, int]]]) -> float:
    if not questions:
        return 0.0

    def held(span):
        d, a, b = span
        return any(cd == d and s <= a and b <= e for cd, s, e in chunks)

    return sum(all(held(sp) for sp in spans) for spans in questions) / len(questions)


def _call_completeness(candidate, chunks, questions):
    got = candidate([tuple(c) for c in chunks], [[tuple(s) for s in q] for q in questions])
    try:
        return float(got)
    except (TypeError, ValueError):
        raise Failure(f"函数应返回一个 0 到 1 之间的小数（比例），你返回了 {got!r}。") from None


def _completeness_examples(candidate) -> None:
    chunks = [("手册", 0, 100), ("手册", 100, 200), ("FAQ", 0, 50)]
    cases = [
        ([[("手册", 10, 40)], [("手册", 90, 110)]], 0.5, "第二题的证据 [90, 110) 跨过了 100 这一刀"),
        ([[("手册", 150, 200)]], 1.0, "证据终点 200 等于块终点 200，左闭右开，仍算完整"),
        ([[("FAQ", 60, 70)]], 0.0, "「FAQ」只有 [0, 50) 一块，证据 [60, 70) 不在任何一块里（别拿另一篇文档的块来凑）"),
        ([[("手册", 10, 20), ("手册", 95, 105)]], 0.0,
         "这道题有两段证据，第二段 [95, 105) 被切断：一道题的所有证据都完整，这道题才算完整"),
        ([[("手册", 10, 20), ("手册", 120, 130)]], 1.0, "两段证据分别完整地落在两块里：每段各有一块完整包含它就算完整"),
    ]
    for questions, want, why in cases:
        got = _call_completeness(candidate, chunks, questions)
        if not math.isclose(got, want, abs_tol=1e-9):
            raise Failure(f"块 {chunks}，题目证据 {questions}：证据完整上限应为 {want}，你得到 {got}。\n（{why}。）")
    got = _call_completeness(candidate, [("手册", 0, 10)], [])
    if got != 0.0:
        raise Failure(f"没有题目时约定返回 0.0（不要除以零），你得到 {got!r}。")


def _completeness_properties(candidate) -> None:
    def prop(cuts, spans):
        bounds = sorted(set([0, 80] + cuts))
        chunks = [("d", s, e) for s, e in zip(bounds, bounds[1:])]
        questions = [[("d", a, min(80, a + n))] for a, n in spans]
        want = _reference_completeness(chunks, questions)
        got = _call_completeness(candidate, chunks, questions)
        if not math.isclose(got, want, abs_tol=1e-9):
            raise Failure(f"块 {[(s, e) for _, s, e in chunks]}，证据 {[q[0][1:] for q in questions]}："
                          f"证据完整上限应为 {want:.4f}，你得到 {got:.4f}。")

    property_check(prop, st.lists(st.integers(1, 79), max_size=6),
                   st.lists(st.tuples(st.integers(0, 78), st.integers(1, 15)), min_size=1, max_size=6))


def _wrong_partial(chunks, questions):
    """Counts a question when its evidence merely overlaps a chunk."""
    if not questions:
        return 0.0
    ok = [all(any(cd == d and s < b and a < e for cd, s, e in chunks) for d, a, b in q) for q in questions]
    return sum(ok) / len(questions)


def _wrong_any_span(chunks, questions):
    """Counts a question when *one* of its spans is held."""
    if not questions:
        return 0.0
    ok = [any(any(cd == d and s <= a and b <= e for cd, s, e in chunks) for d, a, b in q) for q in questions]
    return sum(ok) / len(questions)


def _wrong_off_by_one(chunks, questions):
    """``b < e``: a span ending at the chunk's end is rejected."""
    if not questions:
        return 0.0
    ok = [all(any(cd == d and s <= a and b < e for cd, s, e in chunks) for d, a, b in q) for q in questions]
    return sum(ok) / len(questions)


exercise(Exercise(
    id="ex1-completeness",
    title="练习 1.2 证据完整上限",
    task="实现 evidence_completeness(chunks, questions) -> float：chunks 是 [(doc_id, start, end), ...]，"
         "questions 是每道题的证据列表 [[(doc_id, start, end), ...], ...]；返回「每段证据都被某一块完整包含」的题目占比，"
         "没有题目时返回 0.0。",
    checks=[("手算的例子：跨刀、边界、跨文档、多段证据", _completeness_examples),
            ("随机切法与随机证据上的性质", _completeness_properties)],
    solution=_reference_completeness,
    wrong=[_wrong_partial, _wrong_any_span, _wrong_off_by_one],
))


# --------------------------------------------------------------------------------------------
# ex1-size: choose a chunk size under a context budget
# --------------------------------------------------------------------------------------------


def _reference_choose(measured: dict[int, float], k: int, budget: int) -> int | None:
    fits = [s for s in measured if s * k <= budget]
    if not fits:
        return None
    return min(fits, key=lambda s: (-measured[s], s))


def _call_choose(candidate, measured, k, budget):
    got = candidate(dict(measured), k, budget)
    if got is not None and (isinstance(got, bool) or not isinstance(got, int)):
        raise Failure(f"函数应返回选中的块长（int，measured 的一个键）或 None，你返回了 {got!r}。")
    if got is not None and got not in measured:
        raise Failure(f"返回值 {got} 不是 measured 里的块长 {sorted(measured)}：要返回块长，不是命中率。")
    return got


def _choose_examples(candidate) -> None:
    measured = {256: 0.71, 512: 0.76, 1024: 0.79, 2048: 0.82}
    got = _call_choose(candidate, measured, 5, 2600)
    if got != 512:
        raise Failure(f"measured={measured}，k=5，预算 2600 字：1024×5=5120 已超预算，能用的只有 256 和 512，"
                      f"应选 512，你选了 {got}。\n（固定 k 时大块总显得更好，这正是要用预算来约束的原因。）")
    got = _call_choose(candidate, {256: 0.74, 512: 0.74, 1024: 0.70}, 5, 6000)
    if got != 256:
        raise Failure(f"256 和 512 的命中率一样（0.74），都在预算内：同样好时选更小的块（更省上下文、引用更准），"
                      f"应选 256，你选了 {got}。")
    got = _call_choose(candidate, {256: 0.7, 512: 0.8}, 5, 1000)
    if got is not None:
        raise Failure(f"k=5 时最小的块 256 也要 1280 字，超过预算 1000：没有可选的大小，应返回 None，你返回了 {got!r}。")
    got = _call_choose(candidate, {300: 0.6, 500: 0.8}, 4, 2000)
    if got != 500:
        raise Failure(f"500×4 = 2000 恰好等于预算 2000，算作放得下，应选 500，你选了 {got}。")


def _choose_properties(candidate) -> None:
    def prop(items, k, budget):
        measured = {s: h / 20 for s, h in items}
        want = _reference_choose(measured, k, budget)
        got = _call_choose(candidate, measured, k, budget)
        if got != want:
            raise Failure(f"measured={measured}，k={k}，预算 {budget}：应选 {want}，你选了 {got}。")

    sizes = st.sampled_from([64, 128, 256, 384, 512, 768, 1024, 1536, 2048])
    property_check(prop, st.lists(st.tuples(sizes, st.integers(0, 20)), min_size=1, max_size=6,
                                  unique_by=lambda t: t[0]),
                   st.integers(1, 10), st.integers(100, 8000))


exercise(Exercise(
    id="ex1-size",
    title="练习 1.3 在上下文预算内选块长",
    task="实现 choose_size(measured, k, budget) -> int | None：measured 把块长（字）映射到实测 hit@k；"
         "只考虑 k 块放得进预算的大小（size × k <= budget），其中选命中率最高的，一样高时选更小的；没有可选的返回 None。",
    checks=[("手算的例子：预算、并列、放不下、恰好放下", _choose_examples), ("随机测量结果上的性质", _choose_properties)],
    solution=_reference_choose,
    wrong=[
        # ignores the budget: big chunks always win at a fixed k
        lambda measured, k, budget: max(measured, key=lambda s: (measured[s], -s)),
        # ties go to the larger size
        lambda measured, k, budget: max((s for s in measured if s * k <= budget),
                                        key=lambda s: (measured[s], s), default=None),
        # strict inequality: a size that exactly fills the budget is dropped
        lambda measured, k, budget: min((s for s in measured if s * k < budget),
                                        key=lambda s: (-measured[s], s), default=None),
    ],
))
