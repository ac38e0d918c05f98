"""The partition steps of :mod:`.quicksort`: keys below a pivot to the front, the others
to the back, a register of keys at a time.

A step permutes :func:`step_keys` keys so that those below the pivot come first (a table
lookup and one ``vpermq``/``vpermd``: cheaper than two compresses, and AMD's Zen 4
microcodes a compress to memory) and stores the register twice, at the front and at the
back; the lanes that do not belong there land on places later steps overwrite. Only
steps whose destinations may hold keys not yet read store through masks.

Two partitions use them:

- :func:`in_place_function`, within ``x``, for every range too long for a network. It
  reads a block of registers from whichever end has less room for what the steps store
  (as x86-simd-sort does), after setting one block from each end aside in registers, so
  that the steps' whole-register stores never reach keys not yet read; the blocks set
  aside are stored last, through masks. It measured faster than partitioning between
  two buffers at every size (1.09x against 0.85x of NumPy's sort on 10^6 f64 on an Intel
  Sapphire Rapids): one buffer is half the cache footprint, and the networks then read
  and write the same lines.
- :func:`out_of_place_function`, ``x`` to ``y``: the first partition of a row, which
  reads the input values themselves into the output (where the rest is sorted in place).
"""

from __future__ import annotations

from llvmlite import ir

from ..core.builder import KernelBuilder, define_once, existing
from ..core.dtypes import I8, I64, PTR, i64
from ..core.loops import for_range
from ..core.simd import I32, masked_load, masked_store, splat
from ..targets import LanePermute, for_module
from .networks import prefix_mask
from .rows import Local
from .sortkeys import Keys

#: Keys a partition step takes at once: eight, whatever their width, so that the
#: permutation putting the keys below the pivot first is one of 256 (:func:`_table`);
#: four 64-bit keys with AVX2 (one register, permuted as eight 32-bit halves).
STEP = 8
#: Keys a partition's loop takes per iteration, in steps whose loads and comparisons
#: are independent (only the stores wait for the previous step's counts): four steps
#: with AVX-512, eight with AVX2 (measured best on a Zen 5 and a Zen 3).
ITERATION_KEYS = 32
#: Steps the in-place partition reads per iteration from one end (and sets aside at each
#: end first).
IN_PLACE_STEPS = 8


def step_keys(vector_bytes: int, key: ir.IntType) -> int:
    """Keys a partition step takes: :data:`STEP`, or a register's worth if fewer."""
    return STEP if vector_bytes * 8 >= STEP * key.width else vector_bytes * 8 // key.width


def _permute(module: ir.Module, vector_bytes: int, key: ir.IntType) -> LanePermute:
    """How a step's keys are permuted: as lanes of their own width, or as pairs of
    32-bit halves (64-bit keys in AVX2, which permutes only 32-bit lanes)."""
    permute = for_module(module).lane_permute(key.width, vector_bytes)
    assert permute is not None, "the target does not sort in registers"
    return permute


def _table(module: ir.Module, step: int, halves: bool) -> ir.GlobalVariable:
    """For each mask of ``step`` lanes, the source lanes of the permutation that puts
    the lanes in the mask first and the others after, each in lane order (a byte each;
    ``halves``: two per lane, its 32-bit halves)."""
    name = f"aotc.qsort.partition.table{step}{'.halves' if halves else ''}"
    found = module.globals.get(name)
    if isinstance(found, ir.GlobalVariable):
        return found
    entries = []
    for mask in range(1 << step):
        lanes = [lane for lane in range(step) if mask >> lane & 1]
        order = lanes + [lane for lane in range(step) if not mask >> lane & 1]
        entries.extend([half for lane in order for half in (2 * lane, 2 * lane + 1)]
                       if halves else order)
    ty = ir.ArrayType(I8, len(entries))
    table = ir.GlobalVariable(module, ty, name)
    table.initializer = ir.Constant(ty, bytearray(entries))
    table.global_constant = True
    table.linkage = "internal"
    return table


class Stepper:
    """Partition steps against the pivot ``pivot`` into ``dest``: keys below it at the
    ``front`` cursor (which moves up), the others before the ``back`` cursor (which
    moves down)."""

    def __init__(self, b: KernelBuilder, keys: Keys, vector_bytes: int, pivot: ir.Value,
                 dest: ir.Value) -> None:
        self.b, self.keys, self.dest = b, keys, dest
        key = keys.ty
        self.lanes = step_keys(vector_bytes, key)
        permute = _permute(b.module, vector_bytes, key)
        halves = permute.bits < key.width
        self.ty = ir.VectorType(key, self.lanes)
        self.threshold = splat(b, pivot, self.lanes)
        self.table = _table(b.module, self.lanes, halves)
        self.entry = 2 * self.lanes if halves else self.lanes
        self.lane_ty = ir.VectorType(I32, self.entry) if halves else self.ty
        name = permute.intrinsic
        self.permute_fn = existing(b.module, name) or ir.Function(
            b.module, ir.FunctionType(self.lane_ty, [self.lane_ty, self.lane_ty]), name)
        self.popcount = b.module.declare_intrinsic("llvm.ctpop", [I8],
                                                   ir.FunctionType(I8, [I8]))

    def at(self, base: ir.Value, index: ir.Value) -> ir.Value:
        return self.b.gep(base, [index], source_etype=self.keys.ty)

    def prefix(self, count: ir.Value) -> ir.Value:
        return prefix_mask(self.b, count, self.lanes)

    def load(self, base: ir.Value, i: ir.Value, from_values: bool = False) -> ir.Value:
        """The register of keys at ``base[i]`` (made keys from values if ``from_values``)."""
        raw = self.b.load(self.at(base, i), typ=self.ty, align=self.keys.width // 8)
        return self.keys.key(self.b, raw) if from_values else raw

    def step(self, register: ir.Value, front: Local, back: Local,
             valid: ir.Value | None = None, exact: bool = False) -> None:
        """Partition ``register`` (its first ``valid`` lanes); ``exact`` stores only the
        keys' own places (through masks), else whole registers."""
        b = self.b
        below = self.keys.less(b, register, self.threshold)
        if valid is not None:
            below = b.and_(below, self.prefix(valid))
        bits = b.zext(b.bitcast(below, ir.IntType(self.lanes)), I8)
        lanes = b.load(b.gep(self.table, [i64(0), b.mul(b.zext(bits, I64), i64(self.entry))],
                             source_etype=self.table.value_type),
                       typ=ir.VectorType(I8, self.entry), align=1)
        moved = b.bitcast(b.call(self.permute_fn, [b.bitcast(register, self.lane_ty),
                                                   b.zext(lanes, self.lane_ty)]), self.ty)
        low = b.zext(b.call(self.popcount, [bits]), I64)
        high = b.sub(valid if valid is not None else i64(self.lanes), low)
        start, end = front.get(), b.sub(back.get(), high)
        if exact or valid is not None:
            masked_store(b, moved, self.at(self.dest, start), self.prefix(low))
            masked_store(b, moved, self.at(self.dest, b.sub(end, low)),
                         b.and_(self.prefix(b.add(low, high)), b.not_(self.prefix(low))))
        else:
            b.store(moved, self.at(self.dest, start), align=1)
            b.store(moved, self.at(self.dest, b.sub(back.get(), i64(self.lanes))), align=1)
        front.set(b.add(start, low))
        back.set(end)


def in_place_minimum(keys: Keys, vector_bytes: int) -> int:
    """The fewest keys :func:`in_place_function` takes: a block set aside at each end."""
    return 2 * IN_PLACE_STEPS * step_keys(vector_bytes, keys.ty)


def out_of_place_function(module: ir.Module, keys: Keys, vector_bytes: int) -> ir.Function:
    """``i64(x, y, n, t)``: the values of ``x[0:n]`` made keys, those below ``t`` to
    ``y[0:k]``, the others to ``y[k:n]``; returns ``k`` (the first partition of a row,
    which reads the input itself)."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        x, y, n = p["x"], p["y"], p["n"]
        s = Stepper(b, keys, vector_bytes, p["t"], y)
        lanes = s.lanes
        front, back = Local(b, I64, i64(0), "left"), Local(b, I64, n, "right")
        roomy = b.select(b.icmp_signed(">=", n, i64(2 * lanes)),
                         b.add(b.udiv(b.sub(n, i64(2 * lanes)), i64(lanes)), i64(1)), i64(0))
        unroll = ITERATION_KEYS // lanes
        groups = b.udiv(roomy, i64(unroll))
        with for_range(b, groups, "part", vectorize=False) as g:
            first = b.mul(g, i64(ITERATION_KEYS))
            loaded = [s.load(x, b.add(first, i64(u * lanes)), True)
                      for u in range(unroll)]
            for register in loaded:
                s.step(register, front, back)
        with for_range(b, b.urem(roomy, i64(unroll)), "part.rest", vectorize=False) as i:
            at = b.mul(b.add(b.mul(groups, i64(unroll)), i), i64(lanes))
            s.step(s.load(x, at, True), front, back)
        done = Local(b, I64, b.mul(roomy, i64(lanes)), "done")
        with b.if_then(b.icmp_signed(">=", b.sub(n, done.get()), i64(lanes))):
            s.step(s.load(x, done.get(), True), front, back, exact=True)
            done.set(b.add(done.get(), i64(lanes)))
        rest = b.sub(n, done.get())
        with b.if_then(b.icmp_signed(">", rest, i64(0))):
            raw = masked_load(b, s.at(x, done.get()), s.ty, s.prefix(rest))
            s.step(keys.key(b, raw), front, back, valid=rest)
        b.ret(front.get())

    name = f"aotc.qsort.partition.{keys.dtype.name}.v{vector_bytes}"
    return define_once(module, name, I64, [("x", PTR), ("y", PTR), ("n", I64), ("t", keys.ty)],
                       body, vector_bytes)


def in_place_function(module: ir.Module, keys: Keys, vector_bytes: int) -> ir.Function:
    """``i64(x, n, t)``: ``x[0:n]`` reordered in place, the keys below ``t`` first;
    returns their count. ``n`` is at least :func:`in_place_minimum`."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        x, n = p["x"], p["n"]
        s = Stepper(b, keys, vector_bytes, p["t"], x)
        lanes, per_block = s.lanes, IN_PLACE_STEPS
        block = per_block * lanes
        aside = ([s.load(x, i64(k * lanes)) for k in range(per_block)]
                 + [s.load(x, b.sub(n, i64((k + 1) * lanes))) for k in range(per_block)])
        # Unread keys: x[left:right]. Stored: x[0:front] below, x[back:n] not below.
        left, right = Local(b, I64, i64(block), "left"), Local(b, I64, b.sub(n, i64(block)),
                                                                "right")
        front, back = Local(b, I64, i64(0), "front"), Local(b, I64, n, "back")

        def from_right() -> ir.Value:
            """Whether the back has less room than the front (read from the right)."""
            return b.icmp_signed("<", b.sub(back.get(), right.get()),
                                 b.sub(left.get(), front.get()))

        def read(count: int) -> ir.Value:
            """Take ``count`` keys from the end with less room: where they start."""
            start = Local(b, I64, left.get(), "read")
            with b.if_else(from_right()) as (back_end, front_end):
                with back_end:
                    right.set(b.sub(right.get(), i64(count)))
                    start.set(right.get())
                with front_end:
                    left.set(b.add(left.get(), i64(count)))
            return start.get()

        blocks = b.udiv(b.sub(n, i64(2 * block)), i64(block))
        with for_range(b, blocks, "inplace", vectorize=False):
            start = read(block)
            loaded = [s.load(x, b.add(start, i64(k * lanes))) for k in range(per_block)]
            for register in loaded:
                s.step(register, front, back)
        with for_range(b, b.udiv(b.sub(right.get(), left.get()), i64(lanes)), "inplace.rest",
                       vectorize=False):
            s.step(s.load(x, read(lanes)), front, back)
        rest = b.sub(right.get(), left.get())
        with b.if_then(b.icmp_signed(">", rest, i64(0))):
            raw = masked_load(b, s.at(x, left.get()), s.ty, s.prefix(rest))
            s.step(raw, front, back, valid=rest)
        for register in aside:
            s.step(register, front, back, exact=True)
        b.ret(front.get())

    name = f"aotc.qsort.inplace.{'i' if keys.signed else 'u'}{keys.width}.v{vector_bytes}"
    return define_once(module, name, I64,
                       [("x", PTR), ("n", I64), ("t", keys.ty)], body, vector_bytes)
