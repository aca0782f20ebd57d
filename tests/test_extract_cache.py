"""Extraction once (issue 28, item 5): the PDF extraction cache, and glyph junk kept out of the text."""
from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from chunklab.datasets import files as dfiles
from chunklab.datasets import load_corpus
from chunklab.preprocess import ExtractCacheWarning, cache as cache_mod, cached_pipeline, pipeline
from chunklab.preprocess.glyphs import clean_text, drop_junk, junk_counts
from chunklab.preprocess.model import Page, Segment
from pdf_files import write_pdf

ROOT = Path(__file__).resolve().parents[1]


def junk_pdf(path: Path) -> Path:
    """One page: a clean line, a heading drawn in a font without a Unicode map (``(cid:N)``), and a
    line with a private-use glyph (``/uniE001``) between two words."""
    content = (b"BT /F1 12 Tf 72 720 Td (Chapter one) Tj ET\n"
               b"BT /F2 12 Tf 72 700 Td <0102010301040105> Tj /F1 12 Tf ( heading) Tj ET\n"
               b"BT /F1 12 Tf 72 680 Td (Rules for travel ) Tj /F3 12 Tf (A) Tj /F1 12 Tf ( and hotels.) Tj ET\n")
    return write_pdf(path, [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R /F2 6 0 R "
        b"/F3 8 0 R >> >> /Contents 4 0 R >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Type /Font /Subtype /Type0 /BaseFont /NoMap /Encoding /Identity-H /DescendantFonts [7 0 R] >>",
        b"<< /Type /Font /Subtype /CIDFontType2 /BaseFont /NoMap /CIDSystemInfo << /Registry (Adobe) "
        b"/Ordering (Identity) /Supplement 0 >> /DW 600 >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding << /Type /Encoding "
        b"/Differences [65 /uniE001] >> >>"])


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("CHUNKLAB_EXTRACT_CACHE", str(folder))
    monkeypatch.setattr(cache_mod, "_warned", set())
    return folder


def _same(a, b, title=True):
    strip = ("extract_cache", "source", "path")
    assert a.text == b.text and (a.title == b.title or not title)
    assert {k: v for k, v in a.meta.items() if k not in strip} == {k: v for k, v in b.meta.items() if k not in strip}


# -- glyph junk ---------------------------------------------------------------------------------

def test_clean_text_drops_junk_and_the_spaces_it_leaves():
    assert clean_text("(cid:3) 标题") == ("标题", [8, 9])
    assert clean_text("标题 (cid:3)(cid:4)")[0] == "标题"
    assert clean_text("a \ue000 b")[0] == "a b"
    assert clean_text("| (cid:1) | x |", collapse=False)[0] == "|  | x |"
    assert junk_counts("(cid:1)\U000f0001\ue123") == {"cid": 1, "private_use": 2}


def test_drop_junk_keeps_boxes_and_cells_aligned():
    text = "甲(cid:9)乙"
    seg = Segment(1, text, 0, 0, 10, 10, 10, chars=tuple((float(i), float(i) + 1) for i in range(len(text))))
    table = Segment(1, "| a(cid:2) | b |", 0, 20, 10, 30, 10, kind="table",
                    cells=((2, 10, (0, 0, 1, 1)), (13, 14, (1, 0, 2, 1))))
    junk_only = Segment(1, "(cid:1)(cid:2)", 0, 40, 10, 50, 10)
    (page,), notes, counts = drop_junk([Page(1, 100, 100, [seg, table, junk_only])], [])
    a, t = page.segments
    assert a.text == "甲乙" and a.chars == ((0.0, 1.0), (8.0, 9.0))
    assert t.text == "| a | b |" and [t.text[c[0]:c[1]] for c in t.cells] == ["a", "b"]
    assert counts == [{"page": 1, "cid": 4, "private_use": 0}]
    (empty,), _, _ = drop_junk([Page(2, 100, 100, [junk_only])])
    assert empty.segments == [] and "no text left" in empty.skipped


def test_pipeline_drops_junk_with_offsets_into_the_clean_text(tmp_path):
    pdf = junk_pdf(tmp_path / "junk.pdf")
    raw = pipeline(pdf, ocr=False)
    assert "(cid:" in raw.text and "\ue001" in raw.text and "glyphs_dropped" not in raw.meta
    doc = pipeline(pdf, ocr=False, junk="drop")
    assert doc.text == "Chapter one\nheading\n\nRules for travel and hotels."
    assert doc.meta["glyphs_dropped"] == {"cid": 4, "private_use": 1,
                                          "pages": [{"page": 1, "cid": 4, "private_use": 1}]}
    for s in doc.meta["spans"]:
        assert len(s["chars"]) == s["end"] - s["start"]
    assert [doc.text[s["start"]:s["end"]] for s in doc.meta["spans"]] == [
        "Chapter one", "heading", "Rules for travel and hotels."]
    with pytest.raises(ValueError, match="junk must be one of"):
        pipeline(pdf, junk="remove")


# -- the cache ----------------------------------------------------------------------------------

def test_second_extraction_comes_from_the_cache_and_equals_the_first(tmp_path, cache_dir):
    pdf = junk_pdf(tmp_path / "a.pdf")
    first = dfiles.pdf_document(pdf, "a")
    assert first.meta["extract_cache"] == {"status": "miss", "dir": str(cache_dir)}
    assert len(list(cache_dir.glob("*.json.gz"))) == 1
    copy = tmp_path / "sub" / "b.pdf"
    copy.parent.mkdir()
    copy.write_bytes(pdf.read_bytes())          # the key is the content, not the path
    second = dfiles.pdf_document(copy, "b")
    assert second.meta["extract_cache"]["status"] == "hit" and second.id == "b"
    assert second.meta["source"] == str(copy)
    _same(first, second)
    _same(second, pipeline(pdf, "a", ocr="auto", lang=dfiles._ocr_lang(), junk="drop"), title=False)
    # other options, other bytes: another entry
    assert cached_pipeline(pdf, "a", ocr=False).meta["extract_cache"]["status"] == "miss"
    pdf.write_bytes(pdf.read_bytes().replace(b"Chapter one", b"Chapter two"))
    changed = dfiles.pdf_document(pdf, "a")
    assert changed.meta["extract_cache"]["status"] == "miss" and changed.text.startswith("Chapter two")


def test_int_keyed_meta_survives_the_round_trip(tmp_path, cache_dir):
    pdf = junk_pdf(tmp_path / "a.pdf")
    fresh = cached_pipeline(pdf, "a", ocr=False, junk="drop")
    hit = cached_pipeline(pdf, "a", ocr=False, junk="drop")
    assert hit.meta["extract_cache"]["status"] == "hit"
    assert list(hit.meta["columns"]) == [1]      # int page keys, as the pipeline gives them
    _same(fresh, hit)


def test_a_damaged_entry_warns_once_and_is_extracted_again(tmp_path, cache_dir):
    pdf = junk_pdf(tmp_path / "a.pdf")
    cached_pipeline(pdf, "a", ocr=False)
    (entry,) = cache_dir.glob("*.json.gz")
    entry.write_bytes(b"not gzip at all")
    with pytest.warns(ExtractCacheWarning, match="cannot be read"):
        doc = cached_pipeline(pdf, "a", ocr=False)
    assert doc.meta["extract_cache"]["status"] == "miss" and doc.text.startswith("Chapter one")
    with gzip.open(entry, "rt", encoding="utf-8") as f:      # rewritten whole
        assert json.load(f)["text"] == doc.text
    assert cached_pipeline(pdf, "a", ocr=False).meta["extract_cache"]["status"] == "hit"


def test_an_unwritable_cache_never_fails_and_warns_once(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("CHUNKLAB_EXTRACT_CACHE", str(blocker))      # a file where the folder should be
    monkeypatch.setattr(cache_mod, "_warned", set())
    pdf = junk_pdf(tmp_path / "a.pdf")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        docs = [dfiles.pdf_document(pdf, "a") for _ in range(3)]
    assert [str(w.message).split(":")[0] for w in seen if issubclass(w.category, ExtractCacheWarning)] == [
        f"extraction cache {blocker}"]
    assert all(d.text.startswith("Chapter one") and d.meta["extract_cache"]["status"] == "unusable" for d in docs)


def test_a_read_only_cache_folder_never_fails(tmp_path, monkeypatch, cache_dir):
    def refuse(*a, **k):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(cache_mod.tempfile, "mkstemp", refuse)
    pdf = junk_pdf(tmp_path / "a.pdf")
    with pytest.warns(ExtractCacheWarning, match="cannot write to it"):
        doc = dfiles.pdf_document(pdf, "a")
    assert doc.text.startswith("Chapter one") and doc.meta["extract_cache"]["status"] == "unusable"


def test_cache_off(tmp_path, monkeypatch):
    monkeypatch.setenv("CHUNKLAB_EXTRACT_CACHE", "off")
    doc = dfiles.pdf_document(junk_pdf(tmp_path / "a.pdf"), "a")
    assert doc.meta["extract_cache"] == {"status": "off"}


def test_default_folder_is_the_users_cache(monkeypatch, tmp_path):
    monkeypatch.delenv("CHUNKLAB_EXTRACT_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_mod.extract_cache_dir() == tmp_path / "chunklab" / "extract"


# -- what the commands say -------------------------------------------------------------------------

def _run(args, env):
    return subprocess.run([sys.executable, "-m", "chunklab", *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **env})


def test_commands_say_where_the_text_came_from_and_what_was_dropped(tmp_path):
    env = {"CHUNKLAB_EXTRACT_CACHE": str(tmp_path / "cache")}
    root = tmp_path / "docs"
    root.mkdir()
    pdf = junk_pdf(root / "manual.pdf")
    (root / "q.jsonl").write_text('{"id": "q1", "question": "hotels?", "evidence": "Rules for travel and hotels."}\n',
                                  encoding="utf-8")
    first = _run(["text", str(pdf)], env)
    assert first.returncode == 0, first.stderr
    assert first.stdout.endswith("Chapter one\nheading\n\nRules for travel and hotels.")
    assert "(cid:" not in first.stdout and "\ue001" not in first.stdout
    assert "0 from the extraction cache" in first.stderr and "dropped from the text 4 glyphs" in first.stderr
    again = json.loads(_run(["text", str(pdf), "--json"], env).stdout)
    assert again["extract_cache"] == "hit" and again["glyphs_dropped"] == {"cid": 4, "private_use": 1, "pages": [1]}
    assert "(text extracted from 1 PDF pages); text read from the extraction cache" in _run(["chunk", str(pdf)], env).stdout.splitlines()[0]
    val = _run(["validate", "--corpus", str(root), "--questions", str(root / "q.jsonl")], env)
    assert val.returncode == 0, val.stdout + val.stderr   # evidence across the dropped glyph validates
    assert "text of 1 from the extraction cache" in val.stdout and "1 private-use characters" in val.stdout
    report = json.loads(_run(["validate", "--corpus", str(root), "--questions", str(root / "q.jsonl"), "--json"],
                             env).stdout)
    assert report["pdf_extraction"]["from_cache"] == ["manual"]
    assert report["pdf_extraction"]["glyphs_dropped"]["manual"]["cid"] == 4


def test_a_folder_corpus_reads_its_pdfs_from_the_cache(tmp_path, cache_dir):
    root = tmp_path / "docs"
    root.mkdir()
    junk_pdf(root / "m.pdf")
    (root / "n.md").write_text("# N\n正文。", encoding="utf-8")
    first = dfiles.load_folder(root)
    second = dfiles.load_folder(root)
    assert [d.meta.get("extract_cache", {}).get("status") for d in first] == ["miss", None]
    assert [d.meta.get("extract_cache", {}).get("status") for d in second] == ["hit", None]
    info = dfiles.extraction_info(second)
    assert info["from_cache"] == ["m"] and info["extracted"] == []
    load_corpus.cache_clear()
