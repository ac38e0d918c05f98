"""Snapshots and write-backs: a row swap through a saved row, and ``a[s] -= x`` on a
block, update the matrix in place instead of copying it (IR and buffer plan only; the
compiled kernels are in tests/test_copies_and_rolls.py)."""

from __future__ import annotations

import numpy as np
import pytest
from builder import eqns_named, optimized

from aotc.codegen.memory.inplace import plan_buffers
from aotc.codegen.memory.planner import Update
from aotc.interpret import eval_program


def swap(a, pairs):
    a = a.copy()
    for k in range(pairs.shape[0]):
        i, j = pairs[k, 0], pairs[k, 1]
        row = a[i].copy()
        a[i] = a[j]
        a[j] = row
    return a


def swap_view(a, pairs):
    a = a.copy()
    for k in range(pairs.shape[0]):
        i, j = pairs[k, 0], pairs[k, 1]
        row = a[i]  # a view: it sees the first write
        a[i] = a[j]
        a[j] = row
    return a


def block_update(a, k):
    a = a.copy()
    a[k + 1:, k + 1:] -= np.outer(a[k + 1:, k], a[k, k + 1:])
    return a


@pytest.mark.parametrize("fn", [swap, swap_view])
def test_a_saved_row_is_copied_and_the_matrix_updated_in_place(fn):
    """In the loop, the matrix is the loop's own buffer: every write goes into it."""
    program = optimized(fn, "f8[:, :](f8[:, :], i8[:, :])")
    updates = eqns_named(program, "update_slice")
    plan = plan_buffers(program)
    assert updates and all(plan.updates.get(e) in (Update.INPLACE, Update.STAGED)
                           for e in updates)  # none copies the matrix
    a = np.arange(12.0).reshape(3, 4)
    pairs = np.array([[0, 2], [2, 0], [1, 1], [-1, 0], [1, 2]])
    np.testing.assert_array_equal(eval_program(program, a, pairs)[0], fn(a, pairs))


def test_only_the_view_read_after_the_write_is_saved():
    """A snapshot of the view that the second write reads: one row (in each copy of the
    loop that loop versioning made), never the matrix."""
    converts = [e for e in eqns_named(optimized(swap, "f8[:, :](f8[:, :], i8[:, :])"),
                                      "convert") if e.inputs[0].type == e.outs[0].type]
    assert converts and all(e.outs[0].type.ndim == 1 for e in converts)


def test_a_block_written_back_onto_itself_is_not_written_twice():
    """``a[s] -= x`` is ``t = a[s]; t -= x; a[s] = t``: the last write is the base."""
    program = optimized(block_update, "f8[:, :](f8[:, :], i8)")
    assert len(eqns_named(program, "update_slice")) == 1  # traced: two
    a = np.arange(16.0).reshape(4, 4) ** 1.5
    for k in (0, 1, 3):
        np.testing.assert_array_equal(eval_program(program, a, np.int64(k))[0],
                                      block_update(a, k))
