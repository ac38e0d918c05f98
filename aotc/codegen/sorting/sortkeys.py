"""Order-preserving unsigned keys: the integers a radix sort sorts instead of values.

NumPy orders bool, integers and floats; a key is an unsigned integer of the value's
width whose unsigned order is the values' order:

- bool: the byte, made 0 or 1; unsigned: the value itself; signed: the value with its
  sign bit flipped (``INT_MIN`` becomes 0);
- float: the IEEE bits with the sign bit flipped when the sign is clear and every bit
  flipped when it is set, so negative values order by magnitude, reversed. That is
  three integer instructions, and one-to-one (:meth:`Keys.unkey` gives back every bit).

For floats that order (the *bit order*) is a total order slightly finer than NumPy's:
``-0.0`` comes just before ``0.0`` where NumPy has them equal, NaNs order by payload,
and NaNs with the sign bit set come before ``-inf`` where NumPy puts every NaN last. A
row sorted by bit order differs from NumPy's stable sort only in those runs, which
:mod:`.floatruns` then fixes. :meth:`Keys.canonical` is NumPy's order itself (zeros and
NaNs made canonical first), for the insertion sort of short rows.

*Signed* keys (:attr:`Keys.signed`) are those keys with the top bit flipped, so that
their signed order is the values' order: AVX2 compares 64-bit lanes only as signed
integers (:mod:`.quicksort`), and for signed integers they are the values themselves.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from llvmlite import ir

from ..core.dtypes import F32, F64, I8


@dataclass(frozen=True)
class Keys:
    """Keys of ``dtype``: values are handled as raw integers of the value's width."""

    dtype: np.dtype
    #: Whether the keys are ordered as signed integers (see the module docstring).
    signed: bool = False

    @property
    def width(self) -> int:
        """Bits of a key (and of a raw value)."""
        return 8 * self.dtype.itemsize

    @property
    def ty(self) -> ir.IntType:
        return ir.IntType(self.width)

    @property
    def is_float(self) -> bool:
        return self.dtype.kind == "f"

    def _float_type(self) -> ir.Type:
        return F64 if self.width == 64 else F32

    def raw(self, value: float) -> ir.Constant:
        """The raw bits of a float constant."""
        bits = np.array(value, self.dtype).view(f"u{self.dtype.itemsize}")
        return ir.Constant(self.ty, int(bits))

    def as_float(self, b: ir.IRBuilder, raw: ir.Value) -> ir.Value:
        return b.bitcast(raw, self._float_type())

    @property
    def greatest(self) -> ir.Constant:
        """The greatest key."""
        top = (1 << (self.width - 1)) - 1 if self.signed else (1 << self.width) - 1
        return ir.Constant(self.ty, top)

    def less(self, b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
        """Whether key ``x`` orders before ``y`` (lane by lane for vectors)."""
        return (b.icmp_signed if self.signed else b.icmp_unsigned)("<", x, y)

    def as_signed(self) -> Keys:
        """These keys in signed order."""
        return dataclasses.replace(self, signed=True)

    def key(self, b: ir.IRBuilder, raw: ir.Value) -> ir.Value:
        """The key of a raw value (or a vector of them): its bit order (see the module
        docstring)."""
        key = self._unsigned_key(b, raw)
        return b.xor(key, _like(key, 1 << (self.width - 1))) if self.signed else key

    def _unsigned_key(self, b: ir.IRBuilder, raw: ir.Value) -> ir.Value:
        kind = self.dtype.kind
        if kind == "b":
            return b.zext(b.icmp_unsigned("!=", raw, ir.Constant(I8, 0)), I8)
        if kind == "u":
            return raw
        sign = _like(raw, 1 << (self.width - 1))
        if kind == "i":
            return b.xor(raw, sign)
        flip = b.or_(b.ashr(raw, _like(raw, self.width - 1)), sign)
        return b.xor(raw, flip)

    def canonical(self, b: ir.IRBuilder, raw: ir.Value) -> ir.Value:
        """A key in NumPy's order: ``±0.0`` one key, every NaN one key after ``+inf``."""
        if not self.is_float:
            return self.key(b, raw)
        x = self.as_float(b, raw)
        zero = b.fcmp_ordered("==", x, ir.Constant(self._float_type(), 0.0))
        nan = b.fcmp_unordered("uno", x, x)
        raw = b.select(zero, ir.Constant(self.ty, 0), raw)
        return self.key(b, b.select(nan, self.raw(np.nan), raw))

    def unkey(self, b: ir.IRBuilder, key: ir.Value) -> ir.Value:
        """The raw value of a key (or a vector of them)."""
        kind = self.dtype.kind
        sign = _like(key, 1 << (self.width - 1))
        if self.signed:
            key = b.xor(key, sign)
        if kind in "bu":
            return key
        if kind == "i":
            return b.xor(key, sign)
        flip = b.or_(b.ashr(b.not_(key), _like(key, self.width - 1)), sign)
        return b.xor(key, flip)

    def is_zero(self, b: ir.IRBuilder, raw: ir.Value) -> ir.Value:
        """i1: a float raw value is ``±0.0``."""
        return b.fcmp_ordered("==", self.as_float(b, raw),
                              ir.Constant(self._float_type(), 0.0))

    def is_nan(self, b: ir.IRBuilder, raw: ir.Value) -> ir.Value:
        x = self.as_float(b, raw)
        return b.fcmp_unordered("uno", x, x)

    def digits(self, bits: int) -> int:
        """How many ``bits``-wide digits a key has."""
        return -(-self.width // bits)


def _like(value: ir.Value, constant: int) -> ir.Constant:
    """``constant`` of ``value``'s type: every lane of it for a vector (:meth:`Keys.key`
    and :meth:`Keys.unkey` work on registers of keys too)."""
    ty = value.type
    if isinstance(ty, ir.VectorType):
        return ir.Constant(ty, [ir.Constant(ty.element, constant)] * ty.count)
    return ir.Constant(ty, constant)


def keys_of(dtype: np.dtype) -> Keys:
    if dtype.kind not in "biuf":
        raise ValueError(f"no sort keys for dtype {dtype}")
    return Keys(np.dtype(dtype))
