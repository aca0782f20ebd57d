"""Every chapter works in a real JupyterLab, opened as the reader opens it, and stays unchanged.

One JupyterLab of the venv (127.0.0.1, a free port, a random token, the project's Lab settings
installed by ``make venv``) serves the repository in place; one headless Chromium opens each
chapter of ``_toc.yml`` in turn (double-click equivalent: ``/lab/tree/<path>``, the default
viewer "Jupytext Notebook"), runs Run All and checks:

- no cell shows an error or writes to stderr (the cell and the error are listed);
- the rendered Markdown holds no unrendered syntax: ``{glue``, ``{eval}``, a role such as
  ``{doc}`...```, a directive fence (```` ```{ ````, ``:::{``), a raw ``:tags:`` line, a
  glue-key-like token (``ch3_hit_f0``), jupyterlab-myst's inline error (``NameError: ...``);
  and every ``{eval}`` has a result with status ok in the cell's ``user_expressions``;
- every listing (a code block shown by an output, e.g. ``show_source``) is non-empty;
- every explorer (``chunklab.viz.widgets``) is a live widget with a non-empty output area, and
  changing one of its controls changes that output area within ``EXPLORER_TIMEOUT`` seconds;
- the chapter file is byte-identical after the run and after ``docmanager:save``
  (a file Lab rewrote is put back, and the test fails with the diff);
- its kernel is shut down afterwards and ``/api/kernels`` is empty;
- no "Jupyter news" pop-up, and the server log has no "running over TCP without encryption".

Run All starts once jupyterlab-myst has parsed every Markdown cell with an ``{eval}`` (see
``lab_driver.JS_MYST_PARSED``: a cell reached before its first parse is never evaluated).
Chapters run one after the other in the same server and browser; each has ``CHAPTER_TIMEOUT``
seconds, all together ``MODULE_BUDGET``.

A screenshot of each notebook after Run All (the whole notebook, stitched) is saved in
``_build/screenshots/lab/``, with the server's log (``jupyterlab.log``) and the timings
(``timings.json``).
"""
from __future__ import annotations

import difflib
import json
import re
import sys
import time
from pathlib import Path

import pytest

from book_pages import ROOT, source_path, toc_docnames
from lab_driver import CHROMEDRIVER, CHROMIUM, LabPage, LabServer, chrome, quit_chrome

pytestmark = pytest.mark.slow  # a JupyterLab, a browser and every chapter: minutes

CHAPTER_TIMEOUT = 420  # s: open, Run All, checks, explorers, save, screenshot, shutdown
MODULE_BUDGET = 25 * 60  # s for every chapter together (CI: 90 min for the whole `make test`)
EXPLORER_TIMEOUT = 60  # s for an explorer to redraw after a control changed
MAX_LISTED = 60  # problems listed per chapter (the rest are counted)
SCREENSHOTS = ROOT / "_build" / "screenshots" / "lab"
PAGES = toc_docnames()
SETTINGS = ROOT / "tools" / "jupyterlab"
# Where `make venv` installs the project's Lab settings (this interpreter's environment).
INSTALLED = {
    "overrides.json": Path(sys.prefix) / "share" / "jupyter" / "lab" / "settings" / "overrides.json",
    "jupyter_server_config.json": Path(sys.prefix) / "etc" / "jupyter" / "jupyter_server_config.json",
}

# Text that must not survive into rendered Markdown (code, math and styles are removed first).
UNRENDERED = [
    (re.compile(r"\{glue"), "MyST-NB glue syntax"),
    (re.compile(r"\{eval\}"), "an {eval} role"),
    (re.compile(r"\{[A-Za-z][\w:+.-]*\}`"), "role syntax"),
    (re.compile(r"```\s*\{"), "a directive fence ```{"),
    (re.compile(r":::\s*\{"), "a directive fence :::{"),
    (re.compile(r"(?m)^\s*:tags:"), "a raw :tags: line"),
    (re.compile(r"(?<![A-Za-z0-9_])ch\d_[a-z0-9_]+(:[.,0-9a-z%+]+)?"), "a glue key"),
    (re.compile(r"(?<![A-Za-z0-9_])[A-Z][A-Za-z]*Error: "), "an exception shown inline"),
]
EVAL_ROLE = re.compile(r"\{eval\}`([^`]+)`")
EXPLORER_CALL = re.compile(r"(?m)^(?:display\()?[A-Z]\w*Explorer\(")
SHOW_SOURCE = re.compile(r"\bshow_source\(")
FENCE = re.compile(r"(?ms)^(`{3,}|~{3,})[^\n]*\n(.*?)^\1\s*$")
TCP_WARNING = "running over TCP without encryption"
# Chapter names look like glue keys (ch5_evaluation); jupyterlab-myst shows a {doc} link as its target.
DOCNAMES = {Path(d).name for d in PAGES}

TIMINGS: dict[str, dict] = {}


def _short(text: str, n: int = 160) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[:n] + "…"


# --- fixtures ------------------------------------------------------------------

@pytest.fixture(scope="module")
def lab():
    stale = []
    for name, dest in INSTALLED.items():
        want = json.loads((SETTINGS / name).read_text(encoding="utf-8"))
        try:
            have = json.loads(dest.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            have = None
        if have != want:
            stale.append(f"{dest} {'differs from' if have is not None else 'is missing, expected a copy of'} "
                         f"tools/jupyterlab/{name}")
    if stale:
        pytest.fail("the project's JupyterLab settings are not installed in this environment: run "
                    "`make venv` (it copies tools/jupyterlab/*):\n  " + "\n  ".join(stale), pytrace=False)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    server = LabServer(ROOT, log_path=SCREENSHOTS / "jupyterlab.log").start()
    try:
        yield server
    finally:
        server.shutdown_kernels()
        server.stop()
        (SCREENSHOTS / "timings.json").write_text(json.dumps(TIMINGS, indent=1, ensure_ascii=False),
                                                   encoding="utf-8")


@pytest.fixture(scope="module")
def page(lab):
    pytest.importorskip("selenium")
    for exe in (CHROMIUM, CHROMEDRIVER):
        if not Path(exe).is_file():
            pytest.fail(f"{exe} not found: apt-get install chromium chromium-driver (.ci/run does)",
                        pytrace=False)
    drv = chrome(window=(1400, 1000))
    try:
        yield LabPage(drv, lab)
    finally:
        quit_chrome(drv)


@pytest.fixture(scope="module")
def budget():
    return {"start": time.monotonic()}


# --- checks of one chapter (each returns a list of problems) ---------------------

#: Tags whose code the site does not show (MyST-NB); Lab must collapse it the same way. (Not outputs:
#: JupyterLab shows a cell's new output when it runs and drops outputs_hidden on save.)
SITE_HIDES_INPUT = {"remove-input", "hide-input", "remove-cell", "hide-cell"}


def _cell_problems(cells: list[dict]) -> list[str]:
    problems = []
    for c in cells:
        where = f"cell {c['index']}"
        if c["type"] == "code":
            # What the site hides, Lab collapses: the reader meets the same page in both.
            if set(c["tags"]) & SITE_HIDES_INPUT and not c["input_hidden"]:
                problems.append(f"{where} is hidden on the site ({', '.join(c['tags'])}) but its code is open in "
                                "JupyterLab: give it jupyter.source_hidden")
            for e in c["errors"]:
                problems.append(f"{where} raised {e['ename']}: {_short(e['evalue'])}  [{_short(c['source'], 80)}]")
            for text in c["stderr"]:
                problems.append(f"{where} wrote to stderr: {_short(text)}")
            for block in c["code_blocks"]:
                if not block.strip():
                    problems.append(f"{where}: an empty code block (listing) in its output")
            for md in c["markdown_outputs"]:
                for m in FENCE.finditer(md):
                    if not m.group(2).strip():
                        problems.append(f"{where}: an empty fenced code block in its Markdown output")
            if SHOW_SOURCE.search(c["source"]) and not c["errors"] and not any(b.strip() for b in c["code_blocks"]):
                problems.append(f"{where} calls show_source but shows no listing (outputs: {c['mimes']})")
        elif c["type"] == "markdown":
            if not c["rendered"]:
                problems.append(f"{where}: Markdown not rendered")
                continue
            for rx, what in UNRENDERED:
                for m in rx.finditer(c["prose"]):
                    if m.group(0) in DOCNAMES:
                        continue
                    ctx = c["prose"][max(0, m.start() - 30):m.end() + 30]
                    problems.append(f"{where}: {what} {m.group(0)!r} in the rendered text: …{_short(ctx, 90)}…")
            for err in c["inline_errors"]:
                problems.append(f"{where}: inline expression error {_short(err)!r}")
            wanted = EVAL_ROLE.findall(c["source"])
            got = {e.get("expression"): e.get("result", {}) for e in (c["user_expressions"] or [])}
            for expr in wanted:
                res = got.get(expr)
                if res is None:
                    problems.append(f"{where}: {{eval}}`{expr}` was not evaluated (no user_expressions result)")
                elif res.get("status") != "ok":
                    problems.append(f"{where}: {{eval}}`{expr}` -> {res.get('ename')}: {_short(res.get('evalue', ''))}")
    return problems


def _explorer_problems(page: LabPage, cells: list[dict], deadline: float) -> tuple[list[str], list[str]]:
    problems, done = [], []
    expected = [c["index"] for c in cells if c["type"] == "code" and EXPLORER_CALL.search(c["source"])
                and not c["errors"]]
    # Widget views render asynchronously after their output arrived: give them a moment.
    end = min(deadline, time.monotonic() + 30)
    while expected and time.monotonic() < end and any(not cells[i]["explorers"] for i in expected):
        time.sleep(0.5)
        cells = page.cells()
    for i in expected:
        if not cells[i]["explorers"]:
            problems.append(f"cell {i} creates an explorer but shows no live widget "
                            f"(outputs: {cells[i]['mimes']}; is CHUNKLAB_STATIC_SITE set?)")
    for c in cells:
        for k, _ in enumerate(c.get("explorers") or []):
            where = f"cell {c['index']} explorer {k}"
            before = page.explorer_state(c["index"], k)
            if not before["text"]:
                problems.append(f"{where}: output area empty after Run All")
            if before["error"]:
                problems.append(f"{where}: shows an error after Run All: {_short(before['text'])}")
            change = page.change_explorer(c["index"], k)
            if change is None:
                problems.append(f"{where}: no dropdown or checkbox to change")
                continue
            end = min(deadline, time.monotonic() + EXPLORER_TIMEOUT)
            t0, after = time.monotonic(), before
            while time.monotonic() < end:
                after = page.explorer_state(c["index"], k)
                if after["sig"] != before["sig"] and after["text"]:
                    break
                time.sleep(0.25)
            took = time.monotonic() - t0
            if after["sig"] == before["sig"]:
                problems.append(f"{where}: changed {change['control']}, output unchanged after {took:.0f}s")
            elif after["error"]:
                problems.append(f"{where}: changed {change['control']}, shows an error: {_short(after['text'])}")
            else:
                done.append(f"{where}: {change['control']} redrawn in {took:.1f}s")
    return problems, done


def _diff(before: bytes, after: bytes, name: str) -> str:
    lines = difflib.unified_diff(before.decode("utf-8", "replace").splitlines(),
                                 after.decode("utf-8", "replace").splitlines(),
                                 f"{name} (before)", f"{name} (after Lab)", lineterm="", n=1)
    out = list(lines)
    return "\n".join(out[:40]) + (f"\n… {len(out) - 40} more diff lines" if len(out) > 40 else "")


def _restore(path: Path, original: bytes, lab: LabServer, log_start: int) -> str:
    """Put back a chapter JupyterLab rewrote; a change Lab did not make is left alone."""
    rel = path.relative_to(ROOT).as_posix()
    if f"Saving file at /{rel}" not in lab.log()[log_start:]:
        return "not written by JupyterLab (no save in its log): left as it is"
    path.write_bytes(original)
    return "written by JupyterLab's save: the original is restored"


def _check_chapter(page: LabPage, lab: LabServer, docname: str, deadline: float, problems: list[str],
                   lap) -> None:
    path = source_path(docname)
    rel = path.relative_to(ROOT).as_posix()
    original = path.read_bytes()
    log_start = len(lab.log())
    left = lambda: max(5.0, deadline - time.monotonic())  # noqa: E731

    viewer = page.open(rel, timeout=min(120, left()))
    lap("open")
    if viewer["factory"] != "Jupytext Notebook" or not viewer["panel"]:
        problems.append(f"{rel} opened with {viewer}, expected the 'Jupytext Notebook' viewer "
                        "(tools/jupyterlab/overrides.json)")
    news = [m for m in page.toasts() if "news" in m.lower()]
    if news:
        problems.append(f"the 'Jupyter news' pop-up is shown ({_short(news[0], 80)!r}): "
                        "tools/jupyterlab/overrides.json must set fetchNews to 'false'")

    run = page.run_all(timeout=left())
    page.wait_markdown_stable(timeout=min(60, left()))
    lap("run_all")
    cells = page.cells()
    problems += _cell_problems(cells)
    TIMINGS[docname]["checked"] = {
        "cells": len(cells),
        "eval": sum(len(EVAL_ROLE.findall(c["source"])) for c in cells if c["type"] == "markdown"),
        "listings": sum(1 for c in cells if c["type"] == "code" and any(b.strip() for b in c["code_blocks"])),
        "show_source": sum(1 for c in cells if c["type"] == "code" and SHOW_SOURCE.search(c["source"])),
        "widgets_with_output": sum(len(c.get("explorers") or []) for c in cells),
    }
    if run["unnumbered"] and not run["errors"]:
        problems.append(f"Run All left {run['unnumbered']} code cells unexecuted")

    try:
        shot = page.screenshot(SCREENSHOTS / f"{docname.replace('/', '__')}.png")
        if shot["height"] < shot["full"]:
            problems.append(f"screenshot cut at {shot['height']} of {shot['full']} px")
    except Exception as exc:  # noqa: BLE001 - a missing screenshot is reported, not fatal
        problems.append(f"screenshot failed: {exc!r}")
    lap("screenshot")

    explorer_problems, redrawn = _explorer_problems(page, cells, deadline)
    problems += explorer_problems
    lap("explorers")
    TIMINGS[docname]["explorers_redrawn"] = redrawn

    now = path.read_bytes()
    if now != original:
        problems.append(f"{rel} changed on disk during Run All ({_restore(path, original, lab, log_start)}):\n"
                        + _diff(original, now, rel))
        original = now if path.read_bytes() == now else original  # someone else's edit: compare with it
    saved = page.save(timeout=min(60, left()))
    if saved.get("dialog"):
        problems.append(f"docmanager:save asked {saved['dialog']!r} (answered Cancel): was {rel} "
                        "changed on disk while the test had it open?")
    elif not saved.get("ok"):
        problems.append(f"docmanager:save failed: {saved}")
    now = path.read_bytes()
    if now != original:
        problems.append(f"saving from JupyterLab rewrote {rel} ({_restore(path, original, lab, log_start)}):\n"
                        + _diff(original, now, rel))
    lap("save")
    if TCP_WARNING in lab.log()[log_start:]:
        problems.append(f"the kernel logged 'Kernel is {TCP_WARNING}': tools/jupyterlab/"
                        "jupyter_server_config.json must set MappingKernelManager.transport_encryption")


# --- the test --------------------------------------------------------------------

@pytest.mark.timeout(CHAPTER_TIMEOUT + 60)
@pytest.mark.parametrize("docname", PAGES)
def test_chapter_in_jupyterlab(docname, budget, lab, page):
    spent = time.monotonic() - budget["start"]
    if spent > MODULE_BUDGET - 30:
        pytest.fail(f"the module's budget of {MODULE_BUDGET}s is spent ({spent:.0f}s): {docname} not run",
                    pytrace=False)
    deadline = time.monotonic() + min(CHAPTER_TIMEOUT, MODULE_BUDGET - spent)
    problems: list[str] = []
    timing: dict = {}
    TIMINGS[docname] = timing
    t_all = t = time.monotonic()

    def lap(name):
        nonlocal t
        now = time.monotonic()
        timing[name] = round(now - t, 1)
        t = now

    try:
        _check_chapter(page, lab, docname, deadline, problems, lap)
    except Exception as exc:  # noqa: BLE001 - a driver error or a wait that ran out: reported with the rest
        problems.append(f"stopped: {type(exc).__name__}: {_short(str(exc), 400)}")
    finally:
        # Shut the kernel down as a reader closing the tab with "shut down kernel" would; then
        # nothing may be left running on the server.
        try:
            closed = page.close(timeout=30)
            if not closed.get("ok"):
                problems.append(f"closing the notebook failed: {closed}")
        except Exception as exc:  # noqa: BLE001
            problems.append(f"closing the notebook failed: {exc!r}")
        still = lab.wait_no_kernels(timeout=30)
        if still:
            problems.append(f"kernels still running after shutdown: {[k['id'] for k in still]}")
            lab.shutdown_kernels()
        if lab.sessions():
            problems.append(f"sessions left after shutdown: {[s['path'] for s in lab.sessions()]}")
            lab.shutdown_sessions()
        page.leave()
        lap("shutdown")
        timing["total"] = round(time.monotonic() - t_all, 1)
    if problems:
        secs = {k: v for k, v in timing.items() if isinstance(v, float)}
        if len(problems) > MAX_LISTED:
            problems = problems[:MAX_LISTED] + [f"… and {len(problems) - MAX_LISTED} more"]
        pytest.fail(f"{docname} in JupyterLab (seconds: {secs}):\n  " + "\n  ".join(problems), pytrace=False)
