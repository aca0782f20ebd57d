"""The book's Chinese labels: the same objects as :mod:`chunklab.viz.labels`, where the explorers read them.

Chapters import them from here (``from chunklab.book.labels import FAMILY_ZH, zh``).
"""
from ..viz.labels import FAMILY_ZH, LABELS, METRIC_ZH, SYMPTOM_ADVICE_ZH, SYMPTOM_ZH, UnknownLabel, zh

__all__ = ["FAMILY_ZH", "SYMPTOM_ZH", "SYMPTOM_ADVICE_ZH", "METRIC_ZH", "LABELS", "UnknownLabel", "zh"]
