"""The matrix runner on a tiny grid: expansion, skipped combinations, executors, writers."""
from __future__ import annotations

import json
from collections import namedtuple
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import pytest

from chunklab.core import Document
from chunklab.evaluation.matrix import ARTICLE_002_GRID, MatrixResult, expand_grid, run_matrix

Q = namedtuple("Q", "id question spans")
GoldSpan = namedtuple("GoldSpan", "doc_id start end")

TEXT = ("第一条　为了规范劳动合同，制定本法。\n\n第二条　用人单位与劳动者订立劳动合同，适用本法。\n\n"
        "第三条　订立劳动合同，应当遵循合法、公平、平等自愿的原则。\n\n第四条　用人单位应当依法建立规章制度。")
DOC = Document("law", TEXT, title="劳动合同法")
DOC2 = Document("other", "第一条　本规定适用于图书馆。\n\n第二条　图书馆应当免费开放。")


def _q(i, phrase, question, doc=DOC):
    s = doc.text.index(phrase)
    return Q(f"q{i}", question, (GoldSpan(doc.id, s, s + len(phrase)),))


QUESTIONS = [
    _q(0, "平等自愿的原则", "订立劳动合同遵循什么原则"),
    _q(1, "依法建立规章制度", "用人单位要建立规章制度吗"),
    _q(2, "图书馆应当免费开放", "图书馆免费开放吗", DOC2),
]
GRID = [{"strategy": "fixed", "size": [20, 40], "overlap": [0, 0.25, 40]},
        {"strategy": "recursive", "target": 30, "overlap": [0, 10]}]


def test_expand_grid_fraction_and_skips():
    configs, skipped = expand_grid(GRID)
    labels = [c["label"] for c in configs]
    assert "fixed(size=20, overlap=5)" in labels and "fixed(size=40, overlap=10)" in labels
    assert len(configs) == 6
    assert [s["label"] for s in skipped] == ["fixed(size=20, overlap=40)", "fixed(size=40, overlap=40)"]
    assert all("overlap" in s["reason"] for s in skipped)
    _, bad = expand_grid({"strategy": "fixed", "size": 10, "overlap": 1.5})
    assert "share in [0, 1)" in bad[0]["reason"]
    with pytest.raises(ValueError, match="'strategy' key"):
        expand_grid([{"size": 3}])
    assert len(expand_grid(ARTICLE_002_GRID)[0]) == 27


def _strip(rows):
    return [{k: v for k, v in r.items() if "seconds" not in k} for r in rows]


def test_run_matrix_serial_and_threads(tmp_path):
    res = run_matrix([DOC, DOC2], QUESTIONS, GRID, k=2, progress=False, n_boot=100)
    assert isinstance(res, MatrixResult)
    assert len(res.rows) == 6 and len(res.skipped) == 2
    row = res.rows[0]
    assert row["label"] == "fixed(size=20, overlap=0)" and row["strategy"] == "fixed" and row["size"] == 20
    for key in ("hit", "hit_lo", "hit_hi", "recall", "iou", "clause_cut_rate", "chunks", "miss_cut", "ingest_seconds"):
        assert key in row
    assert res.best("hit")["hit"] == max(r["hit"] for r in res.rows)
    csv_text = res.to_csv(tmp_path / "m.csv")
    assert csv_text.splitlines()[0].startswith("label,") and len(csv_text.splitlines()) == 7
    data = json.loads(res.to_json(tmp_path / "m.json"))
    assert len(data["rows"]) == 6 and data["skipped"][0]["reason"]
    with ThreadPoolExecutor(2) as ex:
        threaded = run_matrix([DOC, DOC2], QUESTIONS, GRID, k=2, progress=False, n_boot=100, executor=ex)
    assert _strip(threaded.rows) == _strip(res.rows)


def test_run_matrix_process_pool():
    with ProcessPoolExecutor(2) as ex:
        res = run_matrix([DOC, DOC2], QUESTIONS, GRID[1:], k=2, progress=False, n_boot=100, executor=ex)
    serial = run_matrix([DOC, DOC2], QUESTIONS, GRID[1:], k=2, progress=False, n_boot=100)
    assert _strip(res.rows) == _strip(serial.rows)


def test_run_matrix_rejects_bad_k():
    with pytest.raises(ValueError, match="k must be an int >= 1"):
        run_matrix([DOC], QUESTIONS[:1], GRID, k=0)


def test_heatmap():
    import matplotlib

    matplotlib.use("Agg")
    from chunklab.viz.plots import metric_heatmap  # MatrixResult.heatmap moved to the viz layer

    res = run_matrix([DOC, DOC2], QUESTIONS, GRID, k=2, progress=False, n_boot=50)
    ax = metric_heatmap([r for r in res.rows if r["strategy"] == "fixed"], "size", "overlap", "hit").axes[0]
    assert ax.get_xlabel() == "overlap"


def test_corpus_and_questions_are_tokenised_once_per_run(monkeypatch):
    # Work that does not depend on the configuration is done once: one CorpusIndex (the corpus
    # tokenised) and one encoding of the questions, however many configs run.
    from chunklab import retrieval

    built, encoded = [], []
    real_init, real_encode = retrieval.CorpusIndex.__init__, retrieval.CorpusIndex.encode_queries

    def init(self, *a, **kw):
        built.append(1)
        real_init(self, *a, **kw)

    def encode(self, queries):
        if tuple(queries) not in self._query_cache:
            encoded.append(len(queries))
        return real_encode(self, queries)

    monkeypatch.setattr(retrieval.CorpusIndex, "__init__", init)
    monkeypatch.setattr(retrieval.CorpusIndex, "encode_queries", encode)
    res = run_matrix([DOC, DOC2], QUESTIONS, GRID, k=2, progress=False, n_boot=100)
    assert len(res.rows) == 6
    assert built == [1] and encoded == [len(QUESTIONS)]


def test_progress_bar_counts_configs(capsys):
    run_matrix([DOC, DOC2], QUESTIONS, GRID[1:], k=2, progress=True, n_boot=100)
    err = capsys.readouterr().err
    assert "matrix" in err and "2/2" in err


def test_run_matrix_takes_the_evaluation_settings():
    from chunklab.evaluation import EvalSettings, evaluate
    from chunklab.evaluation.matrix import MATRIX_SETTINGS

    assert MATRIX_SETTINGS == EvalSettings(n_boot=1000)
    s = EvalSettings(k=2, n_boot=100, budget=30, seed=1)
    a = run_matrix([DOC, DOC2], QUESTIONS, GRID[1:], s, progress=False)
    b = run_matrix([DOC, DOC2], QUESTIONS, GRID[1:], k=2, n_boot=100, budget=30, seed=1, progress=False)
    c = run_matrix([DOC, DOC2], QUESTIONS, GRID[1:], EvalSettings(k=9), k=2, n_boot=100, budget=30, seed=1,
                   progress=False)
    assert _strip(a.rows) == _strip(b.rows) == _strip(c.rows)
    # each row is evaluate() of that chunking with the same settings (default: 1,000 resamples)
    from chunklab.base import get_strategy

    chunks = get_strategy("recursive", target=30, overlap=0).split_documents([DOC, DOC2])
    one = evaluate([DOC, DOC2], chunks, QUESTIONS, s).summary()
    for key, value in one.items():
        if "seconds" not in key:
            assert a.rows[0][key] == value or value != value and a.rows[0][key] != a.rows[0][key], key
    default = run_matrix([DOC, DOC2], QUESTIONS, GRID[1:2], progress=False).rows[0]
    want = evaluate([DOC, DOC2], chunks, QUESTIONS, MATRIX_SETTINGS).summary()
    assert (default["hit_lo"], default["hit_hi"]) == (want["hit_lo"], want["hit_hi"])


def test_run_matrix_rejects_settings_it_cannot_run():
    from chunklab.evaluation import EvalSettings
    from chunklab.retrieval import get_tokenizer

    with pytest.raises(ValueError, match="engine must be 'bm25' or 'fast'.*got 'dense'"):
        run_matrix([DOC], QUESTIONS[:1], GRID, engine="dense")
    with pytest.raises(ValueError, match="tokenizer must be a tokenizer name"):
        run_matrix([DOC], QUESTIONS[:1], GRID, EvalSettings(tokenizer=get_tokenizer("words")))
    with pytest.raises(TypeError, match=r"unknown evaluation option 'budget_units' \(did you mean 'budget_unit'\?\)"):
        run_matrix([DOC], QUESTIONS[:1], GRID, budget_units="tokens")
    assert run_matrix([DOC], QUESTIONS[:1], GRID[1:], engine="bm25", progress=False, n_boot=10).rows[0]["engine"] == "bm25"


def test_the_heatmap_is_drawn_by_the_viz_layer():
    # evaluation may not import viz: MatrixResult has no plotting method, metric_heatmap draws its rows
    assert not hasattr(MatrixResult, "heatmap")
