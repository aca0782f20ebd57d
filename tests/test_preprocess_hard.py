"""The hard cases of document preprocessing: formulas kept whole, figures out of the text, merged
cells, tables across pages, footnotes, sub/superscripts, columns full of small pieces, page subsets."""
from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import chunklab
from chunklab import check_chunks
from chunklab.core import Chunk, Document
from chunklab.book.pdfgen import build_pdfs
from chunklab.book.reading_order import cells_matched, evidence_presence, markdown_grid, order_score
from chunklab.preprocess import (attach_figures, find_columns, find_footnotes, find_formulas, join_continued_tables,
                                 keep_whole, move_footnotes, pipeline)
from chunklab.preprocess.atoms import cuts_inside
from chunklab.preprocess.model import Page, Segment
from chunklab.preprocess.chars import segments_from_chars
from chunklab.preprocess.pdf import build_document, figure_records
from chunklab.preprocess.tables import fill_merged, grid_spans, to_markdown


# -- formulas ---------------------------------------------------------------------------------------

def test_find_formulas_kinds():
    text = ("公式 \\begin{equation}E = mc^2\\end{equation} 与 $$\\int_0^1 x\\,dx$$，"
            "行内 $a+b$ 和 \\(x\\)；算式 80 元 × 4 − 30 元 × 2 = 260 元，399×12×3。"
            "不是公式：7×24 小时，3/4，2025-03-01。")
    found = [(text[a:b], k) for a, b, k in find_formulas(text)]
    assert ("\\begin{equation}E = mc^2\\end{equation}", "latex_env") in found
    assert ("$$\\int_0^1 x\\,dx$$", "latex_display") in found
    assert ("$a+b$", "latex_inline") in found and ("\\(x\\)", "latex_inline") in found
    assert ("80 元 × 4 − 30 元 × 2 = 260 元", "arithmetic") in found
    assert ("399×12×3", "arithmetic") in found
    assert not any(t.startswith(("7×24", "3/4", "2025")) for t, _ in found)
    spans = find_formulas(text)
    assert all(b1 <= a2 for (_, b1, _), (a2, _, _) in zip(spans, spans[1:]))     # ordered, disjoint


_piece = st.one_of(
    st.text(alphabet="甲乙丙丁，。 ab", min_size=0, max_size=12),
    st.builds(lambda a, b, c: f"{a} × {b} = {c}", st.integers(0, 999), st.integers(0, 99), st.integers(0, 9999)),
    st.builds(lambda x: f"$${x}$$", st.text(alphabet="xyz+-^", min_size=1, max_size=8)),
)


@settings(max_examples=150, deadline=None)
@given(pieces=st.lists(_piece, min_size=1, max_size=12), cuts=st.lists(st.integers(1, 400), max_size=12))
def test_keep_whole_tiles_the_text_and_never_cuts_a_formula(pieces, cuts):
    text = "".join(pieces)
    doc = Document("d", text)
    bounds = sorted({0, len(text), *(c % (len(text) + 1) for c in cuts)})
    chunks = [Chunk("d", i, a, b, text[a:b]) for i, (a, b) in enumerate(zip(bounds, bounds[1:])) if b > a]
    if not chunks:
        return
    spans = find_formulas(text)
    fixed = keep_whole(doc, chunks)
    assert not check_chunks(doc, fixed)
    assert cuts_inside(fixed, spans) == []
    assert fixed[0].start == 0 and fixed[-1].end == len(text)
    assert all(a.end == b.start for a, b in zip(fixed, fixed[1:]))             # still a tiling
    assert [c.index for c in fixed] == list(range(len(fixed)))
    for a, b, _ in spans:                                                       # each formula in one chunk
        assert sum(c.start <= a and b <= c.end for c in fixed) == 1


def test_keep_whole_on_a_real_strategy():
    doc = chunklab.load_corpus("xiaobei")["faq_hr"]
    chunks = chunklab.get_strategy("fixed", size=40).split(doc)
    spans = find_formulas(doc.text)
    assert spans and cuts_inside(chunks, spans)                                 # the small windows do cut one
    fixed = keep_whole(doc, chunks)
    assert cuts_inside(fixed, spans) == [] and not check_chunks(doc, fixed)
    assert any(c.meta.get("kept_whole") for c in fixed)


# -- merged cells, tables across pages ------------------------------------------------------------------

def test_grid_spans_and_fill():
    # | A (2 cols) |  | C |      row 0
    # | a | b | c (2 rows) |     rows 1-2
    # | d | e |   |
    boxes = [[(0, 0, 20, 10), None, (20, 0, 30, 10)],
             [(0, 10, 10, 20), (10, 10, 20, 20), (20, 10, 30, 30)],
             [(0, 20, 10, 30), (10, 20, 20, 30), None]]
    spans = grid_spans(boxes, [0, 10, 20, 30], [0, 10, 20, 30])
    assert spans == [(0, 0, 1, 2), (1, 2, 2, 1)]
    rows = fill_merged([["A", "", "C"], ["a", "b", "c"], ["d", "e", ""]], spans)
    assert rows == [["A", "A", "C"], ["a", "b", "c"], ["d", "e", "c"]]


def _table_segment(page, rows, top, bottom):
    text, cells = to_markdown(rows)
    located = tuple((s, e, (64.0, top, 530.0, bottom)) for _, _, s, e in cells if e > s)
    return Segment(page, text, 64.0, top, 530.0, bottom, 10.0, kind="table", cells=located, table_kind="ruled",
                   pages=(page,))


@pytest.mark.parametrize("repeat", [True, False])
def test_join_continued_tables(repeat):
    head = ["城市", "住宿"]
    part1 = [head, ["北京", "600"], ["上海", "600"]]
    part2 = ([head] if repeat else [["南京", "450"]]) + [["杭州", "450"], ["成都", "400"]]
    pages = [Page(1, 595, 842, [Segment(1, "表 2 住宿标准", 64, 600, 200, 610, 10), _table_segment(1, part1, 620, 760)]),
             Page(2, 595, 842, [_table_segment(2, part2, 80, 140), Segment(2, "第十七条 合住。", 64, 160, 200, 170, 10)])]
    joins = join_continued_tables(pages)
    assert joins == [{"pages": [1, 2], "rows_added": 2 if repeat else 3, "header_repeated": repeat}]
    assert all(s.kind != "table" for s in pages[1].segments)
    doc = build_document(pages, "t")
    (table,) = doc.meta["tables"]
    assert table["pages"] == [1, 2]
    grid = markdown_grid(doc.text[table["start"]:table["end"]])
    want = [head, ["北京", "600"], ["上海", "600"]] + ([] if repeat else [["南京", "450"]]) + [["杭州", "450"], ["成都", "400"]]
    assert grid == want
    cells = [s for s in doc.meta["spans"] if s["kind"] == "cell"]
    assert {s["page"] for s in cells} == {1, 2}
    for s in cells:                                                             # every cell cites its own text and page
        assert doc.text[s["start"]:s["end"]] in {c for r in want for c in r}
    assert {doc.text[s["start"]:s["end"]]: s["page"] for s in cells}["成都"] == 2


def test_tables_on_non_adjacent_pages_are_not_joined():
    t = _table_segment(1, [["a", "b"], ["1", "2"]], 620, 760)
    u = _table_segment(3, [["a", "b"], ["3", "4"]], 80, 140)
    assert join_continued_tables([Page(1, 595, 842, [t]), Page(3, 595, 842, [u])]) == []
    v = _table_segment(2, [["a", "b", "c"], ["3", "4", "5"]], 80, 140)                  # other column count
    assert join_continued_tables([Page(1, 595, 842, [t]), Page(2, 595, 842, [v])]) == []


@pytest.fixture(scope="module")
def split_pdf(tmp_path_factory):
    return build_pdfs(tmp_path_factory.mktemp("split"), names=["benefits_split"])["benefits_split"]


def test_generated_table_across_pages_is_joined(split_pdf):
    joined = pipeline(split_pdf.path, ocr=False)
    apart = pipeline(split_pdf.path, ocr=False, join_tables=False)
    assert len(apart.meta["tables"]) == 2 and [t["page"] for t in apart.meta["tables"]] == [1, 2]
    (table,) = joined.meta["tables"]
    assert table["pages"] == [1, 2]
    truth = split_pdf.tables[0]
    grid = markdown_grid(joined.text[table["start"]:table["end"]])
    assert cells_matched(grid, truth) == (sum(len(r) for r in truth),) * 2
    step = next(s for s in joined.meta["preprocess"] if s["step"] == "tables")
    (join,) = step["joined_across_pages"]
    assert join["pages"] == [1, 2] and join["header_repeated"]
    assert join["rows_added"] == apart.meta["tables"][1]["rows"] - 1           # page 2's rows, its header dropped
    assert not check_chunks(joined, chunklab.get_strategy("table", mode="rows", rows=1).split(joined))


# -- footnotes -----------------------------------------------------------------------------------------

def _line(page, text, top, x1=531.0, size=10.5):
    return Segment(page, text, 64.0, top, x1, top + size, size)


def test_footnotes_leave_the_sentence_they_interrupt():
    sentence = "出差住宿费按城市类别和职级在标准内凭票据实报销，标准为每人每晚的上限金额。"
    pages = [Page(1, 595, 842, [_line(1, sentence[:20], 717.0), _line(1, "1 天津、重庆按二类城市执行。", 790.0, 220.0, 8.0),
                                _line(1, "续上行的脚注文字。", 800.0, 150.0, 8.0)]),
             Page(2, 595, 842, [_line(2, sentence[20:], 78.0, 300.0)])]
    assert [s.text for s in find_footnotes(pages[0], body=10.5)] == ["1 天津、重庆按二类城市执行。", "续上行的脚注文字。"]
    assert find_footnotes(pages[1], body=10.5) == []
    assert evidence_presence(build_document(pages, "d").text, [sentence]) == [False]
    moved, notes = move_footnotes(pages)
    doc = build_document(moved, "d", footnotes=notes)
    assert evidence_presence(doc.text, [sentence]) == [True]
    assert doc.text.endswith("1 天津、重庆按二类城市执行。\n续上行的脚注文字。")
    assert [n["page"] for n in doc.meta["footnotes"]] == [1, 1]
    for n in doc.meta["footnotes"]:
        assert doc.text[n["start"]:n["end"]] in {s.text for s in notes}


def test_small_text_without_a_mark_is_not_a_footnote():
    page = Page(1, 595, 842, [_line(1, "正文一行。", 100.0), _line(1, "图 1 说明文字，小字号。", 790.0, 200.0, 8.0)])
    assert find_footnotes(page) == []
    body_below = Page(1, 595, 842, [_line(1, "1 小字", 600.0, 100.0, 8.0), _line(1, "正文在它下面。", 700.0)])
    assert find_footnotes(body_below) == []


# -- figures ---------------------------------------------------------------------------------------------

def test_figures_are_anchored_by_offset_and_stay_out_of_the_text():
    page = Page(1, 595, 842, [_line(1, "第一段文字。", 100.0, 200.0), _line(1, "第二段，图在它下面。", 130.0, 250.0),
                              _line(1, "图 1 系统结构", 330.0, 160.0), _line(1, "第三段。", 360.0, 150.0)],
                figures=[(100.0, 150.0, 400.0, 320.0)])
    doc = build_document([page], "d")
    (fig,) = doc.meta["figures"]
    assert fig["anchor"] == doc.text.index("第二段，图在它下面。") + len("第二段，图在它下面。")
    assert fig["caption"] == "图 1 系统结构" and doc.text[slice(*fig["caption_span"])] == "图 1 系统结构"
    chunks = [Chunk("d", 0, 0, 8, doc.text[:8]), Chunk("d", 1, 8, len(doc.text), doc.text[8:])]
    linked = attach_figures(doc, chunks)
    assert [bool(c.meta.get("figures")) for c in linked] == [False, True]
    assert [c.text for c in linked] == [c.text for c in chunks]
    assert figure_records(Page(2, 595, 842, []), [], []) == []


# -- sub/superscripts, columns of small pieces, page subsets -----------------------------------------------------

def _char(text, x0, top, size):
    return {"text": text, "x0": x0, "x1": x0 + size * 0.6, "top": top, "bottom": top + size, "size": size}


def test_subscripts_join_their_line():
    chars = [_char("x", 100, 100, 10), _char("1", 106.5, 104, 7), _char(",", 111, 100, 10), _char("x", 117, 100, 10),
             _char("2", 123.5, 104, 7), _char("下", 100, 130, 10)]
    segs = segments_from_chars(chars, 1)
    assert [s.text for s in segs] == ["x1,x2", "下"]


def test_columns_with_many_small_pieces_are_still_columns():
    left, right = [], []
    for i in range(12):
        y = 100 + 30 * i
        left.append(Segment(1, "甲" * 22, 60, y, 280, y + 10, 10))
        right.append(Segment(1, "乙" * 22, 320, y, 540, y + 10, 10))
        for k in range(4):                                            # answer options and subscripts
            left.append(Segment(1, "A.", 60 + 55 * k, y + 15, 75 + 55 * k, y + 25, 10))
            right.append(Segment(1, "1", 330 + 50 * k, y + 14, 334 + 50 * k, y + 21, 7))
    cols = find_columns(left + right)
    assert len(cols) == 2 and cols[0][1] < 300 < cols[1][0]


def test_pipeline_on_a_page_subset(split_pdf):
    doc = pipeline(split_pdf.path, ocr=False, pages=[2])
    assert {s["page"] for s in doc.meta["spans"]} == {2}
    assert doc.meta["preprocess"][0]["only_pages"] == [2]
    with pytest.raises(ValueError, match="no page 9"):
        pipeline(split_pdf.path, ocr=False, pages=[9])


def test_order_score_counts_pairs():
    r = order_score("丙 甲 乙", ["甲", "乙", "丙"])
    assert (r["found"], r["pairs"], r["pairs_in_order"]) == (3, 3, 1)
    assert re.fullmatch(r"0\.33+\d*", f"{r['order_accuracy']}")
