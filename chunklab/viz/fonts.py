"""Chinese text in matplotlib figures.

matplotlib only knows the fonts in its cache, and the cache does not notice
fonts installed after it was built. :func:`use_cjk_font` therefore registers a
CJK font *file* explicitly (``fontManager.addfont``) and puts its family first
in ``font.sans-serif``. It looks for, in order:

1. Noto Sans CJK SC shipped inside the ``mplfonts`` wheel (a pip dependency,
   so it is there on every machine that installed the requirements);
2. Debian's ``fonts-noto-cjk`` (``/usr/share/fonts/opentype/noto``).

>>> import matplotlib
>>> family = use_cjk_font()
>>> matplotlib.rcParams["font.sans-serif"][0] == family
True
>>> matplotlib.rcParams["axes.unicode_minus"]
False
"""
from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path

__all__ = ["CJKFontNotFound", "cjk_font_path", "use_cjk_font"]

#: Font files tried inside the mplfonts package directory ``fonts/``.
_MPLFONTS_FILES = ("NotoSansCJKsc-Regular.otf", "SourceHanSerifSC-Regular.otf")

#: System font files tried after mplfonts (Debian fonts-noto-cjk and similar).
_SYSTEM_FILES = (
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/opentype/noto/NotoSansCJKsc-Regular.otf",
    "/usr/share/fonts/truetype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/noto-cjk/NotoSansCJK-Regular.ttc",
)


class CJKFontNotFound(RuntimeError):
    """No CJK font file was found; install the requirements (mplfonts) or fonts-noto-cjk."""


def _mplfonts_dir() -> Path | None:
    # find_spec locates the package without importing it (importing mplfonts
    # pulls in its CLI helpers, which we do not need).
    spec = importlib.util.find_spec("mplfonts")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "fonts"


def cjk_font_path() -> Path:
    """Path of the CJK font file :func:`use_cjk_font` registers.

    Raises :class:`CJKFontNotFound` when neither mplfonts nor a system Noto CJK font is there.
    """
    candidates: list[Path] = []
    font_dir = _mplfonts_dir()
    if font_dir is not None:
        candidates += [font_dir / name for name in _MPLFONTS_FILES]
    candidates += [Path(p) for p in _SYSTEM_FILES]
    for path in candidates:
        if path.is_file():
            return path
    raise CJKFontNotFound(
        "no CJK font found; `pip install mplfonts` or `apt-get install fonts-noto-cjk`. Tried: "
        + ", ".join(str(p) for p in candidates)
    )


@lru_cache(maxsize=None)
def _register(path: str) -> str:
    from matplotlib import font_manager

    font_manager.fontManager.addfont(path)
    return font_manager.FontProperties(fname=path).get_name()


def use_cjk_font() -> str:
    """Register a CJK font with matplotlib and make it the default sans-serif font.

    Also turns off ``axes.unicode_minus`` (CJK fonts often lack U+2212, which
    would show as a missing glyph on negative tick labels). Idempotent; returns
    the font family name, e.g. ``"Noto Sans CJK SC"``.
    """
    import matplotlib

    family = _register(str(cjk_font_path()))
    rc = matplotlib.rcParams
    rest = [f for f in rc["font.sans-serif"] if f != family]
    rc["font.sans-serif"] = [family, *rest]
    rc["font.family"] = ["sans-serif"]
    rc["axes.unicode_minus"] = False
    return family
