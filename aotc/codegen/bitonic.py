"""Bitonic sorting networks in AVX-512 registers, for :mod:`.quicksort`'s short ranges.

A network sorts a power of two of registers of keys (:mod:`.sortkeys`' unsigned keys)
with no branch: each compare-exchange is an unsigned ``min`` and ``max`` of whole
registers, or of a register and its lanes shuffled, blended by a constant mask. Short
ranges are padded with the greatest key, which sorts last and is never stored.
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir

from .builder import KernelBuilder, existing, internal_function
from .dtypes import I1, I64, PTR, i64
from .gemm_kernel import I32, masked_load, masked_store, splat
from .rows import VOID
from .sortkeys import Keys

VECTOR_BYTES = 64
#: The longest range a bitonic network sorts (16 registers of 8-byte keys measured 5%
#: faster on 10^6 keys than 8, on a Zen 5; 32 registers of 4-byte keys cost LLVM 0.8 s
#: more per module than 16).
NETWORK_KEYS = 128


def prefix_mask(b: ir.IRBuilder, count: ir.Value, lanes: int) -> ir.Value:
    """The ``<lanes x i1>`` mask of the first ``count`` lanes (``0 <= count <= lanes``,
    an i64): a shift, made a mask register by one move."""
    bits = b.sub(b.shl(i64(1), count), i64(1))
    return b.bitcast(b.trunc(bits, ir.IntType(lanes)), ir.VectorType(I1, lanes))


class KeyVectors:
    """Vector operations on registers of keys (``lanes`` unsigned ``key`` integers)."""

    def __init__(self, b: KernelBuilder, key: ir.IntType) -> None:
        self.b, self.key = b, key
        self.lanes = VECTOR_BYTES * 8 // key.width
        self.ty = ir.VectorType(key, self.lanes)
        self.mask_ty = ir.VectorType(I1, self.lanes)
        self.top = ir.Constant(key, (1 << key.width) - 1)

    def _call(self, name: str, ret: ir.Type, args: list[ir.Value]) -> ir.Value:
        module = self.b.module
        fn = existing(module, name) or ir.Function(
            module, ir.FunctionType(ret, [a.type for a in args]), name)
        return self.b.call(fn, args)

    def minimum(self, x: ir.Value, y: ir.Value) -> ir.Value:
        return self._call(f"llvm.umin.v{self.lanes}i{self.key.width}", self.ty, [x, y])

    def maximum(self, x: ir.Value, y: ir.Value) -> ir.Value:
        return self._call(f"llvm.umax.v{self.lanes}i{self.key.width}", self.ty, [x, y])

    def prefix(self, count: ir.Value) -> ir.Value:
        """The mask of the first ``count`` lanes (``0 <= count <= lanes``)."""
        return prefix_mask(self.b, count, self.lanes)

    def splat(self, value: ir.Value) -> ir.Value:
        return splat(self.b, value, self.lanes)

    def at(self, base: ir.Value, index: ir.Value) -> ir.Value:
        return self.b.gep(base, [index], source_etype=self.key)

    def load_padded(self, base: ir.Value, start: ir.Value, n: ir.Value) -> ir.Value:
        """The register of keys ``start:start + lanes`` of ``base[0:n]``, lanes past
        ``n`` the greatest key (which sorts them last)."""
        b = self.b
        left = b.sub(n, start)
        valid = self.prefix(b.select(b.icmp_signed(">", left, i64(self.lanes)),
                                     i64(self.lanes),
                                     b.select(b.icmp_signed("<", left, i64(0)), i64(0), left)))
        keys = masked_load(b, self.at(base, start), self.ty, valid)
        return b.select(valid, keys, self.splat(self.top))

    def store_some(self, value: ir.Value, base: ir.Value, start: ir.Value,
                   count: ir.Value) -> None:
        """Keys ``0:count`` of ``value`` to ``base[start:start + count]``."""
        masked_store(self.b, value, self.at(base, start), self.prefix(count))


def bitonic_sort(vec: KeyVectors, registers: list[ir.Value]) -> list[ir.Value]:
    """The keys of ``registers`` (a power of two of them) in ascending order, register
    by register: Batcher's bitonic network, stage by stage. A stage compares key ``i``
    with key ``i ^ j``, keeping the lesser first where ``i & k`` is clear; ``j`` of a
    register or more pairs whole registers, below that lanes within one register."""
    b, lanes = vec.b, vec.lanes
    regs = list(registers)
    total = lanes * len(regs)
    k = 2
    while k <= total:
        j = k // 2
        while j >= 1:
            out = list(regs)
            for r, reg in enumerate(regs):
                if j >= lanes:
                    partner = r ^ (j // lanes)
                    if partner > r:
                        low, high = vec.minimum(reg, regs[partner]), vec.maximum(
                            reg, regs[partner])
                        ascending = (r * lanes) & k == 0
                        out[r], out[partner] = (low, high) if ascending else (high, low)
                    continue
                swapped = b.shuffle_vector(reg, reg, ir.Constant(
                    ir.VectorType(I32, lanes), [lane ^ j for lane in range(lanes)]))
                keep_low = [(lane & j == 0) == ((r * lanes + lane) & k == 0)
                            for lane in range(lanes)]
                out[r] = b.select(ir.Constant(vec.mask_ty, [int(t) for t in keep_low]),
                                  vec.minimum(reg, swapped), vec.maximum(reg, swapped))
            regs = out
            j //= 2
        k *= 2
    return regs


def define_once(module: ir.Module, name: str, ret: ir.Type,
              params: list[tuple[str, ir.Type]],
              body: Callable[[KernelBuilder, dict[str, ir.Argument]], None]) -> ir.Function:
    """Define internal ``name`` once per module (``body`` writes it, ending in a ``ret``)."""
    found = existing(module, name)
    if found is not None:
        return found
    with internal_function(module, name, ret, params, VECTOR_BYTES) as (b, p):
        body(b, p)
    fn = module.globals[name]
    assert isinstance(fn, ir.Function)
    return fn


def network_function(module: ir.Module, keys: Keys) -> ir.Function:
    """``void(x, dest, n)``: ``dest[0:n]`` is the values of ``x[0:n]`` sorted, for ``n``
    of at most :data:`NETWORK_KEYS` (``dest`` may be ``x``)."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        vec = KeyVectors(b, keys.ty)
        n = p["n"]
        registers = 1
        while registers * vec.lanes <= NETWORK_KEYS:
            fits = b.icmp_signed("<=", n, i64(registers * vec.lanes))
            with b.if_then(fits):
                regs = [vec.load_padded(p["x"], i64(r * vec.lanes), n)
                        for r in range(registers)]
                for r, reg in enumerate(bitonic_sort(vec, regs)):
                    start = i64(r * vec.lanes)
                    left = b.sub(n, start)
                    count = b.select(b.icmp_signed(">", left, i64(vec.lanes)),
                                     i64(vec.lanes), left)
                    with b.if_then(b.icmp_signed(">", count, i64(0))):
                        vec.store_some(keys.unkey(b, reg), p["dest"], start, count)
                b.ret_void()
            registers *= 2
        b.ret_void()

    return define_once(module, f"aotc.qsort.network.{keys.dtype.name}", VOID,
                     [("x", PTR), ("dest", PTR), ("n", I64)], body)
