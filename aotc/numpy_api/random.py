"""``numpy.random``'s module functions, drawing from the kernel's Mersenne Twister.

As in Numba, a kernel has a generator of its own for each calling thread (seeded from
the OS at its first draw, again in a forked child), apart from NumPy's global one:
``np.random.seed(s)`` in a kernel seeds it, and from there every function below draws
NumPy's legacy sequence for ``s`` (the values ``RandomState(s)`` gives, in order). Each
is a decomposition over the two primitives of :mod:`aotc.ops.random`, in NumPy's own
arithmetic (``uniform`` is ``low + (high - low) * random_sample``, ``normal`` is
``loc + scale * standard_normal``...), with NumPy's checks of the parameters.

Generator objects (``default_rng``, ``RandomState`` instances) are not compiled: their
bit generators and algorithms differ from these (see :func:`refuse`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np

from .. import lax
from ..ops.index import raise_if_p
from ..ops.random import DISTRIBUTIONS, random_draw_p, random_seed_p
from ..shapes import DimExpr
from ..shapes import size as size_of
from ..tracing.tracer import Tracer, as_tracer, current
from .creation import _shape, arange
from .fancy import getitem_any
from .indexing import getitem
from .joining import asarray
from .ufuncs import broadcast_all
from .writes import write

F64, I64 = np.dtype(np.float64), np.dtype(np.int64)
#: ``randint`` dtypes whose draws are the int64 ones (NumPy's 8- and 16-bit draws
#: share 32-bit words between values: a different sequence).
RANDINT_DTYPES = tuple(np.dtype(c) for c in ("i8", "i4", "u8", "u4"))
#: NumPy's bound on ``poisson``'s ``lam`` (the int64 range, less 10 sigma).
POISSON_LAM_MAX = np.iinfo(np.int64).max - np.sqrt(np.iinfo(np.int64).max) * 10


def raise_if(condition: Any, error: str, message: str, *details: Tracer) -> None:
    """Raise ``error(message)`` when ``condition`` holds (``details``: its values)."""
    lax.bind(raise_if_p, as_tracer(condition).atom, *(d.atom for d in details), error=error,
             message=message)


def size_shape(size: Any) -> tuple[DimExpr, ...]:
    return () if size is None else _shape(size)


def draw(distribution: str, shape: tuple[DimExpr, ...], *inputs: Any,
         generator: str = "numpy") -> Tracer:
    """``shape`` draws of ``distribution`` (see :mod:`aotc.ops.random`), in C order."""
    takes = DISTRIBUTIONS[distribution][1]
    atoms = [lax.convert(as_tracer(x, t), t).atom for x, t in zip(inputs, takes, strict=True)]
    return lax.bind1(random_draw_p, *atoms, generator=generator, distribution=distribution,
                     shape=tuple(shape))


def floats(*params: Any) -> list[Tracer]:
    return [lax.convert(asarray(p), F64) for p in params]


def negative(x: Tracer) -> Any:
    """NumPy's ``CONS_NON_NEGATIVE``: a set sign bit, NaN aside (``-0.0`` fails)."""
    return np.signbit(x) & ~np.isnan(x)


def shape_of(size: Any, params: list[Tracer]) -> tuple[DimExpr, ...]:
    """The draws' shape: ``size``, else the parameters' broadcast shape (one draw each)."""
    if size is not None:
        return size_shape(size)
    return broadcast_all(params)[0].aval.shape if params else ()


def seed(seed: Any = None) -> None:
    if seed is None:
        raise current().error("np.random.seed() without a seed is not supported in kernels",
                              hint="pass an integer from 0 to 2**32 - 1, or call no seed: "
                              "each thread's generator starts from fresh OS entropy")
    s = integer_scalar(seed, "np.random.seed's seed")
    raise_if((s < 0) | (s > 2**32 - 1), "ValueError", "Seed must be between 0 and 2**32 - 1")
    lax.bind(random_seed_p, s.atom, generator="numpy")


def random_sample(size: Any = None) -> Tracer:
    return draw("double", size_shape(size))


def rand(*dims: Any) -> Tracer:
    return draw("double", size_shape(dims))


def standard_normal(size: Any = None) -> Tracer:
    return draw("gauss", size_shape(size))


def randn(*dims: Any) -> Tracer:
    return draw("gauss", size_shape(dims))


def standard_exponential(size: Any = None) -> Tracer:
    return draw("exponential", size_shape(size))


def uniform(low: Any = 0.0, high: Any = 1.0, size: Any = None) -> Tracer:
    lo, hi = floats(low, high)
    span = hi - lo
    raise_if(~np.isfinite(span), "OverflowError", "Range exceeds valid bounds")
    return cast(Tracer, lo + span * draw("double", shape_of(size, [lo, hi])))


def normal(loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Tracer:
    mean, spread = floats(loc, scale)
    raise_if(negative(spread), "ValueError", "scale < 0")
    return cast(Tracer, mean + spread * draw("gauss", shape_of(size, [mean, spread])))


def exponential(scale: Any = 1.0, size: Any = None) -> Tracer:
    (spread,) = floats(scale)
    raise_if(negative(spread), "ValueError", "scale < 0")
    return cast(Tracer, spread * draw("exponential", shape_of(size, [spread])))


def poisson(lam: Any = 1.0, size: Any = None) -> Tracer:
    """NumPy's ``random_poisson``, one scalar ``lam`` (the draw's input)."""
    (rate,) = floats(lam)
    if rate.ndim:
        raise current().error("np.random.poisson with an array of lam is not supported in "
                              "kernels", hint="draw for each lam in a loop")
    raise_if(~(rate >= 0), "ValueError", "lam < 0 or lam is NaN")
    raise_if(rate > POISSON_LAM_MAX, "ValueError", "lam value too large")
    return draw("poisson", size_shape(size), rate)


def binomial(n: Any, p: Any, size: Any = None) -> Tracer:
    """NumPy's legacy ``binomial``, scalar ``n`` and ``p`` (the draw's inputs)."""
    trials = integer_scalar(n, "np.random.binomial's n")
    (chance,) = floats(p)
    if chance.ndim:
        raise current().error("np.random.binomial with an array of p is not supported in "
                              "kernels", hint="draw for each p in a loop")
    raise_if(trials < 0, "ValueError", "n < 0")
    raise_if(~((chance >= 0) & (chance <= 1)), "ValueError", "p < 0, p > 1 or p is NaN")
    return draw("binomial", size_shape(size), chance, trials)


def scalar_parameter(value: Any, function: str, name: str) -> Tracer:
    (param,) = floats(value)
    if param.ndim:
        raise current().error(f"np.random.{function} with an array of {name} is not "
                              "supported in kernels", hint=f"draw for each {name} in a loop")
    return param


def standard_gamma(shape: Any, size: Any = None) -> Tracer:
    k = scalar_parameter(shape, "standard_gamma", "shape")
    raise_if(negative(k), "ValueError", "shape < 0")
    return draw("standard_gamma", size_shape(size), k)


def gamma(shape: Any, scale: Any = 1.0, size: Any = None) -> Tracer:
    k = scalar_parameter(shape, "gamma", "shape")
    (theta,) = floats(scale)
    raise_if(negative(k), "ValueError", "shape < 0")
    raise_if(negative(theta), "ValueError", "scale < 0")
    return cast(Tracer, theta * draw("standard_gamma", shape_of(size, [theta]), k))


def chisquare(df: Any, size: Any = None) -> Tracer:
    freedom = scalar_parameter(df, "chisquare", "df")
    raise_if(freedom <= 0, "ValueError", "df <= 0")
    return cast(Tracer, 2.0 * draw("standard_gamma", size_shape(size), freedom / 2.0))


def beta(a: Any, b: Any, size: Any = None) -> Tracer:
    alpha, beta_ = scalar_parameter(a, "beta", "a"), scalar_parameter(b, "beta", "b")
    raise_if(alpha <= 0, "ValueError", "a <= 0")
    raise_if(beta_ <= 0, "ValueError", "b <= 0")
    return draw("beta", size_shape(size), alpha, beta_)


def lognormal(mean: Any = 0.0, sigma: Any = 1.0, size: Any = None) -> Tracer:
    """``exp(normal(mean, sigma))`` with the C library's exp, scalar parameters."""
    mu = scalar_parameter(mean, "lognormal", "mean")
    spread = scalar_parameter(sigma, "lognormal", "sigma")
    raise_if(negative(spread), "ValueError", "sigma < 0")
    return draw("lognormal", size_shape(size), mu, spread)


def integer_scalar(value: Any, what: str,
                   hint: str = "pass an integer scalar (draw each one separately)") -> Tracer:
    """``value`` as an i64 scalar, or a build error naming ``what`` it is."""
    v = as_tracer(value)
    if v.ndim or v.dtype.kind not in "iub":
        raise current().error(f"{what} must be an integer scalar here", hint=hint)
    return lax.convert(v, I64)


def randint(low: Any, high: Any = None, size: Any = None, dtype: Any = int) -> Tracer:
    """``[low, high)`` (``[0, low)`` with one bound) by NumPy's masked rejection."""
    kind = np.dtype(dtype)
    if kind not in RANDINT_DTYPES:
        raise current().error(f"np.random.randint with dtype={kind} is not supported in "
                              "kernels", hint="use int64 or int32 (and convert the result)")
    if high is None:
        lo, hi = as_tracer(0, I64), integer_scalar(low, "np.random.randint's high")
    else:
        lo, hi = integer_scalar(low, "np.random.randint's low"), \
            integer_scalar(high, "np.random.randint's high")
    bounds = np.iinfo(kind)
    if bounds.min > np.iinfo(I64).min:  # NumPy's checks, in its order
        raise_if(lo < bounds.min, "ValueError", f"low is out of bounds for {kind}")
    if bounds.max < np.iinfo(I64).max:
        raise_if(hi > bounds.max + 1, "ValueError", f"high is out of bounds for {kind}")
    raise_if((lo >= hi) & (lo == 0), "ValueError", "high <= 0")
    raise_if(lo >= hi, "ValueError", "low >= high")
    values = lo + draw("interval", size_shape(size), hi - 1 - lo)
    return lax.convert(values, kind)


def shuffle(x: Any) -> None:
    """In place along the first axis: NumPy's Fisher-Yates, from the last row down."""
    if not isinstance(x, Tracer) or x.ndim == 0:
        raise current().error("np.random.shuffle takes an array",
                              hint="shuffle an array argument or one made in the kernel")
    n = lax.dim_value(x.aval.shape[0])
    empty = lax.dim_value(size_of(x.aval.shape)) == 0  # NumPy draws nothing for it

    def swap(k: Tracer, carry: Any) -> Any:
        i = n - 1 - k
        j = draw("interval", (), i)
        row_i, row_j = lax.fresh(getitem(x, i)), lax.fresh(getitem(x, j))
        write(x, i, row_j)
        write(x, j, row_i)
        return carry

    lax.fori_loop(0, np.where(empty, 0, np.maximum(n - 1, 0)), swap, 0)


def permutation(x: Any) -> Tracer:
    if isinstance(x, Tracer) and x.ndim:
        out = lax.fresh(x)
    else:
        out = arange(integer_scalar(x, "np.random.permutation's n"))
    shuffle(out)
    return out


def choice(a: Any, size: Any = None, replace: bool = True, p: Any = None) -> Any:
    """NumPy's legacy ``choice``: ``randint`` indices, the CDF searched with
    ``random_sample`` for weights, a permutation's head without replacement."""
    items = a if isinstance(a, Tracer) and a.ndim else None
    if items is not None and items.ndim != 1:
        raise current().error("np.random.choice: a must be 1-dimensional")
    population = lax.dim_value(items.aval.shape[0]) if items is not None else \
        integer_scalar(a, "np.random.choice's a")
    shape = size_shape(size)
    count: Any = 1
    for d in shape:
        count = count * lax.dim_value(d)
    raise_if((population <= 0) & (count != 0), "ValueError",
              "a must be greater than 0 unless no samples are taken")
    if not isinstance(replace, bool):
        raise current().error("np.random.choice: replace must be known at build time")
    if p is not None:
        if not replace:
            raise current().error("np.random.choice with p and replace=False is not "
                                  "supported in kernels", hint="draw with replace=True")
        given = asarray(p)
        if given.ndim != 1:
            raise current().error("'p' must be 1-dimensional")
        tolerance = np.sqrt(np.finfo(np.float64).eps)
        if given.dtype.kind == "f":
            tolerance = max(tolerance, np.sqrt(np.finfo(given.dtype).eps))
        weights = lax.convert(given, F64)
        raise_if(lax.dim_value(weights.aval.shape[0]) != population, "ValueError",
                 "'a' and 'p' must have same size")
        total = np.sum(weights)
        raise_if(np.isnan(total), "ValueError", "probabilities contain NaN")
        raise_if(weights < 0, "ValueError", "probabilities are not non-negative")
        raise_if(np.abs(total - 1.0) > tolerance, "ValueError", "probabilities do not sum to 1")
        cdf: Any = np.cumsum(weights)
        cdf = cdf / cdf[-1]
        index: Any = np.searchsorted(cdf, draw("double", shape), side="right")
    elif replace:
        index = draw("interval", shape, population - 1)  # randint(0, population, size)
    else:
        raise_if(count > population, "ValueError",
                  "Cannot take a larger sample than population when 'replace=False'")
        head = lax.refine_shape(permutation(population)[:count], (size_of(shape),))
        index = lax.reshape(head, shape) if shape else head[0]
    return index if items is None else getitem_any(items, index)


def refuse(fn: Any) -> Any:
    """The build error for a numpy.random function aotc does not compile: a module
    function not in the tables yet, or a generator object's method."""
    name = getattr(fn, "__name__", str(fn))
    if getattr(fn, "__self__", None) is np.random.mtrand._rand:  # a module function
        return current().error(
            f"np.random.{name} is not compiled (yet)",
            hint="docs/supported-numpy-api.md lists the np.random functions aotc compiles; "
            "or draw outside the kernel and pass the numbers in")
    return current().error(
        f"{getattr(fn, '__qualname__', name)}: numpy.random Generator and RandomState "
        "objects are not compiled",
        hint="call the np.random module functions (np.random.seed, np.random.rand, "
        "np.random.normal...), which draw NumPy's legacy sequence, or draw outside the "
        "kernel and pass the numbers in")


#: The module functions a kernel may call, by the function NumPy exports.
RANDOM: dict[Callable[..., Any], Callable[..., Any]] = {
    np.random.seed: seed,
    np.random.random_sample: random_sample, np.random.random: random_sample,
    np.random.ranf: random_sample, np.random.sample: random_sample, np.random.rand: rand,
    np.random.standard_normal: standard_normal, np.random.randn: randn,
    np.random.standard_exponential: standard_exponential,
    np.random.uniform: uniform, np.random.normal: normal, np.random.exponential: exponential,
    np.random.randint: randint, np.random.poisson: poisson, np.random.binomial: binomial,
    np.random.standard_gamma: standard_gamma, np.random.gamma: gamma,
    np.random.chisquare: chisquare, np.random.beta: beta, np.random.lognormal: lognormal,
    np.random.choice: choice,
    np.random.shuffle: shuffle, np.random.permutation: permutation,
}
