"""Python's builtins on traced values: what ``min``, ``max``, ``sum``, ``int``... mean
there. Each falls back to the builtin itself on build-time values.

Reductions over an array or a runtime sequence reduce along its first axis, as Python's
loop over its rows would (``sum`` keeps the dtype of the items, as repeated ``+`` does,
and adds floats in Python's order, one item after another).
"""

from __future__ import annotations

import builtins
import collections
import random
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import lax
from ..numpy_api import CREATION
from ..numpy_api.complexes import make_complex
from ..numpy_api.functions_base import warn_complex_cast
from ..numpy_api.masks import MaskedValue
from ..numpy_api.pymath import int_of_float
from ..numpy_api.pyrandom import sample
from ..numpy_api.sorting import list_order
from ..ops.containers import is_box
from ..ops.index import raise_if_p
from ..shapes import DimExpr, size
from ..tracing.tracer import Tracer, current, python_number, user_loc
from . import boxing, pyfuncs, stdlib_lists
from .boxes import BoxView
from .keyed import extreme_by_key, lexicographic_extreme, never_best, require_items
from .lists import RuntimeList
from .pyround import round_float
from .sequences import RuntimeSeq, length, sequence
from .tuple_order import tuples_chosen, tuples_compared


def _traced(*values: Any) -> bool:
    return any(isinstance(v, (Tracer, RuntimeSeq)) for v in values)


def _traced_items(iterable: Any) -> bool:
    """Whether an iterable's items are runtime values: it is traced, or a list or tuple
    holding some (``min([x[0], x[-1], 3.0])``)."""
    return _traced(iterable) or (isinstance(iterable, (list, tuple)) and _traced(*iterable))


def _items(value: Any) -> Any:
    """An iterable of traced items as one array, its items along axis 0."""
    if isinstance(value, Tracer) and value.ndim:
        return value  # (already: restacking it would lose that it is a list)
    seq = sequence(value)
    if isinstance(seq, RuntimeSeq):
        items = seq.unrolled()
        return np.stack(items) if items is not None else seq.stacked(lambda v: v)
    if isinstance(value, (list, tuple)):  # Python's items, some of them runtime values
        return CREATION[np.array](list(value))
    return value


def random_sample(population: Any, k: Any, *, counts: Any = None) -> Any:
    """``random.sample``: of a list, tuple or range (CPython refuses arrays: they are no
    sequence), drawn as CPython draws it (:func:`aotc.numpy_api.pyrandom.sample`)."""
    if counts is not None:
        raise current().error("random.sample(counts=...) in a kernel",
                              hint="repeat the items with np.repeat and sample from that")
    if isinstance(population, Tracer) and not population.list_like:
        raise current().error("Population must be a sequence.  For dicts or sets, use "
                              "sorted(d). (Python's TypeError: an array is no sequence)",
                              hint="pass range(n) or a list, or use np.random.choice(x, k, "
                              "replace=False)")
    items = _items(population)
    if not isinstance(items, Tracer):
        items = CREATION[np.array](items)
    return sample(items, k)


def _kept(selection: MaskedValue, fill: Any) -> tuple[Any, tuple[int, ...]]:
    """A selection's values with ``fill`` where they are not kept, and the axes its
    items run along (the mask's)."""
    full, mask = selection.full, selection.mask
    mask = lax.reshape(mask, mask.aval.shape + (DimExpr.const(1),) * (full.ndim - mask.ndim))
    return np.where(mask, full, fill), tuple(range(selection.mask.ndim))


def _count(selection: MaskedValue) -> Any:
    count: Any = np.count_nonzero(selection.mask)
    count.weak = True  # len() is a Python int
    return count


def _first_nan_kept(first: Any, items: Any, largest: bool) -> Any:
    """Python's ``min``/``max`` of float items: each later item replaces the best so far
    only if it compares better, so a NaN wins only as the first item."""
    best = (np.fmax if largest else np.fmin).reduce(items)
    return np.where(np.isnan(first), first, best)


def _with_default(iterable: Any, default: Any, largest: bool) -> Any:
    """``max(items, default=d)`` of runtime items: ``d`` when there are none (the
    extreme of the items after one that never wins, so an empty reduction is defined)."""
    name = "max" if largest else "min"
    if default is None:
        raise current().error(f"{name}(default=None) of runtime items",
                              hint="give a number as the default")
    values = iterable.values() if isinstance(iterable, MaskedValue) else _items(iterable)
    if values.ndim != 1:
        raise current().error(f"{name}(default=...) of items that are not numbers")
    fill = never_best(values.dtype, largest)
    count = values.shape[0]
    padded = np.concatenate([np.full((1,), fill, values.dtype), values])
    best = (np.max if largest else np.min)(padded)
    if values.dtype.kind == "f":
        best = _first_nan_kept(padded[np.minimum(count, 1)], padded, largest)
    return np.where(np.greater(count, 0), best, default)


def _extreme(pick: Callable[[Any, Any], Any], builtin: Callable[..., Any],
             reduce: Callable[..., Any]) -> Callable[..., Any]:
    """``min``/``max``: of several values (Python's rule: keep the first unless a later one
    is better), or of one iterable's items."""
    largest = builtin is builtins.max

    def extreme(*args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and set(kwargs) == {"default"} and (
                isinstance(args[0], MaskedValue) or _traced_items(args[0])):
            return _with_default(args[0], kwargs["default"], largest)
        if len(args) == 1 and set(kwargs) == {"key"} and kwargs["key"] is not None:
            return extreme_by_key(args[0], kwargs["key"], largest)  # (Python's if it can)
        if len(args) == 1 and isinstance(args[0], MaskedValue) and not kwargs:
            selection = args[0]
            empty: Any = np.equal(_count(selection), 0)
            lax.bind(raise_if_p, empty.atom, error="ValueError",
                     message=f"{builtin.__name__}() arg is an empty sequence")
            fill = never_best(selection.full.dtype, largest)
            values, axes = _kept(selection, fill)
            # One more item that never wins: an empty selection raises Python's error
            # above, not the reduction's own about a zero-size array.
            values = lax.reshape(values, (size(values.aval.shape[:len(axes)]),)
                                 + values.aval.shape[len(axes):])
            padded = np.concatenate([np.full((1,) + values.shape[1:], fill, values.dtype),
                                     values])
            if values.ndim != 1 or values.dtype.kind != "f":
                return reduce(padded, axis=0)
            flat_mask = lax.reshape(selection.mask, (size(selection.mask.aval.shape),))
            return _first_nan_kept(values[np.argmax(flat_mask)], padded, largest)
        if len(args) > 1 and not kwargs and all(isinstance(a, tuple) for a in args) \
                and any(_traced_items(a) for a in args):  # field by field, as Python
            best = args[0]
            for a in args[1:]:
                best = tuples_chosen(tuples_compared("Gt" if largest else "Lt", a, best),
                                     a, best)
            return best
        if kwargs or not (_traced(*args) or (len(args) == 1 and _traced_items(args[0]))):
            return builtin(*args, **kwargs)
        if len(args) == 1:
            items = _items(args[0])
            if items.ndim == 2 and items.list_like:  # tuples: compared field by field
                return lexicographic_extreme(items, largest)
            if items.ndim != 1 or items.dtype.kind != "f":
                return reduce(items, axis=0)
            require_items(items.aval.shape[0], builtin.__name__)
            return _first_nan_kept(items[0], items, largest)
        best = args[0]
        for a in args[1:]:
            best = np.where(pick(a, best), a, best)
        return best
    return extreme


def _sum(iterable: Any, start: Any = 0) -> Any:
    if isinstance(iterable, MaskedValue):
        items, axes = _kept(iterable, 0)
    elif not _traced(iterable):
        return builtins.sum(iterable, start)
    else:
        items, axes = _items(iterable), (0,)
    dtype = np.dtype(np.int64) if items.dtype == np.bool_ else items.dtype
    if dtype.kind not in "fc":  # exact: any order gives Python's answer
        return np.add(start, np.add.reduce(items.astype(dtype), axis=axes, dtype=dtype))
    return _added_in_order(items, len(axes), start)


def _added_in_order(items: Any, axes: int, start: Any) -> Any:
    """``start + items[0] + items[1] + ...``, rounded after each ``+`` as Python's
    ``sum`` rounds (NumPy's pairwise order differs in the last bits: a float32 ulp)."""
    rows = items.reshape((-1,) + items.shape[axes:]) if axes != 1 else items
    nothing = np.add.reduce(rows[:0], axis=0, dtype=rows.dtype)  # a row of zeros
    total: Any = np.add(start, nothing)  # start, in the sum's dtype
    return lax.fori_loop(0, rows.shape[0], lambda i, acc: np.add(acc, rows[i]), total)


def _truth(reduce: Callable[..., Any], builtin: Callable[..., Any]) -> Callable[..., Any]:
    def truth(iterable: Any) -> Any:
        if isinstance(iterable, MaskedValue):  # skipped items count as all() wants them
            values, axes = _kept(iterable, builtin is builtins.all)
            return reduce(values, axis=axes)
        if not _traced_items(iterable):
            return builtin(iterable)
        return reduce(_items(iterable), axis=0)
    return truth


def _traced_len(value: Any) -> Any:
    return _count(value) if isinstance(value, MaskedValue) else length(value)


def _scalar_conversion(python: type, dtype: Any) -> Callable[..., Any]:
    def convert(*args: Any) -> Any:
        if len(args) == 1 and isinstance(args[0], Tracer):
            x = args[0]
            if x.ndim != 0:
                raise current().error(f"{python.__name__}() of an array with more than "
                                      "one element")
            if python is bool:
                return np.not_equal(x, 0)
            if x.dtype.kind == "c":
                if python is int:
                    raise current().error("int() of a complex value",
                                          hint="take int(z.real) or int(abs(z))")
                warn_complex_cast(x.dtype, np.dtype(dtype))  # as float(np.complex128(z))
            if python is int and x.dtype.kind == "f":
                x = int_of_float(x)
            out = lax.convert(x, np.dtype(dtype))
            out.weak = True  # a Python number, as the builtin returns
            return out
        return python(*args)
    return convert


def _complex(real: Any = 0, imag: Any = 0) -> Any:
    """``complex(re, im)``: a Python complex (weak complex128), ``re + im*1j`` exactly when
    both are real; a complex argument counts as itself (``complex(1j, 1j) == -1+1j``)."""
    if not _traced(real, imag):
        return builtins.complex(real, imag)
    kinds = [np.dtype(v.dtype if isinstance(v, Tracer) else np.asarray(v).dtype).kind
             for v in (real, imag)]
    if "c" in kinds:
        out = np.add(real, np.multiply(imag, 1j))
    else:
        out = make_complex(real, imag, np.dtype(np.complex128))
    out = lax.convert(out, np.dtype(np.complex128))
    if out.ndim:
        raise current().error("complex() of an array with more than one element")
    out.weak = True  # a Python number, as the builtin returns
    return out


def _round(number: Any, ndigits: Any = None) -> Any:
    if not isinstance(number, Tracer):
        return builtins.round(number, ndigits) if ndigits is not None else builtins.round(number)
    if ndigits is None:
        return _scalar_conversion(int, np.int64)(np.rint(number))
    if number.ndim == 0 and number.dtype.kind == "f":
        return round_float(number, ndigits)
    return np.round(number, ndigits)


def sorted_items(iterable: Any, *, key: Any = None, reverse: bool = False) -> Any:
    """``sorted()`` of runtime values: a list standing for its items, in order (NumPy's
    sort: NaNs last, where Python's comparisons leave NaNs where they are); of a list,
    set or dict grown at run time, a new such list of its items, sorted."""
    if is_box(iterable) or isinstance(iterable, BoxView):
        return boxing.sorted_items(iterable, key, reverse)
    if isinstance(iterable, MaskedValue):  # [v for v in x if v > 0]: its kept items
        iterable = iterable.values()
    if not _traced_items(iterable):
        if key is None:
            return builtins.sorted(iterable, reverse=reverse)
        listed = list(iterable)
        keys = [key(v) for v in listed]  # (they may read runtime values: x[i])
        if not _traced(*keys):
            order = builtins.sorted(range(len(listed)), key=keys.__getitem__, reverse=reverse)
            return [listed[i] for i in order]
        return _sorted_by(CREATION[np.array](listed), CREATION[np.array](keys), reverse)
    items: Any = _items(iterable)
    if key is not None:
        seq = sequence(iterable)
        keys_of: Any = seq.stacked(key) if isinstance(seq, RuntimeSeq) else \
            CREATION[np.array]([key(v) for v in iterable])
        return _sorted_by(items, keys_of, reverse)
    tuples = items.ndim == 2 and items.list_like  # (sorted field by field)
    ordered: Any = items[list_order(items, None, reverse)] if tuples else \
        np.sort(items, axis=0)
    if reverse and not tuples:
        ordered = np.flip(ordered, axis=0)
    ordered.list_like = True
    return ordered


def _sorted_by(items: Any, keys: Any, reverse: bool) -> Any:
    """``sorted(items, key=...)`` given each item's key: the items in the stable order
    of their keys (for ``reverse``, Python's: equal keys keep their order, so not a
    flipped ascending sort). NaN keys go last, as NumPy sorts them."""
    if keys.ndim != 1:
        raise current().error("sorted(key=...): each key must be one number",
                              hint="sort by one number per item (a tuple key needs np.lexsort)")
    ordered: Any = items[list_order(items, keys, reverse)]
    ordered.list_like = True
    return ordered


def _isinstance(value: Any, classes: Any) -> Any:
    """``isinstance`` of a runtime value: of the type the caller's value has (``np.ndarray``
    for an array, ``list`` for a list laid out as one; for a scalar, a Python number's
    type or a NumPy scalar's, which may be told only at run time: a traced bool then)."""
    if isinstance(value, Tracer) and not value.ndim and not value.list_like:
        python = builtins.issubclass(_WEAK_TYPES[value.dtype.kind], classes)
        numpy = builtins.issubclass(value.dtype.type, classes)
        flag = python_number(value)
        if python == numpy or flag is True or flag is False:
            return python if flag is True or python == numpy else numpy
        return flag if python else np.logical_not(flag)
    kind = _runtime_type(value)
    return builtins.isinstance(value, classes) if kind is None else \
        builtins.issubclass(kind, classes)


#: The Python type of a Python number, by its dtype's kind.
_WEAK_TYPES = {"b": bool, "i": int, "u": int, "f": float, "c": complex}


def _runtime_type(value: Any) -> type | None:
    """The type a traced container or array has when the kernel runs; None for
    build-time values."""
    if isinstance(value, MaskedValue):
        return list if value.list_like else np.ndarray
    if is_box(value):
        return {"list": list, "set": set, "dict": dict}.get(value.kind, object)
    if isinstance(value, Tracer):
        return list if value.list_like else np.ndarray
    return list if isinstance(value, RuntimeList) else None


def _print(*args: Any, **kwargs: Any) -> None:
    """``print()`` in a kernel: compiled code has no stdout of the caller's to write to,
    so the call is left out, with a warning at build time that says where (rather than
    printing tracers while building and nothing when the kernel runs)."""
    loc = user_loc()
    where = f"{loc}: " if loc is not None else ""
    warnings.warn(f"{where}print() is left out of the compiled kernel (it prints nothing "
                  "when the kernel runs)", stacklevel=2)


def _divmod(a: Any, b: Any) -> Any:
    """``divmod(a, b)``: Python's floor division and remainder (NumPy's on arrays)."""
    if _traced(a, b):
        return np.floor_divide(a, b), np.remainder(a, b)
    return builtins.divmod(a, b)


class Deque(list):  # type: ignore[type-arg]
    """``collections.deque`` in a kernel: a list with a deque's ends (a list a loop
    changes is a box, whose ``popleft``/``appendleft`` are ``pop(0)``/``insert(0, v)``)."""

    def popleft(self) -> Any:
        return self.pop(0)

    def appendleft(self, value: Any) -> None:
        self.insert(0, value)


def _deque(iterable: Any = (), maxlen: Any = None) -> Deque:
    if maxlen is not None:
        raise current().error("deque(maxlen=...) in a kernel", hint="drop items yourself "
                              "(popleft when len(q) > n)")
    return Deque(iterable)


def _over_boxes(name: str, builtin: Callable[..., Any]) -> Callable[..., Any]:
    """``builtin``, and its reduction of a list, set or dict grown at run time."""
    def call(*args: Any, **kwargs: Any) -> Any:
        if len(args) >= 1 and not kwargs and is_box(args[0]):
            return boxing.reduction(name, *args)
        return builtin(*args, **kwargs)
    return call


#: Builtins replaced inside converted kernels; each falls back to Python's own.
def _next(iterator: Any, *default: Any) -> Any:
    """``next(it)``: of a runtime array or sequence a located error, as it keeps no
    position a compiled kernel could advance (``runtime.call`` gives a generator's first
    item: ``next(i for i, v in enumerate(x) if v > t)``)."""
    if isinstance(iterator, (Tracer, RuntimeSeq)) or is_box(iterator):
        raise current().error("next() of an array or a sequence known only at run time",
                              hint="index it (items[0]), or take next() of a generator "
                                   "expression over it")
    return builtins.next(iterator, *default)


def _dict(*args: Any, **kwargs: Any) -> Any:
    """``dict(pairs)`` of pairs known only at run time: a dict grown at run time (the
    loop :func:`.stdlib_lists.dict_from_pairs`); ``dict(d)`` of one, its copy."""
    if len(args) == 1 and not kwargs:
        given = args[0]
        if is_box(given) and given.kind == "dict":
            return given.copy()
        if is_box(given) or isinstance(sequence(given), RuntimeSeq):
            return pyfuncs.converted_call(stdlib_lists.dict_from_pairs, given)
    return builtins.dict(*args, **kwargs)


BUILTINS: dict[Callable[..., Any], Callable[..., Any]] = {
    builtins.min: _extreme(np.less, builtins.min, np.min),
    builtins.max: _extreme(np.greater, builtins.max, np.max),
    builtins.sum: _sum,
    builtins.any: _truth(np.any, builtins.any), builtins.all: _truth(np.all, builtins.all),
    builtins.float: _scalar_conversion(float, np.float64),
    builtins.int: _scalar_conversion(int, np.int64),
    builtins.bool: _scalar_conversion(bool, np.bool_), builtins.round: _round,
    builtins.complex: _complex,
    builtins.len: _traced_len, builtins.divmod: _divmod, builtins.sorted: sorted_items,
    builtins.print: _print, random.sample: random_sample, builtins.set: boxing.as_set,
    builtins.isinstance: _isinstance, builtins.dict: _dict, builtins.next: _next,
    collections.deque: _deque,
}
for _name in boxing.REDUCTIONS:
    _builtin = getattr(builtins, _name)
    BUILTINS[_builtin] = _over_boxes(_name, BUILTINS[_builtin])
