"""Compare what two builds of the book printed: every cell output of every executed chapter.

A refactoring of chunklab must not change a number the book shows. Build the book before and
after (each build leaves its executed notebooks in ``_build/jupyter_execute/``), keep a copy of the
first, then::

    python tools/diff_outputs.py OLD_DIR NEW_DIR            # e.g. /tmp/before _build/jupyter_execute
    python tools/diff_outputs.py OLD_DIR NEW_DIR --mask '\\d+(\\.\\d+)? ?(s|秒|ms)\\b'

It compares, cell by cell, the text of every output (stream text, text/plain, text/html,
text/markdown, errors), the glued values (``*.glue.json``) and the images (by content hash), and
prints each difference as ``notebook cell N: old -> new`` with the first differing line. ``--mask``
replaces every match of a regular expression with ``<masked>`` on both sides before comparing —
for wall-clock timings, which differ from run to run. Exit status: 0 when nothing differs, 1
otherwise.
"""
from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import re
import sys
from pathlib import Path

TEXT_TYPES = ("text/plain", "text/html", "text/markdown", "text/latex")
IMAGE_TYPES = ("image/png", "image/svg+xml", "image/jpeg")


def _join(value) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def cell_outputs(cell: dict) -> list[str]:
    """One comparable string per output of a code cell (images as a content hash)."""
    out: list[str] = []
    for o in cell.get("outputs", []):
        kind = o.get("output_type")
        if kind == "stream":
            text = f"[{o.get('name')}] " + _join(o.get("text", ""))
            if not (out and out[-1] == text):  # MyST-NB's inline mode can store a merged stream twice
                out.append(text)
        elif kind == "error":
            out.append(f"[error] {o.get('ename')}: {o.get('evalue')}")
        else:
            data = o.get("data", {})
            for mime in TEXT_TYPES:
                if mime in data:
                    out.append(f"[{mime}] " + _join(data[mime]))
            for mime in IMAGE_TYPES:
                if mime in data:
                    digest = hashlib.sha256(_join(data[mime]).encode()).hexdigest()[:16]
                    out.append(f"[{mime}] sha256:{digest}")
    return out


def _mask(text: str, patterns: list[re.Pattern]) -> str:
    for p in patterns:
        text = p.sub("<masked>", text)
    return text


def _first_difference(a: str, b: str) -> str:
    for line in difflib.unified_diff(a.splitlines(), b.splitlines(), lineterm="", n=0):
        if line.startswith(("---", "+++", "@@")):
            continue
        return line[:200]
    return "(whitespace only)"


def compare_dirs(old: Path, new: Path, patterns: list[re.Pattern]) -> list[str]:
    """Every difference between the executed notebooks (and glue files) under ``old`` and ``new``."""
    problems: list[str] = []
    old_files = {p.relative_to(old): p for p in sorted(old.rglob("*.ipynb")) if ".ipynb_checkpoints" not in p.parts}
    new_files = {p.relative_to(new): p for p in sorted(new.rglob("*.ipynb")) if ".ipynb_checkpoints" not in p.parts}
    for rel in sorted(set(old_files) ^ set(new_files)):
        problems.append(f"{rel}: only in {'old' if rel in old_files else 'new'}")
    for rel in sorted(set(old_files) & set(new_files)):
        a = [c for c in json.loads(old_files[rel].read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]
        b = [c for c in json.loads(new_files[rel].read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]
        # Cells are paired by their source (a change may add or remove cells); unpaired cells with
        # outputs are reported as added or removed.
        matcher = difflib.SequenceMatcher(a=[_join(c["source"]) for c in a], b=[_join(c["source"]) for c in b],
                                          autojunk=False)
        pairs: list[tuple[int | None, int | None]] = []
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
                pairs += list(zip(range(i1, i2), range(j1, j2)))
            else:
                pairs += [(i, None) for i in range(i1, i2)] + [(None, j) for j in range(j1, j2)]
        for i, j in pairs:
            oa = [_mask(s, patterns) for s in cell_outputs(a[i])] if i is not None else []
            ob = [_mask(s, patterns) for s in cell_outputs(b[j])] if j is not None else []
            if oa == ob:
                continue
            if i is None or j is None:
                problems.append(f"{rel} cell {'-' if i is None else i} -> {'-' if j is None else j}: "
                                f"{'added' if i is None else 'removed'} cell with outputs")
                continue
            detail = (_first_difference("\n".join(oa), "\n".join(ob)) if len(oa) == len(ob)
                      else f"{len(oa)} outputs -> {len(ob)}")
            problems.append(f"{rel} cell {i} -> {j}: {detail}")
        ga, gb = old_files[rel].with_suffix(".glue.json"), new_files[rel].with_suffix(".glue.json")
        if ga.exists() or gb.exists():
            va = json.loads(ga.read_text(encoding="utf-8")) if ga.exists() else {}
            vb = json.loads(gb.read_text(encoding="utf-8")) if gb.exists() else {}
            for key in sorted(set(va) | set(vb)):
                sa = _mask(json.dumps(va.get(key), ensure_ascii=False, sort_keys=True), patterns)
                sb = _mask(json.dumps(vb.get(key), ensure_ascii=False, sort_keys=True), patterns)
                if sa != sb:
                    problems.append(f"{rel} glue {key}: {sa[:80]} -> {sb[:80]}")
    return problems


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("old", type=Path, help="executed notebooks of the first build (a copy of _build/jupyter_execute)")
    p.add_argument("new", type=Path, help="executed notebooks of the second build")
    p.add_argument("--mask", action="append", default=[], metavar="REGEX",
                   help="replace matches by <masked> before comparing (repeatable), e.g. for timings")
    args = p.parse_args(argv)
    for d in (args.old, args.new):
        if not d.is_dir():
            p.error(f"{d} is not a folder")
    problems = compare_dirs(args.old, args.new, [re.compile(m) for m in args.mask])
    for line in problems:
        print(line)
    n = len(list(args.old.rglob("*.ipynb")))
    print(f"{len(problems)} difference{'s' if len(problems) != 1 else ''} in {n} notebooks")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
