"""The small ones of issue #28 (item 11): a typo in evidence gets the nearest match, a ``doc`` prefix
gets the document it starts, identical chunkings name no winner, compare names winners with their
full spec, ``PlacedChunks.damaged`` is a list, the metrics are explained."""
from __future__ import annotations

import json

import pytest

from chunklab.adapters import chunks_from_strings
from chunklab.cli import main
from chunklab.core import Document
from chunklab.datasets.locate import nearest, suggest_doc
from jsonl_files import write_jsonl

LAW = "# 民法典\n\n第一条 为了保护民事主体的合法权益，调整民事关系，维护社会和经济秩序。\n"
NOTES = "Notes\n\nThe team agreed to move the release to Friday. Testing takes two more days.\n"


@pytest.fixture
def folder(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "民法典.md").write_text(LAW, encoding="utf-8")
    (docs / "notes.txt").write_text(NOTES, encoding="utf-8")
    return docs


def _validate(folder, tmp_path, capsys, records):
    q = write_jsonl(tmp_path / "q.jsonl", records)
    status = main(["validate", "--corpus", str(folder), "--questions", str(q)])
    return status, capsys.readouterr().out


def test_a_typo_in_evidence_gets_the_nearest_match_with_its_place(folder, tmp_path, capsys):
    status, out = _validate(folder, tmp_path, capsys, [
        {"id": "q1", "question": "when", "evidence": "move the relase to Friday", "doc": "notes"},
        {"id": "q2", "question": "how long", "evidence": "Testing takes too more days"},
        {"id": "q3", "question": "立法目的", "evidence": "为了保护民事主休的合法权益"}])
    assert status == 1
    assert "did you mean 'move the release to Friday' (doc 'notes' at 26, 1 character different)?" in out
    assert "did you mean 'Testing takes two more days' (doc 'notes' at 54, 1 character different)?" in out
    assert "did you mean '为了保护民事主体的合法权益' (doc '民法典' at 11, 1 character different)?" in out


def test_far_from_anything_gets_no_suggestion(folder, tmp_path, capsys):
    status, out = _validate(folder, tmp_path, capsys, [{"id": "q1", "question": "x", "evidence": "completely unrelated words"}])
    assert status == 1 and "not found in corpus" in out and "did you mean" not in out


def test_nearest_handles_insertions_and_deletions():
    text = "The quick brown fox jumps over the lazy dog."
    assert nearest([("a", text)], "quick brwn fox") == ("a", 4, "quick brown fox", 1)
    assert nearest([("a", text)], "quick brownn fox") == ("a", 4, "quick brown fox", 1)
    assert nearest([("a", text)], "abc") is None


def test_a_doc_prefix_gets_the_document_it_starts(folder, tmp_path, capsys):
    status, out = _validate(folder, tmp_path, capsys, [
        {"id": "q1", "question": "立法目的", "evidence": "为了保护民事主体的合法权益", "doc": "民法"}])
    assert status == 1 and "did you mean '民法典'?" in out
    assert suggest_doc("民", ["民法典", "民事诉讼法"]) in ("民法典", "民事诉讼法")  # two start with it: the closest


def test_compare_names_winners_with_their_spec_and_identical_sides_none(folder, tmp_path, capsys):
    q = write_jsonl(tmp_path / "q.jsonl", [
        {"id": f"q{i}", "question": t, "evidence": e} for i, (t, e) in enumerate([
            ("release day", "move the release to Friday"), ("testing days", "Testing takes two more days"),
            ("民事主体", "为了保护民事主体的合法权益"), ("秩序", "维护社会和经济秩序")])])
    base = ["--corpus", str(folder), "--questions", str(q), "--k", "1", "--tokenizer", "unigram_bigram"]
    assert main(["compare", "recursive", "recursive", *base]) == 0
    out = capsys.readouterr().out
    assert "— (undecided: the interval includes 0)" in out and " A (" not in out and "-0.000" not in out
    assert main(["compare", "fixed:size=8", "recursive", *base, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert {r["winner"] for r in result.values()} <= {None, "fixed:size=8", "recursive"}
    assert main(["compare", "fixed:size=8", "recursive@hybrid:lsa", *base]) == 0
    out = capsys.readouterr().out
    winners = [line for line in out.splitlines() if line.endswith(")") and ("A (" in line or "B (" in line)]
    assert all("A (fixed:size=8)" in w or "B (recursive@hybrid:lsa)" in w for w in winners)


def test_damaged_is_the_list_of_damaged_chunks():
    cut = chunks_from_strings(Document("d", "劳动法。劳动者"), ["劳动法。劳\ufffd", "\ufffd者"])
    assert cut.damaged == list(cut) and cut.counts()["damaged"] == 2
    clean = chunks_from_strings(Document("d", "甲乙丙"), ["甲乙", "丙"])
    assert clean.damaged == [] and clean.counts()["damaged"] == 0


def test_eval_explains_its_metrics(folder, tmp_path, capsys):
    q = write_jsonl(tmp_path / "q.jsonl", [{"id": "q1", "question": "release day", "evidence": "move the release to Friday"}])
    base = ["eval", "--corpus", str(folder), "--questions", str(q), "--k", "1", "--tokenizer", "words"]
    assert main(base) == 0
    out = capsys.readouterr().out
    assert "precision_omega" in out and "metrics: hit = " in out and "precision_Ω" in out
    assert main(base + ["--json"]) == 0
    explained = json.loads(capsys.readouterr().out)["metrics_explained"]
    assert {"cite_distance", "irrelevant_share", "precision_omega"} <= set(explained)
