"""Writes into a program's array arguments: a kernel's (``P``) and a compiled function's.

Both take arrays by reference. An argument the buffer plan updates in place
(``BufferPlan.inplace_args``) is used as it is when no other argument overlaps it,
else through a copy in its fallback slot (see :mod:`..memory.overlap`); at the end each
write the plan did not do in place is copied into the argument (``Program.writebacks``).
"""

from __future__ import annotations

from collections.abc import Mapping

from llvmlite import ir

from ...ir import Program
from ..elementwise.nests import copy_into
from ..memory.inplace import Move
from ..memory.overlap import choose, private_array
from .context import Lowering
from .values import Value, View

#: Per argument updated in place: whether the caller's array was private, and the
#: fallback slot used when it was not.
Private = dict[int, tuple[ir.Value, View]]


def own_argument(ctx: Lowering, callers: Mapping[int, View], program: Program, index: int
                 ) -> tuple[View, tuple[ir.Value, View]]:
    """Input ``index``, whose updates the plan writes in place: the caller's array when
    that is private, else a copy of it in its fallback slot. Returns the View the
    program uses, and (private?, fallback slot)."""
    b, var = ctx.b, program.inputs[index]
    view = callers[index]
    others = [v for j, v in callers.items() if j != index]
    fallback = ctx.buffer(ctx.layout.staging[("argument", index)], var.type)
    ok = private_array(b, view, others)
    with b.if_then(b.not_(ok)):
        copy_into(ctx, view, fallback)
    return choose(b, ok, view, fallback), (ok, fallback)


def write_back(ctx: Lowering, dests: Mapping[int, View], program: Program,
               private: Private) -> None:
    """Writes into arguments, after the outputs are copied (they read the old values).

    A write the plan already did in place (``Move.SKIP``) only copies back from the
    fallback slot when the argument was not private. Sources that could read an
    argument are staged in scratch first (see the layout), so the writes cannot affect
    each other.
    """
    assert ctx.layout.plan is not None
    b = ctx.b
    writes: list[tuple[View, Value, ir.Value | None]] = []
    moves = ctx.layout.plan.moves[("writeback",)]
    for k, ((index, atom), move) in enumerate(zip(program.writebacks, moves, strict=True)):
        var = program.inputs[index]
        if var.type.ndim == 0:
            continue  # a scalar argument is passed by value
        dest = dests[index]
        if move is Move.SKIP:
            if index in private:
                ok, fallback = private[index]
                writes.append((dest, fallback, b.not_(ok)))
            continue
        value = ctx.read(atom)
        if move is Move.STAGE:
            staged = ctx.buffer(ctx.layout.staging[("writeback", k)], atom.type)
            copy_into(ctx, value, staged)
            value = staged
        writes.append((dest, value, None))
    for dest, value, when in writes:
        if when is None:
            copy_into(ctx, value, dest)
        else:
            with b.if_then(when):
                copy_into(ctx, value, dest)
