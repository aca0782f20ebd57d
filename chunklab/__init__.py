"""chunklab: chunk documents for RAG with exact offsets, and measure the result.

The whole loop — chunk a corpus, retrieve for labeled questions, measure — from the top level:

>>> import chunklab
>>> from types import SimpleNamespace as Q
>>> docs = [chunklab.Document("合同法", "第一条 合同的订立。第二条 合同的效力。第三条 违约责任。")]
>>> chunks = chunklab.get_strategy("sentence", target=10).split_documents(docs)
>>> r = chunklab.evaluate(docs, chunks, [Q(id="q1", question="合同效力", spans=[("合同法", 14, 19)])], k=1, n_boot=100)
>>> r.aggregate["hit"]["mean"], [c.text for c in chunks]
(1.0, ['第一条 合同的订立。', '第二条 合同的效力。', '第三条 违约责任。'])

Chunking one text: ``chunk``, ``get_strategy`` / ``list_strategies`` / ``strategy_names`` /
``register`` (the strategy registry), ``route`` (the ``auto`` router); the data model:
``Document``, ``Chunk``, ``as_document``, ``check_chunks``, ``Strategy``; measuring:
``evaluate``, ``compare``, ``EvalSettings`` (the evaluation options), ``run_matrix`` (a method x
parameter grid), ``split_with`` (another library's splitter, placed back as chunks); the bundled
corpora and question sets: ``load_corpus``, ``load_questions``.

>>> [c.text for c in chunklab.chunk("甲。乙。", "sentence", target=2)]
['甲。', '乙。']
"""
from .core import Chunk, Document, as_document, check_chunks
from .base import Strategy, chunk, get_strategy, list_strategies, register, strategy_names
from . import strategies as _strategies  # noqa: F401  (registers the built-in strategies)
from .strategies.router import route  # noqa: F401  (also registers the "auto" strategy)
from .adapters import split_with
from .datasets import load_corpus
from .datasets.questions import load_questions
from .evaluation import EvalSettings, compare, evaluate
from .evaluation.matrix import run_matrix

from ._version import __version__

__all__ = [
    "Chunk", "Document", "Strategy", "as_document", "check_chunks", "chunk", "get_strategy",
    "list_strategies", "register", "route", "strategy_names",
    "EvalSettings", "compare", "evaluate", "run_matrix", "split_with", "load_corpus", "load_questions",
    "__version__",
]
