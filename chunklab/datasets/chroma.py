"""Question files in the layout of Chroma's chunking benchmark, read as chunklab question records.

Chroma's evaluation (``chunking_evaluation``) keeps its questions in a CSV file with the columns

``question``
    the question text;
``references``
    a JSON list of ``{"content": ..., "start_index": ..., "end_index": ...}``: each reference is the
    exact text ``corpus[start_index:end_index]``, offsets counted in characters of the corpus file
    as Python reads it;
``corpus_id``
    the corpus file the references come from, by its name without suffix: the benchmark's folder
    ``corpora/`` holds ``<corpus_id>.md`` (or ``.txt``), one file per corpus.

Other columns (a pandas index, say) are ignored. Give that folder as the corpus: a folder corpus
names each file by its stem (:func:`chunklab.datasets.files.load_folder`), so ``corpus_id`` is a
document id. Each row becomes the record::

    {"id": "row-<n>", "question": ..., "doc": <corpus_id>,
     "evidence": [<content>, ...], "spans": [{"start": <start_index>, "end": <end_index>}, ...]}

(``n`` counts data rows from 1), which :mod:`chunklab.datasets.questions` validates like any
other: the text at the offsets must equal ``content``, so a reference that occurs several times in
its corpus is still exactly one span. A row that cannot be turned into a record is a problem
naming its line.

>>> text = 'question,references,corpus_id\\n"Who?","[{""content"": ""Ann"", ""start_index"": 0, ""end_index"": 3}]",names\\n'
>>> chroma_records(text)
[(2, {'id': 'row-1', 'question': 'Who?', 'doc': 'names', 'evidence': ['Ann'], 'spans': [{'start': 0, 'end': 3}]})]
"""
from __future__ import annotations

import csv
import io
import json
from typing import Any

from ..params import loads_json

__all__ = ["CHROMA_COLUMNS", "chroma_records", "is_chroma_csv"]

#: The columns a Chroma question file must have.
CHROMA_COLUMNS = ("question", "references", "corpus_id")


def is_chroma_csv(name: str) -> bool:
    """True for a file name ending in ``.csv`` (a Chroma question file); JSONL otherwise."""
    return name.lower().endswith(".csv")


def _record(n: int, row: dict[str, Any]) -> dict[str, Any] | str:
    raw = row.get("references")
    try:
        refs = loads_json(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError as exc:
        return f"references is not valid JSON: {exc.msg} at column {exc.colno}"
    if not isinstance(refs, list) or not refs:
        return f"references must be a non-empty JSON list of {{content, start_index, end_index}}, got {str(raw)[:60]!r}"
    evidence, spans = [], []
    for i, ref in enumerate(refs):
        if not isinstance(ref, dict) or not {"content", "start_index", "end_index"} <= set(ref):
            return f"reference {i} must be an object with content, start_index and end_index, got {str(ref)[:60]!r}"
        evidence.append(ref["content"])
        spans.append({"start": ref["start_index"], "end": ref["end_index"]})
    return {"id": f"row-{n}", "question": row.get("question"), "doc": row.get("corpus_id"),
            "evidence": evidence, "spans": spans}


def chroma_records(text: str) -> list[tuple[int, dict[str, Any] | str]]:
    """``(line, record)`` for each data row of a Chroma question CSV, or ``(line, problem)``.

    ``line`` is the line the row starts on (a quoted field may hold line breaks); a missing column
    is one problem on line 1.
    """
    # A field may be as long as the file (a long reference list): lift the csv module's 128 KiB
    # field limit for this read, and put it back after.
    limit = csv.field_size_limit()
    csv.field_size_limit(max(limit, len(text) + 1))
    try:
        return _chroma_rows(text)
    finally:
        csv.field_size_limit(limit)


def _chroma_rows(text: str) -> list[tuple[int, dict[str, Any] | str]]:
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = reader.fieldnames or []
    missing = [c for c in CHROMA_COLUMNS if c not in header]
    if missing:
        return [(1, f"not a Chroma question file: missing column{'s' if len(missing) > 1 else ''} "
                    f"{', '.join(missing)} (its columns are {', '.join(CHROMA_COLUMNS)}; got "
                    f"{', '.join(header) or 'none'})")]
    out: list[tuple[int, dict[str, Any] | str]] = []
    line = reader.line_num + 1
    try:
        for n, row in enumerate(reader, 1):
            if None in row:  # more fields than the header
                out.append((line, f"row has {len(header) + len(row[None])} fields, the header {len(header)}"))
            elif any(row.get(c) is None for c in CHROMA_COLUMNS):
                out.append((line, f"row has fewer fields than the header ({', '.join(header)})"))
            else:
                out.append((line, _record(n, row)))
            line = reader.line_num + 1
    except csv.Error as exc:
        out.append((line, f"not valid CSV: {exc}"))
    return out
