"""Assignment expressions (``v := e``) made statements of their own, before conversion.

Conversion puts expressions inside thunks (``compare(lambda: v, ...)``, see
:mod:`.expressions`), and a walrus inside a lambda binds the lambda's own variable. So
``if (m := x.max()) > 0:`` becomes ``m = x.max()`` then ``if m > 0:``, in the order
Python evaluates them; an ``if`` test of ``and``/``or`` operands is a chain of ``if``
statements, so a walrus in a later operand runs only where Python runs it. Other
walruses that Python might not evaluate (a later operand of ``and``/``or`` elsewhere, a
branch of ``a if c else b``, a comprehension or lambda) stay where they are.
"""

from __future__ import annotations

import ast
import itertools
from typing import cast

from .syntax import HIDDEN, assign, load, rewrite_blocks

_ids = itertools.count(1)


def _hoisted(node: ast.AST, out: list[ast.stmt], like: ast.stmt) -> ast.AST:
    """``node`` with each walrus Python always evaluates replaced by its variable, whose
    assignment is appended to ``out``, innermost and leftmost first."""
    if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                         ast.GeneratorExp, ast.FunctionDef, ast.ClassDef)):
        return node
    if isinstance(node, ast.BoolOp):
        node.values[0] = cast(ast.expr, _hoisted(node.values[0], out, like))
        return node
    if isinstance(node, ast.IfExp):
        node.test = cast(ast.expr, _hoisted(node.test, out, like))
        return node
    for field, value in ast.iter_fields(node):
        if isinstance(value, list):
            setattr(node, field, [_hoisted(v, out, like) if isinstance(v, ast.AST) and not
                                  isinstance(v, ast.stmt) else v for v in value])
        elif isinstance(value, ast.AST) and not isinstance(value, ast.stmt):
            setattr(node, field, _hoisted(value, out, like))
    if isinstance(node, ast.NamedExpr):
        out.append(assign(node.target.id, node.value, like))
        return ast.copy_location(load(node.target.id), node)
    return node


def _walrus(node: ast.AST) -> bool:
    return any(isinstance(n, ast.NamedExpr) for n in ast.walk(node))


def _chained_test(stmt: ast.If) -> list[ast.stmt]:
    """``if a and (v := b) > 0:`` as a chain that evaluates each operand only where
    Python does, its walrus a statement there::

        __aotc_test_1 = not not a
        if __aotc_test_1:
            v = b
            __aotc_test_1 = not not v > 0
        if __aotc_test_1: ...
    """
    test = stmt.test
    assert isinstance(test, ast.BoolOp)
    flag = f"{HIDDEN}test_{next(_ids)}"

    def truth(value: ast.expr) -> list[ast.stmt]:
        double = ast.UnaryOp(ast.Not(), ast.UnaryOp(ast.Not(), value))
        return _statement(assign(flag, ast.copy_location(double, value), stmt))

    out = truth(test.values[0])
    for value in test.values[1:]:
        go: ast.expr = load(flag) if isinstance(test.op, ast.And) \
            else ast.UnaryOp(ast.Not(), load(flag))
        out.append(ast.copy_location(ast.If(go, truth(value), []), value))
    stmt.test = ast.copy_location(load(flag), test)
    return [*out, stmt]


def _statement(stmt: ast.stmt) -> list[ast.stmt]:
    if not _walrus(stmt):
        return [stmt]
    if isinstance(stmt, ast.If) and isinstance(stmt.test, ast.BoolOp) \
            and any(_walrus(v) for v in stmt.test.values[1:]):
        return _chained_test(stmt)
    before: list[ast.stmt] = []
    for field in ("test", "value", "iter", "targets", "target", "exc"):
        if isinstance(stmt, (ast.For, ast.While)) and field == "test":
            continue  # (a while loop's test runs again each time: see jumps._test_in_body)
        value = getattr(stmt, field, None)
        if isinstance(value, ast.AST):
            setattr(stmt, field, _hoisted(value, before, stmt))
    return [*before, stmt]


def hoist_assignment_expressions(tree: ast.FunctionDef) -> None:
    """Rewrite ``tree``'s statements as the module says, in place."""
    rewrite_blocks(tree, _statement)
