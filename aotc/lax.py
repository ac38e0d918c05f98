"""Primitive-level operations on tracers, as in ``jax.lax``.

Each function binds one primitive in the current trace; NumPy decompositions in
``aotc.numpy_api`` are written in terms of these. Control flow (``fori_loop``, ``scan``,
``while_loop``, ``cond``) will live here too.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .ir import Atom, AType, Var
from .ops.core import Primitive
from .ops.elementwise import convert_p, select_p
from .ops.shape import (
    broadcast_in_dim_p,
    dim_value_p,
    refine_shape_p,
    reshape_p,
    slice_p,
    transpose_p,
)
from .shapes import DimExpr, Shape
from .trace import Tracer, current


def bind(prim: Primitive, *inputs: Atom, **params: Any) -> list[Tracer]:
    return [Tracer(v) for v in current().emit(prim, list(inputs), **params)]


def bind1(prim: Primitive, *inputs: Atom, **params: Any) -> Tracer:
    return bind(prim, *inputs, **params)[0]


def fresh(x: Tracer) -> Tracer:
    """A new array with ``x``'s current value: NumPy returns a copy, never an alias."""
    return Tracer(x.atom, x.dim, x.weak)


def convert(x: Tracer, dtype: np.dtype) -> Tracer:
    dtype = np.dtype(dtype)
    return x if x.dtype == dtype else bind1(convert_p, x.atom, dtype=dtype)


def broadcast_in_dim(x: Tracer, shape: Shape, broadcast_dimensions: tuple[int, ...]) -> Tracer:
    if tuple(shape) == x.aval.shape and broadcast_dimensions == tuple(range(len(shape))):
        return x
    return bind1(broadcast_in_dim_p, x.atom, shape=tuple(shape),
                 broadcast_dimensions=tuple(broadcast_dimensions))


def broadcast_to(x: Tracer, shape: Shape) -> Tracer:
    """Broadcast by NumPy's rule: align trailing axes."""
    lead = len(shape) - x.ndim
    return broadcast_in_dim(x, shape, tuple(range(lead, len(shape))))


def reshape(x: Tracer, new_sizes: Shape) -> Tracer:
    if tuple(new_sizes) == x.aval.shape:
        return x
    return bind1(reshape_p, x.atom, new_sizes=tuple(new_sizes))


def transpose(x: Tracer, permutation: tuple[int, ...]) -> Tracer:
    if tuple(permutation) == tuple(range(x.ndim)):
        return x
    return bind1(transpose_p, x.atom, permutation=tuple(permutation))


def slice_(x: Tracer, start: tuple[DimExpr, ...], step: tuple[int, ...], shape: Shape) -> Tracer:
    if all(s.is_const and s.value == 0 for s in start) and all(k == 1 for k in step) \
            and tuple(shape) == x.aval.shape:
        return x
    return bind1(slice_p, x.atom, start=tuple(start), step=tuple(step), shape=tuple(shape))


def refine_shape(x: Tracer, shape: Shape) -> Tracer:
    """Retype ``x`` with sizes a runtime check has made equal to its own."""
    if tuple(shape) == x.aval.shape:
        return x
    return bind1(refine_shape_p, x.atom, shape=tuple(shape))


def select(cond: Tracer, a: Atom, b: Atom) -> Tracer:
    return bind1(select_p, cond.atom, a, b)


def reduce(prim: Primitive, x: Tracer, axes: tuple[int, ...]) -> Tracer:
    return bind1(prim, x.atom, axes=tuple(sorted(axes))) if axes else fresh(x)


def dim_value(expr: DimExpr) -> Tracer:
    """A size expression as an i64 scalar that still knows its expression."""
    if expr.is_const:
        return Tracer(_lit(expr.value), expr, weak=True)
    out = bind1(dim_value_p, expr=expr)
    out.dim, out.weak = expr, True  # a size is a Python int in NumPy
    return out


def _lit(value: int) -> Atom:
    from .ir import Lit

    return Lit(value, np.dtype(np.int64))


# -- structured control flow (JAX's signatures) ------------------------------------------

def _state(value: Any) -> tuple[list[Tracer], Any]:
    from .control import as_tracers, flatten

    leaves, structure = flatten(value)
    return as_tracers(leaves), structure


def _index(value: Any, what: str) -> Tracer:
    from .numpy_api.ufuncs import as_tracer

    t = as_tracer(value)
    if t.ndim != 0 or t.dtype.kind not in "iub":
        raise current().error(f"{what} must be an integer scalar")
    return convert(t, np.dtype(np.int64))


def _eager() -> bool:
    """Outside a trace the source runs as plain Python on NumPy, as JAX's lax does."""
    from .trace import _STACK

    return not _STACK


def fori_loop(lower: Any, upper: Any, body_fun: Any, init_val: Any) -> Any:
    """``for i in range(lower, upper): val = body_fun(i, val)``; returns ``val``."""
    if _eager():
        val = init_val
        for i in range(int(lower), int(upper)):
            val = body_fun(i, val)
        return val
    from .control import SCALAR_I64, keep_identity, trace_loop_body, unflatten
    from .ops.control import for_loop_p

    lo, hi = _index(lower, "fori_loop lower"), _index(upper, "fori_loop upper")
    original, structure = _state(init_val)
    counter = Tracer(Var(SCALAR_I64))
    identity: list[int | None] = []
    body, consts, init, _ = trace_loop_body(body_fun, [[counter]], [None], original, structure,
                                            "fori_loop", identity)
    outs = bind(for_loop_p, lo.atom, hi.atom, *consts, *(t.atom for t in init),
                body=body, n_consts=len(consts), step=1)
    return unflatten(structure, keep_identity(original, outs, identity, offset=1))


def while_loop(cond_fun: Any, body_fun: Any, init_val: Any) -> Any:
    """``while cond_fun(val): val = body_fun(val)``; returns ``val``."""
    if _eager():
        val = init_val
        while cond_fun(val):
            val = body_fun(val)
        return val
    from .control import keep_identity, trace_body, trace_loop_body, unflatten
    from .ops.control import while_loop_p

    original, structure = _state(init_val)
    identity: list[int | None] = []
    body, body_consts, init, _ = trace_loop_body(body_fun, [], [], original, structure,
                                                 "while_loop", identity)
    cond, cond_consts, leaves, _ = trace_body(cond_fun, [init], [structure], "while_loop cond")
    if len(cond.outputs) != 1 or cond.outputs[0].type.shape != ():
        raise current().error("while_loop: cond_fun must return one scalar")
    if cond.outputs[0].type.dtype != np.dtype(bool):
        raise current().error("while_loop: cond_fun must return a bool",
                              hint="compare explicitly, e.g. err > tol")
    outs = bind(while_loop_p, *cond_consts, *body_consts, *(t.atom for t in init),
                cond=cond, body=body, n_cond_consts=len(cond_consts),
                n_body_consts=len(body_consts))
    return unflatten(structure, keep_identity(original, outs, identity))


def cond(pred: Any, true_fun: Any, false_fun: Any, *operands: Any) -> Any:
    """``true_fun(*operands) if pred else false_fun(*operands)``, both traced."""
    if _eager():
        return true_fun(*operands) if pred else false_fun(*operands)
    return switch(convert(_pred(pred), np.dtype(np.int64)), [false_fun, true_fun], *operands)


def _pred(pred: Any) -> Tracer:
    from .numpy_api.ufuncs import as_tracer

    t = as_tracer(pred)
    if t.ndim != 0:
        raise current().error("cond: the predicate must be a scalar",
                              hint="use np.where for elementwise selection")
    return convert(t, np.dtype(bool))


def switch(index: Any, branches: Any, *operands: Any) -> Any:
    """``branches[clamp(index)](*operands)``."""
    if _eager():
        return branches[min(max(int(index), 0), len(branches) - 1)](*operands)
    from .control import keep_identity, trace_body, unflatten
    from .ops.control import cond_p

    idx = _index(index, "switch index")
    ops, structure = _state(tuple(operands))
    identities: list[list[int | None]] = [[] for _ in branches]
    traced = [trace_body(lambda args, f=f: f(*args), [ops], [structure], "cond branch", ident)
              for f, ident in zip(branches, identities, strict=True)]
    consts: list[Any] = []
    for _, c, _, _ in traced:
        consts += [a for a in c if a not in consts]
    types = [tuple(o.type for o in t[0].outputs) for t in traced]
    if len(set(types)) != 1:
        raise current().error(
            "cond: the branches return different types: "
            + " vs ".join("(" + ", ".join(map(str, t)) + ")" for t in types),
            hint="make both branches return the same dtypes and shapes")
    programs = tuple(_with_consts(p, c, consts) for p, c, _, _ in traced)
    outs = bind(cond_p, idx.atom, *consts, *(t.atom for t in ops), branches=programs)
    same = [i if all(ident[k] == i for ident in identities) else None
            for k, i in enumerate(identities[0])]
    return unflatten(traced[0][3], keep_identity(ops, outs, same, loop=False))


def _with_consts(program: Any, own: list[Any], union: list[Any]) -> Any:
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
    from .control import unflatten
    from .ops.control import scan_p

    carry, structure = _state(init)
    x_leaves, x_structure = _state(xs) if xs is not None else ([], None)
    if x_leaves:
        n = x_leaves[0].aval.shape[0] if x_leaves[0].ndim else None
        if n is None:
            raise current().error("scan: xs must be arrays with a leading axis")
    elif length is None:
        raise current().error("scan: give xs or length")
    else:
        from .numpy_api.shaping import as_dim

        n = as_dim(length, "scan length")
    slices = [Tracer(Var(AType(x.dtype, x.aval.shape[1:]))) for x in x_leaves]
    ys_holder: dict[str, Any] = {}

    def body(carry_value: Any, x_value: Any) -> Any:
        result = f(carry_value, x_value if xs is not None else None)
        if not isinstance(result, tuple) or len(result) != 2:
            raise current().error("scan: f must return a pair (carry, y)")
        new_carry, y = result
        from .control import flatten

        y_leaves, ys_holder["structure"] = flatten(y)
        ys_holder["count"] = len(y_leaves)
        return (new_carry, y)

    program, consts, carry, _ = _scan_body(body, carry, structure, slices, x_structure)
    n_ys = ys_holder["count"]
    outs = bind(scan_p, *consts, *(t.atom for t in carry), *(x.atom for x in x_leaves),
                body=program, n_consts=len(consts), n_carry=len(carry), length=n,
                reverse=bool(reverse))
    final = unflatten(structure, outs[:len(carry)])
    ys = unflatten(ys_holder["structure"], outs[len(carry):]) if n_ys or ys_holder[
        "structure"] is not None else None
    return final, ys


def _scan_body(body: Any, carry: list[Tracer], structure: Any, slices: list[Tracer],
               x_structure: Any) -> Any:
    from .control import match_carry, trace_body

    program, consts, _, _ = trace_body(lambda c, x: body(c, x), [carry, slices],
                                       [structure, x_structure], "scan")
    n = len(carry)
    match_carry(carry, list(program.outputs[:n]), "scan")
    return program, consts, carry, None


def _eager_scan(f: Any, init: Any, xs: Any, length: Any, reverse: bool) -> Any:
    from .control import flatten, unflatten

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
