"""MT19937 in LLVM IR: the state both random generators use, its seeding and its words.

A state is an ``aotc_random`` (:mod:`aotc.abi`): the 624 key words, the position in
them, the cached second normal (``has_gauss``, ``gauss``) and ``ready``; there is one
for ``numpy.random`` and one for Python's ``random``. The caller's runtime hands a
kernel its thread's (``rt->random(rt, generator)``, seeded from the OS); without that
hook the kernel uses its module's own, seeded with MT19937's default 5489 at the first
draw (a C caller can seed them through a kernel calling ``np.random.seed``).

NumPy's C transcribed (``numpy/random/src``): ``mt19937_seed``, ``mt19937_next``,
``mt19937_gen`` (one pass over the key, indices taken mod 624, which is the reference's
three loops) and ``legacy_double`` (``(a >> 5) * 2**26 + (b >> 6)`` over ``2**53``,
CPython's ``random()`` too). The draws built on them are in :mod:`.numpy_draws` and
:mod:`.python_draws`, their lowering in :mod:`.random_draws`. Every helper is an
internal function made once per module, without fast-math (the same operations as the
C code, in the same order), calling the C library's ``log``, ``exp``, ``sqrt``, ``sin``
and ``cos``: the draws are NumPy's and CPython's bit for bit.
"""

from __future__ import annotations

from llvmlite import ir

from ...ops.random import GENERATORS
from ..core.builder import KernelBuilder, define_once
from ..core.dtypes import F64, I32, I64, PTR, i32, i64
from ..core.loops import for_range
from ..core.runtime import RANDOM_FIELD, RUNTIME_STRUCT

VOID = ir.VoidType()
KEY_WORDS, SHIFT = 624, 397
#: ``aotc_random {uint32_t key[624]; int32_t pos, has_gauss; double gauss; int64_t ready}``
STATE = ir.LiteralStructType([ir.ArrayType(I32, KEY_WORDS), I32, I32, F64, I64])
KEY, POS, HAS_GAUSS, GAUSS, READY = range(5)
DEFAULT_SEED = 5489
RANDOM_HOOK = ir.FunctionType(PTR, [PTR, I64])


def field(b: ir.IRBuilder, state: ir.Value, field: int) -> ir.Value:
    return b.gep(state, [i64(0), i32(field)], source_etype=STATE)


def key_word(b: ir.IRBuilder, state: ir.Value, index: ir.Value) -> ir.Value:
    return b.gep(state, [i64(0), i32(KEY), index], source_etype=STATE)



def seed_function(module: ir.Module) -> ir.Function:
    """``void(state, uint32 s)``: ``mt19937_seed`` (``init_genrand``), normals cleared."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        state, slot = p["state"], b.alloca(I32)
        b.store(p["seed"], slot)
        with for_range(b, i64(KEY_WORDS), "k", vectorize=False) as k:
            s = b.load(slot, typ=I32)
            b.store(s, key_word(b, state, k))
            mixed = b.mul(b.xor(s, b.lshr(s, i32(30))), i32(1812433253))
            b.store(b.add(mixed, b.add(b.trunc(k, I32), i32(1))), slot)
        b.store(i32(KEY_WORDS), field(b, state, POS))
        b.store(i32(0), field(b, state, HAS_GAUSS))
        b.store(ir.Constant(F64, 0.0), field(b, state, GAUSS))
        ready = field(b, state, READY)
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
                return b.load(key_word(b, state, at), typ=I32)
            y = b.or_(b.and_(word(0), i32(0x80000000)), b.and_(word(1), i32(0x7FFFFFFF)))
            odd = b.sub(i32(0), b.and_(y, i32(1)))
            value = b.xor(b.xor(word(SHIFT), b.lshr(y, i32(1))), b.and_(odd, i32(0x9908B0DF)))
            b.store(value, key_word(b, state, k))
        b.store(i32(0), field(b, state, POS))
        b.ret_void()
    return define_once(module, "aotc.mt.refill", VOID, [("state", PTR)], body)


def _next32_function(module: ir.Module) -> ir.Function:
    """``uint32(state)``: ``mt19937_next``, one tempered word."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        state, pos = p["state"], field(b, p["state"], POS)
        # (unsigned: a caller's state with a negative pos regenerates, never reads outside)
        with b.if_then(b.icmp_unsigned(">=", b.load(pos, typ=I32), i32(KEY_WORDS)),
                       likely=False):
            b.call(_refill_function(module), [state])
        at = b.load(pos, typ=I32)
        b.store(b.add(at, i32(1)), pos)
        y = b.load(key_word(b, state, b.zext(at, I64)), typ=I32)
        y = b.xor(y, b.lshr(y, i32(11)))
        y = b.xor(y, b.and_(b.shl(y, i32(7)), i32(0x9D2C5680)))
        y = b.xor(y, b.and_(b.shl(y, i32(15)), i32(0xEFC60000)))
        b.ret(b.xor(y, b.lshr(y, i32(18))))
    return define_once(module, "aotc.mt.next32", I32, [("state", PTR)], body)


def word32(b: ir.IRBuilder, state: ir.Value) -> ir.Value:
    return b.zext(b.call(_next32_function(b.module), [state]), I64)


def double(b: ir.IRBuilder, state: ir.Value) -> ir.Value:
    high = b.lshr(word32(b, state), i64(5))
    low = b.lshr(word32(b, state), i64(6))
    bits = b.fadd(b.fmul(b.uitofp(high, F64), ir.Constant(F64, 67108864.0)),
                  b.uitofp(low, F64))
    return b.fdiv(bits, ir.Constant(F64, 9007199254740992.0))


def double_function(module: ir.Module) -> ir.Function:
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        b.ret(double(b, p["state"]))
    return define_once(module, "aotc.mt.double", F64, [("state", PTR)], body)


def log(b: KernelBuilder, x: ir.Value) -> ir.Value:
    """The C library's ``log``, as NumPy's C calls it: the same bits on the same host."""
    return b.call(b.module.declare_intrinsic("llvm.log", [F64]), [x])


def libm(b: ir.IRBuilder, name: str, *xs: ir.Value) -> ir.Value:
    """``llvm.name`` on doubles: an instruction (sqrt, floor...) or the C library's."""
    fnty = ir.FunctionType(F64, [F64] * len(xs))
    return b.call(b.module.declare_intrinsic(f"llvm.{name}", [F64], fnty), list(xs))


def f64(value: float) -> ir.Constant:
    return ir.Constant(F64, value)



def fallback_state(module: ir.Module, generator: int) -> ir.GlobalVariable:
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


def state_function(module: ir.Module, generator: int) -> ir.Function:
    """``aotc_random *(rt)``: the runtime's state of ``generator`` for this thread, else
    the module's; either is seeded with 5489 if it is not yet (``ready`` 0: an all-zero
    key would draw zeros forever)."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        rt, null = p["rt"], ir.Constant(PTR, None)
        slot = b.entry_alloca(PTR)
        b.store(fallback_state(module, generator), slot)
        with b.if_then(b.icmp_unsigned("!=", rt, null), likely=True):
            field_at = b.gep(rt, [i64(0), i32(RANDOM_FIELD)], source_etype=RUNTIME_STRUCT)
            hook = b.load(field_at, typ=ir.PointerType(RANDOM_HOOK))
            with b.if_then(b.icmp_unsigned("!=", b.ptrtoint(hook, I64), i64(0)), likely=True):
                given = b.call(hook, [rt, i64(generator)])
                with b.if_then(b.icmp_unsigned("!=", given, null), likely=True):
                    b.store(given, slot)
        state = b.load(slot, typ=PTR)
        with b.if_then(b.icmp_signed("==", b.load(field(b, state, READY), typ=I64),
                                     i64(0)), likely=False):
            b.call(seed_function(module), [state, i32(DEFAULT_SEED)])
        b.ret(state)
    return define_once(module, f"aotc.mt.state.{GENERATORS[generator]}", PTR, [("rt", PTR)],
                       body)


