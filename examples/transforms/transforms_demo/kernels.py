"""Kernels and their transforms: batched (vmap) and differentiated (grad) at build time."""

import numpy as np

import aotc
from aotc import f64

Vec = f64["d"]
Rows = f64["n", "d"]
Targets = f64["n"]


@aotc.export
def selu(x: f64) -> f64:
    """Scaled exponential linear unit of one value."""
    return 1.0507 * np.where(x > 0, x, 1.6733 * (np.exp(x) - 1))


@aotc.export
def loss(w: Vec, X: Rows, y: Targets) -> f64:
    """Mean squared error of a one-layer tanh model, with a small penalty on w."""
    r = np.tanh(X @ w) - y
    return np.mean(r * r) + 1e-3 * np.sum(w * w)


# A scalar kernel mapped over arrays: one fused loop, not a loop of calls.
selu_batch = aotc.export(aotc.vmap(selu))
# Gradients with respect to w, compiled like any other kernel.
aotc.export(aotc.grad(loss), name="loss_grad")
aotc.export(aotc.value_and_grad(loss), name="loss_vg")
# Per-example gradients: grad of one example's loss, mapped over examples.
aotc.export(aotc.vmap(aotc.grad(loss), in_axes=(None, 0, 0)), name="per_example_grads")


# A NumPy generalized ufunc: NumPy broadcasts it over the leading dims (X's rows), and
# dask.array.apply_gufunc maps it over chunks on a cluster.
@aotc.export(gufunc="(d),(d)->()")
def wdot(x: Vec, w: Vec) -> f64:
    """Weighted sum of one row."""
    return np.sum(x * w)
