"""Every chapter is stored exactly as JupyterLab writes it back, so opening one changes nothing on disk.

JupyterLab opens ``chapters/*.md`` through jupytext and saves them (autosave, Run All + Save) with the
repository's ``jupytext.toml``. A chapter that is not in that canonical form is rewritten the first
time someone opens it — a diff nobody made. Fix a failure with::

    .venv/bin/jupytext --to myst chapters/NAME.md -o chapters/NAME.md

and, for the header, the kernelspec as JupyterLab writes it (``KERNELSPEC`` below).
"""
from __future__ import annotations

import copy

import jupytext
import pytest
from jupytext.config import load_jupytext_config

from book_pages import ROOT, source_path, toc_docnames

#: The kernelspec JupyterLab puts in a notebook's metadata when it saves (the running kernel's spec),
#: in its order: a header that says otherwise is rewritten on the first save.
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
#: What a JupyterLab session adds to a notebook before it saves it: jupytext.toml keeps it out.
LAB_NOTEBOOK_METADATA = {
    "language_info": {"name": "python", "version": "3.11.2", "mimetype": "text/x-python",
                      "file_extension": ".py", "pygments_lexer": "ipython3",
                      "codemirror_mode": {"name": "ipython", "version": 3}, "nbconvert_exporter": "python"},
    "widgets": {"application/vnd.jupyter.widget-state+json": {"state": {}, "version_major": 2, "version_minor": 0}},
}
USER_EXPRESSIONS = [{"expression": "x", "result": {"data": {"text/plain": "1"}, "metadata": {}, "status": "ok"}}]


def _config():
    config = load_jupytext_config(str(ROOT / "chapters"))
    assert config is not None, "jupytext.toml at the repository root is missing"
    return config


def _chapters():
    return list(toc_docnames())


def test_config_keeps_lab_session_data_out_of_the_chapters():
    config = _config()
    assert config.notebook_metadata_filter == "mystnb"
    assert config.cell_metadata_filter == "-user_expressions"


@pytest.mark.parametrize("docname", _chapters())
def test_chapter_is_byte_identical_after_a_jupytext_round_trip(docname):
    path = source_path(docname)
    text = path.read_text(encoding="utf-8")
    config = _config()
    nb = jupytext.reads(text, fmt="md:myst", config=config)
    assert jupytext.writes(nb, fmt="md:myst", config=config) == text, (
        f"{path.name} is not in jupytext's canonical form: JupyterLab would rewrite it on open; "
        f"run `.venv/bin/jupytext --to myst {path.relative_to(ROOT)} -o {path.relative_to(ROOT)}`")


@pytest.mark.parametrize("docname", _chapters())
def test_chapter_round_trips_with_jupytexts_defaults_too(docname):
    """A reader whose JupyterLab does not pick up jupytext.toml (their own environment) must not
    rewrite a chapter either: chapter headers carry no MyST-NB options (they live in _config.yml)."""
    path = source_path(docname)
    text = path.read_text(encoding="utf-8")
    assert jupytext.writes(jupytext.reads(text, fmt="md:myst"), fmt="md:myst") == text, (
        f"{path.name}: jupytext's default MyST writer would rewrite it (move per-chapter options to _config.yml)")


@pytest.mark.parametrize("docname", _chapters())
def test_chapter_is_unchanged_by_what_a_lab_session_saves(docname):
    """Run All + Save in JupyterLab adds kernel metadata and the {eval} results: none reaches the file."""
    path = source_path(docname)
    text = path.read_text(encoding="utf-8")
    config = _config()
    nb = jupytext.reads(text, fmt="md:myst", config=config)
    saved = copy.deepcopy(nb)
    saved.metadata["kernelspec"] = dict(KERNELSPEC)
    saved.metadata.update(copy.deepcopy(LAB_NOTEBOOK_METADATA))
    for cell in saved.cells:
        if cell.cell_type == "markdown" and "{eval}`" in cell.source:
            cell.metadata["user_expressions"] = copy.deepcopy(USER_EXPRESSIONS)
    assert jupytext.writes(saved, fmt="md:myst", config=config) == text, (
        f"{path.name}: saving it from JupyterLab would change the file")


@pytest.mark.parametrize("docname", _chapters())
def test_chapter_header_has_lab_kernelspec_and_no_eval_results(docname):
    path = source_path(docname)
    text = path.read_text(encoding="utf-8")
    nb = jupytext.reads(text, fmt="md:myst")
    assert list(nb.metadata["kernelspec"].items()) == list(KERNELSPEC.items()), (
        f"{path.name}: the header's kernelspec must be {KERNELSPEC} in this order (as JupyterLab writes it)")
    assert "user_expressions" not in text, f"{path.name} contains jupyterlab-myst's cached {{eval}} results"
    assert "language_info" not in nb.metadata and "widgets" not in nb.metadata
