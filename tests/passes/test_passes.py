"""Each pass on a small program: the IR text before and after, and the verifier."""

from __future__ import annotations

import numpy as np
from builder import Builder, lit, vec

from aotc.interpret import eval_program
from aotc.ir import verify
from aotc.passes import constant_fold, cse, dce, optimize


def _body(program) -> list[str]:
    """The equation lines (not the header, sizes, argument orders or the end)."""
    lines = [line.strip() for line in str(program).splitlines()[1:-1]]
    return [line for line in lines if not line.startswith(("size ", "orders "))]


def test_constant_fold_evaluates_literal_equations():
    b = Builder(vec())
    (x,) = b.inputs
    six = b("mul", lit(2.0), lit(3.0))
    root = b("sqrt", six)
    y = b("add", x, root)
    before = b.program(y)
    after = constant_fold(before)
    verify(after)
    assert _body(after) == [f"b:f64[x.0] = add a {float(np.sqrt(6.0))!r}:f64"]
    data = np.arange(4.0)
    np.testing.assert_array_equal(eval_program(after, data)[0], eval_program(before, data)[0])


def test_constant_fold_keeps_integer_wraparound():
    from aotc.ir import Lit

    b = Builder(vec())
    big = Lit(np.iinfo(np.int8).max, np.dtype("i1"))
    wrapped = b("add", big, Lit(1, np.dtype("i1")))
    after = constant_fold(b.program(wrapped))
    assert after.outputs == (Lit(-128, np.dtype("i1")),) and after.eqns == ()


def test_cse_merges_equal_equations_and_commuted_operands():
    b = Builder(vec(), vec())
    x, y = b.inputs
    s1 = b("add", x, y)
    s2 = b("add", y, x)
    e1 = b("exp", s1)
    e2 = b("exp", s2)
    out = b("mul", e1, e2)
    after = cse(b.program(out))
    verify(after)
    assert _body(after) == [
        "c:f64[x.0] = add a b",
        "d:f64[x.0] = exp c",
        "e:f64[x.0] = mul d d",
    ]


def test_cse_distinguishes_params():
    b = Builder(vec())
    (x,) = b.inputs
    t1 = b("convert", x, dtype=np.dtype("f4"))
    t2 = b("convert", x, dtype=np.dtype("i4"))
    after = cse(b.program(t1, t2))
    assert len(after.eqns) == 2


def test_dce_removes_unused_chains_only():
    b = Builder(vec())
    (x,) = b.inputs
    dead = b("exp", x)
    b("log", dead)
    live = b("neg", x)
    after = dce(b.program(live))
    verify(after)
    assert _body(after) == ["b:f64[x.0] = neg a"]


def test_pipeline_verifies_after_every_pass():
    b = Builder(vec())
    (x,) = b.inputs
    one = b("add", lit(0.5), lit(0.5))
    y = b("mul", x, one)
    z = b("mul", x, one)
    b("exp", z)
    out = b("add", y, z)
    after = optimize(b.program(out), verify_each=True, fuse=False)
    assert _body(after) == ["b:f64[x.0] = mul a 1.0:f64", "c:f64[x.0] = add b b"]
