"""Embedders: the LSA default, the sentence-transformers adapter's error paths, the cache."""
from __future__ import annotations

import sys
import types

import numpy as np
import pytest

import chunklab.retrieval.embed as embed
from chunklab import Document
from chunklab.retrieval.embed import CachedEmbedder, Embedder, LSAEmbedder, SentenceTransformerEmbedder

LEAVE = ["年假天数按累计工龄计算", "未休年假可以结转到次年", "年假需要提前三天申请",
         "病假需要提供医院证明", "病假工资按基本工资计算"]
TRAVEL = ["出差住宿按城市等级报销", "差旅交通优先乘坐高铁", "出差补贴按自然日发放",
          "差旅报销需要在月底前提交"]
CORPUS = LEAVE + TRAVEL


def test_lsa_rows_are_unit_vectors_and_dims_are_capped_by_rank():
    emb = LSAEmbedder(dims=128).fit(CORPUS)
    v = emb(CORPUS)
    assert v.shape == (len(CORPUS), len(CORPUS))  # rank of 9 texts is at most 9
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0)
    assert isinstance(emb, Embedder)


def test_lsa_separates_topics():
    emb = LSAEmbedder(dims=4).fit(CORPUS)
    v = emb(["年假结转", "差旅报销"])
    leave, travel = emb(LEAVE).mean(axis=0), emb(TRAVEL).mean(axis=0)
    assert v[0] @ leave > v[0] @ travel
    assert v[1] @ travel > v[1] @ leave


def test_lsa_is_deterministic_and_its_name_depends_on_the_corpus():
    a, b = LSAEmbedder(dims=3).fit(CORPUS), LSAEmbedder(dims=3).fit(list(CORPUS))
    np.testing.assert_array_equal(a(CORPUS), b(CORPUS))
    assert a.name == b.name
    assert LSAEmbedder(dims=3).fit(CORPUS[:-1]).name != a.name


def test_lsa_unseen_characters_give_a_zero_row():
    emb = LSAEmbedder().fit(CORPUS)
    v = emb(["😀😀", "年假"])
    assert not v[0].any()
    assert np.linalg.norm(v[1]) == pytest.approx(1.0)


def test_lsa_randomized_svd_matches_exact_directions(monkeypatch):
    # Three topics with their own characters: a spectrum with clear gaps, as in real corpora.
    rng = np.random.default_rng(1)
    topics = [list("年假病休结转天数"), list("差旅报销住宿高铁"), list("代码评审合并分支")]
    texts = ["".join(rng.choice(topics[i % 3], size=12)) for i in range(60)]
    exact = LSAEmbedder(dims=5).fit(texts)
    monkeypatch.setattr(embed, "_EXACT_SVD_LIMIT", 10)
    approx = LSAEmbedder(dims=5).fit(texts)
    np.testing.assert_allclose(approx.singular_values_[:3], exact.singular_values_[:3], rtol=1e-2)
    # Same leading directions, same signs (the sign convention is applied to both).
    cos = np.abs(np.sum(approx.components_[:, :3] * exact.components_[:, :3], axis=0))
    assert np.all(cos > 0.99)
    np.testing.assert_array_equal(approx(texts), LSAEmbedder(dims=5).fit(texts)(texts))  # seeded


def test_lsa_from_documents_fits_on_sentences():
    emb = LSAEmbedder.from_documents([Document("a", "年假可以结转。病假需要证明。"), "出差要审批。"])
    assert emb.fitted and emb(["年假"]).shape[0] == 1


def test_lsa_errors_name_the_parameter():
    with pytest.raises(ValueError, match=r"dims must be an int >= 1, got 0"):
        LSAEmbedder(dims=0)
    with pytest.raises(ValueError, match="ngram"):
        LSAEmbedder(ngram=(3, 1))
    with pytest.raises(RuntimeError, match="not fitted"):
        LSAEmbedder()(["年假"])
    with pytest.raises(TypeError, match="single str"):
        LSAEmbedder().fit("年假")
    with pytest.raises(TypeError, match=r"texts\[1\] must be str"):
        LSAEmbedder().fit(["年假", b"x"])


def test_lsa_on_empty_inputs():
    emb = LSAEmbedder().fit(CORPUS)
    assert emb([]).shape == (0, emb.components_.shape[1])
    assert LSAEmbedder().fit([" ", ""])(["甲"]).shape == (1, 0)


# -- sentence-transformers adapter: only the error paths (no model in the book) ----------

def test_sentence_transformer_missing_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # import raises ImportError
    with pytest.raises(ImportError, match="pip install sentence-transformers"):
        SentenceTransformerEmbedder("BAAI/bge-small-zh-v1.5")


def _fake_package(monkeypatch, model_cls):
    monkeypatch.setitem(sys.modules, "sentence_transformers", types.SimpleNamespace(SentenceTransformer=model_cls))
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "0")


def test_sentence_transformer_missing_model_fails_offline(monkeypatch):
    seen = {}

    def refuse(name, device=None, local_files_only=False):
        seen.update(local_files_only=local_files_only, offline=__import__("os").environ["HF_HUB_OFFLINE"])
        raise OSError(f"{name} not found in cache")

    _fake_package(monkeypatch, refuse)
    with pytest.raises(FileNotFoundError, match="not available offline"):
        SentenceTransformerEmbedder("no/such-model")
    assert seen == {"local_files_only": True, "offline": "1"}


def test_sentence_transformer_adapter_with_a_fake_model(monkeypatch):
    class Fake:
        def __init__(self, name, device=None, local_files_only=False):
            pass

        def encode(self, texts, **kw):
            assert kw["normalize_embeddings"] is True
            return np.ones((len(texts), 3)) / np.sqrt(3)

    _fake_package(monkeypatch, Fake)
    emb = SentenceTransformerEmbedder("/models/local")
    assert emb.name == "st:/models/local"
    assert emb(["甲", "乙"]).shape == (2, 3)


# -- cache ------------------------------------------------------------------------------

class Counting:
    def __init__(self, name="counting"):
        self.name = name
        self.calls: list[list[str]] = []

    def __call__(self, texts):
        self.calls.append(list(texts))
        return np.array([[len(t), 1.0] for t in texts]) / np.sqrt([[len(t) ** 2 + 1.0] for t in texts])


def test_cache_hits_repeated_texts_and_returns_the_same_vectors():
    inner = Counting()
    cached = CachedEmbedder(inner)
    first = cached(["年假", "病假", "年假"])
    assert inner.calls == [["年假", "病假"]]
    again = cached(["病假", "年假"])
    assert inner.calls == [["年假", "病假"]]  # nothing new embedded
    np.testing.assert_array_equal(again, first[[1, 0]])
    assert (cached.hits, cached.misses) == (3, 2)
    assert cached.name == "counting" and len(cached) == 2


def test_cache_key_includes_the_embedder_name():
    inner = Counting("one")
    cached = CachedEmbedder(inner)
    cached(["年假"])
    inner.name = "two"  # e.g. an LSAEmbedder refitted on another corpus
    cached(["年假"])
    assert inner.calls == [["年假"], ["年假"]]


def test_cache_is_bounded_and_checks_shapes():
    inner = Counting()
    cached = CachedEmbedder(inner, maxsize=2)
    cached(["甲", "乙", "丙"])
    assert len(cached) == 2
    bad = CachedEmbedder(lambda ts: np.zeros((1, 2)))
    with pytest.raises(ValueError, match="one row per text"):
        bad(["甲", "乙"])
    with pytest.raises(ValueError, match="maxsize"):
        CachedEmbedder(inner, maxsize=0)


def test_cached_lsa_speeds_up_repeated_semantic_splits():
    from chunklab import get_strategy

    text = "。".join(LEAVE + TRAVEL) + "。"
    cached = CachedEmbedder(LSAEmbedder(dims=4).fit(CORPUS))
    s = get_strategy("semantic", embedder=cached, buffer=0)
    first = s.split(text)
    misses = cached.misses
    assert [(c.start, c.end) for c in s.split(text)] == [(c.start, c.end) for c in first]
    assert cached.misses == misses and cached.hits >= len(CORPUS)


def test_integer_options_are_checked_by_their_declaration():
    from chunklab.params import ParamError

    with pytest.raises(TypeError, match=r"^dims must be an int >= 1, got '3'$"):
        LSAEmbedder(dims="3")
    with pytest.raises(ParamError, match=r"^max_features must be an int >= 1 or None, got 0$"):
        LSAEmbedder(max_features=0)
    assert LSAEmbedder(max_features=None).max_features is None
    with pytest.raises(TypeError, match=r"^maxsize must be an int >= 1, got True$"):
        CachedEmbedder(lambda ts: np.zeros((len(ts), 2)), maxsize=True)


# -- the fast paths give the same LSA ---------------------------------------------------------------

class StringPathLSA(LSAEmbedder):
    """The same embedder counting n-grams string by string (the path for n-grams over 3 characters)."""

    @property
    def _integer_keys(self):
        return False


TRICKY = ["年假  可以\t结转\n\n到次年", "　全角空格　开头", "😀 表情 😀😀", "孤立代理\ud800字符", "NUL\x00字符", "", "   ",
          "a b", "ab", "ba", "aab", "年假年假年假"] + LEAVE + TRAVEL


@pytest.mark.parametrize("ngram", [(1, 1), (1, 2), (2, 3), (1, 3)])
def test_integer_ngram_keys_give_the_string_path_bit_for_bit(ngram):
    fast = LSAEmbedder(dims=6, ngram=ngram).fit(TRICKY)
    slow = StringPathLSA(dims=6, ngram=ngram).fit(TRICKY)
    assert fast.vocabulary_ == slow.vocabulary_ and list(fast.vocabulary_) == list(slow.vocabulary_)
    np.testing.assert_array_equal(fast.idf_, slow.idf_)
    a, b = fast._tfidf(TRICKY + ["未见过的字"]), slow._tfidf(TRICKY + ["未见过的字"])
    for attr in ("data", "indices", "indptr"):
        np.testing.assert_array_equal(getattr(a, attr), getattr(b, attr))
    np.testing.assert_array_equal(fast.components_, slow.components_)
    np.testing.assert_array_equal(fast(TRICKY), slow(TRICKY))
    capped = LSAEmbedder(dims=3, ngram=ngram, max_features=7).fit(TRICKY)
    assert capped.vocabulary_ == StringPathLSA(dims=3, ngram=ngram, max_features=7).fit(TRICKY).vocabulary_


def test_ngrams_over_three_characters_take_the_string_path():
    emb = LSAEmbedder(dims=2, ngram=(2, 4)).fit(CORPUS)
    assert not emb._integer_keys and "年假天数" in emb.vocabulary_ and emb(["年假天数"]).shape == (1, 2)


@pytest.fixture(scope="module")
def labour_sentences():
    from chunklab.datasets import load_corpus
    from chunklab.retrieval.embed import corpus_sentences

    return corpus_sentences(load_corpus("laws:劳动合同法"))


def test_arpack_finds_the_exact_directions(labour_sentences):
    exact = LSAEmbedder(svd="exact").fit(labour_sentences)
    arpack = LSAEmbedder(svd="arpack").fit(labour_sentences)
    assert (exact.svd_used_, arpack.svd_used_) == ("exact", "arpack")
    np.testing.assert_allclose(arpack.singular_values_, exact.singular_values_, rtol=1e-12)
    np.testing.assert_allclose(arpack.components_, exact.components_, atol=1e-10)  # signs fixed alike
    np.testing.assert_allclose(arpack(labour_sentences), exact(labour_sentences), atol=1e-10)
    assert arpack.name != exact.name  # a forced method is part of the name (cache keys)


def test_the_svd_method_follows_the_size(monkeypatch):
    sizes = {}
    for n in (5, 12, 30):
        monkeypatch.setattr(embed, "_DENSE_EIGH_LIMIT", 10)
        monkeypatch.setattr(embed, "_EXACT_SVD_LIMIT", 20)
        sizes[n] = LSAEmbedder(dims=3).fit([f"{CORPUS[i % len(CORPUS)]}{i}" for i in range(n)]).svd_used_
    assert sizes == {5: "exact", 12: "arpack", 30: "randomized"}
    assert LSAEmbedder(dims=8, svd="arpack").fit(CORPUS[:5]).svd_used_ == "exact"  # ARPACK needs k < n - 1
    with pytest.raises(ValueError, match="svd must be one of 'auto', 'exact', 'arpack', 'randomized'"):
        LSAEmbedder(svd="lapack")
