"""The differential catalog's own checks, on kernels wrong on purpose (no compiler).

Every path that runs the catalog (the interpreter in ``test_trace.py``, the JIT in
``test_compiled.py`` and ``codegen/test_inplace.py``) goes through
:func:`numpy_cases.check_against_numpy`, and the codegen tests through
``codegen/data.check_call``: both compare every argument after the call with NumPy's
(or the interpreter's) argument after its own call on a copy of its own, and with a
copy taken before. A kernel that writes into an input it should only read (a buffer
planner reusing an argument as scratch) must fail there, naming the argument.
"""

from __future__ import annotations

import numpy as np
import pytest
from codegen.data import check_call
from numpy_cases import (
    ALIGNMENT,
    CASES,
    assert_arguments_after,
    check_against_numpy,
    copy_arguments,
    outputs_of,
    snapshot,
)
from numpy_cases_extended import EXTENDED_CASES

from aotc.interpret import eval_program
from aotc.tracing.kernel import trace_kernel
from aotc.types import parse_signature_string


def _case(name):
    return next(c for c in CASES + EXTENDED_CASES if c.name == name)


def _numpy_then(case, change):
    """A "kernel" that returns NumPy's results for ``case``, then calls ``change`` on
    the arguments it was given."""
    def run(*args):
        with np.errstate(all="ignore"):
            results = outputs_of(case.fn(*args))
        results = [np.array(r, copy=True) for r in results]  # not views of the arguments
        change(args)
        return results
    return run


def _set(argument, index, value):
    def change(args):
        args[argument][index] = value
    return change


@pytest.mark.parametrize(("name", "argument", "index", "value"), [
    ("add_f8", 1, 5, 1234.5),
    ("add_f8", 0, 0, -0.0),  # the first edge value is 0.0: only the sign bit changes
    ("add_i4", 0, 3, 99),
    ("mul_c16", 1, 2, 1j),
    ("axpy", 2, 0, np.nan),
])
def test_writing_into_an_input_is_caught(name, argument, index, value):
    case = _case(name)
    for args in case.inputs:
        if args[argument].size > index:
            break
    with pytest.raises(AssertionError) as info:
        check_against_numpy(case, _numpy_then(case, _set(argument, index, value)), args)
    message = str(info.value)
    assert message.startswith(f"{name}["), message
    assert f"argument {argument} was written into by the call" in message, message
    assert f"first difference at index ({index},)" in message, message


def test_writing_through_a_reversed_view_is_caught():
    """Copies keep the catalog's layouts: the kernel sees a reversed input, and the
    message names the position it wrote to as the kernel indexes it."""
    case = _case("add_f8")
    args = next(a for a in case.inputs if a[0].strides[0] < 0)
    seen = []

    def change(given):
        seen.append(given[0].strides)
        given[0][0] = 7.0

    with pytest.raises(AssertionError, match=r"argument 0 .* at index \(0,\): .* 7\.0 after"):
        check_against_numpy(case, _numpy_then(case, change), args)
    assert seen == [args[0].strides]


def test_a_wrong_kernel_leaves_the_catalog_alone():
    """A kernel writes into copies: the catalog's own arrays stay as they were."""
    case = _case("add_f8")
    before = [snapshot(args) for args in case.inputs]
    for args in case.inputs:
        check_against_numpy(case, _numpy_then(case, lambda args: None), args)
        if args[0].size:
            with pytest.raises(AssertionError, match="argument 0 was written into"):
                check_against_numpy(case, _numpy_then(case, _set(0, 0, 7.0)), args)
    for args, old in zip(case.inputs, before, strict=True):
        assert_arguments_after("catalog", args, old, old)


def test_writes_must_match_numpys_writes():
    """A case that writes into an argument: the kernel must write what NumPy writes,
    no more and no less."""
    case = _case("augmented_assignment_on_argument")
    args = case.inputs[0]
    check_against_numpy(case, lambda *a: outputs_of(case.fn(*a)), args)  # NumPy itself
    with pytest.raises(AssertionError, match=r"argument 0 after the call differs from the "
                                             r"reference's: first difference at index \(4,\)"):
        check_against_numpy(case, _numpy_then(case, _set(0, 4, 0.25)), args)
    skipped = _numpy_then(case, lambda args: None)

    def without_the_writes(*a):
        return skipped(*snapshot(a))

    with pytest.raises(AssertionError, match="argument 0 after the call differs"):
        check_against_numpy(case, without_the_writes, args)


def test_check_call_catches_a_kernel_writing_into_an_input():
    """The codegen tests' comparison (against the interpreter) is the same one."""
    program = trace_kernel(lambda x, y: x * 2 + y, parse_signature_string("(f8[:], f8[:])"),
                           name="scale").program

    class Kernel:
        def __init__(self, change):
            self.program, self.change = program, change

        def __call__(self, *args):
            results = [np.array(r) for r in eval_program(program, *args)]
            self.change(args)
            return results

    x, y = np.arange(6.0), np.linspace(0, 1, 11)[::-2]
    check_call(Kernel(lambda args: None), x, y)
    with pytest.raises(AssertionError, match=r"scale: argument 1 was written into by the "
                                             r"call.* at index \(2,\)"):
        check_call(Kernel(_set(1, 2, 0.5)), x, y)


def test_copies_keep_layout_aliasing_and_alignment():
    base = np.arange(40.0)
    x = base[3:30:3]
    r = x[::-1]
    b = np.broadcast_to(base[:4], (3, 4))
    m = np.asfortranarray(base.reshape(5, 8))[1:, ::-2]
    args = (x, r, b, m, 2.5, base[:0], np.float32(1))
    copies = copy_arguments(args)
    for a, c in zip(args, copies, strict=True):
        if isinstance(a, np.ndarray):
            assert c.dtype == a.dtype and c.shape == a.shape and c.strides == a.strides
            assert c.flags.writeable == a.flags.writeable
            assert not np.shares_memory(a, c)
            np.testing.assert_array_equal(c, a)
            if a.size:
                assert c.ctypes.data % ALIGNMENT == a.ctypes.data % ALIGNMENT
        else:
            assert c is a
    assert np.shares_memory(copies[0], copies[1])  # x and its reverse: one block
    copies[0][0] = -1.0
    assert copies[1][-1] == -1.0 and x[0] == 3.0
    assert not np.shares_memory(copies[0], copies[3])  # no element in common
