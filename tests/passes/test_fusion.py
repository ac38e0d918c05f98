"""The fusion pass: which equations share a loop, on real kernels."""

from __future__ import annotations

import numpy as np
from codegen.test_fusion import layernorm_rows, softmax_rows

from aotc.passes import optimize
from aotc.tracing.kernel import trace_kernel
from aotc.types import parse_signature_string


def fused(fn, signature):
    program = trace_kernel(fn, parse_signature_string(signature)).program
    return optimize(program, verify_each=True, fuse=True)


def loops(program):
    """Top-level equations that run a loop over data (views and scalars excluded)."""
    free = {"broadcast_in_dim", "reshape", "transpose", "slice", "dim_value", "convert",
            "refine_shape"}
    return [e for e in program.eqns if e.prim.name not in free or e.outs[0].type.shape]


def body_prims(eqn):
    return [e.prim.name for e in dict(eqn.params)["body"].eqns]


def test_sum_of_an_expression_is_one_loop_reading_each_input_once():
    program = fused(lambda x, y, z: np.sum(x + y * z), "(f8[n], f8[n], f8[n])")
    (only,) = program.eqns
    assert only.prim.name == "fusion"
    assert body_prims(only) == ["mul", "add", "reduce_sum"]
    assert len(only.inputs) == 3


def test_rosen_slices_are_index_maps_inside_the_loop():
    program = fused(lambda x: np.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2),
                    "(f8[:])")
    (only,) = program.eqns
    assert only.prim.name == "fusion" and only.inputs == program.inputs
    assert body_prims(only).count("slice") == 2


def test_softmax_is_one_row_fused_loop():
    """Row fusion: the max, the sum of exponentials and the quotient are one loop nest
    over the rows; ``e`` is never written."""
    program = fused(softmax_rows, "(f4[:, :])")
    (only,) = loops(program)
    assert only.prim.name == "fusion" and dict(only.params)["axes"] == (1,)
    prims = body_prims(only)
    assert [p for p in prims if p.startswith("reduce")] == ["reduce_max", "reduce_sum"]
    assert prims[-1] == "div" and len(only.outs) == 1


def test_layernorm_mean_and_variance_are_row_statistics_of_one_loop():
    program = fused(layernorm_rows, "(f4[:, d], f4[d], f4[d])")
    (only,) = loops(program)
    assert only.prim.name == "fusion" and only.inputs[0] is program.inputs[0]
    assert body_prims(only).count("reduce_sum") == 2 and body_prims(only)[-1] == "add"


def test_a_statistic_used_outside_stays_its_own_loop():
    """The row max is a result too: it is computed first, and the rest reads it."""
    program = fused(lambda x: (x.max(axis=1), np.exp(x - x.max(axis=1, keepdims=True))),
                    "(f8[:, :])")
    fusions = [e for e in program.eqns if e.prim.name == "fusion"]
    assert [body_prims(f).count("reduce_max") for f in fusions] == [1, 0]


def test_a_statistic_read_across_the_axis_it_reduces_is_not_row_fused():
    """``x / x.sum(axis=1)`` on a square ``x`` divides column ``j`` by row ``j``'s sum:
    not computable row by row, so the sum is a loop of its own."""
    program = fused(lambda x: x / x.sum(axis=1), "(f8[n, n])")
    assert [e.prim.name for e in loops(program) if e.prim.name != "broadcast_in_dim"] \
        == ["fusion", "div"]


def test_statistics_of_leading_axes_are_not_row_fused():
    """Reducing a leading axis walks columns: each stays a pass of its own."""
    program = fused(lambda x: x - x.mean(axis=0), "(f8[:, :])")
    fusions = [e for e in program.eqns if e.prim.name == "fusion"]
    assert len(fusions) == 2


def test_sibling_reductions_read_the_data_once():
    program = fused(lambda x: (x.mean(axis=0), (x * x).mean(axis=0)), "(f8[:, :])")
    fusions = [e for e in program.eqns if e.prim.name == "fusion"]
    assert len(fusions) == 1 and body_prims(fusions[0]).count("reduce_sum") == 2
    assert not [e for e in program.eqns if e.prim.name == "reduce_sum"]


def test_cheap_work_over_a_reduction_runs_in_its_loop():
    pairwise = fused(lambda p: np.sqrt(((p[:, None, :] - p[None, :, :]) ** 2).sum(-1)),
                     "(f8[:, 3])")
    (only,) = loops(pairwise)
    assert body_prims(only)[-2:] == ["reduce_sum", "sqrt"]
    assert only.outs[0].type.ndim == 2 and len(dict(only.params)["shape"]) == 3
    means = fused(lambda x: x.sum(axis=1) / x.shape[1], "(f4[:, :])")
    (only,) = loops(means)
    assert {"reduce_sum", "div"} <= set(body_prims(only))


def test_a_math_call_over_a_reduction_stays_a_loop_of_its_own():
    # In the reduction's loop it would run once per row in scalar code; its own loop
    # is vectorized.
    program = fused(lambda x: np.log(x.sum(axis=1)), "(f8[:, :])")
    fusions = [e for e in program.eqns if e.prim.name == "fusion"]
    assert "log" not in body_prims(fusions[0]) and "reduce_sum" in body_prims(fusions[0])


def test_dependent_reductions_stay_in_order():
    program = fused(lambda x: np.sum((x - x.mean()) ** 2), "(f8[:])")
    fusions = [e for e in program.eqns if e.prim.name == "fusion"]
    assert len(fusions) == 2  # the mean's sum must finish before the second pass starts
    first, second = (program.eqns.index(f) for f in fusions)
    assert first < second


def test_fusion_off_is_the_unfused_baseline():
    program = trace_kernel(lambda x, y: np.sum(x * y + 1), parse_signature_string(
        "(f8[n], f8[n])")).program
    assert "fusion" not in {e.prim.name for e in optimize(program, fuse=False).eqns}
    assert len(loops(optimize(program, fuse=True))) == 1


def test_a_shared_view_waits_for_its_other_users():
    """harris: ``dx`` is a slice of a difference, used by three products. Growing from
    the root reaches the slice through the first product, before the others joined the
    group; it must still end up internal, so the whole kernel is one loop."""
    def harris(image):
        m, n = image.shape
        dx = (image[1:, :] - image[:m - 1, :])[:, 1:]
        dy = (image[:, 1:] - image[:, :n - 1])[1:, :]
        a, b, c = dx * dx, dy * dy, dx * dy
        return a * b - c * c - 0.05 * (a + b) * (a + b)

    program = fused(harris, "(f8[:, :])")
    (only,) = program.eqns
    assert only.prim.name == "fusion" and only.inputs == program.inputs
    assert len(only.outs) == 1 and body_prims(only).count("sub") == 4



def test_an_arange_is_the_loop_index_not_an_array():
    """``np.sum(np.sqrt(np.arange(n)))`` allocates nothing: the iota is computed in the
    loop (materialized, 10^8 elements took 3 s of page faults); one used by two loops is
    computed in each."""
    program = fused(lambda n: np.sum(np.sqrt(np.arange(n) * 1.0)), "(i8)")
    (only,) = program.eqns
    assert only.prim.name == "fusion" and only.inputs == ()
    assert body_prims(only)[0] == "iota"
    program = fused(lambda x: (x + np.arange(x.shape[0]), np.sum(x * np.arange(x.shape[0]))),
                    "(f8[:])")
    assert [e.prim.name for e in program.eqns] == ["fusion", "fusion"]
    assert all("iota" in body_prims(e) and e.inputs == program.inputs for e in program.eqns)
