"""The evaluation options, declared and validated once: :class:`EvalSettings`.

:func:`~chunklab.evaluation.evaluate`, :func:`~chunklab.evaluation.matrix.run_matrix`, the command
line, the benchmarks, the widgets and the regression gate all take the same frozen object, so an
option has one name, one default and one check everywhere.
"""
from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass
from typing import Any, ClassVar, Mapping

from ..params import Param, ParamError
from ..retrieval import TOKENIZERS, Retriever, Tokenizer
from ..retrieval.bm25 import TOP_K
from ..retrieval.dense import FUSIONS, RRF_CONSTANT, check_weights
from ..retrieval.embedders import EMBEDDERS, check_embedder, embedder_name
from ..retrieval.factory import RETRIEVERS, check_retriever
from .metrics import BUDGET_FILLS, METRIC_RULES

__all__ = ["EvalSettings", "FUSED", "parse_weights"]

#: The retrievers of ``engine="hybrid"``, by the names ``fusion_weights`` gives them.
FUSED: tuple[str, ...] = ("bm25", "dense")


def parse_weights(value: Any, name: str = "fusion_weights") -> tuple[tuple[str, float], ...] | None:
    """``fusion_weights`` as ``(("bm25", w), ("dense", w))`` (a retriever not named weighs 1), from a
    mapping or ``"bm25=1,dense=2"``; None stays None. A one-line ParamError otherwise.

    >>> parse_weights("bm25=1, dense=2"), parse_weights({"dense": 0.5})
    ((('bm25', 1.0), ('dense', 2.0)), (('bm25', 1.0), ('dense', 0.5)))
    >>> parse_weights("bm25=1,dens=2")
    Traceback (most recent call last):
    ...
    chunklab.params.ParamError: fusion_weights: unknown retriever 'dens' (did you mean 'dense'?); hybrid fuses bm25, dense, written bm25=1,dense=2
    """
    if value is None:
        return None
    items: dict[str, Any] = {}
    if isinstance(value, str):
        for part in (p.strip() for p in value.split(",")):
            key, sep, w = part.partition("=")
            if not sep:
                raise ParamError(f"{name}: {part!r} is not NAME=WEIGHT; write bm25=1,dense=2")
            items[key.strip()] = w.strip()
    elif isinstance(value, Mapping):
        items = dict(value)
    elif isinstance(value, (tuple, list)) and all(isinstance(x, (tuple, list)) and len(x) == 2 for x in value):
        items = dict(value)
    else:
        raise ParamError(f"{name} must be a mapping like {{'bm25': 1, 'dense': 2}} or 'bm25=1,dense=2', got {value!r}")
    for key in items:
        if key not in FUSED:
            close = difflib.get_close_matches(str(key), FUSED, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ParamError(f"{name}: unknown retriever {key!r}{hint}; hybrid fuses {', '.join(FUSED)}, "
                             f"written bm25=1,dense=2")
    raw = [items.get(n, 1.0) for n in FUSED]
    try:
        weights = check_weights([float(w) for w in raw], len(FUSED))
    except (TypeError, ValueError):
        raise ParamError(f"{name}: weights must be numbers >= 0, not all 0, got "
                         f"{', '.join(f'{n}={w}' for n, w in zip(FUSED, raw))}") from None
    return tuple(zip(FUSED, weights or ()))


@dataclass(frozen=True)
class EvalSettings:
    """How an evaluation retrieves and measures: a frozen, validated set of options.

    Every field is checked when the object is made (also by :meth:`replace`); an error is one line
    naming the field, the value and what is allowed. :data:`PARAMS` holds the declarations
    (:class:`~chunklab.params.Param`).

    ``k``
        chunks retrieved per question (the top ``k`` are scored);
    ``budget``, ``budget_unit``
        fill a context budget of ``budget`` characters (``"chars"``) or cl100k tokens
        (``"tokens"``) from the ranking, de-duplicated by offsets, instead of taking the top ``k``
        (see :func:`~chunklab.evaluation.metrics.select_budget`); None: top ``k``;
    ``budget_fill``
        what happens at the budget's last chunk: ``"cut"`` (take the part that fits, so every
        configuration delivers the same amount of text), ``"skip"`` or ``"stop"`` (see
        :data:`~chunklab.evaluation.metrics.BUDGET_FILLS`);
    ``tokenizer``
        a tokeniser name (see :data:`~chunklab.retrieval.TOKENIZERS`) or a
        :class:`~chunklab.retrieval.Tokenizer`; ignored when ``evaluate`` is given an ``index``
        (the index's own tokeniser ranks);
    ``engine``
        the retriever: ``"bm25"`` (``"fast"`` is its older name, and the default, kept so that
        ``summary()["engine"]`` reads as before), ``"reference"``, ``"dense"``, ``"hybrid"`` (see
        :func:`~chunklab.retrieval.make_retriever`), or any object with ``search(queries, k)``;
    ``embedder``
        the embedder of ``"dense"`` and ``"hybrid"`` (ignored by the others): a name —
        ``"lsa"`` (fitted on the sentences of the evaluated documents), ``"e5-small"``,
        ``"use-multilingual"`` (see :func:`~chunklab.retrieval.get_embedder`) — or an embedder
        object; None: the ``embedder=`` argument of ``evaluate``, which those engines then need;
    ``use_context``
        index ``chunk.embed_text`` (context + text) instead of ``chunk.text``;
    ``depth``
        how deep rankings go, at least ``k`` (None: ``max(k, 50)``); below the top ``k`` they serve
        the budget and the miss attribution;
    ``n_boot``, ``seed``
        bootstrap resamples and their seed for the confidence intervals;
    ``count_tokens``
        also measure ``retrieved_tokens`` (tok@k in cl100k tokens);
    ``rrf_constant``
        the reciprocal rank fusion constant of ``engine="hybrid"``;
    ``fusion``, ``fusion_weights``
        how ``engine="hybrid"`` fuses BM25 and dense: ``"rrf"`` (reciprocal rank fusion, the
        default) or ``"score"`` (each ranking's scores min-max normalised per question, then
        summed), each ranking weighted by ``fusion_weights`` (``{"bm25": 1, "dense": 2}`` or
        ``"bm25=1,dense=2"``; a name left out weighs 1; stored as ``(("bm25", 1.0), ("dense",
        2.0))``). The defaults (``"rrf"``, None) are plain equal-weight RRF, the hybrid of before;
    ``metric_rules``
        ``"chunklab"`` (the default) or ``"chroma"``: Chroma's two rules for its metrics (see
        :data:`~chunklab.evaluation.metrics.METRIC_RULES`): a chunk placed at the first occurrence of
        its text with a trailing ``"."`` stripped, and a chunk that only touches the evidence counted
        in precision_Ω's denominator. Retrieval is not changed, only the metrics.

    >>> s = EvalSettings(k=3, budget=2000)
    >>> s.k, s.budget, s.ranking_depth, s.replace(k=60).ranking_depth
    (3, 2000, 50, 60)
    >>> EvalSettings(k=0)
    Traceback (most recent call last):
    ...
    chunklab.params.ParamError: k must be an int >= 1, got 0
    >>> s.replace(n_bot=100)
    Traceback (most recent call last):
    ...
    TypeError: unknown evaluation option 'n_bot' (did you mean 'n_boot'?); the options are k, budget, budget_unit, budget_fill, tokenizer, engine, embedder, use_context, depth, n_boot, seed, count_tokens, rrf_constant, fusion, fusion_weights, metric_rules
    """

    k: int = 5
    budget: int | None = None
    budget_unit: str = "chars"
    budget_fill: str = "cut"
    tokenizer: str | Tokenizer = "bigram"
    engine: str | Retriever = "fast"
    embedder: Any = None
    use_context: bool = False
    depth: int | None = None
    n_boot: int = 2000
    seed: int = 0
    count_tokens: bool = False
    rrf_constant: float = 60
    fusion: str = "rrf"
    fusion_weights: Any = None
    metric_rules: str = "chunklab"

    #: The declaration of each field (``tokenizer``, ``engine`` and ``embedder`` also accept objects, see above).
    PARAMS: ClassVar[Mapping[str, Param]] = {
        "k": TOP_K,
        "budget": Param("int", None, "context budget (characters or tokens), instead of k", low=1, none_ok=True),
        "budget_unit": Param("choice", "chars", "unit of the budget", choices=("chars", "tokens")),
        "budget_fill": Param("choice", "cut", "how a budget is filled past a chunk that does not fit",
                             choices=BUDGET_FILLS),
        "tokenizer": Param("choice", "bigram", "BM25 tokeniser", choices=tuple(TOKENIZERS)),
        "engine": Param("choice", "fast", "retriever", choices=RETRIEVERS),
        "embedder": Param("choice", None, "embedder of dense and hybrid retrieval", choices=EMBEDDERS, none_ok=True),
        "use_context": Param("bool", False, "index chunk.embed_text (context + text)"),
        "depth": Param("int", None, "ranking depth (at least k; None: max(k, 50))", low=1, none_ok=True),
        "n_boot": Param("int", 2000, "bootstrap resamples", low=1),
        "seed": Param("int", 0, "bootstrap seed", low=0),
        "count_tokens": Param("bool", False, "also measure retrieved cl100k tokens"),
        "rrf_constant": RRF_CONSTANT,
        "fusion": Param("choice", "rrf", "how hybrid retrieval fuses BM25 and dense", choices=FUSIONS),
        "fusion_weights": Param("str", None, "weight of each fused retriever, e.g. bm25=1,dense=2", none_ok=True),
        "metric_rules": Param("choice", "chunklab", "whose rules the metrics follow", choices=METRIC_RULES),
    }

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name == "engine":
                value = check_retriever(value, "engine")
            elif f.name == "embedder":
                value = check_embedder("embedder", value)
            elif f.name == "fusion_weights":
                value = parse_weights(value)
            elif f.name == "tokenizer" and isinstance(value, Tokenizer):
                pass
            elif f.name == "tokenizer" and not isinstance(value, str):
                raise TypeError(f"tokenizer must be {self.PARAMS['tokenizer'].allowed()} or a Tokenizer, got {value!r}")
            else:
                value = self.PARAMS[f.name].validate(f.name, value)
            object.__setattr__(self, f.name, value)

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The option names, in declaration order."""
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def check_names(cls, options: Mapping[str, Any]) -> None:
        """A one-line TypeError for the first name of ``options`` that is not an option, with the closest match."""
        names = cls.names()
        for key in options:
            if key not in names:
                close = difflib.get_close_matches(str(key), names, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise TypeError(f"unknown evaluation option {key!r}{hint}; the options are {', '.join(names)}")

    def replace(self, **changes: Any) -> "EvalSettings":
        """A copy with ``changes`` (validated like a new object); an unknown name is a one-line error."""
        if not changes:
            return self
        self.check_names(changes)
        return dataclasses.replace(self, **changes)

    @classmethod
    def resolve(cls, settings: "EvalSettings | None" = None, options: Mapping[str, Any] | None = None,
                default: "EvalSettings | None" = None) -> "EvalSettings":
        """``settings`` (or ``default``, or the defaults) updated with ``options``: how every entry point reads its options."""
        if settings is None:
            settings = default if default is not None else cls()
        elif not isinstance(settings, cls):
            raise TypeError(f"settings must be an EvalSettings or None, got {type(settings).__name__} "
                            f"(pass single options by keyword, e.g. k=5)")
        return settings.replace(**dict(options or {}))

    @property
    def ranking_depth(self) -> int:
        """How deep rankings go: ``depth`` (at least ``k``), or ``max(k, 50)``."""
        return max(self.k, 50) if self.depth is None else max(self.depth, self.k)

    @property
    def engine_name(self) -> str:
        """``engine`` as recorded in a result's config: the name, or the engine object's class name."""
        return self.engine if isinstance(self.engine, str) else type(self.engine).__name__

    @property
    def embedder_name(self) -> str | None:
        """``embedder`` as recorded in a result's config: the name, or the object's ``name``, or None."""
        return embedder_name(self.embedder)

    @property
    def tokenizer_name(self) -> str:
        """``tokenizer`` as recorded in a result's config: the name, or the tokeniser's ``name``."""
        return self.tokenizer if isinstance(self.tokenizer, str) else getattr(self.tokenizer, "name", "?")

    def as_dict(self) -> dict[str, Any]:
        """The options as a plain dict (engine, embedder and tokenizer objects by name)."""
        out = {name: getattr(self, name) for name in self.names()}
        out["engine"], out["tokenizer"] = self.engine_name, self.tokenizer_name
        out["embedder"] = self.embedder_name
        out["fusion_weights"] = dict(self.fusion_weights) if self.fusion_weights is not None else None
        return out
