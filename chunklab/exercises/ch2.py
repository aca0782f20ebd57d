"""Chapter 2 exercises: a fixed-size splitter that always terminates (claim C25)."""
from __future__ import annotations

from hypothesis import strategies as st

from . import Exercise, Failure, exercise, property_check


def _reference_fixed(text: str, size: int, overlap: int) -> list[tuple[int, int]]:
    step = size - overlap
    out, i = [], 0
    while True:
        out.append((i, min(i + size, len(text))))
        if i + size >= len(text):
            return out
        i += step


def _spans(candidate, text, size, overlap):
    spans = candidate(text, size, overlap)
    try:
        spans = [(int(s), int(e)) for s, e in spans]
    except (TypeError, ValueError):
        raise Failure("函数应返回 (start, end) 二元组的列表，例如 [(0, 4), (3, 7)]。") from None
    return spans


def _check_examples(candidate) -> None:
    got = _spans(candidate, "一二三四五六七", 4, 1)
    if got != [(0, 4), (3, 7)]:
        raise Failure(f"fixed('一二三四五六七', size=4, overlap=1) 应得到 [(0, 4), (3, 7)]，你的结果是 {got}。")
    got = _spans(candidate, "一二三", 5, 0)
    if got != [(0, 3)]:
        raise Failure(f"文本比 size 短时应只有一个块 [(0, 3)]，你的结果是 {got}。")


def _check_properties(candidate) -> None:
    def prop(text, size, overlap_frac):
        overlap = int((size - 1) * overlap_frac)
        spans = _spans(candidate, text, size, overlap)
        if not spans:
            raise Failure(f"文本 {text!r} (size={size}, overlap={overlap}) 没有产生任何块。")
        if spans[0][0] != 0 or spans[-1][1] != len(text):
            raise Failure(f"第一个块应从 0 开始、最后一个块应到文本末尾 {len(text)}；"
                          f"文本长 {len(text)}, size={size}, overlap={overlap} 时得到 {spans}。")
        for (s1, e1), (s2, e2) in zip(spans, spans[1:]):
            if s2 > e1:
                raise Failure(f"块 ({s1}, {e1}) 与 ({s2}, {e2}) 之间漏掉了文字 [{e1}, {s2})。"
                              f"(size={size}, overlap={overlap})")
            if e1 - s2 > overlap:
                raise Failure(f"相邻块 ({s1}, {e1}) 和 ({s2}, {e2}) 重叠了 {e1 - s2} 字，超过 overlap={overlap}。")
        if any(e - s > size for s, e in spans):
            raise Failure(f"有块长度超过 size={size}：{[(s, e) for s, e in spans if e - s > size][:3]}")

    property_check(prop, st.text("甲乙丙。", min_size=1, max_size=60), st.integers(1, 12), st.floats(0, 0.99))


exercise(Exercise(
    id="ex2-fixed",
    title="练习 2.1 固定长度切分",
    task="实现 fixed(text, size, overlap) -> [(start, end), ...]：窗口长 size，相邻窗口重叠 overlap（0 <= overlap < size），"
         "保留最后一个不足 size 的尾块，且一定会结束。",
    checks=[("两个手算的例子", _check_examples), ("随机文本上的性质：覆盖全文、重叠不超标、块不超长、会结束", _check_properties)],
    solution=_reference_fixed,
    wrong=[
        lambda text, size, overlap: [(i, min(i + size, len(text))) for i in range(0, len(text), size)],  # ignores overlap
        lambda text, size, overlap: [(i, i + size) for i in range(0, len(text) - size + 1, size - overlap)],  # drops tail
    ],
))
