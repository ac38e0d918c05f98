"""``np.linalg`` on matrices above :data:`SMALL`: NumPy's own LAPACK loops, called as
``numpy.linalg`` calls them.

NumPy's linalg functions call ``numpy.linalg._umath_linalg`` gufuncs with the
double-precision signature (``'dd->d'``, whatever the input), turn the floating-point
invalid flag the loop raises on failure into ``LinAlgError``, and cast the result to the
result dtype. A kernel does the same through ``numpy_loop`` (:mod:`.loops`):
same LAPACK, same results bit for bit, same errors where NumPy raises them (a singular
matrix holding NaN included), and LAPACK's speed, blocked and multi-threaded as NumPy's
BLAS is, with nothing but NumPy at run time.

Small matrices in a loop or a stack keep aotc's own loops (:mod:`.linalg_solve`,
:mod:`.linalg_eigh`, :mod:`.linalg_svd`): a LAPACK call allocates and copies per matrix,
which costs more than factoring a 4x4 whole (10,000 4x4 solves in a Python loop: about
1.2 ms in-register, 50 ms through NumPy). The order picks the path at build time when it
is known, else when the kernel runs. One matrix at the kernel's top level always goes to
LAPACK: NumPy's exact results and errors for a few microseconds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from .. import lax
from ..shapes import DimExpr
from ..tracing.tracer import Tracer, current

#: Matrices of at most this order keep aotc's own loops.
SMALL = 16


T = TypeVar("T")


def by_order(x: Tracer, small: Callable[[], T], large: Callable[[], T],
             order: DimExpr | None = None) -> T:
    """``large()``, LAPACK's, for the matrix (or stack) ``x``; ``small()``, aotc's own,
    for a complex one, and for one of ``order`` (its last axis by default) up to
    :data:`SMALL` in a loop or a stack. One matrix at the kernel's top level goes to
    LAPACK whatever its order: a call there costs a few microseconds once, and gives
    NumPy's own result."""
    if x.dtype.kind == "c":  # (LAPACK's complex loops are not called yet)
        return small()
    if current().at_top and x.ndim == 2:
        return large()
    n = x.aval.shape[-1] if order is None else order
    if n.is_const:
        return small() if n.value <= SMALL else large()
    chosen: T = lax.cond(lax.dim_value(n) <= SMALL, small, large)  # what both branches give
    return chosen
