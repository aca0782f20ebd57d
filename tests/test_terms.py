"""One Chinese term per idea: no chapter uses a retired synonym, and the glossary declares every term."""
from pathlib import Path

import jupytext
import pytest

from chunklab.book.terms import TERMS, retired_uses

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted(p for p in (ROOT / "chapters").glob("*.md"))


def _prose(path: Path) -> str:
    return "\n".join(c.source for c in jupytext.read(path).cells if c.cell_type == "markdown")


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_uses_no_retired_synonym(path):
    found = [f"{found!r} (say {term.zh!r})" for term, found, _ in retired_uses(_prose(path))]
    assert not found, f"{path.name}: retired terms in prose: {', '.join(found)}"


def test_retired_uses_finds_synonyms_and_skips_code():
    assert [f for _, f, _ in retired_uses("走兜底链；块大小；症状 diluted")] == ["兜底", "块大小", "diluted"]
    assert retired_uses("症状 `diluted`，见 {eval}`ch1_dil` 与 [链接](ch1_why.md#兜底)") == []


def test_glossary_declares_every_term_with_its_code_name():
    glossary = (ROOT / "chapters" / "appendix_glossary.md").read_text(encoding="utf-8")
    assert "terms_table()" in glossary, "the glossary shows chunklab.book.terms.terms_table()"
    for term in TERMS:
        name = term.zh.split("（")[0]
        assert name in glossary, f"the glossary does not define {term.zh!r}"
