"""Every reverse-mode rule, one case each, against numbers (issue 36, item 8).

Each case is a small kernel built around one primitive (with inputs inside its domain,
away from kinks and discontinuities). Its vector-Jacobian product, taken through the
public ``aotc.vjp`` on the uncompiled path (the gradient program run by the NumPy
reference interpreter: no C compiler, no JIT), is compared with central finite
differences of the same kernel run as plain NumPy, in float64, for a random cotangent;
with JAX importable, also with ``jax.vjp`` of the same source run on ``jax.numpy``.

Then each rule is replaced by a wrong one (its cotangents scaled by 1.5; a flat rule's
zero replaced by the cotangent itself; a binary rule's cotangents given to the wrong
operands) and the finite-difference comparison must fail, so every rule is seen by its
case. A new rule without a case fails :func:`test_every_rule_has_a_case`.

Tolerance of the finite differences: the step is ``H = 2**-17`` (about 7.6e-6), a power
of two far above the last bit of the inputs here, so ``x ± H`` is exact (in float32 too,
for the convert case's multiples of 1/64 below 2). The truncation error of one Jacobian
entry is at most ``H**2 / 6 * |f'''|`` = 1e-11 ``|f'''|``, and the domains keep
``|f'''| < 400`` (tan at 1.2 is the worst): below 4e-9. Rounding adds about
``eps |f| / H`` = 3e-11 ``|f|``, with ``|f| < 32`` (tensordot's): below 1e-9. A
cotangent entry sums at most 24 such entries times ``|ct| < 2``, so its error is below
3e-7 in the very worst case. ``rtol = 1e-6`` with ``atol = 1e-6 * max(1, max |want|)``
(relative to the largest entry) holds that, while a wrong rule is off by a sizeable
fraction of the gradient (50% for the scaled mutation). Measured: the right rules stay
within 7e-5 of the tolerance (errors below 1e-10), and every wrong one of the mutation
tests exceeds it 1.8e5-fold or more.

Against JAX, which computes the same derivatives in the same float64 arithmetic (with
its own, algebraically equal, formulas and libm), the two differ by a few ulps per
operation: ``1e-12`` relative to the largest entry (measured: at most 3.3e-16, 1.5 ulp).
"""

from __future__ import annotations

import importlib.util
import types
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import aotc
from aotc import bool_, f32, f64, i64, lax
from aotc.ir import Lit, Program, nested_programs
from aotc.ops.core import ALL_PRIMITIVES, Primitive
from aotc.tracing.kernel import trace_kernel
from aotc.transforms import vjp_control  # noqa: F401  (the control-flow rules)
from aotc.transforms.core import TransformError
from aotc.transforms.vjp_rules import BINARY, FLAT, is_float, unbroadcast, vjp_rules
from aotc.types import signature_from_annotations

H = 2.0 ** -17
FD_TOL = 1e-6
JAX_TOL = 1e-12

rng = np.random.default_rng(36)
S = (2, 3)  # the shape of elementwise cases: both axes > 1, so a transposed index shows
M = f64[2, 3]
Vn, Mn1 = f64["n"], f64["n", :]


def uniform(lo: float, hi: float, shape: tuple[int, ...] = S) -> np.ndarray:
    return rng.uniform(lo, hi, shape)


def signed(lo: float, hi: float, shape: tuple[int, ...] = S) -> np.ndarray:
    """Magnitudes in ``[lo, hi]``, signs alternating (both signs, never near zero)."""
    signs = np.where(np.arange(int(np.prod(shape))).reshape(shape) % 2 == 0, 1.0, -1.0)
    return signs * rng.uniform(lo, hi, shape)


def off_grid(shape: tuple[int, ...] = S) -> np.ndarray:
    """Values whose fraction is at least 0.1 from an integer and from a half."""
    frac = rng.uniform(0.1, 0.4, shape) + rng.integers(0, 2, shape) * 0.5
    return rng.integers(-3, 3, shape) + frac


def apart(x: np.ndarray) -> np.ndarray:
    """A second operand at least 0.1 from ``x`` (above it or below, alternately)."""
    return x + signed(0.1, 1.0, x.shape)


def quotient_off_grid(shape: tuple[int, ...] = S) -> tuple[np.ndarray, np.ndarray]:
    """``(x, y)`` with ``y`` of both signs and ``x / y`` at least 0.2 from an integer."""
    y = signed(0.7, 1.6, shape)
    return (rng.integers(-2, 3, shape) + rng.uniform(0.2, 0.8, shape)) * y, y


# -- the kernels -------------------------------------------------------------------------
# Written with ``np`` and ``lax`` (aotc.lax) as globals: the JAX comparison runs the same
# code with those names bound to jax.numpy and jax.lax.

def unary(name: str) -> Callable[..., Any]:
    def kernel(x: M) -> M:
        return getattr(np, name)(x)
    kernel.__name__ = kernel.__qualname__ = f"k_{name}"
    return kernel


def binary(name: str) -> Callable[..., Any]:
    def kernel(x: M, y: M) -> M:
        return getattr(np, name)(x, y)
    kernel.__name__ = kernel.__qualname__ = f"k_{name}"
    return kernel


def k_pow_scalar(x: M, a: f64) -> M:
    return x ** a


def k_select(m: bool_[2, 3], x: M, y: M) -> M:
    return np.where(m, x, y)


def k_select_scalar(m: bool_[2, 3], x: M, a: f64) -> M:
    return np.where(m, x, a)


def k_convert(x: f64[4]) -> f32[4]:
    return x.astype(np.float32)


def k_reduce_sum(x: f64[2, 3, 4]) -> f64[3]:
    return x.sum(axis=(0, 2))


def k_reduce_max(x: f64[3, 4]) -> f64[3]:
    return x.max(axis=1)


def k_reduce_min(x: f64[2, 3, 4]) -> f64[3]:
    return x.min(axis=(0, 2))


def k_reduce_prod(x: f64[3, 4]) -> f64[4]:
    return x.prod(axis=0)


def k_cumsum(x: f64[3, 4]) -> f64[3, 4]:
    return np.cumsum(x, axis=1)


def k_broadcast_in_dim(x: f64[3, 1]) -> f64[2, 3, 4]:
    return np.broadcast_to(x, (2, 3, 4))


def k_named_apart(w: f64[:], x: f64[:]) -> f64[:]:
    return w * x  # x is broadcast from x.0 to w.0, checked equal


def k_reshape(x: f64[3, 4]) -> f64[2, 6]:
    return x.reshape(2, 6)


def k_refine_shape(x: Mn1) -> Vn:
    return np.squeeze(x, axis=1)  # x.1 == 1 checked, then refined to (n, 1)


def k_transpose(x: f64[2, 3, 4]) -> f64[3, 4, 2]:
    return x.transpose(1, 2, 0)  # not its own inverse


def k_slice(x: f64[4, 6]) -> f64[3, 3]:
    return x[1:, ::-2]


def k_update_slice(x: f64[6], y: f64[2]) -> f64[6]:
    z = x.copy()
    z[1:5:2] = y
    return z


def jax_update_slice(x: Any, y: Any) -> Any:
    return x.at[1:5:2].set(y)


def k_concatenate(x: f64[3, 2], y: f64[3, 4]) -> f64[3, 8]:
    return np.concatenate([x, y, x], axis=1)


def k_take(x: f64[3, 5], i: i64[2, 2]) -> f64[3, 2, 2]:
    return x[:, i]


def k_compress(x: f64[3, 4, 2], m: bool_[3, 4]) -> f64[2]:
    # a result of static size (see k_compress_rows); squared, so each selected item's
    # cotangent differs and one sent to the wrong place shows
    return np.sum(x[m] ** 2, axis=0)


def k_compress_rows(x: f64[3, 4, 2], m: bool_[3, 4]) -> f64[:, 2]:
    return x[m]


def k_dot_general(x: f64[2, 3, 4], y: f64[2, 4, 5]) -> f64[2, 3, 5]:
    return x @ y


def k_tensordot(x: f64[2, 3, 4], y: f64[4, 5, 2]) -> f64[3, 5]:
    return np.tensordot(x, y, axes=([0, 2], [2, 0]))


def k_scan(x: f64[5], a: f64) -> f64[5]:
    def step(carry, xi):
        carry = a * carry + np.sin(xi)
        return carry, carry * xi
    last, ys = lax.scan(step, x[0], x)
    return ys + last


def k_for_loop(x: f64[5], y: f64[5]) -> f64[5]:
    def body(i, v):
        return np.sin(v) * y + 0.1 * i
    return lax.fori_loop(0, 3, body, x)


def k_cond(x: f64[5], y: f64[5]) -> f64[5]:
    return lax.cond(x[0] > 0, lambda a, b: np.sin(a) * b, lambda a, b: a * a - b, x, y)


def k_random_draw(x: M) -> M:
    np.random.seed(3)
    return x * np.random.standard_normal((2, 3))


def k_lognormal(x: f64[2]) -> f64[3]:
    np.random.seed(3)
    return np.random.lognormal(x[0], x[1], size=3)


def k_lognormal_scaled(x: f64[2], m: f64) -> f64[3]:
    np.random.seed(3)
    return x[0] * np.random.lognormal(m, 0.5, size=3)


# -- the table ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    prim: str  # the primitive whose rule this case checks
    fn: Callable[..., Any]  # the kernel (annotated), also run as plain NumPy
    args: tuple[Any, ...]
    wrt: tuple[int, ...]  # the float arguments differentiated
    label: str = ""  # extra cases of a primitive: its id
    jax: Callable[..., Any] | bool = True  # False: no JAX counterpart; a function: its own
    marks: tuple[Any, ...] = ()

    @property
    def id(self) -> str:
        return self.label or self.prim


UNARY_DOMAINS: dict[str, tuple[str, np.ndarray]] = {  # prim -> (NumPy name, input)
    "neg": ("negative", signed(0.1, 2.0)),
    "exp": ("exp", uniform(-1.0, 1.5)),
    "exp2": ("exp2", uniform(-1.0, 1.5)),
    "expm1": ("expm1", uniform(-1.0, 1.5)),
    "log": ("log", uniform(0.5, 3.0)),
    "log2": ("log2", uniform(0.5, 3.0)),
    "log10": ("log10", uniform(0.5, 3.0)),
    "log1p": ("log1p", uniform(-0.5, 2.0)),
    "sqrt": ("sqrt", uniform(0.5, 3.0)),
    "cbrt": ("cbrt", signed(0.5, 2.0)),
    "square": ("square", signed(0.1, 2.0)),
    "reciprocal": ("reciprocal", signed(0.5, 2.0)),
    "abs": ("absolute", signed(0.2, 2.0)),  # away from the kink at 0
    "sin": ("sin", uniform(-3.0, 3.0)),
    "cos": ("cos", uniform(-3.0, 3.0)),
    "tan": ("tan", uniform(-1.2, 1.2)),  # away from the poles at ±pi/2
    "tanh": ("tanh", uniform(-2.0, 2.0)),
    "sinh": ("sinh", uniform(-2.0, 2.0)),
    "cosh": ("cosh", uniform(-2.0, 2.0)),
    "arctan": ("arctan", uniform(-3.0, 3.0)),
    "arcsin": ("arcsin", uniform(-0.8, 0.8)),  # away from ±1, where the slope is infinite
    "arccos": ("arccos", uniform(-0.8, 0.8)),
    "arcsinh": ("arcsinh", uniform(-3.0, 3.0)),
    "arccosh": ("arccosh", uniform(1.2, 3.0)),  # domain x > 1
    "arctanh": ("arctanh", uniform(-0.8, 0.8)),  # domain |x| < 1
    # flat (piecewise constant): a zero gradient, away from the steps
    "sign": ("sign", signed(0.2, 2.0)),
    "floor": ("floor", off_grid()),
    "ceil": ("ceil", off_grid()),
    "trunc": ("trunc", off_grid()),
    "rint": ("rint", off_grid()),  # also away from the halves, where rint steps
}

_xm = uniform(-2.0, 2.0)
_xq, _yq = quotient_off_grid()
BINARY_DOMAINS: dict[str, tuple[str, tuple[np.ndarray, np.ndarray]]] = {
    "add": ("add", (signed(0.1, 2.0), signed(0.1, 2.0))),
    "sub": ("subtract", (signed(0.1, 2.0), signed(0.1, 2.0))),
    "mul": ("multiply", (signed(0.1, 2.0), signed(0.1, 2.0))),
    "div": ("true_divide", (signed(0.1, 2.0), signed(0.5, 2.0))),
    "pow": ("power", (uniform(0.5, 2.0), uniform(-1.5, 2.5))),  # x > 0: real, smooth
    # no ties (x and y at least 0.1 apart), each side the larger somewhere
    "max": ("maximum", (_xm, apart(_xm))),
    "min": ("minimum", (_xm, apart(_xm))),
    "fmax": ("fmax", (_xm, apart(_xm))),
    "fmin": ("fmin", (_xm, apart(_xm))),
    "mod": ("mod", quotient_off_grid()),  # both signs of y; x / y away from integers
    # the ordinate first; away from its branch cut (x = 0, y < 0) and from the origin
    "arctan2": ("arctan2", (signed(0.2, 2.0), uniform(-2.0, 2.0))),
    "hypot": ("hypot", (signed(0.2, 2.0), signed(0.2, 2.0))),
    "floor_divide": ("floor_divide", (_xq, _yq)),  # flat, away from its steps
}

_mask = np.array([[True, False, True], [False, True, True]])
_mask3 = np.array([[True, False, True, True], [False, False, False, False],
                   [True, True, False, True]])
_distinct = rng.permutation(12).reshape(3, 4) * 0.25 + rng.uniform(0.0, 0.05, (3, 4))

CASES: list[Case] = [
    *(Case(prim, unary(name), (x,), (0,)) for prim, (name, x) in UNARY_DOMAINS.items()),
    *(Case(prim, binary(name), xy, (0, 1)) for prim, (name, xy) in BINARY_DOMAINS.items()),
    # a scalar operand: its cotangent is the sum over the array (unbroadcast)
    Case("pow", k_pow_scalar, (uniform(0.5, 2.0), 1.7), (0, 1), "pow[scalar exponent]"),
    # two-way ties split the cotangent in half, which is also what central differences
    # see (one side moves the extremum, the other leaves it to the twin); of a k-way tie
    # they see 1/2 where the rule (as JAX's) gives 1/k, so no tie here is three-way
    Case("max", binary("maximum"), (_xm, np.where(_mask, _xm, apart(_xm))), (0, 1),
         "max[ties]"),
    Case("select", k_select, (_mask, signed(0.1, 2.0), signed(0.1, 2.0)), (1, 2)),
    Case("select", k_select_scalar, (_mask, signed(0.1, 2.0), -0.7), (1, 2),
         "select[scalar]"),
    # multiples of 1/64: x ± H exact in float32, so the float32 result is exact
    Case("convert", k_convert, (rng.integers(-128, 128, 4) / 64.0,), (0,)),
    Case("reduce_sum", k_reduce_sum, (uniform(-2.0, 2.0, (2, 3, 4)),), (0,)),
    # distinct values (at least 0.2 apart): no ties, the extremum moves with its element
    Case("reduce_max", k_reduce_max, (_distinct,), (0,)),
    Case("reduce_max", k_reduce_max, (np.array([[1.0, 3.0, 3.0, 0.5],
                                                [2.0, -0.5, 2.0, -1.0],
                                                [0.0, -1.0, 0.25, 0.125]]),), (0,),
         "reduce_max[ties]"),
    Case("reduce_min", k_reduce_min,
         (rng.permutation(24).reshape(2, 3, 4) * 0.25 - 3.0,), (0,)),
    Case("reduce_prod", k_reduce_prod, (signed(0.5, 1.5, (3, 4)),), (0,)),
    Case("cumsum", k_cumsum, (uniform(-2.0, 2.0, (3, 4)),), (0,)),
    Case("broadcast_in_dim", k_broadcast_in_dim, (uniform(-2.0, 2.0, (3, 1)),), (0,)),
    Case("broadcast_in_dim", k_named_apart, (uniform(-2.0, 2.0, 4), uniform(-2.0, 2.0, 4)),
         (0, 1), "broadcast_in_dim[sizes named apart]"),
    Case("reshape", k_reshape, (uniform(-2.0, 2.0, (3, 4)),), (0,)),
    Case("refine_shape", k_refine_shape, (uniform(-2.0, 2.0, (4, 1)),), (0,)),
    Case("transpose", k_transpose, (uniform(-2.0, 2.0, (2, 3, 4)),), (0,)),
    Case("slice", k_slice, (uniform(-2.0, 2.0, (4, 6)),), (0,)),
    Case("update_slice", k_update_slice, (uniform(-2.0, 2.0, 6), uniform(-2.0, 2.0, 2)),
         (0, 1), jax=jax_update_slice),
    Case("concatenate", k_concatenate,
         (uniform(-2.0, 2.0, (3, 2)), uniform(-2.0, 2.0, (3, 4))), (0, 1)),
    # indices negative and repeated, two of them deep, along the inner axis
    Case("take", k_take, (uniform(-2.0, 2.0, (3, 5)), np.array([[1, -1], [3, 1]])), (0,)),
    # a mask of rank 2 over a rank-3 array (a row of it all false)
    Case("compress", k_compress, (uniform(-2.0, 2.0, (3, 4, 2)), _mask3), (0,)),
    Case("compress", k_compress_rows, (uniform(-2.0, 2.0, (3, 4, 2)), _mask3), (0,),
         "compress[result of data-dependent size]"),
    Case("dot_general", k_dot_general,
         (uniform(-2.0, 2.0, (2, 3, 4)), uniform(-2.0, 2.0, (2, 4, 5))), (0, 1)),
    # two contracted axes, in opposite orders on the two sides
    Case("dot_general", k_tensordot,
         (uniform(-2.0, 2.0, (2, 3, 4)), uniform(-2.0, 2.0, (4, 5, 2))), (0, 1),
         "dot_general[tensordot]"),
    Case("scan", k_scan, (uniform(-2.0, 2.0, 5), 0.6), (0, 1)),
    Case("for_loop", k_for_loop, (uniform(-2.0, 2.0, 5), uniform(-2.0, 2.0, 5)), (0, 1)),
    Case("cond", k_cond, (np.r_[0.9, uniform(-2.0, 2.0, 4)], uniform(-2.0, 2.0, 5)), (0, 1)),
    Case("cond", k_cond, (np.r_[-0.9, uniform(-2.0, 2.0, 4)], uniform(-2.0, 2.0, 5)), (0, 1),
         "cond[false branch]"),
    # draws are constants to the gradient: here the draw has no float input
    Case("random_draw", k_random_draw, (signed(0.1, 2.0),), (0,), jax=False),
]

#: The first case of each primitive: the one its rule's mutations are checked on.
PRIMARY = {c.prim: c for c in reversed(CASES)}
#: Rules whose wrong versions no case can show, and why.
UNOBSERVABLE = {
    "random_draw": "the rule's only outputs are the cotangents of the draw's scalar "
                   "parameters: where a draw has a float one on the gradient's path, the "
                   "gradient is refused (test_draws_with_differentiated_parameters_are_"
                   "refused); where it has none, any rule's "
                   "answer is dropped. Its case checks it is consulted and the kernel's "
                   "gradient, through the draw, is right.",
}


def case_params(cases: list[Case]) -> list[Any]:
    return [pytest.param(c, id=c.id, marks=c.marks) for c in cases]


# -- the two sides -----------------------------------------------------------------------

def cotangent(case: Case) -> np.ndarray:
    """A random cotangent of the kernel's result (its dtype and shape), fixed per case."""
    out = np.asarray(case.fn(*case.args))
    draw = np.random.default_rng(zlib.crc32(case.id.encode()))
    return np.asarray(draw.uniform(-2.0, 2.0, out.shape), dtype=out.dtype)


def rule_vjp(case: Case, ct: np.ndarray) -> list[np.ndarray]:
    """The cotangents of the arguments ``wrt`` by aotc.vjp, uncompiled: its gradient
    program on the reference interpreter (traced afresh, so the rules now in the table
    are the ones used)."""
    got = aotc.vjp(case.fn, argnums=case.wrt)(*case.args, ct)
    return [np.asarray(g, dtype=np.float64) for g in got]


def moved(case: Case, k: int, index: tuple[int, ...], delta: float) -> np.ndarray:
    """The NumPy kernel's result (in float64) with entry ``index`` of argument ``k``
    moved by ``delta``."""
    x = np.array(case.args[k])
    x[index] += delta
    args = list(case.args)
    args[k] = x if x.ndim else x[()]
    return np.asarray(case.fn(*args), dtype=np.float64)


def fd_vjp(case: Case, ct: np.ndarray) -> list[np.ndarray]:
    """``ct · J`` by central differences of the NumPy kernel, one input entry at a time
    (an output entry's difference is its own, so each is rounded to its own size)."""
    found = []
    for k in case.wrt:
        grad = np.zeros(np.shape(case.args[k]), np.float64)
        for index in np.ndindex(grad.shape):
            step = moved(case, k, index, H) - moved(case, k, index, -H)
            grad[index] = np.sum(ct.astype(np.float64) * step) / (2 * H)
        found.append(grad)
    return found


def assert_close(got: list[np.ndarray], want: list[np.ndarray], tol: float) -> None:
    """Entrywise within ``tol`` relative to the entry or to the largest entry."""
    scale = max([1.0, *(float(np.max(np.abs(w), initial=0.0)) for w in want)])
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol * scale)


def check_against_fd(case: Case) -> None:
    ct = cotangent(case)
    assert_close(rule_vjp(case, ct), fd_vjp(case, ct), FD_TOL)


# -- the tests ---------------------------------------------------------------------------

@pytest.fixture(autouse=True)
def _keep_numpys_random_state():
    """The random_draw cases seed NumPy's global generator (as their kernels, run as
    plain NumPy, do): put it back for the tests after these."""
    state = np.random.get_state()
    yield
    np.random.set_state(state)


def uses(program: Program, prim: Primitive) -> bool:
    return any(eqn.prim is prim or any(uses(p, prim) for p in nested_programs(eqn))
               for eqn in program.eqns)


def test_every_rule_has_a_case() -> None:
    """The table covers exactly the primitives with rules, and each case's kernel does
    use its primitive (a rule added without a case fails here)."""
    with_rules = {prim.name for prim in vjp_rules}
    assert with_rules == {c.prim for c in CASES}
    for case in CASES:
        fn = case.fn
        program = trace_kernel(fn, signature_from_annotations(fn), name=fn.__name__).program
        assert uses(program, ALL_PRIMITIVES[case.prim]), case.id


@pytest.mark.parametrize("case", case_params(CASES))
def test_rule_matches_finite_differences(case: Case) -> None:
    check_against_fd(case)


# -- mutations: a wrong rule must fail its case ----------------------------------------
_mul = ALL_PRIMITIVES["mul"]


def scaled(rule: Callable[..., Any], prim: str) -> Callable[..., Any]:
    """The rule's cotangents times 1.5; for a flat rule (all zero), the output's
    cotangent passed to each float input as if the primitive were the identity."""
    def wrong(em: Any, cts: list[Any], ins: list[Any], outs: list[Any], **params: Any
              ) -> list[Any]:
        if prim in FLAT:
            (g,) = cts
            return [unbroadcast(em, g, x.type) if is_float(x.type) else None for x in ins]
        found = rule(em, cts, ins, outs, **params)
        return [None if c is None or not is_float(c.type)
                else em.one(_mul, c, Lit(1.5, c.type.dtype)) for c in found]
    return wrong


def swapped(rule: Callable[..., Any], prim: str) -> Callable[..., Any]:
    """A binary rule's two cotangents given to each other's operand (select: its two
    data operands)."""
    def wrong(em: Any, cts: list[Any], ins: list[Any], outs: list[Any], **params: Any
              ) -> list[Any]:
        found = rule(em, cts, ins, outs, **params)
        return [found[0], found[2], found[1]] if prim == "select" else found[::-1]
    return wrong


#: add's two cotangents are both the output's: no swap of them can be wrong.
SWAPPABLE = sorted({*BINARY, "select"} - {"add"})
MUTATIONS = [(prim, "scaled") for prim in sorted(PRIMARY) if prim not in UNOBSERVABLE] + \
    [(prim, "swapped") for prim in SWAPPABLE]


def test_mutations_cover_every_rule() -> None:
    assert {prim for prim, _ in MUTATIONS} | set(UNOBSERVABLE) == set(PRIMARY)
    assert {prim.name for prim in vjp_rules} == set(PRIMARY)


@pytest.mark.parametrize(("prim", "how"), MUTATIONS, ids=[f"{p}-{h}" for p, h in MUTATIONS])
def test_a_wrong_rule_fails_its_case(prim: str, how: str,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    p = ALL_PRIMITIVES[prim]
    right = vjp_rules[p]
    wrong = {"scaled": scaled, "swapped": swapped}[how](right, prim)
    calls = []

    def counted(*args: Any, **params: Any) -> Any:
        calls.append(1)
        return wrong(*args, **params)

    monkeypatch.setitem(vjp_rules, p, counted)
    with pytest.raises(AssertionError):
        check_against_fd(PRIMARY[prim])
    assert calls, f"the case of {prim} never consulted its rule"


@pytest.mark.parametrize("prim", sorted(UNOBSERVABLE))
def test_an_unobservable_rule_is_still_consulted(prim: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    p = ALL_PRIMITIVES[prim]
    right = vjp_rules[p]
    calls = []

    def counted(*args: Any, **params: Any) -> Any:
        calls.append(1)
        return right(*args, **params)

    monkeypatch.setitem(vjp_rules, p, counted)
    check_against_fd(PRIMARY[prim])
    assert calls


# -- JAX, when installed ---------------------------------------------------------------

def jax_function(case: Case, jnp: Any, jlax: Any) -> Callable[..., Any]:
    """The case's own source with ``np`` and ``lax`` bound to jax.numpy and jax.lax."""
    if callable(case.jax):
        return case.jax
    fn = case.fn
    env = {**fn.__globals__, "np": jnp, "lax": jlax}
    return types.FunctionType(fn.__code__, env, fn.__name__, fn.__defaults__,
                              fn.__closure__)


#: Compared with JAX when it is installed (not a test requirement): one skip otherwise.
JAX_CASES = (case_params([c for c in CASES if c.jax is not False])
             if importlib.util.find_spec("jax") else
             [pytest.param(None, marks=pytest.mark.skip(
                 reason="JAX is not installed; test_rule_matches_finite_differences checks "
                        "every rule"))])


@pytest.mark.parametrize("case", JAX_CASES)
def test_rule_matches_jax(case: Case) -> None:
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    fn = jax_function(case, jnp, jax.lax)

    def of_wrt(*diff: Any) -> Any:
        args = list(case.args)
        for k, d in zip(case.wrt, diff, strict=True):
            args[k] = d
        return fn(*args)

    primals = [jnp.asarray(case.args[k], dtype=jnp.float64) for k in case.wrt]
    ct = cotangent(case)
    _, pullback = jax.vjp(of_wrt, *primals)
    want = [np.asarray(w, dtype=np.float64) for w in pullback(jnp.asarray(ct))]
    assert_close(rule_vjp(case, ct), want, JAX_TOL)


def test_draws_with_differentiated_parameters_are_refused() -> None:
    """For a fixed seed a lognormal draw moves with its mean and sigma, a derivative no
    rule gives: the gradient is a located error, not the zero it once was; a draw
    whose parameters are not differentiated stays a constant to the gradient."""
    with pytest.raises(TransformError, match="random draw whose parameters"):
        aotc.vjp(k_lognormal)(np.array([0.3, 0.5]), np.ones(3))
    (got,) = aotc.vjp(k_lognormal_scaled, argnums=(0,))(np.array([0.3, 0.5]), 0.2,
                                                        np.ones(3))
    np.random.seed(3)
    draws = np.random.lognormal(0.2, 0.5, size=3)
    np.testing.assert_allclose(got, [draws.sum(), 0.0], rtol=1e-15)
