"""Weighted RRF and normalised score fusion for hybrid retrieval (issue #28, item 10): the default
is exactly the equal-weight RRF of before; weights and ``score`` fusion are validated; ``compare``
shows hit per difficulty."""
from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from chunklab.cli import main
from chunklab.core import Chunk, Document
from chunklab.evaluation import EvalSettings, evaluate
from chunklab.params import ParamError
from chunklab.retrieval import Ranking, fuse, make_retriever
from chunklab.retrieval.dense import _rrf_scores
from jsonl_files import write_jsonl


def _old_fuse(rankings, k=5, rrf_constant=60):
    """``fuse`` as it was before weights existed (copied), the yardstick of the default."""
    nq = rankings[0].ids.shape[0]
    ids = np.full((nq, k), -1, dtype=np.int64)
    sc = np.full((nq, k), np.nan)
    for qi in range(nq):
        fused = _rrf_scores([r.ids[qi] for r in rankings], rrf_constant)
        for j, (i, score) in enumerate(itertools.islice(fused.items(), k)):
            ids[qi, j], sc[qi, j] = i, score
    return Ranking(ids, sc)


def _random_rankings(rng, nq=30, n=40, depth=12):
    out = []
    for _ in range(2):
        ids = np.array([rng.permutation(n)[:depth] for _ in range(nq)])
        ids[rng.random(ids.shape) < 0.1] = -1
        out.append(Ranking(ids, np.sort(rng.random(ids.shape), axis=1)[:, ::-1]))
    return out


def test_default_fusion_is_the_old_rrf_bit_for_bit():
    rng = np.random.default_rng(0)
    for _ in range(5):
        rankings = _random_rankings(rng)
        old = _old_fuse(rankings, k=10)
        for new in (fuse(rankings, k=10), fuse(rankings, k=10, weights=[1, 1]), fuse(rankings, k=10, method="rrf")):
            assert np.array_equal(new.ids, old.ids)
            assert np.array_equal(new.scores, old.scores, equal_nan=True)


DOC = Document("d", "合同的订立。合同的效力。违约责任。损害赔偿。解除合同的条件。" * 3)


def _chunks():
    text, out, i = DOC.text, [], 0
    for n, start in enumerate(range(0, len(text), 6)):
        out.append(Chunk("d", n, start, min(start + 6, len(text)), text[start:start + 6]))
    return out


class Q:
    def __init__(self, qid, question, start, end):
        self.id, self.question, self.spans = qid, question, [("d", start, end)]


QS = [Q("a", "合同效力", 6, 12), Q("b", "违约", 12, 17), Q("c", "解除条件", 22, 31), Q("d", "赔偿", 17, 22)]


def test_default_hybrid_evaluation_unchanged():
    chunks = _chunks()
    base = evaluate([DOC], chunks, QS, engine="hybrid", embedder="lsa", n_boot=50)
    same = evaluate([DOC], chunks, QS, EvalSettings(engine="hybrid", embedder="lsa", n_boot=50, fusion="rrf",
                                                     fusion_weights={"bm25": 1, "dense": 1}))
    assert np.array_equal(base.ranked, same.ranked)
    # the default run's summary reads as before: no fusion fields
    assert "fusion" not in base.config and "fusion_weights" not in base.config
    assert same.config["fusion_weights"] == {"bm25": 1.0, "dense": 1.0}
    # and the ranking is the old fuse of the BM25 and the dense rankings
    r = make_retriever("hybrid", [DOC], chunks, embedder="lsa")
    qtexts = [q.question for q in QS]
    depth = base.ranked.shape[1]
    old = _old_fuse([x.search(qtexts, k=depth) for x in r.retrievers], k=depth)
    assert np.array_equal(old.ids, base.ranked)


def test_weights_move_the_fusion_towards_one_ranking():
    a = Ranking(np.array([[0, 1, 2]]), np.array([[3.0, 2.0, 1.0]]))
    b = Ranking(np.array([[2, 1, 0]]), np.array([[0.9, 0.5, 0.1]]))
    assert fuse([a, b], k=3, weights=[1, 0]).ids.tolist() == [[0, 1, 2]]
    assert fuse([a, b], k=3, weights=[0, 1]).ids.tolist() == [[2, 1, 0]]
    assert fuse([a, b], k=3, weights=[1, 3]).ids.tolist()[0][0] == 2
    assert fuse([a, b], k=3, method="score", weights=[1, 3]).ids.tolist()[0][0] == 2
    # score fusion: min-max per ranking, an id a ranking did not return adds 0
    c = Ranking(np.array([[5, -1, -1]]), np.array([[7.0, np.nan, np.nan]]))
    fused = fuse([a, c], k=4, method="score")
    assert fused.ids.tolist() == [[0, 5, 1, 2]] and fused.scores[0, 0] == pytest.approx(1.0)


def test_hybrid_weights_by_name_and_errors():
    chunks = _chunks()
    dense_first = evaluate([DOC], chunks, QS, engine="hybrid", embedder="lsa", n_boot=50,
                           fusion_weights="bm25=0,dense=1")
    dense = evaluate([DOC], chunks, QS, engine="dense", embedder="lsa", n_boot=50)
    assert np.array_equal(dense_first.ranked[:, :3], dense.ranked[:, :3])
    with pytest.raises(ParamError, match="did you mean 'dense'"):
        EvalSettings(fusion_weights="bm25=1,dens=2")
    with pytest.raises(ParamError, match="numbers >= 0"):
        EvalSettings(fusion_weights={"bm25": -1})
    with pytest.raises(ParamError, match="numbers >= 0"):
        EvalSettings(fusion_weights="bm25=0,dense=0")
    with pytest.raises(ParamError, match="fusion must be one of"):
        EvalSettings(fusion="max")
    assert EvalSettings(fusion_weights={"dense": 2}).fusion_weights == (("bm25", 1.0), ("dense", 2.0))
    assert EvalSettings().as_dict()["fusion_weights"] is None


POLICY = "# 制度\n\n第一条 一线城市住宿费每晚不超过六百元。\n\n第二条 出差结束后十个工作日内提交报销单。\n\n第三条 超出标准的部分由员工自行承担。\n"


@pytest.fixture
def labelled(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "policy.md").write_text(POLICY, encoding="utf-8")
    qs = [{"id": "q1", "question": "住宿每晚多少钱", "evidence": "一线城市住宿费每晚不超过六百元", "difficulty": "easy"},
          {"id": "q2", "question": "报销单几天内交", "evidence": "出差结束后十个工作日内提交报销单", "difficulty": "easy"},
          {"id": "q3", "question": "多花的钱谁出", "evidence": "超出标准的部分由员工自行承担", "difficulty": "hard"}]
    return folder, write_jsonl(tmp_path / "q.jsonl", qs)


def test_cli_fusion_flags(labelled, capsys):
    folder, q = labelled
    argv = ["eval", "--corpus", str(folder), "--questions", str(q), "--k", "1", "-p", "target=20"]
    assert main(argv + ["--retriever", "hybrid", "--embedder", "lsa", "--fusion", "score", "--weights", "dense=2"]) == 0
    out = capsys.readouterr().out
    assert "normalised score fusion, weights bm25=1, dense=2" in out
    assert main(argv + ["--retriever", "hybrid", "--embedder", "lsa", "--weights", "dense=2", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["fusion"] == "rrf" and summary["fusion_weights"] == {"bm25": 1.0, "dense": 2.0}
    assert main(argv + ["--weights", "dense=2"]) == 2
    err = capsys.readouterr().err.strip()
    assert "--retriever hybrid" in err and len(err.splitlines()) == 1
    assert main(argv + ["--retriever", "hybrid", "--embedder", "lsa", "--weights", "dense=two"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: --weights") and len(err.splitlines()) == 1


def test_compare_shows_hit_per_difficulty(labelled, capsys):
    folder, q = labelled
    argv = ["compare", "recursive:target=20", "recursive:target=20@hybrid:lsa", "--corpus", str(folder),
            "--questions", str(q), "--k", "1"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "hit by difficulty" in out
    rows = [line.split()[0] for line in out.splitlines()[out.splitlines().index(next(
        l for l in out.splitlines() if l.startswith("difficulty"))) + 1:] if line.split() and line.split()[0] in ("easy", "hard")]
    assert rows == ["easy", "hard"]
    assert main(argv + ["--json"]) == 0
    by = json.loads(capsys.readouterr().out)["hit"]["by_difficulty"]
    assert by["easy"]["questions"] == 2 and by["hard"]["questions"] == 1


def test_identical_sides_name_no_winner(labelled, capsys):
    folder, q = labelled
    assert main(["compare", "recursive:target=20", "recursive:target=20", "--corpus", str(folder),
                 "--questions", str(q), "--k", "2", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert all(r["winner"] is None and not r["significant"] for r in result.values())


def test_compare_fusion_flags_need_a_hybrid_side(labelled, capsys):
    folder, q = labelled
    argv = ["compare", "recursive:target=20", "recursive:target=20@dense:lsa", "--corpus", str(folder),
            "--questions", str(q), "--k", "1"]
    assert main(argv + ["--weights", "dense=2"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: --weights") and "neither side ranks with hybrid" in err
    assert main(argv[:2] + ["recursive:target=20@hybrid:lsa"] + argv[3:] + ["--fusion", "score"]) == 0
    assert "normalised score fusion" in capsys.readouterr().out
