"""NumPy's legacy binomial draw (``legacy-distributions.c`` transcribed).

``RandomState.binomial`` keeps the original algorithms for its stream: inversion while
``n * min(p, 1 - p) <= 30``, else Kachitvichyanukul and Schmeiser's BTPE with the
Stirling terms as the legacy code adds them. The constants NumPy caches between calls
(``binomial_t``) are recomputed here: the same values, so the same draws. C's mixed
``int64``/``double`` arithmetic is spelled out conversion by conversion.
"""

from __future__ import annotations

from llvmlite import ir

from ..core.builder import KernelBuilder, define_once
from ..core.dtypes import F64, I64, PTR, i64
from .mt19937 import double_function, f64, libm, log
from .numpy_draws import truncate


def _float(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    return b.sitofp(x, F64)


def _inversion_function(module: ir.Module) -> ir.Function:
    """``int64(state, n, p)``: ``legacy_random_binomial_inversion``."""
    def body(b: KernelBuilder, a: dict[str, ir.Argument]) -> None:
        state, n, p = a["state"], a["n"], a["p"]
        draw = double_function(module)
        nf = _float(b, n)
        q = b.fsub(f64(1.0), p)
        qn = libm(b, "exp", b.fmul(nf, log(b, q)))
        np_ = b.fmul(nf, p)
        bound = libm(b, "minnum", nf, b.fadd(np_, b.fmul(f64(10.0), libm(
            b, "sqrt", b.fadd(b.fmul(np_, q), f64(1.0))))))
        bound = truncate(b, bound)
        x_slot, px_slot, u_slot = (b.entry_alloca(t) for t in (I64, F64, F64))
        b.store(i64(0), x_slot)
        b.store(qn, px_slot)
        b.store(b.call(draw, [state]), u_slot)
        head = b.append_basic_block("inv.head")
        b.branch(head)
        b.position_at_end(head)
        done = b.append_basic_block("inv.done")
        step = b.append_basic_block("inv.step")
        b.cbranch(b.fcmp_ordered(">", b.load(u_slot, typ=F64), b.load(px_slot, typ=F64)),
                  step, done)
        b.position_at_end(step)
        x = b.add(b.load(x_slot, typ=I64), i64(1))
        with b.if_else(b.icmp_signed(">", x, bound)) as (restart, onward):
            with restart:
                b.store(i64(0), x_slot)
                b.store(qn, px_slot)
                b.store(b.call(draw, [state]), u_slot)
            with onward:
                px = b.load(px_slot, typ=F64)
                b.store(x, x_slot)
                b.store(b.fsub(b.load(u_slot, typ=F64), px), u_slot)
                weight = b.fmul(b.fmul(_float(b, b.add(b.sub(n, x), i64(1))), p), px)
                b.store(b.fdiv(weight, b.fmul(_float(b, x), q)), px_slot)
        b.branch(head)
        b.position_at_end(done)
        b.ret(b.load(x_slot, typ=I64))
    return define_once(module, "aotc.mt.binomial.inversion", I64,
                       [("state", PTR), ("n", I64), ("p", F64)], body)


def _stirling(b: ir.IRBuilder, x: ir.Value, x2: ir.Value) -> ir.Value:
    """``(13680 - (462 - (132 - (99 - 140 / x2) / x2) / x2) / x2) / x / 166320``."""
    t = b.fsub(f64(99.0), b.fdiv(f64(140.0), x2))
    for c in (132.0, 462.0, 13680.0):
        t = b.fsub(f64(c), b.fdiv(t, x2))
    return b.fdiv(b.fdiv(t, x), f64(166320.0))


def _btpe_function(module: ir.Module) -> ir.Function:
    """``int64(state, n, p)``: ``legacy_random_binomial_btpe`` (``p <= 0.5``)."""
    def body(b: KernelBuilder, a: dict[str, ir.Argument]) -> None:
        state, n, p = a["state"], a["n"], a["p"]
        draw = double_function(module)
        nf = _float(b, n)
        rest = b.fsub(f64(1.0), p)
        r = b.select(b.fcmp_ordered("<", p, rest), p, rest)  # C's MIN macro
        q = b.fsub(f64(1.0), r)
        fm = b.fadd(b.fmul(nf, r), r)
        m = truncate(b, libm(b, "floor", fm))
        mf = _float(b, m)
        nrq = b.fmul(b.fmul(nf, r), q)
        p1 = b.fadd(libm(b, "floor", b.fsub(b.fmul(f64(2.195), libm(b, "sqrt", nrq)),
                                             b.fmul(f64(4.6), q))), f64(0.5))
        xm = b.fadd(mf, f64(0.5))
        xl, xr = b.fsub(xm, p1), b.fadd(xm, p1)
        c = b.fadd(f64(0.134), b.fdiv(f64(20.5), b.fadd(f64(15.3), mf)))
        al = b.fdiv(b.fsub(fm, xl), b.fsub(fm, b.fmul(xl, r)))
        laml = b.fmul(al, b.fadd(f64(1.0), b.fdiv(al, f64(2.0))))
        ar = b.fdiv(b.fsub(xr, fm), b.fmul(xr, q))
        lamr = b.fmul(ar, b.fadd(f64(1.0), b.fdiv(ar, f64(2.0))))
        p2 = b.fmul(p1, b.fadd(f64(1.0), b.fmul(f64(2.0), c)))
        p3 = b.fadd(p2, b.fdiv(c, laml))
        p4 = b.fadd(p3, b.fdiv(c, lamr))
        y_slot, v_slot = b.entry_alloca(I64), b.entry_alloca(F64)
        blocks = {name: b.append_basic_block(f"btpe.{name}")
                  for name in ("10", "20", "30", "40", "50", "52", "60")}
        b.branch(blocks["10"])

        def at(name: str) -> None:
            b.position_at_end(blocks[name])

        def goto_if(cond: ir.Value, name: str) -> None:
            rest = b.append_basic_block()
            b.cbranch(cond, blocks[name], rest)
            b.position_at_end(rest)

        at("10")
        u = b.fmul(b.call(draw, [state]), p4)
        v = b.call(draw, [state])
        b.store(v, v_slot)
        goto_if(b.fcmp_ordered(">", u, p1), "20")
        b.store(truncate(b, libm(b, "floor", b.fadd(b.fsub(xm, b.fmul(p1, v)), u))), y_slot)
        b.branch(blocks["60"])

        at("20")
        goto_if(b.fcmp_ordered(">", u, p2), "30")
        x = b.fadd(xl, b.fdiv(b.fsub(u, p1), c))
        v20 = b.fsub(b.fadd(b.fmul(v, c), f64(1.0)),
                     b.fdiv(libm(b, "fabs", b.fadd(b.fsub(mf, x), f64(0.5))), p1))
        b.store(v20, v_slot)
        goto_if(b.fcmp_ordered(">", v20, f64(1.0)), "10")
        b.store(truncate(b, libm(b, "floor", x)), y_slot)
        b.branch(blocks["50"])

        at("30")
        goto_if(b.fcmp_ordered(">", u, p3), "40")
        y30 = truncate(b, libm(b, "floor", b.fadd(xl, b.fdiv(log(b, v), laml))))
        b.store(y30, y_slot)
        goto_if(b.or_(b.icmp_signed("<", y30, i64(0)), b.fcmp_ordered("==", v, f64(0.0))),
                "10")
        b.store(b.fmul(b.fmul(v, b.fsub(u, p2)), laml), v_slot)
        b.branch(blocks["50"])

        at("40")
        y40 = truncate(b, libm(b, "floor", b.fsub(xr, b.fdiv(log(b, v), lamr))))
        b.store(y40, y_slot)
        goto_if(b.or_(b.icmp_signed(">", y40, n), b.fcmp_ordered("==", v, f64(0.0))), "10")
        b.store(b.fmul(b.fmul(v, b.fsub(u, p3)), lamr), v_slot)
        b.branch(blocks["50"])

        at("50")
        y, v = b.load(y_slot, typ=I64), b.load(v_slot, typ=F64)
        k = b.call(module.declare_intrinsic("llvm.abs", [I64], ir.FunctionType(
            I64, [I64, ir.IntType(1)])), [b.sub(y, m), ir.Constant(ir.IntType(1), 0)])
        kf = _float(b, k)
        far = b.and_(b.icmp_signed(">", k, i64(20)),
                     b.fcmp_ordered("<", kf, b.fsub(b.fdiv(nrq, f64(2.0)), f64(1.0))))
        goto_if(far, "52")
        s = b.fdiv(r, q)
        big_a = b.fmul(s, _float(b, b.add(n, i64(1))))
        f_slot, i_slot = b.entry_alloca(F64), b.entry_alloca(I64)
        b.store(f64(1.0), f_slot)
        up = b.icmp_signed("<", m, y)
        b.store(b.select(up, b.add(m, i64(1)), b.add(y, i64(1))), i_slot)
        last = b.select(up, y, m)
        loop, after = b.append_basic_block("btpe.f"), b.append_basic_block("btpe.f.done")
        b.cbranch(b.icmp_signed("!=", m, y), loop, after)
        b.position_at_end(loop)
        i = b.load(i_slot, typ=I64)
        factor = b.fsub(b.fdiv(big_a, _float(b, i)), s)
        f = b.load(f_slot, typ=F64)
        b.store(b.select(up, b.fmul(f, factor), b.fdiv(f, factor)), f_slot)
        b.store(b.add(i, i64(1)), i_slot)
        b.cbranch(b.icmp_signed("<", i, last), loop, after)
        b.position_at_end(after)
        goto_if(b.fcmp_ordered(">", v, b.load(f_slot, typ=F64)), "10")
        b.branch(blocks["60"])

        at("52")
        rho = b.fmul(b.fdiv(kf, nrq), b.fadd(b.fdiv(b.fadd(b.fmul(kf, b.fadd(
            b.fdiv(kf, f64(3.0)), f64(0.625))), f64(0.16666666666666666)), nrq), f64(0.5)))
        t = b.fdiv(_float(b, b.mul(b.neg(k), k)), b.fmul(f64(2.0), nrq))
        big = log(b, v)
        goto_if(b.fcmp_ordered("<", big, b.fsub(t, rho)), "60")
        goto_if(b.fcmp_ordered(">", big, b.fadd(t, rho)), "10")
        x1 = b.fadd(_float(b, y), f64(1.0))
        f1 = b.fadd(mf, f64(1.0))
        z = b.fsub(b.fadd(nf, f64(1.0)), mf)
        w = b.fadd(b.fsub(nf, _float(b, y)), f64(1.0))
        bound = b.fadd(b.fadd(b.fmul(xm, log(b, b.fdiv(f1, x1))),
                              b.fmul(b.fadd(_float(b, b.sub(n, m)), f64(0.5)),
                                     log(b, b.fdiv(z, w)))),
                       b.fmul(_float(b, b.sub(y, m)),
                              log(b, b.fdiv(b.fmul(w, r), b.fmul(x1, q)))))
        for term, square in ((f1, b.fmul(f1, f1)), (z, b.fmul(z, z)), (x1, b.fmul(x1, x1)),
                             (w, b.fmul(w, w))):
            bound = b.fadd(bound, _stirling(b, term, square))
        goto_if(b.fcmp_ordered(">", big, bound), "10")
        b.branch(blocks["60"])

        at("60")
        y = b.load(y_slot, typ=I64)
        b.ret(b.select(b.fcmp_ordered(">", p, f64(0.5)), b.sub(n, y), y))
    return define_once(module, "aotc.mt.binomial.btpe", I64,
                       [("state", PTR), ("n", I64), ("p", F64)], body)


def binomial_function(module: ir.Module) -> ir.Function:
    """``int64(state, p, n)``: ``legacy_random_binomial_original``."""
    def body(b: KernelBuilder, a: dict[str, ir.Argument]) -> None:
        state, p, n = a["state"], a["p"], a["n"]
        low = b.fcmp_ordered("<=", p, f64(0.5))
        small = b.select(low, p, b.fsub(f64(1.0), p))
        few = b.fcmp_ordered("<=", b.fmul(small, _float(b, n)), f64(30.0))
        with b.if_else(few) as (then, otherwise):
            with then:
                by_inversion = b.call(_inversion_function(module), [state, n, small])
                inversion_block = b.block
            with otherwise:
                by_btpe = b.call(_btpe_function(module), [state, n, small])
                btpe_block = b.block
        y = b.phi(I64)
        y.add_incoming(by_inversion, inversion_block)
        y.add_incoming(by_btpe, btpe_block)
        b.ret(b.select(low, y, b.sub(n, y)))
    return define_once(module, "aotc.mt.binomial", I64,
                       [("state", PTR), ("p", F64), ("n", I64)], body)
