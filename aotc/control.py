"""Structured control flow: ``fori_loop``, ``while_loop``, ``cond``, ``switch``, ``scan``.

JAX's signatures (re-exported by :mod:`aotc.lax`). A body is traced in a child
:class:`~aotc.trace.TraceContext` on fresh tracers for its arguments; outer values it
uses become its leading inputs ("consts"). The loop state may be any nesting of tuples
and lists of arrays and scalars; its types must be the same after the body as before,
as in JAX. Outside a trace each function runs as plain Python on NumPy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .bind import as_dim, bind, convert
from .ir import Atom, AType, Program, Var
from .ops.control import cond_p, for_loop_p, scan_p, while_loop_p
from .trace import TraceContext, Tracer, as_tracer, current, tracing, tracing_now

Tree = Any


def flatten(tree: Tree) -> tuple[list[Any], Tree]:
    """Leaves of nested tuples/lists, and a structure to rebuild them with."""
    if isinstance(tree, (tuple, list)):
        leaves: list[Any] = []
        shapes = []
        for item in tree:
            sub, shape = flatten(item)
            leaves += sub
            shapes.append((len(sub), shape))
        return leaves, (type(tree), shapes)
    return [tree], None


def unflatten(structure: Tree, leaves: list[Any]) -> Tree:
    if structure is None:
        return leaves[0]
    kind, shapes = structure
    out, pos = [], 0
    for count, shape in shapes:
        out.append(unflatten(shape, leaves[pos:pos + count]))
        pos += count
    return kind(out)


def trace_body(fn: Callable[..., Any], arg_tracers: list[list[Tracer]], structures: list[Tree],
               what: str, identity: list[int | None] | None = None
               ) -> tuple[Program, list[Atom], list[Any], Tree]:
    """Trace ``fn(*args)`` where each argument is rebuilt from ``arg_tracers``' types.

    Returns the body program (inputs: consts, then the arguments' leaves), the outer
    atoms to pass as consts, the body's output leaves and their structure. If given,
    ``identity`` is filled with, per output leaf, the index of the argument leaf that is
    the very same object (an array the body updated in place), or None.
    """
    outer = current()
    ctx = TraceContext(outer.kernel, parent=outer)
    with tracing(ctx):
        params: list[Var] = []
        args = []
        every: list[Tracer] = []
        for tracers, structure in zip(arg_tracers, structures, strict=True):
            inner = []
            for t in tracers:
                var = Var(t.aval)
                params.append(var)
                inner.append(Tracer(var, weak=t.weak))
            every += inner
            args.append(None if structure is None and not inner else unflatten(structure, inner))
        ctx.defined.update(params)
        result = fn(*args)
        leaves, out_structure = flatten(result)
        if identity is not None:
            identity[:] = [next((j for j, t in enumerate(every) if t is leaf), None)
                           for leaf in leaves]
        outs = [ctx.local(as_tracer(v).atom) for v in leaves]
    consts: list[Atom] = list(ctx.captures)
    program = Program(tuple(ctx.captures.values()) + tuple(params), tuple(ctx.eqns),
                      tuple(outs), name=what)
    return program, consts, leaves, out_structure


def match_carry(before: list[Tracer], after: list[Any], what: str) -> None:
    """The loop state must keep its dtypes and shapes from one iteration to the next."""
    ctx = current()
    if len(before) != len(after):
        raise ctx.error(f"{what}: the body returns {len(after)} state values but the loop "
                        f"started with {len(before)}")
    for i, (b, a) in enumerate(zip(before, after, strict=True)):
        got = a.type if hasattr(a, "type") else a
        if b.aval != got:
            raise ctx.error(
                f"{what}: state value {i} starts as {b.aval} but the body makes it {got}",
                hint="start the state with the dtype and shape it keeps, e.g. 0.0 instead "
                     "of 0 for a float accumulator, or convert with .astype()",
            )


def trace_loop_body(fn: Callable[..., Any], lead: list[list[Tracer]], lead_structures: list[Tree],
                    init: list[Tracer], structure: Tree, what: str,
                    identity: list[int | None] | None = None
                    ) -> tuple[Program, list[Atom], list[Tracer], Tree]:
    """Trace a body taking ``(*lead, state)`` and returning the state.

    A weak scalar in the initial state (``0.0``, ``0``) takes the dtype the body gives it,
    as in JAX: the body is traced again with that dtype.
    """
    for _ in range(2):
        program, consts, leaves, out_structure = trace_body(
            fn, lead + [init], lead_structures + [structure], what, identity)
        outs = [o.type for o in program.outputs]
        if len(outs) != len(init):
            break  # match_carry reports it
        promoted = [convert(t, o.dtype) if t.weak and t.ndim == 0 and o.dtype != t.dtype
                    else t for t, o in zip(init, outs, strict=True)]
        if all(p is t for p, t in zip(promoted, init, strict=True)):
            break
        init = promoted
    match_carry(init, list(program.outputs), what)
    return program, consts, init, out_structure


def keep_identity(before: list[Any], after: list[Tracer], identity: list[int | None],
                  offset: int = 0, loop: bool = True) -> list[Any]:
    """Arrays the body updated in place are the caller's same arrays after the loop.

    In NumPy, ``u[1:] = ...`` inside a loop mutates the array object ``u`` names, so an
    array passed in (or a view of one) must see the final value; a name rebound to a new
    array (``u = u + 1``) must not change the old one.
    """
    out = list(after)
    for k, j in enumerate(identity):
        # In a loop only a slot that hands back its own array is a fixed point over any
        # number of iterations; a swap (x, y = y, x) moves names, not contents.
        if j is None or j < offset or (loop and j - offset != k):
            continue
        original = before[j - offset]
        if isinstance(original, Tracer) and original.ndim > 0:
            original[...] = after[k]
            out[k] = original
    return out


I64 = np.dtype(np.int64)
SCALAR_I64 = AType(I64, ())


# -- structured control flow (JAX's signatures) ------------------------------------------

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


def fori_loop(lower: Any, upper: Any, body_fun: Any, init_val: Any) -> Any:
    """``for i in range(lower, upper): val = body_fun(i, val)``; returns ``val``."""
    if _eager():
        val = init_val
        for i in range(int(lower), int(upper)):
            val = body_fun(i, val)
        return val

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

    carry, structure = _state(init)
    x_leaves, x_structure = _state(xs) if xs is not None else ([], None)
    if x_leaves:
        n = x_leaves[0].aval.shape[0] if x_leaves[0].ndim else None
        if n is None:
            raise current().error("scan: xs must be arrays with a leading axis")
    elif length is None:
        raise current().error("scan: give xs or length")
    else:
        n = as_dim(length, "scan length")
    slices = [Tracer(Var(AType(x.dtype, x.aval.shape[1:]))) for x in x_leaves]
    ys_holder: dict[str, Any] = {}

    def body(carry_value: Any, x_value: Any) -> Any:
        result = f(carry_value, x_value if xs is not None else None)
        if not isinstance(result, tuple) or len(result) != 2:
            raise current().error("scan: f must return a pair (carry, y)")
        new_carry, y = result

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

    program, consts, _, _ = trace_body(lambda c, x: body(c, x), [carry, slices],
                                       [structure, x_structure], "scan")
    n = len(carry)
    match_carry(carry, list(program.outputs[:n]), "scan")
    return program, consts, carry, None


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
