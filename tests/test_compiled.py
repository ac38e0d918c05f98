"""The differential catalog compiled to machine code (in-process JIT) against NumPy.

Same kernels and inputs as ``test_trace.py``, but through codegen: loops, strides,
scalar lowering rules. The JIT calls the same C entry points as the wrapper.
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy_cases import CASES, assert_same, outputs_of

from aotc.codegen import jit
from aotc.passes import optimize
from aotc.trace import trace_kernel
from aotc.types import parse_signature_string


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_compiled_matches_numpy(case):
    traced = trace_kernel(case.fn, parse_signature_string(case.signature), name=case.name)
    kernel = jit.JitKernel(optimize(traced.program))
    for args in case.inputs:
        with np.errstate(all="ignore"):
            expected = outputs_of(case.fn(*args))
        got = kernel(*args)
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            assert_same(g, np.asarray(e), case.ulps, f"{case.name}{[np.shape(a) for a in args]}")
