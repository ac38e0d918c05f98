"""The fusion pass: which equations share a loop, on real kernels."""

from __future__ import annotations

import numpy as np

from aotc.frontend import trace_kernel
from aotc.passes import optimize
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


def test_softmax_exp_and_sum_share_a_pass():
    def softmax(x):
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    program = fused(softmax, "(f4[:, :])")
    fusions = [e for e in program.eqns if e.prim.name == "fusion"]
    # The row max (a lone reduction, fused so it vectorizes), then exp with its sum.
    assert [body_prims(f)[-1] for f in fusions] == ["reduce_max", "reduce_sum"]
    assert body_prims(fusions[1])[-2:] == ["exp", "reduce_sum"]
    assert len(fusions[1].outs) == 2  # e is written once and reused by the division


def test_sibling_reductions_read_the_data_once():
    program = fused(lambda x: (x.mean(axis=0), (x * x).mean(axis=0)), "(f8[:, :])")
    fusions = [e for e in program.eqns if e.prim.name == "fusion"]
    assert len(fusions) == 1 and body_prims(fusions[0]).count("reduce_sum") == 2
    assert not [e for e in program.eqns if e.prim.name == "reduce_sum"]


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

