"""``python -m chunklab export``: the chosen chunking of a corpus as records for a vector store.

One record per chunk, in document order::

    {"id": "hr/handbook#3", "doc": "hr/handbook", "index": 3, "start": 1520, "end": 1980,
     "text": "...", "context": "采购制度 > 第三章", "breadcrumbs": ["第三章"], "pages": [4, 5],
     "meta": {"strategy": "markdown", "path": ["第三章"], ...}, "embedding": [...]}

``text`` is exactly ``document.text[start:end]`` (the text chunklab reads, as ``text FILE`` prints
it); ``context`` (the enrichment a strategy made: title, heading path) is its own field and never
part of ``text``; ``breadcrumbs`` is the heading path of the heading-aware strategies (``[]``
otherwise); ``pages`` the PDF pages the chunk spans (``[]`` for other files); ``embedding`` only
with ``--embedder`` (chunks embedded as passages). The format comes from the suffix of ``--out``
(``.jsonl``/``.ndjson``: JSON Lines; ``.parquet``: Parquet, which needs ``pyarrow``) or from
``--format``. The file is written whole or not at all (a temporary file renamed over it).

Chunks come from ``--strategy``/``--param`` or ``--splitter``/``--splitter-args``, exactly as
``eval`` makes them (:func:`chunklab.cli.configs.eval_chunker`). With ``--embedder`` a progress bar
on stderr shows the embedding when stderr is a terminal, or always with ``--progress``.
"""
from __future__ import annotations

import importlib
import importlib.util
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..core import Chunk
from ..datasets import load_corpus
from ..retrieval.embedders import EMBEDDERS, get_embedder
from .configs import eval_chunker, say_ocr
from .engines import embedder_arg, embedder_from_spec, progress_env
from .output import CLIError, cap, dumps, emit

__all__ = ["FORMATS", "add_export_parser", "cmd_export", "chunk_records", "export_format", "write_records"]

#: The formats ``export`` writes, by the suffixes that select them.
FORMATS: dict[str, tuple[str, ...]] = {"jsonl": (".jsonl", ".ndjson"), "parquet": (".parquet", ".pq")}


def export_format(out: Path, given: str | None) -> str:
    """The format of ``--out``: ``given`` (``--format``), else from the suffix; else a one-line error.

    >>> export_format(Path("chunks.jsonl"), None), export_format(Path("x.bin"), "parquet")
    ('jsonl', 'parquet')
    """
    if given:
        return given
    for name, suffixes in FORMATS.items():
        if out.suffix.lower() in suffixes:
            return name
    raise CLIError(f"--out {out}: cannot tell the format from {out.suffix or 'no suffix'!r}; name the file "
                   f"*.jsonl or *.parquet, or give --format jsonl|parquet", where="--out")


def _plain(value: Any) -> Any:
    """``value`` as JSON data (tuples as lists, numpy scalars as numbers, NaN as null)."""
    return json.loads(dumps(value, indent=None))


def chunk_records(chunks: Sequence[Chunk], vectors: np.ndarray | None = None) -> list[dict[str, Any]]:
    """One record per chunk (see the module docstring); ``vectors``: one row per chunk, or None.

    >>> recs = chunk_records([Chunk("d", 0, 0, 2, "甲乙", meta={"path": ("一",), "pages": (1,)}, context="T > 一")])
    >>> recs[0]["id"], recs[0]["breadcrumbs"], recs[0]["pages"], recs[0]["text"], recs[0]["context"]
    ('d#0', ['一'], [1], '甲乙', 'T > 一')
    """
    out = []
    for i, c in enumerate(chunks):
        meta = _plain(dict(c.meta))
        path = meta.get("path")
        rec = {"id": f"{c.doc_id}#{c.index}", "doc": c.doc_id, "index": c.index, "start": c.start, "end": c.end,
               "text": c.text, "context": c.context,
               "breadcrumbs": [str(p) for p in path] if isinstance(path, list) else [],
               "pages": [int(p) for p in meta.get("pages") or ()], "meta": meta}
        if vectors is not None:
            rec["embedding"] = [float(x) for x in vectors[i]]
        out.append(rec)
    return out


def _parquet_table(records: list[dict[str, Any]]) -> Any:
    pa = importlib.import_module("pyarrow")  # optional: checked by the caller
    columns: dict[str, Any] = {
        "id": pa.array([r["id"] for r in records], pa.string()),
        "doc": pa.array([r["doc"] for r in records], pa.string()),
        "index": pa.array([r["index"] for r in records], pa.int64()),
        "start": pa.array([r["start"] for r in records], pa.int64()),
        "end": pa.array([r["end"] for r in records], pa.int64()),
        "text": pa.array([r["text"] for r in records], pa.string()),
        "context": pa.array([r["context"] for r in records], pa.string()),
        "breadcrumbs": pa.array([r["breadcrumbs"] for r in records], pa.list_(pa.string())),
        "pages": pa.array([r["pages"] for r in records], pa.list_(pa.int64())),
        # meta varies by strategy: one JSON string per chunk, as vector stores take flat metadata
        "meta": pa.array([json.dumps(r["meta"], ensure_ascii=False, sort_keys=True) for r in records], pa.string()),
    }
    if records and "embedding" in records[0]:
        columns["embedding"] = pa.array([r["embedding"] for r in records], pa.list_(pa.float32()))
    return pa.table(columns)


def _check_format(fmt: str) -> None:
    if fmt == "parquet" and importlib.util.find_spec("pyarrow") is None:
        raise CLIError("Parquet needs pyarrow, which is not installed: pip install pyarrow (or write --out *.jsonl)",
                       where="--out")


def write_records(records: list[dict[str, Any]], out: Path, fmt: str) -> None:
    """Write ``records`` to ``out`` as ``fmt`` (``jsonl`` or ``parquet``), whole or not at all.

    Parquet needs ``pyarrow`` (not a dependency of chunklab): without it, a one-line error saying
    ``pip install pyarrow``, before anything is written."""
    _check_format(fmt)
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
    try:
        if fmt == "jsonl":
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                for r in records:
                    f.write(json.dumps(r, ensure_ascii=False) + "\n")
        else:
            os.close(fd)
            importlib.import_module("pyarrow.parquet").write_table(_parquet_table(records), tmp)
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _embedder(spec: str, args_json: str | None, documents) -> Any:
    if spec in EMBEDDERS:
        if args_json:
            raise CLIError("--embedder-args is for an embedder given as MODULE:ATTR", where="--embedder-args")
        return get_embedder(spec, documents)
    args = json.loads(args_json) if args_json else {}
    if not isinstance(args, dict):
        raise CLIError(f'--embedder-args must be a JSON object of keyword arguments, got {args_json[:60]!r}',
                       where="--embedder-args")
    return embedder_from_spec(spec, args)


def _vectors(emb: Any, texts: list[str], spec: str) -> np.ndarray:
    embed = getattr(emb, "embed_passages", None) or emb
    try:
        vecs = np.asarray(embed(texts), dtype=np.float32)
    except Exception as exc:
        raise CLIError(f"--embedder {spec} failed on the chunks: {type(exc).__name__}: {exc}", where="--embedder") from None
    if vecs.ndim != 2 or vecs.shape[0] != len(texts):
        raise CLIError(f"--embedder {spec} returned an array of shape {vecs.shape} for {len(texts)} texts "
                       f"(one row per text expected)", where="--embedder")
    return vecs


def cmd_export(args) -> int:
    """Chunk the corpus, optionally embed the chunks, write one record per chunk to ``--out``."""
    out = Path(args.out)
    fmt = export_format(out, args.format)
    if out.is_dir() or not out.parent.is_dir():
        raise CLIError(f"--out {out}: " + ("is a folder" if out.is_dir() else f"folder {out.parent} does not exist"),
                       where="--out")
    _check_format(fmt)  # before any work
    if args.embedder_args and not args.embedder:
        raise CLIError("--embedder-args needs --embedder MODULE:ATTR", where="--embedder-args")
    chunker = eval_chunker(args)
    if args.corpus is None:
        raise CLIError("--corpus is required: a folder of documents, or xiaobei, laws, laws:民法典, stdlib",
                       where="--corpus")
    corpus = say_ocr(load_corpus(args.corpus, max_file_bytes=cap(args)))
    chunks, _seconds = chunker.chunks(corpus.documents)
    if not chunks:
        raise CLIError(f"{chunker.label} made no chunks of corpus {corpus.name!r}")
    vectors = None
    if args.embedder:
        emb = _embedder(args.embedder, args.embedder_args, corpus.documents)
        with progress_env(args):  # --progress: the bar even when stderr is not a terminal
            vectors = _vectors(emb, [c.embed_text if args.context else c.text for c in chunks], args.embedder)
    records = chunk_records(chunks, vectors)
    write_records(records, out, fmt)
    payload = {"out": str(out), "format": fmt, "chunks": len(records), "documents": len(corpus.documents),
               "corpus": corpus.name, "chunker": chunker.label, "embedder": args.embedder,
               "dims": int(vectors.shape[1]) if vectors is not None else None}

    def text() -> str:
        embedded = (f", embedded by {args.embedder} ({payload['dims']} dimensions)" if vectors is not None else "")
        return (f"wrote {len(records):,} chunks of {len(corpus.documents):,} documents to {out} ({fmt}): "
                f"{chunker.label} on {corpus.name}{embedded}")

    emit(args, payload, text)
    return 0


def add_export_parser(sub, max_file) -> None:
    """The ``export`` subcommand on ``sub`` (``max_file``: adds the file-size and PDF limits)."""
    s = sub.add_parser("export", help="write the chunks of a corpus as JSONL or Parquet (id, doc, start, end, text, "
                                      "context, breadcrumbs, pages, meta; embeddings with --embedder)",
                       description="Write the chosen chunking of a corpus as one record per chunk, JSON Lines or "
                                   "Parquet, ready for a vector store; text is exactly the document's text at "
                                   "[start, end), the context and breadcrumbs are fields of their own.")
    s.add_argument("--corpus", "-c", help="a folder of your .md/.txt/.pdf/... files, or xiaobei, laws, laws:民法典, stdlib")
    s.add_argument("--out", "-o", required=True, metavar="FILE", help="chunks.jsonl or chunks.parquet (Parquet needs pyarrow)")
    s.add_argument("--format", choices=tuple(FORMATS), default=None, help="the format, when --out's suffix does not say it")
    s.add_argument("--strategy", "-s", default=None, help="a chunklab strategy (default recursive)")
    s.add_argument("--param", "-p", action="append", metavar="KEY=VALUE", help="strategy parameter (repeatable)")
    s.add_argument("--splitter", metavar="MODULE:ATTR", default=None,
                   help="another library's splitter instead of --strategy (arguments: --splitter-args)")
    s.add_argument("--splitter-args", metavar="JSON", default=None, help="keyword arguments of the splitter, a JSON object")
    s.add_argument("--embedder", type=embedder_arg, default=None, metavar="NAME|MODULE:ATTR",
                   help=f"also embed each chunk (as a passage): {', '.join(EMBEDDERS)}, or MODULE:ATTR — a callable "
                        f"list[str] -> vectors, an object with embed_documents/encode/embed, or a class making one")
    s.add_argument("--embedder-args", metavar="JSON", default=None,
                   help="keyword arguments of a MODULE:ATTR embedder's class or factory, a JSON object")
    s.add_argument("--context", action="store_true", help="embed context + text (what --context indexes in eval)")
    s.add_argument("--progress", action="store_true",
                   help="show the embedding progress bar on stderr even when stderr is not a terminal")
    s.add_argument("--json", action="store_true", help="print a JSON summary of what was written")
    max_file(s)
    s.set_defaults(func=cmd_export)
