"""The chapters' one table helper: rows in, a table that shows as HTML and as Markdown.

:func:`table` returns a :class:`Table`. Jupyter shows its HTML (``_repr_html_``) in JupyterLab and
on the site; its Markdown (``_repr_markdown_``, GitHub-flavoured) is there for every other reader
of the notebook, and ``repr`` prints the Markdown in a terminal.

A cell is text: it is escaped in both formats, so ``<``, ``&``, ``|`` or ``*`` show as themselves.
The one markup a cell may use is a backtick span, ``\\`x\\```, shown as code; a newline becomes a
line break. Numbers are written with ``str`` unless ``formats`` says otherwise, so chapters format
their numbers (or pass ``formats``) and the table never rounds behind their back.

>>> t = table([["`fixed`", 0.6842, 25], ["recursive", 0.7, 3]], ["切法", "hit@5", "块数"], formats={"hit@5": ".1%"})
>>> print(t.markdown())
| 切法 | hit@5 | 块数 |
| --- | ---: | ---: |
| `fixed` | 68.4% | 25 |
| recursive | 70.0% | 3 |
>>> print(table([["<b>|x", "a*b*"]], ["x", "y"]).markdown())
| x | y |
| --- | ---: |
| \\<b\\>\\|x | a\\*b\\* |
>>> table([["<b>|x"]], ["x"]).html()
'<table class="cl-table" style="font-size:13px;border-collapse:collapse"><thead><tr><th style="padding:2px 8px;text-align:left;white-space:nowrap">x</th></tr></thead><tbody><tr><td style="padding:2px 8px;text-align:left;white-space:nowrap">&lt;b&gt;|x</td></tr></tbody></table>'
"""
from __future__ import annotations

import html as _html
import re
from typing import Any, Callable, Iterable, Mapping, Sequence, Union

__all__ = ["Table", "table", "MAIN_KNOBS", "main_knobs"]

#: A column's format: a format spec (``".1%"``) or a ``str.format`` template (``"{:,}"``), both
#: applied to non-string values only, or a callable applied to every value.
Format = Union[str, Callable[[Any], Any]]

_CODE = re.compile(r"`([^`\n]+)`")
#: Characters that could start Markdown (or GFM table, HTML, math) syntax inside a cell.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>&|~$])")
_ALIGN_HTML = {"l": "left", "r": "right", "c": "center"}
_ALIGN_MD = {"l": "---", "r": "---:", "c": ":---:"}
#: Cells up to this many characters do not wrap (a short number should not break over two lines).
NOWRAP_CHARS = 12


def _pieces(text: str) -> list[tuple[bool, str]]:
    """``text`` split into (is_code, piece) runs by its backtick spans."""
    out, pos = [], 0
    for m in _CODE.finditer(text):
        if m.start() > pos:
            out.append((False, text[pos:m.start()]))
        out.append((True, m.group(1)))
        pos = m.end()
    if pos < len(text) or not out:
        out.append((False, text[pos:]))
    return out


def _cell_html(text: str) -> str:
    parts = []
    for code, piece in _pieces(text):
        piece = _html.escape(piece).replace("\n", "<br>")
        parts.append(f"<code>{piece}</code>" if code else piece)
    return "".join(parts)


def _cell_markdown(text: str) -> str:
    parts = []
    for code, piece in _pieces(text):
        if code:
            parts.append("`" + piece.replace("|", "\\|") + "`")
        else:
            parts.append(_MD_SPECIAL.sub(r"\\\1", piece).replace("\n", "<br>"))
    return "".join(parts)


def _visible(text: str) -> str:
    return _CODE.sub(r"\1", text)


class Table:
    """A table of text cells; see :func:`table`."""

    def __init__(self, rows: Iterable[Sequence[Any] | Mapping[str, Any]], columns: Sequence[Any] | None = None,
                 formats: Mapping[Any, Format] | None = None, caption: str | None = None,
                 align: str | Sequence[str] | None = None, folded: str | None = None) -> None:
        self.folded = folded
        rows = list(rows)
        if columns is None and rows and isinstance(rows[0], Mapping):
            columns = list(rows[0])
        self.columns = [str(c) for c in columns] if columns is not None else None
        if rows and isinstance(rows[0], Mapping):
            if self.columns is None:
                raise ValueError("rows are mappings: give columns")
            rows = [[r.get(c) for c in (columns or [])] for r in rows]
        width = len(self.columns) if self.columns is not None else max((len(r) for r in rows), default=0)
        for i, r in enumerate(rows):
            if len(r) != width:
                raise ValueError(f"row {i} has {len(r)} cells, the table has {width} columns: {list(r)!r}")
        self.width = width
        fmts = self._formats(formats or {}, columns)
        self.cells = [[self._text(v, fmts.get(j)) for j, v in enumerate(r)] for r in rows]
        self.caption = caption
        align = "l" + "r" * (width - 1) if align is None else "".join(align)
        if len(align) != width or set(align) - set(_ALIGN_HTML):
            raise ValueError(f"align needs one of 'l', 'r', 'c' per column ({width}), got {align!r}")
        self.align = align

    @staticmethod
    def _formats(formats: Mapping[Any, Format], columns: Sequence[Any] | None) -> dict[int, Format]:
        out = {}
        labels = [str(c) for c in columns] if columns is not None else []
        for key, f in formats.items():
            if isinstance(key, int) and not isinstance(key, bool):
                out[key] = f
            elif str(key) in labels:
                out[labels.index(str(key))] = f
            else:
                raise KeyError(f"formats names an unknown column {key!r} (columns: {labels})")
        return out

    @staticmethod
    def _text(value: Any, fmt: Format | None) -> str:
        if fmt is not None and callable(fmt):
            value = fmt(value)
        elif fmt is not None and value is not None and not isinstance(value, str):
            value = fmt.format(value) if "{" in fmt else format(value, fmt)
        return "" if value is None else str(value)

    def html(self) -> str:
        """The table as one line of HTML (cells escaped, backtick spans as ``<code>``)."""
        def cell(tag: str, text: str, a: str) -> str:
            wrap = ";white-space:nowrap" if len(_visible(text)) <= NOWRAP_CHARS else ""
            return f'<{tag} style="padding:2px 8px;text-align:{_ALIGN_HTML[a]}{wrap}">{_cell_html(text)}</{tag}>'

        out = ['<table class="cl-table" style="font-size:13px;border-collapse:collapse">']
        if self.caption:
            out.append(f'<caption style="caption-side:top;text-align:left">{_cell_html(self.caption)}</caption>')
        if self.columns is not None:
            out.append("<thead><tr>" + "".join(cell("th", c, a) for c, a in zip(self.columns, self.align))
                       + "</tr></thead>")
        out.append("<tbody>" + "".join("<tr>" + "".join(cell("td", t, a) for t, a in zip(r, self.align)) + "</tr>"
                                       for r in self.cells) + "</tbody></table>")
        html = "".join(out)
        if self.folded:
            html = (f'<details class="cl-folded"><summary style="cursor:pointer">{_cell_html(self.folded)}</summary>'
                    f"{html}</details>")
        return html

    def markdown(self) -> str:
        """The table as a GitHub-flavoured Markdown pipe table (the caption, if any, as a paragraph above)."""
        head = self.columns if self.columns is not None else [""] * self.width
        lines = ["| " + " | ".join(_cell_markdown(c) for c in head) + " |",
                 "| " + " | ".join(_ALIGN_MD[a] for a in self.align) + " |"]
        lines += ["| " + " | ".join(_cell_markdown(t) for t in r) + " |" for r in self.cells]
        text = "\n".join(lines)
        return f"{_cell_markdown(self.caption)}\n\n{text}" if self.caption else text

    def _repr_html_(self) -> str:
        return self.html()

    def _repr_markdown_(self) -> str:
        return self.markdown()

    def __repr__(self) -> str:
        return self.markdown()


def table(rows: Iterable[Sequence[Any] | Mapping[str, Any]], columns: Sequence[Any] | None = None,
          formats: Mapping[Any, Format] | None = None, caption: str | None = None,
          align: str | Sequence[str] | None = None, folded: str | None = None) -> Table:
    """A table for a chapter: ``rows`` (sequences, or mappings keyed by column) under ``columns``.

    ``folded`` (a label such as ``"展开数据表"``) folds the HTML table under that label (a
    ``<details>`` element, closed until clicked, in JupyterLab and on the site alike): use it for the
    numbers beneath a figure that already makes the comparison.

    ``formats`` maps a column (its label or index) to a format for its non-string values
    (``".3f"``, ``"{:,}"``) or to a callable. ``align`` gives one of ``"l"``, ``"r"``, ``"c"`` per
    column; by default the first column is left-aligned and the others right-aligned.

    >>> print(table([{"族": "几何", "策略数": 3}], caption="策略").markdown())
    策略
    <BLANKLINE>
    | 族 | 策略数 |
    | --- | ---: |
    | 几何 | 3 |
    >>> table([[1]], ["n"], folded="展开数据表").html().startswith('<details class="cl-folded">')
    True
    """
    return Table(rows, columns, formats=formats, caption=caption, align=align, folded=folded)


#: For each registered strategy, the knobs that change its chunks the most, most important first:
#: the size knobs (``size``/``window``/``target``, ``max``, ``min``), the overlap, and a
#: strategy's own unit of cutting (dialogue turns, table rows, sentence-window neighbours,
#: the semantic threshold). Knobs that only select a variant or a unit (``length``, ``prefix``,
#: ``language``, separators, compatibility switches) are left out. The preface's strategy map
#: shows these; the doctest of :func:`main_knobs` checks that every strategy has an entry and that
#: every knob named here exists.
MAIN_KNOBS: dict[str, tuple[str, ...]] = {
    "fixed": ("size", "overlap"),
    "sliding_window": ("window", "step"),
    "token": ("size", "overlap"),
    "line": ("target", "max", "min", "overlap"),
    "paragraph": ("target", "max", "min", "overlap"),
    "recursive": ("target", "max", "min", "overlap"),
    "sentence": ("target", "max", "min", "overlap"),
    "auto": ("target", "max", "min", "overlap"),
    "clause": ("target", "max", "min", "overlap"),
    "html": ("target", "max", "min", "overlap"),
    "markdown": ("target", "max", "min", "overlap"),
    "dialogue": ("turns", "overlap_turns", "target", "topic_breaks"),
    "qa_pair": ("target", "max", "overlap"),
    "table": ("mode", "rows", "target", "transcribe"),
    "code": ("target", "max", "min", "overlap"),
    "semantic": ("threshold", "k", "buffer", "target", "min"),
    "parent_child": ("target", "parent_target", "overlap"),
    "sentence_window": ("neighbours", "sections"),
}


def main_knobs(entry: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """``(knob, default)`` for the main knobs of one entry of :func:`chunklab.list_strategies`.

    Fails with a message if the strategy has no entry in :data:`MAIN_KNOBS` or names a knob the
    strategy does not have, so a new or changed strategy cannot drop out of the preface silently.

    >>> import chunklab
    >>> entries = chunklab.list_strategies()
    >>> sorted(set(MAIN_KNOBS) ^ {e["name"] for e in entries})  # every strategy, and no stale name
    []
    >>> [(e["name"], k) for e in entries for k in MAIN_KNOBS[e["name"]] if k not in e["params"]]
    []
    >>> main_knobs(next(e for e in entries if e["name"] == "dialogue"))
    [('turns', 6), ('overlap_turns', 0), ('target', 800), ('topic_breaks', False)]
    >>> main_knobs({"name": "new", "params": {}})
    Traceback (most recent call last):
    ...
    KeyError: "strategy 'new' has no entry in chunklab.book.tables.MAIN_KNOBS: add its main knobs there"
    """
    name = entry["name"]
    if name not in MAIN_KNOBS:
        raise KeyError(f"strategy {name!r} has no entry in chunklab.book.tables.MAIN_KNOBS: add its main knobs there")
    params = entry["params"]
    unknown = [k for k in MAIN_KNOBS[name] if k not in params]
    if unknown:
        raise KeyError(f"MAIN_KNOBS[{name!r}] names knobs the strategy does not have: {unknown}")
    return [(k, params[k]["default"]) for k in MAIN_KNOBS[name]]
