"""The strategy base class and the registry that creates strategies by name.

A strategy is a small object whose attributes are its validated parameters and
whose one verb is :meth:`Strategy.split`. Subclasses implement ``_spans``,
which yields ``(start, end, meta)`` windows of the document *while* splitting:
offsets are carried through every step, never recovered afterwards with
``str.find``.
"""
from __future__ import annotations

import difflib
import gc
import sys
import warnings
from types import MappingProxyType
from typing import Any, ClassVar, Iterable, Iterator

from .core import Chunk, Document, as_document, trim_span
from .length import LENGTHS, Sizer, length_function, span_sizer
from .params import Param, ParamError

__all__ = [
    "Strategy", "register", "get_strategy", "list_strategies", "chunk", "strategy_names",
    "FAMILIES", "Span", "size_params",
]

#: The families of strategies, in the order the book presents them.
FAMILIES = ("geometric", "linguistic", "structure", "container", "code", "semantic", "hierarchy")

Span = tuple[int, int, dict]  # (start, end, meta); callers may extend a copy of meta

_REGISTRY: dict[str, type["Strategy"]] = {}

#: Parameters every strategy accepts.
COMMON_PARAMS: dict[str, Param] = {
    "prefix": Param("bool", False, "put the document title and heading/clause path in Chunk.context"),
}


def size_params(target: int = 500, max: int | None = None, min: int = 0, overlap: int = 0,
                high: int = 100_000) -> dict[str, Param]:
    """The four size knobs, declared once so every strategy means the same by them."""
    return {
        "target": Param("int", target, "merge pieces up to this length", low=1, high=high, ui_high=4096),
        "max": Param("int", max, "hard cap on a chunk's length (None: same as target)", low=1, high=high,
                     none_ok=True, ui_high=4096),
        "min": Param("int", min, "pieces shorter than this merge into a neighbour", low=0, high=high,
                     ui_high=1024),
        "overlap": Param("int", overlap, "length shared by neighbouring chunks (at most)", low=0, high=high,
                         ui_high=1024),
        "length": Param("choice", "chars", "how length is measured", choices=LENGTHS),
    }


class Strategy:
    """Base class. Subclasses set ``name``, ``family``, ``summary`` and ``params``.

    Edge behaviour shared by all strategies: an empty or whitespace-only
    document gives ``[]``; whitespace at the edges of a chunk is trimmed (the
    offsets move with it, so ``document.text[start:end] == text`` still
    holds); a chunk that trimming leaves empty, or inside the previous chunk,
    is dropped (unless ``drop_contained`` is False, as in LangChain-compatible mode).
    """

    name: ClassVar[str] = ""
    family: ClassVar[str] = ""
    #: One line each in Chinese and English.
    summary: ClassVar[dict[str, str]] = {"zh": "", "en": ""}
    params: ClassVar[dict[str, Param]] = {}
    #: Other names accepted for parameters, ``{alias: canonical name}`` (``fixed`` takes
    #: ``target`` for ``size``). An alias's value is validated by the canonical parameter's
    #: declaration, and errors name the alias; giving an alias and its canonical name is an
    #: error. Only canonical names appear in :meth:`get_params`, ``repr`` and
    #: :func:`list_strategies`. :meth:`_from_alias` turns an alias's value into the canonical one.
    aliases: ClassVar[dict[str, str]] = {}
    #: Aliases kept only for old code (a renamed parameter); using one warns (DeprecationWarning).
    deprecated: ClassVar[frozenset[str]] = frozenset()
    #: Drop a chunk whose trimmed span lies inside the previous chunk (it adds no text).
    drop_contained: bool = True

    def __init__(self, **kwargs: Any) -> None:
        spec = self.param_spec()
        kwargs = self._resolve_aliases(kwargs)
        for key in kwargs:
            if key not in spec:
                current = {a: c for a, c in self.aliases.items() if a not in self.deprecated}
                close = difflib.get_close_matches(key, [*spec, *current], n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                also = "; aliases: " + ", ".join(f"{a} for {c}" for a, c in current.items()) if current else ""
                raise ParamError(
                    f"unknown parameter {key!r} for strategy {self.name!r}{hint} "
                    f"(allowed: {', '.join(sorted(spec))}{also})"
                )
        for key, p in spec.items():
            setattr(self, key, p.validate(key, kwargs.get(key, p.default)))
        self._check()

    def _resolve_aliases(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """``kwargs`` with every alias (see :attr:`aliases`) replaced by its canonical name.

        Aliases are resolved in the order :attr:`aliases` lists them, so a hook may read a
        canonical value an earlier alias produced.
        """
        if not self.aliases:
            return kwargs
        given = set(kwargs)
        out = dict(kwargs)
        for alias, canonical in self.aliases.items():
            if alias not in given:
                continue
            if canonical in given:
                raise ParamError(f"{alias!r} is another name for {canonical!r} in strategy {self.name!r}: "
                                 f"give one of them, not both")
            if alias in self.deprecated:
                warnings.warn(f"strategy {self.name!r}: parameter {alias!r} is deprecated, use {canonical!r}",
                              DeprecationWarning, stacklevel=_caller_level())
            out[canonical] = self._from_alias(alias, out.pop(alias), out)
        return out

    def _from_alias(self, alias: str, value: Any, kwargs: dict[str, Any]) -> Any:
        """The canonical parameter's value for ``alias=value`` (``kwargs``: the others, canonical
        names for aliases resolved so far). By default a rename: validated by the canonical
        declaration under the alias's name. Override for an alias that is more than a rename."""
        return self.param_spec()[self.aliases[alias]].validate(alias, value)

    # -- declaration -------------------------------------------------------
    @classmethod
    def param_spec(cls) -> dict[str, Param]:
        """All parameters of this strategy, its own first, then the common ones."""
        return {**cls.params, **COMMON_PARAMS}

    def _check(self) -> None:
        """Cross-parameter rules. The size knobs are checked here for every strategy that has them."""
        spec = self.param_spec()
        if "target" in spec:
            t, mx = self.target, self.max
            if mx is not None and mx < t:
                raise ParamError(f"max must be >= target ({t}) or None, got {mx}")
            if "overlap" in spec:
                Param("int", 0, low=0, high=t - 1, bounds="[0, target)").validate("overlap", self.overlap)
            if "min" in spec:
                Param("int", 0, low=0, high=t, bounds="[0, target]").validate("min", self.min)

    def get_params(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.param_spec()}

    def changed_params(self) -> dict[str, Any]:
        """The parameters set away from the strategy's defaults (what a label or a command line names)."""
        defaults = type(self)().get_params()
        return {k: v for k, v in self.get_params().items() if defaults.get(k) != v}

    @property
    def cap(self) -> int:
        """The effective hard cap: ``max``, or ``target`` when ``max`` is None."""
        return self.max if self.max is not None else self.target

    def measure(self, text: str) -> int:
        return length_function(getattr(self, "length", "chars"))(text)

    def sizer(self, text: str, trimmed: bool = False) -> Sizer:
        """``size(a, b)``: the length of ``text[a:b]`` as this strategy measures it.

        Characters by subtraction (no slice is copied), anything else with
        :meth:`measure` on the slice (:func:`chunklab.length.span_sizer`: every
        strategy measures spans with this). Whitespace inside the span counts;
        ``trimmed=True`` measures the span without the whitespace at its edges,
        i.e. the chunk the base class would make of it (:func:`~chunklab.core.trim_span`).

        >>> rec = get_strategy("recursive")
        >>> rec.sizer("一二三 ")(0, 4), rec.sizer("一二三 ", trimmed=True)(0, 4)
        (4, 3)
        >>> get_strategy("recursive", length="tokens").sizer("hello world")(0, 11)
        2
        """
        # NOTE: the bound method is looked up once here, not once per span: sizes are taken
        # millions of times in a corpus run.
        size = span_sizer(text, None if getattr(self, "length", "chars") == "chars" else self.measure)
        if trimmed:
            return lambda a, b: size(*trim_span(text, a, b))
        return size

    def __repr__(self) -> str:
        spec = self.param_spec()
        shown = [f"{k}={getattr(self, k)!r}" for k, p in spec.items() if getattr(self, k) != p.default]
        return f"{type(self).__name__}({', '.join(shown)})"

    # -- the verb ----------------------------------------------------------
    def split(self, document: Document | str) -> list[Chunk]:
        """Split ``document`` (a :class:`Document` or a ``str``) into chunks."""
        doc = as_document(document)
        if not doc.text or doc.text.isspace():  # isspace() does not copy the text, strip() would
            return []
        # NOTE: a split allocates many small tracked objects (chunks, their meta dicts) and
        # frees none of them, so the cyclic garbage collector would run over and over for
        # nothing; pausing it makes chunking a large corpus ~30% faster. It is restored even
        # when the split raises.
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            return self._make_chunks(doc, self._spans(doc, 0, len(doc.text)))
        finally:
            if was_enabled:
                gc.enable()

    def split_documents(self, documents: Iterable[Document | str]) -> list[Chunk]:
        """Split every document of ``documents``, in order, into one list of chunks.

        Each chunk keeps its own document's id and offsets; ``index`` counts within each document.

        >>> from chunklab import Document, get_strategy
        >>> docs = [Document("a", "甲。乙。"), Document("b", "丙。")]
        >>> [(c.doc_id, c.index, c.text) for c in get_strategy("sentence", target=2).split_documents(docs)]
        [('a', 0, '甲。'), ('a', 1, '乙。'), ('b', 0, '丙。')]
        """
        chunks: list[Chunk] = []
        for document in documents:
            chunks.extend(self.split(document))
        return chunks

    def _spans(self, doc: Document, start: int, end: int) -> Iterable[Span]:  # pragma: no cover
        raise NotImplementedError

    def _make_chunks(self, doc: Document, spans: Iterable[Span]) -> list[Chunk]:
        text, doc_id = doc.text, doc.id
        chunks: list[Chunk] = []
        append = chunks.append
        prev_s, prev_e = -1, -1
        name, drop = self.name, self.drop_contained
        title_context = self._context(doc, {})
        # Chunks with nothing special to say share one read-only meta mapping.
        plain_meta = MappingProxyType({"strategy": name, "level": name})
        new = tuple.__new__
        # NOTE: this loop runs once per chunk of every strategy. The call to trim_span costs
        # ~10% of it (whole splits of the laws: recursive +1-3%, fixed +7%), hoisting doc.id
        # and counting chunks locally pay back ~2 points; testing the edges first to skip the
        # call helps `fixed` but costs `recursive` (most of its spans end in a line break).
        index = 0
        for s, e, meta in spans:
            s, e = trim_span(text, s, e)
            if s >= e or (drop and prev_s <= s and e <= prev_e):
                continue
            prev_s, prev_e = s, e
            if meta:
                meta = dict(meta)
                extra = meta.pop("context", "")
                m = MappingProxyType({"strategy": name, "level": meta.pop("level", name), **meta})
                context = self._context(doc, m) if "path" in m else title_context
                if extra:
                    context = f"{context}\n{extra}" if context else extra
            else:
                m, context = plain_meta, title_context
            # NOTE: Chunk's checks are skipped: text is sliced with the very offsets it records.
            append(new(Chunk, (doc_id, index, s, e, text[s:e], m, context)))
            index += 1
        return chunks

    def _context(self, doc: Document, meta: dict) -> str:
        if not self.prefix:
            return ""
        parts = [doc.title] if doc.title else []
        for p in meta.get("path", ()):
            if not parts or parts[-1] != p:
                parts.append(p)
        return " > ".join(parts)


def _caller_level() -> int:
    """The ``stacklevel`` at which ``warnings.warn`` names the first caller outside chunklab.

    NOTE: a strategy is built through ``chunk``, ``get_strategy``, a subclass's ``__init__``
    or directly, so no fixed level names the user's line (which is where Python shows, and
    by default only in ``__main__`` reports, a DeprecationWarning).
    """
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_globals.get("__name__", "").partition(".")[0] == "chunklab":
        frame, level = frame.f_back, level + 1
    return level


def register(cls: type[Strategy]) -> type[Strategy]:
    """Class decorator: make a strategy available to :func:`get_strategy` by its ``name``."""
    if not cls.name or cls.family not in FAMILIES:
        raise ValueError(f"{cls.__name__} needs a name and a family in {FAMILIES}")
    spec = cls.param_spec()
    for alias, canonical in cls.aliases.items():
        if alias in spec or canonical not in spec:
            raise ValueError(f"{cls.__name__}: alias {alias!r} must not be a parameter and must name one "
                             f"({canonical!r} is {'' if canonical in spec else 'not '}a parameter)")
    _REGISTRY[cls.name] = cls
    return cls


def strategy_names() -> list[str]:
    return sorted(_REGISTRY)


def get_strategy(name: str, **params: Any) -> Strategy:
    """Create a strategy by name with validated parameters.

    >>> get_strategy("fixed", size=4).split("一二三四五六")[1].text
    '五六'
    """
    if not isinstance(name, str) or name not in _REGISTRY:
        close = difflib.get_close_matches(str(name), list(_REGISTRY), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ValueError(f"unknown strategy {name!r}{hint} (known: {', '.join(strategy_names())})")
    return _REGISTRY[name](**params)


def list_strategies() -> list[dict[str, Any]]:
    """Every registered strategy: name, family, parameters (defaults, ranges) and summaries."""
    out = []
    order = {f: i for i, f in enumerate(FAMILIES)}
    for name, cls in sorted(_REGISTRY.items(), key=lambda kv: (order[kv[1].family], kv[0])):
        out.append({
            "name": name,
            "family": cls.family,
            "params": {k: p.describe() for k, p in cls.param_spec().items()},
            "summary_zh": cls.summary["zh"],
            "summary_en": cls.summary["en"],
        })
    return out


def chunk(text_or_document: Document | str, strategy: "str | Strategy" = "recursive", **params: Any) -> list[Chunk]:
    """Shortcut: ``get_strategy(strategy, **params).split(text_or_document)``; ``strategy`` may also
    be a strategy object already made (then ``params`` must be empty).

    >>> [c.text for c in chunk("第一句。第二句。", "sentence", target=4)]
    ['第一句。', '第二句。']
    >>> [c.text for c in chunk("第一句。第二句。", get_strategy("sentence", target=4))]
    ['第一句。', '第二句。']
    """
    if isinstance(strategy, Strategy):
        if params:
            raise TypeError(f"chunk() got a strategy object and parameters {sorted(params)}: set them when "
                            f"making the strategy (get_strategy(name, **params)), or pass its name")
        return strategy.split(text_or_document)
    return get_strategy(strategy, **params).split(text_or_document)


def iter_pieces(text: str, start: int, end: int, pattern) -> Iterator[tuple[int, int]]:
    """Split ``text[start:end]`` after each match of ``pattern`` (separator kept at the end)."""
    pos = start
    for m in pattern.finditer(text, start, end):
        if m.end() > pos:
            yield pos, m.end()
            pos = m.end()
    if pos < end:
        yield pos, end
