"""``convert`` between every pair of dtypes, against ``ndarray.astype``.

Float -> int of NaN, inf and out-of-range values is platform behaviour in NumPy; the
code generator reproduces x86-64 NumPy (see ``aotc/codegen/elementwise/convert.py``), and these
tests pin that down so a change is noticed. Complex -> unsigned of such values is not
even consistent within NumPy (its complex64 -> uint32 loop gives 2**31 for NaN in its
vector body and 0 in its scalar tail), so those are checked in the defined range only.
"""

from __future__ import annotations

import platform

import numpy as np
import pytest

from aotc.codegen.core.jit import JitLibrary
from aotc.interpret import eval_program

from .data import DTYPES, assert_same, edge_values
from .programs import unary

PAIRS = [(s, d) for s in DTYPES for d in DTYPES]
X86 = platform.machine() in ("x86_64", "AMD64")


def _inputs(src: np.dtype) -> np.ndarray:
    values = edge_values(src)
    if src.kind == "f":
        extra = [300.7, -300.7, 3e9, -3e9, 2.0**31 - 0.5, -(2.0**31) - 0.5, 2.0**31,
                 2.0**32, 2.0**63, -(2.0**63), 2.0**64, 1.8e19, 65535.9, -1.5, 255.5, 127.9,
                 -128.9, 4294967295.0]
        values = np.concatenate([values, np.array(extra, src)])
    return values


@pytest.fixture(scope="module")
def kernels():
    library = JitLibrary([unary("convert", s, dtype=d) for s, d in PAIRS])
    return dict(zip(PAIRS, library.kernels, strict=True))


@pytest.mark.parametrize(("src", "dst"), PAIRS, ids=[f"{s}->{d}" for s, d in PAIRS])
def test_convert_matches_astype(kernels, src, dst):
    kernel = kernels[(src, dst)]
    x = _inputs(src)
    if (src.kind == "f" and dst.kind in "iu" and not X86) or (src.kind == "c" and dst.kind == "u"):
        info = np.iinfo(dst)
        re = x.real
        x = x[np.isfinite(re) & (re > info.min - 1) & (re < info.max + 1)]  # defined range
    for k in (0, len(x) - 1):
        got, want = kernel(x, x[k]), eval_program(kernel.program, x, x[k])
        for j in range(2):
            assert_same(got[j], want[j], what=f"{src}->{dst} output {j}")
