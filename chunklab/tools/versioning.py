"""Bind a chunking configuration to an index version, and plan incremental re-chunking.

An index is only meaningful together with what produced it: the chunking
configuration, the chunklab code that ran it, and the documents it read. A
vector or BM25 index built from one of them and queried under another is an
unmeasured mixture. This module makes the binding explicit (article 000 §6):

* :func:`canonical_config` validates a configuration and fills in every
  default, so that ``{"strategy": "fixed"}`` and ``{"strategy": "fixed",
  "params": {"size": 512}}`` are the same configuration;
* :func:`corpus_fingerprint` hashes every document (title and text);
* :func:`index_version` is one content hash of the three: the canonical
  configuration, ``chunklab.__version__`` and the corpus fingerprint;
* :func:`build_manifest` is what to store beside an index;
* :func:`plan_rechunk` compares a stored manifest with the current corpus and
  configuration: if the configuration or the chunklab version changed, the
  whole index must be rebuilt; otherwise only changed and added documents are
  chunked again, and removed ones are deleted;
* :func:`chunk_corpus` and :func:`rechunk` carry the plan out.

A configuration is a plain dict (JSON-serialisable)::

    {"strategy": "auto",                  # any registered strategy
     "params": {"target": 500},           # its parameters (defaults filled in)
     "use_context": True,                 # index Chunk.context with the text
     "transcribe_tables": True}           # table rows as sentences in the context

>>> from chunklab import Document
>>> docs = [Document("a", "第一条 甲。"), Document("b", "第二条 乙。")]
>>> v1 = index_version({"strategy": "fixed", "params": {"size": 64, "overlap": 0}}, docs)
>>> v2 = index_version({"params": {"overlap": 0, "size": 64}, "strategy": "fixed"}, docs)
>>> v1 == v2, len(v1)
(True, 16)
>>> v1 == index_version({"strategy": "fixed", "params": {"size": 32}}, docs)
False
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from .. import _version as _version_module
from ..base import get_strategy
from ..core import Chunk, Document
from ..strategies.container import transcribe_tables

__all__ = [
    "CONFIG_KEYS", "canonical_config", "config_hash", "document_hash", "corpus_fingerprint", "index_version",
    "build_manifest", "RechunkPlan", "plan_rechunk", "chunk_document", "chunk_corpus", "rechunk",
]

#: The keys a configuration may have, with their defaults (``strategy`` has none: it is required).
CONFIG_KEYS: dict[str, Any] = {"strategy": None, "params": {}, "use_context": False, "transcribe_tables": False}

#: Length of the hex digest returned by :func:`index_version` (64 bits: enough to tell versions apart).
VERSION_LENGTH = 16


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _jsonable(name: str, value: Any) -> Any:
    """``value`` as plain JSON data (tuples become lists), or a clear error."""
    try:
        return json.loads(json.dumps(value, ensure_ascii=False, allow_nan=False))
    except (TypeError, ValueError):
        raise TypeError(f"parameter {name!r} = {value!r} is not JSON data: an index version cannot record it "
                        f"(pass names and numbers, not objects)") from None


def canonical_config(config: Mapping[str, Any] | str) -> dict[str, Any]:
    """The configuration validated, with every default filled in.

    ``config`` is a dict (see the module docstring) or just a strategy name.
    The strategy is created with its parameters, so a bad value fails here
    with the strategy's own message; the returned ``params`` hold *every*
    parameter of the strategy (defaults included), as JSON data. An unknown
    top-level key is an error (a misspelt ``use_contxt`` must not be ignored).

    >>> canonical_config("fixed")
    {'strategy': 'fixed', 'params': {'size': 512, 'overlap': 0, 'prefix': False}, 'use_context': False, 'transcribe_tables': False}
    """
    if isinstance(config, str):
        config = {"strategy": config}
    if not isinstance(config, Mapping):
        raise TypeError(f"config must be a dict or a strategy name, got {type(config).__name__}")
    unknown = [k for k in config if k not in CONFIG_KEYS]
    if unknown:
        raise ValueError(f"unknown config key {unknown[0]!r} (allowed: {', '.join(CONFIG_KEYS)})")
    name = config.get("strategy")
    if not isinstance(name, str):
        raise ValueError(f"config needs a 'strategy' name (str), got {name!r}")
    params = config.get("params") or {}
    if not isinstance(params, Mapping):
        raise TypeError(f"config 'params' must be a dict, got {type(params).__name__}")
    strategy = get_strategy(name, **params)
    full = {k: _jsonable(k, v) for k, v in strategy.get_params().items()}
    out: dict[str, Any] = {"strategy": name, "params": full}
    for key in ("use_context", "transcribe_tables"):
        value = config.get(key, CONFIG_KEYS[key])
        if not isinstance(value, bool):
            raise TypeError(f"config {key!r} must be True or False, got {value!r}")
        out[key] = value
    return out


def _dumps(data: Any) -> str:
    # sort_keys: the hash must not depend on the order in which a dict was written.
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def config_hash(config: Mapping[str, Any] | str) -> str:
    """SHA-256 (hex) of the canonical configuration; key order does not matter.

    >>> config_hash({"strategy": "fixed", "params": {"size": 512}}) == config_hash("fixed")
    True
    """
    return _sha256(_dumps(canonical_config(config)))


def document_hash(document: Document) -> str:
    """SHA-256 (hex) of a document's title and text (the title is part of every context prefix)."""
    return _sha256(_dumps([document.title or "", document.text]))


def _documents(corpus: Any) -> list[Document]:
    docs = list(getattr(corpus, "documents", corpus))
    seen: set[str] = set()
    for d in docs:
        if not isinstance(d, Document):
            raise TypeError(f"corpus must hold chunklab.Document objects, got {type(d).__name__}")
        if d.id in seen:
            raise ValueError(f"document ids must be unique, got {d.id!r} twice")
        seen.add(d.id)
    return docs


def corpus_fingerprint(corpus: Any) -> dict[str, str]:
    """``{document id: document_hash}`` for a :class:`~chunklab.datasets.Corpus` or a list of documents."""
    return {d.id: document_hash(d) for d in _documents(corpus)}


def _version(canon: dict[str, Any], fingerprint: Mapping[str, str], chunklab_version: str) -> str:
    payload = {"config": canon, "chunklab": chunklab_version, "corpus": dict(sorted(fingerprint.items()))}
    return _sha256(_dumps(payload))[:VERSION_LENGTH]


def _chunklab_version() -> str:
    # read at call time, so a test (or an upgrade in a live kernel) sees the current value
    return _version_module.__version__


def index_version(config: Mapping[str, Any] | str, corpus: Any) -> str:
    """The version of the index that ``config`` builds from ``corpus`` with this chunklab.

    A content hash (16 hex digits) of the canonical configuration, ``chunklab.__version__``
    and :func:`corpus_fingerprint`. It changes when a parameter, the strategy, the chunklab
    version, a document's title or text, or the set of documents changes, and never
    because a dict was written in another order.
    """
    return _version(canonical_config(config), corpus_fingerprint(corpus), _chunklab_version())


def build_manifest(config: Mapping[str, Any] | str, corpus: Any,
                   chunks: Mapping[str, Sequence[Chunk]] | None = None) -> dict[str, Any]:
    """What to store beside an index (plain JSON data).

    Keys: ``index_version``, ``chunklab`` (version), ``config`` (canonical),
    ``config_hash``, ``documents`` (``{id: hash}``) and, when ``chunks`` (as
    returned by :func:`chunk_corpus`) is given, ``chunks`` (``{id: count}``).
    """
    canon = canonical_config(config)
    fp = corpus_fingerprint(corpus)
    version = _chunklab_version()
    out: dict[str, Any] = {
        "index_version": _version(canon, fp, version),
        "chunklab": version,
        "config": canon,
        "config_hash": _sha256(_dumps(canon)),
        "documents": fp,
    }
    if chunks is not None:
        out["chunks"] = {doc_id: len(cs) for doc_id, cs in chunks.items()}
    return out


@dataclass(frozen=True)
class RechunkPlan:
    """What to do to bring an index up to date (see :func:`plan_rechunk`).

    ``rechunk``: documents to chunk (and index) again; ``delete``: documents
    whose chunks must leave the index; ``keep``: documents whose chunks stay.
    ``full_rebuild`` is True when the configuration or the chunklab version
    changed: then every current document is re-chunked and every old one
    deleted. ``reasons`` says why, in Chinese.
    """

    full_rebuild: bool
    reasons: tuple[str, ...]
    changed: tuple[str, ...]
    added: tuple[str, ...]
    removed: tuple[str, ...]
    keep: tuple[str, ...]
    rechunk: tuple[str, ...]
    delete: tuple[str, ...]
    old_version: str
    new_version: str

    @property
    def up_to_date(self) -> bool:
        """True when nothing needs to be done."""
        return not (self.full_rebuild or self.rechunk or self.delete)

    def summary(self) -> str:
        """One line in Chinese."""
        if self.full_rebuild:
            return (f"全量重建（{'；'.join(self.reasons)}）：重切 {len(self.rechunk)} 篇，"
                    f"旧索引 {len(self.delete)} 篇全部作废；版本 {self.old_version} → {self.new_version}")
        if self.up_to_date:
            return f"无需变更：索引版本仍是 {self.new_version}"
        return (f"增量重切：改动 {len(self.changed)} 篇、新增 {len(self.added)} 篇、删除 {len(self.removed)} 篇，"
                f"保留 {len(self.keep)} 篇；版本 {self.old_version} → {self.new_version}")


_MANIFEST_KEYS = ("index_version", "chunklab", "config_hash", "documents")


def plan_rechunk(old_manifest: Mapping[str, Any], new_corpus: Any, config: Mapping[str, Any] | str) -> RechunkPlan:
    """Compare a stored manifest with the current corpus and configuration.

    A full rebuild is required when the canonical configuration or
    ``chunklab.__version__`` differs from the manifest's: chunks made by other
    code or other parameters must not be mixed with new ones in one index.
    Otherwise documents are compared by hash: ``changed`` and ``added`` ones
    are re-chunked, ``removed`` ones deleted, the rest kept. Id lists are in
    the order of ``new_corpus`` (removed ones in the manifest's order).

    >>> from chunklab import Document
    >>> old = build_manifest("fixed", [Document("a", "甲"), Document("b", "乙")])
    >>> p = plan_rechunk(old, [Document("a", "甲甲"), Document("c", "丙")], "fixed")
    >>> p.full_rebuild, p.changed, p.added, p.removed, p.rechunk, p.delete
    (False, ('a',), ('c',), ('b',), ('a', 'c'), ('a', 'b'))
    >>> plan_rechunk(old, [Document("a", "甲"), Document("b", "乙")], {"strategy": "fixed", "params": {"size": 8}}).full_rebuild
    True
    """
    if not isinstance(old_manifest, Mapping):
        raise TypeError(f"old_manifest must be a dict (see build_manifest), got {type(old_manifest).__name__}")
    missing = [k for k in _MANIFEST_KEYS if k not in old_manifest]
    if missing:
        raise ValueError(f"old_manifest lacks {', '.join(missing)} (was it made by build_manifest?)")
    canon = canonical_config(config)
    new_hash = _sha256(_dumps(canon))
    version = _chunklab_version()
    fp = corpus_fingerprint(new_corpus)
    old_docs: Mapping[str, str] = old_manifest["documents"]
    reasons = []
    if old_manifest["config_hash"] != new_hash:
        old_cfg = old_manifest.get("config") or {}
        diff = _config_diff(old_cfg, canon) if old_cfg else ""
        reasons.append("切分配置变了" + (f"（{diff}）" if diff else ""))
    if old_manifest["chunklab"] != version:
        reasons.append(f"chunklab 版本变了（{old_manifest['chunklab']} → {version}）")
    changed = tuple(d for d in fp if d in old_docs and old_docs[d] != fp[d])
    added = tuple(d for d in fp if d not in old_docs)
    removed = tuple(d for d in old_docs if d not in fp)
    keep = tuple(d for d in fp if d in old_docs and old_docs[d] == fp[d])
    full = bool(reasons)
    if full:
        rechunk_ids, delete_ids, keep = tuple(fp), tuple(old_docs), ()
    else:
        rechunk_ids = tuple(d for d in fp if d in set(changed) | set(added))
        delete_ids = tuple(d for d in old_docs if d in set(changed) | set(removed))
    return RechunkPlan(full, tuple(reasons), changed, added, removed, keep, rechunk_ids, delete_ids,
                       str(old_manifest["index_version"]), _version(canon, fp, version))


def _config_diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    """``strategy fixed → auto；target 500 → 300`` (at most four differences)."""
    parts = []
    if old.get("strategy") != new.get("strategy"):
        parts.append(f"strategy {old.get('strategy')} → {new.get('strategy')}")
    else:
        po, pn = old.get("params") or {}, new.get("params") or {}
        for k in sorted(set(po) | set(pn)):
            if po.get(k) != pn.get(k):
                parts.append(f"{k} {po.get(k)!r} → {pn.get(k)!r}")
    for k in ("use_context", "transcribe_tables"):
        if old.get(k) != new.get(k):
            parts.append(f"{k} {old.get(k)} → {new.get(k)}")
    more = f" 等 {len(parts)} 处" if len(parts) > 4 else ""
    return "；".join(parts[:4]) + more


# -- carrying a plan out ----------------------------------------------------------------------

def chunk_document(config: Mapping[str, Any] | str, document: Document, strategy: Any = None) -> list[Chunk]:
    """Chunk one document as ``config`` says (the strategy, then table transcription if asked).

    ``strategy`` may pass the already created strategy of ``config`` (to avoid creating it
    per document).
    """
    canon = canonical_config(config) if strategy is None or isinstance(config, str) else config
    if strategy is None:
        strategy = get_strategy(canon["strategy"], **canon["params"])
    chunks = strategy.split(document)
    if canon.get("transcribe_tables"):
        chunks = transcribe_tables(document, chunks)
    return chunks


def chunk_corpus(config: Mapping[str, Any] | str, corpus: Any,
                 only: Iterable[str] | None = None) -> dict[str, list[Chunk]]:
    """``{document id: chunks}`` for every document of ``corpus`` (or only the ids in ``only``), in corpus order."""
    canon = canonical_config(config)
    strategy = get_strategy(canon["strategy"], **canon["params"])
    wanted = None if only is None else set(only)
    return {d.id: chunk_document(canon, d, strategy) for d in _documents(corpus)
            if wanted is None or d.id in wanted}


def rechunk(plan: RechunkPlan, old_chunks: Mapping[str, Sequence[Chunk]], new_corpus: Any,
            config: Mapping[str, Any] | str) -> dict[str, list[Chunk]]:
    """Apply ``plan``: the new ``{document id: chunks}``, in the order of ``new_corpus``.

    Kept documents reuse their chunks from ``old_chunks`` (which must hold
    them); the documents in ``plan.rechunk`` are chunked again. A full rebuild
    ignores ``old_chunks``.
    """
    if plan.full_rebuild:
        return chunk_corpus(config, new_corpus)
    lost = [d for d in plan.keep if d not in old_chunks]
    if lost:
        raise ValueError(f"old_chunks lacks the chunks of kept document {lost[0]!r}: rebuild fully instead")
    fresh = chunk_corpus(config, new_corpus, only=plan.rechunk)
    return {d.id: (fresh[d.id] if d.id in fresh else list(old_chunks[d.id])) for d in _documents(new_corpus)}
