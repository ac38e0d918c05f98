"""Sequences whose length or items are only known at run time, for loops and
comprehensions: rows of an array, ``range`` with traced bounds, and what ``zip``,
``enumerate``, ``reversed``, ``np.ndindex`` and ``np.ndenumerate`` make of them.

A :class:`RuntimeSeq` is a length and a function giving item ``i``. A ``for`` loop over
one runs ``item(i)`` for each ``i`` (unrolled when the length is a small build-time
number, else as a runtime loop); a comprehension over one stacks its values into an
array (``lax.scan``). On build-time iterables every stand-in here is Python's own.
"""

from __future__ import annotations

import builtins
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import lax
from ..numpy_api.masks import MaskedValue
from ..numpy_api.pylists import list_position
from ..numpy_api.pynumbers import marked
from ..ops.containers import is_box
from ..ops.index import raise_if_p
from ..shapes import SYMBOL_LIMIT, DimExpr, as_dim, ceil_div, from_arguments, relu
from ..tracing.tracer import DISPATCH, Tracer, as_tracer, current
from .runtime_generators import RuntimeGenerator

#: Loops and comprehensions over build-time lengths unroll up to this many items.
UNROLL_LIMIT = 64


@dataclass(frozen=True)
class RuntimeSeq:
    """``length`` items (an int, or a traced integer), item ``i`` is ``item(i)``."""

    length: Any
    item: Callable[[Any], Any]

    def static_length(self) -> int | None:
        if isinstance(self.length, Tracer):
            dim = self.length.dim
            return dim.value if dim is not None and dim.is_const else None
        return int(self.length)

    def unrolled(self) -> list[Any] | None:
        """The items, when there are few enough to unroll."""
        n = self.static_length()
        return [self.item(i) for i in range(n)] if n is not None and n <= UNROLL_LIMIT else None

    def __iter__(self) -> Any:
        """Python iterating it while the kernel is built (``list(seq)``, a builtin the
        kernel calls): its items when few, else an error, never the endless walk that
        ``__getitem__`` alone would give (its index check runs only at run time)."""
        items = self.unrolled()
        if items is None:
            raise current().error(
                "iterating a sequence whose length is only known at run time, outside a "
                "for loop", hint="write a for loop over it, or make an array of it "
                "(np.array([f(v) for v in seq]))")
        return iter(items)

    def __getitem__(self, index: Any) -> Any:
        """``seq[i]`` as a list's: negative from the end, IndexError outside."""
        if isinstance(index, slice):
            raise current().error("slicing a sequence whose length is only known at run "
                                  "time", hint="index it item by item")
        n = self.static_length()
        if n is not None and not isinstance(index, Tracer):
            if not -n <= index < n:
                raise current().error("list index out of range")
            return self.item(index % n)
        return self.item(list_position(index, self.length, "list index out of range"))

    def stacked(self, fn: Callable[[Any], Any]) -> Any:
        """``np.array([fn(item) for item in self])``, the loop running at run time."""
        def step(i: Any, _: Any) -> Any:
            return i + 1, fn(self.item(i))

        _, ys = lax.scan(step, as_tracer(np.int64(0)), None, length=self.length)
        return ys


def sequence(value: Any) -> Any:
    """``value`` as a :class:`RuntimeSeq` when iterating it needs the runtime (an array,
    whose rows are its items), else itself."""
    if isinstance(value, RuntimeGenerator):
        value.refuse_advanced()
        value = value.laid_out()
    if isinstance(value, MaskedValue):  # for v in x[x > 0]: the kept items, laid out
        value = value.values()
    if is_box(value):  # a list, set or dict grown at run time
        return value.iterate()
    if isinstance(value, Tracer):
        if value.ndim == 0:
            raise current().error("iteration over a 0-d array")
        return RuntimeSeq(value.shape[0], value.__getitem__)
    return value


def _runtime(values: tuple[Any, ...]) -> bool:
    return any(isinstance(v, (Tracer, RuntimeSeq)) for v in values)


def trip_count(start: Any, stop: Any, step: int) -> Any:
    """``len(range(start, stop, step))`` on traced integers."""
    span = np.subtract(stop, start) if step > 0 else np.subtract(start, stop)
    size = abs(step)
    return np.maximum(np.floor_divide(np.add(span, size - 1), size), 0)


def range_(*args: Any) -> Any:
    """``range``: Python's own on build-time bounds; a runtime sequence otherwise."""
    if not _runtime(args):
        return builtins.range(*args)
    start, stop, step = (0, args[0], 1) if len(args) == 1 else (*args, 1)[:3]

    def item(k: Any) -> Any:  # a Python int: weak in NumPy's promotion, as uncompiled
        value = as_tracer(np.add(start, np.multiply(k, step)))
        return marked(Tracer(value.atom, value.dim, weak=True))

    if isinstance(step, Tracer) or step == 0:
        return RuntimeSeq(_stepped_trip_count(start, stop, step), item)
    return RuntimeSeq(_sized_trip_count(start, stop, step), item)


def _stepped_trip_count(start: Any, stop: Any, step: Any) -> Any:
    """``len(range(start, stop, step))`` with a step known at run time only (or 0):
    Python's ValueError when it is 0, and no product or sum that can overflow."""
    step = as_tracer(step)
    lax.bind(raise_if_p, as_tracer(np.equal(step, 0)).atom, error="ValueError",
             message="range() arg 3 must not be zero")
    up = np.greater(step, 0)
    span = np.where(up, np.subtract(stop, start), np.subtract(start, stop))
    lowest = np.iinfo(np.int64).min
    magnitude = np.where(np.equal(step, lowest), -(lowest + 1), np.maximum(np.abs(step), 1))
    steps = np.add(np.floor_divide(np.subtract(span, 1), magnitude), 1)
    return np.where(np.greater(span, 0), steps, 0)


def range_length(start: Any, stop: Any, step: int) -> Any:
    """``len(range(start, stop, step))``: an int on build-time bounds, else the runtime
    sequence's trip count (a size when the bounds are sizes)."""
    seq = range_(start, stop, step)
    return len(seq) if isinstance(seq, builtins.range) else seq.length


def _sized_trip_count(start: Any, stop: Any, step: int) -> Any:
    """The trip count as a size (so values made per item can be stacked) when the bounds
    are sizes, else as a runtime integer."""
    bounds: list[DimExpr] = []
    for v in (start, stop):
        dim = v.dim if isinstance(v, Tracer) else v
        if isinstance(dim, (int, np.integer)) and not isinstance(dim, bool):
            dim = as_dim(int(dim))
        if not isinstance(dim, DimExpr):
            return trip_count(start, stop, step)
        bounds.append(dim)
    for v, dim in zip((start, stop), bounds, strict=True):
        if isinstance(v, Tracer) and from_arguments(dim):  # sizes read those clamped
            outside = np.logical_or(np.less(v, -SYMBOL_LIMIT), np.greater(v, SYMBOL_LIMIT))
            lax.bind(raise_if_p, as_tracer(outside).atom, error="OverflowError",
                     message=f"range bounds beyond ±2**61 ({SYMBOL_LIMIT}) are not "
                             "supported in compiled loops")
    lo, hi = bounds
    span = hi - lo if step > 0 else lo - hi
    return lax.dim_value(ceil_div(relu(span), abs(step)))


def repeat_(value: Any, times: Any = None) -> Any:
    """``itertools.repeat(value, times)`` with a runtime ``times``: ``value`` that many
    times (none when it is negative)."""
    if times is None or not isinstance(times, Tracer):
        return itertools.repeat(value) if times is None else itertools.repeat(value, times)
    return RuntimeSeq(_sized_trip_count(0, times, 1), lambda _: value)


def zip_(*iterables: Any, strict: bool = False) -> Any:
    seqs = [sequence(i) for i in iterables]
    if not any(isinstance(s, RuntimeSeq) for s in seqs):
        return builtins.zip(*iterables, strict=strict)
    if not all(isinstance(s, RuntimeSeq) for s in seqs):
        raise current().error("zip of arrays with Python iterables",
                              hint="zip arrays with arrays, or index the arrays in the loop")
    length = seqs[0].length
    for k, s in enumerate(seqs[1:], start=2):
        if strict:  # Python's ValueError (raised here before the items, not after them)
            earlier = "argument 1" if k == 2 else f"arguments 1-{k - 1}"
            for differs, how in ((np.less, "shorter"), (np.greater, "longer")):
                lax.bind(raise_if_p, as_tracer(differs(s.length, length)).atom,
                         error="ValueError",
                         message=f"zip() argument {k} is {how} than {earlier}")
        length = np.minimum(length, s.length)
    return RuntimeSeq(length, lambda i: tuple(s.item(i) for s in seqs))


def enumerate_(iterable: Any, start: int = 0) -> Any:
    seq = sequence(iterable)
    if not isinstance(seq, RuntimeSeq):
        return builtins.enumerate(iterable, start)
    return RuntimeSeq(seq.length, lambda i: (np.add(i, start) if start else i, seq.item(i)))


def reversed_(value: Any) -> Any:
    if isinstance(value, Tracer):
        return value[::-1]
    if isinstance(value, RuntimeSeq):
        return RuntimeSeq(value.length, lambda i: value.item(np.subtract(np.subtract(
            value.length, 1), i)))
    return builtins.reversed(value)


def ndindex(*shape: Any) -> Any:
    """``np.ndindex``: index tuples in C order, over sizes known at build or run time."""
    dims = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], tuple) else shape
    if not _runtime(dims):
        return np.ndindex(*dims)
    return RuntimeSeq(*_c_order(dims))


def _c_order(dims: tuple[Any, ...]) -> tuple[Any, Callable[[Any], tuple[Any, ...]]]:
    """How many index tuples ``dims`` has, and tuple ``k`` of them in C order."""
    def item(k: Any) -> tuple[Any, ...]:
        if not dims:
            return ()
        out = []
        for d in reversed(dims[1:]):
            out.append(np.remainder(k, d))
            k = np.floor_divide(k, d)
        return (k, *reversed(out))

    total: Any = 1
    for d in dims:
        total = np.multiply(total, d)
    return total, item


def ndenumerate(a: Any) -> Any:
    """``np.ndenumerate``: (index tuple, item) pairs of an array in C order."""
    if not isinstance(a, Tracer):
        return np.ndenumerate(a)
    total, index = _c_order(tuple(a.shape))
    return RuntimeSeq(total, lambda k: (index(k), a[index(k)]))


def _as_seq(value: Any) -> RuntimeSeq:
    """An iterable as a runtime sequence (a Python one's items as a constant array)."""
    seq = sequence(value)
    if isinstance(seq, RuntimeSeq):
        return seq
    items = as_tracer(np.asarray(builtins.list(seq)))
    return RuntimeSeq(items.shape[0], items.__getitem__)


def product(*iterables: Any, repeat: int = 1) -> Any:
    """``itertools.product``: the tuples in C order (the last item varies fastest), item
    ``k`` found from ``k`` as ``np.ndindex`` finds it, over runtime lengths."""
    if not _runtime(tuple(sequence(i) for i in iterables)):
        return itertools.product(*iterables, repeat=repeat)
    seqs = [_as_seq(i) for i in iterables] * repeat

    def item(k: Any) -> tuple[Any, ...]:
        picked = []
        for s in reversed(seqs[1:]):
            picked.append(s.item(np.remainder(k, s.length)))
            k = np.floor_divide(k, s.length)
        return (seqs[0].item(k), *reversed(picked))

    total: Any = 1
    for s in seqs:
        total = np.multiply(total, s.length)
    return RuntimeSeq(total, item)


def combinations(iterable: Any, r: int) -> Any:
    """``itertools.combinations(seq, 2)`` over a runtime sequence: pair ``k`` of the
    ``n (n - 1) / 2`` is row ``i`` of the triangle (from a square root, then corrected
    by one either way), and ``j`` past ``i``."""
    seq = sequence(iterable)
    if not isinstance(seq, RuntimeSeq):
        return itertools.combinations(iterable, r)
    if r != 2:
        raise current().error(f"itertools.combinations(..., {r}) of a runtime sequence",
                              hint="pairs (r=2) are compiled; nest loops for more")
    n = seq.length

    def start(i: Any) -> Any:  # the index of pair (i, i + 1)
        return np.floor_divide(np.multiply(i, np.subtract(np.multiply(2, n), np.add(i, 1))),
                               2)

    def item(k: Any) -> tuple[Any, Any]:
        b = np.subtract(np.multiply(2, n), 1)
        root = np.sqrt(np.subtract(np.multiply(b, b), np.multiply(8, k)).astype(np.float64))
        i = np.floor_divide(np.subtract(b, root), 2).astype(np.int64)
        i = np.where(start(np.add(i, 1)) <= k, np.add(i, 1), i)
        i = np.where(start(i) > k, np.subtract(i, 1), i)
        j = np.add(np.subtract(k, start(i)), np.add(i, 1))
        return seq.item(i), seq.item(j)

    count = np.floor_divide(np.multiply(n, np.subtract(n, 1)), 2)
    return RuntimeSeq(np.maximum(count, 0), item)


def length(value: Any) -> Any:
    if isinstance(value, RuntimeSeq):
        return value.length
    if is_box(value):
        return value.len()
    if isinstance(value, Tracer):
        if value.ndim == 0:
            raise current().error("len() of a 0-d array")
        return value.shape[0]
    return builtins.len(value)


def rows_of(stacked: Any) -> Any:
    """Items that are lists or tuples of numbers (``[[j - 6, j] for j in ...]``), which
    a scan stacks field by field, as the rows NumPy makes of them: field ``k`` of item
    ``i`` at ``[i, k]``."""
    if isinstance(stacked, (list, tuple)) and stacked:
        return np.stack([as_tracer(rows_of(s)) for s in stacked], axis=1)
    return stacked


def as_list(value: Any = ()) -> Any:
    """``list(x)``: a runtime sequence becomes its values stacked into an array; a list,
    set or dict grown at run time a new such list of its items."""
    if is_box(value) or hasattr(type(value), "listed"):  # (a box's keys, values, items)
        return value.listed()
    seq = sequence(value)
    if isinstance(seq, RuntimeSeq):
        items = seq.unrolled()
        if items is not None:
            return builtins.list(items)
        stacked = rows_of(seq.stacked(lambda v: v))  # (tuples of zip(x, y) as rows)
        listed = lax.fresh(stacked) if stacked is value else stacked
        listed.list_like = True  # (a list: + concatenates it, .sort() is a list's)
        return listed
    return builtins.list(value)


def as_tuple(value: Any = ()) -> Any:
    """``tuple(x)``: a Python tuple of the items when few and their number is known
    before the kernel runs; else their array, marked as a tuple (an index of it is
    refused: a tuple indexes one axis per item, an array picks rows)."""
    items = as_list(value)
    if not isinstance(items, Tracer):
        return builtins.tuple(items)
    marked = lax.fresh(items) if items is value else items
    marked.tuple_like = True
    return marked


SEQUENCES: dict[Callable[..., Any], Callable[..., Any]] = {
    builtins.range: range_, builtins.zip: zip_, builtins.enumerate: enumerate_,
    builtins.reversed: reversed_, np.ndindex: ndindex, np.ndenumerate: ndenumerate,
    itertools.repeat: repeat_,
    builtins.list: as_list, builtins.tuple: as_tuple,
    itertools.product: product, itertools.combinations: combinations,
}

DISPATCH.runtime_sequence = RuntimeSeq  # np.array_split into a traced number of pieces
