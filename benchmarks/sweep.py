"""The "do no harm" sweep: every kernel of the differential catalog, compiled against the
same kernel run by NumPy, at three sizes, in one run.

    python benchmarks/sweep.py                 # every case, 1 thread
    python benchmarks/sweep.py --only sum,cumsum --budget 0.2

Why: the tables in run.py time kernels chosen to be fast; a user's kernel is whatever
NumPy they wrote. The catalog (``tests/numpy_cases*.py``) covers every supported
function, so timing it finds where compiling makes NumPy code slower. Each case's
largest input is grown to three sizes, every axis the signature does not fix scaled
alike (equal named sizes stay equal): as the catalog has it (small), about 32k elements
(fits L2) and about 8M (larger than L3). The kernels are built as one extension module
(``build/sweep``, this CPU's target), so calls cost what a wheel's do. Inputs a grown
case rejects (an index now out of bounds, a size check) are skipped. Times are medians.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import resource
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from aotc.types import parse_signature_string  # noqa: E402

SIZES = {"small": None, "L2": 1 << 15, ">L3": 1 << 23}
PROJECT = Path(__file__).resolve().parent / "build" / "sweep"
#: The catalog as one module of exported kernels, named ``k_<case>``.
MODULE = r"""# The differential catalog as one module of exported kernels (benchmarks/sweep.py).
import re
import sys
import types

sys.path.insert(0, TESTS)
import aotc  # noqa: E402
from numpy_cases import CASES  # noqa: E402
from numpy_cases_extended import EXTENDED_CASES  # noqa: E402

ONLY = set(NAMES)
for _case in [*CASES, *EXTENDED_CASES]:
    if ONLY and _case.name not in ONLY:
        continue
    _name = "k_" + re.sub(r"\W", "_", _case.name)
    _fn = types.FunctionType(_case.fn.__code__, _case.fn.__globals__, _name,
                             _case.fn.__defaults__, _case.fn.__closure__)
    _fn.__qualname__, _fn.__module__ = _name, __name__
    globals()[_name] = aotc.export(_case.signature)(_fn)
"""


def kernel_name(case: str) -> str:
    return "k_" + re.sub(r"\W", "_", case)


def traces(case: Any) -> bool:
    """Whether the case's kernel traces as a module's export would (a few catalog
    cases need the catalog harness's own arguments)."""
    from aotc.pipeline import trace

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            trace(case.fn, case.signature)
    except Exception:
        return False
    return True


def build(names: list[str]) -> Any:
    """Write and build the sweep's project (the cases ``names``); its module."""
    import importlib.machinery
    import importlib.util
    import subprocess

    PROJECT.mkdir(parents=True, exist_ok=True)
    (PROJECT / "pyproject.toml").write_text(
        '[project]\nname = "aotc-sweep"\nversion = "0"\n\n'
        '[tool.aotc]\nmodules = ["sweep_kernels"]\ntarget = "native"\n')
    source = MODULE.replace("TESTS", repr(str(ROOT / "tests")))
    source = source.replace("NAMES", repr(sorted(names)))
    path = PROJECT / "sweep_kernels.py"
    if not path.is_file() or path.read_text() != source:
        path.write_text(source)
    subprocess.run([sys.executable, "-m", "aotc", "build", str(PROJECT)], check=True)
    (found,) = PROJECT.glob("sweep_kernels.*.so")
    loader = importlib.machinery.ExtensionFileLoader("sweep_kernels", str(found))
    spec = importlib.util.spec_from_file_location("sweep_kernels", found, loader=loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def grown(args: tuple[Any, ...], signature: str, target: int | None) -> tuple[Any, ...]:
    """``args`` with every array grown to about ``target`` elements (the largest one),
    along the axes the signature leaves free; scalars and fixed axes as they are."""
    if target is None:
        return args
    params = parse_signature_string(signature).params
    arrays = [a for a in args if isinstance(a, np.ndarray) and a.size]
    if not arrays:
        return args
    largest = max(arrays, key=lambda a: a.size)
    free = [axis for axis, d in enumerate(params[args.index(largest)].dims)
            if not isinstance(d, int)] if largest.ndim else []
    if not free:
        return args
    factor = max(1, round((target / largest.size) ** (1 / len(free))))
    out = []
    for value, param in zip(args, params, strict=False):
        if not isinstance(value, np.ndarray) or not value.ndim or param.is_scalar:
            out.append(value)
            continue
        shape = tuple(n * factor if not isinstance(d, int) and n > 1 else n
                      for n, d in zip(value.shape, param.dims, strict=True))
        out.append(np.resize(value, shape))
    return tuple(out)


def median_time(fn: Any, args: tuple[Any, ...], budget: float) -> float:
    fn(*args)
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < 3 or (time.perf_counter() - start < budget and len(times) < 101):
        t = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def sweep(cases: list[Any], module: Any, budget: float) -> list[tuple[str, str, float, float]]:
    rows = []
    for case in cases:
        kernel = getattr(module, kernel_name(case.name), None)
        if kernel is None:
            continue
        base = max(case.inputs, key=lambda args: sum(np.size(a) for a in args))
        for label, target in SIZES.items():
            try:
                args = grown(base, case.signature, target)
                with warnings.catch_warnings(), np.errstate(all="ignore"):
                    warnings.simplefilter("ignore")
                    ours = median_time(kernel, args, budget)
                    theirs = median_time(case.fn, args, budget)
            except Exception:
                continue
            rows.append((case.name, label, theirs, ours))
            print(f"{case.name}\t{label}\t{theirs:.3e}\t{ours:.3e}", file=sys.stderr,
                  flush=True)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated case names")
    parser.add_argument("--budget", type=float, default=0.05, help="seconds per timing")
    parser.add_argument("--threshold", type=float, default=0.9)
    parser.add_argument("--memory-gb", type=float, default=8.0,
                        help="address space limit while timing: a grown case whose result "
                             "would not fit (an outer product) is skipped, not killed")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:1])
    from numpy_cases import CASES
    from numpy_cases_extended import EXTENDED_CASES  # (the complex cases included)

    only = {n for n in args.only.split(",") if n}
    cases = [c for c in [*CASES, *EXTENDED_CASES] if not only or c.name in only]
    cases = [c for c in cases if traces(c)]
    module = build([c.name for c in cases])
    limit = int(args.memory_gb * (1 << 30))
    resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
    t0 = time.perf_counter()
    rows = sweep(cases, module, args.budget)
    ratios = {}
    for name, label, theirs, ours in rows:
        ratios.setdefault(name, {})[label] = theirs / ours
    slow = {n: r for n, r in ratios.items() if min(r.values()) < args.threshold}
    print(f"\n=== do-no-harm sweep: {len(ratios)} catalog kernels compiled vs NumPy, "
          f"{len(rows)} timings, 1 thread, numpy {np.__version__}, "
          f"{time.perf_counter() - t0:.0f} s")
    every = [r for rs in ratios.values() for r in rs.values()]
    print(f"geometric mean {math.exp(np.mean(np.log(every))):.2f}x; below "
          f"{args.threshold}x at some size: {len(slow)} of {len(ratios)}")
    print(f"\n{'kernel':34s}" + "".join(f"{label:>10s}" for label in SIZES))
    for name, r in sorted(slow.items(), key=lambda item: min(item[1].values())):
        print(f"{name:34s}" + "".join(f"{r[label]:9.2f}x" if label in r else f"{'-':>10s}"
                                      for label in SIZES))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
