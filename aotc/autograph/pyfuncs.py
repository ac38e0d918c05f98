"""NumPy functions that call a Python function: ``np.vectorize`` and
``np.apply_along_axis``, as compiled loops.

The Python function is called the way the kernel calls any function (converted, so its
``if`` and ``while`` on traced values work), once per element (``vectorize``) or per
1-D slice (``apply_along_axis``), inside a loop over the positions; each call's result
is written into an output made before the loop. What that output holds (dtypes, and the
shape of a slice's result) comes from one call at build time on placeholder values, or
from ``otypes``. NumPy takes it from its first call on the data, so a function whose
result type depends on the value (``1 if v > 0 else 0.5``) has NumPy's dtype only for
some data; compiled, its branches have one common type (as ``np.where``'s).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import lax
from ..numpy_api.creation import full_from_dims
from ..numpy_api.histograms import raise_if
from ..numpy_api.indexing import getitem
from ..numpy_api.joining import moveaxis
from ..numpy_api.ufuncs import broadcast_all
from ..numpy_api.writes import write
from ..shapes import size
from ..tracing.tracer import Tracer, as_tracer, current


def _unset(fn: Any, *args: Any, **kwargs: Any) -> Any:
    raise RuntimeError("aotc.autograph.runtime is not loaded")


#: How a converted kernel calls a function: :func:`.runtime.call`, set by
#: :mod:`.runtime` when it loads (it imports this module; this one imports nothing back).
converted_call: Callable[..., Any] = _unset


def _results(value: Any) -> tuple[Tracer, ...]:
    return tuple(as_tracer(v) for v in (value if isinstance(value, tuple) else (value,)))


class Vectorized:
    """What ``np.vectorize(pyfunc, otypes)`` makes in a kernel."""

    def __init__(self, pyfunc: Callable[..., Any], otypes: Any = None, doc: Any = None,
                 excluded: Any = None, cache: bool = False, signature: Any = None) -> None:
        if excluded or signature is not None:
            raise current().error("np.vectorize: excluded= and signature= are not supported",
                                  hint="close over the fixed arguments with a lambda")
        self.pyfunc = pyfunc
        self.otypes = None if otypes is None else [np.dtype(t) for t in otypes]

    def __call__(self, *args: Any) -> Any:
        xs = broadcast_all([as_tracer(a) for a in args], scalars=True)
        shape = xs[0].aval.shape if xs else ()
        count = size(shape)
        flat = [lax.reshape(x, (count,)) for x in xs]
        probe = converted_call(self.pyfunc, *(full_from_dims((), 0, x.dtype) for x in xs))
        dtypes = self.otypes or [r.dtype for r in _results(probe)]
        if self.otypes is None:  # NumPy reads the dtypes from a first call on the data
            raise_if(np.equal(lax.dim_value(count), 0),
                     "cannot call `vectorize` on size 0 inputs unless `otypes` is set")
        outs = [full_from_dims((count,), 0, dt) for dt in dtypes]

        def body(i: Tracer, carry: Any) -> Any:
            values = _results(converted_call(self.pyfunc, *(getitem(f, i) for f in flat)))
            if len(values) != len(outs):
                raise current().error(f"np.vectorize: the function returned {len(values)} "
                                      f"values here and {len(outs)} on its first call")
            for out, value in zip(outs, values, strict=True):
                write(out, i, value)
            return carry

        lax.fori_loop(0, lax.dim_value(count), body, 0)
        shaped = tuple(lax.reshape(o, shape) for o in outs)
        return shaped if isinstance(probe, tuple) else shaped[0]


def vectorize(pyfunc: Any = None, otypes: Any = None, doc: Any = None, excluded: Any = None,
              cache: bool = False, signature: Any = None) -> Any:
    if pyfunc is None:  # @np.vectorize(otypes=...) as a decorator
        return lambda f: Vectorized(f, otypes, doc, excluded, cache, signature)
    return Vectorized(pyfunc, otypes, doc, excluded, cache, signature)


def apply_along_axis(func1d: Any, axis: Any, arr: Any, *args: Any, **kwargs: Any) -> Tracer:
    """``func1d`` on every 1-D slice along ``axis``; its result (a scalar or an array of
    one shape) takes the place of that axis, as NumPy stacks it."""
    ctx = current()
    x = as_tracer(arr)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ctx.error(f"axis {axis} is out of bounds for array of dimension {x.ndim}")
    ax = int(axis) % x.ndim
    rows = moveaxis(x, ax, -1)
    outer = rows.aval.shape[:-1]
    count = size(outer)
    flat = lax.reshape(rows, (count, rows.aval.shape[-1]))
    probe = as_tracer(converted_call(func1d, full_from_dims(rows.aval.shape[-1:], 0, x.dtype),
                           *args, **kwargs))
    inner = probe.aval.shape
    out = full_from_dims((count, *inner), 0, probe.dtype)

    def body(i: Tracer, carry: Any) -> Any:
        value = as_tracer(converted_call(func1d, getitem(flat, i), *args, **kwargs))
        if value.ndim != len(inner):
            raise ctx.error("np.apply_along_axis: the function's result has another rank "
                            "than on its first call")
        write(out, i, value)
        return carry

    lax.fori_loop(0, lax.dim_value(count), body, 0)
    result = lax.reshape(out, (*outer, *inner))
    # The result's axes take the place of ``axis`` (NumPy's order).
    k = len(inner)
    order = (*range(ax), *range(len(outer), len(outer) + k), *range(ax, len(outer)))
    return lax.transpose(result, order) if k and order != tuple(range(result.ndim)) else result


PYFUNCS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.vectorize: vectorize, np.apply_along_axis: apply_along_axis,
}
