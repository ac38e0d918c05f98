"""``np.fft``: complex and real transforms of any length and over several axes, their
frequencies and shifts.

A transform along one axis is a call of NumPy's own pocketfft loop (``numpy_loop``, see
:mod:`aotc.ops.numpy_loops`), exactly as ``numpy.fft._raw_fft`` makes it: the axis moved last
(a strided view: the loop copies what it reads), the same loop (``fft``, ``ifft``,
``rfft_n_even``/``rfft_n_odd`` by the parity of ``n``, ``irfft``), the same scale
factor computed in the same precision, and the loop crops or zero-pads the input to
``n`` itself. So results are NumPy's bit for bit, pocketfft's speed included, as are its
handling of huge values and of NaN and inf (which stay local). As NumPy 2, float32
and complex64 results stay single precision, computed by the loop NumPy's dispatch would
pick (the double-precision one unless input and scale factor match the single one).
Transforms over several axes go axis by axis, the last first, as ``_raw_fftnd`` does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np

from .. import lax
from ..ir import Lit
from ..ops.index import raise_if_p
from ..shapes import DimExpr, relu
from ..tracing.bind import size_value
from ..tracing.tracer import Tracer, as_tracer, current
from .creation import iota
from .functions_base import where
from .joining import moveaxis, roll
from .loops import call_loop
from .ufuncs import apply_ufunc

I64, F32, C64 = np.dtype(np.int64), np.dtype(np.float32), np.dtype(np.complex64)
NORMS = (None, "backward", "ortho", "forward")
_SWAPPED = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def _points(n: Any, length: DimExpr) -> DimExpr:
    """The transform's length: ``n``, else the axis's; NumPy's ValueError below 1."""
    size = length if n is None else size_value(n, "n")
    if size.is_const and size.value < 1:
        raise current().error(f"Invalid number of FFT data points ({size.value}) specified.")
    count = lax.dim_value(size)
    lax.bind(raise_if_p, (count < 1).atom, count.atom, Lit(0, I64), error="ValueError",
             message="Invalid number of FFT data points ({lhs}) specified.")
    return relu(size)


def _factor(norm: Any, forward: bool, count: Tracer, real_dtype: np.dtype) -> Tracer:
    """NumPy's ``fct``: 1, ``1/sqrt(n)`` or ``1/n``, computed in ``real_dtype``."""
    if norm not in NORMS:
        raise current().error(f'Invalid norm value {norm}; should be "backward",'
                              '"ortho" or "forward".')
    if not forward:
        norm = _SWAPPED[norm]
    one = lax.convert(as_tracer(1), real_dtype)
    if norm in (None, "backward"):
        return one
    points = lax.convert(count, real_dtype)
    return cast(Tracer, one / (apply_ufunc(np.sqrt, points) if norm == "ortho" else points))


def _raw_fft(a: Any, n: Any, axis: Any, norm: Any, real_input: bool, forward: bool
             ) -> Tracer:
    """One transform along ``axis`` (NumPy's ``_raw_fft``)."""
    x = as_tracer(a)
    if x.ndim == 0:
        raise current().error("np.fft: the input must be at least one-dimensional")
    if real_input and forward and x.dtype.kind == "c":
        raise current().error("np.fft.rfft: the input must be real",
                              hint="use np.fft.fft for complex input")
    ax = int(axis) % x.ndim
    v = moveaxis(x, ax, -1)
    real_dtype = np.result_type(np.zeros(0, x.dtype).real.dtype, 1.0)
    length = v.aval.shape[-1]
    points = _points(n, 2 * (length - 1) if real_input and not forward else length)
    count = lax.dim_value(points)
    fct = _factor(norm, forward, count, real_dtype)
    batch = v.aval.shape[:-1]
    # The loop NumPy's dispatch picks: the single-precision one when the input and the
    # scale factor (a float32 unless it is the int 1) match it exactly, else the first
    # one the input casts to safely, in double precision (then cast to the result).
    scaled = (norm if forward else _SWAPPED[norm]) not in (None, "backward")
    single = scaled and x.dtype == (F32 if real_input and forward else C64)
    if real_input and forward:
        size, types = points // 2 + 1, "ff->F" if single else "dd->D"

        def transform(name: str) -> Callable[[Tracer], Tracer]:
            return lambda w: call_loop(name, types, [w, fct], [batch + (size,)],
                                       cast=real_dtype)[0]
        out = lax.cond(count % 2 == 0, transform("rfft_n_even"), transform("rfft_n_odd"), v)
    else:
        code = "F" if single else "D"  # complex in, complex out (real out for irfft)
        name = "irfft" if real_input else "fft" if forward else "ifft"
        types = f"{code}{code.lower()}->{code.lower() if real_input else code}"
        out = call_loop(name, types, [v, fct], [batch + (points,)], cast=real_dtype)[0]
    return moveaxis(out, -1, ax)


def fft(a: Any, n: Any = None, axis: Any = -1, norm: Any = None, out: Any = None) -> Tracer:
    return _raw_fft(a, n, axis, norm, real_input=False, forward=True)


def ifft(a: Any, n: Any = None, axis: Any = -1, norm: Any = None, out: Any = None) -> Tracer:
    return _raw_fft(a, n, axis, norm, real_input=False, forward=False)


def rfft(a: Any, n: Any = None, axis: Any = -1, norm: Any = None, out: Any = None) -> Tracer:
    return _raw_fft(a, n, axis, norm, real_input=True, forward=True)


def irfft(a: Any, n: Any = None, axis: Any = -1, norm: Any = None, out: Any = None) -> Tracer:
    return _raw_fft(a, n, axis, norm, real_input=True, forward=False)


def _cooked(x: Tracer, s: Any, axes: Any) -> tuple[tuple[int, ...], list[Any]]:
    """NumPy's ``_cook_nd_args``: the axes (the last ``len(s)``, or all) and their sizes
    (None: the axis's own)."""
    if axes is None:
        axes = tuple(range(-len(s), 0)) if s is not None else tuple(range(x.ndim))
    axes = tuple(axes)
    sizes: list[Any] = [None] * len(axes) if s is None else list(s)
    if len(sizes) != len(axes):
        raise current().error("Shape and axes have different lengths.")
    return axes, sizes


def _over_axes(fn: Callable[..., Tracer], a: Any, s: Any, axes: Any, norm: Any,
               last_first: bool = True) -> Tracer:
    """``fn`` along each axis, the last first as NumPy's ``_raw_fftnd`` goes (the order
    changes only the rounding)."""
    x = as_tracer(a)
    steps = list(zip(*_cooked(x, s, axes), strict=True))
    for ax, length in reversed(steps) if last_first else steps:
        x = fn(x, length, ax, norm)
    return x


def fftn(a: Any, s: Any = None, axes: Any = None, norm: Any = None, out: Any = None) -> Tracer:
    return _over_axes(fft, a, s, axes, norm)


def ifftn(a: Any, s: Any = None, axes: Any = None, norm: Any = None, out: Any = None) -> Tracer:
    return _over_axes(ifft, a, s, axes, norm)


def fft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: Any = None,
         out: Any = None) -> Tracer:
    return _over_axes(fft, a, s, axes, norm)


def ifft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: Any = None,
          out: Any = None) -> Tracer:
    return _over_axes(ifft, a, s, axes, norm)


def rfftn(a: Any, s: Any = None, axes: Any = None, norm: Any = None, out: Any = None
          ) -> Tracer:
    """NumPy's: ``rfft`` along the last axis, then ``fft`` along the others."""
    axes, sizes = _cooked(as_tracer(a), s, axes)
    x = rfft(a, sizes[-1], axes[-1], norm)
    return _over_axes(fft, x, sizes[:-1], axes[:-1], norm)


def irfftn(a: Any, s: Any = None, axes: Any = None, norm: Any = None, out: Any = None
           ) -> Tracer:
    """NumPy's: ``ifft`` along all axes but the last, then ``irfft`` along it."""
    axes, sizes = _cooked(as_tracer(a), s, axes)
    x = _over_axes(ifft, a, sizes[:-1], axes[:-1], norm, last_first=False)
    return irfft(x, sizes[-1], axes[-1], norm)


def rfft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: Any = None,
          out: Any = None) -> Tracer:
    return rfftn(a, s, axes, norm)


def irfft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: Any = None,
           out: Any = None) -> Tracer:
    return irfftn(a, s, axes, norm)


def fftfreq(n: Any, d: Any = 1.0, device: Any = None) -> Tracer:
    """NumPy's: the integers times ``1 / (n d)`` (a product, not a quotient: bit for bit)."""
    count = size_value(n, "n")
    i = iota(I64, (count,), 0)
    total = lax.dim_value(count)
    signed = where(i < (total - 1) // 2 + 1, i, i - total)
    return cast(Tracer, lax.convert(signed, np.dtype(np.float64))
                * (1.0 / (total * as_tracer(d))))


def rfftfreq(n: Any, d: Any = 1.0, device: Any = None) -> Tracer:
    count = size_value(n, "n")
    i = iota(I64, (count // 2 + 1,), 0)
    return cast(Tracer, lax.convert(i, np.dtype(np.float64))
                * (1.0 / (lax.dim_value(count) * as_tracer(d))))


def _shift(x: Any, axes: Any, inverse: bool) -> Tracer:
    v = as_tracer(x)
    chosen = tuple(range(v.ndim)) if axes is None else \
        (tuple(axes) if isinstance(axes, (tuple, list)) else (axes,))
    shifts = []
    for ax in chosen:
        size = lax.dim_value(v.aval.shape[int(ax) % v.ndim])
        shifts.append(-(size // 2) if inverse else size // 2)
    return roll(v, tuple(shifts), chosen)


def fftshift(x: Any, axes: Any = None) -> Tracer:
    return _shift(x, axes, inverse=False)


def ifftshift(x: Any, axes: Any = None) -> Tracer:
    return _shift(x, axes, inverse=True)


FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.fft.fft: fft, np.fft.ifft: ifft, np.fft.rfft: rfft, np.fft.irfft: irfft,
    np.fft.fftn: fftn, np.fft.ifftn: ifftn, np.fft.fft2: fft2, np.fft.ifft2: ifft2,
    np.fft.fftshift: fftshift, np.fft.ifftshift: ifftshift, np.fft.rfftn: rfftn,
    np.fft.irfftn: irfftn, np.fft.rfft2: rfft2, np.fft.irfft2: irfft2,
}
#: Called with sizes, not arrays (NumPy does not dispatch them): stand-ins for any call.
CREATION: dict[Callable[..., Any], Callable[..., Any]] = {
    np.fft.fftfreq: fftfreq, np.fft.rfftfreq: rfftfreq,
}
