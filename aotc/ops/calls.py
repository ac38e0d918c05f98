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

Arrays cross a call by reference, as in Python: the callee's program reads each array
argument with sizes of its own (its ``dim_sources``), and what it writes into one is a
write into that argument (its ``writebacks``, as a kernel's). In the caller the call
makes a new version of each argument it writes, after the scalar results (param
``written``, printed only when there is one: their positions among the operands): an
update of those operands, which the buffer plan does in the operand's own buffer when
nothing reads the old value after.

A function returns what Python code does: a number, None, an array it was given
(mergesort's ``return arr``), an array it makes (a recursive FFT's ``np.concatenate``),
or a tuple of these. The program's outputs are its numbers (a placeholder when there
are none) and the arrays it makes, each padded to an upper bound of its size in the
function's own size symbols, with its actual sizes as numbers: the caller plans a
buffer of that bound (its operands' sizes put in), and keeps the front of it, as a
kernel's caller does for a result sized while the kernel runs. :attr:`Callee.returned`
says how the call site puts the Python value back together.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..shapes import substitute_symbols
from ..tracing.avals import AType
from .control import NESTED
from .core import EFFECT, impl_rules, primitive, type_rules

call_p = primitive("call", NESTED, EFFECT)

#: Calls deeper than this raise RecursionError (Python's own limit is 1000; compiled
#: frames are small, so a deeper recursion than Python's still fits the C stack).
DEPTH_LIMIT = 5000


@dataclass(frozen=True)
class Result:
    """In :attr:`Callee.returned`: the function's scalar output ``index``."""

    index: int


@dataclass(frozen=True)
class Argument:
    """In :attr:`Callee.returned`: the array the call passed as operand ``index``."""

    index: int


@dataclass(frozen=True)
class Made:
    """In :attr:`Callee.returned`: an array the function makes, output ``index`` padded
    to its bound, whose actual sizes are the outputs ``sizes``."""

    index: int
    sizes: tuple[int, ...]


#: What a compiled function returns, as the call site rebuilds it: None, a
#: :class:`Result`, an :class:`Argument`, a :class:`Made`, or a tuple of these.
Returned = Any


class Callee:
    """A function compiled once: its name in the IR, its results' types (an array's
    sizes in the function's own size symbols), and its program (None while it is being
    traced)."""

    def __init__(self, name: str, results: tuple[AType, ...],
                 weak: tuple[bool, ...] = (False,)) -> None:
        self.name = name
        self.results = results
        self.weak = weak  #: whether each result is a Python number (NEP 50's weak type)
        #: The Python value a call gives back, built from the results and operands.
        self.returned: Returned = Result(0)
        #: The positions, among its operands, of the array arguments it writes into.
        self.written: tuple[int, ...] = ()
        self.program: Any = None
        #: Whether the bounds of the arrays it makes are its first array's sizes.
        self.pinned = False
        #: Its size symbols: the (operand, axis) each is the size of.
        self.sizes: dict[str, tuple[int, int]] = {}
        #: Whether a call used its guessed result while its body was being traced.
        self.called_early = False
        #: The program after the passes (``aotc.passes.optimize`` sets it).
        self.optimized: Any = None

    def __repr__(self) -> str:
        return self.name


def written(eqn: Any) -> tuple[int, ...]:
    """The operand positions of the arrays a ``call`` equation's function writes into
    (its outputs after the scalar results, in order: see :func:`first_written`)."""
    found: tuple[int, ...] = eqn.params.get("written", ())
    return found


def first_written(eqn: Any) -> int:
    """The position, among a ``call`` equation's outputs, of its first written array."""
    return len(eqn.params["callee"].results)


def _call_type(*args: AType, callee: Callee, written: tuple[int, ...] = ()
               ) -> tuple[AType, ...]:
    if any(not args[k].ndim for k in written):
        raise ValueError("call: a compiled function writes into arrays only")
    sizes = {name: (lambda _, k=k, axis=axis: args[k].shape[axis])
             for name, (k, axis) in callee.sizes.items()}
    results = tuple(AType(t.dtype, tuple(substitute_symbols(d, sizes) for d in t.shape))
                    for t in callee.results)
    return (*results, *(args[k] for k in written))


def _call_impl(*args: Any, callee: Callee, run: Any, env: Any, written: tuple[int, ...] = ()
               ) -> tuple[Any, ...]:
    """The reference interpreter runs the callee's program with sizes of its own, on
    copies of the arrays it writes (the operands are values), which it returns."""
    args = tuple(np.array(a, copy=True) if k in written else a for k, a in enumerate(args))
    results = run(callee.program, *args, fresh=True)
    return (*results, *(args[k] for k in written))


type_rules[call_p] = _call_type
impl_rules[call_p] = _call_impl
