"""Boxes: the lists, sets and dicts a kernel grows while it runs (:mod:`aotc.ops.containers`).

A box is a header the kernel ``malloc``\\ s, linked into ``rt->heap``::

    struct box { struct box *next; char *data; int64_t len, cap; int64_t *index, mask;
                 int64_t escaped; }

``data`` holds ``cap`` entries of ``lanes`` 8-byte slots each (ints and bools widened to
``int64``, floats to ``double``), the first ``len`` in use, in order. A set or dict also
has ``index``, a table of ``mask + 1`` (a power of two, at least twice ``cap``) entry
positions found by linear probing from a key's hash, -1 where empty: at most half full,
so a probe always ends. Growing doubles ``cap`` (``realloc``) and rebuilds the table; a
deletion closes the gap in ``data`` (the order is kept) and rebuilds it too. Every
function here is emitted once per module, per entry width and key kinds.

A kernel using boxes is wrapped (:func:`emit_wrapper`): the wrapper gives the body a
runtime when the caller passed none, and frees every box once the body returns, on
every path, success or error; only a box the kernel returns (``escaped``) outlives a
successful call, for the caller to read and free.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from llvmlite import ir

from ...abi import CONTAINER_OUT_OF_MEMORY
from ...ir import Eqn, Program, called_functions, nested_programs
from ...ops.containers import (
    BOX_PRIMITIVES,
    box_clear_p,
    box_copy_p,
    box_escape_p,
    box_item_p,
    box_len_p,
    box_new_p,
    box_sort_p,
    list_find_p,
    list_insert_p,
    list_pop_p,
    list_push_p,
    list_put_p,
    map_delete_p,
    map_find_p,
    map_put_p,
)
from ...ops.core import Primitive
from .builder import KernelBuilder, define_once, start_function
from .context import Lowering
from .dtypes import I1, I64, PTR, i64
from .libc import libc_function
from .runtime import HEAP_FIELD, RUNTIME_STRUCT
from .values import Scalar, Value

EqnRule = Callable[[Lowering, Eqn, Sequence[Value]], list[Value]]

HEADER = ir.LiteralStructType([PTR, PTR, I64, I64, PTR, I64, I64])
NEXT, DATA, LEN, CAP, INDEX, MASK, ESCAPED = range(7)
SLOT = 8  #: bytes per lane
I32 = ir.IntType(32)
DOUBLE = ir.DoubleType()


def uses_boxes(program: Program) -> bool:
    """Whether ``program`` (or a body in it, or a function it calls) works on boxes."""
    def any_box(p: Program) -> bool:
        return any(e.prim in BOX_PRIMITIVES or any(any_box(n) for n in nested_programs(e))
                   for e in p.eqns)
    return any_box(program) or any(any_box(c.optimized or c.program)
                                   for c in called_functions(program))


# -- libc and the header ------------------------------------------------------------------

def _libc(b: ir.IRBuilder, name: str) -> ir.Function:
    types = {"malloc": ir.FunctionType(PTR, [I64]), "free": ir.FunctionType(ir.VoidType(), [PTR]),
             "realloc": ir.FunctionType(PTR, [PTR, I64]),
             "memmove": ir.FunctionType(PTR, [PTR, PTR, I64]),
             "memcpy": ir.FunctionType(PTR, [PTR, PTR, I64]),
             "qsort": ir.FunctionType(ir.VoidType(), [PTR, I64, I64, PTR])}
    return libc_function(b.module, name, types[name])


def _field(b: ir.IRBuilder, box: ir.Value, field: int) -> ir.Value:
    return b.gep(box, [i64(0), ir.Constant(I32, field)], source_etype=HEADER)


def _get(b: ir.IRBuilder, box: ir.Value, field: int) -> ir.Value:
    return b.load(_field(b, box, field), typ=PTR if field in (NEXT, DATA, INDEX) else I64)


def _set(b: ir.IRBuilder, box: ir.Value, field: int, value: ir.Value) -> None:
    b.store(value, _field(b, box, field))


def _entry(b: ir.IRBuilder, box: ir.Value, position: ir.Value, width: int) -> ir.Value:
    data = _get(b, box, DATA)
    return b.gep(data, [b.mul(position, i64(width * SLOT))], source_etype=ir.IntType(8))


def _lane(b: ir.IRBuilder, entry: ir.Value, lane: int) -> ir.Value:
    return b.gep(entry, [i64(lane * SLOT)], source_etype=ir.IntType(8))


def _heap_slot(b: ir.IRBuilder, rt: ir.Value) -> ir.Value:
    return b.gep(rt, [i64(0), ir.Constant(I32, HEAP_FIELD)], source_etype=RUNTIME_STRUCT)


# -- lanes: register values <-> 8-byte slots ----------------------------------------------

def _kind(dtype: np.dtype) -> str:
    return "f" if dtype.kind == "f" else "i"


def _store_lane(b: ir.IRBuilder, value: ir.Value, dtype: np.dtype, at: ir.Value) -> None:
    if dtype.kind == "f":
        b.store(value if dtype.itemsize == 8 else b.fpext(value, DOUBLE), at)
    elif value.type.width == 64:
        b.store(value, at)
    else:
        extend = b.sext if dtype.kind == "i" else b.zext
        b.store(extend(value, I64), at)


def _load_lane(b: ir.IRBuilder, at: ir.Value, dtype: np.dtype) -> ir.Value:
    if dtype.kind == "f":
        value = b.load(at, typ=DOUBLE)
        return value if dtype.itemsize == 8 else b.fptrunc(value, ir.FloatType())
    value = b.load(at, typ=I64)
    if dtype.kind == "b":
        return b.icmp_unsigned("!=", value, i64(0))
    return value if dtype.itemsize == 8 else b.trunc(value, ir.IntType(8 * dtype.itemsize))


def _record(b: KernelBuilder, values: Sequence[ir.Value], dtypes: Sequence[np.dtype]
            ) -> ir.Value:
    """An entry-block record of ``values``' slots (a key to look up)."""
    slot = b.entry_alloca(ir.ArrayType(I64, max(len(values), 1)))
    for k, (value, dtype) in enumerate(zip(values, dtypes, strict=True)):
        _store_lane(b, value, dtype, _lane(b, slot, k))
    return slot


# -- hashing and equality of keys ----------------------------------------------------------

def _mix(b: ir.IRBuilder, h: ir.Value) -> ir.Value:
    """splitmix64's finalizer: every bit of ``h`` reaches every bit of the result."""
    h = b.xor(h, b.lshr(h, i64(30)))
    h = b.mul(h, i64(0xBF58476D1CE4E5B9 - (1 << 64)))
    h = b.xor(h, b.lshr(h, i64(27)))
    h = b.mul(h, i64(0x94D049BB133111EB - (1 << 64)))
    return b.xor(h, b.lshr(h, i64(31)))


def _hash(b: ir.IRBuilder, key: ir.Value, kinds: str) -> ir.Value:
    h = i64(0x2545F4914F6CDD1D)
    for k, kind in enumerate(kinds):
        bits = b.load(_lane(b, key, k), typ=I64)
        if kind == "f":  # 0.0 and -0.0 are one key
            zero = b.fcmp_ordered("==", b.bitcast(bits, DOUBLE), ir.Constant(DOUBLE, 0.0))
            bits = b.select(zero, i64(0), bits)
        h = _mix(b, b.xor(h, bits))
    return h


def _equal(b: ir.IRBuilder, a: ir.Value, c: ir.Value, kinds: str) -> ir.Value:
    same: ir.Value = ir.Constant(I1, 1)
    for k, kind in enumerate(kinds):
        if kind == "f":  # Python's float ==: NaN equals nothing, -0.0 equals 0.0
            x, y = (b.load(_lane(b, p, k), typ=DOUBLE) for p in (a, c))
            lane = b.fcmp_ordered("==", x, y)
        else:
            lane = b.icmp_signed("==", *(b.load(_lane(b, p, k), typ=I64) for p in (a, c)))
        same = b.and_(same, lane)
    return same


# -- the functions, once per module ------------------------------------------------------

def _new_function(module: ir.Module) -> ir.Function:
    """``box *aotc.box.new(rt)``: an empty box linked into ``rt->heap`` (NULL: no memory)."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        box = b.call(_libc(b, "malloc"), [i64(8 * len(HEADER.elements))])
        with b.if_then(b.icmp_unsigned("==", box, ir.Constant(PTR, None)), likely=False):
            b.ret(box)
        heap = _heap_slot(b, p["rt"])
        _set(b, box, NEXT, b.load(heap, typ=PTR))
        for field in (DATA, INDEX):
            _set(b, box, field, ir.Constant(PTR, None))
        for field in (LEN, CAP, ESCAPED):
            _set(b, box, field, i64(0))
        _set(b, box, MASK, i64(-1))
        b.store(box, heap)
        b.ret(box)
    return define_once(module, "aotc.box.new", PTR, [("rt", PTR)], body)


def _release_function(module: ir.Module) -> ir.Function:
    """``void aotc.box.release(rt, code)``: free every box of the call, but the ones it
    returns when it succeeded (``code`` 0)."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        heap = _heap_slot(b, p["rt"])
        loop, done = b.append_basic_block("walk"), b.append_basic_block("done")
        b.branch(loop)
        with b.goto_block(loop):
            box = b.load(heap, typ=PTR)
            last = b.icmp_unsigned("==", box, ir.Constant(PTR, None))
            more = b.append_basic_block("free")
            b.cbranch(last, done, more)
            b.position_at_end(more)
            b.store(_get(b, box, NEXT), heap)
            kept = b.and_(b.icmp_signed("!=", _get(b, box, ESCAPED), i64(0)),
                          b.icmp_signed("==", p["code"], i64(0)))
            with b.if_then(b.not_(kept)):
                for field in (DATA, INDEX):
                    b.call(_libc(b, "free"), [_get(b, box, field)])
                b.call(_libc(b, "free"), [box])
            b.branch(loop)
        b.position_at_end(done)
        b.ret_void()
    return define_once(module, "aotc.box.release", ir.VoidType(),
                       [("rt", PTR), ("code", I64)], body)


def _reindex_function(module: ir.Module, width: int, kinds: str) -> ir.Function:
    """``bool reindex(box)``: a fresh index table for ``cap`` entries (false: no memory)."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        box = p["box"]
        cap = _get(b, box, CAP)
        size = b.entry_alloca(I64)
        b.store(i64(16), size)
        grow, grown = b.append_basic_block("size"), b.append_basic_block("sized")
        b.branch(grow)
        with b.goto_block(grow):
            now = b.load(size, typ=I64)
            small = b.icmp_signed("<", now, b.mul(cap, i64(2)))
            bigger = b.append_basic_block("double")
            b.cbranch(small, bigger, grown)
            b.position_at_end(bigger)
            b.store(b.mul(now, i64(2)), size)
            b.branch(grow)
        b.position_at_end(grown)
        n = b.load(size, typ=I64)
        b.call(_libc(b, "free"), [_get(b, box, INDEX)])
        table = b.call(_libc(b, "malloc"), [b.mul(n, i64(8))])
        _set(b, box, INDEX, table)
        with b.if_then(b.icmp_unsigned("==", table, ir.Constant(PTR, None)), likely=False):
            _set(b, box, MASK, i64(-1))
            b.ret(ir.Constant(I1, 0))
        mask = b.sub(n, i64(1))
        _set(b, box, MASK, mask)
        with _counting(b, n) as k:
            b.store(i64(-1), b.gep(table, [k], source_etype=I64))
        with _counting(b, _get(b, box, LEN)) as position:
            key = _entry(b, box, position, width)
            slot = _free_slot(b, table, mask, _hash(b, key, kinds))
            b.store(position, b.gep(table, [slot], source_etype=I64))
        b.ret(ir.Constant(I1, 1))
    return define_once(module, f"aotc.box.reindex.{width}.{kinds}", I1, [("box", PTR)], body)


class _counting:
    """``for k in range(n)`` around the ``with`` block's code."""

    def __init__(self, b: ir.IRBuilder, n: ir.Value) -> None:
        self.b, self.n = b, n

    def __enter__(self) -> ir.Value:
        b = self.b
        self.before = b.block
        self.head = b.append_basic_block("count")
        self.body = b.append_basic_block("count.body")
        self.after = b.append_basic_block("count.end")
        b.branch(self.head)
        b.position_at_end(self.head)
        self.k = b.phi(I64)
        self.k.add_incoming(i64(0), self.before)
        b.cbranch(b.icmp_signed("<", self.k, self.n), self.body, self.after)
        b.position_at_end(self.body)
        return self.k

    def __exit__(self, *exc: object) -> None:
        b = self.b
        self.k.add_incoming(b.add(self.k, i64(1)), b.block)
        b.branch(self.head)
        b.position_at_end(self.after)


def _probe(b: ir.IRBuilder, h: ir.Value, mask: ir.Value) -> ir.PhiInstr:
    """Open the loop over the probe sequence of hash ``h``: the slot, a phi of the
    loop's head block (the caller adds the next slot, ``(slot + 1) & mask``)."""
    first = b.and_(h, mask)
    start = b.block
    head = b.append_basic_block("probe")
    b.branch(head)
    b.position_at_end(head)
    slot = b.phi(I64)
    slot.add_incoming(first, start)
    return slot


def _free_slot(b: ir.IRBuilder, table: ir.Value, mask: ir.Value, h: ir.Value) -> ir.Value:
    """The first empty slot of the probe sequence of hash ``h``."""
    slot = _probe(b, h, mask)
    head, found = b.block, b.append_basic_block("probed")
    taken = b.icmp_signed("!=", b.load(b.gep(table, [slot], source_etype=I64), typ=I64), i64(-1))
    slot.add_incoming(b.and_(b.add(slot, i64(1)), mask), head)
    b.cbranch(taken, head, found)
    b.position_at_end(found)
    return slot


def _reserve_function(module: ir.Module, width: int, kinds: str | None) -> ir.Function:
    """``bool reserve(box, need)``: room for ``need`` entries (false: no memory); a set's
    or dict's table is rebuilt when the entries move."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        box, need = p["box"], p["need"]
        cap = _get(b, box, CAP)
        with b.if_then(b.icmp_signed("<=", need, cap), likely=True):
            b.ret(ir.Constant(I1, 1))
        doubled = b.mul(cap, i64(2))
        more = b.select(b.icmp_signed(">", doubled, need), doubled, need)
        more = b.select(b.icmp_signed("<", more, i64(8)), i64(8), more)
        data = b.call(_libc(b, "realloc"), [_get(b, box, DATA), b.mul(more, i64(width * SLOT))])
        with b.if_then(b.icmp_unsigned("==", data, ir.Constant(PTR, None)), likely=False):
            b.ret(ir.Constant(I1, 0))
        _set(b, box, DATA, data)
        _set(b, box, CAP, more)
        if kinds is None:
            b.ret(ir.Constant(I1, 1))
        else:
            b.ret(b.call(_reindex_function(module, width, kinds), [box]))
    name = f"aotc.box.reserve.{width}.{kinds or 'list'}"
    return define_once(module, name, I1, [("box", PTR), ("need", I64)], body)


def _find_function(module: ir.Module, width: int, kinds: str, hashed: bool) -> ir.Function:
    """``int64 find(box, key)``: the position of the entry equal to ``key``, or -1 (a set
    or dict probes its table; a list scans its items in order)."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        box, key = p["box"], p["key"]
        if not hashed:
            with _counting(b, _get(b, box, LEN)) as k:
                with b.if_then(_equal(b, _entry(b, box, k, width), key, kinds)):
                    b.ret(k)
            b.ret(i64(-1))
            return
        mask = _get(b, box, MASK)
        with b.if_then(b.icmp_signed("<", mask, i64(0)), likely=False):
            b.ret(i64(-1))
        table = _get(b, box, INDEX)
        slot = _probe(b, _hash(b, key, kinds), mask)
        head, step = b.block, b.append_basic_block("step")
        position = b.load(b.gep(table, [slot], source_etype=I64), typ=I64)
        with b.if_then(b.icmp_signed("==", position, i64(-1))):
            b.ret(i64(-1))
        with b.if_then(_equal(b, _entry(b, box, position, width), key, kinds)):
            b.ret(position)
        b.branch(step)
        b.position_at_end(step)
        slot.add_incoming(b.and_(b.add(slot, i64(1)), mask), step)
        b.branch(head)
    name = f"aotc.box.find.{width}.{kinds}.{'hash' if hashed else 'scan'}"
    return define_once(module, name, I64, [("box", PTR), ("key", PTR)], body)


def _insert_function(module: ir.Module, width: int, kinds: str) -> ir.Function:
    """``int64 insert(box, key)``: the position of ``key``'s entry, added (its key lanes
    copied, at the end) when absent; -2 when there is no memory for it."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        box, key = p["box"], p["key"]
        found = b.call(_find_function(module, width, kinds, True), [box, key])
        with b.if_then(b.icmp_signed(">=", found, i64(0))):
            b.ret(found)
        n = _get(b, box, LEN)
        room = b.call(_reserve_function(module, width, kinds), [box, b.add(n, i64(1))])
        with b.if_then(b.not_(room), likely=False):
            b.ret(i64(-2))
        with b.if_then(b.icmp_signed("<", _get(b, box, MASK), i64(0)), likely=False):
            ok = b.call(_reindex_function(module, width, kinds), [box])
            with b.if_then(b.not_(ok), likely=False):
                b.ret(i64(-2))
        b.call(_libc(b, "memcpy"), [_entry(b, box, n, width), key, i64(len(kinds) * SLOT)])
        table, mask = _get(b, box, INDEX), _get(b, box, MASK)
        slot = _free_slot(b, table, mask, _hash(b, key, kinds))
        b.store(n, b.gep(table, [slot], source_etype=I64))
        _set(b, box, LEN, b.add(n, i64(1)))
        b.ret(n)
    return define_once(module, f"aotc.box.insert.{width}.{kinds}", I64,
                       [("box", PTR), ("key", PTR)], body)


def _remove_at(b: ir.IRBuilder, box: ir.Value, position: ir.Value, width: int) -> None:
    """Close the gap of entry ``position`` (the later ones move down, in order)."""
    n = _get(b, box, LEN)
    later = b.sub(b.sub(n, position), i64(1))
    b.call(_libc(b, "memmove"), [_entry(b, box, position, width),
                                 _entry(b, box, b.add(position, i64(1)), width),
                                 b.mul(later, i64(width * SLOT))])
    _set(b, box, LEN, b.sub(n, i64(1)))


def _delete_function(module: ir.Module, width: int, kinds: str) -> ir.Function:
    """``bool delete(box, key)``: remove ``key``'s entry; whether there was one."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        box, key = p["box"], p["key"]
        found = b.call(_find_function(module, width, kinds, True), [box, key])
        with b.if_then(b.icmp_signed("<", found, i64(0))):
            b.ret(ir.Constant(I1, 0))
        _remove_at(b, box, found, width)
        b.call(_reindex_function(module, width, kinds), [box])  # (no memory: no table)
        b.ret(ir.Constant(I1, 1))
    return define_once(module, f"aotc.box.delete.{width}.{kinds}", I1,
                       [("box", PTR), ("key", PTR)], body)


# -- the rules -----------------------------------------------------------------------------

def _layout(eqn: Eqn) -> tuple[list[np.dtype], list[np.dtype], int, str]:
    key = [np.dtype(c) for c in eqn.params.get("key", ())]
    value = [np.dtype(c) for c in eqn.params.get("value", ())]
    return key, value, len(key) + len(value), "".join(_kind(d) for d in key)


def _box(ctx: Lowering, value: Value) -> ir.Value:
    assert isinstance(value, Scalar)
    return ctx.b.inttoptr(value.value, PTR)


def _registers(args: Sequence[Value]) -> list[ir.Value]:
    out = []
    for a in args:
        assert isinstance(a, Scalar)
        out.append(a.value)
    return out


def _fail_unless(ctx: Lowering, ok: ir.Value) -> None:
    ctx.b.fail_if(ctx.b.not_(ok), CONTAINER_OUT_OF_MEMORY)


def lower_new(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    b = ctx.b
    box = b.call(_new_function(b.module), [ctx.runtime])
    _fail_unless(ctx, b.icmp_unsigned("!=", box, ir.Constant(PTR, None)))
    return [Scalar(b.ptrtoint(box, I64), np.dtype(np.int64))]


def lower_len(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    return [Scalar(_get(ctx.b, _box(ctx, args[0]), LEN), np.dtype(np.int64))]


def _read_entry(b: ir.IRBuilder, entry: ir.Value, dtypes: Sequence[np.dtype], first: int = 0
                ) -> list[Value]:
    return [Scalar(_load_lane(b, _lane(b, entry, first + k), d), d) for k, d in enumerate(dtypes)]


def lower_item(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    """Item ``position``; zeros outside ``0 <= position < len`` (``d.get(k, default)``
    reads the item it found, or none, before it chooses)."""
    key, value, width, _ = _layout(eqn)
    b, box = ctx.b, _box(ctx, args[0])
    (position,) = _registers(args[1:])
    inside = b.and_(b.icmp_signed(">=", position, i64(0)),
                    b.icmp_signed("<", position, _get(b, box, LEN)))
    zeros = b.entry_alloca(ir.ArrayType(I64, width), name="box.zeros", zero=True)
    entry = b.select(inside, _entry(b, box, b.select(inside, position, i64(0)), width), zeros)
    return _read_entry(b, entry, key + value)


def lower_clear(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    b, box = ctx.b, _box(ctx, args[0])
    _set(b, box, LEN, i64(0))
    _, _, width, kinds = _layout(eqn)
    if eqn.params["kind"] != "list":
        b.call(_reindex_function(b.module, width, kinds), [box])  # (no memory: no table)
    return []


def lower_copy(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    _, _, width, kinds = _layout(eqn)
    b, box = ctx.b, _box(ctx, args[0])
    copy = b.call(_new_function(b.module), [ctx.runtime])
    _fail_unless(ctx, b.icmp_unsigned("!=", copy, ir.Constant(PTR, None)))
    n = _get(b, box, LEN)
    hashed = eqn.params["kind"] != "list"
    reserve = _reserve_function(b.module, width, kinds if hashed else None)
    _fail_unless(ctx, b.call(reserve, [copy, b.select(b.icmp_signed(">", n, i64(0)), n,
                                                      i64(1))]))
    b.call(_libc(b, "memcpy"), [_get(b, copy, DATA), _get(b, box, DATA),
                                b.mul(n, i64(width * SLOT))])
    _set(b, copy, LEN, n)
    if hashed:
        _fail_unless(ctx, b.call(_reindex_function(b.module, width, kinds), [copy]))
    return [Scalar(b.ptrtoint(copy, I64), np.dtype(np.int64))]


def _write_entry(b: ir.IRBuilder, entry: ir.Value, values: Sequence[ir.Value],
                 dtypes: Sequence[np.dtype], first: int = 0) -> None:
    for k, (v, d) in enumerate(zip(values, dtypes, strict=True)):
        _store_lane(b, v, d, _lane(b, entry, first + k))


def lower_push(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    key, _, width, _ = _layout(eqn)
    b, box = ctx.b, _box(ctx, args[0])
    n = _get(b, box, LEN)
    _fail_unless(ctx, b.call(_reserve_function(b.module, width, None), [box, b.add(n, i64(1))]))
    _write_entry(b, _entry(b, box, n, width), _registers(args[1:]), key)
    _set(b, box, LEN, b.add(n, i64(1)))
    return []


def lower_pop(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    key, _, width, _ = _layout(eqn)
    b, box = ctx.b, _box(ctx, args[0])
    (position,) = _registers(args[1:])
    items = _read_entry(b, _entry(b, box, position, width), key)
    _remove_at(b, box, position, width)
    return list(items)


def lower_put(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    key, _, width, _ = _layout(eqn)
    b, box = ctx.b, _box(ctx, args[0])
    position, *values = _registers(args[1:])
    _write_entry(b, _entry(b, box, position, width), values, key)
    return []


def lower_insert(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    key, _, width, _ = _layout(eqn)
    b, box = ctx.b, _box(ctx, args[0])
    position, *values = _registers(args[1:])
    n = _get(b, box, LEN)
    _fail_unless(ctx, b.call(_reserve_function(b.module, width, None), [box, b.add(n, i64(1))]))
    b.call(_libc(b, "memmove"), [_entry(b, box, b.add(position, i64(1)), width),
                                 _entry(b, box, position, width),
                                 b.mul(b.sub(n, position), i64(width * SLOT))])
    _write_entry(b, _entry(b, box, position, width), values, key)
    _set(b, box, LEN, b.add(n, i64(1)))
    return []


def lower_find(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    key, _, width, kinds = _layout(eqn)
    b = ctx.b
    record = _record(b, _registers(args[1:]), key)
    find = _find_function(b.module, width, kinds, eqn.prim is map_find_p)
    return [Scalar(b.call(find, [_box(ctx, args[0]), record]), np.dtype(np.int64))]


def lower_map_put(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    key, value, width, kinds = _layout(eqn)
    b, box = ctx.b, _box(ctx, args[0])
    lanes = _registers(args[1:])
    before = _get(b, box, LEN)
    position = b.call(_insert_function(b.module, width, kinds),
                      [box, _record(b, lanes[:len(key)], key)])
    _fail_unless(ctx, b.icmp_signed(">=", position, i64(0)))
    _write_entry(b, _entry(b, box, position, width), lanes[len(key):], value, len(key))
    created = b.icmp_signed("!=", _get(b, box, LEN), before)
    return [Scalar(created, np.dtype(np.bool_))]


def lower_map_delete(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    key, _, width, kinds = _layout(eqn)
    b = ctx.b
    record = _record(b, _registers(args[1:]), key)
    removed = b.call(_delete_function(b.module, width, kinds), [_box(ctx, args[0]), record])
    return [Scalar(removed, np.dtype(np.bool_))]


def _compare_function(module: ir.Module, width: int, kinds: str, reverse: bool
                      ) -> ir.Function:
    """``int compare(a, b)`` for ``qsort``: the lanes in turn, as Python orders numbers
    (a NaN neither before nor after anything)."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        first, second = (p["b"], p["a"]) if reverse else (p["a"], p["b"])
        for k, kind in enumerate(kinds):
            if kind == "f":
                x, y = (b.load(_lane(b, e, k), typ=DOUBLE) for e in (first, second))
                less, more = b.fcmp_ordered("<", x, y), b.fcmp_ordered(">", x, y)
            else:
                x, y = (b.load(_lane(b, e, k), typ=I64) for e in (first, second))
                less, more = b.icmp_signed("<", x, y), b.icmp_signed(">", x, y)
            with b.if_then(less):
                b.ret(ir.Constant(I32, -1))
            with b.if_then(more):
                b.ret(ir.Constant(I32, 1))
        b.ret(ir.Constant(I32, 0))
    name = f"aotc.box.compare.{width}.{kinds}.{'down' if reverse else 'up'}"
    return define_once(module, name, I32, [("a", PTR), ("b", PTR)], body)


def lower_sort(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    _, _, width, kinds = _layout(eqn)
    b, box = ctx.b, _box(ctx, args[0])
    compare = _compare_function(b.module, width, kinds, eqn.params["reverse"])
    b.call(_libc(b, "qsort"), [_get(b, box, DATA), _get(b, box, LEN), i64(width * SLOT),
                               compare])
    return []


def lower_escape(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    _set(ctx.b, _box(ctx, args[0]), ESCAPED, i64(1))
    return []


RULES: dict[Primitive, EqnRule] = {
    box_new_p: lower_new, box_len_p: lower_len, box_item_p: lower_item,
    box_clear_p: lower_clear, box_copy_p: lower_copy, list_push_p: lower_push,
    list_pop_p: lower_pop, list_put_p: lower_put, list_insert_p: lower_insert,
    list_find_p: lower_find, map_find_p: lower_find, map_put_p: lower_map_put,
    map_delete_p: lower_map_delete, box_sort_p: lower_sort, box_escape_p: lower_escape,
}


def emit_wrapper(module: ir.Module, name: str, body: ir.Function) -> None:
    """``name``: ``body`` run with a runtime (the caller's, or a zeroed one of its own),
    then every box of the call freed, whatever ``body`` returned."""
    fn = ir.Function(module, body.function_type, name)
    b = start_function(fn, ())
    *rest, rt = fn.args
    own = b.entry_alloca(RUNTIME_STRUCT, name="box.rt")
    b.store(ir.Constant(RUNTIME_STRUCT, None), own)
    given = b.icmp_unsigned("!=", rt, ir.Constant(PTR, None))
    runtime = b.select(given, rt, own)
    code = b.call(body, [*rest, runtime])
    b.call(_release_function(module), [runtime, code])
    b.ret(code)
    entry, start = fn.basic_blocks[:2]
    with b.goto_block(entry):
        b.branch(start)
