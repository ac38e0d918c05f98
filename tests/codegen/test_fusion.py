"""Fused loop nests against NumPy, the IR interpreter and the unfused compiled baseline.

Every kernel here is traced and optimized with fusion on, and the test first checks that
the interesting part really became a ``fusion`` equation, so the comparisons exercise the
fused lowering: views composed into indices, broadcasts, several outputs, sibling
reductions, reductions over leading and trailing axes, empty iteration spaces and
rank-0 operands, on contiguous, strided, reversed and transposed inputs.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from aotc.codegen.core.jit import JitLibrary
from aotc.codegen.nests.fusion_plan import plan_fusion, reads_only_at_own_index
from aotc.interpret import eval_program
from aotc.passes import optimize
from aotc.tracing.kernel import trace_kernel
from aotc.types import parse_signature_string

from .data import assert_same

rng = np.random.default_rng(11)
M = rng.standard_normal((37, 53))
M32 = M.astype(np.float32)
V = rng.standard_normal(203)


def _mats(m: np.ndarray) -> list[np.ndarray]:
    """Contiguous, transposed, reversed, strided in both axes, and empty in each axis."""
    return [m, m.T.copy().T, m[::-1], m[::2, ::-3], m[:, ::-1], m[:0], m[:, :0], m[:1, :1]]


def softmax_rows(x):
    """Softmax along rows (also traced by tests/passes/test_fusion.py)."""
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def exp_and_its_row_sums(x):
    e = np.exp(x / 4)
    return e, e.sum(axis=1)


def softmax_3d(x):
    """Softmax over the last two axes of a 3-d array."""
    e = np.exp(x - x.max(axis=(1, 2), keepdims=True))
    return e / e.sum(axis=(1, 2), keepdims=True)


def layernorm_rows(x, g, b):
    """Layer normalization along rows (also traced by tests/passes/test_fusion.py)."""
    mu = x.mean(axis=1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * g + b


def _logsumexp(x):
    m = x.max(axis=1)
    return m + np.log(np.sum(np.exp(x - m[:, None]), axis=1))


#: name -> (kernel, signature, inputs, number of fusion equations, float tolerance)
KERNELS = {
    "views_and_broadcasts": (
        lambda x, y: (x.T[::-1] * y[::-1][:, None] + 1.0, np.sqrt(x[:, 1:] ** 2)),
        "(f8[:, :], f8[:])", [(m, V[:m.shape[1]]) for m in _mats(M) if m.shape[0]], 2, 1e-12),
    "column_and_row_broadcast": (
        lambda x, r, c: (x - r) * c[:, None] + 0.5,
        "(f8[:, n], f8[n], f8[:])", [(m, m[0] * 2, m[:, 0] - 1) for m in _mats(M) if m.size], 1,
        0.0),
    "softmax": (softmax_rows, "(f4[:, :])", [(m,) for m in _mats(M32) if m.shape[1]], 1, 1e-6),
    "exp_and_its_row_sums": (exp_and_its_row_sums,
                             "(f8[:, :])", [(m,) for m in _mats(M)], 1, 1e-13),
    "layernorm": (layernorm_rows, "(f4[:, d], f4[d], f4[d])",
                  [(m, m[0] + 1, np.abs(m[-1]) + 8) for m in _mats(M32) if m.shape[0]], 1, 1e-5),
    # Row fusion: statistics of the last axis, used by the rest of the row.
    "standardize": (lambda x: (x - x.mean(axis=1, keepdims=True)) / x.std(axis=1, keepdims=True),
                    "(f8[:, :])", [(m,) for m in _mats(M) if m.shape[1] > 1], 1, 1e-12),
    "log_softmax": (lambda x: x - _logsumexp(x)[:, None],
                    "(f8[:, :])", [(m,) for m in _mats(M) if m.shape[1]], 1, 1e-12),
    # A row value as a result is not a reduction: the max and the sum stay loops of
    # their own (3 loops with the log-softmax, 2 without).
    "log_softmax_and_logsumexp": (lambda x: (x - _logsumexp(x)[:, None], _logsumexp(x)),
                                  "(f8[:, :])", [(m,) for m in _mats(M) if m.shape[1]], 3,
                                  1e-12),
    "l2_normalize": (lambda x: x / np.sqrt((x * x).sum(axis=1, keepdims=True)),
                     "(f4[:, :])", [(m,) for m in _mats(M32)], 1, 1e-6),
    "softmax_3d_last_two_axes": (softmax_3d,
        "(f8[:, :, :])", [(t,) for t in (M[:36].reshape(4, 9, 53),
                                         M[:36].reshape(4, 9, 53)[:, ::-2, 1::3])], 1, 1e-12),
    "statistic_of_another_row": (lambda x: x - x.sum(axis=1)[0] + x.max(axis=1)[::-1, None],
                                 "(f8[:, :])", [(m,) for m in _mats(M) if m.size], 1, 1e-12),
    "statistic_across_its_axis": (lambda x: x / x.sum(axis=1), "(f8[n, n])",
                                  [(M[:37, :37],), (M[:37, :37].T,), (M[:0, :0],)], 1, 1e-12),
    "sibling_means_axis0": (lambda x: (x.mean(axis=0), (x * x).mean(axis=0)),
                            "(f8[:, :])", [(m,) for m in _mats(M) if m.shape[0]], 1, 1e-12),
    "sibling_sums_axis1": (lambda x: (np.sum(x + 1, axis=1), np.max(np.abs(x), axis=1),
                                      np.min(x * 2, axis=1), np.prod(x / 4 + 1, axis=1)),
                           "(f8[:, :])", [(m,) for m in _mats(M) if m.shape[1]], 1, 1e-12),
    "leading_and_trailing_axes": (
        lambda x: (np.sum(x * x, axis=(0, 2)), np.sum(x * 3, axis=(1, 2)),
                   np.max(x - 1, axis=0), np.prod(x / 8 + 1, axis=1), np.sum(np.abs(x))),
        "(f8[:, :, :])", [(t,) for t in (M[:36].reshape(4, 9, 53), M[:36].reshape(4, 9, 53).T,
                                         M[:36].reshape(4, 9, 53)[:, ::-2, 1::3])], 5, 1e-12),
    "nan_max_min": (lambda x: (np.max(x * 1, axis=1), np.min(x + 0, axis=0), np.max(x * 2)),
                    "(f8[:, :])", [(np.where(M > 1.5, np.nan, M),), (np.where(M > 1.5, np.nan,
                                                                               M).T,)],
                    3, 0.0),
    "empty_spaces": (lambda x, y: (x * 2 + y, np.sum(x * y, axis=1), np.prod(x + 1, axis=0),
                                   np.sum(x - y)),
                     "(f8[a, b], f8[a, b])",
                     [(np.zeros((0, 5)), np.zeros((0, 5))), (np.zeros((4, 0)), np.ones((4, 0))),
                      (np.zeros((0, 0)), np.zeros((0, 0)))], 4, 0.0),
    "rank0_operands": (lambda x, a, b: (np.sum(a * x + b), x * a - b, (x - x.mean()) * a),
                       "(f8[:], f8, f8)", [(V, 2.5, -1.0), (V[::-3], -0.5, 3.0), (V[:0], 1.0, 1.0),
                                           (V[:1], 0.0, np.nan)], 2, 1e-12),
    "integers_and_bools": (lambda x: (np.sum(x * 3), np.max(x - 7, axis=0),
                                      np.any((x > 3) & (x < 5)), np.all(x != 100, axis=1)),
                           "(i4[:, :])",
                           [(rng.integers(-9, 9, (13, 29), dtype=np.int32),),
                            (rng.integers(-9, 9, (29, 13), dtype=np.int32).T,)], 3, 0.0),
    # np.arange read by a loop is the loop's own index, never an array.
    "aranges_in_the_loop": (
        lambda x: (x * np.arange(x.shape[1]) + np.arange(x.shape[0])[::-1, None],
                   np.sum(x * np.arange(x.shape[1], dtype=np.float32), axis=1),
                   np.sum(np.sqrt(np.arange(x.shape[0] * 3) * 1.0))),
        "(f8[:, :])", [(m,) for m in _mats(M)], 3, 1e-12),
    "arange_also_returned": (lambda x: (x + np.arange(x.shape[0]) % 3, np.arange(x.shape[0])),
                             "(f8[:])", [(V,), (V[::-2],), (V[:0],)], 1, 0.0),
    # Cheap work over a reduction's result runs at each kept index inside its loop; a
    # call into log stays a loop of its own (see tests/passes/test_fusion.py).
    "reduction_epilogues": (
        lambda x: (np.sqrt((x * x).sum(axis=1)), x.mean(axis=1) * 2 - 1,
                   np.abs(x).max(axis=1) + np.log(np.abs(x).max(axis=1) + 1)),
        "(f8[:, :])", [(m,) for m in _mats(M) if m.shape[1]], 3, 1e-12),
    "pairwise_distances": (
        lambda p: np.sqrt(((p[:, None, :] - p[None, :, :]) ** 2).sum(-1)),
        "(f8[:, 3])", [(M[:, :3],), (M[::-3, 1:4],), (M[:0, :3],)], 1, 1e-15),
    "long_float32_sum": (lambda x: np.sum(x * 1.5), "(f4[:])",
                         [(rng.standard_normal(100_003).astype(np.float32),)], 1, 1e-5),
}


def _program(name: str, fuse: bool):
    fn, signature, *_ = KERNELS[name]
    traced = trace_kernel(fn, parse_signature_string(signature), name=name)
    return optimize(traced.program, verify_each=True, fuse=fuse)


@pytest.fixture(scope="module")
def compiled():
    names = list(KERNELS)
    fused = JitLibrary([_program(n, True) for n in names]).kernels
    unfused = JitLibrary([_program(n, False) for n in names]).kernels
    return {n: (f, u) for n, f, u in zip(names, fused, unfused, strict=True)}


def _fusions(program) -> list:
    return [e for e in program.eqns if e.prim.name == "fusion"]


@pytest.mark.parametrize("name", list(KERNELS))
def test_fused_kernel_matches_numpy_and_the_baseline(compiled, name):
    fn, _, inputs, n_fusions, rtol = KERNELS[name]
    fused, unfused = compiled[name]
    assert len(_fusions(fused.program)) == n_fusions, fused.program
    for args in inputs:
        what = f"{name}{[np.shape(a) for a in args]}"
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # the mean of an empty row
            expected = fn(*args)
            interpreted = eval_program(fused.program, *args)
        expected = expected if isinstance(expected, tuple) else (expected,)
        got, baseline = fused(*args), unfused(*args)
        for g, e, b, i in zip(got, expected, baseline, interpreted, strict=True):
            assert_same(g, np.asarray(e), rtol=rtol, what=what)
            assert_same(g, b, rtol=rtol, what=what + " vs unfused")
            assert_same(g, i, rtol=rtol, what=what + " vs interpreter")


def test_the_sum_does_not_depend_on_the_layout(compiled):
    """Contiguous rows take the unit-stride copy of the loop, strided ones the other:
    both must add in the same order, so the results are bitwise equal."""
    fused, _ = compiled["sibling_sums_axis1"]
    strided = np.zeros((M.shape[0], 2 * M.shape[1]))
    strided[:, ::2] = M
    for a, b in zip(fused(M), fused(strided[:, ::2]), strict=True):
        np.testing.assert_array_equal(a, b)


def test_a_long_float32_sum_is_as_accurate_as_numpys(compiled):
    """Errors against ``math.fsum``, summed over 20 arrays of 100_003 float32 normals
    (the kernel's input among them). A single array's ratio to NumPy's error is noise
    (measured 0.03x to 18x: either sum can land near the exact value by luck), which
    is what an absolute slack used to hide, with a slack 20x the errors themselves.
    Summed over 20 arrays the ratio measured 0.66 to 1.25 over ten seeds, so 2x is a
    margin over that noise, while a sum that is not pairwise (left to right in float32)
    measured 17x to 61x NumPy's error and fails."""
    fused, _ = compiled["long_float32_sum"]
    (x,) = KERNELS["long_float32_sum"][2][0]
    more = np.random.default_rng(2024)
    arrays = [x, *(more.standard_normal(x.size).astype(np.float32) for _ in range(19))]
    ours = theirs = 0.0
    for a in arrays:
        scaled = a * np.float32(1.5)  # as the kernel computes it: rounded the same
        exact = math.fsum(scaled.astype(np.float64))
        ours += abs(float(fused(a)[0]) - exact)
        theirs += abs(float(np.sum(scaled)) - exact)
    assert ours <= 2 * theirs, (ours, theirs)


def test_each_value_is_computed_once_per_index():
    """rosen reads ``x`` at two indices (``x[1:]`` and ``x[:-1]``); ``x[:-1]`` feeds two
    terms but is one node, and its square and the rest are nodes of their own."""
    program = optimize(trace_kernel(
        lambda x: np.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2),
        parse_signature_string("(f8[:])")).program)
    (eqn,) = _fusions(program)
    plan = plan_fusion(eqn.params["body"], eqn.params["shape"], eqn.params["axes"])
    loads = [n for n in plan.nodes if not hasattr(n.source, "prim") and n.index]
    assert sorted(str(n.index[0].start) for n in loads) == ["0", "x.0 - relu(x.0 - 1)"]
    body = eqn.params["body"]
    computed = [e for e in body.eqns if e.prim.name not in ("slice", "reduce_sum")]
    assert len([n for n in plan.nodes if hasattr(n.source, "prim")]) == len(computed)


def test_row_statistics_are_hoisted_out_of_the_inner_loop():
    """In layernorm's last loop, the row mean and variance vary with the row only."""
    sig = parse_signature_string("(f4[:, d], f4[d], f4[d])")
    program = optimize(trace_kernel(layernorm_rows, sig).program)
    last = _fusions(program)[-1]
    plan = plan_fusion(last.params["body"], last.params["shape"], last.params["axes"])
    per_row = [n for n in plan.nodes if n.depth == 0]
    assert any(getattr(n.source, "prim", None) is not None and n.source.prim.name == "sqrt"
               for n in per_row)


def test_reductions_keeping_the_last_axis_accumulate_whole_rows():
    """``x.sum(axis=0)``: the contiguous axis stays innermost and each output row is
    the running result; reducing the last axis accumulates in registers instead."""
    for axes, rows, order in (((0,), True, (0, 1)), ((1,), False, (0, 1)),
                              ((0, 1), False, (0, 1))):
        program = optimize(trace_kernel(lambda x, a=axes: np.sum(x * x, axis=a),
                                        parse_signature_string("(f8[:, :])")).program)
        (eqn,) = _fusions(program)
        plan = plan_fusion(eqn.params["body"], eqn.params["shape"], eqn.params["axes"])
        assert (plan.rows, plan.order) == (rows, order)


def test_which_inputs_are_read_only_at_the_index_written():
    """What in-place planning may rely on: ``x * 2 + y[::-1]`` reads ``x`` at the index
    it writes and ``y`` elsewhere; ``(x * 2)[::-1] + 1`` reads ``x`` elsewhere too."""
    for fn, aligned in ((lambda x, y: x * 2 + y[::-1], [True, False]),
                        (lambda x, y: (x * 2)[::-1] + y, [False, True])):
        program = optimize(trace_kernel(fn, parse_signature_string("(f8[n], f8[n])")).program)
        (eqn,) = _fusions(program)
        body = eqn.params["body"]
        plan = plan_fusion(body, eqn.params["shape"], eqn.params["axes"])
        by_input = dict(zip(eqn.inputs, body.inputs, strict=True))
        assert [reads_only_at_own_index(plan, by_input[v]) for v in program.inputs] == aligned


def test_row_fusion_reads_each_row_in_phases_and_carries_the_exponential():
    """softmax: the max (phase 0), the sum of exponentials (phase 1), the quotient
    (phase 2), which reloads ``exp`` from the output row rather than recomputing it;
    layernorm's last phase recomputes ``x - mean`` (one subtraction) instead."""
    program = optimize(trace_kernel(softmax_rows, parse_signature_string("(f4[:, :])")).program)
    (eqn,) = _fusions(program)
    plan = plan_fusion(eqn.params["body"], eqn.params["shape"], eqn.params["axes"])
    assert plan.phases == 3 and [s.source.prim.name for s in plan.stats()] == [
        "reduce_max", "reduce_sum"]
    assert [n.source.prim.name for n in plan.carried] == ["exp"]
    assert not [n for n in plan.phase_nodes(2) if n.source is eqn.params["body"].inputs[0]]
    program = optimize(trace_kernel(layernorm_rows, parse_signature_string(
        "(f4[:, d], f4[d], f4[d])")).program)
    (eqn,) = _fusions(program)
    plan = plan_fusion(eqn.params["body"], eqn.params["shape"], eqn.params["axes"])
    assert plan.phases == 3 and not plan.carried


def _softmax_into(x):
    x[...] = softmax_rows(x)


def _layernorm_into(x, g, b):
    x[...] = layernorm_rows(x, g, b)


@pytest.mark.parametrize("fn, signature", [(_softmax_into, "(f4[:, :])"),
                                           (_layernorm_into, "(f4[:, d], f4[d], f4[d])")])
def test_row_fusion_written_into_its_own_input(fn, signature):
    """The result may take the input's buffer: every phase of a row reads it before the
    last one writes it (and the carried ``exp`` is only reloaded, never ``x``)."""
    program = optimize(trace_kernel(fn, parse_signature_string(signature)).program)
    (kernel,) = JitLibrary([program]).kernels
    for m in (M32, M32[::2, ::-1], M32.T.copy()):
        strided = np.zeros((m.shape[0], 2 * m.shape[1]), np.float32)
        strided[:, ::2] = m
        for x in (m.copy(), strided[:, ::2]):
            _check_into(fn, kernel, (x, m[0] + 1, np.abs(m[-1]) + 8)[:len(program.inputs)])


def _check_into(fn, kernel, args):
    """``kernel(*args)`` changes ``args[0]`` as ``fn`` does."""
    expected = [a.copy() for a in args]
    fn(*expected)
    kernel(*args)
    assert_same(args[0], expected[0], rtol=1e-5, what=f"{fn.__name__}{args[0].shape}")
