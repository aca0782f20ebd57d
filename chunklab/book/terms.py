"""One Chinese term per idea: the book's vocabulary, its code names, and the synonyms it retired.

Each :class:`Term` is declared once here and once in the glossary (Appendix B, which shows this
table); a chapter that writes a retired synonym in its prose fails the build
(``tests/test_terms.py`` calls :func:`retired_uses` on every chapter's markdown).

Only prose is checked: code cells, inline code (```diluted```), ``{eval}`` roles, link targets
and HTML comments are skipped, so a code name may always be quoted as code.

>>> [(t.zh, found) for t, found, _ in retired_uses("模型先走兜底链，再看命中率@5。")]
[('命中率（hit@5）', '命中率@5'), ('回退', '兜底')]
>>> retired_uses("症状 `diluted` 即被稀释。")
[]
"""
from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Term", "TERMS", "retired_uses", "terms_table"]


@dataclass(frozen=True)
class Term:
    """A term: its Chinese name, the code name it stands for, and the patterns it retired."""

    zh: str
    code: str
    meaning: str
    retired: tuple[str, ...] = ()   # regular expressions matched against prose


def _english_word(word: str) -> str:
    """A bare English code name in prose (not inside a longer identifier)."""
    return rf"(?<![A-Za-z_]){word}(?![A-Za-z_])"


TERMS: tuple[Term, ...] = (
    Term("命中率（hit@5）", "hit", "k=5 时，前 5 块中有一块装着某段证据的至少一半",
         (r"命中率@\d+", r"hit@5\s*命中率")),
    Term("同预算命中率", "hit（budget=…）", "按上下文预算取块时的命中率",
         (r"同预算\s*hit", r"同预算的命中率", r"预算内命中率")),
    Term("回退", "fallback", "一种切法或解析失败、切不动时改用下一种（回退链：fallback chain）",
         (r"兜底",)),
    Term("向量检索", 'engine="dense"', "嵌入向量按余弦相似度排序的检索",
         (r"稠密检索",)),
    Term("块长", "target / size", "一块的目标长度（字符或 token）",
         (r"块大小", r"块的大小")),
    Term("标题路径", "prefix=True → Chunk.context", "每块附带的“文档标题 > 章 > 节”，只参与检索，不改动块的文字",
         (r"面包屑", r"上下文前缀")),
    Term("切分", "chunking", "把文档切成块", (r"(?<![部切])分块", r"切块")),
    Term("未入索引", "not_indexed", "未命中症状：证据的文字没有进入任何块", (_english_word("not_indexed"),)),
    Term("过碎", "too_small", "未命中症状：证据散在多个小块里", (_english_word("too_small"),)),
    Term("被切断", "cut", "未命中症状：证据被块边界切开", ()),
    Term("被稀释", "diluted", "未命中症状：块太大，证据被无关文字稀释", (_english_word("diluted"),)),
    Term("被挤出", "crowded", "未命中症状：近重复块挤占了 top-k", (_english_word("crowded"),)),
    Term("排名靠后", "ranked_low", "未命中症状：证据完整但排名靠后", (_english_word("ranked_low"),)),
    Term("未能区分", "inconclusive", "判定词：区间太宽，数据说不出谁好", (r"无差异",)),
    Term("尺子", "ruler", "比较切法时取多少上下文的规则：固定 k 或同预算", ()),
    Term("判定词", "verdict", "由 chunklab.book.claims.verdict 从结果算出的结论词", ()),
)

_SKIP = re.compile(r"`[^`\n]*`|\{eval\}`[^`]*`|\]\([^)]*\)|<!--.*?-->|https?://\S+", re.S)


def retired_uses(markdown: str) -> list[tuple[Term, str, int]]:
    """Every retired synonym in *markdown* prose: ``(term, the text found, line number)``."""
    found = []
    for lineno, line in enumerate(markdown.splitlines(), 1):
        prose = _SKIP.sub(" ", line)
        for term in TERMS:
            for pattern in term.retired:
                for m in re.finditer(pattern, prose):
                    found.append((term, m.group(0), lineno))
    return found


def terms_table() -> list[list[str]]:
    """Rows ``[term, code name, meaning, retired synonyms]`` for the glossary."""
    def shown(p: str) -> str:
        return re.sub(r"\(\?<!\[A-Za-z_\]\)|\(\?!\[A-Za-z_\]\)", "", p).replace(r"\d+", "5").replace(r"\s*", " ")
    return [[t.zh, t.code, t.meaning, "、".join(shown(p) for p in t.retired) or "—"] for t in TERMS]


