"""Evaluation: every metric the articles name, per question, with bootstrap confidence intervals.

The package holds one idea per module:

* :mod:`~chunklab.evaluation.settings` — the options of an evaluation, declared and validated
  once (:class:`EvalSettings`);
* :mod:`~chunklab.evaluation.metrics` — the per-question metrics with their definitions
  (:func:`question_metrics`, :data:`METRICS`) and the context budget (:func:`select_budget`), on
  the global coordinate line of :class:`~chunklab.retrieval.Layout` (re-exported here);
* :mod:`~chunklab.evaluation.structure` — question-free measures of a chunking
  (:func:`structure_metrics`, and the 0/1 behind its ratios, :func:`structure_flags`);
* :mod:`~chunklab.evaluation.misses` — miss attribution (:func:`attribute_misses`,
  :data:`SYMPTOMS`); :mod:`~chunklab.evaluation.diagnose` tests each label counterfactually
  (:func:`diagnose`);
* :mod:`~chunklab.evaluation.stats` — bootstrap intervals (:func:`bootstrap_ci`,
  :func:`bootstrap_many`, :func:`paired_bootstrap`);
* :mod:`~chunklab.evaluation.run` — the entry point :func:`evaluate`, its :class:`EvalResult`,
  and :func:`compare`;
* :mod:`~chunklab.evaluation.matrix` — the method x parameter matrix (many chunkings of one
  corpus).

:func:`chunks_from_strings` and :func:`split_with` (other libraries' splitters) live in
:mod:`chunklab.adapters` and are re-exported here.
"""
from __future__ import annotations

from ..adapters import chunks_from_strings, split_with
from ..retrieval.layout import Layout
from .metrics import METRICS, question_metrics, select_budget
from .misses import SYMPTOMS, attribute_misses
from .diagnose import diagnose
from .run import EvalResult, compare, evaluate
from .settings import EvalSettings
from .stats import bootstrap_ci, bootstrap_many, paired_bootstrap
from .structure import structure_flags, structure_metrics

__all__ = [
    "METRICS", "SYMPTOMS", "EvalSettings", "Layout", "question_metrics", "select_budget", "structure_flags", "structure_metrics",
    "attribute_misses", "diagnose", "bootstrap_ci", "bootstrap_many", "paired_bootstrap", "compare", "evaluate", "EvalResult",
    "chunks_from_strings", "split_with",
]
