"""Code: cut source files at symbol boundaries, never in the middle of a function.

The retrieval unit of a code base is a *symbol* (a function, a class, a
method), not a number of lines. ``code`` parses Python with the standard
library's :mod:`ast` (and JavaScript / TypeScript with tree-sitter when its
wheels are installed) and emits one chunk per top-level function or class.
Every chunk carries a ``path + signature`` line in :attr:`Chunk.context`, e.g.
``# billing/refunds.py :: RefundEngine.apply(self, order: Order) -> Refund``;
the chunk text itself is always the untouched source.

Over-long symbols are split at statement boundaries, from the outside in:

1. a class longer than the cap: its header and class-level statements, then
   one chunk per method;
2. a function or method longer than the cap: runs of top-level statements of
   its body ("logical segments"), each part keeping the signature in context
   and recording ``meta["part"] = "i/n"``;
3. a single statement longer than the cap: the statements nested in it
   (``if`` / ``for`` / ``try`` bodies...), and only for a statement with no
   nested statements (a huge literal) ``recursive``, recorded in ``meta["level"]``.

A file that does not parse goes to ``recursive`` as a whole, with
``meta["parse_failed"] = True`` and the parser's message in
``meta["parse_error"]`` (the parse-failure rate is a metric of the pipeline).
"""
from __future__ import annotations

import ast
import bisect
import re
from dataclasses import dataclass, field
from typing import Iterable, Iterator

from ..base import Span, Strategy, register, size_params
from ..core import Document
from ..length import span_lengths
from ..packing import pack, summed
from ..params import Param, ParamError
from .container import fallback_spans
from .linguistic import merge_small

__all__ = ["Code", "CODE_LANGUAGES", "language_for_path", "tree_sitter_available"]

#: Languages accepted by ``language``; "auto" picks one from the document's path suffix.
CODE_LANGUAGES = ("python", "javascript", "typescript", "tsx", "auto")

#: Path suffix -> language, for ``language="auto"``. Unknown suffixes are treated as Python.
_SUFFIXES = {
    ".py": "python", ".pyi": "python", ".pyw": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
}

_NEWLINE = re.compile(r"\r\n|\r|\n")  # what Python's tokenizer counts as a line break
#: Lines that belong to the statement *below* them when a block is cut: comments and the
#: clause keywords that have no AST node of their own.
_LEADING_LINE = re.compile(r"[ \t\f]*(?:#|//|/\*|\*|(?:else|finally|try)[ \t]*:)")


def language_for_path(path: str | None, default: str = "python") -> str:
    """The language ``language="auto"`` uses for a file path.

    >>> language_for_path("src/billing/refund.ts"), language_for_path("a/b.py"), language_for_path(None)
    ('typescript', 'python', 'python')
    """
    if not path:
        return default
    m = re.search(r"\.[A-Za-z]+$", str(path))
    return _SUFFIXES.get(m.group(0).lower(), default) if m else default


def _ts_language(language: str):
    """The tree-sitter ``Language`` for ``language``, or raise ImportError."""
    import tree_sitter as ts

    if language == "javascript":
        import tree_sitter_javascript as grammar
        return ts.Language(grammar.language())
    import tree_sitter_typescript as grammar
    fn = grammar.language_tsx if language == "tsx" else grammar.language_typescript
    return ts.Language(fn())


def tree_sitter_available(language: str = "javascript") -> bool:
    """True when the tree-sitter grammar for ``language`` can be imported."""
    try:
        _ts_language(language)
    except ImportError:
        return False
    return True


# -- a language-neutral outline of a source file ------------------------------

@dataclass
class _Node:
    """One statement-like node: character offsets into the document and nested statements.

    ``kind`` is "function", "class" or "stmt"; ``children`` are the statements
    a long node may be cut between (a function's body, a class's members, an
    ``if``'s branches), in source order.
    """

    kind: str
    start: int
    end: int
    name: str = ""
    signature: str = ""
    children: list["_Node"] = field(default_factory=list)


class _Lines:
    """Map (line, column) positions to character offsets of ``text`` shifted by ``base``."""

    def __init__(self, text: str, base: int) -> None:
        self.text, self.base = text, base
        self.starts = [0] + [m.end() for m in _NEWLINE.finditer(text)]

    def char(self, lineno: int, col_bytes: int) -> int:
        """Offset of ``col_bytes`` UTF-8 bytes into line ``lineno`` (1-based), as ast reports it."""
        ls = self.starts[lineno - 1]
        le = self.starts[lineno] if lineno < len(self.starts) else len(self.text)
        line = self.text[ls:le]
        col = col_bytes if line.isascii() else len(line.encode("utf-8")[:col_bytes].decode("utf-8", "ignore"))
        return self.base + ls + col

    def line_start(self, pos: int) -> int:
        """Start of the line holding document offset ``pos``."""
        i = bisect.bisect_right(self.starts, pos - self.base) - 1
        return self.base + self.starts[i]


def _cut(text: str, lines: _Lines, pos: int, floor: int) -> int:
    """Where to cut before a node starting at ``pos``.

    At the start of its line when only indentation precedes it there, moved up
    over the comment lines (and ``else:`` / ``finally:`` lines) above it, blank
    lines between them allowed, so a section comment goes with the code it
    introduces; never above ``floor`` (the end of the previous node), and never
    above the last line holding code of the previous node.
    """
    ls = lines.line_start(pos)
    if ls < floor or text[ls:pos].strip():
        return max(pos, floor)
    cut = scan = ls
    while scan > floor:
        prev = lines.line_start(scan - 1)
        if prev < floor:
            break
        line = text[prev:scan]
        if line.strip():
            if not _LEADING_LINE.match(line):
                break
            cut = prev
        scan = prev
    return cut


def _py_signature(node: ast.AST, qualname: str) -> str:
    if isinstance(node, ast.ClassDef):
        bases = [ast.unparse(b) for b in node.bases] + [ast.unparse(k) for k in node.keywords]
        return f"class {node.name}" + (f"({', '.join(bases)})" if bases else "")
    prefix = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
    ret = f" -> {ast.unparse(node.returns)}" if node.returns is not None else ""
    return f"{prefix} {node.name}({ast.unparse(node.args)}){ret}"


_PY_BLOCK_FIELDS = ("body", "handlers", "orelse", "finalbody", "cases")


def _python_outline(text: str, lo: int, hi: int) -> list[_Node]:
    """Top-level nodes of the Python source ``text[lo:hi]``; raises SyntaxError/ValueError."""
    src = text[lo:hi]
    tree = ast.parse(src)
    lines = _Lines(src, lo)

    def start_of(node) -> int:
        if isinstance(node, ast.match_case):
            node = node.pattern
        decorators = getattr(node, "decorator_list", ())
        if decorators:
            # a decorator is the first thing on its line: start at the '@' after the indentation
            pos = lines.char(min(d.lineno for d in decorators), 0)
            while pos < hi and text[pos] in " \t\f":
                pos += 1
            return pos
        return lines.char(node.lineno, node.col_offset)

    def end_of(node) -> int:
        if isinstance(node, ast.match_case):
            node = node.body[-1]
        return lines.char(node.end_lineno, node.end_col_offset)

    def build(node, qual: str) -> _Node:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            q = f"{qual}.{node.name}" if qual else node.name
            kind = "class" if isinstance(node, ast.ClassDef) else "function"
            out = _Node(kind, start_of(node), end_of(node), q, _py_signature(node, q))
            out.children = [build(c, q if kind == "class" else "") for c in node.body]
            return out
        out = _Node("stmt", start_of(node), end_of(node))
        for f in _PY_BLOCK_FIELDS:
            for c in getattr(node, f, ()) or ():
                if isinstance(c, (ast.stmt, ast.excepthandler, ast.match_case)):
                    out.children.append(build(c, qual))
        out.children.sort(key=lambda n: n.start)
        # an import in a module-level run makes it the file's "imports" chunk
        out.name = "import" if isinstance(node, (ast.Import, ast.ImportFrom)) else ""
        return out

    return [build(n, "") for n in tree.body]


# tree-sitter node types, by role
_TS_FUNCTIONS = {"function_declaration", "generator_function_declaration", "method_definition",
                 "function_signature", "abstract_method_signature"}
_TS_CLASSES = {"class_declaration", "abstract_class_declaration", "interface_declaration",
               "enum_declaration", "class", "module", "internal_module"}
_TS_BLOCKS = {"statement_block", "class_body", "interface_body", "enum_body", "switch_body"}
_TS_IMPORTS = {"import_statement"}


def _ts_outline(text: str, lo: int, hi: int, language: str) -> list[_Node]:
    """Top-level nodes of JavaScript / TypeScript ``text[lo:hi]`` via tree-sitter.

    Raises SyntaxError when tree-sitter reports an error node, so a broken
    file takes the same recorded fallback as broken Python.
    """
    import tree_sitter as ts

    src = text[lo:hi]
    data = src.encode("utf-8", "surrogatepass")
    tree = ts.Parser(_ts_language(language)).parse(data)
    root = tree.root_node
    if root.has_error:
        bad = _first_error(root)
        line, col = (bad.start_point if bad is not None else (0, 0))
        raise SyntaxError(f"tree-sitter could not parse {language} at line {line + 1}, column {col + 1}")
    # byte offset -> char offset (exact for every byte that starts a character)
    byte_at = [0]
    for ch in src:
        byte_at.append(byte_at[-1] + len(ch.encode("utf-8", "surrogatepass")))

    def char(b: int) -> int:
        return lo + bisect.bisect_left(byte_at, b)

    def src_of(n) -> str:
        return data[n.start_byte:n.end_byte].decode("utf-8", "replace")

    def name_of(n) -> str:
        nm = n.child_by_field_name("name")
        return src_of(nm) if nm is not None else ""

    def declared(n):
        """The declaration inside ``export ...`` / ``const f = () => ...``, or None."""
        if n.type == "export_statement":
            d = n.child_by_field_name("declaration") or n.child_by_field_name("value")
            return declared(d) if d is not None else None
        if n.type in ("lexical_declaration", "variable_declaration"):
            decls = [c for c in n.named_children if c.type == "variable_declarator"]
            if len(decls) == 1:
                v = decls[0].child_by_field_name("value")
                if v is not None and v.type in ("arrow_function", "function_expression", "function",
                                                "generator_function", "class"):
                    return decls[0]
            return None
        if n.type in _TS_FUNCTIONS or n.type in _TS_CLASSES:
            return n
        return None

    def signature(n, role: str) -> str:
        if n.type == "variable_declarator":
            v = n.child_by_field_name("value")
            body = v.child_by_field_name("body") if v is not None else None
            head = data[n.start_byte:(body.start_byte if body is not None else n.end_byte)]
        else:
            body = n.child_by_field_name("body")
            head = data[n.start_byte:(body.start_byte if body is not None else n.end_byte)]
        return " ".join(head.decode("utf-8", "replace").split()).rstrip(" ={>").rstrip(" =")

    def block_children(n) -> list:
        body = n.child_by_field_name("body")
        if n.type == "variable_declarator":
            v = n.child_by_field_name("value")
            body = v.child_by_field_name("body") if v is not None else None
        if body is None or body.type not in _TS_BLOCKS:
            # statements: their nested blocks (if/for/try bodies...)
            found = []
            for c in n.named_children:
                if c.type in _TS_BLOCKS:
                    found.extend(c.named_children)
                elif c.type in ("else_clause", "catch_clause", "finally_clause", "switch_case", "switch_default"):
                    found.append(c)
            return found
        return list(body.named_children)

    def build(n, qual: str, outer=None) -> _Node | None:
        if n.type == "comment":
            return None
        outer = outer or n
        d = declared(n)
        if d is not None:
            nm = name_of(d) or "<anonymous>"
            q = f"{qual}.{nm}" if qual else nm
            is_class = d.type in _TS_CLASSES or (d.type == "variable_declarator" and
                                                  d.child_by_field_name("value").type == "class")
            out = _Node("class" if is_class else "function", char(outer.start_byte), char(outer.end_byte),
                        q, signature(d, "class" if is_class else "function"))
            target = d.child_by_field_name("value") if d.type == "variable_declarator" and is_class else d
            kids = block_children(target)
            out.children = [x for x in (build(c, q if is_class else "") for c in kids) if x is not None]
            return out
        out = _Node("stmt", char(n.start_byte), char(n.end_byte),
                    "import" if n.type in _TS_IMPORTS else "")
        out.children = [x for x in (build(c, qual) for c in block_children(n)) if x is not None]
        return out

    return [x for x in (build(c, "") for c in root.named_children) if x is not None]


def _first_error(node):
    if node.type == "ERROR" or node.is_missing:
        return node
    for c in node.children:
        if c.has_error or c.is_missing:
            found = _first_error(c)
            if found is not None:
                return found
    return None


# -- the strategy ---------------------------------------------------------------

@register
class Code(Strategy):
    """One chunk per top-level function or class, imports and module statements on their own.

    Spans include decorators, docstrings and the comment lines above a
    definition (blank lines between them allowed; a comment on the last line of
    the previous definition stays there); blank lines after a definition stay
    with it, so the chunks tile the file and nothing is lost. A definition no longer than
    the cap is never cut. Longer ones are cut at statement boundaries (see the
    module docstring) into parts packed up to ``target``; parts shorter than
    ``min`` merge into a neighbour when the result stays within the cap, and a
    last part under half the target is evened out with the one before it (cut
    again at the statement boundary that balances the two). Each
    chunk's ``meta`` has ``kind`` (function / class / method / imports /
    module), ``name`` (qualified, ``RefundEngine.apply``), ``file`` (the
    document's ``meta["path"]`` or its id), ``path`` (``[file, *name parts]``,
    used by ``prefix=True``) and ``signature``; ``context`` holds the line
    ``# file :: name(args) -> ret``. Code chunks never overlap; ``overlap``
    applies only where ``recursive`` takes over.

    ``language="auto"`` chooses by the suffix of ``doc.meta["path"]`` (or the
    document id), Python when unknown. JavaScript / TypeScript need the
    ``tree-sitter``, ``tree-sitter-javascript`` and ``tree-sitter-typescript``
    packages; asking for them without the packages is a ``ParamError``.

    >>> src = "import os\\n\\n\\ndef size(p: str) -> int:\\n    return os.path.getsize(p)\\n"
    >>> [(c.meta["kind"], c.meta["name"]) for c in Code().split(src)]
    [('imports', '<imports>'), ('function', 'size')]
    >>> Code().split(Document("refund.py", src)).pop().context
    '# refund.py :: size(p: str) -> int'
    """

    name = "code"
    family = "code"
    summary = {"zh": "代码按 AST 符号边界切：一个函数/类一块，带「路径 + 签名」前缀，超长函数按语句段再切",
               "en": "code cut at AST symbol boundaries, one function/class per chunk with a path + signature prefix"}
    params = {
        **size_params(target=1500),
        "language": Param("choice", "python", "source language ('auto': from the document path suffix)",
                          choices=CODE_LANGUAGES),
    }

    def _check(self) -> None:
        super()._check()
        if self.language not in ("python", "auto") and not tree_sitter_available(self.language):
            pkg = "tree-sitter-javascript" if self.language == "javascript" else "tree-sitter-typescript"
            raise ParamError(f"language={self.language!r} needs the packages tree-sitter and {pkg}, "
                             f"which are not installed (pip install tree-sitter {pkg}); "
                             f"'python' works without them")

    # -- helpers -------------------------------------------------------------
    def _size(self, text: str, a: int, b: int) -> int:
        """Length of ``text[a:b]`` as a chunk: without the whitespace the base class trims."""
        return self.sizer(text, trimmed=True)(a, b)

    def _file(self, doc: Document) -> str:
        return str(doc.meta.get("path") or doc.id)

    def _language(self, doc: Document) -> str:
        if self.language != "auto":
            return self.language
        return language_for_path(doc.meta.get("path") or doc.id)

    def _meta(self, file: str, kind: str, name: str, signature: str) -> dict:
        short = signature
        if kind in ("function", "method"):
            # "def apply(self, x) -> R" -> "RefundEngine.apply(self, x) -> R"
            m = re.search(r"\(", signature)
            short = name + signature[m.start():] if m else name
        label = short or name
        return {"kind": kind, "name": name, "file": file, "signature": signature,
                "path": [file, *[p for p in name.split(".") if p and not p.startswith("<")]],
                "context": f"# {file} :: {label}"}

    # -- the verb ------------------------------------------------------------
    def _spans(self, doc: Document, start: int, end: int) -> Iterable[Span]:
        text = doc.text
        file = self._file(doc)
        language = self._language(doc)
        try:
            if language == "python":
                nodes = _python_outline(text, start, end)
            else:
                nodes = _ts_outline(text, start, end, language)
        except ImportError as exc:
            yield from fallback_spans(self, doc, start, end, parse_failed=True, language=language,
                                      parse_error=f"no parser for {language}: {exc}", path=[file], file=file)
            return
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            msg = f"{type(exc).__name__}: {exc}"
            yield from fallback_spans(self, doc, start, end, parse_failed=True, language=language,
                                      parse_error=msg, path=[file], file=file)
            return
        lines = _Lines(text[start:end], start)
        yield from self._container(doc, lines, nodes, start, end, file, None)

    def _tiles(self, text: str, lines: _Lines, nodes: list[_Node], lo: int,
               hi: int) -> list[tuple[tuple[int, int], list[_Node]]]:
        """Cut ``[lo, hi)`` before every node but the first, and pair each tile with the
        nodes starting in it. The first tile starts at ``lo`` and the last ends at ``hi``,
        so the tiles cover the range exactly."""
        cuts = [lo]
        for prev, n in zip(nodes, nodes[1:]):
            c = _cut(text, lines, n.start, max(prev.end, cuts[-1]))
            if c > cuts[-1]:
                cuts.append(c)
        cuts.append(hi)
        tiles = [(a, b) for a, b in zip(cuts, cuts[1:]) if b > a]
        owners: list[list[_Node]] = [[] for _ in tiles]
        starts = [a for a, _ in tiles]
        for n in nodes:
            owners[max(0, bisect.bisect_right(starts, n.start) - 1)].append(n)
        return list(zip(tiles, owners))

    def _container(self, doc, lines, nodes, lo, hi, file, cls: _Node | None) -> Iterator[Span]:
        """A module, or a class body (``cls``): each definition alone, runs of other statements packed."""
        run: list[tuple[tuple[int, int], list[_Node]]] = []
        for tile, owned in self._tiles(doc.text, lines, nodes, lo, hi):
            if len(owned) == 1 and owned[0].kind in ("function", "class"):
                if run:
                    yield from self._run(doc, lines, run, file, cls)
                    run = []
                yield from self._definition(doc, lines, owned[0], tile, file, in_class=cls is not None)
            else:
                run.append((tile, owned))
        if run:
            yield from self._run(doc, lines, run, file, cls)

    def _run(self, doc, lines, run, file, cls: _Node | None) -> Iterator[Span]:
        """Module- or class-level statements between definitions, packed up to ``target``."""
        if cls is not None:
            meta = self._meta(file, "class", cls.name, cls.signature)
        else:
            kind = "imports" if any(n.name == "import" for _, owned in run for n in owned) else "module"
            meta = self._meta(file, kind, f"<{kind}>", "")
            meta["context"] = f"# {file} :: {kind}"
        yield from self._sequence(doc, lines, run, meta)

    def _balance_tail(self, text: str, parts: list[tuple[int, int]], cuts: list[int]) -> list[tuple[int, int]]:
        """Re-cut the last two parts at the statement boundary that evens them out, when
        greedy packing left a last part under half the target (a lone ``return x``)."""
        if len(parts) < 2:
            return parts
        (a, _), (m, b) = parts[-2], parts[-1]
        if self._size(text, m, b) * 2 >= self.target:
            return parts
        best = (max(self._size(text, a, m), self._size(text, m, b)), m)
        for c in cuts:
            if a < c < b and c != m:
                left, right = self._size(text, a, c), self._size(text, c, b)
                if left and right and max(left, right) < best[0]:
                    best = (max(left, right), c)
        return [*parts[:-2], (a, best[1]), (best[1], b)]

    def _definition(self, doc, lines, node: _Node, tile, file, in_class: bool) -> Iterator[Span]:
        """One function / class / method; cut further only when longer than the cap."""
        text = doc.text
        kind = "method" if node.kind == "function" and in_class else node.kind
        meta = self._meta(file, kind, node.name, node.signature)
        a, b = tile
        if self._size(text, a, b) <= self.cap:
            yield a, b, meta
        elif (a < node.start or node.end < b) and self._size(text, node.start, node.end) <= self.cap:
            # comments above it (or after it, at the end of its block) push it over the cap:
            # they become parts of their own and the definition stays whole
            tiles = [t for t in ((a, node.start), (node.start, node.end), (node.end, b)) if t[1] > t[0]]
            yield from self._sequence(doc, lines, [(t, []) for t in tiles], meta)
        elif not node.children:
            yield from fallback_spans(self, doc, a, b, **meta)
        elif node.kind == "class":
            # The class line (and decorators) get a tile of their own when the first member is a
            # definition; otherwise they share the first tile with the docstring / attributes.
            members = node.children
            if members[0].kind in ("function", "class"):
                members = [_Node("stmt", a, a)] + members
            yield from self._container(doc, lines, members, a, b, file, node)
        else:
            yield from self._sequence(doc, lines, self._tiles(text, lines, node.children, a, b), meta)

    def _sequence(self, doc, lines, pieces, meta) -> Iterator[Span]:
        """Pack statement tiles up to ``target``; a tile over the cap is cut between the
        statements nested in it, and only a tile with none goes to ``recursive``."""
        text = doc.text
        size = self.sizer(text)
        flat: list[tuple[int, int, bool]] = []  # (start, end, needs recursive fallback)

        def add(tile, owned):
            a, b = tile
            if self._size(text, a, b) <= self.cap:
                flat.append((a, b, False))
                return
            nested = [c for n in owned for c in n.children]
            if len(owned) == 1 and nested:
                for t, o in self._tiles(text, lines, nested, a, b):
                    add(t, o)
            else:
                flat.append((a, b, True))

        for tile, owned in pieces:
            add(tile, owned)
        groups: list[tuple[int, int, bool]] = []
        run: list[tuple[int, int]] = []

        def flush():
            ranges = pack(len(run), summed(span_lengths(run, size)), self.target)
            packed = merge_small([(run[i][0], run[j - 1][1]) for i, j in ranges], self.min, self.cap, size)
            for s, e in self._balance_tail(text, packed, [a for a, _ in run]):
                groups.append((s, e, False))
            run.clear()

        for a, b, too_long in flat:
            if too_long:
                flush()
                groups.append((a, b, True))
            else:
                run.append((a, b))
        flush()
        # number the parts after the fallback has cut the statements that needed it
        parts: list[tuple[int, int, dict]] = []
        for s, e, too_long in groups:
            if too_long:
                parts.extend(fallback_spans(self, doc, s, e))
            elif text[s:e].strip():
                parts.append((s, e, {}))
        parts = [p for p in parts if text[p[0]:p[1]].strip()]
        n = len(parts)
        for i, (s, e, extra) in enumerate(parts, 1):
            m = {**meta, **extra}
            if n > 1:
                m["part"] = f"{i}/{n}"
                m["context"] = f"{meta['context']} (part {i}/{n})"
            yield s, e, m
