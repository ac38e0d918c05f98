"""NumPy's legacy generator in LLVM IR: MT19937 and the draws ``numpy.random`` makes.

The state is an ``aotc_random`` (:mod:`aotc.abi`): the 624 key words, the position in
them, NumPy's cached second normal (``has_gauss``, ``gauss``) and ``ready``. The caller's
runtime hands a kernel its thread's state (``rt->random(rt)``, seeded from the OS);
without that hook the kernel uses one of its module's own, seeded with MT19937's default
5489 at the first draw (a C caller can seed it through a kernel calling
``np.random.seed``).

Each draw is NumPy's C code transcribed (``numpy/random/src``): ``mt19937_next``,
``mt19937_gen`` (one pass over the key, indices taken mod 624, which is the reference's
three loops), ``legacy_double`` (``(a >> 5) * 2**26 + (b >> 6)`` over ``2**53``),
``legacy_gauss`` (the polar method, the second value kept), ``-log(1 - double)`` and the
masked rejection of ``random_interval``/``randint`` (32-bit words for ranges that fit,
``hi << 32 | lo`` words beyond). The helpers are internal functions made once per
module, without fast-math: the same operations as NumPy's C, in the same order, and the
C library's ``log`` and ``sqrt``, so the draws are NumPy's bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from llvmlite import ir

from ..ir import Eqn
from ..ops.core import Primitive
from ..ops.random import random_draw_p, random_seed_p
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
RANDOM_HOOK = ir.FunctionType(PTR, [PTR])


def i32(value: int) -> ir.Constant:
    return ir.Constant(I32, value)


def _field(b: ir.IRBuilder, state: ir.Value, field: int) -> ir.Value:
    return b.gep(state, [i64(0), i32(field)], source_etype=STATE)


def _key(b: ir.IRBuilder, state: ir.Value, index: ir.Value) -> ir.Value:
    return b.gep(state, [i64(0), i32(KEY), index], source_etype=STATE)


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


def _fallback_state(module: ir.Module) -> ir.GlobalVariable:
    """The module's own state, for callers without the runtime's hook."""
    found = module.globals.get("aotc.mt.fallback")
    if isinstance(found, ir.GlobalVariable):
        return found
    state = ir.GlobalVariable(module, STATE, "aotc.mt.fallback")
    state.linkage = "internal"
    state.initializer = ir.Constant(STATE, None)
    state.align = 8
    return state


def _state_function(module: ir.Module) -> ir.Function:
    """``aotc_random *(rt)``: the runtime's state for this thread, else the module's
    (seeded with 5489 before its first use)."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        rt, null = p["rt"], ir.Constant(PTR, None)
        with b.if_then(b.icmp_unsigned("!=", rt, null), likely=True):
            slot = b.gep(rt, [i64(0), i32(RANDOM_FIELD)], source_etype=RUNTIME_STRUCT)
            hook = b.load(slot, typ=ir.PointerType(RANDOM_HOOK))
            with b.if_then(b.icmp_unsigned("!=", b.ptrtoint(hook, I64), i64(0)), likely=True):
                b.ret(b.call(hook, [rt]))
        state = _fallback_state(module)
        with b.if_then(b.icmp_signed("==", b.load(_field(b, state, READY), typ=I64),
                                     i64(0)), likely=False):
            b.call(_seed_function(module), [state, i32(DEFAULT_SEED)])
        b.ret(state)
    return define_once(module, "aotc.mt.state", PTR, [("rt", PTR)], body)


def _state(ctx: Lowering) -> ir.Value:
    """The state, asked of the runtime at the first draw of each call (a slot in the
    function's entry block, null until then: a loop of scalar draws asks once)."""
    b = ctx.b
    key = (b.function, "random")
    if key not in ctx.slots:
        ctx.slots[key] = b.entry_alloca(PTR, "random", zero=True)
    slot = ctx.slots[key]
    null = ir.Constant(PTR, None)
    with b.if_then(b.icmp_unsigned("==", b.load(slot, typ=PTR), null), likely=False):
        b.store(b.call(_state_function(b.module), [ctx.runtime]), slot)
    return b.load(slot, typ=PTR)


#: distribution -> the helper drawing one value (state, then the draw's inputs).
DRAWS: dict[str, Callable[[ir.Module], ir.Function]] = {
    "double": _double_function, "gauss": _gauss_function,
    "exponential": _exponential_function, "interval": _interval_function}


def lower_draw(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    """The draws in C order over the output (its home may be any strided view)."""
    draw = DRAWS[eqn.params["distribution"]](ctx.b.module)
    inputs = [a.value for a in args if isinstance(a, Scalar)]
    state = _state(ctx)
    return materialize(ctx, eqn.outs[0], lambda _: ctx.b.call(draw, [state, *inputs]), "rnd")


def lower_seed(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    (seed,) = args
    assert isinstance(seed, Scalar)
    ctx.b.call(_seed_function(ctx.b.module), [_state(ctx), ctx.b.trunc(seed.value, I32)])
    return []


RULES: dict[Primitive, EqnRule] = {random_draw_p: lower_draw, random_seed_p: lower_seed}
