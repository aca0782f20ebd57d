"""Routes made visible, and the routes fixed for users' files (issue 28, item 7).

The book's corpora must route exactly as they did before the fixes: the chapters' numbers depend
on it. ``tests/data/routes_book.json`` holds ``[content type, strategy used]`` of every document
of every corpus the chapters load, recorded before the router changed.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from chunklab import Document
from chunklab.datasets import load_corpus
from chunklab.datasets.files import load_folder
from chunklab.strategies.router import THRESHOLDS, route, route_lines, route_table

ROOT = Path(__file__).resolve().parents[1]

BOOK_ROUTES = json.loads((Path(__file__).parent / "data" / "routes_book.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(BOOK_ROUTES))
def test_book_corpora_route_as_before(name):
    corpus = load_corpus(name)
    now = {}
    for d in corpus.documents:
        r = route(d)
        now[d.id] = [r.doc_type, r.strategy.name]
    assert now == BOOK_ROUTES[name]


# -- the routes that were plainly wrong ------------------------------------------------------------

OS_MD = ("# OS\n\n<!--introduced_in=v0.10.0-->\n\nThe `node:os` module provides operating system-related utility "
         "methods.\n\n## `os.EOL`\n\nThe operating system-specific end-of-line marker.\n\n## Signal constants\n\n"
         "<table>\n" + "".join(f"  <tr>\n    <td><code>SIG{n}</code></td>\n    <td>Sent to a process to signal {n}."
                                 f"</td>\n  </tr>\n" for n in ("HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "BUS",
                                                                "FPE", "KILL", "USR1", "SEGV", "USR2")) + "</table>\n")

HELP_TXT = ("# 用法: backup [选项] 目录\n# 每天凌晨备份一次\nbackup -d /var/data\n# 指定重试次数\n"
            "backup -r 3 /var/data\n# 排除日志文件\nbackup --exclude \"*.log\" /var/data\n\n# 查看帮助\nbackup --help\n")

MANUAL_HTML = ("<html><head><title>备份手册</title><style>h1{color:red}</style></head><body><h1>备份手册</h1>"
               "<p>本手册说明备份工具。</p><h2>安装</h2><p>运行安装脚本。</p><pre>&lt;div class=\"x\"&gt;\n&lt;p&gt;示例"
               "&lt;/p&gt;\n&lt;/div&gt;\n&lt;span&gt;\n</pre><h2>配置</h2><p>编辑配置文件。</p></body></html>")


def _folder(tmp_path, files):
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return {d.id: d for d in load_folder(tmp_path)}


def test_markdown_with_an_html_table_is_markdown(tmp_path):
    doc = _folder(tmp_path, {"os.md": OS_MD})["os"]
    r = route(doc)
    assert r.features["html_table_ratio"] >= THRESHOLDS["html_table_ratio"]     # the old rule's trigger
    assert r.doc_type == "markdown", r.explain()


@pytest.mark.skipif(not Path("/usr/share/doc/nodejs/api/os.md").is_file(), reason="Node's API docs not installed")
def test_nodes_os_md_is_markdown():
    from chunklab.datasets.files import file_document
    assert route(file_document("/usr/share/doc/nodejs/api/os.md", "os")).doc_type == "markdown"


def test_a_help_txt_with_comment_lines_is_not_markdown(tmp_path):
    docs = _folder(tmp_path, {"help.txt": HELP_TXT, "same.md": HELP_TXT})
    r = route(docs["help"])
    assert r.features["md_headings"] >= THRESHOLDS["md_headings"] and r.features["hash_comments"]
    assert r.doc_type != "markdown", r.explain()
    assert route(docs["same"]).doc_type == "markdown"        # a .md file's # lines are headings
    md_like = "# 安装\n\n运行脚本。\n\n# 配置\n\n编辑文件。\n"   # blank lines after: headings, even in a .txt
    assert route(_folder(tmp_path, {"notes.txt": md_like})["notes"]).doc_type == "markdown"


def test_an_html_manual_routes_by_what_its_text_is(tmp_path):
    doc = _folder(tmp_path, {"manual.html": MANUAL_HTML})["manual"]
    r = route(doc)
    assert r.features["html_source"] and r.features["html_tags"] >= THRESHOLDS["html_tags"]   # tags shown in <pre>
    assert r.doc_type == "markdown" and r.strategy.name == "markdown", r.explain()
    chunks = route(doc, min=0).split(doc)
    assert [c.meta["path"] for c in chunks][-1] == ["备份手册", "配置"]
    raw = Document("raw", MANUAL_HTML)                      # raw HTML (not read from a file) is still HTML
    assert route(raw).doc_type == "html"


# -- routes made visible ---------------------------------------------------------------------------

def test_route_table_says_strategy_why_and_fallback():
    docs = [Document("law", "第一条　为了规范考勤，制定本制度。\n第二条　本制度适用于全体员工。"),
            Document("notes", "随便写几句话。没有结构。")]
    rows = route_table(docs)
    assert [(r["doc"], r["strategy"], r["type"]) for r in rows] == [("law", "clause", "clause"),
                                                                   ("notes", "recursive", "prose")]
    assert rows[0]["decided_by"] == {"article_marks": 2, "chapter_marks": 0} and rows[1]["decided_by"] == {}
    assert rows[0]["fallback"] is None and "第X条" in rows[0]["reason"]
    lines = route_lines(rows)
    assert lines[0].startswith("routes (auto): 2 documents: clause (clause) 1, recursive (prose) 1")
    assert "law" in lines[1] and "-> clause (clause)  article_marks=2, chapter_marks=0" in lines[1]
    many = route_lines(rows * 11)                           # past ROUTES_SHOWN: a count, unless every=True
    assert len(many) == 1 and "--routes lists each document" in many[0]
    assert len(route_lines(rows * 11, every=True)) == 23


def test_a_fallback_is_shown(monkeypatch):
    from chunklab.base import _REGISTRY
    monkeypatch.delitem(_REGISTRY, "clause")
    (row,) = route_table([Document("law", "第一条　为了规范考勤，制定本制度。\n第二条　本制度适用于全体员工。")])
    assert row["strategy"] == "recursive" and "clause" in row["fallback"]
    assert "fallback: " in route_lines([row])[1]


def _cli(args):
    return subprocess.run([sys.executable, "-m", "chunklab", *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_eval_and_compare_print_routes_for_auto(tmp_path):
    _folder(tmp_path, {"os.md": OS_MD, "help.txt": HELP_TXT, "manual.html": MANUAL_HTML})
    q = tmp_path / "q.jsonl"
    q.write_text('{"id": "q1", "question": "end-of-line marker?", "evidence": "end-of-line marker", "doc": "os"}\n'
                 '{"id": "q2", "question": "重试次数", "evidence": "指定重试次数"}\n', encoding="utf-8")
    base = ["--corpus", str(tmp_path), "--questions", str(q), "--k", "2"]
    r = _cli(["eval", "-s", "auto", *base])
    assert r.returncode == 0, r.stderr
    assert "routes (auto): 3 documents" in r.stdout
    assert any(line.strip().startswith("os ") and "-> markdown (markdown)  md_headings=" in line
               for line in r.stdout.splitlines())
    j = json.loads(_cli(["eval", "-s", "auto", *base, "--json"]).stdout)
    assert {x["doc"]: x["strategy"] for x in j["routes"]} == {"help": "recursive", "manual": "markdown", "os": "markdown"}
    plain = json.loads(_cli(["eval", "-s", "recursive", *base, "--json"]).stdout)
    assert "routes" not in plain
    c = _cli(["compare", "fixed:size=200", "auto:target=300", *base])
    assert c.returncode == 0, c.stderr and "B: routes (auto): 3 documents" in c.stdout
    cj = json.loads(_cli(["compare", "fixed:size=200", "auto:target=300", *base, "--json"]).stdout)
    assert all("routes_b" in entry and "routes_a" not in entry for entry in cj.values())


def test_the_report_has_a_routes_section():
    from chunklab.tools.report import render_html, render_markdown

    rows = route_table([Document("law", "第一条　为了规范考勤，制定本制度。\n第二条　本制度适用于全体员工。")])
    data = {"run": {"corpus": "c", "documents": 1, "chars": 10, "questions": 1, "config": "auto", "retriever": "bm25",
                    "ruler": "k=5"}, "headline": [], "routes": rows}
    page = render_html(data, figures=False)
    assert "<h2>Routes</h2>" in page and "article_marks=2" in page and "auto routed 1 documents: clause (clause) 1" in page
    md = render_markdown(data)
    assert "## Routes" in md and "| law | clause | clause | article_marks=2, chapter_marks=0 |" in md
    assert "Routes" not in render_html({**data, "routes": None}, figures=False)
