"""Preprocessing before chunking: generated PDFs, extraction with positions, reading order,
headers/footers, tables, OCR, and bad files."""
from __future__ import annotations

import re

import pytest

import chunklab
from chunklab import check_chunks
from chunklab.datasets import load_corpus
from chunklab.preprocess import (
    PdfError, cer, extract_many, extract_pdf, find_columns, locate, ocr_available, ocr_unavailable_reason,
    pages_of, pipeline, read_pages, remove_running_lines, to_markdown,
)
from chunklab.preprocess import ocr as ocr_mod
from chunklab.preprocess.layout import is_page_number
from chunklab.book.reading_order import (
    READING_ORDER_QUESTIONS, bm25_hits, evidence_presence, library_text, squash,
)
from chunklab.preprocess.pdf import EMPTY_PAGE, NO_TEXT_LAYER, Segment
from chunklab.book.pdfgen import HEADER_LEFT, build_pdfs, write_bad_pdfs
from chunklab.preprocess.tables import clean_cell

EVIDENCE = [q.evidence for q in READING_ORDER_QUESTIONS]


@pytest.fixture(scope="module")
def pdfs(tmp_path_factory):
    return build_pdfs(tmp_path_factory.mktemp("pdfs"))


@pytest.fixture(scope="module")
def bad(pdfs, tmp_path_factory):
    return write_bad_pdfs(tmp_path_factory.mktemp("bad"), pdfs["handbook_ch3"].path)


@pytest.fixture(scope="module")
def docs(pdfs):
    """The full pipeline (OCR off: the OCR tests run it once, separately) on every digital PDF."""
    return {name: pipeline(info.path, ocr=False) for name, info in pdfs.items() if info.layout != "scan"}


# -- generated PDFs -------------------------------------------------------------------------------

@pytest.mark.slow  # the first test to use the module's generated PDFs pays for generating them
def test_generated_set(pdfs):
    assert set(pdfs) == {"handbook_ch3", "remote_work_2col", "travel_table", "scanned_notice", "benefits_split"}
    assert pdfs["handbook_ch3"].n_pages >= 3 and pdfs["remote_work_2col"].n_pages == 2
    assert [len(t) for t in pdfs["travel_table"].tables] == [4, 4]       # 表 2 and 表 3: header + 3 rows
    assert pdfs["travel_table"].tables[0][1][:2] == ["一类：北京、上海、深圳、广州", "500"]
    for info in pdfs.values():
        assert len(info.page_texts) == info.n_pages


def test_generation_is_deterministic_and_cached(pdfs, tmp_path):
    again = build_pdfs(tmp_path, names=["travel_table"])
    data = open(again["travel_table"].path, "rb").read()
    assert data == open(pdfs["travel_table"].path, "rb").read()
    mtime = (tmp_path / "travel_table.pdf").stat().st_mtime_ns
    build_pdfs(tmp_path, names=["travel_table"])                         # unchanged: not rebuilt
    assert (tmp_path / "travel_table.pdf").stat().st_mtime_ns == mtime
    with pytest.raises(ValueError, match="unknown PDF name"):
        build_pdfs(tmp_path, names=["nope"])


# -- extraction with pages and positions -----------------------------------------------------------

def test_extraction_recovers_the_typeset_text(pdfs, docs):
    for name in ("handbook_ch3", "remote_work_2col", "travel_table"):
        truth = squash("".join(pdfs[name].page_texts))
        got = re.sub(r"\|(---\|)+", "", docs[name].text).replace(" | ", "").replace("|", "")   # table syntax
        assert squash(got) == truth, name


def test_raw_extraction_keeps_everything_with_page_numbers(pdfs):
    doc = extract_pdf(pdfs["handbook_ch3"].path)
    assert doc.meta["n_pages"] == pdfs["handbook_ch3"].n_pages
    assert doc.text.count(HEADER_LEFT) == doc.meta["n_pages"]          # nothing removed by plain extraction
    assert doc.meta["preprocess"][0]["step"] == "extract"
    spans = doc.meta["spans"]
    assert sorted({s["page"] for s in spans}) == list(range(1, doc.meta["n_pages"] + 1))
    for s in spans:
        assert len(s["chars"]) == s["end"] - s["start"]
        x0, top, x1, bottom = s["bbox"]
        assert 0 <= x0 < x1 <= 595 and 0 <= top < bottom <= 842
        assert s["chars"][0][0] == pytest.approx(x0, abs=0.02)


def test_spans_are_ordered_and_inside_the_text(docs):
    for doc in docs.values():
        prev_end = 0
        for s in doc.meta["spans"]:
            assert prev_end <= s["start"] < s["end"] <= len(doc.text)
            assert not doc.text[s["start"]:s["end"]].isspace()
            prev_end = s["end"]


def test_locate_cites_page_and_box(docs):
    doc = docs["remote_work_2col"]
    # the last clause of 第十四条 is the only line of page 2's right column
    a = doc.text.index("30 分钟内报告信息安全部应急热线")
    regions = locate(doc, a, a + 5)
    assert [r.page for r in regions] == [2]
    assert regions[0].x0 > 300                                          # right column
    # "30 分钟": two digits (0.555 em), a space (0.224 em), two ideographs (1 em), at 9.5 pt
    assert regions[0].x1 - regions[0].x0 == pytest.approx((2 * 0.555 + 0.224 + 2) * 9.5, abs=1)
    # 第十四条 starts at the foot of page 2's left column and ends at the top of its right column
    b = doc.text.index("第十四条")
    assert pages_of(doc, b, a + 10) == [2]
    assert [r.x0 < 300 for r in locate(doc, b, a + 10)] == [True, True, False]
    chunks = chunklab.get_strategy("recursive", target=200).split(doc)
    assert not check_chunks(doc, chunks)
    for c in chunks:
        boxes = locate(doc, c, merge=True)
        assert boxes and len(boxes) == len(pages_of(doc, c))
    with pytest.raises(TypeError, match="give end"):
        locate(doc, 3)
    assert locate(chunklab.Document("plain", "没有页面信息"), 0, 3) == []


def test_locate_across_a_page_break(docs):
    doc = docs["handbook_ch3"]
    first_on_2 = next(s for s in doc.meta["spans"] if s["page"] == 2)
    start = first_on_2["start"]
    assert pages_of(doc, start - 5, start + 5) == [1, 2]
    assert [r.page for r in locate(doc, start - 5, start + 5, merge=True)] == [1, 2]


# -- reading order ---------------------------------------------------------------------------------------

def test_evidence_strings_are_sentences_of_the_source():
    source = load_corpus("xiaobei")["remote_work_policy"].text.replace("**", "")
    assert len(READING_ORDER_QUESTIONS) >= 8
    assert all(e in source for e in EVIDENCE)


def test_columns_are_found_on_the_two_column_pages_only(pdfs):
    pages, _ = remove_running_lines(read_pages(pdfs["remote_work_2col"].path))
    for page in pages:
        cols = find_columns(page.segments)
        assert len(cols) == 2, page.number
        assert cols[0][1] < 300 < cols[1][0]
    for page in read_pages(pdfs["handbook_ch3"].path):
        assert len(find_columns(page.segments)) == 1


def test_find_columns_ignores_table_cells():
    # narrow aligned cells: gaps between them, but not running text
    cells = [Segment(1, v, x, 100 + 15 * i, x + 20, 110 + 15 * i, 10) for i in range(8) for x, v in
             ((64, "500"), (200, "600"), (340, "700"))]
    assert len(find_columns(cells)) == 1


def test_naive_order_breaks_evidence_layout_order_keeps_it(pdfs, docs):
    path = pdfs["remote_work_2col"].path
    naive = extract_pdf(path, order="naive")
    layout = docs["remote_work_2col"]
    n_naive = sum(evidence_presence(naive.text, EVIDENCE))
    n_lib = sum(evidence_presence(library_text(path), EVIDENCE))
    n_layout = sum(evidence_presence(layout.text, EVIDENCE))
    assert n_layout == len(EVIDENCE)
    assert n_naive <= len(EVIDENCE) // 2 and n_lib <= len(EVIDENCE) // 2
    hits_naive = sum(bm25_hits(naive, READING_ORDER_QUESTIONS, k=3))
    hits_layout = sum(bm25_hits(layout, READING_ORDER_QUESTIONS, k=3))
    assert hits_naive <= n_naive
    assert hits_layout >= len(EVIDENCE) - 2 > hits_naive
    assert layout.meta["columns"][1] and len(layout.meta["columns"][1]) == 2


def test_single_column_orders_agree(pdfs):
    path = pdfs["handbook_ch3"].path
    assert extract_pdf(path, order="naive").text == extract_pdf(path, order="columns").text


def test_order_is_validated(pdfs):
    with pytest.raises(ValueError, match="order must be one of"):
        pipeline(pdfs["handbook_ch3"].path, order="diagonal")
    with pytest.raises(ValueError, match="ocr must be"):
        pipeline(pdfs["handbook_ch3"].path, ocr="maybe")


# -- headers, footers, page numbers ------------------------------------------------------------------

def test_running_headers_and_footers_are_removed_and_recorded(pdfs, docs):
    doc = docs["handbook_ch3"]
    n = pdfs["handbook_ch3"].n_pages
    removed = doc.meta["removed"]
    assert HEADER_LEFT not in doc.text and not re.search(r"第 \d+ 页", doc.text)
    assert sum(r["text"] == HEADER_LEFT for r in removed) == n
    footers = [r for r in removed if r["where"] == "footer"]
    assert [r["page"] for r in footers] == list(range(1, n + 1))
    assert all(r["text"] == f"第 {r['page']} 页 / 共 {n} 页" for r in footers)
    assert all(r["reason"].startswith("running") and len(r["bbox"]) == 4 for r in removed)
    step = next(s for s in doc.meta["preprocess"] if s["step"] == "headers_footers")
    assert step["removed"] == len(removed) == 3 * n


def test_headers_left_in_break_evidence(pdfs, docs):
    # page 2's running header title sits at the top of the right column: read as its first line,
    # it lands inside 第十四条, whose sentence runs from the left column into the right one
    kept = pipeline(pdfs["remote_work_2col"].path, headers=False, ocr=False)
    assert "第 1 页 / 共 2 页" in kept.text
    assert sum(evidence_presence(kept.text, EVIDENCE)) < sum(evidence_presence(docs["remote_work_2col"].text, EVIDENCE))


def test_page_number_patterns():
    for text in ("第 3 页", "第3页/共9页", "- 12 -", "7 / 20", "Page 4 of 9", "15"):
        assert is_page_number(text), text
    for text in ("第三章 考勤与休假", "3.1 年假", "表 2", "2025 年 3 月 20 日"):
        assert not is_page_number(text), text


# -- tables -------------------------------------------------------------------------------------------

def test_tables_become_markdown_and_keep_every_cell(pdfs, docs):
    doc = docs["travel_table"]
    assert len(doc.meta["tables"]) == 2
    chunks = chunklab.get_strategy("table").split(doc)
    assert not check_chunks(doc, chunks)
    table_chunks = [c for c in chunks if c.meta.get("kind") == "table"]
    assert [c.meta["caption"][:3] for c in table_chunks] == ["表 2", "表 3"]
    for rows, c in zip(pdfs["travel_table"].tables, table_chunks):
        assert c.meta["header"] == rows[0]
        for row in rows:                       # every row, cell by cell, in order
            assert "| " + " | ".join(row) + " |" in c.text
    rows_mode = chunklab.get_strategy("table", mode="rows", rows=1, transcribe=True).split(doc)
    assert any("城市类别：二类：省会及计划单列市；P1–P2：400" in c.context for c in rows_mode)


def test_table_cells_are_located(docs):
    doc = docs["travel_table"]
    t = doc.meta["tables"][0]
    a = doc.text.index("1,200", t["start"])
    (region,) = locate(doc, a, a + 5)
    x0, top, x1, bottom = t["bbox"]
    assert region.page == t["page"] and x0 <= region.x0 < region.x1 <= x1 and top <= region.top < region.bottom <= bottom


def test_without_table_step_the_table_is_flattened(pdfs):
    doc = pipeline(pdfs["travel_table"].path, tables=False, ocr=False)
    assert doc.meta["tables"] == [] and "|---|" not in doc.text
    assert not [c for c in chunklab.get_strategy("table").split(doc) if c.meta.get("kind") == "table"]


def test_markdown_helpers():
    md, cells = to_markdown([["城市", "限额"], ["北京"]])
    assert md == "| 城市 | 限额 |\n|---|---|\n| 北京 |  |"
    assert [md[s:e] for _, _, s, e in cells] == ["城市", "限额", "北京", ""]
    assert clean_cell("M2（高级经理 /\n总监）") == "M2（高级经理 / 总监）"
    assert clean_cell(" a|b ") == "a\\|b" and clean_cell(None) == ""
    with pytest.raises(ValueError):
        to_markdown([])


# -- OCR -------------------------------------------------------------------------------------------------

def test_cer():
    assert cer("北辰智联", "北辰智联") == 0.0
    assert cer("北辰智联", "北辰智连") == 0.25
    assert cer("第 1 页\n", "第1页") == 0.0                 # whitespace is not counted
    assert cer("住宿：", "住宿:") == pytest.approx(1 / 3)
    assert cer("住宿：", "住宿:", fold_width=True) == 0.0
    assert cer("", "") == 0.0 and cer("", "字") == 1.0
    assert cer("甲", "甲乙丙") == 2.0                       # insertions can exceed 1


def test_ocr_reports_missing_language_and_files(tmp_path):
    assert "xxx_fake" in ocr_unavailable_reason("xxx_fake")
    with pytest.raises(ocr_mod.OcrError, match="cannot OCR"):
        ocr_mod.ocr_image(tmp_path / "none.png", lang="xxx_fake")


def test_missing_language_is_named_with_or_without_tesseract(tmp_path, monkeypatch):
    monkeypatch.setattr(ocr_mod.shutil, "which", lambda name: None)  # a machine without Tesseract
    assert "xxx_fake" in ocr_unavailable_reason("xxx_fake") and "tesseract-ocr" in ocr_unavailable_reason("xxx_fake")
    with pytest.raises(ocr_mod.OcrError, match="cannot OCR"):
        ocr_mod.ocr_image(tmp_path / "none.png", lang="xxx_fake")


def test_without_tesseract_the_scanned_page_is_a_recorded_skip(pdfs, monkeypatch):
    monkeypatch.setattr(ocr_mod.shutil, "which", lambda name: None)
    assert not ocr_available()
    doc = pipeline(pdfs["scanned_notice"].path)                       # ocr="auto": skip, no crash
    (skip,) = doc.meta["skipped_pages"]
    assert skip["page"] == 1 and NO_TEXT_LAYER in skip["reason"] and "not installed" in skip["reason"]
    with pytest.raises(RuntimeError, match="OCR cannot run"):
        pipeline(pdfs["scanned_notice"].path, ocr=True)


def test_ocr_off_records_the_skip(pdfs):
    doc = pipeline(pdfs["scanned_notice"].path, ocr=False)
    assert doc.text == "" and doc.meta["skipped_pages"] == [{"page": 1, "reason": f"{NO_TEXT_LAYER}; OCR is off"}]


@pytest.mark.skipif(not ocr_available("chi_sim"), reason=f"OCR step skipped: {ocr_unavailable_reason('chi_sim')}")
@pytest.mark.slow
def test_ocr_of_the_scanned_page(pdfs, tmp_path):
    info = pdfs["scanned_notice"]
    doc = pipeline(info.path, ocr=True)
    truth = info.page_texts[0]
    rate = cer(truth, doc.text)
    assert rate < 0.08, rate                              # measured 3.5% with tesseract 5.3.0 chi_sim
    assert cer(truth, doc.text, fold_width=True) <= rate
    assert doc.meta["ocr"][1]["dpi"] == 200 and doc.meta["ocr"][1]["lines"] >= 15
    assert [s["kind"] for s in doc.meta["spans"]] == ["ocr"] * len(doc.meta["spans"])
    assert locate(doc, 0, 4)[0].page == 1
    assert "招商银行借记卡" in squash(doc.text)
    # the wrapper on an image file directly
    import pdfplumber
    png = tmp_path / "scan.png"
    with pdfplumber.open(info.path) as pdf:
        pdf.pages[0].to_image(resolution=200).original.convert("L").save(png)
    assert cer(truth, ocr_mod.ocr_image(png)) < 0.08


@pytest.mark.skipif(not ocr_available("chi_sim"), reason=f"OCR step skipped: {ocr_unavailable_reason('chi_sim')}")
def test_ocr_image_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        ocr_mod.ocr_image(tmp_path / "missing.png")


# -- bad files ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, message", [
    ("truncated", "truncated or damaged"),
    ("encrypted", "password-protected PDF: no password was given"),
    ("not_pdf", "not a readable PDF"),
    ("zero_bytes", "empty file"),
])
def test_bad_files_give_clear_errors(bad, name, message):
    with pytest.raises(PdfError, match=message) as info:
        pipeline(bad[name])
    assert info.value.path == str(bad[name])


def test_password_protected_with_password(bad):
    with pytest.raises(PdfError, match="wrong password"):
        pipeline(bad["encrypted"], password="guess")
    doc = pipeline(bad["encrypted"], password="xiaobei", ocr=False)
    assert "3.1 年假" in doc.text


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(PdfError, match="no such file"):
        extract_pdf(tmp_path / "missing.pdf")
    with pytest.raises(PdfError, match="folder"):
        extract_pdf(tmp_path)


def test_empty_page_is_a_recorded_skip(bad):
    doc = pipeline(bad["empty_page"], ocr=False)
    assert doc.meta["skipped_pages"] == [{"page": 2, "reason": EMPTY_PAGE}]
    assert sorted({s["page"] for s in doc.meta["spans"]}) == [1, 3]
    assert doc.meta["preprocess"][0]["skipped_pages"] == [2]


def test_extract_many_never_crashes(pdfs, bad, tmp_path):
    paths = [pdfs["travel_table"].path, *bad.values(), tmp_path / "missing.pdf", pdfs["handbook_ch3"].path]
    documents, failures = extract_many(paths, ocr=False)
    assert [d.id for d in documents] == ["travel_table", "empty_page", "handbook_ch3"]
    reasons = {f.path.rsplit("/", 1)[-1]: f.error for f in failures}
    assert set(reasons) == {"truncated.pdf", "encrypted.pdf", "not_pdf.pdf", "zero_bytes.pdf", "missing.pdf"}
    assert "password" in reasons["encrypted.pdf"]


def test_pipeline_records_every_step(docs):
    steps = [s["step"] for s in docs["travel_table"].meta["preprocess"]]
    assert steps == ["extract", "headers_footers", "footnotes", "reading_order", "tables"]
    for doc in docs.values():
        assert not check_chunks(doc, chunklab.get_strategy("recursive", target=300).split(doc))
