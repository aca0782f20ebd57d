"""Running a grid's configs on Dask distributed: a cluster somewhere, or one started on this machine.

:func:`run_on_dask` is what :func:`~chunklab.evaluation.matrix.run_matrix` calls with
``scheduler=``; it knows nothing of grids. It calls ``fn(*shared, item, *per_task)`` on Dask
workers, once per item:

- ``shared`` (the corpus and the questions) is sent to every worker once, with
  ``Client.scatter(..., broadcast=True)``, and the tasks refer to it;
- results stream back as they finish (``as_completed``), each one ticks ``progress``, and they are
  returned in the items' order;
- a task that was running on a worker that died is run again on another one (the scheduler's
  ``distributed.scheduler.allowed-failures``, 3 by default), and a task that raised is retried
  ``retries`` times, so one lost worker does not lose the run;
- the client (and the ``LocalCluster``) it made is closed at the end, and ``cleanup`` is run on
  every worker so long-lived workers do not keep the run's state.

``scheduler`` is the address of a running scheduler (``tcp://host:8786``; ``tls://``, ``ws://``,
``wss://``, ``ucx://`` or a bare ``host:port`` too; ``inproc://...`` in the same process), a
scheduler file written by ``dask scheduler --scheduler-file PATH.json``, or ``local:N`` for a
``LocalCluster`` of N worker processes of one thread each on this machine (``local`` alone: one
per CPU core).

>>> parse_scheduler("local:2"), parse_scheduler("tcp://10.0.0.5:8786")
(('local', 2), ('address', 'tcp://10.0.0.5:8786'))
>>> parse_scheduler("tcp://nowhere")
Traceback (most recent call last):
...
ValueError: --scheduler: expected tcp://host:8786 (a running Dask scheduler), a scheduler file PATH.json, or local:N (N worker processes on this machine), got 'tcp://nowhere'
"""
from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import socket
import uuid
from typing import Any, Callable, Iterator, Sequence

from ..params import loads_json

__all__ = ["parse_scheduler", "connect", "local_cluster", "run_on_dask", "SCHEDULER_FORMS"]

#: The forms of ``--scheduler``, as every error about it lists them.
SCHEDULER_FORMS = ("tcp://host:8786 (a running Dask scheduler), a scheduler file PATH.json, "
                   "or local:N (N worker processes on this machine)")

_SCHEMES = ("tcp", "tls", "ws", "wss", "ucx")
_ADDRESS = re.compile(r"^(?:(?P<scheme>[a-z]+)://)?(?P<host>\[[0-9a-fA-F:.]+\]|[^\s:/\[\]]+):(?P<port>\d{1,5})/?$")


def parse_scheduler(spec: Any) -> tuple[str, Any]:
    """``("local", n_workers)``, ``("file", path)`` or ``("address", address)``; a ValueError otherwise."""
    def bad(why: str = "") -> ValueError:
        return ValueError(f"--scheduler: expected {SCHEDULER_FORMS}, got {spec!r}{why}")

    if not isinstance(spec, str) or not spec.strip():
        raise bad()
    text = spec.strip()
    if text == "local" or text.startswith("local:"):
        if text == "local":
            return ("local", max(1, os.cpu_count() or 1))
        n = text[len("local:"):]
        if not (n.isascii() and n.isdigit()) or int(n) < 1:
            raise bad(" (N is the number of worker processes, an int >= 1)")
        return ("local", int(n))
    if text.endswith(".json") and "://" not in text:
        if not os.path.isfile(text):
            raise bad(" (no such scheduler file)")
        return ("file", text)
    if re.fullmatch(r"inproc://\S+", text):  # a scheduler in this process (LocalCluster(processes=False))
        return ("address", text)
    m = _ADDRESS.match(text)
    if m is None or not 0 < int(m.group("port")) < 65536:
        raise bad()
    if m.group("scheme") is not None and m.group("scheme") not in _SCHEMES:
        raise bad(f" (Dask speaks {', '.join(s + '://' for s in _SCHEMES)})")
    return ("address", text.rstrip("/"))


def _import_distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise ModuleNotFoundError("--scheduler runs the configs on Dask, which is not installed here: "
                                  "pip install distributed") from None
    return distributed


#: Thread counts that Dask's nannies set to 1 in the workers they start (and in their own process).
#: The bootstrap's matrix products round differently with another BLAS thread count, so the
#: workers of ``local:N`` keep this process's settings: their rows equal the in-process run's.
_BLAS_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


@contextlib.contextmanager
def local_cluster(n_workers: int) -> Iterator[Any]:
    """A ``LocalCluster`` of ``n_workers`` processes of one thread each, closed on exit.

    Its workers use the BLAS thread settings of this process (not Dask's 1 thread), and the
    variables that Dask's nannies write into this process's ``os.environ`` are put back on exit.
    """
    distributed = _import_distributed()
    import dask

    environ = dict(dask.config.get("distributed.nanny.pre-spawn-environ") or {})
    touched = set(environ) | {"PYTHONHASHSEED", "__DASK_PARENT_PID"}
    before = {k: os.environ.get(k) for k in touched}
    try:
        keep = {k: v for k, v in environ.items() if k not in _BLAS_VARS}
        with dask.config.set({"distributed.nanny.pre-spawn-environ": keep}):
            cluster = distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                                               dashboard_address=None)
        try:
            yield cluster
        finally:
            cluster.close()
    finally:
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _scheduler_file_address(spec: str, path: str) -> str:
    """The scheduler address in a file written by ``dask scheduler --scheduler-file``; a ValueError
    naming --scheduler when the file is not one (Dask's own reader fails with an AssertionError)."""
    try:
        with open(path, encoding="utf-8") as f:
            info = loads_json(f.read())
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ValueError(f"--scheduler {spec}: not a Dask scheduler file (cannot read it as JSON: "
                         f"{type(exc).__name__})") from None
    address = info.get("address") if isinstance(info, dict) else None
    if not isinstance(address, str) or not address:
        raise ValueError(f"--scheduler {spec}: not a Dask scheduler file (no \"address\"; write one with "
                         "`dask scheduler --scheduler-file PATH.json`)")
    return address


def _probe(spec: str, address: str, timeout: float) -> None:
    """For a plain TCP address: does something listen there, and does it speak first as a Dask
    scheduler does (its handshake)? ``distributed.Client`` itself waits forever on a peer that
    accepts the connection and then says nothing."""
    m = _ADDRESS.match(address)
    if m is None or (m.group("scheme") or "tcp") != "tcp":
        return
    host = m.group("host").strip("[]")
    try:
        with socket.create_connection((host, int(m.group("port"))), timeout=timeout) as sock:
            sock.settimeout(timeout)
            if not sock.recv(1):
                raise OSError("it closed the connection")
    except socket.timeout:
        raise OSError(f"--scheduler {spec}: something accepted the connection but did not answer like a Dask "
                      f"scheduler within {timeout:g} s; is the port right?") from None
    except OSError as exc:
        raise OSError(f"--scheduler {spec}: no Dask scheduler answered within {timeout:g} s ({exc}); "
                      f"start one with `dask scheduler`, or use local:N") from None


@contextlib.contextmanager
def connect(spec: str, *, timeout: float = 30.0) -> Iterator[Any]:
    """A ``distributed.Client`` for ``spec`` (with its ``LocalCluster`` for ``local:N``), closed on exit.

    Waits up to ``timeout`` seconds for the scheduler and for a first worker; an OSError names
    ``--scheduler`` when either does not come.
    """
    kind, value = parse_scheduler(spec)
    distributed = _import_distributed()
    if kind == "address":
        _probe(spec, value, timeout)
    if kind == "file":
        value = _scheduler_file_address(spec, value)
        _probe(spec, value, timeout)
        kind = "address"
    with contextlib.ExitStack() as stack:
        try:
            if kind == "local":
                cluster = stack.enter_context(local_cluster(value))
                client = distributed.Client(cluster, timeout=timeout)
            else:
                client = distributed.Client(value, timeout=timeout)
        except OSError as exc:
            raise OSError(f"--scheduler {spec}: no Dask scheduler answered within {timeout:g} s ({exc}); "
                          f"start one with `dask scheduler`, or use local:N") from None
        stack.callback(client.close)
        try:
            client.wait_for_workers(1, timeout=timeout)
        except (TimeoutError, OSError):
            raise OSError(f"--scheduler {spec}: the scheduler has no workers (waited {timeout:g} s); "
                          f"start some with `dask worker {client.scheduler.address}`") from None
        yield client


def _has_module(name: str) -> bool:
    """Run on a worker: can it import ``name`` (without importing it here)?"""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _check_workers(client: Any, spec: str, fn: Callable[..., Any]) -> None:
    package = fn.__module__.split(".")[0]
    found = client.run(_has_module, package)
    missing = sorted(addr for addr, ok in found.items() if not ok)
    if missing:
        raise ModuleNotFoundError(f"--scheduler {spec}: {len(missing)} of {len(found)} workers cannot import "
                                  f"{package} (e.g. {missing[0]}): install it on every worker, in the same "
                                  f"version as here")


def run_on_dask(scheduler: str, fn: Callable[..., Any], items: Sequence[Any], *, shared: Sequence[Any] = (),
                per_task: Sequence[Any] = (), names: Sequence[str] | None = None, progress: Any = None,
                cleanup: tuple[Callable[..., Any], tuple] | None = None, retries: int = 1,
                timeout: float = 30.0) -> list[Any]:
    """``[fn(*shared, item, *per_task) for item in items]``, computed on the Dask workers of ``scheduler``.

    ``fn`` must be importable on the workers (a module-level function of an installed package);
    ``shared`` is scattered to every worker once; ``progress`` (a tqdm bar, or anything with
    ``update(n)``) ticks as each result arrives; ``names`` (one per item) name the errors;
    ``cleanup = (function, args)`` is run on every worker at the end. A task that raises is
    retried ``retries`` times and then its exception is raised here (the other tasks are
    cancelled); a task whose workers died ``allowed-failures`` times raises an OSError.
    """
    items = list(items)
    labels = list(names) if names is not None else [repr(it) for it in items]
    parse_scheduler(scheduler)
    distributed = _import_distributed()
    if not items:
        return []
    with connect(scheduler, timeout=timeout) as client:
        try:
            _check_workers(client, scheduler, fn)
            refs = client.scatter(list(shared), broadcast=True) if shared else []
            run = uuid.uuid4().hex[:12]
            futures = [client.submit(fn, *refs, item, *per_task, key=f"chunklab-task-{i}-{run}", retries=retries)
                       for i, item in enumerate(items)]
            where = {f.key: i for i, f in enumerate(futures)}
            out: list[Any] = [None] * len(items)
            try:
                # this client's loop, not the default client's: a notebook's own `with Client(...)`
                # would otherwise have futures waited on from two event loops (a rescheduled key
                # then raises "bound to a different event loop")
                for fut in distributed.as_completed(futures, loop=client.loop):
                    i = where[fut.key]
                    try:
                        out[i] = fut.result()
                    except distributed.KilledWorker as exc:
                        raise OSError(f"--scheduler {scheduler}: {labels[i]} was running on workers that died "
                                      f"each time it was tried ({exc}); give the workers more memory, or "
                                      f"raise distributed.scheduler.allowed-failures") from None
                    if progress is not None:
                        progress.update(1)
            except BaseException:
                client.cancel(futures)
                raise
            return out
        finally:
            if cleanup is not None:
                try:
                    client.run(cleanup[0], *cleanup[1])
                except Exception:  # a worker may be gone, and its state with it
                    pass
