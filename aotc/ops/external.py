"""``numpy_loop``: a call of one of NumPy's own gufunc inner loops (:mod:`aotc.ops.numpy_loops`).

``outs = numpy_loop[loop, shapes, flag](*ins)`` runs ``loop`` (its name in the
registry, ``numpy.linalg._umath_linalg.solve[dd->d]``) over the operands as the ufunc
would: each operand's trailing axes are its core dimensions, its leading axes (the same
for every operand that has them) the batch, over which the loop repeats; an operand
without batch axes (the FFT's scale factor) is the same for every repetition. ``shapes``
are the outputs' full shapes. With ``flag``, a last bool output says whether the loop
reported a failure (LAPACK's singular matrix or lack of convergence); the decomposition
turns it into NumPy's ``LinAlgError``.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

from ..tracing.avals import AType
from .core import impl_rules, primitive, type_rules
from .numpy_loops import LOOPS, NumpyLoop

numpy_loop_p = primitive("numpy_loop")

#: The registered loops by the name the IR gives them.
BY_NAME: dict[str, NumpyLoop] = {str(entry): entry for entry in LOOPS}
BOOL = np.dtype(bool)


def _numpy_loop_type(*inputs: AType, loop: str, shapes: tuple[Any, ...], flag: bool
                     ) -> tuple[AType, ...]:
    entry = BY_NAME[loop]
    if tuple(a.dtype for a in inputs) != entry.in_dtypes:
        raise ValueError(f"numpy_loop {loop}: inputs of dtypes "
                         f"{[str(a.dtype) for a in inputs]}")
    cores = entry.operands
    batches = {a.shape[:a.ndim - len(core)] for a, core in zip(inputs, cores, strict=False)
               if a.ndim > len(core)}
    batches |= {tuple(s[:len(s) - len(core)]) for s, core in
                zip(shapes, cores[entry.nin:], strict=True) if len(s) > len(core)}
    if len(batches) > 1 or any(a.ndim < len(core) for a, core in
                               zip(inputs, cores, strict=False)):
        raise ValueError(f"numpy_loop {loop}: operands' batch axes differ")
    outs = tuple(AType(d, tuple(s)) for d, s in zip(entry.out_dtypes, shapes, strict=True))
    return outs + ((AType(BOOL, ()),) if flag else ())


def _numpy_loop_impl(*inputs: np.ndarray, loop: str, shapes: tuple[Any, ...], flag: bool
                     ) -> tuple[np.ndarray, ...]:
    entry = BY_NAME[loop]
    ufunc = getattr(importlib.import_module(entry.module), entry.ufunc)
    outs = tuple(np.empty(s, d) for s, d in zip(shapes, entry.out_dtypes, strict=True))
    failed: list[bool] = []
    with np.errstate(invalid="call", call=lambda *_: failed.append(True)):
        ufunc(*inputs, out=outs if len(outs) > 1 else outs[0], signature=entry.types)
    return outs + ((np.array(bool(failed)),) if flag else ())


type_rules[numpy_loop_p] = _numpy_loop_type
impl_rules[numpy_loop_p] = _numpy_loop_impl

