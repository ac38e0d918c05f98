"""Sorting 32- and 64-bit keys with AVX-512 or AVX2 registers: a vectorized quicksort.

Why: NumPy sorts with x86-simd-sort on AVX-512 and AVX2 hosts, and the radix sort's
passes over 64-bit keys (:mod:`.radix`) reached only 0.75x of it on 10^6 f64 (0.50x on
f32) on a Zen 5, and 0.5-0.8x on a Zen 3 whose L3 other tenants share (each pass streams
the whole row through memory). This quicksort is built the same way: a partition step
is a vector comparison with the pivot and one permutation per register of keys
(:mod:`.partition`), and short ranges (:attr:`.networks.KeyVectors.network_keys`) are
sorted by a network in registers (:mod:`.networks`).

The keys are :mod:`.sortkeys`' keys (signed ones for 64-bit keys in AVX2, see
:func:`keys_for`), so one sort serves every 4- and 8-byte dtype; which order equal
values come out in cannot be seen in keys, and :mod:`.floatruns` restores NumPy's
stable order of zeros and NaNs afterwards.

``void aotc.qsort.<dtype>.v<bytes>(x, n, depth)`` sorts the ``n`` keys at ``x`` in
place and leaves them there as values (:meth:`.Keys.unkey`): every range is written as
values once, by the network that sorts it, and never read again. A row's first
partition reads the input values into the output (:func:`sort_row`), so a long row has
no pass of its own to make keys; every later partition is in place.

Degenerate rows: the pivot is the median of a sample of the range. When no key is below
it, it is the least key, and a second partition below ``pivot + 1`` separates its copies,
which need no more sorting: rows of few distinct values finish in a partition per value.
Past ``depth`` levels (``2 log2 n``), a heapsort finishes the range, so no input takes
more than ``O(n log n)``.
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir

from ..core.builder import KernelBuilder, define_once
from ..core.dtypes import I1, I64, PTR, i64
from ..core.loops import for_range
from ..core.simd import I32
from ..targets import InstructionSet, for_module
from . import partition
from .networks import KeyVectors, network_function, sort_registers
from .rows import VOID, Local
from .sortkeys import Keys

#: Ranges longer than this many registers of keys take their pivot from a sample of
#: :data:`SAMPLE_KEYS` keys, shorter ones from one register's worth.
WIDE_SAMPLE = 64
SAMPLE_KEYS = 64


def keys_for(isa: InstructionSet, keys: Keys, vector_bytes: int) -> Keys:
    """The keys the quicksort sorts in registers of ``vector_bytes``: signed ones where
    the target compares such lanes only as signed (AVX2's 64-bit lanes; then min, max
    and ``<`` are one instruction fewer each), else ``keys``."""
    unsigned = isa.unsigned_compare(keys.width, vector_bytes)
    return keys if unsigned else keys.as_signed()


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
            ordered = sort_registers(vec, regs)
            b.ret(b.extract_element(ordered[middle // vec.lanes],
                                    ir.Constant(I32, middle % vec.lanes)))

        with b.if_then(b.icmp_signed(">", n, i64(WIDE_SAMPLE * vec.lanes))):
            sample(SAMPLE_KEYS // vec.lanes)
        sample(1)

    name = f"aotc.qsort.pivot.{keys.dtype.name}{'.values' if from_values else ''}"
    return define_once(module, f"{name}.v{vector_bytes}", keys.ty, [("x", PTR), ("n", I64)],
                       body, vector_bytes)


def quicksort_function(module: ir.Module, keys: Keys, vector_bytes: int) -> ir.Function:
    """``void(x, n, depth)`` in registers of ``vector_bytes`` (``keys``: of
    :func:`keys_for`): see the module docstring."""
    assert keys == keys_for(for_module(module), keys, vector_bytes)
    name = f"aotc.qsort.{keys.dtype.name}.v{vector_bytes}"

    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        vec = KeyVectors(b, keys)
        x, n, depth = p["x"], p["n"], p["depth"]
        assert vec.network_keys + 1 >= partition.in_place_minimum(keys, vector_bytes)
        with b.if_then(b.icmp_signed("<=", n, i64(vec.network_keys))):
            b.call(network_function(b.module, keys, vector_bytes), [x, x, n])
            b.ret_void()
        with b.if_then(b.icmp_signed("<=", depth, i64(0)), likely=False):
            _heapsort(b, keys, x, n)
            _fill(b, keys.ty, x, n, lambda i: keys.unkey(b, b.load(vec.at(x, i), typ=keys.ty)))
            b.ret_void()
        pivot = b.call(_pivot_function(b.module, keys, vector_bytes), [x, n])
        sort, deeper = b.function, b.sub(depth, i64(1))
        in_place = partition.in_place_function(b.module, keys, vector_bytes)
        below = b.call(in_place, [x, n, pivot])
        with b.if_else(b.icmp_signed(">", below, i64(0))) as (split, least):
            with split:
                b.call(sort, [x, below, deeper])
                b.call(sort, [vec.at(x, below), b.sub(n, below), deeper])
            with least:  # the pivot is the least key: set its copies apart
                value = keys.unkey(b, pivot)
                with b.if_else(b.icmp_unsigned("==", pivot, vec.top)) as (only, more):
                    with only:  # every key is the greatest one
                        _fill(b, keys.ty, x, n, lambda i: value)
                    with more:
                        copies = b.call(in_place, [x, n, b.add(pivot, ir.Constant(keys.ty, 1))])
                        _fill(b, keys.ty, x, copies, lambda i: value)
                        b.call(sort, [vec.at(x, copies), b.sub(n, copies), deeper])
        b.ret_void()

    return define_once(module, name, VOID, [("x", PTR), ("n", I64), ("depth", I64)], body,
                       vector_bytes)


def _levels(b: KernelBuilder, n: ir.Value) -> ir.Value:
    """The depth past which a heapsort finishes a range: ``2 log2 n``."""
    ctlz = b.module.declare_intrinsic("llvm.ctlz", [I64], ir.FunctionType(I64, [I64, I1]))
    return b.mul(b.sub(i64(64), b.call(ctlz, [n, ir.Constant(I1, 0)])), i64(2))


def sort_keys(b: KernelBuilder, keys: Keys, row: ir.Value, n: ir.Value,
              vector_bytes: int) -> None:
    """Sort the ``n`` keys at ``row`` in place, leaving their values there."""
    b.call(quicksort_function(b.module, keys, vector_bytes), [row, n, _levels(b, n)])


def _row_function(module: ir.Module, keys: Keys, vector_bytes: int) -> ir.Function:
    """``void(src, dst, n)``: see :func:`sort_row`."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        src, dst, n = p["src"], p["dst"], p["n"]
        vec = KeyVectors(b, keys)
        sort = quicksort_function(b.module, keys, vector_bytes)
        depth = _levels(b, n)
        with b.if_then(b.icmp_signed("<=", n, i64(vec.network_keys))):
            _fill(b, keys.ty, dst, n,
                  lambda i: keys.key(b, b.load(vec.at(src, i), typ=keys.ty)))
            b.call(sort, [dst, n, depth])
            b.ret_void()
        pivot = b.call(_pivot_function(b.module, keys, vector_bytes, from_values=True),
                       [src, n])
        below = b.call(partition.out_of_place_function(b.module, keys, vector_bytes),
                       [src, dst, n, pivot])
        deeper = b.sub(depth, i64(1))
        b.call(sort, [dst, below, deeper])  # (no key below the pivot: sorts nothing)
        b.call(sort, [vec.at(dst, below), b.sub(n, below), deeper])
        b.ret_void()

    return define_once(module, f"aotc.qsort.row.{keys.dtype.name}.v{vector_bytes}", VOID,
                       [("src", PTR), ("dst", PTR), ("n", I64)], body, vector_bytes)


def sort_row(b: KernelBuilder, keys: Keys, src: ir.Value, dst: ir.Value, n: ir.Value,
             vector_bytes: int) -> None:
    """``dst[0:n]`` is the ``n`` values at ``src`` sorted (both contiguous, distinct).
    The first partition reads ``src`` into ``dst``, so a long row costs no pass of its
    own to become keys."""
    b.call(_row_function(b.module, keys, vector_bytes), [src, dst, n])
