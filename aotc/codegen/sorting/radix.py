"""Stable sorting of one row: an LSD radix sort, emitted once per module and dtype.

Why radix: keys (:mod:`.sortkeys`) turn the values' order into unsigned integer order,
so a stable counting sort per 8-bit digit, least significant first, sorts in O(n) per
digit with no comparisons and no data-dependent branches, and it is stable by
construction (``kind='stable'`` for free, and argsort by carrying indices). Which digits
get a pass (only those where keys differ; for long keys only the most significant ones,
an insertion sort finishing the order) is :mod:`.digits`' job. 8-bit digits measured
faster per key bit than 11-bit ones (256 counters and 256 write streams stay in L1; with
64-bit keys 11-bit digits took five times as long per pass). Long rows that are nearly
sorted after the shortcut's passes skip their ordered stretches a vector at a time
(:func:`.rows.insertion_sort`).

Each helper is an internal function ``void(src, src_stride, n, dst, dst_stride,
work...)``: a row of ``n`` values at byte stride ``src_stride`` in, the sorted row (or
its sorting permutation, int64) at byte stride ``dst_stride`` out. The work buffers come
from the kernel's scratch plan (:mod:`.workspace`), never from malloc: key buffers of
``n`` keys, int64 index buffers of ``n`` for argsort, and :func:`histogram_size` int64
counters. Passes ping-pong between two key (and index) buffers so that the last pass writes the
output row; the caller may pass the output row itself as the second buffer when it is
contiguous (it is only ever written, never read, before the last pass).

Rows of at most :data:`SMALL` elements are insertion-sorted instead (stable too), in
NumPy's order directly. Longer rows of floats are sorted in bit order, then their runs
of zeros and NaNs put in NumPy's order (:mod:`.floatruns`).
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir

from ..core.builder import KernelBuilder, existing
from ..core.dtypes import I64, PTR, i64
from ..core.library import library_function
from ..core.loops import for_range
from ..targets import for_module
from . import digits, quicksort
from .digits import Digit, Passes, Read
from .floatruns import fix_float_runs
from .rows import Local, Row, copy_row, helper_function, insertion_sort, packed
from .sortkeys import Keys, keys_of

#: Rows this short are insertion-sorted (fewer operations than 256-counter histograms).
SMALL = 16


def histogram_size(dtype: np.dtype, indices: bool = False) -> int:
    """int64 counters a row sort (``indices``: argsort) of ``dtype`` needs."""
    return digits.histogram_size(keys_of(dtype), indices)


def _choose(b: ir.IRBuilder, cond: ir.Value, a: Row, other: Row) -> Row:
    return Row(b.select(cond, a.data, other.data), b.select(cond, a.stride, other.stride),
               a.ty, min(a.align, other.align))


@library_function
def sort_values_function(module: ir.Module, dtype: np.dtype, vector_bytes: int
                         ) -> ir.Function:
    """``void(src, src_stride, n, dst, dst_stride, ka, kb, hist)``: ``dst`` is the
    sorted row; ``ka``, ``kb`` hold ``n`` keys (``kb`` may be ``dst`` when that is
    contiguous); ``hist`` holds :func:`histogram_size` int64. With AVX2 or AVX-512 registers
    (``vector_bytes``), 4- and 8-byte keys are sorted by :mod:`.quicksort` instead."""
    keys = keys_of(dtype)
    quick = for_module(module).sorts_in_registers(keys.width, vector_bytes)
    name = f"aotc.sort.values.{dtype.name}{'.quick' if quick else ''}"
    found = existing(module, name)
    if found is not None:
        return found
    params = ["src", "src_stride", "n", "dst", "dst_stride", "ka", "kb", "hist"]
    with helper_function(module, name, params) as (b, p):
        src = Row(p["src"], p["src_stride"], keys.ty, 1)
        dst = Row(p["dst"], p["dst_stride"], keys.ty, dtype.itemsize)
        n = p["n"]
        with b.if_else(b.icmp_signed("<=", n, i64(SMALL))) as (small, large):
            with small:
                copy_row(b, n, src, dst, lambda raw: raw)
                insertion_sort(b, n, dst, lambda raw: keys.canonical(b, raw), [])
            with large:
                if quick:
                    _quick_values(b, keys, n, src, dst, p, vector_bytes)
                else:
                    _large_values(b, keys, n, src, dst, p)
    fn = module.globals[name]
    assert isinstance(fn, ir.Function)
    return fn


def _large_values(b: KernelBuilder, keys: Keys, n: ir.Value, src: Row, dst: Row,
                  p: dict[str, ir.Argument]) -> None:
    ka, kb = packed(b, p["ka"], keys.ty), packed(b, p["kb"], keys.ty)
    passes = Passes(b, keys, n, src, p["hist"], indices=False)
    varying = passes.varying()
    cur = Local(b, PTR, ka.data, "cur")

    def step(digit: Digit, first: ir.Value, last: ir.Value, into_a: ir.Value,
             shortcut: ir.Value) -> None:
        target = _choose(b, into_a, ka, kb)
        current = packed(b, cur.get(), keys.ty)
        with b.if_else(first) as (from_input, from_keys):
            with from_input, b.if_else(last) as (only, not_only):
                with only:  # one pass: values straight from the input to the output
                    passes.scatter(digit, lambda i: _keyed(passes, src.load(b, i)),
                                   lambda pos, c: dst.store(b, pos, b.select(
                                       shortcut, c[1], c[0])))
                with not_only:
                    passes.scatter(digit,
                                   lambda i: _keyed_key(passes, src.load(b, i)),
                                   lambda pos, c: target.store(b, pos, c[0]))
            with from_keys, b.if_else(last) as (final, middle):
                with final:  # (keys, when the insertion sort finishes the order)
                    with b.if_else(shortcut) as (keeping, plain):
                        with keeping:
                            passes.scatter(digit, lambda i: _key_only(b, current, i),
                                           lambda pos, c: dst.store(b, pos, c[0]))
                        with plain:
                            passes.scatter(digit, lambda i: _key_only(b, current, i),
                                           lambda pos, c: dst.store(
                                               b, pos, passes.value(c[0])))
                with middle:
                    passes.scatter(digit, lambda i: _key_only(b, current, i),
                                   lambda pos, c: target.store(b, pos, c[0]))
        cur.set(target.data)

    def finish(budget: ir.Value) -> ir.Value:
        """The shortcut left keys in ``dst``: insertion-sort them, then make them values."""
        done = insertion_sort(b, n, dst, lambda key: key, [], budget)
        with b.if_then(done):
            copy_row(b, n, dst, dst, passes.value)
        return done

    with b.if_else(b.icmp_unsigned("==", varying, i64(0))) as (equal, differ):
        with equal:  # every key is the same: the input, in its order
            copy_row(b, n, src, dst, lambda raw: raw)
        with differ:
            passes.sort(varying, step, finish)
    if keys.is_float:
        fix_float_runs(b, keys, n, src, dst, lambda i: keys.key(b, dst.load(b, i)),
                       lambda i, raw: raw)


def _quick_values(b: KernelBuilder, keys: Keys, n: ir.Value, src: Row, dst: Row,
                  p: dict[str, ir.Argument], vector_bytes: int) -> None:
    """The quicksort sorts in ``dst`` itself when that is contiguous, else in ``ka``,
    copied to ``dst``; a contiguous ``src`` is read by the first partition itself."""
    ka = packed(b, p["ka"], keys.ty)
    unit = i64(dst.align)
    values = keys
    keys = quicksort.keys_for(b.isa, values, vector_bytes)
    with b.if_else(b.icmp_signed("==", dst.stride, unit)) as (contiguous, strided):
        with contiguous:
            with b.if_else(b.icmp_signed("==", src.stride, unit)) as (packed_src, gathered):
                with packed_src:
                    quicksort.sort_row(b, keys, src.data, dst.data, n, vector_bytes)
                with gathered:
                    copy_row(b, n, src, dst, lambda raw: keys.key(b, raw))
                    quicksort.sort_keys(b, keys, dst.data, n, vector_bytes)
        with strided:
            copy_row(b, n, src, ka, lambda raw: keys.key(b, raw))
            quicksort.sort_keys(b, keys, ka.data, n, vector_bytes)
            copy_row(b, n, ka, dst, lambda raw: raw)
    if values.is_float:
        fix_float_runs(b, values, n, src, dst, lambda i: values.key(b, dst.load(b, i)),
                       lambda i, raw: raw)


def _keyed(passes: Passes, raw: ir.Value) -> tuple[ir.Value, list[ir.Value]]:
    key = passes.key(raw)
    return key, [raw, key]


def _keyed_key(passes: Passes, raw: ir.Value) -> tuple[ir.Value, list[ir.Value]]:
    key = passes.key(raw)
    return key, [key]


def _key_only(b: ir.IRBuilder, row: Row, i: ir.Value) -> tuple[ir.Value, list[ir.Value]]:
    key = row.load(b, i)
    return key, [key]


@library_function
def sort_indices_function(module: ir.Module, dtype: np.dtype) -> ir.Function:
    """``void(src, src_stride, n, dst, dst_stride, ka, kb, ia, ib, hist)``: ``dst`` (int64)
    is the stable sorting permutation of the row; ``ka``, ``kb`` hold ``n`` keys,
    ``ia``, ``ib`` ``n`` int64 (``ib`` may be ``dst`` when that is contiguous)."""
    name = f"aotc.sort.indices.{dtype.name}"
    found = existing(module, name)
    if found is not None:
        return found
    keys = keys_of(dtype)
    params = ["src", "src_stride", "n", "dst", "dst_stride", "ka", "kb", "ia", "ib", "hist"]
    with helper_function(module, name, params) as (b, p):
        src = Row(p["src"], p["src_stride"], keys.ty, 1)
        dst = Row(p["dst"], p["dst_stride"], I64, 8)
        ka = packed(b, p["ka"], keys.ty)
        n = p["n"]
        with b.if_else(b.icmp_signed("<=", n, i64(SMALL))) as (small, large):
            with small:
                with for_range(b, n, "init") as i:
                    ka.store(b, i, keys.canonical(b, src.load(b, i)))
                    dst.store(b, i, i)
                insertion_sort(b, n, ka, lambda key: key, [dst])
            with large:
                _large_indices(b, keys, n, src, dst, p)
    fn = module.globals[name]
    assert isinstance(fn, ir.Function)
    return fn


def _large_indices(b: KernelBuilder, keys: Keys, n: ir.Value, src: Row, dst: Row,
                   p: dict[str, ir.Argument]) -> None:
    ka, kb = packed(b, p["ka"], keys.ty), packed(b, p["kb"], keys.ty)
    ia, ib = packed(b, p["ia"], I64), packed(b, p["ib"], I64)
    passes = Passes(b, keys, n, src, p["hist"], indices=True)
    varying = passes.varying()
    kcur, icur = Local(b, PTR, ka.data, "kcur"), Local(b, PTR, ia.data, "icur")

    def from_input(i: ir.Value) -> tuple[ir.Value, list[ir.Value]]:
        key = passes.key(src.load(b, i))
        return key, [key, i]

    def step(digit: Digit, first: ir.Value, last: ir.Value, into_a: ir.Value,
             shortcut: ir.Value) -> None:
        ktarget, itarget = _choose(b, into_a, ka, kb), _choose(b, into_a, ia, ib)
        kcurrent, icurrent = packed(b, kcur.get(), keys.ty), packed(b, icur.get(), I64)

        def from_buffers(i: ir.Value) -> tuple[ir.Value, list[ir.Value]]:
            key = kcurrent.load(b, i)
            return key, [key, icurrent.load(b, i)]

        def to_buffers(pos: ir.Value, carried: list[ir.Value]) -> None:
            ktarget.store(b, pos, carried[0])
            itarget.store(b, pos, carried[1])

        def to_output(pos: ir.Value, carried: list[ir.Value]) -> None:
            dst.store(b, pos, carried[1])

        def to_output_and_keys(pos: ir.Value, carried: list[ir.Value]) -> None:
            dst.store(b, pos, carried[1])  # and the keys, for the insertion sort to finish
            kb.store(b, pos, carried[0])

        def last_pass(read: Read) -> None:
            with b.if_else(shortcut) as (keeping, plain):
                with keeping:
                    passes.scatter(digit, read, to_output_and_keys)
                with plain:
                    passes.scatter(digit, read, to_output)

        with b.if_else(first) as (start, later):
            with start, b.if_else(last) as (only, not_only):
                with only:
                    last_pass(from_input)
                with not_only:
                    passes.scatter(digit, from_input, to_buffers)
            with later, b.if_else(last) as (final, middle):
                with final:
                    last_pass(from_buffers)
                with middle:
                    passes.scatter(digit, from_buffers, to_buffers)
        kcur.set(ktarget.data)
        icur.set(itarget.data)

    with b.if_else(b.icmp_unsigned("==", varying, i64(0))) as (equal, differ):
        with equal:  # every key is the same: the identity permutation
            with for_range(b, n, "iota") as i:
                dst.store(b, i, i)
        with differ:
            passes.sort(varying, step, lambda budget: insertion_sort(
                b, n, kb, lambda key: key, [dst], budget))
    if keys.is_float:
        fix_float_runs(b, keys, n, src, dst,
                       lambda i: keys.key(b, src.load(b, dst.load(b, i))), lambda i, raw: i)
