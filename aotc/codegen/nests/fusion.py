"""Lowering of ``fusion``: a whole group of equations as one loop nest.

:func:`~.fusion_plan.plan_fusion` says what the body computes (nodes at symbolic
indices) and in which loop order. Each node is emitted once, in the outermost loop where
its index is known (a row statistic is read once per row), and the innermost nodes once
per iteration. Loop-shaped outputs are stored at every index into their C-contiguous
homes. Reductions run the kept axes outside and the reduced axes inside, accumulate in
registers (entry-block allocas that SROA promotes) and are stored once per kept index;
when the last axis is kept (``x.sum(axis=0)``) it stays innermost instead and each
reduction updates its output row in place, as NumPy does. Either way they combine with
the standalone reduction's rules (:data:`.reductions.REDUCERS`), so NaN propagation and
integer semantics agree. A body reduction whose result the row uses (softmax's max)
splits the reduced loops into phases run one after another at each kept index
(:class:`~.fusion_plan.FusionPlan`): the row is read from memory once, then from cache.

Two things make the innermost loop vectorize:

- *Unit strides.* Caller strides are runtime values, which LLVM's vectorizer cannot
  prove consecutive. When every access is unit-stride along the innermost loop, a second
  copy of that loop addresses elements as ``row[i]`` (a GEP in element units); the
  byte-stride copy serves every other layout. One runtime test picks the copy.
- *Float reductions* may not be reassociated by LLVM without fast-math, so the loop
  runs in chunks of one 64-byte register (8 float64s, 16 float32s): item ``k`` of a chunk
  goes to lane ``k`` of a vector accumulator, which SLP turns into vector instructions.
  Float sums also close a block every ``BLOCK`` items and add block sums pairwise, as the
  standalone sum does (:mod:`.fusion_reduce`, :mod:`.pairwise`); the result is as
  accurate as NumPy's and the same for every input layout.
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from llvmlite import ir

from ...ir import Eqn, Lit, Var
from ...ops.indexmaps import iota_component
from ...ops.shape import iota_p
from ...types import real_dtype
from ..core.context import Lowering
from ..core.dtypes import I8, INT64, constant, i64, mem_type
from ..core.loops import for_range
from ..core.values import Scalar, Value, View, load_memory, scaled, step_value, store_memory
from ..elementwise.convert import convert
from ..elementwise.scalar import rule_params, scalar_rule
from .extremes import register_lanes
from .fusion_plan import ZERO, Affine, FusionPlan, Index, Node, plan_fusion
from .fusion_reduce import REST, FusedReduction
from .pairwise import BLOCK, lanes_for

#: Registers of lanes a fused max/min keeps (independent chains of its combine).
EXTREME_REGISTERS = 4

_NUW = ("nuw", "nsw")
#: Inside the innermost loop: its axis, the index there, and whether this copy of the
#: loop is the unit-stride one.
Inner = tuple[int, ir.Value, bool]
#: Where the loops start, per iteration axis (a tile of a larger space; default 0).
Origin = Mapping[int, ir.Value]


@dataclass(frozen=True)
class _Access:
    """Addressing of one strided operand: ``base`` (its element at the index's starts),
    byte steps per iteration axis, and the element type."""

    base: ir.Value
    steps: Mapping[int, ir.Value]
    dtype: np.dtype
    align: int


def _access(ctx: Lowering, view: View, index: Index, origin: Origin) -> _Access:
    """Precompute (outside every loop) how ``view[index]`` is addressed, for loops that
    start at ``origin`` (an index per axis; absent: 0)."""
    b = ctx.b
    offset: ir.Value | None = None
    steps: dict[int, ir.Value] = {}
    for comp, stride in zip(index, view.strides, strict=True):
        if comp.start != ZERO:
            term = b.mul(ctx.dims(comp.start), stride)
            offset = term if offset is None else b.add(offset, term)
        if comp.axis is not None:
            steps[comp.axis] = scaled(b, stride, step_value(ctx.dims, comp.step))
            if comp.axis in origin:
                term = b.mul(origin[comp.axis], steps[comp.axis])
                offset = term if offset is None else b.add(offset, term)
    base = view.data if offset is None else b.gep(view.data, [offset], source_etype=I8,
                                                  inbounds=True)
    return _Access(base, steps, view.dtype, view.align)


class Nest:
    """Emits one fusion equation's loop nest; ``run`` returns the outputs' values."""

    def __init__(self, ctx: Lowering, plan: FusionPlan, inputs: Mapping[Var, Value],
                 outs: Sequence[Var], shape: Sequence[ir.Value], origin: Origin | None = None
                 ) -> None:
        self.ctx, self.b, self.plan = ctx, ctx.b, plan
        self.inputs = inputs
        self.shape = shape
        self.idx: dict[int, ir.Value] = {}
        self.values: dict[Node, ir.Value] = {}  # nodes computed outside the innermost loop
        self.inner_depth = len(plan.order) - 1
        self.inner_nodes = plan.at_depth(self.inner_depth) if plan.order else []
        self.phase = 0
        #: The nodes the current phase computes in the reduced loops (None: all).
        self.current: set[int] | None = None
        origin = origin or {}
        self.loads = {n: _access(ctx, v, n.index, origin) for n in plan.nodes
                      if isinstance(n.source, Var) and isinstance(v := inputs[n.source], View)
                      and v.ndim}
        #: Each iota node's axis, value at the origin and step, computed here outside
        #: every loop as the loads' bases are.
        self.positions: dict[Node, tuple[int | None, ir.Value, int | ir.Value]] = {}
        for n in plan.nodes:
            if isinstance(n.source, Eqn) and n.source.prim is iota_p:
                comp = iota_component(n.source, n.index)
                start, step = ctx.dims(comp.start), step_value(ctx.dims, comp.step)
                if comp.axis is not None and comp.axis in origin:
                    start = self.b.add(start, scaled(self.b, origin[comp.axis], step))
                self.positions[n] = (comp.axis, start, step)
        kept = tuple(Affine(a) for a in plan.kept)
        full = tuple(Affine(a) for a in range(len(shape)))
        self.homes = [ctx.home(v) if v.type.ndim else None for v in outs]
        self.stores = [_access(ctx, home, kept if plan.at_kept_index(out) else full, origin)
                       if home is not None else None
                       for out, home in zip(plan.outputs, self.homes, strict=True)]
        reduced = [(o.reduction, o.dtype) for o in plan.outputs if o.reduction]
        reduced += [(_op(s), _dtype(s)) for s in plan.stats()]
        floats = [lanes_for(real_dtype(dtype)) for op, dtype in reduced
                  if dtype.kind == "f" or (op == "reduce_sum" and dtype.kind == "c")]
        reassoc = "reassoc" in self.b.fp_flags
        self.lanes = max(floats) if floats and not reassoc and not plan.rows else 1
        if reduced and not reassoc and not plan.rows and all(
                op in ("reduce_max", "reduce_min") and dtype.kind in "fiu"
                for op, dtype in reduced):
            # max/min alone: four of the target's registers of lanes, four chains of the
            # NaN test and selects side by side (one chain ran at a third of NumPy's
            # speed); no sum here, whose rounding would follow the lane count. (Four
            # 64-byte registers' worth on a 16-byte target was 16 chains, no faster, and
            # four times the code for LLVM to vectorize: a float32 min took 0.9 s.)
            self.lanes = min(BLOCK, max(EXTREME_REGISTERS * register_lanes(self.b, dtype)
                                        for _, dtype in reduced))
        self.reductions = [FusedReduction(ctx, o.reduction, o.dtype, self.lanes)
                           if o.reduction else None for o in plan.outputs]
        self.stats = {s: FusedReduction(ctx, _op(s), _dtype(s), self.lanes)
                      for s in plan.stats()}
        self.results: list[Value | None] = list(self.homes)

    # -- values ---------------------------------------------------------------------------
    def _output(self, k: int, inner: Inner | None) -> tuple[ir.Value, int]:
        """Output ``k``'s element address at the current index and its alignment (only
        outputs of rank > 0 have one)."""
        store, home = self.stores[k], self.homes[k]
        assert store is not None and home is not None
        return self._address(store, inner), home.align

    def _address(self, access: _Access, inner: Inner | None) -> ir.Value:
        """The element's address at the current index; ``inner`` is the innermost
        (axis, index, unit-stride copy) when emitting inside the innermost loop."""
        b = self.b
        offset: ir.Value | None = None
        for axis, step in access.steps.items():
            if inner is None or axis != inner[0]:
                term = b.mul(self.idx[axis], step)
                offset = term if offset is None else b.add(offset, term)
        ptr = access.base if offset is None else b.gep(access.base, [offset], source_etype=I8,
                                                       inbounds=True)
        if inner is None or inner[0] not in access.steps:
            return ptr
        axis, i, unit = inner
        if unit:
            return b.gep(ptr, [i], source_etype=mem_type(access.dtype), inbounds=True)
        return b.gep(ptr, [b.mul(i, access.steps[axis])], source_etype=I8, inbounds=True)

    def _compute(self, node: Node, env: Mapping[Node, ir.Value],
                 inner: Inner | None) -> ir.Value:
        b, source = self.b, node.source
        if isinstance(source, Lit):
            return constant(source.dtype, source.value)
        if isinstance(source, Var):
            value = self.inputs[source]
            if isinstance(value, Scalar):
                return value.value
            if node in self.loads:
                access = self.loads[node]
                return load_memory(b, self._address(access, inner), access.dtype, access.align)
            return load_memory(b, value.data, value.dtype, value.align)  # a rank-0 View
        assert isinstance(source, Eqn)
        if source.prim is iota_p:
            return convert(b, self._position(node, inner), INT64, source.outs[0].type.dtype)
        # The operand dtype is the last input's (select's condition comes first).
        dtype = source.inputs[-1].type.dtype
        return scalar_rule(source.prim)(b, dtype, *(env[a] for a in node.args),
                                        **rule_params(source))

    def _position(self, node: Node, inner: Inner | None) -> ir.Value:
        """The i64 value of an ``iota`` node: its index component at the current index
        (loop indices count from the origin, which its start includes)."""
        axis, start, step = self.positions[node]
        if axis is None:
            return start
        i = inner[1] if inner is not None and inner[0] == axis else self.idx[axis]
        return self.b.add(start, scaled(self.b, i, step))

    def _emit_depth(self, depth: int) -> None:
        for node in self.plan.at_depth(depth):
            if node.level == 0 if self.current is None else id(node) in self.current:
                self.values[node] = self._compute(node, self.values, None)

    def _phase_reductions(self) -> list[FusedReduction]:
        """The reductions the current phase accumulates."""
        plan = self.plan
        found = [r for o, r in zip(plan.outputs, self.reductions, strict=True)
                 if r is not None and plan.phase_of(o) == self.phase]
        return found + [r for s, r in self.stats.items() if s.args[0].level == self.phase]

    # -- the nest -------------------------------------------------------------------------
    def run(self) -> list[Value]:
        self._emit_depth(-1)
        self._level(0)
        assert all(r is not None for r in self.results)
        return list(self.results)  # type: ignore[arg-type]

    def _level(self, d: int) -> None:
        """Inside loops ``order[:d]``: open the next loop, or emit the body; after the
        reduced loops, store the kept outputs."""
        plan = self.plan
        if d == plan.start and plan.phases > 1:
            for phase in range(plan.phases):
                self._phase(phase, d)
        else:
            self._loops(d)
        if d == plan.start:
            for k, out in enumerate(plan.outputs):
                if out.kept:
                    self._store(k, self.values[out.node], None)

    def _phase(self, phase: int, d: int) -> None:
        """One pass of the reduced loops ``order[d:]`` at the current kept index."""
        plan = self.plan
        self.phase = phase
        nodes = plan.phase_nodes(phase)
        self.current = {id(n) for n in nodes}
        self.inner_nodes = [n for n in nodes if n.depth == self.inner_depth]
        for node in plan.nodes:  # row values that wait for the statistics of this phase
            if phase and node.level == phase and node.depth < d and not node.is_stat:
                self.values[node] = self._compute(node, self.values, None)
        if nodes or self._phase_reductions():  # else only kept values: no loop
            self._loops(d)
        for stat in plan.stats():
            if stat.args[0].level == phase:
                self.values[stat] = self.stats[stat].result()

    def _loops(self, d: int) -> None:
        order = self.plan.order
        if d == self.plan.start:
            self._start_reductions()
        if d == len(order):  # no loops at all (a rank-0 iteration space)
            self._body(None, 0)
        elif d == len(order) - 1:
            self._innermost(order[d])
        else:
            with for_range(self.b, self.shape[order[d]], f"fuse{d}") as i:
                self.idx[order[d]] = i
                self._emit_depth(d)
                self._level(d + 1)
        if d == self.plan.start:
            self._finish_reductions()

    def _innermost(self, axis: int) -> None:
        """The innermost loop, in a unit-stride copy and a strided copy when both can run."""
        b = self.b
        tests = [(a.steps[axis], a.dtype.itemsize) for a in self._inner_accesses(axis)]
        if all(isinstance(s, ir.Constant) and s.constant == size for s, size in tests):
            self._inner_loop(axis, True)
            return
        if any(isinstance(s, ir.Constant) and s.constant != size for s, size in tests):
            self._inner_loop(axis, False)
            return
        unit = ir.Constant(ir.IntType(1), 1)
        for step, size in tests:
            unit = b.and_(unit, b.icmp_signed("==", step, i64(size)))
        with b.if_else(unit) as (then, otherwise):
            with then:
                self._inner_loop(axis, True)
            with otherwise:  # scalar: its only vector form would be a never-taken version
                self._inner_loop(axis, False, vectorize=False)

    def _inner_accesses(self, axis: int) -> list[_Access]:
        loads = [self.loads[n] for n in self.inner_nodes if n in self.loads]
        last = self.phase == self.plan.phases - 1
        carries = set(self._carries().values())
        stores = [s for k, (s, o) in enumerate(zip(self.stores, self.plan.outputs, strict=True))
                  if s is not None and ((o.reduction is None and last) or self.plan.rows
                                        or k in carries)]
        return [a for a in loads + stores if axis in a.steps]

    def _inner_loop(self, axis: int, unit: bool, vectorize: bool = True) -> None:
        """``for i in range(n)``; with lanes, chunks of ``lanes`` items in blocks of
        ``BLOCK``, then the rest one by one (see :mod:`.fusion_reduce`). ``vectorize``
        leaves the simple loop to LLVM's vectorizer."""
        b, n = self.b, self.shape[axis]
        reductions = self._phase_reductions()
        # Chunks serve reductions; a phase that only stores is left to the vectorizer.
        lanes = self.lanes if reductions else 1
        if lanes == 1:
            with for_range(b, n, "fuse.i", vectorize) as i:
                self._body((axis, i, unit), 0)
            return
        for r in reductions:
            r.row_start()
        shift, per_block = lanes.bit_length() - 1, BLOCK // lanes
        chunks = b.lshr(n, i64(shift))
        blocks = b.udiv(b.add(chunks, i64(per_block - 1)), i64(per_block))
        with for_range(b, blocks, "fuse.block") as block:
            first = b.mul(block, i64(per_block), flags=_NUW)
            left = b.sub(chunks, first)
            count = b.select(b.icmp_signed("<", left, i64(per_block)), left, i64(per_block))
            with for_range(b, count, "fuse.chunk") as j:
                start = b.shl(b.add(first, j, flags=_NUW), i64(shift), flags=_NUW)
                self._chunk([((axis, b.add(start, i64(lane), flags=_NUW), unit), lane)
                             for lane in range(lanes)])
            for r in reductions:
                r.block_end()
        done = b.shl(chunks, i64(shift), flags=_NUW)
        with for_range(b, b.sub(n, done), "fuse.rest") as t:
            self._body((axis, b.add(done, t, flags=_NUW), unit), REST)
        for r in reductions:
            r.row_end()

    def _carries(self) -> dict[Node, int]:
        """The carried values this phase stores into output rows (the one before last)."""
        return self.plan.carried if self.phase == self.plan.phases - 2 else {}

    def _body(self, inner: Inner | None, lane: int) -> None:
        self._chunk([(inner, lane)])

    def _chunk(self, items: Sequence[tuple[Inner | None, int]]) -> None:
        """Iterations ``(inner index, lane)`` side by side: every value first, then every
        store, then every reduction update. All loads of a chunk come before its stores,
        so SLP can bundle them without proving that outputs and inputs do not overlap
        (an output element only ever aliases an input element at its own index)."""
        envs: list[ChainMap[Node, ir.Value]] = []
        last = self.phase == self.plan.phases - 1
        reload = self.plan.carried if last else {}
        for inner, _ in items:
            env: ChainMap[Node, ir.Value] = ChainMap({}, self.values)
            if inner is not None:
                for node in self.inner_nodes:
                    if node in reload:  # stored by the phase before, from cache
                        ptr, align = self._output(reload[node], inner)
                        env[node] = load_memory(self.b, ptr, node.dtype, align)
                    else:
                        env[node] = self._compute(node, env, inner)
            envs.append(env)
        for (inner, _), env in zip(items, envs, strict=True):
            for node, k in self._carries().items():
                ptr, align = self._output(k, inner)
                store_memory(self.b, env[node], ptr, node.dtype, align)
            for k, out in enumerate(self.plan.outputs):
                if last and not self.plan.at_kept_index(out):
                    self._store(k, env[out.node], inner)
        for (inner, lane), env in zip(items, envs, strict=True):
            for stat, running in self.stats.items():
                if stat.args[0].level == self.phase:
                    running.update(lane, env[stat.args[0]])
            for k, (out, reduction) in enumerate(zip(self.plan.outputs, self.reductions,
                                                     strict=True)):
                if reduction is None or self.plan.phase_of(out) != self.phase:
                    continue
                if not self.plan.rows:
                    reduction.update(lane, env[out.node])
                    continue
                ptr, align = self._output(k, inner)  # this row's running result
                acc = load_memory(self.b, ptr, out.dtype, align)
                store_memory(self.b, reduction.combine_in_memory(acc, env[out.node]), ptr,
                             out.dtype, align)

    def _start_reductions(self) -> None:
        """Reset the running results: registers, or the output row (``plan.rows``)."""
        if not self.plan.rows:
            for running in self._phase_reductions():
                running.start()
            return
        last = self.plan.kept[-1]
        with for_range(self.b, self.shape[last], "fuse.row") as j:
            self.idx[last] = j
            for k, (out, reduction) in enumerate(zip(self.plan.outputs, self.reductions,
                                                     strict=True)):
                if reduction is not None:
                    ptr, align = self._output(k, None)
                    store_memory(self.b, reduction.identity, ptr, out.dtype, align)
        del self.idx[last]

    def _finish_reductions(self) -> None:
        """Each reduction's result, stored at the kept index (or kept as a Scalar)."""
        for k, (out, reduction) in enumerate(zip(self.plan.outputs, self.reductions, strict=True)):
            if reduction is None or self.plan.rows or self.plan.phase_of(out) != self.phase:
                continue  # rows are stored as they go; other phases elsewhere
            self._store(k, reduction.result(), None)

    def _store(self, k: int, value: ir.Value, inner: Inner | None) -> None:
        """Output ``k``'s value at the current index, or its Scalar result at rank 0."""
        if self.stores[k] is None:
            self.results[k] = Scalar(value, self.plan.outputs[k].dtype)
        else:
            ptr, align = self._output(k, inner)
            store_memory(self.b, value, ptr, self.plan.outputs[k].dtype, align)


def _op(stat: Node) -> str:
    assert isinstance(stat.source, Eqn)
    return stat.source.prim.name


def _dtype(stat: Node) -> np.dtype:
    assert isinstance(stat.source, Eqn)
    return stat.source.outs[0].type.dtype


def lower_fusion(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    """``fusion[body, shape, axes](*inputs)`` as one loop nest (see the module doc)."""
    body, shape, axes = eqn.params["body"], eqn.params["shape"], eqn.params["axes"]
    plan = plan_fusion(body, tuple(shape), tuple(axes))
    dims = tuple(ctx.dims(d) for d in shape)
    return Nest(ctx, plan, dict(zip(body.inputs, args, strict=True)), eqn.outs, dims).run()

