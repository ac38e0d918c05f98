"""The other systems, each given the same NumPy source where it can take it.

- Numba: ``@njit`` of the kernel as written; where Numba does not support the NumPy
  used (``keepdims``), a loop version written the way Numba users write it. With more
  than one thread: ``@njit(parallel=True)``, with ``prange`` versions of the loop and
  row kernels and of the writes into an argument (Numba parallelizes the others' array
  expressions and reductions itself; products call its BLAS).
- JAX: the same source with ``np`` bound to ``jax.numpy``, under ``jax.jit`` (CPU; run.py
  pins a one-thread run to one core, which XLA's thread pool then shares; with more
  threads, XLA's default threading);
  kernels with in-place writes, value-dependent shapes or Python loops over elements
  are left out.
- numexpr: the elementwise kernels as expression strings.

None of these are aotc dependencies; missing ones are reported as "-".
"""

from __future__ import annotations

import importlib
import inspect
import types
from collections.abc import Callable
from typing import Any

import numpy as np

Kernel = Callable[..., Any]

#: What JAX cannot take as written: in-place writes, value-dependent sizes, loops.
NO_JAX = {"triad_out", "sum_positive", "unique_f64", "unique_i64", "ema", "mandelbrot",
          "gray_scott", "isqrt_newton", "neighbour_sums", "heat_steps", "knapsack",
          "box_blur", "convolve_valid"}
#: Kernels of the numpy_tour example's loops module (the rest are bench_kernels').
LOOP_KERNELS = ["ema", "mandelbrot", "gray_scott", "isqrt_newton", "neighbour_sums",
                "heat_steps", "knapsack", "box_blur", "convolve_valid"]

NUMEXPR = {
    "triad": ("b + s * c", ("b", "c", "s")),
    "triad_out": ("b + s * c", ("a", "b", "c", "s")),
    "axpy_sum": ("sum(x + y * z)", ("x", "y", "z")),
    "array_sum": ("sum(b)", ("b",)),
    "selu": ("1.0507010 * where(x > 0, x, 1.6732632 * (exp(x) - 1))", ("x",)),
    "arc_distance": ("2 * arctan2(sqrt(t), sqrt(1 - t))", ()),
}


def _optional(package: str) -> Any:
    """The package, or None when it is not installed."""
    try:
        return importlib.import_module(package)
    except ImportError:
        return None


def version(package: str) -> str:
    module = _optional(package)
    return "not installed" if module is None else str(module.__version__)


def _rebind(fn: Kernel, **names: Any) -> Kernel:
    """``fn`` with some of its globals replaced (``np`` -> ``jax.numpy``)."""
    fn = inspect.unwrap(fn)  # @aotc.export's wrapper checks calls against the signatures
    scope = dict(fn.__globals__)
    scope.update(names)
    for helper in ("cnd",):
        if helper in scope and isinstance(scope[helper], types.FunctionType):
            scope[helper] = types.FunctionType(scope[helper].__code__, scope)
    return types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__)


def _numba_loops(numba: Any, parallel: bool) -> dict[str, Kernel]:
    """Loop versions: row kernels Numba cannot take as written (``keepdims``), and with
    ``parallel`` the ``prange`` versions."""
    njit = numba.njit(parallel=parallel)
    prange = numba.prange if parallel else range

    @njit
    def softmax(x):  # type: ignore[no-untyped-def]
        out = np.empty_like(x)
        for i in prange(x.shape[0]):
            m = x[i].max()
            e = np.exp(x[i] - m)
            out[i] = e / e.sum()
        return out

    @njit
    def layernorm(x, g, b):  # type: ignore[no-untyped-def]
        out = np.empty_like(x)
        for i in prange(x.shape[0]):
            mu = x[i].mean()
            var = ((x[i] - mu) ** 2).mean()
            out[i] = (x[i] - mu) / np.sqrt(var + np.float32(1e-5)) * g + b
        return out

    @njit
    def pairwise(p):  # type: ignore[no-untyped-def]
        n = p.shape[0]
        out = np.empty((n, n))
        for i in prange(n):
            for j in range(n):
                acc = 0.0
                for k in range(3):
                    d = p[i, k] - p[j, k]
                    acc += d * d
                out[i, j] = np.sqrt(acc)
        return out

    loops = {"softmax": softmax, "layernorm": layernorm, "pairwise": pairwise}
    if parallel:
        @njit
        def triad(b, c, s):  # type: ignore[no-untyped-def]
            out = np.empty_like(b)
            for i in prange(b.shape[0]):
                out[i] = b[i] + s * c[i]
            return out

        @njit
        def triad_out(a, b, c, s):  # type: ignore[no-untyped-def]
            for i in prange(a.shape[0]):
                a[i] = b[i] + s * c[i]
            return a

        loops.update(triad=triad, triad_out=triad_out)
    return loops


def make_peers(sources: dict[str, Any], threads: int) -> dict[str, dict[str, Kernel]]:
    """``{kernel: {system: callable}}`` for every installed peer, using ``threads``."""
    kernels = {name: fn for module in sources.values() for name, fn in vars(module).items()
               if hasattr(fn, "__aotc_export__")}
    peers: dict[str, dict[str, Kernel]] = {name: {} for name in kernels}
    numba = _optional("numba")
    if numba is not None:
        numba.set_num_threads(threads)
        loops = _numba_loops(numba, parallel=threads > 1)
        for name, fn in kernels.items():
            if name not in loops:
                fn = _rebind(fn)
                if "cnd" in fn.__globals__:
                    fn.__globals__["cnd"] = numba.njit(fn.__globals__["cnd"])
            peers[name]["numba"] = loops.get(name) or numba.njit(parallel=threads > 1)(fn)
    jax = _optional("jax")
    if jax is not None:
        jnp = jax.numpy
        for name, fn in kernels.items():
            if name not in NO_JAX:
                jitted = jax.jit(_rebind(fn, np=jnp))
                peers[name]["jax"] = lambda *a, f=jitted: jax.block_until_ready(f(*a))
    numexpr = _optional("numexpr")
    if numexpr is not None:
        numexpr.set_num_threads(threads)
        for name, (expr, params) in NUMEXPR.items():
            peers[name]["numexpr"] = _numexpr_fn(numexpr, name, expr, params)
    return peers


def _numexpr_fn(numexpr: Any, name: str, expr: str, params: tuple[str, ...]) -> Kernel:
    if name == "arc_distance":
        def arc(theta_1: Any, phi_1: Any, theta_2: Any, phi_2: Any) -> Any:
            t = numexpr.evaluate("sin((theta_2 - theta_1) / 2) ** 2 + cos(theta_1) * "
                                 "cos(theta_2) * sin((phi_2 - phi_1) / 2) ** 2")
            return numexpr.evaluate(expr, local_dict={"t": t})
        return arc

    def run(*args: Any) -> Any:
        names = dict(zip(params, args, strict=True))
        out = names.pop("a", None)  # written into the argument, as the kernel does
        result = numexpr.evaluate(expr, local_dict=names, out=out)
        return result[()] if result.ndim == 0 else result
    return run
