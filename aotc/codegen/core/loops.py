"""Counted loops, loop nests with i64 induction variables, and strided nests.

Loops are emitted in the plain ``for (i = 0; i < n; i++)`` shape; LLVM's loop rotation
turns them into the do-while form its vectorizer wants. A nest is loops in order, the
last one innermost, which is the unit-stride axis of a C-contiguous output; an axis of
constant size 1 gets no loop at all (index 0), so a one-element block is one store.

:func:`strided_nest` is the nest for loops that read and write Views. Their strides are
byte counts, often runtime values (caller arrays), and LLVM's vectorizer cannot prove a
runtime byte stride equals the element size: it versions on "stride == 1 byte", which
never holds. So when some innermost stride is only known at run time, the innermost
loop is emitted twice: a unit-stride copy addressing ``row[i]`` in element units (a GEP
over the element type, which vectorizes), and the generic byte-stride copy; one test
before the nest picks the copy. The generic copy is marked not to vectorize: its only
vector form would be that never-taken version, compiled for nothing (about 15% of the
compile time of the elementwise test catalog).

Loops are also marked not to be runtime-unrolled (``unroll=True`` opts out). On this
pipeline LLVM unrolls every loop with an unknown trip count up to 8 times, with a
remainder loop: the vectorized loops' scalar remainders (fewer iterations than a vector
holds) and the strided fallbacks, which gain nothing from it. It made objects 20-40%
larger and took about a fifth of the test catalogs' LLVM time. The loops that gain are
scalar passes over long rows, such as the radix sort's histogram and scatter; they opt
out. Traced loops from kernel source (:mod:`.runtime`) keep LLVM's defaults, as under
Numba.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from typing import Protocol

from llvmlite import ir

from .builder import KernelBuilder
from .dtypes import I1, I64, i64, mem_type
from .values import Scalar, Value, View, element_ptr, load_memory, store_memory


def static_int(value: ir.Value) -> int | None:
    """The value of an i64 constant, else None."""
    return value.constant if isinstance(value, ir.Constant) and isinstance(
        value.constant, int) else None


def _loop_id(module: ir.Module, vectorize: bool, unroll: bool) -> ir.MDValue | None:
    """A new loop ID (self-referential, as LLVM wants; one per loop: passes rewrite a
    loop's ID as they transform it) with the loop's hints, or None when it has none."""
    hints = []
    if not vectorize:
        hints.append(module.add_metadata([
            ir.MetaDataString(module, "llvm.loop.vectorize.enable"), ir.Constant(I1, 0)]))
    if not unroll:
        hints.append(module.add_metadata([
            ir.MetaDataString(module, "llvm.loop.unroll.runtime.disable")]))
    if not hints:
        return None
    loop_id = module.add_metadata([ir.MetaDataString(module, f"aotc.loop.{len(module.metadata)}"),
                                   *hints])
    loop_id.operands = (loop_id, *hints)
    return loop_id


@contextmanager
def for_range(b: ir.IRBuilder, count: ir.Value, name: str = "i", vectorize: bool = True,
              unroll: bool = False) -> Iterator[ir.Value]:
    """Emit ``for i in range(count)`` around the body of the ``with`` block.

    The body may add blocks of its own (branches, inner loops); the back edge comes from
    wherever the builder is when the body ends, and code after the ``with`` continues
    in the exit block. ``vectorize=False`` keeps LLVM's loop vectorizer off it;
    ``unroll=True`` lets LLVM runtime-unroll it (see the module doc).
    """
    fn = b.function
    pre = b.block
    head = fn.append_basic_block(f"{name}.head")
    body = fn.append_basic_block(f"{name}.body")
    done = fn.append_basic_block(f"{name}.done")
    b.branch(head)
    b.position_at_end(head)
    index = b.phi(I64, name=name)
    index.add_incoming(i64(0), pre)
    b.cbranch(b.icmp_signed("<", index, count), body, done)
    b.position_at_end(body)
    yield index
    step = b.add(index, i64(1), flags=("nuw", "nsw"))
    index.add_incoming(step, b.block)
    back = b.branch(head)
    loop_id = _loop_id(b.module, vectorize, unroll)
    if loop_id is not None:
        back.set_metadata("llvm.loop", loop_id)
    b.position_at_end(done)


@contextmanager
def _maybe_loop(b: ir.IRBuilder, count: ir.Value, name: str, vectorize: bool = True
                ) -> Iterator[ir.Value]:
    if static_int(count) == 1:
        yield i64(0)
    else:
        with for_range(b, count, name, vectorize) as i:
            yield i


@contextmanager
def loop_nest(b: ir.IRBuilder, dims: Sequence[ir.Value], name: str = "i",
              vectorize: bool = True) -> Iterator[list[ir.Value]]:
    """Nested loops over ``dims`` (outermost first); yields the index of each axis.
    ``vectorize=False`` keeps the vectorizer off the innermost loop."""
    with ExitStack() as stack:
        yield [stack.enter_context(_maybe_loop(b, d, f"{name}{k}",
                                               vectorize or k < len(dims) - 1))
               for k, d in enumerate(dims)]


class At:
    """Element access at the current index of a :func:`strided_nest`."""

    def __init__(self, b: KernelBuilder, index: list[ir.Value],
                 address: Callable[[View], ir.Value]) -> None:
        self.b = b
        self.index = index
        self.address = address

    def load(self, value: Value) -> ir.Value:
        """``value`` at the index (a Scalar is the same everywhere)."""
        if isinstance(value, Scalar):
            return value.value
        return load_memory(self.b, self.address(value), value.dtype, value.align)

    def store(self, view: View, value: ir.Value) -> None:
        store_memory(self.b, value, self.address(view), view.dtype, view.align)


def _unit_test(b: KernelBuilder, views: Sequence[View]) -> ir.Value | bool:
    """Whether every innermost stride is the element size (or 0: a broadcast): True or
    False when known statically, else an i1 over the runtime strides."""
    test: ir.Value = ir.Constant(I1, 1)
    runtime = False
    for view in views:
        stride, size = view.strides[-1], view.dtype.itemsize
        known = static_int(stride)
        if known is None:
            test = b.and_(test, b.icmp_signed("==", stride, i64(size)))
            runtime = True
        elif known not in (0, size):
            return False
    return test if runtime else True


def strided_nest(b: KernelBuilder, dims: Sequence[ir.Value], views: Sequence[View],
                 body: Callable[[At], None], name: str = "e") -> None:
    """Emit ``body(at)`` for every index of ``dims`` (outermost first); ``views`` are
    every View the body touches, each with one axis per dim (see the module doc)."""
    views = list(dict.fromkeys(v for v in views if v.ndim))
    if not dims or not views:
        with loop_nest(b, dims, name) as idx:
            body(At(b, idx, lambda v: element_ptr(b, v, idx)))
        return
    unit = _unit_test(b, views)
    if unit is True:
        _unit_nest(b, dims, views, body, name)
    elif unit is False:
        _generic_nest(b, dims, body, name)
    else:
        with b.if_else(unit, likely=True) as (then, otherwise):
            with then:
                _unit_nest(b, dims, views, body, name)
            with otherwise:
                _generic_nest(b, dims, body, name, vectorize=False)


def _generic_nest(b: KernelBuilder, dims: Sequence[ir.Value], body: Callable[[At], None],
                  name: str, vectorize: bool = True) -> None:
    """Byte-stride addressing; ``vectorize=False`` when the unit-stride copy exists."""
    with loop_nest(b, dims, name, vectorize) as idx:
        body(At(b, idx, lambda v: element_ptr(b, v, idx)))


def _unit_nest(b: KernelBuilder, dims: Sequence[ir.Value], views: Sequence[View],
               body: Callable[[At], None], name: str) -> None:
    """The outer loops compute each View's row pointer; the innermost loop indexes it
    in element units (a zero stride stays on the row's element)."""
    with loop_nest(b, dims[:-1], name) as outer:
        rows = {v: element_ptr(b, v, [*outer, i64(0)]) for v in views}
        with _maybe_loop(b, dims[-1], f"{name}.unit") as i:
            def address(v: View) -> ir.Value:
                if not v.ndim:
                    return v.data
                if static_int(v.strides[-1]) == 0:
                    return rows[v]
                return b.gep(rows[v], [i], source_etype=mem_type(v.dtype), inbounds=True)

            body(At(b, [*outer, i], address))


class Slot(Protocol):
    """A value kept in memory across blocks (``rows.Local``, ``nests.Accumulator``)."""

    def get(self) -> ir.Value: ...

    def set(self, value: ir.Value) -> None: ...


def first_not_before(b: KernelBuilder, n: ir.Value, before: Callable[[ir.Value], ir.Value],
                     low: Slot, span: Slot, name: str = "bsearch") -> ir.Value:
    """Binary search of ``[0, n)``: the first index ``i`` with ``before(i)`` false, for a
    ``before`` that is true on a prefix (NumPy's lower bound). ``low`` and ``span`` are
    the caller's slots for the bounds."""
    low.set(i64(0))
    span.set(n)
    fn = b.function
    head, body, done = (fn.append_basic_block(f"{name}.{s}") for s in ("head", "body", "done"))
    b.branch(head)
    b.position_at_end(head)
    b.cbranch(b.icmp_signed(">", span.get(), i64(0)), body, done)
    b.position_at_end(body)
    half = b.ashr(span.get(), i64(1))
    mid = b.add(low.get(), half)
    right = before(mid)
    low.set(b.select(right, b.add(mid, i64(1)), low.get()))
    span.set(b.select(right, b.sub(b.sub(span.get(), half), i64(1)), half))
    b.branch(head)
    b.position_at_end(done)
    return low.get()
