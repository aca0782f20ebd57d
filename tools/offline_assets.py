"""Serve MathJax, require.js and the ipywidgets HTML manager from the site itself.

The default Sphinx / MyST-NB output loads these three from CDNs, so a reader
without internet would see raw ``$$`` math and empty widgets. This module does
two jobs:

``python tools/offline_assets.py fetch`` (run by ``make book`` before the build)
    installs the exact versions pinned in ``tools/offline/package-lock.json``
    from the npm registry into ``_build/.npm/`` (``npm ci``; nothing is
    committed) and stages the files the site needs under
    ``_build/.offline/site/_vendor/``. Where npm is missing or fails, it prints
    exactly one ``WARNING:`` line, removes any stale staging, and exits 0: the
    book then builds with the CDN links.

``offline_assets`` as a Sphinx extension (``sphinx.local_extensions`` in ``_config.yml``)
    when the staging exists, adds it to ``html_extra_path`` (so it lands in
    ``_build/html/_vendor/``, outside ``_static/``: Jupyter Book injects every
    script found in ``_static`` into every page) and points ``mathjax_path``
    and MyST-NB's ``nb_ipywidgets_js`` at it; otherwise it keeps the CDN links.
    Either way it serves ``tools/site_extra/_vendor/widgets-shim.js`` before
    the widget manager on widget pages (ipywidgets calls the MathJax 2 API;
    the manager's icon fonts must resolve beside it), sets the theme's
    default colour mode, and drops inline scripts registered twice (a second
    ``const THEBE_JS_URL`` is a SyntaxError), so pages log no console errors.
"""
from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCK_DIR = ROOT / "tools" / "offline"
NPM_DIR = ROOT / "_build" / ".npm"
STAGE_DIR = ROOT / "_build" / ".offline" / "site"
MANIFEST = ROOT / "_build" / ".offline" / "manifest.json"
VENDOR = "_vendor"

# Paths inside the built site, relative to its root.
MATHJAX = f"{VENDOR}/mathjax/tex-mml-chtml.js"
REQUIREJS = f"{VENDOR}/requirejs/require.js"
EMBED_AMD = f"{VENDOR}/html-manager/embed-amd.js"

WARNING = ("WARNING: {why}; the site will load MathJax, require.js and the widget manager "
           "from CDNs and will not read correctly offline")


def _lock_digest() -> str:
    h = hashlib.sha256()
    for name in ("package.json", "package-lock.json"):
        h.update((LOCK_DIR / name).read_bytes())
    return h.hexdigest()


def _copytree(src: Path, dst: Path, skip_suffixes: tuple[str, ...] = ()) -> None:
    shutil.copytree(src, dst, ignore=lambda d, names: [n for n in names if n.endswith(skip_suffixes)])


def _stage(modules: Path) -> dict[str, str]:
    """Copy what the site needs from node_modules into the staging folder."""
    if STAGE_DIR.exists():
        shutil.rmtree(STAGE_DIR)
    vendor = STAGE_DIR / VENDOR
    vendor.mkdir(parents=True)
    # MathJax loads its fonts and any TeX extension it meets relative to the
    # script's own URL, so the whole es5 tree goes along.
    _copytree(modules / "mathjax" / "es5", vendor / "mathjax")
    (vendor / "requirejs").mkdir()
    shutil.copy2(modules / "requirejs" / "require.js", vendor / "requirejs" / "require.js")
    # embed-amd.js loads its icon fonts relative to its own URL too.
    _copytree(modules / "@jupyter-widgets" / "html-manager" / "dist", vendor / "html-manager",
              skip_suffixes=(".map",))
    versions = {}
    for pkg in ("mathjax", "requirejs", "@jupyter-widgets/html-manager"):
        versions[pkg] = json.loads((modules / pkg / "package.json").read_text())["version"]
    for rel in (MATHJAX, REQUIREJS, EMBED_AMD):
        if not (STAGE_DIR / rel).is_file():
            raise FileNotFoundError(rel)
    return versions


def fetch() -> int:
    """Install the pinned npm packages and stage them; never fails the build."""
    digest = _lock_digest()
    if MANIFEST.is_file() and STAGE_DIR.is_dir():
        try:
            if json.loads(MANIFEST.read_text()).get("lock") == digest:
                print("offline assets: up to date in _build/.offline/")
                return 0
        except ValueError:
            pass
    MANIFEST.unlink(missing_ok=True)
    shutil.rmtree(STAGE_DIR, ignore_errors=True)
    npm = shutil.which("npm")
    if npm is None:
        print(WARNING.format(why="npm not found"), file=sys.stderr)
        return 0
    NPM_DIR.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copy2(LOCK_DIR / name, NPM_DIR / name)
    cmd = [npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--prefer-offline",
           "--loglevel=error"]
    try:
        subprocess.run(cmd, cwd=NPM_DIR, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True, timeout=600)
        versions = _stage(NPM_DIR / "node_modules")
    except subprocess.CalledProcessError as exc:
        last = (exc.stderr or "").strip().splitlines()[-1:] or ["no output"]
        print(WARNING.format(why=f"`npm ci` failed ({last[0].strip()})"), file=sys.stderr)
        shutil.rmtree(STAGE_DIR, ignore_errors=True)
        return 0
    except (OSError, subprocess.TimeoutExpired) as exc:
        print(WARNING.format(why=f"could not stage npm packages ({exc})"), file=sys.stderr)
        shutil.rmtree(STAGE_DIR, ignore_errors=True)
        return 0
    MANIFEST.write_text(json.dumps({"lock": digest, "versions": versions}, indent=2))
    print("offline assets: " + ", ".join(f"{k}@{v}" for k, v in versions.items())
          + " staged in _build/.offline/site/_vendor/")
    return 0


# --- Sphinx extension -------------------------------------------------------

SITE_EXTRA = ROOT / "tools" / "site_extra"  # our own glue, served as _vendor/widgets-shim.js
SHIM = f"{VENDOR}/widgets-shim.js"


def _configure(app, config) -> None:
    # Always: the widget glue (MathJax 2 API shim, icon-font path), then the manager.
    config.html_extra_path = [*config.html_extra_path, str(SITE_EXTRA)]
    widgets_js = {f"../{SHIM}": {}}
    # pydata-sphinx-theme logs a console error for an empty default colour mode.
    config.html_context = {"default_mode": "light", **config.html_context}
    if MANIFEST.is_file() and (STAGE_DIR / MATHJAX).is_file():
        config.html_extra_path.append(str(STAGE_DIR))
        # Sphinx prefixes relative script paths with "_static/", hence the "../".
        config.mathjax_path = f"../{MATHJAX}"
        # No data-jupyter-widgets-cdn: the built-in widget modules are bundled
        # in embed-amd.js; a third-party widget would need vendoring too.
        widgets_js.update({f"../{REQUIREJS}": {}, f"../{EMBED_AMD}": {}})
    else:  # fetch() already printed the one warning line; keep MyST-NB's CDN defaults
        from myst_nb.core.config import ipywidgets_js_factory

        cdn = ipywidgets_js_factory()
        embed = next(url for url in cdn if url.endswith("/embed-amd.js"))
        widgets_js[f"../{SHIM}"] = {"data-html-manager": embed.rsplit("/", 1)[0]}
        widgets_js.update(cdn)
    config.nb_ipywidgets_js = widgets_js


def _dedupe_scripts(app, pagename, templatename, context, doctree) -> None:
    # Some extensions (sphinx-thebe, sphinx-togglebutton) register their inline
    # config script once per build phase, and Jupyter Book runs two; a second
    # `const THEBE_JS_URL = ...` is a SyntaxError in the browser.
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for js in scripts:
        attrs = getattr(js, "attributes", {})
        # An inline script is registered with filename None once and "" the other time.
        key = (str(getattr(js, "filename", js) or ""), tuple(sorted(attrs.items())))
        if key not in seen:
            seen.add(key)
            unique.append(js)
    scripts[:] = unique


def _page_relative_fonts(app, exception) -> None:
    # NOTE: embed-amd.js injects its icon-font CSS with URLs relative to the AMD module id
    # "@jupyter-widgets/...", i.e. under the *page's* folder. widgets-shim.js maps that id onto
    # _vendor/html-manager/, but whether require.js sees the mapping before the manager
    # resolves the URLs is a race the browser test lost now and then (404s for the fonts).
    # Serving the same font files under every page folder's @jupyter-widgets/ ends the race.
    if exception is not None:
        return
    out = Path(app.outdir)
    fonts = [f for f in (out / VENDOR / "html-manager").glob("*")
             if f.suffix in (".woff2", ".woff", ".ttf", ".eot", ".svg")]
    if not fonts:
        return
    for folder in {p.parent for p in out.rglob("*.html") if VENDOR not in p.parts and "_static" not in p.parts}:
        target = folder / "@jupyter-widgets"
        target.mkdir(exist_ok=True)
        for f in fonts:
            shutil.copy2(f, target / f.name)


def setup(app):
    app.connect("build-finished", _page_relative_fonts)
    app.connect("config-inited", _configure, priority=100)
    app.connect("html-page-context", _dedupe_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    if sys.argv[1:] != ["fetch"]:
        sys.exit(f"usage: {Path(sys.argv[0]).name} fetch")
    sys.exit(fetch())
