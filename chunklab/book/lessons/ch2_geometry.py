"""Chapter 2, on the laws: where fixed, sliding and recursive windows cut, and what token cuts break.

Every function takes the documents it measures and returns plain data: ``rows`` for a table,
``numbers`` for the prose (bound with ``glue_all(..., "ch2_")``) and ``claims`` (claim rows for
the chapter's one claims table).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ... import strategies  # noqa: F401  (importing it registers every strategy)
from ...base import chunk, get_strategy
from ...core import Document, check_chunks
from ...evaluation import bootstrap_ci, paired_bootstrap, structure_flags, structure_metrics
from ...length import count_tokens
from ...strategies.geometric import naive_token_chunks
from ..claims import claim_row, fmt_diff
from ..criteria import LEVEL_TOLERANCE, criterion

__all__ = ["LAW_SETTINGS", "law_structure", "first_cut", "sliding_cost", "token_safety", "level_text"]

#: The three chunkings of the laws at 512 characters that the geometric and clause sections compare.
LAW_SETTINGS = {
    "fixed 512": ("fixed", {"size": 512}),
    "recursive 512": ("recursive", {"target": 512}),
    "clause 512": ("clause", {"target": 512}),
}


def level_text(ci: dict, digits: int = 1) -> str:
    """``12.3% [10.1%, 14.6%]``: a level with its interval.

    >>> level_text({"mean": 0.123, "lo": 0.101, "hi": 0.146})
    '12.3% [10.1%, 14.6%]'
    """
    return f"{ci['mean']:.{digits}%} [{ci['lo']:.{digits}%}, {ci['hi']:.{digits}%}]"


def _level_row(cid: str, part: str, what: str, ci: dict, note: str, digits: int = 1):
    """A level claim's row: the article's figure comes from the register (chunklab.book.criteria)."""
    theirs = criterion(cid, part).claimed
    return claim_row(cid, what, f"{theirs:.1%}", level_text(ci, digits),
                     f"与原文的相对差 {ci['mean'] / theirs - 1:+.0%}。{note}", part=part, value=ci["mean"])


def law_structure(law_docs: Sequence[Document]) -> dict[str, Any]:
    """Alignment and article cuts of fixed, recursive and clause at 512 on the laws (C15, C18, C21).

    Chunks and articles cluster within a law, so every interval resamples whole laws. Returns
    ``chunks`` ({setting: chunks}), ``metrics`` ({setting: structure_metrics}), ``cut_flags``
    ({setting: one 0/1 per article}), ``articles`` ((doc, article) in the flags' order),
    ``article_law`` (their law ids), ``rows`` (the table), ``numbers`` and ``claims``
    (C15, C21 fixed, C21 recursive, C18 mean, C18 max).
    """
    law_chunks = {k: get_strategy(name, **p).split_documents(law_docs) for k, (name, p) in LAW_SETTINGS.items()}
    metrics = {k: structure_metrics(law_docs, v) for k, v in law_chunks.items()}
    cut_flags = {k: structure_flags(law_docs, v)["cut"] for k, v in law_chunks.items()}
    aligned = structure_flags(law_docs, law_chunks["fixed 512"])["aligned"]
    # the articles those "cut" flags are about, in the same order (blank articles are left out)
    articles = [(d, a) for d in law_docs for a in d.meta.get("articles", ()) if d.text[a["start"]:a["end"]].strip()]
    assert all(len(f) == len(articles) for f in cut_flags.values())
    article_law = [d.id for d, _ in articles]

    c15_ci = bootstrap_ci(aligned, clusters=[c.doc_id for c in law_chunks["fixed 512"]])
    c15_naive = bootstrap_ci(aligned)   # chunk by chunk, as if independent: only to show how much narrower
    c21_ci = {k: bootstrap_ci(cut_flags[k], clusters=article_law) for k in ("fixed 512", "recursive 512")}
    c21_res = paired_bootstrap(cut_flags["fixed 512"], cut_flags["recursive 512"], clusters=article_law)
    rec_lens = np.array([len(c) for c in law_chunks["recursive 512"]])
    rec_len_ci = bootstrap_ci(rec_lens, clusters=[c.doc_id for c in law_chunks["recursive 512"]])
    short_share = float((rec_lens < 256).mean())
    rm = metrics["recursive 512"]
    rel = [c21_ci["fixed 512"][k] / criterion("C21", "fixed").claimed - 1 for k in ("lo", "hi")]
    straddles_tol = any(abs(x) <= LEVEL_TOLERANCE for x in rel) and any(abs(x) > LEVEL_TOLERANCE for x in rel)
    edge = (f"（区间对应的相对差从 {rel[0]:+.0%} 到 {rel[1]:+.0%}，跨在 ±{LEVEL_TOLERANCE:.0%} 容差的边上，"
            "这一行的判定不宜看得太重）") if straddles_tol else ""
    band = [criterion("C21", "recursive").claimed * (1 + t) for t in (-LEVEL_TOLERANCE, LEVEL_TOLERANCE)]
    claims = [
        _level_row("C15", "", "固定 512 切分的段落对齐率（法规）", c15_ci,
                   f"{1 - c15_ci['mean']:.0%} 的固定块不从段落开头开始：逐条引用的法规、合同不要用固定窗口作主切法"),
        _level_row("C21", "fixed", "512 时被切断的条款比例：fixed", c21_ci["fixed 512"],
                   f"{edge.strip('（）') + '。' if edge else ''}固定减递归 {fmt_diff(c21_res)}（同一批条款配对）："
                   "按条款有边界的文本，递归或条款切分切断得少得多"),
        _level_row("C21", "recursive", "512 时被切断的条款比例：recursive", c21_ci["recursive 512"],
                   f"容差 ±{LEVEL_TOLERANCE:.0%}，即 {band[0]:.2%}–{band[1]:.2%}；被切断的都是一块装不下的长条款",
                   digits=2),
        claim_row("C18", "recursive 512 的平均块长", "420",
                  f"{rec_len_ci['mean']:.0f} [{rec_len_ci['lo']:.0f}, {rec_len_ci['hi']:.0f}]",
                  f"相对差 {rec_len_ci['mean'] / criterion('C18', 'mean').claimed - 1:+.1%}：写 target=512，"
                  "递归喂给模型的字数明显少于 512，预算按实际块长算", part="mean", value=rec_len_ci["mean"]),
        claim_row("C18", "recursive 512 的最长块", "1200", f"{rm['len_max']}",
                  f"相对差 {rm['len_max'] / criterion('C18', 'max').claimed - 1:+.0%}：我们的实现合并从不越过 target，"
                  f"不会出现超长块；不均匀在短块一侧（不到 256 字的占 {short_share:.1%}）", part="max", value=rm["len_max"]),
    ]
    numbers = {
        "n_articles": len(articles),
        "c15_width_ratio": (c15_ci["hi"] - c15_ci["lo"]) / (c15_naive["hi"] - c15_naive["lo"]),
        "c21_diff": fmt_diff(c21_res),
        "c15_verdict": claims[0].verdict, "c21_fixed_verdict": claims[1].verdict, "c21_rec_verdict": claims[2].verdict,
        "c21_fixed_rel": claims[1].value / claims[1].criterion.claimed - 1,
        "c21_rec_rel": claims[2].value / claims[2].criterion.claimed - 1,
        "c21_fixed_edge": edge,
        "rec_mean": rm["len_mean"], "rec_max": rm["len_max"], "rec_median": rm["len_median"], "rec_short": short_share,
        "n_clusters": c15_ci["clusters"], "n_chunks_fixed": len(aligned),
    }
    for k, short in (("fixed 512", "fixed"), ("recursive 512", "rec"), ("clause 512", "clause")):
        numbers[f"align_{short}"] = metrics[k]["boundary_alignment"]
        numbers[f"cut_{short}"] = metrics[k]["clause_cut_rate"]
        numbers[f"chunks_{short}"] = metrics[k]["chunks"]
    rows = [(k, m["chunks"], f"{m['boundary_alignment']:.1%}", f"{m['clause_cut_rate']:.2%}", f"{m['len_mean']:.0f}",
             m["len_max"]) for k, m in metrics.items()]
    return {"chunks": law_chunks, "metrics": metrics, "cut_flags": cut_flags, "articles": articles,
            "article_law": article_law, "rows": rows, "numbers": numbers, "claims": claims}


def first_cut(doc: Document, chunks) -> dict[str, Any]:
    """The first article of ``doc`` that no chunk holds whole, and where a chunk boundary falls in it.

    Returns ``article`` (its number), ``length``, ``cut_at`` (the offset of the cut).
    """
    art = next(a for a in doc.meta["articles"] if not any(c.start <= a["start"] and a["end"] <= c.end for c in chunks))
    cut_at = next(c.end for c in chunks if art["start"] < c.end < art["end"])
    return {"article": art["number"], "length": art["end"] - art["start"], "cut_at": cut_at}


def sliding_cost(law_docs: Sequence[Document], law: dict[str, Any], window: int = 512,
                 step: int = 256) -> dict[str, Any]:
    """Sliding windows on the laws: index inflation, article cuts (paired with fixed 512), alignment.

    Also counts how many articles are no longer than ``window - step`` (the guarantee: such an
    article lies whole in some window) and how many of the cut ones are longer than that.
    """
    sw = get_strategy("sliding_window", window=window, step=step).split_documents(law_docs)
    m = structure_metrics(law_docs, sw)
    flags = structure_flags(law_docs, sw)["cut"]
    lens = np.array([len(d.text[a["start"]:a["end"]].strip()) for d, a in law["articles"]])
    fits = lens <= window - step
    return {"numbers": {
        "sw_chunks": m["chunks"], "sw_inflation": m["overlap_inflation"], "sw_cut": m["clause_cut_rate"],
        "sw_align": m["boundary_alignment"],
        "sw_cut_diff": fmt_diff(paired_bootstrap(law["cut_flags"]["fixed 512"], flags, clusters=law["article_law"])),
        "sw_guard": window - step, "sw_fit_share": float(fits.mean()),
        "sw_fit_cut": int((np.asarray(flags, bool) & fits).sum()),
    }}


def token_safety(doc: Document, size: int = 512) -> dict[str, Any]:
    """Cut ``doc`` every ``size`` cl100k tokens naively (decoding id windows) and with the token strategy.

    Counts chunks holding U+FFFD, runs the invariant checker on the safe chunks, and returns a
    bad chunk's tail as ``example`` and the C28 claim row.
    """
    naive = naive_token_chunks(doc.text, size)
    safe = chunk(doc, "token", size=size)
    n_bad = sum("\ufffd" in p for p in naive)
    n_safe_bad = sum("\ufffd" in c.text for c in safe)
    tokens = count_tokens(doc.text)
    claims = [claim_row("C28", "按 token id 直接切《民法典》，含 U+FFFD 的块", "会切开多字节字符",
                        f"{n_bad} / {len(naive)} 块；token 策略 {n_safe_bad} 块",
                        "按 token 切时，切点要对齐到字符边界、块文字取原文切片，不能直接解码 token id",
                        holds=n_bad > 0 and n_safe_bad == 0)]
    return {"numbers": {
        "naive_chunks": len(naive), "naive_bad": n_bad, "safe_bad": n_safe_bad, "safe_chunks": len(safe),
        "naive_fffd": sum(p.count("\ufffd") for p in naive), "civil_chars": len(doc.text), "civil_tokens": tokens,
        "tokens_per_char": tokens / len(doc.text), "token_reencode_max": max(count_tokens(c.text) for c in safe),
        "safe_check": "全部通过" if not check_chunks(doc, safe) else "有问题",
    }, "example": next(p for p in naive if "\ufffd" in p)[-12:], "claims": claims}
