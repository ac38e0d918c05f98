"""examples/numpy_tour built with aotc: every kernel against the same source run by NumPy.

The example is built once for this module (one extension per kernel module), in a
temporary copy, and the compiled functions are compared with the plain-Python module,
including the arrays kernels write into.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
rng = np.random.default_rng(3)
IMG = rng.integers(0, 256, (6, 7), dtype=np.uint8)

INPUTS: dict[str, list[tuple[Any, ...]]] = {
    "heat_step": [(rng.random((6, 7)), 0.1), (rng.random((5, 9))[::-1, ::2].copy(), 0.2)],
    "standardize": [(rng.standard_normal((9, 4)).astype(np.float32),),
                    (np.ones((3, 2), np.float32),)],
    "polynomial_features": [(rng.random(7), 4), (rng.random(1), 1)],
    "moving_average": [(rng.random(20), 5), (rng.random(3), 3)],
    "classify": [(rng.standard_normal((8, 5)).astype(np.float32),
                  rng.standard_normal((5, 3)).astype(np.float32),
                  rng.standard_normal(3).astype(np.float32))],
    "clip_outliers": [(np.concatenate([rng.standard_normal(30), [25.0, -30.0]]), 2.0)],
    "checkerboard": [(3,), (1,)],
    "nan_summary": [(np.where(rng.random((4, 5)) > 0.7, np.nan, rng.random((4, 5))),)],
    "hash_u32": [(rng.integers(0, 2**32, 50, dtype=np.uint32),)],
    "frobenius_trace": [(rng.standard_normal((4, 4)),), (rng.standard_normal((4, 4)).T,)],
    "ema": [(rng.standard_normal(100), 0.2), (rng.standard_normal(1), 0.5)],
    "running_max_drawdown": [(np.cumsum(rng.standard_normal(200)),)],
    "isqrt_newton": [(rng.uniform(0.01, 1e6, 50),)],
    "mandelbrot": [(rng.uniform(-2, 1, 64), rng.uniform(-1.5, 1.5, 64), 50)],
    "gray_scott": [(np.ones((12, 10)), np.pad(np.full((4, 4), 0.25), ((4, 4), (3, 3))), 5)],
    "cumulative_scan": [(rng.random(10),)],
    "neighbour_sums": [(IMG,), (IMG[:1, :1],), (IMG[:, :1],), (IMG[:0],), (IMG[::2, ::-1],)],
    "heat_steps": [(rng.random(10), 3), (rng.random(2), 2), (rng.random(5), 0)],
    "knapsack": [(np.array([3, 4, 5]), np.array([4, 5, 6]), 10),
                 (np.array([11]), np.array([3]), 10), (np.array([0, 2]), np.array([1, 1]), 3),
                 (np.zeros(0, np.int64), np.zeros(0, np.int64), 0),
                 (np.array([-1]), np.array([1]), 3)],  # dp[4]: IndexError, as in Python
    "box_blur": [(IMG.astype(np.float32) / 7, 1), (IMG.astype(np.float32), 0),
                 (IMG.astype(np.float32), 3), (IMG.T.astype(np.float32), 2),
                 (IMG.astype(np.float32), -1)],  # out[-1, w]: IndexError, as in Python
    "monte_carlo_pi": [(1000, 3), (1, 0), (10, -1)],  # seed -1: ValueError, as NumPy
    "convolve_valid": [(rng.random(20), rng.random(3)), (rng.random(3), rng.random(3)),
                       (rng.random(5), rng.random(1))],
}
# Libm-based functions may differ by a few ulp from NumPy's; sums may reorder.
RTOL = {"standardize": 2e-6, "classify": 0, "polynomial_features": 1e-13,
        "frobenius_trace": 1e-13, "nan_summary": 1e-14, "clip_outliers": 1e-14,
        "moving_average": 1e-12}


def _load(name: str, path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Any, Any]]:
    project = tmp_path_factory.mktemp("tour") / "numpy_tour"
    shutil.copytree(ROOT / "examples" / "numpy_tour", project)
    # For this CPU only: the default, every level, is what test_targets and test_e2e build.
    result = subprocess.run([sys.executable, "-m", "aotc", "build", "--target", "native",
                             str(project)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    modules = {}
    for stem in ("kernels", "loops"):
        (so,) = (project / "tour").glob(f"{stem}.*.so")
        compiled = _load(f"tour.{stem}", so)
        source = _load(f"tour_{stem}_source", project / "tour" / f"{stem}.py")
        modules[stem] = (compiled, source)
    return modules


def _pairs(built: dict[str, tuple[Any, Any]]) -> dict[str, tuple[Any, Any]]:
    out = {}
    for compiled, source in built.values():
        for name in INPUTS:
            if hasattr(source, name):
                out[name] = (getattr(compiled, name), getattr(source, name))
    return out


def _outcome(fn: Any, args: tuple[Any, ...]) -> tuple[Any, Exception | None]:
    """``fn(*args)`` and None, or None and the exception it raised."""
    try:
        with np.errstate(all="ignore"):
            return fn(*args), None
    except Exception as error:
        return None, error


@pytest.mark.parametrize("name", sorted(INPUTS))
def test_example_kernel_matches_numpy(built: dict[str, tuple[Any, Any]], name: str) -> None:
    compiled, plain = _pairs(built)[name]
    for args in INPUTS[name]:
        mine = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
        theirs = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
        got, got_error = _outcome(compiled, mine)
        want, want_error = _outcome(plain, theirs)
        if want_error is not None or got_error is not None:  # the same exception
            assert type(got_error) is type(want_error), (got_error, want_error)
            assert str(got_error) == str(want_error)
        gots = got if isinstance(got, tuple) else (got,)
        wants = want if isinstance(want, tuple) else (want,)
        for g, w in zip(gots, wants, strict=True):
            if w is None:
                assert g is None
                continue
            np.testing.assert_allclose(g, w, rtol=RTOL.get(name, 1e-15), atol=0)
            assert np.asarray(g).dtype == np.asarray(w).dtype
        # arrays written by the kernel, as NumPy writes them (up to an error too)
        for m, t in zip(mine, theirs, strict=True):
            if isinstance(m, np.ndarray):
                np.testing.assert_allclose(m, t, rtol=RTOL.get(name, 1e-15), atol=0)


def test_every_export_has_inputs(built: dict[str, tuple[Any, Any]]) -> None:
    exported = {n for compiled, _ in built.values() for n in dir(compiled)
                if not n.startswith("_") and callable(getattr(compiled, n))}
    assert exported == set(INPUTS)
