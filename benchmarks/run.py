"""Benchmark aotc against NumPy, and Numba / JAX / numexpr when they are installed.

    python benchmarks/run.py            # build the kernels (aotc, native target), then time
    python benchmarks/run.py --quick    # smaller inputs, fewer repeats
    python benchmarks/run.py --only selu,softmax

Every system runs single-threaded on the same inputs in one process; each kernel's
output is checked against NumPy's in the same run. Reported: median seconds, speedup
over NumPy (NumPy time / system time), for memory-bound kernels the achieved
fraction of the STREAM-triad bandwidth measured at the start, and for matrix products
the GFLOP/s of NumPy (OpenBLAS, one thread) and aotc.
"""

from __future__ import annotations

import argparse
import importlib
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
#: The loop benchmarks are the numpy_tour example's loop kernels (one source for both).
TOUR = HERE.parent / "examples" / "numpy_tour"
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS",
            "NUMBA_NUM_THREADS"):
    os.environ[var] = "1"
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                   "intra_op_parallelism_threads=1")
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("JAX_ENABLE_X64", "1")

import numpy as np  # noqa: E402  (thread settings first)
from peers import jax_version, numba_version, numexpr_version  # noqa: E402


@dataclass
class Bench:
    name: str
    make_inputs: Callable[[float], tuple[Any, ...]]
    rtol: float = 1e-12
    #: Bytes a perfectly fused kernel must move, for the bandwidth column (or None).
    bytes_moved: Callable[[tuple[Any, ...]], int] | None = None
    numexpr: str | None = None
    #: Kernels with in-place loops are timed on fresh copies of the inputs each call.
    mutates: bool = False
    #: Floating-point operations of one call, for the GFLOP/s column (or None).
    flops: Callable[[tuple[Any, ...]], int] | None = None
    #: Where the kernel lives: this folder's bench_kernels, or the tour's loops module.
    module: str = "bench_kernels"
    results: dict[str, float] = field(default_factory=dict)


def _rng() -> np.random.Generator:
    return np.random.default_rng(42)


def _size(scale: float, n: int) -> int:
    return max(int(n * scale), 8)


def _matrices(rng: np.random.Generator, dtype: Any, m: int, k: int, n: int
              ) -> tuple[np.ndarray, np.ndarray]:
    """``a (m x k)`` and ``b (k x n)``, standard normal."""
    return (rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((k, n)).astype(dtype))


def benches() -> list[Bench]:
    rng = _rng()
    f8, f4 = np.float64, np.float32
    return [
        Bench("triad", lambda s: (rng.random(_size(s, 10_000_000)),
                                  rng.random(_size(s, 10_000_000)), 3.0),
              bytes_moved=lambda a: 3 * a[0].nbytes, numexpr="b + s * c"),
        Bench("axpy_sum", lambda s: tuple(rng.random(_size(s, 10_000_000)) for _ in range(3)),
              rtol=1e-9, bytes_moved=lambda a: 3 * a[0].nbytes),
        Bench("selu", lambda s: (rng.standard_normal(_size(s, 10_000_000)).astype(f4),),
              rtol=2e-6),
        Bench("black_scholes", lambda s: (rng.uniform(5, 30, _size(s, 5_000_000)),
                                          rng.uniform(1, 100, _size(s, 5_000_000)),
                                          rng.uniform(0.25, 10, _size(s, 5_000_000)),
                                          0.02, 0.3), rtol=1e-9),
        Bench("softmax", lambda s: (rng.standard_normal((_size(s, 4096), 1024)).astype(f4),),
              rtol=2e-5),
        Bench("layernorm", lambda s: (rng.standard_normal((_size(s, 4096), 1024)).astype(f4),
                                      rng.random(1024).astype(f4),
                                      rng.random(1024).astype(f4)), rtol=2e-4),
        Bench("rosen", lambda s: (rng.random(_size(s, 10_000_000)),), rtol=1e-9,
              bytes_moved=lambda a: a[0].nbytes),
        Bench("arc_distance", lambda s: tuple(rng.random(_size(s, 2_000_000)) for _ in range(4)),
              rtol=1e-9),
        Bench("harris", lambda s: (rng.random((_size(s, 2000), 2000)),), rtol=1e-9,
              bytes_moved=lambda a: 2 * a[0].nbytes),
        Bench("pairwise", lambda s: (rng.random((_size(s, 2000), 3)),), rtol=1e-9),
        Bench("log_likelihood", lambda s: (rng.standard_normal(_size(s, 5_000_000)), 0.1, 1.3),
              rtol=1e-9),
        Bench("tiny", lambda s: (np.arange(8, dtype=f8),)),
        Bench("sort_f64", lambda s: (rng.standard_normal(_size(s, 1_000_000)),)),
        Bench("sort_i64", lambda s: (rng.integers(-2**63, 2**63 - 1, _size(s, 1_000_000)),)),
        Bench("sort_f32", lambda s: (rng.standard_normal(_size(s, 1_000_000)).astype(f4),)),
        Bench("argsort_f64", lambda s: (rng.standard_normal(_size(s, 1_000_000)),)),
        Bench("argsort_i64", lambda s: (rng.integers(-2**63, 2**63 - 1, _size(s, 1_000_000)),)),
        Bench("stable_sort_f64", lambda s: (rng.standard_normal(_size(s, 1_000_000)),)),
        Bench("unique_f64", lambda s: (np.round(rng.standard_normal(_size(s, 1_000_000)), 3),)),
        Bench("unique_i64", lambda s: (rng.integers(0, 100_000, _size(s, 1_000_000)),)),
        Bench("median_rows", lambda s: (rng.standard_normal((_size(s, 2000), 1000)).astype(f4),)),
        Bench("matmul_f64", lambda s: _matrices(rng, f8, _size(s, 1024), 1024, 1024),
              rtol=1e-12, flops=lambda a: 2 * a[0].shape[0] * a[0].shape[1] * a[1].shape[1]),
        Bench("matmul_f32", lambda s: _matrices(rng, f4, _size(s, 1024), 1024, 1024),
              rtol=1e-5, flops=lambda a: 2 * a[0].shape[0] * a[0].shape[1] * a[1].shape[1]),
        Bench("matmul_small_f64", lambda s: _matrices(rng, f8, 64, 64, 64), rtol=1e-12,
              flops=lambda a: 2 * 64 ** 3),
        Bench("matmul_small_f32", lambda s: _matrices(rng, f4, 64, 64, 64), rtol=1e-5,
              flops=lambda a: 2 * 64 ** 3),
        Bench("mlp_layer", lambda s: _matrices(rng, f4, _size(s, 256), 784, 512), rtol=1e-5,
              flops=lambda a: 2 * a[0].shape[0] * a[0].shape[1] * a[1].shape[1]),
        Bench("mlp", lambda s: (rng.standard_normal((_size(s, 256), 784)).astype(f4),
                                *(rng.standard_normal(shape).astype(f4) / 16
                                  for shape in ((784, 512), (512,), (512, 10), (10,)))),
              rtol=1e-4, flops=lambda a: 2 * a[0].shape[0] * (784 * 512 + 512 * 10)),
        Bench("matmul_3d_f32", lambda s: (rng.standard_normal((_size(s, 32), 64, 784)).astype(f4),
                                          rng.standard_normal((784, 512)).astype(f4)),
              rtol=1e-5, flops=lambda a: 2 * a[0].size * a[1].shape[1]),
        Bench("matvec_f64", lambda s: (rng.standard_normal((_size(s, 4096), 4096)),
                                       rng.standard_normal(4096)), rtol=1e-12,
              bytes_moved=lambda a: a[0].nbytes, flops=lambda a: 2 * a[0].size),
        Bench("matvec_f32", lambda s: (rng.standard_normal((_size(s, 4096), 4096)).astype(f4),
                                       rng.standard_normal(4096).astype(f4)), rtol=1e-5,
              bytes_moved=lambda a: a[0].nbytes, flops=lambda a: 2 * a[0].size),
        Bench("ema", lambda s: (rng.standard_normal(_size(s, 10_000_000)), 0.1), rtol=1e-9,
              module="tour.loops"),
        Bench("mandelbrot", lambda s: (rng.uniform(-2, 1, _size(s, 200_000)),
                                       rng.uniform(-1.5, 1.5, _size(s, 200_000)), 200),
              module="tour.loops"),
        Bench("gray_scott", lambda s: (np.ones((_size(s, 256), 256)),
                                       np.zeros((_size(s, 256), 256)) + 0.25, 20), rtol=1e-9,
              mutates=True, module="tour.loops"),
        Bench("isqrt_newton", lambda s: (rng.uniform(1, 1000, _size(s, 1_000_000)),),
              rtol=1e-12, module="tour.loops"),
    ]


def timeit(fn: Callable[[], Any], repeats: int, budget: float) -> float:
    """Median wall time of ``fn()`` over up to ``repeats`` runs within ``budget`` seconds."""
    fn()  # warm up (JIT compilation for the peers)
    times = []
    start = time.perf_counter()
    inner = 1
    t = _one(fn, inner)
    while t < 1e-3:  # tiny kernels: time batches of calls
        inner *= 10
        t = _one(fn, inner)
    times.append(t / inner)
    while len(times) < repeats and time.perf_counter() - start < budget:
        times.append(_one(fn, inner) / inner)
    return float(np.median(times))


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


def build() -> None:
    print("building the benchmark kernels with aotc (target native) ...", flush=True)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "aotc", "build", str(HERE)], check=True)
    subprocess.run([sys.executable, "-m", "aotc", "build", str(TOUR), "--target", "native"],
                   check=True)
    print(f"built in {time.perf_counter() - t0:.1f} s", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="inputs 10x smaller")
    parser.add_argument("--only", default="", help="comma-separated benchmark names")
    parser.add_argument("--no-build", action="store_true", help="use the built extension as is")
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args(argv)
    if not args.no_build:
        build()
    sys.path[:0] = [str(HERE), str(TOUR)]
    compiled = {name: importlib.import_module(name) for name in ("bench_kernels", "tour.loops")}
    for module in compiled.values():
        if not module.__file__.endswith(".so"):
            print(f"error: {module.__name__} is not compiled; run without --no-build",
                  file=sys.stderr)
            return 2
    sources = {"bench_kernels": _source_module(HERE / "bench_kernels.py"),
               "tour.loops": _source_module(TOUR / "tour" / "loops.py")}
    from peers import make_peers

    peers = make_peers(sources)
    scale = 0.1 if args.quick else 1.0
    only = {n for n in args.only.split(",") if n}
    print(f"numpy {np.__version__}; numba {numba_version()}; jax {jax_version()}; "
          f"numexpr {numexpr_version()}; single-threaded; median of up to {args.repeats}")
    bandwidth = None
    rows = []
    for bench in benches():
        if only and bench.name not in only:
            continue
        inputs = bench.make_inputs(scale)
        systems: dict[str, Callable[..., Any]] = {
            "numpy": getattr(sources[bench.module], bench.name),
            "aotc": getattr(compiled[bench.module], bench.name)}
        systems.update(peers.get(bench.name, {}))
        reference = systems["numpy"](*_fresh(inputs))
        row = {"name": bench.name}
        for system, fn in systems.items():
            try:
                ok = _close(fn(*_fresh(inputs)), reference, bench.rtol)
            except Exception as err:  # a peer that cannot run this kernel
                row[system] = f"n/a ({type(err).__name__})"
                continue
            call = ((lambda f=fn, a=inputs: f(*_fresh(a))) if bench.mutates
                    else (lambda f=fn, a=inputs: f(*a)))
            seconds = timeit(call, args.repeats, budget=8.0)
            row[system] = seconds if ok else f"WRONG ({seconds:.3g}s)"
        if bench.name == "triad" and isinstance(row.get("aotc"), float):
            bandwidth = bench.bytes_moved(inputs) / row["aotc"]
        if bench.bytes_moved and bandwidth and isinstance(row.get("aotc"), float):
            row["bw"] = bench.bytes_moved(inputs) / row["aotc"] / bandwidth
        if bench.flops and isinstance(row.get("aotc"), float) and isinstance(row["numpy"], float):
            row["gflops"] = tuple(bench.flops(inputs) / row[s] / 1e9 for s in ("numpy", "aotc"))
        rows.append(row)
        _print_row(row)
    if bandwidth:
        print(f"\ntriad bandwidth (aotc): {bandwidth / 1e9:.1f} GB/s")
    return 0


def _fresh(inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in inputs)


def _source_module(path: Path) -> Any:
    """Kernels as plain Python (NumPy), loaded from the source beside the extension."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"{path.stem}_numpy_source", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_printed_header = False


def _print_row(row: dict[str, Any]) -> None:
    global _printed_header
    systems = ["numpy", "aotc", "numba", "jax", "numexpr"]
    if not _printed_header:
        print(f"\n{'kernel':15s}{'numpy':>11s}" + "".join(f"{s + ' x':>13s}" for s in systems[1:])
              + f"{'% triad':>9s}{'GFLOP/s numpy, aotc':>22s}")
        _printed_header = True
    base = row.get("numpy")
    cells = [f"{row['name']:15s}", f"{_fmt_time(base):>11s}"]
    for s in systems[1:]:
        v = row.get(s)
        if isinstance(v, float) and isinstance(base, float):
            cells.append(f"{base / v:>12.2f}x")
        else:
            cells.append(f"{(v or '-')[:12]:>13s}")
    cells.append(f"{row['bw'] * 100:>8.0f}%" if "bw" in row else f"{'':>9s}")
    if "gflops" in row:
        cells.append(f"{row['gflops'][0]:>14.1f}, {row['gflops'][1]:>5.1f}")
    print("".join(cells), flush=True)


def _fmt_time(v: Any) -> str:
    if not isinstance(v, float):
        return str(v)
    return f"{v * 1e3:.2f} ms" if v >= 1e-4 else f"{v * 1e9:.0f} ns"


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    raise SystemExit(main())
