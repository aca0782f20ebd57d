"""The API appendix: Sphinx autodoc, run in the chapter's kernel, shown as HTML on the site and in JupyterLab.

A Sphinx ``automodule`` directive renders only on the site; JupyterLab (jupyterlab-myst) shows it
as an unknown directive. :class:`ApiReference` runs autodoc itself — one small Sphinx build of
every requested module in a temporary folder, with the book's autodoc settings and language — and
displays each module's part of the result as a ``text/html`` output. The site shows it with the
book theme's styles for API entries (the markup is autodoc's own), JupyterLab as plain HTML;
both readers see the same entries. Cross-references between modules are links within the page.

::

    api = ApiReference({"chunklab": {"no-members": True}, "chunklab.core": {}})
    api.show("chunklab.core")       # in a code cell tagged remove-input

Autodoc's warnings (a module that does not import, a broken docstring, an ambiguous
cross-reference) are written to stderr, one line each, when the entries are built: the book build
fails on them (``stderr_output: error``; its log names the cell, the page shows the warnings) as
``-W`` fails it on a Sphinx warning, and every entry is still shown. A module that is not in the
list, or for which autodoc produced nothing, raises ``LookupError``.

JupyterLab lays definition lists out as a grid; :data:`LAB_STYLE`, scoped to JupyterLab's rendered
HTML, stacks each entry as the site does (the site ignores it and keeps its theme's styles).
"""
from __future__ import annotations

import io
import re
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Iterable, Mapping, Union

__all__ = ["ApiReference"]

#: The book's autodoc settings (``_config.yml``), so the entries read as they would under autodoc there.
SPHINX_CONFIG = {
    "extensions": ["sphinx.ext.autodoc"],
    "language": "zh_CN",
    "autodoc_member_order": "bysource",
    "autodoc_typehints": "description",
    "html_search_language": "en",   # no jieba: it prints to stderr, and no search page is used here
    "html_theme": "basic",
    "html_permalinks_icon": "#",    # the book theme's permalink sign (basic's is a pilcrow)
}
_MARK = "<!-- chunklab-api {} -->"
#: JupyterLab lays a definition list out as a two-column grid, which squeezes long signatures into
#: a narrow column; these rules (inside .jp-RenderedHTMLCommon, i.e. JupyterLab only: the site keeps
#: its theme's styles for autodoc's markup) stack each entry as the site does.
LAB_STYLE = """<style>
.jp-RenderedHTMLCommon .chunklab-api dl { display: block; }
.jp-RenderedHTMLCommon .chunklab-api dt { display: block; float: none; width: auto; max-width: none;
  margin: 1em 0 0.3em 0; }
.jp-RenderedHTMLCommon .chunklab-api dt.sig { font-family: var(--jp-code-font-family); font-weight: normal;
  background: var(--jp-layout-color2); padding: 2px 6px; }
.jp-RenderedHTMLCommon .chunklab-api dt.sig .sig-name { font-weight: bold; }
.jp-RenderedHTMLCommon .chunklab-api dd { display: block; float: none; width: auto; max-width: none;
  margin: 0 0 0.5em 2em; }
.jp-RenderedHTMLCommon .chunklab-api a.headerlink { display: none; }
</style>"""
Option = Union[bool, str, Iterable[str]]


def _directive(module: str, options: Mapping[str, Option]) -> str:
    lines = [f".. automodule:: {module}"]
    opts = dict(options) if options else {"members": True}
    for key, value in opts.items():
        if value is True:
            lines.append(f"   :{key}:")
        elif value is not False and value is not None:
            lines.append(f"   :{key}: {value if isinstance(value, str) else ', '.join(value)}")
    return "\n".join(lines)


class ApiReference:
    """Autodoc entries of ``modules``, built once (on the first :meth:`html`), shown one module at a time.

    ``modules`` maps each module, in the order of the page, to its ``automodule`` options: ``{}``
    for all documented members, or e.g. ``{"no-members": True}``,
    ``{"members": True, "exclude-members": ["load_folder"]}``, ``{"members": ["pipeline", "Failure"]}``.
    :attr:`shown` lists the modules shown so far, so a chapter can check it showed every one.
    """

    def __init__(self, modules: Mapping[str, Mapping[str, Option]]):
        self.modules = {name: dict(opts) for name, opts in modules.items()}
        self._html: dict[str, str] | None = None
        self.shown: list[str] = []

    def _build(self) -> dict[str, str]:
        from sphinx.application import Sphinx

        parts = []
        for module, options in self.modules.items():
            parts.append(f".. raw:: html\n\n   {_MARK.format(module)}\n")
            parts.append(_directive(module, options) + "\n")
        parts.append(f".. raw:: html\n\n   {_MARK.format('')}\n")
        with tempfile.TemporaryDirectory(prefix="chunklab-api-") as tmp:
            src, out = Path(tmp, "src"), Path(tmp, "out")
            src.mkdir()
            (src / "index.rst").write_text("\n".join(parts), encoding="utf-8")
            log = io.StringIO()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")   # the tools' own deprecation notices are not the book's
                app = Sphinx(str(src), None, str(out), str(Path(tmp, "doctrees")), "html",
                             confoverrides=dict(SPHINX_CONFIG), status=None, warning=log, freshenv=True)
                app.build(force_all=True)
            for line in log.getvalue().splitlines():
                if line.strip():
                    print(re.sub(r"\x1b\[[0-9;]*m", "", line), file=sys.stderr)
            page = (out / "index.html").read_text(encoding="utf-8")
        html = {}
        names = list(self.modules)
        for module, nxt in zip(names, names[1:] + [""]):
            start = page.index(_MARK.format(module)) + len(_MARK.format(module))
            html[module] = page[start:page.index(_MARK.format(nxt), start)].strip()
        return html

    def html(self, module: str) -> str:
        """The autodoc HTML of ``module`` (building every module's the first time)."""
        if module not in self.modules:
            raise LookupError(f"ApiReference: {module} is not one of the modules it was given")
        if self._html is None:
            self._html = self._build()
        text = self._html[module]
        if not re.search(r'id="module-' + re.escape(module) + '"', text):
            raise LookupError(f"ApiReference: autodoc produced nothing for {module}")
        return text

    def show(self, module: str) -> None:
        """Display the module's entries as an HTML output (see the module docstring)."""
        from IPython.display import HTML, display

        html = self.html(module)
        self.shown.append(module)
        display(HTML(f'{LAB_STYLE}<div class="chunklab-api">{html}</div>'))
