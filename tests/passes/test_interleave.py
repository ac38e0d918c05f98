"""Slice writes of views that tile a fresh array become one ``concatenate``
(:mod:`aotc.passes.interleave`): which chains are rewritten (IR only), and that the
compiled kernels, with the one-pass lowering of a thin last axis and the block-by-block
one otherwise, give NumPy's arrays exactly (they only move values)."""

from __future__ import annotations

import numpy as np
import pytest

from aotc.codegen.core.jit import JitLibrary
from aotc.interpret import eval_program
from aotc.ir import Program
from aotc.passes import optimize
from aotc.tracing.kernel import trace_kernel
from aotc.types import parse_signature_string


def fill_last3(x, y):
    n = x.shape[0]
    out = np.empty((n, n, 3))
    out[..., 0] = x[:, None]
    out[..., 1] = y[None, :]
    out[..., 2] = 1.0
    return out


def out_of_order(x, y):
    out = np.zeros((x.shape[0], 3), dtype=np.float32)
    out[:, 2] = x
    out[:, 0] = y[::-1]
    out[:, 1] = -1.0
    return out


def computed_operand(x):
    """``x * 2.0`` is computed straight into its block: no concatenate, no temporary."""
    out = np.empty((x.shape[0], 2))
    out[:, 0] = x
    out[:, 1] = x * 2.0
    return out


def pairs_then_one(p, z):
    out = np.empty((p.shape[0], 3))
    out[:, :2] = p
    out[:, 2] = z
    return out


def rows_in_blocks(a, b):
    out = np.full((5, a.shape[1]), 7.0)
    out[2:] = b
    out[:2] = a
    return out


def wide_last_axis(a, b):
    out = np.empty((a.shape[0], 20))
    out[:, :10] = a
    out[:, 10:] = b
    return out


def leaves_a_gap(x):
    out = np.zeros((x.shape[0], 3))
    out[:, 0] = x
    out[:, 2] = x
    return out


def overlapping(x):
    out = np.zeros((x.shape[0], 3))
    out[:, 0:2] = x[:, None]
    out[:, 1] = 5.0
    out[:, 2] = 6.0
    return out


def strided(x):
    out = np.zeros((x.shape[0], 4))
    out[:, ::2] = x[:, None]
    out[:, 1::2] = 1.0
    return out


def base_read_too(x):
    base = np.zeros((x.shape[0], 2))
    out = base.copy()
    out[:, 0] = x
    out[:, 1] = x
    return out + base.sum()


KERNELS = {
    fill_last3: "(f8[:], f8[:])",
    out_of_order: "(f4[:], f4[:])",
    pairs_then_one: "(f8[:, 2], f8[:])",
    rows_in_blocks: "(f8[2, :], f8[3, :])",
    wide_last_axis: "(f8[:, 10], f8[:, 10])",
    leaves_a_gap: "(f8[:])",
    overlapping: "(f8[:])",
    strided: "(f8[:])",
    base_read_too: "(f8[:])",
    computed_operand: "(f8[:])",
}
REWRITTEN = {"fill_last3": 2, "out_of_order": 1, "pairs_then_one": 1, "rows_in_blocks": 0,
             "wide_last_axis": 1}


def _program(fn) -> Program:
    return optimize(trace_kernel(fn, parse_signature_string(KERNELS[fn])).program,
                    verify_each=True)


def _names(program: Program) -> list[str]:
    return [e.prim.name for e in program.eqns]


@pytest.mark.parametrize("fn", list(KERNELS), ids=lambda f: f.__name__)
def test_only_chains_that_tile_a_fresh_array_become_a_concatenate(fn) -> None:
    names = _names(_program(fn))
    if fn.__name__ in REWRITTEN:
        (cat,) = [e for e in _program(fn).eqns if e.prim.name == "concatenate"]
        assert cat.params["axis"] == REWRITTEN[fn.__name__]
        assert "update_slice" not in names
    else:
        assert "concatenate" not in names and "update_slice" in names


def test_operands_come_in_the_order_of_their_blocks() -> None:
    (cat,) = [e for e in _program(out_of_order).eqns if e.prim.name == "concatenate"]
    widths = [a.type.shape[1].value for a in cat.inputs]
    assert widths == [1, 1, 1]
    got = eval_program(_program(out_of_order), np.array([1.0, 2.0], np.float32),
                       np.array([3.0, 4.0], np.float32))[0]
    assert np.array_equal(got, out_of_order(np.array([1.0, 2.0], np.float32),
                                            np.array([3.0, 4.0], np.float32)))


@pytest.fixture(scope="module")
def kernels():
    programs = {fn: _program(fn) for fn in KERNELS}
    library = JitLibrary(list(programs.values()))
    return dict(zip(programs, library.kernels, strict=True))


def test_compiled_results_are_numpys(kernels) -> None:
    rng = np.random.default_rng(4)
    for n in (0, 1, 7, 33):
        x, y = rng.standard_normal(n), rng.standard_normal(n)
        cases = {
            fill_last3: (x, y),
            out_of_order: (x.astype(np.float32), y.astype(np.float32)),
            pairs_then_one: (rng.standard_normal((n, 2))[::-1], y),
            rows_in_blocks: (rng.standard_normal((2, n)), rng.standard_normal((3, n)).T.copy().T),
            wide_last_axis: (rng.standard_normal((n, 10)), rng.standard_normal((n, 10))),
            leaves_a_gap: (x,), overlapping: (x,), strided: (x,), base_read_too: (x,),
            computed_operand: (x,),
        }
        for fn, args in cases.items():
            (got,) = kernels[fn](*args)
            want = fn(*args)
            assert got.dtype == want.dtype and np.array_equal(got, want), (fn.__name__, n)
