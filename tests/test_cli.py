"""The command line: output, JSON and one-line errors with a non-zero exit."""
from __future__ import annotations

import json

from chunklab.cli import main


def test_strategies_json(capsys):
    assert main(["strategies", "--json"]) == 0
    names = {e["name"] for e in json.loads(capsys.readouterr().out)}
    assert {"fixed", "recursive", "sentence", "paragraph", "token"} <= names


def test_chunk_file(tmp_path, capsys):
    f = tmp_path / "policy.txt"
    f.write_text("第一条 总则。\n\n第二条 适用范围。\n", encoding="utf-8")
    assert main(["chunk", str(f), "--strategy", "paragraph", "--param", "target=10", "--json"]) == 0
    chunks = json.loads(capsys.readouterr().out)
    text = f.read_text(encoding="utf-8")
    assert [c["text"] for c in chunks] == ["第一条 总则。", "第二条 适用范围。"]
    assert all(text[c["start"]:c["end"]] == c["text"] for c in chunks)


def test_errors_are_one_line(tmp_path, capsys):
    f = tmp_path / "a.txt"
    f.write_text("abc", encoding="utf-8")
    assert main(["chunk", str(f), "--param", "target=0"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == "error: target must be an int in [1, 100000], got 0"
    assert main(["chunk", str(tmp_path / "missing.txt")]) == 2
    assert "file not found" in capsys.readouterr().err
    assert main(["chunk", str(f), "--strategy", "recursiv"]) == 2
    assert "did you mean 'recursive'" in capsys.readouterr().err
    (tmp_path / "b.txt").write_bytes(b"\xff\xfe\x00")
    assert main(["chunk", str(tmp_path / "b.txt")]) == 2
    assert "not UTF-8" in capsys.readouterr().err
