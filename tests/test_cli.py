"""The command line: output, JSON and one-line errors with a non-zero exit."""
from __future__ import annotations

import json

from chunklab.cli import main
from cli_errors import one_line_error as _one_line_error
from jsonl_files import write_jsonl


def test_strategies_json(capsys):
    assert main(["strategies", "--json"]) == 0
    names = {e["name"] for e in json.loads(capsys.readouterr().out)}
    assert {"fixed", "recursive", "sentence", "paragraph", "token"} <= names


def test_chunk_file(tmp_path, capsys):
    f = tmp_path / "policy.txt"
    f.write_text("第一条 总则。\n\n第二条 适用范围。\n", encoding="utf-8")
    assert main(["chunk", str(f), "--strategy", "paragraph", "--param", "target=10", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    chunks = out["chunks"]
    assert out["doc_id"] == f.stem and out["path"] == str(f) and out["strategy"] == "paragraph"
    assert out["n_chunks"] == len(chunks) and out["params"]["target"] == 10
    text = f.read_text(encoding="utf-8")
    assert [c["text"] for c in chunks] == ["第一条 总则。", "第二条 适用范围。"]
    assert all(text[c["start"]:c["end"]] == c["text"] for c in chunks)


def test_errors_are_one_line(tmp_path, capsys):
    f = tmp_path / "a.txt"
    f.write_text("abc", encoding="utf-8")
    assert main(["chunk", str(f), "--param", "target=0"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == "error: target must be an int in [1, 100000], got 0"
    assert main(["chunk", str(tmp_path / "missing.txt")]) == 2
    assert "file not found" in capsys.readouterr().err
    assert main(["chunk", str(f), "--strategy", "recursiv"]) == 2
    assert "did you mean 'recursive'" in capsys.readouterr().err
    (tmp_path / "b.txt").write_bytes(b"\xff\xfe\x00")
    assert main(["chunk", str(tmp_path / "b.txt")]) == 2
    assert "not UTF-8" in capsys.readouterr().err


# -- eval / compare / matrix / bench on a folder of the user's own files ---------------------------

import math  # noqa: E402

import pytest  # noqa: E402

POLICY = """# 差旅报销制度

## 第一章 总则

第一条 为规范公司差旅费用管理，制定本制度。

第二条 本制度适用于全体正式员工和试用期员工。

## 第二章 住宿标准

第三条 一线城市住宿费每晚不超过六百元，其他城市每晚不超过四百元。

第四条 超出标准的部分由员工自行承担，特殊情况须经部门负责人书面批准。

## 第三章 报销流程

第五条 出差结束后十个工作日内提交报销单，逾期不予受理。

第六条 报销单须附发票原件和行程单，电子发票须打印并签字。
"""

NOTES = """Meeting notes, March.

The team agreed to move the release to Friday. Testing takes two more days.

Budget for the offsite is capped at five thousand dollars per quarter.
"""

CALC = '''def add(a, b):
    """Return the sum."""
    return a + b


def ratio(a, b):
    if b == 0:
        raise ZeroDivisionError("b must not be zero")
    return a / b
'''

QUESTIONS = [
    {"id": "q1", "question": "一线城市住宿每晚能报多少钱？", "evidence": "一线城市住宿费每晚不超过六百元"},
    {"id": "q2", "question": "报销要在多少天内交？", "evidence": "出差结束后十个工作日内提交报销单"},
    {"id": "q3", "question": "超标准的住宿费谁出？", "evidence": "超出标准的部分由员工自行承担"},
    {"id": "q4", "question": "When is the release?", "evidence": "move the release to Friday"},
    {"id": "q5", "question": "what if b is zero in ratio", "evidence": 'raise ZeroDivisionError("b must not be zero")'},
    {"id": "q6", "question": "试用期员工适用吗", "evidence": "本制度适用于全体正式员工和试用期员工"},
]


@pytest.fixture()
def own(tmp_path):
    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    (folder / "policy.md").write_text(POLICY, encoding="utf-8")
    (folder / "notes.txt").write_text(NOTES, encoding="utf-8")
    (folder / "sub" / "calc.py").write_text(CALC, encoding="utf-8")
    return folder, write_jsonl(tmp_path / "q.jsonl", QUESTIONS)


def _json(capsys):
    out = capsys.readouterr().out
    return json.loads(out)  # strict: NaN is not JSON


def test_eval_on_a_folder_json(own, capsys):
    folder, q = own
    assert main(["eval", "--corpus", str(folder), "--questions", str(q), "--strategy", "markdown",
                 "-p", "target=120", "--k", "2", "--json"]) == 0
    summary = _json(capsys)
    assert summary["questions"] == len(QUESTIONS)
    assert 0 <= summary["hit"] <= 1 and summary["hit_lo"] <= summary["hit"] <= summary["hit_hi"]
    assert summary["chunks"] > 3
    assert "ingest_seconds" in summary and summary["ingest_seconds"] >= 0


def test_eval_json_has_no_nan(own, capsys):
    # 3-character chunks hold no whole evidence: some metrics are undefined (NaN) -> null
    folder, q = own
    assert main(["eval", "--corpus", str(folder), "--questions", str(q), "--strategy", "fixed",
                 "-p", "size=3", "--k", "1", "--json"]) == 0
    summary = _json(capsys)
    assert any(v is None for v in summary.values())
    assert not any(isinstance(v, float) and math.isnan(v) for v in summary.values())


def test_compare_names_a_winner_only_with_a_clear_interval(own, capsys):
    folder, q = own
    assert main(["compare", "fixed:size=20", "recursive:target=120", "--corpus", str(folder),
                 "--questions", str(q), "--k", "2", "--json"]) == 0
    result = _json(capsys)
    assert set(result) >= {"hit", "recall", "mrr", "iou"}
    for r in result.values():
        clear = r["lo"] > 0 or r["hi"] < 0
        assert (r["winner"] is not None) == clear


def test_matrix_writes_csv_and_reports_skips(own, tmp_path, capsys):
    folder, q = own
    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps([{"strategy": "fixed", "size": [40, 80], "overlap": [0, 0.25]},
                                {"strategy": "recursive", "target": [100], "overlap": [200]}]), encoding="utf-8")
    out = tmp_path / "m.csv"
    assert main(["matrix", "--grid", str(grid), "--corpus", str(folder), "--questions", str(q),
                 "--k", "2", "--out", str(out), "--json"]) == 0
    payload = _json(capsys)
    assert len(payload["rows"]) == 4 and len(payload["skipped"]) == 1
    assert "overlap" in payload["skipped"][0]["reason"]
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 5 and "hit" in lines[0].split(",")



def test_cli_errors_are_one_line(own, tmp_path, capsys):
    folder, q = own
    base = ["--corpus", str(folder), "--questions", str(q)]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "question": "x", "evidence": "这句话不存在"}\n'
                   '{"id": "b", "question": "y", "evidence": "也不存在"}\n', encoding="utf-8")
    _one_line_error(capsys, ["eval", "--corpus", str(folder), "--questions", str(bad)],
                    "2 problems", "这句话不存在", "validate")
    _one_line_error(capsys, ["eval", *base, "--k", "abc"], "invalid int value", "--help")
    _one_line_error(capsys, ["eval", *base, "--k", "0"], "k must be")
    _one_line_error(capsys, ["eval", *base, "--strategy", "nosuch"], "nosuch")
    _one_line_error(capsys, ["eval", *base, "-p", "separators=5"], "separators must be a list of strings")
    _one_line_error(capsys, ["eval", "--corpus", str(tmp_path / "nope"), "--questions", str(q)], "nope")
    _one_line_error(capsys, ["matrix", *base, "--grid", str(tmp_path / "g.json")], "grid file not found")
    grid = tmp_path / "g.json"
    grid.write_text('[{"strategy": "fixed", "size": 0}]', encoding="utf-8")
    _one_line_error(capsys, ["matrix", *base, "--grid", str(grid)], "no config of the grid can run")
    grid.write_text('[{"strategy": "fixed", "size": 50}]', encoding="utf-8")
    _one_line_error(capsys, ["matrix", *base, "--grid", str(grid), "--out", str(tmp_path)], "is a folder")
    _one_line_error(capsys, ["matrix", *base, "--grid", str(grid), "--jobs", "0"], "--jobs")
    _one_line_error(capsys, ["bench", "nosuch"], "invalid choice")
    _one_line_error(capsys, [], "required")


def test_bench_widget_and_chunk_keys(own, capsys):
    folder, q = own
    assert main(["bench", "widget", "--json"]) == 0
    r = _json(capsys)
    assert set(r) == {"median_ms", "p90_ms", "reference_engine", "reference_median_ms", "speedup",
                      "document", "chars", "questions", "chunks"}
    assert r["document"] == "中华人民共和国民法典" and r["questions"] == 200
    assert main(["bench", "widget", "--corpus", str(folder), "--questions", str(q), "--json"]) == 0
    r = _json(capsys)
    assert r["document"] == "policy" and r["questions"] == 4  # the largest file and its questions
    _one_line_error(capsys, ["bench", "widget", "--corpus", str(folder)], "needs --questions")
    assert main(["bench", "chunk", "--corpus", str(folder), "--json"]) == 0
    r = _json(capsys)
    assert set(r) == {"chars", "chunklab_chars_per_s", "langchain_chars_per_s", "ratio",
                      "one_document_vs_per_document"}
    assert r["chars"] == len(POLICY) + len(NOTES) + len(CALC)


def test_bench_matrix_keys_on_a_small_grid(own):
    from chunklab.tools import bench
    from chunklab.datasets import load_corpus
    from chunklab.datasets.questions import load_questions

    folder, q = own
    corpus = load_corpus(str(folder))
    r = bench.bench_matrix(corpus.documents, load_questions(str(q), corpus),
                           grid=[{"strategy": "fixed", "size": [40, 80]}], reference_sample=3)
    assert set(r) == {"configs", "questions", "seconds", "jobs", "seconds_shared", "shared", "reference_engine",
                      "reference_seconds", "reference_note", "speedup", "ranker"}
    assert r["configs"] == 2 and r["questions"] == len(QUESTIONS) and r["ranker"] == "compiled"
    assert "3 sampled questions" in r["reference_note"]


def test_token_budget_and_tok_at_k(own, capsys):
    folder, q = own
    base = ["--corpus", str(folder), "--questions", str(q), "--strategy", "recursive", "-p", "target=60", "--json"]
    assert main(["eval", *base, "--tokens"]) == 0
    s = _json(capsys)
    assert s["retrieved_tokens"] > 0
    assert main(["eval", *base, "--budget", "40", "--budget-unit", "tokens", "--tokens"]) == 0
    s = _json(capsys)
    assert 0 < s["retrieved_tokens"] <= 40
    _one_line_error(capsys, ["eval", *base, "--budget", "40", "--budget-unit", "words"], "invalid choice")


def test_eval_lists_misses_with_their_symptom(own, capsys):
    folder, q = own
    base = ["eval", "--corpus", str(folder), "--questions", str(q), "--strategy", "fixed", "-p", "size=12", "--k", "1"]
    assert main([*base, "--misses", "3", "--json"]) == 0
    s = _json(capsys)
    assert 1 <= len(s["misses"]) <= 3
    for m in s["misses"]:
        assert m["symptom"] in {"cut", "ranked_low", "diluted", "too_small", "crowded", "not_indexed"}
        assert m["evidence_text"] in {x["evidence"] for x in QUESTIONS}
        # offsets are the document's own (document ids are paths without the suffix)
        path = next(folder.glob(m["evidence"]["doc"] + ".*"))
        assert path.read_text(encoding="utf-8")[m["evidence"]["start"]:m["evidence"]["end"]] == m["evidence_text"]
    # 12-character pieces cut every evidence longer than that
    long_ev = {x["id"] for x in QUESTIONS if len(x["evidence"]) > 12}
    assert all(m["symptom"] in ("cut", "too_small") for m in s["misses"] if m["question_id"] in long_ev)
    assert main([*base, "--misses", "2"]) == 0
    assert capsys.readouterr().out.count("  miss ") == 2


def test_the_cli_builds_one_settings_object(own, capsys):
    import argparse

    from chunklab.cli import settings_from_args
    from chunklab.evaluation import EvalSettings
    from chunklab.evaluation.matrix import MATRIX_SETTINGS

    args = argparse.Namespace(k=3, budget=200, budget_unit="tokens", tokens=True, context=True)
    assert settings_from_args(args) == EvalSettings(k=3, budget=200, budget_unit="tokens", count_tokens=True,
                                                    use_context=True)
    assert settings_from_args(args, MATRIX_SETTINGS).n_boot == 1000
    # eval prints what evaluate() gives with those settings
    from chunklab.datasets import load_corpus
    from chunklab.datasets.questions import load_questions
    from chunklab.evaluation import evaluate
    from chunklab.base import get_strategy

    folder, q = own
    assert main(["eval", "--corpus", str(folder), "--questions", str(q), "--strategy", "recursive", "-p",
                 "target=60", "--k", "2", "--budget", "100", "--json"]) == 0
    printed = _json(capsys)
    corpus = load_corpus(str(folder))
    chunks = get_strategy("recursive", target=60).split_documents(corpus.documents)
    want = evaluate(corpus.documents, chunks, load_questions(str(q), corpus), EvalSettings(k=2, budget=100)).summary()
    for key in ("hit", "hit_lo", "hit_hi", "recall", "mrr", "chunks", "k", "budget", "engine"):
        assert printed[key] == want[key], key


# -- --tokenizer and --splitter (issue #18) ---------------------------------------------------------

def test_tokenizer_is_chosen_and_stated(own, capsys):
    from chunklab.base import get_strategy
    from chunklab.datasets import load_corpus
    from chunklab.datasets.questions import load_questions
    from chunklab.evaluation import EvalSettings, evaluate

    folder, q = own
    base = ["--corpus", str(folder), "--questions", str(q), "--k", "2"]
    assert main(["eval", *base, "-s", "recursive", "-p", "target=60", "--tokenizer", "words", "--json"]) == 0
    printed = _json(capsys)
    corpus = load_corpus(str(folder))
    chunks = get_strategy("recursive", target=60).split_documents(corpus.documents)
    want = evaluate(corpus.documents, chunks, load_questions(str(q), corpus), EvalSettings(k=2, tokenizer="words")).summary()
    assert printed["tokenizer"] == "words" and printed["hit"] == want["hit"] and printed["mrr"] == want["mrr"]
    assert main(["eval", *base]) == 0
    assert "tokenizer bigram" in capsys.readouterr().out.splitlines()[0]  # the default, said
    assert main(["compare", "fixed:size=40", "recursive:target=60", *base, "--tokenizer", "jieba", "--json"]) == 0
    assert {r["tokenizer"] for r in _json(capsys).values()} == {"jieba"}
    assert main(["compare", "fixed:size=40", "recursive:target=60", *base, "--tokenizer", "unigram_bigram"]) == 0
    assert "tokenizer unigram_bigram" in capsys.readouterr().out
    assert main(["matrix", "--grid", "article002", *base, "--tokenizer", "words", "--json"]) == 0
    payload = _json(capsys)
    assert payload["tokenizer"] == "words" and {r["tokenizer"] for r in payload["rows"]} == {"words"}
    _one_line_error(capsys, ["eval", *base, "--tokenizer", "spaces"], "invalid choice", "bigram", "jieba")


SPLITTER = "langchain_text_splitters:RecursiveCharacterTextSplitter"


def test_eval_measures_another_librarys_splitter(own, capsys):
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    from chunklab.adapters import split_with
    from chunklab.datasets import load_corpus
    from chunklab.datasets.questions import load_questions
    from chunklab.evaluation import EvalSettings, evaluate

    folder, q = own
    base = ["--corpus", str(folder), "--questions", str(q), "--k", "2"]
    args = '{"chunk_size": 80, "chunk_overlap": 0}'
    assert main(["eval", *base, "--splitter", SPLITTER, "--splitter-args", args, "--json"]) == 0
    s = _json(capsys)
    assert s["strategy"] == "splitter" and s["splitter"] == SPLITTER
    assert s["splitter_args"] == {"chunk_size": 80, "chunk_overlap": 0}
    corpus = load_corpus(str(folder))
    chunks = split_with(RecursiveCharacterTextSplitter(chunk_size=80, chunk_overlap=0), corpus.documents)
    want = evaluate(corpus.documents, chunks, load_questions(str(q), corpus), EvalSettings(k=2)).summary()
    assert s["chunks"] == len(chunks) and s["hit"] == want["hit"] and s["iou"] == want["iou"]
    assert s["placement"]["pieces"] == len(chunks) and s["placement"]["missing"] == 0
    assert main(["eval", *base, "--splitter", SPLITTER, "--splitter-args", args]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f'splitter:{SPLITTER} {{"chunk_overlap": 0, "chunk_size": 80}} on ')
    assert f"the splitter's {len(chunks)} pieces" in out


def test_compare_and_matrix_take_a_splitter(own, tmp_path, capsys):
    folder, q = own
    base = ["--corpus", str(folder), "--questions", str(q), "--k", "2"]
    args = ["--splitter-args", '{"chunk_size": 80, "chunk_overlap": 0}']
    assert main(["compare", f"splitter:{SPLITTER}", "recursive:target=80", *base, *args]) == 0
    out = capsys.readouterr().out
    assert f'A = splitter:{SPLITTER} {{"chunk_overlap": 0, "chunk_size": 80}}' in out and "B = recursive:target=80" in out
    # `splitter` stands for --splitter; a side's own :JSON wins over --splitter-args
    assert main(["compare", "splitter", f'splitter:{SPLITTER}:{{"chunk_size": 40}}', "--splitter", SPLITTER,
                 *base, *args, "--json"]) == 0
    assert set(_json(capsys)) >= {"hit", "recall", "mrr", "iou"}
    grid = tmp_path / "g.json"
    grid.write_text('[{"strategy": "fixed", "size": [40, 80]}]', encoding="utf-8")
    assert main(["matrix", "--grid", str(grid), *base, "--splitter", SPLITTER, *args, "--json"]) == 0
    rows = _json(capsys)["rows"]
    assert [r["strategy"] for r in rows] == ["fixed", "fixed", "splitter"]
    assert rows[-1]["label"].startswith(f"splitter:{SPLITTER}") and 0 <= rows[-1]["hit"] <= 1


def test_splitter_errors_are_one_line(own, capsys):
    folder, q = own
    base = ["--corpus", str(folder), "--questions", str(q)]
    _one_line_error(capsys, ["eval", *base, "--splitter", SPLITTER, "-s", "fixed"], "not both")
    _one_line_error(capsys, ["eval", *base, "--splitter-args", "{}"], "--splitter-args needs --splitter")
    _one_line_error(capsys, ["eval", *base, "--splitter", SPLITTER, "--splitter-args", "{chunk_size: 5}"],
                    "--splitter-args is not valid JSON")
    _one_line_error(capsys, ["eval", *base, "--splitter", SPLITTER, "--splitter-args", "[5]"], "must be a JSON object")
    _one_line_error(capsys, ["eval", *base, "--splitter", "nosuchsplitterlib:Splitter"], "nosuchsplitterlib", "pip install")
    _one_line_error(capsys, ["eval", *base, "--splitter", SPLITTER, "--splitter-args", '{"chunk_sise": 5}'],
                    "chunk_sise")
    _one_line_error(capsys, ["eval", *base, "--splitter", "langchain_text_splitters"], "MODULE:ATTR")
    _one_line_error(capsys, ["compare", "splitter", "fixed:size=50", *base], "--splitter MODULE:ATTR is not given")
    _one_line_error(capsys, ["compare", "fixed:size=40", "fixed:size=50", *base, "--splitter", SPLITTER],
                    "neither side of compare is 'splitter'")
    _one_line_error(capsys, ["eval", *base, "--splitter", "textwrap:wrap", "--splitter-args", '{"width": 30}'],
                    "splitter 'textwrap:wrap' failed on document")



def test_a_budget_result_says_how_much_was_delivered(tmp_path, capsys):
    """A budget is a ceiling: eval and compare print the characters each question was handed."""
    args = ["--questions", "xiaobei", "--budget", "2500"]
    assert main(["eval", "--strategy", "fixed", "-p", "size=2048", *args]) == 0
    out = capsys.readouterr().out
    assert "delivered per question: 2500 characters" in out and "budget=2500" in out
    assert main(["compare", "fixed:size=2048", "recursive", *args]) == 0
    out = capsys.readouterr().out
    assert "budget=2500" in out and out.count("delivered per question") == 2
    grid = tmp_path / "grid.json"
    grid.write_text('[{"strategy": "fixed", "size": [512, 2048]}]', encoding="utf-8")
    assert main(["matrix", "--grid", str(grid), *args]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("fixed(")]
    assert len(rows) == 2 and all("hit@budget 2500" in r and "delivered 2500 chars" in r for r in rows)
