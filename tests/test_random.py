"""``numpy.random`` and Python's ``random`` in kernels (in-process JIT) against NumPy's
legacy generator and CPython's.

Seeded with ``np.random.seed(s)`` (``random.seed(s)``), a kernel draws NumPy's (CPython's)
own sequence for ``s``, so each kernel here is checked against itself run uncompiled:
bit for bit (the draws are NumPy's C and CPython's code transcribed, and call the same
C library ``log``, ``sqrt``, ``sin`` and ``cos``), with the same dtypes and shapes.
Sizes cross the generator's 624-word refills; scalar draws in loops, the cached second
normal, in-place shuffles and every ``choice`` form are exercised; parameter errors
are NumPy's (CPython's); equal draws are never merged by CSE, and an unused draw
still advances the stream. Unseeded kernels draw fresh values on every call.
"""

from __future__ import annotations

import ctypes
import random
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest

import aotc
from aotc import f64
from aotc.abi import RANDOM_STATE_BYTES
from aotc.codegen.core import jit
from aotc.errors import AotcError
from aotc.ir import Program
from aotc.ops.random import random_draw_p
from aotc.passes import optimize
from aotc.tracing.kernel import trace_kernel
from aotc.types import parse_signature_string


def arrays(n):
    np.random.seed(42)
    return (np.random.rand(n), np.random.randn(n), np.random.random_sample((n, 2)),
            np.random.standard_exponential(n), np.random.randint(0, 10, n),
            np.random.randint(-5, 2**40, n), np.random.randint(7, size=n),
            np.random.randint(-3, 3, n, dtype=np.int32))


def parameters(n, lo, hi):
    np.random.seed(7)
    return (np.random.uniform(lo, hi, n), np.random.normal(1.0, 3.0, (n, 3)),
            np.random.exponential(2.5, n), np.random.random(n), np.random.sample(n),
            np.random.ranf(n), np.random.standard_normal(n))


def broadcast_parameters(loc, scale):
    np.random.seed(3)
    return np.random.normal(loc, scale), np.random.uniform(loc, loc + scale)


def poissons(lam, n):
    np.random.seed(3)
    return np.random.poisson(lam, n), np.random.poisson(lam)


def binomials(n, p, size):
    np.random.seed(5)
    return np.random.binomial(n, p, size), np.random.binomial(n, p)


def gammas(a, b, size):
    np.random.seed(5)
    return (np.random.standard_gamma(a, size), np.random.gamma(a, 2.5, size),
            np.random.chisquare(a, size), np.random.beta(a, b, size))


def gamma_zero(n):
    np.random.seed(1)
    return np.random.standard_gamma(0.0, n), np.random.rand(n)


def lognormals(sigma, size):
    np.random.seed(6)
    return np.random.lognormal(0.5, sigma, size)


def more_draws(a, size):
    np.random.seed(5)
    return (np.random.laplace(1.0, a, size), np.random.gumbel(1.0, a, size),
            np.random.logistic(-1.0, a, size), np.random.rayleigh(a, size),
            np.random.weibull(a, size), np.random.pareto(a, size), np.random.power(a, size),
            np.random.standard_t(a, size), np.random.f(a, a + 1.0, size),
            np.random.negative_binomial(a, 0.3, size), np.random.standard_cauchy(size),
            np.random.triangular(-1.0, a - 1.0, a + 2.0, size),
            np.random.geometric(min(a, 1.0) / 2, size), np.random.geometric(min(a, 1.0), size))


def odd_normals(s):
    """The cached second normal across calls and other draws: randn(3) leaves one."""
    np.random.seed(s)
    a = np.random.randn(3)
    b = np.random.rand()
    c = np.random.randn(2)
    return a, b, c, np.random.standard_normal()


def monte_carlo(n):
    np.random.seed(1)
    inside = 0
    for _ in range(n):
        x = np.random.random()
        y = np.random.random()
        if x * x + y * y < 1.0:
            inside += 1
    return 4.0 * inside / n


def walk(n):
    """Integer draws with a bound known only in the loop."""
    np.random.seed(11)
    out = np.zeros(n, dtype=np.int64)
    for i in range(1, n):
        out[i] = out[i - 1] + np.random.randint(-i, i + 1)
    return out


def shuffles(x, m, n):
    np.random.seed(5)
    np.random.shuffle(x)
    np.random.shuffle(m)
    return np.random.permutation(n), np.random.permutation(x)


def choices(x, n):
    np.random.seed(9)
    return (np.random.choice(n, 20), np.random.choice(x, (4, 3)),
            np.random.choice(x, 5, replace=False), np.random.choice(n, 3, replace=False),
            np.random.choice(5, 30, p=np.array([0.1, 0.2, 0.3, 0.2, 0.2])),
            np.random.choice(n), np.random.choice(x, p=np.full(x.shape[0], 1 / x.shape[0])))


def python_draws(s, n):
    random.seed(s)
    out = np.zeros(n)
    ints = np.zeros(n, dtype=np.int64)
    for i in range(n):
        out[i] = random.random() + random.gauss(1.0, 2.0) + random.uniform(-1, 3) \
            + random.expovariate(2.0) + random.normalvariate(0.5, 1.5)
        ints[i] = random.randint(-i, 3 * i) + random.randrange(1, 2**40 + i) \
            + random.randrange(7) + random.randrange(10, -20, -3)
    return out, ints


def python_more(s, n):
    random.seed(s)
    exact = np.zeros((n, 3))
    close = np.zeros((n, 3))
    for i in range(n):
        exact[i, 0] = random.triangular()
        exact[i, 1] = random.triangular(-1.0, 3.0, 2.5)
        exact[i, 2] = random.triangular(2.0, 2.0, 1.0)
        close[i, 0] = random.lognormvariate(0.5, 0.25)
        close[i, 1] = random.paretovariate(2.5)
        close[i, 2] = random.weibullvariate(1.5, 0.7)
    return exact, close


def python_pi(n):
    """Numba's five-minute guide's kernel, seeded."""
    random.seed(n)
    acc = 0
    for _ in range(n):
        x = random.random()
        y = random.random()
        if (x ** 2 + y ** 2) < 1.0:
            acc += 1
    return 4.0 * acc / n


def python_shuffle(x):
    random.seed(4)
    random.shuffle(x)
    return random.choice(x)


def python_lists(n):
    """random.choice and random.shuffle of Python lists (a build error: 'takes a 1-d
    array'); the shuffled list holds its items again."""
    random.seed(n)
    items = [1.5, 2.5, 3.5, 4.5, 5.5]
    random.shuffle(items)
    return random.choice([10, 20, 30]), items[0] + 10 * items[4], random.choice((0.25, 0.5))


def python_empty(a, b):
    return random.randrange(a, b)


def unused_draw(n):
    np.random.seed(2)
    np.random.rand(n)  # never read: the stream still moves past it
    return np.random.rand(n) + np.random.rand(n)  # two equal draws, not one


def traced_seed(s, n):
    np.random.seed(s)
    return np.random.rand(n)


def unseeded(n):
    return np.random.rand(n)


def bad_seed(s):
    np.random.seed(s)
    return np.random.rand()


def bad_randint(lo, hi):
    np.random.seed(0)
    return np.random.randint(lo, hi)


def bad_scale(s):
    np.random.seed(0)
    return np.random.normal(0.0, s)


def bad_choice(n, k):
    np.random.seed(0)
    return np.random.choice(n, k, replace=False)


def bad_triangle(left, mode, right):
    np.random.seed(0)
    return np.random.triangular(left, mode, right)


def bad_geometric(p):
    return np.random.geometric(p)


def nan_negative_binomial(n, p):
    """The gamma's NaN reaches the Poisson draw, which NumPy answers with 0 (its
    multiplication method), not a rejection loop that never ends."""
    np.random.seed(1)
    return np.random.negative_binomial(n, p), np.random.rand()


def shuffle_empty_rows(x):
    np.random.seed(0)
    np.random.shuffle(x)  # zero-size: NumPy draws nothing
    return np.random.rand()


def randint_i4(lo, hi):
    np.random.seed(0)
    return np.random.randint(lo, hi, 3, dtype=np.int32)


def weighted_choice(p):
    np.random.seed(0)
    return np.random.choice(3, 4, p=p)


def python_step(n):
    return random.randrange(n, step=2)


def bad_weights(p):
    np.random.seed(0)
    return np.random.choice(p.shape[0], 4, p=p)


KERNELS: dict[str, tuple[Any, str]] = {
    "arrays": (arrays, "(f8[:], f8[:], f8[:, :], f8[:], i8[:], i8[:], i8[:], i4[:])(i8)"),
    "parameters": (parameters, "(f8[:], f8[:, :], f8[:], f8[:], f8[:], f8[:], f8[:])"
                               "(i8, f8, f8)"),
    "broadcast_parameters": (broadcast_parameters, "(f8[:], f8[:])(f8[:], f8)"),
    "poissons": (poissons, "(i8[:], i8)(f8, i8)"),
    "binomials": (binomials, "(i8[:], i8)(i8, f8, i8)"),
    "gammas": (gammas, "(f8[:], f8[:], f8[:], f8[:])(f8, f8, i8)"),
    "lognormals": (lognormals, "f8[:](f8, i8)"),
    "gamma_zero": (gamma_zero, "(f8[:], f8[:])(i8)"),
    "more_draws": (more_draws, "(" + ", ".join(["f8[:]"] * 9 + ["i8[:]"] + ["f8[:]"] * 2
                                               + ["i8[:]"] * 2) + ")(f8, i8)"),
    "odd_normals": (odd_normals, "(f8[:], f8, f8[:], f8)(i8)"),
    "monte_carlo": (monte_carlo, "f8(i8)"),
    "walk": (walk, "i8[:](i8)"),
    "shuffles": (shuffles, "(i8[:], f8[:])(f8[:], f8[:, :], i8)"),
    "choices": (choices, "(i8[:], f8[:, :], f8[:], i8[:], i8[:], i8, f8)(f8[:], i8)"),
    "python_draws": (python_draws, "(f8[:], i8[:])(i8, i8)"),
    "python_pi": (python_pi, "f8(i8)"),
    "python_more": (python_more, "(f8[:, :], f8[:, :])(i8, i8)"),
    "python_shuffle": (python_shuffle, "f8(f8[:])"),
    "python_lists": (python_lists, "(i8, f8, f8)(i8)"),
    "python_empty": (python_empty, "i8(i8, i8)"),
    "unused_draw": (unused_draw, "f8[:](i8)"),
    "traced_seed": (traced_seed, "f8[:](i8, i8)"),
    "unseeded": (unseeded, "f8[:](i8)"),
    "bad_seed": (bad_seed, "f8(i8)"),
    "bad_randint": (bad_randint, "i8(i8, i8)"),
    "bad_scale": (bad_scale, "f8(f8)"),
    "bad_choice": (bad_choice, "i8[:](i8, i8)"),
    "bad_weights": (bad_weights, "i8[:](f8[:])"),
    "bad_triangle": (bad_triangle, "f8(f8, f8, f8)"),
    "bad_geometric": (bad_geometric, "i8(f8)"),
    "nan_negative_binomial": (nan_negative_binomial, "(i8, f8)(f8, f8)"),
    "shuffle_empty_rows": (shuffle_empty_rows, "f8(f8[:, :])"),
    "randint_i4": (randint_i4, "i4[:](i8, i8)"),
    "weighted_choice": (weighted_choice, "i8[:](f8[:])"),
    "python_step": (python_step, "i8(i8)"),
}


def _program(name: str) -> Program:
    fn, signature = KERNELS[name]
    return optimize(trace_kernel(fn, parse_signature_string(signature), name=name).program)


@pytest.fixture(scope="module")
def kernels() -> dict[str, jit.JitKernel]:
    names = list(KERNELS)
    library = jit.JitLibrary([_program(n) for n in names])
    return dict(zip(names, library.kernels, strict=True))


def _same(got: Any, want: Any) -> None:
    """Equal values, dtypes and shapes (a tuple result element by element)."""
    got = got if isinstance(got, (list, tuple)) else [got]
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        w = np.asarray(w)
        w = w.astype(np.float64) if w.dtype == np.float64 else w
        assert g.shape == w.shape and g.dtype == w.dtype, (g.dtype, w.dtype, g.shape, w.shape)
        np.testing.assert_array_equal(g, w, strict=True)


@pytest.mark.parametrize("n", [0, 1, 5, 623, 624, 625, 3000])
def test_seeded_draws_are_numpys(kernels, n):
    _same(kernels["arrays"](n), arrays(n))


@pytest.mark.parametrize("lo, hi", [(0.0, 1.0), (-3.5, 2.0), (5.0, 5.0), (2.0, -1.0)])
def test_distribution_parameters(kernels, lo, hi):
    _same(kernels["parameters"](700, lo, hi), parameters(700, lo, hi))


def test_array_parameters_draw_one_value_each(kernels):
    loc = np.linspace(-2.0, 2.0, 9)
    _same(kernels["broadcast_parameters"](loc, 0.5), broadcast_parameters(loc, 0.5))


@pytest.mark.parametrize("lam", [0.0, 0.5, 3.0, 9.99, 10.0, 12.5, 50.0, 1e4, 1e9])
def test_poisson_both_methods(kernels, lam):
    """Products of uniforms below 10, PTRS (with loggam's small-k branch) from 10."""
    _same(kernels["poissons"](lam, 3000), poissons(lam, 3000))


@pytest.mark.parametrize("n, p", [(0, 0.3), (10, 0.0), (10, 1.0), (10, 0.3), (100, 0.31),
                                  (1000, 0.5), (1000, 0.9), (10**6, 0.01), (10**9, 0.4),
                                  (50, 0.75), (7, 0.5)])
def test_binomial_inversion_and_btpe(kernels, n, p):
    """Inversion while n * min(p, 1 - p) <= 30, BTPE (all its regions) beyond."""
    _same(kernels["binomials"](n, p, 3000), binomials(n, p, 3000))


@pytest.mark.parametrize("a, b", [(1.0, 1.0), (0.3, 0.7), (0.5, 2.0), (2.5, 0.2),
                                  (10.0, 30.0), (1e-3, 1e-3), (0.999, 1.0)])
def test_gamma_family(kernels, a, b):
    """Gamma below, at and above shape 1 (and chisquare's half), beta by Johnk's method
    (with the logarithmic path of tiny shapes) and by two gammas."""
    _same(kernels["gammas"](a, b, 3000), gammas(a, b, 3000))


@pytest.mark.parametrize("a", [0.3, 1.0, 2.5, 40.0])
def test_more_distributions(kernels, a):
    """laplace ... triangular, each NumPy's legacy algorithm (and draw order: a Cauchy
    value is the ratio of two consecutive normals)."""
    _same(kernels["more_draws"](a, 3000), more_draws(a, 3000))


def test_standard_gamma_of_shape_zero_draws_nothing(kernels):
    _same(kernels["gamma_zero"](10), gamma_zero(10))


def test_lognormal(kernels):
    _same(kernels["lognormals"](0.8, 3000), lognormals(0.8, 3000))


def test_parameter_checks_are_numpys(kernels):
    """NumPy's constraints: a NaN lam is 'lam < 0', a scale of -0.0 is 'scale < 0'."""
    for lam in (-1.0, np.nan):
        with pytest.raises(ValueError, match="lam < 0"):
            kernels["poissons"](lam, 2)
    with pytest.raises(ValueError, match="scale < 0"):
        kernels["bad_scale"](-0.0)
    with pytest.raises(ValueError, match="^n < 0$"):
        kernels["binomials"](-1, 0.5, 2)
    for p in (-0.1, 1.5, np.nan):
        with pytest.raises(ValueError, match=r"p < 0, p > 1 or p is NaN"):
            kernels["binomials"](5, p, 2)
    with pytest.raises(ValueError, match="^shape < 0$"):
        kernels["gammas"](-1.0, 1.0, 2)
    with pytest.raises(ValueError, match="^b <= 0$"):
        kernels["gammas"](1.0, 0.0, 2)
    with pytest.raises(ValueError, match="^sigma < 0$"):
        kernels["lognormals"](-0.5, 2)
    for p in (0.0, 1.5, np.nan):
        with pytest.raises(ValueError, match=r"p <= 0, p > 1 or p contains NaNs"):
            kernels["bad_geometric"](p)
    for sides, message in [((2.0, 1.0, 3.0), "left > mode"), ((0.0, 4.0, 3.0), "mode > right"),
                           ((1.0, 1.0, 1.0), "left == right")]:
        with pytest.raises(ValueError, match=f"^{message}$"):
            kernels["bad_triangle"](*sides)
    with pytest.raises(ValueError, match="lam value too large"):
        kernels["poissons"](1e19, 2)


@pytest.mark.parametrize("s", [0, 1, 2**32 - 1])
def test_the_second_normal_is_kept(kernels, s):
    _same(kernels["odd_normals"](s), odd_normals(s))


def test_scalar_draws_in_loops(kernels):
    _same(kernels["monte_carlo"](20_000), monte_carlo(20_000))
    _same(kernels["walk"](2000), walk(2000))


def test_shuffles_and_permutations(kernels):
    x, m = np.arange(10.0), np.arange(12.0).reshape(6, 2)
    x_ref, m_ref = x.copy(), m.copy()
    got = kernels["shuffles"](x[::-1], m, 12)  # through a reversed view
    want = shuffles(x_ref[::-1], m_ref, 12)
    _same(got, want)
    _same([x, m], (x_ref, m_ref))
    _same(kernels["shuffles"](np.zeros(1), np.zeros((0, 2)), 0),
          shuffles(np.zeros(1), np.zeros((0, 2)), 0))


def test_choices(kernels):
    x = np.linspace(0.0, 1.0, 8)
    _same(kernels["choices"](x, 11), choices(x, 11))


@pytest.mark.parametrize("s", [0, 1, 12345, 2**32 + 5, -7, 2**62])
def test_python_random_is_cpythons(kernels, s):
    """``init_by_array`` over one or two key words (negative seeds: their magnitude)."""
    _same(kernels["python_draws"](s, 700), python_draws(s, 700))


def test_python_random_variates(kernels):
    """triangular is CPython's bit for bit (a square root); the others take log, exp or
    ** of a draw, aotc's within 4 ulp (tests/codegen/test_vecmath.py's bound) of libm's,
    which their results inherit (the draws stay in step: the same count of them)."""
    exact, close = kernels["python_more"](7, 500)
    want_exact, want_close = python_more(7, 500)
    _same(exact, want_exact)
    np.testing.assert_allclose(close, want_close, rtol=8 * np.finfo(np.float64).eps)


def test_python_random_loops_and_arrays(kernels):
    _same(kernels["python_pi"](30_000), python_pi(30_000))
    x, y = np.arange(20.0), np.arange(20.0)
    _same(kernels["python_shuffle"](x[::-1]), python_shuffle(y[::-1]))
    _same([x], (y,))
    for n in (0, 1, 7, 123):
        _same(kernels["python_lists"](n), python_lists(n))
    with pytest.raises(ValueError, match=r"^empty range for randrange\(\) \(5, 5, 0\)$"):
        kernels["python_empty"](5, 5)
    with pytest.raises(IndexError, match="Cannot choose from an empty sequence"):
        kernels["python_shuffle"](np.zeros(0))


def test_draws_are_not_merged_or_dropped(kernels):
    program = _program("unused_draw")
    assert sum(e.prim is random_draw_p for e in program.eqns) == 3
    _same(kernels["unused_draw"](50), unused_draw(50))


def test_seed_at_run_time(kernels):
    for s in (0, 123, 2**31, 2**32 - 1):
        _same(kernels["traced_seed"](s, 10), traced_seed(s, 10))


def test_unseeded_kernels_draw_fresh_values(kernels):
    """Each thread's generator starts from the OS's entropy (two fresh threads differ),
    and a call goes on where the last one stopped."""
    def first_draws() -> list[np.ndarray]:
        return [kernels["unseeded"](1000)[0] for _ in range(2)]
    with ThreadPoolExecutor(1) as one, ThreadPoolExecutor(1) as other:
        (a, b), (c, _) = one.submit(first_draws).result(), other.submit(first_draws).result()
    assert not np.array_equal(a, b) and not np.array_equal(a, c)
    assert a.min() >= 0.0 and a.max() < 1.0
    assert abs(a.mean() - 0.5) < 0.05  # 1000 uniforms: the mean's sd is 0.009


def test_parameter_errors_are_numpys(kernels):
    for s in (-1, 2**32):
        with pytest.raises(ValueError, match=r"Seed must be between 0 and 2\*\*32 - 1"):
            kernels["bad_seed"](s)
    with pytest.raises(ValueError, match="low >= high"):
        kernels["bad_randint"](3, 3)
    with pytest.raises(ValueError, match="scale < 0"):
        kernels["bad_scale"](-1.0)
    with pytest.raises(ValueError, match="larger sample than population"):
        kernels["bad_choice"](3, 4)
    with pytest.raises(ValueError, match="do not sum to 1"):
        kernels["bad_weights"](np.array([0.5, 0.6]))
    with pytest.raises(ValueError, match="not non-negative"):
        kernels["bad_weights"](np.array([1.5, -0.5]))
    _same(kernels["bad_randint"](3, 4), bad_randint(3, 4))


def _outcome(fn: Any, *args: Any) -> Any:
    try:
        return fn(*args)
    except Exception as error:  # the same exception, or the same values
        return type(error), str(error)


@pytest.mark.parametrize("name, args", [
    ("nan_negative_binomial", (np.nan, 0.5)), ("nan_negative_binomial", (1e-300, 0.0)),
    ("shuffle_empty_rows", (np.zeros((5, 0)),)),
    *(("randint_i4", a) for a in [(0, 2**40), (-2**40, 0), (0, 0), (5, 3), (-3, 2**31)]),
    *(("weighted_choice", (np.array(p),)) for p in ([np.nan, .5, .5], [.5, .5],
                                                     [.2, .3, .5], [.5, .6, -.1]))])
def test_edge_cases_are_numpys(kernels, name, args):
    """What review found: each answers as NumPy does (value or exception)."""
    got = _outcome(kernels[name], *args)
    want = _outcome(KERNELS[name][0], *args)
    if isinstance(want, tuple) and isinstance(want[0], type):
        assert got == want
    else:
        _same(got, want)


def test_randrange_step_without_stop_is_cpythons_type_error(kernels):
    with pytest.raises(TypeError, match="Missing a non-None stop argument"):
        kernels["python_step"](10)


def test_a_runtime_state_never_seeded_is_seeded_with_5489(kernels):
    """A caller's hook handing out an all-zero state (ready 0) gets it seeded, as the
    object's own state is: MT19937 would otherwise draw zeros forever."""
    def fresh_thread() -> np.ndarray:
        jit._STATES.states[0] = ctypes.create_string_buffer(RANDOM_STATE_BYTES)
        return kernels["unseeded"](3)[0]
    with ThreadPoolExecutor(1) as one:
        got = one.submit(fresh_thread).result()
    np.testing.assert_array_equal(got, np.random.RandomState(5489).rand(3))


def _generator_method(x):
    rng = np.random.default_rng(0)
    return rng.random(x.shape[0])


def _randint_int8(x):
    return np.random.randint(0, 5, x.shape[0], dtype=np.int8)


def _vonmises(x):
    return x + np.random.vonmises(0.0, 1.0)


def _beta(x):
    return x + random.betavariate(2.0, 3.0)


PY_STATE = random.Random(0)


def _python_instance(x):
    return x + PY_STATE.random()


@pytest.mark.parametrize("fn, message", [
    (_generator_method, "Generator and RandomState objects are not compiled"),
    (_randint_int8, "dtype=int8 is not supported"),
    (_vonmises, r"np.random.vonmises is not compiled \(yet\)"),
    (_beta, "random.betavariate is not compiled"),
    (_python_instance, "random.random is not compiled")])
def test_unsupported_forms_are_located_errors(fn, message):
    """Refused where called, never run once at build time (a constant of the kernel)."""
    signature = "f8[:](f8[:])" if fn is not _randint_int8 else "i1[:](f8[:])"
    with pytest.raises(AotcError, match=message) as info:
        trace_kernel(fn, parse_signature_string(signature), name="k")
    assert "test_random.py" in str(info.value)


@aotc.export
def looped(x: f64[:]) -> f64:
    np.random.seed(0)
    acc = 0.0
    for i in range(x.shape[0]):
        acc += x[i] * np.random.rand()
    return acc


def test_grad_refuses_draws_in_loops():
    """The reverse sweep recomputes a loop's iterations: it would draw again."""
    gradient = aotc.grad(looped)
    with pytest.raises(AotcError, match="would be drawn again by the reverse sweep"):
        trace_kernel(gradient, gradient.signatures()[0], name="g")


@aotc.export
def weighted(x: f64[:]) -> f64:
    np.random.seed(0)
    return np.sum(x * np.random.rand(x.shape[0])) + np.random.randn()


def test_draws_are_constants_to_a_gradient():
    """The forward sweep draws once; the gradient is the drawn weights."""
    gradient = aotc.grad(weighted)
    program = optimize(trace_kernel(gradient, gradient.signatures()[0], name="g").program)
    (kernel,) = jit.JitLibrary([program]).kernels
    _same(kernel(np.ones(700)), np.random.RandomState(0).rand(700))


def test_vmap_of_draws_draws_lane_by_lane():
    """No batching rule gives each lane its own draws: the vmapped kernel runs the lanes
    one by one (transforms/lanes.py), drawing as the uncompiled vmap's loop does (here
    each lane seeds, so each draws the same numbers)."""
    batched = aotc.vmap(weighted)
    compiled = aotc.jit(aotc.export(batched, name="weighted_lanes"))
    x = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(compiled(x), batched(x))
