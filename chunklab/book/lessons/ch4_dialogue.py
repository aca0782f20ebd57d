"""Chapter 4, §4.3 (dialogues and FAQs): question-reply pairs kept together, and what it costs.

* :func:`qa_pairs` / :func:`separated` — a user's turn and the reply right after it, and the pairs a
  chunking puts in different chunks.
* :func:`pair_check` — the three cuttings of the support log and how many pairs each separates.
* :func:`container_runs` — ``dialogue`` / ``qa_pair`` against ``recursive`` 500 on their questions:
  hit@5, single-chunk completeness, MRR and characters, eight comparisons Holm-corrected together.
"""
from __future__ import annotations

from typing import Any

from ...base import get_strategy
from ...evaluation.stats import paired_many
from ...strategies.container import find_turns
from ..claims import fmt_diff, verdict
from .ch4 import corpora, rate, run, split_corpus

__all__ = ["qa_pairs", "separated", "pair_check", "container_runs", "container_numbers", "completeness_changes", "METRICS"]

#: The four metrics compared, in the order of the chapter's table.
METRICS = ("hit", "complete_single", "mrr", "retrieved_chars")
CHAT_IDS, FAQ_IDS = {"support_dialogues", "internal_chat_it"}, {"faq_hr", "faq_it"}


def qa_pairs(doc, sessions) -> list[tuple[Any, int]]:
    """``(question turn, end of the reply)``: a turn of the session's opener and the other side's turn
    right after it (the reply's end without trailing whitespace)."""
    out = []
    for s in sessions:
        opener = s.turns[0].speaker
        for a, b in zip(s.turns, s.turns[1:]):
            if a.speaker == opener and b.speaker != opener:
                out.append((a, b.start + len(doc.text[b.start:b.end].rstrip())))
    return out


def separated(chunks, pairs) -> list[tuple[Any, int]]:
    """The pairs no single chunk holds from the question's body to the reply's end."""
    return [(a, end) for a, end in pairs if not any(c.start <= a.body and end <= c.end for c in chunks)]


def pair_check(doc) -> dict[str, Any]:
    """Sessions, turns and question-reply pairs of ``doc``; for fixed 512, recursive 500 and
    ``dialogue`` (4 turns a window): the chunks and the pairs each separates."""
    sessions = find_turns(doc.text)
    pairs = qa_pairs(doc, sessions)
    splits = {"fixed 512": get_strategy("fixed", size=512).split(doc),
              "recursive 500": get_strategy("recursive", target=500).split(doc),
              "dialogue（4 轮一窗）": get_strategy("dialogue", turns=4).split(doc)}
    return {"sessions": len(sessions), "turns": sum(len(s.turns) for s in sessions), "pairs": pairs,
            "splits": splits, "separated": {k: separated(v, pairs) for k, v in splits.items()}}


def container_runs() -> dict[str, Any]:
    """Dialogue questions (support log and IT chat) and FAQ questions (faq_hr, faq_it): their documents
    cut by ``recursive`` 500 or by their container strategy, the rest by ``recursive`` 500.

    ``results[(kind, label)]``; ``cmp[(kind, metric)]`` container − recursive for the four
    :data:`METRICS` on both kinds, eight comparisons Holm-corrected together (each with its metric,
    so characters are judged "fewer is better" by the caller).
    """
    cor = corpora()
    rec500 = get_strategy("recursive", target=500)
    dlg, qa = get_strategy("dialogue", turns=4), get_strategy("qa_pair")
    dq = [q for q in cor.xb_questions if q.type == "对话"]
    fq = [q for q in cor.xb_questions if q.type == "FAQ" and q.doc in FAQ_IDS]
    plan = {("对话", "recursive 500"): (lambda d: rec500, dq),
            ("对话", "dialogue 4 轮"): (lambda d: dlg if d.id in CHAT_IDS else rec500, dq),
            ("FAQ", "recursive 500"): (lambda d: rec500, fq),
            ("FAQ", "qa_pair"): (lambda d: qa if d.id in FAQ_IDS else rec500, fq)}
    results = {key: run(cor.xb_docs, cor.xb_index, split_corpus(cor.xb_docs, choose), qs)
               for key, (choose, qs) in plan.items()}
    arms = {"对话": (("对话", "dialogue 4 轮"), ("对话", "recursive 500")),
            "FAQ": (("FAQ", "qa_pair"), ("FAQ", "recursive 500"))}
    pairs = {(kind, m): (results[new].per_question[m], results[old].per_question[m])
             for kind, (new, old) in arms.items() for m in METRICS}
    cmp = paired_many(pairs, "holm", metric={key: key[1] for key in pairs})
    return {"results": results, "cmp": cmp, "n_dialogue": len(dq), "n_faq": len(fq)}


def container_rows(res: dict[str, Any]) -> list[list[str]]:
    """The chapter's table: kind, metric, recursive 500 → container, difference [deciding interval], verdict."""
    from_to = {"对话": (("对话", "recursive 500"), ("对话", "dialogue 4 轮")),
               "FAQ": (("FAQ", "recursive 500"), ("FAQ", "qa_pair"))}
    names = {"hit": "命中率（hit@5）", "complete_single": "证据完整率@5（单块）", "mrr": "MRR",
             "retrieved_chars": "取回字数"}
    rows = []
    for kind, (old, new) in from_to.items():
        for m in METRICS:
            a, b = rate(res["results"][old], m), rate(res["results"][new], m)
            c = res["cmp"][(kind, m)]
            if m == "retrieved_chars":
                shown, diff = f"{a:.0f} → {b:.0f} 字", _chars(c)
            elif m == "mrr":
                shown, diff = f"{a:.3f} → {b:.3f}", fmt_diff(c, pct=False)
            else:
                shown, diff = f"{a:.1%} → {b:.1%}", fmt_diff(c)
            rows.append([kind, names[m], shown, diff, verdict(c, expect=-1 if m == "retrieved_chars" else 1)])
    return rows


def _chars(r: dict[str, Any]) -> str:
    level = "" if abs(r["level"] - 0.95) < 1e-9 and r.get("m", 1) == 1 else f"（{r['level']:.1%} 区间，Holm 校正）"
    return f"{r['diff']:+.0f} 字 [{r['lo']:+.0f}, {r['hi']:+.0f}]{level}"


def container_numbers(res: dict[str, Any]) -> dict[str, Any]:
    """Prose values: every metric of both arms and every comparison's text and verdict."""
    out = {"dq_n": res["n_dialogue"], "fq_n": res["n_faq"]}
    for (kind, label), key in ((("对话", "recursive 500"), "d_rec"), (("对话", "dialogue 4 轮"), "d_dlg"),
                               (("FAQ", "recursive 500"), "f_rec"), (("FAQ", "qa_pair"), "f_qa")):
        for m in METRICS:
            out[f"{key}_{m}"] = rate(res["results"][(kind, label)], m)
    for (kind, m), c in res["cmp"].items():
        k = f"{'d' if kind == '对话' else 'f'}_{m}"
        out[f"{k}_ci"] = _chars(c) if m == "retrieved_chars" else fmt_diff(c, pct=m != "mrr")
        out[f"{k}_verdict"] = verdict(c, expect=-1 if m == "retrieved_chars" else 1)
    return out


def completeness_changes(res: dict[str, Any]) -> dict[str, Any]:
    """Dialogue questions whose single-chunk completeness differs between ``recursive`` 500 and
    ``dialogue``: how many got worse / better, how many of the worse ones have two or more evidence
    spans, and of those how many one ``recursive`` chunk holds whole (all spans) while no ``dialogue``
    window does — the two passages land in different windows, and both must rank in the top 5;
    ``worse_ranked``: worse ones ``dialogue`` holds in no more chunks than ``recursive`` (the
    difference is the ranking: the windows holding the evidence did not all reach the top 5)."""
    cor = corpora()
    rec = get_strategy("recursive", target=500)
    dlg = get_strategy("dialogue", turns=4)
    old, new = res["results"][("对话", "recursive 500")], res["results"][("对话", "dialogue 4 轮")]
    a, b = old.per_question["complete_single"], new.per_question["complete_single"]
    questions = {q.id: q for q in cor.xb_questions}
    worse = [questions[qid] for qid, x, y in zip(old.question_ids, a, b) if x > y]
    better = int(sum(x < y for x, y in zip(a, b)))

    def holds_all(chunks, q):
        return any(all(c.doc_id == s.doc_id and c.start <= s.start and s.end <= c.end for s in q.spans)
                   for c in chunks)

    def needed(chunks, q):
        """How many chunks hold the spans (each span whole in one), or None when a span is cut."""
        holders = [next((i for i, c in enumerate(chunks) if c.doc_id == s.doc_id and c.start <= s.start
                         and s.end <= c.end), None) for s in q.spans]
        return None if None in holders else len(set(holders))

    multi = [q for q in worse if len(q.spans) >= 2]
    apart = ranked = 0
    for q in worse:
        doc = cor.xb[q.spans[0].doc_id]
        r, d = rec.split(doc), dlg.split(doc)
        if q in multi:
            apart += holds_all(r, q) and not holds_all(d, q)
        nr, nd = needed(r, q), needed(d, q)
        ranked += nr is not None and nd is not None and nd <= nr
    return {"worse": len(worse), "better": better, "worse_multi": len(multi), "worse_apart": apart,
            "worse_ranked": ranked}
