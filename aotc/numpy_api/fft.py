"""``np.fft``: complex and real transforms of any length and over several axes, their
frequencies and shifts.

NumPy calls pocketfft (mixed radix, C). Here a transform along the last axis is one of
two programs, chosen at run time by the length ``N``:

- a length whose prime factors are all at most 31 (:data:`SMOOTH`): a mixed-radix
  Stockham FFT (:func:`_stockham`), a pass per factor, radix 4 before 2;
- any other length: Bluestein's chirp-z algorithm, the length-``N`` DFT as a cyclic
  convolution of length ``M >= 2N - 1`` (a power of two) done with three of the above.
  Chirp angles are ``pi (k^2 mod 2N) / N``, exact in the integers before rounding.

``rfft`` of an even length is one complex transform of half the length (the even and
odd samples as real and imaginary parts), then untangled; an odd length takes the full
complex transform. Both are one transform in the code, of a length bound at run time.

Other axes are moved last and back; ``n`` crops or zero-pads the axis; ``norm`` is
``"backward"`` (``ifft`` divides by ``N``), ``"ortho"`` or ``"forward"``. As NumPy 2,
float32 and complex64 stay single precision (complex64 results), everything else is
complex128. ``irfft`` reads the Hermitian half as pocketfft does (the imaginary parts of
the zero and Nyquist terms are ignored).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import lax
from ..bind import size_value, slice_
from ..ops.shape import update_slice_p
from ..shapes import DimExpr, relu, size
from ..tracer import Tracer, as_tracer, bind_dim, current
from .complexes import make_complex, real
from .creation import iota
from .functions_base import where
from .histograms import raise_if
from .joining import concatenate, moveaxis, roll, take
from .statistics import clip
from .ufuncs import apply_ufunc

I64 = np.dtype(np.int64)
#: ``stage(buffer, src, dst, span) -> (buffer, span)``: one pass of :func:`_stockham`.
Stage = Callable[[Any, Any, Any, Any], tuple[Any, Any]]
NORMS = (None, "backward", "ortho", "forward")


def _u(ufunc: np.ufunc, *args: Any) -> Tracer:
    return apply_ufunc(ufunc, *args)


def _complex_dtype(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.complex64) if dtype in (np.float32, np.complex64) else \
        np.dtype(np.complex128)


def _unit_roots(t: Tracer, period: Tracer, sign: int, dtype: np.dtype) -> Tracer:
    """``exp(sign * 2 pi i t / period)`` for the integers ``t``, each computed directly."""
    part = np.dtype(np.float32 if dtype == np.complex64 else np.float64)
    angle = lax.convert(t, np.dtype(np.float64)) * (sign * 2 * np.pi) / lax.convert(
        period, np.dtype(np.float64))
    return make_complex(lax.convert(_u(np.cos, angle), part),
                        lax.convert(_u(np.sin, angle), part), dtype)


def _at(buffer: Tracer, i: Any) -> Tracer:
    """``buffer[i]`` for an index the transform computed itself, in range by construction:
    no bounds check or negative wrap in the innermost loops (the bound size is still
    clamped into the buffer)."""
    start = bind_dim(as_tracer(i), buffer.aval.shape[0] - 1)
    return lax.reshape(lax.slice_(buffer, (start,), (1,), (DimExpr.const(1),)), ())


def _put(buffer: Tracer, i: Any, value: Any) -> Tracer:
    """``buffer[i] = value`` for an index in range by construction (see :func:`_at`)."""
    start = bind_dim(as_tracer(i), buffer.aval.shape[0] - 1)
    item = lax.reshape(lax.convert(as_tracer(value), buffer.dtype), (DimExpr.const(1),))
    return lax.bind1(update_slice_p, buffer.atom, item.atom, start=(start,), step=(1,))


#: The prime factors a length may have for a Stockham transform (a pass of radix ``p``
#: costs about ``p`` complex multiply-adds per element; Bluestein's three transforms of
#: up to ``4N`` cost more than that up to about these).
SMOOTH = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31)
#: Radices whose butterflies are unrolled, with their roots as constants; the first that
#: divides what is left of ``N`` takes the pass (4 before 2: half as many passes).
UNROLLED = (4, 2, 3, 5)
#: The radices of a power of two (Bluestein's length): 2 takes the pass 4 does not divide.
POWERS_OF_TWO = (4, 2)


def _smooth(n: Tracer) -> Tracer:
    """bool: ``n`` (positive) has no prime factor beyond :data:`SMOOTH`."""
    rest: Any = n
    for p in SMOOTH:
        rest = lax.while_loop(lambda r, p=p: r % p == 0, lambda r, p=p: r // p, rest)
    return _u(np.equal, rest, 1)


def _stockham(x: Tracer, sign: int, n: Tracer | None = None,
              radices: tuple[int, ...] = UNROLLED, looping: bool = True) -> Tracer:
    """The unnormalized DFT (``sign`` -1) or its inverse (+1) of the first ``n`` elements
    (prime factors in :data:`SMOOTH`; the whole last axis by default) along the last
    axis. Elements from ``n`` on come out as garbage (Bluestein's padding, never read).
    ``radices`` and ``looping`` (the stage for larger primes) limit the stages emitted
    to those ``n`` can need: Bluestein's powers of two take only 4 and 2.

    A Stockham pass per factor ``p`` of ``N``, so no digit reversal. With ``L`` the span
    done, ``g`` a group and ``k < L``, ``y[g p L + k + t L] = sum_q x[g L + k + q N/p]
    w^(q k N/(p L)) r^(q t)``, where ``w = exp(sign 2 pi i / N)`` and ``r = w^(N/p)``:
    twiddles from a table of ``N`` roots (each computed directly: error ``O(eps log N)``,
    as pocketfft's), then a DFT of length ``p``. Radices of :data:`UNROLLED` have their
    butterfly unrolled with constant roots; a larger prime loops over its terms, each
    twiddle and root in one lookup.

    Scalar loops (row, pass, group, element) that compile to scalar machine code:
    whole-array passes of gathers wrote five temporaries per pass and ran 3x slower. The
    passes go back and forth between the two halves of one flat buffer, so loop-carried
    arrays never swap (a swap copies) and each butterfly is emitted once."""
    shape = x.aval.shape
    length = shape[-1]
    rows, count = size(shape[:-1]), size(shape)
    flat = lax.reshape(x, (count,))
    buffer = concatenate([flat, flat])
    total, width = lax.dim_value(count), lax.dim_value(length)
    n = width if n is None else n
    table = _unit_roots(iota(I64, (length,), 0), n, sign, x.dtype)
    zero = x.dtype.type(0)

    def passes(p: Any, butterfly: Callable[..., Any]) -> Stage:
        """A pass of radix ``p``: ``butterfly(buffer, read, write, m, k, span, stride)``
        for every element ``k`` of every group (``m = N/p`` apart its inputs, ``span``
        apart its outputs; ``stride`` steps the twiddle table)."""
        def stage(buffer: Any, src: Any, dst: Any, span: Any) -> tuple[Any, Any]:
            m = n // p
            stride = m // span

            def group(g: Any, buffer: Any) -> Any:
                def element(k: Any, buffer: Any) -> Any:
                    read, write = src + g * span + k, dst + g * p * span + k
                    return butterfly(buffer, read, write, m, k, span, stride)
                return lax.fori_loop(0, span, element, buffer)

            return lax.fori_loop(0, m // span, group, buffer), span * p
        return stage

    def unrolled(p: int) -> Stage:
        roots = [[np.exp(sign * 2j * np.pi * (q * t % p) / p) for q in range(p)]
                 for t in range(p)]

        def butterfly(buffer: Any, read: Any, write: Any, m: Any, k: Any, span: Any,
                      stride: Any) -> Any:
            terms = [_at(buffer, read)] + [_at(buffer, read + q * m) * _at(table, q * k * stride)
                                           for q in range(1, p)]
            for t in range(p):
                acc = terms[0]
                for q in range(1, p):
                    root = roots[t][q]
                    acc = acc + terms[q] if root == 1 else acc - terms[q] if root == -1 \
                        else acc + terms[q] * root
                buffer = _put(buffer, write + t * span, acc)
            return buffer
        return passes(p, butterfly)

    def looped(buffer: Any, src: Any, dst: Any, span: Any) -> tuple[Any, Any]:
        rest = n // span
        p = lax.while_loop(lambda p: rest % p != 0, lambda p: p + 1, np.int64(2))

        def butterfly(buffer: Any, read: Any, write: Any, m: Any, k: Any, span: Any,
                      stride: Any) -> Any:
            def output(t: Any, buffer: Any) -> Any:
                step = (k + t * span) * stride  # below N

                def term(q: Any, carry: Any) -> Any:
                    acc, at = carry
                    acc = acc + _at(buffer, read + q * m) * _at(table, at)
                    at = at + step
                    return acc, where(at >= n, at - n, at)

                acc, _ = lax.fori_loop(0, p, term, (zero, np.int64(0)))
                return _put(buffer, write + t * span, acc)

            return lax.fori_loop(0, p, output, buffer)

        return passes(p, butterfly)(buffer, src, dst, span)

    stages = [unrolled(p) for p in radices] + ([looped] if looping else [])
    tested = radices if looping else radices[:-1]  # the last stage takes what none divides

    def stage(buffer: Any, src: Any, dst: Any, span: Any) -> tuple[Any, Any]:
        rest = n // span
        which: Any = np.int64(len(stages) - 1)
        for i, p in reversed(list(enumerate(tested))):
            which = where(rest % p == 0, np.int64(i), which)
        return lax.switch(which, stages, buffer, src, dst, span)

    def row(r: Any, state: Any) -> Any:
        def one_pass(inner: Any) -> Any:
            buffer, span, side = inner
            src = side * total + r * width
            dst = (1 - side) * total + r * width
            buffer, span = stage(buffer, src, dst, span)
            return buffer, span, 1 - side

        buffer, _, side = lax.while_loop(lambda inner: inner[1] < n, one_pass,
                                         (state[0], np.int64(1), np.int64(0)))
        return buffer, side

    buffer, side = lax.fori_loop(0, lax.dim_value(rows), row, (buffer, np.int64(0)))
    halves = lax.reshape(buffer, (DimExpr.const(2), count))
    return lax.reshape(halves[side], shape)


def _power_of_two_above(count: Tracer) -> Tracer:
    """The least power of two ``>= count`` (a positive int64): through ``log2``,
    corrected where it rounded."""
    guess = _u(np.left_shift, np.int64(1), lax.convert(
        _u(np.ceil, _u(np.log2, lax.convert(count, np.dtype(np.float64)))), I64))
    guess = where(guess < count, guess * 2, guess)
    return where(_u(np.logical_and, guess > 1, guess // 2 >= count), guess // 2, guess)


def _bluestein(x: Tracer, sign: int) -> Tracer:
    """The same transform for any length ``N``, as a cyclic convolution of power-of-two
    length ``M >= 2N - 1``, in arrays of ``4N > M`` elements (a size must be a
    polynomial of the shapes; ``M`` is only known at run time)."""
    length = x.aval.shape[-1]
    n = lax.dim_value(length)
    size = _power_of_two_above(2 * n - 1)
    k = iota(I64, (length,), 0)
    chirp = _unit_roots((k * k) % (2 * n), 2 * n, sign, x.dtype)  # k^2 mod 2N: exact
    back = _u(np.conjugate, chirp)
    m = iota(I64, (4 * length,), 0)
    inside = m < n
    a = where(inside, take(x * chirp, _u(np.minimum, m, n - 1), axis=-1), 0)
    wrapped = _u(np.logical_and, m > size - n, m < size)  # b[M - k] = b[k]
    b = where(_u(np.logical_or, inside, wrapped),
              take(back, clip(where(inside, m, size - m), 0, n - 1)), 0)
    # Both forward transforms in one call (one copy of the code; b's once per row).
    pair = _stockham(concatenate([a[None], lax.broadcast_to(b, a.aval.shape)[None]]), -1,
                     size, POWERS_OF_TWO, looping=False)
    convolved = _stockham(pair[0] * pair[1], 1, size, POWERS_OF_TWO, looping=False)
    return take(convolved, k, axis=-1) * chirp / lax.convert(size, x.dtype)


def _transform(x: Tracer, sign: int) -> Tracer:
    return lax.cond(_smooth(lax.dim_value(x.aval.shape[-1])), lambda v: _stockham(v, sign),
                    lambda v: _bluestein(v, sign), x)


def _resized(x: Tracer, n: Any) -> Tracer:
    """``x`` cropped or zero-padded to ``n`` along its last axis."""
    length = x.aval.shape[-1]
    if n is None:
        size = length
    else:
        size = size_value(n, "n")
        if size.is_const and size.value < 1:
            raise current().error(f"Invalid number of FFT data points ({size.value}) "
                                  "specified.")
        size = relu(size)  # below 1 raises just below, at run time
    raise_if(lax.dim_value(size) < 1, "Invalid number of FFT data points specified.")
    if size == length:
        return x
    i = iota(I64, (size,), 0)
    last = lax.dim_value(length) - 1
    return where(i <= last, take(x, clip(i, 0, _u(np.maximum, last, 0)), axis=-1), 0)


def _scaled(y: Tracer, norm: Any, inverse: bool, n: Tracer) -> Tracer:
    """The transform ``y`` of length ``n`` normalized as ``norm`` asks."""
    if norm not in NORMS:
        raise current().error(f'Invalid norm value {norm}; should be "backward",'
                              '"ortho" or "forward".')
    count = lax.convert(n, np.dtype(np.float64))
    if norm == "ortho":
        factor = 1 / _u(np.sqrt, count)
    elif (norm == "forward") != inverse:
        factor = 1 / count
    else:
        return y
    return y * lax.convert(factor, y.dtype)


def _along(a: Any, axis: Any, body: Callable[[Tracer], Tracer]) -> Tracer:
    x = as_tracer(a)
    if x.ndim == 0:
        raise current().error("np.fft: the input must be at least one-dimensional")
    ax = int(axis) % x.ndim
    return moveaxis(body(moveaxis(x, ax, -1)), -1, ax)


def _complex_fft(a: Any, n: Any, axis: Any, norm: Any, inverse: bool) -> Tracer:
    def body(x: Tracer) -> Tracer:
        x = _resized(lax.convert(x, _complex_dtype(x.dtype)), n)
        return _scaled(_transform(x, 1 if inverse else -1), norm, inverse,
                       lax.dim_value(x.aval.shape[-1]))
    return _along(a, axis, body)


def fft(a: Any, n: Any = None, axis: Any = -1, norm: Any = None, out: Any = None) -> Tracer:
    return _complex_fft(a, n, axis, norm, inverse=False)


def ifft(a: Any, n: Any = None, axis: Any = -1, norm: Any = None, out: Any = None) -> Tracer:
    return _complex_fft(a, n, axis, norm, inverse=True)


def rfft(a: Any, n: Any = None, axis: Any = -1, norm: Any = None, out: Any = None) -> Tracer:
    x = as_tracer(a)
    if x.dtype.kind == "c":
        raise current().error("np.fft.rfft: the input must be real",
                              hint="use np.fft.fft for complex input")

    def body(v: Tracer) -> Tracer:
        dtype = _complex_dtype(v.dtype)
        v = _resized(lax.convert(v, np.dtype(np.float32 if dtype == np.complex64
                                             else np.float64)), n)
        length = v.aval.shape[-1]
        count = lax.dim_value(length)
        even = _u(np.equal, _u(np.bitwise_and, count, 1), 0)
        # One complex transform (each is seconds of LLVM): of N/2 samples packed in
        # pairs when N is even, else of all N; its length is bound when it runs.
        i, last = iota(I64, (length,), 0), count - 1
        packed = make_complex(take(v, _u(np.minimum, 2 * i, last), axis=-1),
                              take(v, _u(np.minimum, 2 * i + 1, last), axis=-1), dtype)
        used = bind_dim(where(even, count // 2, count), length)
        z = slice_(where(even, packed, lax.convert(v, dtype)), (DimExpr.const(0),) * v.ndim,
                   (1,) * v.ndim, (*v.aval.shape[:-1], used))
        zf = _transform(z, -1)
        k = iota(I64, (length // 2 + 1,), 0)
        direct = take(zf, _u(np.minimum, k, lax.dim_value(used) - 1), axis=-1)  # odd N
        y = where(even, _untangled(zf, k, count, dtype), direct)
        return _scaled(y, norm, False, count)
    return _along(x, axis, body)


def _untangled(zf: Tracer, k: Tracer, n: Tracer, dtype: np.dtype) -> Tracer:
    """The real transform ``X[k]``, ``k <= N/2``, of an even length ``N`` from the
    transform ``Z`` of its ``N/2`` samples packed as ``z = v[0::2] + i v[1::2]``:
    ``X[k] = (Z[k] + conj Z[-k]) / 2 - i w^k (Z[k] - conj Z[-k]) / 2`` with
    ``w = exp(-2 pi i / N)`` (indices of ``Z`` mod ``N/2``; an odd ``N`` gives garbage)."""
    half = _u(np.maximum, n // 2, 1)
    ahead = take(zf, _u(np.remainder, k, half), axis=-1)
    mirror = _u(np.conjugate, take(zf, _u(np.remainder, half - k, half), axis=-1))
    even_part, odd_part = (ahead + mirror) * 0.5, (ahead - mirror) * -0.5j
    return even_part + _unit_roots(k, n, -1, dtype) * odd_part


def irfft(a: Any, n: Any = None, axis: Any = -1, norm: Any = None, out: Any = None) -> Tracer:
    def body(x: Tracer) -> Tracer:
        x = lax.convert(x, _complex_dtype(x.dtype))
        given = x.aval.shape[-1]
        size = relu(2 * (given - 1) if n is None else size_value(n, "n"))
        total = lax.dim_value(size)
        raise_if(total < 1, "Invalid number of FFT data points specified.")
        half = _resized(x, None if n is None else total // 2 + 1)
        count = lax.dim_value(half.aval.shape[-1])
        k = iota(I64, (size,), 0)
        direct = take(half, _u(np.minimum, k, count - 1), axis=-1)
        edge = _u(np.logical_or, k == 0, 2 * k == total)  # real terms: imaginary ignored
        direct = where(edge, lax.convert(real(direct), x.dtype), direct)
        mirrored = _u(np.conjugate, take(half, clip(total - k, 0, count - 1),
                                         axis=-1))
        spectrum = where(k < count, direct, where(total - k < count, mirrored, 0))
        return real(_scaled(_transform(spectrum, 1), norm, True, total))
    return _along(a, axis, body)


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
    return lax.convert(signed, np.dtype(np.float64)) * (1.0 / (total * as_tracer(d)))


def rfftfreq(n: Any, d: Any = 1.0, device: Any = None) -> Tracer:
    count = size_value(n, "n")
    i = iota(I64, (count // 2 + 1,), 0)
    return lax.convert(i, np.dtype(np.float64)) * (1.0 / (lax.dim_value(count) * as_tracer(d)))


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
