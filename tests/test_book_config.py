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
    # Every build executes every chapter from scratch: inline execution keeps no cache (a cache would
    # not notice a change to chunklab itself) and `--all` (below) re-reads every source. Inline is
    # also what evaluates the prose's {eval} roles, in the chapter's kernel, where they stand.
    assert execute["execute_notebooks"] == "inline"
    assert "cache" not in execute
    # {eval} holds expressions such as f"{x:.1%}", not only bare names (MyST-NB's default pattern).
    assert re.match(execute["eval_regex"], 'f"{ch1_hit:+.1%}"')
    assert "nb_execution_mode" not in config["sphinx"]["config"], "set the execution mode in execute: only"
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


# -- chapters read the same in JupyterLab (jupyterlab-myst) as on the site ---------------------------

#: The MyST directives the chapters may use: each renders on the site and in JupyterLab.
DIRECTIVES = {"code-cell", "admonition"}
#: Admonition classes that render in both (jupyterlab-myst draws "dropdown" as a closed box).
ADMONITION_CLASSES = {"tip", "note", "dropdown"}
#: The one MyST role the chapters use: {eval}. A {doc} role shows the bare document name in JupyterLab
#: and its link does not open; a Markdown link to the .md file works in both. {glue:*} shows the key.
ROLES = {"eval"}
_FENCE = re.compile(r"^(`{3,}|:{3,})[ \t]*\{([^}]+)\}(.*)$", re.M)
_ROLE = re.compile(r"(?<![`\w])\{([a-z][\w:-]*)\}`")
_LINK = re.compile(r"\[([^\[\]\n]+)\]\(([^)\s]+\.md)\)")
_EVAL = re.compile(r"\{eval\}`([^`]+)`")


def _checked_chapters() -> list[str]:
    return list(toc_docnames())


def _prose(path: Path) -> list[str]:
    """The markdown cells' text of a chapter (code cells are Python, not MyST)."""
    return [c.source for c in jupytext.read(path).cells if c.cell_type == "markdown"]


@pytest.mark.parametrize("docname", _checked_chapters())
def test_chapter_uses_only_syntax_that_renders_in_jupyterlab(docname):
    path = source_path(docname)
    text = path.read_text(encoding="utf-8")
    problems = []
    for m in _FENCE.finditer(text):
        if m.group(2) not in DIRECTIVES:
            problems.append(f"directive {{{m.group(2)}}} (use a code cell: show_source, ApiReference)")
    for cls in re.findall(r"^:class:\s*(.+)$", text, re.M):
        problems += [f"admonition class {c}" for c in cls.split() if c not in ADMONITION_CLASSES]
    for source in _prose(path):
        problems += [f"role {{{r}}}" for r in _ROLE.findall(source) if r not in ROLES]
    for cell in jupytext.read(path).cells:
        tags = set(cell.metadata.get("tags", []))
        if {"remove-cell", "remove_cell"} & tags:
            # MyST-NB's inline execution skips such a cell: it would run in JupyterLab, never on the site
            problems.append("a cell tagged remove-cell (use [remove-input, remove-output])")
        # what the site hides, JupyterLab collapses (tests/test_lab.py checks Lab honours it)
        hidden = cell.metadata.get("jupyter", {})
        if {"remove-input", "hide-input"} & tags and not hidden.get("source_hidden"):
            problems.append("a code cell hidden on the site with its code open in JupyterLab "
                            "(add jupyter: {source_hidden: true})")
        if hidden.get("outputs_hidden"):
            # JupyterLab shows a cell's new output when it runs and drops the flag when it saves
            problems.append("jupyter.outputs_hidden (JupyterLab would rewrite the file on save)")
    assert "myst_nb" not in text, f"{path.name}: prose values come from chunklab.book.prose.glue, not myst_nb"
    assert not problems, f"{path.name}: " + "; ".join(sorted(set(problems)))


@pytest.mark.parametrize("docname", _checked_chapters())
def test_eval_roles_are_python_expressions(docname):
    path = source_path(docname)
    for source in _prose(path):
        for expr in _EVAL.findall(source):
            compile(expr, f"{path.name}: {{eval}}`{expr}`", "eval")   # a SyntaxError names the role
            assert "\n" not in expr


def _title(path: Path) -> str:
    return re.search(r"^# (.+)$", path.read_text(encoding="utf-8"), re.M).group(1).strip()


@pytest.mark.parametrize("docname", _checked_chapters())
def test_links_between_chapters_open_a_chapter(docname):
    """[text](chN.md): the site resolves it to the page, JupyterLab opens the file. A link that names
    the chapter by its full title repeats the title as it is now (the site used to fill it in)."""
    path = source_path(docname)
    listed = set(toc_docnames())
    for source in _prose(path):
        for text, target in _LINK.findall(source):
            if "://" in target:
                continue
            name = f"chapters/{Path(target).stem}"
            assert Path(target).parent == Path("."), f"{path.name}: link {target}: chapters link within chapters/"
            assert name in listed, f"{path.name}: link to {target}, which is not a page of the book"
            if not re.match(r"第 ?\d+ ?章|附录 ?[A-Z]", text):
                assert text == _title(source_path(name)), (
                    f"{path.name}: link text {text!r} should be the title of {target}: {_title(source_path(name))!r}")



def test_every_module_has_a_section_in_the_api_appendix():
    """Appendix A documents the whole package: a new module gets its entry and its section."""
    import pkgutil

    import chunklab

    text = (Path(__file__).resolve().parents[1] / "chapters" / "appendix_api.md").read_text(encoding="utf-8")
    modules = ["chunklab"] + [m.name for m in pkgutil.walk_packages(chunklab.__path__, "chunklab.")
                              if ".exercises." not in m.name and ".lessons." not in m.name
                              and m.name not in ("chunklab.__main__", "chunklab._version",
                                                                               "chunklab._topk")]
    missing = [m for m in modules if f'api.show("{m}")' not in text or f'    "{m}": ' not in text]
    assert not missing, f"add these modules to chapters/appendix_api.md: {missing}"


#: Visible code cells may be this long; longer ones are listings or experiments the reader studies.
LONG_CELL_LINES = 15
#: How many of those the whole book may have (issue #29: the rest go into tested chunklab.book helpers).
MAX_LONG_CELLS = 10


def test_few_long_visible_code_cells():
    """A chapter reads like a lesson: analysis lives in tested helpers, called in one line."""
    long_cells = []
    for path in sorted((ROOT / "chapters").glob("*.md")):
        for i, cell in enumerate(jupytext.read(path).cells):
            tags = set(cell.metadata.get("tags", []))
            if cell.cell_type != "code" or tags & {"remove-input", "hide-input", "remove-cell"}:
                continue
            n = len(cell.source.strip().splitlines())
            if n > LONG_CELL_LINES:
                long_cells.append(f"{path.name} cell {i} ({n} lines)")
    assert len(long_cells) <= MAX_LONG_CELLS, (
        f"{len(long_cells)} visible code cells over {LONG_CELL_LINES} lines (at most {MAX_LONG_CELLS}): "
        + ", ".join(long_cells))
