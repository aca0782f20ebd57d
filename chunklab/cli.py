"""Command line: ``python -m chunklab SUBCOMMAND``.

Every subcommand prints a human-readable report, or one JSON document with
``--json``. Errors (a missing file, a bad parameter, evidence not found) are one
clear line on stderr and a non-zero exit status, never a traceback.
"""
from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

from . import __version__
from .base import get_strategy, list_strategies
from .core import Document

__all__ = ["main", "parse_params"]


class CLIError(Exception):
    """An error reported to the user as one line, exit status 2."""


def parse_params(items: Sequence[str] | None) -> dict[str, Any]:
    """Turn ``["target=512", "prefix=true", "separators=['\\n']"]`` into typed values.

    >>> parse_params(["target=512", "prefix=true", "max=none", "mode=rows"])
    {'target': 512, 'prefix': True, 'max': None, 'mode': 'rows'}
    """
    out: dict[str, Any] = {}
    for item in items or ():
        if "=" not in item:
            raise CLIError(f"--param expects key=value, got {item!r}")
        key, raw = item.split("=", 1)
        low = raw.strip().lower()
        if low in ("true", "false"):
            value: Any = low == "true"
        elif low in ("none", "null"):
            value = None
        else:
            try:
                value = ast.literal_eval(raw)
            except (ValueError, SyntaxError):
                value = raw
        out[key.strip()] = value
    return out


def _emit(args, payload: Any, text: Callable[[], str]) -> None:
    if getattr(args, "json", False):
        print(json.dumps(payload, ensure_ascii=False, indent=2, default=str))
    else:
        print(text())


# -- subcommands -------------------------------------------------------------

def cmd_strategies(args) -> int:
    entries = list_strategies()

    def text() -> str:
        lines = []
        for e in entries:
            params = ", ".join(f"{k}={v['default']!r}" for k, v in e["params"].items())
            lines.append(f"{e['name']:<16} {e['family']:<11} {e['summary_zh']}\n{'':<28}{params}")
        return "\n".join(lines)

    _emit(args, entries, text)
    return 0


def cmd_chunk(args) -> int:
    path = Path(args.file)
    if not path.is_file():
        raise CLIError(f"file not found: {path}")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise CLIError(f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    doc = Document(path.stem, text, title=path.stem, meta={"path": str(path)})
    strategy = get_strategy(args.strategy, **parse_params(args.param))
    chunks = strategy.split(doc)
    payload = [
        {"index": c.index, "start": c.start, "end": c.end, "length": len(c), "meta": dict(c.meta),
         "context": c.context, "text": c.text}
        for c in chunks
    ]

    def text_out() -> str:
        rows = [f"{strategy!r}: {len(chunks)} chunks from {len(text)} characters"]
        for c in chunks:
            preview = c.text[:60].replace("\n", "⏎")
            rows.append(f"#{c.index:<4} [{c.start}:{c.end}] len={len(c):<5} {c.meta.get('level', '')}  {preview}")
        return "\n".join(rows)

    _emit(args, payload, text_out)
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m chunklab", description="Chunk documents and measure the result.")
    p.add_argument("--version", action="version", version=f"chunklab {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("strategies", help="list strategies, their parameters and ranges")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_strategies)

    s = sub.add_parser("chunk", help="chunk one file and print the chunks")
    s.add_argument("file")
    s.add_argument("--strategy", "-s", default="recursive")
    s.add_argument("--param", "-p", action="append", metavar="KEY=VALUE")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_chunk)
    for name, (_, _, help_text) in DELEGATED.items():
        sub.add_parser(name, help=help_text + f" (see: python -m chunklab {name} --help)", add_help=False)
    return p


#: Subcommands implemented by their own module's ``*_main(argv)``, with their own options.
DELEGATED = {
    "validate": ("chunklab.questions", "validate_main", "check that every evidence string is found exactly once"),
}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in DELEGATED:
        import importlib

        module, func, _ = DELEGATED[argv[0]]
        return int(getattr(importlib.import_module(module), func)(argv[1:]) or 0)
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (CLIError, ValueError, TypeError, FileNotFoundError, KeyError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"error: {msg}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # pragma: no cover
        print("interrupted", file=sys.stderr)
        return 130
