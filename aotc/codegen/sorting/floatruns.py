"""From bit order to NumPy's order, for a sorted row of floats.

The radix sort orders floats by their bits (:mod:`.sortkeys`): cheap, one-to-one, and
NumPy's order except for three runs, all found by binary search in the sorted row:

- NaNs with the sign bit set come first: they are moved to the end, with the others;
- ``-0.0`` before ``0.0``, and NaNs by payload: NumPy's stable sort keeps each of the
  two runs (zeros, NaNs) in input order, so each is rewritten from one scan of the
  input, which gives every element back its own bits (or, for argsort, its index).

A row without zeros or NaNs costs the four binary searches and nothing else.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from llvmlite import ir

from ..core.builder import KernelBuilder
from ..core.dtypes import I64, i64
from ..core.loops import first_not_before, for_range
from .rows import Local, Row
from .sortkeys import Keys


def lower_bound(b: KernelBuilder, n: ir.Value, key_at: Callable[[ir.Value], ir.Value],
                key: ir.Value) -> ir.Value:
    """The first index of a sorted row of ``n`` whose key (``key_at(i)``) is not below
    ``key`` (unsigned)."""
    low, span = Local(b, I64, i64(0), "low"), Local(b, I64, n, "span")
    return first_not_before(b, n, lambda mid: b.icmp_unsigned("<", key_at(mid), key),
                            low, span, "lb")


def fix_float_runs(b: KernelBuilder, keys: Keys, n: ir.Value, src: Row, dst: Row,
                   key_at: Callable[[ir.Value], ir.Value],
                   value_of: Callable[[ir.Value, ir.Value], ir.Value]) -> None:
    """Make ``dst`` (``n`` elements sorted in bit order; ``key_at(i)`` is element i's
    key) NumPy's stable order of ``src``; ``value_of(i, raw)`` is what ``dst`` holds for
    input element ``i`` (its raw value, or ``i`` itself for argsort)."""
    def first(value: float, after: bool = False) -> ir.Value:
        key = keys.key(b, keys.raw(value))
        return lower_bound(b, n, key_at, b.add(key, ir.Constant(keys.ty, int(after))))

    negative_nans = first(-np.inf)  # every key below -inf's is a NaN with the sign bit
    zeros_at, zeros_end = first(-0.0), first(0.0, after=True)
    nans_at = first(np.inf, after=True)
    special = b.or_(b.icmp_signed(">", negative_nans, i64(0)),
                    b.or_(b.icmp_signed("<", zeros_at, zeros_end),
                          b.icmp_signed("<", nans_at, n)))
    with b.if_then(special, likely=False):
        with b.if_then(b.icmp_signed(">", negative_nans, i64(0)), likely=False):
            with for_range(b, b.sub(n, negative_nans), "unshift") as i:
                dst.store(b, i, dst.load(b, b.add(i, negative_nans)))
        zero_pos = Local(b, I64, b.sub(zeros_at, negative_nans), "zpos")
        nan_pos = Local(b, I64, b.sub(nans_at, negative_nans), "npos")
        with for_range(b, n, "fix") as i:
            raw = src.load(b, i)
            for test, pos in ((keys.is_zero, zero_pos), (keys.is_nan, nan_pos)):
                with b.if_then(test(b, raw), likely=False):
                    dst.store(b, pos.get(), value_of(i, raw))
                    pos.set(b.add(pos.get(), i64(1)))
