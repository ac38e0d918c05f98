"""What converted kernels call: the control-flow statements and Python builtins.

Each statement decides at trace time, as TensorFlow's AutoGraph does: on build-time
values it runs as ordinary Python (a loop unrolls, up to :data:`UNROLL_LIMIT`
iterations); on traced values it becomes a structured primitive from ``aotc.lax``.
"""

from __future__ import annotations

import builtins
import os
import sysconfig
import types
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import lax
from ..numpy_api import CREATION
from ..trace import Tracer, current

#: Loops with build-time bounds unroll up to this many iterations; longer ones become
#: structured loops, so a build never blows up silently.
UNROLL_LIMIT = 64


class _Undefined:
    """A variable that has no value yet where a converted statement starts."""

    def __repr__(self) -> str:
        return "<undefined>"


UNDEFINED = _Undefined()


def maybe(read: Callable[[], Any]) -> Any:
    """The value of a variable, or UNDEFINED when it is not assigned yet."""
    try:
        return read()
    except NameError:
        return UNDEFINED


def _traced(*values: Any) -> bool:
    return any(isinstance(v, Tracer) for v in values)


def _require_defined(state: tuple[Any, ...], names: tuple[str, ...], what: str) -> None:
    for value, name in zip(state, names, strict=True):
        if value is UNDEFINED:
            raise current().error(
                f"variable '{name}' is first assigned inside {what} that depends on runtime "
                "values, so it has no value on the paths that skip it",
                hint=f"give '{name}' a value before the {what.split()[-1]}",
            )


def for_range(body: Callable[..., tuple[Any, ...]], state: tuple[Any, ...],
              names: tuple[str, ...], *bounds: Any) -> tuple[Any, ...]:
    """``for i in range(*bounds)`` with ``state = body(i, state)``."""
    start, stop, step = (0, bounds[0], 1) if len(bounds) == 1 else (*bounds, 1)[:3]
    if isinstance(step, Tracer):
        raise current().error("a loop step that is a runtime value cannot be compiled",
                              hint="use a build-time integer step")
    if step == 0:
        raise current().error("range() arg 3 must not be zero")
    if not _traced(start, stop):
        count = len(range(int(start), int(stop), int(step)))
        if count <= UNROLL_LIMIT:
            for i in range(int(start), int(stop), int(step)):
                state = body(i, state)
            return state
    _require_defined(state, names, "a loop")
    if step < 0:  # count down: iterate k = 0..n-1 with i = start + k * step
        n = _trip_count(start, stop, step)
        return lax.fori_loop(0, n, lambda k, s: body(start + k * step, s), state)
    if step != 1:
        n = _trip_count(start, stop, step)
        return lax.fori_loop(0, n, lambda k, s: body(start + k * step, s), state)
    return lax.fori_loop(start, stop, body, state)


def _trip_count(start: Any, stop: Any, step: int) -> Any:
    """``len(range(start, stop, step))`` on traced integers."""
    span = np.subtract(stop, start) if step > 0 else np.subtract(start, stop)
    size = abs(step)
    return np.maximum(np.floor_divide(np.add(span, size - 1), size), 0)


def for_iter(body: Callable[..., tuple[Any, ...]], state: tuple[Any, ...],
             names: tuple[str, ...], iterable: Any, enumerated: bool) -> tuple[Any, ...]:
    """``for x in iterable`` (or ``for i, x in enumerate(iterable)``)."""
    if isinstance(iterable, Tracer):
        if iterable.ndim == 0:
            raise current().error("iteration over a 0-d array")
        n = iterable.shape[0]

        def row(i: Any, s: tuple[Any, ...]) -> tuple[Any, ...]:
            item = iterable[i]
            return body((i, item) if enumerated else item, s)
        return for_range(row, state, names, n)
    items = builtins.enumerate(iterable) if enumerated else iterable
    for item in items:
        state = body(item, state)
    return state


def while_stmt(test: Callable[[tuple[Any, ...]], Any], body: Callable[..., tuple[Any, ...]],
               state: tuple[Any, ...], names: tuple[str, ...]) -> tuple[Any, ...]:
    """``while test(state): state = body(state)``."""
    iterations = 0
    while True:
        cond = test(state)
        if isinstance(cond, Tracer):
            break
        if not cond:
            return state
        state = body(state)
        iterations += 1
        if iterations > 10 * UNROLL_LIMIT:
            raise current().error(
                f"a while loop on build-time values ran {iterations} times while tracing",
                hint="make its condition depend on a runtime value, or use lax.fori_loop",
            )
    _require_defined(state, names, "a while loop")
    return lax.while_loop(lambda s: _as_bool(test(s)), body, state)


def _as_bool(value: Any) -> Any:
    if isinstance(value, Tracer):
        if value.ndim != 0:
            raise current().error(
                "the truth value of an array with more than one element is ambiguous",
                hint="use np.any(...) or np.all(...)")
        return lax.convert(value, np.dtype(bool))
    return bool(value)


def if_stmt(test: Any, then: Callable[..., tuple[Any, ...]],
            orelse: Callable[..., tuple[Any, ...]], state: tuple[Any, ...],
            names: tuple[str, ...]) -> tuple[Any, ...]:
    """``if test: then else: orelse``, each taking and returning the state."""
    if not isinstance(test, Tracer):
        return then(state) if test else orelse(state)
    # Variables without a value yet are fine if both branches assign them.
    known = [i for i, v in enumerate(state) if v is not UNDEFINED]

    def branch(fn: Callable[..., tuple[Any, ...]]) -> Callable[..., tuple[Any, ...]]:
        def run(*values: Any) -> tuple[Any, ...]:
            full = list(state)
            for i, v in zip(known, values, strict=True):
                full[i] = v
            out = fn(tuple(full))
            for value, name in zip(out, names, strict=True):
                if value is UNDEFINED:
                    raise current().error(
                        f"variable '{name}' is assigned in only one branch of an if on a "
                        "runtime value, so it has no value after the other",
                        hint=f"give '{name}' a value before the if, or in both branches")
            return out
        return run

    return lax.cond(_as_bool(test), branch(then), branch(orelse), *(state[i] for i in known))


# -- Python builtins on traced scalars ------------------------------------------------------

def _min(*args: Any, **kwargs: Any) -> Any:
    if len(args) < 2 or kwargs or not _traced(*args):
        return builtins.min(*args, **kwargs)
    best = args[0]
    for a in args[1:]:  # Python's rule: keep the first unless a later one is smaller
        best = np.where(np.less(a, best), a, best)
    return best


def _max(*args: Any, **kwargs: Any) -> Any:
    if len(args) < 2 or kwargs or not _traced(*args):
        return builtins.max(*args, **kwargs)
    best = args[0]
    for a in args[1:]:
        best = np.where(np.greater(a, best), a, best)
    return best


def _scalar_conversion(python: type, dtype: Any) -> Callable[..., Any]:
    def convert(*args: Any) -> Any:
        if len(args) == 1 and isinstance(args[0], Tracer):
            x = args[0]
            if x.ndim != 0:
                raise current().error(f"{python.__name__}() of an array with more than "
                                      "one element")
            if python is bool:
                return np.not_equal(x, 0)
            if python is int and x.dtype.kind == "f":
                x = np.trunc(x)  # type: ignore[assignment]  # a Tracer, by __array_ufunc__
            out = lax.convert(x, np.dtype(dtype))
            out.weak = True  # a Python number, as the builtin returns
            return out
        return python(*args)
    return convert


def _round(number: Any, ndigits: Any = None) -> Any:
    if not isinstance(number, Tracer):
        return builtins.round(number, ndigits) if ndigits is not None else builtins.round(number)
    if ndigits is None:
        return _scalar_conversion(int, np.int64)(np.rint(number))
    return np.round(number, ndigits)


def _len(obj: Any) -> Any:
    if isinstance(obj, Tracer):
        return obj.shape[0]
    return builtins.len(obj)


#: Builtins replaced inside converted kernels; each falls back to Python's own.
BUILTINS: dict[Callable[..., Any], Callable[..., Any]] = {
    builtins.min: _min, builtins.max: _max, builtins.float: _scalar_conversion(float, np.float64),
    builtins.int: _scalar_conversion(int, np.int64),
    builtins.bool: _scalar_conversion(bool, np.bool_), builtins.round: _round,
    builtins.len: _len,
}


# -- every call a converted kernel makes ----------------------------------------------------

#: Converts a helper function before it is called (set by :mod:`aotc.autograph`).
converter: Callable[[Callable[..., Any]], Callable[..., Any]] | None = None

#: Functions the kernel may call under any name, and what runs instead while tracing:
#: NumPy's creation functions (no array argument reaches ``__array_function__``) and the
#: builtins above.
TRACED: dict[Callable[..., Any], Callable[..., Any]] = {
    **CREATION, **BUILTINS,
}
_LIBRARY_DIRS = tuple(os.path.realpath(p) for p in {
    sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")})


def _is_random(fn: Any) -> bool:
    owner = getattr(fn, "__self__", None)
    return str(getattr(fn, "__module__", None) or "").startswith("numpy.random") or isinstance(
        owner, (np.random.RandomState, np.random.Generator, np.random.BitGenerator))


def _is_user_code(fn: types.FunctionType) -> bool:
    """A Python function of the user's (not the standard library's or an installed
    package's): converted like the kernel when it is called."""
    if str(fn.__module__).split(".")[0] in ("aotc", "numpy"):
        return False
    path = os.path.realpath(fn.__code__.co_filename)
    return not path.startswith(_LIBRARY_DIRS) and os.path.exists(path)


def call(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` as written in a converted kernel (AutoGraph's converted
    call): a traced stand-in where :data:`TRACED` has one, an error for ``numpy.random``,
    the user's own functions converted first."""
    try:
        stand_in = TRACED.get(fn)
    except TypeError:  # an unhashable callable
        stand_in = None
    if stand_in is not None:
        return stand_in(*args, **kwargs)
    if _is_random(fn):
        raise current().error(
            "numpy.random is not supported in kernels: a compiled kernel has no random state",
            hint="draw the random numbers outside and pass them in as an array argument")
    if isinstance(fn, types.FunctionType) and converter is not None and _is_user_code(fn):
        fn = converter(fn)
    return fn(*args, **kwargs)


# -- helpers for lowered jumps and statements left as Python ------------------------------

def not_any(*flags: Any) -> Any:
    """``not (a or b ...)`` on Python or traced bools."""
    if not _traced(*flags):
        return not builtins.any(flags)
    result = np.logical_not(flags[0])
    for f in flags[1:]:
        result = np.logical_and(result, np.logical_not(f))
    return result


def and_not(test: Any, flag: Any) -> Any:
    """``test and not flag`` for a while loop that may break."""
    if not _traced(test, flag):
        return bool(test) and not flag
    return np.logical_and(_as_bool(test), np.logical_not(flag))


_RETURN_HINT = ("assign the result to a variable and use break, then return after the "
                "loop (or use np.where for a value chosen per element)")


def static_iterable(iterable: Any, what: str) -> Any:
    """The iterable of a loop left as Python (it contains return)."""
    if isinstance(iterable, Tracer):
        raise current().error(f"{what} cannot iterate over a runtime value",
                              hint=_RETURN_HINT)
    return iterable


_IF_RETURN_HINT = ("use np.where(cond, a, b), or assign the value in both branches and "
                   "return it after the if")


def static_test(test: Any, what: str) -> Any:
    """The test of a while/if left as Python (it contains return)."""
    if isinstance(test, Tracer):
        hint = _IF_RETURN_HINT if what.startswith("an if") else _RETURN_HINT
        raise current().error(f"{what} cannot depend on a runtime value", hint=hint)
    return test


def range_(*args: Any) -> Any:
    """``range`` that explains runtime bounds in loops that must stay Python."""
    if _traced(*args):
        raise current().error("range() over runtime values in a loop containing return",
                              hint=_RETURN_HINT)
    return builtins.range(*args)
