"""Chapter 6 exercises: expanding a layered candidate set, and the clause cut rate.

* ``ex6-grid`` — ``expand_layers(layers)``: every layer is a list of grid entries
  (``{"strategy": name, knob: [values] or value}``); a list is a dimension of the cross product,
  anything else is a fixed value. Return the valid configs of all layers, each once (claim C24;
  the same rules as :func:`chunklab.evaluation.matrix.expand_grid` for lists and scalars).
* ``ex6-cutrate`` — ``cut_rate(articles, chunks)``: the share of articles that lie in no single
  chunk (claim C21; ``structure_metrics(...)["clause_cut_rate"]`` on trimmed spans).
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
