"""Helpers shared by the book tests: which pages the table of contents lists."""
from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
HTML = ROOT / "_build" / "html"


def _entries(node: dict) -> list[str]:
    out = []
    for key in ("file",):
        if key in node:
            out.append(node[key])
    for key in ("parts", "chapters", "sections"):
        for child in node.get(key, []) or []:
            out.extend(_entries(child))
    return out


def toc_docnames() -> list[str]:
    """Every document of ``_toc.yml`` in reading order, root first, without extension."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    names = [toc["root"], *_entries(toc)]
    return [str(Path(n).with_suffix("")) if Path(n).suffix in (".md", ".ipynb") else n for n in names]


def source_path(docname: str) -> Path:
    """The source file of a toc entry (``.md`` text notebook or ``.ipynb``)."""
    for suffix in (".md", ".ipynb"):
        path = ROOT / f"{docname}{suffix}"
        if path.is_file():
            return path
    raise FileNotFoundError(f"{docname} is in _toc.yml but has no .md or .ipynb source")
