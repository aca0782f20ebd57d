"""Hostile input, round two (issue #27): every limit is a one-line error or a warning said once,
nothing exhausts memory, nothing outside chunklab's own files is ever deleted.

Whatever could hang or eat memory on a broken build runs with a small limit (settings, env
vars), or in a child process with a timeout, so a regression fails the test instead of the machine.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from pdf_files import write_pdf
from test_hostile_inputs import own  # noqa: F401 - the fixture: the same small corpus and questions

from chunklab.evaluation import stats

ROOT = Path(__file__).resolve().parents[1]


def _limit_memory() -> None:  # pragma: no cover - runs in the child
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (3_000_000_000, 3_000_000_000))


# -- item 4: the bootstrap in blocks, the same numbers -------------------------------------------

def _reference_weights(m: int, n: int, seed: int) -> np.ndarray:
    """The bootstrap's weights as built before issue #27 (one n x m matrix), for comparison."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, m, size=(n, m))
    w = np.bincount((idx + (np.arange(n) * m)[:, None]).ravel(), minlength=n * m).reshape(n, m)
    return w.astype(np.float64)


def _reference_boot_means(values, n: int, seed: int) -> np.ndarray:
    v = np.asarray(values, dtype=float)
    ok = ~np.isnan(v)
    w = _reference_weights(len(v), n, seed)
    if ok.all():
        return w @ v / len(v)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (w @ np.where(ok, v, 0.0)) / (w @ ok.astype(float))


@pytest.mark.parametrize("m,n,seed", [(1, 50, 0), (7, 300, 1), (525, 2000, 0), (2000, 1000, 7), (3000, 2000, 3)])
def test_bootstrap_means_identical_to_one_matrix(m, n, seed):
    rng = np.random.default_rng(m + seed)
    v = rng.random(m)
    assert np.array_equal(stats._boot_means(v, n, seed), _reference_boot_means(v, n, seed))
    v[:: 3] = np.nan
    if not np.isnan(v).all():
        assert np.array_equal(stats._boot_means(v, n, seed), _reference_boot_means(v, n, seed), equal_nan=True)
    hits = (rng.random(m) < 0.6).astype(float)
    ref = np.percentile(_reference_boot_means(hits, n, seed), [2.5, 97.5])
    got = stats.bootstrap_ci(hits, n=n, seed=seed)
    assert (got["lo"], got["hi"]) == (float(ref[0]), float(ref[1]))


@pytest.mark.parametrize("m,n,seed", [(3, 200, 0), (40, 500, 2), (1000, 300, 5)])
def test_blocked_weights_draw_the_same_numbers(monkeypatch, m, n, seed):
    # Past the size kept whole, the weights are drawn block by block from the same generator:
    # row blocks drawn one after the other are the same draws as one n x m draw.
    monkeypatch.setattr(stats, "_WHOLE_MAX", 0)
    monkeypatch.setattr(stats, "_BLOCK", 64 * m)          # 64-row blocks, the last one shorter
    v = np.random.default_rng(seed).random(m)
    eye = np.eye(m)
    got = np.vstack([stats._products(m, n, seed, eye[:, j])[0] for j in range(min(m, 5))]).T
    assert np.array_equal(got, _reference_weights(m, n, seed)[:, :min(m, 5)])
    hits = (v < 0.5).astype(float)    # 0/1 values: every sum is exact, whatever the BLAS order
    assert np.array_equal(stats._boot_means(hits, n, seed), _reference_boot_means(hits, n, seed))


def test_large_bootstrap_never_holds_the_whole_matrix():
    # 20,000 questions x 2,000 resamples: the whole matrix would be 320 MB of float64 (and as much
    # again of int64 draws); in blocks, a few tens of MB at most, and nothing large is cached.
    m, n = 20_000, 2000
    v = (np.random.default_rng(1).random(m) < 0.5).astype(float)
    stats._cached_weights.cache_clear()
    tracemalloc.start()
    try:
        r = stats.bootstrap_ci(v, n=n, seed=0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 80_000_000, peak
    assert r["lo"] < r["mean"] < r["hi"]
    assert stats._cached_weights.cache_info().currsize == 0


def test_small_weights_still_cached():
    stats._cached_weights.cache_clear()
    stats.bootstrap_ci([0.0, 1.0, 1.0], n=100, seed=0)
    stats.bootstrap_ci([1.0, 1.0, 0.0], n=100, seed=0)
    assert stats._cached_weights.cache_info().hits == 1





# -- item 5: --scheduler local:N is clamped like --jobs --------------------------------------------

def test_scheduler_local_n_clamped_and_said_once(own, tmp_path, monkeypatch, capsys):
    import json

    from chunklab.cli import main
    from chunklab.evaluation import matrix

    seen = []

    def fake_dask(scheduler, fn, items, *, shared=(), per_task=(), names=None, progress=None, cleanup=None, **kw):
        seen.append(scheduler)    # no cluster is started: the configs run here
        try:
            return [fn(*shared, item, *per_task) for item in items]
        finally:
            if cleanup is not None:
                cleanup[0](*cleanup[1])

    monkeypatch.setattr(matrix, "run_on_dask", fake_dask)
    folder, q = own
    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps([{"strategy": "recursive", "target": [40, 80, 120]}]), encoding="utf-8")
    code = main(["matrix", "--corpus", str(folder), "--questions", str(q), "--grid", str(grid),
                 "--scheduler", "local:1000", "--k", "1"])
    err = capsys.readouterr().err.strip().splitlines()
    cores = len(os.sched_getaffinity(0))
    assert code == 0
    assert seen == [f"local:{min(3, cores)}"]
    said = [line for line in err if "local:1000" in line]
    assert len(said) == 1 and said[0].startswith("warning: --scheduler local:1000: ") and "CPU cores" in said[0], err
    # within the bounds, nothing changes and nothing is said
    seen.clear()
    assert main(["matrix", "--corpus", str(folder), "--questions", str(q), "--grid", str(grid),
                 "--scheduler", "local:1", "--k", "1"]) == 0
    assert seen == ["local:1"] and "local:1" not in capsys.readouterr().err


# -- item 6: a splitter that yields forever ------------------------------------------------------

def test_splitter_yielding_forever_is_stopped():
    from chunklab import Document
    from chunklab.adapters import split_with

    # finite here, so that a regression fails (no error raised) instead of filling memory
    def forever(text):
        for _ in range(200_000):
            yield text[:1]

    def endless_text(text):
        for _ in range(100):
            yield text * 1000   # few pieces, ever more text

    doc = Document("d", "甲乙丙。" * 10)
    with pytest.raises(ValueError, match=r"splitter 'forever' returned more than 1080 pieces for document 'd'"):
        split_with(forever, [doc])
    with pytest.raises(ValueError, match=r"splitter 'endless_text' returned more than 104000 characters of pieces"):
        split_with(endless_text, [doc])
    # a sliding window (each character in many pieces) is within the bounds
    window = split_with(lambda t: [t[i:i + 20] for i in range(len(t) - 19)], [doc])
    assert len(window) == len(doc.text) - 19


def test_cli_splitter_yielding_forever_is_one_line_error(own, tmp_path):
    folder, q = own
    (tmp_path / "forever_mod.py").write_text(
        "def forever(text):\n    while True:\n        yield text[:5]\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path)])}
    r = subprocess.run([sys.executable, "-m", "chunklab", "eval", "--corpus", str(folder), "--questions", str(q),
                        "--splitter", "forever_mod:forever"], capture_output=True, text=True, timeout=120, env=env,
                       preexec_fn=_limit_memory)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr[-2000:]
    assert "forever_mod:forever" in lines[0] and "pieces" in lines[0] and "Traceback" not in r.stderr


# -- item 1: the embedding cache's bound deletes only its own files --------------------------------

def _user_files(folder: Path, n: int = 10, size: int = 100_000) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for i in range(n):
        p = folder / f"{i:020d}-1-{i:08x}.npy"     # named like a segment, even
        np.save(p, np.zeros(size // 8))
        os.utime(p, (1_000_000 + i, 1_000_000 + i))  # older than anything the cache writes
        out.append(p)
    return out


def test_cache_bound_deletes_only_its_own_segments(tmp_path, monkeypatch):
    from chunklab.retrieval.embed_cache import MARKER, EmbeddingCache

    shared = tmp_path / "shared"
    kept = _user_files(shared / "experiments" / "run1")
    kept += _user_files(shared / "a" / "b", n=3)                 # the cache's layout, but not its folder
    (shared / "notes.npy").write_bytes(b"x" * 50_000)
    monkeypatch.setenv("CHUNKLAB_CACHE", str(shared))
    monkeypatch.setenv("CHUNKLAB_CACHE_MAX_BYTES", "1000000")
    cache = EmbeddingCache()
    rng = np.random.default_rng(0)
    for i in range(30):      # 30 segments of ~100 kB: three times the bound
        texts = [f"text {i} {j}" for j in range(64)]
        cache.put("toy-model", "passage", texts, rng.random((64, 384)).astype(np.float32))
    assert all(p.exists() for p in kept)
    assert (shared / "notes.npy").exists()
    assert cache.size_bytes() <= 1_000_000
    own = cache.folder("toy-model", "passage")
    assert (own / MARKER).is_file() and len(list(own.glob("*.npy"))) < 30
    # a file the user drops into the cache's own folder under another name is left alone too
    stray = own / "mine.npy"
    np.save(stray, np.zeros(10))
    os.utime(stray, (1_000_000, 1_000_000))
    for i in range(10):
        cache.put("toy-model", "passage", [f"more {i} {j}" for j in range(64)], rng.random((64, 384)).astype(np.float32))
    assert stray.exists() and all(p.exists() for p in kept)


def test_cache_bound_keeps_bounding_an_older_chunklabs_folders(tmp_path):
    # a folder an older chunklab wrote (no marker, but its MODEL file names the model its name
    # was made from) is still the cache's own: its segments are bounded
    from chunklab.retrieval.embed_cache import MARKER, EmbeddingCache

    cache = EmbeddingCache(tmp_path, max_bytes=10**9)
    rng = np.random.default_rng(1)
    for i in range(5):
        cache.put("old-model", "query", [f"q {i} {j}" for j in range(64)], rng.random((64, 384)).astype(np.float32))
    folder = cache.folder("old-model", "query")
    (folder / MARKER).unlink()
    small = EmbeddingCache(tmp_path, max_bytes=200_000)
    small.put("new-model", "query", ["x"], rng.random((1, 384)).astype(np.float32))
    assert small.size_bytes() <= 200_000 and len(list(folder.glob("*.npy"))) < 5


# -- item 10: cached vectors are checked before they are trusted -----------------------------------

def _segments_of(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.npy"))


def _rewrite(path: Path, change) -> None:
    """Rewrite a segment in place, keys kept, its vectors changed by ``change(vec) -> vec``."""
    recs = np.array(np.load(path, allow_pickle=False))
    recs["vec"] = change(recs["vec"])
    with open(path, "r+b") as fh:
        np.save(fh, recs, allow_pickle=False)


def _rename_to_its_checksum(path: Path) -> Path:
    """Give a segment the name its (changed) bytes would have been written under."""
    import hashlib

    digest = hashlib.blake2b(path.read_bytes(), digest_size=8).hexdigest()
    new = path.with_name(path.name[:-len("0123456789abcdef.npy")] + digest + ".npy")
    path.rename(new)
    return new


def _toy_embedder(root: Path, calls: list):
    from chunklab.retrieval.embed_cache import EmbeddingCache
    from chunklab.retrieval.embedder_base import CallableEmbedder

    def fn(texts):
        calls.append(len(texts))
        out = np.zeros((len(texts), 8), dtype=np.float32)
        for i, t in enumerate(texts):
            out[i, sum(map(ord, t)) % 8] = 1.0
        return out

    return CallableEmbedder(fn, name="toy", cache=EmbeddingCache(root))


@pytest.mark.parametrize("how", ["rewritten", "nan", "nan_with_checksum"])
def test_cache_distrusts_changed_or_non_finite_vectors(tmp_path, how):
    from chunklab.retrieval.embed_cache import EmbeddingCacheWarning

    texts = [f"第{i}条" for i in range(20)]
    calls: list = []
    first = _toy_embedder(tmp_path, calls).embed(texts)
    (seg,) = _segments_of(tmp_path / next(p.name for p in tmp_path.iterdir()) / "text")
    if how == "rewritten":
        _rewrite(seg, lambda v: np.roll(v, 1, axis=0))            # keys kept, vectors moved
    else:
        _rewrite(seg, lambda v: np.full_like(v, np.nan))
        if how == "nan_with_checksum":
            seg = _rename_to_its_checksum(seg)                 # as if the NaNs had been written so
    calls.clear()
    emb = _toy_embedder(tmp_path, calls)                       # a new process, in effect
    with pytest.warns(EmbeddingCacheWarning) as said:
        again = emb.embed(texts)
    assert len(said) == 1 and "computed again" in str(said[0].message)
    assert ("checksum" in str(said[0].message)) == (how != "nan_with_checksum")
    assert np.array_equal(again, first) and sum(calls) == 20 and emb.stats.embedded == 20
    assert not seg.exists()
    # the recomputed vectors are cached again, and trusted
    calls.clear()
    import warnings as _w

    with _w.catch_warnings():
        _w.simplefilter("error")
        assert np.array_equal(_toy_embedder(tmp_path, calls).embed(texts), first) and calls == []


def test_cache_gives_an_older_segment_its_checksum(tmp_path):
    texts = ["甲", "乙", "丙"]
    calls: list = []
    first = _toy_embedder(tmp_path, calls).embed(texts)
    (seg,) = _segments_of(next(tmp_path.iterdir()) / "text")
    old = seg.with_name(seg.name[:-len("-0123456789abcdef.npy")] + ".npy")   # as an older chunklab named it
    seg.rename(old)
    calls.clear()
    assert np.array_equal(_toy_embedder(tmp_path, calls).embed(texts), first) and calls == []
    assert not old.exists() and _segments_of(old.parent) == [seg]


def test_cache_put_refuses_non_finite_vectors(tmp_path):
    from chunklab.retrieval.embed_cache import EmbeddingCache

    with pytest.raises(ValueError, match="finite"):
        EmbeddingCache(tmp_path).put("toy", "query", ["a"], np.array([[np.nan, 1.0]], dtype=np.float32))


def test_cli_cached_vectors_changed_in_place_are_recomputed(own, tmp_path):
    import json

    folder, q = own
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CHUNKLAB_CACHE": str(tmp_path / "cache")}
    argv = [sys.executable, "-m", "chunklab", "eval", "--corpus", str(folder), "--questions", str(q),
            "--retriever", "dense", "--embedder", "e5-small", "-p", "target=30", "--k", "1", "--json"]

    def run():
        r = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=env)
        assert r.returncode == 0, r.stderr[-2000:]
        return json.loads(r.stdout), r.stderr.strip().splitlines()

    before, err = run()
    assert before["hit"] == 1.0 and err == []
    passages = next((tmp_path / "cache").iterdir()) / "passage"
    for seg in _segments_of(passages):
        _rewrite(seg, lambda v: np.roll(v, 1, axis=0))
    after, err = run()
    assert after["hit"] == before["hit"] and after["mrr"] == before["mrr"]
    assert len(err) == 1 and err[0].startswith("warning: embedding cache ") and "checksum" in err[0], err
    for seg in _segments_of(passages):     # NaN vectors under a matching checksum: no numpy RuntimeWarning
        _rewrite(seg, lambda v: np.full_like(v, np.nan))
        _rename_to_its_checksum(seg)
    after, err = run()
    assert after["hit"] == before["hit"]
    assert len(err) == 1 and "NaN or infinite" in err[0] and "RuntimeWarning" not in " ".join(err), err
    assert not any("share no" in w for w in after.get("warnings", []))


# -- PDFs made by hand: a compressed text stream, an image-only page with any page box -------------

def _raw_pdf(path: Path, pages: list[dict]) -> Path:
    """A minimal PDF: each page ``{"box": (w, h), "lines": n, "chars": per line}`` (Helvetica text,
    one FlateDecode stream) or ``{"box": (w, h), "image": True}`` (a small gray image over the page)."""
    import zlib

    objs: list[bytes] = [b"", b"", b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]

    def add(body: bytes) -> int:
        objs.append(body)
        return len(objs)

    def stream(data: bytes, extra: bytes = b"") -> bytes:
        packed = zlib.compress(data, 9)
        return b"<< /Length %d /Filter /FlateDecode %s>>\nstream\n" % (len(packed), extra) + packed + b"\nendstream"

    kids = []
    for spec in pages:
        w, h = spec["box"]
        if spec.get("image"):
            pixels = bytes((x * 7 + y * 3) % 256 for y in range(16) for x in range(16))
            img = add(stream(pixels, b"/Type /XObject /Subtype /Image /Width 16 /Height 16 "
                                     b"/ColorSpace /DeviceGray /BitsPerComponent 8 "))
            content = add(stream(b"q %d 0 0 %d 0 0 cm /Im0 Do Q" % (w, h)))
            res = b"<< /XObject << /Im0 %d 0 R >> >>" % img
        else:
            line = b"(" + (b"abcdefghij" * (spec["chars"] // 10 + 1))[:spec["chars"]] + b") '\n"
            content = add(stream(b"BT /F1 8 Tf 9 TL 10 %g Td\n" % (h - 10) + line * spec["lines"] + b"ET"))
            res = b"<< /Font << /F1 3 0 R >> >>"
        kids.append(add(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %d %d] /Resources %s /Contents %d 0 R >>"
                        % (w, h, res, content)))
    objs[0] = b"<< /Type /Catalog /Pages 2 0 R >>"
    objs[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(b"%d 0 R" % k for k in kids), len(kids))
    return write_pdf(path, objs)


# -- item 2: characters per page and per file are capped; pages are released ----------------------

def test_pdf_page_over_the_char_limit_is_an_error(tmp_path):
    from chunklab.preprocess import PdfError, pipeline
    from chunklab.preprocess.pdf import char_limits, read_pages

    pdf = _raw_pdf(tmp_path / "bomb.pdf", [{"box": (600, 800), "lines": 10, "chars": 50},
                                           {"box": (600, 800), "lines": 400, "chars": 50}])
    assert pdf.stat().st_size < 3000        # 20,000 characters from a small compressed stream
    with pytest.raises(PdfError, match=r"bomb\.pdf: page 2 has more than 1,000 characters, the limit per page "
                                       r"\(raise it with --max-page-chars"):
        read_pages(pdf, max_page_chars=1000)
    with char_limits(max_page_chars=1000), pytest.raises(PdfError, match="page 2 has more than 1,000"):
        pipeline(pdf, ocr=False)
    pages = read_pages(pdf, max_page_chars=20_000)
    assert sum(len(g.text) for g in pages[1].segments) == 20_000


def test_pdf_file_over_the_char_limit_is_an_error(tmp_path):
    from chunklab.preprocess import PdfError
    from chunklab.preprocess.pdf import read_pages

    pdf = _raw_pdf(tmp_path / "long.pdf", [{"box": (600, 800), "lines": 10, "chars": 50}] * 5)   # 500 a page
    with pytest.raises(PdfError, match=r"long\.pdf: page 4 takes the pages read past 1,600 characters, the limit "
                                       r"per file \(raise it with --max-pdf-chars"):
        read_pages(pdf, max_file_chars=1600)
    assert len(read_pages(pdf, max_file_chars=2500)) == 5


def test_pdf_pages_are_released_as_they_are_read(tmp_path, monkeypatch):
    import pdfplumber.page

    from chunklab.preprocess import pdf as pdf_mod

    events = []
    close = pdfplumber.page.Page.close

    def spy_close(self):
        events.append(("close", self.page_number))
        return close(self)

    segments = pdf_mod.segments_from_chars

    def spy_segments(chars, number):
        events.append(("read", number))
        return segments(chars, number)

    monkeypatch.setattr(pdfplumber.page.Page, "close", spy_close)
    monkeypatch.setattr(pdf_mod, "segments_from_chars", spy_segments)
    pdf = _raw_pdf(tmp_path / "three.pdf", [{"box": (600, 800), "lines": 3, "chars": 20}] * 3)
    pdf_mod.read_pages(pdf)
    assert events[:6] == [("read", 1), ("close", 1), ("read", 2), ("close", 2), ("read", 3), ("close", 3)]


def test_cli_pdf_char_limits(tmp_path, capsys):
    from chunklab.cli import main

    pdf = _raw_pdf(tmp_path / "bomb.pdf", [{"box": (600, 800), "lines": 400, "chars": 50}])
    assert main(["chunk", str(pdf), "--max-page-chars", "5000"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bomb.pdf" in err[0] and "page 1 has more than 5,000 characters" in err[0] \
        and "--max-page-chars" in err[0], err
    assert main(["chunk", str(pdf), "--max-pdf-chars", "0"]) == 2
    assert "--max-pdf-chars must be an int >= 1, got 0" in capsys.readouterr().err
    assert main(["chunk", str(pdf), "--json"]) == 0          # 20,000 characters: within the defaults


# -- item 3: an image-only page with a huge page box ---------------------------------------------

@pytest.fixture()
def fake_ocr(monkeypatch):
    """Tesseract replaced by a stub that records the size of each image it is given."""
    from PIL import Image

    from chunklab.preprocess import ocr as ocr_mod

    seen = []

    def lines(png, lang="chi_sim", psm=None):
        with Image.open(png) as im:
            seen.append(im.size)
        return []

    monkeypatch.setattr(ocr_mod, "ocr_unavailable_reason", lambda lang="chi_sim": None)
    monkeypatch.setattr(ocr_mod, "ocr_lines", lines)
    monkeypatch.setattr(ocr_mod, "tesseract_version", lambda: "stub")
    return seen


def test_ocr_render_is_scaled_down_to_the_pixel_limit(tmp_path, monkeypatch, fake_ocr):
    from chunklab.preprocess import pdf as pdf_mod

    monkeypatch.setattr(pdf_mod, "MAX_OCR_PIXELS", 1_000_000)
    pdf = _raw_pdf(tmp_path / "wide.pdf", [{"box": (1000, 1000), "image": True}])   # 150 dpi: 4.3 M pixels
    (page,) = pdf_mod.read_pages(pdf, ocr=True)
    (size,) = fake_ocr
    assert size[0] * size[1] <= 1_000_000 and size[0] >= 990
    assert page.ocr["dpi"] < 72.01 and page.skipped.endswith("OCR found no text")


@pytest.mark.parametrize("box", [14_400, 1_000_000])
def test_ocr_page_too_large_is_refused_naming_file_and_page(tmp_path, fake_ocr, box):
    from chunklab.datasets.files import pdf_document
    from chunklab.preprocess import PdfError
    from chunklab.preprocess.pdf import read_pages

    pdf = _raw_pdf(tmp_path / "huge.pdf", [{"box": (600, 800), "lines": 3, "chars": 20},
                                           {"box": (box, box), "image": True}])
    pages = read_pages(pdf, ocr=True)
    assert fake_ocr == []                                    # nothing rendered
    assert "OCR failed: the page box" in pages[1].skipped and "too large to render for OCR" in pages[1].skipped
    with pytest.raises(PdfError) as err:
        pdf_document(pdf, "huge")
    msg = str(err.value)
    assert msg.startswith(f"{pdf}: page 2 could not be read") and "too large" in msg and "\n" not in msg


def test_ocr_page_every_failure_is_recorded(tmp_path, monkeypatch, fake_ocr):
    from chunklab.preprocess import ocr as ocr_mod
    from chunklab.preprocess import pdf as pdf_mod

    def boom(*a, **k):
        raise MemoryError("cannot allocate\nthe bitmap")

    pdf = _raw_pdf(tmp_path / "scan.pdf", [{"box": (600, 800), "image": True}])
    monkeypatch.setattr(ocr_mod, "ocr_lines", boom)
    (page,) = pdf_mod.read_pages(pdf, ocr=True)
    assert page.skipped.endswith("OCR failed: MemoryError: cannot allocate the bitmap")
    monkeypatch.setattr(pdf_mod.tempfile, "TemporaryDirectory", lambda: (_ for _ in ()).throw(RuntimeError("x")))
    (page,) = pdf_mod.read_pages(pdf, ocr=True)
    assert page.skipped.endswith("OCR failed: RuntimeError: x")


def test_cli_huge_scanned_page_is_one_line_error(tmp_path):
    pdf = _raw_pdf(tmp_path / "huge.pdf", [{"box": (1_000_000, 1_000_000), "image": True}])
    r = subprocess.run([sys.executable, "-m", "chunklab", "chunk", str(pdf)], capture_output=True, text=True,
                       timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)}, preexec_fn=_limit_memory)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr[-2000:]
    assert "huge.pdf" in lines[0] and "page 1" in lines[0] and "too large to render for OCR" in lines[0]


def test_cache_merge_removes_only_its_own_stale_temporary_files(tmp_path):
    # the merge cleans up what a crashed writer left (".tmp-<32 hex>[.npy]"), nothing else
    from chunklab.retrieval.embed_cache import EmbeddingCache

    cache = EmbeddingCache(tmp_path, max_segments=2)
    rng = np.random.default_rng(2)
    cache.put("toy", "query", ["a"], rng.random((1, 4)).astype(np.float32))
    folder = cache.folder("toy", "query")
    stale = folder / (".tmp-" + "0" * 32 + ".npy")
    mine = folder / ".tmp-notes.txt"
    for p in (stale, mine):
        p.write_bytes(b"x")
        os.utime(p, (1_000_000, 1_000_000))
    for t in ("b", "c"):   # three segments: merged
        cache.put("toy", "query", [t], rng.random((1, 4)).astype(np.float32))
    assert len(list(folder.glob("*.npy"))) == 1 and not stale.exists() and mine.exists()
