"""NumPy's own compiled gufunc loops that kernels call: LAPACK (``numpy.linalg``) and
pocketfft (``numpy.fft``), resolved when the module is imported.

Why: these loops are the best code there is for what they do, and NumPy, the one
run-time dependency a wheel has, already ships them. A kernel calls one exactly as NumPy's
ufunc machinery does, ``loop(args, dimensions, steps, data)`` (see
:mod:`aotc.packaging.ufunc_loops` for the convention), through a table of ``(loop, data)`` pointer
pairs, one per entry of :data:`LOOPS`, at slot ``2 * index``. The generated module (and
``aotc.jit``) fills the table at import from the ufunc objects' public loop lists
(``PyUFuncObject.functions/data/types``), by ``templates/runtime.py``'s
``_numpy_loop_table``, for the loops its kernels call; the kernels read it through the
global :data:`TABLE_SYMBOL`. ``numpy.linalg``'s own code forces the double-precision
loops (``signature='dd->d'``) and casts the results, so those are the ones listed.

A LAPACK loop reports a failed factorization (a singular matrix, no convergence) as
NumPy's Python code expects it: by raising the floating-point invalid flag, which
``numpy.linalg`` turns into ``LinAlgError``. A kernel reads and clears that flag around
the call (:mod:`aotc.codegen.linalg.external`).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import numpy as np

from .ufunc_signature import CoreDim, parse_core_signature

TABLE_SYMBOL = "aotc_numpy_loops"


@dataclass(frozen=True)
class NumpyLoop:
    """One inner loop of a NumPy gufunc: ``module.ufunc`` at the type signature
    ``types`` (NumPy's characters, ``"dd->d"``), whose core signature is ``core``."""

    module: str
    ufunc: str
    types: str
    core: str

    @property
    def operands(self) -> tuple[tuple[CoreDim, ...], ...]:
        """Each operand's core dimension names, inputs then outputs: ``(("m", "m"),
        ("m", "n"), ("m", "n"))`` for ``"(m,m),(m,n)->(m,n)"``."""
        return parse_core_signature(self.core).operands

    @property
    def in_dtypes(self) -> tuple[np.dtype, ...]:
        return tuple(np.dtype(c) for c in self.types.split("->")[0])

    @property
    def out_dtypes(self) -> tuple[np.dtype, ...]:
        return tuple(np.dtype(c) for c in self.types.split("->")[1])

    @property
    def nin(self) -> int:
        return len(self.in_dtypes)

    def __str__(self) -> str:
        return f"{self.module}.{self.ufunc}[{self.types}]"


_FFT, _LINALG = "numpy.fft._pocketfft_umath", "numpy.linalg._umath_linalg"
#: (module, ufunc, core signature) -> the type signatures kernels call.
_FAMILIES: dict[tuple[str, str, str], tuple[str, ...]] = {
    (_FFT, "fft", "(n),()->(m)"): ("Dd->D", "Ff->F"),
    (_FFT, "ifft", "(m),()->(n)"): ("Dd->D", "Ff->F"),
    (_FFT, "rfft_n_even", "(n),()->(m)"): ("dd->D", "ff->F"),
    (_FFT, "rfft_n_odd", "(n),()->(m)"): ("dd->D", "ff->F"),
    (_FFT, "irfft", "(m),()->(n)"): ("Dd->d", "Ff->f"),
    (_LINALG, "solve", "(m,m),(m,n)->(m,n)"): ("dd->d",),
    (_LINALG, "solve1", "(m,m),(m)->(m)"): ("dd->d",),
    (_LINALG, "inv", "(m,m)->(m,m)"): ("d->d",),
    (_LINALG, "det", "(m,m)->()"): ("d->d",),
    (_LINALG, "slogdet", "(m,m)->(),()"): ("d->dd",),
    (_LINALG, "eigvalsh_lo", "(m,m)->(m)"): ("d->d",),
    (_LINALG, "eigvalsh_up", "(m,m)->(m)"): ("d->d",),
    (_LINALG, "eigh_lo", "(m,m)->(m),(m,m)"): ("d->dd",),
    (_LINALG, "eigh_up", "(m,m)->(m),(m,m)"): ("d->dd",),
    (_LINALG, "cholesky_lo", "(m,m)->(m,m)"): ("d->d",),
    (_LINALG, "cholesky_up", "(m,m)->(m,m)"): ("d->d",),
    (_LINALG, "svd", "(m,n)->(p)"): ("d->d",),
    (_LINALG, "svd_s", "(m,n)->(m,p),(p),(p,n)"): ("d->ddd",),
    (_LINALG, "svd_f", "(m,n)->(m,m),(p),(n,n)"): ("d->ddd",),
    (_LINALG, "lstsq", "(m,n),(m,nrhs),()->(n,nrhs),(nrhs),(),(p)"): ("ddd->ddid",),
}
#: Every loop a kernel may call; a loop's index is its slot in the table.
LOOPS: tuple[NumpyLoop, ...] = tuple(
    NumpyLoop(module, ufunc, types, core)
    for (module, ufunc, core), signatures in _FAMILIES.items() for types in signatures)


def loop(ufunc: str, types: str) -> NumpyLoop:
    """The registered loop ``ufunc[types]``."""
    for candidate in LOOPS:
        if candidate.ufunc == ufunc and candidate.types == types:
            return candidate
    raise KeyError(f"no NumPy loop {ufunc}[{types}] is registered in aotc.ops.numpy_loops")


def table_spec(used: Collection[str] | None = None) -> list[tuple[str, str, str] | None]:
    """What an import resolves, slot by slot: ``(module, ufunc, types)`` for each loop
    named in ``used`` (all by default), None for the others. A module resolves the loops
    its kernels call and no more: a NumPy without some other loop still imports it."""
    return [(entry.module, entry.ufunc, entry.types)
            if used is None or str(entry) in used else None for entry in LOOPS]
