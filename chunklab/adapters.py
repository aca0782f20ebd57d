"""Adapters for other libraries' splitters: place their strings back into a document as chunks.

A splitter from another library returns strings, sometimes with offsets. :func:`split_with` runs a splitter over
documents and takes each piece's place from the library when it reports one and the text there is the piece;
otherwise :func:`chunks_from_strings` finds the string in the document (a sequential search that never jumps
backwards). Pieces a byte-level token splitter damaged (a character cut in two, shown as U+FFFD) are placed too,
and counted. The chunks can then be measured like chunklab's own. :func:`splitter_from_spec` builds a splitter
from a ``"module:attr"`` string (the command line's ``--splitter``).
"""
from __future__ import annotations

import contextlib
import difflib
import functools
import importlib
import importlib.util
import inspect
import sys
from typing import Any, Callable, NamedTuple, Sequence

from .core import Chunk
from .params import Param, foreign_items, read_bounded

__all__ = ["PlacedChunks", "chunks_from_strings", "split_with", "splitter_from_spec"]

#: What a byte-level token splitter shows for the bytes of a character it cut in two.
REPLACEMENT = "\ufffd"


class PlacedChunks(list):
    """The chunks (a plain ``list`` of :class:`~chunklab.Chunk`) and how their pieces were placed.

    ``pieces``: non-empty pieces the splitter returned; ``reported``: placed where the library said
    (its offset checked against the text); ``searched``: placed by the sequential search;
    ``missing``: dropped with ``on_missing="skip"``; ``damaged``: the list of chunks placed although
    a byte-level splitter cut a character at an edge (``meta["damaged"] = True``).
    ``reported + searched == len(chunks)`` and ``len(chunks) + missing == pieces``.
    """

    pieces = reported = searched = missing = 0

    @property
    def damaged(self) -> list[Chunk]:
        """The chunks with ``meta["damaged"]`` (a character cut at an edge), in order."""
        return [c for c in self if c.meta.get("damaged")]

    def counts(self) -> dict[str, int]:
        """The five counts as a dict (for a report line; ``damaged``: how many)."""
        return {"pieces": self.pieces, "reported": self.reported, "searched": self.searched,
                "damaged": len(self.damaged), "missing": self.missing}


class _Span(NamedTuple):
    start: int
    end: int
    lead: bool = False   # the first character was cut by the splitter (shown as U+FFFD)
    trail: bool = False  # the last one was


class _Pattern(NamedTuple):
    """A piece to look for: ``core``, after one cut character when ``lead`` (the number of U+FFFD
    that stood for it) and before one when ``trail``."""
    core: str
    lead: int = 0
    trail: int = 0

    @property
    def size(self) -> int:
        return (1 if self.lead else 0) + len(self.core) + (1 if self.trail else 0)

    def span(self, start: int) -> _Span:
        return _Span(start, start + self.size, bool(self.lead), bool(self.trail))


def _can_be_cut(ch: str, run: int) -> bool:
    """Can ``ch`` be the character a byte-level splitter cut, shown as ``run`` U+FFFD? Its UTF-8
    form must have more bytes than the run: the other side of the cut keeps at least one."""
    return len(ch.encode("utf-8", "surrogatepass")) > run


def _match_at(text: str, pat: _Pattern, s: int) -> bool:
    if s < 0 or (pat.lead and (s >= len(text) or not _can_be_cut(text[s], pat.lead))):
        return False
    p = s + (1 if pat.lead else 0)
    if not text.startswith(pat.core, p):
        return False
    p += len(pat.core)
    return not pat.trail or (p < len(text) and _can_be_cut(text[p], pat.trail))


def _find(text: str, pat: _Pattern, start: int) -> int:
    """The first place ``>= start`` where ``pat`` matches, or -1."""
    start = max(start, 0)
    if not pat.lead and not pat.trail:
        return text.find(pat.core, start)
    if not pat.core:  # a piece of U+FFFD only: any character that can be cut
        return next((s for s in range(start, len(text)) if _match_at(text, pat, s)), -1)
    lead = 1 if pat.lead else 0
    pos = text.find(pat.core, start + lead)
    while pos != -1 and not _match_at(text, pat, pos - lead):
        pos = text.find(pat.core, pos + 1)
    return -1 if pos == -1 else pos - lead


def _damaged(piece: str) -> _Pattern | None:
    """The piece with U+FFFD at its edges read as one cut character each, if it has any there."""
    if not piece or (piece[0] != REPLACEMENT and piece[-1] != REPLACEMENT):
        return None
    core = piece.lstrip(REPLACEMENT)
    inner = core.rstrip(REPLACEMENT)
    return _Pattern(inner, len(piece) - len(core), len(core) - len(inner))


def _patterns(piece: str) -> list[_Pattern]:
    """How ``piece`` may stand in the text, in order of preference: verbatim, stripped of
    surrounding whitespace, with U+FFFD at its edges standing for cut characters."""
    out = [_Pattern(piece)]
    stripped = piece.strip()
    if stripped and stripped != piece:
        out.append(_Pattern(stripped))
    dmg = _damaged(piece) or _damaged(stripped)
    if dmg is not None:
        out.append(dmg)
    return out


def _follows(x: _Span, prev: _Span) -> bool:
    """Can ``x`` come after ``prev`` in a sequential splitter's output? It starts after ``prev``'s
    start and ends after its end; or, for a byte-level splitter whose windows move by less than a
    character, it starts inside the character ``prev`` starts with, or ends inside (or at the end
    of) the one ``prev`` cut at its end."""
    return ((x.start > prev.start or (x.start == prev.start and x.lead))
            and (x.end > prev.end or (x.end == prev.end and prev.trail)))


def _candidates_of(text: str, pat: _Pattern, prev: _Span,
                   overlap: int | None) -> tuple[_Span | None, _Span | None]:
    """The two ways ``pat`` can follow ``prev``: adjacent, and overlapping (or later)."""
    adjacent = None
    if pat.lead and prev.trail and _match_at(text, pat, prev.end - 1):
        adjacent = prev.end - 1  # the character cut between the two pieces belongs to both
    else:
        p = prev.end
        while True:
            if _match_at(text, pat, p):
                adjacent = p
                break
            if p >= len(text) or not text[p].isspace():
                break
            p += 1
    lead = 1 if pat.lead else 0
    start_at = prev.start + (0 if pat.lead else 1)
    if overlap is not None:
        start_at = max(start_at, prev.end - overlap - lead)
    pos = _find(text, pat, start_at)
    while pos != -1 and (pos == adjacent or not _follows(pat.span(pos), prev)):
        pos = _find(text, pat, pos + 1)
    return (None if adjacent is None else pat.span(adjacent)), (None if pos == -1 else pat.span(pos))


def _candidates(text: str, pats: Sequence[_Pattern], prev: _Span,
                overlap: int | None) -> tuple[_Span | None, _Span | None]:
    """Like :func:`_candidates_of`: the first pattern first; the next ones only while none found
    continues the sequence (neither adjacent nor overlapping), keeping the earliest later place."""
    adj: _Span | None = None
    oth: _Span | None = None
    for pat in pats:
        a, o = _candidates_of(text, pat, prev, overlap)
        adj = a
        if o is not None and (oth is None or o.start < oth.start):
            oth = o
        if adj is not None or (oth is not None and oth.start < prev.end):
            break
    return adj, oth


def _reported_span(text: str, piece: str, start: Any) -> _Span | None:
    """The library's place for ``piece`` when the text there is the piece (damaged edges allowed)."""
    if not isinstance(start, int) or isinstance(start, bool) or start < 0:
        return None
    pat = next((p for p in (_Pattern(piece), _damaged(piece)) if p is not None and _match_at(text, p, start)), None)
    return None if pat is None else pat.span(start)


def _search(text: str, piece: str, prev: _Span | None, overlap: int | None,
            votes: Sequence[int]) -> tuple[list[_Span], int]:
    """The places the search finds for ``piece`` after ``prev``, best first, and what they tell of
    the splitter (0: only an adjacent place existed, 1: only an overlapping one, -1: neither)."""
    if prev is None:
        for pat in _patterns(piece):
            pos = _find(text, pat, 0)
            if pos != -1:
                return [pat.span(pos)], -1
        return [], -1
    adj, oth = _candidates(text, _patterns(piece), prev, overlap)
    overlapping = oth is not None and oth.start < prev.end
    if adj is not None and overlapping:  # ambiguous: go with what this splitter did so far
        return ([oth, adj] if votes[1] > votes[0] else [adj, oth]), -1  # type: ignore[list-item]
    return [x for x in (adj, oth) if x is not None], (0 if adj is not None else (1 if overlapping else -1))


def _tail(text: str, piece: str, prev: _Span) -> _Span | None:
    """``piece`` as the end of ``prev`` (LlamaIndex's ``TokenTextSplitter`` emits such pieces)."""
    pat = next((p for p in _patterns(piece) if prev.end - p.size > prev.start
                and _match_at(text, p, prev.end - p.size)), None)
    return None if pat is None else pat.span(prev.end - pat.size)


def _place_all(text: str, pieces: Sequence[str], overlap: int | None, budget: int,
               reported: Sequence[_Span | None] | None = None) -> tuple[list[_Span | None], list[bool]]:
    """Place every piece (the rules are in :func:`chunks_from_strings`); None where one cannot be.

    A depth-first search: each piece's places are tried in order of preference, and a piece that
    fits nowhere sends the search back to the latest piece with an untried place. When that fails
    too (or after ``budget`` steps in all), the greedy placements are restored, the piece goes at
    the end of its predecessor if it is a tail of it (:func:`_tail`) or is given up (None), and the
    search goes on; the pieces before it are then fixed. A piece with a checked ``reported`` place
    that keeps the order (it starts after the previous piece's start and ends after, or at, its end)
    goes there first, unsearched; the search's places for it are found only if the
    search comes back to it (a library that finds its pieces with ``str.find`` may report a later
    repeat of a piece, after which the next pieces fit nowhere). Returns the places and, for each,
    whether it is the reported one.
    """
    n = len(pieces)
    result: list[_Span | None] = [None] * n
    from_report = [False] * n
    alts_of: list[list[_Span]] = [[] for _ in range(n)]
    unsearched = [False] * n  # alts_of[i] holds the reported place only, so far
    taken = [0] * n
    kind_of = [-1] * n
    votes = [0, 0]
    placed: list[int] = []  # indices of placed pieces, in order
    floor = 0  # the search never revises placed[:floor]
    i = steps = 0
    while i < n:
        steps += 1
        piece = pieces[i]
        if not piece:
            i += 1  # an empty piece: nothing to place
            continue
        prev = result[placed[-1]] if placed else None
        rep = reported[i] if reported is not None else None
        if rep is not None and (prev is None or _follows(rep, prev)
                                or (rep.start > prev.start and rep.end == prev.end)):
            alts, kind, unsearched[i] = [rep], -1, True
        else:
            (alts, kind), unsearched[i] = _search(text, piece, prev, overlap, votes), False
        if alts:
            alts_of[i], taken[i], kind_of[i], result[i] = alts, 0, kind, alts[0]
            from_report[i] = unsearched[i]
            if kind >= 0:
                votes[kind] += 1
            placed.append(i)
            i += 1
            continue
        snapshot = (list(result), list(placed), list(taken), list(votes), list(from_report))
        revised = False
        while steps < budget and len(placed) > floor:
            steps += 1
            j = placed[-1]
            if unsearched[j]:
                unsearched[j] = False
                prev_j = result[placed[-2]] if len(placed) > 1 else None
                more, _kind = _search(text, pieces[j], prev_j, overlap, votes)
                alts_of[j] = alts_of[j] + [x for x in more if x not in alts_of[j]]
            if taken[j] + 1 < len(alts_of[j]):
                taken[j] += 1
                result[j] = alts_of[j][taken[j]]
                from_report[j] = False
                for x in range(j + 1, n):
                    result[x] = None
                i, revised = j + 1, True
                break
            placed.pop()
            result[j] = None
            if kind_of[j] >= 0:
                votes[kind_of[j]] -= 1
        if not revised:
            result, placed, taken, votes, from_report = (list(x) for x in snapshot)  # type: ignore[assignment]
            tail = _tail(text, piece, result[placed[-1]]) if placed else None  # type: ignore[arg-type]
            if tail is not None:  # the last resort: a piece inside its predecessor, at its end
                alts_of[i], taken[i], kind_of[i], result[i], unsearched[i] = [tail], 0, -1, tail, False
                placed.append(i)
            floor = len(placed)
            i += 1  # piece i stays None unless it is such a tail
    return result, from_report


def chunks_from_strings(document: Any, pieces: Sequence[str], strategy: str = "external",
                        on_missing: str = "raise", overlap: int | None = None,
                        starts: Sequence[int | None] | None = None) -> PlacedChunks:
    """Place another splitter's strings back into ``document`` as :class:`~chunklab.Chunk` s.

    ``starts`` (optional, one per piece, ``None`` where unknown) are the places the library
    reported. One is used when the text there is the piece and it keeps the order below (it starts
    after the previous piece's start and ends after its end); the rest are searched. The search is
    sequential and never jumps backwards. Piece ``i`` may go

    * right where piece ``i-1`` ended, or after whitespace there (the splitter went on where it
      left off, as a splitter without overlap always does), or
    * at its first occurrence after piece ``i-1``'s start that does not lie wholly inside piece
      ``i-1`` (a lossless splitter never emits a chunk inside its predecessor). When the
      splitter's largest overlap in characters is known (``overlap``; :func:`split_with` reads
      LangChain's ``chunk_overlap`` for its character splitters), this search starts no earlier
      than ``overlap`` characters before piece ``i-1``'s end.

    When only one of these exists it is taken, and it tells how this splitter behaves (adjacent
    or overlapping). When both exist, text repeats back to back (after ``甲乙。甲乙。`` at 0 in
    ``甲乙。`` x 4, is the next ``甲乙。甲乙。`` at 3 or at 6?) and the behaviour seen so far in
    the document decides (adjacent on a tie). If a later piece then fits nowhere, the search goes
    back and tries the other place. A piece not found verbatim is retried with surrounding
    whitespace stripped (splitters often strip it), then, when it starts or ends with U+FFFD, with
    each such run standing for one character a byte-level token splitter cut in two (the chunk
    covers the whole character, ``meta["damaged"] = True``; a piece ending in a cut character and
    the next one starting with it may share it). An empty piece is skipped. A piece that fits
    nowhere else may be the end of piece ``i-1``. A piece that fits nowhere raises ``ValueError``
    naming it, or is dropped with ``on_missing="skip"`` (``meta["missing"]`` on the next chunk
    counts drops).

    Returns a :class:`PlacedChunks`: a list of chunks with the counts of how they were placed.

    >>> from chunklab.core import Document
    >>> d = Document("d", "ab ab ab")
    >>> [(c.start, c.end) for c in chunks_from_strings(d, ["ab ab", "ab"])]
    [(0, 5), (6, 8)]
    >>> [(c.start, c.end) for c in chunks_from_strings(d, ["ab ab", "ab ab"])]
    [(0, 5), (3, 8)]
    >>> cut = chunks_from_strings(Document("d", "劳动法。劳动者"), ["劳动法。劳\\ufffd", "\\ufffd者"])
    >>> [(c.text, c.meta.get("damaged", False)) for c in cut], len(cut.damaged)
    ([('劳动法。劳动', True), ('动者', True)], 2)
    """
    if on_missing not in ("raise", "skip"):
        raise ValueError(f"on_missing must be 'raise' or 'skip', got {on_missing!r}")
    overlap = Param("int", None, low=0, none_ok=True).validate("overlap", overlap)
    text = document.text
    pieces = list(pieces)
    reported: list[_Span | None] | None = None
    if starts is not None:
        starts = list(starts)
        if len(starts) != len(pieces):
            raise ValueError(f"starts has {len(starts)} entries for {len(pieces)} pieces")
        reported = [_reported_span(text, p, s) if p else None for p, s in zip(pieces, starts)]
    places, from_report = _place_all(text, pieces, overlap, budget=50 * len(pieces) + 1000, reported=reported)
    out = PlacedChunks()
    missing = last_end = 0
    for i, (piece, found) in enumerate(zip(pieces, places)):
        if not piece:
            continue  # an empty piece holds no text: nothing to place, nothing lost
        out.pieces += 1
        if found is None:
            if on_missing == "raise":
                preview = piece[:30].replace("\n", "⏎")
                raise ValueError(f"piece {i} ({preview!r}) was not found in document {document.id!r} "
                                 f"after position {last_end}")
            missing += 1
            out.missing += 1
            continue
        s, e = found.start, found.end
        meta: dict[str, Any] = {"strategy": strategy}
        if found.lead or found.trail:
            meta["damaged"] = True
        if missing:
            meta["missing"] = missing
            missing = 0
        out.reported, out.searched = out.reported + from_report[i], out.searched + (not from_report[i])
        out.append(Chunk(document.id, len(out), s, e, text[s:e], meta))
        last_end = e
    return out


# -- reading a splitter ---------------------------------------------------------------------------

def _int_or_none(x: Any) -> int | None:
    return x if isinstance(x, int) and not isinstance(x, bool) else None


def _piece_of(item: Any) -> tuple[str, int | None]:
    """A splitter's output item as (text, the start the library reports or None).

    A str; a ``(start, text)`` pair (semantic-text-splitter's ``chunk_indices``); or an object with
    ``.text`` or ``.page_content`` and, maybe, ``.start_index`` (Chonkie), ``.start_char_idx``
    (LlamaIndex) or ``.metadata["start_index"]`` (LangChain's ``add_start_index``).
    """
    if isinstance(item, str):
        return item, None
    if isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], str):
        return item[1], _int_or_none(item[0])
    text = next((t for t in (getattr(item, "text", None), getattr(item, "page_content", None))
                 if isinstance(t, str)), None)
    if text is None:
        raise TypeError(f"a splitter returned {type(item).__name__}, expected str or an object with .text")
    for name in ("start_index", "start_char_idx"):
        start = _int_or_none(getattr(item, name, None))
        if start is not None:
            return text, start
    metadata = getattr(item, "metadata", None)
    if isinstance(metadata, dict):
        return text, _int_or_none(metadata.get("start_index"))
    return text, None


def _llama_reader(splitter: Any) -> Callable[[str], list[Any]] | None:
    """LlamaIndex node parsers: nodes of a one-document run, which carry ``start_char_idx``."""
    if not callable(getattr(splitter, "get_nodes_from_documents", None)):
        return None
    try:
        from llama_index.core.schema import Document as LlamaDocument  # optional dependency
    except ImportError:
        return None
    return lambda text: splitter.get_nodes_from_documents([LlamaDocument(text=text)])


def _semchunk_reader(splitter: Any) -> Callable[[str], list[Any]] | None:
    """semchunk's chunker (``chunkerify``): called with ``offsets=True`` it reports (start, end)."""
    if not (type(splitter).__module__ or "").startswith("semchunk") or not callable(splitter):
        return None
    return lambda text: [(s, c) for c, (s, _e) in zip(*splitter(text, offsets=True))]


def _reader(splitter: Any) -> tuple[str, Callable[[str], Any]] | None:
    """How to run ``splitter`` on a text: (the method used, text -> output items); None if unknown.

    Methods reporting offsets come first: LlamaIndex's nodes, LangChain's ``create_documents``
    with ``add_start_index``, semantic-text-splitter's ``chunk_indices``, semchunk's
    ``offsets=True``; then ``split_text``, ``chunk`` (Chonkie: chunks carry offsets), ``chunks``
    and a plain call.
    """
    llama = _llama_reader(splitter)
    if llama is not None:
        return "get_nodes_from_documents", llama
    if (callable(getattr(splitter, "split_text", None)) and callable(getattr(splitter, "create_documents", None))
            and getattr(splitter, "_add_start_index", False) is True):
        return "create_documents", lambda text: splitter.create_documents([text])
    if callable(getattr(splitter, "chunk_indices", None)):
        return "chunk_indices", splitter.chunk_indices
    sem = _semchunk_reader(splitter)
    if sem is not None:
        return "offsets", sem
    for name in ("split_text", "chunk", "chunks"):
        fn = getattr(splitter, name, None)
        if callable(fn):
            return name, fn
    if callable(splitter):
        return "call", splitter
    return None


def _char_overlap_hint(splitter: Any) -> int | None:
    """The splitter's overlap in characters, when it states one and measures it in characters.

    Only LangChain's character splitters (``CharacterTextSplitter``,
    ``RecursiveCharacterTextSplitter`` and their subclasses) measure ``_chunk_overlap`` with
    ``_length_function``, a number of characters when that is ``len``. Its ``TokenTextSplitter``
    keeps ``len`` there but counts its overlap in tokens, which may be many more characters (and
    a byte-level token may be less than one); a hint in the wrong unit would start the search too
    late, so there is none.
    """
    overlap = getattr(splitter, "_chunk_overlap", None)
    if not isinstance(overlap, int) or isinstance(overlap, bool) or overlap < 0:
        return None
    if getattr(splitter, "_length_function", None) is not len:
        return None
    lc = sys.modules.get("langchain_text_splitters")  # loaded if the splitter is one of LangChain's
    classes = tuple(getattr(lc, n, None) for n in ("CharacterTextSplitter", "RecursiveCharacterTextSplitter"))
    return overlap if any(classes) and isinstance(splitter, tuple(c for c in classes if c)) else None


def _name_of(splitter: Any) -> str:
    if isinstance(splitter, functools.partial):
        return _name_of(splitter.func)
    name = getattr(splitter, "__name__", None)
    return name if inspect.isroutine(splitter) and isinstance(name, str) and name != "<lambda>" \
        else type(splitter).__name__


def split_with(splitter: Any, documents: Sequence[Any], strategy: str | None = None,
               on_missing: str = "raise", use_offsets: bool = True) -> PlacedChunks:
    """Chunk ``documents`` with another library's splitter and place its pieces in them.

    ``splitter`` is an object with ``split_text`` (LangChain, LlamaIndex), ``chunks`` (semantic-text-splitter),
    ``chunk`` (Chonkie's chunkers) or a callable ``str -> list[str]`` (semchunk's ``chunkerify`` result, a plain
    function); its output may also be objects with ``.text`` or ``.page_content``. Anything but an iterable of pieces
    (a ``str``, a ``dict``) is a TypeError, an ``exit()`` in it a RuntimeError; what it prints goes to stderr.

    Where the library reports offsets they are used, each checked against the text first (``text[start:start +
    len(piece)] == piece``): LangChain's ``metadata["start_index"]`` when the splitter was made with
    ``add_start_index=True`` (via ``create_documents``), Chonkie's ``start_index``, semantic-text-splitter's
    ``chunk_indices``, LlamaIndex's ``start_char_idx`` (via ``get_nodes_from_documents``) and semchunk's
    ``offsets=True``. Pieces without one, or whose reported place is wrong (LangChain and LlamaIndex find their
    pieces with ``str.find`` and misplace repeated text), go through the sequential search of
    :func:`chunks_from_strings`; ``use_offsets=False`` searches every piece. LangChain's ``chunk_overlap`` is the
    search's overlap hint for its character splitters only (a ``TokenTextSplitter`` counts it in tokens).

    A byte-level token splitter (LangChain's ``TokenTextSplitter``, a Chonkie ``TokenChunker`` with a tiktoken
    encoding) cuts multi-byte characters (all Chinese ones) at chunk edges and shows the bytes as U+FFFD. Such
    pieces are placed anyway (the chunk holds the whole character and has ``meta["damaged"] = True``). The result is
    a :class:`PlacedChunks`, a list of chunks to hand to :func:`~chunklab.evaluate` as it is, whose ``reported``,
    ``searched`` and ``missing`` count the pieces of all documents, and ``damaged`` lists the damaged chunks.

    A splitter's output is read lazily; too many pieces (2 x len + 1000, 100 x len + 100,000 chars): ValueError.

    >>> from chunklab.core import Document
    >>> chunks = split_with(lambda t: t.split("。"), [Document("d", "甲。乙。")])
    >>> [(c.start, c.end) for c in chunks], chunks.searched, chunks.damaged
    ([(0, 1), (2, 3)], 2, [])
    """
    read = _reader(splitter)
    if read is None:
        raise TypeError(f"splitter must have split_text(), chunks() or chunk(), or be callable; "
                        f"got {type(splitter).__name__}")
    fn = read[1]
    name = strategy or _name_of(splitter)
    overlap = _char_overlap_hint(splitter)
    out = PlacedChunks()
    for d in documents:
        n = len(d.text)
        most, room = 2 * n + 1000, 100 * n + 100_000
        output = foreign_items(lambda: fn(d.text), f"splitter {name!r}", f" for document {d.id!r}",
                               "strings (or of objects with .text)")
        with contextlib.redirect_stdout(sys.stderr):  # its prints must not mix with the result (--json)
            items = read_bounded(map(_piece_of, output), most, room, lambda it: len(it[0]), lambda many: (
                f"splitter {name!r} returned more than {f'{most} pieces' if many else f'{room} characters of pieces'} "
                f"for document {d.id!r} of {n} characters (at most {'2' if many else '100'} x its length + "
                f"{'1000' if many else '100000'}); is it yielding forever?"))
        pieces = [p for p, _s in items]
        starts = [s for _p, s in items] if use_offsets and any(s is not None for _p, s in items) else None
        part = chunks_from_strings(d, pieces, strategy=name, on_missing=on_missing, overlap=overlap, starts=starts)
        out.extend(part)
        for k in ("pieces", "reported", "searched", "missing"):  # damaged: read off the chunks
            setattr(out, k, getattr(out, k) + getattr(part, k))
    return out


# -- a splitter from "module:attr" ----------------------------------------------------------------

def _pip_name(module: str) -> str:
    top = module.split(".")[0]
    return {"llama_index": "llama-index-core", "sklearn": "scikit-learn"}.get(top, top.replace("_", "-"))


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _close_names(name: str, obj: Any) -> str:
    by_lower = {n.lower(): n for n in reversed(dir(obj)) if not n.startswith("_")}
    close = difflib.get_close_matches(name.lower(), list(by_lower), n=3, cutoff=0.6)
    return f"; did you mean {by_lower[close[0]]!r}?" if close else ""


def _is_factory(fn: Any, args: dict) -> bool:
    """Do ``args`` fill every required parameter of ``fn`` (which has at least one)? Then ``fn``
    makes a splitter (``semchunk:chunkerify``) rather than being one (``textwrap:wrap``)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    required = [p.name for p in params if p.default is inspect.Parameter.empty
                and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)]
    return bool(required) and all(r in args for r in required)


def splitter_from_spec(spec: str, args: dict | None = None) -> object:
    """The splitter named by ``"module:attr"`` (``--splitter`` on the command line), made with ``args``.

    The module is imported and the attribute read (``attr`` may be dotted: ``Class.factory``). A class, or a
    classmethod factory of one (``RecursiveCharacterTextSplitter.from_tiktoken_encoder``), is called with ``**args``.
    A function is the splitter: ``args`` are bound with :func:`functools.partial` (``textwrap:wrap`` with
    ``{"width": 80}``); but when they fill every required parameter the function makes the splitter and is called
    with them (``semchunk:chunkerify``). The result must have ``split_text``, ``chunks`` or ``chunk``, or be callable.

    Errors are one line, starting with the spec: ``ValueError`` for a spec that is not
    ``module:attr``; ``ModuleNotFoundError`` for a module that is not installed (with the
    ``pip install`` to run); ``AttributeError`` for a missing attribute (with the closest name);
    ``TypeError`` for arguments the class or function does not take (Python's message), and for
    an object that is not a splitter; ``ValueError`` for argument values a class rejects.

    >>> wrap = splitter_from_spec("textwrap:wrap", {"width": 12})
    >>> wrap.func.__name__, wrap.keywords
    ('wrap', {'width': 12})
    >>> from chunklab.core import Document
    >>> [c.text for c in split_with(wrap, [Document("d", "the quick brown fox jumps over")])]
    ['the quick', 'brown fox', 'jumps over']
    >>> splitter_from_spec("textwrap:wrapp")
    Traceback (most recent call last):
    AttributeError: splitter 'textwrap:wrapp': module 'textwrap' has no attribute 'wrapp'; did you mean 'wrap'?
    >>> splitter_from_spec("builtins:str.split", {"sepp": "。"})
    Traceback (most recent call last):
    TypeError: splitter 'builtins:str.split': bad arguments {'sepp': '。'}: got an unexpected keyword argument 'sepp'
    """
    mod_name, _, attr_path = (x.strip() for x in spec.partition(":")) if isinstance(spec, str) else ("", "", "")
    if not mod_name or not attr_path or ":" in attr_path:
        raise ValueError(f"splitter spec must be 'module:attr' (e.g. 'chonkie:TokenChunker'), got {spec!r}")
    where, args = f"splitter {spec!r}", {} if args is None else args
    if not isinstance(args, dict) or not all(isinstance(k, str) for k in args):
        raise TypeError(f"{where}: arguments must be a dict of keyword arguments (a JSON object), "
                        f"got {type(args).__name__}")
    try:
        module = importlib.import_module(mod_name)
    except ModuleNotFoundError as exc:
        missing = exc.name or mod_name
        parent = missing.rpartition(".")[0]
        hint = (f"{parent!r} is installed" if parent and importlib.util.find_spec(parent.split(".")[0])
                else f"pip install {_pip_name(missing)}")
        what = (f"no module named {missing!r}" if missing == mod_name or mod_name.startswith(missing + ".")
                else f"cannot import {mod_name!r}: it needs {missing!r}")
        raise ModuleNotFoundError(f"{where}: {what} ({hint})", name=missing) from None
    except ImportError as exc:
        raise ImportError(f"{where}: cannot import {mod_name!r}: {_one_line(exc)}") from None
    obj: Any = module
    done: list[str] = []
    for part in attr_path.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            owner = f"module {mod_name!r}" if not done else repr(f"{mod_name}:{'.'.join(done)}")
            raise AttributeError(f"{where}: {owner} has no attribute {part!r}{_close_names(part, obj)}") from None
        done.append(part)

    def bad_args(exc: Exception) -> Exception:
        kind = TypeError if isinstance(exc, TypeError) else ValueError  # pydantic's errors are ValueErrors
        return kind(f"{where}: bad arguments {args!r}: {_one_line(exc)}")

    made: Any
    factory = inspect.isclass(obj) or (inspect.ismethod(obj) and inspect.isclass(obj.__self__))  # classmethod too
    if factory or (args and (inspect.isroutine(obj) or isinstance(obj, functools.partial)) and _is_factory(obj, args)):
        try:
            made = obj(**args)
        except (TypeError, ValueError) as exc:
            raise bad_args(exc) from None
    elif not callable(obj) or (not inspect.isroutine(obj) and not isinstance(obj, functools.partial)
                               and (_reader(obj) or ("call",))[0] != "call"):
        if args:  # an object made already (a splitter with methods, or not a splitter at all)
            raise TypeError(f"{where} is a {type(obj).__name__} object, not a class or function: "
                            f"it takes no arguments")
        made = obj
    elif args:
        try:
            inspect.signature(obj).bind_partial(**args)
        except TypeError as exc:
            raise bad_args(exc) from None
        except ValueError:
            pass  # no signature to check (some builtins): the call will tell
        made = functools.partial(obj, **args)
    else:
        made = obj
    if _reader(made) is None:
        raise TypeError(f"{where}: {type(made).__name__} is not a splitter (it has no split_text(), chunks() "
                        f"or chunk() and is not callable)")
    return made
