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

A call of a function that changes a list, set or dict it is given in place (appends,
``d[k] = v``, ``s.add(v)``), as a statement or the value of an assignment, is rewritten
as such a change is: ``__aotc_result, out = __aotc__.changed_by(lambda: keep(out, v),
out, k, how)``, with ``k`` the items one call appends at most (-1: no bound) and
``how`` its other changes. A loop around it then grows ``out`` (or makes it a box,
:mod:`.boxing`) as if it changed it itself, and where the caller's list object cannot
take the new value (a Python list that became an array of runtime length) the call site
takes it instead (:func:`.lists.pass_back`). A call that only writes items or calls
other methods (``d[k] = v``, ``s.add(v)``, also an array's ``out[i] = v``) leaves
``out`` unassigned (``__aotc_result, __aotc_unchanged = ...``): the loop sees its
items written, as for the same statement in its body.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .syntax import HIDDEN, assign, load, parameters, runtime_call, walk_code

#: Methods that change how many items a list, set or dict holds, other than ``append``.
CONTAINER_CHANGES = frozenset({"pop", "add", "discard", "remove", "insert", "clear", "update",
                      "setdefault", "extend", "popitem", "popleft", "appendleft"})


@dataclass(frozen=True)
class Changes:
    """How one call of a function changes a list, set or dict it is given: the items it
    appends at most (-1: no bound, an append in a loop), and its other changes as a
    loop's ``changes`` keyword names them ("method": ``s.add(v)``, ``d.pop(k)``;
    "item": ``d[k] = v``), for :mod:`.boxing`."""

    appends: int = 0
    how: str | None = None

    def __add__(self, other: Changes) -> Changes:
        appends = -1 if self.appends < 0 or other.appends < 0 else self.appends + other.appends
        how = "method" if "method" in (self.how, other.how) else self.how or other.how
        return Changes(appends, how)

    def repeated(self) -> Changes:
        """The changes of a loop of calls: appends without a bound."""
        return Changes(-1 if self.appends else 0, self.how)


#: For a function's name, how the function it names changes each of its parameters (by
#: position), as :func:`changes_per_parameter` finds them.
ChangesOf = Callable[[str], dict[int, Changes]]


def callee_name(call: ast.Call) -> str | None:
    """The name ``call`` calls by: ``keep``, or dotted, ``heapq.heappush``."""
    node, names = call.func, []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(names)]) if isinstance(node, ast.Name) else None


def changed_argument(call: ast.expr, changes_of: ChangesOf, local_names: frozenset[str]
                     ) -> tuple[str, Changes] | None:
    """The one variable of the caller's own (``local_names``) that ``call``, a call of a
    function by name, changes in place, and how; None for other calls."""
    if not isinstance(call, ast.Call) or (name := callee_name(call)) is None:
        return None
    changed = [(arg.id, c) for k, c in changes_of(name).items()
               if k < len(call.args) and isinstance(arg := call.args[k], ast.Name)
               and arg.id in local_names
               and not any(isinstance(a, ast.Starred) for a in call.args[:k])]
    return changed[0] if len(changed) == 1 else None


def _changes(tree: ast.FunctionDef, changes_of: ChangesOf) -> dict[str, Changes]:
    """How one call of ``tree`` changes each parameter it changes in place (directly, or
    through a call of a function that does)."""
    params = set(parameters(tree))
    assigned = _assigned(tree)
    found: dict[str, Changes] = {}

    def add(name: Any, change: Changes, in_loop: bool) -> None:
        # A parameter the function also assigns is not passed back: a caller's loop
        # makes it a box (appends without a bound), which the appends change in place.
        if isinstance(name, ast.Name) and name.id in params:
            repeated = in_loop or name.id in assigned
            found[name.id] = found.get(name.id, Changes()) + (
                change.repeated() if repeated else change)

    def visit(node: ast.AST, in_loop: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute) \
                    and child.func.attr in CONTAINER_CHANGES | {"append"}:
                change = Changes(1) if child.func.attr == "append" else Changes(0, "method")
                add(child.func.value, change, in_loop)
            elif isinstance(child, ast.Call) and (name := callee_name(child)) is not None:
                for k, change in changes_of(name).items():
                    if k < len(child.args):
                        add(child.args[k], change, in_loop)
            elif isinstance(child, (ast.Assign, ast.AugAssign, ast.Delete)):
                targets = child.targets if isinstance(child, (ast.Assign, ast.Delete)) \
                    else [child.target]
                for target in targets:
                    if isinstance(target, ast.Subscript):
                        add(target.value, Changes(0, "item"), in_loop)
            looping = isinstance(child, (ast.For, ast.While, ast.comprehension))
            visit(child, in_loop or looping)

    visit(tree, False)
    return found


def _assigned(tree: ast.FunctionDef) -> set[str]:
    return {n.id for n in walk_code(tree)
            if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}


def appended_parameters(tree: ast.FunctionDef, changes_of: ChangesOf) -> list[str]:
    """The parameters ``tree`` appends to and never assigns (see :func:`_changes`): each
    ``return`` passes them back."""
    found, assigned = _changes(tree, changes_of), _assigned(tree)
    return [p for p in parameters(tree) if p in found and found[p].appends
            and p not in assigned]


def changes_per_parameter(tree: ast.FunctionDef, changes_of: ChangesOf) -> dict[int, Changes]:
    """How ``tree`` changes each parameter (by position) it changes in place."""
    found = _changes(tree, changes_of)
    return {k: found[p] for k, p in enumerate(parameters(tree, positional=True))
            if p in found}


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
