"""The ``code`` strategy: golden tests on the standard library, fallbacks, and properties."""
from __future__ import annotations

import ast
import json
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import chunklab
from chunklab import Document, check_chunks
from chunklab.length import count_tokens
from chunklab.params import ParamError
from chunklab.strategies.code import language_for_path, tree_sitter_available

JSON_DIR = Path(json.__file__).parent
STDLIB_FILES = [JSON_DIR / "__init__.py", JSON_DIR / "decoder.py", JSON_DIR / "encoder.py",
                Path(textwrap.__file__)]


def _def_spans(src: str):
    """(name, start, end) of every function and method, decorators included, from the AST."""
    starts = [0]
    for line in src.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    out = []
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            line = src[starts[first - 1]:starts[first]]
            s = starts[first - 1] + len(line) - len(line.lstrip())
            e = starts[node.end_lineno - 1] + len(src[starts[node.end_lineno - 1]:].encode()[:node.end_col_offset].decode())
            out.append((node.name, s, e))
    return out


def _stdlib_doc(path: Path) -> Document:
    rel = f"{path.parent.name}/{path.name}" if path.parent.name == "json" else path.name
    return Document(rel, path.read_text(encoding="utf-8"), meta={"path": rel})


@pytest.mark.parametrize("path", STDLIB_FILES, ids=lambda p: p.name)
@pytest.mark.parametrize("target", [1500, 600, 200])
def test_stdlib_functions_are_whole_in_exactly_one_chunk(path, target):
    doc = _stdlib_doc(path)
    chunks = chunklab.get_strategy("code", target=target).split(doc)
    assert check_chunks(doc, chunks) == []
    spans = _def_spans(doc.text)
    assert spans
    whole = 0
    for name, s, e in spans:
        if e - s > target:
            continue
        holders = [c for c in chunks if c.start <= s and e <= c.end]
        assert len(holders) == 1, (name, s, e, [(c.start, c.end) for c in chunks if c.end > s and c.start < e])
        whole += 1
    if target == 1500:
        assert whole > 0
    assert all(len(c) <= target or c.meta.get("oversize") for c in chunks)


def test_methods_and_signatures_on_json_decoder():
    doc = _stdlib_doc(JSON_DIR / "decoder.py")
    chunks = chunklab.get_strategy("code", target=800).split(doc)
    by_name = {c.meta["name"]: c for c in chunks if not c.meta.get("part")}
    raw = by_name["JSONDecoder.raw_decode"]
    assert raw.meta["kind"] == "method"
    assert raw.meta["signature"] == "def raw_decode(self, s, idx=0)"
    assert raw.context == "# json/decoder.py :: JSONDecoder.raw_decode(self, s, idx=0)"
    assert raw.meta["path"] == ["json/decoder.py", "JSONDecoder", "raw_decode"]
    assert raw.text.startswith("def raw_decode(self, s, idx=0):") and '"""Decode a JSON document' in raw.text
    assert chunks[0].meta["kind"] == "imports" and "import re" in chunks[0].text
    # the context never leaks into the text
    assert all(not c.text.startswith("# json/decoder.py") for c in chunks)


def test_class_over_the_cap_splits_into_header_and_methods():
    doc = _stdlib_doc(Path(textwrap.__file__))
    chunks = chunklab.get_strategy("code", target=1500).split(doc)
    kinds = [(c.meta["kind"], c.meta["name"]) for c in chunks]
    assert ("method", "TextWrapper._split") in kinds
    header = next(c for c in chunks if c.meta["name"] == "TextWrapper")
    assert header.meta["kind"] == "class" and header.text.startswith("class TextWrapper")
    assert header.context.startswith("# textwrap.py :: class TextWrapper")


REFUNDS = '''"""Refund rules for orders."""
import datetime as dt
from dataclasses import dataclass

RATE = 0.1


# Applies refunds to orders.
@dataclass
class RefundEngine:
    """Refunds, with a daily limit."""
    limit: int = 3

    @staticmethod
    def apply(order: "Order", *, now=None) -> "Refund":
        """Refund an order."""
        return order


def helper():
    return 1
'''


def test_decorators_docstrings_and_leading_comments_stay_with_their_definition():
    doc = Document("refunds", REFUNDS, meta={"path": "billing/refunds.py"})
    chunks = chunklab.get_strategy("code").split(doc)
    assert [(c.meta["kind"], c.meta["name"]) for c in chunks] == [
        ("imports", "<imports>"), ("class", "RefundEngine"), ("function", "helper")]
    assert chunks[0].text.startswith('"""Refund rules') and chunks[0].text.endswith("RATE = 0.1")
    assert chunks[1].text.startswith("# Applies refunds to orders.\n@dataclass\nclass RefundEngine:")
    assert chunks[1].context == "# billing/refunds.py :: class RefundEngine"
    small = chunklab.get_strategy("code", target=150).split(doc)
    apply = next(c for c in small if c.meta["name"] == "RefundEngine.apply")
    assert apply.meta["kind"] == "method" and apply.text.startswith("@staticmethod\n    def apply")
    assert apply.context == "# billing/refunds.py :: RefundEngine.apply(order: 'Order', *, now=None) -> 'Refund'"


def test_prefix_adds_title_and_symbol_path():
    doc = Document("r", REFUNDS, title="计费服务", meta={"path": "billing/refunds.py"})
    c = chunklab.get_strategy("code", prefix=True).split(doc)[-1]
    assert c.context == "计费服务 > billing/refunds.py > helper\n# billing/refunds.py :: helper()"
    assert c.embed_text.endswith("def helper():\n    return 1")


def _long_function(n: int) -> str:
    body = []
    for i in range(n):
        body.append(f"    # step {i}: 校验并累计第 {i} 项\n"
                    f"    if order.items[{i}].price < 0:\n"
                    f"        raise ValueError('第 {i} 项价格为负')\n"
                    f"    total += order.items[{i}].price * rate_{i}\n")
    return ("def settle(order: Order, rate: float = 1.0) -> int:\n"
            '    """Settle an order."""\n    total = 0\n' + "".join(body) + "    return total\n")


def test_long_function_splits_at_statement_boundaries_keeping_the_signature():
    src = "import math\n\n\n" + _long_function(40)
    doc = Document("settle.py", src)
    chunks = chunklab.get_strategy("code", target=400).split(doc)
    parts = [c for c in chunks if c.meta["name"] == "settle"]
    assert len(parts) > 3
    n = len(parts)
    for i, c in enumerate(parts, 1):
        assert len(c) <= 400
        assert c.meta["part"] == f"{i}/{n}"
        assert c.context == f"# settle.py :: settle(order: Order, rate: float=1.0) -> int (part {i}/{n})"
        assert c.meta["level"] == "code"
        # cut only between statements: each part starts a line and parses once dedented
        assert src[c.start - 1] in " \n"
        if i > 1:
            ast.parse(textwrap.dedent(src[src.rfind("\n", 0, c.start) + 1:c.end]))
    assert parts[0].text.startswith("def settle(")


def test_claim_c5_functions_over_800_tokens_split_by_segment():
    src = _long_function(60)
    assert count_tokens(src) > 800
    doc = Document("settle.py", src)
    chunks = chunklab.get_strategy("code", target=600, max=800, length="tokens").split(doc)
    assert len(chunks) > 1
    for c in chunks:
        assert count_tokens(c.text) <= 800
        assert "settle(order: Order, rate: float=1.0) -> int" in c.context
    # a function under the cap stays whole
    short = chunklab.get_strategy("code", target=600, max=800, length="tokens").split(Document("s.py", _long_function(3)))
    assert len(short) == 1 and "part" not in short[0].meta


def test_statement_too_long_descends_then_falls_back():
    big_if = "def f(x):\n    if x:\n" + "".join(f"        y{i} = x + {i}\n" for i in range(30)) + "    return x\n"
    chunks = chunklab.get_strategy("code", target=100).split(Document("f.py", big_if))
    assert check_chunks(Document("f.py", big_if), chunks) == []
    assert all(c.meta["level"] == "code" for c in chunks)   # cut between the if's statements
    literal = "DATA = [" + ", ".join(str(i) for i in range(200)) + "]\n"
    chunks = chunklab.get_strategy("code", target=100).split(Document("d.py", literal))
    assert {c.meta["level"] for c in chunks} == {"recursive"}
    assert all(c.meta["fallback_from"] == "code" and not c.meta.get("parse_failed") for c in chunks)


def test_syntax_error_falls_back_to_recursive_and_records_it():
    src = "def ok():\n    return 1\n\ndef broken(:\n    pass\n\n# 注释：后面还有很多文字。\n" * 5
    doc = Document("broken.py", src)
    chunks = chunklab.get_strategy("code", target=80).split(doc)
    assert check_chunks(doc, chunks) == []
    assert len(chunks) > 1
    for c in chunks:
        assert c.meta["parse_failed"] is True
        assert c.meta["level"] == "recursive" and c.meta["fallback_from"] == "code"
        assert c.meta["parse_error"].startswith("SyntaxError")
    nul = chunklab.get_strategy("code").split("x = 1\x00\n")
    assert nul[0].meta["parse_failed"] is True


def test_language_auto_and_errors():
    assert language_for_path("web/app.tsx") == "tsx"
    assert language_for_path("README") == "python"
    with pytest.raises(ParamError, match="language must be one of"):
        chunklab.get_strategy("code", language="cobol")


JS = '''import { Order } from "./order";

// Refund rules.
export function calcRefund(order: Order): number {
  if (!order) {
    throw new Error("no order");
  }
  return order.total * 0.9;
}

export class RefundEngine {
  apply(order: Order): number {
    return calcRefund(order);
  }
}

export const toCents = (x: number): number => Math.round(x * 100);
'''


@pytest.mark.skipif(not tree_sitter_available("typescript"), reason="tree-sitter-typescript not installed")
def test_typescript_via_tree_sitter():
    doc = Document("refund", JS, meta={"path": "src/billing/refund.ts"})
    chunks = chunklab.get_strategy("code", language="auto").split(doc)
    assert check_chunks(doc, chunks) == []
    assert [(c.meta["kind"], c.meta["name"]) for c in chunks] == [
        ("imports", "<imports>"), ("function", "calcRefund"), ("class", "RefundEngine"), ("function", "toCents")]
    assert chunks[1].text.startswith("// Refund rules.\nexport function calcRefund")
    assert chunks[1].context == "# src/billing/refund.ts :: calcRefund(order: Order): number"
    assert chunks[3].context == "# src/billing/refund.ts :: toCents(x: number): number"
    small = chunklab.get_strategy("code", language="typescript", target=60).split(doc)
    assert ("method", "RefundEngine.apply") in [(c.meta["kind"], c.meta["name"]) for c in small]


@pytest.mark.skipif(not tree_sitter_available("javascript"), reason="tree-sitter-javascript not installed")
def test_javascript_syntax_error_is_recorded():
    chunks = chunklab.get_strategy("code", language="javascript").split("function broken( {\n  return 1\n")
    assert chunks[0].meta["parse_failed"] and "line 1" in chunks[0].meta["parse_error"]


# -- properties on generated Python ---------------------------------------------------------

STATEMENTS = st.sampled_from([
    "x = 1\n", "import os\n", "from a import b\n", "# 说明：一条注释\n", "\n",
    "def f(a, b=2):\n    '''文档。'''\n    return a + b\n",
    "@dec\ndef g(*args, **kw) -> int:\n    for i in args:\n        if i:\n            return i\n    return 0\n",
    "class C(Base):\n    '''类。'''\n    n = 1\n\n    def m(self):\n        return self.n\n\n    async def n2(self):\n        await x\n",
    "if __name__ == '__main__':\n    main()\n",
    "try:\n    import ujson\nexcept ImportError:\n    ujson = None\nelse:\n    pass\nfinally:\n    pass\n",
    "S = '''长文本" + "甲" * 150 + "'''\n",
    "def 计算(金额):\n    return 金额 * 2\n",
])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parts=st.lists(STATEMENTS, max_size=25), target=st.integers(1, 400), crlf=st.booleans(),
       lang_max=st.one_of(st.none(), st.integers(0, 200)))
def test_generated_python_invariants(parts, target, crlf, lang_max):
    src = "".join(parts)
    if crlf:
        src = src.replace("\n", "\r\n")
    mx = None if lang_max is None else target + lang_max
    strategy = chunklab.get_strategy("code", target=target, max=mx)
    doc = Document("g.py", src)
    chunks = strategy.split(doc)
    assert check_chunks(doc, chunks) == []
    cap = strategy.cap
    for c in chunks:
        assert len(c) <= cap or c.meta.get("oversize"), (c, cap)
        assert "parse_failed" not in c.meta
    for a, b in zip(chunks, chunks[1:]):
        assert a.end <= b.start   # code chunks never overlap (overlap defaults to 0)
    if not crlf:
        for name, s, e in _def_spans(src):
            if e - s <= cap:
                assert sum(1 for c in chunks if c.start <= s and e <= c.end) == 1, name


def test_a_comment_after_the_last_method_does_not_break_the_method():
    # Found by test_generated_python_invariants: the comment at the end of the file fell into the
    # last method's tile, pushed it over the cap, and the method was cut character by character.
    src = ("class C(Base):\n    '''类。'''\n    n = 1\n\n    def m(self):\n        return self.n\n\n"
           "    async def n2(self):\n        await x\n# 说明：一条注释\n")
    chunks = chunklab.get_strategy("code", target=1, max=35).split(Document("g.py", src))
    assert "async def n2(self):\n        await x" in [c.text for c in chunks]
    assert chunks[-1].text == "# 说明：一条注释"
    assert check_chunks(Document("g.py", src), chunks) == []


def test_a_short_last_part_is_evened_out_with_the_one_before():
    # Greedy packing to the target leaves `return total` alone; the last two parts are re-cut at
    # the statement boundary that balances them (never above the cap, never inside a statement).
    body = "".join(f"    total += step_{i}(x)  # 第{i}步\n" for i in range(12))
    src = f"def run(x):\n    total = 0\n{body}    return total\n"
    doc = Document("r.py", src)
    code = chunklab.get_strategy("code", target=200, max=220)
    chunks = code.split(doc)
    assert check_chunks(doc, chunks) == []
    assert len(chunks) >= 2 and all(len(c) <= code.cap for c in chunks)
    sizes = [len(c) for c in chunks]
    assert sizes[-1] * 2 >= code.target, sizes            # no runt at the end
    assert chunks[-1].text.endswith("return total")
    for c in chunks:                                       # cuts fall between statements
        assert src[src.rfind("\n", 0, c.start) + 1:c.start].isspace() or c.start == 0
    # the greedy packing alone would have left the return statement by itself
    from chunklab.strategies.linguistic import pack_units
    lines = [(m.start(), m.end()) for m in __import__("re").finditer(r".*\n", src)]
    greedy = pack_units(lines[1:], code.target, 0, None, src)
    assert src[greedy[-1][0]:greedy[-1][1]].strip() == "return total"
