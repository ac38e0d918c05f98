"""Which of NumPy's gufunc loops (:mod:`aotc.ops.numpy_loops`) a program calls: what its
module resolves at import, and what ``aotc.jit`` resolves before linking it."""

from __future__ import annotations

from ..ir import Program, nested_programs
from ..ops.external import numpy_loop_p


def numpy_loops_called(program: Program) -> set[str]:
    """The NumPy gufunc loops a program calls, by name (what its module resolves)."""
    found: set[str] = set()
    for eqn in program.eqns:
        if eqn.prim is numpy_loop_p:
            found.add(eqn.params["loop"])
        for body in nested_programs(eqn):
            found |= numpy_loops_called(body)
    return found

