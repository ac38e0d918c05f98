"""Boxes: the lists, sets and dicts a kernel grows while it runs (:mod:`aotc.ops.containers`):
their lowering rules, on the functions of :mod:`.box_functions`.

A kernel using boxes is wrapped (:func:`emit_wrapper`): the wrapper gives the body a
runtime when the caller passed none, and frees every box once the body returns, on
every path, success or error; only a box the kernel returns (``escaped``) outlives a
successful call, for the caller to read and free.
"""

from __future__ import annotations

from collections.abc import Sequence

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
from .box_functions import (
    DATA,
    ESCAPED,
    LEN,
    SLOT,
    compare_function,
    delete_function,
    entry_ptr,
    find_function,
    insert_function,
    key_record,
    lane_kind,
    lane_ptr,
    libc,
    load_field,
    load_lane,
    new_function,
    reindex_function,
    release_function,
    remove_at,
    reserve_function,
    store_field,
    store_lane,
)
from .builder import start_function
from .context import EqnRule, Lowering
from .dtypes import I64, PTR, i64
from .runtime import RUNTIME_STRUCT
from .values import Scalar, Value


def uses_boxes(program: Program) -> bool:
    """Whether ``program`` (or a body in it, or a function it calls) works on boxes."""
    def any_box(p: Program) -> bool:
        return any(e.prim in BOX_PRIMITIVES or any(any_box(n) for n in nested_programs(e))
                   for e in p.eqns)
    return any_box(program) or any(any_box(c.optimized or c.program)
                                   for c in called_functions(program))


# -- the rules -----------------------------------------------------------------------------

def _layout(eqn: Eqn) -> tuple[list[np.dtype], list[np.dtype], int, str]:
    key = [np.dtype(c) for c in eqn.params.get("key", ())]
    value = [np.dtype(c) for c in eqn.params.get("value", ())]
    return key, value, len(key) + len(value), "".join(lane_kind(d) for d in key)


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
    box = b.call(new_function(b.module), [ctx.runtime])
    _fail_unless(ctx, b.icmp_unsigned("!=", box, ir.Constant(PTR, None)))
    return [Scalar(b.ptrtoint(box, I64), np.dtype(np.int64))]


def lower_len(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    return [Scalar(load_field(ctx.b, _box(ctx, args[0]), LEN), np.dtype(np.int64))]


def _read_entry(b: ir.IRBuilder, entry: ir.Value, dtypes: Sequence[np.dtype], first: int = 0
                ) -> list[Value]:
    return [Scalar(load_lane(b, lane_ptr(b, entry, first + k), d), d) for k, d in enumerate(dtypes)]


def lower_item(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    """Item ``position``; zeros outside ``0 <= position < len`` (``d.get(k, default)``
    reads the item it found, or none, before it chooses)."""
    key, value, width, _ = _layout(eqn)
    b, box = ctx.b, _box(ctx, args[0])
    (position,) = _registers(args[1:])
    inside = b.and_(b.icmp_signed(">=", position, i64(0)),
                    b.icmp_signed("<", position, load_field(b, box, LEN)))
    zeros = b.entry_alloca(ir.ArrayType(I64, width), name="box.zeros", zero=True)
    entry = b.select(inside, entry_ptr(b, box, b.select(inside, position, i64(0)), width), zeros)
    return _read_entry(b, entry, key + value)


def lower_clear(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    b, box = ctx.b, _box(ctx, args[0])
    store_field(b, box, LEN, i64(0))
    _, _, width, kinds = _layout(eqn)
    if eqn.params["kind"] != "list":
        b.call(reindex_function(b.module, width, kinds), [box])  # (no memory: no table)
    return []


def lower_copy(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    _, _, width, kinds = _layout(eqn)
    b, box = ctx.b, _box(ctx, args[0])
    copy = b.call(new_function(b.module), [ctx.runtime])
    _fail_unless(ctx, b.icmp_unsigned("!=", copy, ir.Constant(PTR, None)))
    n = load_field(b, box, LEN)
    hashed = eqn.params["kind"] != "list"
    reserve = reserve_function(b.module, width, kinds if hashed else None)
    _fail_unless(ctx, b.call(reserve, [copy, b.select(b.icmp_signed(">", n, i64(0)), n,
                                                      i64(1))]))
    b.call(libc(b, "memcpy"), [load_field(b, copy, DATA), load_field(b, box, DATA),
                                b.mul(n, i64(width * SLOT))])
    store_field(b, copy, LEN, n)
    if hashed:
        _fail_unless(ctx, b.call(reindex_function(b.module, width, kinds), [copy]))
    return [Scalar(b.ptrtoint(copy, I64), np.dtype(np.int64))]


def _write_entry(b: ir.IRBuilder, entry: ir.Value, values: Sequence[ir.Value],
                 dtypes: Sequence[np.dtype], first: int = 0) -> None:
    for k, (v, d) in enumerate(zip(values, dtypes, strict=True)):
        store_lane(b, v, d, lane_ptr(b, entry, first + k))


def lower_push(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    key, _, width, _ = _layout(eqn)
    b, box = ctx.b, _box(ctx, args[0])
    n = load_field(b, box, LEN)
    _fail_unless(ctx, b.call(reserve_function(b.module, width, None), [box, b.add(n, i64(1))]))
    _write_entry(b, entry_ptr(b, box, n, width), _registers(args[1:]), key)
    store_field(b, box, LEN, b.add(n, i64(1)))
    return []


def lower_pop(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    key, _, width, _ = _layout(eqn)
    b, box = ctx.b, _box(ctx, args[0])
    (position,) = _registers(args[1:])
    items = _read_entry(b, entry_ptr(b, box, position, width), key)
    remove_at(b, box, position, width)
    return list(items)


def lower_put(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    key, _, width, _ = _layout(eqn)
    b, box = ctx.b, _box(ctx, args[0])
    position, *values = _registers(args[1:])
    _write_entry(b, entry_ptr(b, box, position, width), values, key)
    return []


def lower_insert(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    key, _, width, _ = _layout(eqn)
    b, box = ctx.b, _box(ctx, args[0])
    position, *values = _registers(args[1:])
    n = load_field(b, box, LEN)
    _fail_unless(ctx, b.call(reserve_function(b.module, width, None), [box, b.add(n, i64(1))]))
    b.call(libc(b, "memmove"), [entry_ptr(b, box, b.add(position, i64(1)), width),
                                 entry_ptr(b, box, position, width),
                                 b.mul(b.sub(n, position), i64(width * SLOT))])
    _write_entry(b, entry_ptr(b, box, position, width), values, key)
    store_field(b, box, LEN, b.add(n, i64(1)))
    return []


def lower_find(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    key, _, width, kinds = _layout(eqn)
    b = ctx.b
    wanted = key_record(b, _registers(args[1:]), key)
    find = find_function(b.module, width, kinds, eqn.prim is map_find_p)
    return [Scalar(b.call(find, [_box(ctx, args[0]), wanted]), np.dtype(np.int64))]


def lower_map_put(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    key, value, width, kinds = _layout(eqn)
    b, box = ctx.b, _box(ctx, args[0])
    lanes = _registers(args[1:])
    before = load_field(b, box, LEN)
    position = b.call(insert_function(b.module, width, kinds),
                      [box, key_record(b, lanes[:len(key)], key)])
    _fail_unless(ctx, b.icmp_signed(">=", position, i64(0)))
    _write_entry(b, entry_ptr(b, box, position, width), lanes[len(key):], value, len(key))
    created = b.icmp_signed("!=", load_field(b, box, LEN), before)
    return [Scalar(created, np.dtype(np.bool_))]


def lower_map_delete(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    key, _, width, kinds = _layout(eqn)
    b = ctx.b
    found = key_record(b, _registers(args[1:]), key)
    removed = b.call(delete_function(b.module, width, kinds), [_box(ctx, args[0]), found])
    return [Scalar(removed, np.dtype(np.bool_))]


def lower_sort(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    _, _, width, kinds = _layout(eqn)
    b, box = ctx.b, _box(ctx, args[0])
    compare = compare_function(b.module, width, kinds, eqn.params["reverse"])
    b.call(libc(b, "qsort"), [load_field(b, box, DATA), load_field(b, box, LEN), i64(width * SLOT),
                               compare])
    return []


def lower_escape(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    store_field(ctx.b, _box(ctx, args[0]), ESCAPED, i64(1))
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
    b.call(release_function(module), [runtime, code])
    b.ret(code)
    entry, start = fn.basic_blocks[:2]
    with b.goto_block(entry):
        b.branch(start)
