"""The labeled-question format, its validator, and the generated scale set."""
from __future__ import annotations

import json

import pytest

from chunklab import Document
from chunklab.datasets import Corpus, data_dir, load_corpus
from chunklab.datasets.questions import (
    EvidenceError, GoldSpan, QuestionFormatError, check_questions, dump_questions,
    generate_scale_questions, load_questions, parse_questions, summarize,
)
from chunklab.cli import main as cli_main
from jsonl_files import write_jsonl

CORPUS = Corpus("demo", [
    Document("handbook", "# 员工手册\n\n## 3.1 年假\n工作满一年可享受年假五天。\n\n## 3.2 病假\n病假需提供医院证明。", title="员工手册"),
    Document("faq", "问：年假能跨年吗？\n答：年假可顺延至次年三月。\n问：病假扣工资吗？\n答：病假需提供医院证明。", title="常见问题"),
])


def write(tmp_path, records, name="q.jsonl"):
    return write_jsonl(tmp_path / name, records)


def rec(i, evidence, **kw):
    return {"id": f"q{i}", "question": f"问题{i}", "evidence": evidence, "type": "散文", **kw}


def test_locates_spans_exactly(tmp_path):
    path = write(tmp_path, [rec(1, "年假五天"), "", rec(2, ["## 3.2 病假", "年假可顺延"], difficulty="hard"),
                            rec(3, "病假需提供医院证明", doc="员工手册")])
    qs = load_questions(path, CORPUS)
    assert [q.id for q in qs] == ["q1", "q2", "q3"]
    for q in qs:
        assert len(q.spans) == len(q.evidence)
        for ev, sp in zip(q.evidence, q.spans):
            assert CORPUS[sp.doc_id].text[sp.start:sp.end] == ev
    assert qs[0].spans == (GoldSpan("handbook", CORPUS["handbook"].text.index("年假五天"), CORPUS["handbook"].text.index("年假五天") + 4),)
    assert qs[2].spans[0].doc_id == "handbook" and qs[2].doc == "员工手册"
    assert qs[1].difficulty == "hard" and qs[0].difficulty is None
    assert summarize(qs)["by_type"] == {"散文": 3}


def test_not_found_and_duplicates_name_every_line(tmp_path):
    path = write(tmp_path, [rec(1, "年假五天"), rec(2, "没有这句话"), rec(3, "病假需提供医院证明"),
                            rec(4, "病假需提供医院证明", doc="faq"), rec(5, "年假", doc="handbook")])
    with pytest.raises(EvidenceError) as err:
        load_questions(path, CORPUS)
    msg = str(err.value)
    assert "3 problems" in msg
    assert f"{path}:2 [q2] evidence '没有这句话': not found in corpus 'demo'" in msg
    assert f"{path}:3 [q3]" in msg and "found 2 times: handbook@" in msg and "faq@" in msg
    assert f"{path}:5 [q5]" in msg and "found 2 times" in msg  # 年假 twice within the handbook
    assert [p.line for p in err.value.problems] == [2, 3, 5]


def test_overlapping_occurrences_count_as_two():
    corpus = Corpus("o", [Document("d", "哈哈哈")])
    with pytest.raises(EvidenceError, match="found 2 times: d@0, d@1"):
        parse_questions([json.dumps(rec(1, "哈哈"))], corpus)


def test_format_errors_are_collected(tmp_path):
    path = write(tmp_path, [
        "{not json", rec(2, "年假五天", evidance="x"), {"id": "q3", "question": "?"},
        rec(4, "年假五天", type=3), rec(4, "年假五天"), rec(6, [], difficulty=""), "[1, 2]",
        rec(8, "年假", doc="无此文档"),
    ])
    with pytest.raises(QuestionFormatError) as err:
        load_questions(path, CORPUS)
    msgs = [str(p) for p in err.value.problems]
    expected = [
        ":1 invalid JSON", "[q2] unknown key 'evidance'; did you mean 'evidence'?", "[q3] missing key 'evidence'",
        # type and difficulty are free labels (issue #18): only a non-string or empty one is an error
        "[q4] type must be a non-empty string (a label such as 条款, 表格, 代码, 对话, 散文, FAQ",
        ":5 [q4] duplicate id 'q4' (first on line 4)",
        "[q6] evidence must be a non-empty string", "[q6] difficulty must be a non-empty string (a label such as easy, hard",
        ":7 expected a JSON object, got list", "[q8] doc '无此文档' is not a document id or title",
    ]
    for piece in expected:
        assert any(piece in m for m in msgs), (piece, msgs)


def test_doc_narrows_the_search_and_reports_where_else_it_is():
    ok = parse_questions([json.dumps(rec(1, "病假需提供医院证明", doc="faq"))], CORPUS)
    assert ok[0].spans[0].doc_id == "faq"
    with pytest.raises(EvidenceError, match=r"not found in doc 'faq' \(but found in 'handbook'\)"):
        parse_questions([json.dumps(rec(1, "工作满一年", doc="常见问题"))], CORPUS)


def validate_main(argv):
    """``python -m chunklab validate ARGV``."""
    return cli_main(["validate", *argv])


def test_validate_main_exit_codes(tmp_path, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "规章.md").write_text("# 规章\n\n迟到三次扣款一百元。\n\n迟到", encoding="utf-8")
    good = write(tmp_path, [rec(1, "迟到三次扣款一百元", difficulty="easy")], "good.jsonl")
    bad = write(tmp_path, [rec(1, "迟到三次扣款一百元"), rec(2, "迟到"), rec(3, "早退")], "bad.jsonl")

    assert validate_main(["--corpus", str(docs), "--questions", str(good)]) == 0
    out = capsys.readouterr().out
    assert "1 questions located" in out and "散文 1" in out and "easy 1" in out and "OK" in out

    assert validate_main(["--corpus", str(docs), "--questions", str(bad)]) == 1
    out = capsys.readouterr().out
    assert "FAILED: 2 problems on 2 lines" in out
    assert f"{bad}:2 [q2] evidence '迟到': found 2 times" in out
    assert f"{bad}:3 [q3] evidence '早退': not found" in out

    assert validate_main(["--corpus", str(docs), "--questions", str(bad), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False and [p["line"] for p in report["problems"]] == [2, 3]
    assert report["questions"] == 1 and report["by_type"] == {"散文": 1}

    assert validate_main(["--corpus", str(docs), "--questions", str(tmp_path / "missing.jsonl")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert validate_main(["--corpus", "nonesuch", "--questions", str(good)]) == 2
    assert "unknown corpus 'nonesuch'" in capsys.readouterr().err
    assert validate_main(["--questions", str(good)]) == 2  # a file needs --corpus
    assert validate_main([]) == 2  # argparse usage error
    capsys.readouterr()


def test_stdlib_questions_validate_and_are_unique_corpus_wide(tmp_path):
    qs = load_questions("stdlib")
    assert len(qs) >= 40
    assert {q.type for q in qs} == {"代码"}
    corpus = load_corpus("stdlib")
    assert {q.spans[0].doc_id for q in qs} >= {"json.decoder", "json.encoder", "textwrap", "difflib", "argparse"}
    # Unique in the whole stdlib corpus, not only within `doc`:
    no_doc = tmp_path / "no_doc.jsonl"
    with open(no_doc, "w", encoding="utf-8") as f:
        for line in open(data_dir() / "stdlib" / "questions.jsonl", encoding="utf-8"):
            d = json.loads(line)
            d.pop("doc", None)
            f.write(json.dumps(d, ensure_ascii=False) + "\n")
    assert [q.spans for q in load_questions(no_doc, corpus)] == [q.spans for q in qs]
    assert validate_main(["--questions", "stdlib"]) == 0


def test_shipped_question_files_validate():
    for name in ("xiaobei", "laws"):
        try:
            qs, problems = check_questions(name)
        except FileNotFoundError:
            continue  # written by others; validated once it exists
        assert problems == [], "\n".join(map(str, problems))
        assert qs


def test_named_set_absent_gives_a_clear_error(monkeypatch, tmp_path):
    (tmp_path / "xiaobei").mkdir()
    (tmp_path / "xiaobei" / "a.md").write_text("# a", encoding="utf-8")
    monkeypatch.setenv("CHUNKLAB_DATA", str(tmp_path))
    with pytest.raises(FileNotFoundError, match=r"question set 'xiaobei': .*questions\.jsonl does not exist"):
        load_questions("xiaobei", "stdlib")
    with pytest.raises(FileNotFoundError, match="named sets: xiaobei, laws, stdlib, laws-scale"):
        load_questions("nonesuch.jsonl", "stdlib")
    with pytest.raises(TypeError, match="needs a corpus"):
        load_questions(str(tmp_path / "xiaobei" / "a.md"))


# -- the scale set ---------------------------------------------------------------

@pytest.fixture(scope="module")
def scale():
    return load_questions("laws-scale")


def test_scale_set_size_and_separation(scale):
    assert len(scale) == 2267
    assert all(q.id.startswith("scale-") and q.type == "known-item" and q.difficulty is None for q in scale)
    assert len({q.id for q in scale}) == len(scale)
    assert len({q.spans[0] for q in scale}) == len(scale)


def test_scale_evidence_is_unique_in_the_corpus(scale):
    corpus = load_corpus("laws")
    joined = "\x00".join(d.text for d in corpus)
    for q in scale:
        (ev,), (sp,) = q.evidence, q.spans
        assert 20 <= len(ev) <= 60
        assert corpus[sp.doc_id].text[sp.start:sp.end] == ev
        first = joined.find(ev)
        assert first >= 0 and joined.find(ev, first + 1) == -1, q.id
        assert q.question != ev


def test_scale_set_is_deterministic(scale):
    again = generate_scale_questions(load_corpus("laws"))
    assert again == list(scale)
    other = generate_scale_questions(load_corpus("laws"), n=50, seed=1)
    assert [q.evidence for q in other] != [q.evidence for q in scale[:50]]


@pytest.mark.timeout(60)  # a guard against a pathological slowdown, not a timing assertion (~1 s here)
def test_scale_set_generates_fast():
    corpus = load_corpus("laws")
    generate_scale_questions(corpus, n=10)  # warm the corpus index
    assert len(generate_scale_questions(corpus)) > 0


def test_scale_set_round_trips_through_the_public_format(tmp_path, scale):
    path = tmp_path / "scale.jsonl"
    dump_questions(scale[:200], path)
    assert load_questions(path, "laws") == list(scale[:200])


def test_scale_needs_a_legal_corpus():
    with pytest.raises(ValueError, match="no meta\\['articles'\\]"):
        generate_scale_questions("stdlib", n=5)
    with pytest.raises(ValueError, match="n must be an int >= 1, got 0"):
        generate_scale_questions("laws", n=0)
    with pytest.raises(ValueError, match="gives only"):
        generate_scale_questions("laws:民法典", n=5000)
