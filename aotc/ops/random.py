"""Random numbers: the global generators of ``numpy.random`` and of Python's ``random``.

Both are Mersenne Twisters (MT19937) with a cached second normal, as Numba compiles
them; the kernel keeps one state of each ``generator`` (``numpy``, ``python``) per
calling thread (see :mod:`aotc.abi`), and these primitives read and advance it, so a
kernel seeded with ``np.random.seed(s)`` (``random.seed(s)``) draws NumPy's (CPython's)
own sequence for ``s``:

- ``random_seed[generator] s``: NumPy's ``seed(s)`` for ``0 <= s < 2**32`` (MT19937's
  ``init_genrand``; tracing checks the range), or CPython's ``seed(s)`` (``init_by_array``
  over the 32-bit words of ``abs(s)``);
- ``random_draw[generator, distribution, shape]``: an array of ``shape`` (rank 0: one
  value) of independent draws, in C order, each as NumPy or CPython draws it:

  ============== ======= =====================================================
  ``double``     f64     ``random_sample``, ``random()``: 53 bits over ``2**53``
  ``gauss``      f64     ``standard_normal``: the polar method, second value kept
  ``exponential`` f64    ``standard_exponential``: ``-log(1 - double)``
  ``interval``   i64     ``rng`` (an i64 input read as unsigned): uniform on
                         ``[0, rng]`` by masked rejection (``randint``, ``shuffle``)
  ``below``      i64     ``n > 0``: CPython's ``_randbelow``, ``getrandbits`` of
                         ``n``'s bit length until one is below ``n``
  ``pygauss``    f64     CPython's ``gauss(0, 1)``: Box-Muller, second value kept
  ``poisson``    i64     ``lam`` (f64, ``0 <= lam``): NumPy's ``random_poisson``,
                         multiplication below 10, Hoermann's PTRS from 10
  ``binomial``   i64     ``p`` (f64 in [0, 1]), ``n`` (i64 >= 0): the legacy
                         inversion or BTPE of ``RandomState.binomial``
  ``standard_gamma`` f64 ``shape >= 0``: Marsaglia and Tsang above 1
  ``beta``       f64     ``a, b > 0``: Johnk's algorithm, or two gammas
  others         f64     ``laplace``, ``gumbel``, ``logistic``, ``rayleigh``
                         (standard: location 0, scale 1), ``weibull``, ``pareto``, ``power``,
                         ``standard_t``, ``f``, ``lognormal``; ``negative_binomial``,
                         ``geometric`` (i64)
  ============== ======= =====================================================

Everything else (``uniform``, ``normal``, ``randint``, ``choice``, ``shuffle``...) is a
decomposition over these two in :mod:`aotc.numpy_api.random` and
:mod:`aotc.numpy_api.pyrandom`.

Both are ``STATEFUL``: two equal draws are two draws (CSE keeps both), an unused one
still advances the stream (DCE keeps it) and their order is the program's. The NumPy
reference (:data:`impl_rules`) draws from one ``RandomState`` of this module.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import numpy as np

from ..tracing.avals import AType
from .core import EFFECT, STATEFUL, impl_rules, primitive, type_rules

random_seed_p = primitive("random_seed", EFFECT, STATEFUL)
random_draw_p = primitive("random_draw", EFFECT, STATEFUL)

F64, I64 = np.dtype(np.float64), np.dtype(np.int64)
#: distribution -> (result dtype, the dtypes of its scalar inputs).
DISTRIBUTIONS: dict[str, tuple[np.dtype, tuple[np.dtype, ...]]] = {
    "double": (F64, ()), "gauss": (F64, ()), "exponential": (F64, ()),
    "interval": (I64, (I64,)), "below": (I64, (I64,)), "pygauss": (F64, ()),
    "poisson": (I64, (F64,)), "binomial": (I64, (F64, I64)),
    "standard_gamma": (F64, (F64,)), "beta": (F64, (F64, F64)),
    "laplace": (F64, ()), "gumbel": (F64, ()), "logistic": (F64, ()), "rayleigh": (F64, ()),
    "weibull": (F64, (F64,)), "pareto": (F64, (F64,)), "power": (F64, (F64,)),
    "standard_t": (F64, (F64,)), "f": (F64, (F64, F64)),
    "negative_binomial": (I64, (F64, F64)), "geometric": (I64, (F64,)),
    "lognormal": (F64, (F64, F64))}
#: The generators, in the order of the runtime's states.
GENERATORS = ("numpy", "python")
#: The reference interpreter's generators (seeded by ``random_seed``, as the kernel's).
REFERENCE = np.random.RandomState()
PY_REFERENCE = random.Random()


def _seed_type(seed: Any, *, generator: str) -> tuple[Any, ...]:
    if seed.ndim or seed.dtype != I64 or generator not in GENERATORS:
        raise ValueError("random_seed: the seed is an i64 scalar, of numpy or python")
    return ()


def _draw_type(*inputs: Any, generator: str, distribution: str, shape: tuple[Any, ...]
               ) -> tuple[Any, ...]:
    if distribution not in DISTRIBUTIONS or generator not in GENERATORS:
        raise ValueError(f"random_draw: unknown distribution {distribution!r}")
    dtype, takes = DISTRIBUTIONS[distribution]
    if tuple(x.dtype for x in inputs) != takes or any(x.ndim for x in inputs):
        raise ValueError(f"random_draw[{distribution}]: takes scalars of {takes}")
    return (AType(dtype, tuple(shape)),)


def _seed_impl(seed: np.ndarray, *, generator: str) -> tuple[np.ndarray, ...]:
    (REFERENCE if generator == "numpy" else PY_REFERENCE).seed(int(seed))
    return ()


#: CPython's draws, one value each.
_PYTHON: dict[str, Callable[..., Any]] = {
    "double": lambda: PY_REFERENCE.random(), "exponential": lambda: PY_REFERENCE.expovariate(1.0),
    "below": lambda n: PY_REFERENCE.randrange(n), "pygauss": lambda: PY_REFERENCE.gauss()}


def _interval(rng: int, size: tuple[int, ...]) -> np.ndarray:
    rng = int(rng) % 2**64
    drawn = REFERENCE.randint(0, rng + 1, size, dtype=np.uint64) if rng else \
        np.zeros(size, np.uint64)
    return np.asarray(drawn).astype(I64)


def _numpy(name: str, *first: float) -> Callable[..., Any]:
    """``RandomState.name`` of ``first`` (a standard form's location and scale), then the
    inputs and the size."""
    return lambda *args: getattr(REFERENCE, name)(*first, *args)


#: NumPy's draws of ``size`` values from the inputs (in the primitive's order).
_NUMPY: dict[str, Callable[..., Any]] = {
    "double": _numpy("random_sample"), "gauss": _numpy("standard_normal"),
    "exponential": _numpy("standard_exponential"), "interval": _interval,
    "binomial": lambda p, n, size: REFERENCE.binomial(n, p, size),
    **{name: _numpy(name, 0.0, 1.0) for name in ("laplace", "gumbel", "logistic")},
    "rayleigh": _numpy("rayleigh", 1.0),
    **{name: _numpy(name) for name in ("poisson", "standard_gamma", "beta", "weibull",
                                       "pareto", "power", "standard_t", "f",
                                       "negative_binomial", "geometric", "lognormal")},
}


def _draw_impl(*inputs: np.ndarray, generator: str, distribution: str,
               shape: tuple[int, ...]) -> tuple[np.ndarray, ...]:
    size = tuple(int(d) for d in shape)
    dtype = DISTRIBUTIONS[distribution][0]
    values = [x[()] for x in inputs]
    if generator == "python":
        drawn = [_PYTHON[distribution](*values) for _ in range(int(np.prod(size)))]
        return (np.array(drawn, dtype).reshape(size),)
    return (np.asarray(_NUMPY[distribution](*values, size)).astype(dtype),)


type_rules.update({random_seed_p: _seed_type, random_draw_p: _draw_type})
impl_rules.update({random_seed_p: _seed_impl, random_draw_p: _draw_impl})
