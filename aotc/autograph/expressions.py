"""Expressions (and the simple statements) Python evaluates with ``bool()`` or iteration.

On traced values these need the runtime (:mod:`.runtime`), so they are rewritten into
its calls, with the operands Python might not evaluate passed as thunks::

    a and b            ->  __aotc__.and_(lambda: a, lambda: b)
    while a and b:     ->  while __aotc__.and_test(lambda: a, lambda: b):  (only its truth)
    not a              ->  __aotc__.not_(a)
    0 <= i < n         ->  __aotc__.compare(lambda: 0, ('LtE', lambda: i), ('Lt', lambda: n))
    a if c else b      ->  __aotc__.ifexp(c, lambda: a, lambda: b)
    [f(v) for v in xs] ->  __aotc__.comprehension('list', lambda v: f(v), xs, False)
    a, b = v           ->  a, b = __aotc__.unpack(v, 2)
    raise E(msg)       ->  __aotc__.raise_(lambda: E(msg))
    lst.append(v)      ->  lst = __aotc__.append(lst, v)
    table[i]           ->  __aotc__.getitem(table, i)     (a runtime index into a list)
    assert c, msg      ->  __aotc__.assert_(lambda: c, lambda: msg)
    "n=%d" % n         ->  __aotc__.percent("n=%d", n)
    f"n={n:3d}"        ->  __aotc__.fstring("n=", (n, -1, "3d"))

On build-time values the runtime does exactly what Python does.
"""

from __future__ import annotations

import ast
from typing import Any

from .liveness import local_names
from .passed_back import ChangesOf, changed_argument
from .syntax import HIDDEN, arguments, assign, load, runtime_call, store, thunk

_COMPREHENSIONS = {ast.ListComp: "list", ast.GeneratorExp: "generator", ast.SetComp: "set"}


def _target_params(target: ast.expr) -> tuple[list[str], bool] | None:
    """A comprehension target as lambda parameters: ``v`` or ``a, b`` (flat names only)."""
    if isinstance(target, ast.Name):
        return [target.id], False
    if isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts):
        return [e.id for e in target.elts], True  # type: ignore[attr-defined]
    return None


#: What a call changing a list it is given returned, before its assignment.
_RESULT = HIDDEN + "result"
#: The list a call wrote the items of (not a new value: the same object).
_UNCHANGED = HIDDEN + "unchanged"


class Expressions(ast.NodeTransformer):
    """Rewrites bottom-up, so inner expressions are converted before outer ones."""

    def __init__(self, changes_of: ChangesOf, local_names: frozenset[str],
                 tests: set[ast.BoolOp]) -> None:
        self.changes_of = changes_of
        #: The function's own names (a global list a helper appends to stays global).
        self.local_names = local_names
        #: ``and``/``or`` whose value only Python's truth test reads (:func:`_tests`).
        self.tests = tests

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        self.generic_visit(node)
        name = "and_" if isinstance(node.op, ast.And) else "or_"
        if node in self.tests:  # (each operand's truth: a list and a bool have no join)
            name += "test"
        return ast.copy_location(runtime_call(name, *map(thunk, node.values)), node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return ast.copy_location(runtime_call("not_", node.operand), node)
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        """``"..." % args`` on a literal string: ``str.__mod__`` needs concrete values."""
        self.generic_visit(node)
        if isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant) \
                and isinstance(node.left.value, str):
            return ast.copy_location(runtime_call("percent", node.left, node.right), node)
        return node

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:
        """An f-string: Python's own on build-time values; with runtime values, a string
        the caller makes (:mod:`.formatted`), or an exception message's tokens."""
        self.generic_visit(node)
        parts: list[ast.expr] = []
        for value in node.values:
            if isinstance(value, ast.FormattedValue):
                spec = value.format_spec or ast.Constant(None)
                value = ast.Tuple([value.value, ast.Constant(value.conversion), spec],
                                  ast.Load())
            parts.append(value)
        return ast.copy_location(runtime_call("fstring", *parts), node)

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        if all(isinstance(side, ast.Constant) for side in (node.left, *node.comparators)):
            return node
        # Every other comparison is a runtime call: ``v is None`` of a variable that may
        # be None, ``c in (1, 2)`` of a traced ``c``, ``item < heap[0]`` of tuples.
        links = [ast.Tuple([ast.Constant(type(op).__name__), thunk(right)], ast.Load())
                 for op, right in zip(node.ops, node.comparators, strict=True)]
        return ast.copy_location(runtime_call("compare", thunk(node.left), *links), node)

    def visit_IfExp(self, node: ast.IfExp) -> ast.AST:
        self.generic_visit(node)
        call = runtime_call("ifexp", node.test, thunk(node.body), thunk(node.orelse))
        return ast.copy_location(call, node)

    def _comprehension(self, node: ast.ListComp | ast.GeneratorExp | ast.SetComp) -> ast.AST:
        self.generic_visit(node)
        if len(node.generators) != 1 or node.generators[0].is_async:
            return node  # Python's own (fine on build-time values)
        gen = node.generators[0]
        params = _target_params(gen.target)
        if params is None:
            return node
        names, unpack = params
        fn = ast.copy_location(ast.Lambda(arguments(*names), node.elt), node.elt)
        keep: ast.expr = ast.Constant(None)
        if gen.ifs:  # [v for v in seq if a if b]: kept where every condition holds
            test = gen.ifs[0] if len(gen.ifs) == 1 else ast.BoolOp(ast.And(), gen.ifs)
            keep = ast.copy_location(ast.Lambda(arguments(*names), test), gen.ifs[0])
        call = runtime_call("comprehension", ast.Constant(_COMPREHENSIONS[type(node)]), fn,
                            gen.iter, ast.Constant(unpack), keep)
        return ast.copy_location(call, node)

    visit_ListComp = _comprehension
    visit_GeneratorExp = _comprehension
    visit_SetComp = _comprehension

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        """A read at an index that is not a string constant goes through the runtime: a
        Python list or tuple of numbers, or a module-level NumPy array, read at a runtime
        index is read as a constant array (NumPy would reject a tracer there); a list
        laid out as an array raises a list's IndexError."""
        self.generic_visit(node)
        constant = isinstance(node.slice, ast.Constant) and not (
            isinstance(node.slice.value, int) and not isinstance(node.slice.value, bool))
        if isinstance(node.ctx, ast.Load) and not constant:
            index = _slices_as_calls(node.slice)
            return ast.copy_location(runtime_call("getitem", node.value, index), node)
        return node

    def visit_Assign(self, node: ast.Assign) -> Any:
        self.generic_visit(node)
        changing = self._changing(node.value)
        if changing is not None and len(node.targets) == 1:  # ``n = count_into(d, x)``
            node.value = load(_RESULT)
            return [changing, self._unpacked(node)]
        return self._unpacked(node)

    def _unpacked(self, node: ast.Assign) -> ast.Assign:
        target = node.targets[0]
        if len(node.targets) != 1 or not isinstance(target, (ast.Tuple, ast.List)):
            return node
        stars = [k for k, e in enumerate(target.elts) if isinstance(e, ast.Starred)]
        if not stars:
            node.value = ast.copy_location(
                runtime_call("unpack", node.value, ast.Constant(len(target.elts))), node.value)
        elif len(stars) == 1:  # ``first, *rest = lst``: the rest a list, named plainly
            k = stars[0]
            starred = target.elts[k]
            assert isinstance(starred, ast.Starred)
            target.elts[k] = starred.value
            node.value = ast.copy_location(runtime_call(
                "unpack_starred", node.value, ast.Constant(k),
                ast.Constant(len(target.elts) - k - 1)), node.value)
        return node

    def visit_Expr(self, node: ast.Expr) -> ast.AST:
        """``lst.append(v)`` -> ``lst = __aotc__.append(lst, v)`` (``extend`` too): a
        list a loop appends to becomes part of the loop's state (see :mod:`.lists`)."""
        self.generic_visit(node)
        call = node.value
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
                and call.func.attr in ("append", "extend") \
                and isinstance(call.func.value, ast.Name) \
                and len(call.args) == 1 and not call.keywords:
            name = call.func.value.id
            return assign(name, runtime_call(call.func.attr, load(name), call.args[0]), node)
        changing = self._changing(call)
        return node if changing is None else ast.copy_location(changing, node)

    def _changing(self, call: ast.expr) -> ast.Assign | None:
        """``keep(out, v)``, a call of a function changing the list (set, dict) it is
        given in place, as such a change (see :mod:`.passed_back`):
        ``__aotc_result, out = __aotc__.changed_by(lambda: keep(out, v), out, k, how)``;
        None for other calls."""
        changed = changed_argument(call, self.changes_of, self.local_names)
        if changed is None:
            return None
        assert isinstance(call, ast.Call)
        name, change = changed
        value = runtime_call("changed_by", thunk(call), load(name),
                             ast.Constant(change.appends), ast.Constant(change.how))
        grown = store(name) if change.appends else store(_UNCHANGED)  # (items written)
        target = ast.Tuple([store(_RESULT), grown], ast.Store())
        return ast.copy_location(ast.Assign([target], value), call)

    def visit_Raise(self, node: ast.Raise) -> ast.AST:
        self.generic_visit(node)
        if node.exc is None:
            return node  # a bare re-raise: Python's own
        return ast.copy_location(ast.Expr(runtime_call("raise_", thunk(node.exc))), node)

    def visit_Assert(self, node: ast.Assert) -> ast.AST:
        self.generic_visit(node)
        message = thunk(node.msg) if node.msg is not None else ast.Constant(None)
        return ast.copy_location(ast.Expr(runtime_call("assert_", thunk(node.test), message)),
                                 node)


def convert_expressions(tree: ast.FunctionDef, changes_of: ChangesOf) -> None:
    """Rewrite the expressions of one function (nested functions and lambdas too), in place."""
    expressions = Expressions(changes_of, local_names(tree), _tests(tree))
    body: list[ast.stmt] = []
    for stmt in tree.body:  # (a statement may become several)
        done = expressions.visit(stmt)
        body.extend(done if isinstance(done, list) else [done])
    tree.body = body


def _tests(tree: ast.AST) -> set[ast.BoolOp]:
    """The ``and``/``or`` expressions in test position (``if``, ``while``, ``assert``,
    a conditional expression's or a comprehension's condition, ``not``'s and ``bool``'s
    operand, and the operands of those), where only the result's truth is read:
    ``while stack and k < n`` with ``stack`` a runtime list is ``bool(stack) and k < n``
    there, where its value, the list or the bool, has no type."""
    found: set[ast.BoolOp] = set()

    def mark(test: ast.expr) -> None:
        if isinstance(test, ast.BoolOp):
            found.add(test)
            for value in test.values:
                mark(value)
        elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            mark(test.operand)

    for node in ast.walk(tree):
        if isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)):
            mark(node.test)
        elif isinstance(node, ast.comprehension):
            for test in node.ifs:
                mark(test)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            mark(node.operand)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id == "bool" and len(node.args) == 1 and not node.keywords:
            mark(node.args[0])
    return found


def _slices_as_calls(index: ast.expr) -> ast.expr:
    """``index`` with each ``a:b:c`` spelled ``slice(a, b, c)``, so that it can be an
    argument of a call."""
    def as_call(part: ast.expr) -> ast.expr:
        if not isinstance(part, ast.Slice):
            return part
        bounds = [b if b is not None else ast.Constant(None)
                  for b in (part.lower, part.upper, part.step)]
        return ast.copy_location(runtime_call("make_slice", *bounds), part)
    if isinstance(index, ast.Tuple):
        return ast.copy_location(ast.Tuple([as_call(e) for e in index.elts], ast.Load()), index)
    return as_call(index)
