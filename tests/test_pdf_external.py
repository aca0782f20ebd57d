"""Real PDFs nobody here wrote (Debian texlive-lang-chinese examples, fetched by tools/system_deps.sh)
scored against the hand-made answer key in data/external/answer_key.json."""
from __future__ import annotations

from pathlib import Path

import pytest

import chunklab
from chunklab import check_chunks
from chunklab.book.pdfgen import (EXTERNAL_PACKAGE, EXTERNAL_PDFS, answer_key, external_dir, external_missing_reason,
                                  external_pdf)
from chunklab.book.reading_order import cells_matched, markdown_grid, order_score, squash
from chunklab.preprocess import attach_figures, ocr_available, pipeline

ROOT = Path(__file__).resolve().parents[1]
EXAM, NJU = "exam-zh-example-multiple.pdf", "njurepo-example.pdf"


def _need(name):
    path = external_pdf(name)
    if path is None:
        pytest.skip(external_missing_reason(name))
    return path


def test_system_deps_knows_the_same_files():
    script = (ROOT / "tools" / "system_deps.sh").read_text("utf-8")
    assert f"deb_pkg={EXTERNAL_PACKAGE}" in script
    for name, inside in EXTERNAL_PDFS.items():
        assert f'"{inside} {name}"' in script
    assert "_build/external" in script and "apt-get download" in script
    key = answer_key()
    assert set(EXTERNAL_PDFS) <= set(key)


def test_external_pdfs_exist_after_system_deps():
    """After `tools/system_deps.sh book` the PDFs are in _build/external; when the .deb could not be
    fetched (no Debian mirror), the test says so and skips."""
    debs = list((ROOT / "_build" / "cache" / "debs").glob(f"{EXTERNAL_PACKAGE}_*.deb"))
    missing = [n for n in EXTERNAL_PDFS if external_pdf(n) is None]
    if missing and not debs:
        pytest.skip(f"{EXTERNAL_PACKAGE} was not fetched: {external_missing_reason(missing[0])}")
    assert not missing, f"the .deb is cached but {missing} were not extracted into {external_dir()}"
    for name in EXTERNAL_PDFS:
        assert external_pdf(name).read_bytes()[:5] == b"%PDF-"


def test_missing_reason_names_the_command(monkeypatch, tmp_path):
    monkeypatch.setenv("CHUNKLAB_EXTERNAL_DIR", str(tmp_path))
    assert external_pdf(EXAM) is None
    assert "tools/system_deps.sh book" in external_missing_reason(EXAM)
    with pytest.raises(ValueError, match="unknown external PDF"):
        external_pdf("nope.pdf")


def test_exam_reading_order_against_the_key():
    path = _need(EXAM)
    k = answer_key()[EXAM]
    naive = pipeline(path, pages=[k["page"]], order="naive", ocr=False)
    cols = pipeline(path, pages=[k["page"]], ocr=False)
    assert len(cols.meta["columns"][k["page"]]) == 2
    r_naive, r_cols = order_score(naive.text, k["reading_order"]), order_score(cols.text, k["reading_order"])
    assert r_cols["found"] == r_naive["found"] >= 20
    assert r_cols["order_accuracy"] == 1.0 > 0.9 > r_naive["order_accuracy"]
    assert cols.meta["preprocess"][0]["unmapped_glyphs"][k["page"]] > 0      # bold headings without Unicode
    assert "𝑥1,𝑥2,⋯,𝑥𝑛" in cols.text                                          # subscripts back on their line
    assert not check_chunks(cols, chunklab.get_strategy("recursive", target=300).split(cols))


@pytest.mark.slow
@pytest.mark.skipif(not ocr_available("chi_sim"), reason="Tesseract with chi_sim is not installed")
def test_exam_unmapped_headings_are_read_by_ocr():
    path = _need(EXAM)
    k = answer_key()[EXAM]
    doc = pipeline(path, pages=[k["page"]], ocr=True)
    r = order_score(doc.text, k["reading_order"])
    assert r["found"] >= len(k["reading_order"]) - 1 and r["order_accuracy"] == 1.0
    step = next(s for s in doc.meta["preprocess"] if s["step"] == "ocr")
    assert step["unmapped_segments"][k["page"]] >= 4


def test_exam_figure_is_anchored_to_its_question():
    path = _need(EXAM)
    k = answer_key()[EXAM]
    doc = pipeline(path, pages=[k["figure_page"]], ocr=False)
    (fig,) = doc.meta["figures"]
    assert fig["page"] == k["figure_page"] and fig["caption"] is None
    chunks = attach_figures(doc, chunklab.get_strategy("recursive", target=300).split(doc))
    (holder,) = [c for c in chunks if c.meta.get("figures")]
    assert k["figure_follows"] in squash(holder.text)


def test_njurepo_tables_against_the_key():
    path = _need(NJU)
    k = answer_key()[NJU]
    docs = {m: pipeline(path, pages=[k["page"]], merged=m, ocr=False) for m in ("fill", "empty")}
    scores = {}
    for m, d in docs.items():
        (ruled,) = [t for t in d.meta["tables"] if t["kind"] == "ruled"]
        scores[m] = cells_matched(markdown_grid(d.text[ruled["start"]:ruled["end"]]), k["merged_table"])
        assert len(ruled["merged"]) == k["merged_cells"]
    assert scores["fill"] == (35, 35) and scores["empty"][0] < 35
    rules = [t for t in docs["fill"].meta["tables"] if t["kind"] == "rules"]
    assert len(rules) == len(k["rule_tables"])
    for t, expected in zip(rules, k["rule_tables"]):
        got = markdown_grid(docs["fill"].text[t["start"]:t["end"]])
        assert cells_matched(got, expected) == (4, 4)
