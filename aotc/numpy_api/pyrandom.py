"""Python's ``random`` module in kernels, drawing CPython's sequence.

Numba compiles ``random.random()`` and friends with a generator apart from NumPy's; so
does aotc (:mod:`aotc.ops.random`'s ``python`` generator): each calling thread has one,
seeded from the OS, and ``random.seed(s)`` in a kernel makes it draw what CPython's
``random.seed(s)`` then draws. The functions are CPython's own code (``Lib/random.py``)
over the primitives' ``double``, ``below`` (``_randbelow``), ``pygauss`` and
``exponential`` draws, with CPython's errors. Where CPython takes ``math.log``,
``exp`` or ``**`` of a draw (``normalvariate``'s test, ``lognormvariate``,
``paretovariate``, ``weibullvariate``) these are aotc's, within a few ulp of the C
library's. Before this table existed these calls ran
once at build time, and their values were constants of the kernel.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any, cast

import numpy as np

from .. import lax
from ..ops.random import random_seed_p
from ..tracing.tracer import Tracer, as_tracer, bind_dim, current
from .creation import full_from_dims
from .indexing import getitem
from .joining import array
from .random import F64, draw, integer_scalar, raise_if
from .writes import write

#: ``normalvariate``'s constant, as CPython computes it.
NV_MAGICCONST = 4 * math.exp(-0.5) / math.sqrt(2.0)


def _python(distribution: str, *inputs: Any) -> Tracer:
    return draw(distribution, (), *inputs, generator="python")


def _float(value: Any) -> Tracer:
    return lax.convert(as_tracer(value), F64)


def seed(a: Any = None, version: int = 2) -> None:
    if a is None or version != 2:
        raise current().error("random.seed() in a kernel takes one integer",
                              hint="pass an integer, or call no seed: each thread's "
                              "generator starts from fresh OS entropy")
    lax.bind(random_seed_p, integer_scalar(a, "random.seed's seed").atom, generator="python")


def random_() -> Tracer:
    return _python("double")


def uniform(a: Any, b: Any) -> Tracer:
    lo, hi = _float(a), _float(b)
    return cast(Tracer, lo + (hi - lo) * _python("double"))


def randrange(start: Any, stop: Any = None, step: Any = 1) -> Tracer:
    if not isinstance(step, int):
        raise current().error("random.randrange: the step must be known at build time")
    if stop is None:
        if step != 1:
            raise_if(as_tracer(True), "TypeError", "Missing a non-None stop argument")
        n = integer_scalar(start, "random.randrange's stop")
        raise_if(n <= 0, "ValueError", "empty range for randrange()")
        return _python("below", n)
    first = integer_scalar(start, "random.randrange's start")
    last = integer_scalar(stop, "random.randrange's stop")
    width = last - first
    if step == 1:
        raise_if(width <= 0, "ValueError", "empty range for randrange() ({lhs}, {rhs}, {v2})",
                 first, last, width)
        return cast(Tracer, first + _python("below", width))
    if step == 0:
        raise current().error("zero step for randrange()")
    n = (width + step - 1) // step if step > 0 else (width + step + 1) // step
    raise_if(n <= 0, "ValueError", "empty range for randrange()")
    return cast(Tracer, first + step * _python("below", n))


def randint(a: Any, b: Any) -> Tracer:
    return randrange(a, integer_scalar(b, "random.randint's b") + 1)


def gauss(mu: Any = 0.0, sigma: Any = 1.0) -> Tracer:
    return cast(Tracer, _float(mu) + _python("pygauss") * _float(sigma))


def normalvariate(mu: Any = 0.0, sigma: Any = 1.0) -> Tracer:
    """Kinderman and Monahan's ratio method, as CPython draws it (the acceptance test's
    logarithm is aotc's, within a few ulp of the C library's: a draw on the boundary
    could go the other way)."""
    def body(state: tuple[Any, Any]) -> tuple[Any, Any]:
        u1 = _python("double")
        u2 = 1.0 - _python("double")
        z = NV_MAGICCONST * (u1 - 0.5) / u2
        return z, z * z / 4.0 <= -np.log(u2)

    z, _ = lax.while_loop(lambda state: ~state[1], body,
                          (as_tracer(0.0, F64), as_tracer(False, np.dtype(bool))))
    return cast(Tracer, _float(mu) + z * _float(sigma))


def expovariate(lambd: Any = 1.0) -> Tracer:
    return cast(Tracer, _python("exponential") / _float(lambd))


def triangular(low: Any = 0.0, high: Any = 1.0, mode: Any = None) -> Any:
    """CPython's: one uniform, folded at the mode (``low`` when ``high == low``)."""
    lo, hi = _float(low), _float(high)
    u: Any = _python("double")
    flat = hi == lo
    c = as_tracer(0.5, F64) if mode is None else \
        (_float(mode) - lo) / np.where(flat, 1.0, hi - lo)
    fold = u > c
    u, c = np.where(fold, 1.0 - u, u), np.where(fold, 1.0 - c, c)
    start, end = np.where(fold, hi, lo), np.where(fold, lo, hi)
    return np.where(flat, lo, start + (end - start) * np.sqrt(u * c))


def lognormvariate(mu: Any, sigma: Any) -> Any:
    return np.exp(normalvariate(mu, sigma))


def paretovariate(alpha: Any) -> Any:
    return (1.0 - _python("double")) ** (-1.0 / _float(alpha))


def weibullvariate(alpha: Any, beta: Any) -> Any:
    u = 1.0 - _python("double")
    return _float(alpha) * (-np.log(u)) ** (1.0 / _float(beta))


def _sequence(seq: Any, what: str) -> Tracer:
    """The items of ``seq`` (a 1-d array, or a Python list or tuple of numbers) as a
    1-d array."""
    if isinstance(seq, (list, tuple)) and seq and all(
            isinstance(v, (bool, int, float, complex, np.generic))
            or (isinstance(v, Tracer) and v.ndim == 0) for v in seq):
        seq = array(list(seq))
    if not isinstance(seq, Tracer) or seq.ndim != 1:
        raise current().error(f"random.{what} takes a 1-d array in a kernel",
                              hint=f"np.random.{what} takes arrays of any rank")
    return seq


def choice(seq: Any) -> Tracer:
    items = _sequence(seq, "choice")
    n = lax.dim_value(items.aval.shape[0])
    raise_if(n <= 0, "IndexError", "Cannot choose from an empty sequence")
    return cast(Tracer, getitem(items, _python("below", np.maximum(n, 1))))


def shuffle(x: Any) -> None:
    """CPython's Fisher-Yates: ``x[i]`` with ``x[randbelow(i + 1)]``, ``i`` from the end
    (a Python list of numbers gets the shuffled items back, as runtime values)."""
    items = _sequence(x, "shuffle")
    n = lax.dim_value(items.aval.shape[0])

    def swap(k: Tracer, carry: Any) -> Any:
        i = n - 1 - k
        j = _python("below", i + 1)
        at_i, at_j = getitem(items, i), getitem(items, j)
        write(items, i, at_j)
        write(items, j, at_i)
        return carry

    lax.fori_loop(0, np.maximum(n - 1, 0), swap, 0)
    if isinstance(x, list):
        x[:] = [getitem(items, i) for i in range(len(x))]


#: The module's functions a kernel may call (bound methods of its hidden instance).
PYRANDOM: dict[Callable[..., Any], Callable[..., Any]] = {
    random.seed: seed, random.random: random_, random.uniform: uniform,
    random.randrange: randrange, random.randint: randint, random.gauss: gauss,
    random.normalvariate: normalvariate, random.expovariate: expovariate,
    random.triangular: triangular, random.lognormvariate: lognormvariate,
    random.paretovariate: paretovariate, random.weibullvariate: weibullvariate,
    random.choice: choice, random.shuffle: shuffle,
}


def sample(items: Tracer, k: Any) -> Tracer:
    """CPython 3.11's ``sample`` of the population ``items`` (a 1-d array of them):
    ``k`` distinct ones, drawn from a pool (the items still unpicked, the last one moved
    into each vacancy) when the population is small next to a set of ``k``, else by
    ``randbelow(n)`` again until one not picked yet (a mask here where CPython keeps a
    set: the same draws). A list standing for the items."""
    n = lax.dim_value(items.aval.shape[0])
    want = integer_scalar(k, "random.sample's k")
    raise_if(np.logical_or(want < 0, want > n), "ValueError",
             "Sample larger than population or is negative")
    count = bind_dim(cast(Tracer, np.clip(want, 0, n)), items.aval.shape[0])
    taken = lax.dim_value(count)
    result = full_from_dims((count, *items.aval.shape[1:]), 0, items.dtype)
    # CPython's set size: 21, plus for k > 5 a table of 4 ** ceil(log(3k, 4)) entries
    table = 4.0 ** np.ceil(np.log(_float(np.maximum(taken, 1) * 3)) / math.log(4.0))
    setsize = 21.0 + np.where(taken > 5, table, 0.0)

    small = _float(n) <= setsize  # CPython's pool; else its set (a mask here)

    def pick(i: Tracer, state: tuple[Tracer, Tracer, Tracer]) -> tuple[Tracer, ...]:
        out, pool, picked = state

        def pooled() -> tuple[Tracer, Tracer, Tracer]:
            j = _python("below", n - i)
            return getitem(pool, j), j, getitem(pool, n - i - 1)

        def redraw(_: Any = None) -> tuple[Tracer, Tracer]:
            j = _python("below", n)
            return j, getitem(picked, j)

        def rejected() -> tuple[Tracer, Tracer, Tracer]:
            j, _ = lax.while_loop(lambda drawn: drawn[1], redraw, redraw())
            return getitem(items, j), j, getitem(pool, j)

        value, j, filler = lax.cond(small, pooled, rejected)  # (only these draw)
        write(out, i, value)
        write(pool, j, filler)  # the last unpicked item into the vacancy (pool only)
        write(picked, j, np.logical_or(getitem(picked, j), np.logical_not(small)))
        return out, pool, picked

    unpicked = full_from_dims((items.aval.shape[0],), False, np.dtype(bool))
    chosen: Tracer = lax.fori_loop(0, taken, pick, (result, lax.fresh(items), unpicked))[0]
    chosen.list_like = True
    return chosen


def is_python_random(fn: Any) -> bool:
    """A function of Python's ``random`` (module level or a ``Random``'s method)."""
    return getattr(fn, "__module__", None) == "random" or \
        isinstance(getattr(fn, "__self__", None), random.Random)


def refuse(fn: Any) -> Any:
    supported = ", ".join(sorted(f"random.{f.__name__}" for f in PYRANDOM))
    return current().error(
        f"random.{getattr(fn, '__name__', fn)} is not compiled (and a random.Random "
        "object's methods are not)", hint=f"aotc compiles {supported}, and numpy.random's "
        "module functions")
