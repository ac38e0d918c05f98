"""Unroll and jam (:mod:`aotc.passes.jam`): which loops it runs four iterations at a
time, and that each result is the uncompiled one bit for bit. IR only: traced,
optimized (verified after every pass) and interpreted; ``tests/codegen/test_jam.py``
runs the same kernels compiled."""

from __future__ import annotations

import numpy as np
import pytest
from builder import optimized
from jam_kernels import CASES, JAMMED

from aotc.interpret import eval_program
from aotc.ir import Eqn, Program, nested_programs
from aotc.passes.jam import UNROLL


def _jammed(program: Program) -> list[Eqn]:
    """The jammed loops: each followed by the loop of the rest, which takes its results
    as carries and one constant fewer (the jammed loop's ``lo``)."""
    found = []
    for first, then in zip(program.eqns, program.eqns[1:], strict=False):
        if first.prim.name == then.prim.name == "for_loop" and first.outs \
                and then.inputs[-len(first.outs):] == first.outs \
                and first.params["n_consts"] == then.params["n_consts"] + 1:
            found.append(first)
    for eqn in program.eqns:
        for nested in nested_programs(eqn):
            found += _jammed(nested)
    return found


@pytest.mark.parametrize("name", list(CASES))
def test_which_loops_are_jammed(name):
    fn, signature, _ = CASES[name]
    program = optimized(fn, signature)
    assert bool(_jammed(program)) == (name in JAMMED)


@pytest.mark.parametrize("name", list(CASES))
def test_results_are_the_uncompiled_ones_bit_for_bit(name):
    """Every outer trip count around a multiple of UNROLL, the jammed loop and the
    loop of the rest."""
    fn, signature, make = CASES[name]
    program = optimized(fn, signature)
    rng = np.random.default_rng(3)
    for n in range(0, 3 * UNROLL + 2):
        args = make(rng, n)
        want_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        want = fn(*want_args)
        got = eval_program(program, *args)
        if want is not None:
            assert np.array_equal(np.asarray(got[0]), np.asarray(want)), (name, n)
        for a, w in zip(args, want_args, strict=True):  # arguments written alike
            assert np.array_equal(np.asarray(a), np.asarray(w))
