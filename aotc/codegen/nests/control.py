"""Structured control flow: ``for_loop``, ``while_loop``, ``scan`` and ``cond``.

A nested program is lowered once, in place, by the same equation loop as the kernel
(:meth:`Lowering.run`). Loop-carried values live in fixed places for the whole loop: a
rank-0 carry in a register (an alloca that SROA promotes), an array carry in one buffer
planned by :mod:`.inplace` (the initial value's own buffer when it dies at the loop,
else the result's home, filled once). Each iteration reads the carries, runs the body,
and then moves the new carries back: nothing for a carry the body updated in place,
a copy otherwise, through scratch when the value may live in a buffer being overwritten
(a swap, a view of a carry), so the moves cannot read half-updated data. A carry the
body makes anew in a buffer of its own (``u = new``) trades buffers with its slot
instead (``Move.SWAP``, :meth:`Slots.trade`): no copy per iteration, one at most after.
"""

from __future__ import annotations

from collections.abc import Sequence

from llvmlite import ir

from ...ir import Atom, Eqn, Var
from ...ops.control import cond_p, for_loop_p, scan_p, while_loop_p
from ...ops.core import Primitive
from ...shapes import as_dim
from ..core.carries import LOOP_FORMS
from ..core.context import EqnRule, Lowering
from ..core.dtypes import I8, INT64, PTR, i64, reg_type
from ..core.outline import outlined
from ..core.runtime import WorkCounter, body_work, chunk_length, chunked_range
from ..core.values import Scalar, Value, View, load, store
from ..elementwise.nests import Accumulator, copy_into
from ..memory.inplace import BufferPlan, Move


class Slots:
    """Where a group of results lives across blocks: registers or array buffers.

    An array slot is the buffer the plan gave the result: a fresh home, or the buffer of
    the operand it takes over (``BufferPlan.reuse``), passed in as ``buffers[k]``.
    """

    def __init__(self, ctx: Lowering, outs: Sequence[Var],
                 buffers: Sequence[Value | None] = ()) -> None:
        self.ctx = ctx
        self.slots: list[Accumulator | View] = []
        for k, v in enumerate(outs):
            given = buffers[k] if k < len(buffers) else None
            if v.type.ndim == 0:
                self.slots.append(Accumulator(ctx, reg_type(v.type.dtype), "carry"))
            else:
                self.slots.append(given if isinstance(given, View) else ctx.home(v))
        self.dtypes = [v.type.dtype for v in outs]
        #: Carries trading buffers with the body's new value (``Move.SWAP``): slot ->
        #: (the address of its current buffer, of the spare one, both buffer classes).
        self.traded: dict[int, tuple[ir.Value, ir.Value, tuple[Var, Var]]] = {}
        #: What :attr:`.Lowering.indirect` said of those classes before (an inner loop
        #: trading the buffer an outer one already trades: the outer's current one).
        self._outer: dict[Var, ir.Value | None] = {}

    def trade(self, k: int, slot: Var, value: Var) -> None:
        """Let carry ``k`` (``slot``'s buffer) and the body's buffer of its new value
        (``value``'s) trade places at each back edge: both classes are addressed through
        a pointer for the rest of the loop (:attr:`.Lowering.indirect`)."""
        ctx = self.ctx
        fixed = self.slots[k]
        assert isinstance(fixed, View) and not self.traded.get(k)
        plan = ctx.layout.plan
        assert plan is not None
        classes = (plan.buffer[slot], plan.buffer[value])
        current, spare = (ctx.b.entry_alloca(PTR, name) for name in ("carry", "spare"))
        ctx.b.store(fixed.data, current)
        # (the slot's type for the view: the value's may name sizes bound in the body)
        ctx.b.store(ctx.buffer(ctx.layout.homes[value], slot.type).data, spare)
        for rep in classes:
            self._outer.setdefault(rep, ctx.indirect.get(rep))
        ctx.indirect.update(zip(classes, (current, spare), strict=True))
        self.traded[k] = (current, spare, classes)

    def current(self) -> list[Value]:
        values: list[Value] = []
        for k, (s, dtype) in enumerate(zip(self.slots, self.dtypes, strict=True)):
            if isinstance(s, Accumulator):
                values.append(Scalar(s.get(), dtype))
            elif k in self.traded:
                data = self.ctx.b.load(self.traded[k][0], typ=PTR)
                values.append(View(data, s.dims, s.strides, s.dtype, s.align))
            else:
                values.append(s)
        return values

    def finish(self) -> None:
        """After the loop: a traded carry that ended in the spare buffer is copied into
        its slot, where the code after the loop reads it."""
        b = self.ctx.b
        for k, (current, _, _) in self.traded.items():
            fixed = self.slots[k]
            assert isinstance(fixed, View)
            data = b.load(current, typ=PTR)
            with b.if_then(b.icmp_unsigned("!=", data, fixed.data)):
                copy_into(self.ctx, View(data, fixed.dims, fixed.strides, fixed.dtype,
                                         fixed.align), fixed)
        for rep, outer in self._outer.items():
            if outer is None:
                del self.ctx.indirect[rep]
            else:
                self.ctx.indirect[rep] = outer
        self.traded, self._outer = {}, {}

    def set(self, values: Sequence[Value], moves: Sequence[Move] = (),
            staging: Sequence[View | None] = ()) -> None:
        """Store new values, all at once: arrays already in their slot are skipped,
        staged ones are copied to their staging buffer before any slot changes."""
        writes: list[tuple[View, Value]] = []
        for k, (slot, value) in enumerate(zip(self.slots, values, strict=True)):
            if isinstance(slot, Accumulator):
                assert isinstance(value, Scalar)
                slot.set(value.value)
                continue
            move = moves[k] if k < len(moves) else Move.COPY
            if move is Move.SKIP:
                continue
            if move is Move.SWAP:
                current, spare, _ = self.traded[k]
                assert isinstance(value, View)
                b = self.ctx.b
                b.store(b.load(current, typ=PTR), spare)  # the old carry's buffer, now free
                b.store(value.data, current)
                continue
            if move is Move.STAGE:
                stage = staging[k]
                assert stage is not None
                copy_into(self.ctx, value, stage)
                value = stage
            writes.append((slot, value))
        for slot, value in writes:
            copy_into(self.ctx, value, slot)


def _staging(ctx: Lowering, key: tuple[Eqn] | tuple[Eqn, int],
             atoms: Sequence[Atom]) -> list[View | None]:
    return [ctx.buffer(ctx.layout.staging[(*key, k)], atom.type)
            if (*key, k) in ctx.layout.staging else None for k, atom in enumerate(atoms)]


def _plan(ctx: Lowering) -> BufferPlan:
    assert ctx.layout.plan is not None
    return ctx.layout.plan


def _loop_carries(ctx: Lowering, eqn: Eqn, init: Sequence[Value]
                  ) -> tuple[Slots, tuple[Move, ...], list[View | None]]:
    """Carry slots holding ``init`` (a carry that takes over its initial value's buffer
    is not copied), the back edge's moves, and their staging buffers."""
    plan, form = _plan(ctx), LOOP_FORMS[eqn.prim](eqn)
    reused = [(eqn, k) in plan.reuse for k in range(len(init))]
    slots = Slots(ctx, form.results, [v if r else None for v, r in zip(init, reused, strict=True)])
    slots.set(init, [Move.SKIP if r else Move.COPY for r in reused])
    moves = plan.moves[(eqn,)]
    for k, move in enumerate(moves):
        if move is Move.SWAP:
            value = form.carry_out[k]
            assert isinstance(value, Var)
            slots.trade(k, form.results[k], value)
    return slots, moves, _staging(ctx, (eqn,), form.carry_out)


def lower_for_loop(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    """``for i in range(lower, upper, step)`` (step is a nonzero constant), polling the
    runtime between chunks of iterations (see :mod:`.interrupt`)."""
    b, params = ctx.b, eqn.params
    lower, upper = args[0], args[1]
    assert isinstance(lower, Scalar) and isinstance(upper, Scalar)
    n, step = params["n_consts"], params["step"]
    consts = args[2:2 + n]
    slots, moves, staging = _loop_carries(ctx, eqn, args[2 + n:])
    chunk = chunk_length(b, ctx.dims(body_work(params["body"], plan=ctx.layout.plan)))
    lo, hi = (lower.value, upper.value) if step == 1 else (i64(0), _trip_count(b, lower, upper,
                                                                                  step))
    with chunked_range(b, ctx.runtime, lo, hi, chunk, "for") as k:
        i = k if step == 1 else b.add(lower.value, b.mul(k, i64(step)))
        with ctx.region():
            new = ctx.run(params["body"], [*consts, Scalar(i, INT64), *slots.current()])
            slots.set(new, moves, staging)
    slots.finish()
    return slots.current()


def _trip_count(b: ir.IRBuilder, lower: Scalar, upper: Scalar, step: int) -> ir.Value:
    """``len(range(lower, upper, step))`` for ``|step| >= 2``, exact for any int64 bounds
    (the span is unsigned when positive; the count then fits int64)."""
    first, last = (lower, upper) if step > 0 else (upper, lower)
    span = b.sub(last.value, first.value)
    size = i64(abs(step))
    count = b.add(b.udiv(span, size), b.zext(b.icmp_unsigned("!=", b.urem(span, size), i64(0)),
                                             span.type))
    return b.select(b.icmp_signed(">", last.value, first.value), count, i64(0))


def lower_while_loop(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    b, params = ctx.b, eqn.params
    nc, nb = params["n_cond_consts"], params["n_body_consts"]
    cond_consts, body_consts = args[:nc], args[nc:nc + nb]
    slots, moves, staging = _loop_carries(ctx, eqn, args[nc + nb:])
    counter = WorkCounter(b, ctx.runtime, ctx.dims(body_work(params["cond"], params["body"],
                                                                plan=ctx.layout.plan)))
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
        slots.set(ctx.run(params["body"], [*body_consts, *slots.current()]), moves, staging)
    counter.tick()
    b.branch(head)
    b.position_at_end(done)
    slots.finish()
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
    slots, moves, staging = _loop_carries(ctx, eqn, args[n:n + c])
    ys = [ctx.home(v) for v in eqn.outs[c:]]
    length = ctx.dims(as_dim(params["length"]))
    chunk = chunk_length(b, ctx.dims(body_work(params["body"], plan=ctx.layout.plan)))
    with chunked_range(b, ctx.runtime, i64(0), length, chunk, "scan") as t:
        i = b.sub(b.sub(length, i64(1)), t) if params["reverse"] else t
        with ctx.region():
            outs = ctx.run(params["body"], [*consts, *slots.current(),
                                            *(_row(b, x, i) for x in xs)])
            for y, stacked in zip(outs[c:], ys, strict=True):  # before the carries change
                if stacked.ndim == 1:
                    assert isinstance(y, Scalar)
                    store(b, stacked, [i], y.value)
                else:
                    copy_into(ctx, y, _row(b, stacked, i))  # type: ignore[arg-type]
            slots.set(outs[:c], moves, staging)
    slots.finish()
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
    plan = _plan(ctx)
    results = Slots(ctx, eqn.outs, [args[plan.reuse[(eqn, k)]] if (eqn, k) in plan.reuse
                                    else None for k in range(len(eqn.outs))])
    blocks = [b.function.append_basic_block(f"cond.{k}") for k in range(len(branches))]
    done = b.function.append_basic_block("cond.done")
    switch = b.switch(chosen, blocks[-1])
    for k, block in enumerate(blocks[:-1]):
        switch.add_case(i64(k), block)
    for k, (branch, block) in enumerate(zip(branches, blocks, strict=True)):
        b.position_at_end(block)
        with ctx.region():
            results.set(ctx.run(branch, operands), plan.moves[(eqn, k)],
                        _staging(ctx, (eqn, k), branch.outputs))
        b.branch(done)
    b.position_at_end(done)
    return results.current()


RULES: dict[Primitive, EqnRule] = {
    for_loop_p: outlined(lower_for_loop),
    while_loop_p: outlined(lower_while_loop),
    scan_p: outlined(lower_scan),
    cond_p: outlined(lower_cond),
}
