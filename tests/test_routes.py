"""Routes made visible, and the routes fixed for users' files (issue 28, item 7).

The book's corpora must route exactly as they did before the fixes: the chapters' numbers depend
on it. ``tests/data/routes_book.json`` holds ``[content type, strategy used]`` of every document
of every corpus the chapters load, recorded before the router changed.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from chunklab.datasets import load_corpus
from chunklab.strategies.router import route

BOOK_ROUTES = json.loads((Path(__file__).parent / "data" / "routes_book.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(BOOK_ROUTES))
def test_book_corpora_route_as_before(name):
    corpus = load_corpus(name)
    now = {}
    for d in corpus.documents:
        r = route(d)
        now[d.id] = [r.doc_type, r.strategy.name]
    assert now == BOOK_ROUTES[name]
