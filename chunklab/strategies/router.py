"""The router: look at a document, say what kind it is, and pick a strategy with a fallback chain.

:func:`route` measures a handful of simple features (:func:`features`), applies
the rules of :data:`RULES` in order (the first that fires wins) and returns a
:class:`RoutedStrategy`: a strategy bound to that decision, whose
:meth:`~RoutedStrategy.explain` says in Chinese which features crossed which
thresholds. The same class is registered as the strategy ``auto``, which
routes every document it splits on its own.

The order of the rules matters and is deliberate: a Python file has ``#``
comment lines that look like Markdown headings, so code is tested first; an
FAQ's ``问：`` lines look like speaker turns, so FAQ comes before dialogue; a
law written in Markdown is still a law, so 第X条 comes before Markdown
headings; OCR-like text (almost no punctuation, lines broken mid-sentence) is
tested last, just before plain prose (claim C30: OCR → fixed).

Default sizes follow article 002 §6 (claim C22): target 500, max 1200,
min 150, overlap 50 characters, prefix on.
"""
from __future__ import annotations

import ast
import re
from collections import Counter
from types import MappingProxyType
from typing import Any, Iterable, Mapping

from ..base import _REGISTRY, Span, Strategy, get_strategy, register, size_params
from ..core import Document, as_document
from ..params import Param, ParamError
from ..parsing.markdown import _Fences
from .structure import CLAUSE_FALLBACK_CHAIN, classify_clause_line, markdown_headings

__all__ = ["route", "features", "RoutedStrategy", "ROUTES", "RULES", "THRESHOLDS", "TYPE_NAMES", "route_table",
           "route_lines", "ROUTES_SHOWN"]

#: Content type -> strategies in order: the first is used; the others are its fallback levels
#: (used when an earlier one is not registered or rejects the parameters, and passed to
#: ``clause`` as its own fallback chain).
ROUTES: dict[str, tuple[str, ...]] = {
    "code": ("code", "recursive"),
    "html": ("html", "recursive", "fixed"),
    "faq": ("qa_pair", "paragraph", "recursive"),
    "dialogue": ("dialogue", "line", "recursive"),
    "clause": ("clause", "recursive", "fixed"),
    "table": ("table", "recursive"),
    "markdown": ("markdown", "recursive", "fixed"),
    "ocr": ("fixed",),
    "prose": ("recursive", "fixed"),
}

#: Chinese names of the content types, for :meth:`RoutedStrategy.explain`.
TYPE_NAMES: dict[str, str] = {
    "code": "源代码", "html": "HTML 网页", "faq": "问答（FAQ）", "dialogue": "对话记录",
    "clause": "法规/合同条款", "table": "表格为主", "markdown": "Markdown 标题结构",
    "ocr": "类 OCR 文本（几乎无标点、断行）", "prose": "无结构散文",
}

#: Every threshold the rules use, in one place (the chapter prints this table).
THRESHOLDS: dict[str, float] = {
    "python_defs": 1,          # def / class / import statements in a file that parses
    "html_tags": 3,            # block or heading tags
    "html_table_ratio": 0.5,   # share of the document's characters inside <table> elements
    "qa_marks": 2,             # at least this many question marks (问：/Q:) and as many answers
    "question_headings": 2,    # Markdown headings ending in ？ / ?
    "turn_ratio": 0.5,         # share of non-blank lines that are turns of a repeated speaker
    "speakers_min": 2,
    "speakers_max": 8,
    "article_marks": 2,        # lines starting with 第X条
    "table_ratio": 0.5,        # share of non-blank characters on Markdown table rows
    "md_headings": 2,
    "code_line_ratio": 0.4,    # share of non-blank lines outside code fences that look like code
    "numbered_lines": 3,       # 一、 （一） 1. 1.1 lines
    "numbered_ratio": 0.3,
    "ocr_punct_per_100": 1.0,  # punctuation marks per 100 non-space characters
    "ocr_min_chars": 50,
    "broken_line_ratio": 0.8,  # lines ending without punctuation while the next line goes on
    "broken_punct_per_100": 2.0,
    "broken_min_lines": 5,
    "hash_tight_ratio": 0.5,   # a .txt file's "# " lines directly followed by text: comments, not headings
}

_PUNCT = set("，。、；：？！…—“”‘’（）《》「」『』【】,.;:?!()\"'")
_LINE_END_OK = set("，。、；：？！…”’）》」』】,.;:?!)\"'>|`*")
#: A line that looks like code: a keyword at its start, an assignment, or a C-like / Python
#: block punctuation at its end (ASCII lines only for the trailing colon).
_CODE_LINE = re.compile(
    r"\s*(?:def |class |import |from \S+ import |async def |@\w|function\b|const |let |var |export |"
    r"return\b|yield\b|raise\b|pass\b|with |for |while |if |elif |else\b|try\b|except\b|finally\b|"
    r"#include|public |private |package |\}|//|/\*)"
    r"|\s*[A-Za-z_][\w.]*(?:\[[^\]]*\])?\s*[-+*/|&]?=(?!=)\s*\S"
    r"|.*[;{]\s*$|[\x00-\x7f]*:\s*$"
)
_JS_HINT = re.compile(r"^\s*(?:function\b|const |let |var |export |import .* from ['\"])|=>", re.M)
_SPEAKER = re.compile(
    r"\s*(?:[\[(（]?\d{1,2}:\d{2}(?::\d{2})?[\])）]?\s*)?([^\s：:，。,.!?！？\[\]()#|<>]{1,12})\s*[：:]"
)
_QUESTION = re.compile(r"\s*(?:[-*]\s*)?(?:\*\*)?(?:问|问题|提问|Q|Question)\s*\d*\s*[：:]", re.I)
_ANSWER = re.compile(r"\s*(?:[-*]\s*)?(?:\*\*)?(?:答|回答|答复|A|Answer)\s*\d*\s*[：:]", re.I)
_MD_TABLE_ROW = re.compile(r"\s*\|.*\|\s*$")
_HTML_TAG = re.compile(r"<(?:h[1-6]|p|div|li|ul|ol|table|tr|td|th|pre|section|article|body|html|br|span|a)\b",
                       re.I)
_HTML_TABLE = re.compile(r"<table\b.*?(?:</table\s*>|$)", re.I | re.S)


def features(document: Document | str) -> dict[str, Any]:
    """The measurable features the router decides on (all plain numbers or bools).

    ``chars`` and ``nonspace`` (lengths), ``lines`` (non-blank lines),
    ``python_parses`` / ``python_defs`` (the text parses with :mod:`ast`;
    number of def / class / import statements), ``js_hints`` (lines such as
    ``const x =``, ``function f``, ``=>``), ``code_line_ratio``, ``html_tags``,
    ``html_table_ratio``, ``questions`` / ``answers`` (问：/Q: and 答：/A:
    lines), ``question_headings``, ``turn_ratio`` / ``speakers`` (lines that
    start with ``Name：`` for a name used at least twice, optionally after a
    ``[10:02]`` timestamp), ``article_marks`` (lines starting with 第X条),
    ``chapter_marks`` (第X编/章/节 lines), ``numbered_lines`` /
    ``numbered_ratio`` (一、 （一） 1. 1.1 lines), ``md_headings`` /
    ``md_fences``, ``table_ratio`` (share of non-blank characters on ``| a |
    b |`` rows), ``punct_per_100`` and ``broken_line_ratio`` (share of lines,
    among those followed by another non-blank line, that end without
    punctuation). What the file was: ``text_file`` (a ``.txt``, ``meta["type"] == "text"``),
    ``html_source`` (text read from an HTML page, ``meta["source_kind"] == "html"``: its
    headings are Markdown lines, it is no longer HTML); ``hash_comments`` (a text file whose
    ``#`` lines are all single ``"# "`` lines, mostly followed directly by more text: shell-style
    comments, not Markdown headings).

    >>> f = features("第一条　为了规范考勤，制定本制度。\\n第二条　本制度适用于全体员工。")
    >>> f["article_marks"], f["lines"]
    (2, 2)
    """
    doc = as_document(document)
    text = doc.text
    raw_lines = text.split("\n")
    lines = [ln.rstrip("\r") for ln in raw_lines if ln.strip()]
    n = len(lines)
    nonspace = sum(1 for ch in text if not ch.isspace())
    f: dict[str, Any] = {"chars": len(text), "nonspace": nonspace, "lines": n}

    # code
    parses, defs = False, 0
    if "\x00" not in text:
        try:
            tree = ast.parse(text)
            parses = True
            defs = sum(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import,
                                         ast.ImportFrom)) for node in tree.body)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass
    f["python_parses"], f["python_defs"] = parses, defs
    f["js_hints"] = len(_JS_HINT.findall(text))
    outside = _outside_fences(lines)
    f["code_line_ratio"] = _ratio(sum(1 for ln in outside if _CODE_LINE.match(ln)), len(outside))

    # html
    f["html_tags"] = len(_HTML_TAG.findall(text))
    f["html_document"] = bool(re.match(r"\s*<(?:!doctype|html)\b", text, re.I))
    table_chars = sum(len(m.group(0)) for m in _HTML_TABLE.finditer(text)) if "<table" in text.lower() else 0
    f["html_table_ratio"] = _ratio(table_chars, len(text))

    # faq and dialogue
    f["questions"] = sum(1 for ln in lines if _QUESTION.match(ln))
    f["answers"] = sum(1 for ln in lines if _ANSWER.match(ln))
    heads: list = []
    if "#" in text or "\n==" in text or "\n--" in text:
        heads, _ = markdown_headings(text)
    f["md_headings"] = len(heads)
    f["question_headings"] = sum(1 for h in heads if h[3].endswith(("？", "?")))
    # NOTE: half the number of fence-marker lines, not the number of fenced blocks (``_Fences``):
    # the two differ only for nested or unclosed fences, and this count is printed in
    # explain() texts, so it stays as it was.
    f["md_fences"] = len(re.findall(r"^ {0,3}(?:```|~~~)", text, re.M)) // 2
    names = []
    for ln in lines:
        m = _SPEAKER.match(ln)
        if m and not _QUESTION.match(ln) and not _ANSWER.match(ln) and not m.group(1).startswith("第"):
            names.append(m.group(1))
    counts = Counter(names)
    repeated = {k for k, v in counts.items() if v >= 2}
    f["speakers"] = len(repeated)
    f["turn_ratio"] = _ratio(sum(counts[k] for k in repeated), n)

    # clauses
    articles = chapters = numbered = 0
    for ln in lines:
        c = classify_clause_line(ln)
        if c is None:
            continue
        if c[0] == "heading":
            chapters += 1
        elif c[1] == 0:
            articles += 1
        else:
            numbered += 1
    f["article_marks"], f["chapter_marks"], f["numbered_lines"] = articles, chapters, numbered
    f["numbered_ratio"] = _ratio(numbered, n)

    # tables
    nonblank_chars = sum(len(ln.strip()) for ln in lines)
    f["table_ratio"] = _ratio(sum(len(ln.strip()) for ln in lines if _MD_TABLE_ROW.match(ln)), nonblank_chars)

    # what the file was: a .txt whose "# " lines are comments; text read from HTML
    meta = doc.meta or {}
    f["text_file"] = meta.get("type") == "text"
    f["html_source"] = meta.get("source_kind") == "html"
    f["hash_comments"] = f["text_file"] and _hash_comments(raw_lines)

    # OCR-likeness
    punct = sum(1 for ch in text if ch in _PUNCT)
    f["punct_per_100"] = round(100 * punct / nonspace, 2) if nonspace else 0.0
    followed = [(a, b) for a, b in zip(raw_lines, raw_lines[1:]) if a.strip() and b.strip()]
    broken = sum(1 for a, _ in followed if a.rstrip()[-1] not in _LINE_END_OK)
    f["broken_line_ratio"] = _ratio(broken, len(followed))
    return f


def _hash_comments(raw_lines: list[str]) -> bool:
    """Are the ``#`` lines comments (``# 显示帮助``, then the command) rather than headings? Only single
    ``# `` lines, at least two, and at least :data:`THRESHOLDS` ``hash_tight_ratio`` of them followed
    directly by a non-blank line (a Markdown heading is followed by a blank line or a deeper heading)."""
    hashes = [i for i, ln in enumerate(raw_lines) if ln.startswith("#")]
    if len(hashes) < 2 or any(not re.match(r"#(?:\s|$)", raw_lines[i]) for i in hashes):
        return False
    tight = sum(1 for i in hashes if i + 1 < len(raw_lines) and raw_lines[i + 1].strip())
    return tight >= THRESHOLDS["hash_tight_ratio"] * len(hashes)


def _outside_fences(lines: list[str]) -> list[str]:
    """The lines not inside Markdown code fences (so a README's examples do not make it "code")."""
    fences = _Fences()
    return [ln for ln in lines if not fences.code(0, ln)]


def _ratio(a: float, b: float) -> float:
    return round(a / b, 3) if b else 0.0


def _rules() -> list[tuple[str, str, Any]]:
    """(type, Chinese reason template, predicate) in the order they are tried."""
    T = THRESHOLDS
    return [
        ("code", "Python 可被 ast 解析，且有 {python_defs} 个 def/class/import 语句（阈值 ≥ {t[python_defs]:g}）",
         lambda f: f["python_parses"] and f["python_defs"] >= T["python_defs"]),
        # NOTE: HTML rules look at raw HTML only: a Markdown file with an HTML table in it (Node's os.md)
        # is Markdown, and text read from an HTML page is no longer HTML.
        ("table", "HTML 文档里 <table> 占全文 {html_table_ratio:.0%} 的字符（阈值 ≥ {t[html_table_ratio]:.0%}）",
         lambda f: f["html_tags"] >= T["html_tags"] and f["html_table_ratio"] >= T["html_table_ratio"]
         and not f["html_source"] and (f["html_document"] or f["md_headings"] < T["md_headings"])),
        ("html", "文本以 <html> 或 <!doctype> 开头",
         lambda f: f["html_document"] and not f["html_source"]),
        ("html", "有 {html_tags} 个 HTML 块级/标题标签（阈值 ≥ {t[html_tags]:g}），Markdown 标题 {md_headings} 个"
                 "（少于 {t[md_headings]:g}）",
         lambda f: f["html_tags"] >= T["html_tags"] and f["md_headings"] < T["md_headings"] and not f["html_source"]),
        ("faq", "有 {questions} 行「问：/Q:」、{answers} 行「答：/A:」（阈值各 ≥ {t[qa_marks]:g}）",
         lambda f: f["questions"] >= T["qa_marks"] and f["answers"] >= T["qa_marks"]),
        ("faq", "有 {question_headings} 个以问号结尾的 Markdown 标题（阈值 ≥ {t[question_headings]:g}）",
         lambda f: f["question_headings"] >= T["question_headings"]),
        ("dialogue", "{turn_ratio:.0%} 的非空行是「说话人：」轮次（阈值 ≥ {t[turn_ratio]:.0%}），"
                     "重复出现的说话人 {speakers} 个（阈值 {t[speakers_min]:g}–{t[speakers_max]:g}）",
         lambda f: f["turn_ratio"] >= T["turn_ratio"] and T["speakers_min"] <= f["speakers"] <= T["speakers_max"]),
        ("clause", "有 {article_marks} 行以「第X条」开头（阈值 ≥ {t[article_marks]:g}），章节标记 {chapter_marks} 个",
         lambda f: f["article_marks"] >= T["article_marks"]),
        ("table", "Markdown 表格行占非空字符的 {table_ratio:.0%}（阈值 ≥ {t[table_ratio]:.0%}）",
         lambda f: f["table_ratio"] >= T["table_ratio"]),
        ("code", "代码围栏外 {code_line_ratio:.0%} 的非空行像代码（阈值 ≥ {t[code_line_ratio]:.0%}），"
                 "JS 特征 {js_hints} 处",
         lambda f: f["code_line_ratio"] >= T["code_line_ratio"] and f["lines"] >= 3),
        ("markdown", "有 {md_headings} 个 Markdown 标题（阈值 ≥ {t[md_headings]:g}），代码围栏 {md_fences} 对",
         lambda f: f["md_headings"] >= T["md_headings"] and not f["hash_comments"]),
        ("clause", "有 {numbered_lines} 行以「一、（一）1. 1.1」编号开头，占非空行 {numbered_ratio:.0%}"
                   "（阈值 ≥ {t[numbered_lines]:g} 行且 ≥ {t[numbered_ratio]:.0%}）",
         lambda f: f["numbered_lines"] >= T["numbered_lines"] and f["numbered_ratio"] >= T["numbered_ratio"]),
        ("ocr", "每 100 个非空白字符只有 {punct_per_100:g} 个标点（阈值 < {t[ocr_punct_per_100]:g}）",
         lambda f: f["nonspace"] >= T["ocr_min_chars"] and f["punct_per_100"] < T["ocr_punct_per_100"]),
        ("ocr", "{broken_line_ratio:.0%} 的行在句中断开（阈值 ≥ {t[broken_line_ratio]:.0%}），"
                "且每 100 字只有 {punct_per_100:g} 个标点（阈值 < {t[broken_punct_per_100]:g}）",
         lambda f: f["lines"] >= T["broken_min_lines"] and f["broken_line_ratio"] >= T["broken_line_ratio"]
         and f["punct_per_100"] < T["broken_punct_per_100"]),
    ]


#: The rules, in order: ``(type, reason template in Chinese, predicate on the features)``.
RULES = _rules()


def _fired(f: dict[str, Any]) -> tuple[str, str] | None:
    """``(type, reason template)`` of the first rule that fires on features ``f``, or None."""
    for kind, template, pred in RULES:
        if pred(f):
            return kind, template
    return None


def detect(f: dict[str, Any]) -> tuple[str, str]:
    """The content type for features ``f`` and the Chinese reason (first rule that fires)."""
    fired = _fired(f)
    if fired is not None:
        return fired[0], fired[1].format(t=THRESHOLDS, **f)
    return "prose", "以上结构特征都未达到阈值，按无结构散文处理"


#: ``route_lines`` lists every document up to this many; past it, a count per strategy
#: (the command line's ``--routes`` lists them all).
ROUTES_SHOWN = 20


def route_table(documents: Iterable[Document], **params: Any) -> list[dict[str, Any]]:
    """The route of every document, as ``auto`` with ``params`` takes it: one dict per document with
    ``doc``, ``type`` (content type), ``strategy`` (the strategy that splits), ``chain``, ``reason``
    (Chinese, as :meth:`RoutedStrategy.explain`), ``decided_by`` (the features the deciding rule
    names, with their values; ``{}`` for prose) and ``fallback`` (why earlier strategies of the
    chain were skipped, or None).

    >>> [(r["doc"], r["strategy"], r["decided_by"]) for r in route_table([Document("law",
    ...     "第一条　为了规范考勤，制定本制度。\\n第二条　本制度适用于全体员工。")])]
    [('law', 'clause', {'article_marks': 2, 'chapter_marks': 0})]
    """
    rows = []
    for doc in documents:
        r = route(doc, **params)
        d = r._require()
        fired = _fired(d["features"])
        names = dict.fromkeys(re.findall(r"\{(\w+)", fired[1])) if fired else {}
        rows.append({"doc": doc.id, "type": d["type"], "strategy": d["used"], "chain": list(d["chain"]),
                     "reason": d["reason"], "decided_by": {k: d["features"][k] for k in names if k != "t"},
                     "fallback": "；".join(d["skipped"]) or None})
    return rows


def route_lines(rows: list[dict[str, Any]], every: bool = False) -> list[str]:
    """:func:`route_table` rows as report lines: ``doc -> strategy (type)  feature=value, ...`` for each
    document (when there are at most :data:`ROUTES_SHOWN`, or ``every``), else a count per route."""
    if not rows:
        return []
    counts = Counter((r["strategy"], r["type"]) for r in rows)
    summary = ", ".join(f"{s} ({t}) {n}" for (s, t), n in counts.most_common())
    fallbacks = sum(1 for r in rows if r["fallback"])
    head = f"routes (auto): {len(rows)} documents: {summary}" + (f"; {fallbacks} used a fallback" if fallbacks else "")
    if len(rows) > ROUTES_SHOWN and not every:
        return [head + " (--routes lists each document)"]
    width = min(max(len(r["doc"]) for r in rows), 40)
    lines = [head]
    for r in rows:
        why = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in r["decided_by"].items())
        lines.append(f"  {r['doc']:<{width}} -> {r['strategy']} ({r['type']})  {why or 'no structure feature over its threshold'}"
                     + (f"  fallback: {r['fallback']}" if r["fallback"] else ""))
    return lines


@register
class RoutedStrategy(Strategy):
    """A strategy chosen by looking at the document (registered as ``auto``).

    ``route(doc)`` returns one bound to ``doc``'s decision (``doc_type``,
    ``features``, ``chain``, :meth:`explain`); the decision is made once and
    cannot be changed, and splitting any other document with it raises
    ValueError (a document with the very same text is accepted: the decision
    is the same). ``get_strategy("auto")`` gives an unbound one that routes
    each document it splits. Splitting delegates to
    the first strategy of the chain that is registered and accepts the sizes;
    a skipped one is recorded in ``meta["route_fallback"]``. Every chunk
    records ``meta["route"]`` (the content type) and ``meta["routed_to"]``
    (the strategy used); ``meta["level"]`` is the level that produced it.

    Sizes (``target``, ``max``, ``min``, ``overlap``, ``length``, ``prefix``)
    are passed to the chosen strategy when it has them (``fixed`` gets
    ``size=target``); ``clause`` also gets the rest of the chain as its
    ``fallback``. With a ``target`` below 500 and no ``min`` / ``overlap``
    given, they default to ``min(150, target)`` and ``min(50, target // 10)``.

    >>> r = route("第一条　为了规范考勤，制定本制度。\\n第二条　本制度适用于全体员工。")
    >>> r.doc_type, r.chain
    ('clause', ('clause', 'recursive', 'fixed'))
    """

    name = "auto"
    family = "structure"
    summary = {"zh": "自动路由：按可测特征判断文档类型（法规、Markdown、代码、表格、对话、FAQ、OCR、散文），选策略和回退链",
               "en": "router: detect the content type from measurable features and pick a strategy with a fallback chain"}
    params = {**size_params(target=500, max=1200, min=150, overlap=50)}

    @classmethod
    def param_spec(cls) -> dict[str, Param]:
        spec = super().param_spec()
        spec["prefix"] = Param("bool", True, "put the document title and heading/clause path in Chunk.context")
        return spec

    def __init__(self, **kwargs: Any) -> None:
        if "target" in kwargs:
            target = self.params["target"].validate("target", kwargs["target"])
            # The C22 defaults (min 150, overlap 50) are meant for target 500: scale them down
            # for a smaller target instead of failing on "min > target".
            kwargs.setdefault("min", min(self.params["min"].default, target))
            kwargs.setdefault("overlap", min(self.params["overlap"].default, target // 10))
        super().__init__(**kwargs)
        self._decision: Mapping[str, Any] | None = None
        self._routed: tuple[str, str] | None = None   # (id, text) of the document decided for

    def _bind(self, doc: Document) -> None:
        """Decide for ``doc``, once: the decision is read-only and a strategy is bound only once."""
        if self._decision is not None:
            raise ValueError(f"this strategy is already routed for document {self._routed[0]!r}")
        self._decision = MappingProxyType(self._decide(doc))
        self._routed = (doc.id, doc.text)

    # -- the decision ----------------------------------------------------------
    def _decide(self, doc: Document) -> dict[str, Any]:
        f = features(doc)
        kind, reason = detect(f)
        chain = ROUTES[kind]
        used, skipped, strategy = None, [], None
        for i, name in enumerate(chain):
            if name not in _REGISTRY:
                skipped.append(f"策略 {name!r} 尚未注册")
                continue
            try:
                strategy = get_strategy(name, **self._params_for(name, chain[i + 1:], f))
            except (ParamError, ValueError, TypeError) as exc:
                skipped.append(f"策略 {name!r} 不接受这些参数：{exc}")
                continue
            used = name
            break
        return {"type": kind, "features": f, "reason": reason, "chain": chain, "used": used,
                "skipped": skipped, "strategy": strategy}

    def _params_for(self, name: str, rest: tuple[str, ...], f: dict[str, Any]) -> dict[str, Any]:
        spec = _REGISTRY[name].param_spec()
        values = {k: getattr(self, k) for k in ("target", "max", "min", "overlap", "length", "prefix")}
        out = {k: v for k, v in values.items() if k in spec}
        if "size" in spec and "target" not in spec:
            out["size"] = self.target
        if name == "clause":
            out["fallback"] = tuple(x for x in rest if x in CLAUSE_FALLBACK_CHAIN)
        if name == "code" and f.get("js_hints") and not f.get("python_parses"):
            out["language"] = "javascript"
        return out

    def _require(self) -> dict[str, Any]:
        if self._decision is None:
            raise ValueError("this 'auto' strategy routes each document when it splits it; "
                             "use chunklab.route(document) to see one decision")
        return self._decision

    @property
    def doc_type(self) -> str:
        """The detected content type (a key of :data:`ROUTES`)."""
        return self._require()["type"]

    @property
    def features(self) -> dict[str, Any]:
        """The measured features of the routed document (see :func:`features`)."""
        return dict(self._require()["features"])

    @property
    def chain(self) -> tuple[str, ...]:
        """The fallback chain for the detected type, first choice first."""
        return self._require()["chain"]

    @property
    def strategy(self) -> Strategy:
        """The strategy that actually splits (the first usable one of :attr:`chain`)."""
        return self._require()["strategy"]

    def explain(self) -> str:
        """Why this strategy, in Chinese: the type, the features and thresholds, the chain."""
        d = self._require()
        lines = [f"判定为「{TYPE_NAMES[d['type']]}」：{d['reason']}。",
                 f"回退链：{' → '.join(d['chain'])}；实际使用 {d['used']}。"]
        if d["skipped"]:
            lines.append("跳过：" + "；".join(d["skipped"]) + "。")
        lines.append(f"参数：target={self.target}，max={self.cap}，min={self.min}，overlap={self.overlap}，"
                     f"上下文前缀{'开' if self.prefix else '关'}。")
        return "\n".join(lines)

    def __repr__(self) -> str:
        base = super().__repr__()
        if self._decision is None:
            return base
        return f"{base[:-1]}{', ' if base[-2] != '(' else ''}route={self.doc_type!r} -> {self._decision['used']!r})"

    # -- splitting ---------------------------------------------------------------
    def _spans(self, doc: Document, start: int, end: int) -> Iterable[Span]:
        d = self._decision
        if d is None:
            sub = doc if (start, end) == (0, len(doc.text)) else Document(doc.id, doc.text[start:end])
            d = self._decide(sub)
        elif doc.text is not self._routed[1] and doc.text != self._routed[1]:
            # NOTE: the decision (type, chain, sizes) was measured on another text; applying it
            # here would silently chunk, say, a law as Markdown.
            raise ValueError(f"route() decided for document {self._routed[0]!r}; document {doc.id!r} has a "
                             f"different text, so that decision does not apply to it: use "
                             f"chunklab.get_strategy('auto'), which routes every document it splits")
        strategy: Strategy = d["strategy"]
        extra: dict[str, Any] = {"route": d["type"], "routed_to": d["used"]}
        if d["skipped"]:
            extra["route_fallback"] = "；".join(d["skipped"])
        for s, e, meta in strategy._spans(doc, start, end):
            yield s, e, {**meta, **extra, "level": meta.get("level", strategy.name)}


def route(document: Document | str, **params: Any) -> RoutedStrategy:
    """Detect ``document``'s content type and return the strategy chosen for it.

    ``params`` are the sizes (default: target 500, max 1200, min 150, overlap
    50, prefix on). The result has ``doc_type``, ``features``, ``chain``,
    ``strategy`` and :meth:`~RoutedStrategy.explain`, and splits ``document``
    (or a document with the same text); splitting another document raises
    ValueError, since the decision is ``document``'s. To route every document
    of a corpus, use ``get_strategy("auto")``.

    >>> doc = "# 手册\\n## 病假\\n病假需提交证明。\\n## 年假\\n年假按工龄计算。"
    >>> r = route(doc, min=0)
    >>> r.doc_type, [c.meta["path"] for c in r.split(doc)]
    ('markdown', [['手册', '病假'], ['手册', '年假']])
    """
    doc = as_document(document)
    r = RoutedStrategy(**params)
    r._bind(doc)
    return r
