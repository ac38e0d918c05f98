"""One module, several instruction-set levels: the best the CPU has runs, AOTC_CPU forces
one, and a level the CPU lacks never runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from projects import build_project
from test_hostile import CPUINFO_NAMES, _cpuinfo_flags

from aotc.codegen.targets import x86

PACKAGE = "targets_pkg"
KERNELS = """
import numpy as np
import aotc
from aotc import f64, i64


@aotc.export
def total(x: f64[:]) -> f64:
    return np.sum(x * x)


@aotc.export
def counts(x: i64[:]) -> i64[:]:
    return np.cumsum(x * 3 - 1)
"""
LEVELS = ("x86-64-v2", "x86-64-v3", "x86-64-v4")
RUN = f"""
import json, numpy as np
import {PACKAGE}.kernels as k
x = np.linspace(-1.0, 2.0, 1001)
print(json.dumps({{"target": k.__aotc_target__, "total": k.total(x),
                  "counts": k.counts(np.arange(-50, 50)).tolist()}}))
"""


def _has(level: str) -> bool:
    flags = _cpuinfo_flags()
    return all(CPUINFO_NAMES.get(f, f) in flags for f in x86.LEVELS[level]
               if f in x86.FEATURES)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("targets")
    return build_project(root, PACKAGE, KERNELS, target=None)  # every level


def _run(project: Path, cpu: str | None) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin"} | ({"AOTC_CPU": cpu} if cpu else {})
    return subprocess.run([sys.executable, "-c", RUN], capture_output=True, text=True,
                          cwd=project, env=env)


def test_the_best_level_the_cpu_has_runs(project: Path) -> None:
    done = _run(project, None)
    assert done.returncode == 0, done.stderr
    best = [level for level in LEVELS if _has(level)][-1]
    assert json.loads(done.stdout)["target"] == best


def test_every_level_the_cpu_has_gives_the_same_results(project: Path) -> None:
    x = [-1.0 + 3.0 * k / 1000 for k in range(1001)]
    expected_total = sum(v * v for v in x)
    running = 0
    expected_counts = []
    for v in range(-50, 50):
        running += 3 * v - 1
        expected_counts.append(running)
    for level in LEVELS:
        done = _run(project, level)
        if not _has(level):  # never run: a clear ImportError naming what is missing
            assert done.returncode == 1 and "ImportError" in done.stderr, done.stderr
            assert f"AOTC_CPU={level} asks for CPU target {level}" in done.stderr
            continue
        assert done.returncode == 0, done.stderr
        got = json.loads(done.stdout)
        assert got["target"] == level
        assert got["counts"] == expected_counts
        # Vector widths differ between levels, so sums differ in the last bits only.
        assert got["total"] == pytest.approx(expected_total, rel=1e-13)


def test_an_unknown_level_is_an_import_error_naming_the_levels(project: Path) -> None:
    done = _run(project, "pentium4")
    assert done.returncode == 1
    assert "AOTC_CPU=pentium4, but targets_pkg.kernels carries code for x86-64-v2, " \
           "x86-64-v3, x86-64-v4 only" in done.stderr


def test_the_header_declares_every_level(project: Path) -> None:
    header = (project / ".aotc-build" / PACKAGE / "kernels.h").read_text()
    prefix = f"aotc_{PACKAGE}_kernels_total_0"
    assert f"int64_t {prefix}_shapes(" in header  # the baseline keeps the plain names
    for suffix in ("_x86_64_v3", "_x86_64_v4"):
        assert f"int64_t {prefix}{suffix}(" in header
        assert (project / ".aotc-build" / PACKAGE / f"_aotc_kernels{suffix}.o").is_file()
    symbols = subprocess.run(["nm", "--defined-only",
                              str(next((project / PACKAGE).glob("kernels.*.so")))],
                             capture_output=True, text=True, check=True).stdout.split()
    assert {f"{prefix}{s}" for s in ("", "_x86_64_v3", "_x86_64_v4")} <= set(symbols)
