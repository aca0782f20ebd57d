"""Hostile input, round two (issue #27), the remaining items: splitters that return the wrong
thing, exit or print; a PDF page tree that loops; unclear cache and password errors; an OCR run
with no end in sight; a result file half written; a miss that retrieved nothing. Each test fails
on the code before its fix."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from chunklab import Document
from chunklab.cli import main
from cli_errors import one_line_error as _one_line_error
from jsonl_files import write_jsonl
from pdf_files import write_pdf

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def docs(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# 差旅\n\n第一条 一线城市住宿费每晚不超过六百元。\n", encoding="utf-8")
    q = write_jsonl(tmp_path / "q.jsonl", [{"id": "q1", "question": "住宿费每晚多少？", "evidence": "住宿费每晚不超过六百元"}])
    return folder, q


@pytest.fixture()
def splitters(tmp_path, monkeypatch):
    """A module ``hostile_splitters`` of misbehaving splitters, importable by ``--splitter``."""
    (tmp_path / "hostile_splitters.py").write_text(
        "import sys\n"
        "def as_dict(text):\n    return {text: 1}\n"
        "def numbers(text):\n    return [1, 2]\n"
        "def nothing(text):\n    return None\n"
        "def exits(text):\n    raise SystemExit(0)\n"
        "def exits_later(text):\n    yield text[:3]\n    sys.exit(0)\n"
        "def chatty(text):\n    print('splitting', len(text))\n    return text.split('。')\n"
        "class Chatty:\n    def __init__(self):\n        print('made')\n"
        "    def split_text(self, text):\n        print('split')\n        return text.split('。')\n",
        encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("hostile_splitters", None)
    yield "hostile_splitters"
    sys.modules.pop("hostile_splitters", None)


# -- 11. a splitter that returns a str or a dict -----------------------------------------------------

def test_a_splitter_returning_a_str_or_a_mapping_is_an_error():
    import os.path

    from chunklab.adapters import split_with

    doc = Document("d", "甲乙丙。丁戊。")
    with pytest.raises(TypeError, match=r"splitter 'join' returned str '甲乙丙。丁戊。' for document 'd'; "
                                        r"expected an iterable of strings"):
        split_with(os.path.join, [doc])        # before: seven one-character chunks
    with pytest.raises(TypeError, match=r"returned dict \{'甲乙丙。丁戊。': 1\} for document 'd'"):
        split_with(lambda t: {t: 1}, [doc])    # before: its keys
    with pytest.raises(TypeError, match=r"splitter 'function' returned NoneType None"):
        split_with(lambda t: None, [doc])
    with pytest.raises(TypeError, match=r"a splitter returned int, expected str or an object with \.text"):
        split_with(lambda t: [1, 2], [doc])     # (this one was an error before too)
    # what was accepted still is: lists, generators, tuples of (start, text)
    assert [c.text for c in split_with(lambda t: iter(t.split("。")[:2]), [doc])] == ["甲乙丙", "丁戊"]
    assert [c.start for c in split_with(lambda t: [(4, "丁戊")], [doc])] == [4]


def test_cli_splitter_returning_a_str_is_a_one_line_error(docs, capsys):
    folder, q = docs
    base = ["eval", "--corpus", str(folder), "--questions", str(q)]
    _one_line_error(capsys, [*base, "--splitter", "os.path:join"], "splitter 'os.path:join'", "returned str")
    _one_line_error(capsys, [*base, "--splitter", "posixpath:basename"], "returned str")


def test_cli_splitter_returning_a_dict_is_a_one_line_error(docs, splitters, capsys):
    folder, q = docs
    _one_line_error(capsys, ["eval", "--corpus", str(folder), "--questions", str(q), "--splitter",
                             f"{splitters}:as_dict"], f"splitter '{splitters}:as_dict'", "returned dict")


# -- 12 (b). a splitter that exits ---------------------------------------------------------------------

@pytest.mark.parametrize("attr", ["exits", "exits_later"])
def test_a_splitter_calling_exit_is_an_error_naming_it(docs, splitters, capsys, attr):
    from chunklab.adapters import split_with

    module = sys.modules.get(splitters) or __import__(splitters)
    with pytest.raises(RuntimeError, match=rf"splitter '{attr}' called exit\(0\) for document 'd'"):
        split_with(getattr(module, attr), [Document("d", "甲乙丙。丁戊。")])
    folder, q = docs
    _one_line_error(capsys, ["eval", "--corpus", str(folder), "--questions", str(q), "--splitter",
                             f"{splitters}:{attr}"], f"splitter '{splitters}:{attr}'", "called exit(0)")


# -- 12 (c). a splitter that prints ----------------------------------------------------------------------

@pytest.mark.parametrize("attr", ["chatty", "Chatty"])
def test_a_splitters_prints_go_to_stderr_and_json_stays_json(docs, splitters, capsys, attr):
    folder, q = docs
    assert main(["eval", "--corpus", str(folder), "--questions", str(q), "--splitter",
                 f"{splitters}:{attr}", "--json"]) == 0
    out = capsys.readouterr()
    result = json.loads(out.out)        # before: 'splitting 23' in front of the JSON
    assert "hit" in result
    assert "split" in out.err


# -- 12 (a). a PDF whose page tree holds itself ----------------------------------------------------

def _looping_pdf(path: Path, nodes: int = 1) -> Path:
    """A PDF whose page tree is ``nodes`` /Pages nodes each holding the next, the last the first."""
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>"]
    for i in range(nodes):
        kid = 2 + (i + 1) % nodes
        objs.append(b"<< /Type /Pages /Kids [%d 0 R] /Count 1 >>" % kid)
    return write_pdf(path, objs)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("nodes", [1, 2])
def test_a_pdf_whose_page_tree_loops_is_an_error_naming_it(tmp_path, capsys, nodes):
    from chunklab.preprocess import PdfError
    from chunklab.preprocess.pdf import read_pages

    pdf = _looping_pdf(tmp_path / "loop.pdf", nodes)
    with pytest.raises(PdfError, match=r"loop\.pdf: its page tree refers to itself"):
        read_pages(pdf)                       # before: [] (an empty document)
    _one_line_error(capsys, ["chunk", str(pdf)], str(pdf), "page tree refers to itself")
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "loop.pdf").write_bytes(pdf.read_bytes())
    (folder / "a.md").write_text("第一条 住宿费每晚不超过六百元。\n", encoding="utf-8")
    q = write_jsonl(tmp_path / "q.jsonl", [{"id": "q1", "question": "住宿费？", "evidence": "住宿费每晚不超过六百元"}])
    _one_line_error(capsys, ["eval", "--corpus", str(folder), "--questions", str(q)], "loop.pdf", "refers to itself")


# -- 14 (a). $CHUNKLAB_CACHE_MAX_BYTES that is not a number of bytes ------------------------------------

@pytest.mark.parametrize("value", ["abc", "1e9", "0", "-5", "1.5"])
def test_cache_max_bytes_errors_name_the_variable(tmp_path, monkeypatch, value):
    from chunklab.retrieval.embed_cache import EmbeddingCache

    monkeypatch.setenv("CHUNKLAB_CACHE_MAX_BYTES", value)
    with pytest.raises(ValueError, match=r"^\$CHUNKLAB_CACHE_MAX_BYTES must be a whole number of bytes >= 1 "
                                        rf"\(e\.g\. 2000000000 .*\), got '{value}'$"):
        EmbeddingCache(tmp_path)
    monkeypatch.setenv("CHUNKLAB_CACHE_MAX_BYTES", " 5000000 ")
    assert EmbeddingCache(tmp_path).max_bytes == 5_000_000


def _run_cli(argv, env_extra, timeout=300):
    import os
    import subprocess

    env = {**os.environ, "PYTHONPATH": str(ROOT), **env_extra}
    return subprocess.run([sys.executable, "-m", "chunklab", *argv], capture_output=True, text=True,
                          timeout=timeout, env=env)


def test_cli_cache_max_bytes_error_is_one_line_naming_it(docs, tmp_path):
    folder, q = docs
    r = _run_cli(["eval", "--corpus", str(folder), "--questions", str(q), "--retriever", "dense",
                  "--embedder", "e5-small"], {"CHUNKLAB_CACHE": str(tmp_path / "c"), "CHUNKLAB_CACHE_MAX_BYTES": "1e9"})
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr[-2000:]
    assert lines[0].startswith("error: $CHUNKLAB_CACHE_MAX_BYTES must be a whole number of bytes >= 1"), lines


# -- 14 (b). the password error on the command line ----------------------------------------------------------

def test_encrypted_pdf_error_says_what_the_command_line_can_do(tmp_path, capsys):
    pypdf = pytest.importorskip("pypdf")
    writer = pypdf.PdfWriter()
    writer.add_blank_page(200, 200)
    writer.encrypt(user_password="secret", owner_password="owner", algorithm="RC4-128")
    pdf = tmp_path / "locked.pdf"
    with open(pdf, "wb") as fh:
        writer.write(fh)
    err = _one_line_error(capsys, ["chunk", str(pdf)], "locked.pdf", "password-protected PDF: no password was given")
    assert "the command line reads no passwords: decrypt a copy first" in err and "qpdf --decrypt" in err
    from chunklab.preprocess import PdfError
    from chunklab.preprocess.pdf import read_pages

    with pytest.raises(PdfError, match="a wrong password was given .*read_pages\\(\\.\\.\\., password=\\.\\.\\.\\)"):
        read_pages(pdf, password="wrong")


# -- 14 (c). an embedding cache that cannot be written ----------------------------------------------------------

def test_an_unwritable_cache_is_said_once_and_the_vectors_still_come(tmp_path):
    import warnings

    import numpy as np

    from chunklab.retrieval.embed_cache import EmbeddingCache, EmbeddingCacheWarning
    from chunklab.retrieval.embedder_base import CallableEmbedder

    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache would be", encoding="utf-8")   # root or not, mkdir fails
    calls = []

    def fn(texts):
        calls.append(len(texts))
        return np.eye(len(texts), 4, dtype=np.float32) + 1

    emb = CallableEmbedder(fn, name="toy", cache=EmbeddingCache(blocked))
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        first = emb.embed(["甲", "乙"])
        again = emb.embed(["甲", "乙", "丙"])
    cache_warnings = [w for w in said if issubclass(w.category, EmbeddingCacheWarning)]
    assert len(cache_warnings) == 1, [str(w.message) for w in said]   # before: none
    msg = str(cache_warnings[0].message)
    assert f"embedding cache {blocked}: cannot write to it" in msg and "every run embeds them again" in msg
    assert first.shape == (2, 4) and again.shape == (3, 4) and sum(calls) >= 3


def test_cli_unwritable_cache_is_one_warning_line(docs, tmp_path):
    folder, q = docs
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("x", encoding="utf-8")
    r = _run_cli(["eval", "--corpus", str(folder), "--questions", str(q), "--retriever", "dense",
                  "--embedder", "e5-small", "--json"], {"CHUNKLAB_CACHE": str(blocked)})
    assert r.returncode == 0, r.stderr[-2000:]
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"warning: embedding cache {blocked}: cannot write to it"), lines
    assert "hit" in json.loads(r.stdout)


# -- 15 (a). --out on a disk that fills up ---------------------------------------------------------------------

def _small_files() -> None:  # pragma: no cover - runs in the child
    import resource
    import signal

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)       # a write past the limit fails with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (300, 300))


@pytest.mark.parametrize("suffix", [".csv", ".json"])
def test_a_failed_out_write_leaves_no_partial_or_empty_file(docs, tmp_path, suffix):
    import subprocess

    folder, q = docs
    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps([{"strategy": "recursive", "target": [40, 80]}]), encoding="utf-8")
    outdir, spare, here = tmp_path / "out", tmp_path / "tmp", tmp_path / "cwd"
    for d in (outdir, spare, here):
        d.mkdir()
    out = outdir / f"results{suffix}"
    out.write_text("the previous results\n", encoding="utf-8")
    env = {**__import__("os").environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(spare), "PYTHONDONTWRITEBYTECODE": "1"}
    r = subprocess.run([sys.executable, "-m", "chunklab", "matrix", "--corpus", str(folder), "--questions", str(q),
                        "--grid", str(grid), "--k", "1", "--out", str(out)], capture_output=True, text=True,
                       timeout=300, env=env, cwd=here, preexec_fn=_small_files)
    assert r.returncode == 2, r.stderr[-2000:]
    assert r.stderr.strip().splitlines()[-1].startswith(f"error: cannot write --out {out}"), r.stderr[-2000:]
    assert "the results are printed below" in r.stderr and "recursive" in r.stdout
    # the old results are intact (before: cut to 300 bytes of the new ones), and nothing else was left
    assert out.read_text(encoding="utf-8") == "the previous results\n"
    assert sorted(p.name for p in outdir.iterdir()) == [out.name]    # before: a results-unsaved-* beside it
    assert list(spare.iterdir()) == [] and list(here.iterdir()) == []


def test_write_atomic_keeps_the_mode_and_replaces_whole(tmp_path):
    import os

    from chunklab.evaluation.matrix import write_atomic

    p = tmp_path / "r.csv"
    p.write_text("old\n", encoding="utf-8")
    os.chmod(p, 0o640)
    write_atomic(p, "new\n")
    assert p.read_text(encoding="utf-8") == "new\n" and (p.stat().st_mode & 0o777) == 0o640
    assert [x.name for x in tmp_path.iterdir()] == ["r.csv"]


# -- 15 (b). a miss that retrieved nothing ---------------------------------------------------------------------

def test_a_miss_that_retrieved_nothing_says_so(docs, tmp_path, capsys):
    import numpy as np

    from chunklab.evaluation.misses import SYMPTOMS, attribute_misses

    bounds = (np.array([0, 10]), np.array([10, 20]))          # two chunks, [0, 10) and [10, 20)
    gold = (np.array([[2], [3]]), np.array([[8], [9]]))        # both questions' evidence is in chunk 0
    # both missed; the first retrieved nothing (-1 padded), the second chunk 1 only
    cases = attribute_misses(np.array([[-1, -1], [1, -1]]), np.array([0, 0]), gold, bounds, k=2,
                             question_ids=["q0", "q1"])
    assert [c["retrieved"] for c in cases] == [0, 1]
    assert [c["nothing_retrieved"] for c in cases] == [True, False]
    assert all(c["symptom"] in SYMPTOMS for c in cases) and SYMPTOMS[-1] == "ranked_low" and len(SYMPTOMS) == 6

    folder, q = docs
    q2 = write_jsonl(tmp_path / "q2.jsonl", [
        {"id": "q1", "question": "qqq zzz", "evidence": "住宿费每晚不超过六百元"},      # shares no term with any chunk
        {"id": "q2", "question": "一线城市住宿费每晚", "evidence": "一线城市住宿费每晚不超过六百元"}])
    assert main(["eval", "--corpus", str(folder), "--questions", str(q2), "-p", "target=20", "--k", "1",
                 "--misses", "5"]) == 0
    out = capsys.readouterr().out
    (line,) = [x for x in out.splitlines() if x.startswith("  miss q1")]
    assert line == "  miss q1 [ranked_low] nothing retrieved: qqq zzz"     # before: 'rank of a holding chunk -'
    assert main(["eval", "--corpus", str(folder), "--questions", str(q2), "-p", "target=20", "--k", "1",
                 "--misses", "5", "--json"]) == 0
    (m,) = [m for m in json.loads(capsys.readouterr().out)["misses"] if m["question_id"] == "q1"]
    assert m["nothing_retrieved"] is True and m["retrieved"] == 0


# -- 8. OCR has a page limit, a progress bar, and says how many pages it read ------------------------------------

@pytest.fixture()
def fake_ocr(monkeypatch):
    """Tesseract replaced by a stub that reads one line of each page image it is given."""
    from chunklab.preprocess import ocr as ocr_mod

    seen = []

    def lines(png, lang="chi_sim", psm=None):
        seen.append(Path(png).name)
        n = int(Path(png).stem[len("page"):])
        return [ocr_mod.OcrLine(f"扫描的{'甲乙丙丁戊己庚辛壬癸'[n - 1]}页文字", 40, 300, 400, 340, 90.0)]

    monkeypatch.setattr(ocr_mod, "ocr_unavailable_reason", lambda lang="chi_sim": None)
    monkeypatch.setattr(ocr_mod, "ocr_lines", lines)
    monkeypatch.setattr(ocr_mod, "tesseract_version", lambda: "stub")
    return seen


def _scan(tmp_path: Path, pages: int, name: str = "scan.pdf") -> Path:
    from test_hostile_inputs_2 import _raw_pdf

    return _raw_pdf(tmp_path / name, [{"box": (300, 400), "image": True}] * pages)


@pytest.mark.timeout(120)
def test_ocr_stops_at_the_page_limit_naming_file_and_page(tmp_path, fake_ocr):
    from chunklab.preprocess import PdfError, pipeline
    from chunklab.preprocess.pdf import MAX_OCR_PAGES, ocr_limits, read_pages

    pdf = _scan(tmp_path, 5)
    with pytest.raises(PdfError, match=r"scan\.pdf: page 4 needs OCR, but 3 pages have been read by OCR already, "
                                       r"the limit per file \(about 0\.5 s a page; raise it with --max-ocr-pages N"):
        read_pages(pdf, ocr=True, max_ocr_pages=3)
    assert len(fake_ocr) == 3                       # no page past the limit was rendered or read
    with ocr_limits(2), pytest.raises(PdfError, match="page 3 needs OCR, but 2 pages"):
        pipeline(pdf, ocr=True)
    with ocr_limits(0), pytest.raises(PdfError, match="page 1 needs OCR, but 0 pages"):
        read_pages(pdf, ocr=True)
    assert 100 <= MAX_OCR_PAGES <= 1000
    doc = pipeline(pdf, ocr=True, max_ocr_pages=5)
    assert doc.meta["ocr_pages"] == 5 and sorted(doc.meta["ocr"]) == [1, 2, 3, 4, 5]
    assert "扫描" in doc.text
    with pytest.raises(ValueError, match="max_ocr_pages"):
        read_pages(pdf, ocr=True, max_ocr_pages=-1)


def test_cli_ocr_page_limit_and_count(tmp_path, fake_ocr, capsys):
    pdf = _scan(tmp_path, 5)
    _one_line_error(capsys, ["chunk", str(pdf), "--max-ocr-pages", "2"], str(pdf), "page 3 needs OCR",
                    "--max-ocr-pages")
    _one_line_error(capsys, ["chunk", str(pdf), "--max-ocr-pages", "-1"], "--max-ocr-pages must be an int >= 0")
    assert main(["chunk", str(pdf)]) == 0
    out = capsys.readouterr()
    assert "(text extracted from 5 PDF pages, 5 of them read by OCR)" in out.out.splitlines()[0]
    assert main(["chunk", str(pdf), "--json"]) == 0
    out = capsys.readouterr()
    json.loads(out.out)
    assert out.err == f"warning: {pdf}: 5 of 5 pages were read by OCR (Tesseract)\n"
    # a corpus with a scanned PDF: one warning line counting the pages
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "scan.pdf").write_bytes(pdf.read_bytes())
    q = write_jsonl(tmp_path / "q.jsonl", [{"id": "q1", "question": "第三页？", "evidence": "扫描的丙页文字"}])
    assert main(["eval", "--corpus", str(folder), "--questions", str(q), "--json"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["warning: 5 scanned PDF pages of 1 file were read by OCR (Tesseract): scan 5"], err
    assert main(["validate", "--corpus", str(folder), "--questions", str(q)]) == 0
    assert capsys.readouterr().err == "warning: 5 scanned PDF pages of 1 file were read by OCR (Tesseract): scan 5\n"
    _one_line_error(capsys, ["eval", "--corpus", str(folder), "--questions", str(q), "--max-ocr-pages", "4"],
                    "scan.pdf: page 5 needs OCR")


@pytest.mark.parametrize("pages,tty,bar", [(6, True, True), (3, True, False), (6, False, False)])
def test_ocr_progress_bar_on_a_terminal_past_a_few_pages(tmp_path, fake_ocr, monkeypatch, capsys, pages, tty, bar):
    from chunklab.preprocess.pdf import read_pages

    pdf = _scan(tmp_path, pages)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: tty)
    read_pages(pdf, ocr=True)
    err = capsys.readouterr().err
    assert ("OCR scan.pdf" in err) == bar, err
    if bar:
        assert "/6 [" in err and "page" in err
