"""The other systems, each given the same NumPy source where it can take it.

- Numba: ``@njit`` of the kernel as written; where Numba does not support the NumPy
  used (``keepdims``), a loop version written the way Numba users write it.
- JAX: the same source with ``np`` bound to ``jax.numpy``, under ``jax.jit`` (CPU,
  its thread pool pinned to one core); kernels with in-place writes or Python loops
  are Numba's game only.
- numexpr: the elementwise kernels as expression strings.

None of these are aotc dependencies; missing ones are reported as "-".
"""

from __future__ import annotations

import contextlib
import inspect
import os
import types
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

JAX_KERNELS = ["triad", "axpy_sum", "selu", "black_scholes", "softmax", "layernorm", "rosen",
               "arc_distance", "harris", "pairwise", "log_likelihood", "tiny", "mlp"]

NUMEXPR = {
    "triad": ("b + s * c", ("b", "c", "s")),
    "axpy_sum": ("sum(x + y * z)", ("x", "y", "z")),
    "selu": ("1.0507010 * where(x > 0, x, 1.6732632 * (exp(x) - 1))", ("x",)),
    "arc_distance": ("2 * arctan2(sqrt(t), sqrt(1 - t))", None),
}


def numba_version() -> str:
    try:
        import numba
    except ImportError:
        return "not installed"
    return numba.__version__


def jax_version() -> str:
    try:
        import jax
    except ImportError:
        return "not installed"
    return jax.__version__


def numexpr_version() -> str:
    try:
        import numexpr
    except ImportError:
        return "not installed"
    return numexpr.__version__


def _rebind(fn: Callable[..., Any], **names: Any) -> Callable[..., Any]:
    """``fn`` with some of its globals replaced (``np`` -> ``jax.numpy``)."""
    fn = inspect.unwrap(fn)  # @aotc.export's wrapper checks calls against the signatures
    scope = dict(fn.__globals__)
    scope.update(names)
    for helper in ("cnd",):
        if helper in scope and isinstance(scope[helper], types.FunctionType):
            scope[helper] = types.FunctionType(scope[helper].__code__, scope)
    return types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__)


def _numba_loops(numba: Any) -> dict[str, Callable[..., Any]]:
    njit = numba.njit(fastmath=False, cache=False)

    @njit
    def softmax(x):
        out = np.empty_like(x)
        for i in range(x.shape[0]):
            m = x[i].max()
            e = np.exp(x[i] - m)
            out[i] = e / e.sum()
        return out

    @njit
    def layernorm(x, g, b):
        out = np.empty_like(x)
        for i in range(x.shape[0]):
            mu = x[i].mean()
            var = ((x[i] - mu) ** 2).mean()
            out[i] = (x[i] - mu) / np.sqrt(var + np.float32(1e-5)) * g + b
        return out

    @njit
    def pairwise(p):
        n = p.shape[0]
        out = np.empty((n, n))
        for i in range(n):
            for j in range(n):
                acc = 0.0
                for k in range(3):
                    d = p[i, k] - p[j, k]
                    acc += d * d
                out[i, j] = np.sqrt(acc)
        return out

    return {"softmax": softmax, "layernorm": layernorm, "pairwise": pairwise}


LOOP_KERNELS = ["ema", "mandelbrot", "gray_scott", "isqrt_newton"]


def make_peers(sources: dict[str, Any]) -> dict[str, dict[str, Callable[..., Any]]]:
    """``{kernel: {system: callable}}`` for every installed peer."""
    arrays, loops = sources["bench_kernels"], sources["tour.loops"]
    peers: dict[str, dict[str, Callable[..., Any]]] = {}
    try:
        import numba
    except ImportError:
        numba = None
    if numba is not None:
        numba_loops = _numba_loops(numba)
        for name in JAX_KERNELS + LOOP_KERNELS:
            source = loops if name in LOOP_KERNELS else arrays
            fn = numba_loops.get(name)
            if fn is None:
                scope_fn = _rebind(getattr(source, name))
                if "cnd" in scope_fn.__globals__:
                    scope_fn.__globals__["cnd"] = numba.njit(scope_fn.__globals__["cnd"])
                fn = numba.njit(scope_fn)
            peers.setdefault(name, {})["numba"] = fn
    with _one_core():
        try:
            import jax
            import jax.numpy as jnp
        except ImportError:
            jax = None
        if jax is not None:  # the client and its thread pool start here, on one core
            jax.block_until_ready(jax.jit(lambda a: a + 1)(np.zeros(1)))
    if jax is not None:
        for name in JAX_KERNELS:
            jitted = jax.jit(_rebind(getattr(arrays, name), np=jnp))
            peers.setdefault(name, {})["jax"] = (
                lambda *a, f=jitted: jax.block_until_ready(f(*a)))
    try:
        import numexpr
    except ImportError:
        numexpr = None
    if numexpr is not None:
        numexpr.set_num_threads(1)
        for name, (expr, params) in NUMEXPR.items():
            peers.setdefault(name, {})["numexpr"] = _numexpr_fn(numexpr, name, expr, params)
    return peers


@contextlib.contextmanager
def _one_core() -> Iterator[None]:
    """Threads started inside run on one core, as every other system here.

    XLA's CPU client still runs work on several threads with the ``XLA_FLAGS`` run.py
    sets (jax 0.10: softmax took 1.4x its wall time in CPU time), so its pool is created
    while this thread is pinned to one core, and its threads inherit the pin. Linux
    only; elsewhere nothing changes.
    """
    if not hasattr(os, "sched_setaffinity"):
        yield
        return
    allowed = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(allowed)})
    try:
        yield
    finally:
        os.sched_setaffinity(0, allowed)


def _numexpr_fn(numexpr: Any, name: str, expr: str, params: Any) -> Callable[..., Any]:
    if name == "arc_distance":
        def arc(theta_1: Any, phi_1: Any, theta_2: Any, phi_2: Any) -> Any:
            t = numexpr.evaluate("sin((theta_2 - theta_1) / 2) ** 2 + cos(theta_1) * "
                                 "cos(theta_2) * sin((phi_2 - phi_1) / 2) ** 2")
            return numexpr.evaluate(expr, local_dict={"t": t})
        return arc

    def run(*args: Any) -> Any:
        result = numexpr.evaluate(expr, local_dict=dict(zip(params, args, strict=True)))
        return result[()] if result.ndim == 0 else result
    return run
