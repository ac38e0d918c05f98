"""Timing of transformed kernels (issue 12), one run, single thread, printed as ratios.

    python benchmarks/bench_transforms.py

- vmap: ``vmap(selu)`` compiled (in-process JIT: the same object code a wheel ships)
  vs a Python loop over the unbatched compiled kernel (the JIT's ctypes call, and the
  extension's Cython wrapper when ``TRANSFORMS_DEMO`` names the demo project built in
  place), and vs ``jax.jit(jax.vmap(f))`` when JAX is installed;
- grad: ``grad(loss)`` compiled vs ``jax.jit(jax.grad(loss))``.

The process is pinned to one core before JAX starts, so XLA's threads share it.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

if hasattr(os, "sched_setaffinity"):
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                      "intra_op_parallelism_threads=1")

import importlib  # noqa: E402
import importlib.util  # noqa: E402

import numpy as np  # noqa: E402

import aotc  # noqa: E402
from aotc.codegen.core.jit import JitLibrary  # noqa: E402
from aotc.passes import optimize  # noqa: E402
from aotc.tracing.kernel import trace_kernel  # noqa: E402

_SOURCE = Path(__file__).resolve().parents[1] / "examples/transforms/transforms_demo/kernels.py"
_spec = importlib.util.spec_from_file_location("transforms_demo_source", _SOURCE)
assert _spec is not None and _spec.loader is not None
K = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = K
_spec.loader.exec_module(K)
#: The demo project built in place (``python -m aotc build DIR``): its extension's selu is
#: the unbatched kernel as a user calls it, for the Python loop.
EXT: Any = None
if "TRANSFORMS_DEMO" in os.environ:
    sys.path.insert(0, os.environ["TRANSFORMS_DEMO"])
    EXT = importlib.import_module("transforms_demo.kernels")

try:
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
except ImportError:
    jax = None


def best(fn: Callable[[], Any], repeat: int = 5, min_time: float = 0.05) -> float:
    """Seconds per call: the best of ``repeat`` timings of enough calls."""
    fn()
    n = 1
    while True:
        t = time.perf_counter()
        for _ in range(n):
            fn()
        if time.perf_counter() - t > min_time:
            break
        n *= 2
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        times.append((time.perf_counter() - t) / n)
    return min(times)


def compiled(fn: Any) -> Any:
    sig = (fn.signatures() if hasattr(fn, "signatures") else fn.__aotc_export__.signatures)[0]
    return JitLibrary([optimize(trace_kernel(fn, sig).program)]).kernels[0]


def main() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(100_000)
    w, X, y = rng.standard_normal(64), rng.standard_normal((4096, 64)), rng.standard_normal(4096)
    selu1, selu_b = compiled(K.selu), compiled(aotc.vmap(K.selu))
    grad_c = compiled(aotc.grad(K.loss))
    xs = x[:2000]
    rows = [
        ("vmap(selu), 1e5", best(lambda: selu_b(x)), None),
        ("loop of JIT selu", best(lambda: [selu1(v) for v in xs]) * len(x) / len(xs), None),
        ("grad(loss) 4096x64", best(lambda: grad_c(w, X, y)), None),
    ]
    if EXT is not None:  # the built extension's Cython wrapper
        ext = EXT.selu
        rows.insert(2, ("loop of ext. selu", best(lambda: [ext(v) for v in xs])
                        * len(x) / len(xs), None))
    if jax is not None:
        def selu_j(v):
            return 1.0507 * jnp.where(v > 0, v, 1.6733 * (jnp.exp(v) - 1))

        def loss_j(w, X, y):
            r = jnp.tanh(X @ w) - y
            return jnp.mean(r * r) + 1e-3 * jnp.sum(w * w)
        vj = jax.jit(jax.vmap(selu_j))
        gj = jax.jit(jax.grad(loss_j))
        np.testing.assert_allclose(np.asarray(vj(x)), selu_b(x)[0], rtol=1e-12)
        np.testing.assert_allclose(np.asarray(gj(w, X, y)), grad_c(w, X, y)[0], rtol=1e-9)
        rows[0] = (rows[0][0], rows[0][1], best(lambda: vj(x).block_until_ready()))
        rows[-1] = (rows[-1][0], rows[-1][1], best(lambda: gj(w, X, y).block_until_ready()))
    print(f"{'kernel':<22}{'aotc (ms)':>12}{'jax.jit (ms)':>14}")
    for name, ours, theirs in rows:
        jt = f"{theirs * 1e3:14.3f}" if theirs is not None else f"{'-':>14}"
        print(f"{name:<22}{ours * 1e3:12.3f}{jt}")
    for name, loop, _ in rows[1:-1]:
        print(f"vmap vs {name}: {loop / rows[0][1]:.0f}x faster")


if __name__ == "__main__":
    main()
