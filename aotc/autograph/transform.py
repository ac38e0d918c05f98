"""Rewrite a kernel's ``for``/``while``/``if`` statements into calls that can trace.

In the spirit of TensorFlow's AutoGraph, each statement becomes local functions that
take and return the *state*: the variables the statement assigns that are live around
it. For example::

    for i in range(1, n):                 def __body_1(i, __state):
        y[i] = a * y[i - 1] + x[i]            (y,) = __state
                                              y[i] = a * y[i - 1] + x[i]
                                              return (y,)
                                          (y,) = __aotc__.for_range(
                                              __body_1, (maybe(lambda: y),), ('y',), 1, n)

Statements containing ``return``, ``break``, ``continue`` or ``yield`` stay as written:
on build-time values they run as Python, and on traced values the tracer's own error
explains what to change. Line numbers are kept, so errors point at the user's source.
"""

from __future__ import annotations

import ast
import itertools
import sys
from collections.abc import Iterable, Set

RUNTIME = "__aotc__"
_ids = itertools.count(1)


def _assigned(nodes: Iterable[ast.AST]) -> set[str]:
    """Names a block binds, including arrays written through subscripts (``y[i] = v``)."""
    found: set[str] = set()
    for node in nodes:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                found.add(sub.id)
            elif isinstance(sub, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
                for target in targets:
                    for t in ast.walk(target):
                        if isinstance(t, ast.Subscript):
                            root = t.value
                            while isinstance(root, (ast.Subscript, ast.Attribute)):
                                root = root.value
                            if isinstance(root, ast.Name):
                                found.add(root.id)
            elif isinstance(sub, (ast.FunctionDef, ast.Lambda)) and sub is not node:
                continue
    return found


def _walk_code(node: ast.AST) -> Iterable[ast.AST]:
    """``ast.walk`` that does not enter functions (their returns are their own)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        return
    yield node
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            yield from _walk_code(child)


def _escapes(nodes: Iterable[ast.AST], loop: bool) -> bool:
    """True if the block leaves by return/yield (or break/continue of this loop)."""
    for node in nodes:
        for sub in _walk_code(node):
            if isinstance(sub, (ast.Return, ast.Yield, ast.YieldFrom)):
                return True
            if not loop and isinstance(sub, (ast.Break, ast.Continue)):
                return True
        if loop and _has_own_break(node):
            return True
    return False


def _has_own_break(node: ast.AST) -> bool:
    if isinstance(node, (ast.Break, ast.Continue)):
        return True
    if isinstance(node, (ast.For, ast.While, ast.FunctionDef, ast.Lambda)):
        return False
    return any(_has_own_break(child) for child in ast.iter_child_nodes(node))


def _state_tuple(names: list[str], ctx: ast.expr_context) -> ast.Tuple:
    return ast.Tuple([ast.Name(n, ctx) for n in names], ctx)


def _call(attr: str, *args: ast.expr) -> ast.Call:
    return ast.Call(ast.Attribute(ast.Name(RUNTIME, ast.Load()), attr, ast.Load()),
                    list(args), [])


def _initial_state(names: list[str]) -> ast.Tuple:
    reads: list[ast.expr] = [
        _call("maybe", ast.Lambda(ast.arguments([], [], None, [], [], None, []),
                                  ast.Name(n, ast.Load()))) for n in names]
    return ast.Tuple(reads, ast.Load())


def _names_const(names: list[str]) -> ast.Tuple:
    return ast.Tuple([ast.Constant(n) for n in names], ast.Load())


def _function(name: str, params: list[str], state: list[str], body: list[ast.stmt]
              ) -> ast.FunctionDef:
    unpack = [ast.Assign([_state_tuple(state, ast.Store())], ast.Name("__state", ast.Load()))]
    ret = ast.Return(_state_tuple(state, ast.Load()))
    args = ast.arguments([], [ast.arg(p) for p in params + ["__state"]], None, [], [], None, [])
    fn = ast.FunctionDef(name=name, args=args, body=(unpack if state else []) + body + [ret],
                         decorator_list=[], returns=None)
    if sys.version_info >= (3, 12):
        fn.type_params = []
    return fn


class _Converter(ast.NodeTransformer):
    """Rewrites statements bottom-up, knowing which names each function binds."""

    def __init__(self, root: ast.FunctionDef, local_names: set[str]) -> None:
        self.root = root
        self.local_names = local_names
        self.node: ast.stmt | None = None

    def _state(self, blocks: list[list[ast.stmt]], exclude: Set[str] = frozenset()) -> list[str]:
        """Names the statement assigns that the rest of the function also mentions:
        variables only used inside the statement are its temporaries, not its state."""
        names: set[str] = set()
        for block in blocks:
            names |= _assigned(block)
        inside = set(map(id, ast.walk(self.node))) if self.node is not None else set()
        outside = {n.id for n in ast.walk(self.root)
                   if isinstance(n, ast.Name) and id(n) not in inside}
        outside |= {a.arg for a in self.root.args.args + self.root.args.kwonlyargs}
        return sorted((names & self.local_names & outside) - exclude)

    def visit(self, node: ast.AST) -> object:
        if isinstance(node, (ast.For, ast.While, ast.If)):
            self.generic_visit(node)
            self.node = node
            return super().visit(node)
        return super().visit(node)

    def _emit(self, node: ast.stmt, defs: list[ast.stmt], call: ast.Call,
              state: list[str]) -> list[ast.stmt]:
        target = _state_tuple(state, ast.Store()) if state else ast.Name("_", ast.Store())
        assign = ast.Assign([target], call)
        out = defs + [assign]
        for stmt in out:
            ast.copy_location(stmt, node)
        return out

    def visit_For(self, node: ast.For) -> object:
        if _escapes(node.body, loop=False):
            return _static_only(node, "a for loop containing return")
        if node.orelse or not isinstance(node.target, ast.Name) \
                and not _is_enumerate_target(node):
            return node
        uid = next(_ids)
        body_name = f"__aotc_body_{uid}"
        it = node.iter
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range" \
                and not it.keywords and 1 <= len(it.args) <= 3:
            assert isinstance(node.target, ast.Name)  # enumerate's tuple is not over range
            target = node.target.id
            state = self._state([node.body], {target})
            fn = _function(body_name, [target], state, node.body)
            call = _call("for_range", ast.Name(body_name, ast.Load()), _initial_state(state),
                         _names_const(state), *it.args)
            return self._emit(node, [fn], call, state)
        enumerated = _is_enumerate_target(node)
        if enumerated:
            it = it.args[0]  # type: ignore[attr-defined]
        item = f"__aotc_item_{uid}"
        target_assign = ast.Assign([node.target], ast.Name(item, ast.Load()))
        ast.copy_location(target_assign, node)
        targets = {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
        state = self._state([node.body], targets)
        fn = _function(body_name, [item], state, [target_assign] + node.body)
        call = _call("for_iter", ast.Name(body_name, ast.Load()), _initial_state(state),
                     _names_const(state), it, ast.Constant(enumerated))
        return self._emit(node, [fn], call, state)

    def visit_While(self, node: ast.While) -> object:
        if _escapes(node.body, loop=False):
            return _static_only(node, "a while loop containing return")
        if node.orelse:
            return node
        uid = next(_ids)
        state = self._state([node.body])
        test = _function(f"__aotc_test_{uid}", [], state, [])
        test.body[-1] = ast.Return(node.test)
        body = _function(f"__aotc_body_{uid}", [], state, node.body)
        call = _call("while_stmt", ast.Name(test.name, ast.Load()),
                     ast.Name(body.name, ast.Load()), _initial_state(state), _names_const(state))
        return self._emit(node, [test, body], call, state)

    def visit_If(self, node: ast.If) -> object:
        if _escapes(node.body, loop=False) or _escapes(node.orelse, loop=False):
            return _static_only(node, "an if statement containing return")
        uid = next(_ids)
        state = self._state([node.body, node.orelse])
        then = _function(f"__aotc_then_{uid}", [], state, node.body or [ast.Pass()])
        orelse = _function(f"__aotc_else_{uid}", [], state, node.orelse or [ast.Pass()])
        call = _call("if_stmt", node.test, ast.Name(then.name, ast.Load()),
                     ast.Name(orelse.name, ast.Load()), _initial_state(state),
                     _names_const(state))
        return self._emit(node, [then, orelse], call, state)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> object:
        return node  # nested functions (e.g. lax bodies) are left as written


def _static_only(node: ast.For | ast.While | ast.If, what: str) -> ast.stmt:
    """Leave the statement as Python, but explain the error if it meets a runtime value."""
    reason = ast.Constant(what)
    if isinstance(node, ast.For):
        it = node.iter
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range":
            it.func = ast.Attribute(ast.Name(RUNTIME, ast.Load()), "range_", ast.Load())
        node.iter = ast.copy_location(_call("static_iterable", it, reason), it)
    else:
        node.test = ast.copy_location(_call("static_test", node.test, reason), node.test)
    return node


def _is_enumerate_target(node: ast.For) -> bool:
    it = node.iter
    return (isinstance(it, ast.Call) and isinstance(it.func, ast.Name)
            and it.func.id == "enumerate" and len(it.args) == 1 and not it.keywords
            and isinstance(node.target, ast.Tuple) and len(node.target.elts) == 2)


#: Builtins that read their caller's frame: a call through the runtime would change them.
_FRAME_BUILTINS = frozenset({"super", "locals", "globals", "vars", "dir", "eval", "exec"})


class _Calls(ast.NodeTransformer):
    """``f(a, *b, k=c)`` -> ``__aotc__.call(f, a, *b, k=c)``: every call the user wrote is
    looked at when it runs (see ``runtime.call``); the converter's own calls are not."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
                and func.value.id == RUNTIME:
            return node
        if isinstance(func, ast.Name) and func.id in _FRAME_BUILTINS:
            return node
        routed = ast.Call(ast.Attribute(ast.Name(RUNTIME, ast.Load()), "call", ast.Load()),
                          [func, *node.args], node.keywords)
        return ast.copy_location(routed, node)


def convert_function(tree: ast.FunctionDef) -> ast.FunctionDef:
    """Convert the control flow and the calls in one function definition (in place)."""
    from .jumps import lower_jumps

    lower_jumps(tree)
    local_names = _assigned(tree.body) | {a.arg for a in tree.args.args + tree.args.kwonlyargs}
    converter = _Converter(tree, local_names)
    new_body: list[ast.stmt] = []
    for stmt in tree.body:
        result = converter.visit(stmt)
        for new in result if isinstance(result, list) else [result]:
            assert isinstance(new, ast.stmt)
            new_body.append(new)
    tree.body = [_Calls().visit(stmt) for stmt in new_body]
    tree.decorator_list = []
    return tree


__all__ = ["RUNTIME", "convert_function"]
