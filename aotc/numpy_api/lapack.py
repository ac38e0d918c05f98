"""``np.linalg`` on matrices above :data:`SMALL`: NumPy's own LAPACK loops, called as
``numpy.linalg`` calls them.

NumPy's linalg functions call ``numpy.linalg._umath_linalg`` gufuncs with the
double-precision signature (``'dd->d'``, whatever the input), turn the floating-point
invalid flag the loop raises on failure into ``LinAlgError``, and cast the result to the
result dtype. A kernel does the same through ``numpy_loop`` (:mod:`aotc.numpy_loops`):
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

import builtins
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import lax
from ..numpy_loops import loop
from ..ops.external import numpy_loop_p
from ..shapes import DimExpr
from ..tracer import Tracer, current
from .histograms import raise_if

#: Matrices of at most this order keep aotc's own loops.
SMALL = 16
#: The builtin exception a kernel raises for NumPy's ``LinAlgError`` (its nearest
#: builtin base, as :func:`aotc.autograph.runtime._builtin_exception` picks it); the
#: message's ``"LinAlgError: "`` prefix makes the module raise ``LinAlgError`` itself.
LINALG_ERROR = next(c.__name__ for c in np.linalg.LinAlgError.__mro__
                    if getattr(builtins, c.__name__, None) is c)


def by_order(n: DimExpr, small: Callable[[], Any], large: Callable[[], Any],
             stacked: bool = False) -> Any:
    """``small()`` for matrices of order ``n`` up to :data:`SMALL` in a loop or a stack,
    else ``large()``. One matrix at the kernel's top level goes to LAPACK whatever its
    order: a call there costs a few microseconds once, and gives NumPy's own result."""
    if current().parent is None and not stacked:
        return large()
    if n.is_const:
        return small() if n.value <= SMALL else large()
    return lax.cond(lax.dim_value(n) <= SMALL, small, large)


def call(name: str, types: str, inputs: Sequence[Tracer],
         shapes: Sequence[tuple[DimExpr, ...]], error: str | None = None) -> list[Tracer]:
    """The results of ``_umath_linalg.name`` at ``types`` (inputs converted to its
    dtypes); with ``error``, the loop's failure raises ``LinAlgError(error)``."""
    entry = loop(name, types)
    atoms = [lax.convert(x, np.dtype(code)).atom
             for x, code in zip(inputs, types.split("->")[0], strict=True)]
    outs = lax.bind(numpy_loop_p, *atoms, loop=str(entry), shapes=tuple(shapes),
                    flag=error is not None)
    if error is not None:
        raise_if(outs.pop(), f"LinAlgError: {error}", LINALG_ERROR)
    return outs
