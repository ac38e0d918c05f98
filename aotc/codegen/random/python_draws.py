"""CPython's ``random`` over MT19937 words (``Modules/_randommodule.c``, ``random.py``).

``init_by_array`` seeding from the 32-bit words of ``abs(seed)``, ``_randbelow``
(``getrandbits`` of ``n``'s bit length until one is below ``n``) and ``gauss``
(Box-Muller on ``random()`` pairs, the sine's value kept).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from llvmlite import ir

from ..core.builder import KernelBuilder, define_once
from ..core.dtypes import F64, I32, I64, PTR, i32, i64
from ..core.loops import for_range
from .mt19937 import (
    GAUSS,
    HAS_GAUSS,
    KEY_WORDS,
    VOID,
    double_function,
    field,
    key_word,
    log,
    seed_function,
    word32,
)


def init_by_array_function(module: ir.Module) -> ir.Function:
    """``void(state, int64 s)``: CPython's ``random.seed(s)`` for an int: the key is the
    32-bit words of ``abs(s)`` (one for ``abs(s) < 2**32``), mixed by ``init_by_array``."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        state, seed = p["state"], p["seed"]
        magnitude = b.select(b.icmp_signed("<", seed, i64(0)), b.neg(seed), seed)
        low, high = b.trunc(magnitude, I32), b.trunc(b.lshr(magnitude, i64(32)), I32)
        words = b.select(b.icmp_unsigned("==", high, i32(0)), i32(1), i32(2))
        b.call(seed_function(module), [state, i32(19650218)])
        at, word = b.alloca(I32), b.alloca(I32)
        b.store(i32(1), at)
        b.store(i32(0), word)

        def mix(multiplier: int, extra: Callable[[ir.Value], ir.Value]) -> None:
            i = b.load(at, typ=I32)
            here, before = key_word(b, state, b.zext(i, I64)), \
                key_word(b, state, b.zext(b.sub(i, i32(1)), I64))
            prev = b.load(before, typ=I32)
            mixed = b.mul(b.xor(prev, b.lshr(prev, i32(30))), i32(multiplier))
            b.store(extra(b.xor(b.load(here, typ=I32), mixed)), here)
            i = b.add(i, i32(1))
            wrap = b.icmp_signed(">=", i, i32(KEY_WORDS))
            with b.if_then(wrap):
                last = b.load(key_word(b, state, i64(KEY_WORDS - 1)), typ=I32)
                b.store(last, key_word(b, state, i64(0)))
            b.store(b.select(wrap, i32(1), i), at)

        def withkey_word(value: ir.Value) -> ir.Value:
            j = b.load(word, typ=I32)
            b.store(b.select(b.icmp_signed(">=", b.add(j, i32(1)), words), i32(0),
                             b.add(j, i32(1))), word)
            key = b.select(b.icmp_signed("==", j, i32(0)), low, high)
            return b.add(b.add(value, key), j)

        with for_range(b, i64(KEY_WORDS), "k", vectorize=False):
            mix(1664525, withkey_word)
        with for_range(b, i64(KEY_WORDS - 1), "k", vectorize=False):
            mix(1566083941, lambda value: b.sub(value, b.load(at, typ=I32)))
        b.store(i32(0x80000000), key_word(b, state, i64(0)))
        b.ret_void()
    return define_once(module, "aotc.mt.init_by_array", VOID,
                       [("state", PTR), ("seed", I64)], body)



def below_function(module: ir.Module) -> ir.Function:
    """``int64(state, n)``: CPython's ``_randbelow(n)`` for ``n > 0``: ``getrandbits(k)``
    (``k`` the bit length of ``n``; past 32 bits, the first word is the low one) until
    one is below ``n``."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        state, n = p["state"], p["n"]
        ctlz = module.declare_intrinsic("llvm.ctlz", [I64],
                                        ir.FunctionType(I64, [I64, ir.IntType(1)]))
        bits = b.sub(i64(64), b.call(ctlz, [n, ir.Constant(ir.IntType(1), 0)]))
        narrow = b.icmp_signed("<=", bits, i64(32))
        retry = b.append_basic_block("draw")
        b.branch(retry)
        b.position_at_end(retry)
        with b.if_else(narrow) as (then, otherwise):
            with then:
                short = b.lshr(word32(b, state), b.sub(i64(32), bits))
                short_block = b.block
            with otherwise:
                low = word32(b, state)
                high = b.lshr(word32(b, state), b.sub(i64(64), bits))
                wide = b.or_(low, b.shl(high, i64(32)))
                wide_block = b.block
        value = b.phi(I64)
        value.add_incoming(short, short_block)
        value.add_incoming(wide, wide_block)
        done = b.append_basic_block("done")
        b.cbranch(b.icmp_unsigned(">=", value, n), retry, done)
        b.position_at_end(done)
        b.ret(value)
    return define_once(module, "aotc.mt.below", I64, [("state", PTR), ("n", I64)], body)


def pygauss_function(module: ir.Module) -> ir.Function:
    """``double(state)``: CPython's ``gauss(0, 1)``, the cached value first."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        state = p["state"]
        has, cached = field(b, state, HAS_GAUSS), field(b, state, GAUSS)
        with b.if_then(b.icmp_signed("!=", b.load(has, typ=I32), i32(0))):
            b.store(i32(0), has)
            b.ret(b.load(cached, typ=F64))
        draw = double_function(module)
        angle = b.fmul(b.call(draw, [state]), ir.Constant(F64, 2 * math.pi))
        radius = b.fmul(ir.Constant(F64, -2.0),
                        log(b, b.fsub(ir.Constant(F64, 1.0), b.call(draw, [state]))))
        radius = b.call(module.declare_intrinsic("llvm.sqrt", [F64]), [radius])
        cos, sin = (b.call(module.declare_intrinsic(f"llvm.{f}", [F64]), [angle])
                    for f in ("cos", "sin"))
        b.store(b.fmul(sin, radius), cached)
        b.store(i32(1), has)
        b.ret(b.fmul(cos, radius))
    return define_once(module, "aotc.mt.pygauss", F64, [("state", PTR)], body)


