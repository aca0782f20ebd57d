"""A grid on Dask distributed: the rows equal the in-process run's, with or without a worker dying."""
from __future__ import annotations

import os
import signal
import socket
import sys

import pytest

from chunklab import load_corpus, load_questions
from chunklab.evaluation import distributed as dist
from chunklab.evaluation.matrix import run_matrix

pytest.importorskip("distributed")

GRID = [{"strategy": "fixed", "size": [300, 600], "overlap": [0, 0.1]},
        {"strategy": "recursive", "target": [400, 800], "overlap": [0, 40]}]
#: More configs for the run where a worker is killed: many are still to run after the first result.
BIG_GRID = [{"strategy": "fixed", "size": [150, 250, 350, 450, 550, 650], "overlap": [0, 0.1]},
            {"strategy": "recursive", "target": [300, 500, 700], "overlap": [0, 30]}]
OPTIONS = {"k": 5, "n_boot": 200}


@pytest.fixture(scope="module")
def data():
    corpus = load_corpus("xiaobei")
    return list(corpus), load_questions("xiaobei", corpus)


def _strip(rows):
    return [{k: v for k, v in r.items() if "seconds" not in k} for r in rows]


def _same(a, b):
    assert [r["label"] for r in b.rows] == [r["label"] for r in a.rows]  # grid order
    assert _strip(b.rows) == _strip(a.rows)  # every metric, exactly
    assert b.skipped == a.skipped and b.warnings == a.warnings


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_local_cluster_rows_equal_the_in_process_run(data):
    docs, questions = data
    env = dict(os.environ)
    here = run_matrix(docs, questions, GRID, progress=False, **OPTIONS)
    there = run_matrix(docs, questions, GRID, progress=False, scheduler="local:2", **OPTIONS)
    _same(here, there)
    assert len(there.rows) == 8
    assert dict(os.environ) == env  # what Dask's nannies wrote into this process is put back


class _KillOnFirstResult:
    """A stand-in for tqdm: when the first config comes back, SIGKILL a worker that has configs in hand."""

    client = None
    killed: list = []

    def __init__(self, total=None, **kwargs):
        self.n = 0

    def update(self, n=1):
        self.n += n
        if self.n == 1:
            pids = self.client.run(os.getpid)
            busy = {addr: keys for addr, keys in self.client.processing().items() if keys}
            victim = sorted(busy)[0] if busy else sorted(pids)[0]
            os.kill(pids[victim], signal.SIGKILL)
            self.killed.append((victim, list(busy.get(victim, ()))))

    def close(self):
        pass


@pytest.mark.slow
@pytest.mark.timeout(420)
@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_a_worker_killed_mid_grid_loses_nothing(data, monkeypatch):
    import tqdm.auto
    from distributed import Client

    docs, questions = data
    here = run_matrix(docs, questions, BIG_GRID, progress=False, **OPTIONS)
    with dist.local_cluster(2) as cluster, Client(cluster) as client:
        client.wait_for_workers(2, timeout=120)
        _KillOnFirstResult.client, _KillOnFirstResult.killed = client, []
        monkeypatch.setattr(tqdm.auto, "tqdm", _KillOnFirstResult)
        there = run_matrix(docs, questions, BIG_GRID, progress=True, scheduler=cluster.scheduler_address,
                           **OPTIONS)
        assert len(_KillOnFirstResult.killed) == 1
        victim, in_hand = _KillOnFirstResult.killed[0]
        assert in_hand, "the killed worker had no config in hand: the kill did not land mid-grid"
        assert victim not in client.scheduler_info()["workers"]  # it is gone (its nanny may start another)
    assert len(here.rows) == 18
    _same(here, there)


@pytest.mark.parametrize("spec", ["", "  ", "foo", "local:0", "local:x", "local:-1", "http://host:8786",
                                  "tcp://host", "tcp://host:99999", "host:port", 8786])
def test_bad_scheduler_strings_say_what_is_expected(spec, data):
    docs, questions = data
    with pytest.raises(ValueError) as err:
        run_matrix(docs[:2], questions[:2], GRID, progress=False, scheduler=spec, **OPTIONS)
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith("--scheduler")
    assert "tcp://host:8786" in msg and "local:N" in msg


def test_good_scheduler_strings_parse():
    assert dist.parse_scheduler("local:3") == ("local", 3)
    assert dist.parse_scheduler("local")[0] == "local"
    for spec in ("tcp://127.0.0.1:8786", "tls://sched.example.org:8786", "10.1.2.3:8786", "tcp://[::1]:8786"):
        assert dist.parse_scheduler(spec) == ("address", spec)


def test_executor_and_scheduler_are_exclusive(data):
    from concurrent.futures import ThreadPoolExecutor

    docs, questions = data
    with ThreadPoolExecutor(1) as ex, pytest.raises(ValueError, match="not both"):
        run_matrix(docs[:2], questions[:2], GRID, progress=False, executor=ex, scheduler="local:1")


def test_without_dask_one_line_says_what_to_install(data, monkeypatch):
    docs, questions = data
    monkeypatch.setitem(sys.modules, "distributed", None)  # `import distributed` raises ImportError
    with pytest.raises(ModuleNotFoundError, match=r"^--scheduler .*: pip install distributed$"):
        run_matrix(docs[:2], questions[:2], GRID, progress=False, scheduler="local:2", **OPTIONS)


@pytest.mark.timeout(120)
def test_no_scheduler_at_the_address_is_one_line():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    spec = f"tcp://127.0.0.1:{port}"
    with pytest.raises(OSError) as err:
        with dist.connect(spec, timeout=2):
            pass
    msg = str(err.value)
    assert msg.startswith(f"--scheduler {spec}: no Dask scheduler answered") and "\n" not in msg


@pytest.mark.timeout(120)
def test_a_scheduler_without_workers_is_one_line():
    from distributed import LocalCluster

    with LocalCluster(n_workers=0, processes=False, dashboard_address=None) as cluster:
        with pytest.raises(OSError, match=r"has no workers .*`dask worker inproc://"):
            with dist.connect(cluster.scheduler_address, timeout=1):
                pass


def test_cli_rejects_a_bad_scheduler_in_one_line(capsys):
    from chunklab.cli import main

    code = main(["matrix", "--corpus", "xiaobei", "--questions", "xiaobei", "--scheduler", "ftp://x"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "--scheduler" in err[0] and "local:N" in err[0]
    code = main(["matrix", "--corpus", "xiaobei", "--questions", "xiaobei", "--scheduler", "local:2", "--jobs", "2"])
    assert code == 2 and "exclusive" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.timeout(420)
def test_cli_matrix_on_a_local_cluster(tmp_path, capsys):
    import json

    from chunklab.cli import main

    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps([{"strategy": "fixed", "size": [256, 512]}]), encoding="utf-8")
    assert main(["matrix", "--corpus", "xiaobei", "--questions", "xiaobei", "--grid", str(grid), "--json"]) == 0
    local = json.loads(capsys.readouterr().out)
    assert main(["matrix", "--corpus", "xiaobei", "--questions", "xiaobei", "--grid", str(grid), "--json",
                 "--scheduler", "local:2"]) == 0
    dask = json.loads(capsys.readouterr().out)
    key = "rows" if "rows" in local else next(iter(local))
    strip = lambda rows: [{k: v for k, v in r.items() if "seconds" not in k} for r in rows]
    assert strip(dask[key]) == strip(local[key])


@pytest.mark.timeout(180)
def test_results_are_awaited_on_our_clients_loop_under_a_current_client(monkeypatch):
    """A notebook's own ``with Client(...)`` must not make us wait on futures from its event loop.

    ``as_completed`` defaults to the *current* client's loop; when a worker died and a finished key
    was rescheduled, ``fut.result()`` then waited on an event bound to another loop and raised
    "bound to a different event loop" (seen once in CI). Check the loop every waiter uses.
    """
    import operator

    import distributed
    from distributed import Client, LocalCluster

    seen = []

    class Spy(distributed.as_completed):
        def __init__(self, futures=None, *args, **kwargs):
            super().__init__(futures, *args, **kwargs)
            seen.append((self.loop, {f.client.loop for f in futures}))

    monkeypatch.setattr(distributed, "as_completed", Spy)
    with LocalCluster(n_workers=1, processes=False, dashboard_address=":0") as outer, Client(outer):
        with LocalCluster(n_workers=1, processes=False, dashboard_address=":0") as ours:
            out = dist.run_on_dask(ours.scheduler_address, operator.neg, [1, 2, 3])
    assert out == [-1, -2, -3]
    (loop, future_loops), = seen
    assert future_loops == {loop}
