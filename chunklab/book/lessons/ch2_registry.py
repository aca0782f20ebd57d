"""Chapter 2, first part: the registry as a family tree, the registry table and the four size knobs.

>>> rows = registry_rows()
>>> len(rows) == len(list_strategies()), rows[0][:2]
(True, ('几何', 'fixed'))
"""
from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt

from ...base import FAMILIES
from ...core import Document
from ... import strategies  # noqa: F401  (importing it registers every strategy)
from ...base import chunk, list_strategies
from ...viz.fonts import use_cjk_font
from ..labels import FAMILY_ZH

__all__ = ["FAMILY_CUE", "family_tree", "family_diagram", "registry_rows", "knob_demo"]

#: Where each family takes its cuts from: the one question of chapter 2, answered per family.
FAMILY_CUE = {
    "geometric": "位置：每隔 N 个字（或 token）",
    "linguistic": "语言单元：行、段落、句子、分隔符",
    "structure": "作者标出的结构：标题、条款号",
    "container": "容器：表格的行、会话的轮次、问答对",
    "code": "语法树：函数、类",
    "semantic": "相邻句子的相似度低谷",
    "hierarchy": "检索用小单元，阅读用大范围",
}

#: Knobs left out of the registry table: not sizes, and long to print.
_HIDDEN_KNOBS = ("prefix", "embedder", "separators")


def family_tree() -> dict[str, list[str]]:
    """Registered strategies grouped by family, in the order of :data:`chunklab.base.FAMILIES`.

    >>> tree = family_tree(); list(tree)[:2], tree["geometric"]
    (['geometric', 'linguistic'], ['fixed', 'sliding_window', 'token'])
    """
    tree: dict[str, list[str]] = {f: [] for f in FAMILIES}
    for s in list_strategies():
        tree[s["family"]].append(s["name"])
    return {f: names for f, names in tree.items() if names}


def family_diagram(title: str = "chunklab 的切分策略谱系：刀口从哪里来"):
    """A figure: one row per family (Chinese name, where its cuts come from) with its strategies.

    Drawn from the registry, so a new strategy appears on its own. The strategies of a family
    sit side by side in its row, so the figure stays short and its text large enough to read at
    the site's width. Returns the matplotlib figure.
    """
    use_cjk_font()
    tree = family_tree()
    width, left, row_h = 8.0, 3.1, 0.62      # inches: figure width, strategy column, row height
    chip_pt, gap = 11, 0.16                   # strategy names: font size (pt) and gap (inches)
    height = row_h * len(tree) + 0.7
    fig = plt.figure(figsize=(width, height))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(height, 0)
    ax.axis("off")
    ax.text(width / 2, 0.27, title, ha="center", va="center", fontsize=12.5)
    colours = plt.get_cmap("tab10").colors
    for i, (family, names) in enumerate(tree.items()):
        colour, top = colours[i % len(colours)], 0.55 + i * row_h
        mid = top + row_h / 2
        if i:
            ax.plot([0.1, width - 0.1], [top, top], color="#e2e8f0", lw=0.8)
        ax.text(0.15, mid - 0.13, FAMILY_ZH[family], ha="left", va="center", fontsize=11.5, weight="bold",
                color="white", bbox=dict(boxstyle="round,pad=0.25", facecolor=colour, edgecolor="none"))
        ax.text(0.15, mid + 0.16, FAMILY_CUE[family], ha="left", va="center", fontsize=9.5, color="#334155")
        x = left
        for name in names:
            ax.text(x, mid, name, ha="left", va="center", fontsize=chip_pt, family="monospace",
                    bbox=dict(boxstyle="round,pad=0.25", facecolor="white", edgecolor=colour, lw=1.2))
            x += len(name) * 0.6 * chip_pt / 72 + gap
    return fig


def registry_rows() -> list[tuple[str, str, str, str]]:
    """One row per registered strategy: family (Chinese), name, how it cuts, knobs with defaults."""
    rows = []
    for s in list_strategies():
        knobs = ", ".join(f"{k}={v['default']!r}" for k, v in s["params"].items() if k not in _HIDDEN_KNOBS)
        rows.append((FAMILY_ZH[s["family"]], s["name"], s["summary_zh"], knobs))
    return rows


#: The settings of the size-knob demonstration: (label, strategy, parameters).
KNOB_SETTINGS = [
    ("recursive target=200", "recursive", {"target": 200}),
    ("markdown target=200 max=None", "markdown", {"target": 200, "max": None}),
    ("markdown target=200 max=1200", "markdown", {"target": 200, "max": 1200}),
    ("markdown target=200 max=1200 min=150", "markdown", {"target": 200, "max": 1200, "min": 150}),
    ("markdown target=400 max=1200", "markdown", {"target": 400, "max": 1200}),
    ("markdown target=400 max=1200 min=150", "markdown", {"target": 400, "max": 1200, "min": 150}),
]


def knob_demo(passage: Document) -> dict[str, Any]:
    """Chunk lengths of ``passage`` under :data:`KNOB_SETTINGS`, and the facts the prose states.

    ``rows``: (setting, number of chunks, lengths). ``numbers``: ``min_n_400`` and
    ``min_n_400_min`` (chunks at target 400 without and with ``min=150``), and three booleans:
    ``min_idle_at_200`` (``min`` changes nothing at target 200), ``min_acts_at_400`` and
    ``target_idle_within_max`` (target 200 and 400 give the same chunks when every section fits
    in ``max``).
    """
    lens = {label: [len(c) for c in chunk(passage, name, **params)] for label, name, params in KNOB_SETTINGS}
    return {
        "rows": [(label, len(v), " ".join(map(str, v))) for label, v in lens.items()],
        "numbers": {
            "min_n_400": len(lens["markdown target=400 max=1200"]),
            "min_n_400_min": len(lens["markdown target=400 max=1200 min=150"]),
            "min_idle_at_200": lens["markdown target=200 max=1200 min=150"] == lens["markdown target=200 max=1200"],
            "min_acts_at_400": lens["markdown target=400 max=1200 min=150"] != lens["markdown target=400 max=1200"],
            "target_idle_within_max": lens["markdown target=200 max=1200"] == lens["markdown target=400 max=1200"],
        },
    }
