"""Chapter 6 exercises: expanding a layered candidate set, and the clause cut rate.

* ``ex6-grid`` — ``expand_layers(layers)``: every layer is a list of grid entries
  (``{"strategy": name, knob: [values] or value}``); a list is a dimension of the cross product,
  anything else is a fixed value. Return the valid configs of all layers, each once (claim C24;
  the same rules as :func:`chunklab.evaluation.matrix.expand_grid` for lists and scalars).
* ``ex6-cutrate`` — ``cut_rate(articles, chunks)``: the share of articles that lie in no single
  chunk (claim C21; ``structure_metrics(...)["clause_cut_rate"]`` on trimmed spans).
* ``ex6-ruler`` — ``pick_ruler(scenario)``: which ruler answers a comparison fairly, fixed k
  (``"fixed_k"``) or a fixed context budget (``"budget"``), and why (a reason key).
"""
from __future__ import annotations

import itertools

from hypothesis import strategies as st

from ...base import get_strategy
from . import Exercise, Failure, exercise, property_check

# --------------------------------------------------------------------------------------------
# ex6-grid
# --------------------------------------------------------------------------------------------


def _valid(strategy, params) -> bool:

    try:
        get_strategy(strategy, **params)
    except (ValueError, TypeError):
        return False
    return True


def _reference_expand(layers):
    """All valid configs of all layers, each once, in layer order."""
    out, seen = [], set()
    for layer in layers:
        for entry in layer:
            name = entry["strategy"]
            keys = [k for k in entry if k != "strategy"]
            values = [entry[k] if isinstance(entry[k], list) else [entry[k]] for k in keys]
            for combo in itertools.product(*values):
                params = dict(zip(keys, combo))
                key = (name, tuple(sorted(params.items())))
                if key in seen or not _valid(name, params):
                    continue
                seen.add(key)
                out.append({"strategy": name, **params})
    return out


def _configs(result, call):
    try:
        out = []
        for c in result:
            c = dict(c)
            out.append((c.pop("strategy"), tuple(sorted(c.items()))))
        return out
    except (TypeError, ValueError, KeyError, AttributeError):
        raise Failure(f"{call} 应返回配置字典的列表，例如 [{{'strategy': 'fixed', 'size': 512, 'overlap': 0}}]。") from None


def _fmt(cfg):
    name, items = cfg
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in items)})"


EXAMPLE = [
    [{"strategy": "recursive", "target": [256, 512], "overlap": 0}, {"strategy": "fixed", "size": 512}],  # layer 1
    [{"strategy": "recursive", "target": 512, "overlap": [0, 50, 600]}],                                  # layer 2
    [{"strategy": "table", "mode": "rows", "rows": [5, 10]}],                                        # layer 3
]


def _grid_example(candidate) -> None:
    want = _configs(_reference_expand(EXAMPLE), "参考实现")
    got = _configs(candidate([list(layer) for layer in EXAMPLE]), "expand_layers(EXAMPLE)")
    bad = [c for c in got if not _valid(c[0], dict(c[1]))]
    if bad:
        raise Failure(f"{_fmt(bad[0])} 不是一个合法配置（chunklab.get_strategy 会拒绝它，例如 overlap 必须小于 target），"
                      "应当跳过，而不是放进候选集。")
    dup = [c for c in set(got) if got.count(c) > 1]
    if dup:
        raise Failure(f"{_fmt(dup[0])} 出现了 {got.count(dup[0])} 次：同一个配置在两层里都出现时只算一次，"
                      "否则候选集的规模被高估，还会被重复评测。")
    missing = [c for c in want if c not in got]
    if missing:
        hint = ""
        if any(c[0] == "table" for c in missing):
            hint = "（'rows' 这样的字符串是一个固定值，不是一个维度：只有 list 才要展开）"
        raise Failure(f"漏掉了合法配置 {_fmt(missing[0])}{hint}。")
    if len(got) != len(want):
        raise Failure(f"这个例子应展开成 {len(want)} 组配置，你的结果有 {len(got)} 组。")


def _grid_properties(candidate) -> None:
    sizes = st.lists(st.sampled_from([32, 64, 128]), min_size=1, max_size=3, unique=True)
    overlaps = st.lists(st.sampled_from([0, 16, 64, 200]), min_size=1, max_size=3, unique=True)
    entry = st.tuples(st.sampled_from(["fixed", "recursive"]), sizes, overlaps).map(
        lambda t: {"strategy": t[0], ("size" if t[0] == "fixed" else "target"): t[1], "overlap": t[2]})

    def prop(layers):
        got = _configs(candidate([list(layer) for layer in layers]), f"expand_layers({layers})")
        want = _configs(_reference_expand(layers), "参考实现")
        if sorted(got) != sorted(want):
            extra = [c for c in got if c not in want or got.count(c) > want.count(c)]
            lost = [c for c in want if c not in got]
            what = f"多出了 {_fmt(extra[0])}" if extra else f"漏掉了 {_fmt(lost[0])}"
            raise Failure(f"expand_layers({layers})：{what}。")

    property_check(prop, st.lists(st.lists(entry, min_size=1, max_size=2), min_size=1, max_size=3),
                   max_examples=60)


def _grid_no_validation(layers):
    """Wrong: the plain cross product, invalid combinations included."""
    out = []
    for layer in layers:
        for entry in layer:
            keys = [k for k in entry if k != "strategy"]
            values = [entry[k] if isinstance(entry[k], list) else [entry[k]] for k in keys]
            for combo in itertools.product(*values):
                cfg = {"strategy": entry["strategy"], **dict(zip(keys, combo))}
                if cfg not in out:
                    out.append(cfg)
    return out


def _grid_no_dedup(layers):
    """Wrong: valid configs, but a config repeated across layers is kept twice."""
    out = []
    for layer in layers:
        for entry in layer:
            keys = [k for k in entry if k != "strategy"]
            values = [entry[k] if isinstance(entry[k], list) else [entry[k]] for k in keys]
            for combo in itertools.product(*values):
                params = dict(zip(keys, combo))
                if _valid(entry["strategy"], params):
                    out.append({"strategy": entry["strategy"], **params})
    return out


def _grid_iterates_strings(layers):
    """Wrong: every value that can be iterated is treated as a dimension (strings included)."""
    out = []
    for layer in layers:
        for entry in layer:
            keys = [k for k in entry if k != "strategy"]
            values = [entry[k] if hasattr(entry[k], "__iter__") else [entry[k]] for k in keys]
            for combo in itertools.product(*values):
                cfg = {"strategy": entry["strategy"], **dict(zip(keys, combo))}
                if cfg not in out and _valid(entry["strategy"], dict(zip(keys, combo))):
                    out.append(cfg)
    return out


exercise(Exercise(
    id="ex6-grid",
    title="练习 6.1 展开分层候选集",
    task="实现 expand_layers(layers)：layers 是若干层，每层是若干条目 {'strategy': 名字, 旋钮: 值}；"
         "值是 list 时是一个维度（做笛卡尔积），否则是固定值。返回所有层的合法配置（chunklab.get_strategy 接受的），"
         "每个配置只出现一次，形如 {'strategy': 'recursive', 'target': 512, 'overlap': 50}。",
    checks=[("一个三层的例子（含非法组合、跨层重复、字符串固定值）", _grid_example),
            ("随机分层网格上与参考实现一致", _grid_properties)],
    solution=_reference_expand,
    wrong=[_grid_no_validation, _grid_no_dedup, _grid_iterates_strings],
))


# --------------------------------------------------------------------------------------------
# ex6-cutrate
# --------------------------------------------------------------------------------------------


def _reference_cut_rate(articles, chunks):
    """Share of articles [a, b) lying in no single chunk [s, e) (s <= a and b <= e)."""
    if not articles:
        return 0.0
    cut = sum(not any(s <= a and b <= e for s, e in chunks) for a, b in articles)
    return cut / len(articles)


def _rate(value, call):
    try:
        return float(value)
    except (TypeError, ValueError):
        raise Failure(f"{call} 应返回一个比例（float），你的函数返回了 {value!r}。") from None


def _cut_examples(candidate) -> None:
    cases = [
        ([(0, 10), (10, 20)], [(0, 10), (10, 20)], 0.0, "每条都恰好是一块：没有条款被切断"),
        ([(0, 10), (10, 20)], [(0, 15), (15, 20)], 0.5, "第二条 [10, 20) 被 15 处的刀切开了"),
        ([(0, 10), (10, 20)], [(0, 6), (4, 12), (10, 20)], 0.5,
         "第一条 [0, 10) 被 [0, 6) 和 [4, 12) 分走了：两块合起来覆盖了它，但没有任何一块单独装下它，仍算切断"),
        ([(0, 10), (10, 20)], [(0, 12), (8, 20)], 0.0,
         "带重叠的切分：有块从第一条中间（8）开始，但 [0, 12) 已经完整装下了第一条，第二条也完整地在 [8, 20) 里，都不算切断"),
        ([(0, 10), (10, 20), (20, 30), (30, 40)], [(0, 25), (25, 40)], 0.25,
         "按条款数算比例（4 条里 1 条被切），而不是按块数"),
        ([], [(0, 5)], 0.0, "没有条款时返回 0.0"),
    ]
    for articles, chunks, want, why in cases:
        got = _rate(candidate(list(articles), list(chunks)), f"cut_rate({articles}, {chunks})")
        if abs(got - want) > 1e-9:
            raise Failure(f"{why}。\ncut_rate({articles}, {chunks}) 应为 {want}，你的结果是 {got}。")


def _cut_properties(candidate) -> None:
    def prop(cuts, chunk_spans):
        bounds = sorted(set(cuts)) + [60]
        articles = [(a, b) for a, b in zip([0] + bounds[:-1], bounds) if b > a]
        chunks = sorted(chunk_spans)
        got = _rate(candidate(list(articles), list(chunks)), f"cut_rate({articles}, {chunks})")
        want = _reference_cut_rate(articles, chunks)
        if abs(got - want) > 1e-9:
            raise Failure(f"cut_rate({articles}, {chunks}) 应为 {want:.4f}，你的结果是 {got:.4f}。")

    span = st.tuples(st.integers(0, 55), st.integers(1, 30)).map(lambda t: (t[0], min(60, t[0] + t[1])))
    property_check(prop, st.lists(st.integers(1, 59), max_size=6), st.lists(span, min_size=1, max_size=6))


def _cut_union(articles, chunks):
    """Wrong: an article counts as intact when the chunks together cover it."""
    if not articles:
        return 0.0
    covered = set()
    for s, e in chunks:
        covered.update(range(s, e))
    return sum(not set(range(a, b)) <= covered for a, b in articles) / len(articles)


def _cut_starts_inside(articles, chunks):
    """Wrong: an article is cut when a chunk starts strictly inside it (breaks with overlap)."""
    if not articles:
        return 0.0
    return sum(any(a < s < b for s, _ in chunks) for a, b in articles) / len(articles)


def _cut_per_chunk(articles, chunks):
    """Wrong: counts cutting chunks over the number of chunks."""
    if not chunks:
        return 0.0
    bad = sum(any(s < b and a < e and not (a <= s and e <= b) and not (s <= a and b <= e) for a, b in articles)
              for s, e in chunks)
    return bad / len(chunks)


exercise(Exercise(
    id="ex6-cutrate",
    title="练习 6.2 条款切断率",
    task="实现 cut_rate(articles, chunks)：两者都是同一文档里的 (start, end) 列表（左闭右开）。"
         "一条条款如果没有被任何一个块完整装下（s <= a 且 b <= e），就算被切断；返回被切断的条款占全部条款的比例，"
         "没有条款时返回 0.0。",
    checks=[("六个手算的例子（含重叠块、按条款计数）", _cut_examples),
            ("随机条款与块上与参考实现一致", _cut_properties)],
    solution=_reference_cut_rate,
    wrong=[_cut_union, _cut_starts_inside, _cut_per_chunk],
))


# --------------------------------------------------------------------------------------------
# ex6-ruler
# --------------------------------------------------------------------------------------------

#: Mean chunk lengths further apart than this ratio (longest / shortest) hand over visibly
#: different amounts of text at the same k.
RULER_RATIO = 1.2
RULERS = ("fixed_k", "budget")
#: Reason keys: what decides the ruler.
REASONS = {
    "prompt_budget": "生产系统按固定的提示词预算装上下文：评测就该量同一件事",
    "chars_differ": "平均块长最长 / 最短超过 1.2：固定 k 下大块交出去的字更多，会不公平地占优",
    "same_chars": "平均块长最长 / 最短不超过 1.2：固定 k 下交出去的字数相当，hit@5 是公平的，也能和文章的数字对照",
}


def _reference_ruler(scenario):
    """Budget when production has a prompt budget or the chunk lengths differ; fixed k otherwise."""
    if scenario.get("prompt_budget"):
        return "budget", "prompt_budget"
    lens = list(scenario["mean_chars"].values())
    if max(lens) / min(lens) > RULER_RATIO:
        return "budget", "chars_differ"
    return "fixed_k", "same_chars"


#: The scenarios of the exercise (mean chunk lengths measured on the law corpus, to the character;
#: recursive vs fixed at 512 sits on the 1.2 line: 497 / 415 = 1.198).
RULER_SCENARIOS = [
    {"question": "块长取 256 还是 1024（递归切分，系统每次取前 5 块）",
     "mean_chars": {"recursive 256": 182, "recursive 1024": 887}, "prompt_budget": None},
    {"question": "同样 target = 512，递归切分还是固定窗口（系统每次取前 5 块）",
     "mean_chars": {"recursive 512": 415, "fixed 512": 497}, "prompt_budget": None},
    {"question": "同样 target = 512，段落切分（一段一块）还是递归切分（系统每次取前 5 块）",
     "mean_chars": {"paragraph 一段一块": 108, "recursive 512": 415}, "prompt_budget": None},
    {"question": "同样 target = 512，加不加上下文前缀；系统按 3,000 字的提示词预算装上下文",
     "mean_chars": {"recursive 512": 415, "recursive 512 + 前缀": 415}, "prompt_budget": 3000},
]


def _answer(result, call):
    try:
        ruler, reason = result
    except (TypeError, ValueError):
        raise Failure(f"{call} 应返回 (尺子, 理由) 两项，例如 ('budget', 'chars_differ')，你的函数返回了 {result!r}。") from None
    if ruler not in RULERS:
        raise Failure(f"{call} 的尺子应是 'fixed_k' 或 'budget' 之一，你的结果是 {ruler!r}。")
    if reason not in REASONS:
        raise Failure(f"{call} 的理由应是 {', '.join(map(repr, REASONS))} 之一，你的结果是 {reason!r}。")
    return ruler, reason


def _explain(scenario, got, want) -> str:
    """Why the candidate's choice is wrong for ``scenario``, in the reader's terms."""
    lens = scenario["mean_chars"]
    ratio = max(lens.values()) / min(lens.values())
    where = f"“{scenario['question']}”（平均块长 {'、'.join(f'{k} {v} 字' for k, v in lens.items())}，最长 / 最短 = {ratio:.2f}）"
    if got[0] != want[0]:
        if want[0] == "budget" and want[1] == "prompt_budget":
            why = ("系统按固定预算装上下文，每组配置交给模型的字数由预算决定，不由 k 决定；"
                   "用固定 k 量，量的不是生产里发生的事")
        elif want[0] == "budget":
            why = (f"固定 k = 5 时，平均 {max(lens.values())} 字的块每题交出去的字约是 {min(lens.values())} 字的块的 "
                   f"{ratio:.1f} 倍：大块靠多交字数赢，比的不是切得好不好（第 6 章 6.5 节的两张热力图）")
        else:
            why = (f"各组平均块长最长 / 最短 = {ratio:.2f}，不超过 {RULER_RATIO}，固定 k 下交出去的字数相当，hit@5 已经公平；"
                   "也没有生产预算要模拟。这时用文章的尺子，结果还能和文章的数字直接对照")
        return f"{where}：应选 {want[0]!r}，你选了 {got[0]!r}。{why}。"
    return (f"{where}：尺子 {want[0]!r} 选对了，但理由应是 {want[1]!r}（{REASONS[want[1]]}），"
            f"你给的是 {got[1]!r}（{REASONS[got[1]]}）。")


def _ruler_examples(candidate) -> None:
    for sc in RULER_SCENARIOS:
        got = _answer(candidate(dict(sc, mean_chars=dict(sc["mean_chars"]))), f"pick_ruler(“{sc['question']}”)")
        want = _reference_ruler(sc)
        if got != want:
            raise Failure(_explain(sc, got, want))


def _ruler_properties(candidate) -> None:
    lengths = st.lists(st.integers(50, 2000), min_size=2, max_size=4)
    budget = st.one_of(st.none(), st.sampled_from([2000, 2560, 4000]))

    def prop(lens, prompt_budget):
        sc = {"question": "随机场景", "mean_chars": {f"配置 {i + 1}": n for i, n in enumerate(lens)},
              "prompt_budget": prompt_budget}
        got = _answer(candidate(dict(sc, mean_chars=dict(sc["mean_chars"]))), f"pick_ruler({sc})")
        want = _reference_ruler(sc)
        if got != want:
            raise Failure(_explain(sc, got, want))

    property_check(prop, lengths, budget, max_examples=80)


def _ruler_always_k(scenario):
    """Wrong: always the article's ruler."""
    return "fixed_k", "same_chars"


def _ruler_ignores_budget(scenario):
    """Wrong: looks only at the chunk lengths, never at the production budget."""
    lens = list(scenario["mean_chars"].values())
    return ("budget", "chars_differ") if max(lens) / min(lens) > RULER_RATIO else ("fixed_k", "same_chars")


def _ruler_by_label(scenario):
    """Wrong: budget only when the labels name different sizes (equal target taken as equal length)."""
    if scenario.get("prompt_budget"):
        return "budget", "prompt_budget"
    sizes = {next((w for w in label.split() if w.isdigit()), None) for label in scenario["mean_chars"]}
    return ("budget", "chars_differ") if len(sizes) > 1 else ("fixed_k", "same_chars")


def _ruler_wrong_reason(scenario):
    """Wrong: the right ruler, but always the same reason for a budget."""
    ruler, _ = _reference_ruler(scenario)
    return (ruler, "chars_differ") if ruler == "budget" else (ruler, "same_chars")


exercise(Exercise(
    id="ex6-ruler",
    title="练习 6.3 为一个问题挑尺子",
    task="实现 pick_ruler(scenario)：scenario 有 'question'（要比较什么）、'mean_chars'（每组配置的平均块长，字）"
         "和 'prompt_budget'（生产系统的提示词预算，字；None 表示系统取固定的前 k 块）。返回 (尺子, 理由)："
         "尺子是 'fixed_k' 或 'budget'；理由是 'prompt_budget'（系统按预算装上下文）、"
         "'chars_differ'（平均块长最长 / 最短 > 1.2）或 'same_chars'（不超过 1.2）之一。",
    checks=[("四个场景：比块长、同尺寸比切法、一段一块对递归、有提示词预算的系统", _ruler_examples),
            ("随机场景上与参考答案一致", _ruler_properties)],
    solution=_reference_ruler,
    wrong=[_ruler_always_k, _ruler_ignores_budget, _ruler_by_label, _ruler_wrong_reason],
))
