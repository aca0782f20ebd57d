"""Seeing chunks and results: the chunk viewer, figures with Chinese labels, and the explorers.

* :mod:`.chunks` — :func:`show_chunks`, the HTML chunk viewer, and :func:`chunk_stats`;
* :mod:`.plots` — matplotlib figures (lengths, similarity curve, heatmap, recall, paired bars, budget);
* :mod:`.fonts` — a CJK font registered with matplotlib so Chinese labels render;
* :mod:`.widgets` — ipywidgets explorers with a static HTML fallback (import it directly:
  ``from chunklab.viz.widgets import StrategyExplorer``; it is not imported here, so
  ``import chunklab.viz`` does not load the evaluation and retrieval modules).
"""
from __future__ import annotations

from .chunks import PALETTE, ChunkView, chunk_stats, fell_back, show_chunks
from .plots import budget_curve, length_histogram, metric_heatmap, paired_bars, recall_curves, similarity_curve

__all__ = ["ChunkView", "show_chunks", "chunk_stats", "fell_back", "length_histogram", "similarity_curve", "metric_heatmap",
           "recall_curves", "paired_bars", "budget_curve", "PALETTE"]
