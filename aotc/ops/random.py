"""Random numbers: the ``numpy.random`` module's global generator, as Numba compiles it.

NumPy's legacy ``RandomState`` is a Mersenne Twister (MT19937) with a cached second
normal; the kernel keeps one such state per calling thread (see :mod:`aotc.abi`), and
these primitives read and advance it, so a kernel seeded with ``np.random.seed(s)``
draws NumPy's own sequence for ``s``:

- ``random_seed s``: ``np.random.seed(s)`` for ``0 <= s < 2**32`` (MT19937's
  ``init_genrand``; tracing checks the range);
- ``random_draw[distribution, shape]``: an array of ``shape`` (rank 0: one value) of
  independent draws, in C order, each as NumPy draws it:

  ============== ======= =====================================================
  ``double``     f64     ``random_sample``: 53 random bits over ``2**53``
  ``gauss``      f64     ``standard_normal``: the polar method, second value kept
  ``exponential`` f64    ``standard_exponential``: ``-log(1 - double)``
  ``interval``   i64     ``rng`` (an i64 input read as unsigned): uniform on
                         ``[0, rng]`` by masked rejection (``randint``, ``shuffle``)
  ============== ======= =====================================================

Everything else (``uniform``, ``normal``, ``randint``, ``choice``, ``shuffle``...) is a
decomposition over these two in :mod:`aotc.numpy_api.random`.

Both are ``STATEFUL``: two equal draws are two draws (CSE keeps both), an unused one
still advances the stream (DCE keeps it) and their order is the program's. The NumPy
reference (:data:`impl_rules`) draws from one ``RandomState`` of this module.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..avals import AType
from .core import EFFECT, STATEFUL, impl_rules, primitive, type_rules

random_seed_p = primitive("random_seed", EFFECT, STATEFUL)
random_draw_p = primitive("random_draw", EFFECT, STATEFUL)

F64, I64 = np.dtype(np.float64), np.dtype(np.int64)
#: distribution -> (result dtype, number of scalar inputs).
DISTRIBUTIONS: dict[str, tuple[np.dtype, int]] = {
    "double": (F64, 0), "gauss": (F64, 0), "exponential": (F64, 0), "interval": (I64, 1)}
#: The reference interpreter's generator (seeded by ``random_seed``, as the kernel's is).
REFERENCE = np.random.RandomState()


def _seed_type(seed: Any) -> tuple[Any, ...]:
    if seed.ndim or seed.dtype != I64:
        raise ValueError("random_seed: the seed is an i64 scalar")
    return ()


def _draw_type(*inputs: Any, distribution: str, shape: tuple[Any, ...]) -> tuple[Any, ...]:
    if distribution not in DISTRIBUTIONS:
        raise ValueError(f"random_draw: unknown distribution {distribution!r}")
    dtype, arity = DISTRIBUTIONS[distribution]
    if len(inputs) != arity or any(x.ndim or x.dtype != I64 for x in inputs):
        raise ValueError(f"random_draw[{distribution}]: takes {arity} i64 scalars")
    return (AType(dtype, tuple(shape)),)


def _seed_impl(seed: np.ndarray) -> tuple[np.ndarray, ...]:
    REFERENCE.seed(int(seed))
    return ()


def _draw_impl(*inputs: np.ndarray, distribution: str, shape: tuple[int, ...]
               ) -> tuple[np.ndarray, ...]:
    size = tuple(int(d) for d in shape)
    if distribution == "interval":
        rng = int(inputs[0]) % 2**64
        drawn = REFERENCE.randint(0, rng + 1, size, dtype=np.uint64) if rng else \
            np.zeros(size, np.uint64)
        return (np.asarray(drawn).astype(I64),)
    draw: Any = {"double": REFERENCE.random_sample, "gauss": REFERENCE.standard_normal,
                 "exponential": REFERENCE.standard_exponential}[distribution]
    return (np.asarray(draw(size), F64),)


type_rules.update({random_seed_p: _seed_type, random_draw_p: _draw_type})
impl_rules.update({random_seed_p: _seed_impl, random_draw_p: _draw_impl})
