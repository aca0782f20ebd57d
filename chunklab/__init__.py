"""chunklab: chunk documents for RAG with exact offsets, and measure the result.

>>> import chunklab
>>> [c.text for c in chunklab.chunk("甲。乙。", "sentence", target=2)]
['甲。', '乙。']
"""
from .core import Chunk, Document, as_document, check_chunks
from .base import Strategy, chunk, get_strategy, list_strategies, register, strategy_names
from . import strategies as _strategies  # noqa: F401  (registers the built-in strategies)
from .strategies.router import route  # noqa: F401  (also registers the "auto" strategy)

from ._version import __version__

__all__ = [
    "Chunk", "Document", "Strategy", "as_document", "check_chunks", "chunk", "get_strategy",
    "list_strategies", "register", "route", "strategy_names", "__version__",
]
