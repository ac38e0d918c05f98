"""Variables that are None on some paths: ``best = None; for ...: if ...: best = x``.

Numba types such a variable as an optional; here it is an :class:`Optional`: a runtime
flag (is there a value?) and the value, or zeros of its type where there is none,
carried through loops and branches like any other state. ``v is None`` reads the flag;
any other use reads the value, raising Python's TypeError at run time where there is
none. A kernel that returns one returns None or the value.

A construct finds out late that a variable is optional: a branch or a loop body that
gives None (or an optional) where another path may give a value raises
:class:`NoneOnAPath`; the construct then traces its bodies aside (:func:`unify`) and
runs again with every such variable made optional before and after each body. What it
found is kept per construct and state type (:data:`KNOWN`), so constructs nested in
bodies traced again do not search again. None on every path is an empty pytree
(:func:`aotc.tracing.bodies.flatten`) and needs nothing.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import lax
from ..ops.index import raise_if_p
from ..tracing.bodies import UNDEFINED, flatten, probe, sequence_of, unflatten
from ..tracing.tracer import Tracer, as_atom, as_tracer

State = tuple[Any, ...]


class Optional:
    """A value that is None where ``present`` is false (``value`` is a placeholder
    there), or, for a variable named ``unbound``, that has no value yet there (assigned
    on some paths of a loop or branch only: reading it is Python's UnboundLocalError)."""

    #: What it is, in a message about the kinds of values a branch gives.
    KIND = "a value that may be None"

    def __init__(self, present: Tracer, value: Any, unbound: str | None = None) -> None:
        self.present, self.value, self.unbound = present, value, unbound

    def tree_flatten(self) -> tuple[list[Any], Any]:
        leaves, structure = flatten(self.value)
        return [self.present, *leaves], (structure, self.unbound)

    @classmethod
    def tree_unflatten(cls, meta: Any, leaves: list[Any]) -> Optional:
        structure, unbound = meta
        return cls(leaves[0], unflatten(structure, leaves[1:]), unbound)

    def get(self) -> Any:
        """The value; Python's error at run time where there is none: a TypeError for
        None used as a number, a sequence or an array, an UnboundLocalError for a
        variable not assigned yet."""
        absent: Any = np.logical_not(self.present)
        if self.unbound is not None:
            error, message = "UnboundLocalError", (
                f"cannot access local variable '{self.unbound}' where it is not associated "
                "with a value")
        else:
            error, message = "TypeError", ("a variable that is None here is used as a value "
                                           "('NoneType' object is not subscriptable or not "
                                           "a number)")
        lax.bind(raise_if_p, absent.atom, error=error, message=message)
        return self.value

    def __aotc_value__(self) -> Any:
        return self.get()

    def __getitem__(self, key: Any) -> Any:
        return self.get()[key]

    def __iter__(self) -> Any:
        return iter(self.get())

    def __len__(self) -> int:
        return len(self.get())


def _forward(op: Callable[[Any, Any], Any], reflected: bool) -> Callable[..., Any]:
    if reflected:
        return lambda self, other: op(other, self.get())
    return lambda self, other: op(self.get(), other)


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and_",
              "or_", "xor", "lshift", "rshift"):
    _dunder = _name.rstrip("_")
    setattr(Optional, f"__{_dunder}__", _forward(getattr(operator, _name), False))
    setattr(Optional, f"__r{_dunder}__", _forward(getattr(operator, _name), True))
for _name in ("lt", "le", "gt", "ge"):
    setattr(Optional, f"__{_name}__", _forward(getattr(operator, _name), False))
def _forward_unary(op: Callable[[Any], Any]) -> Callable[..., Any]:
    return lambda self: op(self.get())


for _name in ("neg", "pos", "abs", "invert"):
    setattr(Optional, f"__{_name}__", _forward_unary(getattr(operator, _name)))


def is_none(value: Any) -> Any:
    """``value is None``: the runtime flag of an optional (reading a variable with no
    value yet is an UnboundLocalError first)."""
    if isinstance(value, Optional):
        if value.unbound is not None:
            value.get()
            return False
        return np.logical_not(value.present)
    return value is None


def is_(left: Any, right: Any) -> Any:
    """``left is right``, with ``is None`` of an optional read at run time."""
    if right is None:
        return is_none(left)
    if left is None:
        return is_none(right)
    return left is right


def is_not(left: Any, right: Any) -> Any:
    result = is_(left, right)
    return np.logical_not(result) if isinstance(result, Tracer) else not result


def unwrap(value: Any) -> Any:
    """An optional's value, for a library function (which cannot take None)."""
    return value.get() if isinstance(value, Optional) else value


class NoneOnAPath(Exception):
    """A body gave None or an optional: the construct must find its optional slots."""


class Unassigned(Exception):
    """A branch left a variable without a value that the other assigns."""


def unbound(state: State, names: Sequence[str], slots: Sequence[int]) -> State:
    """``state`` with each of ``slots`` (a typed placeholder, see
    ``statements.typed_returns``) a variable that has no value yet."""
    out = list(state)
    for i in slots:
        typed = out[i].value if isinstance(out[i], Optional) else out[i]
        out[i] = Optional(_flag(False), _placeholder(typed), unbound=names[i])
    return tuple(out)


def _mixed(value: Any) -> bool:
    return value is None or isinstance(value, Optional)


def check_body(out: State, before: State = ()) -> None:
    """Raise :class:`NoneOnAPath` if a body's new state (or a loop's state before it)
    holds None or an optional."""
    if any(_mixed(v) for v in (*out, *before)):
        raise NoneOnAPath


def _placeholder(like: Any) -> Any:
    """A value of ``like``'s type (weakness too), never read: zeros."""
    if isinstance(like, Tracer):
        zero: Any = np.zeros_like(like)
        zero.weak = like.weak
        return zero
    if isinstance(like, (tuple, list)):
        return sequence_of(type(like), [_placeholder(v) for v in like])
    return like


def _flag(value: bool) -> Tracer:
    return Tracer(as_atom(np.bool_(value)))


class Unified:
    """Which state slots are optional, and the type each one's value has."""

    def __init__(self, templates: dict[int, tuple[Any, str | None]]) -> None:
        self.templates = templates  # slot -> (a value of its type, unbound's name)

    def __bool__(self) -> bool:
        return bool(self.templates)

    def wrap(self, state: State) -> State:
        """``state`` with every optional slot an :class:`Optional`."""
        out = list(state)
        for i, (like, name) in self.templates.items():
            v = out[i]
            if isinstance(v, Optional) or v is UNDEFINED:
                continue
            out[i] = Optional(_flag(False), _placeholder(like), name) if v is None else \
                Optional(_flag(True), _lifted(v), name)
        return tuple(out)

    def body(self, fn: Callable[..., State]) -> Callable[..., State]:
        """``fn`` with its new state wrapped (its last argument is the state)."""
        return lambda *args: self.wrap(fn(*args))


def _lifted(value: Any) -> Any:
    """``value`` with traced leaves, each its value now (an array written in place later
    is a new value then, as every state variable's)."""
    if isinstance(value, (tuple, list)):
        return sequence_of(type(value), [_lifted(v) for v in value])
    if value is None:
        return value
    if isinstance(value, Tracer):
        return Tracer(value.atom, value.dim, value.weak)
    return as_tracer(value)


def unify(state: State, bodies: Sequence[Callable[[State], State]],
          with_before: bool) -> Unified:
    """Trace ``bodies`` aside on ``state`` and find the slots that are None on some
    path (the bodies' results; with ``with_before``, the state before them too, as a
    loop's carry) and a value on another."""
    leaves, structure = flatten(state)
    leaves = [v if v is UNDEFINED else as_tracer(v) for v in leaves]
    afters = [probe(body, [leaves], [structure]) for body in bodies]
    templates: dict[int, tuple[Any, str | None]] = {}
    for i in range(len(state)):
        # the value before a loop first: its type is the outer trace's own
        seen = ([state[i]] if with_before else []) + [a[i] for a in afters]
        seen = [v for v in seen if v is not UNDEFINED]
        values = [v.value if isinstance(v, Optional) else v for v in seen if v is not None]
        names = [v.unbound for v in seen if isinstance(v, Optional) and v.unbound]
        if values and any(_mixed(v) for v in seen):
            templates[i] = (values[0], names[0] if names else None)
    return Unified(templates)


#: What :func:`unify` found, per construct (its bodies' code) and state type, for the
#: kernel being traced (:func:`forget` starts each kernel afresh).
KNOWN: dict[str, Unified] = {}


def _site_key(bodies: Sequence[Any], state: State) -> str:
    """A construct (its bodies' code objects) on a state of this type."""
    leaves, structure = flatten(state)
    types = [(t.aval, t.weak) if isinstance(t, Tracer) else type(t) for t in leaves]
    codes = [getattr(b, "__code__", b) for b in bodies]
    return repr((codes, structure, types))


def known(bodies: Sequence[Any], state: State) -> Unified | None:
    """What :func:`unify` found for this construct on this state type, if anything (no
    key is made while nothing was found: most kernels have no optionals)."""
    return KNOWN.get(_site_key(bodies, state)) if KNOWN else None


def remember(bodies: Sequence[Any], state: State, unified: Unified) -> Unified:
    KNOWN[_site_key(bodies, state)] = unified
    return unified


def forget() -> None:
    KNOWN.clear()
