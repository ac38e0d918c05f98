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

A ``while`` loop also tests the break flag, so it stops at the break. A loop over
``range(...)`` that breaks (or returns, see :mod:`.returns`) becomes such a ``while``
loop first, so it stops too; the guards are ordinary ``if`` statements, so on runtime
values they become ``cond`` like any other. Other loops that break run their remaining
iterations without effect.
"""

from __future__ import annotations

import ast
import itertools

from .syntax import HIDDEN, RUNTIME, assign, load, store

_ids = itertools.count(1)


def _has_jump(node: ast.AST, kinds: tuple[type, ...] = (ast.Break, ast.Continue)) -> bool:
    """A jump of the loop being lowered (not of a nested loop)."""
    if isinstance(node, kinds):
        return True
    if isinstance(node, (ast.For, ast.While, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        return False
    return any(_has_jump(c, kinds) for c in ast.iter_child_nodes(node))


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


def _static_step(node: ast.expr | None) -> int | None:
    """The value of a range step written as an int literal (``2``, ``-1``), else None."""
    if node is None:
        return 1
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and node.value:
        return int(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _static_step(node.operand)
        return -inner if inner is not None else None
    return None


def _range_as_while(node: ast.For) -> list[ast.stmt] | None:
    """``for i in range(a, b, s)`` (a literal step) as the ``while`` loop it is::

        __it = a; __stop = b
        while __it < __stop:      # > for a negative step
            i = __it; __it += s
            body

    The ``while`` node remembers the range (``aotc_range``): its trip count bounds the
    lists the loop appends to (:mod:`.lists`)."""
    it = node.iter
    if not (isinstance(node.target, ast.Name) and isinstance(it, ast.Call)
            and isinstance(it.func, ast.Name) and it.func.id == "range" and not it.keywords
            and 1 <= len(it.args) <= 3):
        return None
    args = it.args
    step = _static_step(args[2] if len(args) == 3 else None)
    if step is None:
        return None
    start, stop = (ast.Constant(0), args[0]) if len(args) == 1 else (args[0], args[1])
    uid = next(_ids)
    counter, limit = f"{HIDDEN}it_{uid}", f"{HIDDEN}stop_{uid}"
    test = ast.Compare(load(counter), [ast.Lt() if step > 0 else ast.Gt()], [load(limit)])
    advance = ast.AugAssign(store(counter), ast.Add(), ast.Constant(step))
    body = [assign(node.target.id, load(counter), node), ast.copy_location(advance, node),
            *node.body]
    loop = ast.copy_location(ast.While(ast.copy_location(test, it), body, []), node)
    loop.aotc_range = (counter, limit, step)  # type: ignore[attr-defined]  # its trips
    return [assign(counter, start, node), assign(limit, stop, node), loop]


def _test_in_body(node: ast.While) -> None:
    """A ``while`` test that assigns (``while (v := x[i]) > 0:``) made the body's first
    statement, ``if test: pass`` ``else: break``, in place: a loop's test is traced as a function of
    its own, whose assignments the body would not see."""
    if node.orelse or not any(isinstance(n, ast.NamedExpr) for n in ast.walk(node.test)):
        return
    stop = ast.If(node.test, [ast.copy_location(ast.Pass(), node)],
                  [ast.copy_location(ast.Break(), node)])
    node.body.insert(0, ast.copy_location(stop, node.test))
    node.test = ast.copy_location(ast.Constant(True), node.test)


class _Lower(ast.NodeTransformer):
    def _loop(self, node: ast.For | ast.While) -> list[ast.stmt] | ast.AST:
        """The loop with its jumps lowered; its ``else:`` clause after it, run where the
        loop did not break."""
        if isinstance(node, ast.While):
            _test_in_body(node)
        self.generic_visit(node)  # inner loops first: their jumps are their own
        orelse, node.orelse = node.orelse, []
        if not any(_has_jump(s) for s in node.body):
            return [node, *orelse] if orelse else node
        setup: list[ast.stmt] = []
        loop: ast.For | ast.While = node
        if isinstance(node, ast.For) and any(_has_jump(s, (ast.Break,)) for s in node.body):
            rewritten = _range_as_while(node)
            if rewritten is not None:
                *setup, loop = rewritten  # type: ignore[assignment]
        lowered, brk = self._loop_jumps(loop)
        if orelse and brk is not None:
            orelse = [ast.copy_location(ast.If(_not_any(brk), orelse, []), orelse[0])]
        return [*setup, *lowered, *orelse]

    def _loop_jumps(self, node: ast.For | ast.While) -> tuple[list[ast.stmt], str | None]:
        """The loop with flags for its jumps, and the name of its break flag (None if it
        does not break)."""
        uid = next(_ids)
        jumps = _Jumps(f"{HIDDEN}brk_{uid}", f"{HIDDEN}cnt_{uid}")
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
        return [init, node], jumps.brk if jumps.used_break else None

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
