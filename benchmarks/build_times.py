"""How long builds take: the dev-loop cases of issue 40, timed on this machine.

    python benchmarks/build_times.py            # every case, three runs each, the median
    python benchmarks/build_times.py --runs 1

Each case builds a copy of ``examples/quickstart`` (6 kernels) or a generated 20-kernel
module in a temporary directory. "cold" starts from an empty ``AOTC_CACHE_DIR`` (a
machine's first build: aotc's shared runtime is compiled too); "new kernels" keeps the
cache of a build of the *other* module (a new project on a machine that built one
before: the runtime is cached, its kernels and wrapper are not); "warm" keeps the object
cache of an earlier build of the same sources (a fresh clone, CI with a cached
``~/.cache/aotc``). ``editable`` calls the PEP 660 hook that ``pip install -e .
--no-build-isolation`` calls. The size of the generated C is reported too. Builds run as
in a user's shell: Python caches bytecode (``PYTHONDONTWRITEBYTECODE`` is dropped).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUICKSTART = ROOT / "examples" / "quickstart"
TWENTY = "\n".join(["import numpy as np", "import aotc", "from aotc import f64", ""] + [
    f"@aotc.export\ndef k{i}(x: f64[:], y: f64[:]) -> f64[:]:\n"
    f"    return np.{fn}(x) * {i + 1} + y * np.sum(x)\n"
    for i, fn in enumerate(["sqrt", "exp", "sin", "cos", "tanh", "abs", "log1p",
                            "cbrt", "expm1", "arctan"] * 2)])


def _project(where: Path, twenty: bool) -> Path:
    project = where / "project"
    shutil.copytree(QUICKSTART, project, ignore=shutil.ignore_patterns(
        "build", ".aotc-build", "*.so", "*.pyi", "__pycache__", "*.egg-info"))
    if twenty:
        (project / "quickstart" / "kernels.py").write_text(TWENTY)
    return project


def _timed(command: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr}")
    return elapsed


BUILD = [sys.executable, "-m", "aotc", "build", "."]
EDITABLE = [sys.executable, "-c", "import build_backend as b; b.build_editable('dist')"]


#: What the object cache holds before a case: nothing, the other module's objects (and
#: the shared runtime's), or the same module's.
COLD, OTHER, SAME = "cold", "other", "same"


def _case(runs: int, twenty: bool, cache: str,
          prepare: Callable[[Path, dict[str, str]], None], command: list[str]) -> float:
    times = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            env = {**os.environ, "AOTC_CACHE_DIR": str(Path(tmp) / "cache")}
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            if cache != COLD:  # a module built once elsewhere: the cache holds its objects
                _timed(BUILD, _project(Path(tmp) / "earlier", twenty == (cache == SAME)), env)
            project = _project(Path(tmp), twenty)
            prepare(project, env)
            times.append(_timed(command, project, env))
    return statistics.median(times)


def _nothing(project: Path, env: dict[str, str]) -> None:
    pass


def _built(project: Path, env: dict[str, str]) -> None:
    _timed(BUILD, project, env)


def _built_then_edited(project: Path, env: dict[str, str]) -> None:
    _timed(BUILD, project, env)
    kernels = project / "quickstart" / "kernels.py"
    kernels.write_text(kernels.read_text().replace("return a * x", "return x * a"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    cases = [
        ("6-kernel module, clean, cold cache", False, COLD, _nothing, BUILD),
        ("6-kernel module, clean, new kernels", False, OTHER, _nothing, BUILD),
        ("6-kernel module, clean, warm cache", False, SAME, _nothing, BUILD),
        ("20-kernel module, clean, cold cache", True, COLD, _nothing, BUILD),
        ("20-kernel module, clean, new kernels", True, OTHER, _nothing, BUILD),
        ("20-kernel module, clean, warm cache", True, SAME, _nothing, BUILD),
        ("no change", False, COLD, _built, BUILD),
        ("one kernel changed", False, COLD, _built_then_edited, BUILD),
        ("editable (PEP 660 hook), cold cache", False, COLD, _nothing, EDITABLE),
        ("editable (PEP 660 hook), new kernels", False, OTHER, _nothing, EDITABLE),
    ]
    print(f"| case | seconds (median of {runs}) |\n| --- | --- |")
    for name, twenty, cache, prepare, command in cases:
        print(f"| {name} | {_case(runs, twenty, cache, prepare, command):.2f} |", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        project = _project(Path(tmp), False)
        _timed(BUILD, project, {**os.environ, "AOTC_CACHE_DIR": str(Path(tmp) / "c")})
        for name, what in (("kernels.c", "wrapper C for 6 kernels"),
                           ("_aotc_runtime.c", "shared runtime C (compiled once, cached)")):
            (c_file,) = (project / ".aotc-build").rglob(name)
            print(f"\n{what}: {c_file.stat().st_size / 1e6:.2f} MB", end="")
        print()


if __name__ == "__main__":
    main()
