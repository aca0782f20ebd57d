"""The tool a team keeps (issue #28): ``text``, ``--where`` and ``eval --by``."""
from __future__ import annotations

import json
import re

from chunklab.cli import main
from cli_errors import one_line_error
from jsonl_files import write_jsonl
from test_hostile_inputs_2 import _raw_pdf


# -- text: a file as chunklab sees it ---------------------------------------------------------------

def test_text_prints_the_text_chunk_offsets_refer_to(tmp_path, capsys):
    f = tmp_path / "policy.txt"
    f.write_bytes("\ufeff第一条 总则。\r\n\r\n第二条 适用范围。".encode("utf-8"))  # BOM and CRLF: read as the corpus is
    assert main(["text", str(f)]) == 0
    out = capsys.readouterr().out
    assert out == "第一条 总则。\n\n第二条 适用范围。"            # exactly the text, nothing added
    assert main(["text", str(f), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data == {"path": str(f), "doc_id": "policy", "chars": len(out), "pages": [], "text": out}
    assert main(["chunk", str(f), "--strategy", "paragraph", "--param", "target=10", "--json"]) == 0
    chunks = json.loads(capsys.readouterr().out)["chunks"]
    assert all(out[c["start"]:c["end"]] == c["text"] for c in chunks)


def test_text_of_a_pdf_marks_pages_outside_the_text(tmp_path, capsys):
    pdf = _raw_pdf(tmp_path / "manual.pdf", [{"box": (600, 800), "lines": 3, "chars": 30},
                                            {"box": (600, 800), "lines": 2, "chars": 20}])
    assert main(["text", str(pdf), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    text, pages = data["text"], data["pages"]
    assert data["doc_id"] == "manual" and data["chars"] == len(text)
    assert [p["page"] for p in pages] == [1, 2] and pages[0]["start"] == 0 and pages[-1]["end"] == len(text)
    assert text[pages[1]["start"]:pages[1]["end"]] == "abcdefghij" * 2 + " " + "abcdefghij" * 2
    assert main(["chunk", str(pdf), "--json"]) == 0              # the same text the chunks' offsets refer to
    chunks = json.loads(capsys.readouterr().out)["chunks"]
    assert all(text[c["start"]:c["end"]] == c["text"] for c in chunks)
    assert main(["text", str(pdf)]) == 0
    lines = capsys.readouterr().out.split("\n")
    marks = [ln for ln in lines if ln.startswith("────")]
    assert marks == ["──── page 1 (offset 0) ────", f"──── page 2 (offset {pages[1]['start']}) ────"]
    assert "".join(ln for ln in lines if not ln.startswith("────")) == text  # the marks' lines hold no text


def test_text_honours_the_limits_and_errors_are_one_line(tmp_path, capsys):
    pdf = _raw_pdf(tmp_path / "big.pdf", [{"box": (600, 800), "lines": 3, "chars": 30}])
    one_line_error(capsys, ["text", str(pdf), "--max-page-chars", "10"], "big.pdf", "--max-page-chars")
    one_line_error(capsys, ["text", str(pdf), "--max-pdf-chars", "0"], "--max-pdf-chars must be an int >= 1")
    f = tmp_path / "a.md"
    f.write_text("x" * 3000, encoding="utf-8")
    one_line_error(capsys, ["text", str(f), "--max-file-mb", "0.001"], "a.md")
    one_line_error(capsys, ["text", str(tmp_path / "missing.md")], "file not found")
    one_line_error(capsys, ["text", str(tmp_path)], "is a folder", "text reads one file")


# -- --where: only the matching questions ------------------------------------------------------------

def _labelled(tmp_path):
    """A corpus of two documents and six labelled questions (types fact/how, difficulties easy/hard)."""
    root = tmp_path / "docs"
    root.mkdir()
    (root / "garden.md").write_text("# Garden\n\nWater the beds before nine.\n\nCheck the rain gauge first.\n\n"
                                    "Compost goes in the green bin.\n", encoding="utf-8")
    (root / "tools.md").write_text("# Tools\n\nBroken tools go in the red crate.\n\nOil the shears monthly.\n\n"
                                   "Spades hang on the north wall.\n", encoding="utf-8")
    rows = [("q1", "When are beds watered?", "Water the beds before nine.", "garden", "fact", "easy"),
            ("q2", "What to check first?", "Check the rain gauge first.", "garden", "how", "easy"),
            ("q3", "Where does compost go?", "Compost goes in the green bin.", "garden", "fact", "hard"),
            ("q4", "Where do broken tools go?", "Broken tools go in the red crate.", "tools", "fact", "easy"),
            ("q5", "How often are shears oiled?", "Oil the shears monthly.", "tools", "how", "hard"),
            ("q6", "Where do spades hang?", "Spades hang on the north wall.", "tools", "fact", "hard")]
    q = write_jsonl(tmp_path / "q.jsonl", [{"id": i, "question": qq, "evidence": ev, "doc": d, "type": t,
                                            "difficulty": df} for i, qq, ev, d, t, df in rows])
    return ["--corpus", str(root), "--questions", str(q), "--tokenizer", "words"]


def test_where_keeps_only_matching_questions_in_every_command(tmp_path, capsys):
    inputs = _labelled(tmp_path)
    assert main(["eval", *inputs, "--k", "1", "--where", "type=fact", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["questions"] == 4 and data["questions_kept"] == 4 and data["questions_total"] == 6
    assert data["where"] == {"type": ["fact"]}
    assert main(["eval", *inputs, "--k", "1", "--where", "type=fact", "--where", "difficulty=hard"]) == 0
    assert "2 of 6 questions kept by --where type=fact difficulty=hard" in capsys.readouterr().out.splitlines()[0]
    assert main(["eval", *inputs, "--k", "1", "--where", "doc=tools,garden", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["questions_kept"] == 6
    assert main(["compare", "fixed:size=40", "recursive", *inputs, "--k", "1", "--where", "doc=tools", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["hit"]["question_ids"] == ["q4", "q5", "q6"] and data["hit"]["questions_kept"] == 3
    assert main(["compare", "fixed:size=40", "recursive", *inputs, "--k", "1", "--where", "difficulty=easy"]) == 0
    assert "3 of 6 questions kept by --where difficulty=easy" in capsys.readouterr().out
    grid = tmp_path / "grid.json"
    grid.write_text('[{"strategy": "fixed", "size": [40, 80]}]', encoding="utf-8")
    assert main(["matrix", *inputs, "--grid", str(grid), "--k", "1", "--where", "type=how", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["questions_kept"] == 2 and all(r["questions"] == 2 for r in data["rows"])
    assert main(["matrix", *inputs, "--grid", str(grid), "--k", "1", "--where", "type=how"]) == 0
    assert "2 of 6 questions kept by --where type=how" in capsys.readouterr().out
    assert main(["validate", *inputs[:4], "--where", "difficulty=hard", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["questions"] == 3 and data["questions_total"] == 6 and data["by_difficulty"] == {"hard": 3}
    assert main(["validate", *inputs[:4], "--where", "difficulty=hard"]) == 0
    assert "3 of 6 questions kept by --where difficulty=hard" in capsys.readouterr().out


def test_where_errors_are_one_line_naming_the_option_and_values(tmp_path, capsys):
    inputs = _labelled(tmp_path)
    one_line_error(capsys, ["eval", *inputs, "--where", "type=why"], "--where type=why keeps none of the 6",
                   "type: fact, how")
    one_line_error(capsys, ["validate", *inputs[:4], "--where", "doc=nowhere"], "--where", "doc: garden, tools")
    for bad in ("colour=red", "type", "type=", "=fact"):
        one_line_error(capsys, ["compare", "fixed:size=40", "recursive", *inputs, "--where", bad],
                       "--where must be KEY=VALUE", "type, difficulty, doc", repr(bad))
    one_line_error(capsys, ["matrix", *inputs, "--where", "level=1"], "--where", "type, difficulty, doc")


# -- eval --by: per group, and per question --------------------------------------------------------

def test_eval_by_groups_and_per_question(tmp_path, capsys):
    from chunklab.evaluation.stats import bootstrap_ci

    inputs = _labelled(tmp_path)
    assert main(["eval", *inputs, "--k", "1", "--by", "type", "--by", "doc", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    per_q = {r["id"]: r for r in data["per_question"]}
    assert list(per_q) == ["q1", "q2", "q3", "q4", "q5", "q6"]
    assert all(set(r) == {"id", "hit", "mrr", "recall", "retrieved_chars"} for r in per_q.values())
    assert sum(r["hit"] for r in per_q.values()) / 6 == data["hit"]
    assert set(data["by"]) == {"type", "doc"}
    fact = data["by"]["type"]["fact"]
    hits = [per_q[q]["hit"] for q in ("q1", "q3", "q4", "q6")]
    ci = bootstrap_ci(hits)
    assert fact["questions"] == 4 and (fact["hit"], fact["hit_lo"], fact["hit_hi"]) == (ci["mean"], ci["lo"], ci["hi"])
    assert fact["mrr"] == sum(per_q[q]["mrr"] for q in ("q1", "q3", "q4", "q6")) / 4
    assert {g: r["questions"] for g, r in data["by"]["doc"].items()} == {"garden": 3, "tools": 3}
    assert main(["eval", *inputs, "--k", "1", "--by", "difficulty", "--where", "doc=tools"]) == 0
    out = capsys.readouterr().out
    table_end = out.index("duplication")
    assert out.index("by difficulty:") > table_end and "misses by symptom" in out[out.index("by difficulty:"):]
    rows = [ln.split() for ln in out.splitlines() if ln.startswith("  easy") or ln.startswith("  hard")]
    assert sorted((r[0], r[1]) for r in rows) == [("easy", "1"), ("hard", "2")]   # q4 | q5, q6


def test_eval_by_a_bad_key_is_one_line(tmp_path, capsys):
    inputs = _labelled(tmp_path)
    one_line_error(capsys, ["eval", *inputs, "--by", "chapter"], "--by must be one of type, difficulty, doc",
                   "'chapter'")


# -- matrix: cost beside quality, the ruler named, the simplest of the best's group ---------------------

def test_matrix_shows_cost_names_the_ruler_and_recommends_the_simplest(tmp_path, capsys):
    inputs = _labelled(tmp_path)
    grid = tmp_path / "grid.json"
    grid.write_text('[{"strategy": "fixed", "size": [20, 30, 60], "overlap": [0, 10]}]', encoding="utf-8")
    assert main(["matrix", *inputs, "--grid", str(grid), "--k", "2", "--tokens", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["engine"] == "bm25" and all(r["engine"] == "bm25" for r in data["rows"])  # not "fast"
    assert data["ruler"]["label"] == "hit@2" and data["ruler"]["budget"] is None
    assert all(r["retrieved_chars"] > 0 and r["retrieved_tokens"] > 0 for r in data["rows"])
    rec = data["recommendation"]
    rows = {r["label"]: r for r in data["rows"]}
    assert rec["best"] == max(rows, key=lambda k: (rows[k]["hit"], k)) and rec["pick"] in rec["group"]
    assert set(rec["tests"]) == set(rows) - {rec["best"]} and rec["method"] == "holm"
    assert all((label in rec["group"]) == (not t["significant"]) for label, t in rec["tests"].items())
    # the pick is the simplest of the group: no overlap, then the smallest size
    group = [rows[label] for label in rec["group"]]
    assert rows[rec["pick"]]["overlap"] == min(r["overlap"] for r in group)
    assert rows[rec["pick"]]["size"] == min(r["size"] for r in group if r["overlap"] == rows[rec["pick"]]["overlap"])
    out = tmp_path / "m.json"
    assert main(["matrix", *inputs, "--grid", str(grid), "--k", "2", "--out", str(out)]) == 0
    written = json.loads(out.read_text(encoding="utf-8"))
    assert written["engine"] == "bm25" and written["ruler"]["label"] == "hit@2"
    assert written["recommendation"]["pick"] == rec["pick"] and written["recommendation"]["group"] == rec["group"]
    capsys.readouterr()
    assert main(["matrix", *inputs, "--grid", str(grid), "--budget", "120", "--tokens"]) == 0
    out = capsys.readouterr().out
    table = [ln for ln in out.splitlines() if ln.startswith("fixed(")]
    assert len(table) == 6 and all("hit@budget 120 " in ln and "hit@2" not in ln and "hit@5" not in ln for ln in table)
    assert all(re.search(r"delivered \d+ chars \(\d+ tokens\)", ln) for ln in table)
    assert sum("recommended" in ln for ln in table) == 1 and sum(ln.endswith("best") for ln in table) >= 1
    assert "recommended: fixed(" in out and "Holm-corrected over 5 comparisons" in out


# -- compare --json keeps what was compared; eval --save / --baseline: the regression gate ---------------

def test_compare_json_keeps_the_labels_and_the_ruler(tmp_path, capsys):
    inputs = _labelled(tmp_path)
    assert main(["compare", "fixed:size=40", "recursive:target=60", *inputs, "--budget", "90", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    for m in ("hit", "recall", "mrr", "iou"):
        assert (data[m]["label_a"], data[m]["label_b"]) == ("fixed:size=40", "recursive:target=60")
        assert (data[m]["k"], data[m]["budget"], data[m]["budget_unit"]) == (5, 90, "chars")
    assert main(["compare", "fixed:size=40", "recursive:target=60", *inputs, "--budget", "90"]) == 0
    assert "budget=90" in capsys.readouterr().out


def _many(tmp_path):
    """Two documents of 12 sentences each and one question per sentence: enough questions for the gate."""
    root = tmp_path / "many"
    root.mkdir()
    words = ["apple", "bridge", "candle", "desert", "engine", "forest", "glacier", "harbor", "island", "jungle",
             "kettle", "lantern", "meadow", "needle", "orchard", "pepper", "quarry", "river", "saddle", "tunnel",
             "valley", "window", "yogurt", "zipper"]
    rows = []
    for d, part in (("one", words[:12]), ("two", words[12:])):
        sentences = [f"The {w} sits beside the {w}house number {i}." for i, w in enumerate(part)]
        (root / f"{d}.md").write_text("\n\n".join(sentences) + "\n", encoding="utf-8")
        rows += [{"id": f"{d}-{i}", "question": f"Where is the {w}?", "evidence": s, "doc": d}
                 for i, (w, s) in enumerate(zip(part, sentences))]
    q = write_jsonl(tmp_path / "many.jsonl", rows)
    return ["--corpus", str(root), "--questions", str(q), "--tokenizer", "words"]


def test_eval_save_then_baseline_is_a_regression_gate(tmp_path, capsys):
    inputs = _many(tmp_path)
    run = tmp_path / "run.json"
    good = ["--strategy", "paragraph", "-p", "target=60", "--k", "1"]
    assert main(["eval", *inputs, *good, "--save", str(run), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    saved = json.loads(run.read_text(encoding="utf-8"))
    assert saved["per_question"] == printed["per_question"] and len(saved["per_question"]) == 24
    assert saved["run"]["label"] == "paragraph {'target': 60}" and saved["hit"] == printed["hit"] > 0.9
    # the same configuration again: nothing changes, the gate passes
    assert main(["eval", *inputs, *good, "--baseline", str(run), "--json"]) == 0
    gate = json.loads(capsys.readouterr().out)["baseline"]
    assert gate["paired"] == 24 and not gate["regressed"] and gate["lost"] == [] == gate["gained"]
    assert all(r["diff"] == 0 for r in gate["metrics"].values())
    # 24 identical outcomes do not show the two runs within 2 points of each other (the guard for 0/1
    # outcomes keeps a width): "inconclusive", and the gate, which fails only on a measured loss, passes
    assert gate["metrics"]["hit"]["verdict"] == "inconclusive"
    # one chunk per document: every score is 0, nothing is retrieved: worse beyond the noise, exit 1
    bad = ["--strategy", "fixed", "-p", "size=2000", "--k", "1"]
    assert main(["eval", *inputs, *bad, "--baseline", str(run)]) == 1
    captured = capsys.readouterr()
    assert "regression gate: FAIL — hit, mrr, recall worse than the baseline" in captured.out
    assert "ran otherwise: measured \"paragraph {'target': 60}\" -> \"fixed {'size': 2000}\"" in captured.err
    assert main(["eval", *inputs, *bad, "--baseline", str(run), "--json"]) == 1
    gate = json.loads(capsys.readouterr().out)["baseline"]
    assert gate["regressed"] and set(gate["worse"]) == {"hit", "mrr", "recall"} and len(gate["lost"]) >= 12 and gate["metrics"]["hit"]["now"] <= 0.5
    assert all(r["hi"] < 0 and r["verdict"] == "contradicted" for r in gate["metrics"].values())
    # a subset of the questions: compared on those both runs answered, and said
    assert main(["eval", *inputs, *good, "--where", "doc=one", "--baseline", str(run), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["baseline"]["paired"] == 12 and any("compared on the 12 questions" in w for w in data["warnings"])


def test_save_and_baseline_errors_are_one_line(tmp_path, capsys):
    inputs = _labelled(tmp_path)
    one_line_error(capsys, ["eval", *inputs, "--baseline", str(tmp_path / "none.json")], "--baseline", "file not found")
    (tmp_path / "other.json").write_text('{"hit": 1}', encoding="utf-8")
    one_line_error(capsys, ["eval", *inputs, "--baseline", str(tmp_path / "other.json")], "not a run saved by eval --save")
    (tmp_path / "broken.json").write_text('{"per_question": [', encoding="utf-8")
    one_line_error(capsys, ["eval", *inputs, "--baseline", str(tmp_path / "broken.json")], "is not valid JSON")
    one_line_error(capsys, ["eval", *inputs, "--save", str(tmp_path / "no" / "run.json")], "--save", "does not exist")


def test_every_option_and_argument_of_every_subcommand_has_help_text():
    import argparse

    from chunklab.cli import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    missing = {name: [a.option_strings or a.dest for a in sp._actions
                      if not a.help and not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))]
               for name, sp in sub.choices.items()}
    assert set(sub.choices) >= {"eval", "compare", "matrix", "report", "explain", "validate", "text"}
    assert not {k: v for k, v in missing.items() if v}
