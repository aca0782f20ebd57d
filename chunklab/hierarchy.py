"""Index structures that separate what is *retrieved* from what is *read*.

A flat chunking makes one unit do two jobs: be small enough that its vector
(or its BM25 terms) is about one thing, and be large enough that the model
reading it has the whole answer. The structures here give each job its own
unit (article 000 §3.2, article 003 strategies 11 and 12):

* :class:`ParentChildIndex` (small-to-big): small *children* are searched; a hit
  brings back its *parent*, de-duplicated, until a context budget is spent.
  With ``auto_merge`` a parent replaces its children only when most of them
  were hit.
* :class:`SentenceWindowIndex`: single sentences are searched; a hit brings
  back the ``±w`` sentences around it, never crossing a section or document.
* :func:`multi_granularity`: the same corpus chunked twice (say 200 and 800);
  the two rankings are fused by reciprocal rank fusion and results that
  mostly repeat an earlier one are dropped.

Every span handed back is exact: ``document.text[start:end]`` is the text.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from .core import trim_span as _trim
from .base import Strategy
from .core import Chunk, Document, as_document
from .length import count_tokens
from .params import Param
from .parsing.text import section_starts, window_bounds
from .retrieval.bm25 import Ranking, _check_k
from .retrieval.dense import rrf_scores
from .strategies.hierarchy import sentence_units
from .strategies.linguistic import Recursive

__all__ = [
    "ParentChildIndex", "ParentRanking", "SentenceWindowIndex", "ContextItem", "Context", "FusedHit",
    "multi_granularity", "section_starts", "sentence_units", "span_overlap", "window_bounds",
]


def _default_count() -> Callable[[str], int]:
    return count_tokens


def _documents(documents: Iterable[Any] | Document | str) -> list[Document]:
    if isinstance(documents, (str, Document)):
        documents = [documents]
    docs = [as_document(d, f"doc{i}") for i, d in enumerate(documents)]
    seen: set[str] = set()
    for d in docs:
        if d.id in seen:
            raise ValueError(f"document ids must be unique, got {d.id!r} twice")
        seen.add(d.id)
    return docs


#: A context budget, in tokens or whatever the ``count`` function measures.
_BUDGET = Param("int", 2000, "context budget (what `count` measures)", low=0)


def _check_budget(budget: Any) -> int:
    return _BUDGET.validate("budget", budget)




def span_overlap(a: Chunk, b: Chunk) -> int:
    """Characters shared by two chunks (0 when they belong to different documents).

    >>> span_overlap(Chunk("d", 0, 0, 4, "甲乙丙丁"), Chunk("d", 1, 2, 6, "丙丁戊己"))
    2
    """
    if a.doc_id != b.doc_id:
        return 0
    return max(0, min(a.end, b.end) - max(a.start, b.start))


# -- results -------------------------------------------------------------------------

@dataclass(frozen=True)
class ContextItem:
    """One piece of generation context: what was returned and which hits brought it.

    ``kind`` is ``"parent"``, ``"child"`` or ``"window"``; ``index`` points into
    the index's ``parents``, ``children`` or ``sentences``; ``chunk`` is the
    exact span; ``hits`` are the retrieval units (child or sentence indices,
    in rank order) behind it; ``tokens`` is ``count(chunk.text)``.
    """

    kind: str
    index: int
    chunk: Chunk
    hits: tuple[int, ...]
    tokens: int


@dataclass(frozen=True)
class Context:
    """What a budgeted retrieval used: items in rank order, tokens spent, hits left out."""

    items: tuple[ContextItem, ...]
    tokens: int
    budget: int
    unused_hits: tuple[int, ...]

    @property
    def chunks(self) -> list[Chunk]:
        return [it.chunk for it in self.items]

    @property
    def truncated(self) -> bool:
        """True when the budget stopped the retrieval before every hit was used."""
        return bool(self.unused_hits)

    def __len__(self) -> int:
        return len(self.items)


def _fill(units: list[tuple[str, int, Chunk, list[int]]], budget: int, count: Callable[[str], int]) -> Context:
    """Take units in order until the next one does not fit ``budget``; report what was used."""
    items: list[ContextItem] = []
    used = 0
    unused: list[int] = []
    stopped = False
    for kind, idx, chunk, hits in units:
        if stopped:
            unused.extend(hits)
            continue
        cost = count(chunk.text)
        if used + cost > budget:
            stopped = True
            unused.extend(hits)
            continue
        used += cost
        items.append(ContextItem(kind, idx, chunk, tuple(hits), cost))
    return Context(tuple(items), used, budget, tuple(unused))


def _hit_ids(hits: Iterable[Any], n: int, what: str) -> list[int]:
    """Normalise hits (ints, or ``(index, score)`` pairs) to unique indices in rank order."""
    out: list[int] = []
    seen: set[int] = set()
    for h in hits:
        i = h[0] if isinstance(h, (tuple, list)) else h
        if isinstance(i, bool) or not hasattr(i, "__index__"):
            raise TypeError(f"hits must be {what} indices (ints) or (index, score) pairs, got {h!r}")
        i = int(i)
        if i < 0:      # -1 pads a short ranking (see chunklab.retrieval.Ranking)
            continue
        if i >= n:
            raise ValueError(f"hit {i} is out of range: the index has {n} {what}s (0..{n - 1})")
        if i not in seen:
            seen.add(i)
            out.append(i)
    return out


# -- parent / child -------------------------------------------------------------------------

class ParentChildIndex:
    """Small-to-big: search small children, read their (de-duplicated) parents.

    ``parent`` is any strategy (default ``recursive`` at 1200 characters;
    a section or clause strategy gives structural parents); each parent is
    then cut by ``child`` (default ``recursive`` at 200) *within* its own span,
    so a child never straddles two parents. ``children[i].meta["parent"]`` is
    the index of its parent in :attr:`parents`, and :attr:`children_of` maps
    back. Children inherit their parent's ``context`` (title, heading path).

    >>> idx = ParentChildIndex(["第一章。甲甲甲。乙乙乙。\\n\\n第二章。丙丙丙。"],
    ...                        parent=Recursive(target=12), child=Recursive(target=5))
    >>> [p.text for p in idx.parents]
    ['第一章。甲甲甲。乙乙乙。', '第二章。丙丙丙。']
    >>> [(c.text, c.meta["parent"]) for c in idx.children]
    [('第一章。', 0), ('甲甲甲。', 0), ('乙乙乙。', 0), ('第二章。', 1), ('丙丙丙。', 1)]
    >>> [it.chunk.text for it in idx.retrieve([4, 3, 1], budget=100, count=len).items]
    ['第二章。丙丙丙。', '第一章。甲甲甲。乙乙乙。']
    """

    def __init__(self, documents: Iterable[Any] | Document | str, parent: Strategy | None = None,
                 child: Strategy | None = None) -> None:
        self.parent_strategy = parent if parent is not None else Recursive(target=1200)
        self.child_strategy = child if child is not None else Recursive(target=200)
        for name, s in (("parent", self.parent_strategy), ("child", self.child_strategy)):
            if not isinstance(s, Strategy):
                raise TypeError(f"{name} must be a chunklab Strategy (e.g. get_strategy('recursive', target=...)), "
                                f"got {type(s).__name__}")
        self.documents: dict[str, Document] = {}
        self.parents: list[Chunk] = []
        self.children: list[Chunk] = []
        self.children_of: list[list[int]] = []
        for doc in _documents(documents):
            self.documents[doc.id] = doc
            self._add(doc)

    def _add(self, doc: Document) -> None:
        text = doc.text
        child = self.child_strategy
        n_children = 0
        for p in self.parent_strategy.split(doc):
            pi = len(self.parents)
            self.parents.append(p)
            kids: list[int] = []
            for s, e, meta in child._spans(doc, p.start, p.end):
                s, e = _trim(text, s, e)
                if s >= e:
                    continue
                meta = dict(meta)
                meta.pop("context", None)
                m = {"strategy": child.name, "level": meta.pop("level", child.name), **meta,
                     "parent": pi, "parent_span": (p.start, p.end)}
                kids.append(len(self.children))
                self.children.append(Chunk(doc.id, n_children, s, e, text[s:e], m, p.context))
                n_children += 1
            self.children_of.append(kids)

    def __repr__(self) -> str:
        return (f"ParentChildIndex({len(self.documents)} documents, {len(self.parents)} parents, "
                f"{len(self.children)} children)")

    def parent_of(self, child: int) -> Chunk:
        """The parent chunk of child ``child``."""
        return self.parents[self.children[child].meta["parent"]]

    def retrieve(self, hits: Iterable[Any], budget: int, count: Callable[[str], int] | None = None,
                 auto_merge: bool = False, merge_threshold: float = 0.5) -> Context:
        """Turn ranked child hits into generation context within ``budget``.

        ``hits``: child indices best first (or ``(index, score)`` pairs; -1
        ignored; repeats ignored). ``count`` measures a text (default: cl100k
        tokens; pass ``len`` for characters).

        Without ``auto_merge`` every hit is replaced by its parent; a parent
        already taken absorbs later hits (listed in its item's ``hits``). With
        ``auto_merge``, a parent replaces its children only when more than
        ``merge_threshold`` of them are among the hits; otherwise the children
        themselves are returned. Items are taken in the rank of their first
        hit until the next one does not fit: retrieval stops there (it does
        not skip to a smaller, lower-ranked item), and the hits left out are
        reported in :attr:`Context.unused_hits`.
        """
        budget = _check_budget(budget)
        count = count or _default_count()
        if not 0.0 <= merge_threshold < 1.0:
            raise ValueError(f"merge_threshold must be a number in [0, 1), got {merge_threshold!r}")
        ids = _hit_ids(hits, len(self.children), "child")
        by_parent: dict[int, list[int]] = {}
        for c in ids:
            by_parent.setdefault(self.children[c].meta["parent"], []).append(c)

        units: list[tuple[str, int, Chunk, list[int]]] = []
        taken: set[int] = set()
        for c in ids:
            p = self.children[c].meta["parent"]
            merge = (not auto_merge) or len(by_parent[p]) > merge_threshold * len(self.children_of[p])
            if merge:
                if p not in taken:
                    taken.add(p)
                    units.append(("parent", p, self.parents[p], by_parent[p]))
            else:
                units.append(("child", c, self.children[c], [c]))
        return _fill(units, budget, count)


class ParentRanking:
    """Rank the parents of a :class:`ParentChildIndex` by their best child, for ``evaluate``.

    The children are indexed with BM25 on ``index`` (a :class:`~chunklab.retrieval.CorpusIndex`
    of the same documents) and searched ``fanout * k`` deep; each parent then appears once, at the
    rank of its best child and with that child's score. Use it as the engine of
    :func:`~chunklab.evaluation.evaluate` with ``pc.parents`` as the chunks::

        evaluate(docs, pc.parents, questions, k=5, engine=ParentRanking(pc, index))

    >>> from chunklab.retrieval import CorpusIndex
    >>> doc = Document("d", "第一章。甲甲甲。乙乙乙。\\n\\n第二章。丙丙丙。")
    >>> pc = ParentChildIndex([doc], parent=Recursive(target=12), child=Recursive(target=5))
    >>> ParentRanking(pc, CorpusIndex([doc])).search(["丙丙", "甲甲和丙丙"], k=2).ids.tolist()
    [[1, -1], [0, 1]]
    """

    def __init__(self, pc: ParentChildIndex, index: Any, use_context: bool = False, fanout: int = 10) -> None:
        if not isinstance(pc, ParentChildIndex):
            raise TypeError(f"pc must be a ParentChildIndex, got {type(pc).__name__}")
        fanout = Param("int", 10, low=1).validate("fanout", fanout)
        self.pc, self.index, self.fanout = pc, index, fanout
        self.bm25 = index.index_chunks(pc.children, use_context=use_context)
        self._parent_of = [c.meta["parent"] for c in pc.children]

    def search(self, queries: Sequence[str], k: int = 5) -> Any:
        import numpy as np

        k = _check_k(k)
        queries = list(queries)
        found = self.bm25.search(self.index.encode_queries(queries), k=self.fanout * k)
        ids = np.full((len(queries), k), -1, dtype=np.int64)
        scores = np.full((len(queries), k), np.nan)
        for i, (row, row_scores) in enumerate(zip(found.ids, found.scores)):
            seen: set[int] = set()
            for c, sc in zip(row.tolist(), row_scores.tolist()):
                if c < 0 or len(seen) == k:
                    break
                p = self._parent_of[c]
                if p not in seen:
                    ids[i, len(seen)], scores[i, len(seen)] = p, sc
                    seen.add(p)
        return Ranking(ids, scores)


# -- sentence windows ------------------------------------------------------------------------

class SentenceWindowIndex:
    """Search single sentences; read each hit with ``window`` sentences on either side.

    The window is symmetric (``window`` before and after) and clipped at the
    edges of the sentence's section and document: it never borrows text from
    another section (article 003: not across versions or unrelated chapters).
    Sections default to paragraphs; pass ``sections="document"`` or a
    strategy (a markdown-heading one, say) to change them. Sentences longer
    than ``max_sentence`` characters are cut by ``recursive``.

    >>> idx = SentenceWindowIndex(["一。二。三。四。\\n\\n五。六。"], window=1)
    >>> [s.text for s in idx.sentences]
    ['一。', '二。', '三。', '四。', '五。', '六。']
    >>> idx.window(1), idx.window_chunk(3).text, idx.window_chunk(4).text
    (('doc0', 0, 6), '三。四。', '五。六。')
    """

    def __init__(self, documents: Iterable[Any] | Document | str, window: int = 2,
                 sections: Strategy | str | None = "paragraph", max_sentence: int | None = 1000) -> None:
        window = Param("int", 2, low=0).validate("window", window)
        max_sentence = Param("int", 1000, low=1, none_ok=True).validate("max_sentence", max_sentence)
        self.w = window
        self.sections_spec = sections
        self.documents: dict[str, Document] = {}
        self.sentences: list[Chunk] = []
        self._section: list[tuple[str, int]] = []   # (doc id, section number) per sentence
        for doc in _documents(documents):
            self.documents[doc.id] = doc
            starts = section_starts(doc, sections)
            for k, (s, e, si, level) in enumerate(sentence_units(doc, 0, len(doc.text), starts, max_sentence)):
                self.sentences.append(Chunk(doc.id, k, s, e, doc.text[s:e],
                                            {"strategy": "sentence_window", "level": level, "section": si}))
                self._section.append((doc.id, si))

    def __repr__(self) -> str:
        return f"SentenceWindowIndex({len(self.documents)} documents, {len(self.sentences)} sentences, window={self.w})"

    def _check(self, i: int) -> int:
        if isinstance(i, bool) or not hasattr(i, "__index__") or not 0 <= int(i) < len(self.sentences):
            raise ValueError(f"sentence index must be an int in [0, {len(self.sentences) - 1}], got {i!r}")
        return int(i)

    def window_units(self, i: int, w: int | None = None) -> tuple[int, int]:
        """Indices of the first and last sentence of the window around sentence ``i``."""
        return window_bounds(self._section, self._check(i), self.w if w is None else w)

    def window(self, i: int, w: int | None = None) -> tuple[str, int, int]:
        """The exact ``(doc_id, start, end)`` span of sentence ``i``'s window."""
        lo, hi = self.window_units(i, w)
        return self.sentences[lo].doc_id, self.sentences[lo].start, self.sentences[hi].end

    def window_chunk(self, i: int, w: int | None = None) -> Chunk:
        """The window as a :class:`~chunklab.Chunk` (``meta["sentence"]`` is ``i``)."""
        doc_id, s, e = self.window(i, w)
        lo, hi = self.window_units(i, w)
        return Chunk(doc_id, self._check(i), s, e, self.documents[doc_id].text[s:e],
                     {"strategy": "sentence_window", "level": "window", "sentence": i, "sentences": (lo, hi + 1)})

    def retrieve(self, hits: Iterable[Any], budget: int, count: Callable[[str], int] | None = None) -> Context:
        """Windows of the ranked sentence ``hits``, within ``budget``.

        A hit whose sentence already lies in a chosen window is absorbed by it;
        a hit whose window overlaps chosen ones is merged with them into one
        span (a merged window keeps the rank of its first hit). Stops at the
        first window that does not fit, like :meth:`ParentChildIndex.retrieve`.
        """
        budget = _check_budget(budget)
        count = count or _default_count()
        ids = _hit_ids(hits, len(self.sentences), "sentence")
        groups: list[list[Any]] = []       # [lo, hi, hits]
        for i in ids:
            lo, hi = self.window_units(i)
            merged = None
            for g in groups:
                if self._section[g[0]] == self._section[i] and lo <= g[1] and g[0] <= hi:
                    if merged is None:
                        g[0], g[1] = min(g[0], lo), max(g[1], hi)
                        g[2].append(i)
                        merged = g
                    else:                   # the new window bridges two groups
                        merged[0], merged[1] = min(merged[0], g[0]), max(merged[1], g[1])
                        merged[2].extend(g[2])
                        g[2] = None
            groups = [g for g in groups if g[2] is not None]
            if merged is None:
                groups.append([lo, hi, [i]])
        units = []
        for lo, hi, gh in groups:
            first = self.sentences[lo]
            s, e = first.start, self.sentences[hi].end
            chunk = Chunk(first.doc_id, gh[0], s, e, self.documents[first.doc_id].text[s:e],
                          {"strategy": "sentence_window", "level": "window", "sentences": (lo, hi + 1)})
            units.append(("window", gh[0], chunk, gh))
        return _fill(units, budget, count)


# -- two granularities ---------------------------------------------------------------------------

@dataclass(frozen=True)
class FusedHit:
    """One result of :func:`multi_granularity`: which index (``"a"``/``"b"``), which chunk, its RRF score."""

    source: str
    index: int
    chunk: Chunk
    score: float


def multi_granularity(rankings_a: Sequence[int], rankings_b: Sequence[int], chunks_a: Sequence[Chunk],
                      chunks_b: Sequence[Chunk], k: int = 5, rrf_constant: float = 60,
                      max_overlap: float = 0.5) -> list[FusedHit]:
    """Fuse one query's rankings over two chunkings of the same corpus.

    ``rankings_a`` ranks ``chunks_a`` (indices, best first, -1 ignored), and
    likewise for ``b``. The two lists are merged by reciprocal rank fusion
    (:func:`chunklab.retrieval.rrf_scores`, constant ``rrf_constant``); walking the fused
    list, a chunk that shares more than ``max_overlap`` of its own length
    with a chunk already chosen is dropped (a small chunk inside a chosen
    big one adds nothing; a big one around a chosen small one adds
    context and is kept). Stops at ``k`` results.

    >>> small = [Chunk("d", 0, 0, 2, "甲乙"), Chunk("d", 1, 2, 4, "丙丁")]
    >>> big = [Chunk("d", 0, 0, 4, "甲乙丙丁")]
    >>> [(h.source, h.chunk.text) for h in multi_granularity([0, 1], [0], small, big, k=3)]
    [('a', '甲乙'), ('b', '甲乙丙丁')]
    """
    k = _check_k(k)
    max_overlap = Param("float", 0.5, low=0, high=1).validate("max_overlap", max_overlap)
    n_a = len(chunks_a)
    ra = _hit_ids(rankings_a, n_a, "chunks_a chunk")
    rb = _hit_ids(rankings_b, len(chunks_b), "chunks_b chunk")
    scores = rrf_scores([ra, [n_a + j for j in rb]], rrf_constant)
    chosen: list[FusedHit] = []
    for i in scores:
        source, idx = ("a", i) if i < n_a else ("b", i - n_a)
        c = chunks_a[idx] if source == "a" else chunks_b[idx]
        if any(span_overlap(c, h.chunk) > max_overlap * len(c) for h in chosen):
            continue
        chosen.append(FusedHit(source, idx, c, scores[i]))
        if len(chosen) == k:
            break
    return chosen
