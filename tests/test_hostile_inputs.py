"""Hostile and careless input (issue #17): nothing hangs, nothing exhausts memory, no result is
lost, every error is one clear line.

Whatever could hang or eat memory on a broken build (a FIFO, a link to /dev/zero, a huge k) runs
in a child process with a memory limit and a timeout, so a regression fails the test instead of
the machine.
"""
from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from chunklab import Document
from chunklab.cli import main
from chunklab.core import Chunk
from chunklab.datasets import files as dfiles
from chunklab.datasets import load_corpus
from chunklab.evaluation import evaluate
from chunklab.evaluation.matrix import MatrixResult, expand_grid
from jsonl_files import write_jsonl

ROOT = Path(__file__).resolve().parents[1]

POLICY = "# 差旅报销制度\n\n第一条 一线城市住宿费每晚不超过六百元。\n\n第二条 出差结束后十个工作日内提交报销单。\n"
NOTES = "Meeting notes.\n\nThe team agreed to move the release to Friday.\n"
QUESTIONS = [
    {"id": "q1", "question": "一线城市住宿每晚能报多少钱？", "evidence": "一线城市住宿费每晚不超过六百元"},
    {"id": "q2", "question": "报销要在多少天内交？", "evidence": "出差结束后十个工作日内提交报销单"},
    {"id": "q3", "question": "When is the release?", "evidence": "move the release to Friday"},
]


@pytest.fixture()
def own(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "policy.md").write_text(POLICY, encoding="utf-8")
    (folder / "notes.txt").write_text(NOTES, encoding="utf-8")
    return folder, write_jsonl(tmp_path / "q.jsonl", QUESTIONS)


def _limit_memory() -> None:  # pragma: no cover - runs in the child
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (3_000_000_000, 3_000_000_000))


def _child(code_or_args, timeout: float = 120) -> subprocess.CompletedProcess:
    """Python code (a str) or ``python -m chunklab`` arguments (a list), in a bounded child process."""
    argv = ["-c", code_or_args] if isinstance(code_or_args, str) else ["-m", "chunklab", *code_or_args]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=timeout, env=env,
                          preexec_fn=_limit_memory)


def _one_error_line(err: str, *fragments: str) -> None:
    assert err.count("\n") == 1 and err.startswith("error: "), err
    assert "Traceback" not in err
    for f in fragments:
        assert f in err, err


def _error_lines(err: str) -> str:
    """The ``error:`` lines of stderr (a matrix run without --json also draws a progress bar there)."""
    return "".join(line + "\n" for line in err.splitlines() if line.startswith("error: ") or "Traceback" in line)


# -- 1. only regular files are corpus files; a size cap ---------------------------------------------

LOAD = "import sys; from chunklab.datasets.files import load_folder; print([d.id for d in load_folder(sys.argv[1])])"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_in_the_corpus_does_not_hang(tmp_path):
    (tmp_path / "a.md").write_text("# 标题\n正文。", encoding="utf-8")
    os.mkfifo(tmp_path / "p.md")
    r = _child(f"{LOAD.replace('sys.argv[1]', repr(str(tmp_path)))}", timeout=30)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "['a']"


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_links_are_followed_only_to_regular_files(tmp_path):
    (tmp_path / "a.md").write_text("# 标题\n正文。", encoding="utf-8")
    (tmp_path / "z.txt").symlink_to("/dev/zero")
    (tmp_path / "loop1.md").symlink_to(tmp_path / "loop2.md")
    (tmp_path / "loop2.md").symlink_to(tmp_path / "loop1.md")
    (tmp_path / "broken.md").symlink_to(tmp_path / "nowhere.md")
    (tmp_path / "b.md").symlink_to(tmp_path / "a.md")  # a link to a regular file counts
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "up").symlink_to(tmp_path)  # a folder link is not followed: no loop
    r = _child(LOAD.replace("sys.argv[1]", repr(str(tmp_path))), timeout=60)
    assert r.returncode == 0, r.stderr[-500:]
    assert r.stdout.strip() == "['a', 'b']"
    # a device named on the command line is refused by name, not read
    r = _child(["chunk", str(tmp_path / "z.txt")], timeout=60)
    assert r.returncode == 2
    _one_error_line(r.stderr, "z.txt", "not a regular file")


def test_a_file_over_the_size_cap_is_refused_by_name(tmp_path, capsys):
    assert dfiles.MAX_FILE_BYTES == 100_000_000
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "small.md").write_text("小文件。", encoding="utf-8")
    (folder / "big.txt").write_text("大" * 2000, encoding="utf-8")  # 6,000 bytes
    with pytest.raises(ValueError, match=r"big\.txt is 6,000 bytes, over the limit of 5,000 bytes"):
        dfiles.load_folder(folder, max_file_bytes=5000)
    assert [d.id for d in dfiles.load_folder(folder, max_file_bytes=6000)] == ["big", "small"]
    q = write_jsonl(tmp_path / "q.jsonl", [{"id": "a", "question": "小", "evidence": "小文件"}])
    assert main(["validate", "--corpus", str(folder), "--questions", str(q), "--max-file-mb", "0.005"]) == 2
    _one_error_line(capsys.readouterr().err, "big.txt", "over the limit", "--max-file-mb")
    assert main(["validate", "--corpus", str(folder), "--questions", str(q), "--max-file-mb", "0.006"]) == 0
    capsys.readouterr()
    assert main(["chunk", str(folder / "big.txt"), "--max-file-mb", "0.001"]) == 2
    _one_error_line(capsys.readouterr().err, "big.txt", "over the limit")


# -- 2. k is validated and clamped to the number of chunks --------------------------------------------

def test_a_huge_k_is_clamped_to_the_number_of_chunks(own):
    folder, q = own
    base = ["eval", "--corpus", str(folder), "--questions", str(q), "--strategy", "fixed", "-p", "size=40", "--json"]
    small = _child([*base, "--k", "1000"])
    assert small.returncode == 0, small.stderr[-500:]
    want = json.loads(small.stdout)
    for k in ("1000000000", "99999999999999999999"):
        r = _child([*base, "--k", k])
        assert r.returncode == 0, r.stderr[-500:]
        got = json.loads(r.stdout)
        assert got["k"] == int(k) and got["chunks"] < 1000
        assert got["warnings"] == [f"k={k} is more than the {got['chunks']} chunks: every chunk can be retrieved, "
                                   f"so k is clamped to {got['chunks']}"]
        for key in ("hit", "hit_lo", "hit_hi", "mrr", "recall", "precision", "iou", "n_retrieved", "miss_cut"):
            assert got[key] == want[key], key
    text = _child(base[:-1] + ["--k", "1000000000"])
    assert text.returncode == 0 and text.stderr.count("warning: k=1000000000 is more than") == 1, text.stderr[-500:]
    r = _child(["audit", "--corpus", str(folder), "--questions", str(q), "--k", "1000000000", "--json"])
    assert r.returncode in (0, 1), r.stderr[-500:]
    hit = next(it for it in json.loads(r.stdout)["items"] if it["name"] == "hit_ci")
    assert "k=1000000000 多于" in hit["detail"]


def test_evaluate_clamps_k_without_changing_a_metric():
    doc = Document("d", "合同的订立。合同的效力。违约责任。")
    cs = [Chunk("d", 0, 0, 6, "合同的订立。"), Chunk("d", 1, 6, 12, "合同的效力。"), Chunk("d", 2, 12, 17, "违约责任。")]
    qs = [type("Q", (), {"id": "q", "question": "合同效力", "spans": [("d", 6, 11)]})()]
    exact = evaluate([doc], cs, qs, k=3, n_boot=50)
    big = evaluate([doc], cs, qs, k=10**12, depth=10**12, n_boot=50)
    assert big.k == 10**12 and big.k_used == 3 and big.ranked.shape == exact.ranked.shape
    assert {m: v["mean"] for m, v in big.aggregate.items()} == {m: v["mean"] for m, v in exact.aggregate.items()}
    assert "warnings" not in exact.summary() and len(big.summary()["warnings"]) == 1


def test_audit_validates_k_and_the_token_limit(own, capsys):
    folder, _ = own
    assert main(["audit", "--corpus", str(folder), "--token-limit", "-5"]) == 2
    _one_error_line(capsys.readouterr().err, "token_limit must be an int >= 1, got -5")
    assert main(["audit", "--corpus", str(folder), "--k", "0"]) == 2
    _one_error_line(capsys.readouterr().err, "k must be an int >= 1, got 0")


# -- 3. workers are clamped to the configs and the cores ------------------------------------------------

def test_jobs_are_clamped_to_configs_and_cores(own, tmp_path, capsys, monkeypatch):
    from concurrent.futures import ThreadPoolExecutor

    import chunklab.cli as cli

    started = []

    class Recording(ThreadPoolExecutor):
        def __init__(self, max_workers=None):
            started.append(max_workers)
            super().__init__(max_workers=max_workers)

    monkeypatch.setattr(cli, "ProcessPoolExecutor", Recording)
    folder, q = own
    grid = tmp_path / "g.json"
    grid.write_text('[{"strategy": "fixed", "size": [40, 80]}]', encoding="utf-8")
    assert main(["matrix", "--grid", str(grid), "--corpus", str(folder), "--questions", str(q), "--jobs", "100000"]) == 0
    assert started and all(w <= 2 for w in started) or not started  # one core: no pool at all
    assert "--jobs 100000" in capsys.readouterr().err


# -- 4. loading a folder is linear in its files -------------------------------------------------------

@pytest.mark.slow
@pytest.mark.timeout(120)
def test_loading_a_folder_is_linear(tmp_path, monkeypatch):
    # No timing assertion (machines are noisy): 200k files load in about 10 s when the id check is
    # linear, and in over an hour when it is quadratic (40k took 12 s), so the time limit catches it.
    n = 200_000
    paths = [tmp_path / f"d{i // 1000:03d}" / f"f{i:06d}.md" for i in range(n)]
    paths += [tmp_path / "same.md", tmp_path / "same.txt"]
    monkeypatch.setattr(dfiles, "_walk", lambda root, exclude: sorted(paths, key=lambda p: p.relative_to(root).as_posix()))
    monkeypatch.setattr(dfiles, "file_document", lambda p, doc_id, rel=None, **kw: Document(doc_id, "x"))
    docs = dfiles.load_folder(tmp_path)
    assert len(docs) == n + 2 and docs[0].id == "d000/f000000" and [d.id for d in docs[-2:]] == ["same.md", "same.txt"]


# -- 5. --out: checked before the run; a late failure keeps the results ---------------------------------

def test_matrix_out_is_checked_before_the_run(own, tmp_path, capsys, monkeypatch):
    import chunklab.cli as cli

    folder, q = own
    base = ["matrix", "--grid", "article002", "--corpus", str(folder), "--questions", str(q)]

    def never(*a, **kw):
        raise AssertionError("the grid ran although --out cannot be written")

    monkeypatch.setattr(cli, "run_matrix", never)
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    assert main([*base, "--out", str(blocker / "m.csv")]) == 2  # its folder is a file
    _one_error_line(capsys.readouterr().err, "--out")
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if str(p).startswith(str(tmp_path)) else real_access(p, mode, **kw))
    assert main([*base, "--out", str(tmp_path / "m.csv")]) == 2  # cannot create a file there
    _one_error_line(capsys.readouterr().err, "m.csv", "cannot be written", "before the run")
    (tmp_path / "old.csv").write_text("keep\n", encoding="utf-8")
    assert main([*base, "--out", str(tmp_path / "old.csv"), "--json"]) == 2  # exists, not writable
    captured = capsys.readouterr()
    assert json.loads(captured.out)["where"] == str(tmp_path / "old.csv")
    assert (tmp_path / "old.csv").read_text(encoding="utf-8") == "keep\n"


def test_matrix_results_survive_a_failed_write(own, tmp_path, capsys, monkeypatch):
    folder, q = own
    grid = tmp_path / "g.json"
    grid.write_text('[{"strategy": "fixed", "size": [40, 80]}]', encoding="utf-8")
    real = MatrixResult.to_csv

    def disk_full(self, path=None):
        if path is not None:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self)

    monkeypatch.setattr(MatrixResult, "to_csv", disk_full)
    out = tmp_path / "m.csv"
    assert main(["matrix", "--grid", str(grid), "--corpus", str(folder), "--questions", str(q), "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert "2 configs in" in captured.out
    _one_error_line(_error_lines(captured.err), "cannot write --out", "No space left on device", "the results are in")
    saved = Path(captured.err.rsplit("the results are in ", 1)[1].split(" instead")[0])
    try:
        lines = saved.read_text(encoding="utf-8").splitlines()
        assert len(lines) == 3 and "hit" in lines[0].split(",")
    finally:
        saved.unlink()
    assert main(["matrix", "--grid", str(grid), "--corpus", str(folder), "--questions", str(q), "--out", str(out),
                 "--json"]) == 2
    payload = json.loads(capsys.readouterr().out)
    assert len(payload["rows"]) == 2 and payload["where"] == str(out) and "No space" in payload["error"]
    Path(payload["saved_to"]).unlink()


# -- 6. an unreadable folder or file is an error naming it --------------------------------------------

def test_an_unreadable_subfolder_is_an_error(own, capsys, monkeypatch):
    folder, q = own
    (folder / "sub").mkdir()
    (folder / "sub" / "secret.md").write_text("机密。", encoding="utf-8")
    real = os.scandir

    def scandir(path="."):
        if os.fspath(path).rstrip("/").endswith("sub"):
            raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    with pytest.raises(PermissionError, match=r"sub: cannot list it"):
        dfiles.load_folder(folder)
    assert main(["eval", "--corpus", str(folder), "--questions", str(q)]) == 2
    _one_error_line(capsys.readouterr().err, "sub", "Permission denied")


@pytest.mark.skipif(shutil.which("setpriv") is None or os.geteuid() != 0,
                    reason="needs root and setpriv to drop the permission override")
def test_unreadable_files_and_folders_for_real(own):
    folder, q = own
    (folder / "sub").mkdir()
    (folder / "sub" / "secret.md").write_text("机密。", encoding="utf-8")

    def run(*argv):
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        return subprocess.run(["setpriv", "--bounding-set=-dac_override,-dac_read_search", sys.executable, "-m",
                               "chunklab", *argv], capture_output=True, text=True, timeout=120, env=env)

    try:
        os.chmod(folder / "sub", 0)
        r = run("eval", "--corpus", str(folder), "--questions", str(q))
        assert r.returncode == 2
        _one_error_line(r.stderr, "sub", "Permission denied")
        os.chmod(folder / "sub", 0o755)
        os.chmod(folder / "sub" / "secret.md", 0)
        r = run("eval", "--corpus", str(folder), "--questions", str(q))
        assert r.returncode == 2
        _one_error_line(r.stderr, "secret.md", "permission denied")
    finally:
        os.chmod(folder / "sub", 0o755)
        os.chmod(folder / "sub" / "secret.md", 0o644)


# -- 7. question files: the same rules in validate and eval --------------------------------------------

def test_question_files_same_rules_in_validate_and_eval(own, tmp_path, capsys, monkeypatch):
    folder, _ = own
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(json.dumps(QUESTIONS[0], ensure_ascii=False).encode() + b"\n{\"id\": \"\xff\"}\n")
    for cmd, status in (("validate", 2), ("eval", 2)):
        assert main([cmd, "--corpus", str(folder), "--questions", str(bad)]) == status
        _one_error_line(capsys.readouterr().err, "bad.jsonl", "not UTF-8", "line 2")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n  \n", encoding="utf-8")
    assert main(["validate", "--corpus", str(folder), "--questions", str(empty), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False and "no questions" in report["problems"][0]["message"]
    assert main(["eval", "--corpus", str(folder), "--questions", str(empty)]) == 2
    _one_error_line(capsys.readouterr().err, "empty.jsonl", "no questions")
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "fifo.jsonl")
        for cmd in ("validate", "eval"):
            assert main([cmd, "--corpus", str(folder), "--questions", str(tmp_path / "fifo.jsonl")]) == 2
            _one_error_line(capsys.readouterr().err, "fifo.jsonl", "not a regular file")
    lone = tmp_path / "lone.jsonl"  # a lone surrogate is valid JSON: the report must still print
    lone.write_text('{"id": "s", "question": "x", "evidence": "\\ud800"}\n', encoding="utf-8")
    assert main(["validate", "--corpus", str(folder), "--questions", str(lone), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["problems"][0]["evidence"] == "\ud800"
    locked = write_jsonl(tmp_path / "locked.jsonl", QUESTIONS)
    real_open, real_os_open = open, os.open

    def deny(path, *a, **kw):
        if str(path).endswith("locked.jsonl"):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return (real_os_open if isinstance(a[0] if a else None, int) else real_open)(path, *a, **kw)

    monkeypatch.setattr("builtins.open", deny)
    monkeypatch.setattr(os, "open", deny)
    for cmd in ("validate", "eval"):
        assert main([cmd, "--corpus", str(folder), "--questions", str(locked)]) == 2
        _one_error_line(capsys.readouterr().err, "locked.jsonl")


# -- 8. evidence never crosses a document boundary ------------------------------------------------------

def test_evidence_never_crosses_a_document_boundary(tmp_path, capsys):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("alpha beta gamma", encoding="utf-8")
    (folder / "b.txt").write_text("delta epsilon", encoding="utf-8")
    (folder / "c.txt").write_text("zeta\x00eta", encoding="utf-8")  # a NUL inside one document is fine
    q = write_jsonl(tmp_path / "q.jsonl", [{"id": "x", "question": "gamma delta", "evidence": "gamma\x00delta"}])
    assert main(["validate", "--corpus", str(folder), "--questions", str(q), "--json"]) == 1
    problem = json.loads(capsys.readouterr().out)["problems"][0]["message"]
    assert problem == "crosses a document boundary (from 'a' into 'b'): evidence may never span two documents"
    assert main(["eval", "--corpus", str(folder), "--questions", str(q)]) == 2
    _one_error_line(capsys.readouterr().err, "q.jsonl:1", problem)
    ok = write_jsonl(tmp_path / "ok.jsonl", [{"id": "y", "question": "zeta", "evidence": "zeta\x00eta"}])
    assert main(["validate", "--corpus", str(folder), "--questions", str(ok)]) == 0


# -- 9. nothing retrievable: said, with the reason ------------------------------------------------------

def test_nothing_retrievable_is_said_and_why(tmp_path, capsys):
    doc = Document("d", "迟到三次扣款。病假需要证明。年假按工龄计。")
    cs = [Chunk("d", 0, 0, 7, "迟到三次扣款。"), Chunk("d", 1, 7, 14, "病假需要证明。"),
          Chunk("d", 2, 14, 21, "年假按工龄计。")]
    Q = type("Q", (), {})

    def q(text):
        x = Q()
        x.id, x.question, x.spans = "q", text, [("d", 0, 6)]
        return x

    r = evaluate([doc], cs, [q("zzz qqq")], k=1, n_boot=50)
    assert r.aggregate["hit"]["mean"] == 0
    assert "nothing could be retrieved" in r.summary()["warnings"][0] and "share no token" in r.warnings[0]
    r = evaluate([doc], cs[:2], [q("迟到")], k=1, n_boot=50)  # in one of two chunks: idf log(1.5/1.5) = 0
    assert "idf 0" in r.warnings[0]
    assert capsys.readouterr().err == ""  # a library call says it in the result, not on stderr
    ok = evaluate([doc], cs, [q("迟到三次")], k=1, n_boot=50)
    assert ok.warnings == [] and "warnings" not in ok.summary() and ok.aggregate["hit"]["mean"] == 1
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("迟到三次扣款。", encoding="utf-8")
    f = write_jsonl(tmp_path / "q.jsonl", [{"id": "x", "question": "zzz qqq", "evidence": "迟到三次"}])
    assert main(["eval", "--corpus", str(folder), "--questions", str(f)]) == 0
    assert "warning: nothing could be retrieved" in capsys.readouterr().err
    assert main(["eval", "--corpus", str(folder), "--questions", str(f), "--json"]) == 0
    warnings = json.loads(capsys.readouterr().out)["warnings"]  # with the clamping of k=5 to the 1 chunk
    assert any("nothing could be retrieved" in w and "share no token" in w for w in warnings), warnings


# -- 10. one reader for the loader and `chunk FILE` ------------------------------------------------------

def test_chunk_reads_a_file_exactly_as_the_loader_does(tmp_path, capsys):
    folder = tmp_path / "docs"
    folder.mkdir()
    f = folder / "bom.md"
    f.write_bytes("\ufeff# 标题\r\n\r\n正文一段。\r\n\r\n## 小节\r\n\r\n更多正文。\r".encode("utf-8"))
    text = load_corpus(str(folder))["bom"].text
    assert dfiles.read_text_file(f) == text == "# 标题\n\n正文一段。\n\n## 小节\n\n更多正文。\n"
    assert main(["chunk", str(f), "--strategy", "markdown", "--json"]) == 0
    chunks = json.loads(capsys.readouterr().out)["chunks"]
    assert chunks[0]["meta"]["path"] == ["标题"]  # the first heading is recognised
    assert all(text[c["start"]:c["end"]] == c["text"] for c in chunks)
    assert main(["chunk", str(folder)]) == 2
    _one_error_line(capsys.readouterr().err, "is a folder, not a file")
    (folder / "bad.md").write_bytes("第一行\n第二行".encode("utf-8") + b"\xff")
    with pytest.raises(ValueError, match=r"bad\.md: not UTF-8 text \(invalid start byte at byte 19, line 2\)"):
        dfiles.read_text_file(folder / "bad.md")


# -- 13. with --json an error is one JSON object ------------------------------------------------------------

def test_json_errors_are_one_json_object(own, tmp_path, capsys):
    folder, q = own
    many = write_jsonl(tmp_path / "many.jsonl", [{"id": f"q{i}", "question": "x", "evidence": f"不存在{i}"} for i in range(300)])
    cases = [
        (["eval", "--corpus", str(folder), "--questions", str(many)], f"{many}:1", "and 299 more"),
        (["eval", "--corpus", str(folder), "--questions", str(q), "--k", "abc"], "--k", "invalid int value"),
        (["eval", "--corpus", str(tmp_path / "nope"), "--questions", str(q)], None, "nope"),
        (["chunk", str(tmp_path / "missing.md")], str(tmp_path / "missing.md"), "file not found"),
        (["audit", "--corpus", str(folder), "--questions", str(many)], f"{many}:1", "and 299 more"),
        (["validate", "--corpus", str(folder), "--questions", str(tmp_path)], None, "is a folder"),
    ]
    for argv, where, fragment in cases:
        assert main([*argv, "--json"]) == 2, argv
        captured = capsys.readouterr()
        payload = json.loads(captured.out)
        assert set(payload) == {"error", "where"} and fragment in payload["error"], payload
        assert where is None or payload["where"] == where, payload
        assert captured.out.count("\n") == 1
        assert main(argv) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        _one_error_line(captured.err, fragment)


# -- 14. smaller messages ------------------------------------------------------------------------------------

def test_grid_messages(own, tmp_path, capsys):
    folder, q = own
    grid = tmp_path / "g.json"
    base = ["matrix", "--grid", str(grid), "--corpus", str(folder), "--questions", str(q)]
    for text, fragment in (("null", "a grid is a JSON list of objects"), ("42", "got 42"),
                           ('[{"strategy": "fixed", "size": []}]', "'size' is an empty list")):
        grid.write_text(text, encoding="utf-8")
        assert main(base) == 2
        _one_error_line(capsys.readouterr().err, fragment)
    with pytest.raises(ValueError, match="a grid is a list of dicts"):
        expand_grid(None)
    grid.write_text('[{"strategy": "fixed", "size": 40, "overlap": 0}, {"strategy": "fixed", "overlap": 0, "size": 40},'
                    ' {"strategy": "fixed", "size": [40, 40]}]', encoding="utf-8")
    assert main([*base, "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert len(payload["rows"]) == 1
    assert [s.get("duplicate_of") for s in payload["skipped"]] == ["fixed(size=40, overlap=0)"] * 3
    assert all(s["reason"].startswith("duplicate of fixed(size=40, overlap=0)") for s in payload["skipped"])


def test_a_closed_pipe_exits_quietly():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.Popen([sys.executable, "-m", "chunklab", "strategies"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env)
    p.stdout.close()  # the reader went away, as `| head` does
    err = p.stderr.read()
    p.stderr.close()
    assert p.wait(timeout=120) == 141
    assert err == b""


# -- item 11: a lone surrogate is text like any other ---------------------------------------------

@pytest.mark.parametrize("name", ["token", "fixed", "recursive", "sentence"])
def test_a_lone_surrogate_is_chunked_by_every_strategy(name):
    from chunklab import Document, check_chunks, get_strategy

    text = "第一\ud800句。a\udfffb " * 20
    doc = Document("s", text)
    chunks = get_strategy(name, **({"size": 5} if name in ("token", "fixed") else {"target": 12})).split(doc)
    assert chunks and not check_chunks(doc, chunks)
    assert "".join(c.text for c in chunks).replace(" ", "") == text.replace(" ", "")


# -- item 12: Chunk fields are typed; the viewer escapes what it writes ---------------------------

@pytest.mark.parametrize("fields, message", [
    (("d", "<b>", 0, 1, "a"), "Chunk.index must be an int"),
    (("d", True, 0, 1, "a"), "Chunk.index must be an int"),
    (("d", 0, "0", 1, "a"), "Chunk.start must be an int"),
    ((7, 0, 0, 1, "a"), "Chunk.doc_id must be a str"),
    (("d", 0, 0, 1, b"a"), "Chunk.text must be a str"),
])
def test_chunk_fields_are_typed(fields, message):
    from chunklab import Chunk

    with pytest.raises(TypeError, match=message):
        Chunk(*fields)
    with pytest.raises(ValueError, match="Chunk.index must be an int >= 0"):
        Chunk("d", -1, 0, 1, "a")


def test_the_viewer_escapes_everything_it_writes():
    from chunklab import Chunk, Document
    from chunklab.viz import show_chunks

    evil = '<img src=x onerror="alert(1)">'
    doc = Document(evil, "甲乙" + evil + "丙丁")
    chunks = [Chunk(evil, 0, 0, 6, doc.text[0:6], meta={"path": [evil], "clause": evil}, context=evil),
              Chunk(evil, 1, 4, len(doc.text), doc.text[4:], meta={"level": evil, "strategy": "x"})]
    html = show_chunks(doc, chunks).html
    assert "<img" not in html and 'onerror="' not in html
