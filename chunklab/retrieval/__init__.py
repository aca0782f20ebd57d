"""Retrieval engines for evaluating chunkings: tokenisers, BM25 (reference and fast), dense, fusion.

Chunking quality exists only as retrieval quality, so the evaluator needs a retriever that is
*exactly* the one the articles used (BM25 on Chinese character bigrams, as in ``rank_bm25``) and
fast enough to run a method x parameter matrix in seconds.

* ``tokenizers``: the tokenisers (``bigram``, ``unigram_bigram``, ``words``, ``jieba``) and the
  token positions they give.
* ``layout``: :class:`Layout`, the corpus on one global coordinate line (shared by the index and
  the metrics).
* ``bm25``: :class:`Ranking`, :func:`top_k` and the BM25 engines (:class:`BM25Reference` wraps
  ``rank_bm25``; :class:`BM25Fast` gives the same scores with sparse matrices and the compiled ranker).
* ``corpus_index``: :class:`CorpusIndex`, a corpus tokenised once, from which any chunking's BM25
  index is built from character ranges.
* ``dense``: :class:`DenseIndex` (cosine top-k) and reciprocal rank fusion (:func:`rrf_scores`,
  :func:`rrf`, :func:`fuse`).
* ``embed``: the embedder protocol, :class:`LSAEmbedder` (counting n-grams with ``ngrams``), the
  sentence-transformers adapter and :class:`CachedEmbedder` (in memory).
* ``embedders``: embedders by name, neural ones included (:func:`get_embedder`: ``lsa``,
  ``e5-small``, ``use-multilingual``, or any ``encode`` object or callable), all offline.
* ``embed_cache``: :class:`EmbeddingCache`, vectors on disk keyed by (model, mode, text).
* ``factory``: :func:`make_retriever`, a retriever over a chunking by name (``bm25``,
  ``reference``, ``dense``, ``hybrid``).
"""
from __future__ import annotations

from .bm25 import BM25Fast, BM25Reference, Ranking, top_k
from .corpus_index import CorpusIndex
from .dense import DenseIndex, fuse, rrf, rrf_scores
from .embed import (
    CachedEmbedder, Embedder, LSAEmbedder, SentenceTransformerEmbedder, check_embeddings, normalize_rows,
)
from .embed_cache import EmbeddingCache
from .embedders import (
    DEFAULT_EMBEDDER, EMBEDDERS, CallableEmbedder, E5Embedder, EmbedStats, EncodeEmbedder, NeuralEmbedder,
    USEEmbedder, get_embedder,
)
from .factory import RETRIEVERS, Retriever, make_retriever
from .layout import Layout
from .tokenizers import (
    TOKENIZERS, BigramTokenizer, JiebaTokenizer, Tokenizer, UnigramBigramTokenizer, WordsTokenizer, get_tokenizer,
    tokenize,
)

__all__ = [
    "TOKENIZERS", "Tokenizer", "BigramTokenizer", "UnigramBigramTokenizer", "WordsTokenizer", "JiebaTokenizer", "get_tokenizer", "tokenize",
    "Layout", "Ranking", "BM25Reference", "BM25Fast", "CorpusIndex", "DenseIndex", "rrf", "rrf_scores", "fuse", "top_k",
    "RETRIEVERS", "Retriever", "make_retriever",
    "Embedder", "LSAEmbedder", "SentenceTransformerEmbedder", "CachedEmbedder", "normalize_rows", "check_embeddings",
    "EMBEDDERS", "DEFAULT_EMBEDDER", "get_embedder", "NeuralEmbedder", "E5Embedder", "USEEmbedder", "EncodeEmbedder",
    "CallableEmbedder", "EmbedStats", "EmbeddingCache",
]
