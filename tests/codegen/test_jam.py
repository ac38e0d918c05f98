"""The kernels of ``tests/jam_kernels.py`` compiled in one library: every result,
and every argument written, is the uncompiled one bit for bit (each output's sum keeps
Python's order; only the outputs' chains run side by side)."""

from __future__ import annotations

import numpy as np
import pytest
from jam_kernels import CASES

from aotc.codegen.core.jit import JitLibrary
from aotc.passes import optimize
from aotc.passes.jam import UNROLL
from aotc.tracing.kernel import trace_kernel
from aotc.types import parse_signature_string


@pytest.fixture(scope="module")
def kernels():
    programs = [optimize(trace_kernel(fn, parse_signature_string(sig), name=name).program)
                for name, (fn, sig, _) in CASES.items()]
    return dict(zip(CASES, JitLibrary(programs).kernels, strict=True))


@pytest.mark.parametrize("name", list(CASES))
def test_compiled_results_are_the_uncompiled_ones_bit_for_bit(kernels, name):
    fn, _, make = CASES[name]
    rng = np.random.default_rng(4)
    for n in [*range(0, 3 * UNROLL + 2), 37, 64]:
        args = make(rng, n)
        want_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        want = fn(*want_args)
        got = kernels[name](*args)
        if want is not None:
            assert np.array_equal(np.asarray(got[0]), np.asarray(want)), (name, n)
        for a, w in zip(args, want_args, strict=True):
            assert np.array_equal(np.asarray(a), np.asarray(w)), (name, n)
