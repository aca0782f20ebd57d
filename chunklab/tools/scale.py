"""How time and memory grow with the corpus: one config evaluated on synthetic folder corpora of several sizes.

:func:`bench_scale` builds, for each size, a folder of text files in a temporary directory
(removed afterwards), then evaluates one chunking config on it **in a fresh Python process**, so
that each size's peak memory is its own (the child reports its ``VmHWM``). It returns one
JSON-able dict (``python -m chunklab bench scale``).

The synthetic corpus (:func:`build_corpus`), deterministic for a seed:

* ``laws/<law>.txt`` — the laws of :func:`~chunklab.datasets.load_corpus` ``("laws")`` verbatim
  (for a size below twice the laws, a seeded selection of whole laws filling half of it). The
  questions are the ``laws-scale`` set (:func:`~chunklab.datasets.questions.generate_scale_questions`;
  on a selection, as many as it gives, at most 2,267), their gold spans on these files;
* ``mix/NNN/doc-NNNNN.txt`` — the rest: files of about ``file_chars`` characters, each a title
  line and articles of all the laws drawn at random (with replacement) by a seeded RNG, in
  which one CJK character in 8 to 19 (a random gap) is replaced by a character drawn from the
  laws' own character frequencies. So the text is not one repeated block, its vocabulary grows
  with its size, and no run of 20 CJK characters of a law (the shortest evidence) occurs
  unchanged in it: the evidence of each question stays unique in the corpus, while the mixed
  files hold near duplicates of every article as distractors.
"""
from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterator, Sequence

try:
    import resource
except ImportError:  # pragma: no cover - Windows
    resource = None  # type: ignore[assignment]

import numpy as np

from ..base import get_strategy
from ..datasets import Corpus, load_corpus, load_folder
from ..datasets.questions import SCALE_SIZE, GoldSpan, Question, generate_scale_questions, load_questions
from ..evaluation import EvalSettings, evaluate

__all__ = ["SIZES_MB", "bench_scale", "build_corpus"]

#: The default sizes, in MB (10**6 bytes of UTF-8 files).
SIZES_MB = (25, 50, 100, 200)
_MB = 10 ** 6
_LAWS_DIR = "laws"
_MIX_DIR = "mix"
_FILES_PER_DIR = 200


def _is_cjk(codes: np.ndarray) -> np.ndarray:
    return ((codes >= 0x4E00) & (codes <= 0x9FFF)) | ((codes >= 0x3400) & (codes <= 0x4DBF))


def _codes(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)


class _Mixer:
    """Makes the mixed files: articles of the laws drawn at random, with CJK characters replaced."""

    def __init__(self, laws: Corpus, seed: int) -> None:
        self.articles = [d.text[a["start"]:a["end"]] for d in laws for a in d.meta.get("articles", ())]
        if not self.articles:
            raise ValueError("the laws corpus has no articles")
        codes = np.concatenate([_codes(a) for a in self.articles])
        #: every CJK character of the articles, with repeats: drawing from it follows their frequencies
        self.pool = codes[_is_cjk(codes)].copy()
        self.rng = np.random.default_rng(seed)

    def text(self, title: str, chars: int) -> str:
        """A title line and random articles, about ``chars`` characters in all, mutated."""
        parts = [title]
        n = len(title)
        while n < chars:
            a = self.articles[int(self.rng.integers(len(self.articles)))]
            parts.append(a)
            n += len(a) + 2
        codes = _codes("\n\n".join(parts)).copy()
        cjk = np.flatnonzero(_is_cjk(codes))
        # one replaced character every 8..19 CJK characters: any 20 consecutive ones hold one
        pos = np.cumsum(self.rng.integers(8, 20, size=len(cjk) // 8 + 2)) - int(self.rng.integers(1, 8))
        pos = pos[(pos >= 0) & (pos < len(cjk))]
        at = cjk[pos]
        new = self.pool[self.rng.integers(len(self.pool), size=len(at))]
        same = new == codes[at]
        while same.any():  # a replacement differs from the character it replaces
            new[same] = self.pool[self.rng.integers(len(self.pool), size=int(same.sum()))]
            same = new == codes[at]
        codes[at] = new
        return codes.tobytes().decode("utf-32-le")


def build_corpus(root: str | os.PathLike, mb: float, seed: int = 0, file_chars: int = 100_000) -> dict[str, Any]:
    """Write a synthetic folder corpus of about ``mb`` MB of UTF-8 files under ``root`` (see the module docstring).

    Returns ``{"files", "bytes", "chars", "questions"}``: ``questions`` are
    :class:`~chunklab.datasets.questions.Question` objects whose spans are on the folder's
    document ids (``laws/<law id>``) as :func:`~chunklab.datasets.load_folder` reads them.
    """
    if not (isinstance(mb, (int, float)) and not isinstance(mb, bool) and mb > 0):
        raise ValueError(f"mb must be a number > 0, got {mb!r}")
    root = Path(root)
    budget = int(mb * _MB)
    laws = load_corpus("laws")
    law_bytes = [len(d.text.encode("utf-8")) for d in laws]
    rng = np.random.default_rng(seed)
    if budget >= 2 * sum(law_bytes):
        chosen = list(laws.documents)
        questions = load_questions("laws-scale")
    else:
        chosen, used = [], 0
        for i in rng.permutation(len(laws)):
            if used + law_bytes[i] <= budget // 2:
                chosen.append(laws.documents[i])
                used += law_bytes[i]
        if not chosen:  # the smallest law
            chosen = [laws.documents[int(np.argmin(law_bytes))]]
        chosen.sort(key=lambda d: d.id)
        questions = generate_scale_questions(Corpus("laws-part", chosen), n=SCALE_SIZE, seed=seed, at_most=True)
    (root / _LAWS_DIR).mkdir(parents=True, exist_ok=True)
    files = n_bytes = chars = 0
    for d in chosen:
        data = d.text.encode("utf-8")
        (root / _LAWS_DIR / f"{d.id}.txt").write_bytes(data)
        files += 1; n_bytes += len(data); chars += len(d.text)
    mixer = _Mixer(laws, seed + 1)
    i = 0
    while n_bytes < budget:
        text = mixer.text(f"合成法规汇编 第{i + 1}册", file_chars)
        data = text.encode("utf-8")
        if n_bytes + len(data) > budget:  # the last file is cut at a line end to fit
            cut = data.rfind(b"\n", 0, budget - n_bytes)
            if cut <= 0:
                break
            data = data[:cut + 1]
            text = data.decode("utf-8")
        folder = root / _MIX_DIR / f"{i // _FILES_PER_DIR:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"doc-{i:05d}.txt").write_bytes(data)
        files += 1; n_bytes += len(data); chars += len(text); i += 1
    prefix = f"{_LAWS_DIR}/"
    moved = [replace(q, spans=tuple(GoldSpan(prefix + s.doc_id, s.start, s.end) for s in q.spans),
                     doc=prefix + (q.doc or q.spans[0].doc_id)) for q in questions]
    return {"files": files, "bytes": n_bytes, "chars": chars, "questions": moved}


# --------------------------------------------------------------------------------------------
# One size, in a child process
# --------------------------------------------------------------------------------------------

def _status_bytes(key: str) -> int | None:
    """A ``/proc/self/status`` memory figure (``VmRSS``, ``VmHWM``) in bytes; None where there is none."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _rss_bytes() -> int:
    """This process's resident set size now (0 where /proc is missing)."""
    return _status_bytes("VmRSS") or 0


def _peak_rss_bytes() -> int:
    """This process's peak resident set size.

    ``VmHWM`` where there is /proc: it belongs to the program's own memory map, which ``exec``
    replaces. ``ru_maxrss`` survives ``exec`` on Linux, so a child started from a big parent would
    report the parent's size; it is used only where there is no /proc (kilobytes, bytes on macOS).
    """
    hwm = _status_bytes("VmHWM")
    if hwm is not None or resource is None:
        return hwm or 0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak) if sys.platform == "darwin" else int(peak) * 1024


def _write_questions(path: Path, questions: Sequence[Question]) -> None:
    rows = [[q.id, q.question, list(q.evidence), [[s.doc_id, s.start, s.end] for s in q.spans]] for q in questions]
    path.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")


def _read_questions(path: str) -> list[Question]:
    rows = json.loads(Path(path).read_text(encoding="utf-8"))
    return [Question(qid, text, tuple(ev), tuple(GoldSpan(d, s, e) for d, s, e in spans), "known-item", None, spans[0][0])
            for qid, text, ev, spans in rows]


def _child(job: dict[str, Any]) -> dict[str, Any]:
    """Load the folder, chunk it, evaluate (one config) and report times and memory: the work of one size."""
    base = _rss_bytes()
    t0 = time.perf_counter()
    docs = load_folder(job["root"])
    t1 = time.perf_counter()
    load_rss = _rss_bytes()
    chunks = get_strategy(job["strategy"], **job["params"]).split_documents(docs)
    t2 = time.perf_counter()
    chunk_rss = _rss_bytes()
    questions = _read_questions(job["questions"])
    settings = EvalSettings(k=job["k"], engine=job["engine"])
    if job.get("sample"):
        questions = random.Random(job["seed"]).sample(questions, min(job["sample"], len(questions)))
    result = evaluate(docs, chunks, questions, settings)
    t3 = time.perf_counter()
    return {
        "chars": sum(len(d.text) for d in docs), "documents": len(docs), "chunks": len(chunks),
        "questions": len(questions), "hit": result.summary()["hit"],
        "seconds": t3 - t0, "load_seconds": t1 - t0, "chunk_seconds": t2 - t1, "evaluate_seconds": t3 - t2,
        "index_seconds": result.timings.get("index"), "search_seconds": result.timings.get("search"),
        "peak_rss_bytes": _peak_rss_bytes(), "start_rss_bytes": base, "load_rss_bytes": load_rss,
        "chunk_rss_bytes": chunk_rss,
    }


def _run_child(job: dict[str, Any]) -> dict[str, Any]:
    """Run :func:`_child` in a fresh interpreter (``python -m chunklab.tools.scale JOB``) and read its JSON."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])  # the folder holding the chunklab package
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.run([sys.executable, "-m", "chunklab.tools.scale", json.dumps(job)], env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-15:])
        raise RuntimeError(f"the scale run of {job['root']} failed (exit {proc.returncode}):\n{tail}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------------------------
# The benchmark
# --------------------------------------------------------------------------------------------

def _fit(x: Sequence[float], y: Sequence[float]) -> tuple[float | None, float | None]:
    """Least-squares slope and intercept of ``y`` against ``x`` (None, None with fewer than two distinct x)."""
    if len(set(x)) < 2:
        return None, None
    slope, intercept = np.polyfit(np.asarray(x, dtype=float), np.asarray(y, dtype=float), 1)
    return float(slope), float(intercept)


def _check_sizes(sizes_mb: Any) -> list[float]:
    try:
        sizes = list(sizes_mb)
    except TypeError:
        raise ValueError(f"sizes_mb must be a sequence of sizes in MB, got {sizes_mb!r}") from None
    if not sizes or any(isinstance(s, bool) or not isinstance(s, (int, float)) or not s > 0 for s in sizes):
        raise ValueError(f"sizes_mb must be a non-empty sequence of numbers > 0 (MB), got {sizes_mb!r}")
    return sizes


#: The largest corpus the rank-bm25 reference runs on (it needs ~100 bytes of RSS per character):
#: with larger sizes only, the reference runs on a corpus of this size built for it.
REFERENCE_MAX_MB = 25


def _reference(job: dict[str, Any], row: dict[str, Any], sample: int) -> dict[str, Any]:
    """rank-bm25 on ``job``'s corpus, ``sample`` questions timed and scaled to ``row["questions"]``."""
    r = _run_child({**job, "engine": "reference", "sample": sample})
    per_q = r["search_seconds"] / max(r["questions"], 1)
    return {"engine": "rank-bm25", "mb": row["mb"], "chars": r["chars"], "questions_timed": r["questions"],
            "seconds": round(r["load_seconds"] + r["chunk_seconds"] + (r["index_seconds"] or 0)
                             + per_q * row["questions"], 2),
            "index_seconds": r["index_seconds"], "search_seconds_per_question": per_q,
            "peak_rss_bytes": r["peak_rss_bytes"],
            "bytes_per_char": round(r["peak_rss_bytes"] / max(r["chars"], 1), 2),
            "hit_on_sample": r["hit"]}


def bench_scale(sizes_mb: Sequence[float] = SIZES_MB, strategy: str = "recursive", params: dict[str, Any] | None = None,
                k: int = 5, workdir: str | os.PathLike | None = None, progress: bool = True, *,
                seed: int = 0, reference: bool = True, reference_sample: int = 20) -> dict[str, Any]:
    """Time and peak memory of evaluating one config on synthetic folder corpora of ``sizes_mb`` MB.

    For each size (in the order given), :func:`build_corpus` writes the corpus into a temporary
    folder under ``workdir`` (default: the system's), and a fresh Python process loads it with
    :func:`~chunklab.datasets.load_folder`, chunks it with ``strategy`` / ``params`` (default: the
    strategy's defaults) and runs :func:`~chunklab.evaluation.evaluate` with ``EvalSettings(k=k)``
    (BM25 on bigrams, the index built inside) on its questions; then the folder is removed. A 1 GB
    run is only made when asked for (``sizes_mb=(1000,)``).

    Returns a JSON-able dict: ``sizes`` — per size ``mb, bytes, files, chars, documents, chunks,
    questions, hit, seconds`` (load + chunk + evaluate, in the child), ``load_seconds,
    chunk_seconds, evaluate_seconds, index_seconds, search_seconds``, ``peak_rss_bytes`` (the
    child's ``VmHWM``: everything, the interpreter and its imports included),
    ``bytes_per_char`` (``peak_rss_bytes / chars``), ``start_rss_bytes`` (after the imports),
    ``load_rss_bytes`` (the folder read: the floor), ``chunk_rss_bytes``; then least-squares
    fits against characters: ``seconds_per_mchar`` (slope, seconds per million characters),
    ``seconds_intercept``, ``rss_bytes_per_char`` (slope: the memory each further character costs)
    and ``rss_intercept_bytes`` (None with one size). ``reference`` (unless ``reference=False``)
    is the same evaluation on the smallest size (or, when every size is over
    :data:`REFERENCE_MAX_MB`, on a corpus of that size built for it) with the ``"reference"`` engine (rank-bm25's
    ``BM25Okapi``) in its own child, on ``reference_sample`` questions drawn with ``seed``
    (rank-bm25 scores one question with a Python loop over every chunk): its ``seconds`` are the
    measured load, chunk and index time plus the search time per question scaled to all the
    questions; ``reference_note`` says so. Nothing here asserts a time or a size: they depend on
    the machine (``machine`` tells which).
    """
    from tqdm.auto import tqdm  # here, not at import: tqdm.auto brings asyncio into every `chunklab` command

    sizes = _check_sizes(sizes_mb)
    params = dict(params or {})
    get_strategy(strategy, **params)  # a bad config fails here, before any corpus is written
    k = int(k)
    rows: list[dict[str, Any]] = []
    ref: dict[str, Any] | None = None
    # rank-bm25 needs ~100 bytes per char: past REFERENCE_MAX_MB it runs on a corpus of that size
    ref_size = min(sizes) if min(sizes) <= REFERENCE_MAX_MB else None
    ref_row: dict[str, Any] = {}
    steps = len(sizes) + (1 if reference else 0)

    @contextlib.contextmanager
    def corpus(tag: str, mb: float) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
        """The corpus ``tag`` of ``mb`` MB and its questions, written under ``tmp`` (the folder is
        removed after the block): what :func:`build_corpus` returned, and the child's job."""
        folder, qpath = Path(tmp) / f"corpus-{tag}", Path(tmp) / f"questions-{tag}.json"
        built = build_corpus(folder, mb, seed=seed)
        _write_questions(qpath, built["questions"])
        yield built, {"root": str(folder), "questions": str(qpath), "strategy": strategy, "params": params, "k": k,
                      "engine": "bm25", "seed": seed}
        shutil.rmtree(folder, ignore_errors=True)

    with tempfile.TemporaryDirectory(prefix="chunklab-scale-", dir=workdir) as tmp, \
            tqdm(total=steps, desc="bench scale", unit="run", disable=not progress, file=sys.stderr) as bar:
        for i, mb in enumerate(sizes):
            bar.set_postfix_str(f"{mb:g} MB: writing")
            with corpus(str(i), mb) as (built, job):
                bar.set_postfix_str(f"{mb:g} MB: evaluating")
                out = _run_child(job)
                row = {"mb": mb, "bytes": built["bytes"], "files": built["files"], **out}
                row["bytes_per_char"] = round(out["peak_rss_bytes"] / max(out["chars"], 1), 2)
                rows.append(row)
                bar.update(1)
                if reference and mb == ref_size and ref is None:
                    bar.set_postfix_str(f"{mb:g} MB: rank-bm25")
                    ref, ref_row = _reference(job, row, reference_sample), row
                    bar.update(1)
        if reference and ref is None:
            bar.set_postfix_str(f"{REFERENCE_MAX_MB:g} MB: rank-bm25")
            with corpus("reference", REFERENCE_MAX_MB) as (_, job):
                ours = _run_child(job)  # ours on the same corpus, for the comparison (not a row of ``sizes``)
                ref_row = {"mb": REFERENCE_MAX_MB, **ours}
                ref = _reference(job, ref_row, reference_sample)
                bar.update(1)
    chars = [r["chars"] for r in rows]
    s_slope, s_icpt = _fit(chars, [r["seconds"] for r in rows])
    m_slope, m_icpt = _fit(chars, [r["peak_rss_bytes"] for r in rows])
    out: dict[str, Any] = {
        "strategy": strategy, "params": params, "k": k, "engine": "bm25", "tokenizer": "bigram",
        "sizes": rows,
        "seconds_per_mchar": None if s_slope is None else round(s_slope * 1e6, 4),
        "seconds_intercept": None if s_icpt is None else round(s_icpt, 3),
        "rss_bytes_per_char": None if m_slope is None else round(m_slope, 2),
        "rss_intercept_bytes": None if m_icpt is None else int(m_icpt),
        "machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0], "platform": sys.platform},
    }
    if ref is not None:
        out["reference"] = ref
        out["reference_engine"] = "rank-bm25"
        out["reference_note"] = (
            f"the same load, chunking and evaluation of the {ref['mb']:g} MB corpus with the 'reference' engine "
            f"(rank-bm25 BM25Okapi over the chunk texts, bigram tokens), in its own process: index built once, "
            f"{ref['questions_timed']} of the {ref_row['questions']} questions searched (seed {seed}) and the search "
            f"time scaled to all of them; peak_rss_bytes is that process's"
            + ("" if ref_size is not None else
               f"; every size asked for is over {REFERENCE_MAX_MB} MB, so both engines also ran on a "
               f"{REFERENCE_MAX_MB} MB corpus built for the comparison"))
        out["speedup_vs_reference"] = round(ref["seconds"] / ref_row["seconds"], 1) if ref_row["seconds"] else None
        out["memory_vs_reference"] = round(ref["peak_rss_bytes"] / ref_row["peak_rss_bytes"], 2)
    else:
        out["reference_engine"] = None
        out["reference_note"] = "reference=False: no reference run"
    return out


if __name__ == "__main__":
    print(json.dumps(_child(json.loads(sys.argv[1]))))
