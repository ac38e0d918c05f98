"""Sorting networks in AVX-512 or AVX2 registers, for :mod:`.quicksort`'s short ranges
and its pivots.

A network sorts a power of two of registers of keys (:mod:`.sortkeys`' keys) with no
branch, as :func:`.sortnet.merge_plan` schedules it: each step is a lane-wise ``min`` and
``max`` of two registers, gathered by at most one shuffle each. Short ranges are padded
with the greatest key, which sorts last and is never stored.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from llvmlite import ir

from ..core.builder import KernelBuilder, define_once, existing
from ..core.dtypes import I1, I64, PTR, i64
from ..core.simd import I32, masked_load, masked_store, splat
from .rows import VOID
from .sortkeys import Keys
from .sortnet import RegisterOps, Slot, merge_plan, run_plan

#: The longest range a network sorts (16 AVX-512 registers of 8-byte keys sorted 10^6
#: keys faster than 32, on an Intel Sapphire Rapids, and than 8, on a Zen 5; 32
#: registers of 4-byte keys cost LLVM 0.8 s more per module than 16) ...
NETWORK_KEYS = 128
#: ... in this many registers at most: on a Zen 3 (AVX2, 16 registers), 16 sorted 10^6
#: 4-byte keys 20% faster than 8, and 8-byte keys 15% faster.
NETWORK_REGISTERS = 16


def prefix_mask(b: ir.IRBuilder, count: ir.Value, lanes: int) -> ir.Value:
    """The ``<lanes x i1>`` mask of the first ``count`` lanes (``0 <= count <= lanes``,
    an i64): a shift, made a mask register by one move."""
    bits = b.sub(b.shl(i64(1), count), i64(1))
    return b.bitcast(b.trunc(bits, ir.IntType(lanes)), ir.VectorType(I1, lanes))


class KeyVectors:
    """Vector operations on registers of keys (``lanes`` of them: a register of the
    builder's target)."""

    def __init__(self, b: KernelBuilder, keys: Keys) -> None:
        key = keys.ty
        self.b, self.keys, self.key, self.signed = b, keys, key, keys.signed
        self.lanes = b.vector_bytes * 8 // key.width
        #: Without min and max instructions for the lanes: a compare and a blend.
        self.native_min_max = b.isa.lane_min_max(key.width, b.vector_bytes)
        #: The longest range :func:`network_function` sorts with these registers.
        self.network_keys = min(NETWORK_KEYS, NETWORK_REGISTERS * self.lanes)
        self.ty = ir.VectorType(key, self.lanes)
        self.mask_ty = ir.VectorType(I1, self.lanes)
        self.top = keys.greatest

    def _call(self, name: str, ret: ir.Type, args: list[ir.Value]) -> ir.Value:
        module = self.b.module
        fn = existing(module, name) or ir.Function(
            module, ir.FunctionType(ret, [a.type for a in args]), name)
        return self.b.call(fn, args)

    def minimum(self, x: ir.Value, y: ir.Value) -> ir.Value:
        op = "smin" if self.signed else "umin"
        return self._call(f"llvm.{op}.v{self.lanes}i{self.key.width}", self.ty, [x, y])

    def maximum(self, x: ir.Value, y: ir.Value) -> ir.Value:
        op = "smax" if self.signed else "umax"
        return self._call(f"llvm.{op}.v{self.lanes}i{self.key.width}", self.ty, [x, y])

    def gather(self, registers: Sequence[ir.Value], slots: Sequence[Slot]) -> ir.Value:
        """The register of the keys at ``slots`` (of at most two of ``registers``): one
        shuffle, or none when they are one register in order."""
        sources = list(dict.fromkeys(r for r, _ in slots))
        assert 1 <= len(sources) <= 2
        if list(slots) == [(sources[0], lane) for lane in range(self.lanes)]:
            return registers[sources[0]]
        first, second = registers[sources[0]], registers[sources[-1]]
        mask = [lane + (self.lanes if r != sources[0] else 0) for r, lane in slots]
        return self.b.shuffle_vector(first, second,
                                     ir.Constant(ir.VectorType(I32, self.lanes), mask))

    def blend(self, mask: Sequence[bool], x: ir.Value, y: ir.Value) -> ir.Value:
        """``x`` in the lanes of ``mask``, else ``y``."""
        return self.b.select(ir.Constant(self.mask_ty, [int(m) for m in mask]), x, y)

    def lesser(self, x: ir.Value, y: ir.Value) -> ir.Value:
        """Lane by lane, the lesser key (a compare and a blend without native min)."""
        if self.native_min_max:
            return self.minimum(x, y)
        return self.b.select(self.keys.less(self.b, x, y), x, y)

    def greater(self, x: ir.Value, y: ir.Value) -> ir.Value:
        if self.native_min_max:
            return self.maximum(x, y)
        return self.b.select(self.keys.less(self.b, x, y), y, x)

    def prefix(self, count: ir.Value) -> ir.Value:
        """The mask of the first ``count`` lanes (``0 <= count <= lanes``)."""
        return prefix_mask(self.b, count, self.lanes)

    def splat(self, value: ir.Value) -> ir.Value:
        return splat(self.b, value, self.lanes)

    def at(self, base: ir.Value, index: ir.Value) -> ir.Value:
        return self.b.gep(base, [index], source_etype=self.key)

    def valid(self, start: ir.Value, n: ir.Value) -> ir.Value:
        """The mask of the lanes of the register at ``start`` that hold one of keys
        ``0:n``."""
        b = self.b
        left = b.sub(n, start)
        return self.prefix(b.select(b.icmp_signed(">", left, i64(self.lanes)),
                                    i64(self.lanes),
                                    b.select(b.icmp_signed("<", left, i64(0)), i64(0), left)))

    def load_padded(self, base: ir.Value, start: ir.Value, n: ir.Value) -> ir.Value:
        """The register of keys ``start:start + lanes`` of ``base[0:n]``, lanes past
        ``n`` the greatest key (which sorts them last)."""
        valid = self.valid(start, n)
        keys = masked_load(self.b, self.at(base, start), self.ty, valid)
        return self.b.select(valid, keys, self.splat(self.top))

    def store_some(self, value: ir.Value, base: ir.Value, start: ir.Value,
                   count: ir.Value) -> None:
        """Keys ``0:count`` of ``value`` to ``base[start:start + count]``: a whole
        register's worth by a plain store (AMD's Zen 3 microcodes masked stores)."""
        b, at = self.b, self.at(base, start)
        with b.if_else(b.icmp_signed("==", count, i64(self.lanes)), likely=True) as (
                whole, part):
            with whole:
                b.store(value, at, align=1)
            with part:
                masked_store(b, value, at, self.prefix(count))


def sort_registers(vec: KeyVectors, registers: list[ir.Value]) -> list[ir.Value]:
    """The keys of ``registers`` (a power of two of them) in ascending order, register by
    register: :func:`.sortnet.merge_plan`'s network."""
    ops = RegisterOps(vec.gather, vec.lesser, vec.greater, vec.blend)
    return run_plan(merge_plan(len(registers), vec.lanes), registers, ops)


def network_function(module: ir.Module, keys: Keys, vector_bytes: int) -> ir.Function:
    """``void(x, dest, n)``: ``dest[0:n]`` is the values of ``x[0:n]`` sorted, for ``n``
    of at most :attr:`KeyVectors.network_keys` (``dest`` may be ``x``), in registers of
    ``vector_bytes``.

    Where the target has no min or max of 64-bit integers (AVX2), a range of doubles
    with no NaN is sorted as doubles: ``vminpd``/``vmaxpd`` are one instruction each,
    where keys take a compare and two blends, as NumPy's AVX2 sort has it. Two zeros are
    equal as doubles, so a min and a max of ``-0.0`` and ``0.0`` may give either sign
    twice; :mod:`.floatruns` rewrites the run of zeros from the input afterwards anyway."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        vec = KeyVectors(b, keys)
        n = p["n"]
        registers = 1
        while registers * vec.lanes <= vec.network_keys:
            fits = b.icmp_signed("<=", n, i64(registers * vec.lanes))
            with b.if_then(fits):
                starts = [i64(r * vec.lanes) for r in range(registers)]
                regs = [vec.load_padded(p["x"], start, n) for start in starts]
                if vec.native_min_max or not keys.is_float:
                    _store(vec, sort_registers(vec, regs), p["dest"], n, keys.unkey)
                else:
                    with b.if_else(_numbers_only(vec, regs, starts, n)) as (doubles, other):
                        with doubles:
                            ordered = _sorted_doubles(vec, regs, starts, n)
                            _store(vec, ordered, p["dest"], n, lambda _, raw: raw)
                        with other:
                            _store(vec, sort_registers(vec, regs), p["dest"], n, keys.unkey)
                b.ret_void()
            registers *= 2
        b.ret_void()

    return define_once(module, f"aotc.qsort.network.{keys.dtype.name}.v{vector_bytes}", VOID,
                       [("x", PTR), ("dest", PTR), ("n", I64)], body, vector_bytes)


def _store(vec: KeyVectors, ordered: list[ir.Value], dest: ir.Value, n: ir.Value,
           raw: Callable[[ir.IRBuilder, ir.Value], ir.Value]) -> None:
    """The first ``n`` lanes of ``ordered``, made raw values by ``raw``, to ``dest``."""
    b = vec.b
    for r, reg in enumerate(ordered):
        start = i64(r * vec.lanes)
        left = b.sub(n, start)
        count = b.select(b.icmp_signed(">", left, i64(vec.lanes)), i64(vec.lanes), left)
        with b.if_then(b.icmp_signed(">", count, i64(0))):
            vec.store_some(raw(b, reg), dest, start, count)


def _numbers_only(vec: KeyVectors, regs: list[ir.Value], starts: list[ir.Value],
                  n: ir.Value) -> ir.Value:
    """i1: no key of the range is a NaN's (keys above ``inf``'s or below ``-inf``'s)."""
    b, keys = vec.b, vec.keys
    high, low = (vec.splat(keys.key(b, keys.raw(v))) for v in (np.inf, -np.inf))
    found = None
    for reg, start in zip(regs, starts, strict=True):
        nan = b.or_(keys.less(b, high, reg), keys.less(b, reg, low))
        nan = b.and_(nan, vec.valid(start, n))
        found = nan if found is None else b.or_(found, nan)
    bits = b.bitcast(found, ir.IntType(vec.lanes))
    return b.icmp_unsigned("==", bits, ir.Constant(ir.IntType(vec.lanes), 0))


def _sorted_doubles(vec: KeyVectors, regs: list[ir.Value], starts: list[ir.Value],
                    n: ir.Value) -> list[ir.Value]:
    """The keys' values sorted as floats of their width (padding lanes ``inf``), as raw
    bits."""
    b, keys = vec.b, vec.keys
    scalar = ir.DoubleType() if keys.dtype.itemsize == 8 else ir.FloatType()
    doubles = ir.VectorType(scalar, vec.lanes)
    inf = ir.Constant(doubles, [float("inf")] * vec.lanes)
    values = [b.select(vec.valid(start, n), b.bitcast(keys.unkey(b, reg), doubles), inf)
              for reg, start in zip(regs, starts, strict=True)]

    def lesser(x: ir.Value, y: ir.Value) -> ir.Value:  # vminpd
        return b.select(b.fcmp_ordered("<", x, y), x, y)

    def greater(x: ir.Value, y: ir.Value) -> ir.Value:  # vmaxpd
        return b.select(b.fcmp_ordered(">", x, y), x, y)

    ops = RegisterOps(vec.gather, lesser, greater, vec.blend)
    ordered = run_plan(merge_plan(len(values), vec.lanes), values, ops)
    return [b.bitcast(v, vec.ty) for v in ordered]
