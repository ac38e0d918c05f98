"""The LLVM functions of boxes (:mod:`.boxes`), each emitted once per module, per entry
width and key kinds, and the header's and lanes' layout they share.

A box is a header the kernel ``malloc``\\ s, linked into ``rt->heap``::

    struct box { struct box *next; char *data; int64_t len, cap; int64_t *index, mask;
                 int64_t escaped; }

``data`` holds ``cap`` entries of ``lanes`` 8-byte slots each (ints and bools widened to
``int64``, floats to ``double``), the first ``len`` in use, in order. A set or dict also
has ``index``, a table of ``mask + 1`` (a power of two, at least twice ``cap``) entry
positions found by linear probing from a key's hash, -1 where empty: at most half full,
so a probe always ends. Growing doubles ``cap`` (``realloc``) and rebuilds the table; a
deletion closes the gap in ``data`` (the order is kept) and rebuilds it too.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from llvmlite import ir

from .builder import KernelBuilder, define_once
from .dtypes import I1, I64, PTR, i64
from .libc import libc_function
from .loops import for_range
from .runtime import HEAP_FIELD, RUNTIME_STRUCT

HEADER = ir.LiteralStructType([PTR, PTR, I64, I64, PTR, I64, I64])
NEXT, DATA, LEN, CAP, INDEX, MASK, ESCAPED = range(7)
SLOT = 8  #: bytes per lane
I32 = ir.IntType(32)
DOUBLE = ir.DoubleType()


# -- libc and the header ------------------------------------------------------------------

def libc(b: ir.IRBuilder, name: str) -> ir.Function:
    types = {"malloc": ir.FunctionType(PTR, [I64]), "free": ir.FunctionType(ir.VoidType(), [PTR]),
             "realloc": ir.FunctionType(PTR, [PTR, I64]),
             "memmove": ir.FunctionType(PTR, [PTR, PTR, I64]),
             "memcpy": ir.FunctionType(PTR, [PTR, PTR, I64]),
             "qsort": ir.FunctionType(ir.VoidType(), [PTR, I64, I64, PTR])}
    return libc_function(b.module, name, types[name])


def field_ptr(b: ir.IRBuilder, box: ir.Value, field: int) -> ir.Value:
    return b.gep(box, [i64(0), ir.Constant(I32, field)], source_etype=HEADER)


def load_field(b: ir.IRBuilder, box: ir.Value, field: int) -> ir.Value:
    return b.load(field_ptr(b, box, field), typ=PTR if field in (NEXT, DATA, INDEX) else I64)


def store_field(b: ir.IRBuilder, box: ir.Value, field: int, value: ir.Value) -> None:
    b.store(value, field_ptr(b, box, field))


def entry_ptr(b: ir.IRBuilder, box: ir.Value, position: ir.Value, width: int) -> ir.Value:
    data = load_field(b, box, DATA)
    return b.gep(data, [b.mul(position, i64(width * SLOT))], source_etype=ir.IntType(8))


def lane_ptr(b: ir.IRBuilder, entry: ir.Value, lane: int) -> ir.Value:
    return b.gep(entry, [i64(lane * SLOT)], source_etype=ir.IntType(8))


def heap_slot(b: ir.IRBuilder, rt: ir.Value) -> ir.Value:
    return b.gep(rt, [i64(0), ir.Constant(I32, HEAP_FIELD)], source_etype=RUNTIME_STRUCT)


# -- lanes: register values <-> 8-byte slots ----------------------------------------------

def lane_kind(dtype: np.dtype) -> str:
    """How a lane compares: "f" as a double, "u" as an unsigned 64-bit integer (uint64:
    its top bit is a value), "i" as a signed one (every other integer, and bool)."""
    return "f" if dtype.kind == "f" else "u" if dtype == np.uint64 else "i"


def store_lane(b: ir.IRBuilder, value: ir.Value, dtype: np.dtype, at: ir.Value) -> None:
    if dtype.kind == "f":
        b.store(value if dtype.itemsize == 8 else b.fpext(value, DOUBLE), at)
    elif value.type.width == 64:
        b.store(value, at)
    else:
        extend = b.sext if dtype.kind == "i" else b.zext
        b.store(extend(value, I64), at)


def load_lane(b: ir.IRBuilder, at: ir.Value, dtype: np.dtype) -> ir.Value:
    if dtype.kind == "f":
        value = b.load(at, typ=DOUBLE)
        return value if dtype.itemsize == 8 else b.fptrunc(value, ir.FloatType())
    value = b.load(at, typ=I64)
    if dtype.kind == "b":
        return b.icmp_unsigned("!=", value, i64(0))
    return value if dtype.itemsize == 8 else b.trunc(value, ir.IntType(8 * dtype.itemsize))


def key_record(b: KernelBuilder, values: Sequence[ir.Value], dtypes: Sequence[np.dtype]
               ) -> ir.Value:
    """An entry-block record of ``values``' slots (a key to look up)."""
    slot = b.entry_alloca(ir.ArrayType(I64, max(len(values), 1)))
    for k, (value, dtype) in enumerate(zip(values, dtypes, strict=True)):
        store_lane(b, value, dtype, lane_ptr(b, slot, k))
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
        bits = b.load(lane_ptr(b, key, k), typ=I64)
        if kind == "f":  # 0.0 and -0.0 are one key
            zero = b.fcmp_ordered("==", b.bitcast(bits, DOUBLE), ir.Constant(DOUBLE, 0.0))
            bits = b.select(zero, i64(0), bits)
        h = _mix(b, b.xor(h, bits))
    return h


def _equal(b: ir.IRBuilder, a: ir.Value, c: ir.Value, kinds: str) -> ir.Value:
    same: ir.Value = ir.Constant(I1, 1)
    for k, kind in enumerate(kinds):
        if kind == "f":  # Python's float ==: NaN equals nothing, -0.0 equals 0.0
            x, y = (b.load(lane_ptr(b, p, k), typ=DOUBLE) for p in (a, c))
            lane = b.fcmp_ordered("==", x, y)
        else:
            lane = b.icmp_signed("==", *(b.load(lane_ptr(b, p, k), typ=I64) for p in (a, c)))
        same = b.and_(same, lane)
    return same


# -- the functions, once per module ------------------------------------------------------

def new_function(module: ir.Module) -> ir.Function:
    """``box *aotc.box.new(rt)``: an empty box linked into ``rt->heap`` (NULL: no memory)."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        box = b.call(libc(b, "malloc"), [i64(8 * len(HEADER.elements))])
        with b.if_then(b.icmp_unsigned("==", box, ir.Constant(PTR, None)), likely=False):
            b.ret(box)
        heap = heap_slot(b, p["rt"])
        store_field(b, box, NEXT, b.load(heap, typ=PTR))
        for field in (DATA, INDEX):
            store_field(b, box, field, ir.Constant(PTR, None))
        for field in (LEN, CAP, ESCAPED):
            store_field(b, box, field, i64(0))
        store_field(b, box, MASK, i64(-1))
        b.store(box, heap)
        b.ret(box)
    return define_once(module, "aotc.box.new", PTR, [("rt", PTR)], body)


def release_function(module: ir.Module) -> ir.Function:
    """``void aotc.box.release(rt, code)``: free every box of the call, but the ones it
    returns when it succeeded (``code`` 0)."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        heap = heap_slot(b, p["rt"])
        loop, done = b.append_basic_block("walk"), b.append_basic_block("done")
        b.branch(loop)
        with b.goto_block(loop):
            box = b.load(heap, typ=PTR)
            last = b.icmp_unsigned("==", box, ir.Constant(PTR, None))
            more = b.append_basic_block("free")
            b.cbranch(last, done, more)
            b.position_at_end(more)
            b.store(load_field(b, box, NEXT), heap)
            kept = b.and_(b.icmp_signed("!=", load_field(b, box, ESCAPED), i64(0)),
                          b.icmp_signed("==", p["code"], i64(0)))
            with b.if_then(b.not_(kept)):
                for field in (DATA, INDEX):
                    b.call(libc(b, "free"), [load_field(b, box, field)])
                b.call(libc(b, "free"), [box])
            b.branch(loop)
        b.position_at_end(done)
        b.ret_void()
    return define_once(module, "aotc.box.release", ir.VoidType(),
                       [("rt", PTR), ("code", I64)], body)


def reindex_function(module: ir.Module, width: int, kinds: str) -> ir.Function:
    """``bool reindex(box)``: a fresh index table for ``cap`` entries (false: no memory)."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        box = p["box"]
        cap = load_field(b, box, CAP)
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
        b.call(libc(b, "free"), [load_field(b, box, INDEX)])
        table = b.call(libc(b, "malloc"), [b.mul(n, i64(8))])
        store_field(b, box, INDEX, table)
        with b.if_then(b.icmp_unsigned("==", table, ir.Constant(PTR, None)), likely=False):
            store_field(b, box, MASK, i64(-1))
            b.ret(ir.Constant(I1, 0))
        mask = b.sub(n, i64(1))
        store_field(b, box, MASK, mask)
        with for_range(b, n, "fill", vectorize=False) as k:
            b.store(i64(-1), b.gep(table, [k], source_etype=I64))
        with for_range(b, load_field(b, box, LEN), "rehash", vectorize=False) as position:
            key = entry_ptr(b, box, position, width)
            slot = _free_slot(b, table, mask, _hash(b, key, kinds))
            b.store(position, b.gep(table, [slot], source_etype=I64))
        b.ret(ir.Constant(I1, 1))
    return define_once(module, f"aotc.box.reindex.{width}.{kinds}", I1, [("box", PTR)], body)


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


def reserve_function(module: ir.Module, width: int, kinds: str | None) -> ir.Function:
    """``bool reserve(box, need)``: room for ``need`` entries (false: no memory); a set's
    or dict's table is rebuilt when the entries move."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        box, need = p["box"], p["need"]
        cap = load_field(b, box, CAP)
        with b.if_then(b.icmp_signed("<=", need, cap), likely=True):
            b.ret(ir.Constant(I1, 1))
        doubled = b.mul(cap, i64(2))
        more = b.select(b.icmp_signed(">", doubled, need), doubled, need)
        more = b.select(b.icmp_signed("<", more, i64(8)), i64(8), more)
        data = b.call(libc(b, "realloc"), [load_field(b, box, DATA),
                                           b.mul(more, i64(width * SLOT))])
        with b.if_then(b.icmp_unsigned("==", data, ir.Constant(PTR, None)), likely=False):
            b.ret(ir.Constant(I1, 0))
        store_field(b, box, DATA, data)
        store_field(b, box, CAP, more)
        if kinds is None:
            b.ret(ir.Constant(I1, 1))
        else:
            b.ret(b.call(reindex_function(module, width, kinds), [box]))
    name = f"aotc.box.reserve.{width}.{kinds or 'list'}"
    return define_once(module, name, I1, [("box", PTR), ("need", I64)], body)


def find_function(module: ir.Module, width: int, kinds: str, hashed: bool) -> ir.Function:
    """``int64 find(box, key)``: the position of the entry equal to ``key``, or -1 (a set
    or dict probes its table; a list scans its items in order)."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        box, key = p["box"], p["key"]
        if not hashed:
            with for_range(b, load_field(b, box, LEN), "scan", vectorize=False) as k:
                with b.if_then(_equal(b, entry_ptr(b, box, k, width), key, kinds)):
                    b.ret(k)
            b.ret(i64(-1))
            return
        mask = load_field(b, box, MASK)
        with b.if_then(b.icmp_signed("<", mask, i64(0)), likely=False):
            b.ret(i64(-1))
        table = load_field(b, box, INDEX)
        slot = _probe(b, _hash(b, key, kinds), mask)
        head, step = b.block, b.append_basic_block("step")
        position = b.load(b.gep(table, [slot], source_etype=I64), typ=I64)
        with b.if_then(b.icmp_signed("==", position, i64(-1))):
            b.ret(i64(-1))
        with b.if_then(_equal(b, entry_ptr(b, box, position, width), key, kinds)):
            b.ret(position)
        b.branch(step)
        b.position_at_end(step)
        slot.add_incoming(b.and_(b.add(slot, i64(1)), mask), step)
        b.branch(head)
    name = f"aotc.box.find.{width}.{kinds}.{'hash' if hashed else 'scan'}"
    return define_once(module, name, I64, [("box", PTR), ("key", PTR)], body)


def insert_function(module: ir.Module, width: int, kinds: str) -> ir.Function:
    """``int64 insert(box, key)``: the position of ``key``'s entry, added (its key lanes
    copied, at the end) when absent; -2 when there is no memory for it."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        box, key = p["box"], p["key"]
        found = b.call(find_function(module, width, kinds, True), [box, key])
        with b.if_then(b.icmp_signed(">=", found, i64(0))):
            b.ret(found)
        n = load_field(b, box, LEN)
        room = b.call(reserve_function(module, width, kinds), [box, b.add(n, i64(1))])
        with b.if_then(b.not_(room), likely=False):
            b.ret(i64(-2))
        with b.if_then(b.icmp_signed("<", load_field(b, box, MASK), i64(0)), likely=False):
            ok = b.call(reindex_function(module, width, kinds), [box])
            with b.if_then(b.not_(ok), likely=False):
                b.ret(i64(-2))
        b.call(libc(b, "memcpy"), [entry_ptr(b, box, n, width), key, i64(len(kinds) * SLOT)])
        table, mask = load_field(b, box, INDEX), load_field(b, box, MASK)
        slot = _free_slot(b, table, mask, _hash(b, key, kinds))
        b.store(n, b.gep(table, [slot], source_etype=I64))
        store_field(b, box, LEN, b.add(n, i64(1)))
        b.ret(n)
    return define_once(module, f"aotc.box.insert.{width}.{kinds}", I64,
                       [("box", PTR), ("key", PTR)], body)


def remove_at(b: ir.IRBuilder, box: ir.Value, position: ir.Value, width: int) -> None:
    """Close the gap of entry ``position`` (the later ones move down, in order)."""
    n = load_field(b, box, LEN)
    later = b.sub(b.sub(n, position), i64(1))
    b.call(libc(b, "memmove"), [entry_ptr(b, box, position, width),
                                 entry_ptr(b, box, b.add(position, i64(1)), width),
                                 b.mul(later, i64(width * SLOT))])
    store_field(b, box, LEN, b.sub(n, i64(1)))


def delete_function(module: ir.Module, width: int, kinds: str) -> ir.Function:
    """``bool delete(box, key)``: remove ``key``'s entry; whether there was one."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        box, key = p["box"], p["key"]
        found = b.call(find_function(module, width, kinds, True), [box, key])
        with b.if_then(b.icmp_signed("<", found, i64(0))):
            b.ret(ir.Constant(I1, 0))
        remove_at(b, box, found, width)
        b.call(reindex_function(module, width, kinds), [box])  # (no memory: no table)
        b.ret(ir.Constant(I1, 1))
    return define_once(module, f"aotc.box.delete.{width}.{kinds}", I1,
                       [("box", PTR), ("key", PTR)], body)


def compare_function(module: ir.Module, width: int, kinds: str, reverse: bool
                      ) -> ir.Function:
    """``int compare(a, b)`` for ``qsort``: the lanes in turn, as Python orders numbers
    (a NaN neither before nor after anything)."""
    def body(b: KernelBuilder, p: dict[str, ir.Argument]) -> None:
        first, second = (p["b"], p["a"]) if reverse else (p["a"], p["b"])
        for k, kind in enumerate(kinds):
            if kind == "f":
                x, y = (b.load(lane_ptr(b, e, k), typ=DOUBLE) for e in (first, second))
                less, more = b.fcmp_ordered("<", x, y), b.fcmp_ordered(">", x, y)
            else:
                x, y = (b.load(lane_ptr(b, e, k), typ=I64) for e in (first, second))
                compare = b.icmp_unsigned if kind == "u" else b.icmp_signed
                less, more = compare("<", x, y), compare(">", x, y)
            with b.if_then(less):
                b.ret(ir.Constant(I32, -1))
            with b.if_then(more):
                b.ret(ir.Constant(I32, 1))
        b.ret(ir.Constant(I32, 0))
    name = f"aotc.box.compare.{width}.{kinds}.{'down' if reverse else 'up'}"
    return define_once(module, name, I32, [("a", PTR), ("b", PTR)], body)
