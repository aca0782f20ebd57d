"""The chapters' helpers for JupyterLab/site parity: prose values, source listings, the API appendix."""
from __future__ import annotations

import math
import sys
import types

import numpy as np
import pytest

from chunklab.book import apidoc, source
from chunklab.book.prose import glue


# -- chunklab.book.prose -----------------------------------------------------------------------------

def test_glue_binds_plain_python_values():
    ns: dict = {}
    glue("a", np.int64(5), namespace=ns)
    glue("b", np.float32(0.25), namespace=ns)
    glue("c", np.bool_(True), namespace=ns)
    glue("d", "固定 512", namespace=ns)
    assert ns == {"a": 5, "b": 0.25, "c": 1, "d": "固定 512"}
    assert [type(ns[k]) for k in "abcd"] == [int, float, int, str]
    assert f"{ns['b']:.1%}" == "25.0%"


def test_glue_keeps_the_myst_nb_signature():
    ns: dict = {}
    glue("x", 1, False, namespace=ns)
    glue("y", 2, display=False, namespace=ns)
    assert ns == {"x": 1, "y": 2}


def test_a_name_is_bound_once():
    ns: dict = {}
    glue("k", 0.5, namespace=ns)
    glue("k", np.float64(0.5), namespace=ns)   # the same value again (a cell run twice): fine
    with pytest.raises(ValueError) as e:
        glue("k", 0.6, namespace=ns)
    msg = str(e.value)
    assert "'k'" in msg and "0.5" in msg and "0.6" in msg and "\n" not in msg
    with pytest.raises(ValueError):
        glue("k", "0.5", namespace=ns)           # another type is another value
    glue("nan", math.nan, namespace=ns)
    glue("nan", float("nan"), namespace=ns)      # NaN equals NaN here


def test_a_name_that_exists_with_another_value_is_refused():
    ns = {"docs": [1, 2]}
    with pytest.raises(ValueError, match="'docs' is already bound"):
        glue("docs", 2, namespace=ns)


@pytest.mark.parametrize("name", ["ch1 hit", "1st", "ch1-hit", "class", "", None])
def test_names_are_identifiers(name):
    with pytest.raises(ValueError, match="not a Python identifier"):
        glue(name, 1, namespace={})


@pytest.mark.parametrize("value", [[1, 2], (1,), {"a": 1}, None, np.array([1, 2]), object()])
def test_only_scalars_and_strings(value):
    with pytest.raises(TypeError, match="must be a str, int or float"):
        glue("v", value, namespace={})


def test_display_objects_are_refused():
    from IPython.display import Markdown

    with pytest.raises(TypeError, match="not Markdown"):
        glue("verdict", Markdown("**不含 0**"), namespace={})


def test_strings_are_one_line():
    with pytest.raises(ValueError, match="line break"):
        glue("s", "a\nb", namespace={})


def test_glue_binds_into_the_ipython_user_namespace():
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        glue("ch0_from_kernel", np.int64(3))
        assert shell.user_ns["ch0_from_kernel"] == 3
        assert "ch0_from_kernel" not in globals()
        assert shell.ev('f"{ch0_from_kernel:,}"') == "3"
    finally:
        InteractiveShell.clear_instance()


def test_glue_outside_ipython_binds_the_callers_globals():
    module = types.ModuleType("chapter_like")
    exec("from chunklab.book.prose import glue\nglue('n_docs', 33)", module.__dict__)
    if "IPython" in sys.modules and sys.modules["IPython"].get_ipython() is not None:
        pytest.skip("running inside IPython")
    assert module.n_docs == 33


# -- chunklab.book.source ----------------------------------------------------------------------------

class _Example:
    @property
    def size(self) -> int:
        """A property."""
        return 3

    def method(self):
        x = 1
        return x


def test_source_of_a_method_is_dedented():
    text = source.source_text(_Example.method)
    assert text.splitlines()[0] == "def method(self):"
    assert text.splitlines()[1] == "    x = 1"


def test_source_of_a_property_and_of_a_dotted_name():
    assert "return 3" in source.source_text(_Example.size)
    assert source.source_text("chunklab.book.source.fence").startswith("def fence(")


def test_line_ranges_and_markers():
    text = source.source_text(_Example.method, lines=(2, 3))
    assert text == "x = 1\nreturn x"
    assert source.source_text(_Example.method, start_at="x = 1", end_before="return") == "x = 1"
    with pytest.raises(LookupError, match="lines 2-9"):
        source.source_text(_Example.method, lines=(2, 9))
    with pytest.raises(LookupError, match="no line contains 'nothing'"):
        source.source_text(_Example.method, start_at="nothing")
    with pytest.raises(LookupError, match="no line after the start contains 'x = 1'"):
        source.source_text(_Example.method, start_at="x = 1", end_before="x = 1")


def test_missing_objects_fail_loudly():
    with pytest.raises(LookupError, match="has no attribute 'nosuch'"):
        source.source_text("chunklab.core.nosuch")
    with pytest.raises(LookupError, match="no such module"):
        source.source_text("nosuchpackage.thing")
    with pytest.raises(LookupError, match="no source"):
        source.source_text(len)


def test_show_source_displays_a_fenced_python_block(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj, raw=False: shown.append((obj, raw)))
    source.show_source(_Example.method)
    (bundle, raw), = shown
    assert raw is True
    assert bundle["text/markdown"] == "```python\n" + bundle["text/plain"] + "\n```"
    assert bundle["text/plain"].startswith("def method(self):")


def test_fence_is_longer_than_any_backtick_run():
    assert source.fence("a = '````'").startswith("`````python\n")


# -- chunklab.book.apidoc ----------------------------------------------------------------------------

@pytest.mark.slow  # a Sphinx build
def test_api_reference_runs_autodoc(capsys):
    api = apidoc.ApiReference({"chunklab.book.prose": {}, "chunklab.book.source": {"members": ["fence"]}})
    html = api.html("chunklab.book.prose")
    assert 'id="chunklab.book.prose.glue"' in html and 'id="module-chunklab.book.prose"' in html
    listing = api.html("chunklab.book.source")
    assert 'id="chunklab.book.source.fence"' in listing and "show_source" not in listing.split("<dl")[-1]
    assert capsys.readouterr().err == ""
    with pytest.raises(LookupError, match="not one of the modules"):
        api.html("chunklab.core")


@pytest.mark.slow  # a Sphinx build
def test_api_reference_reports_autodoc_warnings_on_stderr(capsys):
    api = apidoc.ApiReference({"chunklab.book.nosuchmodule": {}})
    with pytest.raises(LookupError, match="autodoc produced nothing"):
        api.html("chunklab.book.nosuchmodule")
    assert "nosuchmodule" in capsys.readouterr().err
