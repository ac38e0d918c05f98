"""NumPy's legacy draws over MT19937 words (``numpy/random/src`` transcribed).

``legacy_gauss`` (the polar method, the second value kept), ``-log(1 - double)``, the
masked rejection of ``random_interval``/``randint`` (32-bit words for ranges that fit,
``hi << 32 | lo`` words beyond) and ``random_poisson`` (products of uniforms below 10,
Hoermann's PTRS with ``random_loggam`` from 10).
"""

from __future__ import annotations

from llvmlite import ir

from ..core.builder import KernelBuilder, define_once
from ..core.dtypes import F64, I32, I64, PTR, i32, i64
from ..core.loops import for_range
from .mt19937 import GAUSS, HAS_GAUSS, double_function, f64, field, libm, log, word32


def gauss_function(module: ir.Module) -> ir.Function:
    """``double(state)``: ``legacy_gauss``, the cached value first."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        state = p["state"]
        has, cached = field(b, state, HAS_GAUSS), field(b, state, GAUSS)
        with b.if_then(b.icmp_signed("!=", b.load(has, typ=I32), i32(0))):
            b.store(i32(0), has)
            value = b.load(cached, typ=F64)
            b.store(ir.Constant(F64, 0.0), cached)
            b.ret(value)
        one, two = ir.Constant(F64, 1.0), ir.Constant(F64, 2.0)
        draw = double_function(module)
        retry = b.append_basic_block("polar")
        b.branch(retry)
        b.position_at_end(retry)
        x1 = b.fsub(b.fmul(two, b.call(draw, [state])), one)
        x2 = b.fsub(b.fmul(two, b.call(draw, [state])), one)
        r2 = b.fadd(b.fmul(x1, x1), b.fmul(x2, x2))
        outside = b.or_(b.fcmp_ordered(">=", r2, one),
                        b.fcmp_ordered("==", r2, ir.Constant(F64, 0.0)))
        accept = b.append_basic_block("accept")
        b.cbranch(outside, retry, accept)
        b.position_at_end(accept)
        f = b.fdiv(b.fmul(ir.Constant(F64, -2.0), log(b, r2)), r2)
        f = b.call(module.declare_intrinsic("llvm.sqrt", [F64]), [f])
        b.store(b.fmul(f, x1), cached)
        b.store(i32(1), has)
        b.ret(b.fmul(f, x2))
    return define_once(module, "aotc.mt.gauss", F64, [("state", PTR)], body)


def exponential_function(module: ir.Module) -> ir.Function:
    """``double(state)``: ``legacy_standard_exponential``, ``-log(1 - double)``."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        u = b.call(double_function(module), [p["state"]])
        b.ret(b.fneg(log(b, b.fsub(ir.Constant(F64, 1.0), u))))
    return define_once(module, "aotc.mt.exponential", F64, [("state", PTR)], body)


def interval_function(module: ir.Module) -> ir.Function:
    """``uint64(state, rng)``: uniform on ``[0, rng]``, ``random_interval``'s masked
    rejection (no draw for 0)."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        state, rng = p["state"], p["rng"]
        with b.if_then(b.icmp_unsigned("==", rng, i64(0))):
            b.ret(i64(0))
        mask = rng
        for shift in (1, 2, 4, 8, 16, 32):
            mask = b.or_(mask, b.lshr(mask, i64(shift)))
        narrow = b.icmp_unsigned("<=", rng, i64(0xFFFFFFFF))
        retry = b.append_basic_block("draw")
        b.branch(retry)
        b.position_at_end(retry)
        with b.if_else(narrow) as (then, otherwise):
            with then:
                short = word32(b, state)
                short_block = b.block
            with otherwise:
                high = b.shl(word32(b, state), i64(32))
                wide = b.or_(high, word32(b, state))
                wide_block = b.block
        word = b.phi(I64)
        word.add_incoming(short, short_block)
        word.add_incoming(wide, wide_block)
        value = b.and_(word, mask)
        done = b.append_basic_block("done")
        b.cbranch(b.icmp_unsigned(">", value, rng), retry, done)
        b.position_at_end(done)
        b.ret(value)
    return define_once(module, "aotc.mt.interval", I64, [("state", PTR), ("rng", I64)], body)



#: ``random_loggam``'s series coefficients, as NumPy's C has them.
LOGGAM = (8.333333333333333e-02, -2.777777777777778e-03, 7.936507936507937e-04,
          -5.952380952380952e-04, 8.417508417508418e-04, -1.917526917526918e-03,
          6.410256410256410e-03, -2.955065359477124e-02, 1.796443723688307e-01,
          -1.39243221690590e+00)



def _loggam_function(module: ir.Module) -> ir.Function:
    """``double(x)``: NumPy's ``random_loggam`` (x > 0)."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        x = p["x"]
        with b.if_then(b.or_(b.fcmp_ordered("==", x, f64(1.0)),
                             b.fcmp_ordered("==", x, f64(2.0)))):
            b.ret(f64(0.0))
        small = b.fcmp_ordered("<", x, f64(7.0))
        n = b.select(small, b.fptosi(b.fsub(f64(7.0), x), I64), i64(0))
        x0 = b.fadd(x, b.sitofp(n, F64))
        x2 = b.fmul(b.fdiv(f64(1.0), x0), b.fdiv(f64(1.0), x0))
        series: ir.Value = f64(LOGGAM[9])
        for a in reversed(LOGGAM[:9]):
            series = b.fadd(b.fmul(series, x2), f64(a))
        gl = b.fsub(b.fadd(b.fadd(b.fdiv(series, x0), b.fmul(f64(0.5), f64(
            1.8378770664093453e+00))), b.fmul(b.fsub(x0, f64(0.5)), log(b, x0))), x0)
        slot, at = b.alloca(F64), b.alloca(F64)
        b.store(gl, slot)
        b.store(x0, at)
        with for_range(b, n, "k", vectorize=False):  # n is 0 unless x < 7
            here = b.load(at, typ=F64)
            b.store(b.fsub(b.load(slot, typ=F64), log(b, b.fsub(here, f64(1.0)))), slot)
            b.store(b.fsub(here, f64(1.0)), at)
        b.ret(b.load(slot, typ=F64))
    return define_once(module, "aotc.mt.loggam", F64, [("x", F64)], body)


def truncate(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """``(int64_t)x`` as x86 converts: INT64_MIN where it does not fit (inf, NaN)."""
    fits = b.fcmp_ordered("<", libm(b, "fabs", x), f64(2.0 ** 63))
    return b.select(fits, b.fptosi(x, I64), i64(-2**63))


def poisson_function(module: ir.Module) -> ir.Function:
    """``int64(state, lam)``: NumPy's ``random_poisson`` (``lam >= 0``): PTRS from 10,
    else the product of uniforms until it falls to ``exp(-lam)``."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        state, lam = p["state"], p["lam"]
        draw = double_function(module)
        with b.if_then(b.fcmp_ordered("==", lam, f64(0.0))):
            b.ret(i64(0))
        with b.if_then(b.fcmp_unordered("<", lam, f64(10.0))):  # NaN too, as NumPy's
            enlam = libm(b, "exp", b.fneg(lam))
            prod, count = b.alloca(F64), b.alloca(I64)
            b.store(f64(1.0), prod)
            b.store(i64(0), count)
            more = b.append_basic_block("mult")
            b.branch(more)
            b.position_at_end(more)
            product = b.fmul(b.load(prod, typ=F64), b.call(draw, [state]))
            b.store(product, prod)
            done = b.append_basic_block("mult.done")
            step = b.append_basic_block("mult.step")
            b.cbranch(b.fcmp_ordered(">", product, enlam), step, done)
            b.position_at_end(step)
            b.store(b.add(b.load(count, typ=I64), i64(1)), count)
            b.branch(more)
            b.position_at_end(done)
            b.ret(b.load(count, typ=I64))
        slam, loglam = libm(b, "sqrt", lam), log(b, lam)
        big_b = b.fadd(f64(0.931), b.fmul(f64(2.53), slam))
        a = b.fadd(f64(-0.059), b.fmul(f64(0.02483), big_b))
        invalpha = b.fadd(f64(1.1239), b.fdiv(f64(1.1328), b.fsub(big_b, f64(3.4))))
        vr = b.fsub(f64(0.9277), b.fdiv(f64(3.6224), b.fsub(big_b, f64(2.0))))
        retry = b.append_basic_block("ptrs")
        b.branch(retry)
        b.position_at_end(retry)
        u = b.fsub(b.call(draw, [state]), f64(0.5))
        v = b.call(draw, [state])
        us = b.fsub(f64(0.5), libm(b, "fabs", u))
        t = b.fmul(b.fadd(b.fdiv(b.fmul(f64(2.0), a), us), big_b), u)
        k = truncate(b, libm(b, "floor", b.fadd(b.fadd(t, lam), f64(0.43))))
        with b.if_then(b.and_(b.fcmp_ordered(">=", us, f64(0.07)),
                              b.fcmp_ordered("<=", v, vr))):
            b.ret(k)
        skip = b.or_(b.icmp_signed("<", k, i64(0)),
                     b.and_(b.fcmp_ordered("<", us, f64(0.013)), b.fcmp_ordered(">", v, us)))
        test = b.append_basic_block("ptrs.test")
        b.cbranch(skip, retry, test)
        b.position_at_end(test)
        kf = b.sitofp(k, F64)
        lhs = b.fsub(b.fadd(log(b, v), log(b, invalpha)),
                     log(b, b.fadd(b.fdiv(a, b.fmul(us, us)), big_b)))
        rhs = b.fsub(b.fadd(b.fneg(lam), b.fmul(kf, loglam)),
                     b.call(_loggam_function(module), [b.fadd(kf, f64(1.0))]))
        accept = b.append_basic_block("ptrs.accept")
        b.cbranch(b.fcmp_ordered("<=", lhs, rhs), accept, retry)
        b.position_at_end(accept)
        b.ret(k)
    return define_once(module, "aotc.mt.poisson", I64, [("state", PTR), ("lam", F64)], body)


