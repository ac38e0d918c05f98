"""Guards: a ``raise`` on sizes runs before the size checks of the code after it.

A kernel's size checks (``x[2]`` needs ``x.shape[0] > 2``) run before anything else, in
``P_shapes``. A guard written before such code::

    if x.shape[0] < 3:
        raise ValueError("need at least 3 points")
    return x[2]

is an equation of the kernel, so for ``x`` of size 2 the index check fired first and the
call raised ``IndexError`` instead of the user's ``ValueError``. When a check is about
to be recorded, the raises before it that test sizes only (a comparison of ``x.shape``
values and constants, under an ``if`` or an ``assert``) become checks first, in order.
A raise that tests anything else stops this: guards after it stay where they are, and
so do the checks after it (``TraceContext.check`` records them in place). A write into
an argument stops it too: the caller sees the writes made before a raise, as in Python.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..ir import Atom, Check, Eqn, Lit, Program, Var, has_effect
from ..ops.control import cond_p
from ..ops.core import ALL_PRIMITIVES
from ..ops.index import raise_if_p
from ..ops.shape import bind_dim_p, dim_value_p
from ..shapes import DimExpr

_P = ALL_PRIMITIVES
#: ``raise if a <cmp> b`` holds when ``lhs <op> rhs``: (op, swap the sides); None for
#: a comparison whose negation no check can state.
_NEGATED = {"lt": (">=", False), "le": ("<", True), "gt": ("<=", False),
            "ge": ("<", False), "ne": ("==", False), "eq": None}
#: ``raise if not (a <cmp> b)`` holds when ``a <cmp> b``.
_KEPT = {"lt": ("<", False), "le": ("<=", False), "gt": ("<", True), "ge": (">=", False),
         "eq": ("==", False), "ne": None}


class Guards:
    """The top-level equations seen so far, and whether each raise among them became a
    check (``blocked`` once one cannot)."""

    def __init__(self) -> None:
        self.seen = 0
        self.blocked = False
        self.defs: dict[Var, Eqn] = {}

    def before_check(self, eqns: Sequence[Eqn], checks: list[Check]) -> None:
        """Append to ``checks`` the guards among ``eqns`` not seen yet (see above)."""
        for eqn in eqns[self.seen:]:
            self.defs.update((v, eqn) for v in eqn.outs)
            if self.blocked or eqn.prim is bind_dim_p or not has_effect(eqn):
                continue
            check = self._as_check(eqn)
            if check is None:
                self.blocked = True
            elif check not in checks:
                checks.append(check)
        self.seen = len(eqns)

    def written(self, eqns: Sequence[Eqn], checks: list[Check]) -> None:
        """An argument was just written: the guards before the write still become checks,
        nothing after it does."""
        self.before_check(eqns, checks)
        self.blocked = True

    def _as_check(self, eqn: Eqn) -> Check | None:
        """The check a size guard is: ``raise_if(c)``, or a ``cond`` on ``c`` of which
        one branch only raises and the other does nothing."""
        if eqn.prim is raise_if_p and len(eqn.inputs) == 1:
            return self._holds(eqn.inputs[0], eqn.params["error"], eqn.params["message"])
        if eqn.prim is not cond_p or eqn.outs or len(eqn.inputs) != 1:
            return None
        branches = eqn.params["branches"]
        raising = [_raises(b) for b in branches]
        if len(branches) != 2 or None in raising or sum(r is not False for r in raising) != 1:
            return None
        selector = self.defs.get(eqn.inputs[0]) if isinstance(eqn.inputs[0], Var) else None
        if selector is None or selector.prim is not _P["convert"]:
            return None
        raised = raising[1] or raising[0]
        assert isinstance(raised, tuple)
        error, message = raised
        # Branch 0 runs when the flag is false: raising there is raising on ``not flag``.
        return self._holds(selector.inputs[0], error, message, negated=bool(raising[0]))

    def _holds(self, flag: Atom, error: str, message: str, negated: bool = False
               ) -> Check | None:
        """The check that ``flag`` (raise where true) is false."""
        eqn = self.defs.get(flag) if isinstance(flag, Var) else None
        while eqn is not None and eqn.prim is _P["logical_not"]:
            negated = not negated
            inner = eqn.inputs[0]
            eqn = self.defs.get(inner) if isinstance(inner, Var) else None
        if eqn is None:
            return None
        sides = [self._size(a) for a in eqn.inputs]
        if len(sides) != 2 or None in sides:
            return None
        a, b = sides
        assert a is not None and b is not None
        form = (_KEPT if negated else _NEGATED).get(eqn.prim.name)
        if form is None:  # raise if a == b (or if not a != b)
            equal = eqn.prim.name == ("ne" if negated else "eq")
            return _unequal(a, b, error, message) if equal else None
        op, swap = form
        lhs, rhs = (b, a) if swap else (a, b)
        return Check(op, lhs, rhs, error, message)

    def _size(self, atom: Atom) -> DimExpr | None:
        """The size expression an integer scalar is: a constant, an ``x.shape`` value, or
        a sum or difference of those."""
        if isinstance(atom, Lit):
            return DimExpr.const(int(atom.value)) if atom.dtype.kind in "iu" else None
        eqn = self.defs.get(atom)
        if eqn is None or atom.type.shape != () or atom.type.dtype.kind not in "iu":
            return None
        if eqn.prim is dim_value_p:
            expr: DimExpr = eqn.params["expr"]
            return expr
        if eqn.prim in (_P["add"], _P["sub"]):
            a, b = (self._size(x) for x in eqn.inputs)
            if a is None or b is None:
                return None
            return a + b if eqn.prim is _P["add"] else a - b
        return None


def _unequal(a: DimExpr, b: DimExpr, error: str, message: str) -> Check | None:
    """``raise if a == b`` as a check where one side is never below the other
    (``x.shape[0] == 0``: ``x.shape[0] >= 1``); no check states ``!=`` otherwise."""
    if (a - b).is_nonneg():
        return Check(">=", a, b + 1, error, message)
    if (b - a).is_nonneg():
        return Check("<=", a, b - 1, error, message)
    return None


def _raises(branch: Program) -> tuple[str, str] | bool | None:
    """``(error, message)`` if the branch only raises, False if it does nothing, else
    None."""
    eqns = branch.eqns
    if not eqns:
        return False
    (eqn,) = eqns if len(eqns) == 1 else (None,)
    if eqn is not None and eqn.prim is raise_if_p and len(eqn.inputs) == 1 \
            and isinstance(eqn.inputs[0], Lit) and bool(eqn.inputs[0].value):
        return eqn.params["error"], eqn.params["message"]
    return None
