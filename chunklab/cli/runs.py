"""Saved runs and the regression gate: ``eval --save run.json`` keeps a run, ``eval --baseline run.json``
compares a later run with it question by question (chapter 5's regression gate, from the command line).

A saved run is ``eval --json``'s document (with ``per_question``: each question's ``hit``, ``mrr``,
``recall``, ``retrieved_chars``) plus ``run``: what was measured, on which corpus and questions, with
which chunklab. The comparison pairs the questions both runs answered (by id), tests ``now - baseline``
for ``hit``, ``mrr`` and ``recall`` together (paired bootstrap, Holm-corrected over the metrics,
:func:`~chunklab.evaluation.stats.paired_many`), names each with the verdict word of
:func:`~chunklab.evaluation.stats.decide` on the claim "now is higher", and fails the gate (exit status
1) when some metric is worse beyond the noise: its corrected interval lies wholly below 0.
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Mapping

from .._version import __version__
from ..datasets.files import read_text_file
from ..evaluation.matrix import write_atomic
from ..evaluation.stats import decide, paired_many
from ..params import loads_json
from .output import CLIError, dumps

__all__ = ["GATE_METRICS", "check_save", "save_run", "load_run", "against_baseline", "baseline_text"]

#: The metrics the regression gate tests, together.
GATE_METRICS = ("hit", "mrr", "recall")
#: Settings a later run should share with its baseline (a difference is said, not an error).
_SAME = ("k", "budget", "budget_unit", "retriever", "embedder", "tokenizer", "use_context")


def check_save(path: str | Path) -> Path:
    """``--save``'s file, checked before the run: not a folder, in a folder that exists."""
    path = Path(path)
    if path.is_dir() or not path.parent.is_dir():
        raise CLIError(f"--save {path}: " + ("is a folder" if path.is_dir() else f"folder {path.parent} does not exist"),
                       where="--save")
    return path


def save_run(path: str | Path, payload: Mapping[str, Any], run: Mapping[str, Any]) -> Path:
    """Write ``payload`` (eval's JSON) with ``run`` (label, corpus, questions, chunklab, created) to ``path``,
    whole or not at all."""
    path = check_save(path)
    data = {**payload, "run": {**run, "chunklab": __version__,
                               "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}}
    try:
        write_atomic(path, dumps(data))
    except OSError as exc:
        raise CLIError(f"--save {path} cannot be written ({exc.strerror or exc})", where="--save") from None
    return path


def load_run(path: str | Path, cap: int) -> dict[str, Any]:
    """A run saved by ``eval --save``; a missing, unreadable or other file is a one-line error naming it."""
    path = Path(path)
    if not path.is_file():
        raise CLIError(f"--baseline {path}: file not found (save one with eval --save {path.name})", where="--baseline")
    try:
        data = loads_json(read_text_file(path, cap))
    except json.JSONDecodeError as exc:
        raise CLIError(f"--baseline {path} is not valid JSON: {exc}", where=f"{path}:{exc.lineno}") from None
    rows = data.get("per_question") if isinstance(data, dict) else None
    if not isinstance(rows, list) or not all(isinstance(r, dict) and "id" in r for r in rows):
        raise CLIError(f"--baseline {path} is not a run saved by eval --save (no per_question list)",
                       where="--baseline")
    return data


def against_baseline(now: Mapping[str, Any], base: Mapping[str, Any], name: str) -> tuple[dict[str, Any], list[str]]:
    """The paired comparison of run ``now`` with run ``base`` (both eval JSON documents) and its warnings.

    Returns ``{"file", "paired", "metrics": {m: {"baseline", "now", "diff", "lo", "hi", "level", "p_adj",
    "significant", "verdict"}}, "lost", "gained", "regressed", "worse"}``: ``lost``/``gained`` are the ids
    of questions hit in one run and not the other; ``regressed`` is true when some metric is worse beyond
    the noise (``worse`` names them).
    """
    before = {str(r["id"]): r for r in base["per_question"]}
    after = {str(r["id"]): r for r in now["per_question"]}
    ids = [q for q in after if q in before]
    if not ids:
        raise CLIError(f"--baseline {name}: no question id in common with this run ({len(before)} in the baseline, "
                       f"{len(after)} here)", where="--baseline")
    warnings = []
    if len(ids) < max(len(before), len(after)):
        warnings.append(f"--baseline {name}: compared on the {len(ids)} questions both runs answered "
                        f"({len(before) - len(ids)} only in the baseline, {len(after) - len(ids)} only here)")
    differ = [f"{k} {base.get(k)!r} -> {now.get(k)!r}" for k in _SAME if k in base and base.get(k) != now.get(k)]
    label = (base.get("run") or {}).get("label")
    if label is not None and label != (now.get("run") or {}).get("label"):
        differ.insert(0, f"measured {label!r} -> {(now.get('run') or {}).get('label')!r}")
    if differ:
        warnings.append(f"--baseline {name} ran otherwise: " + "; ".join(differ))
    metrics = [m for m in GATE_METRICS if all(m in before[q] and m in after[q] for q in ids)]
    pairs = {m: ([float(after[q][m]) for q in ids], [float(before[q][m]) for q in ids]) for m in metrics}
    tests = paired_many(pairs, method="holm", metric={m: m for m in metrics})
    out = {m: {"baseline": sum(pairs[m][1]) / len(ids), "now": sum(pairs[m][0]) / len(ids), "diff": r["diff"],
               "lo": r["lo"], "hi": r["hi"], "level": r["level"], "p_adj": r["p_adj"], "significant": r["significant"],
               "verdict": decide(r, expect=1)} for m, r in tests.items()}
    worse = [m for m, r in out.items() if r["significant"] and r["diff"] < 0]
    lost = [q for q in ids if before[q].get("hit") and not after[q].get("hit")]
    gained = [q for q in ids if after[q].get("hit") and not before[q].get("hit")]
    return ({"file": name, "paired": len(ids), "method": "holm", "metrics": out, "lost": lost, "gained": gained,
             "regressed": bool(worse), "worse": worse}, warnings)


def baseline_text(b: Mapping[str, Any]) -> list[str]:
    """The lines ``eval --baseline`` prints after its table."""
    lines = [f"against the baseline {b['file']} ({b['paired']} questions paired; Holm-corrected over "
             f"{len(b['metrics'])} metrics):",
             f"  {'metric':<8}{'baseline':>9}{'now':>8}{'now-base':>10}  {'interval':<18}  verdict: now is higher"]
    for m, r in b["metrics"].items():
        lines.append(f"  {m:<8}{r['baseline']:>9.3f}{r['now']:>8.3f}{r['diff']:>+10.3f}  "
                     f"[{r['lo']:+.3f}, {r['hi']:+.3f}]  {r['verdict']}")
    if b["lost"] or b["gained"]:
        lines.append(f"  lost (hit before, missed now): {', '.join(b['lost'][:10]) or '-'}"
                     f"{' …' if len(b['lost']) > 10 else ''}; gained: {', '.join(b['gained'][:10]) or '-'}"
                     f"{' …' if len(b['gained']) > 10 else ''}")
    lines.append(f"regression gate: FAIL — {', '.join(b['worse'])} worse than the baseline beyond the noise"
                 if b["regressed"] else "regression gate: PASS — no metric worse than the baseline beyond the noise")
    return lines
