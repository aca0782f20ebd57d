"""Adapters for other libraries' splitters: place their strings back into a document as chunks.

A splitter from another library returns strings, not offsets. :func:`chunks_from_strings` finds
each string in the document (a sequential search that never jumps backwards) and
:func:`split_with` runs a splitter over documents and maps its output the same way, so the
chunks can be measured like chunklab's own.
"""
from __future__ import annotations

from typing import Any, Sequence

from .core import Chunk
from .params import Param

__all__ = ["chunks_from_strings", "split_with"]


def _candidates_of(text: str, cand: str, prev_s: int, prev_e: int,
                   overlap: int | None) -> tuple[tuple[int, int] | None, tuple[int, int] | None]:
    """The two ways ``cand`` can follow ``[prev_s, prev_e)``: adjacent, and overlapping (or later)."""
    adjacent = None
    p = prev_e
    while True:
        if text.startswith(cand, p):
            adjacent = (p, p + len(cand))
            break
        if p >= len(text) or not text[p].isspace():
            break
        p += 1
    start_at = prev_s + 1 if overlap is None else max(prev_s + 1, prev_e - overlap)
    skip = adjacent[0] if adjacent is not None else -1
    pos = text.find(cand, start_at)
    while pos != -1 and (pos + len(cand) <= prev_e or pos == skip):
        pos = text.find(cand, pos + 1)
    return adjacent, (None if pos == -1 else (pos, pos + len(cand)))


def _candidates(text: str, piece: str, prev_s: int, prev_e: int,
                overlap: int | None) -> tuple[tuple[int, int] | None, tuple[int, int] | None]:
    """Like :func:`_candidates_of`; the piece verbatim first, stripped of whitespace only when
    the verbatim piece does not continue the sequence (neither adjacent nor overlapping)."""
    adj, oth = _candidates_of(text, piece, prev_s, prev_e, overlap)
    stripped = piece.strip()
    if adj is not None or (oth is not None and oth[0] < prev_e) or not stripped or stripped == piece:
        return adj, oth
    adj2, oth2 = _candidates_of(text, stripped, prev_s, prev_e, overlap)
    if oth is None or (oth2 is not None and oth2[0] < oth[0]):
        oth = oth2
    return adj2, oth


def _place_all(text: str, pieces: Sequence[str], overlap: int | None,
               budget: int) -> list[tuple[int, int] | None]:
    """Place every piece (the rules are in :func:`chunks_from_strings`); None where one cannot be.

    A depth-first search: each piece's places are tried in order of preference, and a piece that
    fits nowhere sends the search back to the latest piece with an untried place. When that fails
    too (or after ``budget`` steps in all), the greedy placements are restored, the piece is given
    up (None) and the search goes on; the pieces before it are then fixed.
    """
    n = len(pieces)
    result: list[tuple[int, int] | None] = [None] * n
    alts_of: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    taken = [0] * n
    kind_of = [-1] * n  # 0: only an adjacent place existed, 1: only an overlapping one, -1: else
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
        alts: list[tuple[int, int]] = []
        kind = -1
        if not placed:
            for cand in (piece, piece.strip()):
                pos = text.find(cand) if cand else -1
                if pos != -1:
                    alts.append((pos, pos + len(cand)))
                    break
        else:
            ps, pe = result[placed[-1]]  # type: ignore[misc]
            adj, oth = _candidates(text, piece, ps, pe, overlap)
            overlapping = oth is not None and oth[0] < pe
            if adj is not None and overlapping:  # ambiguous: go with what this splitter did so far
                alts = [oth, adj] if votes[1] > votes[0] else [adj, oth]  # type: ignore[list-item]
            else:
                alts = [x for x in (adj, oth) if x is not None]
                kind = 0 if adj is not None else (1 if overlapping else -1)
        if alts:
            alts_of[i], taken[i], kind_of[i], result[i] = alts, 0, kind, alts[0]
            if kind >= 0:
                votes[kind] += 1
            placed.append(i)
            i += 1
            continue
        snapshot = (list(result), list(placed), list(taken), list(votes))
        revised = False
        while steps < budget and len(placed) > floor:
            steps += 1
            j = placed[-1]
            if taken[j] + 1 < len(alts_of[j]):
                taken[j] += 1
                result[j] = alts_of[j][taken[j]]
                for x in range(j + 1, n):
                    result[x] = None
                i, revised = j + 1, True
                break
            placed.pop()
            result[j] = None
            if kind_of[j] >= 0:
                votes[kind_of[j]] -= 1
        if not revised:
            result, placed, taken, votes = (list(x) for x in snapshot)  # type: ignore[assignment]
            floor = len(placed)
            i += 1  # piece i stays None
    return result


def chunks_from_strings(document: Any, pieces: Sequence[str], strategy: str = "external",
                        on_missing: str = "raise", overlap: int | None = None) -> list[Any]:
    """Place another splitter's strings back into ``document`` as :class:`~chunklab.Chunk` s.

    The search is sequential and never jumps backwards. Piece ``i`` may go

    * right where piece ``i-1`` ended, or after whitespace there (the splitter went on where it
      left off, as a splitter without overlap always does), or
    * at its first occurrence after piece ``i-1``'s start that does not lie wholly inside piece
      ``i-1`` (a lossless splitter never emits a chunk inside its predecessor). When the
      splitter's largest overlap in characters is known (``overlap``; :func:`split_with` reads
      LangChain's ``chunk_overlap``), this search starts no earlier than ``overlap`` characters
      before piece ``i-1``'s end.

    When only one of these exists it is taken, and it tells how this splitter behaves (adjacent
    or overlapping). When both exist, text repeats back to back (after ``甲乙。甲乙。`` at 0 in
    ``甲乙。`` x 4, is the next ``甲乙。甲乙。`` at 3 or at 6?) and the behaviour seen so far in
    the document decides (adjacent on a tie). If a later piece then fits nowhere, the search goes
    back and tries the other place. A piece not found verbatim is retried with surrounding
    whitespace stripped (splitters often strip it); an empty piece is skipped. A piece that fits
    nowhere (e.g. one holding U+FFFD from a token splitter cutting a character) raises
    ``ValueError`` naming it, or is dropped with ``on_missing="skip"`` (``meta["missing"]`` on the
    next chunk counts drops).

    >>> from chunklab.core import Document
    >>> d = Document("d", "ab ab ab")
    >>> [(c.start, c.end) for c in chunks_from_strings(d, ["ab ab", "ab"])]
    [(0, 5), (6, 8)]
    >>> [(c.start, c.end) for c in chunks_from_strings(d, ["ab ab", "ab ab"])]
    [(0, 5), (3, 8)]
    """
    if on_missing not in ("raise", "skip"):
        raise ValueError(f"on_missing must be 'raise' or 'skip', got {on_missing!r}")
    overlap = Param("int", None, low=0, none_ok=True).validate("overlap", overlap)
    text = document.text
    pieces = list(pieces)
    places = _place_all(text, pieces, overlap, budget=50 * len(pieces) + 1000)
    out: list[Any] = []
    missing = last_end = 0
    for i, (piece, found) in enumerate(zip(pieces, places)):
        if not piece:
            continue  # an empty piece holds no text: nothing to place, nothing lost
        if found is None:
            if on_missing == "raise":
                preview = piece[:30].replace("\n", "⏎")
                raise ValueError(f"piece {i} ({preview!r}) was not found in document {document.id!r} "
                                 f"after position {last_end}")
            missing += 1
            continue
        s, e = found
        meta = {"strategy": strategy}
        if missing:
            meta["missing"] = missing
            missing = 0
        out.append(Chunk(document.id, len(out), s, e, text[s:e], meta))
        last_end = e
    return out


def _piece_text(item: Any) -> str:
    if isinstance(item, str):
        return item
    text = getattr(item, "text", None)
    if isinstance(text, str):
        return text
    raise TypeError(f"a splitter returned {type(item).__name__}, expected str or an object with .text")


def _char_overlap_hint(splitter: Any) -> int | None:
    """The splitter's overlap in characters, when it states one and measures it in characters.

    LangChain keeps ``_chunk_overlap`` measured with ``_length_function``; only when that is
    ``len`` is it a number of characters (with a token counter, 3 tokens may be 9 characters and
    a hint in the wrong unit would start the search too late).
    """
    overlap = getattr(splitter, "_chunk_overlap", None)
    if not isinstance(overlap, int) or isinstance(overlap, bool) or overlap < 0:
        return None
    return overlap if getattr(splitter, "_length_function", len) is len else None


def split_with(splitter: Any, documents: Sequence[Any], strategy: str | None = None,
               on_missing: str = "raise") -> list[Any]:
    """Chunk ``documents`` with another library's splitter and map its strings back to offsets.

    ``splitter`` is an object with ``split_text`` (LangChain), an object with ``chunk`` returning
    objects with ``.text`` (chonkie's chunkers), or any callable ``str -> list[str]`` (semchunk's
    ``chunkerify`` result, a plain function). The library's own offsets, where it reports any, are
    not used: every splitter goes through the same sequential search
    (:func:`chunks_from_strings`), so one mapping is tested for all of them. LangChain's
    ``chunk_overlap`` is passed on as the search's overlap hint when it is measured in characters.

    >>> from chunklab.core import Document
    >>> [(c.start, c.end) for c in split_with(lambda t: t.split("。"), [Document("d", "甲。乙。")])]
    [(0, 1), (2, 3)]
    """
    if hasattr(splitter, "split_text"):
        fn = splitter.split_text
    elif callable(getattr(splitter, "chunk", None)):
        fn = splitter.chunk
    elif callable(splitter):
        fn = splitter
    else:
        raise TypeError(f"splitter must be callable or have split_text() or chunk(), got {type(splitter).__name__}")
    name = strategy or type(splitter).__name__
    overlap = _char_overlap_hint(splitter)
    out: list[Any] = []
    for d in documents:
        pieces = [_piece_text(x) for x in fn(d.text)]
        out.extend(chunks_from_strings(d, pieces, strategy=name, on_missing=on_missing, overlap=overlap))
    return out
