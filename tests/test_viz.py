"""The chunk viewer and the plots."""
from __future__ import annotations

import re
import warnings

import pytest

import chunklab
from chunklab import Chunk, Document
from chunklab.viz import (budget_curve, chunk_stats, length_histogram, metric_heatmap, paired_bars, recall_curves,
                          show_chunks, similarity_curve)


def test_document_text_is_escaped():
    evil = "正文<script>alert('x')</script><img src=x onerror=alert(1)>结束。"
    doc = Document("d", evil)
    for size in (10, 100):
        view = show_chunks(doc, chunklab.chunk(doc, "fixed", size=size))
        assert "<script>" not in view.html and "<img" not in view.html
    assert "&lt;script&gt;" in view.html and "&lt;img src=x onerror=alert(1)&gt;" in view.html


def test_overlap_is_shaded_from_real_offsets():
    doc = Document("d", "甲乙丙丁戊己庚辛")
    chunks = [Chunk("d", 0, 0, 5, "甲乙丙丁戊"), Chunk("d", 1, 3, 8, "丁戊己庚辛")]
    view = show_chunks(doc, chunks)
    shaded = re.findall(r'class="cl-seg cl-ov"[^>]*>([^<]*)<', view.html)
    assert shaded == ["丁戊"]
    assert view.stats["overlapping_pairs"] == 1 and view.stats["mean_overlap"] == 2


def test_every_character_appears_once_and_markers_per_chunk():
    doc = Document("d", "第一句。第二句。第三句。")
    chunks = chunklab.chunk(doc, "sentence", target=4)
    view = show_chunks(doc, chunks, stats=False)
    body = re.sub(r'<span class="cl-b[^"]*"[^>]*>\d+</span>', "", view.html.split('<div class="cl-view">')[1])
    assert re.sub(r"<[^>]+>", "", body) == doc.text
    assert len(re.findall(r'class="cl-b', view.html)) == 3


def test_fallback_chunks_are_marked_and_tooltips_say_why():
    doc = Document("d", "短段。\n\n" + "长" * 40)
    chunks = chunklab.chunk(doc, "paragraph", target=10)
    view = show_chunks(doc, chunks)
    assert "cl-b cl-fb" in view.html
    assert "回退到 recursive" in view.html


def test_long_documents_are_windowed():
    doc = Document("d", "字" * 50_000)
    chunks = chunklab.chunk(doc, "fixed", size=1000)
    view = show_chunks(doc, chunks, around=20_000, radius=500)
    assert "前 19500 字省略" in view.html and "后 29500 字省略" in view.html
    assert len(view.html) < 20_000


def test_stats_count_fallbacks_and_inflation():
    doc = Document("d", "一二三四五六七八九十")
    st = chunk_stats(doc, chunklab.chunk(doc, "fixed", size=4, overlap=2))
    assert st["chunks"] == 4 and st["max_len"] == 4 and st["fell_back"] == 0
    assert st["inflation"] == pytest.approx(16 / 10)


def test_plots_render_chinese_without_missing_glyphs():
    import matplotlib

    matplotlib.use("Agg")
    doc = Document("d", "第一句。第二句比较长一些。第三句。" * 20)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        figs = [
            length_histogram({"固定": chunklab.chunk(doc, "fixed", size=30), "递归": chunklab.chunk(doc, "recursive", target=30)}),
            similarity_curve([0.9, 0.4, 0.8, 0.2, 0.7], 0.5, [1, 3], true_boundaries=[3]),
            metric_heatmap([{"方法": m, "大小": s, "hit@5": v} for m, s, v in
                            [("fixed", 512, 0.5), ("fixed", 1024, 0.6), ("recursive", 512, 0.7), ("recursive", 1024, 0.65)]],
                           "方法", "大小", "hit@5"),
            recall_curves({"固定 512": {1: 0.3, 5: 0.6, 10: 0.7}}),
            paired_bars({"递归 − 固定": (0.05, 0.01, 0.09), "段落 − 固定": (0.01, -0.02, 0.04)}),
            budget_curve({"512": {500: 0.4, 1000: 0.6}}),
        ]
        for fig in figs:
            fig.canvas.draw()
    import matplotlib.pyplot as plt

    plt.close("all")


def test_routed_chunks_are_not_fallbacks_unless_the_route_fell_back():
    doc = Document("h", "# 手册\n\n## 3.1 年假\n满一年不满十年的，年休假五天。\n\n## 3.2 病假\n按基本工资的百分之六十发放。")
    chunks = chunklab.chunk(doc, "auto")
    assert chunks and all(c.meta["routed_to"] == c.meta["level"] for c in chunks)
    assert chunk_stats(doc, chunks)["fell_back"] == 0
    assert "cl-b cl-fb" not in show_chunks(doc, chunks).html


def test_paired_bars_reads_in_percent_and_explains_its_hatching():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = paired_bars({"递归 − 固定": (0.05, 0.01, 0.09), "段落 − 固定": (-0.01, -0.04, 0.02)})
    fig.canvas.draw()
    ax = fig.axes[0]
    ticks = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert ticks and all(t == "0" or t.endswith("%") for t in ticks)
    assert "+5%" in ticks or "+4%" in ticks or "+6%" in ticks     # a fraction of 0.05 reads as percent
    legend = ax.get_legend()
    labels = [t.get_text() for t in legend.get_texts()]
    assert any("不含 0" in x for x in labels) and any("跨过 0" in x for x in labels)
    hatches = [p.get_hatch() for p in legend.get_patches()]
    assert None in hatches and "//" in hatches                   # the legend shows both fills
    bars = ax.patches
    assert bars[0].get_hatch() is None and bars[1].get_hatch() == "//"   # solid: excludes 0; hatched: crosses it
    plain = paired_bars({"a": (2.0, 1.0, 3.0)}, percent=False)
    plain.canvas.draw()
    assert not any(t.get_text().endswith("%") for t in plain.axes[0].get_xticklabels())
    plt.close("all")


def test_metric_heatmap_fixed_scale():
    """A share drawn on a fixed 0-1 scale: half a point of spread must not fill the colour bar."""
    from chunklab.viz.plots import metric_heatmap

    records = [{"size": s, "overlap": o, "hit": 0.991 + 0.001 * s / 128 + 0.001 * o} for s in (128, 256) for o in (0, 1)]
    fixed = metric_heatmap(records, "size", "overlap", "hit", scale=(0, 1))
    assert fixed.axes[0].images[0].get_clim() == (0, 1)
    auto = metric_heatmap(records, "size", "overlap", "hit")
    lo, hi = auto.axes[0].images[0].get_clim()
    assert hi - lo < 0.01
