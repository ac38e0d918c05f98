"""Copies of one array into another as one ``memmove`` per row.

``np.tile``, ``np.concatenate``, reshapes of views and assignments such as
``a[:, 1:] = b[:, :-1]`` copy elements unchanged (:func:`.nests.copy_into`). LLVM
vectorizes the element loop well, yet the C library's block move is faster on long rows:
on fresh output pages (every call's new result) it writes without first reading the
destination lines, which a loop of vector stores cannot do (measured in C on an AMD
znver3: 16 MB of 8 KB rows in 0.51-0.77 ms against 1.0-1.08 ms; on an Intel AVX-512
host the two are even). Short rows, and rows that are not contiguous on both sides,
keep the loop.
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir

from ..core.dtypes import I1, I64, PTR, i64
from ..core.loops import loop_nest
from ..core.values import View, element_ptr

#: Rows at least this long (in bytes) are moved by ``memmove``; below it the call and
#: the library's size dispatch cost more than the loop.
MIN_BYTES = 512

def _memmove(b: ir.IRBuilder) -> ir.Function:
    fnty = ir.FunctionType(ir.VoidType(), [PTR, PTR, I64, I1])
    return b.module.declare_intrinsic("llvm.memmove", [PTR, PTR, I64], fnty)


def copy_rows(b: ir.IRBuilder, dest: View, src: View, loop: Callable[[], None]) -> None:
    """``dest[...] = src`` for two Views of one dtype and shape: row by row with
    ``memmove`` when both have unit-stride rows of at least :data:`MIN_BYTES`, else by
    ``loop`` (which emits the element loop). ``memmove`` rather than ``memcpy``: an
    assignment may copy an array onto memory it shares with its source."""
    size = dest.dtype.itemsize
    nbytes = b.mul(dest.dims[-1], i64(size))
    fast = b.icmp_signed(">=", nbytes, i64(MIN_BYTES))
    for view in (dest, src):
        fast = b.and_(fast, b.icmp_signed("==", view.strides[-1], i64(size)))
    with b.if_else(fast) as (then, otherwise):
        with then, loop_nest(b, dest.dims[:-1], "rowcopy") as outer:
            first = [*outer, i64(0)]
            b.call(_memmove(b), [element_ptr(b, dest, first), element_ptr(b, src, first),
                                 nbytes, ir.Constant(I1, 0)])
        with otherwise:
            loop()
