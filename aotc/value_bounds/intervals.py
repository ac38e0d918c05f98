"""Interval arithmetic on traced integers: the :class:`Scope` of one program and the
rules of the arithmetic primitives (control flow's are in ``loops``).

Only int64 arithmetic is followed (sizes are int64; narrower integers may wrap, so their
dtype bounds them); floats are not. Each rule gives one output's interval from those of
the equation's inputs.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..ir import Atom, Eqn, Lit, Var
from ..ops.core import VIEW, Primitive
from ..ops.elementwise import PRIM_OF_UFUNC, convert_p, select_p
from ..ops.index import compress_p, take_p
from ..ops.reduce import REDUCTIONS
from ..ops.shape import concatenate_p, dim_value_p, iota_p, update_slice_p
from ..ops.sorting import argsort_p, searchsorted_p, sort_p
from ..shapes import DimExpr, maximum, minimum, size

Bound = DimExpr | None
Interval = tuple[Bound, Bound]  # (lowest, highest), both inclusive; None: unbounded
UNKNOWN: Interval = (None, None)
#: Loop-carried values are followed as symbols named ``%k`` (see ``loops``).
CARRY = "%"
#: Deeper chains of equations than this are not followed (they give no bound).
_DEPTH = 100
_P = PRIM_OF_UFUNC
#: Comparisons, and whether they hold when the first operand is the smaller.
ORDER = {_P[np.less]: True, _P[np.less_equal]: True, _P[np.greater]: False,
         _P[np.greater_equal]: False}


def _const(v: int) -> Interval:
    d = DimExpr.const(v)
    return d, d


def carried(b: Bound) -> bool:
    return b is not None and any(s.startswith(CARRY) for s in b.symbols())


def _lowest(a: Bound, b: Bound) -> Bound:
    return None if a is None or b is None else minimum(a, b)


def _highest(a: Bound, b: Bound) -> Bound:
    return None if a is None or b is None else maximum(a, b)


def union(a: Interval, b: Interval) -> Interval:
    return _lowest(a[0], b[0]), _highest(a[1], b[1])


class Scope:
    """The intervals of one program's values: from their equations, from what is given
    for its inputs, else from ``outer`` (an enclosing trace)."""

    def __init__(self, eqns: list[Eqn] | tuple[Eqn, ...],
                 given: dict[Var, Callable[[], Interval]],
                 outer: Callable[[Var], Interval] | None = None) -> None:
        self.made = {out: (eqn, k) for eqn in eqns for k, out in enumerate(eqn.outs)}
        self.given, self.outer = given, outer
        self.memo: dict[Var, Interval] = {}
        self.depth = 0

    def of(self, atom: Atom) -> Interval:
        if isinstance(atom, Lit):
            if atom.dtype.kind not in "iub":
                return UNKNOWN
            return _const(int(atom.value))
        if atom not in self.memo:
            if self.depth > _DEPTH:
                return UNKNOWN
            self.depth += 1
            try:
                self.memo[atom] = _clipped(atom, self._find(atom))
            finally:
                self.depth -= 1
        return self.memo[atom]

    def _find(self, var: Var) -> Interval:
        if var in self.given:
            return self.given[var]()
        made = self.made.get(var)
        if made is None:
            return self.outer(var) if self.outer is not None else UNKNOWN
        eqn, k = made
        rule = RULES.get(eqn.prim)
        if rule is None:  # a view has its array's elements
            return self.of(eqn.inputs[0]) if eqn.prim.has(VIEW) else UNKNOWN
        return rule(self, eqn, k)


#: Integers this narrow are bounded by their dtype (a buffer for 2**15 items is small;
#: one planned for 2**31 would fail a call that Numba runs: no bound is better).
_NARROW = 2


def _clipped(var: Var, found: Interval) -> Interval:
    """Narrow integers may wrap: their dtype bounds them. Only int64 keeps arithmetic."""
    dtype = var.type.dtype
    if dtype.kind == "b":
        return DimExpr.const(0), DimExpr.const(1)
    if dtype.kind not in "iu":
        return UNKNOWN
    if dtype.itemsize < 8:
        info = np.iinfo(dtype)
        return DimExpr.const(int(info.min)), (DimExpr.const(int(info.max))
                                              if dtype.itemsize <= _NARROW else None)
    if dtype.kind == "u":
        return DimExpr.const(0), None
    return found


# -- rules, by primitive ---------------------------------------------------------------

Rule = Callable[[Scope, Eqn, int], Interval]


def _inputs(scope: Scope, eqn: Eqn) -> list[Interval]:
    return [scope.of(a) for a in eqn.inputs]


def _add(scope: Scope, eqn: Eqn, k: int) -> Interval:
    (la, ua), (lb, ub) = _inputs(scope, eqn)
    return (None if la is None or lb is None else la + lb,
            None if ua is None or ub is None else ua + ub)


def _sub(scope: Scope, eqn: Eqn, k: int) -> Interval:
    (la, ua), (lb, ub) = _inputs(scope, eqn)
    return (None if la is None or ub is None else la - ub,
            None if ua is None or lb is None else ua - lb)


def _neg(scope: Scope, eqn: Eqn, k: int) -> Interval:
    low, high = scope.of(eqn.inputs[0])
    return (None if high is None else -high), (None if low is None else -low)


def _scaled(factor: Interval, other: Interval) -> Interval:
    low, high = factor
    if low is None or low != high or not low.is_const:
        return UNKNOWN
    c = low.value
    a, b = other
    a, b = (a, b) if c >= 0 else (b, a)
    return (None if a is None else a * c), (None if b is None else b * c)


def _mul(scope: Scope, eqn: Eqn, k: int) -> Interval:
    a, b = _inputs(scope, eqn)
    found = _scaled(a, b)
    if found == UNKNOWN:
        found = _scaled(b, a)
    (la, ua), (lb, ub) = a, b
    if found == UNKNOWN and la is not None and lb is not None and la.is_nonneg() \
            and lb.is_nonneg():
        found = la * lb, None if ua is None or ub is None else ua * ub
    return found


def _preferred(a: Bound, b: Bound, pick: Callable[[DimExpr, DimExpr], DimExpr]) -> Bound:
    """Either bound holds (the lower of a max, the upper of a min): both when both are
    known, else the one known; a carried one only when the other is not known."""
    if a is None or (carried(a) and b is not None and not carried(b)):
        return b
    if b is None or (carried(b) and not carried(a)):
        return a
    return pick(a, b)


def _larger(a: Interval, b: Interval) -> Interval:
    return _preferred(a[0], b[0], maximum), _highest(a[1], b[1])


def _smaller(a: Interval, b: Interval) -> Interval:
    return _lowest(a[0], b[0]), _preferred(a[1], b[1], minimum)


def _max(scope: Scope, eqn: Eqn, k: int) -> Interval:
    return _larger(*_inputs(scope, eqn))


def _min(scope: Scope, eqn: Eqn, k: int) -> Interval:
    return _smaller(*_inputs(scope, eqn))


def _positive_constant(interval: Interval) -> int | None:
    low, high = interval
    if low is not None and low == high and low.is_const and low.value > 0:
        return int(low.value)
    return None


def _floor_divide(scope: Scope, eqn: Eqn, k: int) -> Interval:
    a, b = _inputs(scope, eqn)
    divisor = _positive_constant(b)
    if divisor is None:
        return UNKNOWN
    return (None if a[0] is None else a[0] // divisor), (None if a[1] is None
                                                         else a[1] // divisor)


def _mod(scope: Scope, eqn: Eqn, k: int) -> Interval:
    a, (lb, ub) = _inputs(scope, eqn)
    if lb is None or ub is None or not (lb - 1).is_nonneg():
        return UNKNOWN  # a positive divisor: the result is in [0, divisor - 1]
    if a[0] is not None and a[0].is_nonneg() and a[1] is not None:
        return DimExpr.const(0), minimum(a[1], ub - 1)
    return DimExpr.const(0), ub - 1


def _abs(scope: Scope, eqn: Eqn, k: int) -> Interval:
    low, high = scope.of(eqn.inputs[0])
    if low is not None and low.is_nonneg():
        return low, high
    if low is None or high is None:
        return DimExpr.const(0), None
    return DimExpr.const(0), maximum(high, -low)


def _select(scope: Scope, eqn: Eqn, k: int) -> Interval:
    """Either value; ``where(b < a, b, a)`` (Python's ``min``) as a minimum."""
    cond, a, b = eqn.inputs
    made = scope.made.get(cond) if isinstance(cond, Var) else None
    if made is not None and made[0].prim in ORDER:
        test = made[0]
        smaller_first = ORDER[test.prim] == (test.inputs == (a, b))
        if set(test.inputs) == {a, b}:
            return (_smaller if smaller_first else _larger)(scope.of(a), scope.of(b))
    return union(scope.of(a), scope.of(b))


def _dim_value(scope: Scope, eqn: Eqn, k: int) -> Interval:
    expr = eqn.params["expr"]
    return expr, expr


def _iota(scope: Scope, eqn: Eqn, k: int) -> Interval:
    return DimExpr.const(0), eqn.params["shape"][eqn.params["dimension"]] - 1


def _same_elements(scope: Scope, eqn: Eqn, k: int) -> Interval:
    """The input's elements (a conversion: floats give no bound, integers keep theirs)."""
    return scope.of(eqn.inputs[0])


def _all_elements(scope: Scope, eqn: Eqn, k: int) -> Interval:
    """Any input's elements (``concatenate``; ``update_slice`` of an array and an update)."""
    found = scope.of(eqn.inputs[0])
    for a in eqn.inputs[1:]:
        found = union(found, scope.of(a))
    return found


def _index_in(extent: int) -> Rule:
    """Positions in the first input, ``[0, n - 1 + extent]`` with ``n`` its size."""
    def rule(scope: Scope, eqn: Eqn, k: int) -> Interval:
        return DimExpr.const(0), size(eqn.inputs[0].type.shape) - 1 + extent
    return rule


def _reduced_extent(eqn: Eqn) -> DimExpr:
    shape = eqn.inputs[0].type.shape
    return size(tuple(shape[a] for a in eqn.params["axes"]))


def _reduce_sum(scope: Scope, eqn: Eqn, k: int) -> Interval:
    low, high = scope.of(eqn.inputs[0])
    count = _reduced_extent(eqn)
    return (None if low is None else low * count), (None if high is None else high * count)


RULES: dict[Primitive, Rule] = {
    _P[np.add]: _add, _P[np.subtract]: _sub, _P[np.negative]: _neg, _P[np.multiply]: _mul,
    _P[np.maximum]: _max, _P[np.minimum]: _min, _P[np.floor_divide]: _floor_divide,
    _P[np.remainder]: _mod, _P[np.absolute]: _abs,
    select_p: _select, convert_p: _same_elements, dim_value_p: _dim_value, iota_p: _iota,
    take_p: _same_elements, compress_p: _same_elements, sort_p: _same_elements,
    concatenate_p: _all_elements, update_slice_p: _all_elements,
    argsort_p: _index_in(0), searchsorted_p: _index_in(1),
    REDUCTIONS["reduce_sum"]: _reduce_sum, REDUCTIONS["reduce_max"]: _same_elements,
    REDUCTIONS["reduce_min"]: _same_elements,
}
