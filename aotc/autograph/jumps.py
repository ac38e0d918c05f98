"""Lower ``break`` and ``continue`` into flags, before loops are converted.

As in AutoGraph, a jump becomes an assignment to a flag, and the statements after
anything that may jump are guarded by the flag::

    for i in range(n):                  __brk_1 = False
        if x[i] < 0:                    for i in range(n):
            break                           if __aotc__.not_any(__brk_1):
        total += x[i]                           __cnt_1 = False
                                                if x[i] < 0:
                                                    __brk_1 = True
                                                if __aotc__.not_any(__brk_1, __cnt_1):
                                                    total += x[i]

A ``while`` loop also tests the break flag. The guards are ordinary ``if`` statements,
so on runtime values they become ``cond`` like any other; a loop over a runtime range
runs its remaining iterations without effect after a break.
"""

from __future__ import annotations

import ast
import itertools

from .transform import RUNTIME

_ids = itertools.count(1)


def _has_jump(node: ast.AST) -> bool:
    """A break/continue of the loop being lowered (not of a nested loop)."""
    if isinstance(node, (ast.Break, ast.Continue)):
        return True
    if isinstance(node, (ast.For, ast.While, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        return False
    return any(_has_jump(c) for c in ast.iter_child_nodes(node))


def _flag(name: str, value: bool) -> ast.Assign:
    return ast.Assign([ast.Name(name, ast.Store())], ast.Constant(value))


def _not_any(*names: str) -> ast.Call:
    return ast.Call(ast.Attribute(ast.Name(RUNTIME, ast.Load()), "not_any", ast.Load()),
                    [ast.Name(n, ast.Load()) for n in names], [])


class _Jumps:
    def __init__(self, brk: str, cnt: str) -> None:
        self.brk, self.cnt = brk, cnt
        self.used_break = self.used_continue = False

    def block(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for k, stmt in enumerate(stmts):
            jumps = _has_jump(stmt)
            out.extend(self.stmt(stmt))
            if jumps and k + 1 < len(stmts):
                rest = self.block(stmts[k + 1:])
                guard = ast.If(_not_any(self.brk, self.cnt), rest, [])
                out.append(ast.copy_location(guard, stmts[k + 1]))
                break
        return out

    def stmt(self, stmt: ast.stmt) -> list[ast.stmt]:
        if isinstance(stmt, ast.Break):
            self.used_break = True
            return [ast.copy_location(_flag(self.brk, True), stmt)]
        if isinstance(stmt, ast.Continue):
            self.used_continue = True
            return [ast.copy_location(_flag(self.cnt, True), stmt)]
        if isinstance(stmt, ast.If) and _has_jump(stmt):
            stmt.body = self.block(stmt.body) or [ast.Pass()]
            stmt.orelse = self.block(stmt.orelse)
        elif isinstance(stmt, (ast.With, ast.Try)) and _has_jump(stmt):
            stmt.body = self.block(stmt.body)
        return [stmt]


class _Lower(ast.NodeTransformer):
    def _loop(self, node: ast.For | ast.While) -> list[ast.stmt] | ast.AST:
        self.generic_visit(node)  # inner loops first: their jumps are their own
        if node.orelse or not any(_has_jump(s) for s in node.body):
            return node
        uid = next(_ids)
        jumps = _Jumps(f"__brk_{uid}", f"__cnt_{uid}")
        body = jumps.block(node.body)
        reset = ast.copy_location(_flag(jumps.cnt, False), node.body[0])
        if isinstance(node, ast.While):
            node.test = ast.Call(
                ast.Attribute(ast.Name(RUNTIME, ast.Load()), "and_not", ast.Load()),
                [node.test, ast.Name(jumps.brk, ast.Load())], [])
            node.body = [reset] + body
        else:
            guarded = ast.If(_not_any(jumps.brk), [reset] + body, [])
            node.body = [ast.copy_location(guarded, node.body[0])]
        init = ast.copy_location(_flag(jumps.brk, False), node)
        return [init, node]

    visit_For = _loop
    visit_While = _loop

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        return node  # nested functions keep their own loops


def lower_jumps(tree: ast.FunctionDef) -> None:
    """Rewrite every loop's break/continue into flags, in place."""
    lower = _Lower()
    body: list[ast.stmt] = []
    for stmt in tree.body:
        result = lower.visit(stmt)
        body.extend(result if isinstance(result, list) else [result])
    tree.body = body
