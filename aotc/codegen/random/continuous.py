"""NumPy's other legacy draws that need the C library's functions on each value.

Each is the C code transcribed (``distributions.c``, ``legacy-distributions.c``), in
standard form where the location and scale are an affine map the decomposition in
:mod:`aotc.numpy_api.random_more` applies exactly (``loc - scale * L`` is
``loc + scale * (-L)``): ``laplace``, ``gumbel`` and ``logistic`` (redrawing the
uniform that would take a logarithm of 0), ``rayleigh``, ``weibull``, ``pareto``, ``power``,
``standard_t``, ``f``, ``lognormal``, ``negative_binomial`` (a gamma, then a Poisson) and
``geometric``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from llvmlite import ir

from ..core.builder import KernelBuilder, define_once
from ..core.dtypes import F64, I64, PTR
from ..elementwise.mathlib import libm_function
from .gamma import standard_gamma_function
from .mt19937 import double_function, f64, libm, log
from .numpy_draws import exponential_function, gauss_function, poisson_function, truncate

#: (b, state, the uniform) -> None when it must be redrawn, else the standard value.
Transform = Callable[[ir.IRBuilder, ir.Value], tuple[ir.Value, ir.Value]]


def _from_uniform(module: ir.Module, name: str, transform: Transform) -> ir.Function:
    """``double(state)``: ``transform`` of one uniform, redrawn where it says so."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        head = b.append_basic_block("draw")
        b.branch(head)
        b.position_at_end(head)
        redraw, value = transform(b, b.call(double_function(module), [p["state"]]))
        done = b.append_basic_block("done")
        b.cbranch(redraw, head, done)
        b.position_at_end(done)
        b.ret(value)
    return define_once(module, f"aotc.mt.{name}", F64, [("state", PTR)], body)


def _laplace(b: ir.IRBuilder, u: ir.Value) -> tuple[ir.Value, ir.Value]:
    high = b.fneg(log(b, b.fsub(b.fsub(f64(2.0), u), u)))
    low = log(b, b.fadd(u, u))
    return b.fcmp_ordered("==", u, f64(0.0)), \
        b.select(b.fcmp_ordered(">=", u, f64(0.5)), high, low)


def _gumbel(b: ir.IRBuilder, u: ir.Value) -> tuple[ir.Value, ir.Value]:
    v = b.fsub(f64(1.0), u)
    return b.fcmp_unordered(">=", v, f64(1.0)), b.fneg(log(b, b.fneg(log(b, v))))


def _logistic(b: ir.IRBuilder, u: ir.Value) -> tuple[ir.Value, ir.Value]:
    return b.fcmp_unordered("<=", u, f64(0.0)), log(b, b.fdiv(u, b.fsub(f64(1.0), u)))


def _rayleigh(b: ir.IRBuilder, u: ir.Value) -> tuple[ir.Value, ir.Value]:
    log1p = libm_function(b.module, "log1p", np.dtype(np.float64), 1)
    value = libm(b, "sqrt", b.fmul(f64(-2.0), b.call(log1p, [b.fneg(u)])))
    return ir.Constant(ir.IntType(1), 0), value


def rayleigh_function(module: ir.Module) -> ir.Function:
    """``legacy_rayleigh`` for scale 1: ``sqrt(-2 log1p(-U))``."""
    return _from_uniform(module, "rayleigh", _rayleigh)


def laplace_function(module: ir.Module) -> ir.Function:
    return _from_uniform(module, "laplace", _laplace)


def gumbel_function(module: ir.Module) -> ir.Function:
    return _from_uniform(module, "gumbel", _gumbel)


def logistic_function(module: ir.Module) -> ir.Function:
    return _from_uniform(module, "logistic", _logistic)


def _of_exponential(module: ir.Module, name: str,
                    make: Callable[[ir.IRBuilder, ir.Value, ir.Value], ir.Value]
                    ) -> ir.Function:
    """``double(state, a)``: ``make(b, exponential, a)`` of one standard exponential."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        e = b.call(exponential_function(module), [p["state"]])
        b.ret(make(b, e, p["a"]))
    return define_once(module, f"aotc.mt.{name}", F64, [("state", PTR), ("a", F64)], body)


def weibull_function(module: ir.Module) -> ir.Function:
    """``legacy_weibull``: 0 for ``a == 0`` (no draw), else ``E ** (1 / a)``."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        with b.if_then(b.fcmp_ordered("==", p["a"], f64(0.0))):
            b.ret(f64(0.0))
        e = b.call(exponential_function(module), [p["state"]])
        b.ret(libm(b, "pow", e, b.fdiv(f64(1.0), p["a"])))
    return define_once(module, "aotc.mt.weibull", F64, [("state", PTR), ("a", F64)], body)


def pareto_function(module: ir.Module) -> ir.Function:
    """``legacy_pareto``: ``exp(E / a) - 1``."""
    return _of_exponential(module, "pareto", lambda b, e, a: b.fsub(
        libm(b, "exp", b.fdiv(e, a)), f64(1.0)))


def power_function(module: ir.Module) -> ir.Function:
    """``legacy_power``: ``(1 - exp(-E)) ** (1 / a)``."""
    return _of_exponential(module, "power", lambda b, e, a: libm(
        b, "pow", b.fsub(f64(1.0), libm(b, "exp", b.fneg(e))), b.fdiv(f64(1.0), a)))


def standard_t_function(module: ir.Module) -> ir.Function:
    """``legacy_standard_t``: ``sqrt(df / 2) * N / sqrt(G(df / 2))``."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        state, half = p["state"], b.fdiv(p["df"], f64(2.0))
        num = b.call(gauss_function(module), [state])
        denom = b.call(standard_gamma_function(module), [state, half])
        b.ret(b.fdiv(b.fmul(libm(b, "sqrt", half), num), libm(b, "sqrt", denom)))
    return define_once(module, "aotc.mt.standard_t", F64, [("state", PTR), ("df", F64)], body)


def f_function(module: ir.Module) -> ir.Function:
    """``legacy_f``: ``(chisquare(dfnum) * dfden) / (chisquare(dfden) * dfnum)``."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        state, num, den = p["state"], p["dfnum"], p["dfden"]
        gamma = standard_gamma_function(module)

        def chisquare(df: ir.Value) -> ir.Value:
            return b.fmul(f64(2.0), b.call(gamma, [state, b.fdiv(df, f64(2.0))]))

        top = b.fmul(chisquare(num), den)
        b.ret(b.fdiv(top, b.fmul(chisquare(den), num)))
    return define_once(module, "aotc.mt.f", F64,
                       [("state", PTR), ("dfnum", F64), ("dfden", F64)], body)


def lognormal_function(module: ir.Module) -> ir.Function:
    """``legacy_lognormal``: ``exp(mean + sigma * N)``."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        n = b.call(gauss_function(module), [p["state"]])
        b.ret(libm(b, "exp", b.fadd(p["mean"], b.fmul(p["sigma"], n))))
    return define_once(module, "aotc.mt.lognormal", F64,
                       [("state", PTR), ("mean", F64), ("sigma", F64)], body)


def negative_binomial_function(module: ir.Module) -> ir.Function:
    """``legacy_negative_binomial``: Poisson of ``gamma(n, (1 - p) / p)``."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        state = p["state"]
        scale = b.fdiv(b.fsub(f64(1.0), p["p"]), p["p"])
        y = b.fmul(scale, b.call(standard_gamma_function(module), [state, p["n"]]))
        b.ret(b.call(poisson_function(module), [state, y]))
    return define_once(module, "aotc.mt.negative_binomial", I64,
                       [("state", PTR), ("n", F64), ("p", F64)], body)


def geometric_function(module: ir.Module) -> ir.Function:
    """``int64(state, p)``: ``random_geometric``: a search from ``p >= 1/3``, else
    ``ceil(log(1 - U) / log(1 - p))``."""
    def body(b: KernelBuilder, a: dict[str, ir.Argument]) -> None:
        state, p = a["state"], a["p"]
        u = b.call(double_function(module), [state])
        with b.if_then(b.fcmp_ordered("<", p, f64(0.333333333333333333333333))):
            ratio = b.fdiv(log(b, b.fsub(f64(1.0), u)), log(b, b.fsub(f64(1.0), p)))
            b.ret(truncate(b, libm(b, "ceil", ratio)))
        q = b.fsub(f64(1.0), p)
        count, total, prod = b.entry_alloca(I64), b.entry_alloca(F64), b.entry_alloca(F64)
        b.store(ir.Constant(I64, 1), count)
        b.store(p, total)
        b.store(p, prod)
        head = b.append_basic_block("search")
        b.branch(head)
        b.position_at_end(head)
        step, done = b.append_basic_block("search.step"), b.append_basic_block("search.done")
        b.cbranch(b.fcmp_ordered(">", u, b.load(total, typ=F64)), step, done)
        b.position_at_end(step)
        term = b.fmul(b.load(prod, typ=F64), q)
        b.store(term, prod)
        b.store(b.fadd(b.load(total, typ=F64), term), total)
        b.store(b.add(b.load(count, typ=I64), ir.Constant(I64, 1)), count)
        b.branch(head)
        b.position_at_end(done)
        b.ret(b.load(count, typ=I64))
    return define_once(module, "aotc.mt.geometric", I64, [("state", PTR), ("p", F64)], body)
