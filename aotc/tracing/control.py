"""Structured control flow: ``fori_loop``, ``while_loop``, ``cond``, ``switch``, ``scan``.

JAX's signatures (re-exported by :mod:`aotc.lax`); outside a trace each runs as plain
Python on NumPy. Bodies are traced by :mod:`aotc.tracing.bodies`; their state's types must be
the same after the body as before, as in JAX. Unlike JAX, NumPy's object semantics are
kept: an array a body updates in place (an argument of the loop, or any array made
outside the body that it writes into) is that same array, updated, afterwards.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..errors import TraceError
from ..ir import Eqn, Params, Program, Var, bound_uppers
from ..ops.control import cond_p, for_loop_p, scan_p, while_loop_p
from ..ops.elementwise import convert_p
from ..shapes import DimExpr, bound_symbols
from ..value_bounds import loop_index_interval
from .aliases import (
    Views,
    branch_results,
    branch_views,
    branches_alias,
    loop_views,
    swap_cycles,
    swapped_arrays,
    swapped_writes,
    trip_count,
)
from .avals import AType
from .bind import as_dim, bind, convert, fresh
from .bodies import (
    SCALAR_I64,
    Carried,
    carried_numbers,
    flatten,
    keep_identity,
    kind_conflict,
    kind_name,
    match_carry,
    rebound,
    structure_kinds,
    trace_body,
    trace_loop_body,
    unflatten,
    with_outer_writes,
)
from .tracer import Tracer, as_tracer, current, tracing_now, user_loc


def _state(value: Any) -> tuple[list[Tracer], Any]:
    leaves, structure = flatten(value)
    return [as_tracer(v) for v in leaves], structure


def _index(value: Any, what: str) -> Tracer:
    t = as_tracer(value)
    if t.ndim != 0 or t.dtype.kind not in "iub":
        raise current().error(f"{what} must be an integer scalar")
    return convert(t, np.dtype(np.int64))


def _eager() -> bool:
    """Outside a trace the source runs as plain Python on NumPy, as JAX's lax does."""
    return not tracing_now()


def _own(arrays: list[Tracer], fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn(*args, state)`` as a body whose state is ``(state, arrays' values)``: while it
    runs, each outer array it writes into is its own carried value."""
    def body(*args: Any) -> Any:
        *lead, (state, values) = args
        with rebound(arrays, values):
            given = [t.atom for t in arrays]
            result = settled(fn(*lead, state), arrays)
            if isinstance(arrays, Carried):
                arrays.written.update(id(t) for t, a in zip(arrays, given, strict=True)
                                      if t.atom is not a)
            return result, [Tracer(t.atom) for t in arrays]
    return body


def settled(result: Any, arrays: list[Tracer]) -> Any:
    """A body's result read while ``arrays`` are rebound: a value that is one of them,
    or a view into one (``ret = out`` after ``out[0] = 5``), becomes its value now, not
    the outer array's once the body is done."""
    def reaches(t: Tracer | None) -> bool:
        while t is not None:
            if any(t is a for a in arrays):
                return True
            t = t.base
        return False

    leaves, structure = flatten(result)
    return unflatten(structure, [fresh(v) if isinstance(v, Tracer) and reaches(v) else v
                                 for v in leaves])


def fori_loop(lower: Any, upper: Any, body_fun: Any, init_val: Any) -> Any:
    """``for i in range(lower, upper): val = body_fun(i, val)``; returns ``val``."""
    if _eager():
        val = init_val
        for i in range(int(lower), int(upper)):
            val = body_fun(i, val)
        return val
    lo, hi = _index(lower, "fori_loop lower"), _index(upper, "fori_loop upper")

    def run(arrays: list[Tracer], views: Views) -> Any:
        original, structure = _state((views.carried(), arrays))
        index = Var(SCALAR_I64)
        counter = Tracer(index)
        outer = current()
        outer.known[index] = lambda: loop_index_interval(outer, lo, hi)
        identity: list[int | None] = []
        body, consts, init, made = trace_loop_body(_own(arrays, views.loop_body(body_fun)),
                                                   [[counter]], [None], original, structure,
                                                   "fori_loop", identity)
        outs = bind(for_loop_p, lo.atom, hi.atom, *consts, *(t.atom for t in init),
                    body=body, n_consts=len(consts), step=1)
        carried_numbers(outs, [original, made], np.less(lo, hi))
        val, values = unflatten(structure, keep_identity(original, outs, identity, offset=1))
        cycles = swap_cycles(identity, 1, body, len(consts) + 1)
        if cycles:  # a, b = b, a: which array holds what depends on the trip count
            swapped_arrays(original, outs, cycles, identity, 1, trip_count(lo, hi))
        return views.result(val), values
    return with_outer_writes(lambda arrays: loop_views(*_state(init_val),
                                                       lambda views: run(arrays, views)))


def while_loop(cond_fun: Any, body_fun: Any, init_val: Any) -> Any:
    """``while cond_fun(val): val = body_fun(val)``; returns ``val``."""
    if _eager():
        val = init_val
        while cond_fun(val):
            val = body_fun(val)
        return val

    def run(arrays: list[Tracer], views: Views, counted: bool) -> Any:
        # ``counted``: the state also counts the iterations (see swapped_arrays).
        body_fn = (lambda s: (body_fun(s[0]), s[1] + 1)) if counted else body_fun
        cond_fn = (lambda s: cond_fun(s[0])) if counted else cond_fun
        original, structure = _state((views.carried(), arrays))
        identity: list[int | None] = []
        body, body_consts, init, made = trace_loop_body(
            _own(arrays, views.loop_body(body_fn)), [], [], original, structure, "while_loop",
            identity)
        cycles = swap_cycles(identity, 0, body, len(body_consts))
        if cycles and not counted:
            raise _Uncounted
        test = _own(arrays, views.reader(cond_fn))
        cond, cond_consts, _, _ = trace_body(lambda s: test(s)[0], [init], [structure],
                                             "while_loop cond")
        if len(cond.outputs) != 1 or cond.outputs[0].type.shape != ():
            raise current().error("while_loop: cond_fun must return one scalar")
        if cond.outputs[0].type.dtype != np.dtype(bool):
            raise current().error("while_loop: cond_fun must return a bool",
                                  hint="compare explicitly, e.g. err > tol")
        outs = bind(while_loop_p, *cond_consts, *body_consts, *(t.atom for t in init),
                    cond=cond, body=body, n_cond_consts=len(cond_consts),
                    n_body_consts=len(body_consts))
        carried_numbers(outs, [original, made])
        val, values = unflatten(structure, keep_identity(original, outs, identity))
        val = views.result(val)
        if cycles:  # a, b = b, a: which array holds what depends on the trip count
            swapped_arrays(original, outs, cycles, identity, 0, val[1])
        return (val[0] if counted else val), values

    def traced(arrays: list[Tracer], counted: bool = False) -> Any:
        start = (init_val, np.int64(0)) if counted else init_val
        try:
            return loop_views(*_state(start), lambda views: run(arrays, views, counted))
        except _Uncounted:
            return traced(arrays, counted=True)
    return with_outer_writes(traced)


class _Uncounted(Exception):
    """A while loop swaps arrays it writes: it must count its iterations."""


def cond(pred: Any, true_fun: Any, false_fun: Any, *operands: Any) -> Any:
    """``true_fun(*operands) if pred else false_fun(*operands)``, both traced."""
    if _eager():
        return true_fun(*operands) if pred else false_fun(*operands)
    return switch(convert(_pred(pred), np.dtype(np.int64)), [false_fun, true_fun], *operands)


def _pred(pred: Any) -> Tracer:
    t = as_tracer(pred)
    if t.ndim != 0:
        raise current().error("cond: the predicate must be a scalar",
                              hint="use np.where for elementwise selection")
    return convert(t, np.dtype(bool))


def switch(index: Any, branches: Any, *operands: Any) -> Any:
    """``branches[clamp(index)](*operands)``."""
    if _eager():
        return branches[min(max(int(index), 0), len(branches) - 1)](*operands)
    idx = _index(index, "switch index")

    given: list[int] = []

    def run(arrays: list[Tracer]) -> Any:
        views = Views.split(*_state(tuple(operands)))
        ops, structure = _state((views.carried(), arrays))
        identities: list[list[int | None]] = [[] for _ in branches]
        handed: list[list[int | None]] = []
        wrote: set[int] = set()
        traced = [trace_body(_own(arrays, branch_views(views, lambda args, f=f: f(*args),
                                                       handed, wrote, given)),
                             [ops], [structure], "cond branch", ident)
                  for f, ident in zip(branches, identities, strict=True)]
        leaves = [t[2] for t in traced]
        _same_kinds([t[3] for t in traced])
        programs = _unify_outputs([t[0] for t in traced], leaves)
        consts: list[Any] = []
        for _, c, _, _ in traced:
            consts += [a for a in c if a not in consts]
        programs = [_with_consts(p, c, consts) for p, (_, c, _, _) in zip(programs, traced,
                                                                         strict=True)]
        outs = bind(cond_p, idx.atom, *consts, *(t.atom for t in ops), branches=tuple(programs))
        extras = range(len(outs) - len(arrays) - len(given), len(outs) - len(arrays))
        same = [i if k not in extras and all(ident[k] == i for ident in identities) else None
                for k, i in enumerate(identities[0])]
        swapped = [] if given else swapped_writes(views, wrote, same)
        if swapped:
            raise _Swapped(swapped)
        results = branch_results(views, keep_identity(ops, outs, same, loop=False), handed, same)
        branches_alias(idx, len(branches), ops, results, identities, leaves)
        carried_numbers(results, [[ops[j] if j is not None else leaf
                                   for j, leaf in zip(ident, branch, strict=True)]
                                  for ident, branch in zip(identities, leaves, strict=True)])
        (result, kept), values = unflatten(traced[0][3], results)
        originals = [views.leaves[views.kept[i]] for i in given]
        return (result, list(zip(originals, kept, strict=True))), values

    try:
        result, writes = with_outer_writes(run)
    except _Swapped as found:  # traced again, giving those arrays as the branches leave them
        given.extend(found.positions)
        result, writes = with_outer_writes(run)
    for original, value in writes:  # (here, where a write may reach an enclosing body)
        original[...] = value
    return result


class _Swapped(Exception):
    """A branch wrote carried arrays and handed them back under other names
    (``aliases.swapped_writes``): at these positions among the carried values."""

    def __init__(self, positions: list[int]) -> None:
        super().__init__("a branch swapped arrays it wrote")
        self.positions = positions


def _same_kinds(structures: list[Any]) -> None:
    """Branches must give values of one kind: ``stack and k < n`` is a list on one path
    and a bool on the other (its value has no type; its truth, in a test, has one)."""
    kinds = [structure_kinds(s) for s in structures]
    for kind in kinds[1:]:
        conflict = kind_conflict(kinds[0], kind)
        if conflict is not None:
            one, other = conflict
            raise current().error(
                "the branches of a conditional (an if on a runtime value, a conditional "
                "expression, 'and'/'or') give different kinds of values: "
                f"{kind_name(one)} vs {kind_name(other)}",
                hint="give every path one kind of value: in a test only the truth of "
                     "'a and b' is read, elsewhere write bool(a) and b")


def _unify_outputs(programs: list[Program], leaves: list[list[Any]]) -> list[Program]:
    """Branches must return the same types; a weak scalar (a Python number) in one takes
    the dtype another gives that value (``x if c else 0``), as in JAX."""
    types = [[o.type for o in p.outputs] for p in programs]
    if len({len(t) for t in types}) != 1:
        raise BranchArity("cond: the branches return different numbers of values",
                          loc=user_loc(), kernel=current().kernel)
    out = list(programs)
    for k in range(len(types[0])):
        column = [t[k] for t in types]
        if len(set(column)) == 1:
            continue
        if len({a.shape for a in column}) != 1:
            raise BranchTypes(k, column, uppers=bound_uppers(*programs))
        # NumPy's promotion, Python numbers weak: 10 vs 0.5 * x is float, as Numba unifies
        kinds = [_weak_kind(branch[k], a) for a, branch in zip(column, leaves, strict=True)]
        if column[0].ndim and len({d for d in kinds if isinstance(d, np.dtype)}) > 1:
            raise BranchTypes(k, column)  # arrays of two dtypes: Python's would differ too
        try:
            dtype = np.result_type(*kinds)
        except TypeError:
            raise BranchTypes(k, column) from None
        target = AType(dtype, column[0].shape)
        out = [_converted_output(p, k, target) for p in out]
    return out


def _weak_kind(value: Any, atype: AType) -> Any:
    """What a branch's value means to promotion: a Python number (or a weak scalar) only
    by its kind, anything else by its dtype."""
    weak = isinstance(value, (bool, int, float, complex)) or (
        isinstance(value, Tracer) and value.weak and atype.ndim == 0)
    return atype.dtype.type(0).item() if weak else atype.dtype


class BranchArity(TraceError):
    """The branches give different numbers of values (a list one item longer on one
    path: ``aotc.autograph.statements`` lays such lists out as arrays and joins them)."""


class BranchTypes(TraceError):
    """The branches of a conditional give output ``index`` different ``types``."""

    def __init__(self, index: int, types: list[AType], what: str | None = None,
                 uppers: dict[str, DimExpr] | None = None) -> None:
        self.index, self.types = index, types
        self.uppers = uppers or {}  # of the size symbols the branches bind
        what = what or ("the branches of a conditional (an if on a runtime value, a "
                        "conditional expression, 'and'/'or', or lax.cond) give a value")
        error = current().error(
            f"{what} different types: " + " vs ".join(str(a) for a in types),
            hint="make every path give the same dtype and shape (convert with .astype(), "
                 "or start from 0.0 instead of 0)")
        super().__init__(error.message, loc=error.loc, kernel=error.kernel, hint=error.hint)


def _converted_output(program: Program, k: int, target: AType) -> Program:
    """``program`` with output ``k`` converted to ``target`` (a weak scalar's dtype)."""
    atom = program.outputs[k]
    if atom.type == target:
        return program
    var = Var(target)
    eqn = Eqn(convert_p, (atom,), Params.of({"dtype": target.dtype}), (var,))
    outputs = program.outputs[:k] + (var,) + program.outputs[k + 1:]
    return program.replace(eqns=program.eqns + (eqn,), outputs=outputs)


def _with_consts(program: Program, own: list[Any], union: list[Any]) -> Program:
    """Give a branch every branch's consts as inputs, in one shared order."""
    n_own = len(own)
    mine = dict(zip(own, program.inputs[:n_own], strict=True))
    inputs = tuple(mine.get(c) or Var(c.type) for c in union) + program.inputs[n_own:]
    return program.replace(inputs=inputs)


def scan(f: Any, init: Any, xs: Any = None, length: Any = None, reverse: bool = False) -> Any:
    """JAX's scan: ``carry, y = f(carry, x)`` over the leading axis of ``xs``; returns
    ``(carry, stacked ys)``."""
    if _eager():
        return _eager_scan(f, init, xs, length, reverse)
    x_leaves, x_structure = _state(xs) if xs is not None else ([], None)
    if x_leaves:
        if not x_leaves[0].ndim:
            raise current().error("scan: xs must be arrays with a leading axis")
        n = x_leaves[0].aval.shape[0]
    elif length is None:
        raise current().error("scan: give xs or length")
    else:
        n = as_dim(length, "scan length")

    def run(arrays: list[Tracer]) -> Any:
        carry, structure = _state((init, arrays))
        slices = [Tracer(Var(AType(x.dtype, x.aval.shape[1:]))) for x in x_leaves]
        ys_structure: list[Any] = []

        def body(carry_value: Any, x_value: Any) -> Any:
            state, values = carry_value
            with rebound(arrays, values):
                result = f(state, x_value if xs is not None else None)
                if not isinstance(result, tuple) or len(result) != 2:
                    raise current().error("scan: f must return a pair (carry, y)")
                new_state, y = result
                ys_structure[:] = [flatten(y)[1] if y is not None else _NO_YS]
                return (new_state, [Tracer(t.atom) for t in arrays]), (y if y is not None
                                                                       else ())

        program, consts, _, _ = trace_body(body, [carry, slices], [structure, x_structure],
                                           "scan")
        match_carry(carry, list(program.outputs[:len(carry)]), "scan")
        _refuse_ragged(program.outputs[len(carry):])
        outs = bind(scan_p, *consts, *(t.atom for t in carry), *(x.atom for x in x_leaves),
                    body=program, n_consts=len(consts), n_carry=len(carry), length=n,
                    reverse=bool(reverse))
        state, values = unflatten(structure, outs[:len(carry)])
        ys = None if ys_structure[0] is _NO_YS else unflatten(ys_structure[0],
                                                              outs[len(carry):])
        return (state, ys), values
    return with_outer_writes(run)


_NO_YS = object()  # scan's f returned no y (None)


def _refuse_ragged(ys: Sequence[Any]) -> None:
    """A located error for items whose sizes the body decides (``[[v for v in row if v >
    0] for row in x]``): their stack would be ragged, which an array cannot be."""
    outside = set(current().uppers())
    if any(bound_symbols(d) - outside for y in ys if isinstance(y, Var) for d in y.type.shape):
        raise current().error(
            "each item of this loop or comprehension is a list or array whose length "
            "depends on the item (a ragged list of lists), which no array can hold",
            hint="build one flat list and a list of where each row starts, or give "
                 "every row one length (pad it)")


def _eager_scan(f: Any, init: Any, xs: Any, length: Any, reverse: bool) -> Any:
    leaves, structure = flatten(xs) if xs is not None else ([], None)
    n = len(leaves[0]) if leaves else int(length)
    order = range(n - 1, -1, -1) if reverse else range(n)
    carry, ys = init, []
    for i in order:
        x = unflatten(structure, [leaf[i] for leaf in leaves]) if leaves else None
        carry, y = f(carry, x)
        ys.append(y)
    if reverse:
        ys.reverse()
    if not ys:
        return carry, None
    y_leaves = [flatten(y)[0] for y in ys]
    stacked = [np.stack([row[k] for row in y_leaves]) for k in range(len(y_leaves[0]))]
    return carry, unflatten(flatten(ys[0])[1], stacked)
