"""Intervals of what loops and conditionals give: a carried value from its change per
iteration and the trip count (or a while loop's test), a branch's from every branch."""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from ..ir import Atom, Eqn, Lit, Program, Var
from ..ops.control import cond_p, for_loop_p, while_loop_p
from ..ops.elementwise import PRIM_OF_UFUNC, convert_p
from ..shapes import DimExpr, ceil_div, maximum, relu
from .intervals import CARRY, ORDER, RULES, UNKNOWN, Bound, Interval, Scope, carried, union

_P = PRIM_OF_UFUNC


def _given_from(scope: Scope, outer: tuple[Atom, ...], inner: tuple[Var, ...]
                ) -> dict[Var, Callable[[], Interval]]:
    return {v: functools.partial(scope.of, a) for v, a in zip(inner, outer, strict=True)}


def _fixed(interval: Interval) -> Callable[[], Interval]:
    return lambda: interval


def exact_interval(value: DimExpr) -> Callable[[], Interval]:
    """What a value known to equal the size ``value`` is given as."""
    return _fixed((value, value))


def _carry(k: int) -> DimExpr:
    """Carried value ``k`` before an iteration, as a symbol."""
    return DimExpr.sym(f"{CARRY}{k}", signed=True)


def _carry_symbols(carries: tuple[Var, ...], caps: dict[int, Interval]
                   ) -> dict[Var, Callable[[], Interval]]:
    """Each carried value as its symbol, or the bound a while loop's test puts on it."""
    def exact(j: int) -> Callable[[], Interval]:
        d = _carry(j)
        low, high = caps.get(j, UNKNOWN)
        return lambda: (low if low is not None else d, high if high is not None else d)
    return {v: exact(j) for j, v in enumerate(carries)}


def _implied(scope: Scope, eqn: Eqn, k: int) -> Atom | None:
    """``a and b`` as a two-way ``cond``: the condition ``a`` its output ``k`` implies,
    where its first branch (chosen when ``a`` is false) gives False or ``a`` itself."""
    branches = eqn.params["branches"]
    if len(branches) != 2:
        return None
    out = branches[0].outputs[k]
    if isinstance(out, Lit):
        return eqn.inputs[0] if out.dtype.kind == "b" and not out.value else None
    index = scope.made.get(eqn.inputs[0])  # type: ignore[arg-type]
    if out not in branches[0].inputs or index is None or index[0].prim is not convert_p:
        return None
    operand = eqn.inputs[1 + branches[0].inputs.index(out)]
    return operand if index[0].inputs[0] == operand else None


def _test_caps(scope: Scope, eqn: Eqn) -> dict[int, Interval]:
    """Bounds the test of a while loop puts on carried values where its body runs:
    ``i < n`` (and conjunctions of such) with ``n`` not carried."""
    test: Program = eqn.params["cond"]
    n = eqn.params["n_cond_consts"]
    given = _given_from(scope, eqn.inputs[:n], test.inputs[:n])
    carried = {v: j for j, v in enumerate(test.inputs[n:])}
    given.update({v: _fixed(UNKNOWN) for v in carried})  # any value: bounds hold always
    inner = Scope(test.eqns, given)
    caps: dict[int, Interval] = {}
    pending = [test.outputs[0]]
    while pending:
        made = inner.made.get(pending.pop())  # type: ignore[arg-type]
        if made is None:
            continue
        cmp = made[0]
        if cmp.prim in (_P[np.logical_and], convert_p):
            pending += cmp.inputs
            continue
        implied = _implied(inner, cmp, made[1]) if cmp.prim is cond_p else None
        if implied is not None:
            pending.append(implied)
            continue
        if cmp.prim not in ORDER:
            continue
        a, b = cmp.inputs
        smaller_first = ORDER[cmp.prim]
        if b in carried:
            a, b, smaller_first = b, a, not smaller_first
        if a not in carried:
            continue
        low, high = inner.of(b)
        strict = cmp.prim in (_P[np.less], _P[np.greater])
        j = carried[a]  # type: ignore[index]
        cap_low, cap_high = caps.get(j, UNKNOWN)
        if smaller_first and high is not None:
            caps[j] = cap_low, high - 1 if strict else high
        elif not smaller_first and low is not None:
            caps[j] = (low + 1 if strict else low), cap_high
    return caps


def _highest_after(start: Bound, step: Bound, carry: DimExpr, trips: Bound) -> Bound:
    """The upper bound of a carried value after the loop, from its bound before the loop
    and after one iteration (in terms of its value ``carry`` before it)."""
    if step is None or start is None:
        return None
    if not carried(step):
        return maximum(start, step)
    rise = step - carry
    if carried(rise):
        return None
    if (-rise).is_nonneg():
        return start
    return None if trips is None else start + trips * relu(rise)


def _negated(b: Bound) -> Bound:
    return None if b is None else -b


def _after_loop(start: Interval, step: Interval, carry: DimExpr, trips: Bound) -> Interval:
    """A carried value after the loop; its lower bound is the upper bound of its
    negation."""
    low = _highest_after(_negated(start[0]), _negated(step[0]), -carry, trips)
    return _negated(low), _highest_after(start[1], step[1], carry, trips)


def _body_scope(scope: Scope, body: Program, consts: tuple[Atom, ...],
                lead: dict[Var, Interval], caps: dict[int, Interval]) -> Scope:
    """A loop body's values, each carried value its symbol (or its cap)."""
    n = len(consts)
    given = _given_from(scope, consts, body.inputs[:n])
    given.update({v: _fixed(i) for v, i in lead.items()})
    given.update(_carry_symbols(body.inputs[n + len(lead):], caps))
    return Scope(body.eqns, given)


def _loop_carry(scope: Scope, body: Scope, outputs: tuple[Atom, ...], inits: tuple[Atom, ...],
                k: int, trips: Bound) -> Interval:
    return _after_loop(scope.of(inits[k]), body.of(outputs[k]), _carry(k), trips)


def _while_trips(scope: Scope, body: Scope, outputs: tuple[Atom, ...],
                 inits: tuple[Atom, ...], caps: dict[int, Interval]) -> Bound:
    """How often a while loop runs at most: a value its test bounds that every iteration
    moves towards the bound by a constant (``while i < n: ...; i += 1``)."""
    for j, (cap_low, cap_high) in caps.items():
        start = scope.of(inits[j])
        step = body.of(outputs[j])
        for edge, first, moved, sign in ((cap_high, start[0], step[0], 1),
                                          (cap_low, start[1], step[1], -1)):
            if edge is None or first is None or moved is None:
                continue
            by = (moved - _carry(j)) * sign
            if by.is_const and by.value >= 1:
                return relu((edge - first) * sign + by.value) // by.value
    return None


def counter_interval(low: Interval, high: Interval, step: int) -> Interval:
    """The index of ``for i in range(lo, hi, step)``: from the bounds' intervals."""
    if step > 0:
        return low[0], None if high[1] is None else high[1] - 1
    return None if high[0] is None else high[0] + 1, low[1]


def _for_loop(scope: Scope, eqn: Eqn, k: int) -> Interval:
    p = eqn.params
    n, step = p["n_consts"], p["step"]
    low, high = scope.of(eqn.inputs[0]), scope.of(eqn.inputs[1])
    first, last = (low[0], high[1]) if step > 0 else (high[0], low[1])
    trips = None
    if first is not None and last is not None:
        span = last - first if step > 0 else first - last
        trips = ceil_div(relu(span), abs(step))
    body: Program = p["body"]
    counter = {body.inputs[n]: counter_interval(low, high, step)}
    inner = _body_scope(scope, body, eqn.inputs[2:2 + n], counter, {})
    return _loop_carry(scope, inner, body.outputs, eqn.inputs[2 + n:], k, trips)


def _while_loop(scope: Scope, eqn: Eqn, k: int) -> Interval:
    p = eqn.params
    start = p["n_cond_consts"]
    n = p["n_body_consts"]
    consts, inits = eqn.inputs[start:start + n], eqn.inputs[start + n:]
    caps = _test_caps(scope, eqn)
    body: Program = p["body"]
    inner = _body_scope(scope, body, consts, {}, caps)
    trips = _while_trips(scope, inner, body.outputs, inits, caps)
    return _loop_carry(scope, inner, body.outputs, inits, k, trips)


def _cond(scope: Scope, eqn: Eqn, k: int) -> Interval:
    found: Interval | None = None
    for branch in eqn.params["branches"]:
        given = _given_from(scope, eqn.inputs[1:], branch.inputs)
        out = Scope(branch.eqns, given).of(branch.outputs[k])
        found = out if found is None else union(found, out)
    return found or UNKNOWN


RULES.update({for_loop_p: _for_loop, while_loop_p: _while_loop, cond_p: _cond})
