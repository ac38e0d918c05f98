"""Division-like rules whose NumPy semantics differ from LLVM's instructions.

Every case here would be a crash or poison if lowered naively, so each function says
which NumPy C loop it follows.

- Integer ``floor_divide``/``mod`` (``loops_modulo``): Python floor semantics; a zero
  divisor gives 0 and ``INT_MIN // -1`` gives ``INT_MIN`` (x86 ``idiv`` would trap on
  both, so the divisor is replaced by 1 first and the result fixed with selects).
- Float ``floor_divide``/``mod`` (``npy_divmod``): ``fmod`` (LLVM ``frem``) plus the
  sign fix and the snap of the quotient to an integer.
- Shifts (``npy_lshift``/``npy_rshift``): a count >= the bit width, or negative, gives
  0 (or -1 for a right shift of a negative number) instead of LLVM poison.
- Integer ``pow`` (``@TYPE@_power``): repeated squaring with wrap-around; a negative
  exponent leaves the kernel with error code 1 (``abi.KERNEL_ERRORS``).
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir

from ..core.builder import KernelBuilder
from ..core.dtypes import bits, constant, int_min
from .mathlib import copysign, floor

NEGATIVE_POWER_ERROR = 1


def _safe_divisor(b: KernelBuilder, dtype: np.dtype, x: ir.Value, y: ir.Value
                  ) -> tuple[ir.Value, ir.Value]:
    """(divisor that cannot trap, y == 0): 0 and INT_MIN / -1 divide by 1 instead."""
    zero = b.icmp_unsigned("==", y, constant(dtype, 0))
    bad = zero
    if dtype.kind == "i":
        overflow = b.and_(b.icmp_signed("==", x, constant(dtype, int_min(dtype))),
                          b.icmp_signed("==", y, constant(dtype, -1)))
        bad = b.or_(zero, overflow)
    return b.select(bad, constant(dtype, 1), y), zero


def _signed_fixup(b: KernelBuilder, dtype: np.dtype, rem: ir.Value, y: ir.Value) -> ir.Value:
    """True where C's truncating remainder differs from Python's floor remainder."""
    nonzero = b.icmp_signed("!=", rem, constant(dtype, 0))
    signs_differ = b.icmp_signed("<", b.xor(rem, y), constant(dtype, 0))
    return b.and_(nonzero, signs_differ)


def int_floor_divide(b: KernelBuilder, dtype: np.dtype, x: ir.Value, y: ir.Value) -> ir.Value:
    safe, zero = _safe_divisor(b, dtype, x, y)
    if dtype.kind == "u":
        quot = b.udiv(x, safe)
    else:
        quot = b.sdiv(x, safe)
        fix = _signed_fixup(b, dtype, b.srem(x, safe), y)
        quot = b.sub(quot, b.zext(fix, quot.type))
    return b.select(zero, constant(dtype, 0), quot)


def int_mod(b: KernelBuilder, dtype: np.dtype, x: ir.Value, y: ir.Value) -> ir.Value:
    safe, _ = _safe_divisor(b, dtype, x, y)  # x % 1 == 0 covers y == 0 and INT_MIN % -1
    if dtype.kind == "u":
        return b.urem(x, safe)
    rem = b.srem(x, safe)
    return b.select(_signed_fixup(b, dtype, rem, y), b.add(rem, y), rem)


def _float_divmod(b: KernelBuilder, dtype: np.dtype, a: ir.Value, d: ir.Value
                  ) -> tuple[ir.Value, ir.Value]:
    """NumPy's ``npy_divmod`` for a nonzero divisor: (floor quotient, remainder)."""
    flags = b.fp_flags
    zero, one = constant(dtype, 0.0), constant(dtype, 1.0)
    mod = b.frem(a, d)
    div = b.fdiv(b.fsub(a, mod, flags=flags), d, flags=flags)
    mod_nonzero = b.fcmp_unordered("!=", mod, zero)
    sign_differs = b.xor(b.fcmp_ordered("<", d, zero), b.fcmp_ordered("<", mod, zero))
    adjust = b.and_(mod_nonzero, sign_differs)
    mod_adj = b.select(adjust, b.fadd(mod, d, flags=flags), mod)
    div = b.select(adjust, b.fsub(div, one, flags=flags), div)
    mod = b.select(mod_nonzero, mod_adj, copysign(b, zero, d))
    # Snap the quotient to the nearest integer; a zero quotient takes the sign of a/d.
    fl = floor(b, div)
    fl = b.select(b.fcmp_ordered(">", b.fsub(div, fl, flags=flags), constant(dtype, 0.5)),
                  b.fadd(fl, one, flags=flags), fl)
    div_nonzero = b.fcmp_unordered("!=", div, zero)
    quot = b.select(div_nonzero, fl, copysign(b, zero, b.fdiv(a, d, flags=flags)))
    return quot, mod


def float_floor_divide(b: KernelBuilder, dtype: np.dtype, a: ir.Value, d: ir.Value
                       ) -> ir.Value:
    quot, _ = _float_divmod(b, dtype, a, d)
    by_zero = b.fcmp_ordered("==", d, constant(dtype, 0.0))
    return b.select(by_zero, b.fdiv(a, d, flags=b.fp_flags), quot)


def float_mod(b: KernelBuilder, dtype: np.dtype, a: ir.Value, d: ir.Value) -> ir.Value:
    _, mod = _float_divmod(b, dtype, a, d)
    by_zero = b.fcmp_ordered("==", d, constant(dtype, 0.0))
    return b.select(by_zero, b.frem(a, d), mod)


def _count_in_range(b: KernelBuilder, dtype: np.dtype, y: ir.Value) -> ir.Value:
    # Unsigned compare: a negative count is huge, hence out of range, as in C's (size_t)y.
    return b.icmp_unsigned("<", y, constant(dtype, bits(dtype)))


def left_shift(b: KernelBuilder, dtype: np.dtype, x: ir.Value, y: ir.Value) -> ir.Value:
    ok = _count_in_range(b, dtype, y)
    shifted = b.shl(x, b.select(ok, y, constant(dtype, 0)))
    return b.select(ok, shifted, constant(dtype, 0))


def right_shift(b: KernelBuilder, dtype: np.dtype, x: ir.Value, y: ir.Value) -> ir.Value:
    ok = _count_in_range(b, dtype, y)
    count = b.select(ok, y, constant(dtype, 0))
    if dtype.kind == "u":
        return b.select(ok, b.lshr(x, count), constant(dtype, 0))
    negative = b.icmp_signed("<", x, constant(dtype, 0))
    fill = b.select(negative, constant(dtype, -1), constant(dtype, 0))
    return b.select(ok, b.ashr(x, count), fill)


def int_pow(b: KernelBuilder, dtype: np.dtype, base: ir.Value, exp: ir.Value) -> ir.Value:
    """``base ** exp`` modulo 2**bits by repeated squaring (a small loop per element)."""
    if dtype.kind == "i":
        b.fail_if(b.icmp_signed("<", exp, constant(dtype, 0)), NEGATIVE_POWER_ERROR)
    fn = b.function
    pre = b.block
    loop = fn.append_basic_block("pow.loop")
    done = fn.append_basic_block("pow.done")
    b.branch(loop)
    b.position_at_end(loop)
    ty = base.type
    cur_base, cur_exp, acc = b.phi(ty), b.phi(ty), b.phi(ty)
    cur_base.add_incoming(base, pre)
    cur_exp.add_incoming(exp, pre)
    acc.add_incoming(constant(dtype, 1), pre)
    odd = b.trunc(cur_exp, ir.IntType(1))
    new_acc = b.select(odd, b.mul(acc, cur_base), acc)
    new_exp = b.lshr(cur_exp, constant(dtype, 1))
    new_base = b.mul(cur_base, cur_base)
    cur_base.add_incoming(new_base, loop)
    cur_exp.add_incoming(new_exp, loop)
    acc.add_incoming(new_acc, loop)
    b.cbranch(b.icmp_unsigned("!=", new_exp, constant(dtype, 0)), loop, done)
    b.position_at_end(done)
    return new_acc
