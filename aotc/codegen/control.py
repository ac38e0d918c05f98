"""Structured control flow: ``for_loop``, ``while_loop``, ``scan`` and ``cond``.

A nested program is lowered once, in place, by the same equation loop as the kernel
(:meth:`Lowering.run`). Loop-carried values live in fixed places for the whole loop: a
rank-0 carry in a register (an alloca that SROA promotes), an array carry in the home of
the loop's result. Each iteration reads the carries, runs the body, and then writes the
new carries back; an array the body returns as a view is staged in scratch first (see
:mod:`.layout`), so swapping or slicing carries cannot read half-updated data.
"""

from __future__ import annotations

from collections.abc import Sequence

from llvmlite import ir

from ..ir import Atom, Eqn, Var
from ..ops.control import cond_p, for_loop_p, scan_p, while_loop_p
from ..ops.core import Primitive
from ..shapes import as_dim
from .carries import LOOP_CARRIES
from .context import Lowering
from .dtypes import I8, INT64, i64, reg_type
from .loops import for_range
from .nests import Accumulator, EqnRule, copy_into
from .values import Scalar, Value, View, load, store


class Slots:
    """Where a group of results lives across blocks: registers or array buffers."""

    def __init__(self, ctx: Lowering, outs: Sequence[Var]) -> None:
        self.ctx = ctx
        self.slots: list[Accumulator | View] = [
            Accumulator(ctx, reg_type(v.type.dtype), "carry") if v.type.ndim == 0
            else ctx.home(v) for v in outs]
        self.dtypes = [v.type.dtype for v in outs]

    def current(self) -> list[Value]:
        return [Scalar(s.get(), dtype) if isinstance(s, Accumulator) else s
                for s, dtype in zip(self.slots, self.dtypes)]

    def set(self, values: Sequence[Value], skip: Sequence[bool] = (),
            staging: Sequence[View | None] = ()) -> None:
        """Store new values; arrays with a staging buffer go through it first."""
        writes: list[tuple[View, Value]] = []
        for k, (slot, value) in enumerate(zip(self.slots, values)):
            if k < len(skip) and skip[k]:
                continue
            if isinstance(slot, Accumulator):
                assert isinstance(value, Scalar)
                slot.set(value.value)
                continue
            stage = staging[k] if k < len(staging) else None
            if stage is not None:
                copy_into(self.ctx, value, stage)
                value = stage
            writes.append((slot, value))
        for slot, value in writes:
            copy_into(self.ctx, value, slot)


def _carry_staging(ctx: Lowering, eqn: Eqn, carry_out: Sequence[Atom]) -> list[View | None]:
    return [ctx.buffer(ctx.layout.staging[(eqn, k)], atom.type)
            if (eqn, k) in ctx.layout.staging else None for k, atom in enumerate(carry_out)]


def _loop_carries(ctx: Lowering, eqn: Eqn, carries: Sequence[Var], init: Sequence[Value]
                  ) -> tuple[Slots, list[bool], list[View | None]]:
    """Carry slots holding ``init``, which carries the body passes through unchanged,
    and their staging buffers."""
    slots = Slots(ctx, carries)
    slots.set(init)
    _, carry_in, carry_out = LOOP_CARRIES[eqn.prim](eqn)
    unchanged = [a is v for a, v in zip(carry_out, carry_in)]
    return slots, unchanged, _carry_staging(ctx, eqn, carry_out)


def lower_for_loop(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    """``for i in range(lower, upper, step)`` (step is a nonzero constant)."""
    b, params = ctx.b, eqn.params
    lower, upper = args[0], args[1]
    assert isinstance(lower, Scalar) and isinstance(upper, Scalar)
    n, step = params["n_consts"], params["step"]
    consts = args[2:2 + n]
    slots, unchanged, staging = _loop_carries(ctx, eqn, eqn.outs, args[2 + n:])
    counter = Accumulator(ctx, reg_type(INT64), "i")
    counter.set(lower.value)
    head, body, done = (b.function.append_basic_block(f"for.{s}") for s in ("head", "body", "done"))
    b.branch(head)
    b.position_at_end(head)
    i = counter.get()
    b.cbranch(b.icmp_signed("<" if step > 0 else ">", i, upper.value), body, done)
    b.position_at_end(body)
    with ctx.region():
        new = ctx.run(params["body"], [*consts, Scalar(i, INT64), *slots.current()])
        slots.set(new, unchanged, staging)
    counter.set(b.add(i, i64(step)))
    b.branch(head)
    b.position_at_end(done)
    return slots.current()


def lower_while_loop(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    b, params = ctx.b, eqn.params
    nc, nb = params["n_cond_consts"], params["n_body_consts"]
    cond_consts, body_consts = args[:nc], args[nc:nc + nb]
    slots, unchanged, staging = _loop_carries(ctx, eqn, eqn.outs, args[nc + nb:])
    head, body, done = (b.function.append_basic_block(f"while.{s}")
                        for s in ("head", "body", "done"))
    b.branch(head)
    b.position_at_end(head)
    with ctx.region():
        (pred,) = ctx.run(params["cond"], [*cond_consts, *slots.current()])
        assert isinstance(pred, Scalar)
        b.cbranch(pred.value, body, done)
    b.position_at_end(body)
    with ctx.region():
        slots.set(ctx.run(params["body"], [*body_consts, *slots.current()]), unchanged, staging)
    b.branch(head)
    b.position_at_end(done)
    return slots.current()


def _row(b: ir.IRBuilder, x: Value, i: ir.Value) -> Value:
    """``x[i]`` (a View of the rest, or a Scalar for a rank-1 ``x``)."""
    assert isinstance(x, View)
    if x.ndim == 1:
        return Scalar(load(b, x, [i]), x.dtype)
    data = b.gep(x.data, [b.mul(i, x.strides[0])], source_etype=I8)
    return View(data, x.dims[1:], x.strides[1:], x.dtype, x.align)


def lower_scan(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    """Carries through ``length`` steps; each step's ``y`` s are stacked on axis 0."""
    b, params = ctx.b, eqn.params
    n, c = params["n_consts"], params["n_carry"]
    consts, xs = args[:n], args[n + c:]
    slots, unchanged, staging = _loop_carries(ctx, eqn, eqn.outs[:c], args[n:n + c])
    ys = [ctx.home(v) for v in eqn.outs[c:]]
    length = ctx.dims(as_dim(params["length"]))
    with for_range(b, length, "scan") as t:
        i = b.sub(b.sub(length, i64(1)), t) if params["reverse"] else t
        with ctx.region():
            outs = ctx.run(params["body"], [*consts, *slots.current(),
                                            *(_row(b, x, i) for x in xs)])
            for y, stacked in zip(outs[c:], ys):  # before the carries change
                if stacked.ndim == 1:
                    assert isinstance(y, Scalar)
                    store(b, stacked, [i], y.value)
                else:
                    copy_into(ctx, y, _row(b, stacked, i))  # type: ignore[arg-type]
            slots.set(outs[:c], unchanged, staging)
    return [*slots.current(), *ys]


def lower_cond(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    """``branches[clamp(index)](*operands)``, each branch writing the shared results."""
    b = ctx.b
    index, operands = args[0], args[1:]
    assert isinstance(index, Scalar)
    branches = eqn.params["branches"]
    last = i64(len(branches) - 1)
    chosen = b.select(b.icmp_signed("<", index.value, i64(0)), i64(0), index.value)
    chosen = b.select(b.icmp_signed(">", chosen, last), last, chosen)
    results = Slots(ctx, eqn.outs)
    blocks = [b.function.append_basic_block(f"cond.{k}") for k in range(len(branches))]
    done = b.function.append_basic_block("cond.done")
    switch = b.switch(chosen, blocks[-1])
    for k, block in enumerate(blocks[:-1]):
        switch.add_case(i64(k), block)
    for branch, block in zip(branches, blocks):
        b.position_at_end(block)
        with ctx.region():
            results.set(ctx.run(branch, operands))
        b.branch(done)
    b.position_at_end(done)
    return results.current()


RULES: dict[Primitive, EqnRule] = {
    for_loop_p: lower_for_loop,
    while_loop_p: lower_while_loop,
    scan_p: lower_scan,
    cond_p: lower_cond,
}
