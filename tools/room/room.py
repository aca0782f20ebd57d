"""`make room`: start JupyterHub on this machine and serve the built book to a room of trainees.

    sudo make room ROOM_ARGS="--count 8"                    # accounts trainee01 ... trainee08
    sudo make room ROOM_ARGS="--trainees names.txt --port 8443 --ip 0.0.0.0 \\
                             --ssl-cert cert.pem --ssl-key key.pem"

What it does (README, "A training room"):

1. checks that the book was built here (``make book``: the executed chapters' embedding cache
   and PDFs are what every trainee reads) and that other accounts can read the repository;
2. creates one system account per trainee (and the trainer's, an admin of the hub) with a
   private home; new accounts get a generated password, printed once and kept in
   ``STATE/passwords.txt`` (root only); existing accounts keep theirs (``--reset-passwords``);
3. writes ``STATE/room.json`` and runs JupyterHub with ``tools/room/jupyterhub_config.py`` in the
   foreground (Ctrl-C stops the room; a restart finds users, passwords and every trainee's files
   as they were).

Each trainee's server runs as that trainee, on 127.0.0.1, in a cgroup with the stated memory
and CPU caps where the machine allows it; only the hub's proxy listens on ``--ip:--port``.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import roomlib  # noqa: E402
from roomlib import ROOT, Limits, RoomError  # noqa: E402

DEFAULT_STATE = Path("/var/lib/chunklab-room")
GiB = 2**30


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="make room ROOM_ARGS=...", description=__doc__.split("\n\n")[0])
    who = p.add_mutually_exclusive_group()
    who.add_argument("--trainees", type=Path, metavar="FILE",
                     help="account names, one per line (lower-case; '#' starts a comment)")
    who.add_argument("--count", type=int, default=None, metavar="N",
                     help="N generated accounts PREFIX01 ... (default 4 when --trainees is not given)")
    p.add_argument("--prefix", default="trainee", help="name prefix of generated accounts (default: trainee)")
    p.add_argument("--trainer", default="trainer", help="the trainer's account, an admin of the hub (default: trainer)")
    p.add_argument("--ip", default="127.0.0.1",
                   help="the one address the room listens on (default 127.0.0.1; 0.0.0.0 = every interface)")
    p.add_argument("--port", type=int, default=8100, help="its port (default 8100; PORT+1, PORT+2 on 127.0.0.1 too)")
    p.add_argument("--ssl-cert", type=Path, help="serve HTTPS with this certificate (PEM) ...")
    p.add_argument("--ssl-key", type=Path, help="... and this key")
    p.add_argument("--memory", type=float, default=3.0, metavar="GiB",
                   help="memory cap per trainee in GiB (default 3; 0 = none)")
    p.add_argument("--cpus", type=float, default=1.0, help="CPU cap per trainee in cores (default 1; 0 = none)")
    p.add_argument("--idle-timeout", type=int, default=3600, metavar="SECONDS",
                   help="stop a trainee's server idle this long (default 3600)")
    p.add_argument("--state", type=Path, default=DEFAULT_STATE,
                   help=f"where the hub keeps users, cookies and passwords (default {DEFAULT_STATE})")
    p.add_argument("--server-arg", action="append", default=[], metavar="ARG",
                   help="an extra argument for every trainee's server, e.g. --LabApp.expose_app_in_browser=True "
                        "(the room test drives JupyterLab through it); repeatable")
    p.add_argument("--reset-passwords", action="store_true", help="new passwords for existing accounts too")
    p.add_argument("--check", action="store_true", help="create accounts and settings, print them, do not start")
    return p.parse_args(argv)


def check_machine(args) -> None:
    if os.geteuid() != 0:
        raise RoomError("make room needs root (sudo make room ...): it creates one system account per "
                        "trainee and starts each trainee's server as that account")
    if not (ROOT / "_build/html/.built").exists():
        raise RoomError(f"{ROOT}: the book is not built here; run `make book` first (the room serves its "
                        "executed results: embeddings, PDFs)")
    if not (ROOT / "tools/room/node_modules/.bin/configurable-http-proxy").exists():
        raise RoomError("tools/room/node_modules: configurable-http-proxy is missing; run `make room` "
                        "(it installs it), not room.py directly")
    if not roomlib.reachable(ROOT / "chapters"):
        blocked = next(d for d in ROOT.parents if not d.stat().st_mode & 0o001)
        raise RoomError(f"{blocked}: other accounts cannot enter it (mode {blocked.stat().st_mode & 0o777:o}), so "
                        f"trainees could not read the book in {ROOT}; clone it under /opt or /srv")
    if not 1 <= args.port <= 65533:
        raise RoomError(f"--port {args.port}: must be 1-65533 (the room also uses PORT+1 and PORT+2)")
    if (args.ssl_cert is None) != (args.ssl_key is None):
        raise RoomError("--ssl-cert and --ssl-key go together (HTTPS needs both)")
    for f in (args.ssl_cert, args.ssl_key):
        if f is not None and not f.is_file():
            raise RoomError(f"{f}: no such file")
    if args.memory < 0 or args.cpus < 0:
        raise RoomError("--memory and --cpus must be >= 0 (0 = no cap)")
    if args.count is not None and not 1 <= args.count <= 200:
        raise RoomError(f"--count {args.count}: must be 1-200")


def trainee_names(args) -> list[str]:
    if args.trainees is not None:
        return roomlib.read_names(args.trainees)
    if not roomlib.NAME_RE.match(args.prefix + "01"):
        raise RoomError(f"--prefix {args.prefix!r}: account names start with a lower-case letter "
                        "(letters, digits, '-', '_')")
    return [f"{args.prefix}{i:02d}" for i in range(1, (args.count or 4) + 1)]


def accounts(names: list[str], trainer: str, state: Path, reset: bool) -> dict[str, str]:
    """Create missing accounts; return the passwords set in this run (name -> password)."""
    if trainer in names:
        raise RoomError(f"--trainer {trainer!r} is also listed as a trainee")
    new = {}
    for name in [trainer, *names]:
        created = roomlib.ensure_account(name)
        if created or reset:
            new[name] = roomlib.new_password()
            roomlib.set_password(name, new[name])
    if new:
        book = state / "passwords.txt"
        old = dict(line.split("\t", 1) for line in book.read_text().splitlines() if "\t" in line) \
            if book.exists() else {}
        old.update(new)
        book.write_text("".join(f"{n}\t{pw}\n" for n, pw in old.items()))
        os.chmod(book, 0o600)
    return new


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        check_machine(args)
        names = trainee_names(args)
        args.state.mkdir(parents=True, exist_ok=True)
        os.chmod(args.state, 0o700)
        new = accounts(names, args.trainer, args.state, args.reset_passwords)
    except RoomError as exc:
        print(f"make room: {exc}", file=sys.stderr)
        return 2
    mode = roomlib.cgroup_mode()
    font_cache = roomlib.build_font_cache(args.state, sys.executable)
    runtime = roomlib.ensure_runtime(Path(sys.prefix), Path(sys.base_prefix))
    limits = Limits(int(args.memory * GiB), args.cpus)
    old = roomlib.load_settings(args.state) if (args.state / "room.json").exists() else {}
    settings = {
        "root": str(ROOT), "venv_bin": runtime["venv_bin"], "runtime_env": runtime["env"], "cache": str(ROOT / "_build/embeddings"),
        "trainees": names, "trainer": args.trainer, "ip": args.ip, "port": args.port,
        "ssl_cert": str(args.ssl_cert.resolve()) if args.ssl_cert else None,
        "ssl_key": str(args.ssl_key.resolve()) if args.ssl_key else None,
        "limits": {"memory": limits.memory if mode else 0, "cpus": limits.cpus if mode else 0, "cgroup": mode},
        "idle_timeout": args.idle_timeout, "server_args": args.server_arg,
        "font_cache": str(font_cache), "api_tokens": old.get("api_tokens", {}),
    }
    roomlib.save_settings(args.state, settings)
    scheme = "https" if args.ssl_cert else "http"
    host = args.ip if args.ip not in ("0.0.0.0", "") else "<this machine's address>"
    print(f"chunklab room: {len(names)} trainees + trainer {args.trainer!r}; state in {args.state}")
    print(f"  URL:      {scheme}://{host}:{args.port}/")
    print(f"  limits:   {limits.describe()} per trainee" if mode else
          "  limits:   none (this machine has no writable cgroup hierarchy; trainees share memory and CPU)")
    print(f"  idle:     servers idle for {args.idle_timeout} s are stopped")
    if runtime["copied"]:
        print(f"  python:   {sys.base_prefix} is not reachable by other accounts; trainees run a copy of it "
              f"in {ROOT / '.room'} with the book's packages")
    if not args.ssl_cert:
        print("  warning:  plain HTTP: passwords and notebooks cross the network unencrypted; give "
              "--ssl-cert/--ssl-key, or keep --ip 127.0.0.1 behind your own TLS proxy", file=sys.stderr)
    if new:
        print("  passwords set now (also in passwords.txt, root only):")
        for n, pw in new.items():
            print(f"    {n:<20}{pw}")
    else:
        print(f"  passwords: unchanged (see {args.state / 'passwords.txt'}; --reset-passwords for new ones)")
    if args.check:
        return 0
    hub = Path(sys.executable).parent / "jupyterhub"
    if not hub.exists():
        print(f"make room: {hub} is missing; run `make room`, which installs requirements-room.txt", file=sys.stderr)
        return 2
    os.chdir(args.state)
    env = dict(os.environ, CHUNKLAB_ROOM_STATE=str(args.state))
    sys.stdout.flush()
    os.execve(str(hub), [str(hub), "-f", str(ROOT / "tools/room/jupyterhub_config.py")], env)
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
