"""HTML read as text (issue 28, item 6): visible text, headings as Markdown lines, offsets into that text."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import chunklab
from chunklab import check_chunks
from chunklab.datasets import files as dfiles
from chunklab.datasets import load_corpus
from chunklab.datasets.questions import check_questions
from chunklab.parsing.html import html_to_text

ROOT = Path(__file__).resolve().parents[1]

MANUAL = """<!DOCTYPE html>
<html lang="zh-CN"><head><meta charset="utf-8"><title>备份工具使用手册</title>
<style>body { font-family: sans-serif } h1 { color: #333 } #toc > li { margin: 0 }</style>
<script>var x = "<p>不是正文</p>"; if (a < b) { alert("不显示"); }</script>
</head>
<body>
<!-- 导航：注释不显示 -->
<div class="nav"><ul id="toc"><li><a href="#a">安装</a></li><li><a href="#b">参数</a></li></ul></div>
<h1>备份工具<small>（第&nbsp;2&nbsp;版）</small></h1>
<p>本工具把数据目录<b>每天</b>备份到
   远程服务器。流程：检查 -&gt; 压缩 -&gt; 上传&#xff0c;失败时重试&#19977;次。</p>
<h2 id="a">安装</h2>
<div><div><p>在终端中运行：</p><pre>
# 安装依赖（这一行是注释，不是标题）
sudo apt-get install  backup-tool &amp;&amp; backup --init
</pre></div></div>
<h2 id="b">参数</h2>
<table class="params">
<thead><tr><th>参数</th><th>说明</th></tr></thead>
<tbody>
<tr><td><code>-d</code></td><td>数据目录，默认 <i>/var/data</i></td></tr>
<tr><td><code>-r</code></td><td>重试次数<br>（0 表示不重试）</td></tr>
<tr><td>-x</td><td><table><tr><td>内层</td><td>表格</td></tr></table></td></tr>
</tbody></table>
<h3>注意事项</h3>
<ol><li>备份期间不要<span>删除</span>源文件。</li><li>磁盘剩余空间应大于 20%。</li></ol>
<p>版权所有 &copy; 2025&ensp;北辰智联</p>
</body></html>
"""


def test_visible_text_of_a_chinese_manual():
    page = html_to_text(MANUAL)
    t = page.text
    assert page.title == "备份工具使用手册"
    for gone in ("font-family", "alert", "不是正文", "不显示", "注释不显示", "<", "&nbsp;", "&gt;", "&#"):
        assert gone not in t, gone
    assert "# 备份工具（第 2 版）" in t.split("\n")                      # nested tags in a heading, nbsp a space
    assert "本工具把数据目录每天备份到 远程服务器。流程：检查 -> 压缩 -> 上传，失败时重试三次。" in t
    assert "## 安装" in t.split("\n") and "## 参数" in t.split("\n") and "### 注意事项" in t.split("\n")
    # <pre> verbatim, fenced: its # line is not a heading, its double space kept
    assert "```\n# 安装依赖（这一行是注释，不是标题）\nsudo apt-get install  backup-tool && backup --init\n```" in t
    # a table is a Markdown table, one row a line; <br> in a cell is a space; a nested table flattened
    assert ("| 参数 | 说明 |\n| --- | --- |\n| -d | 数据目录，默认 /var/data |\n| -r | 重试次数 （0 表示不重试） |\n"
            "| -x | 内层 表格 |") in t
    assert "- 备份期间不要删除源文件。\n- 磁盘剩余空间应大于 20%。" in t
    assert t.endswith("版权所有 © 2025\u2002北辰智联")       # an en space is content, not markup
    assert page.stats == {"headings": 4, "tables": 1, "pre": 1, "dropped": 2}
    assert "\n\n\n" not in t and not any(line != line.rstrip() for line in t.split("\n"))


def test_headings_are_seen_by_the_heading_aware_strategies():
    doc = dfiles.html_document(MANUAL, "manual", "manual.html")
    chunks = chunklab.chunk(doc, "markdown", min=0)
    assert check_chunks(doc, chunks) == []
    paths = [c.meta["path"] for c in chunks]
    assert ["备份工具（第 2 版）", "安装"] in paths and ["备份工具（第 2 版）", "参数", "注意事项"] in paths
    assert not any(p and p[-1].startswith("安装依赖") for p in paths)           # the # line in <pre> is code


def test_malformed_html_never_raises_and_keeps_its_text():
    for source in ("<p>未闭合<p>第二段<h2>标题没有闭合<p>正文", "<table><tr><td>甲<td>乙<tr><td>丙",
                   "<head><title>无 body</title><p>头没有闭合也显示", "<pre>未闭合的 pre\n  缩进", "a < b > c &unknown; &",
                   ""):
        page = html_to_text(source)
        assert isinstance(page.text, str)
    assert html_to_text("<p>未闭合<p>第二段<h2>标题没有闭合<p>正文").text == "未闭合\n\n第二段\n\n## 标题没有闭合\n\n正文"
    assert html_to_text("<table><tr><td>甲<td>乙<tr><td>丙").text == "| 甲 | 乙 |\n| --- | --- |\n| 丙 |  |"
    assert html_to_text("<head><title>无 body</title><p>头没有闭合也显示").text == "头没有闭合也显示"
    assert html_to_text("a < b > c &unknown; &").text == "a < b > c &unknown; &"


def test_folder_corpus_reads_html_as_text_and_browser_evidence_validates(tmp_path):
    root = tmp_path / "docs"
    (root / "manual").mkdir(parents=True)
    (root / "manual" / "backup.html").write_text(MANUAL, encoding="utf-8")
    (root / "manual" / "old.htm").write_text("<h1>旧版</h1><p>A&nbsp;&amp;&nbsp;B</p>", encoding="utf-8")
    docs = {d.id: d for d in dfiles.load_folder(root)}
    doc = docs["manual/backup"]
    assert doc.meta["source_kind"] == "html" and doc.meta["type"] == "html" and doc.title == "备份工具使用手册"
    assert doc.text == html_to_text(MANUAL).text and doc.meta["source_chars"] == len(MANUAL)
    assert docs["manual/old"].text == "# 旧版\n\nA & B"
    # evidence as a browser shows it: arrows, spaces, decoded entities, a table row
    q = tmp_path / "q.jsonl"
    q.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in [
        {"id": "q1", "question": "流程？", "evidence": "检查 -> 压缩 -> 上传", "doc": "backup.html"},
        {"id": "q2", "question": "版本？", "evidence": "第 2 版", "doc": "manual/backup"},
        {"id": "q3", "question": "-d 是什么？", "evidence": "数据目录，默认 /var/data"},
        {"id": "q4", "question": "安装命令？", "evidence": "backup-tool && backup --init"},
    ]) + "\n", encoding="utf-8")
    corpus = load_corpus(root)
    questions, problems = check_questions(str(q), corpus)
    assert problems == [] and len(questions) == 4
    load_corpus.cache_clear()


def test_cli_text_of_an_html_file_is_the_text_chunklab_sees(tmp_path):
    page = tmp_path / "page.html"
    page.write_text(MANUAL, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-m", "chunklab", "text", str(page)], capture_output=True, text=True,
                       timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout == html_to_text(MANUAL).text
    j = json.loads(subprocess.run([sys.executable, "-m", "chunklab", "text", str(page), "--json"],
                                  capture_output=True, text=True, timeout=120, env=env).stdout)
    assert j["text"] == r.stdout and j["source_kind"] == "html"
    chunks = json.loads(subprocess.run([sys.executable, "-m", "chunklab", "chunk", str(page), "-s", "markdown",
                                        "--json"], capture_output=True, text=True, timeout=120, env=env).stdout)["chunks"]
    assert chunks and all(r.stdout[c["start"]:c["end"]] == c["text"] for c in chunks)
