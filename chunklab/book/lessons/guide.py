"""The trainer's guide: the training room's measured size and the rule of thumb drawn from it.

``tests/test_room.py`` measures a room (chapter 1 run by one trainee, then by four at once) and
writes ``_build/room/room_size.json``; a copy of such a run is committed as
``tools/room/measured.json`` so the guide has numbers on a machine where the room test has not
run yet. :func:`room_measurement` reads the newer of the two; :func:`room_rule` turns it into
trainees per core and per GiB.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

__all__ = ["room_measurement", "room_rule", "MEASURED_FILES"]

ROOT = Path(__file__).resolve().parents[3]
#: Where a measurement is looked for, the room test's own output first.
MEASURED_FILES = (ROOT / "_build" / "room" / "room_size.json", ROOT / "tools" / "room" / "measured.json")


def room_measurement(paths=MEASURED_FILES) -> tuple[dict, Path]:
    """The first measurement found in ``paths`` and where it came from; ``FileNotFoundError`` if none."""
    for path in paths:
        if Path(path).is_file():
            return json.loads(Path(path).read_text(encoding="utf-8")), Path(path)
    raise FileNotFoundError(f"no room measurement in {', '.join(map(str, paths))}: run tests/test_room.py")


def room_rule(m: dict, slowdown_ok: float = 2.0) -> dict:
    """Trainees per core and per GiB from a measurement ``m`` (see ``tests/test_room.py``).

    - ``per_gib``: how many trainees one GiB holds, from the largest peak (server + kernel) of
      the four concurrent trainees running chapter 1;
    - ``slowdown``: the slowest of four trainees' Run All (each timed from its first cell, as the
      trainee alone was) over the time alone;
    - ``per_core``: trainees per core who may press Run All at the same moment and wait at most
      ``slowdown_ok`` times as long as alone — an extrapolation that assumes the work is CPU-bound
      and shares the cores evenly (4 trainees on C cores slowed down ``slowdown`` times, so
      ``4 / C * slowdown_ok / slowdown`` stay within the bound);
    - ``by_memory`` / ``by_cpu``: the room size this machine supports on each count.

    >>> m = {"machine": {"cores": 2, "memory_gib": 24.0}, "per_trainee_peak_mib": 1024,
    ...      "hub_memory_peak_mib": 200, "run_all_seconds": {"1 trainee": 100, "4 trainees": {"a": 240, "b": 250}}}
    >>> r = room_rule(m); (r["per_gib"], r["slowdown"], r["per_core"], r["by_memory"], r["by_cpu"])
    (1.0, 2.5, 1.6, 21, 3)
    """
    peak_gib = m["per_trainee_peak_mib"] / 1024
    solo = m["run_all_seconds"]["1 trainee"]
    four = max(m["run_all_seconds"]["4 trainees"].values())
    cores = m["machine"]["cores"]
    slowdown = four / solo
    per_core = 4 / cores * slowdown_ok / slowdown
    free_gib = m["machine"]["memory_gib"] - m["hub_memory_peak_mib"] / 1024 - 2    # 2 GiB for the system
    return {"per_gib": round(1 / peak_gib, 2), "slowdown": round(slowdown, 2), "per_core": round(per_core, 2),
            "by_memory": int(math.floor(free_gib / peak_gib)), "by_cpu": int(math.floor(per_core * cores)),
            "slowdown_ok": slowdown_ok}
