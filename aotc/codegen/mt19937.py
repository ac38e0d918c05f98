"""The generators of NumPy and CPython in LLVM IR: MT19937 and the draws both make.

A state is an ``aotc_random`` (:mod:`aotc.abi`): the 624 key words, the position in
them, the cached second normal (``has_gauss``, ``gauss``) and ``ready``; there is one
for ``numpy.random`` and one for Python's ``random``. The caller's runtime hands a
kernel its thread's (``rt->random(rt, generator)``, seeded from the OS); without that
hook the kernel uses its module's own, seeded with MT19937's default 5489 at the first
draw (a C caller can seed them through a kernel calling ``np.random.seed``).

Each draw is NumPy's C code transcribed (``numpy/random/src``): ``mt19937_next``,
``mt19937_gen`` (one pass over the key, indices taken mod 624, which is the reference's
three loops), ``legacy_double`` (``(a >> 5) * 2**26 + (b >> 6)`` over ``2**53``),
``legacy_gauss`` (the polar method, the second value kept), ``-log(1 - double)`` and the
masked rejection of ``random_interval``/``randint`` (32-bit words for ranges that fit,
``hi << 32 | lo`` words beyond); and CPython's ``init_by_array`` seeding,
``_randbelow`` (``getrandbits`` of ``n``'s bit length until below ``n``) and ``gauss``
(Box-Muller on ``random()`` pairs, the sine's value kept). The helpers are internal
functions made once per module, without fast-math: the same operations as NumPy's C,
in the same order, and the
C library's ``log`` and ``sqrt``, so the draws are NumPy's bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from llvmlite import ir

from ..ir import Eqn
from ..ops.core import Primitive
from ..ops.random import GENERATORS, random_draw_p, random_seed_p
from .bitonic import define_once
from .builder import KernelBuilder
from .context import Lowering
from .dtypes import F64, I64, PTR, i64
from .loops import for_range
from .nests import EqnRule, materialize
from .runtime import RANDOM_FIELD, RUNTIME_STRUCT
from .values import Scalar, Value

I32 = ir.IntType(32)
VOID = ir.VoidType()
KEY_WORDS, SHIFT = 624, 397
#: ``aotc_random {uint32_t key[624]; int32_t pos, has_gauss; double gauss; int64_t ready}``
STATE = ir.LiteralStructType([ir.ArrayType(I32, KEY_WORDS), I32, I32, F64, I64])
KEY, POS, HAS_GAUSS, GAUSS, READY = range(5)
DEFAULT_SEED = 5489
RANDOM_HOOK = ir.FunctionType(PTR, [PTR, I64])


def i32(value: int) -> ir.Constant:
    return ir.Constant(I32, value)


def _field(b: ir.IRBuilder, state: ir.Value, field: int) -> ir.Value:
    return b.gep(state, [i64(0), i32(field)], source_etype=STATE)


def _key(b: ir.IRBuilder, state: ir.Value, index: ir.Value) -> ir.Value:
    return b.gep(state, [i64(0), i32(KEY), index], source_etype=STATE)


def _init_by_array_function(module: ir.Module) -> ir.Function:
    """``void(state, int64 s)``: CPython's ``random.seed(s)`` for an int: the key is the
    32-bit words of ``abs(s)`` (one for ``abs(s) < 2**32``), mixed by ``init_by_array``."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        state, seed = p["state"], p["seed"]
        magnitude = b.select(b.icmp_signed("<", seed, i64(0)), b.neg(seed), seed)
        low, high = b.trunc(magnitude, I32), b.trunc(b.lshr(magnitude, i64(32)), I32)
        words = b.select(b.icmp_unsigned("==", high, i32(0)), i32(1), i32(2))
        b.call(_seed_function(module), [state, i32(19650218)])
        at, word = b.alloca(I32), b.alloca(I32)
        b.store(i32(1), at)
        b.store(i32(0), word)

        def mix(multiplier: int, extra: Callable[[ir.Value], ir.Value]) -> None:
            i = b.load(at, typ=I32)
            here, before = _key(b, state, b.zext(i, I64)), \
                _key(b, state, b.zext(b.sub(i, i32(1)), I64))
            prev = b.load(before, typ=I32)
            mixed = b.mul(b.xor(prev, b.lshr(prev, i32(30))), i32(multiplier))
            b.store(extra(b.xor(b.load(here, typ=I32), mixed)), here)
            i = b.add(i, i32(1))
            wrap = b.icmp_signed(">=", i, i32(KEY_WORDS))
            with b.if_then(wrap):
                last = b.load(_key(b, state, i64(KEY_WORDS - 1)), typ=I32)
                b.store(last, _key(b, state, i64(0)))
            b.store(b.select(wrap, i32(1), i), at)

        def with_key(value: ir.Value) -> ir.Value:
            j = b.load(word, typ=I32)
            b.store(b.select(b.icmp_signed(">=", b.add(j, i32(1)), words), i32(0),
                             b.add(j, i32(1))), word)
            key = b.select(b.icmp_signed("==", j, i32(0)), low, high)
            return b.add(b.add(value, key), j)

        with for_range(b, i64(KEY_WORDS), "k", vectorize=False):
            mix(1664525, with_key)
        with for_range(b, i64(KEY_WORDS - 1), "k", vectorize=False):
            mix(1566083941, lambda value: b.sub(value, b.load(at, typ=I32)))
        b.store(i32(0x80000000), _key(b, state, i64(0)))
        b.ret_void()
    return define_once(module, "aotc.mt.init_by_array", VOID,
                       [("state", PTR), ("seed", I64)], body)


def _seed_function(module: ir.Module) -> ir.Function:
    """``void(state, uint32 s)``: ``mt19937_seed`` (``init_genrand``), normals cleared."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        state, slot = p["state"], b.alloca(I32)
        b.store(p["seed"], slot)
        with for_range(b, i64(KEY_WORDS), "k", vectorize=False) as k:
            s = b.load(slot, typ=I32)
            b.store(s, _key(b, state, k))
            mixed = b.mul(b.xor(s, b.lshr(s, i32(30))), i32(1812433253))
            b.store(b.add(mixed, b.add(b.trunc(k, I32), i32(1))), slot)
        b.store(i32(KEY_WORDS), _field(b, state, POS))
        b.store(i32(0), _field(b, state, HAS_GAUSS))
        b.store(ir.Constant(F64, 0.0), _field(b, state, GAUSS))
        ready = _field(b, state, READY)
        was = b.load(ready, typ=I64)  # the runtime's mark stays (see aotc.abi)
        b.store(b.select(b.icmp_signed("==", was, i64(0)), i64(1), was), ready)
        b.ret_void()
    return define_once(module, "aotc.mt.seed", VOID, [("state", PTR), ("seed", I32)], body)


def _refill_function(module: ir.Module) -> ir.Function:
    """``void(state)``: ``mt19937_gen``, the next 624 words."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        state = p["state"]
        with for_range(b, i64(KEY_WORDS), "k", vectorize=False) as k:
            def word(offset: int) -> ir.Value:
                at = b.urem(b.add(k, i64(offset)), i64(KEY_WORDS))
                return b.load(_key(b, state, at), typ=I32)
            y = b.or_(b.and_(word(0), i32(0x80000000)), b.and_(word(1), i32(0x7FFFFFFF)))
            odd = b.sub(i32(0), b.and_(y, i32(1)))
            value = b.xor(b.xor(word(SHIFT), b.lshr(y, i32(1))), b.and_(odd, i32(0x9908B0DF)))
            b.store(value, _key(b, state, k))
        b.store(i32(0), _field(b, state, POS))
        b.ret_void()
    return define_once(module, "aotc.mt.refill", VOID, [("state", PTR)], body)


def _next32_function(module: ir.Module) -> ir.Function:
    """``uint32(state)``: ``mt19937_next``, one tempered word."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        state, pos = p["state"], _field(b, p["state"], POS)
        with b.if_then(b.icmp_signed(">=", b.load(pos, typ=I32), i32(KEY_WORDS)),
                       likely=False):
            b.call(_refill_function(module), [state])
        at = b.load(pos, typ=I32)
        b.store(b.add(at, i32(1)), pos)
        y = b.load(_key(b, state, b.zext(at, I64)), typ=I32)
        y = b.xor(y, b.lshr(y, i32(11)))
        y = b.xor(y, b.and_(b.shl(y, i32(7)), i32(0x9D2C5680)))
        y = b.xor(y, b.and_(b.shl(y, i32(15)), i32(0xEFC60000)))
        b.ret(b.xor(y, b.lshr(y, i32(18))))
    return define_once(module, "aotc.mt.next32", I32, [("state", PTR)], body)


def _word32(b: ir.IRBuilder, state: ir.Value) -> ir.Value:
    return b.zext(b.call(_next32_function(b.module), [state]), I64)


def _double(b: ir.IRBuilder, state: ir.Value) -> ir.Value:
    high = b.lshr(_word32(b, state), i64(5))
    low = b.lshr(_word32(b, state), i64(6))
    bits = b.fadd(b.fmul(b.uitofp(high, F64), ir.Constant(F64, 67108864.0)),
                  b.uitofp(low, F64))
    return b.fdiv(bits, ir.Constant(F64, 9007199254740992.0))


def _double_function(module: ir.Module) -> ir.Function:
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        b.ret(_double(b, p["state"]))
    return define_once(module, "aotc.mt.double", F64, [("state", PTR)], body)


def _log(b: KernelBuilder, x: ir.Value) -> ir.Value:
    """The C library's ``log``, as NumPy's C calls it: the same bits on the same host."""
    return b.call(b.module.declare_intrinsic("llvm.log", [F64]), [x])


def _gauss_function(module: ir.Module) -> ir.Function:
    """``double(state)``: ``legacy_gauss``, the cached value first."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        state = p["state"]
        has, cached = _field(b, state, HAS_GAUSS), _field(b, state, GAUSS)
        with b.if_then(b.icmp_signed("!=", b.load(has, typ=I32), i32(0))):
            b.store(i32(0), has)
            value = b.load(cached, typ=F64)
            b.store(ir.Constant(F64, 0.0), cached)
            b.ret(value)
        one, two = ir.Constant(F64, 1.0), ir.Constant(F64, 2.0)
        draw = _double_function(module)
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
        f = b.fdiv(b.fmul(ir.Constant(F64, -2.0), _log(b, r2)), r2)
        f = b.call(module.declare_intrinsic("llvm.sqrt", [F64]), [f])
        b.store(b.fmul(f, x1), cached)
        b.store(i32(1), has)
        b.ret(b.fmul(f, x2))
    return define_once(module, "aotc.mt.gauss", F64, [("state", PTR)], body)


def _exponential_function(module: ir.Module) -> ir.Function:
    """``double(state)``: ``legacy_standard_exponential``, ``-log(1 - double)``."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        u = b.call(_double_function(module), [p["state"]])
        b.ret(b.fneg(_log(b, b.fsub(ir.Constant(F64, 1.0), u))))
    return define_once(module, "aotc.mt.exponential", F64, [("state", PTR)], body)


def _interval_function(module: ir.Module) -> ir.Function:
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
                short = _word32(b, state)
                short_block = b.block
            with otherwise:
                high = b.shl(_word32(b, state), i64(32))
                wide = b.or_(high, _word32(b, state))
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


def _below_function(module: ir.Module) -> ir.Function:
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
                short = b.lshr(_word32(b, state), b.sub(i64(32), bits))
                short_block = b.block
            with otherwise:
                low = _word32(b, state)
                high = b.lshr(_word32(b, state), b.sub(i64(64), bits))
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


def _pygauss_function(module: ir.Module) -> ir.Function:
    """``double(state)``: CPython's ``gauss(0, 1)``, the cached value first."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        state = p["state"]
        has, cached = _field(b, state, HAS_GAUSS), _field(b, state, GAUSS)
        with b.if_then(b.icmp_signed("!=", b.load(has, typ=I32), i32(0))):
            b.store(i32(0), has)
            b.ret(b.load(cached, typ=F64))
        draw = _double_function(module)
        angle = b.fmul(b.call(draw, [state]), ir.Constant(F64, 2 * math.pi))
        radius = b.fmul(ir.Constant(F64, -2.0),
                        _log(b, b.fsub(ir.Constant(F64, 1.0), b.call(draw, [state]))))
        radius = b.call(module.declare_intrinsic("llvm.sqrt", [F64]), [radius])
        cos, sin = (b.call(module.declare_intrinsic(f"llvm.{f}", [F64]), [angle])
                    for f in ("cos", "sin"))
        b.store(b.fmul(sin, radius), cached)
        b.store(i32(1), has)
        b.ret(b.fmul(cos, radius))
    return define_once(module, "aotc.mt.pygauss", F64, [("state", PTR)], body)


def _fallback_state(module: ir.Module, generator: int) -> ir.GlobalVariable:
    """The module's own state of ``generator``, for callers without the runtime's hook."""
    name = f"aotc.mt.fallback.{GENERATORS[generator]}"
    found = module.globals.get(name)
    if isinstance(found, ir.GlobalVariable):
        return found
    state = ir.GlobalVariable(module, STATE, name)
    state.linkage = "internal"
    state.initializer = ir.Constant(STATE, None)
    state.align = 8
    return state


def _state_function(module: ir.Module, generator: int) -> ir.Function:
    """``aotc_random *(rt)``: the runtime's state of ``generator`` for this thread, else
    the module's (seeded with 5489 before its first use)."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        rt, null = p["rt"], ir.Constant(PTR, None)
        with b.if_then(b.icmp_unsigned("!=", rt, null), likely=True):
            slot = b.gep(rt, [i64(0), i32(RANDOM_FIELD)], source_etype=RUNTIME_STRUCT)
            hook = b.load(slot, typ=ir.PointerType(RANDOM_HOOK))
            with b.if_then(b.icmp_unsigned("!=", b.ptrtoint(hook, I64), i64(0)), likely=True):
                b.ret(b.call(hook, [rt, i64(generator)]))
        state = _fallback_state(module, generator)
        with b.if_then(b.icmp_signed("==", b.load(_field(b, state, READY), typ=I64),
                                     i64(0)), likely=False):
            b.call(_seed_function(module), [state, i32(DEFAULT_SEED)])
        b.ret(state)
    return define_once(module, f"aotc.mt.state.{GENERATORS[generator]}", PTR, [("rt", PTR)],
                       body)


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
        b.store(b.call(_state_function(b.module, generator), [ctx.runtime]), slot)
    return b.load(slot, typ=PTR)


#: distribution -> the helper drawing one value (state, then the draw's inputs).
DRAWS: dict[str, Callable[[ir.Module], ir.Function]] = {
    "double": _double_function, "gauss": _gauss_function,
    "exponential": _exponential_function, "interval": _interval_function,
    "below": _below_function, "pygauss": _pygauss_function}


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
        b.call(_seed_function(b.module), [state, b.trunc(seed.value, I32)])
    else:
        b.call(_init_by_array_function(b.module), [state, seed.value])
    return []


RULES: dict[Primitive, EqnRule] = {random_draw_p: lower_draw, random_seed_p: lower_seed}
