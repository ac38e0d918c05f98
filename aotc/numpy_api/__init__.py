"""NumPy's API on tracers: ufuncs, functions, methods, indexing, as decompositions.

Nothing here adds a lowering: each NumPy function is written in terms of the
primitive binders of :mod:`aotc.lax`, with NumPy's own dtype and broadcasting rules.
Importing the package registers it into the tracer core's dispatch table
(:data:`aotc.tracing.tracer.DISPATCH`) and installs Python's operators on tracers; the modules
import each other one way only: ``ufuncs`` <- ``functions_base`` <- ``views``,
``shaping`` <- ``reductions``, ``creation`` <- ``joining``, ``masks`` <- ``indexing`` <-
``writes`` <- ``fancy`` (index arrays), ``complexes`` (``.real``/``.imag`` as views)
<- ``linalg``, ``statistics`` <- the one-job
modules built on them (``rounding``, ``extrema``, ``closeness``, ``copying``,
``searching`` <- ``convolution``, ``histograms``; ``grids``, ``triangular``,
``vectors``, ``polynomial``, ``einsum``, ``indices``, ``diagonals``, ``gradient``,
``membership``, ``linalg_solve``, ``ufunc_methods``, ``padding``, ``special``,
``choosing``, ``nanfunctions``, ``composites``, ``editing``; ``sorting`` <- ``unique``,
``quantiles``) <- ``functions``, ``methods`` (the tables).
``pymath`` (Python's ``math`` on traced scalars, with ``errorfunction``) is a table
autograph's converted calls use; NumPy functions that call Python functions
(``np.vectorize``, ``np.apply_along_axis``) live in ``aotc.autograph.pyfuncs``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import lax
from ..ops.containers import is_box
from ..shapes import relu
from ..tracing.tracer import DISPATCH, Tracer, as_tracer, current
from . import (
    complexes,
    fancy,
    functions,
    joining,
    linalg,
    masks,
    methods,
    pylists,
    ufuncs,
    views,
    writes,
)
from .functions import CREATION, FUNCTIONS


def _constant(value: Any) -> Tracer:
    """An operand that is not a scalar: a small ndarray is embedded, a list or tuple is
    what ``np.array`` makes of it, a lazy boolean-mask selection is laid out."""
    if isinstance(value, masks.MaskedValue):
        return value.values()
    if isinstance(value, np.ndarray):
        return joining.constant_array(value)
    if isinstance(value, (list, tuple)):  # [1.0], (a, 2.0): what np.array makes of it
        return joining.array(value)
    if hasattr(type(value), "__aotc_value__"):  # a variable that may be None: its value
        return as_tracer(value.__aotc_value__())
    if is_box(value):
        raise current().error(
            f"a {value.kind} grown while the kernel runs is used as an array: its "
            "length has no bound before the kernel runs, which an array needs",
            hint="return it (a list comes back as an array), or fill an array of the "
                 "largest size it can reach")
    raise current().error(f"{type(value).__name__} values cannot be used in a kernel")


def _times(reflected: bool) -> Any:
    """``x * y``, where ``[0.0] * n`` with a runtime ``n`` is Python's list repetition
    (``n`` copies of the list, none when ``n <= 0``), not an elementwise product."""
    plain = ufuncs.OPERATORS["__rmul__" if reflected else "__mul__"]

    def times(self: Tracer, other: Any) -> Any:
        if isinstance(other, (list, tuple)) and self.ndim == 0 and self.dtype.kind in "iu":
            items = joining.array(other)
            count = lax.dim_value(relu(self.dim)) if self.dim is not None else self
            repeated = joining.tile(items, (count,) + (1,) * (items.ndim - 1))
            repeated.list_like = True
            return repeated
        return plain(self, other)
    return times


def _register() -> None:
    DISPATCH.array_ufunc = functions.array_ufunc
    DISPATCH.array_function = functions.array_function
    DISPATCH.method = methods.get_method
    DISPATCH.getitem = fancy.getitem_any
    DISPATCH.setitem = fancy.setitem_any
    DISPATCH.delitem = pylists.delete_item
    DISPATCH.refresh = views.refresh
    DISPATCH.constant = _constant
    for dunder, fn in ufuncs.OPERATORS.items():
        setattr(Tracer, dunder, fn)
    Tracer.real = complexes.part_property(0)  # type: ignore[attr-defined]
    Tracer.imag = complexes.part_property(1)  # type: ignore[attr-defined]
    setattr(Tracer, "__mul__", _times(False))  # noqa: B010
    setattr(Tracer, "__rmul__", _times(True))  # noqa: B010
    for name, ufunc in ufuncs.BINARY_OPERATORS.items():  # (a scalar's: Python's, too)
        setattr(Tracer, f"__i{name}__", writes.inplace(ufunc) if name == "pow" else
                writes.inplace_with(ufuncs.OPERATORS[f"__{name}__"], f"np.{ufunc.__name__}"))
    current = {name: getattr(Tracer, name) for name in
               ("__add__", "__radd__", "__iadd__", "__mul__", "__rmul__", "__imul__")}
    for dunder, fn in pylists.list_operators(current).items():  # Python lists' + and *
        setattr(Tracer, dunder, fn)
    # @ is np.matmul, a ufunc in NumPy 2 that aotc writes as dot_general (see linalg).
    setattr(Tracer, "__matmul__", lambda self, other: linalg.matmul(self, other))  # noqa: B010
    setattr(Tracer, "__rmatmul__", lambda self, other: linalg.matmul(other, self))  # noqa: B010
    setattr(Tracer, "__imatmul__", writes.inplace_with(linalg.matmul))  # noqa: B010


_register()

__all__ = ["CREATION", "FUNCTIONS"]
