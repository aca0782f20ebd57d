"""Index versions bound to configuration + chunklab version + corpus; incremental re-chunking plans."""
from __future__ import annotations

import json

import pytest

import chunklab
import chunklab._version
from chunklab import Document
from chunklab.tools.versioning import (
    build_manifest, canonical_config, chunk_corpus, config_hash, corpus_fingerprint, index_version,
    plan_rechunk, rechunk, transcribe_tables,
)

DOCS = [
    Document("handbook", "# 手册\n## 年假\n满一年休五天。\n## 病假\n病假需证明。", title="员工手册"),
    Document("travel", "住宿标准\n| 城市 | 限额 |\n|---|---|\n| 北京 | 600 |\n| 上海 | 500 |\n", title="差旅"),
    Document("notice", "通知：本周五停电检修。", title="公告"),
]
CONFIG = {"strategy": "auto", "params": {"target": 200}, "use_context": True, "transcribe_tables": True}


def test_canonical_config_fills_defaults_and_is_json():
    canon = canonical_config({"strategy": "fixed"})
    assert canon == {"strategy": "fixed", "params": {"size": 512, "overlap": 0, "prefix": False},
                     "use_context": False, "transcribe_tables": False}
    json.dumps(canon)
    clause = canonical_config("clause")["params"]
    assert clause["fallback"] == ["recursive", "fixed"]   # tuples become JSON lists


@pytest.mark.parametrize("bad, msg", [
    ({"strategy": "fixed", "use_contxt": True}, "unknown config key 'use_contxt'"),
    ({"params": {}}, "needs a 'strategy'"),
    ({"strategy": "fixed", "params": {"size": 0}}, "size"),
    ({"strategy": "fixd"}, "did you mean 'fixed'"),
    ({"strategy": "fixed", "use_context": "yes"}, "True or False"),
])
def test_canonical_config_rejects(bad, msg):
    with pytest.raises((ValueError, TypeError), match=msg):
        canonical_config(bad)


def test_non_json_parameter_is_refused():
    with pytest.raises(TypeError, match="not JSON data"):
        canonical_config({"strategy": "semantic", "params": {"embedder": lambda ts: ts}})


def test_version_ignores_key_order_but_not_values():
    a = {"strategy": "recursive", "params": {"target": 300, "overlap": 30}, "use_context": True}
    b = {"use_context": True, "params": {"overlap": 30, "target": 300}, "strategy": "recursive"}
    assert index_version(a, DOCS) == index_version(b, DOCS)
    assert config_hash(a) == config_hash(b)
    # explicit defaults are the same configuration
    assert index_version({"strategy": "fixed"}, DOCS) == index_version({"strategy": "fixed", "params": {"size": 512}}, DOCS)
    versions = {
        index_version(a, DOCS),
        index_version({**a, "params": {"target": 301, "overlap": 30}}, DOCS),
        index_version({**a, "use_context": False}, DOCS),
        index_version({**a, "strategy": "sentence"}, DOCS),
        index_version(a, DOCS[:2]),
        index_version(a, [DOCS[0], DOCS[1], Document("notice", "通知：本周六停电检修。", title="公告")]),
        index_version(a, [DOCS[0], DOCS[1], Document("notice", DOCS[2].text, title="公司公告")]),
    }
    assert len(versions) == 7
    v = index_version(a, DOCS)
    assert isinstance(v, str) and len(v) == 16 and int(v, 16) >= 0


def test_version_changes_with_chunklab_version(monkeypatch):
    before = index_version(CONFIG, DOCS)
    monkeypatch.setattr(chunklab._version, "__version__", "9.9.9")
    assert index_version(CONFIG, DOCS) != before


def test_fingerprint_and_duplicate_ids():
    fp = corpus_fingerprint(DOCS)
    assert list(fp) == ["handbook", "travel", "notice"] and len(set(fp.values())) == 3
    with pytest.raises(ValueError, match="unique"):
        corpus_fingerprint([DOCS[0], DOCS[0]])
    with pytest.raises(TypeError, match="Document"):
        corpus_fingerprint(["text"])


def test_manifest_round_trips_through_json():
    chunks = chunk_corpus(CONFIG, DOCS)
    m = build_manifest(CONFIG, DOCS, chunks)
    m2 = json.loads(json.dumps(m, ensure_ascii=False))
    assert m2["index_version"] == index_version(CONFIG, DOCS)
    assert m2["chunks"] == {k: len(v) for k, v in chunks.items()}
    assert plan_rechunk(m2, DOCS, CONFIG).up_to_date


def test_plan_incremental():
    old = build_manifest(CONFIG, DOCS)
    new_docs = [Document("handbook", DOCS[0].text.replace("五天", "十天"), title="员工手册"), DOCS[1],
                Document("faq", "问：几点上班？\n答：九点。", title="FAQ")]
    p = plan_rechunk(old, new_docs, CONFIG)
    assert not p.full_rebuild and not p.up_to_date
    assert (p.changed, p.added, p.removed, p.keep) == (("handbook",), ("faq",), ("notice",), ("travel",))
    assert p.rechunk == ("handbook", "faq") and p.delete == ("handbook", "notice")
    assert p.new_version == index_version(CONFIG, new_docs) and p.old_version == old["index_version"]
    assert "增量" in p.summary()


def test_plan_full_rebuild_on_config_or_code_change(monkeypatch):
    old = build_manifest(CONFIG, DOCS)
    p = plan_rechunk(old, DOCS, {**CONFIG, "params": {"target": 300}})
    assert p.full_rebuild and p.rechunk == tuple(d.id for d in DOCS) and p.delete == tuple(old["documents"])
    assert p.keep == () and "target 200 → 300" in p.reasons[0]
    monkeypatch.setattr(chunklab._version, "__version__", "0.2.0")
    p = plan_rechunk(old, DOCS, CONFIG)
    assert p.full_rebuild and any("chunklab 版本" in r for r in p.reasons) and "全量" in p.summary()


def test_plan_rejects_a_bad_manifest():
    with pytest.raises(ValueError, match="lacks"):
        plan_rechunk({"documents": {}}, DOCS, CONFIG)
    with pytest.raises(TypeError):
        plan_rechunk(["not", "a", "dict"], DOCS, CONFIG)


def test_rechunk_equals_a_full_chunking():
    old_chunks = chunk_corpus(CONFIG, DOCS)
    old = build_manifest(CONFIG, DOCS)
    new_docs = [Document("handbook", DOCS[0].text + "\n## 婚假\n婚假三天。", title="员工手册"), DOCS[1], DOCS[2]]
    plan = plan_rechunk(old, new_docs, CONFIG)
    assert plan.rechunk == ("handbook",)
    got = rechunk(plan, old_chunks, new_docs, CONFIG)
    assert got == chunk_corpus(CONFIG, new_docs)
    assert got["travel"] is not old_chunks["travel"] and got["travel"] == old_chunks["travel"]
    with pytest.raises(ValueError, match="kept document"):
        rechunk(plan, {"handbook": []}, new_docs, CONFIG)


def test_transcribe_tables_adds_rows_to_context_only():
    doc = DOCS[1]
    chunks = chunklab.chunk(doc, "fixed", size=30)
    out = transcribe_tables(doc, chunks)
    assert [c.text for c in out] == [c.text for c in chunks]
    assert all(doc.text[c.start:c.end] == c.text for c in out)
    contexts = "\n".join(c.context for c in out)
    # rows cut across two chunks are in no chunk, so not transcribed there
    for c in out:
        for line in c.context.splitlines():
            assert line in ("城市：北京；限额：600", "城市：上海；限额：500")
    whole = transcribe_tables(doc, chunklab.chunk(doc, "fixed", size=200))
    assert whole[0].context == "城市：北京；限额：600\n城市：上海；限额：500"
    assert whole[0].meta["transcribed_rows"] == 2
    # idempotent: rows already in the context are not repeated
    assert transcribe_tables(doc, whole)[0].context == whole[0].context
    assert contexts.count("北京") <= 1
    # no table: chunks unchanged
    plain = chunklab.chunk(DOCS[2], "fixed", size=8)
    assert transcribe_tables(DOCS[2], plain) == plain


def test_chunk_corpus_only_and_order():
    got = chunk_corpus("fixed", DOCS, only=["notice", "handbook"])
    assert list(got) == ["handbook", "notice"]
