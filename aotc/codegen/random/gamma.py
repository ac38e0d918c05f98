"""NumPy's legacy gamma and beta draws (``legacy-distributions.c`` transcribed).

``legacy_standard_gamma``: the exponential for shape 1, 0 for shape 0, Johnk-style
rejection below 1 and Marsaglia and Tsang's method (on ``legacy_gauss``) above;
``legacy_beta``: Johnk's algorithm when both shapes are at most 1 (in logarithms when
the powers underflow), else the ratio of two gammas. ``gamma``, ``chisquare`` and the
rest scale these in :mod:`aotc.numpy_api.random`.
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir

from ..core.builder import KernelBuilder, define_once
from ..core.dtypes import F64, PTR
from .mt19937 import double_function, f64, libm, log
from .numpy_draws import exponential_function, gauss_function

Step = Callable[[], None]


def _loop(b: ir.IRBuilder, name: str) -> tuple[ir.Block, Step]:
    """A block to branch back to (``again()``), the builder positioned in it."""
    head = b.append_basic_block(name)
    b.branch(head)
    b.position_at_end(head)
    return head, lambda: b.branch(head)


def _return_if(b: ir.IRBuilder, cond: ir.Value, value: ir.Value) -> None:
    """Return ``value`` (already computed: no draw may hide in it) when ``cond``."""
    with b.if_then(cond):
        b.ret(value)


def standard_gamma_function(module: ir.Module) -> ir.Function:
    """``double(state, shape)``: ``legacy_standard_gamma`` (``shape >= 0``)."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        state, shape = p["state"], p["shape"]
        double, gauss = double_function(module), gauss_function(module)
        exponential = exponential_function(module)
        with b.if_then(b.fcmp_ordered("==", shape, f64(1.0))):
            b.ret(b.call(exponential, [state]))  # (drawn only here)
        _return_if(b, b.fcmp_ordered("==", shape, f64(0.0)), f64(0.0))
        inverse = b.fdiv(f64(1.0), shape)
        with b.if_then(b.fcmp_ordered("<", shape, f64(1.0))):
            _, again = _loop(b, "gamma.small")
            u = b.call(double, [state])
            v = b.call(exponential, [state])
            with b.if_else(b.fcmp_ordered("<=", u, b.fsub(f64(1.0), shape))) as (low, high):
                with low:
                    x = libm(b, "pow", u, inverse)
                    _return_if(b, b.fcmp_ordered("<=", x, v), x)
                with high:
                    y = b.fneg(log(b, b.fdiv(b.fsub(f64(1.0), u), shape)))
                    x = libm(b, "pow", b.fadd(b.fsub(f64(1.0), shape), b.fmul(shape, y)),
                             inverse)
                    _return_if(b, b.fcmp_ordered("<=", x, b.fadd(v, y)), x)
            again()
            b.position_at_end(b.append_basic_block("gamma.small.never"))
        shift = b.fsub(shape, b.fdiv(f64(1.0), f64(3.0)))
        c = b.fdiv(f64(1.0), libm(b, "sqrt", b.fmul(f64(9.0), shift)))
        _, again = _loop(b, "gamma.big")
        retry, _ = _loop(b, "gamma.normal")
        x = b.call(gauss, [state])
        v = b.fadd(f64(1.0), b.fmul(c, x))
        accept = b.append_basic_block("gamma.cube")
        b.cbranch(b.fcmp_ordered("<=", v, f64(0.0)), retry, accept)
        b.position_at_end(accept)
        v = b.fmul(b.fmul(v, v), v)
        u = b.call(double, [state])
        xx = b.fmul(x, x)
        result = b.fmul(shift, v)
        _return_if(b, b.fcmp_ordered("<", u, b.fsub(f64(1.0), b.fmul(b.fmul(f64(0.0331), xx),
                                                                      xx))), result)
        bound = b.fadd(b.fmul(b.fmul(f64(0.5), x), x),
                       b.fmul(shift, b.fadd(b.fsub(f64(1.0), v), log(b, v))))
        _return_if(b, b.fcmp_ordered("<", log(b, u), bound), result)
        again()
    return define_once(module, "aotc.mt.standard_gamma", F64,
                       [("state", PTR), ("shape", F64)], body)


def beta_function(module: ir.Module) -> ir.Function:
    """``double(state, a, b)``: ``legacy_beta`` (``a, b > 0``)."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        state, a, bb = p["state"], p["a"], p["b"]
        double = double_function(module)
        johnk = b.and_(b.fcmp_ordered("<=", a, f64(1.0)), b.fcmp_ordered("<=", bb, f64(1.0)))
        with b.if_then(johnk):
            _, again = _loop(b, "beta.johnk")
            u, v = b.call(double, [state]), b.call(double, [state])
            x = libm(b, "pow", u, b.fdiv(f64(1.0), a))
            y = libm(b, "pow", v, b.fdiv(f64(1.0), bb))
            total = b.fadd(x, y)
            with b.if_then(b.fcmp_ordered("<=", total, f64(1.0))):
                _return_if(b, b.fcmp_ordered(">", total, f64(0.0)), b.fdiv(x, total))
                log_x, log_y = b.fdiv(log(b, u), a), b.fdiv(log(b, v), bb)
                top = b.select(b.fcmp_ordered(">", log_x, log_y), log_x, log_y)
                log_x, log_y = b.fsub(log_x, top), b.fsub(log_y, top)
                both = b.fadd(libm(b, "exp", log_x), libm(b, "exp", log_y))
                b.ret(libm(b, "exp", b.fsub(log_x, log(b, both))))
            again()
            b.position_at_end(b.append_basic_block("beta.johnk.never"))
        gamma = standard_gamma_function(module)
        ga, gb = b.call(gamma, [state, a]), b.call(gamma, [state, bb])
        b.ret(b.fdiv(ga, b.fadd(ga, gb)))
    return define_once(module, "aotc.mt.beta", F64, [("state", PTR), ("a", F64), ("b", F64)],
                       body)
