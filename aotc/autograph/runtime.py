"""What converted kernels call: statements (:mod:`.statements`), expressions, builtins
and every call.

Each decides at trace time, as TensorFlow's AutoGraph does: on build-time values it
runs as ordinary Python (a loop unrolls, up to :data:`UNROLL_LIMIT` iterations); on
traced values it becomes structured control flow from :mod:`aotc.lax` (``and``/``or``
and conditional expressions are conditionals too, so the operand Python would not
evaluate is not evaluated at run time either), or a runtime error (``raise``,
``assert``). :func:`call` is where every call of a converted kernel goes.
"""

from __future__ import annotations

import builtins
import datetime
import functools
import inspect
import operator
import os
import sysconfig
import time
import types
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import lax
from ..ir import Lit
from ..numpy_api import CREATION, pylists
from ..numpy_api.functions import array_ufunc
from ..numpy_api.masks import MaskedValue
from ..numpy_api.pymath import PYCMATH, PYMATH
from ..numpy_api.pyrandom import PYRANDOM, is_python_random
from ..numpy_api.pyrandom import refuse as refuse_pyrandom
from ..numpy_api.random import refuse as refuse_random
from ..ops.containers import is_box
from ..ops.index import clock_p, raise_if_p
from ..tracing import functions
from ..tracing.bodies import UNDEFINED, flatten
from ..tracing.tracer import DISPATCH, MESSAGE_VALUES, Tracer, as_tracer, current
from . import formatted, optional, pyfuncs, stdlib_counting, stdlib_lists, stdlib_math
from .catching import keep_refusals, try_body  # noqa: F401 - converted code calls them
from .closures import LATE
from .comprehensions import (  # noqa: F401
    comprehension,
    map_,
    reduce_,
    truth_value,
    unpack,
    unpack_starred,
)
from .conditionals import if_stmt  # noqa: F401 - converted code calls __aotc__.if_stmt
from .formatted import fstring  # noqa: F401 - converted code calls __aotc__.fstring
from .lists import (  # noqa: F401 - converted code calls __aotc__.append and changed_by
    append,
    changed_by,
    extend,
    pass_back,
)
from .percent import percent  # noqa: F401 - converted code calls __aotc__.percent
from .pybuiltins import BUILTINS
from .pymodules import PYMODULES, source_of
from .runtime_generators import RuntimeGenerator
from .sequences import (  # noqa: F401
    SEQUENCES,
    RuntimeSeq,
    range_length,
    sequence,
)
from .statements import (  # noqa: F401 - converted code calls __aotc__.for_range etc.
    as_bool,
    for_iter,
    for_range,
    maybe,
    traced,
    while_stmt,
)
from .texts import Text
from .tuple_order import is_list_pair, is_tuple_pair, lists_compared, tuples_compared

# -- expressions ---------------------------------------------------------------------------

def and_(*operands: Callable[[], Any]) -> Any:
    """``a and b and ...``: Python's on build-time values; on a traced one, the rest is
    evaluated (at run time) only where it is true."""
    value, rest = operands[0](), operands[1:]
    if not rest:
        return value
    if traced(value):
        return lax.cond(as_bool(value), lambda: and_(*rest), lambda: value)
    return and_(*rest) if value else value


def or_(*operands: Callable[[], Any]) -> Any:
    """``a or b or ...``, as :func:`and_`."""
    value, rest = operands[0](), operands[1:]
    if not rest:
        return value
    if traced(value):
        return lax.cond(as_bool(value), lambda: value, lambda: or_(*rest))
    return value if value else or_(*rest)


def and_test(*operands: Callable[[], Any]) -> Any:
    """``a and b ...`` where only its truth is read (a test): each operand's truth."""
    return and_(*(lambda f=f: as_bool(f()) for f in operands))


def or_test(*operands: Callable[[], Any]) -> Any:
    """``a or b ...`` where only its truth is read, as :func:`and_test`."""
    return or_(*(lambda f=f: as_bool(f()) for f in operands))


def not_(value: Any) -> Any:
    if traced(value):
        return np.logical_not(as_bool(value))
    return not value


def contains(value: Any, container: Any) -> Any:
    """``value in container``: of a tuple, list or set, whether any item equals it (as
    Python tests, with ``==``); of an array, whether any element does (NumPy's
    ``__contains__``)."""
    if isinstance(container, Tracer):
        return np.any(np.equal(container, value))
    if is_box(container):  # grown at run time (autograph.boxes)
        return container.contains(value)
    if isinstance(container, (tuple, list, set, frozenset)) and (
            traced(value) or any(traced(item) for item in container)):
        found: Any = False
        for item in container:
            same = np.equal(value, item)
            found = same if found is False else np.logical_or(found, same)
        return found
    return value in container


_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "Lt": operator.lt, "LtE": operator.le, "Gt": operator.gt, "GtE": operator.ge,
    "Eq": operator.eq, "NotEq": operator.ne, "Is": optional.is_, "IsNot": optional.is_not,
    "In": contains, "NotIn": lambda a, b: not_(contains(a, b)),
}


_ORDERS = frozenset({"Eq", "NotEq", "Lt", "LtE", "Gt", "GtE"})


def compare(left: Callable[[], Any], *links: tuple[str, Callable[[], Any]]) -> Any:
    """``a < b <= c``: ``a < b and b <= c`` with ``b`` evaluated once."""
    op, right_thunk = links[0]
    first, right = left(), right_thunk()
    if is_tuple_pair(first, right) and op not in ("Is", "IsNot", "In", "NotIn") \
            and traced(*flatten((first, right))[0]):
        result = tuples_compared(op, first, right)  # (d, v) < (e, w) of runtime fields
    elif op in _ORDERS and is_list_pair(first, right):
        result = lists_compared(op, first, right)  # a list's ==, not NumPy's elementwise
    else:
        result = _COMPARE[op](first, right)
    if len(links) == 1:
        return result
    return and_(lambda: result, lambda: compare(lambda: right, *links[1:]))


def ifexp(test: Any, body: Callable[[], Any], orelse: Callable[[], Any]) -> Any:
    """``body if test else orelse``; only the taken side is evaluated."""
    if not traced(test):
        return body() if test else orelse()
    state = if_stmt(test, lambda _: (body(),), lambda _: (orelse(),), (UNDEFINED,),
                    ("(a if c else b)",), (body, orelse))  # None on a side too
    return state[0]


make_slice = builtins.slice  # ``a:b:c`` in an index converted code passes to getitem


def getitem(value: Any, index: Any) -> Any:
    """``value[index]``; a Python list or tuple read at a runtime index is read as the
    array ``np.array(value)`` (a lookup table), with Python's IndexError outside it; a
    NumPy array (a module-level table) read at a runtime index is a constant of the
    kernel, as Numba freezes global arrays."""
    if isinstance(value, np.ndarray) and _holds_tracer(index):
        return as_tracer(value)[index]
    if isinstance(value, (list, tuple)) and isinstance(index, Tracer) and index.ndim == 0 \
            and index.dtype.kind in "iu" and value:
        n = len(value)
        outside: Any = np.logical_or(np.less(index, -n), np.greater_equal(index, n))
        lax.bind(raise_if_p, outside.atom, error="IndexError",
                 message=f"{type(value).__name__} index out of range")
        at = np.where(np.less(index, 0), np.add(index, n), index)
        if any(isinstance(v, Tracer) and v.ndim for v in value):
            return _chosen(list(value), [np.equal(at, j) for j in range(n)])
        return CREATION[np.array](value)[at]
    if isinstance(value, dict) and value and isinstance(index, Tracer) and index.ndim == 0 \
            and all(isinstance(k, (int, float, np.number)) for k in value):
        found = [np.equal(index, k) for k in value]
        missing: Any = np.logical_not(functools.reduce(np.logical_or, found))
        lax.bind(raise_if_p, missing.atom, index.atom, index.atom, error="KeyError",
                 message="{lhs}")
        values = list(value.values())
        if any(isinstance(v, Tracer) and v.ndim for v in values):
            return _chosen(values, found)
        first: Any = np.argmax(CREATION[np.array](found))  # numbers: a table, not n conds
        return CREATION[np.array](values)[first]
    if isinstance(value, Tracer) and value.list_like and value.ndim and _one_index(index):
        return pylists.item(value, index)  # a list laid out as an array: a list's error
    if isinstance(value, Tracer) and value.list_like and isinstance(index, slice):
        return pylists.sliced(value, index)  # a new list (+ concatenates it)
    try:
        return value[index]
    except LookupError as err:  # a dict or list of the build read at a build-time key
        if traced(value, index) and isinstance(value, dict):
            raise current().error(
                "a dict the kernel fills as Python runs it, read at a key known only at "
                "run time", hint="a dict grown at run time holds numbers or tuples of "
                "them (not lists or arrays): keep lists in an array indexed by the key, "
                "or fill the dict in a loop over runtime values") from None
        if current().at_top and not traced(value, index):
            _raise_where(True, err, [])  # every call raises it here, as Python would
        raise


def _chosen(items: list[Any], taken: list[Any]) -> Any:
    """The item whose test in ``taken`` holds (the last when none does), chosen as
    ``a if c else b`` chooses: a view of the array the items view at alike windows is
    that view at the chosen start; an array of its own is that array on its path, so
    writes reach it (stacking them, ``np.array(items)``, made a copy, and refused
    arrays of different sizes, which Python's list holds)."""
    if len(items) == 1:
        return items[0]
    return ifexp(taken[0], lambda: items[0], lambda: _chosen(items[1:], taken[1:]))


def _one_index(index: Any) -> bool:
    """An integer index (of a list, not a slice, mask or array of them)."""
    if isinstance(index, Tracer):
        return index.ndim == 0 and index.dtype.kind in "iu"
    return isinstance(index, (int, np.integer)) and not isinstance(index, bool)


def _holds_tracer(index: Any) -> bool:
    parts = index if isinstance(index, tuple) else (index,)
    return any(isinstance(p, Tracer) or (isinstance(p, slice) and any(
        isinstance(b, Tracer) for b in (p.start, p.stop, p.step))) for p in parts)


class KernelRaises(Exception):
    """The kernel raises ``error(message)`` whatever its inputs (a ``raise`` reached on
    build-time values): the compiled kernel does just that."""

    def __init__(self, error: str, message: str) -> None:
        super().__init__(message)
        self.error, self.message = error, message


def _builtin_exception(exc: BaseException) -> tuple[str, str]:
    """The builtin exception class the compiled module raises for ``exc`` (its nearest
    builtin base), and the message (naming the user's class if it is not builtin)."""
    if not isinstance(exc, Exception):
        raise current().error(f"a compiled kernel cannot raise {type(exc).__name__}: it "
                              "stops the interpreter, not the call",
                              hint="raise an Exception subclass such as ValueError")
    name = next(cls.__name__ for cls in type(exc).__mro__
                if getattr(builtins, cls.__name__, None) is cls)
    message = str(exc)
    if type(exc).__name__ != name:
        message = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return name, message


def _raise_where(cond: Any, exc: BaseException, values: list[Tracer]) -> None:
    """Raise ``exc`` where ``cond`` holds; ``values``: the runtime values its message
    shows (see :mod:`aotc.tracing.messages`)."""
    error, message = _builtin_exception(exc)
    if current().at_top and not isinstance(cond, Tracer) and not values:
        raise KernelRaises(error, message)
    atom = cond.atom if isinstance(cond, Tracer) else Lit(True, np.dtype(bool))
    details = [v.atom for v in values] + [Lit(0, np.dtype(np.int64))] * (len(values) == 1)
    lax.bind(raise_if_p, atom, *details, error=error, message=message)


def _message(make: Callable[[], Any], values: list[Tracer]) -> Any:
    """``make()``, with the runtime values it formats into strings noted in ``values``
    (a string formatted before, :class:`formatted.Formatted`, is made into one here)."""
    token = MESSAGE_VALUES.set(values)
    try:
        made = make()
        if isinstance(made, BaseException) and any(
                isinstance(a, formatted.Formatted) for a in made.args):
            made = type(made)(*map(formatted.as_message, made.args))
        return formatted.as_message(made)
    finally:
        MESSAGE_VALUES.reset(token)


def raise_(make: Callable[[], Any]) -> None:
    """``raise E(message)``: the kernel raises ``E(message)`` where it runs (the message
    is made at build time, with up to two runtime values filled in when it is raised)."""
    values: list[Tracer] = []
    exc = _message(make, values)
    if isinstance(exc, type) and issubclass(exc, BaseException):
        exc = exc()
    if not isinstance(exc, BaseException):
        raise TypeError("exceptions must derive from BaseException")
    _raise_where(True, exc, values)


def assert_(test: Callable[[], Any], message: Callable[[], Any] | None) -> None:
    """``assert test, message``: ``AssertionError(message)`` where the test fails."""
    value = test()
    values: list[Tracer] = []
    text = str(_message(message, values)) if message is not None else ""
    if not traced(value):
        if not value:
            _raise_where(True, AssertionError(text), values)
        return
    _raise_where(np.logical_not(as_bool(value)), AssertionError(text), values)


# -- helpers for lowered jumps and returns -------------------------------------------------

def not_any(*flags: Any) -> Any:
    """``not (a or b ...)`` on Python or traced bools."""
    if not traced(*flags):
        return not builtins.any(flags)
    result = np.logical_not(flags[0])
    for f in flags[1:]:
        result = np.logical_and(result, np.logical_not(f))
    return result


def and_not(test: Any, flag: Any) -> Any:
    """``test and not flag`` for a while loop that may break."""
    if not traced(test, flag):
        return bool(test) and not flag
    return np.logical_and(as_bool(test), np.logical_not(flag))


# -- every call a converted kernel makes ----------------------------------------------------

#: Converts a helper function before it is called (set by :mod:`aotc.autograph`).
converter: Callable[[Callable[..., Any]], Callable[..., Any]] | None = None
#: The parameters a function resizes as lists (set by :mod:`aotc.autograph`).
resized_parameters: Callable[[Callable[..., Any]], frozenset[str]] | None = None
#: How many items a function's ``return`` statements give (set by :mod:`aotc.autograph`).
returned_tuple_length: Callable[[Callable[..., Any]], int | None] | None = None

#: Functions the kernel may call under any name, and what runs instead while tracing:
#: NumPy's creation functions (no array argument reaches ``__array_function__``),
#: Python's builtins, the sequences loops and comprehensions walk, ``math`` and ``random``.
def _clock() -> Tracer:
    """``time.time()`` read where the kernel runs (:data:`aotc.ops.index.clock_p`)."""
    return lax.bind1(clock_p)


#: The clocks a kernel reads at run time: their differences are elapsed seconds.
_CLOCKS = {time.time: _clock, time.perf_counter: _clock, time.monotonic: _clock}
TRACED: dict[Callable[..., Any], Callable[..., Any]] = {**CREATION, **BUILTINS, **SEQUENCES,
                                                       **PYMATH, **PYCMATH, **PYRANDOM, **_CLOCKS,
                                                       **formatted.BUILTINS,
                                                       **PYMODULES,
                                                       functools.reduce: reduce_,
                                                       builtins.map: map_}
_LIBRARY_DIRS = tuple(os.path.realpath(p) for p in {
    sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")})


#: NumPy functions that call a Python function (:mod:`.pyfuncs`, which calls back here).
_CALLS_PYTHON = (np.vectorize, np.apply_along_axis)


def _calls_python(fn: Any) -> Callable[..., Any]:
    if isinstance(fn, np.vectorize):  # made outside the kernel (@np.vectorize on a helper)
        return pyfuncs.Vectorized(fn.pyfunc, fn.otypes)
    return pyfuncs.PYFUNCS[fn]


def _is_random(fn: Any) -> bool:
    owner = getattr(fn, "__self__", None)
    return str(getattr(fn, "__module__", None) or "").startswith("numpy.random") or isinstance(
        owner, (np.random.RandomState, np.random.Generator, np.random.BitGenerator))


#: Modules whose functions answer differently on every call (clocks, entropy).
_WORLD_MODULES = frozenset({"time", "secrets", "uuid"})
_WORLD_FUNCTIONS = frozenset({
    os.urandom, os.getpid, datetime.datetime.now, datetime.datetime.utcnow,
    datetime.date.today, os.getenv, os.listdir, builtins.open, builtins.input,
    # files: read at build time they are constants of the kernel; written, the build
    # writes them, once, instead of each call
    np.load, np.loadtxt, np.genfromtxt, np.fromfile, np.save, np.savez,
    np.savez_compressed, np.savetxt})


def _reads_the_world(fn: Any) -> bool:
    """A clock, an entropy source, a file or the environment: calling it at build time
    makes a constant (or writes a file once, at the build)."""
    try:
        if fn in _WORLD_FUNCTIONS:
            return True
    except TypeError:
        return False
    return getattr(fn, "__module__", None) in _WORLD_MODULES


def _is_user_code(fn: types.FunctionType) -> bool:
    """A Python function of the user's (not the standard library's or an installed
    package's): converted like the kernel when it is called."""
    if fn.__module__ in (stdlib_lists.__name__, stdlib_counting.__name__,
                         stdlib_math.__name__):  # the library's
        return True  # source (pymodules)
    if str(fn.__module__).split(".")[0] in ("aotc", "numpy"):
        return False
    path = os.path.realpath(fn.__code__.co_filename)
    return not path.startswith(_LIBRARY_DIRS) and os.path.exists(path)


def _scalar_type(scalar: type, value: Tracer) -> Tracer:
    """``np.float32(x)`` of a traced value: ``x`` converted (NumPy casts unsafely)."""
    return lax.convert(value, np.dtype(scalar))


def late_binding(fn: Any, names: tuple[str, ...],
                 table: tuple[tuple[str, tuple[str, ...]], ...]) -> Any:
    """``fn``, a function nested in a kernel, noted as taking the kernel's variables
    ``names`` first (:mod:`.closures`; ``table``: its scope's nested functions')."""
    setattr(fn, LATE, (names, dict(table)))
    return fn


def bound(fn: Any, *values: Any) -> functools.partial[Any]:
    """A late-bound nested function used other than by a call: its variables given."""
    return functools.partial(fn, *values)


def call(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` as written in a converted kernel (AutoGraph's converted
    call): a traced stand-in where :data:`TRACED` has one, an error for ``numpy.random``,
    the user's own functions converted first."""
    if isinstance(fn, functools.partial) and isinstance(fn.func, types.FunctionType) \
            and _is_user_code(fn.func):  # (a key function, a nested one bound late)
        return call(fn.func, *fn.args, *args, **{**fn.keywords, **kwargs})
    if getattr(fn, "__aotc_jitted__", False) is True:  # another aotc.jit function: inlined
        fn = fn.__wrapped__
    fn = source_of(fn) or fn  # heapq.heappush: Python source the kernel compiles
    if isinstance(fn, Text):  # f = f1 if c else f2: the one the path chose
        return fn.called(call, args, kwargs)
    if (fn is builtins.all or fn is builtins.any) and len(args) == 1 and not kwargs \
            and isinstance(args[0], RuntimeGenerator):  # stops where the answer is decided
        return args[0].decided(truth_value, fn is builtins.any)
    if fn is builtins.next and args and isinstance(args[0], RuntimeGenerator):
        return args[0].first(truth_value, *args[1:])  # stops at the first item
    args = tuple(a.laid_out() if isinstance(a, RuntimeGenerator) else a for a in args)
    if isinstance(fn, types.FunctionType) and _is_user_code(fn):  # a helper given x[x < p]
        args = tuple(a.values() if isinstance(a, MaskedValue) else a for a in args)
    if getattr(fn, "__aotc_transform__", False) is True and traced(*args, *kwargs.values()):
        return DISPATCH.get("inline_transform")(fn, args, kwargs)  # aotc.grad(f)(x) here
    try:
        stand_in = TRACED.get(fn)
    except TypeError:  # an unhashable callable
        stand_in = None
    if not (isinstance(fn, types.FunctionType) and _is_user_code(fn)):  # cannot take None
        args = tuple(optional.unwrap(a) for a in args)
        kwargs = {k: optional.unwrap(v) for k, v in kwargs.items()}
    if stand_in is None and (fn in _CALLS_PYTHON or isinstance(fn, np.vectorize)):
        stand_in = _calls_python(fn)
    if stand_in is not None:
        return stand_in(*args, **kwargs)
    made = formatted.method(fn, args, kwargs)  # "k={}".format(k) of a runtime k
    if made is not None:
        return made
    owner = getattr(fn, "__self__", None)  # np.maximum.accumulate([a, b]): lists of tracers
    if isinstance(owner, np.ufunc) and traced(*flatten((args, kwargs))[0]):
        return array_ufunc(owner, fn.__name__, args, kwargs)
    if isinstance(fn, type) and issubclass(fn, np.generic) and len(args) == 1 \
            and not kwargs and isinstance(args[0], Tracer):
        return _scalar_type(fn, args[0])
    if _is_random(fn):
        raise refuse_random(fn)
    if is_python_random(fn):  # it would run once, at build time: a constant
        raise refuse_pyrandom(fn)
    if _reads_the_world(fn):
        raise current().error(
            f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', fn)} would run once, "
            "while the kernel is built, not at each call: what it reads (a clock, a file, "
            "the environment) would be a constant of the kernel, what it writes would be "
            "written by the build",
            hint="call it outside the kernel: pass what it reads in as an argument, and "
                 "return what it would write")
    module = getattr(fn, "__module__", None)
    if module in ("math", "cmath") and traced(*args, *kwargs.values()):
        supported = sorted(f.__name__ for f in (PYMATH if module == "math" else PYCMATH))
        raise current().error(
            f"{module}.{fn.__name__} of a value known only at run time is not supported",
            hint=f"aotc compiles these {module} functions: " + ", ".join(supported))
    if isinstance(fn, types.FunctionType) and converter is not None and _is_user_code(fn):
        # Its source and its closure: one lambda composed with different closures
        # (``lambda *xs: f(*(s(*xs) for s in subs))``) is nesting, not recursion.
        code = (fn.__code__.co_filename, fn.__code__.co_firstlineno, fn.__qualname__,
                tuple(id(cell) for cell in fn.__closure__ or ()))
        spec = functions.kinds(args, kwargs)
        if not _CALLING:
            _RECURSIONS.clear()
        if any(c == code for c, _ in _CALLING) and traced(*args, *kwargs.values()):
            _RECURSIONS[code] = _RECURSIONS.get(code, 0) + 1
            if spec is not None:
                _refuse_resized_arrays(fn, args, kwargs)
            if spec is not None and (code, spec) in _CALLING:  # the same call again
                return _compiled_call(fn, (code, spec), args, kwargs)
            depth = sum(c == code for c, _ in _CALLING)
            if spec is not None and (_RECURSIONS[code] > _INLINED_RECURSIONS or (
                    functions.takes_arrays(spec) and depth >= _INLINED_ARRAY_DEPTH)):
                args, kwargs = functions.promoted(args, kwargs)  # values that never repeat
                spec = functions.kinds(args, kwargs)
                return _compiled_call(fn, (code, spec), args, kwargs)
            if spec is None and (_RECURSIONS[code] > _INLINED_ARRAY_RECURSIONS
                                 or depth >= _ARRAY_RECURSION_DEPTH):
                raise current().error(
                    f"'{fn.__name__}' calls itself on {functions.uncompiled(args, kwargs)}: "
                    "such calls are inlined, and this recursion does not end at build time",
                    hint="pass arrays and scalars (one array and the indices into it, as "
                    "quicksort's f(a, lo, hi)): recursion on those compiles")
        _CALLING.append((code, spec))
        try:
            return converter(fn)(*args, **kwargs)
        finally:
            _CALLING.pop()
    return fn(*args, **kwargs)


def passed_back(value: Any, lists: tuple[tuple[Any, Any], ...]) -> Any:
    """``value``, returned by a function that appends to the lists it is given: each
    (given, last) pair of them passed back to the caller (:mod:`.passed_back`)."""
    for given, last in lists:
        pass_back(given, last)
    return value


def _compiled_call(fn: types.FunctionType, key: Any, args: tuple[Any, ...],
                   kwargs: dict[str, Any]) -> Any:
    """A recursive call as a ``call`` of ``fn`` compiled once for ``key``."""
    assert converter is not None and returned_tuple_length is not None
    return functions.call(fn, converter(fn), key, args, kwargs, _CALLING,
                          returned_tuple_length(fn))


def _refuse_resized_arrays(fn: types.FunctionType, args: tuple[Any, ...],
                           kwargs: dict[str, Any]) -> None:
    """A compiled function takes arrays by reference but cannot change their sizes: one
    that appends to a list it is given is refused (the caller would not see it)."""
    resized = resized_parameters(fn) if resized_parameters is not None else frozenset()
    if not resized:
        return
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs).arguments
    except TypeError:
        return  # Python's own error comes from the call itself
    for name in sorted(resized):
        if isinstance(bound.get(name), Tracer) and bound[name].ndim:
            raise current().error(
                f"'{fn.__name__}' calls itself on runtime values, and changes the size of "
                f"the list '{name}' it is given: a compiled function takes arrays by "
                "reference, and cannot resize the caller's", hint="return the items to "
                "add, or make the recursion a loop with an explicit stack")


pyfuncs.converted_call = call


#: The user's functions being traced (by where their source is: each conversion is a new
#: function object), with the kinds of their arguments (aotc.tracing.functions), innermost
#: last. A call again of the same kinds on runtime values is recursion, compiled as a
#: real call; the same function nested this deep on runtime values also is (closures
#: composed a few levels deep are inlined).
_CALLING: list[tuple[tuple[str, int, str, tuple[int, ...]], Any]] = []
#: Calls of a function inside itself on runtime values, per function, in this kernel's
#: trace. Past this many, Python numbers that change with each call (``steps + 1``) are
#: made runtime values too, and the recursion a compiled function; a recursion that
#: ends at build time (``power(x, k - 1)`` with a constant ``k``) stays inlined below it.
_RECURSIONS: dict[tuple[str, int, str, tuple[int, ...]], int] = {}
_INLINED_RECURSIONS = 16
#: Past this many such calls that cannot be compiled calls (views of one array, values
#: that are not hashable, arrays of build-time sizes), the recursion is refused.
_INLINED_ARRAY_RECURSIONS = 64
_ARRAY_RECURSION_DEPTH = 8
#: Nested this deep on arrays of runtime sizes, a recursion whose Python values change
#: (``row + 1``) is a compiled function too (each inlined level is a deep Python stack).
_INLINED_ARRAY_DEPTH = 4

DISPATCH.call_user = call  # np.piecewise's functions run as converted code too
