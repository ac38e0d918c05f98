"""Rewrite a kernel's statements and calls into code that can trace.

In the spirit of TensorFlow's AutoGraph, one function is converted in passes over its
AST: early returns become flags (:mod:`.returns`), ``break``/``continue`` become flags
(:mod:`.jumps`), expressions Python would evaluate with ``bool()`` become runtime calls
(:mod:`.expressions`), then each ``for``/``while``/``if`` becomes local functions that
take and return the statement's *state*, the variables it assigns that are live after
it (:mod:`.liveness`), and last every call goes through the runtime::

    for i in range(1, n):                 def __aotc_body_1(i, __state):
        s = s + x[i] * i                      (s,) = __state
                                              s = s + __aotc__.call(...)...
                                              return (s,)
                                          (s,) = __aotc__.for_range(
                                              __aotc_body_1, (maybe(lambda: s),), ('s',), 1, n)

On build-time values the runtime runs each statement as Python (loops unroll); on
traced values it builds structured control flow. Line numbers are kept, so errors
point at the user's source.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator
from typing import Any

from .catching import catch_runtime_errors
from .closures import late_bound_closures
from .comprehension_loops import comprehensions_as_loops
from .expressions import convert_expressions
from .hoisting import hoist_changing_calls
from .jumps import lower_jumps
from .liveness import Liveness, assigned, items_written, local_names
from .passed_back import (
    CONTAINER_CHANGES,
    Changes,
    ChangesOf,
    appended_parameters,
    changed_argument,
    changes_per_parameter,
    pass_back_appends,
)
from .returns import lower_returns
from .syntax import (
    HIDDEN,
    RUNTIME,
    function,
    is_runtime_call,
    load,
    runtime_call,
    store,
    thunk,
)
from .walrus import hoist_assignment_expressions

_ids = itertools.count(1)


def _state_tuple(names: list[str], ctx: ast.expr_context) -> ast.Tuple:
    return ast.Tuple([ast.Name(n, ctx) for n in names], ctx)


def _initial_state(names: list[str]) -> ast.Tuple:
    return ast.Tuple([runtime_call("maybe", thunk(load(n))) for n in names], ast.Load())


def _names_const(names: list[str]) -> ast.Tuple:
    return ast.Tuple([ast.Constant(n) for n in names], ast.Load())


def _body_function(name: str, params: list[str], state: list[str], body: list[ast.stmt]
                   ) -> ast.FunctionDef:
    unpack = [ast.Assign([_state_tuple(state, ast.Store())], load("__state"))]
    ret = ast.Return(_state_tuple(state, ast.Load()))
    return function(name, params + ["__state"], (unpack if state else []) + body + [ret])


class _Statements(ast.NodeTransformer):
    """Rewrites ``for``/``while``/``if`` bottom-up, with their state from liveness."""

    def __init__(self, live: Liveness) -> None:
        self.live = live

    def _state(self, node: ast.stmt, blocks: list[list[ast.stmt]],
               exclude: frozenset[str] = frozenset()) -> tuple[list[str], list[str]]:
        """The variables the statement assigns that are live after it, and those whose
        items it writes without assigning them (a Python list must be carried; see
        :mod:`.written`), both in the state."""
        stmts = [s for block in blocks for s in block]
        names = assigned(stmts) - set(exclude)
        needed = set(self.live.after.get(id(node), ())) | set(
            self.live.body_entry.get(id(node), ()))
        written = sorted((items_written(stmts) - names - set(exclude)) & needed
                         & self.live.local_names)
        return sorted(names & needed) + written, written

    def _shared(self, node: ast.stmt, state: list[str]) -> list[ast.keyword]:
        """``shared=(values)``: the variables read after a loop that it does not assign.
        An array one of them holds is shared with a state variable that the loop may
        narrow to a view of it (``v = y``, then ``v = v[1:]``): see
        :func:`.chosen_views.resized_views`."""
        names = sorted((set(self.live.after.get(id(node), ())) - set(state))
                       & self.live.local_names)
        return [ast.keyword("shared", _initial_state(names))] if names else []

    def _emit(self, node: ast.stmt, defs: list[ast.stmt], call: ast.Call,
              state: list[str]) -> list[ast.stmt]:
        target = _state_tuple(state, ast.Store()) if state else store("_")
        out = defs + [ast.Assign([target], call)]
        for stmt in out:
            ast.copy_location(stmt, node)
        return out

    def visit_For(self, node: ast.For) -> object:
        # The target keeps its last item after the loop, as in Python, when it is read
        # there: then the body assigns it from the item, and the state carries it.
        targets = set(_target_names(node.target))
        kept = targets & set(self.live.after.get(id(node), ()))
        uid = next(_ids)
        item = f"{HIDDEN}item_{uid}"
        target_assign = ast.copy_location(ast.Assign([node.target], load(item)), node)
        state, written = self._state(node, [[target_assign], node.body],
                                     frozenset(targets - kept))
        self.generic_visit(node)
        if node.orelse:
            return node
        body_name = f"{HIDDEN}body_{uid}"
        it = node.iter
        if isinstance(node.target, ast.Name) and isinstance(it, ast.Call) \
                and isinstance(it.func, ast.Name) and it.func.id == "range" \
                and not it.keywords and 1 <= len(it.args) <= 3:
            fn = _body_function(body_name, [item], state, [target_assign] + node.body) \
                if kept else _body_function(body_name, [node.target.id], state, node.body)
            call = runtime_call("for_range", load(body_name), _initial_state(state),
                                _names_const(state), *it.args)
            call.keywords = _loop_keywords(node.body, written) + self._shared(node, state)
            return self._emit(node, [fn], call, state)
        if isinstance(node.target, (ast.Tuple, ast.List)):
            target_assign.value = runtime_call("unpack", load(item),
                                               ast.Constant(len(node.target.elts)))
        fn = _body_function(body_name, [item], state, [target_assign] + node.body)
        call = runtime_call("for_iter", load(body_name), _initial_state(state),
                            _names_const(state), it)
        call.keywords = _loop_keywords(node.body, written) + self._shared(node, state)
        return self._emit(node, [fn], call, state)

    def visit_While(self, node: ast.While) -> object:
        state, written = self._state(node, [node.body])
        self.generic_visit(node)
        if node.orelse:
            return node
        uid = next(_ids)
        test = _body_function(f"{HIDDEN}test_{uid}", [], state, [])
        test.body[-1] = ast.Return(node.test)
        body = _body_function(f"{HIDDEN}body_{uid}", [], state, node.body)
        call = runtime_call("while_stmt", load(test.name), load(body.name),
                            _initial_state(state), _names_const(state))
        call.keywords = _loop_keywords(node.body, written) + self._shared(node, state)
        if hasattr(node, "aotc_range"):  # a range loop that breaks (see .jumps)
            counter, limit, step = node.aotc_range
            trips = runtime_call("range_length", load(counter), load(limit),
                                 ast.Constant(step))
            call.keywords.append(ast.keyword("trips", trips))
        return self._emit(node, [test, body], call, state)

    def visit_If(self, node: ast.If) -> object:
        state, written = self._state(node, [node.body, node.orelse])
        self.generic_visit(node)
        uid = next(_ids)
        then = _body_function(f"{HIDDEN}then_{uid}", [], state, node.body or [ast.Pass()])
        orelse = _body_function(f"{HIDDEN}else_{uid}", [], state, node.orelse or [ast.Pass()])
        call = runtime_call("if_stmt", node.test, load(then.name), load(orelse.name),
                            _initial_state(state), _names_const(state))
        call.keywords = _written_keyword(written)
        return self._emit(node, [then, orelse], call, state)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> object:
        return node  # nested functions (e.g. lax bodies) are left as written

    def visit_Lambda(self, node: ast.Lambda) -> object:
        return node


def _written_keyword(written: list[str]) -> list[ast.keyword]:
    """``written=(names)``: state variables whose items the statement writes."""
    return [ast.keyword("written", _names_const(written))] if written else []


def _loop_nodes(body: list[ast.stmt]) -> Iterator[tuple[ast.AST, bool]]:
    """Every node of a loop body with whether it is in a loop nested in it, skipping
    the user's own functions and lambdas (they change their own lists). Bodies already
    converted: a branch is this iteration, a loop body is nested."""
    def visit(node: ast.AST, nested: bool) -> Iterator[tuple[ast.AST, bool]]:
        if isinstance(node, ast.Lambda) or (isinstance(node, ast.FunctionDef)
                                            and not node.name.startswith(HIDDEN)):
            return
        yield node, nested
        inner = isinstance(node, (ast.For, ast.While)) or (isinstance(node, ast.FunctionDef)
            and node.name.startswith((f"{HIDDEN}body_", f"{HIDDEN}test_")))
        for child in ast.iter_child_nodes(node):
            yield from visit(child, nested or inner)

    for stmt in body:
        yield from visit(stmt, False)


def _dict_keyword(name: str, entries: dict[str, Any]) -> list[ast.keyword]:
    if not entries:
        return []
    return [ast.keyword(name, ast.Dict([ast.Constant(k) for k in entries],
                                       [ast.Constant(v) for v in entries.values()]))]


def _appends_keyword(body: list[ast.stmt]) -> list[ast.keyword]:
    """``appends={name: k}``: the items one iteration of this loop body appends to
    ``name`` at most (-1 when a loop nested in it appends, or a function it calls has no
    bound), for :mod:`.lists`."""
    counts: dict[str, int] = {}
    for node, nested in _loop_nodes(body):
        found = _appended(node)
        if found is not None:
            name, k = found
            counts[name] = -1 if nested or k < 0 or counts.get(name, 0) < 0 \
                else counts.get(name, 0) + k
    return _dict_keyword("appends", counts)


def _loop_keywords(body: list[ast.stmt], written: list[str]) -> list[ast.keyword]:
    return _appends_keyword(body) + _written_keyword(written) + _changes_keyword(body)


def _changes_keyword(body: list[ast.stmt]) -> list[ast.keyword]:
    """``changes={name: how}``: the variables whose items this loop body (and loops
    nested in it) changes, and how: "method" (``s.add(v)``, ``stack.pop()``), "item"
    (``d[k] = v``, ``del d[k]``), "nested" (appended to in a nested loop), for
    :mod:`.boxes`."""
    changes: dict[str, str] = {}

    def note(name: str, how: str) -> None:
        if how == "method" or name not in changes:
            changes[name] = how

    for node, nested in _loop_nodes(body):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) and node.func.attr in CONTAINER_CHANGES:
            note(node.func.value.id, "method")
        targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else \
            [node.target] if isinstance(node, ast.AugAssign) else []
        for target in targets:
            if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                note(target.value.id, "item")
        found = _appended(node)
        if found is not None and (nested or found[1] < 0):
            note(found[0], "nested")
        if is_runtime_call(node) and isinstance(node, ast.Call) \
                and isinstance(node.func, ast.Attribute) and node.func.attr == "extend" \
                and isinstance(node.args[0], ast.Name):
            note(node.args[0].id, "method")  # (lst = __aotc__.extend(lst, more))
        if is_runtime_call(node) and node.func.attr == "changed_by":  # type: ignore[attr-defined]
            name, how = node.args[1], node.args[3]  # type: ignore[attr-defined]
            if isinstance(name, ast.Name) and isinstance(how, ast.Constant) and how.value:
                note(name.id, str(how.value))
    return _dict_keyword("changes", changes)


def _appended(node: ast.AST) -> tuple[str, int] | None:
    """A rewritten append, ``__aotc__.append(name, value)`` (one item), or a call of a
    function appending to a list it is given, ``__aotc__.changed_by(call, name, k,
    how)`` with ``k`` nonzero: the list's name and how many items (-1: no bound)."""
    if not is_runtime_call(node):
        return None
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
    args = node.args
    if node.func.attr == "append" and args and isinstance(args[0], ast.Name):
        return args[0].id, 1
    if node.func.attr == "changed_by" and isinstance(args[1], ast.Name) \
            and isinstance(args[2], ast.Constant) and isinstance(args[2].value, int) \
            and args[2].value:
        return args[1].id, args[2].value
    return None


def _target_names(target: ast.expr) -> list[str]:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


#: Builtins that read their caller's frame: a call through the runtime would change them.
_FRAME_BUILTINS = frozenset({"super", "locals", "globals", "vars", "dir", "eval", "exec"})


class _Calls(ast.NodeTransformer):
    """``f(a, *b, k=c)`` -> ``__aotc__.call(f, a, *b, k=c)``: every call the user wrote is
    looked at when it runs (see ``runtime.call``); the converter's own calls are not."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if is_runtime_call(node):
            return node
        if isinstance(node.func, ast.Name) and node.func.id in _FRAME_BUILTINS:
            return node
        routed = ast.Call(ast.Attribute(load(RUNTIME), "call", ast.Load()),
                          [node.func, *node.args], node.keywords)
        return ast.copy_location(routed, node)


def _with_nested(changes_of: ChangesOf, nested: dict[str, ast.FunctionDef]) -> ChangesOf:
    """``changes_of`` that also knows the functions a kernel nests, by their ``def``s."""
    found: dict[str, dict[int, Changes]] = {}

    def changes(name: str) -> dict[int, Changes]:
        if name not in nested:
            return changes_of(name)
        if name not in found:
            found[name] = {}  # (while it is being found: a recursion changes nothing more)
            found[name] = changes_per_parameter(nested[name], changes)
        return found[name]
    return changes


def convert_function(tree: ast.FunctionDef,
                     changes_of: ChangesOf = lambda name: {}) -> ast.FunctionDef:
    """Convert one function definition (in place) and return it (``changes_of``: the
    lists, sets and dicts the functions it calls change, see :mod:`.passed_back`)."""
    changes_of = _with_nested(changes_of, late_bound_closures(tree))

    catch_runtime_errors(tree)
    comprehensions_as_loops(tree)
    names = local_names(tree)

    def changed_list(call: ast.Call) -> str | None:
        changed = changed_argument(call, changes_of, names)
        return None if changed is None else changed[0]

    hoist_changing_calls(tree, changed_list)
    appended = appended_parameters(tree, changes_of)
    lower_returns(tree)
    lower_jumps(tree)
    hoist_assignment_expressions(tree)
    convert_expressions(tree, changes_of)
    statements = _Statements(Liveness(tree))
    body: list[ast.stmt] = []
    for stmt in tree.body:
        result = statements.visit(stmt)
        body.extend(result if isinstance(result, list) else [result])
    tree.body = [_Calls().visit(stmt) for stmt in body]
    pass_back_appends(tree, appended)
    tree.decorator_list = []
    return tree


__all__ = ["RUNTIME", "convert_function"]
