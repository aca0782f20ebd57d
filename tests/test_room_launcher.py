"""`make room`'s launcher without starting a hub: names, options and errors (the room itself: test_room.py)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools" / "room"))
import room  # noqa: E402
import roomlib  # noqa: E402

from chunklab.book.lessons import guide  # noqa: E402


def test_names_file_comments_blank_lines_and_errors(tmp_path):
    f = tmp_path / "names.txt"
    f.write_text("# the class of Monday\nalice\n\nbob  # second row\n", encoding="utf-8")
    assert roomlib.read_names(f) == ["alice", "bob"]
    f.write_text("alice\nBob Smith\n", encoding="utf-8")
    with pytest.raises(roomlib.RoomError, match=r"line 2: 'Bob Smith' is not an account name"):
        roomlib.read_names(f)
    f.write_text("alice\nalice\n", encoding="utf-8")
    with pytest.raises(roomlib.RoomError, match="listed twice: alice"):
        roomlib.read_names(f)
    f.write_text("# nobody\n", encoding="utf-8")
    with pytest.raises(roomlib.RoomError, match="no names"):
        roomlib.read_names(f)
    with pytest.raises(roomlib.RoomError, match="cannot read"):
        roomlib.read_names(tmp_path / "missing.txt")


def test_generated_names_and_bad_prefix():
    assert room.trainee_names(room.parse_args(["--count", "3"])) == ["trainee01", "trainee02", "trainee03"]
    assert room.trainee_names(room.parse_args([])) == [f"trainee{i:02d}" for i in range(1, 5)]
    with pytest.raises(roomlib.RoomError, match="--prefix"):
        room.trainee_names(room.parse_args(["--prefix", "9x"]))


@pytest.mark.parametrize("argv, message", [
    (["--port", "70000"], "--port 70000: must be 1-65533"),
    (["--ssl-cert", "cert.pem"], "--ssl-cert and --ssl-key go together"),
    (["--memory", "-1"], "--memory and --cpus must be >= 0"),
    (["--count", "0"], "--count 0: must be 1-200"),
])
def test_bad_options_are_one_line_errors(argv, message, monkeypatch):
    monkeypatch.setattr(room.os, "geteuid", lambda: 0)
    monkeypatch.setattr(room, "ROOT", ROOT)
    args = room.parse_args(argv)
    if not (ROOT / "_build/html/.built").exists() or not (ROOT / "tools/room/node_modules/.bin").exists():
        pytest.skip("needs the built book and `make room`'s proxy (make test installs and builds both)")
    with pytest.raises(roomlib.RoomError, match=message.replace("(", r"\(")):
        room.check_machine(args)


def test_not_root_says_what_to_do(monkeypatch, capsys):
    monkeypatch.setattr(room.os, "geteuid", lambda: 1000)
    assert room.main(["--check"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "needs root (sudo make room" in err


def test_limits_are_described():
    assert roomlib.Limits(3 * 2**30, 1.0).describe() == "3.0 GiB, 1 CPU"
    assert roomlib.Limits(0, 0).describe() == "no memory cap, no CPU cap"
    assert roomlib.cgroup_mode() in ("v1", "v2", "")


def test_guide_reads_the_newest_measurement_and_its_rule(tmp_path):
    m = json.loads((ROOT / "tools/room/measured.json").read_text(encoding="utf-8"))
    for key in ("machine", "run_all_seconds", "per_trainee_peak_mib", "hub_memory_peak_mib", "killed"):
        assert key in m, f"tools/room/measured.json lacks {key!r}: copy _build/room/room_size.json from a room test"
    first = tmp_path / "room_size.json"
    first.write_text(json.dumps({**m, "measured_at": "today"}), encoding="utf-8")
    got, source = guide.room_measurement((first, ROOT / "tools/room/measured.json"))
    assert source == first and got["measured_at"] == "today"
    got, source = guide.room_measurement((tmp_path / "none.json", ROOT / "tools/room/measured.json"))
    assert source.name == "measured.json"
    with pytest.raises(FileNotFoundError, match="run tests/test_room.py"):
        guide.room_measurement((tmp_path / "none.json",))
    rule = guide.room_rule(m)
    assert rule["slowdown"] >= 1 and 0 < rule["per_core"] and rule["by_memory"] >= 1
    # more memory per trainee -> fewer trainees by memory
    heavier = guide.room_rule({**m, "per_trainee_peak_mib": m["per_trainee_peak_mib"] * 2})
    assert heavier["by_memory"] < rule["by_memory"]
