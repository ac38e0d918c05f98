"""Check the transformed kernels: gradients against finite differences, batches against
loops, the gufunc against NumPy.

    python -m transforms_demo.demo
"""

from __future__ import annotations

import numpy as np

from transforms_demo import kernels


def finite_differences(w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    h = 1e-6
    grad = np.zeros_like(w)
    for i in range(w.size):
        e = np.zeros_like(w)
        e[i] = h
        grad[i] = (kernels.loss(w + e, X, y) - kernels.loss(w - e, X, y)) / (2 * h)
    return grad


def main() -> int:
    rng = np.random.default_rng(0)
    w, X, y = rng.standard_normal(4), rng.standard_normal((32, 4)), rng.standard_normal(32)
    x = rng.standard_normal(10)
    checks = {
        "selu_batch": np.allclose(kernels.selu_batch(x), [kernels.selu(v) for v in x]),
        "loss_grad": np.allclose(kernels.loss_grad(w, X, y), finite_differences(w, X, y),
                                 rtol=1e-6, atol=1e-8),
        "loss_vg": np.isclose(kernels.loss_vg(w, X, y)[0], kernels.loss(w, X, y)),
        "per_example_grads": np.allclose(
            kernels.per_example_grads(w, X[:, None, :], y[:, None]),
            [kernels.loss_grad(w, X[i:i + 1], y[i:i + 1]) for i in range(len(y))]),
        "wdot": np.allclose(kernels.wdot(X, w), X @ w),
    }
    print(f"transforms_demo.kernels loaded from {kernels.__file__}")
    for name, ok in checks.items():
        print(f"{name:<18} {'ok' if ok else 'MISMATCH'}")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
