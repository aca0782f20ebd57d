"""Chapter 2 exercises: a fixed-size splitter that always terminates (claim C25), a sentence
splitter that keeps end marks and closing quotes, and a greedy packer with overlap."""
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


# ---------------------------------------------------------------------------
# 练习 2.2: a sentence splitter that keeps the end mark and the closing quotes
# ---------------------------------------------------------------------------

#: Sentence-end marks and the closing marks that stay with the sentence they close.
SENT_END = "。！？!?…"
SENT_CLOSE = "”’」』）》)"


def _reference_sentences(text: str) -> list[tuple[int, int]]:
    out, start, i, n = [], 0, 0, len(text)
    while i < n:
        if text[i] in SENT_END:
            while i < n and text[i] in SENT_END:
                i += 1
            while i < n and text[i] in SENT_CLOSE:
                i += 1
            out.append((start, i))
            start = i
        else:
            i += 1
    if start < n:
        out.append((start, n))
    return out


def _sentence_spans(candidate, text):
    spans = candidate(text)
    try:
        spans = [(int(s), int(e)) for s, e in spans]
    except (TypeError, ValueError):
        raise Failure("函数应返回 (start, end) 二元组的列表，例如 [(0, 7), (7, 12)]，而不是句子字符串。") from None
    return spans


def _check_sentence_examples(candidate) -> None:
    cases = [
        ("他说：“好。”然后走了！", [(0, 7), (7, 12)], "右引号 ” 应跟着它前面的句号留在第一句里"),
        ("真的吗？！不会吧……", [(0, 5), (5, 10)], "连在一起的 ？！ 和 …… 是一个句末，不应拆开"),
        ("没有句号的标题", [(0, 7)], "没有句末标点的文本整体是一句"),
        ("", [], "空文本应返回空列表"),
    ]
    for text, want, why in cases:
        got = _sentence_spans(candidate, text)
        if got != want:
            raise Failure(f"split_sentences({text!r}) 应得到 {want}，你的结果是 {got}（{why}）。")


def _check_sentence_properties(candidate) -> None:
    import re

    end, close = re.escape(SENT_END), re.escape(SENT_CLOSE)
    full = re.compile(rf"[^{end}]*[{end}]+[{close}]*")
    no_end = re.compile(rf"[^{end}]*")

    def prop(text):
        spans = _sentence_spans(candidate, text)
        pos = 0
        for s, e in spans:
            if s != pos or e <= s:
                raise Failure(f"句子的区间应首尾相接、不空、不重叠，并从 0 开始：文本 {text!r} 得到 {spans}。"
                              "（标点也是原文的一部分，不能丢。）")
            pos = e
        if pos != len(text):
            raise Failure(f"最后一句应在文本末尾（位置 {len(text)}）结束：文本 {text!r} 得到 {spans}。")
        for k, (s, e) in enumerate(spans):
            piece = text[s:e]
            last = k == len(spans) - 1
            if k > 0 and piece[0] in SENT_CLOSE:
                raise Failure(f"第 {k + 1} 句 {piece!r} 以右引号/右括号开头：它应该留在上一句的末尾"
                              f"（文本 {text!r}，得到 {spans}）。")
            if k > 0 and piece[0] in SENT_END and text[s - 1] in SENT_END:
                raise Failure(f"第 {k + 1} 句 {piece!r} 以句末标点开头：连在一起的句末标点（如 ？！ 或 ……）被拆开了"
                              f"（文本 {text!r}，得到 {spans}）。")
            if not full.fullmatch(piece) and not (last and no_end.fullmatch(piece)):
                raise Failure(f"第 {k + 1} 句 {piece!r} 不是“若干字 + 句末标点 + 可选的右引号/右括号”：句子切多了或切少了"
                              f"（文本 {text!r}，得到 {spans}）。")

    property_check(prop, st.text("甲乙。！？…”」\n", max_size=40))


exercise(Exercise(
    id="ex2-sentences",
    title="练习 2.2 句子切分：句末标点与右引号",
    task="实现 split_sentences(text) -> [(start, end), ...]：在 。！？!?… 之后断句（连续的句末标点算一个句末），"
         "紧跟其后的右引号、右括号（”’」』）》)）留在这一句里；区间首尾相接、覆盖全文，没有句末标点的尾巴自成一句。",
    checks=[("四个手算的例子", _check_sentence_examples),
            ("随机文本上的性质：覆盖全文、标点不丢、句首不是标点、每句恰好一个句末", _check_sentence_properties)],
    solution=_reference_sentences,
    wrong=[
        # drops the end marks (what str.split / re.split do)
        lambda text: [m.span() for m in __import__("re").finditer(r"[^。！？!?…]+", text)],
        # cuts right after the end mark: the closing quote starts the next sentence
        lambda text: [m.span() for m in __import__("re").finditer(r"[^。！？!?…]*[。！？!?…]+|[^。！？!?…]+$", text)],
        # cuts after every single mark: "？！" becomes two sentences
        lambda text: [m.span() for m in __import__("re").finditer(r"[^。！？!?…]*[。！？!?…][”’」』）》)]*|[^。！？!?…]+$", text)],
    ],
))


# ---------------------------------------------------------------------------
# 练习 2.3: greedy packing of whole units up to target, with overlap
# ---------------------------------------------------------------------------

def _reference_pack(lengths: list[int], target: int, overlap: int) -> list[tuple[int, int]]:
    out, i, n = [], 0, len(lengths)
    while i < n:
        j, total = i, 0
        while j < n and (j == i or total + lengths[j] <= target):
            total += lengths[j]
            j += 1
        out.append((i, j))
        if j == n:
            break
        k, carried = j, 0
        while k - 1 > i and carried + lengths[k - 1] <= overlap:
            carried += lengths[k - 1]
            k -= 1
        i = k
    return out


def _ranges(candidate, lengths, target, overlap):
    got = candidate(list(lengths), target, overlap)
    try:
        got = [(int(i), int(j)) for i, j in got]
    except (TypeError, ValueError):
        raise Failure("函数应返回单元下标区间 (i, j) 的列表（含 i、不含 j），例如 [(0, 2), (1, 3)]。") from None
    return got


def _check_pack_examples(candidate) -> None:
    cases = [
        (([3, 3, 3, 3], 6, 0), [(0, 2), (2, 4)], "每块装满 6 个字就换下一块"),
        (([3, 3, 3, 3], 6, 3), [(0, 2), (1, 3), (2, 4)], "overlap=3 时，下一块从上一块的最后一个单元（长 3）开始"),
        (([10, 2], 5, 0), [(0, 1), (1, 2)], "比 target 还长的单元单独成块，不切开它"),
        (([], 5, 0), [], "没有单元时返回空列表"),
    ]
    for (lengths, target, overlap), want, why in cases:
        got = _ranges(candidate, lengths, target, overlap)
        if got != want:
            raise Failure(f"pack({lengths}, target={target}, overlap={overlap}) 应得到 {want}，你的结果是 {got}（{why}）。")


def _check_pack_properties(candidate) -> None:
    def prop(lengths, target, frac):
        overlap = int((target - 1) * frac)
        args = f"pack({lengths}, target={target}, overlap={overlap})"
        got = _ranges(candidate, lengths, target, overlap)
        n = len(lengths)
        if not got:
            raise Failure(f"{args} 没有返回任何块。")
        if got[0][0] != 0 or got[-1][1] != n:
            raise Failure(f"第一块应从单元 0 开始、最后一块应到单元 {n} 为止：{args} 得到 {got}。")
        for i, j in got:
            if not 0 <= i < j <= n:
                raise Failure(f"区间 ({i}, {j}) 不合法：应满足 0 <= i < j <= {n}（{args}）。")
            size = sum(lengths[i:j])
            if size > target and j - i > 1:
                raise Failure(f"块 ({i}, {j}) 长 {size}，超过 target={target}；只有单个超长单元才允许超过（{args}）。")
            if j < n and size + lengths[j] <= target:
                raise Failure(f"块 ({i}, {j}) 长 {size}，还装得下下一个单元（长 {lengths[j]}）：贪心打包应该继续装（{args}）。")
        for (i1, j1), (i2, j2) in zip(got, got[1:]):
            if i2 <= i1:
                raise Failure(f"块 ({i2}, {j2}) 没有比上一块 ({i1}, {j1}) 前进：这样的循环可能永远不结束（{args}）。")
            if i2 > j1:
                raise Failure(f"块 ({i1}, {j1}) 和 ({i2}, {j2}) 之间漏掉了单元 {list(range(j1, i2))}（{args}）。")
            shared = sum(lengths[i2:j1])
            if shared > overlap:
                raise Failure(f"相邻块 ({i1}, {j1}) 和 ({i2}, {j2}) 共享了 {shared} 个字，超过 overlap={overlap}（{args}）。")
            if i2 - 1 > i1 and shared + lengths[i2 - 1] <= overlap:
                raise Failure(f"块 ({i2}, {j2}) 还可以多带上单元 {i2 - 1}（长 {lengths[i2 - 1]}）作重叠而不超过 "
                              f"overlap={overlap}：应尽量多带整单元（{args}）。")

    property_check(prop, st.lists(st.integers(1, 12), min_size=1, max_size=20), st.integers(1, 30), st.floats(0, 0.99))


def _pack_no_overlap(lengths, target, overlap):
    out, i, n = [], 0, len(lengths)
    while i < n:
        j, total = i, 0
        while j < n and (j == i or total + lengths[j] <= target):
            total += lengths[j]
            j += 1
        out.append((i, j))
        i = j
    return out


def _pack_overfull(lengths, target, overlap):
    out, i, n = [], 0, len(lengths)
    while i < n:
        j, total = i, 0
        while j < n and total < target:  # checks before adding: the last unit may overflow
            total += lengths[j]
            j += 1
        out.append((i, j))
        if j == n:
            break
        k, carried = j, 0
        while k - 1 > i and carried + lengths[k - 1] <= overlap:
            carried += lengths[k - 1]
            k -= 1
        i = k
    return out


def _pack_carry_too_much(lengths, target, overlap):
    out, i, n = [], 0, len(lengths)
    while i < n:
        j, total = i, 0
        while j < n and (j == i or total + lengths[j] <= target):
            total += lengths[j]
            j += 1
        out.append((i, j))
        if j == n:
            break
        k, carried = j, 0
        while k - 1 > i and carried <= overlap:  # tests before adding: one unit too many
            carried += lengths[k - 1]
            k -= 1
        i = k
    return out


exercise(Exercise(
    id="ex2-pack",
    title="练习 2.3 贪心打包：target 与 overlap",
    task="实现 pack(lengths, target, overlap) -> [(i, j), ...]：把长度为 lengths 的连续单元（句子）按顺序贪心装块，"
         "每块尽量多装但总长不超过 target（单个超长单元单独成块）；下一块从上一块末尾往回带上尽可能多的整单元作重叠，"
         "带回的总长不超过 overlap，且下一块必须比上一块的起点靠后。",
    checks=[("四个手算的例子", _check_pack_examples),
            ("随机长度上的性质：覆盖、贪心装满、不超 target、重叠不超标且尽量多带、一定前进", _check_pack_properties)],
    solution=_reference_pack,
    wrong=[_pack_no_overlap, _pack_overfull, _pack_carry_too_much],
))
