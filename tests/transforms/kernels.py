"""Kernels the transform tests map and differentiate (a module, so tracing reads source)."""


import numpy as np

import aotc
from aotc import f64, i64

# Named sizes as aliases (inside an annotation a string reads as a forward reference).
Vn, Vm, Vd, Vk = f64["n"], f64["m"], f64["d"], f64["k"]
Mnm = f64["n", "m"]
Ik = i64["k"]


@aotc.export
def selu(x: f64) -> f64:
    return 1.0507 * np.where(x > 0, x, 1.6733 * (np.exp(x) - 1))


@aotc.export
def rosen(x: Vn) -> f64:
    t0 = 100 * (x[1:] - x[:-1] ** 2) ** 2
    return np.sum(t0 + (1 - x[:-1]) ** 2)


@aotc.export
def matvec(a: Mnm, x: Vm) -> Vn:
    return np.tanh(a @ x)


@aotc.export
def sqdist(x: Vd, y: Vd) -> f64:
    return np.sum((x - y) ** 2)


@aotc.export
def normalize(x: Vn) -> Vn:
    return (x - x.mean()) / (x.std() + 1.0)


@aotc.export
def newton_sqrt(a: f64) -> tuple[f64, i64]:
    x = a + 1.0
    steps = 0
    while abs(x * x - a) > 1e-10 * (a + 1.0):
        x = 0.5 * (x + a / x)
        steps += 1
    return x, steps


@aotc.export
def collatz(n: i64) -> i64:
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


@aotc.export
def piecewise(x: f64) -> f64:
    return aotc.lax.cond(x > 0, lambda v: np.sqrt(v), lambda v: -v * v, x)


@aotc.export
def horner(c: Vm, x: f64) -> f64:
    acc = 0.0
    for i in range(c.shape[0]):
        acc = acc * x + c[i]
    return acc


@aotc.export
def ema(x: Vn, a: f64) -> Vn:
    def step(carry, xi):
        carry = a * carry + (1 - a) * xi
        return carry, carry
    _, ys = aotc.lax.scan(step, x[0], x)
    return ys


@aotc.export
def gather(x: Vn, i: Ik) -> Vk:
    return x[i] * 2.0


@aotc.export
def scale_into(x: Vn, a: f64) -> None:
    x *= a


@aotc.export
def positives(x: Vn) -> f64[:]:
    return x[x > 0]


@aotc.export
def ones(x: Vn, k: int) -> Vn:
    return x + np.zeros(k).sum()


# Exported transforms: the spellings the README documents.
selu_batch = aotc.export(aotc.vmap(selu))
aotc.export(aotc.vmap(rosen), name="rosen_batch")
aotc.export(aotc.vmap(matvec, in_axes=(None, 0)), name="matvec_batch")
pairwise = aotc.export(aotc.vmap(aotc.vmap(sqdist, in_axes=(None, 0)), in_axes=(0, None)))


@aotc.export
def bucket(edges: Vm, v: Vk) -> Ik:
    return np.searchsorted(edges, v)


# -- kernels to differentiate ------------------------------------------------------------
Mnd, Mdk = f64["n", "d"], f64["d", "k"]


@aotc.export
def loss(w: Vd, X: Mnd, y: Vn) -> f64:
    z = X @ w
    p = np.tanh(z)
    r = np.where(z > 0, p - y, 0.5 * (p - y))
    return np.sum(r ** 2) / y.shape[0] + 0.01 * np.sum(np.maximum(w, 0.1) ** 2)


@aotc.export
def xent(W: Mdk, X: Mnd) -> f64:
    logits = X @ W
    m = logits.max(axis=1, keepdims=True)
    lse = np.log(np.sum(np.exp(logits - m), axis=1)) + m[:, 0]
    return np.sum(lse - logits[:, 0])


@aotc.export
def views(x: Mnd) -> f64:
    t = np.sin(x.T) @ x
    return np.sum(t.reshape(-1)[::2] * np.cos(t).reshape(-1)[::2]) + np.prod(x[0, :2])


@aotc.export
def ema_sum(x: Vn, a: f64) -> f64:
    def step(carry, xi):
        carry = a * carry + (1 - a) * np.sin(xi)
        return carry, carry * carry
    last, ys = aotc.lax.scan(step, x[0], x)
    return np.sum(ys) + last


@aotc.export
def unrolled(x: Vn, k: int) -> f64:
    def body(i, v):
        return np.tanh(v * 1.1) + 0.1 * i
    return np.sum(aotc.lax.fori_loop(0, k, body, x))


@aotc.export
def gather_sum(x: Vn, i: Ik) -> f64:
    return np.sum(x[i] ** 2 * x[0])


@aotc.export
def cumulative(x: Vn) -> f64:
    return np.sum(np.cumsum(x) ** 2) + np.sum(np.concatenate([x, x[::-1] * 2.0]) ** 3)


@aotc.export
def while_sum(x: Vn) -> f64:
    s = np.sum(x)
    while s < 100.0:
        s = s * 2.0 + 1.0
    return s


@aotc.export
def masked(x: Mnd) -> f64:
    picked = x[x[:, 0] > 0]
    return np.sum(np.sin(picked) * picked)
