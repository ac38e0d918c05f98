"""Broadcasting decided at run time (aotc.packaging.broadcast_twins), on the IR: which
signatures get a twin, what the first overload checks, and what each computes, run by
the reference interpreter against NumPy. No C toolchain: the compiled twins are tested
in test_python_constructs (the ``plus``... kernels) and through aotc.jit below."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

import aotc
from aotc.interpret import RuntimeCheckError, eval_program
from aotc.pipeline import Overloads
from aotc.types import parse_signature_string


def add(x, y):  # type: ignore[no-untyped-def]
    return x + y


def double(x):  # type: ignore[no-untyped-def]
    return x + x * 2.0


def first_column(x):  # type: ignore[no-untyped-def]
    return x * x[:, :1]


def in_loop(x, y, n):  # type: ignore[no-untyped-def]
    acc = np.zeros_like(x)
    for _ in range(n):
        acc += x * y
    return acc


def _overloads(fn: Any, text: str) -> tuple[Overloads, list[Any]]:
    stages = Overloads(fn, [parse_signature_string(text)])
    return stages, stages.signatures


def _run(stages: Overloads, signatures: list[Any], args: tuple[Any, ...]) -> Any:
    """What the wrapper does: the first overload, or its twin where its checks fail."""
    try:
        (value,) = eval_program(stages(signatures[0]).optimize().program, *args)
    except RuntimeCheckError:
        if len(signatures) == 1:
            raise
        (value,) = eval_program(stages(signatures[1]).optimize().program, *args)
    return value


def test_only_kernels_that_took_sizes_to_be_equal_get_a_twin() -> None:
    assert [s.stretches for s in _overloads(add, "(f8[:], f8[:])")[1]] == [False, True]
    assert [s.stretches for s in _overloads(double, "(f8[:, :],)")[1]] == [False]
    assert [s.stretches for s in _overloads(first_column, "(f8[:, :],)")[1]] == [False, True]


def test_the_first_overload_is_the_equal_size_loop_with_its_checks() -> None:
    stages, signatures = _overloads(in_loop, "(f8[:], f8[:], i8)")
    plain = aotc.trace(in_loop, "(f8[:], f8[:], i8)").program
    first = stages(signatures[0]).program
    # The body's check stays where it runs; P_shapes also checks it, to choose the twin.
    def text(program: Any) -> str:  # (without the lines each equation was traced from)
        return re.sub(r"  # .*", "", str(program))
    assert text(replace(first, checks=plain.checks)) == text(plain)
    assert first.checks[:-1] == plain.checks
    assert str(first.checks[-1].lhs) == "x.0" and str(first.checks[-1].rhs) == "y.0"


CASES = [
    (add, "(f8[:], f8[:])", [(np.arange(3.0), np.arange(3.0)), (np.arange(3.0), np.ones(1)),
                             (np.ones(1), np.arange(4.0)), (np.ones(1), np.ones(0)),
                             (np.ones(0), np.ones(0))]),
    (add, "(f8[:, :], f8[:, :])", [(np.ones((2, 3)), np.arange(2.0).reshape(2, 1)),
                                   (np.arange(3.0).reshape(1, 3), np.ones((4, 1))),
                                   (np.ones((1, 1)), np.ones((0, 5)))]),
    (first_column, "(f8[:, :],)", [(np.arange(6.0).reshape(2, 3),), (np.ones((2, 1)),),
                                   (np.ones((2, 0)),)]),
    (in_loop, "(f8[:], f8[:], i8)", [(np.arange(3.0), np.ones(1), 2),
                                     (np.arange(3.0), np.ones(2), 0)]),
]


@pytest.mark.parametrize(("fn", "text", "calls"), CASES,
                         ids=[f"{c[0].__name__}{c[1]}" for c in CASES])
def test_the_overload_and_its_twin_give_numpys_result(fn: Any, text: str,
                                                      calls: list[Any]) -> None:
    stages, signatures = _overloads(fn, text)
    for args in calls:
        want = fn(*args)
        got = _run(stages, signatures, args)
        assert got.shape == want.shape and got.dtype == want.dtype, args
        np.testing.assert_array_equal(got, want)  # the same additions: exact


def test_sizes_that_do_not_broadcast_raise_numpys_value_error_in_the_twin() -> None:
    stages, signatures = _overloads(add, "(f8[:, :], f8[:, :])")
    source: Any = add
    with pytest.raises(ValueError, match="could not be broadcast"):
        source(np.ones((2, 3)), np.ones((3, 1)))
    with pytest.raises(RuntimeCheckError, match="could not be broadcast together: size 2 "
                                                "against size 3"):
        _run(stages, signatures, (np.ones((2, 3)), np.ones((3, 1))))


def test_aotc_jit_runs_the_twin_and_keeps_the_plain_loop_for_equal_sizes() -> None:
    jitted = aotc.jit(aotc.export("(f8[:, :], f8[:, :])")(add))
    x, col = np.arange(6.0).reshape(2, 3), np.array([[10.0], [20.0]])
    np.testing.assert_array_equal(jitted(x, col), x + col)
    np.testing.assert_array_equal(jitted(col, x), col + x)
    np.testing.assert_array_equal(jitted(x, x), x + x)
    with pytest.raises(ValueError, match="could not be broadcast together"):
        jitted(x, np.ones((3, 3)))
