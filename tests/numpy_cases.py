"""The differential catalog: kernels over every supported operation, with inputs.

Each case is run by NumPy itself (the kernel is plain Python) and by aotc: the IR
interpreter (``test_trace.py``), the in-process JIT (``test_compiled.py``) and the built
extension. Inputs cover edge values (NaN, ±inf, -0.0, integer extremes), empty and
size-1 arrays, and non-contiguous, reversed and transposed views.
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from aotc.interpret import eval_program
from aotc.ir import Program
from aotc.ops.elementwise import (
    BINARY_UFUNCS,
    COMPARISON_UFUNCS,
    NO_COMPLEX_KERNEL,
    PREDICATE_UFUNCS,
    UNARY_UFUNCS,
)

DTYPES = [np.dtype(c) for c in ["?", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f4", "f8",
                                "c8", "c16"]]
CODE = {np.dtype(c): s for c, s in [("?", "b1"), ("i1", "i1"), ("i2", "i2"), ("i4", "i4"),
                                    ("i8", "i8"), ("u1", "u1"), ("u2", "u2"), ("u4", "u4"),
                                    ("u8", "u8"), ("f4", "f4"), ("f8", "f8"), ("c8", "c8"),
                                    ("c16", "c16")]}

#: Functions computed by libm here and by NumPy's own (often SIMD) code: they may
#: differ by a few ulp. glibc's libm is < 1 ulp and NumPy's SIMD paths are documented
#: at <= 4 ulp (float32 up to ~4 ulp for sin/cos), so 8 ulp is a safe common bound.
TRANSCENDENTAL = {"exp", "exp2", "log", "log2", "log10", "log1p", "expm1", "sin", "cos",
                  "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh",
                  "arccosh", "arctanh", "cbrt", "pow", "arctan2", "hypot"}
TRANSCENDENTAL_ULPS = 8
#: Complex functions and their norm-wise ulp bounds: glibc's cexp, clog, csin... (which
#: NumPy calls) against straight-line kernels (measured <= 3 ulp; complex64 sqrt, computed
#: in float64, is within 2 of glibc's float csqrtf). ``abs`` is NumPy's SIMD formula bit
#: for bit, but NumPy itself switches to C's hypot for negative strides (up to 1 ulp
#: apart). Everything else (+ - * /, conj, sign, comparisons...) compares bit for bit.
#: ``pow`` is ``exp(b log a)`` in glibc, with an error that grows with ``|b log a|`` on
#: both sides: it has its own tests (``tests/codegen/test_complexmath.py``) and moderate
#: catalog cases (``numpy_cases_complex.py``).
COMPLEX_ULPS = {**dict.fromkeys(["exp", "exp2", "log", "log2", "log10", "log1p", "expm1", "sin",
                                 "cos", "sinh", "cosh", "sqrt"], TRANSCENDENTAL_ULPS),
                "abs": 1}
#: NumPy's complex64 product is fused (FMA) for every layout but negative strides, which
#: take its unfused scalar loop (complex128 is fused for all of them): the reversed layout
#: is left out for these, as ``a * b`` can then differ in the last bit or be NaN for -inf.
FUSED_ONLY_FORWARD = {"mul", "square"}
#: NumPy's own fmax/fmin loops return either operand for fmax(0.0, -0.0) (the SIMD body
#: and the scalar tail differ), so the sign of a zero result is not compared for them.
ZERO_SIGN_UNSPECIFIED = {"fmax", "fmin"}


@dataclass
class Case:
    name: str
    fn: Callable[..., Any]
    signature: str
    inputs: list[tuple[Any, ...]]
    ulps: int = 0  # 0: results must be bit-identical (NaN equal to NaN, -0.0 to -0.0)
    tags: set[str] = field(default_factory=set)  # "zero_sign_unspecified": ±0 compare equal


def edge_values(dtype: np.dtype, rng: np.random.Generator, n: int = 24) -> np.ndarray:
    """A 1-D array of ``n`` values: the dtype's special values, then random ones."""
    if dtype.kind == "b":
        return rng.integers(0, 2, n).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        special = [0, 1, 2, 3, 7, info.max, info.min, info.max - 1]
        if dtype.kind == "i":
            special += [-1, -2, -3, -7, info.min + 1]
        rand = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
        small = rng.integers(max(info.min, -9), 10, n).astype(dtype)
        return np.concatenate([np.array(special, dtype), rand, small])[:max(n, len(special))]
    if dtype.kind == "c":  # special parts in both places, then random values
        parts = edge_values(np.dtype(f"f{dtype.itemsize // 2}"), rng, n)
        special = np.array([complex(r, i) for r in parts[:18:3] for i in parts[:18:2]], dtype)
        rand = rng.standard_normal(n) * 3 + 1j * rng.standard_normal(n) * 3
        real, imaginary = np.zeros(len(parts), dtype), np.zeros(len(parts), dtype)
        real.real, imaginary.imag = parts, parts  # exactly (1j * inf has a NaN real part)
        return np.concatenate([special, rand.astype(dtype), real, imaginary])
    special = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, np.inf, -np.inf, np.nan, 1e-30, -3.5,
               np.finfo(dtype).max, np.finfo(dtype).tiny, 0.7, 1.5, 2.5, -2.5]
    rand = rng.standard_normal(n) * 3
    return np.concatenate([np.array(special, dtype), rand.astype(dtype)])


def _layouts(a: np.ndarray) -> list[np.ndarray]:
    """The same data as contiguous, reversed, strided, empty and size-1 arrays."""
    return [a, a[::-1], a[::2], a[:0], a[:1]]


def _forward_layouts(a: np.ndarray) -> list[np.ndarray]:
    """:func:`_layouts` without the reversed one (see ``FUSED_ONLY_FORWARD``)."""
    return [a, a[::2], a[:0], a[:1]]


def _ufunc_cases() -> list[Case]:
    rng = np.random.default_rng(0)
    cases = []
    tables = [(UNARY_UFUNCS, 1), (PREDICATE_UFUNCS, 1), (BINARY_UFUNCS, 2),
              (COMPARISON_UFUNCS, 2)]
    for table, arity in tables:
        for name, ufunc in table.items():
            for dtype in DTYPES:
                try:
                    loop = ufunc.resolve_dtypes((dtype,) * arity + (None,))
                except (TypeError, ValueError):
                    continue
                if loop[0] != dtype or (dtype.kind == "c" and (name in NO_COMPLEX_KERNEL
                                                              or name == "pow")):
                    continue  # run each loop once, at its own dtype (refusals: elsewhere)
                a = edge_values(dtype, rng)
                code = CODE[dtype]
                layouts = _layouts
                if dtype == np.dtype("c8") and name in FUSED_ONLY_FORWARD:
                    layouts = _forward_layouts
                if arity == 1:
                    fn = _unary(ufunc)
                    inputs = [(x,) for x in layouts(a)]
                    sig = f"({code}[:])"
                else:
                    fn = _binary(ufunc)
                    b = np.roll(edge_values(dtype, rng), 3)[: len(a)]
                    if name in ("left_shift", "right_shift", "pow") and dtype.kind in "iu":
                        b = np.abs(b % 70).astype(dtype)  # keep NumPy itself defined
                    if dtype.kind in "fc":  # every pair of signed zeros: -0.0 + 0.0 ...
                        zeros = [0.0, -0.0, 0.0, -0.0]
                        if dtype.kind == "c":
                            zeros = [complex(r, i) for r in zeros for i in zeros]
                        a = np.concatenate([a, np.array(zeros, dtype)])
                        b = np.concatenate([b, np.array(zeros[1:] + zeros[:1], dtype)])
                    inputs = [(x, y) for x, y in zip(layouts(a), layouts(b), strict=True)]
                    sig = f"({code}[:], {code}[:])"
                ulps = TRANSCENDENTAL_ULPS if name in TRANSCENDENTAL and dtype.kind == "f" else 0
                if dtype.kind == "c":
                    ulps = COMPLEX_ULPS.get(name, 0)
                tags = {"ufunc"} | ({"zero_sign_unspecified"} if name in ZERO_SIGN_UNSPECIFIED
                                    else set())
                cases.append(Case(f"{name}_{code}", fn, sig, inputs, ulps, tags))
    return cases


def _unary(ufunc: np.ufunc) -> Callable[[Any], Any]:
    return lambda x: ufunc(x)


def _binary(ufunc: np.ufunc) -> Callable[[Any, Any], Any]:
    return lambda x, y: ufunc(x, y)


def _mats(dtype: str, rng: np.random.Generator) -> list[np.ndarray]:
    a = (rng.standard_normal((5, 7)) * 4).astype(dtype)
    return [a, a.T.copy().T, a[::-1, ::2], np.asfortranarray(a), a[:0], a[:1, :1],
            np.ascontiguousarray(a.T)]


def _composite_cases() -> list[Case]:
    rng = np.random.default_rng(1)
    v = rng.standard_normal(33)
    vecs = [v, v[::-1], v[::3], v[:0], v[:1]]
    mats = _mats("f8", rng)
    matsf = _mats("f4", rng)
    imats = [(m * 10).astype("i8") for m in mats] + [np.array([[np.iinfo("i8").max, 1]])]
    c = []

    def add(name, fn, sig, inputs, ulps=0):
        c.append(Case(name, fn, sig, inputs, ulps))

    add("rosen", lambda x: np.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2),
        "f8(f8[:])", [(x,) for x in vecs], ulps=64)  # summation order differs
    add("axpy", lambda a, x, y: a * x + y, "f8[:](f8, f8[:], f8[:])",
        [(2.5, x, x * 2) for x in vecs])
    add("scalar_mix_f32", lambda x, a: x * a + 1, "f4[:](f4[:], f4)",
        [(x.astype("f4"), np.float32(0.5)) for x in vecs])
    add("weak_python_scalars", lambda x: (x * 3 + 0.5) // 2 - (x > 0), "(f4[:])",
        [(x.astype("f4"),) for x in vecs])
    add("int8_wraparound", lambda x: x * 100 + 27, "(i1[:])",
        [(np.arange(-128, 128, dtype="i1"),), (np.arange(-128, 128, dtype="i1")[::7],)])
    add("mixed_promotion", lambda x, y: x + y, "(i4[:], f4[:])",
        [(np.arange(5, dtype="i4"), np.linspace(0, 1, 5, dtype="f4"))])
    add("u8_minus_i8", lambda x, y: x - y, "(u1[:], i1[:])",
        [(np.arange(250, 255, dtype="u1"), np.arange(-2, 3, dtype="i1"))])
    add("broadcast_row_col", lambda x, r, k: x * r + k[:, None], "(f8[:, :], f8[:], f8[:])",
        [(m, np.arange(m.shape[1], dtype="f8"), np.arange(m.shape[0], dtype="f8"))
         for m in mats])
    add("newaxis_outer", lambda x, y: x[:, np.newaxis] - y[np.newaxis, :], "(f8[:], f8[:])",
        [(x, x[::-1] * 2) for x in vecs])
    add("where_select", lambda x: np.where(x > 0, x, 0.1 * x), "(f8[:, :])",
        [(m,) for m in mats])
    add("where_scalar_branches", lambda x: np.where(np.isnan(x), -1.0, x), "(f8[:])",
        [(np.array([1.0, np.nan, -0.0, np.inf]),)])
    for red in ["sum", "prod", "max", "min", "mean", "any", "all"]:
        for axis in [None, 0, 1, -1, (0, 1)]:
            f = _reduction(red, axis, keepdims=False)
            nonempty = [m for m in mats if m.size] if red in ("max", "min") else mats
            add(f"{red}_axis{axis}", f, "(f8[:, :])", [(m,) for m in nonempty], ulps=64)
            add(f"{red}_axis{axis}_f32_keep", _reduction(red, axis, keepdims=True),
                "(f4[:, :])", [(m,) for m in matsf if m.size or red not in ("max", "min")],
                ulps=64)
        add(f"{red}_int", _reduction(red, 0, False), "(i8[:, :])",
            [(m,) for m in imats if m.size or red not in ("max", "min")], ulps=4)
    # initial= folds a start value in; it makes an empty max/min that value, not an error.
    add("reductions_initial", lambda x, k: (
        x.max(initial=0.5), np.min(x, axis=0, initial=0.2), x.sum(initial=10.0),
        np.prod(x, axis=1, initial=2.0, keepdims=True), k.max(initial=-5),
        np.max(k, initial=2.7), np.sum(k, initial=3)), "(f8[:, :], i8[:])",
        [(m, np.arange(-3, m.shape[0] - 3)) for m in mats], ulps=64)
    add("reshape_in_fortran_order", lambda x: (x.reshape(-1, order="F"), x.ravel("F"),
                                               np.reshape(x, (x.shape[1], -1), order="F")),
        "(f8[:, :])", [(m,) for m in mats])
    add("written_outs", _written_outs, "(f4[:, :], b1[:, :])",
        [(m.astype("f4"), m > 0.5) for m in mats if m.shape[0] > 0 and m.shape[1] > 0],
        ulps=64)  # (sums, dot and einsum add in another order)
    add("sum_small_ints_accumulate_in_i64", lambda x: np.sum(x), "(i1[:])",
        [(np.full(300, 100, dtype="i1"),)])
    add("sum_bool", lambda x: np.sum(x > 0, axis=0), "(f8[:, :])", [(m,) for m in mats])
    add("reduce_nan", lambda x: (np.max(x), np.min(x), np.sum(x)), "(f8[:])",
        [(np.array([1.0, np.nan, 3.0]),), (np.array([-np.inf, 2.0]),)])
    add("method_chain", lambda x: x.T.sum(axis=1).astype(np.float32), "(f8[:, :])",
        [(m,) for m in mats], ulps=4)
    add("slices_steps", lambda x: (x[::-1], x[1::2], x[-3:], x[:-2:3], x[5:1:-2], x[100:]),
        "(f8[:])", [(x,) for x in vecs])
    # Steps and bounds beyond int64 (NumPy clamps them: the same items); x[1::2**70] was a
    # JITLink assertion, x[::2**63 - 1] "array is too big".
    add("slices_beyond_int64", lambda x: (x[1::2**70], x[::2**63 - 1], x[::-(2**63)],
                                          x[2**70:], x[-2**70:], x[:-2**80:-1]),
        "(f8[:])", [(x,) for x in vecs])
    add("index_2d", lambda x: (x[0], x[-1, 1:], x[:, 2], x[1:3, ::-1].T, x[..., 0]),
        "(f8[:, :])", [(m,) for m in mats if m.shape[0] >= 3 and m.shape[1] >= 3])
    add("reshape_ravel", lambda x: (x.reshape(-1), x.ravel()[::2],
                                    x.reshape(x.shape[1], x.shape[0]), x.reshape(1, -1, 1)),
        "(f8[:, :])", [(m,) for m in mats if m.size])
    add("transpose_3d", lambda x: np.transpose(x, (2, 0, 1)) * 2, "(f8[:, :, :])",
        [(rng.standard_normal((2, 3, 4)),), (rng.standard_normal((4, 3, 2))[::-1, :, ::2],)])
    add("squeeze_expand", lambda x: np.expand_dims(np.squeeze(x[:1], axis=0), 0) + 1, "(f8[:, :])",
        [(m,) for m in mats if m.size])
    add("shape_arith", lambda x: np.sum(x) / x.shape[0] + x.size, "(f8[:, :])",
        [(m,) for m in mats if m.size], ulps=8)  # summation order
    add("fixed_and_named_dims", lambda p, w: (p * w).sum(axis=1), "(f8[:, 3], f8[3])",
        [(rng.standard_normal((6, 3)), np.array([1.0, 2.0, 3.0]))])
    add("tuple_return_mixed", lambda x: (x.max(), x - x.mean(), np.abs(x).astype(np.int32)),
        "(f8[:])", [(x,) for x in vecs if x.size], ulps=16)
    add("scalar_only", lambda a, b: a * b + math.pi, "(f8, f8)", [(2.0, 3.0), (np.nan, 1.0)])
    add("int_scalar_ops", lambda a, b: (a // b, a % b, a ** 2), "(i8, i8)",
        [tuple(map(np.int64, p)) for p in
         [(7, 2), (-7, 2), (7, -2), (5, 0), (np.iinfo("i8").min, -1)]])
    # np.power with a zero-stride (rank-0) exponent takes x * x for 2.0 and sqrt for 0.5
    # (sqrt(-0.0) = -0.0, sqrt(-inf) = NaN); NumPy scalars' ``**`` is C pow throughout.
    for code in ("f8", "f4"):
        xs = edge_values(np.dtype(code), rng)
        add(f"power_rank0_exponent_{code}",
            lambda x, y: (np.power(x, 0.5), np.power(x, 2.0), x ** y, np.power(x, y), x ** 0.5,
                          y ** 0.5, np.power(y, 0.5), y ** y, np.power(y, y)),
            f"({code}[:], {code})",
            [(xs, np.dtype(code).type(y)) for y in (0.5, 2.0, 3.0, -1.0, -0.0, -np.inf)]
            + [(xs[::-3], np.dtype(code).type(0.5))], ulps=TRANSCENDENTAL_ULPS)
    add("deg2rad_int", lambda x: np.deg2rad(x), "(i4[:])", [(np.arange(-3, 4, dtype="i4"),)],
        ulps=1)
    add("float_to_int_convert", lambda x: x.astype(np.int32), "(f8[:])",
        [(np.array([0.5, -0.5, 1.9, -1.9, 1e9]),)])
    add("bool_arith", lambda x, y: (x + y, x * y, ~x, x ^ y, x & y), "(b1[:], b1[:])",
        [(np.array([True, False, True, False]), np.array([True, True, False, False]))])
    return c


def _written_outs(x: Any, m: Any) -> Any:
    """``out=`` of ufuncs, functions and methods: the result written into the array given
    (a view of another, overlapping the inputs, of a wider dtype, with ``where=``), which
    is returned."""
    y = x.copy()
    shifted = np.add(y[:-1], y[1:], out=y[1:])  # reads the old y, as NumPy does
    rows = np.zeros((2, x.shape[1]))
    for i in range(2):
        np.sum(x * (i + 1), axis=0, out=rows[i])
    wide = np.zeros(x.shape, np.float64)
    np.multiply(x, np.float32(2.0), out=wide)
    kept = np.full(x.shape, -1.0)
    np.sqrt(x, out=kept, where=m)
    clipped = x * 3.0
    np.clip(clipped, 0.0, 1.0, out=clipped)
    quotient, remainder = np.empty_like(x), np.empty_like(x)
    np.divmod(x, 0.3, out=(quotient, remainder))
    column = np.zeros(x.shape[1])
    x.max(axis=0, out=column)
    filled = np.zeros((3,) + x.shape)
    np.add(x, 1.0, out=filled)  # the inputs stretched to out's shape
    outer = np.outer(x[0], x[:, 0], out=np.empty((x.shape[1], x.shape[0]), np.float32))
    gram = np.empty((x.shape[0], x.shape[0]), np.float32)
    np.dot(x, x.T, out=gram)
    sums = np.einsum("ij->j", x, out=np.zeros(x.shape[1], np.float32))
    return y, shifted * 1, rows, wide, kept, clipped, quotient, remainder, column, filled, \
        outer, gram, sums


def _reduction(name: str, axis: Any, keepdims: bool) -> Callable[[Any], Any]:
    fn = getattr(np, name)
    return lambda x: fn(x, axis=axis, keepdims=keepdims)


CASES: list[Case] = _ufunc_cases() + _composite_cases()


def _float_view(a: np.ndarray) -> np.ndarray:
    """A float array's values as real floats (complex: real and imaginary parts)."""
    a = np.ascontiguousarray(a)
    return a.view(a.real.dtype).reshape(a.shape + (2,)) if a.dtype.kind == "c" else a


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


def _show(a: np.ndarray, bad: np.ndarray) -> str:
    index = np.argwhere(bad)[:5]
    values = ", ".join(f"{tuple(map(int, i))}: {a[tuple(i)]!r}" for i in index)
    return f"[{values}{', ...' if bad.sum() > 5 else ''}]"


def assert_same(actual: Any, expected: Any, ulps: int = 0, what: str = "", *,
                rtol: float = 0.0, signed_zero: bool = True) -> None:
    """Equal dtype and shape, and equal values as NumPy defines them.

    Without a tolerance (``ulps == 0`` and ``rtol == 0``) float results must be
    bit-identical: NaN where NaN is (payloads may differ) and the same bit pattern
    everywhere else, so the sign of every zero counts. A tolerance, ``ulps`` units in
    the last place or a relative ``rtol``, admits rounding differences between finite
    values, never between infinities, NaN and numbers, nor the sign of a zero where both
    results are zero (unless ``signed_zero=False``: only for operations whose zero sign
    NumPy itself leaves unspecified). Everything else compares exactly.

    Complex values compare part by part, and a tolerance is norm-wise: relative to the
    element's largest part (``re = 1e-17`` next to ``im = 1.0`` may differ by an ulp of
    1.0), the error measure of complex arithmetic, where a small part is the difference
    of large products.

    This is the one comparison of the test suite (``tests/codegen/data.py`` imports it).
    """
    actual, expected = np.asarray(actual), np.asarray(expected)
    where = f"{what}: " if what else ""
    assert actual.dtype == expected.dtype, f"{where}dtype {actual.dtype} != {expected.dtype}"
    assert actual.shape == expected.shape, f"{where}shape {actual.shape} != {expected.shape}"
    if actual.dtype.kind not in "fc":
        np.testing.assert_array_equal(actual, expected, err_msg=what, strict=True)
        return
    a, e = _float_view(actual), _float_view(expected)
    nan_a, nan_e = np.isnan(a), np.isnan(e)
    bad = nan_a != nan_e
    assert not bad.any(), (f"{where}NaN positions differ at {bad.sum()} values: "
                           f"got {_show(a, bad)}, expected {_show(e, bad)}")
    identical = (_bits(a) == _bits(e)) | nan_a
    if ulps == 0 and rtol == 0:
        if not signed_zero:
            identical |= (a == 0) & (e == 0)
        bad = ~identical
        assert not bad.any(), (f"{where}{bad.sum()} values differ (bit-exact comparison; "
                               f"the sign of zero counts): got {_show(a, bad)}, "
                               f"expected {_show(e, bad)}")
        return
    finite = np.isfinite(a) & np.isfinite(e)
    with np.errstate(all="ignore"):
        diff = np.abs(a.astype("f8") - e.astype("f8"))
        scale = np.maximum(np.abs(a), np.abs(e))
        reference = np.abs(e)
        if actual.dtype.kind == "c":  # norm-wise: the element's largest finite part
            scale = np.where(np.isfinite(scale), scale, 0).max(axis=-1, keepdims=True)
            reference = np.where(np.isfinite(reference), reference, 0).max(axis=-1,
                                                                           keepdims=True)
        if ulps:
            spacing = np.spacing(scale.astype(a.dtype))
            close = diff <= ulps * np.abs(spacing).astype("f8")
        else:
            close = diff <= rtol * reference.astype("f8") + float(np.finfo(e.dtype).tiny)
    zeros = (a == 0) & (e == 0)
    same_zero = zeros & ((np.signbit(a) == np.signbit(e)) | (not signed_zero))
    bad = ~(identical | same_zero | (finite & close & ~zeros))
    tolerance = f"{ulps} ulp" if ulps else f"rtol {rtol:g}"
    assert not bad.any(), (f"{where}{bad.sum()} values differ by more than {tolerance} "
                           f"(or in an infinity or the sign of a zero): got {_show(a, bad)}, "
                           f"expected {_show(e, bad)}")


def assert_all_same(actual: Sequence[Any], expected: Sequence[Any], ulps: int = 0,
                    what: str = "", *, rtol: float = 0.0, signed_zero: bool = True,
                    label: str = "output") -> None:
    """:func:`assert_same` for each of several results, which must be as many."""
    assert len(actual) == len(expected), (f"{what}: {len(actual)} {label}s, expected "
                                          f"{len(expected)}")
    for j, (a, e) in enumerate(zip(actual, expected, strict=True)):
        assert_same(a, e, ulps, f"{what} {label} {j}", rtol=rtol, signed_zero=signed_zero)


#: Copies keep each argument's address modulo this many bytes (vector loops peel by it).
ALIGNMENT = 64


def _byte_span(a: np.ndarray) -> tuple[int, int, int]:
    """The addresses of the first byte ``a`` reaches, of the byte after its last, and of
    its first element."""
    base = a.__array_interface__["data"][0]
    lo = hi = 0
    for s, n in zip(a.strides, a.shape, strict=True):
        lo, hi = (lo + s * (n - 1), hi) if s < 0 else (lo, hi + s * (n - 1))
    return base + lo, base + hi + a.itemsize, base


def copy_arguments(args: Sequence[Any]) -> list[Any]:
    """Private copies of ``args`` in the very same layout, so that a kernel can write into
    them without touching the caller's arrays or another run's copies.

    Each array keeps its strides (negative, zero, gaps between elements, whose bytes are
    copied too), its address modulo :data:`ALIGNMENT` and its writeable flag; arrays
    whose bytes interleave or overlap (``x`` and ``x[::-1]``, or one array passed twice)
    are copied as one block, so they still share memory as the originals do. Anything
    but an array (scalars: immutable) is passed on as it is.
    """
    out = list(args)
    spans = sorted((*_byte_span(a), k) for k, a in enumerate(args)
                   if isinstance(a, np.ndarray) and a.size)
    blocks: list[tuple[int, int, list[tuple[int, int]]]] = []  # (start, end, arguments)
    for lo, hi, data, k in spans:
        if blocks and lo < blocks[-1][1]:
            start, end, members = blocks[-1]
            blocks[-1] = (start, max(end, hi), [*members, (k, data)])
        else:
            blocks.append((lo, hi, [(k, data)]))
    for lo, hi, members in blocks:
        store = np.empty(hi - lo + ALIGNMENT, np.uint8)
        start = (lo - store.__array_interface__["data"][0]) % ALIGNMENT
        block = store[start:start + hi - lo]
        block[...] = np.frombuffer((ctypes.c_uint8 * (hi - lo)).from_address(lo), np.uint8)
        for k, data in members:
            a = args[k]
            out[k] = np.ndarray(a.shape, a.dtype, buffer=block, strides=a.strides,
                                offset=data - lo)
    for k, a in enumerate(args):
        if isinstance(a, np.ndarray):
            if not a.size:  # no bytes to copy, but the same strides
                out[k] = np.ndarray(a.shape, a.dtype, buffer=np.empty(a.itemsize, np.uint8),
                                    strides=a.strides)
            out[k].flags.writeable = a.flags.writeable
    return out


def snapshot(args: Sequence[Any]) -> list[Any]:
    """Plain copies of the array arguments, to compare them with after a call."""
    return [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args]


def overlaps_itself(a: Any) -> bool:
    """Whether two elements of ``a`` share memory (a zero stride over a real axis)."""
    return isinstance(a, np.ndarray) and any(
        s == 0 and n > 1 for s, n in zip(a.strides, a.shape, strict=True))


def first_difference(actual: np.ndarray, expected: np.ndarray) -> tuple[int, ...] | None:
    """The index of the first element (in C order) whose bits differ, NaN equal to any
    NaN; None where there is none. Both must have the same dtype and shape."""
    if actual.dtype.kind in "fc":
        a, e = _float_view(actual), _float_view(expected)
        differ = (_bits(a) != _bits(e)) & ~(np.isnan(a) & np.isnan(e))
        if actual.dtype.kind == "c":
            differ = differ.any(axis=-1)
    else:
        size = actual.dtype.itemsize
        a, e = (np.ascontiguousarray(x).reshape(-1).view(np.uint8).reshape(x.shape + (size,))
                for x in (actual, expected))
        differ = (a != e).any(axis=-1)
    where = np.argwhere(differ)
    return tuple(map(int, where[0])) if len(where) else None


def assert_arguments_after(what: str, after: Sequence[Any], reference: Sequence[Any],
                           before: Sequence[Any], ulps: int = 0, *, rtol: float = 0.0,
                           signed_zero: bool = True) -> None:
    """Every array argument after a call (``after``) against the same argument after the
    reference's call (NumPy or the interpreter, on a copy of its own: ``reference``) and
    before both (``before``, :func:`snapshot`).

    An argument the reference leaves as it was must come back bit for bit as it was
    (NaN equal to any NaN): a kernel that writes into an input it should only read fails
    here, with the argument's index and the first element it changed. One the reference
    writes into must equal the reference's (exactly, or within ``ulps``/``rtol`` as
    :func:`assert_same` compares), except one whose elements share memory (a zero
    stride): which of the writes to a shared element lands last is not defined.

    This is the one comparison of arguments after a call: the catalog's
    (:func:`check_against_numpy`) and the codegen tests' (``tests/codegen/data.py``).
    """
    assert len(after) == len(reference) == len(before), (
        f"{what}: {len(after)} arguments after the call, {len(reference)} for the "
        f"reference, {len(before)} before")
    for k, (mine, theirs, old) in enumerate(zip(after, reference, before, strict=True)):
        if not isinstance(old, np.ndarray):
            continue
        mine, theirs = np.asarray(mine), np.asarray(theirs)
        label = f"{what}: argument {k}"
        for got in (mine, theirs):
            assert got.dtype == old.dtype and got.shape == old.shape, (
                f"{label} is {got.dtype}{list(got.shape)} after the call, "
                f"{old.dtype}{list(old.shape)} before")
        if first_difference(theirs, old) is None:  # the reference only reads it
            at = first_difference(mine, old)
            assert at is None, (
                f"{label} was written into by the call, which the reference leaves "
                f"unchanged: first difference at index {at}: {old[at].item()!r} before, "
                f"{mine[at].item()!r} after")
            continue
        if overlaps_itself(mine):
            continue
        at = first_difference(mine, theirs)
        if at is None:
            continue
        if (ulps or rtol or not signed_zero) and mine.dtype.kind in "fc":
            assert_same(mine, theirs, ulps, f"{label} after the call", rtol=rtol,
                        signed_zero=signed_zero)
            continue
        raise AssertionError(f"{label} after the call differs from the reference's: first "
                             f"difference at index {at}: {mine[at].item()!r}, expected "
                             f"{theirs[at].item()!r}")


def check_against_numpy(case: Case, run: Callable[..., list[Any]],
                        args: tuple[Any, ...]) -> None:
    """Run ``case`` on ``args`` through NumPy and through ``run``, each on copies of its
    own in the arguments' own layouts (:func:`copy_arguments`); compare the results,
    and every argument afterwards with NumPy's (:func:`assert_arguments_after`): one
    NumPy only reads must be as it was before the call, whatever the case's tags."""
    before = snapshot(args)
    mine, theirs = copy_arguments(args), copy_arguments(args)
    with np.errstate(all="ignore"):
        expected = outputs_of(case.fn(*theirs))
    got = run(*mine)
    where = f"{case.name}{[np.shape(a) for a in args]}"
    signed_zero = "zero_sign_unspecified" not in case.tags
    assert_all_same(got, [np.asarray(e) for e in expected], case.ulps, where,
                    signed_zero=signed_zero)
    assert_arguments_after(where, mine, theirs, before, case.ulps, signed_zero=signed_zero)


def outputs_of(result: Any) -> list[Any]:
    return list(result) if isinstance(result, tuple) else [result]


def _outcome_bits(value: Any) -> tuple[str, tuple[int, ...], bytes]:
    a = np.asarray(value)
    return a.dtype.str, a.shape, np.ascontiguousarray(a).tobytes()


def interpreted_outcome(program: Program, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """The results' and the array arguments' bits after ``program`` ran on the reference
    interpreter (on copies of ``args``), or the error raised: equal outcomes are equal
    programs, as far as these arguments can tell."""
    mine = copy_arguments(args)
    try:
        with np.errstate(all="ignore"):
            results = eval_program(program, *mine)
    except Exception as err:
        return "error", type(err).__name__, str(err)
    return ("value", [_outcome_bits(r) for r in results],
            [_outcome_bits(a) for a in mine if isinstance(a, np.ndarray)])
