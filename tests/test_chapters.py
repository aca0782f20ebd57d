"""Every chapter of the book executes cleanly: no error, nothing on stderr.

Each chapter listed in ``_toc.yml`` is read with jupytext and executed with
nbclient in a fresh ``python3`` kernel of the running interpreter (the venv),
with the chapter's folder as working directory, exactly as the book build does.
"""
from __future__ import annotations

import sys

import jupytext
import nbclient
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager

from book_pages import source_path, toc_docnames

pytestmark = pytest.mark.slow  # executes the book / drives a browser: minutes

CHAPTER_TIMEOUT = 120  # seconds, for a whole chapter


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
    try:
        client.execute()  # raises CellExecutionError, with the traceback, on the first error
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
