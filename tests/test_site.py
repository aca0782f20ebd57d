"""The built site reads correctly offline, checked in headless Chromium.

Serves ``_build/html`` on 127.0.0.1 and visits every page of ``_toc.yml`` with
Debian's Chromium through Selenium and Debian's chromedriver. A page fails on:
JS errors or SEVERE console messages, any HTTP error, any request to a host
other than this machine, math left untypeset, a saved widget rendered empty,
an image that did not load. A screenshot of every page is saved in
``_build/screenshots/``.
"""
from __future__ import annotations

import functools
import json
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from book_pages import HTML, ROOT, toc_docnames
from lab_driver import CHROMEDRIVER, CHROMIUM, chrome, quit_chrome

pytestmark = pytest.mark.slow  # executes the book / drives a browser: minutes

SCREENSHOTS = ROOT / "_build" / "screenshots"
LOCAL_HOSTS = {"127.0.0.1", "localhost", "[::1]", "::1"}
LOCAL_SCHEMES = {"data", "blob", "about", "chrome", "chrome-extension", "devtools"}
PAGES = toc_docnames()
# What the skeleton promises on specific pages; the generic checks run everywhere.
EXPECT = {
    "chapters/preface": {"widget", "figure"},      # no formulas since the preface stopped teaching statistics
    "chapters/ch1_why": {"math", "figure", "explorer"},
    **{f"chapters/{name}": {"figure", "explorer"} for name in (
        "ch2_strategies", "ch3_overlap", "ch4_special", "ch5_evaluation", "ch6_matrix", "ch7_iteration")},
}


def _require_site() -> Path:
    if not (HTML / "index.html").is_file():
        pytest.fail(f"{HTML} has no built site: run `make book` first (make test does it for you)",
                    pytrace=False)
    return HTML


# --- static checks (no browser) -------------------------------------------

def test_every_toc_page_was_built():
    html = _require_site()
    missing = [d for d in PAGES if not (html / f"{d}.html").is_file()]
    assert not missing, f"pages in _toc.yml missing from the site: {missing}"


def test_interface_strings_are_chinese():
    """The toggles MyST-NB and sphinx-togglebutton add read in the book's language, not English."""
    built = _require_site()
    english = ("Show code cell", "Hide code cell", "Click to show", "Click to hide")
    found = [f"{d}: {e!r}" for d in toc_docnames()
             for e in english if e in (built / f"{d}.html").read_text(encoding="utf-8")]
    assert not found, "English interface strings on the site:\n" + "\n".join(found)


def test_pages_reference_no_external_scripts_or_styles():
    from html.parser import HTMLParser

    class Loads(HTMLParser):
        def __init__(self):
            super().__init__()
            self.urls = []

        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            if tag in ("script", "img", "iframe", "audio", "video", "source") and a.get("src"):
                self.urls.append(a["src"])
            elif tag == "link" and a.get("href") and set((a.get("rel") or "").split()) & {
                    "stylesheet", "preload", "modulepreload", "icon", "prefetch", "manifest"}:
                self.urls.append(a["href"])

    html = _require_site()
    offenders = {}
    for page in sorted(html.rglob("*.html")):
        parser = Loads()
        parser.feed(page.read_text(encoding="utf-8"))
        remote = [u for u in parser.urls if urlsplit(u).scheme in ("http", "https") or u.startswith("//")]
        if remote:
            offenders[str(page.relative_to(html))] = remote
    assert not offenders, ("pages load resources from the network (was npm missing during `make book`?): "
                           + json.dumps(offenders, ensure_ascii=False, indent=1))


def test_search_index_has_chinese_words():
    html = _require_site()
    text = (html / "searchindex.js").read_text(encoding="utf-8")
    index = json.loads(text[text.index("(") + 1: text.rindex(")")])
    for word in ("切分", "召回"):
        assert word in index["terms"], f"{word!r} is not a search term: Chinese is not segmented"


# --- the browser ------------------------------------------------------------

class _Handler(SimpleHTTPRequestHandler):
    errors: list[tuple[str, int]] = []

    def log_message(self, *args):  # keep pytest output clean
        pass

    def send_response(self, code, message=None):
        if code >= 400:
            type(self).errors.append((self.path, code))
        super().send_response(code, message)


@pytest.fixture(scope="module")
def server():
    html = _require_site()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(html)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def driver():
    pytest.importorskip("selenium.webdriver")
    for exe in (CHROMIUM, CHROMEDRIVER):
        if not Path(exe).is_file():
            pytest.fail(f"{exe} not found: apt-get install chromium chromium-driver (.ci/run does)",
                        pytrace=False)
    drv = chrome((1280, 1000), logs=("performance", "browser"))
    # Chromium's own start-up tab may try a remote host of its own; settle on
    # about:blank and drop those events so only the site's requests are judged.
    drv.get("about:blank")
    time.sleep(1)
    drv.get_log("performance")
    drv.get_log("browser")
    try:
        yield drv
    finally:
        quit_chrome(drv)


_PAGE_STATE_JS = r"""
const article = document.querySelector('article.bd-article') || document.body;
const clone = article.cloneNode(true);
clone.querySelectorAll('pre, code, script, style, mjx-container, .highlight').forEach(e => e.remove());
const text = clone.textContent;
const math = [...article.querySelectorAll('.math')];
const views = [...document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]')];
return {
  rawMath: /\$\$|\\\(|\\\[/.test(text),
  mathNodes: math.length,
  mathTypeset: math.filter(e => e.querySelector('mjx-container')).length,
  mjx: document.querySelectorAll('mjx-container').length,
  mathjaxError: document.querySelectorAll('mjx-merror, [data-mjx-error]').length,
  hasWidgetState: !!document.querySelector('script[type="application/vnd.jupyter.widget-state+json"]'),
  widgetViews: views.length,
  widgetsRendered: views.filter(s => {
    const w = s.parentElement && s.parentElement.querySelector('.jupyter-widgets');
    return w && w.getBoundingClientRect().height > 0 && w.innerText.trim().length > 0;
  }).length,
  emptyOutputWidgets: [...document.querySelectorAll('.jupyter-widgets-output-area, .widget-output')]
      .filter(e => e.innerText.trim().length === 0).length,
  images: [...article.querySelectorAll('img')].map(i => ({src: i.src, ok: i.complete && i.naturalWidth > 0})),
  figures: article.querySelectorAll('.cell_output img').length,
  // chunklab explorers' static views: CSS radio tabs (class clt<N>) with at least one visible panel
  explorers: [...article.querySelectorAll('div[class^="clt"]')]
      .filter(e => [...e.querySelectorAll('.clp')].some(p => p.getBoundingClientRect().height > 0)).length,
  lang: document.documentElement.lang,
};
"""

_WAIT_MATHJAX_JS = r"""
const done = arguments[arguments.length - 1];
if (!document.querySelector('.math')) { done('no-math'); return; }
const start = Date.now();
(function poll() {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    MathJax.startup.promise.then(() => done('ok'), e => done('error: ' + e));
  } else if (Date.now() - start > 20000) {
    done('MathJax never loaded');
  } else { setTimeout(poll, 100); }
})();
"""


def _network_problems(perf_log: list[dict]) -> list[str]:
    problems, urls = [], {}
    for entry in perf_log:
        msg = json.loads(entry["message"])["message"]
        method, params = msg.get("method"), msg.get("params", {})
        if method == "Network.requestWillBeSent":
            url = params["request"]["url"]
            urls[params["requestId"]] = url
            parts = urlsplit(url)
            if parts.scheme not in LOCAL_SCHEMES and parts.hostname not in LOCAL_HOSTS:
                problems.append(f"request to a non-local host: {url}")
        elif method == "Network.responseReceived":
            status = params["response"]["status"]
            if status >= 400:
                problems.append(f"HTTP {status}: {params['response']['url']}")
        elif (method == "Network.loadingFailed" and not params.get("canceled")
              and params["requestId"] in urls):  # failures of requests this page made
            problems.append(f"loading failed ({params.get('errorText')}): {urls[params['requestId']]}")
    return problems


@pytest.mark.timeout(120)
@pytest.mark.parametrize("docname", PAGES)
def test_page_renders_offline(docname, server, driver):
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get_log("performance")  # drop what the previous page left
    driver.get_log("browser")
    _Handler.errors.clear()
    driver.set_window_size(1280, 1000)
    driver.get(f"{server}/{docname}.html")
    WebDriverWait(driver, 30).until(lambda d: d.execute_script("return document.readyState") == "complete")
    driver.set_script_timeout(30)
    mathjax = driver.execute_async_script(_WAIT_MATHJAX_JS)
    state = driver.execute_script(_PAGE_STATE_JS)
    if state["hasWidgetState"]:
        try:
            WebDriverWait(driver, 20).until(
                lambda d: (s := d.execute_script(_PAGE_STATE_JS))["widgetsRendered"] >= s["widgetViews"])
        except Exception:
            pass  # reported below with the numbers
        state = driver.execute_script(_PAGE_STATE_JS)

    # Screenshot of the whole page (before asserting, so failures can be looked at).
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    height = driver.execute_script("return Math.max(document.documentElement.scrollHeight, "
                                   "document.body.scrollHeight)")
    driver.set_window_size(1280, min(max(height, 800), 12000))
    driver.save_screenshot(str(SCREENSHOTS / f"{docname.replace('/', '__')}.png"))

    problems = _network_problems(driver.get_log("performance"))
    problems += [f"server answered {code} for {path}" for path, code in _Handler.errors]
    problems += [f"console {e['level']}: {e['message']}" for e in driver.get_log("browser")
                 if e["level"] == "SEVERE"]
    if mathjax not in ("ok", "no-math"):
        problems.append(f"MathJax: {mathjax}")
    if state["rawMath"]:
        problems.append("raw TeX ($$, \\( or \\[) left in the page text")
    if state["mathTypeset"] < state["mathNodes"]:
        problems.append(f"{state['mathNodes'] - state['mathTypeset']} of {state['mathNodes']} math nodes "
                        "not typeset (no mjx-container)")
    if state["mathjaxError"]:
        problems.append(f"{state['mathjaxError']} MathJax errors")
    if state["hasWidgetState"] and state["widgetsRendered"] < state["widgetViews"]:
        problems.append(f"only {state['widgetsRendered']} of {state['widgetViews']} widgets rendered non-empty")
    if state["emptyOutputWidgets"]:
        problems.append(f"{state['emptyOutputWidgets']} widget output areas left empty")
    problems += [f"image did not load: {img['src']}" for img in state["images"] if not img["ok"]]
    if not state["lang"].startswith("zh"):
        problems.append(f"<html lang={state['lang']!r}>, expected zh")

    expected = EXPECT.get(docname, set())
    if "math" in expected and not state["mjx"]:
        problems.append("expected typeset math on this page, found no mjx-container")
    if "widget" in expected and not state["widgetViews"]:
        problems.append("expected a widget in its saved state on this page, found none")
    if "explorer" in expected and not state["explorers"]:
        problems.append("expected an explorer's static view (precomputed panels) on this page, found none")
    if "figure" in expected and not state["figures"]:
        problems.append("expected a figure on this page, found no image in a cell output")
    assert not problems, f"{docname}:\n  " + "\n  ".join(problems)


@pytest.mark.timeout(60)
def test_search_finds_chinese(server, driver):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get_log("performance")
    driver.get(f"{server}/search.html?q=%E5%88%87%E5%88%86")  # 切分
    WebDriverWait(driver, 30).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "#search-results ul.search li"))
    hits = driver.find_elements(By.CSS_SELECTOR, "#search-results ul.search li")
    assert len(hits) >= 3, f"search for 切分 found only {len(hits)} pages"
    assert not _network_problems(driver.get_log("performance"))
