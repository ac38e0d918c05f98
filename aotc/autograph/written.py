"""Variables whose items a loop or branch writes without assigning them: ``e[j] = v``.

Such a variable is in the construct's state (see ``transform._state``) so that a Python
list can be carried: a list of numbers becomes an array standing for it
(``numpy_api.pylists``), written at constant or runtime indices, and is that array after
the construct (before this, the body wrote its own values into the outer Python list).
A dict is carried as a pytree of its values. An array is not carried (writes into
arrays made outside a body are carried by :mod:`aotc.tracing.bodies`): it passes through the
construct as :class:`Outer`, a pytree with no leaves, and the body sees the object
itself. Any other object is a build error (its writes could not be seen after).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..tracing.bodies import UNDEFINED, expect_writes
from ..tracing.tracer import Tracer, current

State = tuple[Any, ...]


class Outer:
    """A written variable that is not carried (its structure is itself: identity)."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def tree_flatten(self) -> tuple[list[Any], Outer]:
        return [], self

    @classmethod
    def tree_unflatten(cls, meta: Outer, leaves: list[Any]) -> Outer:
        return meta


class Written:
    """The slots of a construct's state that are written variables, and how the state
    goes in and out of its bodies."""

    def __init__(self, state: State, names: Sequence[str], written: Sequence[str],
                 lifted: Callable[[Any], Any]) -> None:
        self.slots = [names.index(n) for n in written]
        out = list(state)
        for i in self.slots:  # a list: an array standing for it, or itself (a pytree)
            value = out[i]
            if isinstance(value, list):
                out[i] = lifted(value)
            elif hasattr(type(value), "tree_flatten"):
                continue  # aotc's own pytrees (a list being appended to, an optional)
            elif not isinstance(value, (dict, Tracer)) and value is not UNDEFINED:
                raise current().error(
                    f"the {type(value).__name__} '{names[i]}' is changed in place in a loop "
                    "or branch that runs at run time, where its changes could not be kept",
                    hint="use an array (or a list or dict written by index)")
            elif not isinstance(value, dict):  # a dict is carried as a pytree of its values
                out[i] = Outer(value)
        self.state: State = tuple(out)
        self.outer = {i: v for i, v in enumerate(self.state) if isinstance(v, Outer)}
        expect_writes([v.value for v in self.outer.values() if isinstance(v.value, Tracer)])

    def inside(self, state: State) -> State:
        """The state as the body's code sees it."""
        return tuple(v.value if isinstance(v, Outer) else v for v in state)

    def outside(self, state: State) -> State:
        """The body's new state, its pass-through variables wrapped again."""
        return tuple(self.outer[i] if i in self.outer and v is self.outer[i].value else v
                     for i, v in enumerate(state))

    def body(self, fn: Callable[..., State]) -> Callable[..., State]:
        """``fn(*lead, state)`` between :meth:`inside` and :meth:`outside`."""
        return lambda *args: self.outside(fn(*args[:-1], self.inside(args[-1])))

    def test(self, fn: Callable[[State], Any]) -> Callable[[State], Any]:
        return lambda state: fn(self.inside(state))
