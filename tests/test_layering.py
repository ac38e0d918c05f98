"""The layering DESIGN.md states, read from the source (no toolchain): NumPy's API never
imports the autograph layer above it (that registers hooks into the tracer's dispatch
table instead), and no two modules of aotc import each other, directly or through others,
not even through an import inside a function."""

from __future__ import annotations

import ast
import re
from pathlib import Path

AOTC = Path(__file__).resolve().parents[1] / "aotc"


def _module(path: Path) -> str:
    parts = path.relative_to(AOTC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every aotc module ``path`` imports, at its top or in a function (imports only
    for type checkers excluded)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = _module(path) if path.name == "__init__.py" else _module(path).rpartition(".")[0]
    typing_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                   and "TYPE_CHECKING" in ast.unparse(node.test) for n in ast.walk(node)}
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
            target = f"{base}.{node.module}" if node.module else base
            if node.module:  # (``from . import x`` imports the submodule x)
                found.add(target)
            found.update(f"{target}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("aotc."))
    return found


def _graph() -> dict[str, set[str]]:
    modules = {_module(p): p for p in AOTC.rglob("*.py")}
    return {name: {m for m in _imports(path) if m in modules and m != name}
            for name, path in modules.items()}


def test_numpy_api_does_not_import_autograph():
    graph = _graph()
    wrong = {m: sorted(t for t in targets if t.startswith("aotc.autograph"))
             for m, targets in graph.items() if m.startswith("aotc.numpy_api")}
    assert not {m: t for m, t in wrong.items() if t}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A circle of imports in ``graph``, or None (depth-first, marking finished nodes)."""
    done: set[str] = set()
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        if node in path:
            return path[path.index(node):] + [node]
        if node in done:
            return None
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            found = visit(nxt)
            if found:
                return found
        path.pop()
        done.add(node)
        return None

    for start in sorted(graph):
        found = visit(start)
        if found:
            return found
    return None


def test_no_import_circles():
    cycle = _cycle(_graph())
    assert cycle is None, " -> ".join(cycle or [])


#: What only an instruction set's module may name: intrinsics, features, CPU levels.
_ISA_WORDS = re.compile(r"llvm\.x86\.|\bavx|\bsse\d|x86-64|\bznver|cpuid|xgetbv", re.I)
#: Where they belong: the target interface. (config.py holds the default wheel's levels,
#: a setting the user can change.)
_ISA_HOMES = ("aotc/codegen/targets/", "aotc/config.py")


def _code_strings(tree: ast.AST) -> list[ast.Constant]:
    """The string constants of ``tree`` that are code, not docstrings."""
    docs = {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                 ast.AsyncFunctionDef))
            and node.body and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)}
    return [n for n in ast.walk(tree) if isinstance(n, ast.Constant)
            and isinstance(n.value, str) and id(n) not in docs]


def test_instruction_set_knowledge_is_behind_the_target_interface():
    """Code generators ask :mod:`aotc.codegen.targets` about the machine; no string in
    code elsewhere names an x86 intrinsic, feature or level (so aarch64 is one more
    instruction set, not a hunt through the tree)."""
    found = []
    for path in sorted(AOTC.rglob("*.py")):
        rel = path.relative_to(AOTC.parent).as_posix()
        if rel.startswith(_ISA_HOMES):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += [f"{rel}:{n.lineno}: {n.value[:60]!r}" for n in _code_strings(tree)
                  if _ISA_WORDS.search(n.value)]
    assert not found, "\n".join(found)
