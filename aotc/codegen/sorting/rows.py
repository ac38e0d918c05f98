"""One row of a sort: strided element access, locals, the helper functions' frame, and
the insertion sort short rows use.

The row helpers (:mod:`.radix`) are internal functions emitted once per module and
dtype; this module holds what they are written with.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from llvmlite import ir

from ..core.builder import KernelBuilder, internal_function
from ..core.dtypes import I64, PTR, i64
from ..core.loops import for_range

VOID = ir.VoidType()
#: Helper parameters that are i64 (the others are pointers).
INT_PARAMS = ("src_stride", "n", "dst_stride")


@dataclass(frozen=True)
class Row:
    """``n`` elements of ``ty`` at ``data + i * stride`` bytes."""

    data: ir.Value
    stride: ir.Value
    ty: ir.Type
    align: int

    def at(self, b: ir.IRBuilder, i: ir.Value) -> ir.Value:
        return b.gep(self.data, [b.mul(i, self.stride)], source_etype=ir.IntType(8))

    def load(self, b: ir.IRBuilder, i: ir.Value) -> ir.Value:
        return b.load(self.at(b, i), typ=self.ty, align=self.align)

    def store(self, b: ir.IRBuilder, i: ir.Value, value: ir.Value) -> None:
        b.store(value, self.at(b, i), align=self.align)


def packed(b: ir.IRBuilder, data: ir.Value, ty: ir.IntType) -> Row:
    """A buffer of our own: contiguous, naturally aligned."""
    return Row(data, i64(ty.width // 8), ty, ty.width // 8)


class Local:
    """A mutable local (an entry-block alloca; mem2reg makes it a register)."""

    def __init__(self, b: KernelBuilder, ty: ir.Type, init: ir.Value, name: str) -> None:
        self.b, self.ty = b, ty
        self.slot = b.entry_alloca(ty, name)
        b.store(init, self.slot)

    def get(self) -> ir.Value:
        return self.b.load(self.slot, typ=self.ty)

    def set(self, value: ir.Value) -> None:
        self.b.store(value, self.slot)


@contextmanager
def helper_function(module: ir.Module, name: str, args: list[str]) -> Iterator[
        tuple[KernelBuilder, dict[str, ir.Argument]]]:
    """Define internal ``void name(args...)`` (sizes i64, the rest pointers); the body
    is the ``with`` block."""
    params = [(a, I64 if a in INT_PARAMS else PTR) for a in args]
    with internal_function(module, name, VOID, params) as (b, named):
        yield b, named
        b.ret_void()


#: Elements :func:`insertion_sort` checks at once for being in order already.
WINDOW = 8


def insertion_sort(b: KernelBuilder, n: ir.Value, sorted_keys: Row,
                   key_of: Callable[[ir.Value], ir.Value], moved: list[Row],
                   budget: ir.Value | None = None) -> ir.Value:
    """Stable insertion sort of ``n`` elements: ``sorted_keys`` holds what is compared
    (``key_of`` makes its key), every row of ``moved`` moves along with it.

    With a ``budget``, gives up once more than that many elements have moved (the row
    is then a permutation of what it was, equal keys still in their order) and returns
    i1 false; returns true when the row is sorted. The row is then expected nearly
    sorted (``key_of`` the identity): when ``sorted_keys`` is contiguous, windows of
    :data:`WINDOW` keys already in order after the sorted prefix are skipped with one
    vector comparison, and only the windows around misplaced keys go one by one."""
    fn = b.function
    rows = (sorted_keys, *moved)
    moves = Local(b, I64, i64(0), "moves")
    i = Local(b, I64, i64(1), "i")
    outer, item, head, check, shift, place, done = (
        fn.append_basic_block(f"ins.{s}")
        for s in ("outer", "item", "head", "check", "shift", "place", "done"))
    if budget is not None:
        singly = Local(b, I64, i64(0), "singly")  # elements left to take one by one
        contiguous = b.icmp_signed("==", sorted_keys.stride,
                                   i64(sorted_keys.ty.width // 8))
    b.branch(outer)
    b.position_at_end(outer)
    more = b.icmp_signed("<", i.get(), n)
    if budget is not None:
        more = b.and_(more, b.icmp_signed("<=", moves.get(), budget))
        window = fn.append_basic_block("ins.window")
        b.cbranch(more, window, done)
        b.position_at_end(window)
        _skip_windows(b, n, sorted_keys, contiguous, i, singly, outer, item)
    else:
        b.cbranch(more, item, done)
    b.position_at_end(item)
    at = i.get()
    i.set(b.add(at, i64(1)))
    values = [row.load(b, at) for row in rows]
    key = key_of(values[0])
    j = Local(b, I64, at, "j")
    b.branch(head)
    b.position_at_end(head)
    b.cbranch(b.icmp_signed(">", j.get(), i64(0)), check, place)
    b.position_at_end(check)
    before = b.sub(j.get(), i64(1))
    b.cbranch(b.icmp_unsigned("<", key, key_of(sorted_keys.load(b, before))), shift, place)
    b.position_at_end(shift)
    for row in rows:
        row.store(b, j.get(), row.load(b, before))
    j.set(before)
    moves.set(b.add(moves.get(), i64(1)))
    b.branch(head)
    b.position_at_end(place)
    with b.if_then(b.icmp_signed("!=", j.get(), at)):
        for row, value in zip(rows, values, strict=True):
            row.store(b, j.get(), value)
    b.branch(outer)
    b.position_at_end(done)
    return b.icmp_signed("<=", moves.get(), budget) if budget is not None else \
        ir.Constant(ir.IntType(1), 1)


def _skip_windows(b: KernelBuilder, n: ir.Value, keys: Row, contiguous: ir.Value,
                  i: Local, singly: Local, outer: ir.Block, item: ir.Block) -> None:
    """From the current block: when no element is left to take singly and the window of
    keys ``[i - 1, i + WINDOW)`` is nondecreasing (``keys[i - 1]`` ends the sorted
    prefix, so it is its largest), skip the window; else skip its keys up to the first
    one below its predecessor, and take that one singly."""
    fn = b.function
    vector, skip, unordered, single = (fn.append_basic_block(f"ins.{s}")
                                       for s in ("vector", "skip", "unordered", "single"))
    at = i.get()
    fits = b.icmp_signed("<=", b.add(at, i64(WINDOW)), n)
    b.cbranch(b.and_(b.and_(contiguous, fits), b.icmp_signed("==", singly.get(), i64(0))),
              vector, single)
    b.position_at_end(vector)
    vec = ir.VectorType(keys.ty, WINDOW)
    before = b.load(keys.at(b, b.sub(at, i64(1))), typ=vec, align=keys.align)
    window = b.load(keys.at(b, at), typ=vec, align=keys.align)
    ordered = b.bitcast(b.icmp_unsigned("<=", before, window), ir.IntType(WINDOW))
    b.cbranch(b.icmp_unsigned("==", ordered, ir.Constant(ir.IntType(WINDOW), -1)),
              skip, unordered)
    b.position_at_end(unordered)  # skip the keys in order before the first that is not
    mask_type = ir.IntType(WINDOW)
    cttz = b.module.declare_intrinsic("llvm.cttz", [mask_type],
                                      ir.FunctionType(mask_type, [mask_type, ir.IntType(1)]))
    in_order = b.zext(b.call(cttz, [b.not_(ordered), ir.Constant(ir.IntType(1), 1)]), I64)
    i.set(b.add(at, in_order))
    singly.set(i64(1))
    b.branch(single)
    b.position_at_end(skip)
    i.set(b.add(at, i64(WINDOW)))
    b.branch(outer)
    b.position_at_end(single)
    left = singly.get()
    singly.set(b.select(b.icmp_signed(">", left, i64(0)), b.sub(left, i64(1)), left))
    b.branch(item)


def copy_row(b: ir.IRBuilder, n: ir.Value, src: Row, dst: Row,
             convert: Callable[[ir.Value], ir.Value]) -> None:
    """``dst[i] = convert(src[i])`` for ``i < n`` (``dst`` may be ``src``)."""
    with for_range(b, n, "cpy") as i:
        dst.store(b, i, convert(src.load(b, i)))


