"""Regression gate: the pinned chunking configuration must not lose hit@5 on the 小北 questions.

Chapter 5 shows this file as a template for the reader's CI. The baseline (``regression_baseline.json``
next to this file) stores the configuration, its hit@5 and the 95% bootstrap interval measured when
the baseline was made. The gate fails when today's hit@5 falls below ``mean - (mean - lo)``: below
the baseline's noise band, i.e. by more than the question sample alone could explain. A change
that makes retrieval better passes, with a hint to refresh the baseline.

After an intended change, refresh the baseline and commit it with the change::

    python tests/test_regression_gate.py --update
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

BASELINE_PATH = Path(__file__).with_name("regression_baseline.json")

#: The configuration under guard: the router's defaults (claim C22), indexed with the breadcrumb.
PINNED: dict[str, Any] = {
    "corpus": "xiaobei", "questions": "xiaobei", "strategy": "auto", "params": {},
    "k": 5, "use_context": True, "metric": "hit", "n_boot": 2000, "seed": 0,
}


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
    return evaluate(corpus.documents, chunks, questions, k=config["k"], use_context=config["use_context"],
                    n_boot=config["n_boot"], seed=config["seed"])


def load_baseline(path: Path = BASELINE_PATH) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def gate(value: float, baseline: dict[str, Any]) -> tuple[bool, str]:
    """``(passed, message)``: does ``value`` stay within the baseline's noise band?

    The band is the lower half-width of the baseline's bootstrap interval, ``mean - lo``; the floor
    is ``mean - band``. Anything at or above the floor passes.
    """
    mean, band = baseline["mean"], baseline["mean"] - baseline["lo"]
    floor = mean - band
    name = f'{baseline["config"]["metric"]}@{baseline["config"]["k"]}'
    if value < floor:
        return False, (f"{name} = {value:.4f} is below the floor {floor:.4f} "
                       f"(baseline {mean:.4f} minus its noise band {band:.4f}): the change made retrieval worse")
    if value > baseline["hi"]:
        return True, (f"{name} = {value:.4f} is above the baseline's interval (hi {baseline['hi']:.4f}): "
                      f"better; refresh the baseline with `python tests/test_regression_gate.py --update`")
    return True, f"{name} = {value:.4f} is within the noise band of the baseline {mean:.4f} (floor {floor:.4f})"


def make_baseline(config: dict[str, Any] = PINNED) -> dict[str, Any]:
    import chunklab

    result = evaluate_config(config)
    agg = result.aggregate[config["metric"]]
    return {"config": dict(config), "mean": agg["mean"], "lo": agg["lo"], "hi": agg["hi"], "n": agg["n"],
            "chunklab_version": chunklab.__version__}


def test_baseline_guards_the_pinned_configuration():
    baseline = load_baseline()
    assert baseline["config"] == PINNED, "the baseline was made for another configuration: run --update"
    assert baseline["lo"] <= baseline["mean"] <= baseline["hi"]


def test_hit_at_5_has_not_regressed():
    baseline = load_baseline()
    result = evaluate_config(baseline["config"])
    value = result.aggregate[baseline["config"]["metric"]]["mean"]
    passed, message = gate(value, baseline)
    assert passed, message


def test_the_gate_can_fail():
    baseline = load_baseline()
    worse = {**baseline["config"], "strategy": "fixed", "params": {"size": 128}}
    value = evaluate_config(worse).aggregate[worse["metric"]]["mean"]
    passed, message = gate(value, baseline)
    assert not passed and "below the floor" in message


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        sys.exit("usage: python tests/test_regression_gate.py --update")
    BASELINE_PATH.write_text(json.dumps(make_baseline(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {BASELINE_PATH}")
