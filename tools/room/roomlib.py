"""The training room's parts that the launcher (room.py), the hub's config and the tests share.

- accounts: one system account per trainee (``useradd``), passwords set with ``chpasswd``;
- homes: each trainee's own copy of the chapters, made once and never overwritten;
- limits: a memory and CPU cap per trainee with cgroups (v2, or v1's memory and cpu controllers),
  or none where the machine has no writable cgroup hierarchy (said at start);
- :class:`RoomSpawner`: JupyterHub's LocalProcessSpawner that prepares the home, starts the
  trainee's server inside the trainee's cgroup, gives it a private TMPDIR and the shared,
  read-only embedding cache.

Everything here runs as root inside the hub (or the launcher); nothing is imported by chunklab.
"""
from __future__ import annotations

import json
import os
import pwd
import re
import secrets
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: What a trainee's home holds: ``~/chunklab-book/chapters/*.md``, their own copy.
BOOK_DIR = "chunklab-book"
NAME_RE = re.compile(r"^[a-z][a-z0-9_-]{0,30}$")
CGROUP_ROOT = Path("/sys/fs/cgroup")
GROUP = "chunklab-room"


class RoomError(Exception):
    """A one-line error for the trainer (the launcher prints it and exits with status 2)."""


# --- accounts ---------------------------------------------------------------------------------

def read_names(path: Path) -> list[str]:
    """Trainee account names from a file: one per line, ``#`` comments and blank lines ignored."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise RoomError(f"--trainees {path}: cannot read it ({exc.strerror})") from None
    names = []
    for no, line in enumerate(lines, 1):
        name = line.split("#", 1)[0].strip()
        if not name:
            continue
        if not NAME_RE.match(name):
            raise RoomError(f"--trainees {path}, line {no}: {name!r} is not an account name "
                            "(lower-case letter first, then letters, digits, '-' or '_', at most 31)")
        names.append(name)
    if not names:
        raise RoomError(f"--trainees {path}: no names in it (one account name per line)")
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise RoomError(f"--trainees {path}: names listed twice: {', '.join(dup)}")
    return names


def account_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


def ensure_account(name: str, comment: str = "chunklab training room") -> bool:
    """Create the system account ``name`` with a private home (0700); True when it was created."""
    if account_exists(name):
        return False
    subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", "--comment", comment, name],
                   check=True, capture_output=True, text=True)
    os.chmod(pwd.getpwnam(name).pw_dir, 0o700)
    return True


def set_password(name: str, password: str) -> None:
    subprocess.run(["chpasswd"], input=f"{name}:{password}\n", check=True, capture_output=True, text=True)


def new_password() -> str:
    """A password a trainee can type: 12 characters without look-alikes."""
    alphabet = "abcdefghjkmnpqrstuvwxyz23456789"
    return "".join(secrets.choice(alphabet) for _ in range(12))


def remove_account(name: str) -> None:
    """Stop everything ``name`` runs, then remove the account and its home (the room test's cleanup).

    ``--force``: a process of the account that its parent has not reaped yet (a zombie, in a
    container whose init does not reap) would otherwise make ``userdel`` refuse.
    """
    if not account_exists(name):
        return
    home = pwd.getpwnam(name).pw_dir
    subprocess.run(["pkill", "-KILL", "-u", name], capture_output=True)
    result = subprocess.run(["userdel", "--force", "--remove", name], capture_output=True, text=True)
    if account_exists(name):
        raise RoomError(f"userdel {name} failed: {result.stderr.strip()}")
    shutil.rmtree(home, ignore_errors=True)


# --- the trainee's own copy of the book ---------------------------------------------------------

def build_font_cache(state: Path, python: str) -> Path:
    """Build matplotlib's font list once (as the launcher, into ``state/matplotlib``) and return it.

    Every trainee's first ``import matplotlib`` would otherwise scan the fonts again (seconds of
    CPU per trainee) and say "Matplotlib is building the font cache" on stderr in the first cell.
    """
    cache = state / "matplotlib"
    cache.mkdir(exist_ok=True)
    subprocess.run([python, "-c", "import matplotlib.font_manager"], check=True, capture_output=True,
                   env={**os.environ, "MPLCONFIGDIR": str(cache)})
    return cache


def prepare_home(name: str, root: Path = ROOT, font_cache: Path | None = None) -> Path:
    """Copy the chapters into ``~name/chunklab-book/chapters`` once; later starts keep the trainee's edits.

    Only missing files are copied, so a chapter added to the book after the trainee's first login
    appears, and nothing the trainee changed is overwritten. Returns the book folder.
    """
    user = pwd.getpwnam(name)
    book = Path(user.pw_dir) / BOOK_DIR
    dest = book / "chapters"
    home = Path(user.pw_dir)
    for d in (book, dest, home / ".cache", home / ".cache" / "tmp"):     # parents first, each the trainee's
        d.mkdir(exist_ok=True)
        os.chown(d, user.pw_uid, user.pw_gid)
    if font_cache is not None:                 # matplotlib's font list, built once by the launcher
        mpl = home / ".cache" / "matplotlib"
        mpl.mkdir(exist_ok=True)
        os.chown(mpl, user.pw_uid, user.pw_gid)
        for src in font_cache.glob("fontlist-*.json"):
            if not (mpl / src.name).exists():
                shutil.copyfile(src, mpl / src.name)
                os.chown(mpl / src.name, user.pw_uid, user.pw_gid)
    for src in sorted((root / "chapters").glob("*.md")):
        target = dest / src.name
        if not target.exists():
            shutil.copyfile(src, target)
            os.chown(target, user.pw_uid, user.pw_gid)
            os.chmod(target, 0o644)
    return book


# --- limits -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Limits:
    """Per-trainee caps: ``memory`` in bytes (0: none), ``cpus`` in cores (0: none)."""

    memory: int
    cpus: float

    def describe(self) -> str:
        mem = f"{self.memory / 2**30:.1f} GiB" if self.memory else "no memory cap"
        cpu = f"{self.cpus:g} CPU" if self.cpus else "no CPU cap"
        return f"{mem}, {cpu}"


def cgroup_mode() -> str:
    """``"v2"``, ``"v1"`` or ``""`` (no writable cgroup hierarchy: limits cannot be applied)."""
    if (CGROUP_ROOT / "cgroup.controllers").exists():
        ctrl = (CGROUP_ROOT / "cgroup.controllers").read_text().split()
        return "v2" if {"memory", "cpu"} <= set(ctrl) and os.access(CGROUP_ROOT, os.W_OK) else ""
    if all(os.access(CGROUP_ROOT / c, os.W_OK) for c in ("memory", "cpu")):
        return "v1"
    return ""


def _dirs(name: str, mode: str) -> list[Path]:
    if mode == "v2":
        return [CGROUP_ROOT / GROUP / name]
    return [CGROUP_ROOT / "memory" / GROUP / name, CGROUP_ROOT / "cpu" / GROUP / name]


def prepare_cgroup(name: str, limits: Limits, mode: str) -> list[Path]:
    """Create ``name``'s cgroup(s) under ``chunklab-room`` with the caps; the paths to join."""
    if not mode or not (limits.memory or limits.cpus):
        return []
    dirs = _dirs(name, mode)
    period = 100_000
    if mode == "v2":
        parent = CGROUP_ROOT / GROUP
        parent.mkdir(exist_ok=True)
        (CGROUP_ROOT / "cgroup.subtree_control").write_text("+memory +cpu")
        parent.joinpath("cgroup.subtree_control").write_text("+memory +cpu")
        dirs[0].mkdir(exist_ok=True)
        if limits.memory:
            (dirs[0] / "memory.max").write_text(str(limits.memory))
        if limits.cpus:
            (dirs[0] / "cpu.max").write_text(f"{int(limits.cpus * period)} {period}")
    else:
        mem, cpu = dirs
        for d in dirs:
            d.mkdir(parents=True, exist_ok=True)
        if limits.memory:
            (mem / "memory.limit_in_bytes").write_text(str(limits.memory))
        if limits.cpus:
            (cpu / "cpu.cfs_period_us").write_text(str(period))
            (cpu / "cpu.cfs_quota_us").write_text(str(int(limits.cpus * period)))
    return dirs


def join_cgroups(dirs: list[Path]) -> None:
    """Move the calling process into ``dirs`` (called in the child before it drops root)."""
    for d in dirs:
        (d / "cgroup.procs").write_text(str(os.getpid()))


def remove_cgroup(name: str, mode: str) -> None:
    for d in _dirs(name, mode) if mode else []:
        try:
            d.rmdir()
        except OSError:
            pass


# --- a Python every trainee can run -------------------------------------------------------------

def reachable(path: Path) -> bool:
    """Whether any account can reach ``path``: every folder above it is searchable by others."""
    path = Path(os.path.realpath(path))
    return all(d.stat().st_mode & 0o001 for d in path.parents)


def ensure_runtime(venv: Path, base: Path, root: Path = ROOT) -> dict:
    """How trainees run the book's venv: ``{"venv_bin": ..., "env": {...}, "copied": bool}``.

    When the venv's interpreter is reachable by every account (Debian's python3, or one under
    /opt), the trainees use the venv as it is. When it is not — pyenv's Python under /root, mode
    0700 — the room does not open /root: it copies the interpreter and its standard library
    (without site-packages and tests, about 80 MB) to ``.room/python`` in the repository, makes
    ``.room/venv`` on it, and has that venv read the book venv's packages (a ``.pth`` file that
    adds the venv's site-packages with :func:`site.addsitedir`). Jupyter's data and config folders
    (lab extensions, the settings of ``make lab``) are pointed at the book venv's.
    """
    python = venv / "bin" / "python"
    if reachable(python) and reachable(venv):
        return {"venv_bin": str(venv / "bin"), "env": {}, "copied": False}
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    runtime, room_venv = root / ".room" / "python", root / ".room" / "venv"
    stamp = runtime / ".copied-from"
    if not stamp.exists() or stamp.read_text() != f"{base}|{sys.version}":
        shutil.rmtree(runtime, ignore_errors=True)
        shutil.rmtree(room_venv, ignore_errors=True)
        (runtime / "bin").mkdir(parents=True)
        shutil.copy2(base / "bin" / version, runtime / "bin" / version)
        (runtime / "lib").mkdir()
        for lib in (base / "lib").glob("libpython*"):
            shutil.copy2(lib, runtime / "lib" / lib.name, follow_symlinks=False)
        shutil.copytree(base / "lib" / version, runtime / "lib" / version, symlinks=True,
                        ignore=shutil.ignore_patterns("site-packages", "test", "config-*", "idlelib", "tkinter"))
        (runtime / "lib" / version / "site-packages").mkdir()
        stamp.write_text(f"{base}|{sys.version}")
    env = {"LD_LIBRARY_PATH": str(runtime / "lib")}
    if not (room_venv / "bin" / "python").exists():
        subprocess.run([str(runtime / "bin" / version), "-m", "venv", "--without-pip", str(room_venv)],
                       check=True, capture_output=True, text=True, env={**os.environ, **env})
        site_packages = venv / "lib" / version / "site-packages"
        (room_venv / "lib" / version / "site-packages" / "chunklab-book.pth").write_text(
            f"import site; site.addsitedir({str(site_packages)!r})\n")
    for d in (root / ".room",):
        subprocess.run(["chmod", "-R", "a+rX", str(d)], check=True)
    share = venv / "share" / "jupyter"
    env.update({"JUPYTER_PATH": str(share), "JUPYTER_CONFIG_PATH": str(venv / "etc" / "jupyter"),
                "JUPYTERLAB_DIR": str(share / "lab")})
    return {"venv_bin": str(room_venv / "bin"), "env": env, "copied": True}


# --- the room's settings, written by the launcher, read by the hub's config -----------------------

def save_settings(state: Path, settings: dict) -> None:
    path = state / "room.json"
    path.write_text(json.dumps(settings, indent=2, ensure_ascii=False), encoding="utf-8")
    os.chmod(path, 0o600)


def load_settings(state: Path) -> dict:
    return json.loads((state / "room.json").read_text(encoding="utf-8"))


def make_spawner_class():
    """:class:`RoomSpawner`, built on JupyterHub's LocalProcessSpawner (imported here: the launcher
    and the tests' pure parts do not need JupyterHub)."""
    from jupyterhub.spawner import LocalProcessSpawner, set_user_setuid

    class RoomSpawner(LocalProcessSpawner):
        """A trainee's server: own copy of the chapters, own cgroup, own TMPDIR, shared read-only cache."""

        def _room(self) -> dict:
            return load_settings(Path(os.environ["CHUNKLAB_ROOM_STATE"]))

        async def start(self):
            room = self._room()
            prepare_home(self.user.name, Path(room["root"]), Path(room["font_cache"]))
            limits = Limits(room["limits"]["memory"], room["limits"]["cpus"])
            self._cgroups = prepare_cgroup(self.user.name, limits, room["limits"]["cgroup"])
            return await super().start()

        def make_preexec_fn(self, name):
            drop_root = set_user_setuid(name)
            dirs = list(getattr(self, "_cgroups", []))

            def preexec():
                join_cgroups(dirs)
                drop_root()
            return preexec

        def user_env(self, env):
            env = super().user_env(env)
            room = self._room()
            home = pwd.getpwnam(self.user.name).pw_dir
            env["TMPDIR"] = f"{home}/.cache/tmp"        # jieba's cache, matplotlib's temp files: private
            env["CHUNKLAB_CACHE"] = room["cache"]       # the build's embeddings, read-only for trainees
            env["PATH"] = f"{room['venv_bin']}:/usr/local/bin:/usr/bin:/bin"
            env.update(room.get("runtime_env", {}))
            env["MPLCONFIGDIR"] = f"{home}/.cache/matplotlib"
            return env

        async def stop(self, now=False):
            await super().stop(now=now)
            remove_cgroup(self.user.name, self._room()["limits"]["cgroup"])

    return RoomSpawner
