"""Recursion on values known only at run time: real calls of functions compiled once.

A kernel inlines the functions it calls: tracing runs them on tracers. When a function
calls itself with arguments of the same kinds as a call of it that is still being traced
(``fib(n - 1)`` inside ``fib(n)``, or ``even(n - 1)`` inside ``odd(n)`` inside
``even(n)``), inlining would never end. That call becomes a ``call`` equation
(:mod:`aotc.ops.calls`) of a function traced once for those kinds: a program of its own,
with the scalar arguments as inputs, whose own recursive calls are ``call`` equations
again. The callee's result type is not known while its body is traced: the first guess
is the lowest type (a Python bool), and the body is traced again with the type it gave
until the two agree (``is_even`` settles at once at bool, ``fib`` of an int at int on
the second trace, as types only climb NumPy's promotion).

Arguments that are Python values take part in the kinds (``ackermann(m - 1, 1)`` and
``ackermann(m - 1, n)`` are two functions) and stay constants inside, so recursion
that ends at build time (a static depth) is still inlined, as before; past a number of
inlined recursive calls (``aotc.autograph.runtime``), Python numbers that never repeat
(``steps + 1``) are made runtime values too.

Arrays whose sizes are known only at run time cross a call by reference (quicksort's
``do_quicksort(a, lo, p - 1)``): the callee reads each with sizes of its own, and a
write into one is the caller's write too. Which arguments a body writes is a guess as
its result type is: none at first, then what the last trace wrote, until it settles.
An array of build-time sizes is still inlined (its recursion ends at build time).

A function returns numbers, None, arrays it is given, arrays it makes, or tuples of
these (:mod:`aotc.ops.calls`). A call's first guess is numbers (a tuple of them when
every ``return`` gives a tuple of one length); when the body fails on that guess, the
first array it is given. An array it makes is padded to an upper bound of its size in
the function's own size symbols; a bound that grows with each trace is pinned to the
sizes of the first array of its rank the function is given.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

import numpy as np

from ..errors import AotcError
from ..ir import DimSource, Program, Var, verify
from ..ops.calls import Argument, Callee, Made, Result, Returned, call_p
from ..ops.containers import is_box
from ..ops.index import raise_if_p
from ..shapes import DimExpr, upper_bound
from .avals import AType
from .bind import broadcast_in_dim, convert
from .tracer import WEAK_TYPES, TraceContext, Tracer, as_tracer, current, dim_value, tracing

#: A call's kinds: ("traced", dtype, weak) or ("value", type, value) per argument.
Kinds = tuple[Hashable, ...]
#: The first guess of a result's type: each trace's only climbs NumPy's promotion.
_LOWEST = AType(np.dtype(bool), ())
#: Traces of a callee's body, at most, before its result type must have settled.
_RETRACES = 6
_RETURNS = ("'{name}' calls itself on runtime values: it is compiled as a function, "
            "and a compiled recursive function returns numbers, arrays, None or tuples "
            "of these")


def kinds(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Kinds | None:
    """What a call is specialized on, or None when it cannot be a compiled call: an
    array of build-time sizes (inlined), two arguments that are views of one array (a
    write through one is seen in the other), or a Python value that is not hashable."""
    out: list[Hashable] = []
    arrays: list[int] = []
    for name, value in [*enumerate(args), *sorted(kwargs.items())]:
        if is_box(value):  # a list, set or dict the kernel grows: its handle crosses
            out.append((name, "box", value.described(), repr(value.missing))
                       if _handle(value) is not None else (name, "recording", id(value)))
            continue
        if isinstance(value, Tracer):
            if value.ndim:
                if None not in _static_sizes(value):
                    return None
                arrays.append(_root(value))
                out.append((name, "array", value.dtype.str, _static_sizes(value)))
                continue
            out.append((name, "traced", value.dtype.str, value.weak))
            continue
        try:
            hash(value)
        except TypeError:  # (an ndarray among them)
            return None
        out.append((name, "value", type(value).__name__, value))
    return tuple(out) if len(set(arrays)) == len(arrays) else None


def takes_arrays(spec: Kinds) -> bool:
    """Whether a call of these kinds passes an array."""
    return any(isinstance(k, tuple) and k[1] == "array" for k in spec)


def uncompiled(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    """Why :func:`kinds` found no compiled call for these arguments, in words."""
    arrays = [v for v in (*args, *kwargs.values()) if isinstance(v, Tracer) and v.ndim]
    roots = [_root(v) for v in arrays]
    if len(set(roots)) < len(roots):
        return "two views of one array (a write through one is seen through the other)"
    if any(None not in _static_sizes(v) for v in arrays):
        return "arrays of sizes known at build time, past the depth they are inlined to"
    return "a value a compiled function cannot take (a dict, a set, a list of lists)"


def _root(array: Tracer) -> int:
    """The identity of the array whose bytes ``array`` is (its base, for a view)."""
    return id(array.base if array.base is not None else array)


def _static_sizes(array: Tracer) -> tuple[int | None, ...]:
    """An array's sizes known at build time (None: known at run time), which a compiled
    function keeps: ``x, y, z = points`` of a (3, n) array still unpacks there."""
    return tuple(d.value if d.is_const else None for d in array.aval.shape)


def promoted(args: tuple[Any, ...], kwargs: dict[str, Any]
             ) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The arguments with Python numbers made runtime values (weak, as Python numbers
    are in NumPy's promotion): a recursion whose Python values never repeat."""
    def runtime(v: Any) -> Any:
        return as_tracer(v) if isinstance(v, WEAK_TYPES) else v
    return tuple(runtime(a) for a in args), {k: runtime(v) for k, v in kwargs.items()}


def call(fn: Callable[..., Any], converted: Callable[..., Any], key: Hashable,
         args: tuple[Any, ...], kwargs: dict[str, Any], calling: list[Any],
         tuple_length: int | None = None) -> Any:
    """``fn(*args, **kwargs)`` as a ``call`` of its compiled function for ``key``
    (traced now if it is new; ``calling``: the stack of calls being traced;
    ``tuple_length``: how many items each of its ``return`` statements gives, if they
    agree). What the function writes into an array argument is written into that
    argument here."""
    ctx = current()
    table = ctx.root.callees
    callee = table.get(key)
    if callee is None:
        callee = _traced(fn, converted, key, args, kwargs, calling, table, tuple_length)
    elif callee.program is None:
        callee.called_early = True
    operands = _operands(args, kwargs)
    writes = {"written": callee.written} if callee.written else {}
    outs = ctx.emit(call_p, [o.atom for o in operands], callee=callee, **writes)
    results = [Tracer(v, weak=w and not v.type.ndim)
               for v, w in zip(outs, callee.weak, strict=False)]
    for k, var in zip(callee.written, outs[len(results):], strict=True):
        operands[k][...] = Tracer(var)
    return _rebuilt(callee.returned, results, operands)


def _operands(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Tracer]:
    """The runtime values a call passes: its tracers, and each box's handle."""
    given = (*args, *(kwargs[k] for k in sorted(kwargs)))
    values = [_handle(v) if is_box(v) else v for v in given]
    return [v for v in values if isinstance(v, Tracer)]


def _handle(box: Any) -> Tracer | None:
    """A box's handle; None for the stand-in that records what a body puts in one."""
    leaves = box.tree_flatten()[0]
    return leaves[0] if leaves else None


def _rebuilt(returned: Returned, results: list[Tracer], operands: list[Tracer]) -> Any:
    """The Python value a call gives back (see :attr:`Callee.returned`)."""
    if isinstance(returned, tuple):
        return tuple(_rebuilt(r, results, operands) for r in returned)
    if isinstance(returned, Result):
        return results[returned.index]
    if isinstance(returned, Made):  # the front of the buffer the call filled
        return results[returned.index][tuple(slice(None, results[k]) for k in returned.sizes)]
    return operands[returned.index] if isinstance(returned, Argument) else None


def _traced(fn: Callable[..., Any], converted: Callable[..., Any], key: Hashable,
            args: tuple[Any, ...], kwargs: dict[str, Any], calling: list[Any],
            table: dict[Hashable, Callee], tuple_length: int | None) -> Callee:
    ctx = current()
    count = tuple_length or 1
    callee = Callee(f"{fn.__name__}${len(table)}", (_LOWEST,) * count, (True,) * count)
    if tuple_length is not None:
        callee.returned = tuple(Result(k) for k in range(count))
    table[key] = callee  # calls inside the body find it (with the guessed result)
    for _ in range(_RETRACES):
        try:
            program, found = _body(callee, converted, key, args, kwargs, calling)
        except Exception as err:  # (a number guessed where the body needs an array: any)
            if not (callee.called_early and _array_guess(callee, args, kwargs)):
                note = _RETURNS.format(name=fn.__name__)
                if isinstance(err, AotcError) and callee.called_early \
                        and note not in f"{err} {err.hint}":  # the guess failed?
                    err.hint = "; ".join(filter(None, [err.hint, note]))
                raise
        else:
            if found == _guess(callee):
                callee.program = program
                return callee
            if _only_bounds_differ(found, _guess(callee)):
                callee.pinned = True  # (each trace's bound was in terms of the last's)
            callee.results, callee.weak, callee.written, callee.returned = found
        # Functions first traced inside this body called it with the old guess: they
        # are traced again, inside the next trace of the body.
        for later in list(table)[list(table).index(key) + 1:]:
            del table[later]
    raise ctx.error(f"'{fn.__name__}' calls itself on runtime values, and the type of its "
                    "result changes with each trace of its body",
                    hint="convert what it returns to one dtype (float(...), np.int64(...))")


def _array_guess(callee: Callee, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """When the body failed on its calls' first guess (numbers), the next: the first
    array it is given (``return arr``, as in-place sorts write it). False when there
    is none, or that guess was made already."""
    operands = _operands(args, kwargs)
    first = next((k for k, a in enumerate(operands) if a.ndim), None)
    if first is None or isinstance(callee.returned, Argument):
        return False
    callee.results, callee.weak, callee.returned = (_LOWEST,), (True,), Argument(first)
    return True


#: What a trace of a callee's body found: its scalar results' types, whether each is
#: weak, the array arguments it writes, and how its Python value is rebuilt.
Found = tuple[tuple[AType, ...], tuple[bool, ...], tuple[int, ...], Returned]


def _only_bounds_differ(found: Found, guess: Found) -> bool:
    """Whether two traces differ only in the bounds of the arrays the function makes: a
    bound that grows with each trace (``np.concatenate`` of two recursive results)."""
    return found[1:] == guess[1:] and [t.dtype for t in found[0]] == [t.dtype for t in guess[0]]


def _guess(callee: Callee) -> Found:
    return callee.results, callee.weak, callee.written, callee.returned


def _returned(value: Any, arrays: dict[int, Tracer], name: str, pinned: bool
              ) -> tuple[Returned, list[Tracer]]:
    """How a body's Python result is rebuilt at a call, and the program's outputs for
    it: its numbers (a placeholder when there are none) and each array it makes, padded
    to its bound, with its sizes (see :mod:`aotc.ops.calls`)."""
    outs: list[Tracer] = []

    def walk(v: Any) -> Returned:
        if v is None:
            return None
        if isinstance(v, (tuple, list)):
            return tuple(walk(item) for item in v)
        found = next((k for k, a in arrays.items() if v is a), None)
        if found is not None:
            return Argument(found)
        if isinstance(v, (*WEAK_TYPES, np.generic)):
            v = as_tracer(v)
        if not isinstance(v, Tracer):
            raise current().error(_RETURNS.format(name=name),
                                  hint="return numbers or arrays, or tuples of these")
        if v.ndim:
            outs.append(_padded(v, name, arrays, pinned))
            array = len(outs) - 1
            outs.extend(dim_value(d) for d in v.aval.shape)
            return Made(array, tuple(range(array + 1, len(outs))))
        outs.append(v)
        return Result(len(outs) - 1)

    returned = walk(value)
    return returned, outs or [as_tracer(False)]


def _padded(array: Tracer, name: str, arrays: dict[int, Tracer], pinned: bool) -> Tracer:
    """``array`` in the front of a buffer of an upper bound of its sizes, in the
    function's own size symbols (the caller plans that buffer). The bound is found from
    the sizes the body computes; when that bound grows with each trace (it is in terms of
    the recursive calls' bounds) or none is found, it is ``pinned`` to the sizes of the
    first array the function is given of the same rank, and a larger result raises
    ValueError."""
    ctx = current()
    uppers = ctx.uppers()
    bounds: list[DimExpr | None] = [upper_bound(d, uppers) for d in array.aval.shape]
    given = next((a for a in arrays.values() if a.ndim == array.ndim), None)
    pinned = pinned or None in bounds  # (no bound found: the same pin)
    if pinned and given is not None:
        bounds = list(given.aval.shape)
        for d, bound in zip(array.aval.shape, given.aval.shape, strict=True):
            too_big = dim_value(d) > dim_value(bound)
            ctx.emit(raise_if_p, [as_tracer(too_big).atom], error="ValueError",
                     message=f"'{name}' returns an array larger than the first array it "
                             "is given: a compiled recursive function's array result is "
                             "bounded by that size")
    if None in bounds or (pinned and given is None):
        raise ctx.error(f"'{name}' calls itself on runtime values, and returns an array "
                        "whose size has no bound in the sizes of the arrays it is given",
                        hint="make the array from the sizes of the arrays it is given")
    zero = convert(as_tracer(0), array.dtype)
    padded = broadcast_in_dim(zero, tuple(b for b in bounds if b is not None), ())
    padded[tuple(slice(0, dim_value(d)) for d in array.aval.shape)] = array
    return padded


def _body(callee: Callee, converted: Callable[..., Any], key: Hashable,
          args: tuple[Any, ...], kwargs: dict[str, Any], calling: list[Any]
          ) -> tuple[Program, Found]:
    """One trace of the callee's body, its arguments made its program's inputs (an
    array's runtime sizes symbols of its own, read from the array it is given)."""
    outer = current()
    here = TraceContext(outer.kernel, function=True, callees=outer.root.callees,
                        stretches=outer.root.stretches)
    inputs: list[Var] = []
    sources: list[DimSource] = []
    arrays: dict[int, Tracer] = {}
    name = callee.name.split("$")[0]

    def input_for(value: Any) -> Any:
        if is_box(value) and _handle(value) is not None:  # (through a handle of its own)
            leaves, meta = value.tree_flatten()
            return type(value).tree_unflatten(meta, [input_for(leaves[0])])
        if not isinstance(value, Tracer):
            return value
        shape = tuple(DimExpr.const(size) if size is not None
                      else DimExpr.sym(f"{callee.name}.{len(inputs)}.{axis}")
                      for axis, size in enumerate(_static_sizes(value)))
        sources.extend(DimSource(str(d), len(inputs), axis) for axis, d in enumerate(shape)
                       if not d.is_const)
        var = Var(AType(value.dtype, shape))
        inputs.append(var)
        here.defined.add(var)
        tracer = Tracer(var, weak=value.weak)
        tracer.context = here  # (made before its trace starts)
        if value.ndim:
            tracer.list_like = value.list_like
            arrays[len(inputs) - 1] = tracer
        return tracer

    new_args = tuple(input_for(a) for a in args)
    new_kwargs = {k: input_for(kwargs[k]) for k in sorted(kwargs)}
    callee.sizes = {src.symbol: (src.index, src.axis or 0) for src in sources}
    calling.append(key)
    try:
        with tracing(here), np.errstate(all="ignore"):
            value = converted(*new_args, **new_kwargs)
            returned, outs = _returned(value, arrays, name, callee.pinned)
            writebacks = tuple((k, t.atom) for k, t in arrays.items() if t.version)
            for k, t in arrays.items():
                if t.atom.type != inputs[k].type:
                    raise here.error(
                        f"'{name}' calls itself on runtime values, and changes the size or "
                        "dtype of an array it is given (a list it appends to)",
                        hint="write into the array it is given, or make the recursion a "
                             "loop with an explicit stack")
    finally:
        calling.pop()
    program = Program(tuple(inputs), tuple(here.eqns), tuple(o.atom for o in outs),
                      tuple(sources), name=callee.name, writebacks=writebacks)
    verify(program)
    types = tuple(AType(o.dtype, tuple(o.aval.shape)) for o in outs)
    return program, (types, tuple(o.weak for o in outs), tuple(k for k, _ in writebacks),
                     returned)
