"""Tracing plus the NumPy reference interpreter against NumPy itself (no toolchain).

This checks the front end alone: dtype resolution, broadcasting, symbolic shapes,
slicing bounds and decompositions, for every case of the differential catalog.
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy_cases import CASES, check_against_numpy
from numpy_cases_extended import EXTENDED_CASES

from aotc.interpret import RuntimeCheckError, eval_program
from aotc.ir import verify
from aotc.passes import optimize
from aotc.tracing.kernel import trace_kernel
from aotc.types import parse_signature_string


@pytest.mark.parametrize("fuse", [False, True], ids=["unfused", "fused"])
@pytest.mark.parametrize("case", CASES + EXTENDED_CASES, ids=lambda c: c.name)
def test_trace_matches_numpy(case, fuse):
    traced = trace_kernel(case.fn, parse_signature_string(case.signature), name=case.name)
    verify(traced.program)
    program = optimize(traced.program, verify_each=True, fuse=fuse)
    for args in case.inputs:
        # The interpreter runs NumPy's own ufuncs, so only reductions reorder sums.
        check_against_numpy(case, lambda *a: eval_program(program, *a), args)


def test_named_dims_are_checked_at_run_time():
    sig = parse_signature_string("(f8[n], f8[n])")
    program = trace_kernel(lambda x, y: x + y, sig).program
    assert not any(e.prim.name == "broadcast_in_dim" for e in program.eqns)
    with pytest.raises(RuntimeCheckError, match="has size 3 but 'n' is 2") as info:
        eval_program(program, np.zeros(2), np.zeros(3))
    assert info.value.error == "ValueError"


def test_integer_index_out_of_bounds_is_an_index_error():
    program = trace_kernel(lambda x: x[4], parse_signature_string("(f8[:])")).program
    with pytest.raises(RuntimeCheckError, match="index 4 is out of bounds") as info:
        eval_program(program, np.zeros(3))
    assert info.value.error == "IndexError"


def test_max_of_empty_is_a_value_error():
    program = trace_kernel(lambda x: x.max(), parse_signature_string("(f8[:])")).program
    with pytest.raises(RuntimeCheckError, match="zero-size array to reduction operation maximum"):
        eval_program(program, np.zeros(0))


def test_mismatched_symbolic_broadcast_is_checked():
    program = trace_kernel(lambda x, y: x * y, parse_signature_string("(f8[:], f8[:])")).program
    np.testing.assert_array_equal(eval_program(program, np.ones(3), np.full(3, 2.0))[0], 2.0)
    with pytest.raises(RuntimeCheckError, match="could not be broadcast"):
        eval_program(program, np.ones(3), np.ones(4))
