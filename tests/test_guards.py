"""Raises on sizes run before the size checks of the code after them (aotc.guards):
which raises become checks, in order, and which stop that. IR only."""

from __future__ import annotations

from aotc.frontend import trace_kernel
from aotc.types import parse_signature_string


def checks_of(fn, signature: str) -> list[tuple[str, str, str, str]]:
    program = trace_kernel(fn, parse_signature_string(signature)).program
    return [(c.op, str(c.lhs), str(c.rhs), c.error) for c in program.checks]


def guarded(x, y):
    if x.shape[0] < 3:
        raise ValueError("need three")
    assert not (len(y) > len(x) - 1), "y too long"
    return x[2] + y[0]


def data_first(x):
    if x[0] < 0:  # a test of values: the checks after it cannot run before it
        raise ValueError("negative")
    if x.shape[0] < 3:
        raise ValueError("need three")
    return x[2]


def test_size_guards_become_checks_in_order():
    assert checks_of(guarded, "f8(f8[:], f8[:])") == [
        (">=", "x.0", "3", "ValueError"),  # not (x.0 < 3)
        ("<=", "y.0", "x.0 - 1", "AssertionError"),  # not (y.0 > x.0 - 1)
        ("<", "2", "x.0", "IndexError"),  # x[2]
        ("<", "0", "y.0", "IndexError")]  # y[0]


def test_a_raise_on_values_keeps_the_guards_after_it_in_place():
    checks = checks_of(data_first, "f8(f8[:])")
    assert [c[3] for c in checks] == ["IndexError", "IndexError"]  # x[0], x[2]


def empty_refused(x):
    if x.shape[0] == 0:  # == on a size that is never negative: x.shape[0] >= 1
        raise ValueError("empty")
    return x[0]


def test_an_equality_guard_on_a_size_becomes_a_check_before_the_index_check():
    assert checks_of(empty_refused, "f8(f8[:])") == [
        (">=", "x.0", "1", "ValueError"), ("<", "0", "x.0", "IndexError")]
