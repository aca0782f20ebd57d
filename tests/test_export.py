"""``export`` (issue #28, item 8): the chunks of a corpus as JSONL or Parquet, round-tripping to the
documents' text; ``--embedder MODULE:ATTR`` for any embedder; its progress bar."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from chunklab.cli import main
from chunklab.cli.engines import embedder_from_spec
from chunklab.cli.output import CLIError
from chunklab.datasets import load_corpus

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "chroma" / "corpora"

EMBEDDERS_PY = '''
import numpy as np

def lengths(texts):
    return np.array([[len(t), 1.0] for t in texts])

class Model:
    def __init__(self, dims=3):
        self.dims = dims
    def encode(self, texts, **kw):
        return np.ones((len(texts), self.dims))

class Docs:
    def embed_documents(self, texts):
        return [[1.0, float(len(t))] for t in texts]

NOT_AN_EMBEDDER = 3
'''


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    (tmp_path / "my_embedders.py").write_text(EMBEDDERS_PY, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    return "my_embedders"


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("strategy", [["--strategy", "markdown", "-p", "prefix=true"], ["--strategy", "fixed", "-p", "size=50", "-p", "overlap=10"],
                                      ["--splitter", "langchain_text_splitters:RecursiveCharacterTextSplitter",
                                       "--splitter-args", '{"chunk_size": 120, "chunk_overlap": 20}']])
def test_jsonl_round_trips_to_the_documents(tmp_path, capsys, strategy):
    if "--splitter" in strategy and importlib.util.find_spec("langchain_text_splitters") is None:
        pytest.skip("langchain-text-splitters not installed")
    out = tmp_path / "chunks.jsonl"
    assert main(["export", "--corpus", str(CORPUS), "--out", str(out), *strategy]) == 0
    assert "wrote" in capsys.readouterr().out
    docs = {d.id: d for d in load_corpus(str(CORPUS)).documents}
    recs = _records(out)
    assert recs and {r["doc"] for r in recs} == set(docs)
    for r in recs:
        assert docs[r["doc"]].text[r["start"]:r["end"]] == r["text"]
        assert r["id"] == f"{r['doc']}#{r['index']}"
        assert set(r) >= {"id", "doc", "start", "end", "text", "context", "breadcrumbs", "pages", "meta"}
    assert len({r["id"] for r in recs}) == len(recs)


def test_context_is_its_own_field(tmp_path):
    out = tmp_path / "chunks.jsonl"
    assert main(["export", "--corpus", str(CORPUS), "--out", str(out), "--strategy", "markdown", "-p", "prefix=true"]) == 0
    recs = _records(out)
    docs = {d.id: d for d in load_corpus(str(CORPUS)).documents}
    with_context = [r for r in recs if r["context"] and r["doc"] == "garden_notes"]
    assert with_context, "the markdown strategy with prefix=true gives a context"
    for r in with_context:
        assert r["text"] == docs[r["doc"]].text[r["start"]:r["end"]]  # never context + text
        assert r["breadcrumbs"] == r["meta"]["path"] and r["breadcrumbs"][-1] in r["context"]


def test_parquet_needs_pyarrow_or_round_trips(tmp_path, capsys):
    out = tmp_path / "chunks.parquet"
    status = main(["export", "--corpus", str(CORPUS), "--out", str(out)])
    if importlib.util.find_spec("pyarrow") is None:
        assert status == 2 and not out.exists()
        err = capsys.readouterr().err.strip()
        assert "pip install pyarrow" in err and len(err.splitlines()) == 1
        return
    import pyarrow.parquet as pq
    rows = pq.read_table(out).to_pylist()
    docs = {d.id: d for d in load_corpus(str(CORPUS)).documents}
    assert rows and all(docs[r["doc"]].text[r["start"]:r["end"]] == r["text"] for r in rows)


def test_format_from_suffix_or_flag(tmp_path, capsys):
    assert main(["export", "--corpus", str(CORPUS), "--out", str(tmp_path / "c.txt")]) == 2
    assert "--format" in capsys.readouterr().err
    assert main(["export", "--corpus", str(CORPUS), "--out", str(tmp_path / "c.txt"), "--format", "jsonl"]) == 0
    assert _records(tmp_path / "c.txt")


def test_embedder_module_attr(tmp_path, user_module, capsys):
    for spec, args, dims in ((f"{user_module}:lengths", None, 2), (f"{user_module}:Model", '{"dims": 4}', 4),
                             (f"{user_module}:Docs", None, 2), ("lsa", None, None)):
        out = tmp_path / "e.jsonl"
        argv = ["export", "--corpus", str(CORPUS), "--out", str(out), "--embedder", spec, "--json"]
        assert main(argv + (["--embedder-args", args] if args else [])) == 0, capsys.readouterr().err
        summary = json.loads(capsys.readouterr().out)
        recs = _records(out)
        assert all(len(r["embedding"]) == summary["dims"] for r in recs)
        if dims:
            assert summary["dims"] == dims


@pytest.mark.parametrize("spec, words", [("my_embedders:NOT_AN_EMBEDDER", "not an embedder"),
                                         ("my_embedders:lenghts", "did you mean 'lengths'"),
                                         ("no_such_module_x:f", "pip install no-such-module-x"),
                                         ("my_embedders:Model:", "no attribute")])
def test_embedder_errors_are_one_line(tmp_path, user_module, capsys, spec, words):
    status = main(["export", "--corpus", str(CORPUS), "--out", str(tmp_path / "e.jsonl"), "--embedder", spec])
    err = capsys.readouterr().err.strip()
    assert status == 2 and words in err and len(err.splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "e.jsonl").exists()


def test_embedder_from_spec_names_the_model(user_module):
    emb = embedder_from_spec(f"{user_module}:lengths")
    assert emb.name == f"{user_module}:lengths" and emb(["ab"]).shape == (1, 2)
    with pytest.raises(CLIError, match="MODULE:ATTR"):
        embedder_from_spec("nocolon")


def test_eval_takes_a_module_attr_embedder(user_module, capsys):
    status = main(["eval", "--corpus", str(CORPUS), "--questions", str(CORPUS.parent / "questions.csv"),
                   "--retriever", "dense", "--embedder", f"{user_module}:lengths", "--k", "2"])
    out = capsys.readouterr().out
    assert status == 0 and f"embedder {user_module}:lengths" in out


def test_progress_bar_on_stderr_with_progress(tmp_path, user_module, capsys):
    out = tmp_path / "e.jsonl"
    assert main(["export", "--corpus", str(CORPUS), "--out", str(out), "--embedder", f"{user_module}:lengths",
                 "--progress", "--strategy", "fixed", "-p", "size=20"]) == 0
    captured = capsys.readouterr()
    assert "text" in captured.err and "wrote" in captured.out  # tqdm's bar: "...| 70/70 [...text/s]"
    assert main(["export", "--corpus", str(CORPUS), "--out", str(out), "--embedder", f"{user_module}:lengths"]) == 0
    assert capsys.readouterr().err == ""  # not a terminal, no --progress: no bar


def test_a_compare_side_names_a_module_attr_embedder(user_module, capsys):
    assert main(["compare", "recursive", f"recursive@dense:{user_module}:lengths", "--corpus", str(CORPUS),
                 "--questions", str(CORPUS.parent / "questions.csv"), "--k", "2"]) == 0
    assert f"embedder {user_module}:lengths" in capsys.readouterr().out
