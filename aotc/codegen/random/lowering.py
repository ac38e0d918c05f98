"""Lowering of the random primitives: each draw calls its helper on its generator's state.

The state is asked of the runtime once per call, at the first draw (:func:`state`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from llvmlite import ir

from ...ir import Eqn
from ...ops.core import Primitive
from ...ops.random import GENERATORS, random_draw_p, random_seed_p
from ..core.context import EqnRule, Lowering
from ..core.dtypes import I32, PTR
from ..core.values import Scalar, Value
from ..elementwise.nests import materialize
from .binomial import binomial_function
from .continuous import (
    f_function,
    geometric_function,
    gumbel_function,
    laplace_function,
    logistic_function,
    lognormal_function,
    negative_binomial_function,
    pareto_function,
    power_function,
    rayleigh_function,
    standard_t_function,
    weibull_function,
)
from .gamma import beta_function, standard_gamma_function
from .mt19937 import double_function, seed_function, state_function
from .numpy_draws import exponential_function, gauss_function, interval_function, poisson_function
from .python_draws import below_function, init_by_array_function, pygauss_function


def _state(ctx: Lowering, eqn: Eqn) -> ir.Value:
    """The state of the equation's generator, asked of the runtime at the first draw of
    each call (a slot in the function's entry block, null until then: a loop of scalar
    draws asks once)."""
    b, generator = ctx.b, GENERATORS.index(eqn.params["generator"])
    key = (b.function, f"random.{generator}")
    if key not in ctx.slots:
        ctx.slots[key] = b.entry_alloca(PTR, "random", zero=True)
    slot = ctx.slots[key]
    null = ir.Constant(PTR, None)
    with b.if_then(b.icmp_unsigned("==", b.load(slot, typ=PTR), null), likely=False):
        b.store(b.call(state_function(b.module, generator), [ctx.runtime]), slot)
    return b.load(slot, typ=PTR)


#: distribution -> the helper drawing one value (state, then the draw's inputs).
DRAWS: dict[str, Callable[[ir.Module], ir.Function]] = {
    "double": double_function, "gauss": gauss_function,
    "exponential": exponential_function, "interval": interval_function,
    "below": below_function, "pygauss": pygauss_function, "poisson": poisson_function,
    "binomial": binomial_function, "standard_gamma": standard_gamma_function,
    "beta": beta_function, "laplace": laplace_function, "gumbel": gumbel_function,
    "logistic": logistic_function, "weibull": weibull_function, "pareto": pareto_function,
    "power": power_function, "standard_t": standard_t_function, "f": f_function,
    "negative_binomial": negative_binomial_function, "rayleigh": rayleigh_function,
    "geometric": geometric_function, "lognormal": lognormal_function}


def lower_draw(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    """The draws in C order over the output (its home may be any strided view)."""
    draw = DRAWS[eqn.params["distribution"]](ctx.b.module)
    inputs = [a.value for a in args if isinstance(a, Scalar)]
    state = _state(ctx, eqn)
    return materialize(ctx, eqn.outs[0], lambda _: ctx.b.call(draw, [state, *inputs]), "rnd")


def lower_seed(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    (seed,) = args
    assert isinstance(seed, Scalar)
    b, state = ctx.b, _state(ctx, eqn)
    if eqn.params["generator"] == "numpy":
        b.call(seed_function(b.module), [state, b.trunc(seed.value, I32)])
    else:
        b.call(init_by_array_function(b.module), [state, seed.value])
    return []


RULES: dict[Primitive, EqnRule] = {random_draw_p: lower_draw, random_seed_p: lower_seed}
