"""The book's Chinese labels cover every family, symptom and metric; its table helper escapes cells."""
from __future__ import annotations

import html
import re
from html.parser import HTMLParser

import pytest

from chunklab.base import FAMILIES
from chunklab.book.labels import FAMILY_ZH, LABELS, METRIC_ZH, SYMPTOM_ADVICE_ZH, SYMPTOM_ZH, zh
from chunklab.book.tables import table
from chunklab.evaluation import METRICS, SYMPTOMS


def test_every_family_has_a_label_in_registry_order():
    assert list(FAMILY_ZH) == list(FAMILIES)
    assert all(FAMILY_ZH[f] for f in FAMILIES)


def test_family_labels_are_short_and_distinct():
    assert len(set(FAMILY_ZH.values())) == len(FAMILY_ZH)
    assert not any("（" in v or "(" in v for v in FAMILY_ZH.values()), "glosses belong in the prose"


def test_every_symptom_has_a_label_and_advice():
    assert list(SYMPTOM_ZH) == list(SYMPTOMS)
    assert list(SYMPTOM_ADVICE_ZH) == list(SYMPTOMS)
    for s in SYMPTOMS:
        assert zh("symptom", s) and zh("advice", s)


def test_every_metric_has_a_label():
    missing = [m for m in METRICS if m not in METRIC_ZH]
    assert not missing, f"add a Chinese name to chunklab/book/labels.py for {missing}"


def test_metric_labels_are_distinct_and_evidence_completeness_means_one_metric():
    values = list(METRIC_ZH.values())
    assert len(set(values)) == len(values)
    assert zh("metric", "hit") != zh("metric", "hit_strict")
    assert [k for k, v in METRIC_ZH.items() if "证据完整率" in v] == ["complete_single"]


def test_labels_fit_in_a_markdown_table():
    for kind, labels in LABELS.items():
        for key, value in labels.items():
            assert "|" not in value and "\n" not in value, (kind, key)


@pytest.mark.parametrize("kind, key, fragment", [
    ("metric", "hitt", "did you mean 'hit'"),
    ("family", "geometrical", "did you mean 'geometric'"),
    ("symptom", "nope", "known: not_indexed, too_small"),
    ("colour", "red", "no Chinese name for kind 'colour'"),
])
def test_unknown_key_is_a_clear_key_error(kind, key, fragment):
    with pytest.raises(KeyError) as err:
        zh(kind, key)
    assert fragment in str(err.value)
    assert str(err.value).startswith("no Chinese name for")


def test_labels_module_needs_only_the_standard_library():
    """The module defining the labels may move below the book (e.g. to chunklab/viz/) as a plain file move."""
    import inspect
    import sys

    source = inspect.getsource(sys.modules[zh.__module__])
    assert not re.search(r"^\s*(from|import)\s+(chunklab|\.)", source, re.M)


# --------------------------------------------------------------------------------------------
# table()
# --------------------------------------------------------------------------------------------

class _Cells(HTMLParser):
    """The text of each <th>/<td> of an HTML table, row by row."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.rows, self._cell = [], None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = ""
        elif tag == "br" and self._cell is not None:
            self._cell += "\n"

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.rows[-1].append(self._cell)
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data


def html_cells(text):
    p = _Cells()
    p.feed(text)
    return p.rows


def markdown_cells(text):
    """Cells of a GFM pipe table: split on unescaped pipes, then undo backslash escapes."""
    rows = []
    for line in text.splitlines():
        if not line.startswith("|"):
            continue
        cells = re.split(r"(?<!\\)\|", line.strip()[1:-1])
        rows.append([re.sub(r"\\(.)", r"\1", c.strip()) for c in cells])
    return rows


NASTY = ["<b>|x", "a & b", "*不是粗体*", "[链接](x)", "$x$", "back\\slash", "~删~", "1_000"]


def test_table_escapes_every_cell_in_html():
    t = table([[c, 1] for c in NASTY], ["单元格", "n"])
    out = t._repr_html_()
    assert "<b>" not in out and "&lt;b&gt;|x" in out
    rows = html_cells(out)
    assert rows[0] == ["单元格", "n"]
    assert [r[0] for r in rows[1:]] == NASTY
    assert all(len(r) == 2 for r in rows)


def test_table_escapes_every_cell_in_markdown():
    t = table([[c, 1] for c in NASTY], ["单元格", "n"])
    out = t._repr_markdown_()
    lines = out.splitlines()
    assert lines[1] == "| --- | ---: |"
    rows = markdown_cells(out)
    assert all(len(r) == 2 for r in rows), "a pipe in a cell must not add a column"
    assert [r[0] for r in rows[2:]] == NASTY
    assert "<b>" not in out


def test_table_markdown_renders_as_the_same_table():
    """A CommonMark/GFM renderer sees the same cells the HTML shows."""
    markdown_it = pytest.importorskip("markdown_it")
    t = table([[c, "`a|b`"] for c in NASTY], ["单元格", "代码"])
    rendered = markdown_it.MarkdownIt("commonmark").enable("table").render(t._repr_markdown_())
    assert html_cells(rendered) == html_cells(t._repr_html_())


def test_table_code_spans_formats_and_alignment():
    t = table([["`fixed`", 0.25, None], ["b", 1.0, 3]], ["名", "hit", "n"], formats={"hit": ".1%", 2: "{:,}"},
              align="lrc")
    rows = html_cells(t._repr_html_())
    assert rows == [["名", "hit", "n"], ["fixed", "25.0%", ""], ["b", "100.0%", "3"]]
    out = t._repr_html_()
    assert "<code>fixed</code>" in out and "text-align:center" in out
    assert t._repr_markdown_().splitlines()[:3] == ["| 名 | hit | n |", "| --- | ---: | :---: |", "| `fixed` | 25.0% |  |"]


def test_table_mappings_caption_and_errors():
    t = table([{"a": 1, "b": "x"}, {"a": 2, "b": "y"}], caption="标题 <i>")
    assert html_cells(t._repr_html_())[0] == ["a", "b"]
    assert "<caption" in t._repr_html_() and html.escape("标题 <i>") in t._repr_html_()
    assert t._repr_markdown_().startswith("标题 \\<i\\>\n\n| a | b |")
    with pytest.raises(ValueError, match="row 1 has 1 cells"):
        table([[1, 2], [3]], ["a", "b"])
    with pytest.raises(ValueError, match="align"):
        table([[1, 2]], ["a", "b"], align="l")
    with pytest.raises(KeyError, match="unknown column"):
        table([[1, 2]], ["a", "b"], formats={"c": ".1f"})
