"""Hostile input, round two (issue #27), the items outside the caches, PDFs and memory bounds:
patterns that never finish, a port that accepts and says nothing, files that are not what they
claim, nesting deeper than Python's parsers go. Each fails on the code before its fix."""
from __future__ import annotations

import json
import socket
import threading
import time

import pytest

from chunklab import get_strategy
from chunklab.cli import main
from chunklab.datasets.chroma import chroma_records
from chunklab.evaluation.distributed import connect
from chunklab.params import ParamError, parse_params
from cli_errors import one_line_error as _one_line_error
from jsonl_files import write_jsonl

DEEP = "[" * 100_000


# -- 9. separators that backtrack forever ---------------------------------------------------------

@pytest.mark.timeout(120)
def test_a_nested_repeat_in_separators_is_refused_before_it_can_hang(tmp_path, capsys):
    with pytest.raises(ParamError, match=r"separators contains '\(a\+\)\+\$'.*exponential"):
        get_strategy("recursive", separators=["(a+)+$"], target=5)
    # the same text as plain separators is fine, and so is an ordinary repeat
    assert get_strategy("recursive", separators=["(a+)+$"], separator_regex=False, target=5)
    assert get_strategy("recursive", separators=["[。！？]+", "\n"], target=5)
    doc = tmp_path / "a.txt"
    doc.write_text("a" * 41 + "b", encoding="utf-8")
    _one_line_error(capsys, ["chunk", str(doc), "-s", "recursive", "-p", 'separators=["(a+)+$"]', "-p", "target=5"],
                    "separators", "exponential")


# -- 7. a port that accepts and never speaks Dask ---------------------------------------------------

@pytest.fixture()
def silent_port():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    held = []
    stop = threading.Event()

    def accept():
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(srv.accept()[0])
            except OSError:
                continue

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    yield srv.getsockname()[1]
    stop.set()
    t.join()
    for c in held:
        c.close()
    srv.close()


@pytest.mark.timeout(120)
def test_a_silent_peer_is_an_error_within_the_timeout(silent_port):
    t0 = time.monotonic()
    with pytest.raises(OSError, match=r"accepted the connection but did not answer like a Dask scheduler within 1 s"):
        with connect(f"tcp://127.0.0.1:{silent_port}", timeout=1):
            pass
    assert time.monotonic() - t0 < 20   # (before: still waiting after 150 s)


@pytest.mark.timeout(120)
def test_a_scheduler_file_that_is_not_one_names_the_option(tmp_path, silent_port):
    bad = tmp_path / "sched.json"
    for text in ('{"not": "a scheduler"}', "[1, 2]", DEEP, "{"):
        bad.write_text(text, encoding="utf-8")
        with pytest.raises(ValueError, match=r"--scheduler .*sched.json: not a Dask scheduler file"):
            with connect(str(bad), timeout=1):
                pass
    # a file that names a silent address is probed like the address itself
    bad.write_text(json.dumps({"address": f"tcp://127.0.0.1:{silent_port}"}), encoding="utf-8")
    with pytest.raises(OSError, match="did not answer like a Dask scheduler"):
        with connect(str(bad), timeout=1):
            pass


# -- 13. nesting deeper than the parsers go -----------------------------------------------------------

def test_deeply_nested_json_is_a_one_line_error_everywhere(tmp_path, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# 标题\n\n第一条 住宿费每晚不超过六百元。\n", encoding="utf-8")
    q = write_jsonl(tmp_path / "q.jsonl", [{"id": "q1", "question": "住宿费？", "evidence": "住宿费每晚不超过六百元"}])
    deep_q = tmp_path / "deep.jsonl"
    deep_q.write_text(DEEP + "\n", encoding="utf-8")
    base = ["--corpus", str(docs)]
    assert main(["validate", *base, "--questions", str(deep_q)]) != 0
    out = capsys.readouterr()
    assert "nested too deeply" in out.out + out.err and "Traceback" not in out.out + out.err
    grid = tmp_path / "grid.json"
    grid.write_text(DEEP, encoding="utf-8")
    _one_line_error(capsys, ["matrix", *base, "--questions", str(q), "--grid", str(grid)], "nested too deeply")
    _one_line_error(capsys, ["eval", *base, "--questions", str(q), "--splitter", "textwrap:wrap",
                             "--splitter-args", DEEP], "--splitter-args", "nested too deeply")
    _one_line_error(capsys, ["compare", "recursive", "splitter:textwrap:wrap:" + DEEP, *base, "--questions", str(q)],
                    "nested too deeply")
    # a --param value too deep for Python's parser stays text (a SyntaxError there), never a traceback
    assert parse_params(["size=" + DEEP]) == {"size": DEEP}


# -- 14. a Chroma reference list longer than the csv module's field limit -----------------------------

def test_a_long_chroma_references_field_is_read(tmp_path):
    refs = [{"content": "x" * 50, "start_index": i, "end_index": i + 50} for i in range(3000)]  # ~200 KB
    field = json.dumps(refs).replace('"', '""')
    text = f'question,references,corpus_id\n"问题","{field}",doc\n'
    assert len(field) > 131072
    (line, record), = chroma_records(text)
    assert isinstance(record, dict) and len(record["spans"]) == 3000, record
    import csv
    assert csv.field_size_limit() == 131072   # put back after the read


# -- 12, 13, 14: smaller silent cases and unclear errors ---------------------------------------------

def test_max_file_mb_beyond_a_terabyte_is_a_one_line_error(capsys):
    for value in ("99999999999999999999", "nan", "inf"):
        _one_line_error(capsys, ["eval", "--questions", "xiaobei", "--max-file-mb", value],
                        "--max-file-mb must be a number > 0 and <= 1,000,000")


def test_local_n_with_a_non_ascii_digit_is_the_scheduler_error(capsys):
    from chunklab.evaluation.distributed import parse_scheduler
    with pytest.raises(ValueError, match=r"--scheduler: .*got 'local:²' \(N is the number of worker processes"):
        parse_scheduler("local:²")


@pytest.fixture()
def two_docs(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("第一条 住宿费每晚不超过六百元。\n", encoding="utf-8")
    (docs / "b.md").write_text("第一条 住宿费每晚不超过六百元。\n", encoding="utf-8")
    return docs


def test_a_question_whose_doc_and_span_doc_disagree_is_a_problem(tmp_path, two_docs, capsys):
    q = write_jsonl(tmp_path / "q.jsonl", [{"id": "q1", "question": "住宿费？", "evidence": "住宿费每晚不超过六百元",
                                             "doc": "a", "spans": [{"doc": "b", "start": 4, "end": 15}]}])
    assert main(["validate", "--corpus", str(two_docs), "--questions", str(q)]) == 1
    out = capsys.readouterr().out
    assert "spans[0].doc 'b' is another document than the question's doc 'a'" in out


def test_validate_warns_about_questions_with_the_same_text(tmp_path, two_docs, capsys):
    q = write_jsonl(tmp_path / "q.jsonl", [
        {"id": "q1", "question": "住宿费每晚多少？", "evidence": "住宿费每晚不超过六百元", "doc": "a"},
        {"id": "q2", "question": "住宿费每晚多少？ ", "evidence": "住宿费每晚不超过六百元", "doc": "b"}])
    assert main(["validate", "--corpus", str(two_docs), "--questions", str(q)]) == 0   # a warning, not an error
    err = capsys.readouterr().err
    assert "warning: questions q1 and q2 have the same text" in err
    assert main(["validate", "--corpus", str(two_docs), "--questions", str(q), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["warnings"] == ["questions q1 and q2 have the same text: '住宿费每晚多少？ '"]


# -- 15. cosmetic, but misleading ----------------------------------------------------------------------

def test_an_unknown_option_is_named_before_a_missing_one(capsys):
    _one_line_error(capsys, ["eval", "--bogus"], "unrecognized arguments: --bogus")
    assert main(["eval", "--json", "--bogus"]) == 2
    assert json.loads(capsys.readouterr().out)["error"] == "unrecognized arguments: --bogus"
    _one_line_error(capsys, ["eval"], "the following arguments are required: --questions")


def test_the_eval_header_shows_the_k_that_was_used(capsys):
    assert main(["eval", "--questions", "xiaobei", "--k", "100000"]) == 0
    out = capsys.readouterr().out
    assert ", k=100000" not in out and ", k=442," in out.splitlines()[0]


def test_a_negative_span_start_is_one_problem(tmp_path, two_docs, capsys):
    q = write_jsonl(tmp_path / "q.jsonl", [{"id": "q1", "question": "住宿费？", "evidence": "住宿费每晚不超过六百元",
                                             "spans": [{"doc": "a", "start": -1, "end": 15}]}])
    assert main(["validate", "--corpus", str(two_docs), "--questions", str(q)]) == 1
    out = capsys.readouterr().out
    assert "spans[0].start must be an int >= 0" in out and "end must be" not in out


def test_offsets_off_by_a_dropped_bom_say_so(tmp_path, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_bytes("\ufeff第一条 住宿费每晚不超过六百元。\n".encode("utf-8"))
    raw = "\ufeff第一条 住宿费每晚不超过六百元。\n"
    start = raw.index("住宿费")   # counted on the raw file, BOM included
    q = write_jsonl(tmp_path / "q.jsonl", [{"id": "q1", "question": "住宿费？", "evidence": "住宿费每晚不超过六百元",
                                             "doc": "a", "start": start, "end": start + 11}])
    assert main(["validate", "--corpus", str(docs), "--questions", str(q)]) == 1
    out = capsys.readouterr().out
    assert "it is 1 character earlier" in out and "byte-order mark" in out
