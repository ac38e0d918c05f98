"""Sorting 32- and 64-bit keys with AVX-512 or AVX2 registers: a vectorized quicksort.

Why: NumPy sorts with x86-simd-sort on AVX-512 and AVX2 hosts, and the radix sort's
passes over 64-bit keys (:mod:`.radix`) reached only 0.75x of it on 10^6 f64 (0.50x on
f32) on a Zen 5, and 0.5-0.8x on a Zen 3 whose L3 other tenants share (each pass streams
the whole row through memory). This quicksort is built the same way: a partition step
is a vector comparison with the pivot and one permutation per register of keys (eight,
or four 64-bit keys in AVX2), and short ranges (:attr:`.bitonic.KeyVectors.network_keys`)
are sorted by a bitonic network in registers (:mod:`.bitonic`). On random keys it reads
and writes the row once per level, and ranges below L2's size stay there.

The keys are :mod:`.sortkeys`' keys (signed ones for 64-bit keys in AVX2, see
:func:`keys_for`), so one sort serves every 4- and 8-byte dtype; which order equal
values come out in cannot be seen in keys, and :mod:`.floatruns` restores NumPy's
stable order of zeros and NaNs afterwards.

``void aotc.qsort.<dtype>.v<bytes>(x, y, n, depth, to_y)`` sorts the ``n`` keys at
``x`` with ``y`` (``n`` keys) as scratch; they end in ``y`` if ``to_y``, else in ``x``, as values
(:meth:`.Keys.unkey`): every range is written there once, when it is sorted, and never
read again, so the last pass over the row is the networks' own stores. A partition goes
out of place, ``x`` to ``y``: keys below the pivot from the front, the others from the
back. The halves are then sorted from ``y`` with ``x`` as scratch (and ``to_y``
flipped), recursively. No compress goes to memory (AMD's Zen 4 microcodes that).

Degenerate rows: the pivot is the median of a sample of the range. When no key is below
it, it is the least key, and a second partition below ``pivot + 1`` separates its copies,
which need no more sorting: rows of few distinct values finish in a partition per value.
Past ``depth`` levels (``2 log2 n``), a heapsort finishes the range, so no input takes
more than ``O(n log n)``.
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir

from .bitonic import (
    VECTOR_BYTES,
    KeyVectors,
    bitonic_sort,
    define_once,
    network_function,
    prefix_mask,
)
from .builder import KernelBuilder, existing
from .dtypes import I1, I8, I64, PTR, i64
from .gemm_kernel import I32, masked_load, masked_store, splat
from .loops import for_range
from .rows import VOID, Local
from .sortkeys import Keys

#: Ranges longer than this many registers of keys take their pivot from a sample of
#: :data:`SAMPLE_KEYS` keys, shorter ones from one register's worth.
WIDE_SAMPLE = 64
SAMPLE_KEYS = 64


def available(vector_bytes: int, width: int) -> bool:
    """Whether keys of ``width`` bits sort here: the target needs AVX2 or AVX-512
    registers (a variable permutation of lanes)."""
    return vector_bytes in (32, VECTOR_BYTES) and width in (32, 64)


#: Keys a partition step takes at once: eight, whatever their width, so that the
#: permutation putting the keys below the pivot first is one of 256 (:func:`_table`);
#: four 64-bit keys with AVX2 (one register, permuted as eight 32-bit halves).
STEP = 8
#: Keys a partition's loop takes per iteration, in steps whose loads and comparisons
#: are independent (only the stores wait for the previous step's counts): four steps
#: with AVX-512, eight with AVX2 (measured best on a Zen 5 and a Zen 3).
ITERATION_KEYS = 32


def _step(vector_bytes: int, key: ir.IntType) -> int:
    """Keys a partition step takes: :data:`STEP`, or a register's worth if fewer."""
    return STEP if vector_bytes * 8 >= STEP * key.width else vector_bytes * 8 // key.width


def keys_for(keys: Keys, vector_bytes: int) -> Keys:
    """The keys the quicksort sorts in registers of ``vector_bytes``: signed ones for
    64-bit keys in AVX2, which has signed 64-bit comparisons only (and so min, max and
    ``<`` are one instruction fewer each), else ``keys``."""
    return keys.as_signed() if keys.width == 64 and vector_bytes < VECTOR_BYTES else keys


def _halves(vector_bytes: int, key: ir.IntType) -> bool:
    """Whether a step's keys are permuted as 32-bit halves (64-bit keys in AVX2, which
    permutes only 32-bit lanes across a register)."""
    return key.width == 64 and vector_bytes < VECTOR_BYTES


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


def _partition_function(module: ir.Module, keys: Keys, vector_bytes: int,
                        from_values: bool = False) -> ir.Function:
    """``i64(x, y, n, t)``: the keys of ``x[0:n]`` below ``t`` to ``y[0:k]``, the others
    to ``y[k:n]``; returns ``k``. ``from_values``: ``x`` holds values, made keys as they
    are read (the first partition of a row reads the input itself).

    Each step permutes :func:`_step` keys so that those below ``t`` come first (a table
    lookup and one ``vpermq``/``vpermd``: cheaper than two compresses) and stores the
    register twice, at the front and at the back; the lanes that do not belong there
    land on places later steps overwrite. Only the last steps, where front and back
    come within two registers of each other, store through masks."""
    key = keys.ty
    per_step, halves = _step(vector_bytes, key), _halves(vector_bytes, key)

    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        ty = ir.VectorType(key, per_step)
        x, y, n = p["x"], p["y"], p["n"]
        threshold = splat(b, p["t"], per_step)
        table = _table(b.module, per_step, halves)
        entry = 2 * per_step if halves else per_step
        lane_ty = ir.VectorType(I32, entry) if halves else ty
        permute_name = ("llvm.x86.avx512.permvar.di.512" if lane_ty.element.width == 64
                        else "llvm.x86.avx2.permd")
        permute_fn = existing(b.module, permute_name) or ir.Function(
            b.module, ir.FunctionType(lane_ty, [lane_ty, lane_ty]), permute_name)
        popcount = b.module.declare_intrinsic("llvm.ctpop", [I8], ir.FunctionType(I8, [I8]))

        def permute(register: ir.Value, lanes: ir.Value) -> ir.Value:
            moved = b.call(permute_fn, [b.bitcast(register, lane_ty), b.zext(lanes, lane_ty)])
            return b.bitcast(moved, ty)
        left, right = Local(b, I64, i64(0), "left"), Local(b, I64, n, "right")

        def at(base: ir.Value, index: ir.Value) -> ir.Value:
            return b.gep(base, [index], source_etype=key)

        def prefix(count: ir.Value) -> ir.Value:
            return prefix_mask(b, count, per_step)

        def step(register: ir.Value, valid: ir.Value | None) -> None:
            below = keys.less(b, register, threshold)
            if valid is not None:
                below = b.and_(below, prefix(valid))
            bits = b.zext(b.bitcast(below, ir.IntType(per_step)), I8)
            lanes = b.load(b.gep(table, [i64(0), b.mul(b.zext(bits, I64), i64(entry))],
                                 source_etype=table.value_type), typ=ir.VectorType(I8, entry),
                           align=1)
            moved = permute(register, lanes)
            low = b.zext(b.call(popcount, [bits]), I64)
            high = b.sub(valid if valid is not None else i64(per_step), low)
            front, back = left.get(), b.sub(right.get(), high)
            if valid is None:
                b.store(moved, at(y, front), align=1)
                b.store(moved, at(y, b.sub(right.get(), i64(per_step))), align=1)
            else:
                masked_store(b, moved, at(y, front), prefix(low))
                masked_store(b, moved, at(y, b.sub(back, low)),
                             b.and_(prefix(b.add(low, high)), b.not_(prefix(low))))
            left.set(b.add(front, low))
            right.set(back)

        def convert(raw: ir.Value) -> ir.Value:
            return keys.key(b, raw) if from_values else raw

        def load(i: ir.Value) -> ir.Value:
            return convert(b.load(at(x, i), typ=ty, align=key.width // 8))

        roomy = b.select(b.icmp_signed(">=", n, i64(2 * per_step)),
                         b.add(b.udiv(b.sub(n, i64(2 * per_step)), i64(per_step)), i64(1)), i64(0))
        unroll = ITERATION_KEYS // per_step
        groups = b.udiv(roomy, i64(unroll))
        with for_range(b, groups, "part", vectorize=False) as g:
            first = b.mul(g, i64(ITERATION_KEYS))
            loaded = [load(b.add(first, i64(u * per_step))) for u in range(unroll)]
            for register in loaded:
                step(register, None)
        with for_range(b, b.urem(roomy, i64(unroll)), "part.rest", vectorize=False) as i:
            step(load(b.mul(b.add(b.mul(groups, i64(unroll)), i), i64(per_step))), None)
        done = Local(b, I64, b.mul(roomy, i64(per_step)), "done")
        with b.if_then(b.icmp_signed(">=", b.sub(n, done.get()), i64(per_step))):
            step(load(done.get()), i64(per_step))
            done.set(b.add(done.get(), i64(per_step)))
        rest = b.sub(n, done.get())
        with b.if_then(b.icmp_signed(">", rest, i64(0))):
            step(convert(masked_load(b, at(x, done.get()), ty, prefix(rest))), rest)
        b.ret(left.get())

    name = (f"aotc.qsort.partition.{keys.dtype.name}" if from_values
            else f"aotc.qsort.partition.{'i' if keys.signed else 'u'}{key.width}")
    return define_once(module, f"{name}.v{vector_bytes}", I64,
                       [("x", PTR), ("y", PTR), ("n", I64), ("t", key)], body, vector_bytes)


def _sift_function(module: ir.Module, keys: Keys) -> ir.Function:
    """``void(x, root, end)``: sift ``x[root]`` down the max-heap ``x[0:end]``."""
    key = keys.ty

    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        x, end = p["x"], p["end"]
        root = Local(b, I64, p["root"], "root")
        fn = b.function
        head, step, done = (fn.append_basic_block(f"sift.{s}") for s in ("head", "step", "done"))
        b.branch(head)
        b.position_at_end(head)
        child = b.add(b.mul(root.get(), i64(2)), i64(1))
        b.cbranch(b.icmp_signed("<", child, end), step, done)
        b.position_at_end(step)
        right = b.add(child, i64(1))
        child_key = b.load(b.gep(x, [child], source_etype=key), typ=key)
        right_key = b.load(b.gep(x, [b.select(b.icmp_signed("<", right, end), right, child)],
                                 source_etype=key), typ=key)
        bigger = keys.less(b, child_key, right_key)
        child = b.select(bigger, right, child)
        child_key = b.select(bigger, right_key, child_key)
        top_at = b.gep(x, [root.get()], source_etype=key)
        top = b.load(top_at, typ=key)
        swap = fn.append_basic_block("sift.swap")
        b.cbranch(keys.less(b, top, child_key), swap, done)
        b.position_at_end(swap)
        b.store(child_key, top_at)
        b.store(top, b.gep(x, [child], source_etype=key))
        root.set(child)
        b.branch(head)
        b.position_at_end(done)
        b.ret_void()

    name = f"aotc.qsort.sift.{'i' if keys.signed else 'u'}{key.width}"
    return define_once(module, name, VOID, [("x", PTR), ("root", I64), ("end", I64)], body)


def _heapsort(b: KernelBuilder, keys: Keys, x: ir.Value, n: ir.Value) -> None:
    """Sort ``x[0:n]`` in place in ``O(n log n)`` whatever the keys."""
    key, sift = keys.ty, _sift_function(b.module, keys)
    half = b.udiv(n, i64(2))
    with for_range(b, half, "heapify", vectorize=False) as i:
        b.call(sift, [x, b.sub(b.sub(half, i64(1)), i), n])
    with for_range(b, b.sub(n, i64(1)), "heappop", vectorize=False) as i:
        last = b.gep(x, [b.sub(b.sub(n, i64(1)), i)], source_etype=key)
        top = b.load(x, typ=key)
        b.store(b.load(last, typ=key), x)
        b.store(top, last)
        b.call(sift, [x, i64(0), b.sub(b.sub(n, i64(1)), i)])


def _fill(b: KernelBuilder, key: ir.IntType, dest: ir.Value, n: ir.Value,
          value: Callable[[ir.Value], ir.Value]) -> None:
    with for_range(b, n, "fill") as i:
        b.store(value(i), b.gep(dest, [i], source_etype=key))


def _pivot_function(module: ir.Module, keys: Keys, vector_bytes: int,
                    from_values: bool = False) -> ir.Function:
    """``key(x, n)``: the median of a sample of ``x[0:n]`` spread evenly over it: one
    register's worth of keys, or for long ranges :data:`SAMPLE_KEYS`. ``from_values``:
    ``x`` holds values, made keys as they are read. (A function of its own: its network
    is the biggest code a sort has after the ranges' networks.)"""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        vec = KeyVectors(b, keys)
        x, n = p["x"], p["n"]

        def sample(registers: int) -> None:
            count = registers * vec.lanes
            spacing = b.udiv(n, i64(count))
            regs = []
            for r in range(registers):
                reg = ir.Constant(vec.ty, ir.Undefined)
                for lane in range(vec.lanes):
                    at = b.add(b.mul(i64(r * vec.lanes + lane), spacing),
                               b.udiv(spacing, i64(2)))
                    key = b.load(vec.at(x, at), typ=vec.key)
                    reg = b.insert_element(reg, keys.key(b, key) if from_values else key,
                                           ir.Constant(I32, lane))
                regs.append(reg)
            middle = count // 2
            ordered = bitonic_sort(vec, regs)
            b.ret(b.extract_element(ordered[middle // vec.lanes],
                                    ir.Constant(I32, middle % vec.lanes)))

        with b.if_then(b.icmp_signed(">", n, i64(WIDE_SAMPLE * vec.lanes))):
            sample(SAMPLE_KEYS // vec.lanes)
        sample(1)

    name = f"aotc.qsort.pivot.{keys.dtype.name}{'.values' if from_values else ''}"
    return define_once(module, f"{name}.v{vector_bytes}", keys.ty, [("x", PTR), ("n", I64)],
                       body, vector_bytes)


def quicksort_function(module: ir.Module, keys: Keys, vector_bytes: int) -> ir.Function:
    """``void(x, y, n, depth, to_y)`` in registers of ``vector_bytes`` (``keys``: of
    :func:`keys_for`): see the module docstring."""
    assert keys == keys_for(keys, vector_bytes)
    name = f"aotc.qsort.{keys.dtype.name}.v{vector_bytes}"
    key = keys.ty

    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        vec = KeyVectors(b, keys)
        x, y, n, depth, to_y = p["x"], p["y"], p["n"], p["depth"], p["to_y"]
        dest = b.select(to_y, y, x)
        with b.if_then(b.icmp_signed("<=", n, i64(vec.network_keys))):
            b.call(network_function(b.module, keys, vector_bytes), [x, dest, n])
            b.ret_void()
        with b.if_then(b.icmp_signed("<=", depth, i64(0)), likely=False):
            _heapsort(b, keys, x, n)
            _fill(b, key, dest, n, lambda i: keys.unkey(b, b.load(vec.at(x, i), typ=key)))
            b.ret_void()
        pivot = b.call(_pivot_function(b.module, keys, vector_bytes), [x, n])
        partition = _partition_function(b.module, keys, vector_bytes)
        below = b.call(partition, [x, y, n, pivot])
        deeper = b.sub(depth, i64(1))
        flipped = b.not_(to_y)
        sort = b.function
        with b.if_else(b.icmp_signed(">", below, i64(0))) as (split, least):
            with split:
                b.call(sort, [y, x, below, deeper, flipped])
                b.call(sort, [vec.at(y, below), vec.at(x, below), b.sub(n, below),
                              deeper, flipped])
            with least:  # the pivot is the least key: set its copies apart
                value = keys.unkey(b, pivot)
                with b.if_else(b.icmp_unsigned("==", pivot, vec.top)) as (only, more):
                    with only:  # every key is the greatest one
                        _fill(b, key, dest, n, lambda i: value)
                    with more:
                        copies = b.call(partition, [y, x, n, b.add(pivot, ir.Constant(key, 1))])
                        _fill(b, key, dest, copies, lambda i: value)
                        b.call(sort, [vec.at(x, copies), vec.at(y, copies),
                                      b.sub(n, copies), deeper, to_y])
        b.ret_void()

    return define_once(module, name, VOID, [("x", PTR), ("y", PTR), ("n", I64),
                                            ("depth", I64), ("to_y", I1)], body, vector_bytes)


def _levels(b: KernelBuilder, n: ir.Value) -> ir.Value:
    """The depth past which a heapsort finishes a range: ``2 log2 n``."""
    ctlz = b.module.declare_intrinsic("llvm.ctlz", [I64], ir.FunctionType(I64, [I64, I1]))
    return b.mul(b.sub(i64(64), b.call(ctlz, [n, ir.Constant(I1, 0)])), i64(2))


def sort_keys(b: KernelBuilder, keys: Keys, row: ir.Value, scratch: ir.Value,
              n: ir.Value, vector_bytes: int) -> None:
    """Sort the ``n`` keys at ``row`` in place, leaving their values there (``scratch``
    holds ``n`` more keys)."""
    b.call(quicksort_function(b.module, keys, vector_bytes),
           [row, scratch, n, _levels(b, n), ir.Constant(I1, 0)])


def _row_function(module: ir.Module, keys: Keys, vector_bytes: int) -> ir.Function:
    """``void(src, dst, scratch, n)``: see :func:`sort_row`."""
    key = keys.ty

    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        src, dst, scratch, n = p["src"], p["dst"], p["scratch"], p["n"]
        vec = KeyVectors(b, keys)
        sort = quicksort_function(b.module, keys, vector_bytes)
        depth = _levels(b, n)

        def in_place() -> None:
            _fill(b, key, dst, n, lambda i: keys.key(b, b.load(vec.at(src, i), typ=key)))
            b.call(sort, [dst, scratch, n, depth, ir.Constant(I1, 0)])

        with b.if_then(b.icmp_signed("<=", n, i64(vec.network_keys))):
            in_place()
            b.ret_void()
        pivot = b.call(_pivot_function(b.module, keys, vector_bytes, from_values=True),
                       [src, n])
        below = b.call(_partition_function(b.module, keys, vector_bytes, from_values=True),
                       [src, scratch, n, pivot])
        deeper, into_dst = b.sub(depth, i64(1)), ir.Constant(I1, 1)
        with b.if_else(b.icmp_signed(">", below, i64(0))) as (split, least):
            with split:
                b.call(sort, [scratch, dst, below, deeper, into_dst])
                b.call(sort, [vec.at(scratch, below), vec.at(dst, below), b.sub(n, below),
                              deeper, into_dst])
            with least:  # rare: let the general sort set the least key's copies apart
                in_place()
        b.ret_void()

    return define_once(module, f"aotc.qsort.row.{keys.dtype.name}.v{vector_bytes}", VOID,
                       [("src", PTR), ("dst", PTR), ("scratch", PTR), ("n", I64)], body,
                       vector_bytes)


def sort_row(b: KernelBuilder, keys: Keys, src: ir.Value, dst: ir.Value, scratch: ir.Value,
             n: ir.Value, vector_bytes: int) -> None:
    """``dst[0:n]`` is the ``n`` values at ``src`` sorted (both contiguous, distinct;
    ``scratch`` holds ``n`` keys). The first partition reads ``src`` itself, so a long
    row costs no pass of its own to become keys."""
    b.call(_row_function(b.module, keys, vector_bytes), [src, dst, scratch, n])
