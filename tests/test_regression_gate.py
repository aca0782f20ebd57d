"""Regression gate: the pinned chunking configuration must not lose hit on the 小北 questions.

Chapter 5 shows this file as a template for the reader's CI. The baseline (``regression_baseline.json``
next to this file) stores the configuration, its hit@5 with the 95% bootstrap interval, and the
hit of every question when the baseline was made. The gate compares today's per-question hits
with the baseline's, question by question (a paired bootstrap of today - baseline): it fails when
the whole interval of the difference lies below 0, i.e. when today is worse by more than the
questions that moved could show by chance. A baseline without per-question results (an older file)
falls back to the interval of the mean: the floor is ``mean - (mean - lo)``, far less sensitive.
A change that makes retrieval better passes, with a hint to refresh the baseline.

After an intended change, refresh the baseline and commit it with the change::

    python tests/test_regression_gate.py --update
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Mapping

import numpy as np

BASELINE_PATH = Path(__file__).with_name("regression_baseline.json")

#: The configuration under guard: the one chapter 7's adoption rule ends with (the router without
#: the breadcrumb prefix and without overlap, nothing added to the index), measured as chapters 6
#: and 7 decide: hit under a context budget of 2,560 characters (5 chunks of 512).
PINNED: dict[str, Any] = {
    "corpus": "xiaobei", "questions": "xiaobei", "strategy": "auto", "params": {"prefix": False, "overlap": 0},
    "k": 5, "budget": 2560, "use_context": False, "metric": "hit", "n_boot": 2000, "seed": 0,
}


def ruler(config: Mapping[str, Any]) -> str:
    """The measure's name as the CLI prints it: ``hit@budget 2560`` or ``hit@5``."""
    if config.get("budget"):
        return f'{config["metric"]}@budget {config["budget"]}'
    return f'{config["metric"]}@{config["k"]}'


def evaluate_config(config: dict[str, Any]):
    """Chunk the corpus with ``config`` and evaluate it on its questions (an ``EvalResult``)."""
    from chunklab import get_strategy
    from chunklab.datasets import load_corpus
    from chunklab.evaluation import evaluate
    from chunklab.datasets.questions import load_questions

    corpus = load_corpus(config["corpus"])
    questions = load_questions(config["questions"], corpus)
    strategy = get_strategy(config["strategy"], **config["params"])
    chunks = [c for d in corpus.documents for c in strategy.split(d)]
    return evaluate(corpus.documents, chunks, questions, k=config["k"], budget=config.get("budget"),
                    use_context=config["use_context"], n_boot=config["n_boot"], seed=config["seed"])


def per_question(result, metric: str) -> dict[str, float]:
    """``{question id: value}`` of one metric of an ``EvalResult``."""
    return {q: float(v) for q, v in zip(result.question_ids, result.per_question[metric])}


def load_baseline(path: Path = BASELINE_PATH) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def gate(today: Mapping[str, float], baseline: dict[str, Any]) -> tuple[bool, str]:
    """``(passed, message)``: is ``today`` ({question id: value}) no worse than the baseline?

    Paired: the bootstrap interval of mean(today - baseline) over the same questions; it fails when
    the interval lies wholly below 0. Without per-question results in the baseline, the mean of
    ``today`` is held against the floor ``mean - (mean - lo)`` of the baseline's own interval.
    """
    from chunklab.evaluation import paired_bootstrap

    cfg = baseline["config"]
    name = ruler(cfg)
    value = float(np.mean(list(today.values())))
    base = baseline.get("per_question")
    if base is None:  # an old baseline: the marginal band only
        floor = baseline["mean"] - (baseline["mean"] - baseline["lo"])
        if value < floor:
            return False, f"{name} = {value:.4f} is below the floor {floor:.4f} (baseline without per-question results)"
        return True, f"{name} = {value:.4f} is at or above the floor {floor:.4f} (baseline without per-question results)"
    if set(today) != set(base):
        return False, "the questions changed since the baseline was made: refresh it with --update"
    ids = sorted(base)
    r = paired_bootstrap([today[q] for q in ids], [base[q] for q in ids], n=cfg["n_boot"], seed=cfg["seed"])
    moved = f"lost on {sum(today[q] < base[q] for q in ids)}, gained on {sum(today[q] > base[q] for q in ids)} questions"
    diff = f"{name} = {value:.4f}, paired difference {r['diff']:+.4f} [{r['lo']:+.4f}, {r['hi']:+.4f}] ({moved})"
    if r["hi"] < 0:
        return False, f"{diff}: the whole interval is below 0, the change made retrieval worse"
    if r["lo"] > 0:
        return True, f"{diff}: better; refresh the baseline with `python tests/test_regression_gate.py --update`"
    return True, f"{diff}: no change the questions can tell from chance"


def make_baseline(config: dict[str, Any] = PINNED) -> dict[str, Any]:
    import chunklab

    result = evaluate_config(config)
    agg = result.aggregate[config["metric"]]
    return {"config": dict(config), "mean": agg["mean"], "lo": agg["lo"], "hi": agg["hi"], "n": agg["n"],
            "chunklab_version": chunklab.__version__, "per_question": per_question(result, config["metric"])}


def test_baseline_guards_the_pinned_configuration():
    baseline = load_baseline()
    assert baseline["config"] == PINNED, "the baseline was made for another configuration: run --update"
    assert baseline["lo"] <= baseline["mean"] <= baseline["hi"]
    assert len(baseline["per_question"]) == baseline["n"]
    assert abs(np.mean(list(baseline["per_question"].values())) - baseline["mean"]) < 1e-12


def test_hit_has_not_regressed():
    baseline = load_baseline()
    today = per_question(evaluate_config(baseline["config"]), baseline["config"]["metric"])
    passed, message = gate(today, baseline)
    assert passed, message


def test_the_gate_can_fail():
    baseline = load_baseline()
    worse = {**baseline["config"], "strategy": "fixed", "params": {"size": 128}}
    passed, message = gate(per_question(evaluate_config(worse), worse["metric"]), baseline)
    assert not passed and "below 0" in message


def test_the_gate_is_paired():
    """A few questions lost and none gained fail the gate, though the mean stays inside the marginal band."""
    ids = [f"q{i}" for i in range(500)]
    base_hits = [1.0] * 400 + [0.0] * 100
    baseline = {"config": {**PINNED, "n_boot": 1000}, "per_question": dict(zip(ids, base_hits)),
                "mean": 0.8, "lo": 0.765, "hi": 0.835, "n": 500}
    lost = dict(zip(ids, base_hits))
    for q in ids[:6]:
        lost[q] = 0.0
    assert np.mean(list(lost.values())) > baseline["lo"]  # the marginal band would let it through
    passed, message = gate(lost, baseline)
    assert not passed and "lost on 6, gained on 0 questions" in message
    swapped = dict(lost)
    for q in ids[400:406]:
        swapped[q] = 1.0  # as many gained elsewhere: no regression
    assert gate(swapped, baseline)[0]
    assert gate(dict(zip(ids, base_hits)), baseline)[0]
    old = {k: v for k, v in baseline.items() if k != "per_question"}
    assert gate(lost, old)[0]  # the marginal band alone does not see it
    assert not gate({**lost, "extra": 1.0}, baseline)[0]


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        sys.exit("usage: python tests/test_regression_gate.py --update")
    BASELINE_PATH.write_text(json.dumps(make_baseline(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {BASELINE_PATH}")
