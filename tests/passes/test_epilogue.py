"""The epilogue pass: which matrix products join the elementwise work on their result."""

from __future__ import annotations

import numpy as np

from aotc.passes import optimize
from aotc.tracing.kernel import trace_kernel
from aotc.types import parse_signature_string


def fused(fn, signature):
    program = trace_kernel(fn, parse_signature_string(signature)).program
    return optimize(program, verify_each=True, fuse=True)


def body_prims(eqn):
    return [e.prim.name for e in dict(eqn.params)["body"].eqns]


def _headed(program) -> list:
    """Fusions headed by a matrix product."""
    return [e for e in program.eqns if e.prim.name == "fusion" and body_prims(e)[0] ==
            "dot_general"]


def test_mlp_layers_write_each_result_once():
    program = fused(lambda x, w1, b1, w2, b2: np.maximum(x @ w1 + b1, 0) @ w2 + b2,
                    "(f4[:, d], f4[d, h], f4[h], f4[h, o], f4[o])")
    first, second = _headed(program)
    assert body_prims(first) == ["dot_general", "broadcast_in_dim", "add", "max"]
    assert body_prims(second) == ["dot_general", "add"]  # one equation, not a fusion before
    assert second.inputs[0] is first.outs[0]
    assert not [e for e in program.eqns if e.prim.name == "dot_general"]


def test_a_product_used_twice_or_read_elsewhere_stays_alone():
    for fn, signature in ((lambda a, b: (a @ b + 1, (a @ b) * 2), "(f8[:, :], f8[:, :])"),
                          (lambda a, b: (a @ b).T + 1, "(f8[n, :], f8[:, n])"),
                          (lambda a, b: (a @ b)[::-1] * 2 + 1, "(f8[:, :], f8[:, :])"),
                          (lambda a, b: a @ b > 0, "(f8[:, :], f8[:, :])"),
                          (lambda a, b: np.sum(np.exp(a @ b), axis=1), "(f8[:, :], f8[:, :])"),
                          (lambda a, b: (a @ b) + 1, "(i8[:, :], i8[:, :])"),
                          (lambda a, b: a @ b + 1, "(f8[:, :, :], f8[:, :])")):
        program = fused(fn, signature)
        assert not _headed(program), program


def test_fusion_off_leaves_products_alone():
    program = trace_kernel(lambda a, b: np.maximum(a @ b, 0),
                           parse_signature_string("(f4[:, :], f4[:, :])")).program
    assert not _headed(optimize(program, fuse=False))
    assert len(_headed(optimize(program, fuse=True))) == 1
