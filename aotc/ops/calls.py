"""``call[callee] args``: a call of a function the module compiles once.

A kernel inlines the functions it calls, which cannot end for recursion on values known
only at run time (``fib(n - 1) + fib(n - 2)``). Such a function is traced once, for the
kinds of scalar arguments it is called with, into a program of its own (the
:class:`Callee`), and each recursive call is a ``call`` equation: a real call in the
object code, as Numba and Pythran make (see :mod:`aotc.tracing.functions`).

A callee's program calls itself, so it is not a param as loop bodies are (walking the
IR would never end): the param is the :class:`Callee`, compared by identity, printed by
name, whose program is set when its trace ends. :func:`aotc.ir.called_functions` lists
a program's callees. The call has an effect (its function may raise), so DCE keeps it.
"""

from __future__ import annotations

from typing import Any

from ..tracing.avals import AType
from .control import NESTED
from .core import EFFECT, impl_rules, primitive, type_rules

call_p = primitive("call", NESTED, EFFECT)

#: Calls deeper than this raise RecursionError (Python's own limit is 1000; compiled
#: frames are small, so a deeper recursion than Python's still fits the C stack).
DEPTH_LIMIT = 5000


class Callee:
    """A function compiled once: its name in the IR, its scalar result's type, and
    its program (None while it is being traced)."""

    def __init__(self, name: str, result: AType, weak: bool = False) -> None:
        self.name = name
        self.result = result
        self.weak = weak  #: whether its result is a Python number (NEP 50's weak type)
        self.program: Any = None
        #: Whether a call used its guessed result while its body was being traced.
        self.called_early = False
        #: The program after the passes (``aotc.passes.optimize`` sets it).
        self.optimized: Any = None

    def __repr__(self) -> str:
        return self.name


def _call_type(*args: Any, callee: Callee) -> tuple[AType]:
    if any(a.ndim for a in args):
        raise ValueError("call: a compiled function takes scalars")
    return (callee.result,)


def _call_impl(*args: Any, callee: Callee, run: Any, env: Any) -> tuple[Any, ...]:
    """The reference interpreter runs the callee's program with sizes of its own."""
    return tuple(run(callee.program, *args, fresh=True))


type_rules[call_p] = _call_type
impl_rules[call_p] = _call_impl
