"""Chapter 5 exercises: Chroma's character IoU for one question, and a paired bootstrap.

* ``ex5-iou`` — ``iou(retrieved, gold)`` over ``(start, end)`` spans of one document: the
  intersection of the gold characters with the union of the retrieved chunks, over the retrieved
  characters counted *with duplicates* plus the gold characters not retrieved (Chroma 2024; the
  same number as ``question_metrics(...)["iou"]``).
* ``ex5-paired`` — ``paired_ci(a, b, n, seed)``: mean difference of two per-question metric arrays
  with a percentile bootstrap interval over resampled *questions* (the same indices for both
  arrays), and whether the interval excludes 0 (as :func:`chunklab.evaluation.paired_bootstrap`).
* ``ex5-decide`` — ``decision(diff, lo, hi, margin)``: the decision a deciding interval allows
  (adopt, refuse, keep the simpler one when equivalent, more questions when undecided), in the
  order of :func:`chunklab.evaluation.stats.decide`: significance first, then the equivalence margin.
"""
from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from . import Exercise, Failure, exercise, property_check

# --------------------------------------------------------------------------------------------
# ex5-iou
# --------------------------------------------------------------------------------------------


def _union(spans):
    out = []
    for s, e in sorted((s, e) for s, e in spans if e > s):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def _reference_iou(retrieved, gold):
    """Chroma's IoU for one question: |E ∩ ∪R| / (Σ|r| + |E| − |E ∩ ∪R|)."""
    gold_u = _union(gold)
    ret_u = _union(retrieved)
    inter = sum(max(0, min(e1, e2) - max(s1, s2)) for s1, e1 in gold_u for s2, e2 in ret_u)
    retrieved_chars = sum(e - s for s, e in retrieved)      # duplicates count: overlap costs
    gold_chars = sum(e - s for s, e in gold_u)
    denom = retrieved_chars + gold_chars - inter
    return inter / denom if denom else 0.0


def _as_float(value, call):
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise Failure(f"{call} 应返回一个数（float），你的函数返回了 {value!r}。") from None
    if math.isnan(v):
        raise Failure(f"{call} 返回了 NaN：没有检索到任何块时应返回 0.0。")
    return v


def _iou_examples(candidate) -> None:
    cases = [
        ([(0, 10)], [(2, 6)], 0.4, "一个 10 字的块装着 4 字的证据：交集 4，分母 10 + 4 − 4 = 10"),
        ([(0, 4), (4, 8)], [(5, 7)], 0.25, "两个块、只有第二个碰到证据：分母要算上所有取回的字符（8 字）"),
        ([(0, 10)], [(20, 25)], 0.0, "块和证据没有交集时 IoU 为 0"),
        ([], [(0, 5)], 0.0, "什么也没取回时 IoU 为 0（不要除以 0）"),
        ([(0, 6), (4, 10)], [(4, 6)], 2 / 12,
         "两个块在 [4, 6) 重叠，这两个字被取回了两次：分母按 6 + 6 = 12 计（重复的字符也占上下文），交集只算一次 = 2"),
        ([(0, 10)], [(2, 6), (4, 8)], 0.6,
         "同一题的两段证据 [2, 6) 和 [4, 8) 重叠：先合并成 [2, 8)（6 字），不要把 [4, 6) 算两次"),
    ]
    for retrieved, gold, want, why in cases:
        got = _as_float(candidate(list(retrieved), list(gold)), f"iou({retrieved}, {gold})")
        if abs(got - want) > 1e-9:
            raise Failure(f"{why}。\niou({retrieved}, {gold}) 应为 {want:.4f}，你的结果是 {got:.4f}。")


_span = st.tuples(st.integers(0, 40), st.integers(1, 15)).map(lambda t: (t[0], t[0] + t[1]))


def _iou_properties(candidate) -> None:
    def prop(retrieved, gold):
        got = _as_float(candidate(list(retrieved), list(gold)), f"iou({retrieved}, {gold})")
        want = _reference_iou(retrieved, gold)
        if not 0 <= got <= 1:
            raise Failure(f"IoU 必须在 [0, 1] 内；iou({retrieved}, {gold}) 得到 {got:.4f}。")
        if abs(got - want) > 1e-9:
            dup = sum(e - s for s, e in retrieved) != sum(e - s for s, e in _union(retrieved))
            hint = "（注意：这组块彼此重叠，重复取回的字符要计入分母，交集却只能算一次）" if dup else ""
            raise Failure(f"iou({retrieved}, {gold}) 应为 {want:.4f}，你的结果是 {got:.4f}{hint}。")

    property_check(prop, st.lists(_span, max_size=5), st.lists(_span, min_size=1, max_size=3))


def _iou_set(retrieved, gold):
    """Wrong: the textbook set IoU, |E ∩ R| / |E ∪ R| — a duplicate costs nothing."""
    g, r = _union(gold), _union(retrieved)
    inter = sum(max(0, min(e1, e2) - max(s1, s2)) for s1, e1 in g for s2, e2 in r)
    union = sum(e - s for s, e in g) + sum(e - s for s, e in r) - inter
    return inter / union if union else 0.0


def _iou_sum_per_chunk(retrieved, gold):
    """Wrong: intersections summed chunk by chunk (overlapping chunks count evidence twice)."""
    g = _union(gold)
    inter = sum(max(0, min(e1, e2) - max(s1, s2)) for s1, e1 in g for s2, e2 in retrieved)
    denom = sum(e - s for s, e in retrieved) + sum(e - s for s, e in g) - inter
    return inter / denom if denom else 0.0


def _iou_unmerged_gold(retrieved, gold):
    """Wrong: gold spans not merged, so overlapping evidence is counted twice."""
    r = _union(retrieved)
    inter = sum(max(0, min(e1, e2) - max(s1, s2)) for s1, e1 in gold for s2, e2 in r)
    denom = sum(e - s for s, e in retrieved) + sum(e - s for s, e in gold) - inter
    return inter / denom if denom else 0.0


exercise(Exercise(
    id="ex5-iou",
    title="练习 5.1 字符级 IoU（Chroma 2024）",
    task="实现 iou(retrieved, gold)：retrieved 是取回的块、gold 是证据，都是同一文档里的 (start, end) 列表。"
         "交集 = 证据字符与“所有取回块的并集”的交集；分母 = 取回字符总数（重叠部分按次数重复计）+ 证据字符数 − 交集。",
    checks=[("六个手算的例子（含重叠块、重叠证据、空结果）", _iou_examples),
            ("随机区间上与参考实现一致", _iou_properties)],
    solution=_reference_iou,
    wrong=[_iou_set, _iou_sum_per_chunk, _iou_unmerged_gold],
))


# --------------------------------------------------------------------------------------------
# ex5-paired
# --------------------------------------------------------------------------------------------


def _reference_paired(a, b, n=2000, seed=0):
    """Paired percentile bootstrap of mean(a − b): resample question indices, the same for a and b."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    d = a - b
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(d), size=(n, len(d)))
    means = d[idx].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(d.mean()), float(lo), float(hi), bool(lo > 0 or hi < 0)


def _as_result(value, call):
    try:
        diff, lo, hi, real = value
        return float(diff), float(lo), float(hi), real
    except (TypeError, ValueError):
        raise Failure(f"{call} 应返回四元组 (diff, lo, hi, real)，例如 (0.05, 0.02, 0.08, True)；"
                      f"你的函数返回了 {value!r}。") from None


def _correlated_pair(n_questions=200, flips=10, seed=1):
    """Two hit arrays that agree on all but ``flips`` questions, where a hits and b misses."""
    rng = np.random.default_rng(seed)
    b = (rng.random(n_questions) < 0.5).astype(float)
    a = b.copy()
    misses = np.flatnonzero(b == 0)[:flips]
    a[misses] = 1.0
    return a, b


def _paired_basics(candidate) -> None:
    a, b = [1, 1, 0, 1, 0, 1, 1, 0], [1, 0, 0, 1, 0, 0, 1, 0]
    diff, lo, hi, real = _as_result(candidate(a, b, n=500, seed=0), "paired_ci(a, b, n=500, seed=0)")
    if abs(diff - 0.25) > 1e-9:
        raise Failure(f"diff 应是逐题差值的平均 mean(a − b) = 0.25，你的结果是 {diff:.4f}（是不是算成了 b − a？）。")
    if not lo <= diff <= hi:
        raise Failure(f"区间 [{lo:.4f}, {hi:.4f}] 应当包含均值差 {diff:.4f}。")
    if not isinstance(real, (bool, np.bool_)):
        raise Failure(f"第四个值 real 应是 True/False（区间是否不含 0），你的结果是 {real!r}。")
    again = _as_result(candidate(a, b, n=500, seed=0), "paired_ci")
    if again[1:3] != (lo, hi):
        raise Failure("同一个 seed 两次调用应得到同一个区间：用 np.random.default_rng(seed) 生成随机数，"
                      "不要用全局随机状态。")
    same = _as_result(candidate([1, 0, 1, 0], [1, 0, 1, 0], n=200, seed=0), "paired_ci")
    if same[0] != 0 or same[3]:
        raise Failure(f"两组完全相同的结果，差值为 0，不应判为“真的不同”；你的结果是 {same}。")


def _paired_is_paired(candidate) -> None:
    a, b = _correlated_pair()
    diff, lo, hi, real = _as_result(candidate(list(a), list(b), n=2000, seed=0), "paired_ci")
    ref = _reference_paired(a, b, n=2000, seed=0)
    width, ref_width = hi - lo, ref[2] - ref[1]
    if width <= 0:
        raise Failure(f"区间宽度为 {width:.4f}：自助法要“有放回”地抽题（rng.integers），"
                      "不放回地打乱顺序，每次的平均值都一样，区间就缩成了一个点。")
    if width > 2 * ref_width:
        raise Failure(f"这组数据里 a 和 b 只在 {int((a != b).sum())} 道题上不同（a 全对），配对区间宽约 {ref_width:.3f}，"
                      f"你的区间宽 {width:.3f}：看起来 a 和 b 是分别独立重抽的。"
                      "配对比较必须对两组结果用同一批题号重抽（先算逐题差值 d = a − b，再对 d 重抽）。")
    if not real:
        raise Failure(f"a 在 10 道题上比 b 好、其余完全相同，配对区间 [{ref[1]:.3f}, {ref[2]:.3f}] 不含 0，"
                      f"应判为真的不同；你的区间是 [{lo:.3f}, {hi:.3f}]。")
    if width < 0.5 * ref_width:
        raise Failure(f"区间 [{lo:.4f}, {hi:.4f}] 比应有的窄得多（参考宽度约 {ref_width:.3f}）："
                      "要取重抽均值的 2.5% 与 97.5% 分位数，而不是别的分位数或标准误。")


def _paired_properties(candidate) -> None:
    def prop(pairs):
        a = [float(x) for x, _ in pairs]
        b = [float(y) for _, y in pairs]
        diff, lo, hi, real = _as_result(candidate(a, b, n=300, seed=0), "paired_ci")
        want = float(np.mean(np.subtract(a, b)))
        if abs(diff - want) > 1e-9:
            raise Failure(f"a={a}, b={b}：diff 应为 {want:.4f}，你的结果是 {diff:.4f}。")
        if not (lo - 1e-9 <= diff <= hi + 1e-9) and len(set(np.subtract(a, b))) > 1:
            raise Failure(f"a={a}, b={b}：区间 [{lo:.4f}, {hi:.4f}] 应包含 diff {diff:.4f}。")
        if bool(real) != bool(lo > 0 or hi < 0):
            raise Failure(f"real 应当恰好等于“区间不含 0”：区间 [{lo:.4f}, {hi:.4f}]，你的 real = {real}。")

    property_check(prop, st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1)), min_size=2, max_size=40),
                   max_examples=60)


def _paired_unpaired(a, b, n=2000, seed=0):
    """Wrong: a and b resampled independently (as if two separate samples of questions)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    rng = np.random.default_rng(seed)
    ma = a[rng.integers(0, len(a), size=(n, len(a)))].mean(axis=1)
    mb = b[rng.integers(0, len(b), size=(n, len(b)))].mean(axis=1)
    lo, hi = np.percentile(ma - mb, [2.5, 97.5])
    return float(a.mean() - b.mean()), float(lo), float(hi), bool(lo > 0 or hi < 0)


def _paired_permutation(a, b, n=2000, seed=0):
    """Wrong: shuffles instead of drawing with replacement (every resample has the same mean)."""
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    rng = np.random.default_rng(seed)
    means = [rng.permutation(d).mean() for _ in range(n)]
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(d.mean()), float(lo), float(hi), bool(lo > 0 or hi < 0)


def _paired_overlap_rule(a, b, n=2000, seed=0):
    """Wrong: two separate intervals, 'real' only when they do not overlap."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    rng = np.random.default_rng(seed)
    ia = np.percentile(a[rng.integers(0, len(a), size=(n, len(a)))].mean(axis=1), [2.5, 97.5])
    ib = np.percentile(b[rng.integers(0, len(b), size=(n, len(b)))].mean(axis=1), [2.5, 97.5])
    diff = float(a.mean() - b.mean())
    return diff, float(ia[0] - ib[1]), float(ia[1] - ib[0]), bool(ia[0] > ib[1] or ib[0] > ia[1])


exercise(Exercise(
    id="ex5-paired",
    title="练习 5.2 配对自助法：差别是真的吗？",
    task="实现 paired_ci(a, b, n=2000, seed=0) -> (diff, lo, hi, real)：a、b 是两个方案在同一批题上的逐题指标"
         "（如 hit 的 0/1）。diff = mean(a − b)；用 np.random.default_rng(seed) 有放回地重抽 n 次题号，"
         "两组用同一批题号；lo、hi 是重抽均值差的 2.5% 与 97.5% 分位数；real 表示区间不含 0。",
    checks=[("基本约定：差值方向、区间包含均值、可复现、相同结果不算差别", _paired_basics),
            ("必须配对：只在少数题上不同的两组结果，区间要窄且不含 0", _paired_is_paired),
            ("随机 0/1 数据上的性质", _paired_properties)],
    solution=_reference_paired,
    wrong=[_paired_unpaired, _paired_permutation, _paired_overlap_rule],
))


# --------------------------------------------------------------------------------------------
# ex5-decide
# --------------------------------------------------------------------------------------------

#: The four decisions (actions, not verdict words): adopt, refuse, keep the simpler one (equivalent),
#: undecided so more questions are needed. "采纳" / "不采纳" are chapter 7's words for its adoption rule.
ADOPT, REFUSE, EQUIVALENT, UNDECIDED = "采纳", "不采纳", "选更简单的", "需要更多题"
DECISIONS = (ADOPT, REFUSE, EQUIVALENT, UNDECIDED)


def _reference_decision(diff, lo, hi, margin=0.02):
    """new − current with its deciding interval: significance first, then equivalence (as ``stats.decide``)."""
    if lo > 0:
        return ADOPT
    if hi < 0:
        return REFUSE
    if -margin <= lo and hi <= margin:
        return EQUIVALENT
    return UNDECIDED


def _pct_text(x: float) -> str:
    """A signed percentage; an exact 0 printed as 0 (an end touching 0 must read as 0, not +0.0%)."""
    return "0" if x == 0 else f"{x:+.1%}"


def _why(diff, lo, hi, margin, want, got) -> str:
    """The reader's mistake on one result, in words."""
    interval = f"区间 [{_pct_text(lo)}, {_pct_text(hi)}]，等效界值 ±{margin:.1%}"
    act = got if got != REFUSE else "下“不采纳”的结论"
    if got not in DECISIONS:
        return f"decision 应返回四个词之一：{'、'.join(DECISIONS)}；你的函数返回了 {got!r}。"
    if want == UNDECIDED and got == EQUIVALENT:
        return (f"{interval}：区间含 0，但伸到了界值之外。区间含 0 只说明这批题分不出高下（未能区分），不是平手；"
                f"要说两者等效、可以放心选更简单的，整个区间都得落在 ±界值之内。应是“{UNDECIDED}”。")
    if want == UNDECIDED:
        return f"{interval}：区间含 0，差值的正负都说不准，不能据此{act}。应是“{UNDECIDED}”。"
    if want == EQUIVALENT and got == UNDECIDED:
        return (f"{interval}：整个区间都在 ±界值之内，即使有差别也小到可以不管，两者等效：应是“{EQUIVALENT}”，"
                "不必再加题。")
    if want == EQUIVALENT:
        return f"{interval}：区间含 0，不能{act}；它整个在 ±界值之内，两者等效，应是“{EQUIVALENT}”。"
    side = "之上" if want == ADOPT else "之下"
    if got == EQUIVALENT:
        return (f"{interval}：区间整个在 0 {side}，差别是真的（哪怕不大），应是“{want}”。"
                "先看区间含不含 0，含 0 时才轮到看界值。")
    if got == UNDECIDED:
        return f"{interval}：区间整个在 0 {side}（不含 0），已经分得出来，应是“{want}”。"
    return f"{interval}：区间整个在 0 {side}，应是“{want}”，你的函数说“{got}”（是不是把差值的方向弄反了？）。"


#: Hand-made results (diff, lo, hi, margin) and the decision each allows.
_DECIDE_CASES = [
    (0.031, 0.012, 0.050, 0.02, ADOPT),
    (-0.040, -0.067, -0.013, 0.02, REFUSE),
    (0.002, -0.008, 0.011, 0.02, EQUIVALENT),
    (0.019, -0.008, 0.046, 0.02, UNDECIDED),      # chapter 7's hit@5, first week to last: not a tie
    (0.0, -0.109, 0.109, 0.02, UNDECIDED),        # a zero with a wide interval says nothing
    (0.010, 0.004, 0.016, 0.02, ADOPT),           # inside the margin, but the interval excludes 0
    (0.025, 0.0, 0.050, 0.02, UNDECIDED),         # touching 0 is containing 0
    (-0.005, -0.020, 0.010, 0.02, EQUIVALENT),    # the margin's end belongs to it
    (0.002, -0.008, 0.011, 0.005, UNDECIDED),     # a stricter margin, the same interval
]


def _call_decision(candidate, diff, lo, hi, margin):
    return candidate(diff, lo, hi, margin=margin)


def _decide_examples(candidate) -> None:
    wrong = []
    for diff, lo, hi, margin, want in _DECIDE_CASES:
        got = _call_decision(candidate, diff, lo, hi, margin)
        if got != want:
            wrong.append(f"decision({diff:+.3f}, {lo:+.3f}, {hi:+.3f}, margin={margin}) 返回 {got!r}。"
                         + _why(diff, lo, hi, margin, want, got))
    if wrong:
        raise Failure(f"{len(_DECIDE_CASES)} 个结果里有 {len(wrong)} 个判错了：\n" + "\n".join(wrong))


_pct = st.integers(-150, 150).map(lambda x: x / 1000)


def _decide_properties(candidate) -> None:
    def prop(a, b, c, m):
        lo, diff, hi = sorted((a, b, c))
        margin = m / 1000
        got = _call_decision(candidate, diff, lo, hi, margin)
        want = _reference_decision(diff, lo, hi, margin)
        if got != want:
            raise Failure(f"decision({diff:+.3f}, {lo:+.3f}, {hi:+.3f}, margin={margin}) 返回 {got!r}。"
                          + _why(diff, lo, hi, margin, want, got))

    property_check(prop, _pct, _pct, _pct, st.integers(0, 50), max_examples=200)


def _decide_zero_is_tie(diff, lo, hi, margin=0.02):
    """Wrong: an interval containing 0 read as a tie."""
    if lo > 0:
        return ADOPT
    if hi < 0:
        return REFUSE
    return EQUIVALENT


def _decide_by_point(diff, lo, hi, margin=0.02):
    """Wrong: the point estimate against the margin, the interval ignored."""
    if abs(diff) <= margin:
        return EQUIVALENT
    return ADOPT if diff > 0 else REFUSE


def _decide_margin_first(diff, lo, hi, margin=0.02):
    """Wrong: equivalence tested before significance (a small real gain called equivalent)."""
    if -margin <= lo and hi <= margin:
        return EQUIVALENT
    if lo > 0:
        return ADOPT
    if hi < 0:
        return REFUSE
    return UNDECIDED


def _decide_fixed_margin(diff, lo, hi, margin=0.02):
    """Wrong: the margin hard-coded at 2 points."""
    return _reference_decision(diff, lo, hi, 0.02)


exercise(Exercise(
    id="ex5-decide",
    title="练习 5.3 读配对区间：它允许什么决定？",
    task="实现 decision(diff, lo, hi, margin=0.02)：diff 是“新方案 − 当前方案”的配对差值，[lo, hi] 是做判定的区间，"
         "margin 是事先定好的等效界值。返回四个决定之一：区间整个在 0 之上返回“采纳”，整个在 0 之下返回“不采纳”；"
         "区间含 0 且整个落在 [−margin, +margin] 之内（等效）返回“选更简单的”；其余（未能区分）返回“需要更多题”。",
    checks=[("九个手算的结果（含边界：区间端点恰好是 0、恰好是界值）", _decide_examples),
            ("随机区间上与参考实现一致", _decide_properties)],
    solution=_reference_decision,
    wrong=[_decide_zero_is_tie, _decide_by_point, _decide_margin_first, _decide_fixed_margin],
))
