"""Small matrix products: the micro-kernel reads ``A`` and ``B`` where they are.

Packing (:mod:`.gemm_pack`) copies ``A`` and ``B`` into the micro-kernel's layout so that
each element, reused hundreds of times, is read from cache in order. A product whose
operands already fit in the caches reuses each element too few times for that copy to
pay: at 64 x 64 x 64 packing took a quarter of the GEMM's time (NumPy's OpenBLAS was
1.06x faster). Here the unpacked micro-kernels (``kernel_variants(unpacked=True)``)
broadcast ``A[i, p]`` from ``A`` itself (any strides) and load ``B``'s rows in place
(unit-stride rows); the loops are the GEMM's two innermost, a column sliver of ``B``
outside (it stays in L1 while the row blocks of ``A`` pass it), with no blocking of the
contracted axis: each tile of ``C`` is final after one call.

The path is taken at run time (:func:`fits_unpacked`) when ``B`` and ``A`` are each at
most :data:`UNPACKED_BYTES`; the sums are the packed kernel's, in the same order.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from llvmlite import ir

from ..core.dtypes import i64

#: Bytes of ``A`` and of ``B``, each, up to which a product is not packed (L2 holds both,
#: and a ``B`` sliver of ``k`` rows stays in L1).
UNPACKED_BYTES = 64 * 1024


def fits_unpacked(b: ir.IRBuilder, p: Mapping[str, ir.Value], dtype: np.dtype) -> ir.Value:
    """Whether the product of :func:`~.gemm.gemm_function`'s arguments ``p`` runs
    unpacked: unit-stride rows of ``B`` and small enough operands. Each size is bounded
    before multiplying, so the products cannot overflow."""
    size = dtype.itemsize
    limit = UNPACKED_BYTES // size

    def small(rows: ir.Value, cols: ir.Value) -> ir.Value:
        bounded = b.and_(b.icmp_signed("<=", rows, i64(limit)),
                         b.icmp_signed("<=", cols, i64(limit)))
        return b.and_(bounded, b.icmp_signed("<=", b.mul(rows, cols), i64(limit)))

    unit = b.icmp_signed("==", p["b_cs"], i64(size))
    return b.and_(unit, b.and_(small(p["k"], p["n"]), small(p["m"], p["k"])))
