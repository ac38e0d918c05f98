"""Generator functions: ``yield`` collects the items into a list the function returns.

A kernel's helper that yields (``def squares(n): for i in range(n): yield i * i``) is
consumed by a loop, ``sum()``, ``list()`` or a comprehension. Compiled, it makes the
list of its items, as ``list(squares(n))`` would, which a runtime loop grows (see
:mod:`.lists`) and any of those consumers reads::

    def squares(n):                   def squares(n):
        for i in range(n):                __aotc_yielded = []
            yield i * i          ->       for i in range(n):
                                              __aotc_yielded.append(i * i)
                                          return __aotc_yielded

``yield from it`` appends each item of ``it``; a ``return`` ends the items, at the end or
inside a branch or loop (it returns the list there, as a function's early return
does). The items
are made before the consumer reads the first, which gives the same values for a
generator that reads nothing the consumer changes. An endless generator (a ``while
True`` loop with no ``break`` or ``return``) has no list: it is a located error, not a
build that never ends; so is ``yield`` used as a value (``x = yield v``: ``send``).
"""

from __future__ import annotations

import ast

from ..errors import Loc, TraceError
from .syntax import HIDDEN, load, store, walk_code

_ITEMS = HIDDEN + "yielded"


def collect_yields(tree: ast.AST, filename: str) -> None:
    """Rewrite ``tree`` in place if it is a generator function."""
    if not isinstance(tree, ast.FunctionDef):
        return
    yields = [n for n in walk_code(tree) if isinstance(n, (ast.Yield, ast.YieldFrom))]
    if not yields:
        return
    statements = {id(s.value) for s in walk_code(tree) if isinstance(s, ast.Expr)}
    for node in yields:
        if id(node) not in statements:
            raise _error(node, filename, "yield used as a value (a generator's send())",
                         "yield items only; pass values in as arguments")
    for loop in walk_code(tree):
        if isinstance(loop, ast.While) and isinstance(loop.test, ast.Constant) \
                and loop.test.value and not any(isinstance(n, (ast.Break, ast.Return))
                                                for n in walk_code(loop)):
            raise _error(loop, filename, "an endless generator (while True without break "
                         "or return): compiled, it makes all its items first",
                         "give the loop an end (a count of items to yield)")
    tree.body = [_Yields().visit(stmt) for stmt in tree.body]
    start = ast.copy_location(ast.Assign([store(_ITEMS)], ast.List([], ast.Load())),
                              tree.body[0])
    end = ast.copy_location(ast.Return(load(_ITEMS)), tree.body[-1])
    tree.body = [start, *tree.body, end]
    ast.fix_missing_locations(tree)


def _error(node: ast.AST, filename: str, message: str, hint: str) -> TraceError:
    loc = Loc(filename, getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
    return TraceError(message, loc=loc, hint=hint)


class _Yields(ast.NodeTransformer):
    """``yield v`` -> ``__aotc_yielded.append(v)``; ``return`` -> ``return`` the items."""

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        return node  # (a nested function: its yields and returns are its own)

    def visit_Lambda(self, node: ast.Lambda) -> ast.Lambda:
        return node

    def visit_Expr(self, node: ast.Expr) -> ast.stmt:
        value = node.value
        if isinstance(value, ast.Yield):
            item = value.value if value.value is not None else ast.Constant(None)
            return ast.copy_location(ast.Expr(_append(item)), node)
        if isinstance(value, ast.YieldFrom):
            each = HIDDEN + "item"
            loop = ast.For(store(each), value.value, [ast.Expr(_append(load(each)))], [])
            return ast.copy_location(loop, node)
        return node

    def visit_Return(self, node: ast.Return) -> ast.Return:
        return ast.copy_location(ast.Return(load(_ITEMS)), node)


def _append(item: ast.expr) -> ast.Call:
    return ast.Call(ast.Attribute(load(_ITEMS), "append", ast.Load()), [item], [])
