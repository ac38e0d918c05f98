"""A function's appends to a list it is given reach the caller's list.

``lst.append(v)`` is rewritten to ``lst = __aotc__.append(lst, v)`` (:mod:`.expressions`):
an assignment of the function's own variable, which is what lets a branch or a loop
carry the grown list out (a list appended to under a runtime condition is a new value
after the branch). In Python the caller's list grows too. So each ``return`` of a
function that appends to a parameter (and never assigns it otherwise) passes the
parameter's last value back into the object it was given::

    def keep(out, v):                       def keep(out, v):
        if v > 0:                               __aotc_given_out = out
            out.append(v)                       ...                  # converted body
                                                return __aotc__.passed_back(
                                                    None, (__aotc_given_out, out))

A call of such a function, as a statement, is rewritten as an append is:
``out = __aotc__.appended_by(lambda: keep(out, v), out, k)``, with ``k`` the items one
call appends at most (-1: no bound). A loop around it then grows ``out`` as if it
appended itself, and where the caller's list object cannot take the new value (a
Python list that became an array of runtime length) the call site takes it instead
(:func:`.lists.pass_back`).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from .syntax import HIDDEN, assign, load, runtime_call, walk_code

#: For a function's name, the items the function it names appends to each of its
#: parameters (by position), as :func:`appends_per_parameter` finds them.
AppendsOf = Callable[[str], dict[int, int]]


def _parameters(tree: ast.FunctionDef, positional: bool = False) -> list[str]:
    args = tree.args
    return [a.arg for a in (*args.posonlyargs, *args.args,
                            *([] if positional else args.kwonlyargs))]


def _append_counts(tree: ast.FunctionDef, appends_of: AppendsOf) -> dict[str, int]:
    """The items one call of ``tree`` appends to each parameter it appends to (directly,
    or through a call of a function that appends) and never assigns; -1: no bound (an
    append in a loop)."""
    params = set(_parameters(tree))
    assigned = {n.id for n in walk_code(tree)
                if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}
    counts: dict[str, int] = {}

    def add(name: str, k: int, in_loop: bool) -> None:
        if name in params and name not in assigned:
            before = counts.get(name, 0)
            counts[name] = -1 if in_loop or k < 0 or before < 0 else before + k

    def visit(node: ast.AST, in_loop: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if isinstance(child, ast.Call):
                func = child.func
                if isinstance(func, ast.Attribute) and func.attr == "append" \
                        and isinstance(func.value, ast.Name):
                    add(func.value.id, 1, in_loop)
                elif isinstance(func, ast.Name):
                    for k, n in appends_of(func.id).items():
                        if k < len(child.args) and isinstance(arg := child.args[k], ast.Name):
                            add(arg.id, n, in_loop)
            looping = isinstance(child, (ast.For, ast.While, ast.comprehension))
            visit(child, in_loop or looping)

    visit(tree, False)
    return counts


def appended_parameters(tree: ast.FunctionDef, appends_of: AppendsOf) -> list[str]:
    """The parameters ``tree`` appends to (see :func:`_append_counts`)."""
    counts = _append_counts(tree, appends_of)
    return [p for p in _parameters(tree) if p in counts]


def appends_per_parameter(tree: ast.FunctionDef, appends_of: AppendsOf) -> dict[int, int]:
    """For each parameter (by position) ``tree`` appends to: how many items one call
    appends at most (-1: no bound)."""
    counts = _append_counts(tree, appends_of)
    return {k: counts[p] for k, p in enumerate(_parameters(tree, positional=True))
            if p in counts}


def pass_back_appends(tree: ast.FunctionDef, params: list[str]) -> None:
    """Make each ``return`` of the converted ``tree`` pass ``params`` back (see above);
    a function that can end without ``return`` gets one."""
    if not params:
        return
    given = [assign(HIDDEN + "given_" + p, load(p), tree) for p in params]
    pairs = ast.Tuple([ast.Tuple([load(HIDDEN + "given_" + p), load(p)], ast.Load())
                       for p in params], ast.Load())

    def passing(value: ast.expr | None) -> ast.expr:
        return runtime_call("passed_back", value or ast.Constant(None), pairs)

    for node in walk_code(tree):
        if isinstance(node, ast.Return):
            node.value = passing(node.value)
    if not tree.body or not isinstance(tree.body[-1], ast.Return):
        tree.body.append(ast.Return(passing(None)))
    tree.body[:0] = given
