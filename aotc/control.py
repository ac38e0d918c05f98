"""Tracing loop bodies and branches into nested programs, for ``aotc.lax``.

A body is traced in a child :class:`~aotc.trace.TraceContext` on fresh tracers for
its arguments; outer values it uses become its leading inputs ("consts"). The loop
state may be any nesting of tuples and lists of arrays and scalars; its types must be
the same after the body as before, as in JAX.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .errors import AotcError
from .ir import Atom, AType, Program, Var
from .trace import _STACK, TraceContext, Tracer, current

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


def as_tracers(leaves: list[Any]) -> list[Tracer]:
    from .numpy_api.ufuncs import as_tracer

    return [as_tracer(v) for v in leaves]


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
    _STACK.append(ctx)
    try:
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
        outs = [ctx.local(t.atom) for t in as_tracers(leaves)]
    except AotcError:
        raise
    finally:
        _STACK.pop()
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
    from . import lax

    for _ in range(2):
        program, consts, leaves, out_structure = trace_body(
            fn, lead + [init], lead_structures + [structure], what, identity)
        outs = [o.type for o in program.outputs]
        if len(outs) != len(init):
            break  # match_carry reports it
        promoted = [lax.convert(t, o.dtype) if t.weak and t.ndim == 0 and o.dtype != t.dtype
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
    from .numpy_api.writes import write

    out = list(after)
    for k, j in enumerate(identity):
        # In a loop only a slot that hands back its own array is a fixed point over any
        # number of iterations; a swap (x, y = y, x) moves names, not contents.
        if j is None or j < offset or (loop and j - offset != k):
            continue
        original = before[j - offset]
        if isinstance(original, Tracer) and original.ndim > 0:
            write(original, Ellipsis, after[k])
            out[k] = original
    return out


I64 = np.dtype(np.int64)
SCALAR_I64 = AType(I64, ())
