"""A call of one of NumPy's own gufunc loops (:mod:`aotc.ops.numpy_loops`) from a kernel:
its inputs converted to the loop's dtypes, its results cast to the result's precision,
and its failure (LAPACK's) raised as NumPy's ``LinAlgError``. ``np.fft`` and
``np.linalg`` (:mod:`.fft`, :mod:`.lapack`) call through here."""

from __future__ import annotations

import builtins
from collections.abc import Sequence

import numpy as np

from .. import lax
from ..ops.external import numpy_loop_p
from ..ops.numpy_loops import loop
from ..shapes import DimExpr
from ..tracing.tracer import Tracer
from ..types import complex_dtype
from .histograms import raise_if

#: The builtin exception a kernel raises for NumPy's ``LinAlgError`` (its nearest
#: builtin base, as :func:`aotc.autograph.runtime._builtin_exception` picks it); the
#: message's ``"LinAlgError: "`` prefix makes the module raise ``LinAlgError`` itself.
LINALG_ERROR = next(c.__name__ for c in np.linalg.LinAlgError.__mro__
                    if getattr(builtins, c.__name__, None) is c)


def call_loop(name: str, types: str, inputs: Sequence[Tracer],
              shapes: Sequence[tuple[DimExpr, ...]], *, error: str | None = None,
              cast: np.dtype | None = None) -> list[Tracer]:
    """The results of NumPy's loop ``name[types]`` on ``inputs`` (converted to its
    dtypes), the outputs of shapes ``shapes``. With ``error``, the loop's failure raises
    ``LinAlgError(error)``; with ``cast`` (a real dtype), float results become ``cast``
    and complex ones its complex dtype, as NumPy casts a loop's results to the result
    type (integer results stay)."""
    entry = loop(name, types)
    atoms = [lax.convert(x, dtype).atom
             for x, dtype in zip(inputs, entry.in_dtypes, strict=True)]
    outs = lax.bind(numpy_loop_p, *atoms, loop=str(entry), shapes=tuple(shapes),
                    flag=error is not None)
    if error is not None:
        raise_if(outs.pop(), f"LinAlgError: {error}", LINALG_ERROR)
    if cast is None:
        return outs
    into = {"f": cast, "c": complex_dtype(cast)}
    return [lax.convert(o, into[o.dtype.kind]) if o.dtype.kind in into else o for o in outs]
