"""Benchmarks: each runs the reference beside ours in the same process and returns one flat dict.

The figure keys are stable (issue #7) so results can be compared across versions; the command
line (``python -m chunklab bench NAME --json``) prints them. Nothing here asserts a time: timings
depend on the machine, and the book prints them with the machine they came from.

* :func:`bench_matrix` — article 002's 27-config experiment (claim C20) with rank-bm25 as the
  reference engine: ``configs, questions, seconds, jobs, seconds_shared, shared,
  reference_engine, reference_seconds, reference_note, speedup, ranker`` (``ranker``:
  ``"compiled"`` when chunklab._topk was built; ``jobs``: the worker processes the matrix ran on;
  ``seconds``/``speedup``: every config measured, like the reference; ``seconds_shared``: the
  default run, where ``shared`` configs cut the same chunks as another and are measured once).
* :func:`bench_widget` — interactive latency (re-chunk one document, re-index, evaluate up to 200
  questions) with rank-bm25 doing the same step as the reference: ``median_ms, p90_ms,
  reference_engine, reference_median_ms, speedup, document, chars, questions, chunks``.
* :func:`bench_chunk` — chunking throughput against LangChain: ``chars, chunklab_chars_per_s,
  langchain_chars_per_s, ratio, one_document_vs_per_document``.
* :func:`bench_semantic` — semantic chunking throughput with LSA and with e5 (disk cache cold,
  then warm) beside Chonkie's ``SemanticChunker`` driven by the same embedders: ``chars,
  documents, sentences, lsa_chars_per_s, e5_cold_chars_per_s, e5_warm_chars_per_s,
  e5_sentences_per_s, reference_engine, reference_*_chars_per_s, ...``.
"""
from __future__ import annotations

import random
import statistics
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Sequence

import numpy as np

from ..base import get_strategy
from ..core import Document
from ..evaluation import EvalSettings, evaluate
from ..evaluation.matrix import ARTICLE_002_GRID, MATRIX_SETTINGS, expand_grid, run_matrix
from ..params import Param
from ..retrieval import BM25Reference, CorpusIndex, get_tokenizer
from ..retrieval.bm25 import _TOPK
from ..retrieval.embed import LSAEmbedder, corpus_sentences
from ..retrieval.embed_cache import EmbeddingCache
from ..retrieval.embedders import E5Embedder, USEEmbedder, get_embedder
from ..strategies.linguistic import DEFAULT_SEPARATORS
from ..strategies.semantic import Semantic

__all__ = ["bench_matrix", "bench_widget", "bench_chunk", "bench_semantic"]


def bench_matrix(documents: Sequence[Any], questions: Sequence[Any], grid: Any = None, k: int = 5,
                 reference_sample: int = 20, seed: int = 0, tokenizer: str = "bigram",
                 jobs: int = 1, share: bool = True) -> dict[str, Any]:
    """Time :func:`~chunklab.evaluation.matrix.run_matrix` on ``grid`` (default: article 002's 27 configs).

    rank-bm25 is far too slow to run the whole matrix, so it is timed on the grid's first config
    (indexing once, plus ``reference_sample`` questions drawn with ``random.Random(seed)``) and
    scaled: ``configs x (index time + questions x seconds per question)``. The first config of
    article 002's grid (fixed 512, no overlap) is the smallest chunking but not the most chunks, so
    the scaling is of the right order, not exact; ``reference_note`` says so. The matrix runs
    with :data:`~chunklab.evaluation.matrix.MATRIX_SETTINGS` and ``k``, ``tokenizer``.

    ``jobs`` > 1: the matrix runs on a new pool of that many worker processes (at most one per
    config), as ``chunklab matrix --jobs`` does; ``seconds`` is then the wall time of the whole run,
    the workers' start included (the reference runs in this process either way).

    ``seconds`` and ``speedup`` are like for like: every config chunked, indexed, searched and
    measured (``run_matrix(..., share=False)``), as the reference is. With ``share`` (the default)
    the matrix runs a second time as ``run_matrix`` does by default, where a config that cuts
    exactly the chunks of another one with the same parameters (on the laws, ``paragraph`` and
    ``recursive`` at every size and overlap) is measured once and its row copied:
    ``seconds_shared`` and ``shared`` (how many configs were copied) report that run, whose rows
    are identical.
    """
    Param("int", 1, low=1).validate("jobs", jobs)
    settings = MATRIX_SETTINGS.replace(k=k, tokenizer=tokenizer)
    grid = ARTICLE_002_GRID if grid is None else grid
    documents, questions = list(documents), list(questions)
    configs, _ = expand_grid(grid)
    workers = max(1, min(jobs, len(configs)))
    def run(shared: bool) -> Any:  # a new pool each time: its start-up is part of the wall time
        executor = ProcessPoolExecutor(max_workers=workers) if workers > 1 else None
        try:
            return run_matrix(documents, questions, grid, settings, progress=False, executor=executor, share=shared)
        finally:
            if executor is not None:
                executor.shutdown()

    res = run(False)
    shared_res = run(True) if share else None
    first = configs[0]
    strat = get_strategy(first["strategy"], **first["params"])
    chunks = strat.split_documents(documents)
    tok = get_tokenizer(tokenizer)
    t0 = time.perf_counter()
    ref = BM25Reference(tokenized=[tok(c.text) for c in chunks], tokenizer=tok)
    build = time.perf_counter() - t0
    sample = random.Random(seed).sample(questions, min(reference_sample, len(questions)))
    t1 = time.perf_counter()
    for q in sample:
        ref.get_scores(tok(q.question))
    per_q = (time.perf_counter() - t1) / max(len(sample), 1)
    ref_seconds = len(configs) * (build + per_q * len(questions))
    note = (f"rank-bm25 BM25Okapi timed on {first['label']} ({len(chunks)} chunks): index {build:.2f} s, "
            f"{per_q * 1000:.1f} ms per question over {len(sample)} sampled questions (seed {seed}); "
            f"scaled to {len(configs)} configs x {len(questions)} questions")
    return {
        "configs": len(res.rows),
        "questions": len(questions),
        "seconds": round(res.seconds, 3),
        "jobs": workers,
        "seconds_shared": round(shared_res.seconds, 3) if shared_res is not None else None,
        "shared": len(shared_res.shared) if shared_res is not None else 0,
        "reference_engine": "rank-bm25",
        "reference_seconds": round(ref_seconds, 1),
        "reference_note": note,
        "speedup": round(ref_seconds / res.seconds, 1) if res.seconds > 0 else float("inf"),
        "ranker": "compiled" if _TOPK is not None else "numpy",
    }


def bench_widget(document: Any, questions: Sequence[Any], strategy: str = "recursive",
                 params: dict[str, Any] | None = None, repeats: int = 20, n_questions: int = 200,
                 k: int = 5, reference_repeats: int = 3) -> dict[str, Any]:
    """Latency of one interactive step: re-chunk ``document``, re-index it, evaluate the questions.

    The document is tokenised once beforehand (as a widget would keep it); only questions whose
    evidence lies in ``document`` are used, at most ``n_questions``. The reference does the same
    step with rank-bm25 (re-chunk, tokenise the chunks, build ``BM25Okapi``, score every
    question; the evaluation itself is left out, which favours the reference), timed
    ``reference_repeats`` times. Keys: ``median_ms, p90_ms, reference_engine,
    reference_median_ms, speedup, document, chars, questions, chunks``. Each evaluation runs with
    ``EvalSettings(k=k, n_boot=200)``.
    """
    for name, value in (("repeats", repeats), ("reference_repeats", reference_repeats)):
        Param("int", 1, low=1).validate(name, value)
    settings = EvalSettings(k=k, n_boot=200)
    qs = [q for q in questions if all(s.doc_id == document.id for s in q.spans)][:n_questions]
    if not qs:
        raise ValueError(f"no question has its evidence in document {document.id!r}")
    index = CorpusIndex([document])
    index.encode_queries([q.question for q in qs])
    strat = get_strategy(strategy, **(params or {"target": 512}))
    times = []
    n_chunks = 0
    for _ in range(repeats + 1):
        t0 = time.perf_counter()
        chunks = strat.split(document)
        evaluate([document], chunks, qs, settings, index=index)
        times.append((time.perf_counter() - t0) * 1000)
        n_chunks = len(chunks)
    times = times[1:]  # the first run warms caches
    tok = get_tokenizer("bigram")
    q_tokens = [tok(q.question) for q in qs]
    ref_times = []
    for _ in range(reference_repeats):
        t0 = time.perf_counter()
        ref = BM25Reference(tokenized=[tok(c.text) for c in strat.split(document)], tokenizer=tok)
        for qt in q_tokens:
            ref.get_scores(qt)
        ref_times.append((time.perf_counter() - t0) * 1000)
    median = statistics.median(times)
    ref_median = statistics.median(ref_times)
    return {
        "median_ms": round(median, 2),
        "p90_ms": round(float(np.percentile(times, 90)), 2),
        "reference_engine": "rank-bm25",
        "reference_median_ms": round(ref_median, 1),
        "speedup": round(ref_median / median, 1) if median > 0 else float("inf"),
        "document": document.id,
        "chars": len(document.text),
        "questions": len(qs),
        "chunks": n_chunks,
    }


def bench_chunk(documents: Sequence[Any], strategy: str = "recursive", params: dict[str, Any] | None = None,
                repeats: int = 3) -> dict[str, Any]:
    """Chunking throughput of chunklab and of LangChain's ``RecursiveCharacterTextSplitter``.

    LangChain runs with chunklab's own separators (``DEFAULT_SEPARATORS``, as regular
    expressions, ``keep_separator="end"``), so both split at the same places and produce the
    same chunk texts; at the same size (``target`` of ``params``, default 512) without overlap. ``one_document_vs_per_document`` is chunklab's time
    on the corpus joined into one document over its time per document (1.0 = linear). Each time is
    the best of ``repeats``. ``ratio`` is ``chunklab_chars_per_s / langchain_chars_per_s`` (above 1:
    chunklab is faster).
    """
    from langchain_text_splitters import RecursiveCharacterTextSplitter


    params = dict(params or {"target": 512})
    size = params.get("target", params.get("size", 512))
    strat = get_strategy(strategy, **params)
    docs = list(documents)
    chars = sum(len(d.text) for d in docs)

    def best(fn) -> float:
        out = float("inf")
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn()
            out = min(out, time.perf_counter() - t0)
        return out

    ours = best(lambda: [strat.split(d) for d in docs])
    lc = RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=0, keep_separator="end",
                                        separators=list(DEFAULT_SEPARATORS), is_separator_regex=True)
    theirs = best(lambda: [lc.split_text(d.text) for d in docs])
    one = Document("corpus", "\n\n".join(d.text for d in docs))
    whole = best(lambda: strat.split(one))
    return {
        "chars": chars,
        "chunklab_chars_per_s": round(chars / ours),
        "langchain_chars_per_s": round(chars / theirs),
        "ratio": round(theirs / ours, 3),
        "one_document_vs_per_document": round(whole / ours, 3),
    }


_NEURAL = {"e5-small": E5Embedder, "use-multilingual": USEEmbedder}


def bench_semantic(documents: Sequence[Any], embedders: Sequence[str] = ("lsa", "e5-small"),
                   params: dict[str, Any] | None = None, reference: bool = True) -> dict[str, Any]:
    """Semantic chunking throughput (characters per second) with each of ``embedders``, beside a reference.

    * ``"lsa"``: :class:`~chunklab.strategies.semantic.Semantic` with its default embedder (LSA
      fitted on each document's sentences): ``lsa_seconds, lsa_chars_per_s``.
    * a neural name (``"e5-small"``, ``"use-multilingual"``): the same chunker with that model
      and a fresh on-disk cache in a temporary folder, run twice — cold (every window embedded)
      and warm (a new embedder object, so only the disk cache helps): ``<name>_cold_chars_per_s,
      <name>_warm_chars_per_s, <name>_texts`` (windows embedded), ``<name>_sentences_per_s``
      (texts per second inside the model; ``..._per_cpu_s``: per second of the process's CPU time,
      which a busy machine does not inflate), ``<name>_over_limit`` (windows over its token limit)
      and ``<name>_warm_identical`` (the warm run cut at the same places). Keys use the name with
      ``-`` as ``_`` (``e5_small_...``); ``e5_cold_chars_per_s`` etc. are also given for e5.

    The reference is Chonkie's ``SemanticChunker`` (``chonkie``, a test extra) driven by the same
    embedders — LSA fitted on the corpus's sentences, the e5 model without cache — with Chinese
    sentence ends as delimiters, ``chunk_size`` the same ``target`` in characters and its other
    defaults. It embeds each 3-sentence window *and* each sentence (about twice our texts), and cuts
    by its own rule, so only the throughput is comparable. Without chonkie,
    ``reference_engine`` is None and ``reference_note`` says so. Each run is timed once.
    """
    params = dict(params or {"target": 1000})
    docs = list(documents)
    chars = sum(len(d.text) for d in docs)
    out: dict[str, Any] = {"chars": chars, "documents": len(docs),
                           "sentences": len(corpus_sentences(docs)), "params": params}

    def rate(seconds: float) -> float:
        return round(chars / seconds) if seconds > 0 else float("inf")

    for name in embedders:
        if name == "lsa":
            t0 = time.perf_counter()
            Semantic(**params).split_documents(docs)
            out["lsa_seconds"] = round(time.perf_counter() - t0, 3)
            out["lsa_chars_per_s"] = rate(out["lsa_seconds"])
            continue
        if name not in _NEURAL:
            raise ValueError(f"bench_semantic measures 'lsa' and {', '.join(map(repr, _NEURAL))}, got {name!r}")
        key = name.replace("-", "_")
        with tempfile.TemporaryDirectory(prefix="chunklab-bench-") as tmp:
            runs = []
            for _ in ("cold", "warm"):
                # a new embedder and a new cache object each time: the warm run reads the disk
                emb = _NEURAL[name](cache=EmbeddingCache(tmp), progress=False)
                t0 = time.perf_counter()
                chunks = Semantic(embedder=emb, **params).split_documents(docs)
                runs.append((time.perf_counter() - t0, [(c.doc_id, c.start, c.end) for c in chunks],
                             emb.stats.copy()))
            (cold, cuts_cold, st_cold), (warm, cuts_warm, st_warm) = runs
        first = st_cold
        out[f"{key}_cold_seconds"], out[f"{key}_warm_seconds"] = round(cold, 3), round(warm, 3)
        out[f"{key}_cold_chars_per_s"], out[f"{key}_warm_chars_per_s"] = rate(cold), rate(warm)
        out[f"{key}_texts"] = first.embedded
        out[f"{key}_sentences_per_s"] = round(first.embedded / first.seconds, 1) if first.seconds else None
        out[f"{key}_sentences_per_cpu_s"] = round(first.embedded / first.cpu_seconds, 1) if first.cpu_seconds else None
        out[f"{key}_over_limit"] = first.over_limit
        out[f"{key}_warm_identical"] = cuts_cold == cuts_warm
        if name == "e5-small":
            for k in ("cold_chars_per_s", "warm_chars_per_s", "sentences_per_s", "sentences_per_cpu_s"):
                out[f"e5_{k}"] = out[f"{key}_{k}"]
    out.update(_semantic_reference(docs, embedders, params, reference, rate))
    return out


def _semantic_reference(docs: list[Any], embedders: Sequence[str], params: dict[str, Any], reference: bool,
                        rate) -> dict[str, Any]:
    """Chonkie's SemanticChunker with the same embedders, when chonkie is installed."""
    if not reference:
        return {"reference_engine": None, "reference_note": "reference=False"}
    try:
        import chonkie
        from chonkie.embeddings import BaseEmbeddings
    except ImportError:
        return {"reference_engine": None,
                "reference_note": "chonkie is not installed (pip install chonkie==1.7.0, a test extra): no reference"}

    class Wrapped(BaseEmbeddings):
        def __init__(self, fn, dims):
            super().__init__()
            self.fn, self.dims = fn, dims

        def embed(self, text):
            return self.fn([text])[0]

        def embed_batch(self, texts):
            return list(self.fn(list(texts))) if texts else []

        @property
        def dimension(self):
            return self.dims

        def get_tokenizer(self):
            return "character"

    target = params.get("target", 1000)
    out: dict[str, Any] = {"reference_engine": f"chonkie {chonkie.__version__} SemanticChunker",
                           "reference_note": "same embedders; its own sentence split, 3-sentence windows plus "
                                             "sentences embedded, cut rule and chunk_size in characters"}
    for name in embedders:
        if name == "lsa":
            lsa = LSAEmbedder.from_documents(docs)
            fn, dims = lsa, lsa.components_.shape[1]
        else:
            emb = get_embedder(name, cache=False, progress=False)
            fn, dims = emb, emb.dims
        chunker = chonkie.SemanticChunker(embedding_model=Wrapped(fn, dims), chunk_size=target,
                                          delim=["。", "！", "？", "；", "\n"], min_characters_per_sentence=1)
        t0 = time.perf_counter()
        with np.errstate(divide="ignore", invalid="ignore"):  # its cosine of a zero LSA vector
            for d in docs:
                chunker.chunk(d.text)
        seconds = time.perf_counter() - t0
        out[f"reference_{name.replace('-', '_')}_chars_per_s"] = rate(seconds)
    return out
