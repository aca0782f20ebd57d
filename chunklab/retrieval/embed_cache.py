"""An embedding cache on disk: vectors keyed by (model, mode, hash of the text), shared by processes.

Re-chunking changes some chunks and keeps most: with the cache, only texts never embedded by the
same model in the same mode are embedded again. :class:`~chunklab.retrieval.embedders.NeuralEmbedder`
uses it by default.

Where: ``$CHUNKLAB_CACHE`` if set, else ``_build/embeddings/`` at the repository root (``_build/``
is in ``.gitignore``: never committed). One folder per model (its name, made safe, plus a hash;
the full name is in the folder's ``MODEL`` file), one sub-folder per mode, and in it *segments*:
``.npy`` files of records ``(key, tokens, vector)`` — ``key`` the 16-byte BLAKE2b digest of the
text's UTF-8 bytes, ``tokens`` the text's length in the model's tokens (-1: not counted), and the
float32 vector exactly as the model returned it. A segment's name ends with a checksum of its bytes
(BLAKE2b, 8 bytes): a segment whose bytes no longer match it (rewritten in place after it was
written), or that holds a vector that is not finite, is not used — it is deleted, its vectors are
computed again, and an :class:`EmbeddingCacheWarning` says so once. A segment an older chunklab
wrote without a checksum gets one when it is first read (trusted on first use; its vectors are
still checked for being finite).

Safe with concurrent processes: a segment is written under a temporary name and renamed into
place (``os.replace`` is atomic), so a reader sees a whole segment or none; two processes that
embed the same text both write it, and the duplicate is harmless. When a folder holds more than
``max_segments`` segments they are merged into one (under a lock file; a reader that loses a
segment to a merge reloads the folder). A segment that cannot be read is skipped.

Size: bounded by ``max_bytes`` (default 1 GiB, or ``$CHUNKLAB_CACHE_MAX_BYTES``); past it, the
oldest segments of the whole cache are deleted until it is under 80 % of the bound. Only the
cache's own files are ever deleted: segments (``.npy`` files named as the cache names them) in
(model, mode) folders marked as its own by a :data:`MARKER` file, which :meth:`EmbeddingCache.put`
writes (a folder of an older chunklab, whose ``MODEL`` file names the model its name was made from,
counts as its own too). Anything else under ``$CHUNKLAB_CACHE`` is left alone, whatever its name. For scale: a
384-dimension model (e5-small) takes 1.56 kB per text, so the ~62,000 sentence windows of every
law in ``load_corpus("laws")`` take about 100 MB. Delete the folder to empty the cache.

>>> import tempfile
>>> cache = EmbeddingCache(tempfile.mkdtemp())
>>> cache.put("toy", "query", ["甲", "乙"], np.eye(2, dtype=np.float32), tokens=[3, 4])
>>> hits = cache.get("toy", "query", ["乙", "丙"])
>>> sorted(hits), hits[0][0].tolist(), hits[0][1]
([0], [0.0, 1.0], 4)
"""
from __future__ import annotations

import hashlib
import os
import warnings
import re
import stat
import time
import uuid
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..params import Param

__all__ = ["EmbeddingCache", "EmbeddingCacheWarning", "default_cache_dir", "text_key", "DEFAULT_MAX_BYTES",
           "MARKER"]

#: The default bound on the cache's size in bytes (``$CHUNKLAB_CACHE_MAX_BYTES`` overrides it).
DEFAULT_MAX_BYTES = 1 << 30
_LOCK_STALE_SECONDS = 600
#: The file that marks a (model, mode) folder as the cache's own: only there does it delete files.
MARKER = ".chunklab-embedding-cache"
_MARKER_TEXT = (b"chunklab's embedding cache: the segments in this folder (NNN-PID-TAG-CHECKSUM.npy) are its own;\n"
                b"it deletes the oldest of them when the cache grows past its bound.\n")
#: A segment's name: time (ns), process id, a random or ``merged`` tag, and the checksum of its bytes
#: (which segments written before checksums lack).
_SEGMENT = re.compile(r"(\d{20}-\d+-(?:[0-9a-f]{8}|merged))(?:-([0-9a-f]{16}))?\.npy")


class EmbeddingCacheWarning(UserWarning):
    """Cached vectors that could not be trusted (changed after they were written, or not finite): computed again."""


def _checksum(path: Path) -> str:
    """The checksum a segment's name carries: BLAKE2b (8 bytes, hex) of the file's bytes."""
    h = hashlib.blake2b(digest_size=8)
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


#: A file being written (:func:`_atomic_write`, :func:`_atomic_save`), renamed into place when whole.
_TMP = re.compile(r"\.tmp-[0-9a-f]{32}(?:\.npy)?")


def _is_segment(name: str) -> bool:
    return _SEGMENT.fullmatch(name) is not None


def _own(folder: Path) -> bool:
    """Whether ``folder`` is a (model, mode) folder of the cache: marked, or made by an older chunklab."""
    try:
        if (folder / MARKER).is_file():
            return True
        label = folder.parent / "MODEL"
        if not label.is_file() or label.stat().st_size > 4096:
            return False
        model = label.read_bytes().decode("utf-8", "surrogatepass")
    except (OSError, UnicodeDecodeError):
        return False
    return model.endswith("\n") and _slug(model[:-1]) == folder.parent.name


def default_cache_dir() -> Path:
    """``$CHUNKLAB_CACHE`` if set, else ``_build/embeddings`` at the repository root."""
    env = os.environ.get("CHUNKLAB_CACHE")
    if env:
        return Path(env).expanduser()
    return Path(__file__).resolve().parents[2] / "_build" / "embeddings"


def text_key(text: str) -> bytes:
    """The 16-byte key of a text: BLAKE2b of its UTF-8 bytes (lone surrogates kept as they are)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _slug(model: str) -> str:
    safe = re.sub(r"[^0-9A-Za-z._-]+", "_", model).strip("._")[:48] or "model"
    return f"{safe}-{hashlib.sha1(model.encode('utf-8', 'surrogatepass')).hexdigest()[:10]}"


def _record_dtype(dims: int) -> np.dtype:
    return np.dtype([("key", "u1", (16,)), ("tokens", "<i4"), ("vec", "<f4", (dims,))])


class _Folder:
    """The segments of one (model, mode) folder, indexed by key; reloaded when the folder changes.

    ``report(kind, path, vectors)`` is told of each segment that is not used: ``"changed"`` (its
    bytes do not match its checksum) or ``"not finite"`` (a NaN or infinite vector).
    """

    def __init__(self, path: Path, report: Any = None) -> None:
        self.path = path
        self.report = report
        self.segments: dict[str, np.ndarray] = {}      # file name -> records (memory-mapped)
        self.index: dict[bytes, tuple[str, int]] = {}   # key -> (file name, row)

    def _checked_name(self, name: str) -> str | None:
        """``name``, or its new name once an unchecked (older) segment is given its checksum; None
        when the segment does not match its checksum or is gone."""
        m = _SEGMENT.fullmatch(name)
        path = self.path / name
        try:
            digest = _checksum(path)
        except OSError:
            return None
        if m.group(2) is not None:
            return name if digest == m.group(2) else None
        named = f"{m.group(1)}-{digest}.npy"
        try:
            os.rename(path, self.path / named)
        except FileNotFoundError:  # another process has just renamed it: found on the next refresh
            return None
        except OSError:            # a read-only cache: read as it is
            return name
        return named

    def _drop(self, name: str, kind: str, vectors: int) -> None:
        (self.path / name).unlink(missing_ok=True)
        if self.report is not None:
            self.report(kind, self.path / name, vectors)

    def refresh(self) -> None:
        try:
            names = {n for n in os.listdir(self.path) if _is_segment(n)}
        except OSError:   # not there yet (or not a folder): nothing cached
            names = set()
        if set(self.segments) - names:      # a merge removed segments: start over
            self.segments, self.index = {}, {}
        for name in sorted(names - set(self.segments)):
            try:
                recs = np.load(self.path / name, mmap_mode="r", allow_pickle=False)
                if recs.dtype.names != ("key", "tokens", "vec"):
                    continue
            except (OSError, ValueError, EOFError):   # half-written by a crashed process, or foreign
                continue
            checked = self._checked_name(name)
            if checked is None:
                if (self.path / name).exists():
                    try:
                        self._drop(name, "changed", len(recs))
                    except OSError:
                        pass
                continue
            if checked != name:
                name = checked
                if name in self.segments:
                    continue
            if not np.isfinite(recs["vec"]).all():
                try:
                    self._drop(name, "not finite", len(recs))
                except OSError:
                    pass
                continue
            self.segments[name] = recs
            keys = np.ascontiguousarray(recs["key"]).tobytes()
            for row in range(len(recs)):
                self.index[keys[16 * row:16 * row + 16]] = (name, row)

    def lookup(self, key: bytes) -> tuple[np.ndarray, int] | None:
        hit = self.index.get(key)
        if hit is None:
            return None
        rec = self.segments[hit[0]][hit[1]]
        return np.array(rec["vec"], dtype=np.float32), int(rec["tokens"])


def _env_max_bytes() -> int:
    """``$CHUNKLAB_CACHE_MAX_BYTES`` (unset or empty: :data:`DEFAULT_MAX_BYTES`); anything but a whole
    number >= 1 is a ValueError naming the variable."""
    env = os.environ.get("CHUNKLAB_CACHE_MAX_BYTES", "").strip()
    if not env:
        return DEFAULT_MAX_BYTES
    n = int(env) if env.isascii() and env.isdigit() else 0
    if n < 1:
        raise ValueError(f"$CHUNKLAB_CACHE_MAX_BYTES must be a whole number of bytes >= 1 (e.g. 2000000000 "
                         f"for 2 GB; unset: 1 GiB), got {env!r}")
    return n


class EmbeddingCache:
    """Vectors on disk under ``root`` (default :func:`default_cache_dir`), keyed by (model, mode, text).

    :meth:`get` returns the cached ``(vector, tokens)`` of the texts it has, by position;
    :meth:`put` stores new ones (one segment per call). Writes that fail (a read-only disk, a full
    one) do not raise: the cache turns read-only and :attr:`error` says why.
    """

    def __init__(self, root: str | os.PathLike | None = None, max_bytes: int | None = None,
                 max_segments: int = 64) -> None:
        self.root = Path(root).expanduser() if root is not None else default_cache_dir()
        if max_bytes is None:
            max_bytes = _env_max_bytes()
        self.max_bytes = Param("int", DEFAULT_MAX_BYTES, low=1).validate("max_bytes", max_bytes)
        self.max_segments = Param("int", 64, low=2).validate("max_segments", max_segments)
        self.error: str | None = None
        self._folders: dict[tuple[str, str], _Folder] = {}
        self._warned: set[str] = set()

    def _distrust(self, kind: str, path: Path, vectors: int) -> None:
        """A segment not used (see :class:`_Folder`): an :class:`EmbeddingCacheWarning`, once per kind."""
        if kind in self._warned:
            return
        self._warned.add(kind)
        why = ("its bytes do not match the checksum it was written with (changed since)" if kind == "changed"
               else "it holds NaN or infinite vectors")
        warnings.warn(f"embedding cache {self.root}: segment {path.parent.parent.name}/{path.parent.name}/"
                      f"{path.name} is not used, {why}; it is deleted and its {vectors} vectors are "
                      f"computed again (said once)", EmbeddingCacheWarning, stacklevel=4)

    def __repr__(self) -> str:
        return f"EmbeddingCache({str(self.root)!r}, max_bytes={self.max_bytes})"

    def __reduce__(self):  # pickled by location: the memory maps stay behind
        return (EmbeddingCache, (str(self.root), self.max_bytes, self.max_segments))

    def folder(self, model: str, mode: str) -> Path:
        """Where the vectors of ``model`` in ``mode`` live."""
        return self.root / _slug(model) / re.sub(r"[^0-9A-Za-z_-]+", "_", mode)

    def _folder(self, model: str, mode: str) -> _Folder:
        f = self._folders.get((model, mode))
        if f is None:
            f = self._folders[(model, mode)] = _Folder(self.folder(model, mode), self._distrust)
            f.refresh()
        return f

    # -- reading ------------------------------------------------------------------------
    def get(self, model: str, mode: str, texts: Sequence[str]) -> dict[int, tuple[np.ndarray, int]]:
        """``{position: (vector, tokens)}`` for the texts of ``texts`` that are cached."""
        f = self._folder(model, mode)
        keys = [text_key(t) for t in texts]
        out = {}
        for refreshed in (False, True):
            for i, k in enumerate(keys):
                if i not in out:
                    hit = f.lookup(k)
                    if hit is not None:
                        out[i] = hit
            if len(out) == len(keys) or refreshed:
                break
            f.refresh()  # another process may have added segments since
        return out

    # -- writing ------------------------------------------------------------------------
    def put(self, model: str, mode: str, texts: Sequence[str], vectors: np.ndarray,
            tokens: Sequence[int] | None = None) -> None:
        """Store ``vectors[i]`` for ``texts[i]`` (and its token count) as one new segment."""
        vectors = np.asarray(vectors, dtype=np.float32)
        if self.error is not None or not len(texts):
            return
        if not np.isfinite(vectors).all():
            raise ValueError("vectors must be finite to be cached (NaN or infinite values given)")
        recs = np.zeros(len(texts), dtype=_record_dtype(vectors.shape[1]))
        recs["key"] = np.frombuffer(b"".join(text_key(t) for t in texts), dtype=np.uint8).reshape(-1, 16)
        recs["tokens"] = -1 if tokens is None else np.asarray(tokens, dtype=np.int64).clip(-1, 2**31 - 1)
        recs["vec"] = vectors
        f = self._folder(model, mode)
        try:
            f.path.mkdir(parents=True, exist_ok=True)
            label = f.path.parent / "MODEL"
            if not label.exists():
                _atomic_write(label, (model + "\n").encode("utf-8", "surrogatepass"))
            if not (f.path / MARKER).exists():
                _atomic_write(f.path / MARKER, _MARKER_TEXT)
            _atomic_save(f.path, f"{time.time_ns():020d}-{os.getpid()}-{uuid.uuid4().hex[:8]}", recs)
        except OSError as exc:
            self.error = f"embedding cache at {self.root} is read-only from now on: {type(exc).__name__}: {exc}"
            warnings.warn(f"embedding cache {self.root}: cannot write to it ({type(exc).__name__}: "
                          f"{exc.strerror or exc}); vectors are computed but not kept, so every run embeds them "
                          f"again (said once)", EmbeddingCacheWarning, stacklevel=3)
            return
        f.refresh()
        if len(f.segments) > self.max_segments:
            self._merge(f)
        self._bound()

    def _merge(self, f: _Folder) -> None:
        """Merge a folder's segments into one (one process at a time; the others skip)."""
        lock = f.path / ".merge.lock"
        try:
            if lock.exists() and time.time() - lock.stat().st_mtime > _LOCK_STALE_SECONDS:
                lock.unlink(missing_ok=True)
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except OSError:
            return
        try:
            os.close(fd)
            names = sorted(f.segments)
            parts = [f.segments[n] for n in names]
            dims = {p.dtype["vec"].shape for p in parts}
            if len(dims) != 1:
                return
            merged = np.concatenate([np.asarray(p) for p in parts])
            _, first = np.unique(merged["key"], axis=0, return_index=True)
            merged = merged[np.sort(first)]
            _atomic_save(f.path, f"{time.time_ns():020d}-{os.getpid()}-merged", merged)
            for n in names:
                (f.path / n).unlink(missing_ok=True)
            for mtime, _, stale in _files(f.path, ".tmp-*"):   # left by a process that crashed
                if _TMP.fullmatch(stale.name) and time.time() - mtime > _LOCK_STALE_SECONDS:
                    stale.unlink(missing_ok=True)
        except OSError:
            pass  # the segments stay as they are: a later put merges them
        finally:
            lock.unlink(missing_ok=True)
            f.refresh()

    def _bound(self) -> None:
        """Delete the oldest segments of the whole cache while it is larger than ``max_bytes``.

        Only segments in the cache's own folders (:func:`_own`) count and are deleted.
        """
        files = _segments(self.root)
        total = sum(size for _, size, _ in files)
        if total <= self.max_bytes:
            return
        for _, size, path in sorted(files):
            path.unlink(missing_ok=True)
            total -= size
            if total <= 0.8 * self.max_bytes:
                break
        for f in self._folders.values():
            f.refresh()

    def size_bytes(self) -> int:
        """The bytes the segments take on disk."""
        return sum(size for _, size, _ in _segments(self.root))

    def __len__(self) -> int:
        """Cached vectors over the (model, mode) folders this object has read."""
        return sum(len(f.index) for f in self._folders.values())


def _files(root: Path, pattern: str) -> list[tuple[float, int, Path]]:
    """``(mtime, size, path)`` of the files matching ``pattern``; a file another process removes meanwhile is skipped."""
    out = []
    for p in root.glob(pattern):
        try:
            st = p.stat()
        except OSError:
            continue
        out.append((st.st_mtime, st.st_size, p))
    return out


def _segments(root: Path) -> list[tuple[float, int, Path]]:
    """``(mtime, size, path)`` of the segments in the cache's own (model, mode) folders under ``root``."""
    out = []
    for folder in root.glob("*/*"):
        if not folder.is_dir() or not _own(folder):
            continue
        try:
            names = [n for n in os.listdir(folder) if _is_segment(n)]
        except OSError:
            continue
        for n in names:
            p = folder / n
            try:
                st = p.lstat()
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                out.append((st.st_mtime, st.st_size, p))
    return out


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.parent / f".tmp-{uuid.uuid4().hex}"
    with open(tmp, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)


def _atomic_save(folder: Path, stem: str, recs: np.ndarray) -> Path:
    """Save ``recs`` as ``folder/<stem>-<checksum>.npy`` (written aside, then renamed into place)."""
    tmp = folder / f".tmp-{uuid.uuid4().hex}.npy"
    try:
        with open(tmp, "wb") as fh:
            np.save(fh, recs, allow_pickle=False)
        path = folder / f"{stem}-{_checksum(tmp)}.npy"
        os.replace(tmp, path)
        return path
    finally:
        if tmp.exists():
            tmp.unlink(missing_ok=True)
