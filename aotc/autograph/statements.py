"""Loops of converted kernels: ``for`` and ``while`` on their state (the ``if``
statement is in :mod:`.conditionals`, built on the helpers here).

Each converted statement passes the variables it assigns (its *state*) through
functions made of its bodies (see :mod:`.transform`). On build-time values the
statement runs as Python (loops unroll up to :data:`~.sequences.UNROLL_LIMIT`
iterations); on traced ones it becomes structured control flow from :mod:`aotc.lax`,
after settling what the state holds on every path: values first assigned in a body
(typed by tracing it aside), lists that grow (:mod:`.lists`), variables that are None
or unassigned on some paths (:mod:`.optional`), arrays of different sizes from two
branches (:mod:`.joins`), containers changed in place (:mod:`.written`).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import lax
from ..errors import TraceError
from ..ir import Var
from ..numpy_api import CREATION
from ..numpy_api.creation import full_from_dims
from ..numpy_api.masks import MaskedValue
from ..ops.containers import is_box
from ..ops.index import raise_if_p
from ..shapes import DimExpr, bound_symbols
from ..tracing.bodies import SCALAR_I64, UNDEFINED, CarryShapes, flatten, probe, sequence_of
from ..tracing.tracer import WEAK_TYPES, CarriedApart, Tracer, as_atom, as_tracer, current
from . import boxing, chosen_views, first_trip, lists, optional, resizing
from .boxes import RuntimeBox, filled
from .lists import RuntimeList, appended_lists, grow_lists, laid_out
from .returns import RET
from .sequences import UNROLL_LIMIT, RuntimeSeq, range_, sequence
from .texts import as_texts
from .written import Written

State = tuple[Any, ...]
Body = Callable[..., State]


def maybe(read: Callable[[], Any]) -> Any:
    """The value of a variable, or UNDEFINED when it is not assigned yet."""
    try:
        return read()
    except NameError:
        return UNDEFINED


def traced(*values: Any) -> bool:
    return any(isinstance(v, (Tracer, RuntimeSeq, optional.Optional, MaskedValue))
               or is_box(v) for v in values)


def as_bool(value: Any) -> Any:
    if is_box(value):  # a list, set or dict grown at run time
        return np.greater(value.len(), 0)
    if isinstance(value, MaskedValue):  # a filtered comprehension's list, or x[mask]
        return np.greater(value.count(), 0) if value.list_like else as_bool(value.values())
    if isinstance(value, optional.Optional):  # None is false, a value as itself
        if isinstance(value.value, Tracer):
            return np.logical_and(value.present, as_bool(value.value))
        return value.present if value.value else np.logical_and(value.present, False)
    if isinstance(value, Tracer):
        if value.list_like and value.ndim:  # a list grown at run time, laid out
            return np.greater(as_tracer(value.shape[0]), 0)
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
                "value", hint=f"give '{name}' a value before the {what.rsplit(maxsplit=1)[-1]}")


def lift(value: Any) -> Any:
    """A build-time number as a traced one (weak if it is a Python number), so a loop
    can carry it; a Python list of numbers as an array standing for it (its items may
    then be read and written at runtime indices, see numpy_api.pylists)."""
    if isinstance(value, (bool, int, float, complex, np.generic)):
        return Tracer(as_atom(value), weak=isinstance(value, WEAK_TYPES))
    if isinstance(value, list) and value and all(
            isinstance(v, (bool, int, float, complex, np.generic))
            or (isinstance(v, Tracer) and v.ndim == 0) for v in value):
        items: Any = CREATION[np.array](value)
        items.list_like = True
        return items
    return value


def _zeros_like(value: Any) -> Any:
    """A placeholder of ``value``'s type: zeros (for a value never read on this path).
    An axis whose size the body bound (``return x[:i]`` in a loop) is empty here: that
    size means nothing outside it; the paths join as arrays of different sizes do."""
    if isinstance(value, Tracer):
        outside = set(current().uppers())
        sizes = tuple(DimExpr.const(0) if bound_symbols(d) - outside else d
                      for d in value.aval.shape)
        return full_from_dims(sizes, 0, value.dtype)
    if isinstance(value, (tuple, list)):
        return sequence_of(type(value), [_zeros_like(v) for v in value])
    if isinstance(value, RuntimeList):  # (a list a loop grows: its buffer, count 0)
        return RuntimeList(_zeros_like(value.buffer), _zeros_like(value.count), value.shared)
    if isinstance(value, RuntimeBox):  # (a list, set or dict grown at run time: empty)
        return filled([], value.kind, value.key, value.value)
    return value


def typed_returns(state: State, names: Sequence[str], bodies: list[Callable[[State], State]],
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
    for body in bodies:  # (a string it gives traced aside as a Text: it has no leaves)
        after = probe(lambda s, body=body: as_texts(body(s)), [leaves], [structure])
        for i in slots:
            if typed[i] is UNDEFINED and after[i] is not UNDEFINED:
                typed[i] = _zeros_like(after[i])
    return tuple(typed)


def _any_index() -> Tracer:
    """A stand-in loop index for a body traced aside (:func:`typed_returns`)."""
    var = Var(SCALAR_I64)
    current().defined.add(var)  # the probe's own: not captured from the contexts around it
    return Tracer(var)


#: :func:`.conditionals.if_stmt`, which builds on this module's helpers (so it cannot be
#: imported here): the odd trip of a loop run two trips at a time runs under it.
if_stmt: Callable[..., State] | None = None


# -- statements ----------------------------------------------------------------------------

def for_range(body: Body, state: State, names: Sequence[str], *bounds: Any,
              appends: dict[str, int] | None = None, written: Sequence[str] = (),
              changes: dict[str, str] | None = None, shared: State = ()) -> State:
    """``for i in range(*bounds)`` with ``state = body(i, state)``."""
    return for_iter(body, state, names, range_(*bounds), appends=appends, written=written,
                    changes=changes, shared=shared)


def _boxed(state: State, names: Sequence[str], changes: dict[str, str] | None,
           appends: dict[str, int] | None, aside: Callable[[State], State], trips: Any,
           counts: dict[int, DimExpr] | None = None) -> State:
    """``state`` with the containers the loop changes carried as boxes (:mod:`.boxes`):
    those ``changes`` names, and the lists it appends to that no planned buffer holds."""
    state = boxing.box_changed(state, tuple(names), changes or {}, aside)
    far = lists.ungrowable(state, names, appends or {}, trips, counts)
    return boxing.boxed(state, aside, far, required=True) if far else state


def for_iter(body: Body, state: State, names: Sequence[str], iterable: Any,
             appends: dict[str, int] | None = None, written: Sequence[str] = (),
             changes: dict[str, str] | None = None, shared: State = ()) -> State:
    """``for x in iterable``: Python's loop over build-time items (unrolled up to
    :data:`UNROLL_LIMIT` of them), else a runtime loop over the items' indices.
    ``shared``: the values of the variables read after the loop that it does not
    assign (see :func:`.chosen_views.resized_views`)."""
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
    state = _boxed(state, names, changes, appends, lambda s: body(seq.item(_any_index()), s),
                   seq.length)
    items_of = Written(state, names, written, lift)
    state, body = items_of.state, items_of.body(body)
    state, grown = grow_lists(state, names, appends or {}, seq.length,
                              lambda s: body(seq.item(_any_index()), s))
    unset = [i for i, v in enumerate(state) if v is UNDEFINED and names[i] != RET]
    state = typed_returns(state, names, [lambda s: body(seq.item(_any_index()), s)],
                          every=True)
    some = [i for i in unset if isinstance(state[i], optional.Optional)]  # (in a branch)
    state = optional.unbound(state, names, some)  # read after the loop through a flag
    first = [names[i] for i in unset if i not in some]
    _require_defined(state, names, "a loop")
    if first:  # assigned in every iteration, as the body was seen to: defined if it runs
        empty: Any = np.less_equal(as_tracer(seq.length), 0)
        lax.bind(raise_if_p, empty.atom, error="UnboundLocalError",
                 message=f"cannot access local variable '{first[0]}' where it is not "
                         "associated with a value (the loop assigning it ran no times)")
    def aside(s: State) -> State:
        return body(seq.item(_any_index()), s)

    try:
        state = _loop(lambda s, step, shown: lax.fori_loop(
            0, seq.length, lambda i, s: step(seq.item(i), s), s),
            body, state, aside, names, _as_size(seq.length), shared)
    except CarriedApart:
        state = _loop(_two_trips_at_a_time(seq, names), body, state, aside, names,
                      _as_size(seq.length), shared)
    return items_of.inside(laid_out(state, grown, names))


def _two_trips_at_a_time(seq: RuntimeSeq, names: Sequence[str]) -> Run:
    """A runtime loop over ``seq`` whose body runs two trips, then the odd trip left
    under an ``if``. A body that swaps two views of one array (``In, Out = Out, In``
    with ``Out = In.T``) hands them back as they came every two trips, so the loop
    carries them as views, and writes through them reach their array as in Python."""
    def run(state: State, step: Body, shown: Callable[[State], State]) -> State:
        length = seq.length
        state = lax.fori_loop(0, np.floor_divide(length, 2), lambda i, s: step(
            seq.item(np.add(np.multiply(i, 2), 1)), step(seq.item(np.multiply(i, 2)), s)),
            state)
        odd = np.equal(np.remainder(length, 2), 1)
        last = np.subtract(length, 1)
        assert if_stmt is not None  # (set when .conditionals is imported, with autograph)
        return if_stmt(odd, lambda s: step(seq.item(last), s), lambda s: s, state, names)
    return run


def _as_size(length: Any) -> DimExpr | None:
    """A trip count as a size, when it is one."""
    return length.dim if isinstance(length, Tracer) else DimExpr.const(int(length))


#: A runtime loop: ``run(state, body, shown)``, ``shown`` the state as the user's code
#: sees it (its resized arrays laid out, see :mod:`.resizing`).
Run = Callable[[State, Body, Callable[[State], State]], State]


def _loop(run: Run, body: Body, state: State, aside: Callable[[State], State],
          names: Sequence[str], trips: DimExpr | None = None, shared: State = ()) -> State:
    """``run(state, body)`` (a runtime loop), with the variables that are None before
    the loop or in its body and a value elsewhere made optional (``aside`` is the body
    on a state alone, traced aside to find them), and arrays it resizes carried in
    buffers of the size they start with (or grow to in ``trips`` iterations)."""
    lifted = tuple(lift(v) for v in state)
    converted: frozenset[int] = frozenset()
    while True:
        try:
            if not converted:
                return _carried(run, first_trip.checked(body, lifted, names, shared), lifted,
                                aside, names, trips, shared)
            flagged = first_trip.FirstTrip(converted, lifted, shared)
            return flagged.result(_carried(
                flagged.run(run), flagged.body(body, names), flagged.state, flagged.aside(aside),
                (*names, "(first trip)"), trips, shared))
        except first_trip.Rebinds as found:
            if found.positions <= converted:
                raise
            converted |= found.positions


def _carried(run: Run, body: Body, lifted: State, aside: Callable[[State], State],
             names: Sequence[str], trips: DimExpr | None, shared: State) -> State:
    """:func:`_loop` on a lifted state."""
    try:
        return _still_lists(lifted, _optional_loop(run, body, lifted, aside, lambda s: s))
    except CarryShapes as err:
        joins = resizing.resized(lifted, names, aside, trips)
        refused: TraceError = err
    if joins:
        carried = resizing.Carried(joins)
        try:
            out = carried.shown(_optional_loop(run, carried.body(body),
                                               carried.packed(lifted), carried.body(aside),
                                               carried.shown))
            return _still_lists(lifted, chosen_views.resized_views(lifted, out, joins, shared))
        except resizing.Overgrown as err:
            refused = err
    same = resizing.checked_equal(lifted, aside)  # sizes equal unless one is negative
    if not same:
        raise refused
    return _still_lists(lifted, _optional_loop(run, resizing.kept_sizes(body, same, names),
                                               lifted, resizing.kept_sizes(aside, same, names),
                                               lambda s: s))


def _still_lists(before: State, after: State) -> State:
    """The state after a loop: an array that stood for a list before it still does."""
    for first, last in zip(before, after, strict=True):
        if isinstance(first, Tracer) and first.list_like and isinstance(last, Tracer):
            last.list_like = True
    return after


def _optional_loop(run: Run, body: Body, lifted: State, aside: Callable[[State], State],
                   shown: Callable[[State], State]) -> State:
    unified = optional.known((body,), lifted)
    if unified is None:
        def checked(*args: Any) -> State:
            out = body(*args)
            optional.check_body(out, lifted)
            return out

        try:
            return run(lifted, checked, shown)
        except optional.NoneOnAPath:
            unified = optional.remember((body,), lifted,
                                        optional.unify(lifted, [aside], with_before=True))
    return run(unified.wrap(lifted), unified.body(body), shown)


def while_stmt(test: Callable[[State], Any], body: Body, state: State,
               names: Sequence[str], written: Sequence[str] = (),
               appends: dict[str, int] | None = None, trips: Any = None,
               changes: dict[str, str] | None = None, shared: State = ()) -> State:
    """``while test(state): state = body(state)``: Python's loop while the test is a
    build-time value (up to :data:`UNROLL_LIMIT` iterations, then the state is lifted
    to traced values and the rest runs as a runtime loop). ``trips``: at most how many
    times it runs, when it is a ``for`` loop over a range that breaks: the lists it
    appends to grow as in a ``for`` loop, and it runs at run time from the start (on
    build-time bounds too: whether it appends may depend on runtime values)."""
    appended = appended_lists(state, names, appends or {})
    if trips is not None and appended:
        state = tuple(v if i in appended else lift(v) for i, v in enumerate(state))
    # A container the loop pops from, adds to...: a box from the start (an iteration
    # unrolled at build time would change the Python container, then a runtime
    # iteration a box: the two would not join)
    state = boxing.box_changed(state, tuple(names), changes or {}, body)
    for _ in range(UNROLL_LIMIT):
        cond = test(state)
        if traced(cond):
            break
        if not cond:
            return state
        state = body(state)
    else:
        state = tuple(lift(v) for v in state)
        if not traced(test(state)):
            raise current().error(
                f"a while loop on build-time values ran {UNROLL_LIMIT} times while tracing "
                "and its condition does not depend on what it changes",
                hint="make its condition depend on a value the loop updates")
    state = boxing.box_changed(state, tuple(names), changes or {}, body)  # (now lifted)
    items_of = Written(state, names, written, lift)
    state, body, test = items_of.state, items_of.body(body), items_of.test(test)
    grown: list[int] = []
    if trips is None:
        counts = _counted_appends(test, body, state, names, appends or {})
        state = _boxed(state, names, None, appends, body, None, counts)
        state, grown = grow_lists(state, names, appends or {}, None, body, counts)
    else:
        state = _boxed(state, names, None, appends, body, trips)
        state, grown = grow_lists(state, names, appends or {}, trips, body)
    state = _empty_returns_retyped(state, names, body)
    first = [i for i, v in enumerate(state) if v is UNDEFINED and names[i] != RET]
    state = typed_returns(state, names, [body], every=bool(first))
    state = optional.unbound(state, names, [i for i in first if state[i] is not UNDEFINED])
    _require_defined(state, names, "a while loop")
    return items_of.inside(laid_out(_loop(
        lambda s, step, shown: lax.while_loop(lambda s: as_bool(test(shown(s))), step, s),
        body, state, body, names, shared=shared), grown, names))


def _empty_returns_retyped(state: State, names: Sequence[str], body: Body) -> State:
    """``state`` with an empty Python list returned in an iteration unrolled before the
    loop (``while True: if i >= n: return out``) as the empty list of the kind the loop
    returns (a box, a laid-out list), which the two paths can join."""
    empty = [i for i, (v, n) in enumerate(zip(state, names, strict=True))
             if n == RET and isinstance(v, list) and not v]
    if not empty:
        return state
    retyped = typed_returns(tuple(UNDEFINED if i in empty else v
                                  for i, v in enumerate(state)), names, [body])
    return tuple(retyped[i] if i in empty and _list_kind(retyped[i]) else v
                 for i, v in enumerate(state))


def _list_kind(value: Any) -> bool:
    return is_box(value) or isinstance(value, RuntimeList) or (
        isinstance(value, Tracer) and value.list_like)


def _counted_appends(test: Callable[[State], Any], body: Body, state: State,
                     names: Sequence[str], appends: dict[str, int]
                     ) -> dict[int, DimExpr] | None:
    """How many items a runtime ``while`` loop appends to each list: counted by a copy of
    the loop that the entry points run before the kernel (a list's buffer is planned
    then). None when that copy cannot run there (the loop draws random numbers, or is
    inside another loop or a branch): its lists are boxes then."""
    appended = appended_lists(state, names, appends)
    if not appended or any(appends[names[i]] < 0 for i in appended):
        return None
    if any(is_box(v) for v in state):
        return None  # the copy would pop from (add to...) the loop's own box first
    typed = typed_returns(state, names, [body], every=True)
    if any(v is UNDEFINED for v in typed):
        return None
    return lists.counted_appends(
        typed, appended, lambda s: lax.while_loop(lambda s: as_bool(test(s)), body, s))
