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

    with pytest.raises(ValueError, match="engine must be one of 'bm25', 'fast', 'dense', 'hybrid'.*got 'reference'"):
        run_matrix([DOC], QUESTIONS[:1], GRID, engine="reference")
    with pytest.raises(ValueError, match="engine 'dense' needs an embedder"):
        run_matrix([DOC], QUESTIONS[:1], GRID, engine="dense")
    with pytest.raises(ValueError, match="tokenizer must be a tokenizer name"):
        run_matrix([DOC], QUESTIONS[:1], GRID, EvalSettings(tokenizer=get_tokenizer("words")))
    with pytest.raises(TypeError, match=r"unknown evaluation option 'budget_units' \(did you mean 'budget_unit'\?\)"):
        run_matrix([DOC], QUESTIONS[:1], GRID, budget_units="tokens")
    assert run_matrix([DOC], QUESTIONS[:1], GRID[1:], engine="bm25", progress=False, n_boot=10).rows[0]["engine"] == "bm25"


def test_the_heatmap_is_drawn_by_the_viz_layer():
    # evaluation may not import viz: MatrixResult has no plotting method, metric_heatmap draws its rows
    assert not hasattr(MatrixResult, "heatmap")


# -- dense and hybrid retrieval (issue #20) ---------------------------------------------------------

def _same_row(row, want):
    """A matrix row equals evaluate()'s summary of the same chunking (timings and warnings aside)."""
    for key, value in want.items():
        if "seconds" in key or key == "warnings":
            continue
        got = row[key]
        assert got == value or (value != value and got != got), key


@pytest.mark.timeout(300)
@pytest.mark.parametrize("engine", ["dense", "hybrid"])
def test_run_matrix_with_dense_and_hybrid_retrieval(engine):
    from chunklab.base import get_strategy
    from chunklab.evaluation import EvalSettings, evaluate

    s = EvalSettings(k=2, n_boot=100, engine=engine, embedder="lsa")
    res = run_matrix([DOC, DOC2], QUESTIONS, GRID, s, progress=False)
    assert len(res.rows) == 6 and (res.engine, res.embedder) == (engine, "lsa")
    assert {(r["engine"], r["embedder"]) for r in res.rows} == {(engine, "lsa")}
    assert json.loads(res.to_json())["embedder"] == "lsa"
    configs, _ = expand_grid(GRID)
    for cfg, row in zip(configs, res.rows):
        chunks = get_strategy(cfg["strategy"], **cfg["params"]).split_documents([DOC, DOC2])
        _same_row(row, evaluate([DOC, DOC2], chunks, QUESTIONS, s).summary())
    with ThreadPoolExecutor(2) as ex:
        threaded = run_matrix([DOC, DOC2], QUESTIONS, GRID, s, progress=False, executor=ex)
    assert _strip(threaded.rows) == _strip(res.rows)


@pytest.mark.timeout(300)
def test_dense_matrix_in_a_process_pool_equals_the_serial_run():
    s = dict(k=2, n_boot=100, engine="dense", embedder="lsa")
    with ProcessPoolExecutor(2) as ex:
        res = run_matrix([DOC, DOC2], QUESTIONS, GRID[1:], progress=False, executor=ex, **s)
    serial = run_matrix([DOC, DOC2], QUESTIONS, GRID[1:], progress=False, **s)
    assert _strip(res.rows) == _strip(serial.rows) and res.rows[0]["engine"] == "dense"


def test_bm25_matrix_says_which_retriever_ran():
    res = run_matrix([DOC, DOC2], QUESTIONS, GRID[1:], k=2, n_boot=50, progress=False, embedder="lsa")
    assert (res.engine, res.embedder) == ("fast", None)  # the embedder only serves dense and hybrid
    assert "embedder" not in res.rows[0] and res.rows[0]["engine"] == "fast"


# -- executors: the corpus reaches each worker once --------------------------------------------------

def test_which_executors_see_this_process_state():
    import multiprocessing as mp

    from chunklab.evaluation.matrix import _shares_state

    with ThreadPoolExecutor(1) as ex:
        assert _shares_state(ex)
    with ProcessPoolExecutor(1, mp_context=mp.get_context("fork")) as ex:
        assert _shares_state(ex)  # its workers are forked at the first task, with this process's memory
        ex.submit(int, 1).result()
        assert not _shares_state(ex)  # started already: tasks must carry the corpus
    with ProcessPoolExecutor(1, mp_context=mp.get_context("spawn")) as ex:
        assert not _shares_state(ex)


@pytest.mark.timeout(300)
def test_tasks_that_reach_a_worker_without_the_corpus_are_sent_again_with_it(monkeypatch):
    import multiprocessing as mp

    from chunklab.evaluation import matrix

    serial = run_matrix([DOC, DOC2], QUESTIONS, GRID[1:], k=2, progress=False, n_boot=100)
    # a spawned worker starts empty: told (wrongly) that it shares this process's state, every task
    # first goes without the corpus, fails with _MissingState, and is sent again with it
    monkeypatch.setattr(matrix, "_shares_state", lambda ex: True)
    with ProcessPoolExecutor(1, mp_context=mp.get_context("spawn")) as ex:
        res = run_matrix([DOC, DOC2], QUESTIONS, GRID[1:], k=2, progress=False, n_boot=100, executor=ex)
        assert _strip(res.rows) == _strip(serial.rows)
        # the same pool again (its worker holds the corpus now): nothing is sent twice
        again = run_matrix([DOC, DOC2], QUESTIONS, GRID[1:], k=2, progress=False, n_boot=100, executor=ex)
        assert _strip(again.rows) == _strip(serial.rows)


def test_a_worker_never_mixes_up_two_question_sets():
    # the per-process state is keyed by the questions too: a second run on the same corpus with
    # other questions (in a pool whose workers stay alive) measures those questions
    with ProcessPoolExecutor(1) as ex:
        a = run_matrix([DOC, DOC2], QUESTIONS, GRID[1:], k=2, progress=False, n_boot=50, executor=ex)
        b = run_matrix([DOC, DOC2], QUESTIONS[:2], GRID[1:], k=2, progress=False, n_boot=50, executor=ex)
    assert a.rows[0]["questions"] == 3 and b.rows[0]["questions"] == 2


@pytest.mark.timeout(300)
def test_bench_matrix_runs_on_the_jobs_asked_for():
    from chunklab.tools.bench import bench_matrix

    r = bench_matrix([DOC, DOC2], QUESTIONS, grid=GRID[1:], reference_sample=2, jobs=2)
    assert (r["configs"], r["jobs"], r["questions"], r["shared"]) == (2, 2, 3, 0) and r["seconds"] > 0
    r = bench_matrix([DOC, DOC2], QUESTIONS, grid=SAME_PARAMS[:2], reference_sample=2)
    assert (r["configs"], r["shared"], r["jobs"]) == (4, 2, 1)
    assert bench_matrix([DOC, DOC2], QUESTIONS, grid=SAME_PARAMS[:2], reference_sample=2, share=False)["shared"] == 0
    one = {"strategy": "recursive", "target": 30, "overlap": 0}
    assert bench_matrix([DOC, DOC2], QUESTIONS, grid=one, reference_sample=2, jobs=4)["jobs"] == 1  # one config
    with pytest.raises(ValueError, match="jobs must be an int >= 1"):
        bench_matrix([DOC, DOC2], QUESTIONS, grid=GRID[1:], jobs=0)


# -- configs that cut the same chunks are measured once ---------------------------------------------

SAME_PARAMS = [{"strategy": name, "target": [30, 60], "overlap": 0} for name in ("recursive", "paragraph", "line")]


def test_configs_with_the_same_chunks_are_measured_once():
    res = run_matrix([DOC, DOC2], QUESTIONS, SAME_PARAMS, k=2, n_boot=100, progress=False)
    every = run_matrix([DOC, DOC2], QUESTIONS, SAME_PARAMS, k=2, n_boot=100, progress=False, share=False)
    assert _strip(res.rows) == _strip(every.rows) and every.shared == {}
    assert res.shared["paragraph(target=30, overlap=0)"] == "recursive(target=30, overlap=0)"
    assert json.loads(res.to_json())["shared"] == res.shared
    for row in res.rows:
        if row["label"] in res.shared:  # no work was done for it but chunking
            assert row["index_seconds"] == row["search_seconds"] == row["metrics_seconds"] == 0.0
            assert row["ingest_seconds"] >= 0 and row["seconds"] >= row["ingest_seconds"]
    with ProcessPoolExecutor(2) as ex:
        pooled = run_matrix([DOC, DOC2], QUESTIONS, SAME_PARAMS, k=2, n_boot=100, progress=False, executor=ex)
    assert _strip(pooled.rows) == _strip(res.rows) and pooled.shared == res.shared


def test_a_group_measures_every_config_whose_chunks_differ():
    from chunklab.evaluation import matrix

    key = matrix._fingerprint([DOC, DOC2], "bigram", QUESTIONS)
    configs, _ = expand_grid({"strategy": "fixed", "size": [20, 40], "overlap": 0})
    try:
        rows = matrix._run_group(key, [DOC, DOC2], QUESTIONS, configs, matrix.MATRIX_SETTINGS.replace(k=2))
    finally:
        matrix._STATE.pop(key, None)
    assert [r["label"] for r in rows] == [c["label"] for c in configs]
    assert all(matrix._SAME not in r and r["search_seconds"] > 0 for r in rows)
    assert rows[0]["chunks"] != rows[1]["chunks"]


def test_which_chunks_count_as_the_same():
    from chunklab.core import Chunk
    from chunklab.evaluation.matrix import _same_chunks

    a = [Chunk("d", 0, 0, 4, "甲乙丙丁", meta={"strategy": "recursive"})]
    assert _same_chunks(a, [Chunk("d", 0, 0, 4, "甲乙丙丁", meta={"strategy": "paragraph", "level": "x"})])
    assert not _same_chunks(a, [Chunk("d", 0, 0, 4, "甲乙丙丁", context="第一章")])
    assert not _same_chunks(a, [Chunk("d", 0, 0, 4, "甲乙丙丁", meta={"parse_failed": True})])
    assert not _same_chunks(a, [Chunk("d", 0, 0, 3, "甲乙丙")]) and not _same_chunks(a, a + a)
    assert not _same_chunks(a, [Chunk("e", 0, 0, 4, "甲乙丙丁")])


# -- cost beside quality: the group of the best and the simplest pick (issue #28) ----------------------

def test_run_matrix_keeps_per_question_outcomes_out_of_the_rows():
    res = run_matrix([DOC, DOC2], QUESTIONS, GRID, k=1, progress=False, n_boot=50)
    assert res.question_ids == ["q0", "q1", "q2"]
    assert set(res.per_question) == {r["label"] for r in res.rows}
    for r in res.rows:
        assert not any(k.startswith("__") for k in r)           # nothing hidden left in a row (CSV columns)
        pq = res.per_question[r["label"]]
        assert len(pq["hit"]) == 3 and sum(pq["hit"]) / 3 == r["hit"]
        assert sum(pq["retrieved_chars"]) / 3 == pytest.approx(r["retrieved_chars"])


def test_simplicity_defines_simpler_once():
    from chunklab.evaluation.matrix import simplicity

    rows = [{"label": "r", "strategy": "recursive", "target": 2000, "overlap": 0},
            {"label": "f-ov", "strategy": "fixed", "size": 256, "overlap": 50},
            {"label": "f", "strategy": "fixed", "size": 512, "overlap": 0},
            {"label": "f-ctx", "strategy": "fixed", "size": 128, "overlap": 0, "use_context": True}]
    assert [r["label"] for r in sorted(rows, key=simplicity)] == ["f", "r", "f-ctx", "f-ov"]


def _result(hits: dict[str, list[int]], sizes: dict[str, int]) -> MatrixResult:
    rows = [{"label": k, "strategy": "fixed", "size": sizes[k], "overlap": 0, "hit": sum(v) / len(v)}
            for k, v in hits.items()]
    return MatrixResult(rows, [], 0.0, per_question={k: {"hit": [float(x) for x in v]} for k, v in hits.items()})


def test_recommend_groups_what_cannot_be_told_from_the_best_and_picks_the_simplest():
    from chunklab.evaluation.stats import paired_many

    n = 60
    best = [1] * n                                  # every question hit
    close = [1] * (n - 2) + [0, 0]                  # two fewer: noise at 60 questions
    far = [1, 0] * (n // 2)                         # half: clearly worse
    res = _result({"big": best, "mid": close, "small": far}, {"big": 4000, "mid": 1000, "small": 200})
    r = res.recommend("hit", n=500)
    assert r["best"] == "big" and r["group"] == ["mid", "big"] and r["pick"] == "mid"
    assert set(r["tests"]) == {"mid", "small"} and r["method"] == "holm"
    ref = paired_many({"mid": (best, close), "small": (best, far)}, n=500, metric="hit")
    for label in ("mid", "small"):                  # the same test, Holm-corrected over both comparisons
        t = r["tests"][label]
        assert (t["diff"], t["lo"], t["hi"], t["p_adj"]) == (ref[label]["diff"], ref[label]["lo"], ref[label]["hi"],
                                                             ref[label]["p_adj"])
    assert r["tests"]["small"]["significant"] and r["tests"]["small"]["verdict"] == "supported"
    assert not r["tests"]["mid"]["significant"] and r["tests"]["mid"]["verdict"] != "supported"
