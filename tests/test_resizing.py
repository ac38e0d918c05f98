"""Arrays a runtime loop resizes (aotc.autograph.resizing): which sizes fit the buffer
they start in, the room one that grows in a ``for`` loop gets, and the located errors
for one that grows in a ``while`` loop or is written while it is resized. IR only;
``test_python_constructs.py`` runs such kernels."""

from __future__ import annotations

import numpy as np
import pytest

from aotc.autograph.resizing import at_most
from aotc.errors import TraceError
from aotc.shapes import DimExpr, relu
from aotc.tracing.kernel import trace_kernel
from aotc.types import parse_signature_string

N = DimExpr.sym("n")


@pytest.mark.parametrize(("a", "b", "holds"), [
    (relu(N - 1), N, True),
    ((N + 1) // 2, N, True),
    (relu(relu(N - 2) - 1), N, True),
    (N, DimExpr.sym("m") + relu(N - DimExpr.sym("m")), True),
    (N + 1, N, False),
    ((N + 3) // 2, N, False),  # 2 > 1 at n = 1
    ((N + 4) // 5, N, True),  # a ceiling division
    ((N + 5) // 5, N, False),  # 1 > 0 at n = 0
])
def test_at_most_proves_what_holds_for_every_size(a, b, holds):
    assert at_most(a, b) is holds
    if holds:  # and it does hold where checked
        assert all(a.evaluate({"n": n, "m": m}) <= b.evaluate({"n": n, "m": m})
                   for n in range(30) for m in range(5))


def grows(x):
    out = np.zeros(0)
    i = 0
    while i < x.shape[0]:  # how often is not known while tracing: no room to plan
        out = np.append(out, x[i])
        i += 2
    return out


def writes_while_shrinking(x):
    while x.shape[0] > 2:
        x = x[1:]
        x[0] = 0.0
    return x


@pytest.mark.parametrize(("fn", "message", "line"), [
    (grows, "the loop resizes 'out' beyond the size it starts with", "in kernel 'grows'"),
    (writes_while_shrinking, "the loop writes into 'x', which it also resizes", "x[0] = 0.0"),
])
def test_what_cannot_be_carried_resized_is_a_located_error(fn, message, line):
    with pytest.raises(TraceError) as err:
        trace_kernel(fn, parse_signature_string("f8[:](f8[:])"))
    text = str(err.value)
    assert message in text and "test_resizing.py" in text and "hint:" in text
    assert line in text  # the source line, under the location


def halves(x):
    while x.shape[0] > 1:
        x = x[: x.shape[0] // 2]
    return x


def test_a_shrinking_array_is_carried_in_a_buffer_of_its_start():
    program = trace_kernel(halves, parse_signature_string("f8[:](f8[:])")).program
    (loop,) = [e for e in program.eqns if e.prim.name == "while_loop"]
    buffers = [a for a in loop.inputs if a.type.ndim]
    assert [str(b.type) for b in buffers] == ["f64[x.0]"]


def appends(x):
    out = np.zeros(1)
    for v in x:
        if v > 0.5:
            out = np.append(out, v)
    return out


def test_an_array_growing_in_a_for_loop_gets_room_for_one_step_per_iteration():
    program = trace_kernel(appends, parse_signature_string("f8[:](f8[:])")).program
    (loop,) = [e for e in program.eqns if e.prim.name == "for_loop"]
    (buffer,) = [a for a in loop.inputs if a.type.ndim and a not in program.inputs]
    (room,) = buffer.type.shape
    assert [room.evaluate({"x.0": n}) for n in (0, 1, 7)] == [1, 2, 8]


def test_a_branch_that_keeps_a_resized_array_copies_nothing():
    """``if v > 0.5: out = np.append(out, v)``: the branch that leaves ``out`` hands the
    loop's buffer back as it is, the other writes a new version of that same buffer
    (no buffer of the room's size is filled), and after the branch the loop carries
    the buffer the branch gave."""
    from aotc.passes import optimize

    program = optimize(trace_kernel(appends, parse_signature_string("f8[:](f8[:])")).program)
    loops = [e for e in program.eqns if e.prim.name == "for_loop"]
    loops += [e for c in program.eqns if c.prim.name == "cond"
              for b in c.params["branches"] for e in b.eqns if e.prim.name == "for_loop"]
    assert loops
    for loop in loops:
        body = loop.params["body"]
        (branch,) = [e for e in body.eqns if e.prim.name == "cond"]
        kept, appended = branch.params["branches"]
        assert kept.eqns == () and kept.outputs[0] is kept.inputs[0]
        assert not any(e.prim.name == "broadcast_in_dim" and not e.inputs[0].type.ndim
                       for e in appended.eqns)
        assert body.outputs[0] is branch.outs[0]  # no copy into the carried buffer
