"""Write question files for tests: one JSON object (or a raw line, given as a string) per line."""
from __future__ import annotations

import json
from pathlib import Path


def write_jsonl(path: Path, records) -> Path:
    """Write ``records`` to ``path`` as JSON Lines and return ``path``; strings are written as they are,
    so a test can put a malformed line among good ones."""
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in records) + "\n",
                    encoding="utf-8")
    return path
