"""Lower ``return`` inside ``if``/``for``/``while`` into a flag, as AutoGraph does.

Before the statements are converted, each early return becomes an assignment of the
return value and of a flag; what follows a statement that may return is guarded by the
flag; a loop that may return breaks (then :mod:`.jumps` lowers the ``break``)::

    def first_positive(x):                  def first_positive(x):
        for i in range(len(x)):                 __aotc_did_ret = False
            if x[i] > 0:                        for i in range(len(x)):
                return i                            if x[i] > 0:
        return -1                                       __aotc_ret = i
                                                        __aotc_did_ret = True
                                                        break
                                                if __aotc__.not_any(__aotc_did_ret):
                                                    __aotc_ret = -1
                                                    __aotc_did_ret = True
                                                return __aotc_ret

The return value has no value on the paths that have not returned yet; the runtime
fills it there with zeros of the type the returning path gives it (never read: the flag
guards every read), so every path must return the same type.
"""

from __future__ import annotations

import ast

from .syntax import HIDDEN, assign, load, runtime_call, walk_code

RET = HIDDEN + "ret"
DID_RET = HIDDEN + "did_ret"


def _returns(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Return) for n in walk_code(node))


def _always_leaves(stmts: list[ast.stmt]) -> bool:
    """Every path through ``stmts`` returns or raises (so what follows is dead code)."""
    for stmt in stmts:
        if isinstance(stmt, (ast.Return, ast.Raise)):
            return True
        if isinstance(stmt, ast.If) and _always_leaves(stmt.body) \
                and _always_leaves(stmt.orelse):
            return True
        if isinstance(stmt, ast.While) and isinstance(stmt.test, ast.Constant) \
                and stmt.test.value and not _breaks(stmt.body):
            return True  # while True: left only by a return (or a raise)
    return False


def _breaks(stmts: list[ast.stmt]) -> bool:
    """A ``break`` of the loop these statements are the body of (not of inner loops)."""
    for stmt in stmts:
        if isinstance(stmt, ast.Break):
            return True
        if isinstance(stmt, ast.If) and (_breaks(stmt.body) or _breaks(stmt.orelse)):
            return True
        if isinstance(stmt, (ast.With, ast.Try)) and _breaks(stmt.body):
            return True
    return False


def _nested_return(stmts: list[ast.stmt]) -> bool:
    """A return inside a compound statement (one at the top level needs no lowering)."""
    return any(_returns(s) for s in stmts if not isinstance(s, ast.Return))


class _Lower:
    def __init__(self, valued: bool) -> None:
        self.valued = valued  # some return has a value: keep it in RET

    def block(self, stmts: list[ast.stmt], in_loop: bool) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for k, stmt in enumerate(stmts):
            if isinstance(stmt, ast.Return):
                out += self._return(stmt, in_loop)
                return out  # what follows a return is dead code
            if not _returns(stmt):
                out.append(stmt)
                continue
            leaves = _always_leaves([stmt])
            out.append(self.stmt(stmt))
            if leaves:  # every path returned: the flag is True here, at build time
                out.append(assign(DID_RET, ast.Constant(True), stmt))
                if in_loop:
                    out.append(ast.copy_location(ast.Break(), stmt))
                return out
            if in_loop:  # leave the enclosing loop too
                out.append(ast.copy_location(
                    ast.If(load(DID_RET), [ast.copy_location(ast.Break(), stmt)], []), stmt))
            rest = self.block(stmts[k + 1:], in_loop)
            if rest:
                guard = ast.If(runtime_call("not_any", load(DID_RET)), rest, [])
                out.append(ast.copy_location(guard, stmts[k + 1]))
            return out
        return out

    def _return(self, stmt: ast.Return, in_loop: bool) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        if self.valued:
            value = stmt.value if stmt.value is not None else ast.Constant(None)
            out.append(assign(RET, value, stmt))
        out.append(assign(DID_RET, ast.Constant(True), stmt))
        if in_loop:
            out.append(ast.copy_location(ast.Break(), stmt))
        return out

    def stmt(self, stmt: ast.stmt) -> ast.stmt:
        if isinstance(stmt, ast.If):
            stmt.body = self.block(stmt.body, False) or [ast.Pass()]
            stmt.orelse = self.block(stmt.orelse, False)
        elif isinstance(stmt, (ast.For, ast.While)):
            stmt.body = self.block(stmt.body, True) or [ast.Pass()]
            stmt.orelse = self.block(stmt.orelse, False)  # runs after the loop
        elif isinstance(stmt, (ast.With, ast.Try)):
            stmt.body = self.block(stmt.body, False)
        return stmt


def lower_returns(tree: ast.FunctionDef) -> None:
    """Rewrite the early returns of one function, in place (nested functions keep theirs)."""
    if not _nested_return(tree.body):
        return
    valued = any(isinstance(n, ast.Return) and n.value is not None
                 and not (isinstance(n.value, ast.Constant) and n.value.value is None)
                 for n in walk_code(tree))
    body = _Lower(valued).block(tree.body, False)
    if valued and not _always_leaves(tree.body):
        # Falling off the end returns None in Python: give that path its value.
        body.append(ast.If(runtime_call("not_any", load(DID_RET)),
                           [assign(RET, ast.Constant(None), tree.body[-1])], []))
    first = tree.body[0]
    tree.body = [assign(DID_RET, ast.Constant(False), first), *body,
                 ast.copy_location(ast.Return(load(RET) if valued else None), tree.body[-1])]
