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
(``steps + 1``) are made runtime values too. Only scalars cross a call: a recursion on
arrays is inlined (and refused past a depth or a number of calls).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

import numpy as np

from ..errors import AotcError
from ..ir import Program, Var, verify
from ..ops.calls import Callee, call_p
from .avals import AType
from .tracer import WEAK_TYPES, TraceContext, Tracer, as_tracer, current, tracing

#: A call's kinds: ("traced", dtype, weak) or ("value", type, value) per argument.
Kinds = tuple[Hashable, ...]
#: Traces of a callee's body, at most, before its result type must have settled.
_RETRACES = 4
_ONE_SCALAR = ("'{name}' calls itself on runtime values: it is compiled as a function, "
               "and a compiled recursive function returns one scalar (not a tuple or an "
               "array)")


def kinds(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Kinds | None:
    """What a call is specialized on, or None when it cannot be a compiled call (an
    array argument, or a Python value that is not hashable)."""
    out: list[Hashable] = []
    for name, value in [*enumerate(args), *sorted(kwargs.items())]:
        if isinstance(value, Tracer):
            if value.ndim:
                return None
            out.append((name, "traced", value.dtype.str, value.weak))
            continue
        try:
            hash(value)
        except TypeError:  # (an ndarray among them)
            return None
        out.append((name, "value", type(value).__name__, value))
    return tuple(out)


def promoted(args: tuple[Any, ...], kwargs: dict[str, Any]
             ) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The arguments with Python numbers made runtime values (weak, as Python numbers
    are in NumPy's promotion): a recursion whose Python values never repeat."""
    def runtime(v: Any) -> Any:
        return as_tracer(v) if isinstance(v, WEAK_TYPES) else v
    return tuple(runtime(a) for a in args), {k: runtime(v) for k, v in kwargs.items()}


def call(fn: Callable[..., Any], converted: Callable[..., Any], key: Hashable,
         args: tuple[Any, ...], kwargs: dict[str, Any], calling: list[Any]) -> Tracer:
    """``fn(*args, **kwargs)`` as a ``call`` of its compiled function for ``key``
    (traced now if it is new; ``calling``: the stack of calls being traced)."""
    ctx = current()
    table = ctx.root.callees
    callee = table.get(key)
    if callee is None:
        callee = _traced(fn, converted, key, args, kwargs, calling, table)
    elif callee.program is None:
        callee.called_early = True
    operands = [a for a in (*args, *(kwargs[k] for k in sorted(kwargs)))
                if isinstance(a, Tracer)]
    (var,) = ctx.emit(call_p, [o.atom for o in operands], callee=callee)
    return Tracer(var, weak=callee.weak)


def _traced(fn: Callable[..., Any], converted: Callable[..., Any], key: Hashable,
            args: tuple[Any, ...], kwargs: dict[str, Any], calling: list[Any],
            table: dict[Hashable, Callee]) -> Callee:
    ctx = current()
    # The lowest guess, a Python bool: each trace's result only climbs NumPy's promotion.
    callee = Callee(f"{fn.__name__}${len(table)}", AType(np.dtype(bool), ()), weak=True)
    table[key] = callee  # calls inside the body find it (with the guessed result)
    for _ in range(_RETRACES):
        program, result, weak = _body(callee, converted, key, args, kwargs, calling)
        if (result, weak) == (callee.result, callee.weak):
            callee.program = program
            return callee
        callee.result, callee.weak = result, weak
        # Functions first traced inside this body called it with the old guess: they
        # are traced again, inside the next trace of the body.
        for later in list(table)[list(table).index(key) + 1:]:
            del table[later]
    raise ctx.error(f"'{fn.__name__}' calls itself on runtime values, and the type of its "
                    "result changes with each trace of its body",
                    hint="convert what it returns to one dtype (float(...), np.int64(...))")


def _body(callee: Callee, converted: Callable[..., Any], key: Hashable,
          args: tuple[Any, ...], kwargs: dict[str, Any], calling: list[Any]
          ) -> tuple[Program, AType, bool]:
    """One trace of the callee's body, its arguments made its program's inputs."""
    outer = current()
    here = TraceContext(outer.kernel, function=True, callees=outer.root.callees,
                        stretches=outer.root.stretches)
    inputs: list[Var] = []

    def input_for(value: Any) -> Any:
        if not isinstance(value, Tracer):
            return value
        var = Var(AType(value.dtype, ()))
        inputs.append(var)
        here.defined.add(var)
        return Tracer(var, weak=value.weak)

    new_args = tuple(input_for(a) for a in args)
    new_kwargs = {k: input_for(kwargs[k]) for k in sorted(kwargs)}
    calling.append(key)
    try:
        with tracing(here), np.errstate(all="ignore"):
            try:
                value = converted(*new_args, **new_kwargs)
            except AotcError as err:
                if callee.called_early:  # the guess (a scalar) may be what failed
                    err.hint = "; ".join(filter(None, [err.hint, _ONE_SCALAR.format(
                        name=callee.name.split("$")[0])]))
                raise
            if isinstance(value, (*WEAK_TYPES, np.generic)):
                value = as_tracer(value)
            if not isinstance(value, Tracer) or value.ndim:
                raise here.error(_ONE_SCALAR.format(name=callee.name.split("$")[0]),
                                 hint="return one number, or write the recursion as a loop")
    finally:
        calling.pop()
    program = Program(tuple(inputs), tuple(here.eqns), (value.atom,), name=callee.name)
    verify(program)
    return program, AType(value.dtype, ()), value.weak
