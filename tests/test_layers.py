"""The package layout is the design: layers only import downwards, and nothing imports in a cycle.

Every module of chunklab is read with ``ast`` (nothing is imported). Each belongs to a layer;
an import of a chunklab module from a higher layer is an error, so is a cycle among module-level
imports, and so is a chunklab import inside a function (it hides the graph; an *optional third-party*
dependency may still be imported lazily).
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "chunklab"

#: Layers from the ground floor up, by module-name prefix (the longest matching prefix wins). A module
#: may import modules of its own layer or of lower ones.
LAYERS: list[tuple[str, ...]] = [
    ("chunklab._version", "chunklab._topk", "chunklab.core", "chunklab.params", "chunklab.length"),
    ("chunklab.base", "chunklab.packing"),
    ("chunklab.parsing",),
    ("chunklab.retrieval",),                       # tokenisers, BM25, dense search, embedders
    ("chunklab.strategies",),                      # the strategies (the semantic one embeds)
    ("chunklab.strategies.router", "chunklab.hierarchy", "chunklab.preprocess"),
    ("chunklab.datasets",),
    ("chunklab.evaluation", "chunklab.adapters"),
    ("chunklab.viz",),
    ("chunklab.tools",),
    ("chunklab.cli", "chunklab.__main__", "chunklab"),
    ("chunklab.book",),
]
#: ``chunklab.strategies`` (the package's ``__init__``) registers every strategy, the router included.
PACKAGE_INITS = {"chunklab.strategies": 5}
#: Function-level imports of chunklab's own modules that are allowed, with the reason.
LAZY_OK: dict[tuple[str, str], str] = {
    ("chunklab.retrieval.bm25", "chunklab._topk"): "optional compiled extension",
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


#: Compiled extension modules (source files that are not Python): known, but not read.
EXTENSIONS = {"chunklab._topk"}


def layer_of(name: str) -> int:
    if name in PACKAGE_INITS:
        return PACKAGE_INITS[name]
    best, rank = -1, None
    for i, prefixes in enumerate(LAYERS):
        for pre in prefixes:
            if (name == pre or name.startswith(pre + ".")) and len(pre) > best:
                best, rank = len(pre), i
    if rank is None:
        raise AssertionError(f"{name} belongs to no layer: add it to LAYERS in {__file__}")
    return rank


def resolve(name: str, is_package: bool, node: ast.ImportFrom) -> list[str]:
    """The chunklab modules an ``ImportFrom`` node reads (a name may be a submodule)."""
    if node.level:
        base = name.split(".") if is_package else name.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    if not (target == "chunklab" or target.startswith("chunklab.")):
        return []
    known = modules()
    subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in set(known) | EXTENSIONS]
    # `from . import x` reads the package itself only for names that are not submodules
    return subs + ([target] if len(subs) < len(node.names) else [])


def imports(name: str, path: Path) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    """(module-level, function-level) chunklab imports of one module, with line numbers."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_package = path.name == "__init__.py"
    top_nodes = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            top_nodes.add(node)
        elif isinstance(node, ast.If):  # `if TYPE_CHECKING:` blocks and version guards count as top level
            top_nodes.update(n for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom)))
        elif isinstance(node, ast.Try):
            top_nodes.update(n for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom)))
    top, inner = [], []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            targets = resolve(name, is_package, node)
        elif isinstance(node, ast.Import):
            targets = [a.name for a in node.names if a.name == "chunklab" or a.name.startswith("chunklab.")]
        else:
            continue
        for t in targets:
            (top if node in top_nodes else inner).append((t, node.lineno))
    return top, inner


GRAPH = {name: imports(name, path) for name, path in modules().items()}


def test_every_module_has_a_layer():
    for name in GRAPH:
        layer_of(name)


def test_imports_point_down():
    wrong = []
    for name, (top, inner) in GRAPH.items():
        for target, line in top + inner:
            if target == name or target.startswith(name + "."):
                continue  # a package importing its own submodules
            if layer_of(target) > layer_of(name):
                wrong.append(f"{name}:{line} imports {target} (layer {layer_of(target)} > {layer_of(name)})")
    assert not wrong, "imports that point up a layer:\n" + "\n".join(wrong)


def test_nothing_outside_book_imports_book():
    wrong = [f"{name}:{line} imports {t}" for name, (top, inner) in GRAPH.items()
             if not name.startswith("chunklab.book")
             for t, line in top + inner if t.startswith("chunklab.book")]
    assert not wrong, "\n".join(wrong)


def test_chunklab_imports_live_at_module_level():
    lazy = [f"{name}:{line} imports {t} inside a function" for name, (_, inner) in GRAPH.items()
            for t, line in inner if (name, t) not in LAZY_OK]
    assert not lazy, "\n".join(lazy)


def test_no_import_cycles():
    edges = {name: {t for t, _ in top if t in GRAPH and t != name and not t.startswith(name + ".")}
             for name, (top, _) in GRAPH.items()}
    # A package's __init__ that imports a submodule which imports the package back is fine when the
    # submodule only reads names the __init__ defined before: Python allows it, the layers do not
    # care. Everything else closing a loop is a cycle.
    cycles, state = [], {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                loop = stack[stack.index(nxt):] + [nxt]
                if not _package_back_edge(loop):
                    cycles.append(" -> ".join(loop))
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = 2

    for n in sorted(edges):
        if n not in state:
            visit(n, [])
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def _package_back_edge(loop: list[str]) -> bool:
    """A two-step loop between a package and one of its own submodules."""
    return len(loop) == 3 and (loop[1].startswith(loop[0] + ".") or loop[0].startswith(loop[1] + "."))


@pytest.mark.parametrize("name", sorted(GRAPH))
def test_modules_are_short(name):
    lines = modules()[name].read_text(encoding="utf-8").count("\n")
    assert lines <= 650, f"{name} has {lines} lines: split it by idea"
