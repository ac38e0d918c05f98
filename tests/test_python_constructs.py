"""Real-world Python in kernels, compiled into one extension and compared with the very
same source run as plain Python on NumPy (``constructs_kernels.py``): results, dtypes,
arguments after the call, and the exceptions the source raises."""

from __future__ import annotations

import importlib
import importlib.util
import re
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from projects import build_project, imported

import aotc

PACKAGE = "aotc_constructs"
SOURCE = Path(__file__).with_name("constructs_kernels.py")


@pytest.fixture(scope="module")
def modules(tmp_path_factory: pytest.TempPathFactory, c_compiler: str) -> Any:
    root = build_project(tmp_path_factory.mktemp("constructs"), PACKAGE, SOURCE.read_text())
    with imported(root, PACKAGE) as compiled:
        spec = importlib.util.spec_from_file_location("constructs_source", SOURCE)
        assert spec is not None and spec.loader is not None
        source = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(source)
        yield compiled, source


def _copy(args: tuple[Any, ...]) -> list[Any]:
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def _outcome(fn: Any, args: list[Any]) -> tuple[str, Any]:
    try:
        with np.errstate(all="ignore"):
            return "value", fn(*args)
    except Exception as err:
        return "error", (type(err), str(err))


def _same(got: Any, want: Any) -> None:
    if want is None:
        assert got is None
        return
    if isinstance(want, str):
        assert type(got) is str and got == want, (got, want)
        return
    if isinstance(want, list) and not want:  # an empty list has no dtype to compare
        assert len(got) == 0, got
        return
    if isinstance(want, (tuple, list)) and (isinstance(want, tuple) or isinstance(got, list)):
        assert type(got) is type(want) and len(got) == len(want), (got, want)
        for g, w in zip(got, want, strict=True):  # (a list grown in a loop is an array)
            _same(g, w)
        return
    if isinstance(want, dict):
        assert isinstance(got, dict) and got.keys() == want.keys(), (got, want)
        for k in want:
            _same(got[k], want[k])
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0, equal_nan=True)


#: NumPy names the axis an index array is out of bounds for; a gather does not know
#: which axis of the user's index it is, so its message gives the index and size only.
_OUT_OF_BOUNDS = re.compile(r"index (-?\d+) is out of bounds for axis \d+ with size (\d+)")


#: NumPy lists every operand's shape when they do not broadcast; the kernel names the two
#: sizes that disagree (where there are two 1-d operands, it says NumPy's very words).
_SHAPES = re.compile(r"(.*) could not be broadcast together with shapes (.*)")
_SIZES = re.compile(r"(.*) could not be broadcast together: size (\d+) against size (\d+)")
_INTO_SHAPE = re.compile(r"could not broadcast input array from shape \((.*)\) into shape "
                         r"\((.*)\)")
_INTO_SIZE = re.compile(r"could not broadcast input array into the region: size (\d+) "
                        r"against size (\d+)")


def _same_message(got: str, want: str, where: str) -> None:
    found = _OUT_OF_BOUNDS.fullmatch(want)
    if found and f"out of bounds for an axis with size {found[2]}" in got:
        assert got.startswith(f"index {found[1]} is"), f"{where}: {got!r} vs {want!r}"
        return
    theirs, mine = _SHAPES.fullmatch(want.strip()), _SIZES.fullmatch(got)
    if theirs and mine:
        sizes = re.findall(r"\d+", theirs[2])
        assert mine[1] == theirs[1] and mine[2] in sizes and mine[3] in sizes, \
            f"{where}: {got!r} vs {want!r}"
        return
    theirs, mine = _INTO_SHAPE.fullmatch(want), _INTO_SIZE.fullmatch(got)
    if theirs and mine:  # the value's size is in its shape, the region's in the region's
        assert mine[1] in re.findall(r"\d+", theirs[1]), f"{where}: {got!r} vs {want!r}"
        assert mine[2] in re.findall(r"\d+", theirs[2]), f"{where}: {got!r} vs {want!r}"
        return
    assert want in got, f"{where}: {got!r} vs {want!r}"


X = np.array([1.5, -2.0, 3.25, 0.5])
Z64 = np.array([1 + 2j, -0.5j], dtype=np.complex64)
M = np.arange(12.0).reshape(4, 3) - 4.0
IDX = np.array([0, 1], dtype=np.int64)
POS = np.array([[0.0, 0.0], [3.0, 4.0], [3.0, 5.0], [-1.0, 5.0]])

CALLS: dict[str, list[tuple[Any, ...]]] = {
    "structured_results": [(X,), (X[:1],)],
    "ranked": [(X,), (-X,)],
    "steps_of": [(1.0, 0.25), (float("nan"), 1.0), (float("inf"), 1.0), (-5.0, 1.0)],
    "counts_from_data": [(np.array([0, 1, 1, 3, 2, 1, 7]), np.linspace(0.0, 3.5, 7)),
                         (np.array([2, 0]), np.array([0.5, 0.25])),
                         (np.array([1, -1]), np.array([1.0, 2.0])),
                         (np.array([1, 2]), np.array([-5.0, -2.5]))],
    "dict_state": [(3,), (0,)],
    "list_tables": [(X, 3), (np.abs(X) * 3.0, 0), (X[:0], 1)],
    "list_operators": [(3,), (0,)],
    "one_sided": [(X, True), (X, False), (X[:1], True)],
    "read_unbound": [(X, 2.0), (X[:2], 1.0)],
    "search_else": [(X,), (np.abs(X),), (X[:0],), (-X,)],
    "_Aij": [(M, 1, 1), (M, 0, 2), (M[:0], 0, 0)],
    "_private_scale": [(X, 2.0)],
    "weak_string_scalars": [(X.astype(np.float32), 0.1, 3), (X, 0.1, -2)],
    "weak_or_numpy_scalars": [
        (X.astype(np.float32), a, Z64, w)
        for a in (2.5, np.float64(2.5), np.float32(0.1), np.array(1e300))
        for w in (1j, np.complex128(1e300), np.complex64(2 - 1j))],
    "empty_constructors": [(X,), (-X,), (X[:0],)],
    "operators_on_selections": [(2.0, np.array([3 + 4j, 0.1, -2j]), X),
                                (-1.0, np.zeros(0, complex), X[:0])],
    "flat_and_selected_items": [(M, X), (M.T, -X), (M[:, ::2], X[::-1])],
    "guard_fstring": [(X,), (X[:0],)],
    "guard_assert_fstring": [(X,), (X[:1],), (X[:0],)],
    "guard_percent": [(X, 2), (X, 7), (X[:0], 1)],
    "guard_after_values": [(X,), (-X[:2],), (X[:2],), (np.abs(X),)],
    "guard_in_loop": [(X, 2), (X[:2], 5), (X[:2], 1)],
    "guard_str_format": [(M,), (M[:, :2],), (M[:0],)],
    "closures_read_late": [(X, 4), (X[:1], 1), (X[:0], 0)],
    "n_queens": [(1,), (4,), (6,)],
    "nested_appends": [(X,), (-X,), (X[:0],)],
    "closures_in_calls": [(X, 3), (X[:1], 1), (-X[:2], 2)],
    "loop_targets_after_the_loop": [(X, 10), (X[:1], 1), (X[:0], 0)],
    "assignment_expressions": [(X, 2), (X, 9), (-X, 0), (X[:0], 0)],
    "assigned_before_a_break": [(X, 1.0), (X, 0.0), (X, 10.0)],
    "lists_sliced_and_joined": [(X, np.array([1, 0, 1, 0]), 8), (X[:1], IDX[:1], 3),
                                (X[:0], IDX[:0], 0), (X, IDX, 2), (X[:1], IDX, 2)],
    "counted_in_a_loop": [(np.array([1, 5, 2, 9, 3]),), (IDX[:0],)],
    "grown_rows_joined": [(M,), (M[:1],), (M[:0],)],
    "returns_from_loops_that_grow_lists": [(X, 2.0, 3), (X, 10.0, 100), (X, -5.0, 0),
                                           (X[:0], 1.0, 1)],
    "counted_and_accumulated": [(np.array([3, 1, 3, 2, 1, 3]), X, 10, 3),
                                (IDX[:0], X[:0], 5, 7), (IDX, X, 62, 31), (IDX, X, 40, -1),
                                (IDX, X, -2, 1), (IDX, X, 6, 0)],
    "functions_chosen_at_run_time": [(X, 0), (X, 1), (X, 2), (X[:0], 5)],
    "enumerated_in_c_order": [(M, X), (M[:0], X[:0]), (M[:1, :1], X[:1])],
    "math_errors_as_python": [(4.0, 2.0), (np.nan, 1.0), (np.inf, 1.0), (0.0, -1.0),
                              (4.0, 1.0), (0.5, 2.0)],
    "builtins_over_runtime_items": [(np.array([4, 9, 4, 30]), X, 1.0),
                                    (np.array([2**62, -7, 0, 1]), X, 9.0), (IDX[:0], X[:0], 0.0)],
    "rows_grown_and_extended": [(2,), (0,), (5,)],
    "views_chosen_in_branches": [(X, True), (X, False), (X[:2], True), (X[:1], False)],
    "short_list_before_a_grown_one": [(2,), (3,), (4,), (11,)],
    "ravel_items_through_a_mask": [(np.arange(12.0).reshape(3, 4),), (np.ones((0, 2)),)],
    "reshaped_argument_written": [(np.arange(12.0).reshape(3, 4), k) for k in (0, 2)],
    "dict_at_runtime_key": [(X, k) for k in (1, 4, 9, 2, -1)],
    "flat_writes_and_unit_axes": [(np.arange(12.0).reshape(3, 4), k) for k in (0, 3, 7)],
    "list_items_that_are_views": [(np.arange(12.0).reshape(3, 4), X, k) for k in range(5)],
    "names_of_one_array_in_loops": [(X, n) for n in range(4)] + [(X[:1], 2), (X[:0], 0)],
    "views_swapped_in_loops": [(np.arange(36.0).reshape(6, 6) ** 1.5, n) for n in range(5)]
    + [(np.ones((1, 1)), 3), (np.ones((0, 0)), 2)],
    "lists_through_branches_and_loops": [(X, True, 2), (X, False, 0), (X[:1], True, 3)],
    "starred_targets": [(X, 5), (X[:1], 2), (X, 1), (X[:0], 3)],
    "lists_compared_as_lists": [(np.array([1, 5, 2, 9]), np.array([1, 5, 2, 9])),
                                (np.array([1, 5, 2, 9]), np.array([1, 5])),
                                (np.array([1, 5, 2, 9]), np.array([1, 6])),
                                (np.array([4, 5, 2, 9, 1]), np.array([3, 5, 2, 9, 1, 0]))],
    "guard_after_write": [(X,), (X[:2],), (X[:0],)],
    "guard_early_return": [(X,), (X[:0],), (X[:1],)],
    "checked_window": [(X, 3, 10.0), (X, 9, 1.0), (X, 4, 1.0), (-X - 5.0, 2, 1.0),
                       (X, 0, 1.0)],
    "sampled": [(0.0, 1.0, 5.0, 1.0, 0.25, 7), (0.0, 1.0, 0.5, 1.0, 0.3, 2),
                (1.0, 0.0, 3.0, 0.0, 0.1, 0), (0.0, 1.0, 2.0, 1.0, -0.5, 5),
                (0.0, 1.0, 2.0, 1.0, 0.0, 5), (0.0, 1.0, -2.0, 1.0, 0.5, 5)],
    "time_grid": [(1.0, 0.25), (0.0, 0.1), (1.0, 3.0)],
    "lower_triangle_ramp": [(4,), (1,), (0,), (-3,)],
    "count_then_fill": [(X, 0.6), (X, 10.0), (X, -10.0), (X[:0], 0.0)],
    "positions_above": [(X, 0.6), (X, 10.0), (X[:0], 0.0)],
    "positives_copied": [(X,), (-np.abs(X),), (X[:0],)],
    "weighted_prefixes": [(X,), (X[:1],), (X[:0],)],
    "ragged_row_sums": [(M, np.array([2, 9, 0, 3])), (M, np.array([1, -1, 0, 3])),
                        (M[:0], IDX[:0])],
    "at_least_one_bin": [(np.array([0, 3, 3, 1, 7, -1]), 4), (IDX, -2), (IDX, 0)],
    "shrinking_count": [(3,), (0,), (-2,)],
    "leading_small": [(X,), (np.abs(X) * 0.1,), (X[:0],), (-X,)],
    "simpson_even": [(0.0, 1.0, 7), (0.0, 1.0, 8), (0.0, 2.0, 1), (1.0, 0.0, 3)],
    "drop_leading_small": [(np.abs(X) * 0.2,), (X,), (X[:0],), (np.array([0.1, 0.9]),)],
    "pairwise_halving": [(np.arange(13.0),), (X,), (X[:1],), (X[:0],)],
    "diagonal_by_peeling": [(M,), (M.T,), (M[:0],)],
    "decimated": [(np.arange(20.0), 3), (X, 0), (X, -1), (X[:0], 2)],
    "trim_trailing_rows": [(M, 5.0), (M, 100.0), (M, -100.0)],
    "power_by_products": [(M[:3], 3), (M[:3], 0), (M, 1), (M, 2)],  # exact: integers
    "appended_above": [(X, 0.6), (X, 10.0), (X[:0], 0.0), (X[::2], -10.0)],
    "stacked_rows_above": [(M, 0.0), (M, 100.0), (M[:0], 0.0)],
    "doubling_sequence": [(5,), (0,), (-2,)],
    "windows_from": [(X, s, k) for s in (-6, -3, -1, 0, 2) for k in (-5, -2, -1, 0, 1, 3, 9)],
    "filled_unless": [(X, 1), (X, 0)],
    "filled_until": [(0,), (1,), (2,), (5,)],
    "view_returned_after_writes": [(X, 1), (X, 0), (X, -1)],
    "membership": [(1, X), (4, X), (7, np.array([0.5, 2.0]))],
    "python_extremes": [(np.array([1.0, np.nan, 0.5]),), (np.array([np.nan, 1.0, 3.0]),),
                        (X,), (np.array([0.3, np.nan]),), (X[:0],), (np.array([0.1]),)],
    "first_of_nonempty": [(X,), (X[:0],)],
    "sigma_clipped": [(np.array([0.0, 1.0, 2.0, 30.0, 1.5, 0.5]), 2), (X, 0), (X[:0], 3)],
    "repeated_differences": [(np.array([1.0, 4.0, 9.0, 16.0]), 2), (X[:1], 1), (X[:0], 3)],
    "unless_same_length": [(M, 4), (M, 2), (M, 6), (M[::-1], 1)],
    "trimmed_or_doubled": [(X, 1), (X, 0), (X, 10), (X[:0], -1), (X[:1], 1)],
    "lookup_table": [(X, 1), (X, -2), (X, 2), (X[:0], 0)],
    "bin_sums": [(X, 3), (X, 4), (X, 6), (X[:0], 2), (X, 0)],
    "split_pieces": [(X, M), (X[::-1], M[::-1])],
    "first_index_above": [(X, 1.0), (X, 10.0), (X[:0], 0.0)],
    "circumcenter": [(1.0, 2.0, 3.0, 4.0), (1.0, 2.0, 2.0, 4.0)],
    "smallest_above": [(X, 0.0), (X, 10.0), (X[:0], 0.0)],
    "axpy_unless_empty": [(4, 2.0, X, X[::-1].copy()), (0, 2.0, X, X.copy())],
    "classify_sides": [(POS,), (-POS,), (POS * 0.0,), (np.array([[1.0, 2.0], [-1.0, 3.0]]),)],
    "total_or_default": [(X, X[::-1]), (X[:0], X[:2]), (X[:1], X[:1])],
    "piecewise": [(-2.0,), (0.5,), (3.0,), (0.0,), (np.nan,)],
    "first_above": [(X, 1.0), (X, 10.0), (X[:0], 0.0), (X, -np.inf)],
    "newton": [(2.0, 1e-12), (0.25, 1e-12), (9.0, 0.0)],
    "positive_prefix": [(X,), (np.abs(X),), (X[:0],), (-X,)],
    "inside": [(3, 5), (-1, 5), (5, 5), (0, 0)],
    "logic": [(1.0, 2.0), (-1.0, 2.0), (3.0, -1.0), (-1.0, -2.0)],
    "first_or_fill": [(X, 7.0), (X[:0], 7.0), (np.array([np.nan]), 7.0)],
    "prefix_sum": [(X, 2), (X, 4), (X, 5), (X, -1), (X[:0], 0)],
    "checked_mean": [(M,), (M[:, :2],), (M[:0],)],
    "row_norms": [(M,), (M[:1],), (M[:0],), (M.T,)],
    "weighted_sum": [(X, 4), (X, 0), (X, 2)],
    "with_literals": [(X, 1.5, 2.5), (X[:0], 0.0, -1.0)],
    "path_length": [(POS,), (POS[:1],), (POS[:0],), (M,)],
    "dot_by_zip": [(X, X[::-1]), (X, X[:2]), (X[:0], X)],
    "doubled": [(M,), (M[:0],), (M.T,)],
    "reused_names": [(X,), (X[:0],)],
    "aliases": [(X,), (X[:0],)],
    "matmul_loops": [(M[:3], M[:3].T), (M[:0, :0], M[:0, :0])],
    "project": [(X, 2.0), (X,)],
    "scaled_total": [(X, 3.0), (X,)],
    "smooth_twice": [(X,), (np.arange(10.0),)],
    "calls_a_kernel": [(X,), (-X,)],
    "same_shape_sum": [(X, X), (X, X[:2])],
    "with_math": [(2.0,)],
    "fill_through_view": [(5, 3), (0, 2), (3, 0)],
    "copy_in_loop": [(X, 3), (X, 0)],
    "moving_sums": [(X, 2), (X, 0), (X, -1), (X, 10), (X[:0], 3), (X, 2**62), (X, -2**62)],
    "solve": [(np.array([[2.0, 1.0, -1.0], [-3.0, -1.0, 2.0], [-2.0, 1.0, 2.0]]),
               np.array([8.0, -11.0, -3.0])), (M[:3] + 10 * np.eye(3), X[:3]),
              (M[:0, :0], X[:0])],
    "strided_windows": [(X,), (X[:1],), (X[:0],), (np.arange(9.0),)],
    "cumulative_rows": [(M,), (M[:1],), (M.T,), (M[:0],)],
    "swap_ends": [(X,), (X[:1],), (X[:0],)],
    "gather_rows": [(M, np.array([0, -1, 2]), np.array([2, 0, 1])), (M, IDX[:0], IDX[:0]),
                    (M, np.array([4]), np.array([0])), (M, np.array([0]), np.array([-4]))],
    "histogram_by_hand": [(np.array([0, 2, 2, 1]), 4), (IDX[:0], 3), (np.array([3]), 3),
                          (np.array([-1, -3]), 3)],
    "loop_inside_branch": [(X, 1.0, 3), (X, -1.0, 3), (X, 1.0, 0)],
    # Only calls whose loops store floats: a compiled list that may come to hold floats
    # is float from the start (Python's would stay int when no float is stored).
    "relax_lists": [(5, 3), (4, 1)],
    "phi0": [(1e-6,), (0.5,), (-3.0,)],
    "window_floor": [(3, 1.5), (1, 2.0)],
    "sum_primes": [(200,), (2,), (-5,)],
    "filtered_stats": [(X, 0.0), (X, 10.0), (X, -10.0)],
    "periodic_wrap": [(X * 3, 4.0), (X[:0], 1.0)],
    "unit_or_zero": [(np.array([-3.0, 0.2, 4.0, 1e-9, 0.0]), 1e-6), (X[:0], 1.0)],
    "descend": [(2,)],
    "fit_line": [(np.linspace(0, 2, 50), 3 + 2 * np.linspace(0, 2, 50), 0.01, 100),
                 (X, X, 0.1, 0), (X, X, 0.1, -3)],
    "collatz_start": [(10,), (0,), (7,)],
    "as_matrix": [(np.arange(6.0), 2, 3), (np.arange(6.0), 3, 2), (X[:0], 0, 5)],
    "row_maxima": [(M, 6), (M, 3), (M, 12)],
    "jacobi_swap": [(np.arange(16.0).reshape(4, 4), np.arange(16.0).reshape(4, 4).T * 1.0, 3),
                    (np.arange(25.0).reshape(5, 5), np.ones((5, 5)), 4),
                    (np.arange(16.0).reshape(4, 4), np.ones((4, 4)), 0)],
    "positives": [(np.array([1.0, 5.0, -2.0, 7.0, 3.0, np.nan]), 2.0), (X, 100.0),
                  (X[:1], 0.0)],
    "selections": [(np.arange(12).reshape(4, 3),), (np.arange(12).reshape(4, 3)[:0],),
                   (np.arange(12).reshape(4, 3)[::-1],)],
    "trimmed": [(np.array([0.0, 0, 1, 2, 0, 3, 0]),), (np.zeros(3),), (X[:0],), (X[:1],)],
    "refill": [(np.array([1.0, 5.0, 0.0, 7.0, 3.0, 9.0]), np.arange(10.0, 50.0, 10.0)),
               (np.array([1.0, 5.0, 0.0, 7.0, 3.0, 3.0]), np.arange(10.0, 50.0, 10.0)),
               (np.array([1.0, 5.0, 0.0, 7.0, 3.0, 1.0]), np.arange(10.0, 50.0, 10.0))],
    "subpixel": [(np.array([1.5, -2.0, 3.25, 7.5]),), (np.array([0.0, 0.0, 0.0, 0.0]),)],
    "black_scholes": [([30.0, 40.0, 50.0], [35.0, 40.0, 45.0], [0.5, 1.0, 2.0], 0.05, 0.3, 3),
                      ([30.0], [35.0], [0.5], 0.05, 0.3, 0)],
    "doubled_positives": [([1.0, -2.0, 3.0],), (X[:0],), (X,)],
    "positives_until": [(X, 3.0), (X, 10.0), (X, -5.0), (X[:0], 1.0)],
    "halves_until": [(np.array([1, -2, 3, 4, 9, 1]),), (np.array([1, 2, 3]),),
                     (np.array([7]),)],
    "run_lengths": [(np.array([3, 3, 1, 1, 1, 2]),), (np.array([], dtype=np.int64),),
                    (np.array([5]),)],
    "run_length_decode": [(np.array([5, 6, 7]), np.array([2, 0, 3]), M),
                          (np.array([5, 6, 7]), np.array([3]), M),
                          (np.array([], dtype=np.int64), np.array([], dtype=np.int64), M),
                          (np.array([5, 6, 7]), np.array([1, -1, 1]), M),
                          (np.array([5, 6, 7]), np.array([1, 2]), M)],
    "histogram_of": [(X, X, 3), (X, X, 1), (X, X, 0), (X, X, -2), (X[:0], X[:0], 4),
                     (np.linspace(0.0, 1.0, 50), np.linspace(2.0, 3.0, 50), 1000)],
    "drop_first_point": [(M[:, :2].copy(),), (M[:2, :2].copy(),)],
    "dot_rows": [([(12.4, 0.5), (-5.6, 12.34)], [(3.45, 1.5), (55.4, 567.0), (1.0, 2.0)]),
                 (np.arange(10.0).reshape(5, 2), np.arange(6.0).reshape(3, 2))],
    "triad_into": [(X.copy(), X, X[::-1], 2.0), (X[:0].copy(), X[:0], X[:0], 1.0)],
    "same_array": [(X,), (X[:0],)],
    "scatter_rows": [(M, np.array([0, 2, 2])), (M, IDX[:0]), (M.T, np.array([-1])),
                     (M, np.array([7]))],
    "order_statistics": [(np.array([3.0, -1.0, np.nan, 0.5, -0.0, 2.0]),
                          np.array([[3, 1, 3], [2, 2, 9]])), (X, M.astype(np.int64)),
                         (X[:1], np.zeros((1, 2), np.int64))],
    "sort_rows_in_place": [(M[::-1].copy(),), (M.T.copy(),), (M[:0].copy(),)],
    "bubble_sorted": [(X,), (X[:1],), (X[:0],), (np.array([3.0, 1.0, 2.0, 1.0]),)],
    "floyd_warshall": [(np.array([[0.0, 3, 9, 1], [3, 0, 1, 8], [9, 1, 0, 2], [1, 8, 2, 0]]),),
                       (np.zeros((1, 1)),), (np.zeros((0, 0)),)],
    "three_windows": [(np.ones(6), np.arange(100.0, 106.0), np.arange(5.0), *bounds)
                      for bounds in ((0, 5, 0, 5), (2, 3, 1, 2), (2, 3, 0, 5), (0, 5, 3, 4))],
    # Any size may be 1 at run time: equal sizes run the plain overload, others its
    # broadcast twin; sizes that are neither raise NumPy's ValueError in either.
    "plus": [(M, M), (M, M[:, :1]), (M[:1], M), (M[:1, :1], M), (M, M[:1]), (M[:1], M[:, :1]),
             (M[:0], M[:1]), (M[:1, :0], M[:, :1]), (M, M[:3]), (M[:, :2], M),
             (M[:0], M[:2])],
    "times_first_column": [(M,), (M[:, :1],), (M[:, :0],), (M[:0],)],
    "scaled_rows_into": [(M, X[:3]), (M, X[:1]), (M[:1], X[:1]), (M, X[:2]), (M[:, :1], X),
                         (M[:0], X[:1])],
    "chosen": [(X > 0, X, -X), ((X > 0)[:1], X, -X), (X > 0, X[:1], -X), (X > 0, X, -X[:1]),
               ((X > 0)[:1], X[:1], -X[:1]), (X > 0, X[:2], -X), ((X > 0)[:0], X[:1], -X[:1])],
    "sums_beside_broadcast": [(X, X), (X, X[:1]), (X[:1], X), (X, X[:2]), (X[:0], X[:1])],
    "broadcast_in_loop": [(X, X, 2), (X, X[:1], 2), (X[:1], X, 3), (X, X[:2], 1),
                          (X, X[:2], 0)],
    "guard_then_broadcast": [(X, X), (X[:0], X), (X[:0], X[:1]), (X[:1], X), (X[:2], X)],
    "rows_of": [(X[:3], 2), (X[:1], 2), (X[:1], 0), (X[:3], 0)],
    "cube_products": [(np.arange(24.0).reshape(2, 3, 4), np.arange(4.0).reshape(1, 1, 4)),
                      (np.arange(3.0).reshape(1, 3, 1), np.arange(8.0).reshape(2, 1, 4)),
                      (np.ones((2, 3, 4)), np.ones((2, 3, 4))),
                      (np.ones((2, 3, 4)), np.ones((2, 2, 4)))],
    # Ties keep their order (stable), reversed ones too, as Python's sorted.
    "ranked_by": [(np.array([3.0, 1.0, 2.0, 1.0, 3.0]),), (X[:3],), (X[:1],)],
    "extremes_of_lists": [(X,), (-X,), (np.array([np.nan, 1.0, 5.0]),),
                          (np.array([1.0, 7.0, np.nan]),)],
    # n up to CPython's set size draws from a pool, larger from a set: both, exactly.
    "sampled_indices": [(10, 3, 1), (10, 10, 2), (100, 5, 3), (1000, 20, 4), (50, 0, 5),
                        (5, 6, 1), (5, -1, 1), (30, 8, 7), (5000, 50, 9)],
    "sampled_values": [(X, 2, 11), (X, 4, 12), (X, 5, 13)],
    "gradient_step": [(X, 0.5), (X[:0], 0.5)],
    "first_over_each": [(M, 1.0), (M, 100.0), (M[:1], -100.0), (M[:, :0], 0.0),
                         (M[:0], 1.0)],
    "all_row_norms": [(M,), (M[:1],)],
    "grade": [(95,), (85,), (3,), (90,)],
    "sign_word": [(X,), (-np.abs(X),), (X[:0],)],
    "sexy_prime_pairs": [(100,), (np.int64(12),), (0,)],
    "decided_early": [(X, 2), (X, 4), (X, 6), (X[:0], 0), (np.array([3.0, 1.0]), 5)],
    "folded": [(X,), (X[:1],), (X[:0],)],
    "mapped_rows": [(4, X), (1, X[:1]), (0, X[:2])],  # (sum of none is int 0)
    "gated_scan": [(np.arange(16, dtype=np.float32).reshape(2, 8) / 16, 4),
                   (np.ones((1, 4), np.float32), 1), (np.ones((2, 3), np.float32), 2),
                   (np.ones((2, 4), np.float32), -1)],
    "summed_spans": [(X, [(0, 2), (1, 4)]), (X, [(3, 3)]), (X, [(0, 9)])],
    "named_kernel": [(X, "linear"), (X.astype(np.float32), "cubic"), (X, "quintic"),
                     (X[:0], "cubic"), (X, 3)],
    "chosen_method": [(X, "separate"), (X, "hierarchical", 2.0), (X, "foo"), (X[:1], "")],
    "leading_digits": [(0,), (np.int64(-371072875339021027),), (2**62,)],
    "summary_line": [(X, 3), (X[:1], np.int64(-7)), (X[:0], 0)],
    "formatted_message": [(5,), (np.int64(123),), (-2,), (12345,)],
    "divisors_or_self": [(2,), (5,), (0,)],
    "ragged_then_used": [(5, 1.5), (1, 1.5), (4, -2.0)],
    # Recursion on runtime values: real calls of functions compiled once. Past the
    # depth limits both raise RecursionError (Python's ~1000, compiled 5000).
    # (Inputs here stay small: test_ir_text interprets each of them four times.)
    "fib": [(0,), (1,), (2,), (15,), (-3,)],
    "ackermann": [(0, 0), (1, 2), (2, 3), (3, 3)],
    "parity": [(0,), (7,), (10,), (100000,)],
    "collatz": [(1,), (27,), (97,)],
    "factorial": [(0,), (10,), (20,), (-2,)],
    "halves": [(0,), (5,), (300,), (100000,)],
    "fibs_of": [(np.array([0, 1, 5, 10, 15]),), (np.zeros(0, np.int64),)],
    "power_sum": [(1.5,), (-2.0,)],
    # Recursion passing arrays of runtime sizes: by reference, written in place (the
    # writes are the caller's), views of halving sizes; an index out of range deep in
    # the recursion raises there, after the writes before it, as in Python.
    "quicksorted": [(np.random.default_rng(5).integers(0, 50, 120), 0, 119),
                    (np.array([3, 1, 2]), 0, 2), (np.array([7]), 0, 0),
                    (np.zeros(0, np.int64), 0, -1), (np.arange(40)[::-1].copy(), 0, 39),
                    (np.full(9, 4), 0, 8), (np.array([5, 4, 3, 2]), 1, 3),
                    (np.array([5, 4, 3, 2]), 0, 4)],
    "halving_total": [(np.linspace(0.0, 1.0, 1001),), (X[:1],), (X[:0],)],
    "filled_from": [(np.array([[0, 0, 1, 0], [1, 0, 1, 0], [0, 0, 0, 1]]), 0, 0),
                    (np.array([[0, 0, 1, 0], [1, 0, 1, 0], [0, 0, 0, 1]]), 0, 3),
                    (np.array([[1]]), 0, 0), (np.zeros((30, 30), np.int64), 5, 5),
                    (np.zeros((0, 3), np.int64), 0, 0)],
    "queens": [(1,), (4,), (5,), (0,)],
    # What a recursion returns: the array it is given (numba's mergesort examples, in
    # place through views and on copies), or a tuple of runtime values.
    "merge_sorted_in_place": [(np.random.default_rng(6).standard_normal(33),), (X[:2],),
                              (X[:1],), (X[:0],), (np.arange(9.0)[::-1].copy(),)],
    "merge_sorted": [(np.random.default_rng(7).standard_normal(21),), (X[:2],), (X[:0],)],
    "extremes": [(np.random.default_rng(8).standard_normal(33),), (X[:1],), (X[:0],)],
    # A dict the kernel grows, passed down a recursion (a memo) or written by a helper.
    "longest_collatz": [(1,), (2,), (60,)],  # (small: the IR tests interpret it)
    "tallied": [(np.arange(10),), (np.zeros(0, np.int64),), (np.array([3, 7, 11]),)],
    "recursive_fft": [(np.ones(8, complex),), (np.exp(1j * np.arange(16.0)),),
                      (np.arange(1, 2, dtype=complex),)],
    "merged_copy": [(np.random.default_rng(10).standard_normal(17),), (X,), (X[:1],),
                    (X[:0],)],
    # A list's truth in tests: each operand's truth, a laid-out list's length, a list
    # read before the loop's first append to it.
    "popped_while": [(0,), (1,), (7,)],
    "depth_first_count": [(0,), (5,), (12,)],
    "rising_run": [(X,), (X[:0],), (np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0]),),
                   (np.array([np.nan, 1.0, 2.0]),)],
    "counted_if_any": [(X, 2.0), (X, 100.0), (X[:0], 0.0)],
    "both_signs": [(np.array([1.0, -1.0]),), (np.array([1.0, 3.0]),), (X[:0],),
                   (np.array([-1.0, 5.0]),)],
    # A helper appending to the caller's list in its own branch: the caller's list grows.
    "kept_by_a_helper": [(X,), (X[:0],), (np.random.default_rng(9).standard_normal(50),)],
    "consumed_generators": [(X, 6), (X[:0], 0), (-X, 1)],
    "standard_library_orders": [(np.array([0.1, 0.5, 0.1, 0.9, 0.5, 0.95]), 4), (X, 0),
                                (np.array([0.7]), 2)],
    "defaults_and_sizes": [(np.array([0.1, 0.5, 0.2]), np.zeros((2, 3), np.float32)),
                           (X[:0], np.zeros((0, 4), np.float32)),
                           (np.array([11.0, np.nan, 12.0]), np.ones((1, 1), np.float32))],
    # A while loop popping one list and appending to another (the appends' counting copy
    # emptied the popped list first); tuples compared field by field; heapq and insort.
    "drained_by_while_loops": [(X,), (X[:0],), (-X,)],
    "compared_as_tuples": [(np.array([0.1, 0.5, 0.5, np.nan, 0.2, 0.3, 0.3]),
                            np.array([0.1, 0.4, 0.5, np.nan, 0.3, 0.3, np.nan]))],
    "priority_queues": [(X, 4), (np.array([0.5, 0.5, 0.1, 0.5]), 9), (X[:0], 0),
                        (np.random.default_rng(12).standard_normal(40), 40)],
    "merged_runs": [(np.sort(X), np.array([0.2, 0.4, 0.9])), (X[:0], np.array([0.5, 1.5])),
                    (np.array([0.1, 0.3]), X[:0])],
    "grown_containers_algebra": [
        (np.array([5, 17, 3, 44, 12, 95, 8, 60, 23]), np.array([4, 9, 10, 33]), 1, -2),
        (np.array([7, 14, 21]), np.array([0, 5]), -8, 9), (np.zeros(0, np.int64),
                                                          np.zeros(0, np.int64), 0, 0),
        (np.arange(30, dtype=np.int64), np.arange(3, dtype=np.int64), 6, 2)],
    "chosen_from_grown_dicts": [(np.array([5, 17, 3, 44, 12, 95, 8, 60, 23, 41]),),
                                (np.zeros(0, np.int64),), (np.array([7, 14, 21, 2]),)],
    "pivot_sorted": [(np.array([3.0, 1.0, 4.0, 1.5, 9.0, 2.6, 5.0, 1.0]),), (X[:0],), (X[:1],),
                     (np.random.default_rng(11).standard_normal(60),)],
    "rounded_to_digits": [(-3.55,), (np.float64(-3.55),), (2.675,), (np.float64(2.675),),
                          (1250.0,), (0.285,), (1.005,), (-0.04,), (1e15 + 0.5,),
                          (float("nan"),), (12.5,)],
    "kinds_of_scalars": [(3, 0.5), (np.int64(3), np.float64(0.5)), (-4, np.float64(2.0))],
    "chosen_by_python_rules": [(np.array([0.3, 0.7, 0.1, 0.9, 0.6, 0.95, -0.4]),), (X,),
                               (X[:0],), (np.array([0.5, 0.5, 0.25]),)],
    "kept_inside_expressions": [(X,), (-X,), (X[:0],),
                                (np.random.default_rng(3).standard_normal(40),)],
    "window_times": [(X, X[:3], 1, 4), (X, X[:3], 2, 3), (X, X[:3], 3, 3), (X, X[:3], 0, 5),
                     (X, X[:3], -1, 100)],
    # Index loops: in range (the unchecked loop), out of range part-way (the checked loop
    # raises after the same writes), negative indices, terms too large to prove.
    "shifted_into": [(X, np.zeros(4), 0, 4, 0), (X, np.zeros(4), 0, 4, 1),
                     (X, np.zeros(4), 0, 4, -1), (X, np.zeros(4), -4, 0, 0),
                     (X, np.zeros(4), 2, 2, 0), (X, np.zeros(4), 3, 1, 0),
                     (X, np.zeros(4), 0, 4, 2**62), (X, np.zeros(4), 0, 3, -2**63 + 1),
                     (X, np.zeros(4), -2**60, -2**60 + 2, 0), (X, np.zeros(6), 1, 5, -1),
                     (X, np.zeros(4), 2**31, 2**31 + 2, -2**31)],
    "gather_where_positive": [(X, 0, 4, 0), (X, 0, 4, 1), (X, 0, 3, 1), (X, 0, 4, -4),
                              (-X, 0, 4, 9), (X, -4, 0, 0), (X, 1, 4, -1)],
    "flat_transpose": [(np.arange(6.0), 2, 3), (np.arange(6.0), 3, 2), (np.arange(6.0), 2, 4),
                       (X[:0], 0, 5), (np.arange(6.0), -1, 3)],
    "global_tables": [(X, 1, np.array([0, 2, -1])), (X[:2], -2, np.array([1])),
                      (X, 3, np.array([0])), (X, 0, np.array([3]))],
    "prefix_until_negative": [(X, 4), (np.abs(X), 4), (X[:0], 0), (-np.abs(X), 4)],
    "integrate_until_flat": [(0.0, 0.1, 200), (0.0, 0.1, 5), (1.0, 0.1, 1)],
    "cycle_of": [(np.array([1, 2, 3, 1]), 0), (np.array([0]), 0), (np.array([1, 0, 5]), 2)],
    "rows_before_negative": [(np.array([[1.0, 2, 3], [4, 5, 6], [-1, 0, 0]]),),
                             (np.ones((3, 3)),), (-np.ones((2, 3)),)],
    "power_iteration": [(np.array([[2.0, 1, 0], [1, 3, 1], [0, 1, 4]]), np.ones(3), 1e-10),
                        (np.ones((2, 3)), np.ones(2), 1e-10), (np.eye(2), np.ones(2), 1e-12)],
    "normalized": [(np.arange(1.0, 4.0), True), (np.arange(1.0, 4.0), False)],
    "doubled_into": [(np.arange(3.0), True), (np.arange(3.0), False)],
    "rebound_then_written": [(np.arange(3.0), 0), (np.arange(3.0), 1), (np.arange(2.0), 2)],
    # Python numbers raise ZeroDivisionError; NumPy scalars (and arrays' items) give inf/0.
    "courant": [(1.0, 0.05, 0.0), (-2, 0.5, 0.25), (np.float64(1.0), 0.05, np.float64(0.0)),
                (np.float64(1.0), np.float64(0.05), 0.0), (1.0, np.float64(0.05), 0.0)],
    "int_steps": [(7, 2), (7, 0), (-7, 0), (np.int64(7), np.int64(0)), (True, False)],
    "loop_divisions": [(X, 2, 9.0), (X, 3, 9.0), (X, 1, 4.0), (X, 1, 9.0),
                       (X, 1, np.float64(4.0))],
    "decode_runs_counted": [(np.array([5, 6, 7]), np.array([2, 0, 3]), 3),
                            (np.array([5, 6]), np.array([1, 1]), 0),
                            (np.array([5, 6]), np.array([1, 2]), 3),
                            (np.array([5, 6]), np.array([1, -3]), 2)],
    "collatz_path": [(6,), (1,), (27,), (-4,)],
    "path_to": [(np.array([-1, 0, 1, 1, 3]), 4), (np.array([-1]), 0),
                (np.array([-1, 0, 7]), 2), (np.array([-1, 0]), -1)],
    "python_numbers_through": [(np.ones(2, np.float32), 1, 3, 2), (np.ones(2, np.float32), 1, 0, 2),
                               (np.ones(2, np.float32), 0, 2, 0)],
    "shrink_by_fifths": [(np.arange(37.0),), (np.arange(3.0),), (np.arange(126.0),)],
    "zipped_pairs": [(X, -X[::-1]), (X, X[:2]), (X[:0], X)],
    "lis_path": [(np.array([3.0, 1, 4, 1, 5, 9, 2, 6]),), (X[:0],), (X[:1],), (-np.arange(4.0),)],
    "path_back": [(np.array([5, 0, 1]), 2), (np.zeros(0, np.int64), 0), (np.array([5, 0, 1]), 7),
                  (np.array([3]), 0)],
    "sized_by_contents": [(np.array([2.5, 1.0]),), (np.array([0.1]),), (np.array([-1.0]),)],
    "rod_cuts": [(np.array([0, 1, 2, 3, 2, 2, 6, 1, 2]), 8), (np.array([0, 1]), 0),
                 (np.array([0, 1, 1, 3]), 3)],
    "runtime_steps": [(np.arange(10.0), a, b, np.int64(k)) for a, b, k in [
        (0, 10, 3), (10, 0, -3), (0, 10, -1), (5, 5, 2), (-7, 20, 4), (20, -7, -4), (0, 10, 0),
        (0, 10, 2**63 - 2), (3, 2, -2**63 + 1)]],
    "mean_of_first": [(X, 0), (X, -1), (X, 3), (X, np.int64(0))],
    "writes_through_reshapes": [(np.arange(6.0), 1), (np.arange(4.0), -1), (np.arange(6.0), 3)],
    "widened_accumulators": [(np.arange(5, dtype=np.float32) * 1.1, np.arange(5.0) * 0.3)],
    "range_items_are_python_ints": [
        ((np.arange(70, dtype=np.float32) * 1.1).astype(np.float32),
         np.arange(3, dtype=np.uint8), np.uint8(255)),
        (np.zeros(0, np.float32), np.arange(200, 203, dtype=np.uint8), np.uint8(3))],
    "special_functions": [(np.array([0.5, 3.25, 7.0, -2.5]), 10.4),
                          (np.array([1e-30, 25.0, 171.5, -0.5]), -3.5),
                          (np.array([1e308, 1e308, -1e308]), 1.5),  # fsum overflows
                          (np.array([0.5, -2.0, 1.0]), 2.0),  # a pole: ValueError
                          (np.array([172.0, 1.0, 1.0]), 2.0),  # OverflowError
                          (np.array([0.1] * 10), 0.0)],  # remainder(0, .75), ulp(0)
    "weak_special_functions": [(np.arange(3, dtype=np.float32), 4.5)],
    "complex_math": [(1.0 + 2.0j, 4.0), (-1.0 + 0.0j, -4.0), (complex("nan+1j"), 0.0)],
    "python_order_sums": [
        (np.sin(np.arange(1, 400, dtype=np.float32)) + 1.0,
         np.exp(np.arange(64) * (0.05 + 1.3j)).astype(np.complex64),
         np.exp(np.arange(64) * (0.01 - 0.7j)).astype(np.complex64))],
    "best_named_point": [(np.array([0.5, 2.0, 1.0]), np.array([0.1, -0.5, 1.0])),
                         (np.array([3.0]), np.array([1.0]))],
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_compiled_matches_source(modules: Any, name: str) -> None:
    compiled, source = modules
    for args in CALLS[name]:
        mine, theirs = _copy(args), _copy(args)
        got = _outcome(getattr(compiled, name), mine)
        want = _outcome(getattr(source, name), theirs)
        where = f"{name}{[np.shape(a) for a in args]}"
        assert got[0] == want[0], f"{where}: compiled {got}, source {want}"
        if want[0] == "error":
            assert got[1][0] is want[1][0] or issubclass(want[1][0], got[1][0]), where
            _same_message(got[1][1], want[1][1], where)
        elif name in ("phi0", "window_floor") or (name == "weighted_sum" and args[1] == 0):
            # Python's int on one path (a sum of nothing is the int 0) where another path
            # gives a float: the kernel's one type is the float, with the same value.
            assert np.asarray(got[1]).dtype == np.float64
            # phi0 goes through log and tanh: a few ulp of libm's (8 ulp ~ 2e-15).
            np.testing.assert_allclose(got[1], want[1], rtol=2e-15, atol=0)
        else:
            _same(got[1], want[1])
        for m, t in zip(mine, theirs, strict=True):
            if isinstance(t, np.ndarray):
                np.testing.assert_array_equal(m, t, err_msg=f"{where}: argument after the call")


def test_time_time_is_read_when_the_kernel_runs(modules: Any) -> None:
    """Not a constant of the build: the compiled kernel's clock lies between two reads
    of Python's around the call, and moves on from call to call."""
    compiled, _ = modules
    before = time.time()
    total, forward, elapsed_ok, start = compiled.timed_sum(X)
    after = time.time()
    assert total == X.sum() and forward and elapsed_ok
    assert before - 1e-3 <= start <= after + 1e-3  # (a millisecond for the float's rounding)
    time.sleep(0.01)
    assert compiled.timed_sum(X)[3] > start


def test_range_bounds_beyond_the_size_limit_raise_overflow_error(modules: Any) -> None:
    """Loop bounds are sizes, which read integer arguments clamped to ±2**61: a range
    beyond that would run the wrong number of times, so it is refused instead."""
    compiled, _ = modules
    for lo in (-2**62, 2**61 + 1):
        y = np.zeros(4)
        with pytest.raises(OverflowError, match="range bounds beyond"):
            compiled.shifted_into(X, y, lo, lo + 2, 0)
        assert not y.any()


def test_integers_beyond_int64_are_overflow_errors(modules: Any) -> None:
    """Python's math.floor(1e20) and math.comb(70, 35) are big ints, which a kernel's
    int64 cannot hold: an OverflowError, never the undefined or wrapped int64."""
    compiled, _ = modules
    with pytest.raises(OverflowError, match="math.floor\\(\\) of a float beyond int64"):
        compiled.math_errors_as_python(1e10, 1e10)
    with pytest.raises(OverflowError, match="math.comb\\(\\) is beyond int64's range"):
        compiled.counted_and_accumulated(IDX, X, 70, 35)


def test_defaults_of_runtime_parameters(modules: Any) -> None:
    compiled, _ = modules
    np.testing.assert_array_equal(compiled.project(X), X)
    np.testing.assert_array_equal(compiled.project(X, z=4.0), X / 4.0)
    assert compiled.scaled_total(X) == np.sum(X) * 2.0
    assert "z: _Float = ..." in Path(compiled.__file__).with_name("kernels.pyi").read_text()


def test_a_users_exception_class_raises_its_builtin_base(modules: Any) -> None:
    compiled, _ = modules
    with pytest.raises(RuntimeError, match="ConvergenceError: no convergence in 100 steps"):
        compiled.newton(-1.0, 0.0)


def test_index_arrays_of_different_lengths_raise_numpys_index_error(modules: Any) -> None:
    compiled, source = modules
    args = (M, np.array([0, -1, 2]), np.array([2, 0]))
    with pytest.raises(IndexError) as theirs:
        source.gather_rows(*args)
    with pytest.raises(IndexError) as mine:
        compiled.gather_rows(*args)
    assert str(mine.value) == str(theirs.value)  # NumPy's words: "... with shapes (3,) (2,) "


def test_arguments_sharing_memory_get_pythons_answer_or_a_clear_error(modules: Any) -> None:
    compiled, source = modules
    r = np.arange(6.0) ** 2
    mine, theirs = r.copy(), r.copy()
    compiled.smooth_into(mine, mine + 0.0)  # no sharing: the ordinary answer
    source.smooth_into(theirs, theirs + 0.0)
    with pytest.raises(ValueError, match="parameters 'dst' and 'src' share memory, and the "
                                         "kernel reads 'src' after it writes 'dst'"):
        compiled.smooth_into(mine[1:], mine[:-1])  # overlapping views, not one array
    np.testing.assert_array_equal(mine, theirs)  # refused before anything was written
    compiled.smooth_into(mine, mine)  # one array for both: each average sees the last
    source.smooth_into(theirs, theirs)
    np.testing.assert_array_equal(mine, theirs)
    lst, other = r.tolist(), r.tolist()
    compiled.smooth_into(lst, lst)  # one list for both: one array made of it, as in Python
    source.smooth_into(other, other)
    assert lst == other and lst != r.tolist()
    lst = r.tolist()
    assert aotc.jit(source.smooth_into)(lst, lst) is None and lst == other
    compiled.smooth_into(mine[::2], mine[1::2])  # interleaved, disjoint: allowed
    source.smooth_into(theirs[::2], theirs[1::2])
    np.testing.assert_array_equal(mine, theirs)
    compiled.add_into(mine, mine)  # no read after a write: x += x is NumPy's answer
    source.add_into(theirs, theirs)
    np.testing.assert_array_equal(mine, theirs)


@pytest.mark.parametrize("alias", [
    lambda x: (x, x.T), lambda x: (x, x), lambda x: (x.T, x), lambda x: (x[1:], x[1:]),
    lambda x: (x[:, ::-1], x[:, ::-1].T)])
def test_one_array_passed_twice_gets_pythons_answer(modules: Any, alias: Any) -> None:
    """An array and its transpose, or one array twice, for parameters the kernel writes
    and reads: the alias twin computes Python's answer (the writes are seen by the
    reads), exactly, as the same source run on the same arrays."""
    compiled, source = modules
    base = np.arange(30.0).reshape(5, 6) ** 0.5
    for steps in (0, 1, 2, 3):
        mine = np.concatenate([base, base.T[:5]], axis=1)[:, :5].copy()
        theirs = mine.copy()
        got, want = compiled.lapl_steps(*alias(mine), steps), source.lapl_steps(*alias(theirs),
                                                                                  steps)
        np.testing.assert_array_equal(mine, theirs)  # the arrays exactly; their sums are
        assert got == pytest.approx(want, rel=1e-14)  # added in another order than NumPy's
    mine, theirs = base.copy(), base.copy()
    assert compiled.stream_step(mine, mine) == source.stream_step(theirs, theirs)
    np.testing.assert_array_equal(mine, theirs)
    x, y = np.linspace(-1.0, 1.0, 7), np.linspace(-1.0, 1.0, 7)
    compiled.axpy_then_add(2.0, x, x)
    source.axpy_then_add(2.0, y, y)
    np.testing.assert_array_equal(x, y)  # 9x: the second read of x sees the first write
    with pytest.raises(ValueError, match="parameters 'f2' and 'f1' share memory"):
        compiled.stream_step(mine[:, 1:], mine[:, :-1])  # overlapping, not one array


@pytest.mark.parametrize("k", [0, 4, 7])
def test_flat_writes_reach_arguments_of_any_layout(modules: Any, k: int) -> None:
    """``x.flat[...] = v`` of a transposed or strided argument writes into it, in C
    order of its own axes, as NumPy's flatiter does (a ravel of it is a copy): the same
    source on the same layouts, exactly, also when the kernel raises after the writes."""
    compiled, source = modules
    base = np.arange(24.0).reshape(4, 6)
    for layout in (lambda b: b.T, lambda b: b[:, ::2], lambda b: b[::-1]):
        for name, args in (("flat_writes_and_unit_axes", (k,)),
                           ("ravel_items_through_a_mask", ())):
            mine, theirs = base.copy(), base.copy()
            got = _outcome(getattr(compiled, name), [layout(mine), *args])
            want = _outcome(getattr(source, name), [layout(theirs), *args])
            assert got[0] == want[0]
            if want[0] == "value":
                _same(got[1], want[1])
            np.testing.assert_array_equal(mine, theirs)


def test_writes_through_a_reshape_of_a_strided_argument_are_a_value_error(modules: Any
                                                                        ) -> None:
    """NumPy's reshape of an argument that is not C-contiguous is a view or a copy by
    its strides: writing through it is a ValueError saying so, raised before the write
    (a C-contiguous one is a view: reshaped_argument_written)."""
    compiled, _ = modules
    x = np.arange(12.0).reshape(4, 3)
    with pytest.raises(ValueError, match="writing through a reshape of an argument that "
                                         "is not C-contiguous"):
        compiled.reshaped_argument_written(x.T, 1)
    np.testing.assert_array_equal(x, np.arange(12.0).reshape(4, 3))


def test_reshapes_checked_at_run_time_raise_numpys_value_error(modules: Any) -> None:
    compiled, _ = modules
    with pytest.raises(ValueError, match="cannot reshape array of size 6 into shape"):
        compiled.as_matrix(np.arange(6.0), 4, 3)
    with pytest.raises(ValueError, match="cannot reshape array of size 12 into shape"):
        compiled.row_maxima(M, 5)


def test_arrays_swapped_in_a_loop_must_have_the_same_size(modules: Any) -> None:
    compiled, _ = modules
    with pytest.raises(ValueError, match="a loop swaps arrays of different sizes: 3 against 4"):
        compiled.jacobi_swap(np.zeros((4, 4)), np.zeros((3, 4)), 2)


def test_a_returned_argument_is_the_callers_own_array(modules: Any) -> None:
    compiled, _ = modules
    a, b = np.zeros(4), np.arange(4.0)
    assert compiled.triad_into(a, b, b, 2.0) is a
    np.testing.assert_array_equal(a, 3 * b)
    strided = np.zeros(8)[::2]  # written through NumPy, still the same object
    assert compiled.triad_into(strided, b, b, 1.0) is strided
    np.testing.assert_array_equal(strided, 2 * b)
    result, total = compiled.same_array(b)
    assert result is b and total == 6.0


def test_none_used_as_a_value_is_a_type_error(modules: Any) -> None:
    compiled, source = modules
    assert compiled.none_times_two(X, 0.0) == source.none_times_two(X, 0.0) == 1.0
    with pytest.raises(TypeError):
        source.none_times_two(X, 10.0)
    with pytest.raises(TypeError, match="None"):
        compiled.none_times_two(X, 10.0)


def test_results_that_may_be_none(modules: Any) -> None:
    compiled, _ = modules
    y = X[::-1].copy()
    np.testing.assert_array_equal(compiled.axpy_unless_empty(4, 2.0, X, y), X[::-1] + 2 * X)
    np.testing.assert_array_equal(y, X[::-1] + 2 * X)
    assert compiled.axpy_unless_empty(0, 2.0, X, y) is None
    stub = Path(compiled.__file__).with_name("kernels.pyi").read_text()
    assert "def first_index_above(x: NDArray[np.float64], t: _Float) -> int | None" in stub \
        or "-> np.int64 | None" in stub, stub


def test_a_widened_accumulator_keeps_its_wider_dtype_when_the_loop_runs_no_time(
        modules: Any) -> None:
    """Python's accumulator has the wider dtype only once the loop ran: the kernel's one
    dtype is the wider one (Numba's too), with the same value."""
    compiled, source = modules
    empty = (np.zeros(0, np.float32), np.zeros(0))
    got, want = compiled.widened_accumulators(*empty), source.widened_accumulators(*empty)
    assert [np.asarray(g).dtype for g in got] == [np.dtype("f8"), np.dtype("f8")]
    assert [np.asarray(w).dtype for w in want] == [np.dtype("f4"), np.dtype("i8")]
    assert got == want
