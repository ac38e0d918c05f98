"""Calls that change a list they are given, taken out of the expression around them.

The change a call like ``keep(out, v)`` makes to ``out`` reaches the caller through the
call-site rewrite of :mod:`.passed_back`, which takes the call as a statement or as an
assignment's value. Nested in an expression (``t += twice(keep(out, v))``, ``return 1 +
keep(out, v)``), the call is first made a statement of its own, where Python would have
made it::

    t += twice(keep(out, v))   ->   __aotc_hoisted0 = keep(out, v)
                                    t += twice(__aotc_hoisted0)

Only a call Python always makes when the statement runs (not in a lambda, a
comprehension, the right of ``and``/``or`` or a branch of ``a if c else b``), before which
the statement does not read the list and calls only builtins and NumPy's or ``math``'s
functions (no random draws): moved earlier, it then changes nothing that Python's order
would not.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from itertools import count

from .syntax import HIDDEN, assign, load, rewrite_blocks

#: The one list (by name) a call changes in place, or None (:mod:`.passed_back`).
ChangedBy = Callable[[ast.Call], str | None]
#: What each hoisted call's value is assigned to.
_HOISTED = HIDDEN + "hoisted"


def hoist_changing_calls(tree: ast.FunctionDef, changed_by: ChangedBy) -> None:
    """Rewrite every block of ``tree`` (not of functions nested in it), in place."""
    rewrite_blocks(tree, _Blocks(changed_by).statements)


class _Blocks:
    def __init__(self, changed_by: ChangedBy) -> None:
        self.changed_by = changed_by
        self.names = (f"{_HOISTED}{k}" for k in count())

    def statements(self, stmt: ast.stmt) -> list[ast.stmt]:
        """``stmt`` after the statements its hoisted calls became."""
        call = _hoistable(stmt, self.changed_by)
        if call is None:
            return [stmt]
        name = next(self.names)
        _replace(stmt, call, load(name))
        return [*self.statements(assign(name, call, call)), *self.statements(stmt)]


def _hoistable(stmt: ast.stmt, changed_by: ChangedBy) -> ast.Call | None:
    """The first call changing a list that may leave ``stmt``, if it may."""
    roots = _roots(stmt)
    top = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign)) else None
    before: list[ast.AST] = []
    for root in roots:
        for node, earlier in _evaluated(root):
            if not isinstance(node, ast.Call) or node is top:
                continue
            name = changed_by(node)
            if name is None:
                continue
            preceding = [n for p in (*before, *earlier) for n in ast.walk(p)]
            if any((isinstance(n, ast.Call) and not _pure(n))
                   or (isinstance(n, ast.Name) and n.id == name) for n in preceding):
                return None  # moved earlier, it would change what Python's order does
            return node
        before.append(root)
    return None


def _pure(call: ast.Call) -> bool:
    """Whether moving a call after ``call`` changes nothing ``call`` does: a builtin's
    or a module's function (``abs(v)``, ``np.sqrt(v)``), but not a draw of random numbers
    or a function of the user's, which may draw them."""
    func, parts = call.func, []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name) or "random" in parts:
        return False
    return func.id in _PURE_BUILTINS if not parts else func.id in _MODULES


#: Builtins a statement may call before a hoisted call, and modules whose functions it may.
_PURE_BUILTINS = frozenset({"abs", "len", "min", "max", "int", "float", "bool", "complex",
                            "round", "sum", "range", "divmod", "pow", "tuple", "isinstance"})
_MODULES = frozenset({"np", "numpy", "math", "cmath"})


def _roots(stmt: ast.stmt) -> list[ast.expr]:
    """The expressions of a simple statement, in the order Python evaluates them."""
    if isinstance(stmt, ast.AugAssign):
        return [stmt.target, stmt.value]
    if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.Expr, ast.Return)) and stmt.value:
        return [stmt.value]
    return []


def _evaluated(node: ast.expr, earlier: tuple[ast.AST, ...] = ()
               ) -> Iterator[tuple[ast.expr, tuple[ast.AST, ...]]]:
    """Each expression under ``node`` that Python always evaluates with it, outermost
    first, with the sibling expressions evaluated before it on the way down."""
    yield node, earlier
    done: list[ast.AST] = []
    for child in _always(node):
        yield from _evaluated(child, (*earlier, *done))
        done.append(child)


def _always(node: ast.expr) -> list[ast.expr]:
    """The parts of ``node`` evaluated whenever it is, in Python's order."""
    if isinstance(node, ast.BoolOp):
        return node.values[:1]
    if isinstance(node, ast.IfExp):
        return [node.test]
    if isinstance(node, ast.Compare):
        return [node.left, node.comparators[0]]
    if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                         ast.GeneratorExp)):
        return []
    if isinstance(node, ast.Call):
        return [node.func, *node.args, *(k.value for k in node.keywords)]
    if isinstance(node, ast.Dict):
        return [part for pair in zip(node.keys, node.values, strict=True) for part in pair
                if part is not None]
    return [c for c in ast.iter_child_nodes(node) if isinstance(c, ast.expr)]


def _replace(stmt: ast.stmt, old: ast.expr, new: ast.expr) -> None:
    """Put ``new`` where ``old`` is under ``stmt``."""
    for parent in ast.walk(stmt):
        for field, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, field, ast.copy_location(new, old))
                return
            if isinstance(value, list) and any(v is old for v in value):
                setattr(parent, field, [ast.copy_location(new, old) if v is old else v
                                        for v in value])
                return
    raise AssertionError("the hoisted call is not in its statement")
