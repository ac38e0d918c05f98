"""Which variables are live where: the state a converted statement must carry.

A converted ``if``/``for``/``while`` passes explicit state in and out of the functions
its bodies become. A variable belongs in that state when the statement assigns it and
its value may be read afterwards (live after the statement, or, for a loop, read in the
body before the body assigns it). Anything else the body assigns is a temporary of the
body, so ``t = x[i]`` inside a loop and ``t = 0.0`` after it is no carry at all.

This is the classic backward dataflow over the statements of one function (structured
code only: ``break``/``continue``/``return`` inside loops are lowered to flags first).
Writes into arrays (``y[i] = v``, ``x += 1``) are not assignments here: a body that
mutates an array made outside it carries that array anyway (see ``aotc.tracing.control``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from .syntax import is_runtime_call, parameters, walk_code

Names = frozenset[str]
EMPTY: Names = frozenset()


def stored(target: ast.AST) -> set[str]:
    """Names a target binds (``a``, ``a, (b, *c)``); subscripts and attributes bind none."""
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, (ast.Tuple, ast.List)):
        return set().union(*(stored(t) for t in target.elts)) if target.elts else set()
    if isinstance(target, ast.Starred):
        return stored(target.value)
    return set()


def assigned(nodes: Iterable[ast.AST]) -> set[str]:
    """Names the statements bind (not inside nested functions)."""
    found: set[str] = set()
    for node in nodes:
        for sub in walk_code(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                found.add(sub.id)
            elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)) and sub is not node:
                found.add(sub.name)
    return found


def local_names(fn: ast.FunctionDef) -> frozenset[str]:
    """A function's own variables: its parameters and what it assigns."""
    return frozenset(parameters(fn)) | assigned(fn.body)


#: Methods that change a Python container (or an array) in place.
MUTATORS = frozenset({"extend", "insert", "pop", "remove", "clear", "sort", "reverse", "add",
                      "discard", "update", "setdefault", "popitem", "fill", "itemset"})


def items_written(nodes: Iterable[ast.AST]) -> set[str]:
    """Names whose items or attributes the statements change without rebinding them
    (``lst[i] = v``, ``t[i][j] += 1``, ``s.add(v)``, ``obj.x = v``)."""
    found: set[str] = set()
    for node in nodes:
        for sub in walk_code(node):
            targets: list[ast.expr] = sub.targets if isinstance(sub, ast.Assign) else \
                [sub.target] if isinstance(sub, ast.AugAssign) else []
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) \
                    and sub.func.attr in MUTATORS:
                targets = [sub.func]
            if is_runtime_call(sub) and sub.func.attr == "changed_by":  # type: ignore[attr-defined]
                targets = [ast.Subscript(sub.args[1], ast.Constant(0))]  # type: ignore[attr-defined]
            for target in targets:
                while isinstance(target, (ast.Subscript, ast.Attribute)):
                    target = target.value
                    if isinstance(target, ast.Name):
                        found.add(target.id)
    return found


def uses(node: ast.AST) -> set[str]:
    """Names an expression (or a statement's own expressions) reads. Comprehensions and
    lambdas read what they use from outside, not their own targets and parameters."""
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
        bound: set[str] = set()
        found: set[str] = set()
        for gen in node.generators:
            found |= uses(gen.iter) - bound
            bound |= stored(gen.target)
            for cond in gen.ifs:
                found |= uses(cond) - bound
        parts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        for part in parts:
            found |= uses(part) - bound
        return found
    if isinstance(node, ast.Lambda):
        params = set(parameters(node))
        return (uses(node.body) | set().union(*map(uses, node.args.defaults))) - params
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        params = set(parameters(node))
        inner = set().union(*(uses(s) for s in node.body)) if node.body else set()
        return (inner - params - assigned(node.body)) | set().union(
            *map(uses, node.args.defaults + node.decorator_list))
    if isinstance(node, ast.Name):
        return {node.id} if isinstance(node.ctx, ast.Load) else set()
    found = set()
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.stmt):
            continue  # a compound statement's body is the dataflow's business
        found |= uses(child)
    return found


class Liveness:
    """Live variables after every statement of a function (by ``id`` of the node), and at
    the start of every loop body and branch."""

    def __init__(self, fn: ast.FunctionDef) -> None:
        self.after: dict[int, Names] = {}
        self.body_entry: dict[int, Names] = {}
        #: The function's own variables (its parameters and what it assigns): ``np`` in
        #: ``np.sort(x)`` is not one, so that call changes no variable of the function.
        self.local_names: Names = local_names(fn)
        self.block(fn.body, EMPTY)

    def block(self, stmts: list[ast.stmt], live: Names) -> Names:
        for stmt in reversed(stmts):
            live = self.stmt(stmt, live)
        return live

    def stmt(self, s: ast.stmt, live: Names) -> Names:
        self.after[id(s)] = live
        if isinstance(s, ast.If):  # entry of a branch: what it reads before it assigns
            entry = self.block(s.body, live) | self.block(s.orelse, live)
            self.body_entry[id(s)] = entry
            return frozenset(uses(s.test)) | entry
        if isinstance(s, (ast.For, ast.While)):
            return self._loop(s, live)
        if isinstance(s, ast.Return):
            return frozenset(uses(s.value)) if s.value is not None else EMPTY
        if isinstance(s, (ast.Assign, ast.AnnAssign)):
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            bound = set().union(*map(stored, targets))
            reads = set().union(*(uses(t) for t in targets))  # subscripts, attributes
            value = uses(s.value) if s.value is not None else set()
            return (live - bound) | reads | value
        if isinstance(s, ast.AugAssign):
            return live | uses(s.target) | {n.id for n in ast.walk(s.target)
                                            if isinstance(n, ast.Name)} | uses(s.value)
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return (live - {s.name}) | uses(s)
        if isinstance(s, ast.With):
            inner = self.block(s.body, live)
            bound = set().union(*(stored(i.optional_vars) for i in s.items
                                  if i.optional_vars is not None))
            return (inner - bound) | set().union(*(uses(i.context_expr) for i in s.items))
        if isinstance(s, ast.Try):
            blocks = [s.body, s.orelse, s.finalbody] + [h.body for h in s.handlers]
            return live.union(*(self.block(b, live) for b in blocks))
        return live | uses(s)

    def _loop(self, s: ast.For | ast.While, live: Names) -> Names:
        """A loop's head is live with what follows the loop and what the body needs."""
        target = stored(s.target) if isinstance(s, ast.For) else set()
        after = live | self.block(s.orelse, live)
        head: Names = after
        for _ in range(100):  # the sets only grow; a few rounds reach the fixpoint
            entry = self.block(s.body, head)
            grown = after | (entry - target)
            if isinstance(s, ast.While):
                grown |= uses(s.test)
            if grown == head:
                break
            head = grown
        # A while loop's test reads at the head, after every pass of the body: what it
        # reads is needed there as much as what the body reads before assigning it.
        self.body_entry[id(s)] = entry | (frozenset(uses(s.test)) if isinstance(s, ast.While)
                                          else EMPTY)
        return head | (uses(s.iter) if isinstance(s, ast.For) else set())
