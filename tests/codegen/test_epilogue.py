"""Epilogue fusion: a matrix product with the elementwise work on its result, applied to
each tile of the product inside the GEMM (:mod:`aotc.codegen.nests.epilogue`), against NumPy.

Sizes take the tiled path (more than four rows, several columns, a contracted axis),
straddling the register and cache blocks, and the paths that apply the epilogue after
a whole product (a few rows, one column, an empty contracted axis); operands come in
C and Fortran order and as strided views; each target's micro-kernel runs. Results
obey the GEMM's error bound (see ``test_gemm``), scaled by the epilogue's own.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from aotc.codegen import TargetSpec
from aotc.codegen.core.jit import JitLibrary
from aotc.passes import optimize
from aotc.tracing.kernel import trace_kernel
from aotc.types import parse_signature_string

TARGETS = ["x86-64-v2", "x86-64-v3", "native"]


def _mlp(x, w1, b1, w2, b2):
    return np.maximum(x @ w1 + b1, 0) @ w2 + b2


def _scaled_tanh(a, b, s):
    return np.tanh((a @ b) * s - 1.0)


#: name -> (kernel, signature, number of products fused with their epilogue)
KERNELS = {
    "mlp_f4": (_mlp, "(f4[:, d], f4[d, h], f4[h], f4[h, o], f4[o])", 2),
    "mlp_f8": (_mlp, "(f8[:, d], f8[d, h], f8[h], f8[h, o], f8[o])", 2),
    "scaled_tanh_f4": (_scaled_tanh, "(f4[:, :], f4[:, :], f4)", 1),
    "transposed_product_f8": (lambda a, b: np.abs(a.T @ b) * 2 - 1, "(f8[d, :], f8[d, :])", 1),
}
#: (m, d, h, o): rows, contracted, hidden, outputs.
SIZES = [(37, 20, 50, 7), (13, 300, 70, 33), (250, 260, 40, 1), (3, 5, 4, 2), (30, 0, 6, 3),
         (7, 1, 1, 17)]


@functools.cache
def _library(target: str) -> dict:
    spec = TargetSpec.parse(target)
    if not set(spec.cpu_features) <= set(TargetSpec.parse("native").cpu_features):
        pytest.skip(f"this CPU cannot run {target} code")
    programs = {name: optimize(trace_kernel(fn, parse_signature_string(sig), name=name).program,
                               verify_each=True)
                for name, (fn, sig, _) in KERNELS.items()}
    library = JitLibrary(list(programs.values()), spec)
    return dict(zip(programs, library.kernels, strict=True))


def _layouts(a: np.ndarray) -> list[np.ndarray]:
    strided = np.zeros((a.shape[0], 2 * a.shape[1]), a.dtype)
    strided[:, ::2] = a
    return [a, np.asfortranarray(a), strided[:, ::2]]


def _check(got: np.ndarray, want: np.ndarray, scale: float, k: int, what: str) -> None:
    eps = np.finfo(want.dtype).eps
    bound = (k + 2) * eps * scale * 4 + eps
    assert got.shape == want.shape and got.dtype == want.dtype, what
    error = np.abs(got - want)
    assert np.all(error <= bound * (1 + np.abs(want))), (what, error.max())


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", list(KERNELS))
def test_product_with_its_epilogue_matches_numpy(target, name):
    kernels = _library(target)
    fn, _, fused = KERNELS[name]
    kernel = kernels[name]
    heads = [e for e in kernel.program.eqns if e.prim.name == "fusion"
             and e.params["body"].eqns[0].prim.name == "dot_general"]
    assert len(heads) == fused, kernel.program
    rng = np.random.default_rng(5)
    dtype = np.float32 if name.endswith("f4") else np.float64
    for m, d, h, o in SIZES:
        if name.startswith("mlp"):
            args = [rng.standard_normal(s).astype(dtype) for s in ((m, d), (d, h), (h,), (h, o),
                                                                  (o,))]
            variants = [(x, w, *args[2:]) for x in _layouts(args[0]) for w in _layouts(args[1])]
        elif name.startswith("scaled"):
            a, b = rng.standard_normal((m, d)).astype(dtype), rng.standard_normal((d, h)).astype(
                dtype)
            variants = [(x, b, dtype(0.25)) for x in _layouts(a)] + [(a, np.asfortranarray(b),
                                                                     dtype(2.0))]
        else:
            a, b = rng.standard_normal((d, m)), rng.standard_normal((d, h))
            variants = [(x, y) for x in _layouts(a) for y in _layouts(b)] if d else []
        for args in variants:
            want = fn(*args)
            (got,) = kernel(*args)
            scale = float(np.abs(args[0]).max(initial=1)) * float(np.abs(args[1]).max(initial=1))
            _check(got, want, scale * max(h, 1), max(d, h), f"{name}{(m, d, h, o)}")
