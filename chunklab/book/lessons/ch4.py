"""Chapter 4 (special content): the data every section uses and the one way it evaluates.

The chapter's sections have their own modules: :mod:`.ch4_code` (code), :mod:`.ch4_tables`
(tables, C6), :mod:`.ch4_dialogue` (dialogues and FAQs) and :mod:`.ch4_pdf` (PDFs and the hard
cases). Each returns plain data; the chapter binds prose values with ``glue_all(numbers, "ch4_")``.

Every comparison in the chapter is paired on the same questions; :func:`run` is the one evaluation
(k=5, 1000 bootstrap resamples for the per-configuration intervals, seed 0), so two sections never
disagree about what "hit@5" or "under a budget" means.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Sequence

from ...core import Chunk, Document
from ...datasets import load_corpus
from ...datasets.questions import load_questions
from ...evaluation import evaluate
from ...evaluation.run import EvalResult
from ...evaluation.stats import mcnemar_exact
from ...retrieval import CorpusIndex

__all__ = ["Corpora", "corpora", "split_corpus", "run", "rate", "sign_test"]


@dataclass(frozen=True)
class Corpora:
    """小北 and the standard-library corpus, each with its documents, questions and a shared index."""
    xb: Any
    xb_docs: list[Document]
    xb_index: CorpusIndex
    xb_questions: list
    std_docs: list[Document]
    std_index: CorpusIndex
    std_questions: list

    @property
    def py_docs(self) -> list[Document]:
        """The Python files of 小北's billing module followed by the standard-library modules."""
        return [d for d in self.xb_docs if d.meta.get("type") == "python"] + self.std_docs


@lru_cache(maxsize=1)
def corpora() -> Corpora:
    """Load both corpora once per process (each index tokenises its corpus once)."""
    xb = load_corpus("xiaobei")
    xb_docs = list(xb)
    std_docs = list(load_corpus("stdlib"))
    return Corpora(xb, xb_docs, CorpusIndex(xb_docs), load_questions("xiaobei"),
                   std_docs, CorpusIndex(std_docs), load_questions("stdlib"))


def split_corpus(docs: Sequence[Document], choose: Callable[[Document], Any]) -> list[Chunk]:
    """Chunk every document with the strategy ``choose(doc)`` returns."""
    return [c for d in docs for c in choose(d).split(d)]


def run(docs, index, chunks, questions, use_context: bool = False, budget: int | None = None,
        **engine: Any) -> EvalResult:
    """The chapter's one evaluation: top 5 (or a character budget), 1000 resamples, seed 0."""
    return evaluate(docs, chunks, questions, k=5, index=index, use_context=use_context,
                    budget=budget, n_boot=1000, seed=0, **engine)


def rate(result: EvalResult, metric: str = "hit") -> float:
    """The mean of one metric over the questions."""
    return float(result.aggregate[metric]["mean"])


def sign_test(a, b) -> tuple[int, int, float]:
    """Questions only ``a`` hits, only ``b`` hits, and the exact two-sided sign test (McNemar) on them.

    >>> sign_test([1, 1, 1, 0], [0, 0, 0, 0])
    (3, 0, 0.25)
    """
    r = mcnemar_exact(a, b)
    return r["up"], r["down"], r["p"]
