"""More of ``numpy.random``'s distributions, over the draws of :mod:`aotc.ops.random`.

The location-scale families are ``loc + scale * standard`` (NumPy computes
``loc - scale * L`` or ``loc + scale * L`` from the same logarithm: the same value);
``rayleigh`` is ``scale`` times its standard draw, ``standard_cauchy`` the ratio of
consecutive normals (drawn as pairs, so in NumPy's order) and ``triangular`` NumPy's two
square roots of one uniform. Parameters are
checked with NumPy's constraints and messages.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np

from .. import lax
from ..tracing.tracer import Tracer
from .random import draw, floats, negative, raise_if, scalar_parameter, shape_of, size_shape


def _location_scale(name: str) -> Callable[..., Tracer]:
    def family(loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Tracer:
        mu, spread = floats(loc, scale)
        raise_if(negative(spread), "ValueError", "scale < 0")
        return cast(Tracer, mu + spread * draw(name, shape_of(size, [mu, spread])))
    family.__name__ = name
    return family


def rayleigh(scale: Any = 1.0, size: Any = None) -> Tracer:
    (mode,) = floats(scale)
    raise_if(negative(mode), "ValueError", "scale < 0")
    return cast(Tracer, mode * draw("rayleigh", shape_of(size, [mode])))


def _one_shape(name: str, param: str, positive: bool) -> Callable[..., Tracer]:
    """A draw with one scalar shape parameter: ``a < 0`` (``a <= 0``) is an error."""
    def distribution(a: Any, size: Any = None) -> Tracer:
        value = scalar_parameter(a, name, param)
        if positive:
            raise_if(value <= 0, "ValueError", f"{param} <= 0")
        else:
            raise_if(negative(value), "ValueError", f"{param} < 0")
        return draw(name, size_shape(size), value)
    distribution.__name__ = name
    return distribution


def f(dfnum: Any, dfden: Any, size: Any = None) -> Tracer:
    num, den = scalar_parameter(dfnum, "f", "dfnum"), scalar_parameter(dfden, "f", "dfden")
    raise_if(num <= 0, "ValueError", "dfnum <= 0")
    raise_if(den <= 0, "ValueError", "dfden <= 0")
    return draw("f", size_shape(size), num, den)


def negative_binomial(n: Any, p: Any, size: Any = None) -> Tracer:
    count = scalar_parameter(n, "negative_binomial", "n")
    chance = scalar_parameter(p, "negative_binomial", "p")
    raise_if(count <= 0, "ValueError", "n <= 0")
    raise_if(~((chance >= 0) & (chance <= 1)), "ValueError", "p < 0, p > 1 or p is NaN")
    return draw("negative_binomial", size_shape(size), count, chance)


def geometric(p: Any, size: Any = None) -> Tracer:
    chance = scalar_parameter(p, "geometric", "p")
    raise_if(~((chance > 0) & (chance <= 1)), "ValueError", "p <= 0, p > 1 or p contains NaNs")
    return draw("geometric", size_shape(size), chance)


def standard_cauchy(size: Any = None) -> Tracer:
    shape = size_shape(size)
    pairs = draw("gauss", (*shape, lax.as_dim(2, "size")))
    return cast(Tracer, pairs[..., 0] / pairs[..., 1])


def triangular(left: Any, mode: Any, right: Any, size: Any = None) -> Tracer:
    lo, peak, hi = floats(left, mode, right)
    raise_if(lo > peak, "ValueError", "left > mode")
    raise_if(peak > hi, "ValueError", "mode > right")
    raise_if(lo == hi, "ValueError", "left == right")
    base = hi - lo
    leftbase = peak - lo
    ratio = leftbase / base
    u = draw("double", shape_of(size, [lo, peak, hi]))
    rising = lo + np.sqrt(u * (leftbase * base))
    falling = hi - np.sqrt((1.0 - u) * ((hi - peak) * base))
    return cast(Tracer, np.where(u <= ratio, rising, falling))


RANDOM_MORE: dict[Callable[..., Any], Callable[..., Any]] = {
    np.random.laplace: _location_scale("laplace"), np.random.gumbel: _location_scale("gumbel"),
    np.random.logistic: _location_scale("logistic"), np.random.rayleigh: rayleigh,
    np.random.weibull: _one_shape("weibull", "a", positive=False),
    np.random.pareto: _one_shape("pareto", "a", positive=True),
    np.random.power: _one_shape("power", "a", positive=True),
    np.random.standard_t: _one_shape("standard_t", "df", positive=True),
    np.random.f: f, np.random.negative_binomial: negative_binomial,
    np.random.geometric: geometric,
    np.random.standard_cauchy: standard_cauchy, np.random.triangular: triangular,
}
