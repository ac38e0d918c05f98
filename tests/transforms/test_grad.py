"""Reverse-mode gradients against central finite differences (and JAX when installed).

Tolerance: central differences with step ``h = 1e-6 * max(1, |x|)`` on float64 have a
truncation error ``O(h² f''')`` (about 1e-12 here) and a rounding error about
``eps |f| / h`` (about 1e-10 for the values these kernels take), so ``rtol = atol = 1e-6``
leaves a margin of 1e4 while still catching any wrong rule (which is off by O(1)).
Against JAX, which computes the same derivative in the same arithmetic, 1e-10.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest

import aotc
from aotc.transforms import TransformError

from . import kernels as K
from .harness import compile_all, interpreted, program_of, results

try:
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
except ImportError:  # JAX is a comparison, never a requirement
    jax = None

rng = np.random.default_rng(7)


def fd_grad(fn: Any, args: tuple[Any, ...], k: int) -> np.ndarray:
    """Central finite differences of the scalar ``fn(*args)`` in argument ``k``."""
    x = np.array(args[k], dtype=np.float64)
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        h = 1e-6 * max(1.0, abs(x[index]))
        up, down = x.copy(), x.copy()
        up[index] += h
        down[index] -= h
        f_up = fn(*args[:k], up if x.ndim else up[()], *args[k + 1:])
        f_down = fn(*args[:k], down if x.ndim else down[()], *args[k + 1:])
        grad[index] = (f_up - f_down) / (2 * h)
    return grad


X6, Y6 = rng.normal(size=(6, 3)), rng.normal(size=6)
CASES: list[tuple[str, Any, tuple[Any, ...], tuple[int, ...]]] = [
    ("rosen", K.rosen, (rng.normal(size=7),), (0,)),
    ("loss", K.loss, (rng.normal(size=3), X6, Y6), (0, 1)),
    ("xent", K.xent, (rng.normal(size=(3, 4)), X6), (0, 1)),
    ("views", K.views, (rng.normal(size=(4, 3)),), (0,)),
    ("ema_sum", K.ema_sum, (rng.normal(size=8), 0.6), (0, 1)),
    ("unrolled", K.unrolled, (rng.normal(size=5), 4), (0,)),
    ("horner", K.horner, (rng.normal(size=5), 0.8), (0, 1)),
    ("piecewise+", K.piecewise, (1.7,), (0,)),
    ("piecewise-", K.piecewise, (-0.6,), (0,)),
    ("selu", K.selu, (-0.3,), (0,)),
    ("gather_sum", K.gather_sum, (rng.normal(size=6), np.array([1, 3, -1, 3])), (0,)),
    ("cumulative", K.cumulative, (rng.normal(size=5),), (0,)),
    ("masked", K.masked, (rng.normal(size=(7, 3)),), (0,)),
    ("masked_none", K.masked, (-np.abs(rng.normal(size=(3, 2))),), (0,)),
]


@pytest.fixture(scope="module")
def compiled() -> dict[str, Any]:
    transforms = [aotc.grad(fn, argnums) for _, fn, _, argnums in CASES]
    return dict(zip([c[0] for c in CASES], compile_all(transforms), strict=True))


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_gradient_matches_finite_differences(case: Any, compiled: dict[str, Any]) -> None:
    name, fn, args, argnums = case
    want = [fd_grad(fn, args, k) for k in argnums]
    g = aotc.grad(fn, argnums)
    for got in (compiled[name](*args), interpreted(g, *args), results(g(*args))):
        assert len(got) == len(want)
        for a, b in zip(got, want, strict=True):
            assert np.shape(a) == np.shape(b)
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def jax_versions() -> dict[str, Any]:
    def rosen(x):
        return jnp.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)

    def loss(w, X, y):
        z = X @ w
        p = jnp.tanh(z)
        r = jnp.where(z > 0, p - y, 0.5 * (p - y))
        return jnp.sum(r ** 2) / y.shape[0] + 0.01 * jnp.sum(jnp.maximum(w, 0.1) ** 2)

    def xent(W, X):
        logits = X @ W
        m = logits.max(axis=1, keepdims=True)
        return jnp.sum(jnp.log(jnp.sum(jnp.exp(logits - m), axis=1)) + m[:, 0] - logits[:, 0])

    return {"rosen": rosen, "loss": loss, "xent": xent}


@pytest.mark.parametrize("name", ["rosen", "loss", "xent"])
def test_gradient_matches_jax_when_installed(name: str, compiled: dict[str, Any]) -> None:
    _, fn, args, argnums = next(c for c in CASES if c[0] == name)
    got = compiled[name](*args)
    if jax is None:  # still checked: against finite differences
        want = [fd_grad(fn, args, k) for k in argnums]
        tol = 1e-6
    else:
        want = jax.grad(jax_versions()[name], argnums)(*args)
        tol = 1e-10
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, np.asarray(b), rtol=tol, atol=tol)


def test_value_and_grad_and_vjp() -> None:
    args = (rng.normal(size=3), X6, Y6)
    vg = aotc.value_and_grad(K.loss, argnums=(0, 2))
    value, (gw, gy) = vg(*args)
    assert np.isclose(value, K.loss(*args))
    np.testing.assert_allclose(gw, fd_grad(K.loss, args, 0), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(gy, fd_grad(K.loss, args, 2), rtol=1e-6, atol=1e-6)
    a, x = rng.normal(size=(4, 3)), rng.normal(size=3)
    ct = rng.normal(size=4)
    pullback = aotc.vjp(K.matvec, argnums=1)
    (kernel, kernel_vg) = compile_all([pullback, vg])
    want = a.T @ (ct * (1 - np.tanh(a @ x) ** 2))
    for got in (pullback(a, x, ct), kernel(a, x, ct)[0]):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    got_v, got_w, got_y = kernel_vg(*args)
    np.testing.assert_allclose([got_v], [value], rtol=1e-12)
    np.testing.assert_allclose(got_w, gw, rtol=1e-12)  # the same program, compiled
    np.testing.assert_allclose(got_y, gy, rtol=1e-12)
    with pytest.raises(ValueError):
        kernel(a, x, rng.normal(size=5))  # a cotangent of the wrong shape


def test_signatures() -> None:
    (sig,) = aotc.grad(K.loss).signatures()
    assert str(sig) == "f64['d'](f64['d'], f64['n', 'd'], f64['n'])"
    (sig,) = aotc.vjp(K.matvec, argnums=(0, 1)).signatures()
    assert str(sig) == "(f64['n', 'm'], f64['m'])(f64['n', 'm'], f64['m'], f64['n'])"


def test_jit_binds_calls_to_the_wrapped_kernels_parameters() -> None:
    """A transform takes the wrapped kernel's parameters (by position and by name), so
    aotc.jit of an exported transform matches calls as the module's function does."""
    grad = aotc.jit(aotc.export(aotc.grad(K.loss), name="loss_grad"))
    w, y = rng.normal(size=3), rng.normal(size=6)
    want = aotc.grad(K.loss)(w, X6, y)
    np.testing.assert_allclose(grad(w, X6, y), want, rtol=1e-12)
    np.testing.assert_allclose(grad(w, y=y, X=X6), want, rtol=1e-12)
    assert list(inspect.signature(aotc.grad(K.loss)).parameters) == ["w", "X", "y"]


def test_grad_of_vmap_and_vmap_of_grad() -> None:
    """Transforms compose: per-example gradients are a vmap of grad."""
    per_example = aotc.vmap(aotc.grad(K.rosen))
    xs = rng.normal(size=(3, 5))
    (kernel,) = compile_all([per_example])
    want = np.stack([fd_grad(K.rosen, (x,), 0) for x in xs])
    for got in (kernel(xs)[0], per_example(xs)):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_errors_are_located_and_name_the_problem() -> None:
    with pytest.raises(TransformError, match="'while_loop' has no differentiation rule") as e:
        program_of(aotc.grad(K.while_sum))
    assert e.value.loc is not None and e.value.loc.file.endswith("kernels.py")
    with pytest.raises(TransformError, match="one float scalar"):
        program_of(aotc.grad(K.matvec))
    with pytest.raises(TransformError, match="float arguments"):
        program_of(aotc.grad(K.gather_sum, argnums=1))


def test_every_float_primitive_has_a_vjp_rule_or_a_reason() -> None:
    from aotc.ops.containers import BOX_PRIMITIVES
    from aotc.ops.core import ALL_PRIMITIVES
    from aotc.transforms.vjp_rules import vjp_rules
    not_float = {  # outputs are bool or integers (or nothing): no cotangent reaches them
        "argmax", "argmin", "argsort", "bind_dim", "bitwise_and", "bitwise_or",
        "bitwise_xor", "check", "dim_value", "eq", "ge", "gt", "invert", "iota", "isfinite",
        "isinf", "isnan", "le", "left_shift", "logical_and", "logical_not", "logical_or",
        "logical_xor", "lt", "ne", "python_number", "c_contiguous", "raise_if", "reduce_and",
        "reduce_or",
        "right_shift",
        "searchsorted", "signbit"}
    not_yet = {  # said in the README; a located error names them
        "while_loop",  # no bound on the carries to store (JAX refuses it too)
        "sort", "cumprod", "copysign",
        "complex", "real", "imag", "conj",  # complex gradients are not defined here
        "numpy_loop",  # NumPy's LAPACK and FFT loops: their adjoints are not written yet
        "call",  # a recursive function: refused where a gradient reaches it
        "fusion",  # gradients are taken before the optimizer runs
        # lists, sets and dicts grown at run time (aotc.ops.containers): values stored
        # in them carry no gradient; a located error names the primitive
        *(p.name for p in BOX_PRIMITIVES)}
    missing = {n for n, p in ALL_PRIMITIVES.items() if p not in vjp_rules}
    assert missing == not_float | not_yet | {"random_seed", "clock"}  # (no outputs; inputs)


@aotc.export
def _misfit(w: aotc.f64[:], x: aotc.f64[:]) -> aotc.f64:
    """Two sizes named apart (w.0, x.0), checked equal when w * x broadcasts them."""
    return np.sum((w * x - 1.0) ** 2)


def test_jit_of_a_gradient_and_sizes_named_apart():
    # d/dw sum((w x - 1)^2) = 2 x (w x - 1), exactly representable here
    w, x = np.array([1.0, 0.5, 2.0]), np.array([0.0, 2.0, 3.0])
    want = 2 * x * (w * x - 1)
    gradient = aotc.grad(_misfit)
    np.testing.assert_array_equal(gradient(w, x), want)  # the VJP of the broadcast
    np.testing.assert_array_equal(aotc.jit(gradient)(w, x), want)  # compiled directly


@aotc.export
def _checked_energy(x: aotc.f64[:]) -> aotc.f64:
    if x[0] < 0:
        raise ValueError("negative")
    return np.sum(x * x)


def test_uncompiled_and_compiled_gradients_behave_alike():
    # the same exception class and message, and byte-swapped arrays taken by both
    gradient = aotc.grad(_checked_energy)
    for run in (gradient, aotc.jit(gradient)):
        with pytest.raises(ValueError, match="^negative$") as err:
            run(np.array([-1.0, 2.0]))
        assert type(err.value) is ValueError
        swapped = np.array([1.0, 2.0]).astype(">f8")
        np.testing.assert_array_equal(run(swapped), [2.0, 4.0])


def _masked_sine(x: aotc.f64[:, :, :], m: aotc.bool_[:, :]) -> aotc.f64[:, :]:
    return np.sin(x[m])


def test_vjp_of_a_result_sized_by_the_data() -> None:
    """x[mask]'s size is known only while the kernel runs: the cotangent's size is
    checked then (ValueError), the pullback is cos(x) where the mask is set, and
    aotc.jit takes the cotangent as the vjp's last parameter."""
    x = rng.normal(size=(3, 4, 2))
    m = np.array([[True, False, True, True], [False] * 4, [True, True, False, True]])
    ct = rng.normal(size=(int(m.sum()), 2))
    want = np.zeros_like(x)
    want[m] = ct * np.cos(x[m])
    pullback = aotc.vjp(_masked_sine, argnums=0)
    assert list(inspect.signature(pullback).parameters) == ["x", "m", "cotangent"]
    np.testing.assert_allclose(pullback(x, m, ct), want, rtol=1e-15)
    fast = aotc.jit(pullback)
    np.testing.assert_allclose(fast(x, m, ct), want, rtol=1e-15)
    for call in (pullback, fast):
        with pytest.raises(ValueError, match="cotangent 0 axis 0 has size 1, expected 6"):
            call(x, m, ct[:1])
