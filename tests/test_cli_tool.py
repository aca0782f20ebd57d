"""The tool a team keeps (issue #28): ``text``, ``--where`` and ``eval --by``."""
from __future__ import annotations

import json

from chunklab.cli import main
from cli_errors import one_line_error
from test_hostile_inputs_2 import _raw_pdf


# -- text: a file as chunklab sees it ---------------------------------------------------------------

def test_text_prints_the_text_chunk_offsets_refer_to(tmp_path, capsys):
    f = tmp_path / "policy.txt"
    f.write_bytes("\ufeff第一条 总则。\r\n\r\n第二条 适用范围。".encode("utf-8"))  # BOM and CRLF: read as the corpus is
    assert main(["text", str(f)]) == 0
    out = capsys.readouterr().out
    assert out == "第一条 总则。\n\n第二条 适用范围。"            # exactly the text, nothing added
    assert main(["text", str(f), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data == {"path": str(f), "doc_id": "policy", "chars": len(out), "pages": [], "text": out}
    assert main(["chunk", str(f), "--strategy", "paragraph", "--param", "target=10", "--json"]) == 0
    chunks = json.loads(capsys.readouterr().out)
    assert all(out[c["start"]:c["end"]] == c["text"] for c in chunks)


def test_text_of_a_pdf_marks_pages_outside_the_text(tmp_path, capsys):
    pdf = _raw_pdf(tmp_path / "manual.pdf", [{"box": (600, 800), "lines": 3, "chars": 30},
                                            {"box": (600, 800), "lines": 2, "chars": 20}])
    assert main(["text", str(pdf), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    text, pages = data["text"], data["pages"]
    assert data["doc_id"] == "manual" and data["chars"] == len(text)
    assert [p["page"] for p in pages] == [1, 2] and pages[0]["start"] == 0 and pages[-1]["end"] == len(text)
    assert text[pages[1]["start"]:pages[1]["end"]] == "abcdefghij" * 2 + " " + "abcdefghij" * 2
    assert main(["chunk", str(pdf), "--json"]) == 0              # the same text the chunks' offsets refer to
    chunks = json.loads(capsys.readouterr().out)
    assert all(text[c["start"]:c["end"]] == c["text"] for c in chunks)
    assert main(["text", str(pdf)]) == 0
    lines = capsys.readouterr().out.split("\n")
    marks = [ln for ln in lines if ln.startswith("────")]
    assert marks == ["──── page 1 (offset 0) ────", f"──── page 2 (offset {pages[1]['start']}) ────"]
    assert "".join(ln for ln in lines if not ln.startswith("────")) == text  # the marks' lines hold no text


def test_text_honours_the_limits_and_errors_are_one_line(tmp_path, capsys):
    pdf = _raw_pdf(tmp_path / "big.pdf", [{"box": (600, 800), "lines": 3, "chars": 30}])
    one_line_error(capsys, ["text", str(pdf), "--max-page-chars", "10"], "big.pdf", "--max-page-chars")
    one_line_error(capsys, ["text", str(pdf), "--max-pdf-chars", "0"], "--max-pdf-chars must be an int >= 1")
    f = tmp_path / "a.md"
    f.write_text("x" * 3000, encoding="utf-8")
    one_line_error(capsys, ["text", str(f), "--max-file-mb", "0.001"], "a.md")
    one_line_error(capsys, ["text", str(tmp_path / "missing.md")], "file not found")
    one_line_error(capsys, ["text", str(tmp_path)], "is a folder", "text reads one file")
