"""The public API at the top level: every name importable from ``chunklab``, and the whole loop with them."""
from __future__ import annotations

from collections import namedtuple

import pytest

import chunklab

PUBLIC = [
    "chunk", "get_strategy", "list_strategies", "strategy_names", "register", "route", "Document", "Chunk",
    "as_document", "check_chunks", "Strategy", "evaluate", "compare", "EvalSettings", "split_with",
    "load_corpus", "load_questions", "run_matrix", "__version__",
]


def test_all_lists_exactly_the_public_names():
    assert sorted(chunklab.__all__) == sorted(PUBLIC)
    assert len(set(chunklab.__all__)) == len(chunklab.__all__)


@pytest.mark.parametrize("name", PUBLIC)
def test_each_name_imports_from_the_top_level(name):
    namespace: dict = {}
    exec(f"from chunklab import {name}", namespace)
    assert namespace[name] is getattr(chunklab, name)


def test_top_level_names_are_the_defining_objects():
    from chunklab.adapters import split_with
    from chunklab.base import Strategy, get_strategy
    from chunklab.core import Chunk, Document
    from chunklab.datasets import load_corpus
    from chunklab.datasets.questions import load_questions
    from chunklab.evaluation import EvalSettings, compare, evaluate
    from chunklab.evaluation.matrix import run_matrix
    from chunklab.strategies.router import route

    for obj in (split_with, Strategy, get_strategy, Chunk, Document, load_corpus, load_questions, EvalSettings,
                compare, evaluate, run_matrix, route):
        assert getattr(chunklab, obj.__name__) is obj
    assert isinstance(chunklab.__version__, str) and chunklab.__version__


Q = namedtuple("Q", "id question spans")
TEXT = "第一条 合同的订立。第二条 合同的效力。第三条 违约责任。第四条 争议的解决。"


def test_the_whole_loop_from_the_top_level():
    from chunklab import Chunk, Document, EvalSettings, as_document, check_chunks, compare, evaluate, get_strategy

    docs = [Document("合同法", TEXT), as_document("图书馆应当免费开放。", "图书馆")]
    sentences = get_strategy("sentence", target=10).split_documents(docs)
    check_chunks(docs[0], [c for c in sentences if c.doc_id == "合同法"])
    assert all(isinstance(c, Chunk) for c in sentences)
    pairs = get_strategy("sentence", target=20).split_documents(docs)

    def span(doc, phrase):
        s = doc.text.index(phrase)
        return (doc.id, s, s + len(phrase))

    questions = [Q("q1", "合同效力", [span(docs[0], "合同的效力")]),
                 Q("q2", "违约责任", [span(docs[0], "违约责任")]),
                 Q("q3", "图书馆开放吗", [span(docs[1], "图书馆应当免费开放")])]
    settings = EvalSettings(k=1, n_boot=200)
    small = evaluate(docs, sentences, questions, settings)
    large = evaluate(docs, pairs, questions, settings)
    assert small.aggregate["hit"]["mean"] == 1.0 and large.aggregate["hit"]["mean"] == 1.0
    assert small.aggregate["precision"]["mean"] > large.aggregate["precision"]["mean"]
    assert compare(small, large, metrics=("hit",), n=200)["hit"]["winner"] is None
    assert evaluate(docs, sentences, questions, k=1, n_boot=200).summary()["hit"] == small.summary()["hit"]
    res = chunklab.run_matrix(docs, questions, [{"strategy": "sentence", "target": [10, 40]}], settings, progress=False)
    assert [r["label"] for r in res.rows] == ["sentence(target=10)", "sentence(target=40)"]
    assert res.rows[0]["hit"] == small.summary()["hit"]


def test_the_registry_and_the_bundled_data_from_the_top_level():
    assert "recursive" in chunklab.strategy_names()
    assert {e["name"] for e in chunklab.list_strategies()} == set(chunklab.strategy_names())
    assert chunklab.route(chunklab.Document("a.md", "# 标题\n\n正文。", meta={"type": "md"})) is not None
    corpus = chunklab.load_corpus("xiaobei")
    questions = chunklab.load_questions("xiaobei", corpus)
    assert len(corpus) > 0 and len(questions) > 0
    assert callable(chunklab.split_with) and callable(chunklab.register)
