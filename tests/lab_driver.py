"""Drive a real JupyterLab (the venv's) with headless Chromium: used by tests/test_lab.py.

``LabServer`` starts ``jupyter lab`` on 127.0.0.1 (a free port, a random token,
``--LabApp.expose_app_in_browser`` so the page has ``window.jupyterapp``) with
user-level Jupyter directories pointed at a scratch folder, so a developer's own
settings, workspaces or kernels in ``~/.jupyter`` / ``~/.local/share/jupyter``
cannot change what the test sees; the venv's own settings (``make venv`` installs
them) still apply. ``LabPage`` wraps a Selenium driver showing one document:
open it, wait for its kernel, Run All, read back every cell (model and DOM),
poke an explorer widget, save, shut the kernel down, take a full-length
screenshot of the notebook.

Everything that waits has a deadline; JavaScript that returns a promise is
called through ``execute_async_script`` with the driver's script timeout.
"""
from __future__ import annotations

import io
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.prefix) / "bin"
CHROMIUM = os.environ.get("CHUNKLAB_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHUNKLAB_CHROMEDRIVER", "/usr/bin/chromedriver")


class LabTimeout(AssertionError):
    """A wait of the Lab driver ran out of time (an AssertionError so pytest reports it plainly)."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LabServer:
    """``jupyter lab`` from this interpreter's environment, rooted at ``root``."""

    def __init__(self, root: Path = ROOT, *, log_path: Path | None = None, extra_args: tuple[str, ...] = ()):
        self.root = Path(root)
        self.port = free_port()
        self.token = secrets.token_urlsafe(24)
        self.base = f"http://127.0.0.1:{self.port}"
        self.home = Path(tempfile.mkdtemp(prefix="chunklab-lab-"))
        self.log_path = log_path or self.home / "lab.log"
        self.extra_args = tuple(extra_args)
        self.proc: subprocess.Popen | None = None

    # -- process ---------------------------------------------------------------
    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.pop("CHUNKLAB_STATIC_SITE", None)  # explorers must be live widgets, not the site's static view
        for var, sub in (("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_DATA_DIR", "data"),
                         ("JUPYTER_RUNTIME_DIR", "runtime"), ("JUPYTERLAB_SETTINGS_DIR", "user-settings"),
                         ("JUPYTERLAB_WORKSPACES_DIR", "workspaces"), ("IPYTHONDIR", "ipython")):
            (self.home / sub).mkdir(parents=True, exist_ok=True)
            env[var] = str(self.home / sub)
        env["JUPYTER_PLATFORM_DIRS"] = "1"
        env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
        env["PYTHONUNBUFFERED"] = "1"
        return env

    def command(self) -> list[str]:
        cmd = [str(BIN / "jupyter-lab"), "--no-browser", "--ip=127.0.0.1", f"--port={self.port}",
               "--port-retries=0", f"--IdentityProvider.token={self.token}",
               f"--ServerApp.root_dir={self.root}", "--LabApp.expose_app_in_browser=True",
               *self.extra_args]
        if os.geteuid() == 0:
            cmd.append("--allow-root")
        return cmd

    def start(self, timeout: float = 90) -> "LabServer":
        self._log = open(self.log_path, "w", encoding="utf-8")
        self.proc = subprocess.Popen(self.command(), cwd=self.root, env=self.env(), stdout=self._log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise RuntimeError(f"jupyter lab exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                self.api("GET", "/api/status", timeout=2)
                return self
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                time.sleep(0.3)
        raise LabTimeout(f"jupyter lab did not answer within {timeout:.0f}s:\n{self.log_tail()}")

    def log(self) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def log_tail(self, n: int = 40) -> str:
        return "\n".join(self.log().splitlines()[-n:])

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                self.api("POST", "/api/shutdown", timeout=10)
                self.proc.wait(timeout=20)
            except Exception:  # noqa: BLE001 - fall back to a signal to the process we started
                self.proc.terminate()
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(timeout=10)
        if getattr(self, "_log", None) is not None:
            self._log.close()
        shutil.rmtree(self.home, ignore_errors=True)

    # -- REST API ----------------------------------------------------------------
    def api(self, method: str, path: str, body=None, timeout: float = 30):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(f"{self.base}{path}", data=data, method=method,
                                     headers={"Authorization": f"token {self.token}",
                                              "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            raw = resp.read()
        return json.loads(raw) if raw else None

    def kernels(self) -> list[dict]:
        return self.api("GET", "/api/kernels")

    def sessions(self) -> list[dict]:
        return self.api("GET", "/api/sessions")

    def shutdown_sessions(self, path: str | None = None) -> list[str]:
        """Delete the sessions (and so their kernels) on ``path``, or all of them."""
        gone = []
        for sess in self.sessions():
            if path is None or sess["path"] == path:
                self.api("DELETE", f"/api/sessions/{sess['id']}")
                gone.append(sess["id"])
        return gone

    def shutdown_kernels(self) -> None:
        for k in self.kernels():
            self.api("DELETE", f"/api/kernels/{k['id']}")

    def wait_no_kernels(self, timeout: float = 30) -> list[dict]:
        end = time.monotonic() + timeout
        left = self.kernels()
        while left and time.monotonic() < end:
            time.sleep(0.5)
            left = self.kernels()
        return left

    def url(self, path: str) -> str:
        return f"{self.base}/lab/tree/{quote(path)}?reset&token={self.token}"


def chrome(window: tuple[int, int] = (1400, 1000), logs: tuple[str, ...] = ("browser",)):
    """Headless Chromium through Debian's chromedriver, with a throw-away profile (used by the Lab and
    the site tests). ``logs``: the Chromium log types to keep (e.g. "performance" for network events)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    os.environ.setdefault("SE_AVOID_STATS", "true")
    profile = tempfile.mkdtemp(prefix="chunklab-chromium-")
    opts = Options()
    opts.binary_location = CHROMIUM
    for arg in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-default-apps", "--disable-extensions", "--disable-dev-shm-usage",
                "--hide-scrollbars", "--lang=zh-CN", f"--window-size={window[0]},{window[1]}",
                f"--user-data-dir={profile}"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {kind: "ALL" for kind in logs})
    drv = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=opts)
    drv.set_page_load_timeout(60)
    # Selenium waits 120 s for chromedriver's answer to one command; a Lab page executing a chapter
    # on a loaded 2-core machine (the room test's four trainees) can take longer to answer, and the
    # test then stops on a ReadTimeoutError although nothing is wrong. The tests' own waits decide.
    config = getattr(drv.command_executor, "_client_config", None)
    if config is not None:
        config.timeout = 600
    drv._chunklab_profile = profile  # removed by quit_chrome
    return drv


def quit_chrome(drv) -> None:
    profile = getattr(drv, "_chunklab_profile", None)
    try:
        drv.quit()
    finally:
        if profile:
            shutil.rmtree(profile, ignore_errors=True)


# --- JavaScript run in the Lab page ----------------------------------------------

_PANEL = r"""const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
// Rendered Markdown: jupyterlab-myst renders into .myst, JupyterLab's own renderer into .jp-MarkdownOutput.
const RENDERED_MD = '.jp-InputArea > .myst, .jp-MarkdownOutput';
const OUTPUT_WIDGET = '.widget-output, .jupyter-widgets-output-area';
// A cell's own outputs (not those nested in an ipywidgets Output widget).
function outputs(cw) {
  return [...cw.node.querySelectorAll('.jp-OutputArea-output')]
    .filter(o => !o.parentElement.closest('.jp-OutputArea-output'));
}
// Explorers: a widget output holding an ipywidgets Output widget (chunklab.viz.widgets.Explorer).
function explorers(cw) {
  return outputs(cw).filter(o => o.querySelector('.jupyter-widgets') && o.querySelector(OUTPUT_WIDGET));
}
"""

JS_NOTEBOOK_OPEN = _PANEL + """
return !!(w && w.content && w.content.model && w.context && w.context.isReady
          && w.node.classList.contains('jp-NotebookPanel') && w.content.widgets.length > 0);"""

JS_VIEWER = _PANEL + """
const reg = window.jupyterapp.docRegistry;
const path = w && w.context ? w.context.path : null;
const f = path && reg ? reg.defaultWidgetFactory(path) : null;
return {path, factory: f ? f.name : null, panel: !!(w && w.node.classList.contains('jp-NotebookPanel'))};"""

# jupyterlab-myst evaluates a Markdown cell's {eval} expressions from the cell's parsed MyST
# tree; a cell Run All reaches before its first parse is "executed" with no expressions at all
# and keeps showing the expression as code. Parsing runs in the background after the notebook
# opened (seconds for a long chapter): wait for every cell with an {eval}.
JS_MYST_PARSED = _PANEL + """
const pending = w.content.widgets.filter(c => c.model.type === 'markdown' && 'mystModel' in c
    && c.model.sharedModel.getSource().includes('{eval}') && !(c.mystModel && c.mystModel.mdast))
  .map(c => w.content.widgets.indexOf(c));
return {done: pending.length === 0, pending};"""

JS_KERNEL_IDLE = _PANEL + """
const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
return !!k && k.connectionStatus === 'connected' && k.status === 'idle';"""

JS_KERNEL_ID = _PANEL + """
const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
return k ? k.id : null;"""

# Resolves when NotebookActions.runAll has scheduled and finished every cell.
JS_RUN_ALL = """const done = arguments[arguments.length - 1];
window.jupyterapp.commands.execute('notebook:run-all-cells')
  .then(r => done({ok: true, result: String(r)}), e => done({ok: false, result: String(e)}));"""

# Finished: no "[*]" prompt, every code cell numbered (or an error stopped Run All), kernel idle.
JS_RUN_FINISHED = _PANEL + """
const nb = w.content;
let busy = 0, unnumbered = 0, errors = 0;
for (const cw of nb.widgets) {
  if (cw.model.type !== 'code') continue;
  const prompt = cw.node.querySelector('.jp-InputPrompt');
  if (prompt && prompt.textContent.includes('*')) busy++;
  if (cw.model.executionCount === null) unnumbered++;
  if (cw.model.outputs.toJSON().some(o => o.output_type === 'error')) errors++;
}
const k = w.sessionContext.session && w.sessionContext.session.kernel;
const idle = !!k && k.status === 'idle';
return {done: busy === 0 && idle && (unnumbered === 0 || errors > 0), busy, unnumbered, errors, idle};"""

JS_MARKDOWN_TEXT = _PANEL + """
return w.content.widgets.filter(c => c.model.type === 'markdown')
  .map(c => { const r = c.node.querySelector(RENDERED_MD); return r ? r.innerText : ''; }).join('\\n\\u0001');"""

# Everything the assertions need, per cell, from the model (outputs, metadata) and the DOM
# (rendered Markdown, code blocks in outputs, widgets).
JS_CELLS = _PANEL + r"""
const BLOCKS = 'p, li, div, h1, h2, h3, h4, h5, h6, tr, br, blockquote, dt, dd, table, ul, ol, section';
function prose(node) {
  // Text of rendered Markdown without code, math and styles; line breaks after block elements.
  const clone = node.cloneNode(true);
  clone.querySelectorAll('pre, code, script, style, mjx-container, .MathJax, .katex, .math')
       .forEach(e => e.remove());
  clone.querySelectorAll(BLOCKS).forEach(e => e.appendChild(document.createTextNode('\n')));
  return clone.textContent;
}
function text(o) { const t = o.text; return Array.isArray(t) ? t.join('') : (t || ''); }
const out = [];
w.content.widgets.forEach((cw, i) => {
  const m = cw.model;
  const src = m.sharedModel.getSource();
  const cell = {index: i, type: m.type, source: src, tags: m.getMetadata('tags') || [],
                input_hidden: !!cw.inputHidden, output_hidden: !!cw.outputHidden};
  if (m.type === 'code') {
    const outs = m.outputs.toJSON();
    cell.execution_count = m.executionCount;
    cell.errors = outs.filter(o => o.output_type === 'error')
                      .map(o => ({ename: o.ename, evalue: o.evalue}));
    cell.stderr = outs.filter(o => o.output_type === 'stream' && o.name === 'stderr').map(text);
    cell.mimes = outs.map(o => o.output_type === 'stream' ? 'stream:' + o.name
                                : o.output_type === 'error' ? 'error' : Object.keys(o.data || {}).join(','));
    // Code blocks shown by outputs (listings): Markdown or HTML outputs, never stream/error text.
    cell.code_blocks = outputs(cw)
      .filter(o => ['text/markdown', 'text/html'].includes(o.getAttribute('data-mime-type')))
      .flatMap(o => [...o.querySelectorAll('pre, .highlight')])
      .filter((e, _, all) => !all.some(a => a !== e && a.contains(e)))  // outermost blocks only
      .map(e => e.textContent);
    cell.markdown_outputs = outs.filter(o => o.data && o.data['text/markdown'])
      .map(o => { const t = o.data['text/markdown']; return Array.isArray(t) ? t.join('') : t; });
    cell.widget_views = outputs(cw).filter(o => o.querySelector('.jupyter-widgets')).length;
    cell.explorers = explorers(cw).map(o => ({
        controls: o.querySelectorAll('select, input, .widget-slider').length,
        text: (o.querySelector(OUTPUT_WIDGET).textContent || '').trim().slice(0, 200)}));
    cell.output_text = outputs(cw)
      .map(o => o.textContent).join('\n').slice(0, 4000);
  } else if (m.type === 'markdown') {
    const r = cw.node.querySelector(RENDERED_MD);
    cell.rendered = cw.rendered !== false && !!r;
    cell.prose = r ? prose(r) : '';
    cell.inline_errors = r ? [...r.querySelectorAll('[data-mime-type="application/vnd.jupyter.stderr"]')]
                               .map(e => e.textContent) : [];
    cell.user_expressions = m.getMetadata('user_expressions') || null;
  }
  out.push(cell);
});
return out;"""

# The explorers of one cell: controls and the output area, by position.
JS_EXPLORER_STATE = _PANEL + r"""
const [ci, ei] = arguments;
const v = explorers(w.content.widgets[ci])[ei];
if (!v) return null;
const area = v.querySelector(OUTPUT_WIDGET);
// What the reader sees: the text and the images (a heatmap may change with the same table text).
const sig = area.textContent.trim() + '\n' + [...area.querySelectorAll('img')]
  .map(i => i.src.length + ':' + i.src.slice(-64)).join(',');
// An explorer shows an exception in its own output area as "⚠ Name: message" (Explorer.update).
const error = area.textContent.includes('\u26a0')
  || !!area.querySelector('[data-mime-type="application/vnd.jupyter.stderr"]');
return {sig, text: area.textContent.trim(), error};"""

# Pick another option in the first <select> that has one and fire 'change' as a reader's
# click does (ipywidgets' Dropdown view listens to it and updates the model).
JS_EXPLORER_CHANGE = _PANEL + r"""
const [ci, ei] = arguments;
const v = explorers(w.content.widgets[ci])[ei];
for (const s of v.querySelectorAll('select')) {
  if (s.disabled || s.options.length < 2) continue;
  const before = s.options[s.selectedIndex] ? s.options[s.selectedIndex].textContent : null;
  const to = s.selectedIndex === 0 ? 1 : 0;
  s.scrollIntoView({block: 'center'});
  s.selectedIndex = to;
  s.dispatchEvent(new Event('change', {bubbles: true}));
  const label = s.closest('.widget-dropdown') && s.closest('.widget-dropdown').querySelector('label');
  return {control: (label ? label.textContent : 'select') + ': ' + before + ' -> ' + s.options[to].textContent};
}
// A slider (ipywidgets 8: noUiSlider): one keyboard step on its handle, as a reader pressing
// the arrow key; noUiSlider fires "change", which commits even with continuous_update=False.
for (const h of v.querySelectorAll('.widget-slider .noUi-handle')) {
  const box = h.closest('.widget-slider');
  if (box.querySelector('[disabled]') || h.hasAttribute('disabled')) continue;
  const now = Number(h.getAttribute('aria-valuenow')), max = Number(h.getAttribute('aria-valuemax'));
  const key = now < max ? 'ArrowRight' : 'ArrowLeft';
  const before = (box.querySelector('.widget-readout') || {}).textContent;
  h.scrollIntoView({block: 'center'});
  h.focus();
  h.dispatchEvent(new KeyboardEvent('keydown', {key, code: key, keyCode: key === 'ArrowRight' ? 39 : 37,
                                                which: key === 'ArrowRight' ? 39 : 37, bubbles: true}));
  h.dispatchEvent(new KeyboardEvent('keyup', {key, code: key, bubbles: true}));
  const label = box.querySelector('label');
  return {control: (label ? label.textContent : 'slider') + ': ' + before + ' -> '
                   + (box.querySelector('.widget-readout') || {}).textContent};
}
for (const c of v.querySelectorAll('input[type="checkbox"]')) {
  if (c.disabled) continue;
  c.scrollIntoView({block: 'center'});
  c.click();
  return {control: 'checkbox ' + (c.closest('.widget-checkbox') || c).textContent + ' -> ' + c.checked};
}
return null;"""

# Start docmanager:save; the result lands in window.__chunklabSave. (Not awaited in the browser:
# a file changed on disk meanwhile makes Lab ask "overwrite?" in a dialog first.)
JS_SAVE_START = """window.__chunklabSave = null;
window.jupyterapp.commands.execute('docmanager:save')
  .then(() => { window.__chunklabSave = {ok: true}; },
        e => { window.__chunklabSave = {ok: false, error: String(e)}; });"""

JS_SAVE_STATE = """const dlg = document.querySelector('.jp-Dialog');
return {result: window.__chunklabSave,
        dialog: dlg ? dlg.innerText.replace(/\\s+/g, ' ').trim() : null};"""

JS_DIALOG_CANCEL = """const b = document.querySelector('.jp-Dialog .jp-Dialog-button.jp-mod-reject');
if (b) b.click();
return !!b;"""

JS_DIRTY = _PANEL + "return w.context.model.dirty;"

# Shut the notebook's kernel down and close the tab without the "save changes?" dialog.
JS_CLOSE = """const done = arguments[arguments.length - 1];
const w = window.jupyterapp.shell.currentWidget;
(async () => {
  try {
    if (w.sessionContext.session) await w.sessionContext.shutdown();
    w.context.model.dirty = false;
    w.dispose();
    done({ok: true});
  } catch (e) { done({ok: false, error: String(e)}); }
})();"""

JS_TOASTS = """return [...document.querySelectorAll('.Toastify__toast, .jp-toast-message')]
  .map(e => e.textContent.trim()).filter(Boolean);"""

JS_SCROLLER = _PANEL + """
const s = w.content.node.closest('.jp-WindowedPanel-outer') || w.content.outerNode || w.content.node;
const r = s.getBoundingClientRect();
return {top: r.top, left: r.left, width: r.width, height: r.height, scrollHeight: s.scrollHeight,
        dpr: window.devicePixelRatio};"""

JS_SCROLL_TO = _PANEL + """
const s = w.content.node.closest('.jp-WindowedPanel-outer') || w.content.outerNode || w.content.node;
s.scrollTop = arguments[0];
return s.scrollTop;"""


class LabPage:
    """One Selenium driver showing documents of one ``LabServer``, one at a time."""

    def __init__(self, driver, server: LabServer):
        self.d = driver
        self.server = server

    def wait_for(self, js: str, timeout: float, what: str, *args, step: float = 0.25):
        end = time.monotonic() + timeout
        value = None
        while time.monotonic() < end:
            value = self.d.execute_script(js, *args)
            if value and (not isinstance(value, dict) or value.get("done", True)):
                return value
            time.sleep(step)
        raise LabTimeout(f"{what}: not reached within {timeout:.0f}s (last state {value!r})")

    def run_async(self, js: str, timeout: float, *args):
        self.d.set_script_timeout(max(1, timeout))
        return self.d.execute_async_script(js, *args)

    def open(self, path: str, timeout: float = 120) -> dict:
        self.server.shutdown_sessions(path)
        self.d.get(self.server.url(path))
        t0 = time.monotonic()
        self.wait_for(JS_NOTEBOOK_OPEN, timeout, f"{path} opened as a notebook")
        viewer = self.d.execute_script(JS_VIEWER)
        self.wait_for(JS_KERNEL_IDLE, max(10, timeout - (time.monotonic() - t0)), f"{path}: kernel connected and idle")
        self.wait_for(JS_MYST_PARSED, max(10, timeout - (time.monotonic() - t0)),
                      f"{path}: jupyterlab-myst parsed every Markdown cell with an {{eval}}")
        return viewer

    def run_all(self, timeout: float) -> dict:
        t0 = time.monotonic()
        res = self.run_async(JS_RUN_ALL, timeout)
        state = self.wait_for(JS_RUN_FINISHED, max(5, timeout - (time.monotonic() - t0)), "Run All finished")
        return {"run_all": res, **state}

    def wait_markdown_stable(self, timeout: float = 30, quiet: float = 1.5) -> str:
        """jupyterlab-myst evaluates ``{eval}`` with kernel requests after a cell ran: wait until the
        rendered Markdown has not changed for ``quiet`` seconds."""
        end = time.monotonic() + timeout
        prev, since = None, time.monotonic()
        while time.monotonic() < end:
            cur = self.d.execute_script(JS_MARKDOWN_TEXT)
            if cur != prev:
                prev, since = cur, time.monotonic()
            elif time.monotonic() - since >= quiet:
                return cur
            time.sleep(0.3)
        return prev or ""

    def cells(self) -> list[dict]:
        return self.d.execute_script(JS_CELLS)

    def explorer_state(self, cell: int, index: int):
        return self.d.execute_script(JS_EXPLORER_STATE, cell, index)

    def change_explorer(self, cell: int, index: int):
        return self.d.execute_script(JS_EXPLORER_CHANGE, cell, index)

    def save(self, timeout: float = 60) -> dict:
        """``docmanager:save``; a dialog (e.g. "File Changed" when the file on disk is newer than
        what Lab loaded) is answered with Cancel and reported as ``{"ok": False, "dialog": ...}``."""
        self.d.execute_script(JS_SAVE_START)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            state = self.d.execute_script(JS_SAVE_STATE)
            if state["dialog"]:
                self.d.execute_script(JS_DIALOG_CANCEL)
                time.sleep(0.5)
                return {"ok": False, "dialog": state["dialog"]}
            if state["result"] is not None:
                end_clean = time.monotonic() + 10
                while self.d.execute_script(JS_DIRTY) and time.monotonic() < end_clean:
                    time.sleep(0.2)
                return state["result"]
            time.sleep(0.2)
        return {"ok": False, "error": f"no answer within {timeout:.0f}s"}

    def kernel_id(self):
        return self.d.execute_script(JS_KERNEL_ID)

    def close(self, timeout: float = 60) -> dict:
        return self.run_async(JS_CLOSE, timeout)

    def leave(self) -> None:
        """Navigate to about:blank, accepting a "leave page?" prompt if Lab still had unsaved work."""
        from selenium.common.exceptions import NoAlertPresentException, UnexpectedAlertPresentException

        try:
            self.d.get("about:blank")
        except UnexpectedAlertPresentException:
            pass
        try:
            self.d.switch_to.alert.accept()
            self.d.get("about:blank")
        except NoAlertPresentException:
            pass

    def toasts(self) -> list[str]:
        return self.d.execute_script(JS_TOASTS)

    def screenshot(self, dest: Path, max_height: int = 60000, tall: int = 8000) -> dict:
        """The whole notebook as one PNG: the window is made ``tall`` px high, the notebook's own
        scroller is scrolled a viewport at a time and the pieces are stitched (Pillow)."""
        from PIL import Image

        size = self.d.get_window_size()
        self.d.set_window_size(size["width"], tall)
        try:
            time.sleep(0.5)
            geo = self.d.execute_script(JS_SCROLLER)
            dpr = geo["dpr"] or 1
            view_h = int(geo["height"])
            total = min(int(geo["scrollHeight"]), max_height)
            box = tuple(int(round(v * dpr)) for v in (geo["left"], geo["top"], geo["left"] + geo["width"],
                                                       geo["top"] + geo["height"]))
            sheet = Image.new("RGB", (box[2] - box[0], int(total * dpr)), "white")
            y = 0
            while y < total:
                actual = self.d.execute_script(JS_SCROLL_TO, y)
                time.sleep(0.35)  # content-visibility: offscreen cells paint once they scroll in
                shot = Image.open(io.BytesIO(self.d.get_screenshot_as_png())).convert("RGB").crop(box)
                offset = int(round((y - actual) * dpr))  # the last page stops at the bottom
                sheet.paste(shot.crop((0, offset, shot.width, shot.height)), (0, int(y * dpr)))
                y += view_h
            dest.parent.mkdir(parents=True, exist_ok=True)
            sheet.save(dest, compress_level=3)
            self.d.execute_script(JS_SCROLL_TO, 0)
            return {"height": total, "full": int(geo["scrollHeight"]), "pieces": -(-total // view_h)}
        finally:
            self.d.set_window_size(size["width"], size["height"])
