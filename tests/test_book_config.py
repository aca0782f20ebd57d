"""The book's sources and settings are consistent (no build needed)."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import jupytext
import pytest
import yaml

from book_pages import ROOT, source_path, toc_docnames

OVERRIDES = ROOT / "tools" / "jupyterlab" / "overrides.json"


def test_every_chapter_file_is_in_the_toc_and_exists():
    listed = toc_docnames()
    assert len(listed) == len(set(listed)), "a page is listed twice in _toc.yml"
    for name in listed:
        source_path(name)
    on_disk = {f"chapters/{p.stem}" for p in (ROOT / "chapters").glob("*.md")}
    assert on_disk <= set(listed), f"chapters not in _toc.yml: {sorted(on_disk - set(listed))}"


@pytest.mark.parametrize("docname", toc_docnames())
def test_chapter_is_a_myst_text_notebook(docname):
    path = source_path(docname)
    assert path.suffix == ".md", f"{path.name}: chapters are MyST text notebooks, not .ipynb (no outputs in git)"
    header = jupytext.read(path).metadata
    assert header["jupytext"]["text_representation"]["format_name"] == "myst"
    assert header["kernelspec"]["name"] == "python3"


def test_config_fails_on_errors_and_stderr():
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    execute = config["execute"]
    assert execute["execute_notebooks"] == "force"
    assert execute["allow_errors"] is False
    assert execute["stderr_output"] in ("error", "severe")
    assert config["sphinx"]["config"]["language"] == "zh_CN"
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"jupyter-book build \. --all -W --keep-going", makefile)


def _jupytext_factory_name() -> str | None:
    ext = Path(sys.prefix) / "share" / "jupyter" / "labextensions" / "jupyterlab-jupytext" / "static"
    for js in sorted(ext.glob("*.js")):
        m = re.search(r'FACTORY="([^"]+)"', js.read_text(encoding="utf-8", errors="replace"))
        if m:
            return m.group(1)
    return None


def test_jupyterlab_opens_chapters_as_notebooks():
    viewers = json.loads(OVERRIDES.read_text())["@jupyterlab/docmanager-extension:plugin"]["defaultViewers"]
    factory = _jupytext_factory_name()
    if factory is None:
        pytest.skip("jupyterlab-jupytext lab extension not installed in this environment")
    assert viewers == {"markdown": factory, "myst": factory}
    installed = Path(sys.prefix) / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    if (ROOT / ".venv").resolve() == Path(sys.prefix).resolve():
        assert installed.is_file() and json.loads(installed.read_text()) == json.loads(OVERRIDES.read_text()), (
            "make venv installs tools/jupyterlab/overrides.json into .venv/share/jupyter/lab/settings/")
