"""What converted kernels call: statements, expressions, builtins and every call.

Each decides at trace time, as TensorFlow's AutoGraph does: on build-time values it
runs as ordinary Python (a loop unrolls, up to :data:`UNROLL_LIMIT` iterations); on
traced values it becomes structured control flow from :mod:`aotc.lax` (``and``/``or``
and conditional expressions are conditionals too, so the operand Python would not
evaluate is not evaluated at run time either), or a runtime error (``raise``,
``assert``). :func:`call` is where every call of a converted kernel goes.
"""

from __future__ import annotations

import builtins
import operator
import os
import sysconfig
import types
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import lax
from ..bodies import SCALAR_I64, UNDEFINED, flatten, probe
from ..control import BranchTypes
from ..ir import Lit, Var
from ..numpy_api import CREATION
from ..numpy_api.functions import array_ufunc
from ..numpy_api.masks import MaskedValue
from ..numpy_api.pymath import PYMATH
from ..ops.index import raise_if_p
from ..trace import MESSAGE_VALUES, WEAK_TYPES, Tracer, as_atom, as_tracer, current
from . import joins, optional
from .lists import (
    append,  # noqa: F401 - converted code calls __aotc__.append
    grow_lists,
    laid_out,
)
from .pybuiltins import BUILTINS
from .returns import RET
from .sequences import SEQUENCES, UNROLL_LIMIT, RuntimeSeq, range_, sequence
from .written import Written

State = tuple[Any, ...]
Body = Callable[..., State]


def maybe(read: Callable[[], Any]) -> Any:
    """The value of a variable, or UNDEFINED when it is not assigned yet."""
    try:
        return read()
    except NameError:
        return UNDEFINED


def _traced(*values: Any) -> bool:
    return any(isinstance(v, (Tracer, RuntimeSeq, optional.Optional)) for v in values)


def _as_bool(value: Any) -> Any:
    if isinstance(value, optional.Optional):  # None is false, a value as itself
        if isinstance(value.value, Tracer):
            return np.logical_and(value.present, _as_bool(value.value))
        return value.present if value.value else np.logical_and(value.present, False)
    if isinstance(value, Tracer):
        if value.ndim != 0:
            raise current().error(
                "the truth value of an array with more than one element is ambiguous",
                hint="use np.any(...) or np.all(...)")
        return lax.convert(value, np.dtype(bool))
    return bool(value)


def _require_defined(state: State, names: Sequence[str], what: str) -> None:
    for value, name in zip(state, names, strict=True):
        if value is UNDEFINED:
            raise current().error(
                f"variable '{name}' is first assigned inside {what} that depends on runtime "
                "values, and read after it: on the paths that skip the assignment it has no "
                "value", hint=f"give '{name}' a value before the {what.split()[-1]}")


def _lifted(value: Any) -> Any:
    """A build-time number as a traced one (weak if it is a Python number), so a loop
    can carry it; a Python list of numbers as an array standing for it (its items may
    then be read and written at runtime indices, see numpy_api.pylists)."""
    if isinstance(value, (bool, int, float, complex)) or isinstance(value, np.generic):
        return Tracer(as_atom(value), weak=isinstance(value, WEAK_TYPES))
    if isinstance(value, list) and value and all(
            isinstance(v, (bool, int, float, complex, np.generic))
            or isinstance(v, Tracer) and v.ndim == 0 for v in value):
        items: Any = CREATION[np.array](value)
        items.list_like = True
        return items
    return value


def _zeros_like(value: Any) -> Any:
    """A placeholder of ``value``'s type: zeros (for a value never read on this path)."""
    if isinstance(value, Tracer):
        return np.zeros_like(value)
    if isinstance(value, (tuple, list)):
        return type(value)(_zeros_like(v) for v in value)
    return value


def _typed_returns(state: State, names: Sequence[str], bodies: list[Callable[[State], State]],
                   every: bool = False) -> State:
    """``state`` with an undefined return value (see :mod:`.returns`; with ``every``, any
    undefined value) given a placeholder of the type a body gives it, traced aside: the
    flag guards every read of it, but a loop or conditional must know its type."""
    slots = [i for i, (v, n) in enumerate(zip(state, names, strict=True))
             if v is UNDEFINED and (every or n == RET)]
    if not slots:
        return state
    leaves, structure = flatten(state)
    leaves = [v if v is UNDEFINED else as_tracer(v) for v in leaves]
    typed = list(state)
    for body in bodies:
        after = probe(body, [leaves], [structure])
        for i in slots:
            if typed[i] is UNDEFINED and after[i] is not UNDEFINED:
                typed[i] = _zeros_like(after[i])
    return tuple(typed)


def _any_index() -> Tracer:
    """A stand-in loop index for a body traced aside (:func:`_typed_returns`)."""
    var = Var(SCALAR_I64)
    current().defined.add(var)  # the probe's own: not captured from the contexts around it
    return Tracer(var)


# -- statements ----------------------------------------------------------------------------

def for_range(body: Body, state: State, names: Sequence[str], *bounds: Any,
              appends: dict[str, int] | None = None, written: Sequence[str] = ()) -> State:
    """``for i in range(*bounds)`` with ``state = body(i, state)``."""
    return for_iter(body, state, names, range_(*bounds), appends=appends, written=written)


def for_iter(body: Body, state: State, names: Sequence[str], iterable: Any,
             appends: dict[str, int] | None = None, written: Sequence[str] = ()) -> State:
    """``for x in iterable``: Python's loop over build-time items (unrolled up to
    :data:`UNROLL_LIMIT` of them), else a runtime loop over the items' indices."""
    seq = sequence(iterable)
    items: Any = seq
    if isinstance(seq, RuntimeSeq):
        items = seq.unrolled()
    elif isinstance(seq, builtins.range) and len(seq) > UNROLL_LIMIT:
        start, step = seq.start, seq.step
        seq = RuntimeSeq(len(seq), lambda k: np.add(start, np.multiply(k, step)))
        items = None
    if items is not None:
        for item in items:
            state = body(item, state)
        return state
    items_of = Written(state, names, written, _lifted)
    state, body = items_of.state, items_of.body(body)
    state, grown = grow_lists(state, names, appends or {}, seq.length,
                              lambda s: body(seq.item(_any_index()), s))
    first = [n for v, n in zip(state, names, strict=True) if v is UNDEFINED and n != RET]
    state = _typed_returns(state, names, [lambda s: body(seq.item(_any_index()), s)],
                           every=True)
    _require_defined(state, names, "a loop")
    if first:  # assigned in every iteration, as the body was seen to: defined if it runs
        empty: Any = np.less_equal(as_tracer(seq.length), 0)
        lax.bind(raise_if_p, empty.atom, error="UnboundLocalError",
                 message=f"cannot access local variable '{first[0]}' where it is not "
                         "associated with a value (the loop assigning it ran no times)")
    state = _loop(lambda s, step: lax.fori_loop(0, seq.length,
                                                lambda i, s: step(seq.item(i), s), s),
                  body, state, lambda s: body(seq.item(_any_index()), s))
    return items_of.inside(laid_out(state, grown))


def _loop(run: Callable[[State, Body], State], body: Body, state: State,
          aside: Callable[[State], State]) -> State:
    """``run(state, body)`` (a runtime loop), with the variables that are None before
    the loop or in its body and a value elsewhere made optional (``aside`` is the body
    on a state alone, traced aside to find them)."""
    lifted = tuple(_lifted(v) for v in state)
    key = optional.site_key((body,), lifted)
    unified = optional.KNOWN.get(key)
    if unified is None:
        def checked(*args: Any) -> State:
            out = body(*args)
            optional.check_body(out, lifted)
            return out

        try:
            return run(lifted, checked)
        except optional.NoneOnAPath:
            unified = optional.KNOWN[key] = optional.unify(lifted, [aside], with_before=True)
    return run(unified.wrap(lifted), unified.body(body))


def while_stmt(test: Callable[[State], Any], body: Body, state: State,
               names: Sequence[str], written: Sequence[str] = ()) -> State:
    """``while test(state): state = body(state)``: Python's loop while the test is a
    build-time value (up to :data:`UNROLL_LIMIT` iterations, then the state is lifted
    to traced values and the rest runs as a runtime loop)."""
    for _ in range(UNROLL_LIMIT):
        cond = test(state)
        if _traced(cond):
            break
        if not cond:
            return state
        state = body(state)
    else:
        state = tuple(_lifted(v) for v in state)
        if not _traced(test(state)):
            raise current().error(
                f"a while loop on build-time values ran {UNROLL_LIMIT} times while tracing "
                "and its condition does not depend on what it changes",
                hint="make its condition depend on a value the loop updates")
    items_of = Written(state, names, written, _lifted)
    state, body, test = items_of.state, items_of.body(body), items_of.test(test)
    first = [i for i, v in enumerate(state) if v is UNDEFINED and names[i] != RET]
    state = _typed_returns(state, names, [body], every=bool(first))
    state = optional.unbound(state, names, [i for i in first if state[i] is not UNDEFINED])
    _require_defined(state, names, "a while loop")
    return items_of.inside(_loop(
        lambda s, step: lax.while_loop(lambda s: _as_bool(test(s)), step, s), body, state,
        body))


def if_stmt(test: Any, then: Body, orelse: Body, state: State, names: Sequence[str],
            site: Sequence[Any] = (), written: Sequence[str] = ()) -> State:
    """``if test: then else: orelse``, each taking and returning the state (``site``:
    what identifies the construct, if not its bodies' code)."""
    if not _traced(test):
        return then(state) if test else orelse(state)
    items_of = Written(state, names, written, _lifted)
    state = items_of.state
    site = site or (then, orelse)
    then, orelse = items_of.body(then), items_of.body(orelse)
    return items_of.inside(_if(test, then, orelse, state, names, site))


def _if(test: Any, then: Body, orelse: Body, state: State, names: Sequence[str],
        site: Sequence[Any]) -> State:
    state = _typed_returns(state, names, [then, orelse])
    while True:
        key = optional.site_key(site, state)
        unified = optional.KNOWN.get(key)
        try:
            if unified is None:
                return _cond(test, then, orelse, state, names, None)
            return _cond(test, unified.body(then), unified.body(orelse), unified.wrap(state),
                         names, unified)
        except optional.Unassigned:  # assigned in one branch only: unbound in the other
            slots = [i for i, v in enumerate(state) if v is UNDEFINED and names[i] != RET]
            state = optional.unbound(_typed_returns(state, names, [then, orelse], every=True),
                                     names, slots)
        except optional.NoneOnAPath:  # a branch gives None: which variables are optional?
            optional.KNOWN[key] = optional.unify(state, [then, orelse], False)


def _cond(test: Any, then: Body, orelse: Body, state: State, names: Sequence[str],
          unified: optional.Unified | None, joined: dict[int, joins.Join] | None = None
          ) -> State:
    known = [i for i, v in enumerate(state) if v is not UNDEFINED]
    joined = joined or {}

    def branch(fn: Body) -> Callable[..., State]:
        def run(*values: Any) -> State:
            full = list(state)
            for i, v in zip(known, values, strict=True):
                full[i] = v
            out = fn(tuple(full))
            if any(value is UNDEFINED for value in out):
                raise optional.Unassigned
            if unified is None:
                optional.check_body(out)
            return tuple(joined[i].pad(v) if i in joined else v for i, v in enumerate(out))
        return run

    try:
        result = lax.cond(_as_bool(test), branch(then), branch(orelse),
                          *(state[i] for i in known))
        return tuple(v.laid_out(joined[i].uppers) if i in joined else v
                     for i, v in enumerate(result))
    except BranchTypes as mismatch:
        slot = _slot_of_leaf(state, mismatch.index)
        join = joins.joinable(mismatch) if slot is not None and slot not in joined else None
        if slot is not None and join is not None:  # different sizes: joined in one buffer
            return _cond(test, then, orelse, state, names, unified, {**joined, slot: join})
        name = _name_of_leaf(state, names, mismatch.index)
        if name is None:
            raise
        what = "the kernel returns values of" if name == RET else \
            f"the two branches of this if give variable '{name}'"
        raise BranchTypes(mismatch.index, mismatch.types, what) from None


def _slot_of_leaf(state: State, index: int) -> int | None:
    """The state variable whose one leaf is flattened leaf ``index`` (None if that
    variable holds several values)."""
    start = 0
    for slot, value in enumerate(state):
        count = len(flatten(value)[0])
        if start == index and count == 1:
            return slot
        start += count
    return None


def _name_of_leaf(state: State, names: Sequence[str], index: int) -> str | None:
    """The state variable that flattened leaf ``index`` of the branches' outputs is in."""
    start = 0
    for value, name in zip(state, names, strict=True):
        count = len(flatten(value)[0])
        if start <= index < start + count:
            return name
        start += count
    return None


# -- expressions ---------------------------------------------------------------------------

def and_(*operands: Callable[[], Any]) -> Any:
    """``a and b and ...``: Python's on build-time values; on a traced one, the rest is
    evaluated (at run time) only where it is true."""
    value, rest = operands[0](), operands[1:]
    if not rest:
        return value
    if _traced(value):
        return lax.cond(_as_bool(value), lambda: and_(*rest), lambda: value)
    return and_(*rest) if value else value


def or_(*operands: Callable[[], Any]) -> Any:
    """``a or b or ...``, as :func:`and_`."""
    value, rest = operands[0](), operands[1:]
    if not rest:
        return value
    if _traced(value):
        return lax.cond(_as_bool(value), lambda: value, lambda: or_(*rest))
    return value if value else or_(*rest)


def not_(value: Any) -> Any:
    if _traced(value):
        return np.logical_not(_as_bool(value))
    return not value


_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "Lt": operator.lt, "LtE": operator.le, "Gt": operator.gt, "GtE": operator.ge,
    "Eq": operator.eq, "NotEq": operator.ne, "Is": optional.is_, "IsNot": optional.is_not,
    "In": lambda a, b: a in b, "NotIn": lambda a, b: a not in b,
}


def compare(left: Callable[[], Any], *links: tuple[str, Callable[[], Any]]) -> Any:
    """``a < b <= c``: ``a < b and b <= c`` with ``b`` evaluated once."""
    op, right_thunk = links[0]
    first, right = left(), right_thunk()
    result = _COMPARE[op](first, right)
    if len(links) == 1:
        return result
    return and_(lambda: result, lambda: compare(lambda: right, *links[1:]))


def ifexp(test: Any, body: Callable[[], Any], orelse: Callable[[], Any]) -> Any:
    """``body if test else orelse``; only the taken side is evaluated."""
    if not _traced(test):
        return body() if test else orelse()
    state = if_stmt(test, lambda _: (body(),), lambda _: (orelse(),), (UNDEFINED,),
                    ("(a if c else b)",), (body, orelse))  # None on a side too
    return state[0]


def getitem(value: Any, index: Any) -> Any:
    """``value[index]``; a Python list or tuple read at a runtime index is read as the
    array ``np.array(value)`` (a lookup table), with Python's IndexError outside it."""
    if isinstance(value, (list, tuple)) and isinstance(index, Tracer) and index.ndim == 0 \
            and index.dtype.kind in "iu" and value:
        n = len(value)
        outside: Any = np.logical_or(np.less(index, -n), np.greater_equal(index, n))
        lax.bind(raise_if_p, outside.atom, error="IndexError",
                 message=f"{type(value).__name__} index out of range")
        table = CREATION[np.array](value)
        return table[np.where(np.less(index, 0), np.add(index, n), index)]
    return value[index]


def unpack(value: Any, count: int) -> Any:
    """``a, b = value``: an array or runtime sequence of exactly ``count`` items (checked
    at run time when its length is only known then)."""
    if not isinstance(value, (Tracer, RuntimeSeq)):
        return value
    seq = sequence(value)
    n = seq.static_length()
    too_many = f"too many values to unpack (expected {count})"
    if n is not None and n != count:
        raise current().error(too_many if n > count else
                              f"not enough values to unpack (expected {count}, got {n})")
    if n is None:
        length = seq.length
        if isinstance(length, Tracer) and length.dim is not None:
            current().check(">=", length.dim, lax.as_dim(count), "ValueError",
                            f"not enough values to unpack (expected {count}, got {{lhs}})")
            current().check("<", length.dim, lax.as_dim(count + 1), "ValueError", too_many)
        else:
            bad = np.not_equal(length, count)
            lax.bind(raise_if_p, as_tracer(bad).atom, error="ValueError",
                     message=f"wrong number of values to unpack (expected {count})")
    return tuple(seq.item(i) for i in builtins.range(count))


def _truth_value(value: Any) -> Any:
    """A condition's truth as a traced bool (``if x`` on a number means ``x != 0``)."""
    t = as_tracer(value)
    return t if t.dtype == np.bool_ else np.not_equal(t, 0)


def comprehension(kind: str, fn: Callable[..., Any], iterable: Any, spread: bool,
                  keep: Callable[..., Any] | None = None) -> Any:
    """``[fn(v) for v in iterable if keep(v)]`` (``kind`` list, generator or set):
    Python's own on build-time items; over a runtime sequence the values are stacked
    into an array, its first axis the sequence, and a filter makes it the selection of
    the kept rows (``sum``, ``len``, ``min``... of it work; see ``pybuiltins``)."""
    nargs = fn.__code__.co_argcount

    def apply(f: Callable[..., Any], item: Any) -> Any:
        return f(*unpack(item, nargs)) if spread else f(item)

    seq = sequence(iterable)
    items: Any = seq
    if isinstance(seq, RuntimeSeq):
        items = seq.unrolled()
        if items is None:
            if kind == "set":
                raise current().error("a set comprehension over runtime values",
                                      hint="build an array and use np.unique")
            stacked = seq.stacked(lambda item: apply(fn, item))
            if keep is not None:
                kept = seq.stacked(lambda item: _truth_value(apply(keep, item)))
                return MaskedValue(as_tracer(stacked), kept)
            if kind == "list" and isinstance(stacked, Tracer):
                stacked.list_like = True  # a Python list: its items may change type
            return stacked
    if keep is not None:
        items = list(items)
        conds = [apply(keep, v) for v in items]
        if any(isinstance(c, Tracer) for c in conds):  # kept or not only at run time
            values = [as_tracer(apply(fn, v)) for v in items]
            rows: Any = np.stack(values)
            flags: Any = np.stack([_truth_value(c) for c in conds])
            return MaskedValue(rows, flags)
        items = [v for v, c in zip(items, conds, strict=True) if c]
    values = [apply(fn, v) for v in items]
    return values if kind == "list" else set(values) if kind == "set" else iter(values)


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
    shows (see :mod:`aotc.messages`)."""
    error, message = _builtin_exception(exc)
    if current().parent is None and not isinstance(cond, Tracer) and not values:
        raise KernelRaises(error, message)
    atom = cond.atom if isinstance(cond, Tracer) else Lit(True, np.dtype(bool))
    details = [v.atom for v in values] + [Lit(0, np.dtype(np.int64))] * (len(values) == 1)
    lax.bind(raise_if_p, atom, *details, error=error, message=message)


def _message(make: Callable[[], Any], values: list[Tracer]) -> Any:
    """``make()``, with the runtime values it formats into strings noted in ``values``."""
    token = MESSAGE_VALUES.set(values)
    try:
        return make()
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
    if not _traced(value):
        if not value:
            _raise_where(True, AssertionError(text), values)
        return
    _raise_where(np.logical_not(_as_bool(value)), AssertionError(text), values)


# -- helpers for lowered jumps and returns -------------------------------------------------

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


# -- every call a converted kernel makes ----------------------------------------------------

#: Converts a helper function before it is called (set by :mod:`aotc.autograph`).
converter: Callable[[Callable[..., Any]], Callable[..., Any]] | None = None

#: Functions the kernel may call under any name, and what runs instead while tracing:
#: NumPy's creation functions (no array argument reaches ``__array_function__``),
#: Python's builtins and the sequences loops and comprehensions walk.
TRACED: dict[Callable[..., Any], Callable[..., Any]] = {**CREATION, **BUILTINS, **SEQUENCES,
                                                       **PYMATH}
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


def _scalar_type(scalar: type, value: Tracer) -> Tracer:
    """``np.float32(x)`` of a traced value: ``x`` converted (NumPy casts unsafely)."""
    return lax.convert(value, np.dtype(scalar))


def call(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` as written in a converted kernel (AutoGraph's converted
    call): a traced stand-in where :data:`TRACED` has one, an error for ``numpy.random``,
    the user's own functions converted first."""
    try:
        stand_in = TRACED.get(fn)
    except TypeError:  # an unhashable callable
        stand_in = None
    if not (isinstance(fn, types.FunctionType) and _is_user_code(fn)):  # cannot take None
        args = tuple(optional.unwrap(a) for a in args)
        kwargs = {k: optional.unwrap(v) for k, v in kwargs.items()}
    if stand_in is not None:
        return stand_in(*args, **kwargs)
    owner = getattr(fn, "__self__", None)  # np.maximum.accumulate([a, b]): lists of tracers
    if isinstance(owner, np.ufunc) and _traced(*flatten((args, kwargs))[0]):
        return array_ufunc(owner, fn.__name__, args, kwargs)
    if isinstance(fn, type) and issubclass(fn, np.generic) and len(args) == 1 \
            and not kwargs and isinstance(args[0], Tracer):
        return _scalar_type(fn, args[0])
    if _is_random(fn):
        raise current().error(
            "numpy.random is not supported in kernels: a compiled kernel has no random state",
            hint="draw the random numbers outside and pass them in as an array argument")
    if isinstance(fn, types.FunctionType) and converter is not None and _is_user_code(fn):
        code = (fn.__code__.co_filename, fn.__code__.co_firstlineno, fn.__qualname__)
        if _CALLING.count(code) >= _NESTING_LIMIT and \
                any(_traced(a) for a in (*args, *kwargs.values())):
            raise current().error(
                f"'{fn.__name__}' calls itself on values known only at run time: a "
                "compiled kernel inlines the functions it calls, so the recursion has no "
                "end", hint="write it as a loop (with an explicit stack array if needed); "
                "recursion on build-time values is fine")
        _CALLING.append(code)
        try:
            return converter(fn)(*args, **kwargs)
        finally:
            _CALLING.pop()
    return fn(*args, **kwargs)


#: The user's functions being traced (by where their source is: each conversion is a new
#: function object), innermost last. The same function nested this deep on traced values
#: is recursion with no build-time end (closures composed a few levels deep are fine).
_CALLING: list[tuple[str, int, str]] = []
_NESTING_LIMIT = 24
