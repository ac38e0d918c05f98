"""Benchmark aotc against NumPy, and Numba / JAX / numexpr when they are installed.

    python benchmarks/run.py                  # build, then every table below (1 and 2 threads)
    python benchmarks/run.py --quick          # small inputs, few repeats: does everything run?
    python benchmarks/run.py --only selu,softmax --threads 1
    python benchmarks/run.py --tables parallel --threads 2 --no-build
    python benchmarks/run.py --portable --tables single,parallel   # for another machine

Each thread count runs in a process of its own, started with that count in every
library's thread variables (and pinned to that many cores); every system gets the same
inputs, and its output is checked against NumPy's in the same run. Times are medians;
on one thread the systems take turns, call by call (a shared host's noise then hits
them alike).

- ``single`` (1 thread): aotc built for this CPU (``target = "native"``) against NumPy
  (OpenBLAS on one thread), Numba, JAX (its thread pool on one core) and numexpr; GB/s
  for memory-bound kernels, GFLOP/s for products, and the share of the machine's limits
  measured in the same run: read bandwidth (the best of ``np.sum`` over 20M doubles and
  the read-only reductions), triad bandwidth (the best triad, STREAM counting: 3 arrays
  of traffic) and an FMA peak estimate (the best product).
- ``issue10`` (1 thread): value-dependent sizes, sorting and a complex Mandelbrot grid.
- ``linalg`` (1 thread): np.linalg and np.fft against LAPACK and pocketfft (and JAX).
- ``loops`` (1 thread): explicit index loops (stencils, a knapsack, a blur, a
  convolution) against Numba; NumPy's column is the source run as Python.
- ``portable`` (1 thread): the default portable build (x86-64-v2/-v3/-v4, chosen at
  import) against a native build; the portable build forced to x86-64-v3 (``AOTC_CPU``)
  against a build for x86-64-v3 only and one for znver3 (an AVX2 CPU's native build);
  and the size of each extension.
- ``parallel`` (N > 1 threads): issue 13's kernels, aotc built with ``parallel = true``,
  Numba ``parallel=True``/``prange``, JAX with XLA's default threading, numexpr, and
  NumPy (OpenBLAS uses N threads for the products; its other loops have one).

``--portable`` times the default portable builds (x86-64-v2/-v3/-v4, the best chosen at
import) instead of native ones, in the ``single`` and ``parallel`` tables: build here,
copy ``benchmarks/build`` to a machine without a compiler, and run there with
``--portable --no-build`` (the workers keep the PYTHONPATH the runner was started with).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.machinery
import importlib.util
import inspect
import math
import os
import shutil
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
from peers import make_peers, version

HERE = Path(__file__).resolve().parent
#: The loop benchmarks are the numpy_tour example's loop kernels (one source for both).
TOUR = HERE.parent / "examples" / "numpy_tour"
#: Further builds of bench_kernels, one project directory each: their [tool.aotc] keys.
VARIANTS: dict[str, dict[str, Any]] = {
    "parallel": {"target": "native", "parallel": True},
    "parallel-portable": {"parallel": True},  # the default targets, for --portable
    "portable": {},  # the default targets: x86-64-v2, -v3, -v4
    "x86-64-v3": {"target": "x86-64-v3"},
    "znver3": {"target": "znver3"},
}
VARIANT_DIR = HERE / "build" / "variants"
TABLES = ("single", "issue10", "linalg", "loops", "portable", "parallel")
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
               "NUMEXPR_NUM_THREADS", "NUMBA_NUM_THREADS", "AOTC_NUM_THREADS")
Inputs = tuple[Any, ...]


@dataclass
class Bench:
    name: str
    make_inputs: Callable[[float], Inputs]
    rtol: float = 1e-12
    #: Bytes a perfectly fused kernel must move, for the GB/s column (or None) ...
    bytes_moved: Callable[[Inputs], int] | None = None
    #: ... or floating-point operations of one call, for the GFLOP/s column.
    flops: Callable[[Inputs], int] | None = None
    #: The machine limit the rate is a share of: "read", "triad", "f32 FMA", "f64 FMA".
    limit: str = ""
    #: The best rate any system reaches on this kernel defines that limit.
    probe: bool = False
    #: Kernels with in-place loops are timed on fresh copies of the inputs each call.
    mutates: bool = False
    #: Where the kernel lives: this folder's bench_kernels, or the tour's loops module.
    module: str = "bench_kernels"
    table: str = "single"  # or "issue10", "linalg"
    parallel: bool = False  #: also in the N-thread table (issue 13's kernels)
    portable: bool = False  #: also in the portable-vs-native table (issue 11)


def _size(scale: float, n: int) -> int:
    return max(int(n * scale), 8)


def _matmul_flops(a: Inputs) -> int:
    return 2 * a[0].size * a[1].shape[1]


def benches() -> list[Bench]:
    rng = np.random.default_rng(42)
    f4 = np.float32

    def normal(shape: Any, dtype: Any = np.float64) -> np.ndarray:
        return rng.standard_normal(shape).astype(dtype)

    def symmetric(n: int) -> np.ndarray:
        a = normal((n, n))
        return a + a.T

    def vectors(count: int, n: int) -> Callable[[float], Inputs]:
        return lambda s: tuple(rng.random(_size(s, n)) for _ in range(count))

    def matrices(dtype: Any, m: int, k: int, n: int, scaled: bool = True
                 ) -> Callable[[float], Inputs]:
        return lambda s: (normal((_size(s, m) if scaled else m, k), dtype), normal((k, n), dtype))

    def grid(s: float) -> Inputs:
        n = _size(s, 200)
        re, im = np.linspace(-2, 0.6, n), np.linspace(-1.2, 1.2, n)
        return (re[None, :] + 1j * im[:, None],)

    def nbytes(factor: int) -> Callable[[Inputs], int]:
        return lambda a: factor * a[0].nbytes

    return [
        Bench("triad", lambda s: (*vectors(2, 10_000_000)(s), 3.0), bytes_moved=nbytes(3),
              limit="triad", parallel=True, portable=True, probe=True),
        Bench("triad_out", lambda s: (*vectors(3, 10_000_000)(s), 3.0), bytes_moved=nbytes(3),
              limit="triad", parallel=True, portable=True, probe=True),
        Bench("axpy_sum", vectors(3, 10_000_000), rtol=1e-9, bytes_moved=nbytes(3),
              limit="read", parallel=True, portable=True, probe=True),
        Bench("array_sum", vectors(1, 20_000_000), rtol=1e-9, bytes_moved=nbytes(1),
              limit="read", parallel=True, portable=True, probe=True),
        Bench("selu", lambda s: (normal(_size(s, 10_000_000), f4),), rtol=2e-6,
              bytes_moved=nbytes(2), limit="triad", portable=True),
        Bench("black_scholes", lambda s: (rng.uniform(5, 30, _size(s, 5_000_000)),
                                          rng.uniform(1, 100, _size(s, 5_000_000)),
                                          rng.uniform(0.25, 10, _size(s, 5_000_000)),
                                          0.02, 0.3), rtol=1e-9, portable=True),
        Bench("softmax", lambda s: (normal((_size(s, 4096), 1024), f4),), rtol=2e-5,
              bytes_moved=nbytes(2), limit="triad", parallel=True, portable=True),
        Bench("layernorm", lambda s: (normal((_size(s, 4096), 1024), f4),
                                      rng.random(1024).astype(f4), rng.random(1024).astype(f4)),
              rtol=2e-4, bytes_moved=nbytes(2), limit="triad", parallel=True, portable=True),
        Bench("rosen", vectors(1, 10_000_000), rtol=1e-9, bytes_moved=nbytes(1),
              limit="read", portable=True),
        Bench("arc_distance", vectors(4, 2_000_000), rtol=1e-9, portable=True),
        Bench("harris", lambda s: (rng.random((_size(s, 2000), 2000)),), rtol=1e-9,
              bytes_moved=nbytes(2), limit="triad"),
        Bench("pairwise", lambda s: (rng.random((_size(s, 2000), 3)),), rtol=1e-9,
              bytes_moved=lambda a: 8 * a[0].shape[0] ** 2, limit="triad", parallel=True,
              portable=True),
        Bench("log_likelihood", lambda s: (normal(_size(s, 5_000_000)), 0.1, 1.3), rtol=1e-9),
        Bench("tiny", lambda s: (np.arange(8.0),), portable=True),
        Bench("median_rows", lambda s: (normal((_size(s, 2000), 1000), f4),)),
        Bench("matmul_f64", matrices(np.float64, 1024, 1024, 1024), flops=_matmul_flops,
              limit="f64 FMA", parallel=True, portable=True,
              probe=True),
        Bench("matmul_f32", matrices(f4, 1024, 1024, 1024), rtol=1e-5, flops=_matmul_flops,
              limit="f32 FMA", parallel=True, portable=True,
              probe=True),
        Bench("matmul_small_f64", matrices(np.float64, 64, 64, 64, False), flops=_matmul_flops,
              limit="f64 FMA"),
        Bench("matmul_small_f32", matrices(f4, 64, 64, 64, False), rtol=1e-5,
              flops=_matmul_flops, limit="f32 FMA"),
        Bench("mlp_layer", matrices(f4, 256, 784, 512), rtol=1e-5, flops=_matmul_flops,
              limit="f32 FMA"),
        Bench("mlp", lambda s: (normal((_size(s, 256), 784), f4),
                                *(normal(shape, f4) / 16
                                  for shape in ((784, 512), (512,), (512, 10), (10,)))),
              rtol=1e-4, flops=lambda a: 2 * a[0].shape[0] * (784 * 512 + 512 * 10),
              limit="f32 FMA", parallel=True, portable=True),
        Bench("matmul_3d_f32", lambda s: (normal((_size(s, 32), 64, 784), f4),
                                          normal((784, 512), f4)),
              rtol=1e-5, flops=_matmul_flops, limit="f32 FMA"),
        Bench("matvec_f64", lambda s: (normal((_size(s, 4096), 4096)), normal(4096)),
              bytes_moved=nbytes(1), limit="read"),
        Bench("matvec_f32", lambda s: (normal((_size(s, 4096), 4096), f4), normal(4096, f4)),
              rtol=1e-5, bytes_moved=nbytes(1), limit="read"),
        Bench("gram_f64", lambda s: (normal((_size(s, 256), 4096)),),
              flops=lambda a: a[0].shape[0] ** 2 * a[0].shape[1], limit="f64 FMA"),
        Bench("laplace_roll", lambda s: (rng.random((_size(s, 2000), 2000)),), rtol=1e-9,
              bytes_moved=nbytes(2), limit="triad"),
        Bench("fill_last3", lambda s: (rng.random(_size(s, 1000)), rng.random(1000)),
              bytes_moved=lambda a: 24 * a[0].shape[0] * a[1].shape[0], limit="triad"),
        Bench("tile_rows", lambda s: (rng.random(1000), _size(s, 2000)),
              bytes_moved=lambda a: 8 * a[0].shape[0] * a[1], limit="triad"),
        Bench("repeat_each", lambda s: (rng.random(_size(s, 200_000)), 10),
              bytes_moved=lambda a: 80 * a[0].shape[0], limit="triad"),
        Bench("ema", lambda s: (normal(_size(s, 10_000_000)), 0.1), rtol=1e-9,
              module="tour.loops"),
        Bench("mandelbrot", lambda s: (rng.uniform(-2, 1, _size(s, 200_000)),
                                       rng.uniform(-1.5, 1.5, _size(s, 200_000)), 200),
              module="tour.loops"),
        Bench("gray_scott", lambda s: (np.ones((_size(s, 256), 256)),
                                       np.zeros((_size(s, 256), 256)) + 0.25, 20), rtol=1e-9,
              mutates=True, module="tour.loops"),
        Bench("isqrt_newton", lambda s: (rng.uniform(1, 1000, _size(s, 1_000_000)),),
              module="tour.loops"),
        # -- issue 10: sizes that depend on values, sorting, complex numbers -----------------
        Bench("sum_positive", lambda s: (normal(_size(s, 1_000_000)),), rtol=1e-9,
              table="issue10"),
        Bench("noisy", lambda s: (normal(_size(s, 1_000_000)), 11), table="loops"),
        Bench("unique_f64", lambda s: (normal(_size(s, 1_000_000)),), table="issue10"),
        Bench("unique_i64", lambda s: (rng.integers(0, 1000, _size(s, 1_000_000)),),
              table="issue10", portable=True),
        Bench("sort_f64", lambda s: (normal(_size(s, 1_000_000)),), table="issue10",
              portable=True),
        Bench("sort_i64", lambda s: (rng.integers(-2**63, 2**63 - 1, _size(s, 1_000_000)),),
              table="issue10"),
        Bench("sort_f32", lambda s: (normal(_size(s, 1_000_000), f4),), table="issue10"),
        Bench("argsort_f64", lambda s: (normal(_size(s, 1_000_000)),), table="issue10"),
        Bench("argsort_i64", lambda s: (rng.integers(-2**63, 2**63 - 1, _size(s, 1_000_000)),),
              table="issue10"),
        Bench("stable_sort_f64", lambda s: (normal(_size(s, 1_000_000)),), table="issue10"),
        Bench("mandelbrot_grid", grid, table="issue10", portable=True),
        # -- np.linalg and np.fft -----------------------------------------------------------
        Bench("solve_f64", lambda s: (normal((64, 64)) + 8 * np.eye(64), normal(64)),
              rtol=1e-9, table="linalg"),
        Bench("inv_f64", lambda s: (normal((64, 64)) + 8 * np.eye(64),), rtol=1e-9,
              table="linalg"),
        Bench("det_f64", lambda s: (normal((64, 64)) + 8 * np.eye(64),), rtol=1e-9,
              table="linalg"),
        Bench("lstsq_f64", lambda s: (normal((_size(s, 2000), 8)), normal(_size(s, 2000))),
              rtol=1e-9, table="linalg"),
        Bench("svd_values_f64", lambda s: (normal((100, 30)),), rtol=1e-9, table="linalg"),
        Bench("eigvalsh_f64", lambda s: (symmetric(48),), rtol=1e-9, table="linalg"),
        Bench("fft_c128", lambda s: (normal(_size(s, 1 << 16)) + 1j * normal(_size(s, 1 << 16)),),
              rtol=1e-9, table="linalg"),
        Bench("rfft_f64", lambda s: (normal(_size(s, 10_000)),), rtol=1e-9, table="linalg"),
        Bench("solve_400_f64", lambda s: (normal((400, 400)) + 8 * np.eye(400), normal(400)),
              rtol=1e-9, table="linalg"),
        Bench("eigvalsh_400_f64", lambda s: (symmetric(400),), rtol=1e-9, table="linalg"),
        Bench("small_solves_f64", lambda s: (normal((_size(s, 10_000), 4, 4)) + 4 * np.eye(4),
                                             normal((_size(s, 10_000), 4))),
              rtol=1e-9, table="linalg"),
        Bench("fft2_c128", lambda s: (normal((512, 512)) + 1j * normal((512, 512)),),
              rtol=1e-9, table="linalg"),
        # -- explicit index loops (NumPy runs them as Python) --------------------------------
        Bench("neighbour_sums", lambda s: (rng.integers(0, 256, (_size(s, 500), 500), np.uint8),),
              table="loops", module="tour.loops"),
        Bench("heat_steps", lambda s: (rng.random(_size(s, 10_000)), 10), rtol=1e-9,
              table="loops", module="tour.loops"),
        Bench("knapsack", lambda s: (rng.integers(1, 50, _size(s, 100)),
                                     rng.integers(1, 100, _size(s, 100)), 2000),
              table="loops", module="tour.loops"),
        Bench("box_blur", lambda s: (normal((_size(s, 100), 100), f4), 2), rtol=1e-5,
              table="loops", module="tour.loops"),
        Bench("convolve_valid", lambda s: (normal(_size(s, 20_000)), normal(31)), rtol=1e-9,
              table="loops", module="tour.loops"),
        Bench("monte_carlo_pi", lambda s: (_size(s, 1_000_000), 7), table="loops",
              module="tour.loops"),
    ]


# -- timing and checking ---------------------------------------------------------------------

#: Seconds to wait after a system's runs, so that the threads a library keeps spinning
#: after a call (OpenBLAS: 2**28 cycles, about 0.1 s; OpenMP; XLA) are idle before the
#: next system is timed: with 0.05 s, aotc (timed right after NumPy) ran the mlp
#: on 2 threads at 1.3 ms against 0.74 ms alone.
SETTLE = 0.3


def timeit(fn: Callable[[], Any], repeats: int, budget: float, warm: bool = True) -> float:
    """Median wall time of ``fn()`` over up to ``repeats`` runs within ``budget`` seconds."""
    return interleaved({"": fn}, repeats, budget, warm)[""]


def interleaved(calls: dict[str, Callable[[], Any]], repeats: int, budget: float,
                warm: bool = True) -> dict[str, float]:
    """Median wall time of each call over up to ``repeats`` rounds within ``budget``
    seconds per call, a run of every call in each round: on a host shared with other
    tenants, a noisy stretch then slows every system alike, not the one timed in it
    (sorts swung 0.77-1.15x NumPy timed one after the other on a Zen 3)."""
    inner, times = {}, {}
    for name, fn in calls.items():
        if warm:
            fn()  # warm up (JIT compilation for the peers)
        inner[name] = 1
        while (t := _one(fn, inner[name])) < 1e-3:  # tiny kernels: time batches of calls
            inner[name] *= 10
        times[name] = [t / inner[name]]
    start, rounds = time.perf_counter(), 1
    while rounds < repeats and time.perf_counter() - start < budget * len(calls):
        for name, fn in calls.items():
            times[name].append(_one(fn, inner[name]) / inner[name])
        rounds += 1
    return {name: float(np.median(t)) for name, t in times.items()}


def _one(fn: Callable[[], Any], inner: int) -> float:
    t0 = time.perf_counter()
    for _ in range(inner):
        fn()
    return time.perf_counter() - t0


def _outputs(value: Any) -> list[np.ndarray]:
    return [np.asarray(v) for v in (value if isinstance(value, tuple) else (value,))]


def _close(got: Any, expected: Any, rtol: float) -> bool:
    gs, es = _outputs(got), _outputs(expected)
    return len(gs) == len(es) and all(
        g.shape == e.shape and np.allclose(g, e, rtol=rtol, atol=rtol * np.abs(e).max(initial=0))
        for g, e in zip(gs, es, strict=True))


def _fresh(inputs: Inputs) -> Inputs:
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in inputs)


@dataclass
class Row:
    bench: Bench
    inputs: Inputs
    #: Seconds per call, or why there is no time ("n/a: TypingError", "WRONG").
    times: dict[str, float | str] = field(default_factory=dict)

    def rate(self, system: str) -> float | None:
        """GB/s or GFLOP/s of ``system``, when the kernel has a rate."""
        amount = self.bench.bytes_moved or self.bench.flops
        t = self.times.get(system)
        return amount(self.inputs) / t / 1e9 if amount and isinstance(t, float) else None


def measure(bench: Bench, systems: dict[str, Callable[..., Any]], numpy: Callable[..., Any],
            scale: float, repeats: int, budget: float, together: bool = False) -> Row:
    """Each system's time on the same inputs, after checking its output against NumPy's;
    ``together``: in interleaved rounds (:func:`interleaved`; on one thread, where no
    library keeps threads spinning after a call), else one system after another."""
    print(f"  {bench.name} ...", file=sys.stderr, flush=True)
    row = Row(bench, bench.make_inputs(scale))
    reference = numpy(*_fresh(row.inputs))
    calls, right = {}, {}
    for system, fn in systems.items():
        try:  # NumPy's own call was the reference (and the warm-up)
            ok = fn is numpy or _close(fn(*_fresh(row.inputs)), reference, bench.rtol)
        except Exception as err:  # a peer that cannot run this kernel
            row.times[system] = f"n/a: {type(err).__name__}"
            continue
        calls[system] = ((lambda f=fn, a=row.inputs: f(*_fresh(a))) if bench.mutates
                         else (lambda f=fn, a=row.inputs: f(*a)))
        right[system] = ok
        if not together:
            row.times[system] = timeit(calls[system], repeats, budget, warm=fn is not numpy)
            time.sleep(SETTLE)
    if together:  # the checks above were the warm-up
        row.times.update(interleaved(calls, repeats, budget, warm=False))
    for system, ok in right.items():
        seconds = row.times[system]
        if not ok and isinstance(seconds, float):
            row.times[system] = f"WRONG: {_fmt_time(seconds)}"
    return row


# -- printing ------------------------------------------------------------------------------

def _fmt_time(v: float | str | None) -> str:
    if v is None:
        return "-"
    if isinstance(v, str):
        return v.split(":")[0].split(" ")[0]  # details go to the notes under the table
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if v >= scale:
            return f"{v / scale:.3g} {unit}"
    return f"{v * 1e9:.0f} ns"


@dataclass
class Limits:
    """The machine's limits as measured in this run (GB/s, GFLOP/s), with how."""

    values: dict[str, float] = field(default_factory=dict)
    how: dict[str, str] = field(default_factory=dict)

    def offer(self, key: str, value: float | None, how: str) -> None:
        if value is not None and value > self.values.get(key, 0.0):
            self.values[key], self.how[key] = value, how

    def describe(self) -> Iterable[str]:
        for key in ("read", "copy", "triad", "f64 FMA", "f32 FMA"):
            unit = "GFLOP/s" if "FMA" in key else "GB/s"
            if key in self.values:
                yield f"  {key:8s} {self.values[key]:7.1f} {unit:8s}({self.how[key]})"
            else:
                yield f"  {key:8s}       - (not measured: its kernels were not run)"


def probe_limits(limits: Limits, scale: float, repeats: int) -> None:
    """Read and copy bandwidth with NumPy alone: np.sum and np.copyto of 20M doubles."""
    x = np.random.default_rng(0).random(_size(scale, 20_000_000))
    y = np.empty_like(x)
    t = timeit(lambda: np.sum(x), repeats, 3.0)
    limits.offer("read", x.nbytes / t / 1e9, f"np.sum, {x.size / 1e6:.0f}M f64")
    t = timeit(lambda: np.copyto(y, x), repeats, 3.0)
    limits.offer("copy", 2 * x.nbytes / t / 1e9, "np.copyto, read + write counted")


def print_peer_table(title: str, rows: list[Row], limits: Limits) -> None:
    """Times per system, aotc's speed relative to the best other one, and rates."""
    systems = [s for s in ("numpy", "aotc", "numba", "jax", "numexpr")
               if any(s in r.times for r in rows)]
    for row in rows:
        for system in row.times if row.bench.probe else ():
            limits.offer(row.bench.limit, row.rate(system), f"best: {system} {row.bench.name}")
    rated = any(r.rate("aotc") is not None or r.rate("numpy") is not None for r in rows)
    print(f"\n{title}")
    if rated:
        print("machine limits, measured in this run:", *limits.describe(), sep="\n")
    head = (f"{'kernel':17s}" + "".join(f"{s:>10s}" for s in systems)
            + f"{'vs numpy':>10s}{'vs best':>9s}")
    if rated:
        head += f"{'aotc':>9s}{'best':>9s}{'unit':>8s}  aotc % of limit"
    print("\n" + head)
    notes = []
    for row in rows:
        cells = [f"{row.bench.name:17s}"]
        cells += [f"{_fmt_time(row.times.get(s)):>10s}" for s in systems]
        aotc = row.times.get("aotc")
        others = [(t, s) for s, t in row.times.items() if s != "aotc" and isinstance(t, float)]
        best_time, best = min(others) if others else (None, "")
        for other, width in ((row.times.get("numpy"), 10), (best_time, 9)):
            ratio = (f"{other / aotc:.2f}x" if isinstance(aotc, float) and isinstance(other, float)
                     else "-")
            cells.append(f"{ratio:>{width}s}")
        if rated and row.bench.limit:
            unit = "GFLOP/s" if row.bench.flops else "GB/s"
            mine, theirs = row.rate("aotc"), row.rate(best)
            cells += [f"{mine:9.1f}" if mine else f"{'-':>9s}",
                      f"{theirs:9.1f}" if theirs else f"{'-':>9s}", f"{unit:>8s}"]
            if mine and row.bench.limit in limits.values:
                share = mine / limits.values[row.bench.limit]
                cells.append(f"  {share * 100:4.0f}% {row.bench.limit}")
        print("".join(cells))
        notes += [f"{s} on {row.bench.name}: {t}" for s, t in row.times.items()
                  if isinstance(t, str) and ":" in t]
    print("vs numpy, vs best: aotc's speed relative to NumPy and to the fastest other system "
          "(time ratio; above 1: aotc is faster); best: that system's rate")
    for note in notes:
        print(f"  note: {note}")


def print_portable_table(rows: list[Row], sizes: dict[str, int], chosen: dict[str, str]
                         ) -> None:
    ratios = {"native÷portable": ("native", "portable"),
              "v3 build÷portable@v3": ("x86-64-v3", "portable@v3"),
              "znver3÷portable@v3": ("znver3", "portable@v3")}
    systems = list(rows[0].times) if rows else []
    print("\nissue 11: the portable build (x86-64-v2/-v3/-v4, chosen at import) against "
          "single-target builds, 1 thread")
    print(f"the portable module runs {chosen['portable']} here, {chosen['portable@v3']} with "
          "AOTC_CPU=x86-64-v3; znver3 stands in for an AVX2 machine's native build")
    print(f"\n{'kernel':17s}" + "".join(f"{s:>13s}" for s in systems)
          + "".join(f"{r:>22s}" for r in ratios))
    logs: dict[str, list[float]] = {r: [] for r in ratios}
    for row in rows:
        cells = [f"{row.bench.name:17s}"] + [f"{_fmt_time(row.times.get(s)):>13s}"
                                             for s in systems]
        for label, (num, den) in ratios.items():
            a, b = row.times.get(num), row.times.get(den)
            if isinstance(a, float) and isinstance(b, float):
                logs[label].append(math.log(a / b))
                cells.append(f"{a / b:>21.2f}x")
            else:
                cells.append(f"{'-':>22s}")
        print("".join(cells))
    print(f"{'geometric mean':17s}" + " " * 13 * len(systems) + "".join(
        f"{math.exp(sum(v) / len(v)) if v else math.nan:>21.2f}x" for v in logs.values()))
    print(f"{'lowest':17s}" + " " * 13 * len(systems) + "".join(
        f"{math.exp(min(v)) if v else math.nan:>21.2f}x" for v in logs.values()))
    print("ratios above 1: the portable module is faster; issue 11 asks for >= 0.95")
    print("extension sizes: " + ", ".join(f"{name} {size / 1e3:.0f} kB"
                                          for name, size in sizes.items()))
    if "portable" in sizes and "native" in sizes:
        print(f"  the portable module is {(sizes['portable'] - sizes['native']) / 1e3:.0f} kB "
              f"({sizes['portable'] / sizes['native']:.2f}x) larger than the native one")


# -- builds and processes -------------------------------------------------------------------

def _variant_project(name: str, keys: dict[str, Any]) -> Path:
    """A copy of this project whose [tool.aotc] has ``keys``; files rewritten only when
    changed (a newer kernel source than its extension would run uncompiled)."""
    root = VARIANT_DIR / name
    root.mkdir(parents=True, exist_ok=True)
    toml = "".join(f"{k} = {str(v).lower() if isinstance(v, bool) else repr(v)}\n".replace(
        "'", '"') for k, v in keys.items())
    files = {"pyproject.toml": f'[project]\nname = "aotc-bench-{name}"\nversion = "0"\n\n'
                               f'[tool.aotc]\nmodules = ["bench_kernels"]\n{toml}',
             "bench_kernels.py": (HERE / "bench_kernels.py").read_text()}
    for file, text in files.items():
        if not (root / file).is_file() or (root / file).read_text() != text:
            (root / file).write_text(text)
    return root


def build(tables: set[str], counts: list[int], portable: bool = False) -> None:
    """The in-place native build, the numpy_tour loops, and the variants the tables use
    (``portable``: the default-target builds the single and parallel tables time)."""
    projects: list[tuple[Path, list[str]]] = [] if portable else [(HERE, [])]
    if 1 in counts and {"single", "loops"} & tables:
        projects.append((TOUR, [] if portable else ["--target", "native"]))
    parallel = "parallel-portable" if portable else "parallel"
    names = ([parallel] if any(c > 1 for c in counts) and "parallel" in tables else []) + (
        ["portable"] if portable and 1 in counts else []) + (
        ["portable", "x86-64-v3", "znver3"] if 1 in counts and "portable" in tables else [])
    names = list(dict.fromkeys(names))
    projects += [(_variant_project(n, VARIANTS[n]), []) for n in names]
    print("building the benchmark kernels with aotc ...", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    for project, extra in projects:
        subprocess.run([sys.executable, "-m", "aotc", "build", str(project), *extra],
                       check=True)
    if "portable" in names:  # a second copy of the module, to import with AOTC_CPU set
        (VARIANT_DIR / "portable@v3").mkdir(exist_ok=True)
        shutil.copy2(_extension(VARIANT_DIR / "portable"), VARIANT_DIR / "portable@v3")
    print(f"built in {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)


def _extension(directory: Path, stem: str = "bench_kernels") -> Path:
    found = sorted(directory.glob(f"{stem}.*.so"))
    if not found:
        raise SystemExit(f"error: no compiled {stem} in {directory}; run without --no-build")
    return found[0]


def load(directory: Path, cpu: str = "") -> ModuleType:
    """The compiled bench_kernels in ``directory`` (several load side by side), imported
    with ``AOTC_CPU=cpu`` when given."""
    path = _extension(directory)
    loader = importlib.machinery.ExtensionFileLoader("bench_kernels", str(path))
    spec = importlib.util.spec_from_file_location("bench_kernels", path, loader=loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    os.environ["AOTC_CPU"] = cpu
    try:
        with warnings.catch_warnings():  # a kernel source newer than its extension
            warnings.simplefilter("error", RuntimeWarning)
            loader.exec_module(module)
    except RuntimeWarning as stale:
        raise SystemExit(f"error: {stale}; run without --no-build") from None
    finally:
        del os.environ["AOTC_CPU"]
    return module


def _source_module(path: Path) -> ModuleType:
    """Kernels as plain Python (NumPy), loaded from the source beside the extension."""
    spec = importlib.util.spec_from_file_location(f"{path.stem}_numpy_source", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _thread_env(count: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "AOTC_CPU"}
    env.update(dict.fromkeys(THREAD_VARS, str(count)))
    env.update(JAX_PLATFORMS="cpu", JAX_ENABLE_X64="1")
    if count == 1:
        env.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                    "intra_op_parallelism_threads=1")
    return env


TITLES = {
    "single": "issue 13: every system on one thread",
    "issue10": "issue 10: value-dependent sizes, sorting, complex numbers; 1 thread",
    "linalg": "np.linalg and np.fft (NumPy's own LAPACK and pocketfft loops, aotc's code "
              "for small matrices in a loop) against NumPy; 1 thread",
    "loops": "explicit index loops (checks proven once per loop); NumPy runs them as Python; "
             "1 thread",
    "parallel": "issue 13 with {n} threads: aotc parallel = true, Numba parallel=True, JAX's "
                "default threading, numexpr and OpenBLAS (NumPy's products) on {n} threads",
}


def run_tables(args: argparse.Namespace, count: int) -> int:
    """Every requested table for ``count`` threads, in this (child) process."""
    if hasattr(os, "sched_setaffinity"):  # the threads of every library share these cores
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:count])
    tables = [t for t in args.tables.split(",") if (t == "parallel") == (count > 1)]
    sources = {"bench_kernels": _source_module(HERE / "bench_kernels.py"),
               "tour.loops": _source_module(TOUR / "tour" / "loops.py")}
    if args.portable:
        home = VARIANT_DIR / ("portable" if count == 1 else "parallel-portable")
    else:
        home = HERE if count == 1 else VARIANT_DIR / "parallel"
    compiled = {"bench_kernels": load(home)}
    if {"single", "loops"} & set(tables):
        sys.path.insert(0, str(TOUR))
        compiled["tour.loops"] = importlib.import_module("tour.loops")
        if not str(compiled["tour.loops"].__file__).endswith(".so"):
            raise SystemExit("error: tour.loops is not compiled; run without --no-build")
    peers = make_peers(sources, count)
    scale, repeats, budget = (0.1, 3, 0.5) if args.quick else (1.0, args.repeats, 4.0)
    only = {n for n in args.only.split(",") if n}
    selected = [b for b in benches() if not only or b.name in only]
    print(f"\n=== {count} thread{'s' * (count > 1)}: numpy {np.__version__}, numba "
          f"{version('numba')}, jax {version('jax')}, numexpr {version('numexpr')}; aotc "
          f"built for {compiled['bench_kernels'].__aotc_target__}"
          f"{', parallel = true' if count > 1 else ''}; median of up to {repeats}"
          f"{'; --quick sizes' if args.quick else ''}", flush=True)

    def numpy(bench: Bench) -> Callable[..., Any]:  # the function as written, unchecked
        return inspect.unwrap(getattr(sources[bench.module], bench.name))

    limits = Limits()
    if {"single", "parallel"} & set(tables):
        probe_limits(limits, scale, repeats)
    for table in tables:
        if table == "portable":
            builds = {"native": compiled["bench_kernels"],
                      "portable": load(VARIANT_DIR / "portable"),
                      "portable@v3": load(VARIANT_DIR / "portable@v3", "x86-64-v3"),
                      "x86-64-v3": load(VARIANT_DIR / "x86-64-v3"),
                      "znver3": load(VARIANT_DIR / "znver3")}
            rows = [measure(b, {k: getattr(m, b.name) for k, m in builds.items()}, numpy(b),
                            scale, repeats, budget, together=count == 1)
                    for b in selected if b.portable]
            print_portable_table(rows, {k: Path(str(m.__file__)).stat().st_size
                                        for k, m in builds.items() if k != "portable@v3"},
                                 {k: m.__aotc_target__ for k, m in builds.items()})
            continue
        rows = [measure(b, {"numpy": numpy(b), "aotc": getattr(compiled[b.module], b.name),
                            **peers[b.name]}, numpy(b), scale, repeats, budget,
                        together=count == 1)
                for b in selected if (b.parallel if table == "parallel" else b.table == table)]
        if rows:
            print_peer_table(TITLES[table].format(n=count), rows, limits)
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small inputs, few repeats")
    parser.add_argument("--only", default="", help="comma-separated benchmark names")
    parser.add_argument("--no-build", action="store_true", help="use the built extensions")
    parser.add_argument("--repeats", type=int, default=11)
    parser.add_argument("--threads", default=",".join(sorted({"1", str(cores)})),
                        help=f"comma-separated thread counts (default 1,{cores})")
    parser.add_argument("--tables", default=",".join(TABLES),
                        help=f"comma-separated, of {','.join(TABLES)} (default all)")
    parser.add_argument("--portable", action="store_true",
                        help="time the default portable builds, not native ones")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        return run_tables(args, args.child)
    counts = [int(c) for c in args.threads.split(",")]
    tables = set(args.tables.split(","))
    known = {b.name for b in benches()}
    unknown = tables - set(TABLES) or {n for n in args.only.split(",") if n} - known
    if unknown:
        parser.error(f"unknown: {', '.join(sorted(unknown))}")
    if args.portable and tables - {"single", "parallel"}:
        parser.error("--portable times the single and parallel tables only")
    if not args.no_build:
        build(tables, counts, args.portable)
    status = 0
    for count in counts:
        child = [sys.executable, __file__, *argv, "--child", str(count)]
        status |= subprocess.run(child, env=_thread_env(count)).returncode
    return status


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    raise SystemExit(main())
