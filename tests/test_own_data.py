"""Measuring chunking on your own documents, questions and splitter (issue #18).

A new user's question file (free ``difficulty`` and ``type`` labels, documents named by file name),
evidence pinned by offsets or occurrence, a folder whose files share stems, PDFs in a folder corpus,
Chroma's benchmark CSV, and the tokeniser and another library's splitter chosen on the command line.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from chunklab import Document
from chunklab.cli import main
from chunklab.datasets import Corpus, load_corpus
from chunklab.datasets import files as dfiles
from chunklab.datasets.questions import (EvidenceError, GoldSpan, QuestionFormatError, check_questions,
                                         dump_questions, load_questions, parse_questions, summarize)
from chunklab.preprocess import ocr as ocr_mod
from jsonl_files import write_jsonl

DATA = Path(__file__).resolve().parent / "data"
CHROMA = DATA / "chroma"


def one_error_line(capsys, argv, *fragments, status=2):
    assert main(argv) == status
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err, err
    for f in fragments:
        assert f in err, err
    return err


# -- a folder like a new user's: stems shared, files in sub-folders ---------------------------------

@pytest.fixture()
def folder(tmp_path):
    root = tmp_path / "docs"
    (root / "json").mkdir(parents=True)
    (root / "csv.py").write_text('"""CSV parsing and writing."""\nQUOTE_MINIMAL = 0\ndef reader(f):\n    return iter(f)\n',
                                 encoding="utf-8")
    (root / "decoder.py").write_text('"""A toy decoder."""\ndef decode(s):\n    return s[::-1]\n', encoding="utf-8")
    (root / "json" / "decoder.py").write_text('"""JSON decoder."""\nclass JSONDecodeError(ValueError):\n    pass\n',
                                              encoding="utf-8")
    (root / "json" / "encoder.py").write_text('"""JSON encoder."""\nINFINITY = float("inf")\n', encoding="utf-8")
    (root / "a.md").write_text("# 报销\n\n差旅报销须在出差结束后十个工作日内提交。\n", encoding="utf-8")
    (root / "a.txt").write_text("会议纪要：下周三上线新版报销系统。\n", encoding="utf-8")
    return root


def test_ids_are_short_unless_they_would_clash(folder):
    corpus = load_corpus(folder)
    assert [d.id for d in corpus] == ["a.md", "a.txt", "csv", "decoder", "json/decoder", "json/encoder"]
    # a stem that is another file's full path keeps its suffix too: ids never collide
    assert dfiles.folder_ids(["a.md", "a.md.txt", "b.txt"]) == ["a", "a.md.txt", "b"]
    assert dfiles.folder_ids(["x/a.md", "x/a.pdf", "a.md"]) == ["x/a.md", "x/a.pdf", "a"]


def test_the_book_corpora_keep_their_ids():
    xb = load_corpus("xiaobei")
    assert {"employee_handbook", "billing/refunds", "billing/__init__", "weekly_reports/2025-w18"} <= set(xb.by_id)
    assert all("." not in d.id.rpartition("/")[2] or d.id.endswith("__init__") for d in xb)
    assert [d.id for d in load_corpus("stdlib")][:2] == ["json", "json.decoder"]


@pytest.mark.parametrize("key, doc_id", [
    ("csv.py", "csv"), ("csv", "csv"), ("json/decoder.py", "json/decoder"), ("json/decoder", "json/decoder"),
    ("decoder", "decoder"), ("decoder.py", "decoder"), ("encoder.py", "json/encoder"), ("encoder", "json/encoder"),
    ("a.md", "a.md"), ("a.txt", "a.txt"), ("JSON decoder.", "json/decoder"),
])
def test_doc_may_be_a_path_a_file_name_or_a_stem(folder, key, doc_id):
    corpus = load_corpus(folder)
    assert [d.id for d in corpus.lookup(key)] == [doc_id]
    (q,) = parse_questions([json.dumps({"id": "q", "question": "?", "evidence": corpus[doc_id].text[:3], "doc": key,
                                        "occurrence": 0})], corpus)
    assert q.spans[0].doc_id == doc_id and q.doc == key


def test_an_ambiguous_doc_lists_the_candidates(folder, tmp_path):
    corpus = load_corpus(folder)
    qs = write_jsonl(tmp_path / "q.jsonl", [{"id": "q1", "question": "?", "evidence": "报销", "doc": "a"}])
    _, problems = check_questions(qs, corpus)
    (p,) = problems
    assert p.line == 1 and "doc 'a' is ambiguous: it names 2 documents ('a.md', 'a.txt')" in p.message
    assert "use the id or the relative path" in p.message


def test_stdlib_documents_answer_to_their_file_names():
    corpus = load_corpus("stdlib")
    assert [d.id for d in corpus.lookup("json/decoder.py")] == ["json.decoder"]
    assert [d.id for d in corpus.lookup("csv.py")] == ["csv"]
    assert len(corpus.lookup("__init__.py")) == 1  # json/__init__.py only


# -- the question file of a new user ----------------------------------------------------------------

def test_medium_difficulty_and_file_name_docs_validate(folder, tmp_path, capsys):
    records = [
        {"id": "q1", "question": "报销多久内交？", "evidence": "出差结束后十个工作日内提交", "doc": "a.md",
         "type": "policy", "difficulty": "medium"},
        {"id": "q2", "question": "What does decode do?", "evidence": "return s[::-1]", "doc": "decoder.py",
         "difficulty": "medium"},
        {"id": "q3", "question": "Which error does the JSON decoder raise?", "evidence": "class JSONDecodeError(ValueError)",
         "doc": "json/decoder.py", "type": "代码", "difficulty": "hard"},
        {"id": "q4", "question": "What is the minimal quoting constant?", "evidence": "QUOTE_MINIMAL = 0", "doc": "csv",
         "type": "代码", "difficulty": "easy"},
    ]
    qs = write_jsonl(tmp_path / "mine.jsonl", records)
    assert main(["validate", "--corpus", str(folder), "--questions", str(qs)]) == 0
    out = capsys.readouterr().out
    assert "4 questions located" in out and "OK" in out
    assert "medium 2" in out and "hard 1" in out and "easy 1" in out  # counted as written
    assert "代码 2" in out and "policy 1" in out
    questions = load_questions(qs, load_corpus(folder))
    assert summarize(questions)["by_difficulty"] == {"medium": 2, "hard": 1, "easy": 1}
    assert [q.spans[0].doc_id for q in questions] == ["a.md", "decoder", "json/decoder", "csv"]
    assert main(["eval", "--corpus", str(folder), "--questions", str(qs), "--k", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["questions"] == 4


CORPUS = Corpus("demo", [
    Document("handbook", "第一条 年假五天。第二条 病假需证明。第三条 年假可顺延。"),
    Document("faq", "问：年假可顺延吗？答：年假可顺延。"),
])


def rec(i, evidence, **kw):
    return {"id": f"q{i}", "question": f"问题{i}", "evidence": evidence, **kw}


def test_offsets_pin_evidence_that_occurs_several_times(tmp_path):
    text, faq = CORPUS["handbook"].text, CORPUS["faq"].text
    second = text.index("年假", 1 + text.index("年假"))
    qs = load_questions(write_jsonl(tmp_path / "q.jsonl", [
        rec(1, "年假", doc="handbook", start=second, end=second + 2),
        rec(2, "年假", doc="handbook", start=second),                      # end is optional
        rec(3, ["年假五天", "年假可顺延"], spans=[{"doc": "handbook", "start": 4, "end": 8},
                                             {"doc": "faq", "start": faq.rindex("年假可顺延")}]),
        rec(4, "年假可顺延", occurrence=2),                                   # handbook, faq@5, faq@11
        rec(5, ["病假需证明", "年假"], doc="handbook", occurrence=[None, 1]),
    ]), CORPUS)
    assert qs[0].spans == (GoldSpan("handbook", second, second + 2),) and qs[1].spans == qs[0].spans
    assert qs[2].spans == (GoldSpan("handbook", 4, 8), GoldSpan("faq", faq.rindex("年假可顺延"), faq.rindex("年假可顺延") + 5))
    assert qs[3].spans == (GoldSpan("faq", faq.rindex("年假可顺延"), faq.rindex("年假可顺延") + 5),)
    assert qs[4].spans[1] == GoldSpan("handbook", second, second + 2)
    for q in qs:
        assert q.pinned
        for ev, sp in zip(q.evidence, q.spans):
            assert CORPUS[sp.doc_id].text[sp.start:sp.end] == ev
    # written back with their spans, so they load again to the same places
    dump_questions(qs, tmp_path / "again.jsonl")
    assert load_questions(tmp_path / "again.jsonl", CORPUS) == qs


def test_an_offset_mismatch_is_one_line_naming_file_line_and_text(tmp_path, capsys):
    at = CORPUS["handbook"].text.index("病假需证明")  # 13
    path = write_jsonl(tmp_path / "q.jsonl", [rec(1, "病假需证明", doc="handbook", start=4, end=9),
                                             rec(2, "病假需证明", doc="handbook", start=40),
                                             rec(3, "病假需证明", start=at)])
    _, problems = check_questions(path, CORPUS)
    msgs = [str(p) for p in problems]
    assert msgs[0].startswith(f"{path}:1 [q1] evidence '病假需证明': the text at 4:9 of doc 'handbook' is '年假五天。'")
    assert f"not the evidence (which occurs in 'handbook' at {at})" in msgs[0]
    assert "offsets 40:45 run past the end of doc 'handbook'" in msgs[1]
    assert f"{path}:3" in msgs[2] and "set doc" in msgs[2] and f"the evidence is at {at} in 'handbook'" in msgs[2]
    assert all("\n" not in m for m in msgs)
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "handbook.md").write_text(CORPUS["handbook"].text, encoding="utf-8")
    (folder / "other.md").write_text("无关。", encoding="utf-8")
    one_error_line(capsys, ["eval", "--corpus", str(folder), "--questions", str(path)], f"{path}:1",
                   "the text at 4:9 of doc 'handbook' is '年假五天。', not the evidence")


def test_pin_format_errors(tmp_path):
    path = write_jsonl(tmp_path / "q.jsonl", [
        rec(1, "年假", end=3), rec(2, ["年假", "病假"], start=0), rec(3, "年假", start=-1),
        rec(4, "年假", start=0, occurrence=0), rec(5, ["年假", "病假"], spans=[{"start": 0}]),
        rec(6, "年假", spans=[{"start": 0, "page": 2}]), rec(7, "年假", occurrence="first"),
        rec(8, ["年假", "病假"], occurrence=1), rec(9, "年假", start=5, end=5),
    ])
    with pytest.raises(QuestionFormatError) as err:
        load_questions(path, CORPUS)
    msgs = [str(p) for p in err.value.problems]
    for piece in ["[q1] end needs start", "[q2] start/end pin one evidence string; for a list of 2 give spans",
                  "[q3] start must be an int >= 0", "[q4] give one way to pin the evidence, not start and occurrence",
                  "[q5] spans has 1 entry but there are 2 evidence strings", "[q6] spans[0]: unknown key 'page'",
                  "[q7] occurrence must be an int >= 0", "[q8] occurrence for a list of 2 evidence strings is a list",
                  "[q9] end must be greater than start"]:
        assert any(piece in m for m in msgs), (piece, msgs)


def test_repeated_evidence_hints_only_what_is_missing():
    def message(**kw):
        with pytest.raises(EvidenceError) as err:
            parse_questions([json.dumps(rec(1, "年假可顺延", **kw))], CORPUS)
        return err.value.problems[0].message

    across = message()  # in two documents, no doc: setting doc would help
    assert across.startswith("found 3 times: handbook@") and "set doc" in across and '"occurrence" (0 to 2)' in across
    within = message(doc="faq")  # doc is set: no "set doc"
    assert within.startswith("found 2 times: faq@") and "set doc" not in within and "add text" in within
    with pytest.raises(EvidenceError, match="occurrence 2 asked for, but the evidence occurs 2 times in doc 'faq'"):
        parse_questions([json.dumps(rec(1, "年假可顺延", doc="faq", occurrence=2))], CORPUS)
    one_doc = Corpus("one", [Document("d", "哈哈哈")])
    with pytest.raises(EvidenceError) as err:  # all occurrences in one document: doc would not help
        parse_questions([json.dumps(rec(1, "哈哈"))], one_doc)
    assert "set doc" not in str(err.value)


def test_labels_are_free_but_must_be_strings():
    (q,) = parse_questions([json.dumps(rec(1, "病假需证明", type="政策", difficulty="medium"))], CORPUS)
    assert (q.type, q.difficulty) == ("政策", "medium")
    with pytest.raises(QuestionFormatError, match="difficulty must be a non-empty string"):
        parse_questions([json.dumps(rec(1, "病假需证明", difficulty=2))], CORPUS)


# -- Chroma's benchmark layout ---------------------------------------------------------------------

def test_chroma_csv_validates_with_repeated_references(capsys):
    corpus = load_corpus(CHROMA / "corpora")
    assert [d.id for d in corpus] == ["garden_notes", "support_chat"]
    qs = load_questions(CHROMA / "questions.csv", corpus)
    assert len(qs) == 7 and all(q.pinned for q in qs) and qs[0].id == "row-1"
    for q in qs:
        for ev, sp in zip(q.evidence, q.spans):
            assert corpus[sp.doc_id].text[sp.start:sp.end] == ev
    gauge = [q.spans for q in qs if "Check the rain gauge first." in q.evidence]
    text = corpus["garden_notes"].text
    assert text.count("Check the rain gauge first.") == 2
    assert gauge[0][0].start == text.index("Check the rain gauge first.")
    assert gauge[1][0].start == text.rindex("Check the rain gauge first.")   # the second occurrence
    assert main(["validate", "--corpus", str(CHROMA / "corpora"), "--questions", str(CHROMA / "questions.csv")]) == 0
    out = capsys.readouterr().out
    assert "7 questions located, 9 evidence strings" in out and "pinned:        7" in out and "OK" in out


def test_chroma_csv_runs_through_the_cli_end_to_end(capsys):
    base = ["--corpus", str(CHROMA / "corpora"), "--questions", str(CHROMA / "questions.csv"), "--k", "2"]
    assert main(["eval", *base, "-s", "recursive", "-p", "target=120", "--tokenizer", "words", "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["questions"] == 7 and s["tokenizer"] == "words" and 0 <= s["hit"] <= 1
    assert main(["compare", "fixed:size=100", "recursive:target=120", *base]) == 0
    out = capsys.readouterr().out
    assert "7 questions, k=2, tokenizer bigram" in out


def test_chroma_csv_problems_name_the_line(tmp_path, capsys):
    rows = (CHROMA / "questions.csv").read_text(encoding="utf-8").splitlines()
    bad = rows[:2] + [rows[2].replace('"start_index"": 173', '"start_index"": 174')] + [
        'Broken?,"[{""content"": ""x""}]",garden_notes', 'Nowhere?,"[{""content"": ""Thanks."", ""start_index"": 0, ""end_index"": 7}]",nosuch']
    path = tmp_path / "q.csv"
    path.write_text("\n".join(bad) + "\n", encoding="utf-8")
    _, problems = check_questions(path, load_corpus(CHROMA / "corpora"))
    msgs = [str(p) for p in problems]
    assert any(m.startswith(f"{path}:3 [row-2] evidence 'Check the rain gauge fir…': the text at 174:200 of doc 'garden_notes'") and "end - start is 26 but the evidence has 27" in m for m in msgs), msgs
    assert any(f"{path}:4" in m and "reference 0 must be an object with content, start_index and end_index" in m for m in msgs)
    assert any(f"{path}:5 [row-4]" in m and "doc 'nosuch' is not a document id" in m for m in msgs)
    (tmp_path / "cols.csv").write_text("q,refs\na,b\n", encoding="utf-8")
    one_error_line(capsys, ["eval", "--corpus", str(CHROMA / "corpora"), "--questions", str(tmp_path / "cols.csv")],
                   "missing columns question, references, corpus_id")


# -- PDFs in a folder corpus -------------------------------------------------------------------------

#: A real Chinese PDF nobody here wrote: Debian Edu's Audacity manual (GPL-2+), from the Debian
#: package debian-edu-doc-legacy-zh-cn (.ci/run installs it).
MANUAL = Path("/usr/share/doc/debian-edu-doc-legacy-zh-cn/audacity-manual.pdf")
needs_manual = pytest.mark.skipif(not MANUAL.is_file(), reason=f"{MANUAL} is absent: apt-get install "
                                  "debian-edu-doc-legacy-zh-cn (the Debian package .ci/run installs)")

#: Checked by hand against the rendered pages: (question, evidence, PDF page, printed page number).
MANUAL_QUESTIONS = [
    ("Audacity 要配合什么来用？", "设置 Audacity 并不难，只要记住设置 Audacity 来使用 JACK", 3, "1 / 15"),
    ("项目速率要怎么设？", "项目速率必须与 jack 中设置的取样速率相同", 4, "2 / 15"),
    ("能导出成哪些格式？", "可以输出为 WAV、AIFF MP3、OGG、FLAC，文件菜单里选择导出", 11, "9 / 15"),
    ("缩放工具做什么用？", "使用缩放工具可以缩放音频的片段", 13, "11 / 15"),
    ("包络工具怎么用？", "可以使用包络工具在片段上的任何位置增加或降低音量来处理音量", 13, "11 / 15"),
]


@pytest.fixture()
def manual_folder(tmp_path):
    root = tmp_path / "manuals"
    root.mkdir()
    shutil.copy(MANUAL, root / MANUAL.name)
    (root / "audacity-manual.md").write_text("# 笔记\n\n录音前先把音量调低。\n", encoding="utf-8")
    qs = write_jsonl(tmp_path / "manual.jsonl", [
        {"id": f"m{i}", "question": q, "evidence": ev, "doc": "audacity-manual.pdf", "difficulty": "medium"}
        for i, (q, ev, _, _) in enumerate(MANUAL_QUESTIONS, 1)])
    return root, qs


@needs_manual
def test_a_real_pdf_in_a_folder_corpus(manual_folder, capsys):
    from chunklab.preprocess import pages_of

    root, qs = manual_folder
    corpus = load_corpus(root)
    assert [d.id for d in corpus] == ["audacity-manual.md", "audacity-manual.pdf"]  # same stem: suffixes kept
    pdf = corpus["audacity-manual.pdf"]
    assert pdf.meta["type"] == "pdf" and pdf.meta["n_pages"] == 17 and pdf.meta["path"] == "audacity-manual.pdf"
    assert pdf.title == "Debian Edu / Skolelinux Audacity 手册"
    assert "1 / 15" not in pdf.text  # running headers and page numbers removed by the pipeline
    questions = load_questions(qs, corpus)
    for q, (_, ev, page, _) in zip(questions, MANUAL_QUESTIONS):
        (sp,) = q.spans
        assert pdf.text[sp.start:sp.end] == ev and pages_of(pdf, sp.start, sp.end) == [page]
    assert main(["validate", "--corpus", str(root), "--questions", str(qs)]) == 0
    assert "5 questions located" in capsys.readouterr().out
    assert main(["eval", "--corpus", str(root), "--questions", str(qs), "-s", "recursive", "-p", "target=200",
                 "--k", "1", "--misses", "5", "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["questions"] == 5
    for m in s["misses"]:  # a miss says where its evidence is on paper
        assert m["evidence"]["pages"] == [dict((ev, p) for _, ev, p, _ in MANUAL_QUESTIONS)[m["evidence_text"]]]


@needs_manual
def test_chunk_a_pdf_gives_pages_in_chunk_meta(capsys):
    assert main(["chunk", str(MANUAL), "-s", "recursive", "-p", "target=300", "--json"]) == 0
    chunks = json.loads(capsys.readouterr().out)["chunks"]
    assert all(isinstance(c["meta"]["pages"], list) for c in chunks)
    for _, ev, page, _ in MANUAL_QUESTIONS:
        holding = [c for c in chunks if ev in c["text"]]
        assert holding and all(page in c["meta"]["pages"] for c in holding)
    assert chunks[-1]["meta"]["pages"][-1] == 17
    assert main(["chunk", str(MANUAL), "-s", "recursive", "-p", "target=300"]) == 0
    out = capsys.readouterr().out
    assert "(text extracted from 17 PDF pages)" in out and " p.3 " in out


@pytest.fixture(scope="module")
def scanned(tmp_path_factory):
    from chunklab.book.pdfgen import build_pdfs

    info = build_pdfs(tmp_path_factory.mktemp("gen"), names=["scanned_notice"])["scanned_notice"]
    root = tmp_path_factory.mktemp("scans")
    shutil.copy(info.path, root / "notice.pdf")
    return root, info


def test_a_scanned_pdf_without_tesseract_is_a_one_line_error(scanned, monkeypatch, capsys):
    root, _ = scanned
    monkeypatch.setattr(ocr_mod.shutil, "which", lambda name: None)
    with pytest.raises(ValueError, match=r"notice\.pdf: page 1 has no text layer \(scanned\) and needs OCR, which "
                                         r"cannot run here: the tesseract binary is not installed"):
        dfiles.load_folder(root)
    one_error_line(capsys, ["chunk", str(root / "notice.pdf")], "notice.pdf: page 1", "tesseract")
    (root / "q.jsonl").write_text('{"id": "q", "question": "?", "evidence": "x"}\n', encoding="utf-8")
    one_error_line(capsys, ["validate", "--corpus", str(root), "--questions", str(root / "q.jsonl")],
                   "notice.pdf", "apt-get install tesseract-ocr")


@pytest.mark.slow
@pytest.mark.skipif(not ocr_mod.ocr_available("chi_sim"), reason=f"OCR: {ocr_mod.ocr_unavailable_reason('chi_sim')}")
def test_a_scanned_pdf_is_read_by_tesseract(scanned):
    root, info = scanned
    (doc,) = dfiles.load_folder(root)
    assert doc.id == "notice" and doc.meta["ocr"][1]["lines"] > 5
    assert ocr_mod.cer(info.page_texts[0], doc.text) < 0.1
