"""Every chapter of the book executes cleanly, and its prose reads the same on the site and in JupyterLab.

Each chapter listed in ``_toc.yml`` is read with jupytext and executed cell by cell with
nbclient in a fresh ``python3`` kernel of the running interpreter (the venv), with the
chapter's folder as working directory, as the book build does: no error, nothing on stderr.

The prose's ``{eval}`expr``` roles are evaluated twice, as the two readers of the book do:
where they stand, after the code cells above them (the site: MyST-NB executes inline), and
once more after the last cell (JupyterLab: jupyterlab-myst evaluates every markdown cell
after Run All). Both must succeed and agree — a value used before the cell that computes it,
or bound again later with another value, would read differently in the two.
"""
from __future__ import annotations

import ast
import html
import re
import sys

import jupytext
import nbclient
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager

from book_pages import source_path, toc_docnames
from chunklab.book.claims import contradictions
from chunklab.book.criteria import REGISTER

pytestmark = pytest.mark.slow  # executes the book / drives a browser: minutes

CHAPTER_TIMEOUT = 600  # seconds, for a whole chapter (generous: a cold embedding cache runs e5 once)

#: Claims tables shown by each executed chapter: docname -> [(claim id, verdict shown, recomputed)].
_CLAIMS_SHOWN: dict[str, list[tuple[str, str, str]]] = {}
SHOWN_CLAIMS = "__import__('chunklab.book.claims', fromlist=['shown_claims']).shown_claims()"
SHOWN_CRITERIA = "__import__('chunklab.book.claims', fromlist=['shown_criteria']).shown_criteria()"
#: How many uncorrected comparisons were judged since the last call (see chunklab.book.claims).
UNCORRECTED = "__import__('chunklab.book.claims', fromlist=['take_uncorrected']).take_uncorrected()"
#: Verdict words retired: "no difference" from a zero is not a claim the data can support.
RETIRED_WORDS = ("无差异",)
EVAL_ROLE = re.compile(r"\{eval\}`([^`]+)`")
#: What a prose value must never show: a numpy scalar's or a display object's repr.
NOT_PLAIN = re.compile(r"^(np|numpy)\.|^<[\w.]+ object")


def _kernel_manager(tmp_path) -> KernelManager:
    # An empty kernel directory plus ensure_native_kernel: "python3" is then the
    # ipykernel of sys.executable, never a kernelspec some other Python left in
    # ~/.local/share/jupyter.
    ksm = KernelSpecManager(kernel_dirs=[str(tmp_path)], ensure_native_kernel=True)
    km = KernelManager(kernel_name="python3", kernel_spec_manager=ksm)
    assert km.kernel_spec.argv[0] == sys.executable
    return km


@pytest.mark.timeout(CHAPTER_TIMEOUT)
@pytest.mark.parametrize("docname", toc_docnames())
def test_chapter_executes_without_error_or_stderr(docname, tmp_path):
    path = source_path(docname)
    nb = jupytext.read(path)
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3", (
        f"{path.name}: the jupytext header must declare kernelspec name python3")
    code_cells = [c for c in nb.cells if c.cell_type == "code"]
    assert code_cells, f"{path.name} has no code cell: every chapter executes chunklab code"
    assert any("chunklab" in c.source for c in code_cells), f"{path.name} never uses chunklab"

    km = _kernel_manager(tmp_path)
    client = nbclient.NotebookClient(
        nb,
        km=km,
        timeout=CHAPTER_TIMEOUT,
        allow_errors=False,
        resources={"metadata": {"path": str(path.parent)}},
    )
    site: list[tuple[int, str, str]] = []   # (cell, expression, text) where the expression stands
    groups: list[str] = []                   # cells that judged several uncorrected comparisons
    try:
        with client.setup_kernel():
            for i, cell in enumerate(nb.cells):
                if cell.cell_type == "code":
                    _evaluate(client.kc, [UNCORRECTED])
                    client.execute_cell(cell, i)  # raises CellExecutionError, with the traceback
                    n_unc = int(_evaluate(client.kc, [UNCORRECTED])[UNCORRECTED])
                    if n_unc > 1:
                        groups.append(f"code cell {i} judges {n_unc} comparisons together without correcting "
                                      "them: use paired_many(...), or keep one declared primary per cell")
                elif cell.cell_type == "markdown":
                    exprs = EVAL_ROLE.findall(cell.source)
                    site += [(i, e, text) for e, text in _evaluate(client.kc, exprs).items()]
            lab = _evaluate(client.kc, sorted({e for _, e, _ in site}))
            shown = _evaluate(client.kc, [SHOWN_CLAIMS])[SHOWN_CLAIMS]
            criteria = _evaluate(client.kc, [SHOWN_CRITERIA])[SHOWN_CRITERIA]
    finally:
        # nbclient leaves a kernel it did not create running: stop it here.
        if client.kc is not None:
            client.kc.stop_channels()
        if km.has_kernel:
            km.shutdown_kernel(now=True)
        km.cleanup_resources()

    problems = []
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                problems.append(f"cell {i}: {out.get('ename')}: {out.get('evalue')}")
            elif out.get("output_type") == "stream" and out.get("name") == "stderr":
                problems.append(f"cell {i} wrote to stderr:\n{out.get('text', '')}")
    assert not problems, f"{path.name}:\n" + "\n".join(problems)

    for i, expr, text in site:
        where = f"markdown cell {i}: {{eval}}`{expr}`"
        if text.startswith("!"):
            problems.append(f"{where} fails where it stands ({text[1:]}): compute it in a cell above")
        elif lab[expr] != text:
            problems.append(f"{where} reads {text} on the site but {lab[expr]} in JupyterLab: "
                            "bind a prose value once (chunklab.book.prose.glue)")
        elif NOT_PLAIN.search(text):
            problems.append(f"{where} shows {text}: glue a plain str, int or float")
    assert not problems, f"{path.name}:\n" + "\n".join(problems)
    assert not shown.startswith("!"), f"{path.name}: shown_claims() failed: {shown}"
    rows = ast.literal_eval(shown)
    wrong = [f"{cid}: shows {v!r}, its result gives {again!r}" for cid, v, again in rows if v != again]
    assert not wrong, f"{path.name}: claim verdicts not computed from their results:\n" + "\n".join(wrong)
    kinds = [f"{cid}/{part}: judged as {kind}, registered as {REGISTER[cid, part].kind}"
             for cid, part, kind in ast.literal_eval(criteria) if REGISTER[cid, part].kind != kind]
    assert not kinds, f"{path.name}: claim rows judged by another criterion than the register's:\n" + "\n".join(kinds)
    _CLAIMS_SHOWN[docname] = rows

    # What the reader sees — outputs and prose with its values — never contradicts itself.
    values = {}
    for i, expr, text in site:
        values.setdefault(i, {})[expr] = text
    seen_text = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            seen_text.append((f"markdown cell {i}", EVAL_ROLE.sub(
                lambda m: _plain(values.get(i, {}).get(m.group(1), "")), cell.source)))
        if "terms_table()" in cell.get("source", ""):
            continue     # the glossary's table of retired terms names them, as the register of what not to say
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            text = out.get("text", "") or _strip_html(data.get("text/html", "")) or data.get("text/plain", "")
            seen_text.append((f"code cell {i}", text))
    if docname.endswith("appendix_api"):
        seen_text = []   # the API reference quotes the checker's own examples of what it rejects
    for where, text in seen_text:
        problems += [f"{where}: the interval contradicts the verdict: {c}" for c in contradictions(text)]
        problems += [f"{where}: uses the retired verdict {w!r}" for w in RETIRED_WORDS if w in text]
    problems += groups
    assert not problems, f"{path.name}:\n" + "\n".join(problems)


def test_every_claim_has_a_row_with_a_computed_verdict():
    """C1–C30 each appear in some chapter's claims table (needs every chapter executed above)."""
    missing_chapters = [d for d in toc_docnames() if d not in _CLAIMS_SHOWN]
    if missing_chapters:
        pytest.skip(f"needs every chapter executed in this run; not executed: {', '.join(missing_chapters)}")
    seen = {cid for rows in _CLAIMS_SHOWN.values() for cid, _, _ in rows}
    missing = [f"C{i}" for i in range(1, 31) if f"C{i}" not in seen]
    assert not missing, f"claims without a row in any chapter's claims table: {', '.join(missing)}"


def _plain(text: str) -> str:
    """A prose value as shown: the text/plain repr of a str loses its quotes."""
    return text[1:-1] if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"" else text


def _strip_html(h: str) -> str:
    """Cell HTML as a reader sees it: a table row on one line, cells separated by |."""
    h = re.sub(r"<(script|style)[^>]*>.*?</\1>", "", h, flags=re.S)
    h = re.sub(r"</t[dh]>", " | ", h)
    h = re.sub(r"</tr>|<br\s*/?>|</p>|</div>|</li>", "\n", h)
    return html.unescape(re.sub(r"<[^>]+>", "", h))


def _evaluate(kc, exprs: list[str]) -> dict[str, str]:
    """Each expression's text/plain as the kernel evaluates it now (``!error`` if it fails)."""
    if not exprs:
        return {}
    reply = kc.execute("", silent=True, store_history=False, reply=True, timeout=60,
                       user_expressions={str(n): e for n, e in enumerate(exprs)})
    results = reply["content"]["user_expressions"]
    out = {}
    for n, e in enumerate(exprs):
        r = results[str(n)]
        out[e] = r["data"].get("text/plain", "") if r["status"] == "ok" else f"!{r['ename']}: {r['evalue']}"
    return out
