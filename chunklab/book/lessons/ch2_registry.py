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
    """A figure: the families (Chinese names and where their cuts come from) and their strategies.

    Drawn from the registry, so a new strategy appears on its own. Returns the matplotlib figure.
    """
    use_cjk_font()
    tree = family_tree()
    n = sum(len(v) for v in tree.values())
    fig, ax = plt.subplots(figsize=(8.6, 0.34 * n + 0.9))
    ax.set_xlim(0, 10)
    ax.set_ylim(n + 0.2, -0.9)
    ax.axis("off")
    colours = plt.get_cmap("tab10").colors
    row = 0
    for i, (family, names) in enumerate(tree.items()):
        colour = colours[i % len(colours)]
        mid = row + (len(names) - 1) / 2
        ax.text(0.05, mid, FAMILY_ZH[family], ha="left", va="center", fontsize=10.5, weight="bold",
                color="white", bbox=dict(boxstyle="round,pad=0.3", facecolor=colour, edgecolor="none"))
        ax.text(1.25, mid, FAMILY_CUE[family], ha="left", va="center", fontsize=8.5, color="#334155")
        for j, name in enumerate(names):
            y = row + j
            ax.plot([5.3, 6.0], [mid, y], color=colour, lw=1)
            ax.text(6.1, y, name, ha="left", va="center", fontsize=9.5, family="monospace",
                    bbox=dict(boxstyle="round,pad=0.2", facecolor="white", edgecolor=colour))
        row += len(names)
        if row < n:
            ax.axhline(row - 0.5, xmin=0.0, xmax=0.98, color="#e2e8f0", lw=0.8)
    ax.set_title(title, fontsize=11)
    fig.tight_layout()
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
