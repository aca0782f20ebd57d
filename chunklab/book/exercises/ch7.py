"""Chapter 7 exercises: an index version that means something, and a re-chunking plan.

* ``ex7-version`` — a version string for (configuration, chunking code version, documents) that
  changes when any of them changes and never because a dict was written in another order (the idea
  of :func:`chunklab.tools.versioning.index_version`).
* ``ex7-plan`` — from two manifests, decide between a full rebuild and an incremental update, and
  which documents to re-chunk and delete (the rule of :func:`chunklab.tools.versioning.plan_rechunk`).
* ``ex7-rule`` — write and apply an adoption rule: from a paired comparison (candidate minus
  current, same budget) and whether the candidate is simpler, answer "adopt", "refuse" or
  "need_more_data", with the no-worse-and-simpler branch at the book's equivalence margin.
"""
from __future__ import annotations

import hashlib
import json

from hypothesis import strategies as st

from ...evaluation.stats import EQUIVALENCE_MARGINS
from . import Exercise, Failure, exercise, property_check

# --------------------------------------------------------------------------------------------
# ex7-version
# --------------------------------------------------------------------------------------------


def _reference_version(config, code_version, docs):
    payload = {"config": config, "code": code_version, "docs": docs}
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _reordered(d):
    """The same dict (recursively) with its keys inserted in reverse order."""
    if isinstance(d, dict):
        return {k: _reordered(d[k]) for k in reversed(list(d))}
    return d


def _v(candidate, config, code, docs):
    out = candidate(config, code, docs)
    if not isinstance(out, str) or not out:
        raise Failure(f"version(...) 应返回非空字符串（例如十六进制摘要），你返回了 {out!r}。")
    return out


_CFG = {"strategy": "auto", "params": {"target": 500, "overlap": 50, "prefix": True}, "use_context": True}
_DOCS = {"handbook": "## 病假\n病假需证明。", "travel": "| 城市 | 限额 |\n| 北京 | 600 |"}


def _version_examples(candidate) -> None:
    a = _v(candidate, _CFG, "0.1.0", _DOCS)
    if _v(candidate, _CFG, "0.1.0", dict(_DOCS)) != a:
        raise Failure("同样的输入调用两次，版本号应完全相同（别用随机数、时间或 id()）。")
    if _v(candidate, _reordered(_CFG), "0.1.0", _DOCS) != a:
        raise Failure("只是把配置字典（包括里面的 params）的键换个顺序写，版本号不应改变："
                      "序列化时要排序键，例如 json.dumps(..., sort_keys=True)。")
    if _v(candidate, _CFG, "0.1.0", _reordered(_DOCS)) != a:
        raise Failure("文档字典的键顺序不同（同样的文档），版本号不应改变。")
    changes = [
        ({**_CFG, "params": {**_CFG["params"], "target": 300}}, "0.1.0", _DOCS, "把 params 里的 target 从 500 改成 300"),
        ({**_CFG, "use_context": False}, "0.1.0", _DOCS, "把 use_context 从 True 改成 False"),
        (_CFG, "0.2.0", _DOCS, "切分代码版本从 0.1.0 变成 0.2.0"),
        (_CFG, "0.1.0", {**_DOCS, "handbook": "## 病假\n病假需三甲医院证明。"}, "改动一篇文档的正文"),
        (_CFG, "0.1.0", {**_DOCS, "faq": "问：几点上班？答：九点。"}, "新增一篇文档"),
        (_CFG, "0.1.0", {"handbook": _DOCS["handbook"]}, "删除一篇文档"),
    ]
    for cfg, code, docs, what in changes:
        if _v(candidate, cfg, code, docs) == a:
            raise Failure(f"{what}之后，版本号应该变化（否则旧索引会被当成新配置的索引继续使用），但你的版本号没变。")


_text = st.text("甲乙丙。\n", max_size=8)
_docs = st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), _text, min_size=2, max_size=4)


def _version_properties(candidate) -> None:
    def prop(docs, target, cut):
        ids = sorted(docs)
        cfg = {"strategy": "recursive", "params": {"target": target, "overlap": 0}}
        base = _v(candidate, cfg, "1", docs)
        if _v(candidate, _reordered(cfg), "1", _reordered(docs)) != base:
            raise Failure(f"键顺序不同但内容相同的输入得到了不同的版本号：docs={docs}, config={cfg}。")
        a, b = ids[0], ids[1]
        edited = {**docs, a: docs[a] + "乙"}
        if _v(candidate, cfg, "1", edited) == base:
            raise Failure(f"文档 {a!r} 的正文从 {docs[a]!r} 改成 {edited[a]!r} 后版本号没变：文档正文必须参与哈希。")
        # move the boundary between two documents' texts: same concatenation, different corpus
        joined = docs[a] + docs[b]
        k = min(cut, len(joined))
        moved = {**docs, a: joined[:k], b: joined[k:]}
        if moved != docs and _v(candidate, cfg, "1", moved) == base:
            raise Failure(f"文档 {a!r}、{b!r} 的正文从 {docs[a]!r} / {docs[b]!r} 变成 {moved[a]!r} / {moved[b]!r}（拼起来一样），"
                          "版本号却没变：不能把各篇正文直接首尾相连再哈希，要保留「哪段文字属于哪篇文档」。")
        other = {**cfg, "params": {"target": target + 1, "overlap": 0}}
        if _v(candidate, other, "1", docs) == base:
            raise Failure(f"target 从 {target} 改成 {target + 1} 后版本号没变。")

    property_check(prop, _docs, st.integers(1, 2000), st.integers(0, 16), max_examples=120)


exercise(Exercise(
    id="ex7-version",
    title="练习 7.1 索引版本号",
    task="实现 version(config, code_version, docs) -> str：config 是切分配置（可嵌套的 dict），code_version 是切分代码的版本，"
         "docs 是 {文档 id: 正文}。三者任何一处变化，版本号都要变；字典的键顺序不同不算变化。",
    checks=[("手算的例子：键顺序、改参数、改代码版本、改/增/删文档", _version_examples),
            ("随机输入上的性质：键顺序无关、文档边界移动也能发现", _version_properties)],
    solution=_reference_version,
    wrong=[
        # str() of a dict keeps insertion order: the key order leaks into the hash
        lambda config, code, docs: hashlib.sha256(str((config, code, docs)).encode()).hexdigest(),
        # the documents are forgotten
        lambda config, code, docs: hashlib.sha256(json.dumps([config, code], sort_keys=True).encode()).hexdigest(),
        # texts glued together: moving text from one document to the next goes unnoticed
        lambda config, code, docs: hashlib.sha256(
            (json.dumps([config, code], sort_keys=True) + "".join(docs[k] for k in sorted(docs))).encode()).hexdigest(),
    ],
))

# --------------------------------------------------------------------------------------------
# ex7-plan
# --------------------------------------------------------------------------------------------


def _reference_plan(old, new):
    od, nd = old["docs"], new["docs"]
    if old["config"] != new["config"] or old["code"] != new["code"]:
        return {"rebuild": True, "rechunk": sorted(nd), "delete": sorted(od)}
    changed = {d for d in nd if d in od and od[d] != nd[d]}
    added = {d for d in nd if d not in od}
    removed = {d for d in od if d not in nd}
    return {"rebuild": False, "rechunk": sorted(changed | added), "delete": sorted(changed | removed)}


def _as_plan(out):
    if not isinstance(out, dict) or set(out) != {"rebuild", "rechunk", "delete"}:
        raise Failure("plan(...) 应返回形如 {'rebuild': False, 'rechunk': [...], 'delete': [...]} 的字典"
                      f"（恰好这三个键），你返回了 {out!r}。")
    try:
        return {"rebuild": bool(out["rebuild"]), "rechunk": sorted(out["rechunk"]), "delete": sorted(out["delete"])}
    except TypeError:
        raise Failure("rechunk 和 delete 应是文档 id（字符串）的列表。") from None


def _m(config="c1", code="0.1.0", **docs):
    return {"config": config, "code": code, "docs": docs}


def _explain(old, new, got, want) -> str:
    lines = [f"旧清单 {old}", f"新清单 {new}", f"应得到 {want}", f"你的结果 {got}"]
    if want["rebuild"] and not got["rebuild"]:
        lines.append("配置或切分代码版本变了：旧索引里的块是别的切法切的，必须全量重建，不能只补改动的文档。")
    elif not want["rebuild"] and got["rebuild"]:
        lines.append("配置和代码版本都没变，只是文档有增删改：增量更新即可，不需要全量重建。")
    elif set(want["delete"]) - set(got["delete"]):
        miss = sorted(set(want["delete"]) - set(got["delete"]))
        lines.append(f"漏删了 {miss}：被删除的文档要从索引里删掉；正文改动过的文档，它的旧块也要先删掉再重新入库，"
                     "否则旧块和新块会同时被检索到。")
    elif set(want["rechunk"]) - set(got["rechunk"]):
        miss = sorted(set(want["rechunk"]) - set(got["rechunk"]))
        lines.append(f"漏了要重切的文档 {miss}：新增的文档和正文哈希变了的文档都要重新切分"
                     "（比较的是哈希值，不只是 id 在不在）。")
    else:
        lines.append("多切或多删了没有变化的文档：增量更新只动改过的那几篇。")
    return "\n".join(lines)


def _plan_examples(candidate) -> None:
    cases = [
        (_m(a="h1", b="h2"), _m(a="h1", b="h2")),
        (_m(a="h1", b="h2", c="h3"), _m(a="h1", b="h2x", d="h4")),
        (_m(a="h1", b="h2"), _m(config="c2", a="h1", b="h2")),
        (_m(a="h1", b="h2"), _m(code="0.2.0", a="h1", c="h3")),
    ]
    for old, new in cases:
        got = _as_plan(candidate(old, new))
        want = _reference_plan(old, new)
        if got != want:
            raise Failure(_explain(old, new, got, want))


_manifest = st.builds(
    lambda cfg, code, docs: {"config": cfg, "code": code, "docs": docs},
    st.sampled_from(["c1", "c2"]), st.sampled_from(["0.1.0", "0.2.0"]),
    st.dictionaries(st.sampled_from(list("abcdef")), st.sampled_from(["h1", "h2", "h3"]), max_size=6),
)


def _plan_properties(candidate) -> None:
    def prop(old, new):
        got = _as_plan(candidate(old, new))
        want = _reference_plan(old, new)
        if got != want:
            raise Failure(_explain(old, new, got, want))

    property_check(prop, _manifest, _manifest, max_examples=200)


exercise(Exercise(
    id="ex7-plan",
    title="练习 7.2 增量重切还是全量重建",
    task="实现 plan(old, new) -> {'rebuild': bool, 'rechunk': [...], 'delete': [...]}。清单形如 "
         "{'config': 配置哈希, 'code': 切分代码版本, 'docs': {文档 id: 正文哈希}}。配置或代码版本变了：全量重建"
         "（rechunk 为新清单的全部文档，delete 为旧清单的全部文档）；否则只重切改动和新增的文档，删除被删除"
         "和被改动文档的旧块。",
    checks=[("四个手算的例子", _plan_examples), ("随机清单上与参考规则一致", _plan_properties)],
    solution=_reference_plan,
    wrong=[
        # ignores a configuration change
        lambda old, new: {"rebuild": False,
                          "rechunk": sorted(d for d in new["docs"] if old["docs"].get(d) != new["docs"][d]),
                          "delete": sorted(d for d in old["docs"] if new["docs"].get(d) != old["docs"][d])},
        # forgets to delete the old chunks of changed documents
        lambda old, new: ({"rebuild": True, "rechunk": sorted(new["docs"]), "delete": sorted(old["docs"])}
                          if (old["config"], old["code"]) != (new["config"], new["code"]) else
                          {"rebuild": False,
                           "rechunk": sorted(d for d in new["docs"] if old["docs"].get(d) != new["docs"][d]),
                           "delete": sorted(d for d in old["docs"] if d not in new["docs"])}),
        # compares ids only: a changed text goes unnoticed
        lambda old, new: ({"rebuild": True, "rechunk": sorted(new["docs"]), "delete": sorted(old["docs"])}
                          if (old["config"], old["code"]) != (new["config"], new["code"]) else
                          {"rebuild": False, "rechunk": sorted(set(new["docs"]) - set(old["docs"])),
                           "delete": sorted(set(old["docs"]) - set(new["docs"]))}),
    ],
))

# --------------------------------------------------------------------------------------------
# ex7-rule
# --------------------------------------------------------------------------------------------

#: The margin the rule uses: the book's equivalence margin for hit (2 points), declared once.
MARGIN = EQUIVALENCE_MARGINS["hit"]
_OUTCOMES = ("adopt", "refuse", "need_more_data")


def _reference_rule(result, simpler):
    lo, hi = result["lo"], result["hi"]
    if lo > 0:                       # a measured gain
        return "adopt"
    if hi < 0:                       # a measured loss
        return "refuse"
    if simpler:                      # no worse than the margin, and simpler
        return "adopt" if lo >= -MARGIN else "need_more_data"
    return "refuse" if hi <= MARGIN else "need_more_data"   # any gain too small to pay for the complexity


def _pct(x: float) -> str:
    """A signed percentage; an exact 0 without a sign (an end touching 0 must not read as above it)."""
    return "0.0%" if x == 0 else f"{100 * x:+.1f}%"


def _case(result, simpler) -> str:
    lo, hi = result["lo"], result["hi"]
    return (f"同预算配对差值 {_pct(result['diff'])} [{_pct(lo)}, {_pct(hi)}]，候选"
            + ("比当前配置更简单" if simpler else "比当前配置更复杂"))


def _why(result, simpler) -> str:
    """Why the reference rule decides as it does, in the reader's words."""
    lo, hi = result["lo"], result["hi"]
    m = f"{100 * MARGIN:.0f} 个点"
    if lo > 0:
        return "区间整个在 0 之上：同预算下测出了提升，应采纳（adopt），简单与否都一样。"
    if hi < 0:
        return "区间整个在 0 之下：测出了损失，应不采纳（refuse）；更简单也抵不了一个测出来的损失。"
    if simpler and lo >= -MARGIN:
        return (f"区间含 0，下端 {_pct(lo)} 没有低于 -{m}：最坏也只比当前配置差 {max(0.0, -100 * lo):.1f} 个点，"
                f"在事先登记的界值（{m}）之内（附录 B 叫它“非劣”）。最坏也差不过界值、而且更简单，应采纳（adopt）——这就是“不差且更简单”那一支。")
    if simpler:
        return (f"候选更简单，但区间下端 {_pct(lo)} 低于 -{m}：它可能让命中率掉得比界值还多。这批题还分不出来，"
                "应回答 need_more_data（加题再量），既不是采纳，也不是不采纳。")
    if hi <= MARGIN:
        return (f"候选更复杂，区间含 0、上端 {_pct(hi)} 不超过 +{m}：即使有收益，也小到不值得为它增加复杂度，"
                "应不采纳（refuse）。区间含 0 不等于“没有作用”，这里拒绝的理由是上端已经够小。")
    return (f"候选更复杂，区间含 0、上端 {_pct(hi)} 超过 +{m}：可能有值得要的收益，也可能没有。这批题分不出，"
            "应回答 need_more_data，而不是直接不采纳：那会把一个可能有用的改动当成没用。")


def _decision(candidate, result, simpler) -> str:
    out = candidate(dict(result), simpler)
    if out not in _OUTCOMES:
        raise Failure(f"rule(...) 应返回 \"adopt\"、\"refuse\" 或 \"need_more_data\" 三者之一，你返回了 {out!r}"
                      f"（输入：{_case(result, simpler)}）。")
    return out


def _check_one(candidate, result, simpler) -> None:
    got, want = _decision(candidate, result, simpler), _reference_rule(result, simpler)
    if got != want:
        raise Failure(f"{_case(result, simpler)}：你的规则答 {got!r}，应为 {want!r}。{_why(result, simpler)}")


def _r(diff, lo, hi):
    return {"diff": diff, "lo": lo, "hi": hi}


#: Named cases: a gain, a loss, equivalent-and-simpler, equivalent-and-more-complex, undecided.
RULE_CASES = [
    ("测出提升（第 2 周的路由那样）", _r(0.082, 0.050, 0.114), False),
    ("测出损失（父子块在同预算下那样）", _r(-0.160, -0.215, -0.114), False),
    ("等效且更简单（overlap 50 → 0 那样）", _r(0.0, -0.008, 0.008), True),
    ("等效但更复杂（表格转写那样）", _r(0.004, -0.008, 0.015), False),
    ("分不出、更复杂（标题路径那样）", _r(0.008, -0.008, 0.025), False),
    ("分不出、更简单", _r(-0.005, -0.035, 0.025), True),
    ("不差且更简单，但区间不窄", _r(0.012, -0.010, 0.034), True),
    ("测出很小的损失、更简单", _r(-0.008, -0.015, -0.002), True),
]


def _rule_examples(candidate) -> None:
    wrong = []
    for name, result, simpler in RULE_CASES:
        try:
            _check_one(candidate, result, simpler)
        except Failure as f:
            wrong.append(f"【{name}】{f}")
    if wrong:
        raise Failure(f"{len(RULE_CASES)} 个情形里判错 {len(wrong)} 个：\n" + "\n".join(wrong))


# intervals on a grid of 0.1 point (per-mille integers), so that the boundaries are exact
_interval = st.tuples(st.integers(-60, 60), st.integers(0, 40), st.integers(0, 40)).map(
    lambda t: _r(t[0] / 1000, (t[0] - t[1]) / 1000, (t[0] + t[2]) / 1000))


def _rule_properties(candidate) -> None:
    property_check(lambda result, simpler: _check_one(candidate, result, simpler), _interval, st.booleans(),
                   max_examples=300)


exercise(Exercise(
    id="ex7-rule",
    title="练习 7.3 写一条采纳规则并用上它",
    task="实现 rule(result, simpler) -> \"adopt\" | \"refuse\" | \"need_more_data\"。result 是候选减当前配置的同预算"
         "配对差值 {'diff', 'lo', 'hi'}（做判定的区间，命中率的比例），simpler 说候选是否比当前配置更简单。依次："
         f"区间整个在 0 之上采纳；整个在 0 之下不采纳；更简单的候选，下端不低于 -MARGIN（{100 * MARGIN:.0f} 个点）就采纳，否则要更多数据；"
         "更复杂的候选，上端不超过 +MARGIN 就不采纳，否则要更多数据。",
    checks=[("五类情形：提升、损失、等效且更简单、等效但更复杂、分不出", _rule_examples),
            ("随机区间上与规则一致（含界值上的区间）", _rule_properties)],
    solution=_reference_rule,
    wrong=[
        # the rule before the simpler branch: only a measured gain is adopted, everything else refused
        lambda result, simpler: "adopt" if result["lo"] > 0 else "refuse",
        # no simpler branch: an equivalent, simpler change is refused
        lambda result, simpler: ("adopt" if result["lo"] > 0 else "refuse" if result["hi"] <= MARGIN
                                 else "need_more_data"),
        # the point estimate instead of the interval's worse end: "not worse" read off the mean
        lambda result, simpler: ("adopt" if result["lo"] > 0 else "refuse" if result["hi"] < 0 else
                                 ("adopt" if result["diff"] >= 0 else "refuse") if simpler else
                                 "refuse" if result["hi"] <= MARGIN else "need_more_data"),
        # an interval containing 0 read as "no effect": refused, never sent back for more data
        lambda result, simpler: ("adopt" if result["lo"] > 0 or (simpler and result["lo"] >= -MARGIN)
                                 else "refuse"),
    ],
))
