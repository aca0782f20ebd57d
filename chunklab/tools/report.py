"""A report to send: one self-contained HTML page and its Markdown twin, from one run's plain data.

``python -m chunklab report`` (:mod:`chunklab.cli.report`) measures and gathers the data; this module
only renders it. The page needs nothing but itself: CSS inline, figures as inline base64 PNG, no
script, no font or style from a network. Chinese renders through a CJK font family stack in the CSS,
and the figures use the CJK font :func:`chunklab.viz.fonts.use_cjk_font` registers.

The data (:func:`render_html`, :func:`render_markdown`, :func:`write_report` take the same dict):

- ``title``, ``created`` (a UTC time), ``versions`` (name -> version), ``command`` (the command line);
- ``run``: ``corpus``, ``documents``, ``chars``, ``questions`` (and ``questions_file``, ``where``),
  ``config`` (what was measured), ``retriever`` (what ranked), ``ruler`` (k, or the budget with the
  characters delivered);
- ``headline``: ``[{"metric", "mean", "lo", "hi"}]``;
- ``comparison`` (optional): ``{"a", "b", "rows": [{"metric", "mean_a", "mean_b", "diff", "lo", "hi",
  "verdict"}]}``, the verdict words of :func:`chunklab.evaluation.stats.decide`;
- ``matrix`` (optional): ``{"ruler", "rows": [matrix rows], "recommendation": MatrixResult.recommend()}``;
- ``symptoms``: ``{symptom: {"count", "examples": [{"id", "question"}]}}``;
- ``by``: ``{key: {group: {"questions", "hit", "hit_lo", "hit_hi", "mrr"}}}`` (``eval --by``);
- ``misses``: the worst misses, each a :func:`chunklab.tools.report_explain.explain` dict;
- ``routes`` (optional, the ``auto`` strategy): :func:`chunklab.strategies.router.route_table` rows, one
  per document (document -> strategy, the content type, the features that decided, the reason, any
  fallback), in a "Routes" section after the headline.
"""
from __future__ import annotations

import base64
import html
import io
import re
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..evaluation.misses import SYMPTOMS
from ..viz.fonts import use_cjk_font

__all__ = ["render_html", "render_markdown", "write_report", "figure_png", "symptom_figure", "matrix_figure",
           "CJK_FONT_STACK", "marked"]

#: The CSS font families tried for text, CJK faces of the common systems first (none is downloaded).
CJK_FONT_STACK = ('"Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC", "PingFang SC", "Hiragino Sans GB", '
                  '"Microsoft YaHei", "WenQuanYi Micro Hei", "Droid Sans Fallback", system-ui, sans-serif')

_CSS = """
body { font-family: %s; max-width: 1100px; margin: 2em auto; padding: 0 1em; color: #1d2430; line-height: 1.5; }
h1 { font-size: 1.6em; margin-bottom: .2em; } h2 { border-bottom: 1px solid #d0d7de; padding-bottom: .2em; margin-top: 1.6em; }
table { border-collapse: collapse; margin: .6em 0; font-size: .92em; }
th, td { border: 1px solid #d0d7de; padding: .25em .6em; text-align: left; vertical-align: top; }
th { background: #f3f5f8; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.pick td { background: #e8f5e9; font-weight: 600; } tr.group td { background: #f4faf4; }
.meta td:first-child { color: #57606a; white-space: nowrap; }
.muted { color: #57606a; font-size: .9em; }
img { max-width: 100%%; height: auto; }
mark { background: #ffe08a; padding: 0 .1em; }
.chunk { white-space: pre-wrap; background: #f6f8fa; border: 1px solid #d0d7de; border-radius: 4px; padding: .5em .7em;
         margin: .3em 0 .6em; font-size: .9em; }
details { margin: .4em 0; } summary { cursor: pointer; }
.miss { border-left: 4px solid #cf222e; padding-left: .8em; margin: 1.2em 0; }
.verdict { font-style: italic; }
""" % CJK_FONT_STACK


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _f(x: Any, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}" if isinstance(x, float) else str(x)


def figure_png(fig: Any, dpi: int = 110) -> str:
    """A matplotlib figure as a ``data:image/png;base64,...`` URI (the figure is closed)."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=False)
    use_cjk_font()
    import matplotlib.pyplot as plt

    return plt


def symptom_figure(symptoms: Mapping[str, Mapping[str, Any]]) -> Any:
    """Bars: the misses per symptom, in the order the rules are tried."""
    plt = _plt()
    names = [s for s in SYMPTOMS if s in symptoms]
    counts = [symptoms[s]["count"] for s in names]
    fig, ax = plt.subplots(figsize=(6.4, 2.6))
    ax.barh(names[::-1], counts[::-1], color="#cf6f2e")
    for y, c in enumerate(counts[::-1]):
        ax.text(c, y, f" {c}", va="center", fontsize=9)
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.set_xlabel("missed questions")
    ax.set_xlim(0, max(counts + [1]) * 1.15)
    ax.set_title("misses by symptom")
    fig.tight_layout()
    return fig


#: The matrix figure's columns: (row key, heading, what is better).
_QUALITY = (("hit", "hit", "higher"), ("mrr", "mrr", "higher"), ("recall", "recall", "higher"))
_COST = (("retrieved_chars", "chars / question", "lower"), ("retrieved_tokens", "tokens / question", "lower"))


def matrix_figure(rows: Sequence[Mapping[str, Any]], ruler: str, recommendation: Mapping[str, Any] | None = None) -> Any:
    """The matrix as two heatmaps side by side, one row per config (best hit first): quality (hit, mrr,
    recall under the run's ruler) and cost (characters and tokens delivered per question). Each column
    is coloured on its own scale, darker = better (more quality, less cost); the recommended config's
    label is bold, the best's group marked with ≈."""
    import numpy as np

    plt = _plt()
    rows = sorted(rows, key=lambda r: (-r["hit"], r["label"]))
    cost = [c for c in _COST if any(r.get(c[0]) is not None for r in rows)]
    n = len(rows)
    fig, axes = plt.subplots(1, 2, figsize=(10, 0.42 * n + 1.6), sharey=True,
                             gridspec_kw={"width_ratios": [len(_QUALITY), max(len(cost), 1)]})
    group = set((recommendation or {}).get("group", ()))
    pick = (recommendation or {}).get("pick")
    for ax, cols, title in ((axes[0], _QUALITY, f"quality ({ruler})"), (axes[1], cost, "cost delivered")):
        vals = np.array([[float(r.get(k)) if r.get(k) is not None else np.nan for k, _, _ in cols] for r in rows])
        shade = np.full_like(vals, np.nan)
        for j, (_, _, better) in enumerate(cols):
            col = vals[:, j]
            lo, hi = np.nanmin(col) if np.isfinite(col).any() else 0, np.nanmax(col) if np.isfinite(col).any() else 1
            s = (col - lo) / (hi - lo) if hi > lo else np.full_like(col, 0.5)
            shade[:, j] = s if better == "higher" else 1 - s
        ax.imshow(shade, cmap="Greens", vmin=0, vmax=1.25, aspect="auto")
        for i in range(n):
            for j, (key, _, _) in enumerate(cols):
                if np.isfinite(vals[i, j]):
                    txt = f"{vals[i, j]:.3f}" if key in ("hit", "mrr", "recall") else f"{vals[i, j]:,.0f}"
                    ax.text(j, i, txt, ha="center", va="center", fontsize=8,
                            color="white" if shade[i, j] > 0.75 else "black")
        ax.set_xticks(range(len(cols)), [h for _, h, _ in cols], fontsize=8)
        ax.xaxis.tick_top()
        ax.set_title(title, fontsize=10, pad=22)
    labels = [("≈ " if r["label"] in group else "") + r["label"] for r in rows]
    axes[0].set_yticks(range(n), labels, fontsize=8)
    for tick, r in zip(axes[0].get_yticklabels(), rows):
        if r["label"] == pick:
            tick.set_fontweight("bold")
    fig.tight_layout()
    return fig


def marked(text: str, marks: Sequence[tuple[int, int]], open_: str, close: str, escape=_e) -> str:
    """``text`` with each ``[start, end)`` of ``marks`` wrapped in ``open_``/``close`` (the rest escaped)."""
    out, at = [], 0
    for a, b in sorted(marks):
        a, b = max(a, at), max(b, at)
        out += [escape(text[at:a]), open_, escape(text[a:b]), close]
        at = b
    out.append(escape(text[at:]))
    return "".join(out)


def _table(head: Sequence[str], rows: Sequence[Sequence[Any]], nums: Sequence[bool] | None = None,
           classes: Sequence[str] | None = None) -> str:
    nums = nums or [False] * len(head)
    out = ["<table><thead><tr>" + "".join(f"<th>{_e(h)}</th>" for h in head) + "</tr></thead><tbody>"]
    for i, r in enumerate(rows):
        cls = f' class="{classes[i]}"' if classes and classes[i] else ""
        out.append(f"<tr{cls}>" + "".join(f'<td{" class=num" if n else ""}>{c}</td>' for c, n in zip(r, nums)) + "</tr>")
    return "\n".join(out) + "</tbody></table>"


def _ci(lo: Any, hi: Any) -> str:
    return f"[{_f(lo)}, {_f(hi)}]"


def _headline_cells(h: Mapping[str, Any]) -> list[str]:
    """Mean and interval of a headline row: rates to 3 decimals, characters and tokens whole."""
    if h["metric"] in ("retrieved_chars", "retrieved_tokens"):
        return [f"{h['mean']:,.0f}", f"[{h['lo']:,.0f}, {h['hi']:,.0f}]"]
    return [_f(h["mean"]), _ci(h["lo"], h["hi"])]


def _tokens_counted(m: Mapping[str, Any]) -> bool:
    return any(r.get("retrieved_tokens") is not None for r in m["rows"])


def _matrix_head(m: Mapping[str, Any]) -> list[str]:
    return [h.format(ruler=m["ruler"]) for h in _MATRIX_HEAD if _tokens_counted(m) or not h.startswith("tokens")]


def _matrix_rows(m: Mapping[str, Any]) -> tuple[list[list[str]], list[str]]:
    """The matrix table's cells (best hit first; tokens only when counted) and each row's CSS class."""
    rec = m.get("recommendation") or {}
    tokens = _tokens_counted(m)
    rows, classes = [], []
    for r in sorted(m["rows"], key=lambda r: (-r["hit"], r["label"])):
        t = rec.get("tests", {}).get(r["label"])
        place = ("recommended, " if r["label"] == rec.get("pick") else "") + (
            "best" if r["label"] == rec.get("best") else "≈ best" if r["label"] in rec.get("group", ()) else "below best")
        rows.append([r["label"], _f(r["hit"]), _ci(r.get("hit_lo"), r.get("hit_hi")), _f(r.get("mrr")),
                     _f(r.get("recall")), _f(r.get("retrieved_chars"), 0)]
                    + ([_f(r.get("retrieved_tokens"), 0)] if tokens else [])
                    + [_f(r.get("chunks")), place, t["verdict"] if t else "—"])
        classes.append("pick" if r["label"] == rec.get("pick") else "group" if r["label"] in rec.get("group", ()) else "")
    return rows, classes


_MATRIX_HEAD = ("config", "{ruler}", "95% CI", "mrr", "recall", "chars / question", "tokens / question", "chunks",
                "against the best", "verdict: the best is higher")


def _ranked(h: Mapping[str, Any]) -> str:
    return f"rank {h['rank_text']}" if h["rank"] is not None else h["rank_text"]


def _explanation_html(e: Mapping[str, Any]) -> str:
    tags = ", ".join(f"{k} {_e(e[k])}" for k in ("type", "difficulty") if e.get(k))
    out = [f'<div class="miss"><h3>{_e(e["id"])}: {_e(e["question"])}</h3>',
           f'<p class="muted">{"hit" if e["hit"] else "miss"}{" · " + tags if tags else ""} · '
           f'symptom <b>{_e(e["symptom"] or "—")}</b>'
           f'{" (counterfactual test)" if e.get("tested") else ""}</p>']
    for ev in e["evidence"]:
        out.append(f'<p>evidence in <code>{_e(ev["doc"])}</code> [{ev["start"]}:{ev["end"]}]: '
                   f'<mark>{_e(ev["text"])}</mark></p>')
    if e.get("counterfactual"):
        out.append(f"<p>test: {_e(e['counterfactual'])}</p>")
    if e.get("advice"):
        out.append(f"<p><b>suggested change:</b> {_e(e['advice'])}</p>")
    if not e["holding"]:
        out.append("<p>No chunk shares a character with the evidence.</p>")
    for h in e["holding"]:
        out.append(f'<p class="muted">chunk <code>{_e(h["doc"])}</code> [{h["start"]}:{h["end"]}] · '
                   f'{_e(_ranked(h))} · holds {h["holds"]:.0%} of the evidence{" (whole)" if h["whole"] else ""} · '
                   f'evidence is {h["evidence_share"]:.0%} of the chunk</p>')
        out.append(f'<div class="chunk">{marked(h["text"], h["marks"], "<mark>", "</mark>")}</div>')
    out.append(f"<details><summary>retrieved {'instead' if not e['hit'] else ''} "
               f"({len(e['retrieved'])} shown)</summary>")
    for r in e["retrieved"]:
        out.append(f'<p class="muted">#{r["rank"]} <code>{_e(r["doc"])}</code> [{r["start"]}:{r["end"]}]'
                   f'{" · holds evidence" if r["evidence"] else ""}</p><div class="chunk">{_e(r["text"])}</div>')
    out.append("</details></div>")
    return "\n".join(out)


def render_html(data: Mapping[str, Any], figures: bool = True) -> str:
    """The report as one self-contained HTML page (``figures=False``: tables only, no matplotlib)."""
    run = data["run"]
    parts = [f"<h1>{_e(data.get('title', 'chunklab report'))}</h1>",
             f'<p class="muted">{_e(data.get("created", ""))}</p>', "<h2>What ran</h2>"]
    meta = [("corpus", f"{run['corpus']} ({run['documents']:,} documents, {run['chars']:,} characters)"),
            ("questions", f"{run['questions']:,}" + (f" from {run['questions_file']}" if run.get("questions_file") else "")
             + (run.get("where") or "")),
            ("measured", run["config"]), ("retriever", run["retriever"]), ("ruler", run["ruler"]),
            ("versions", ", ".join(f"{k} {v}" for k, v in data.get("versions", {}).items())),
            ("command", data.get("command", ""))]
    parts.append('<table class="meta">' + "".join(f"<tr><td>{_e(k)}</td><td>{_e(v)}</td></tr>" for k, v in meta if v)
                 + "</table>")
    parts.append("<h2>Headline</h2>")
    parts.append(_table(["metric", "mean", "95% CI"], [[_e(h["metric"]), *_headline_cells(h)] for h in data["headline"]],
                        [False, True, True]))
    parts.extend(_routes_html(data.get("routes") or []))
    comp = data.get("comparison")
    if comp:
        parts.append(f"<h2>Comparison</h2><p>A = {_e(comp['a'])}<br>B = {_e(comp['b'])}</p>")
        parts.append(_table(["metric", "A", "B", "A − B", "95% CI", "verdict: A is higher"],
                            [[_e(r["metric"]), _f(r["mean_a"]), _f(r["mean_b"]), f"{r['diff']:+.3f}",
                              f"[{r['lo']:+.3f}, {r['hi']:+.3f}]", f'<span class="verdict">{_e(r["verdict"])}</span>']
                             for r in comp["rows"]], [False, True, True, True, True, False]))
        parts.append('<p class="muted">Paired bootstrap over the same questions; the verdict words are those of '
                     "chunklab.evaluation.stats.decide, as in the book.</p>")
    m = data.get("matrix")
    if m:
        rec = m.get("recommendation") or {}
        parts.append("<h2>Matrix: quality and cost</h2>")
        if rec:
            parts.append(f"<p><b>Recommended: {_e(rec['pick'])}</b> — the simplest of the {len(rec['group'])} configs "
                         f"not distinguishable from the best ({_e(rec['best'])}) on {_e(m['ruler'])} (paired bootstrap "
                         f"against the best, {_e(rec['method'].capitalize())}-corrected over {len(rec['tests'])} comparisons). "
                         f'<span class="muted">{_e(rec["simpler"])}.</span></p>')
        if figures:
            parts.append(f'<img alt="matrix heatmap" src="{figure_png(matrix_figure(m["rows"], m["ruler"], rec))}">')
        rows, classes = _matrix_rows(m)
        head = _matrix_head(m)
        nums = [False] + [True] * (len(head) - 3) + [False, False]
        parts.append(_table(head, [[_e(c) for c in r] for r in rows], nums, classes))
    sym = data.get("symptoms") or {}
    parts.append("<h2>Misses by symptom</h2>")
    total = sum(s["count"] for s in sym.values())
    if figures and total:
        parts.append(f'<img alt="misses by symptom" src="{figure_png(symptom_figure(sym))}">')
    parts.append(_table(["symptom", "misses", "examples"],
                        [[_e(s), str(v["count"]), "<br>".join(f"{_e(x['id'])}: {_e(x['question'])}" for x in v["examples"])]
                         for s, v in sym.items()], [False, True, False]))
    for key, table in (data.get("by") or {}).items():
        parts.append(f"<h2>By {_e(key)}</h2>")
        parts.append(_table([key, "questions", "hit", "95% CI", "mrr"],
                            [[_e(g), str(r["questions"]), _f(r["hit"]), _ci(r["hit_lo"], r["hit_hi"]), _f(r["mrr"])]
                             for g, r in table.items()], [False, True, True, True, True]))
    misses = data.get("misses") or []
    parts.append("<h2>The worst misses, explained</h2>")
    if not misses:
        parts.append("<p>No question was missed.</p>")
    parts.extend(_explanation_html(e) for e in misses)
    body = "\n".join(parts)
    return (f'<!DOCTYPE html>\n<html lang="zh-CN"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{_e(data.get('title', 'chunklab report'))}</title><style>{_CSS}</style></head>"
            f"<body>\n{body}\n</body></html>\n")


_ROUTE_HEAD = ["document", "strategy", "content type", "decided by", "reason", "fallback"]


def _decided(r: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in r["decided_by"].items()) or "—"


def _routes_summary(routes: Sequence[Mapping[str, Any]]) -> str:
    counts: dict[str, int] = {}
    for r in routes:
        key = f"{r['strategy']} ({r['type']})"
        counts[key] = counts.get(key, 0) + 1
    used = sum(1 for r in routes if r["fallback"])
    return (f"auto routed {len(routes):,} documents: " + ", ".join(f"{k} {n}" for k, n in
                                                                  sorted(counts.items(), key=lambda kv: -kv[1]))
            + (f"; {used} used a fallback strategy" if used else "; no fallback was needed") + ".")


def _routes_html(routes: Sequence[Mapping[str, Any]]) -> list[str]:
    """The routes section: which strategy ``auto`` chose for each document, and why."""
    if not routes:
        return []
    table = _table(_ROUTE_HEAD, [[_e(r["doc"]), _e(r["strategy"]), _e(r["type"]), _e(_decided(r)), _e(r["reason"]),
                                  _e(r["fallback"] or "—")] for r in routes])
    if len(routes) > 20:
        table = f"<details><summary>every document ({len(routes):,})</summary>{table}</details>"
    return ["<h2>Routes</h2>", f"<p>{_e(_routes_summary(routes))} The features that decided are those of the first "
            "rule of chunklab.strategies.router.RULES that fired (thresholds: THRESHOLDS).</p>", table]


def _md_cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _md_table(head: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(_md_cell(h) for h in head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(_md_cell(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def _md_marked(text: str) -> str:
    return text.replace("*", "\\*").replace("_", "\\_")


def render_markdown(data: Mapping[str, Any]) -> str:
    """The report's Markdown twin: the same sections and tables, without the figures."""
    run = data["run"]
    out = [f"# {data.get('title', 'chunklab report')}", "", data.get("created", ""), "", "## What ran", "",
           _md_table(["", ""], [["corpus", f"{run['corpus']} ({run['documents']:,} documents, {run['chars']:,} characters)"],
                                ["questions", f"{run['questions']:,}" + (f" from {run['questions_file']}"
                                                                         if run.get("questions_file") else "")
                                 + (run.get("where") or "")],
                                ["measured", run["config"]], ["retriever", run["retriever"]], ["ruler", run["ruler"]],
                                ["versions", ", ".join(f"{k} {v}" for k, v in data.get("versions", {}).items())],
                                ["command", f"`{data.get('command', '')}`"]]),
           "", "## Headline", "",
           _md_table(["metric", "mean", "95% CI"], [[h["metric"], *_headline_cells(h)] for h in data["headline"]])]
    routes = data.get("routes") or []
    if routes:
        out += ["", "## Routes", "", _routes_summary(routes), "",
                _md_table(_ROUTE_HEAD, [[r["doc"], r["strategy"], r["type"], _decided(r), r["reason"], r["fallback"] or "—"]
                                        for r in routes])]
    comp = data.get("comparison")
    if comp:
        out += ["", "## Comparison", "", f"A = {comp['a']}  ", f"B = {comp['b']}", "",
                _md_table(["metric", "A", "B", "A − B", "95% CI", "verdict: A is higher"],
                          [[r["metric"], _f(r["mean_a"]), _f(r["mean_b"]), f"{r['diff']:+.3f}",
                            f"[{r['lo']:+.3f}, {r['hi']:+.3f}]", r["verdict"]] for r in comp["rows"]])]
    m = data.get("matrix")
    if m:
        rec = m.get("recommendation") or {}
        out += ["", "## Matrix: quality and cost", ""]
        if rec:
            out += [f"**Recommended: {rec['pick']}** — the simplest of the {len(rec['group'])} configs not "
                    f"distinguishable from the best ({rec['best']}) on {m['ruler']} ({rec['method'].capitalize()}-corrected "
                    f"paired bootstrap); {rec['simpler']}.", ""]
        rows, _ = _matrix_rows(m)
        out.append(_md_table(_matrix_head(m), rows))
    sym = data.get("symptoms") or {}
    out += ["", "## Misses by symptom", "",
            _md_table(["symptom", "misses", "examples"],
                      [[s, v["count"], "; ".join(f"{x['id']}: {x['question']}" for x in v["examples"])]
                       for s, v in sym.items()])]
    for key, table in (data.get("by") or {}).items():
        out += ["", f"## By {key}", "",
                _md_table([key, "questions", "hit", "95% CI", "mrr"],
                          [[g, r["questions"], _f(r["hit"]), _ci(r["hit_lo"], r["hit_hi"]), _f(r["mrr"])]
                           for g, r in table.items()])]
    out += ["", "## The worst misses, explained", ""]
    if not data.get("misses"):
        out.append("No question was missed.")
    for e in data.get("misses") or []:
        out += [f"### {e['id']}: {e['question']}", "",
                f"symptom **{e['symptom'] or '—'}**" + (" (counterfactual test)" if e.get("tested") else ""), ""]
        out += [f"- evidence in `{ev['doc']}` [{ev['start']}:{ev['end']}]: {ev['text']}" for ev in e["evidence"]]
        if e.get("counterfactual"):
            out.append(f"- test: {e['counterfactual']}")
        if e.get("advice"):
            out.append(f"- suggested change: {e['advice']}")
        for h in e["holding"]:
            out += ["", f"chunk `{h['doc']}` [{h['start']}:{h['end']}], {_ranked(h)}, holds {h['holds']:.0%} "
                        f"of the evidence (evidence in **bold**):", "",
                    "> " + marked(h["text"], h["marks"], "**", "**", _md_marked).replace("\n", "\n> ")]
        out += ["", "retrieved" + (" instead:" if not e["hit"] else ":"), ""]
        out += [f"{r['rank']}. `{r['doc']}` [{r['start']}:{r['end']}]{' (holds evidence)' if r['evidence'] else ''}: "
                + " ".join(r["text"].split()) for r in e["retrieved"]]
        out.append("")
    return "\n".join(out).rstrip() + "\n"


_SURROGATE = re.compile("[\ud800-\udfff]")


def write_report(data: Mapping[str, Any], path: str | Path) -> tuple[Path, Path]:
    """Write the HTML page to ``path`` (``.html``) and the Markdown twin beside it (``.md``); both paths."""
    path = Path(path)
    html_path, md_path = path.with_suffix(".html"), path.with_suffix(".md")
    # a lone surrogate from a question file (JSON allows "\ud800") is written as U+FFFD, not an error
    html_path.write_text(_SURROGATE.sub("\ufffd", render_html(data)), encoding="utf-8")
    md_path.write_text(_SURROGATE.sub("\ufffd", render_markdown(data)), encoding="utf-8")
    return html_path, md_path

