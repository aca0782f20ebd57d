"""chunklab.viz.fonts: Chinese renders in matplotlib figures without missing glyphs."""
from __future__ import annotations

import io
import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from chunklab.viz import fonts  # noqa: E402

LABELS = ("切分决定召回上限", "块大小（字符）", "召回上限：答案被完整保留的比例")


def _render(family: list[str] | None = None) -> None:
    """Draw a figure with Chinese labels and negative ticks, and rasterise it."""
    rc = {"font.family": family} if family else {}
    with matplotlib.rc_context(rc):
        fig, ax = plt.subplots(figsize=(3, 2))
        try:
            ax.plot([-2, -1, 0, 1], [-1, 0, 1, 2], label=LABELS[2])
            ax.set_title(LABELS[0])
            ax.set_xlabel(LABELS[1])
            ax.legend()
            fig.savefig(io.BytesIO(), format="png")
        finally:
            plt.close(fig)


def test_font_file_exists_and_is_cjk():
    path = fonts.cjk_font_path()
    assert path.is_file()
    family = fonts.use_cjk_font()
    assert any(k in family for k in ("CJK", "Han", "Hei")), family


def test_use_cjk_font_sets_rcparams_and_is_idempotent():
    family = fonts.use_cjk_font()
    assert fonts.use_cjk_font() == family
    assert matplotlib.rcParams["font.sans-serif"][0] == family
    assert matplotlib.rcParams["font.sans-serif"].count(family) == 1
    assert matplotlib.rcParams["axes.unicode_minus"] is False


def test_chinese_labels_render_without_missing_glyph_warning():
    fonts.use_cjk_font()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Glyph ... missing from font" becomes an exception
        _render()


def test_the_check_above_would_catch_a_missing_glyph():
    # Control: with a Latin-only font the same figure does warn, so the test
    # above is not passing vacuously.
    fonts.use_cjk_font()
    with pytest.warns(UserWarning, match="Glyph .* missing"):
        _render(family=["DejaVu Sans"])


def test_no_font_found_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(fonts, "_mplfonts_dir", lambda: None)
    monkeypatch.setattr(fonts, "_SYSTEM_FILES", ())
    with pytest.raises(fonts.CJKFontNotFound, match="fonts-noto-cjk"):
        fonts.cjk_font_path()
