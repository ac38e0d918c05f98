"""Raises on sizes run before the size checks of the code after them (aotc.tracing.guards):
which raises become checks, in order, and which stop that. IR only."""

from __future__ import annotations

from aotc.tracing.kernel import trace_kernel
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


def inline_checks(fn, signature: str) -> list[tuple[str, str, str, str]]:
    program = trace_kernel(fn, parse_signature_string(signature)).program
    return [(e.params["op"], str(e.params["lhs"]), str(e.params["rhs"]), e.params["error"])
            for e in program.eqns if e.prim.name == "check"]


def test_a_raise_on_values_keeps_the_checks_after_it_in_place():
    # x[0] runs before the raise; the size guard and x[2] stay after it, where they run
    assert checks_of(data_first, "f8(f8[:])") == [("<", "0", "x.0", "IndexError")]
    assert inline_checks(data_first, "f8(f8[:])") == [("<", "2", "x.0", "IndexError")]


def message_shows_size(x):
    if x.shape[0] == 0:
        raise ValueError(f"empty: {x.shape[0]}")
    return x[0]


def percent_message(x):
    assert x.shape[0] > 1, "need two, got %d" % x.shape[0]  # noqa: UP031
    return x[1]


def test_a_guard_whose_message_shows_runtime_values_runs_before_the_check_after_it():
    for fn in (message_shows_size, percent_message):
        assert checks_of(fn, "f8(f8[:])") == []
        assert [c[3] for c in inline_checks(fn, "f8(f8[:])")] == ["IndexError"]


def empty_refused(x):
    if x.shape[0] == 0:  # == on a size that is never negative: x.shape[0] >= 1
        raise ValueError("empty")
    return x[0]


def test_an_equality_guard_on_a_size_becomes_a_check_before_the_index_check():
    assert checks_of(empty_refused, "f8(f8[:])") == [
        (">=", "x.0", "1", "ValueError"), ("<", "0", "x.0", "IndexError")]
