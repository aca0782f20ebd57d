"""bench scale: the synthetic corpora, and the shape of the result (no time or memory thresholds)."""
from __future__ import annotations

import json

import pytest

from chunklab.datasets import load_folder
from chunklab.datasets.questions import generate_scale_questions
from chunklab.tools.scale import _fit, bench_scale, build_corpus


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("scale") / "corpus"
    return root, build_corpus(root, 0.2, seed=0)


def test_build_corpus_size_and_questions(tiny):
    root, built = tiny
    files = sorted(p for p in root.rglob("*.txt"))
    assert len(files) == built["files"] >= 2
    assert sum(p.stat().st_size for p in files) == built["bytes"]
    assert 0.9 * 200_000 <= built["bytes"] <= 200_000
    assert any(p.parent.name == "laws" for p in files) and any("mix" in p.parts for p in files)
    docs = {d.id: d for d in load_folder(root)}
    assert sum(len(d.text) for d in docs.values()) == built["chars"]
    qs = built["questions"]
    assert qs and len({q.id for q in qs}) == len(qs)
    corpus_text = "\n".join(d.text for d in docs.values())
    for q in qs:
        (span,), (ev,) = q.spans, q.evidence
        assert docs[span.doc_id].text[span.start:span.end] == ev
        # the mixed files never repeat a law's evidence verbatim
        assert corpus_text.count(ev) == 1


def test_build_corpus_is_deterministic_and_not_one_block(tmp_path, tiny):
    root, built = tiny
    again = build_corpus(tmp_path / "again", 0.2, seed=0)
    assert again["bytes"] == built["bytes"] and [q.spans for q in again["questions"]] == [q.spans for q in built["questions"]]
    mixed = sorted((tmp_path / "again" / "mix").rglob("*.txt"))
    assert [p.read_bytes() for p in mixed] == [(root / p.relative_to(tmp_path / "again")).read_bytes() for p in mixed]
    texts = [p.read_text(encoding="utf-8") for p in mixed]
    assert len(set(texts)) == len(texts)


def test_bench_scale_json_shape(tmp_path):
    r = bench_scale((0.2,), k=3, workdir=tmp_path, progress=False, reference_sample=5)
    json.dumps(r)  # JSON-able as it is
    (row,) = r["sizes"]
    for key in ("mb", "chars", "seconds", "peak_rss_bytes", "bytes_per_char", "questions", "hit"):
        assert key in row
    assert row["mb"] == 0.2 and row["chars"] > 0 and row["questions"] > 0
    assert isinstance(row["bytes_per_char"], float) and row["bytes_per_char"] > 0
    assert row["peak_rss_bytes"] >= row["load_rss_bytes"] > 0
    assert 0 <= row["hit"] <= 1
    assert r["seconds_per_mchar"] is None and r["rss_bytes_per_char"] is None  # one size: no slope
    assert r["reference_engine"] == "rank-bm25" and "rank-bm25" in r["reference_note"]
    assert r["reference"]["questions_timed"] == 5 and r["reference"]["peak_rss_bytes"] > 0
    assert list(tmp_path.iterdir()) == []  # the corpora are removed


def test_fit_and_arguments():
    slope, icpt = _fit([1, 2, 3], [3, 5, 7])
    assert slope == pytest.approx(2) and icpt == pytest.approx(1)
    assert _fit([5, 5], [1, 2]) == (None, None)
    for bad in ((), (0,), (-1, 5), ("25",), 25):
        with pytest.raises(ValueError, match="sizes_mb"):
            bench_scale(bad, progress=False)
    with pytest.raises(ValueError, match="mb must be"):
        build_corpus("/nonexistent", 0)


def test_generate_scale_questions_at_most():
    with pytest.raises(ValueError, match="fewer than n=5000"):
        generate_scale_questions("laws:劳动合同法", n=5000)
    qs = generate_scale_questions("laws:劳动合同法", n=5000, at_most=True)
    assert 0 < len(qs) < 5000
    assert qs[:3] == generate_scale_questions("laws:劳动合同法", n=3)


def test_reference_runs_on_a_small_corpus_when_every_size_is_large(tmp_path, monkeypatch):
    # rank-bm25 needs ~100 bytes per char: a 1 GB run must not hand it the 1 GB corpus
    from chunklab.tools import scale

    monkeypatch.setattr(scale, "REFERENCE_MAX_MB", 0.1)
    r = scale.bench_scale((0.2,), k=3, workdir=tmp_path, progress=False, reference_sample=5)
    assert r["reference"]["mb"] == 0.1 and r["reference"]["chars"] < r["sizes"][0]["chars"]
    assert "built for the comparison" in r["reference_note"] and r["speedup_vs_reference"] > 0
