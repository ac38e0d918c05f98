"""How long builds take: the dev-loop cases of issue 40, timed on this machine.

    python benchmarks/build_times.py            # every case, three runs each, the median
    python benchmarks/build_times.py --runs 1

Each case builds a copy of ``examples/quickstart`` (6 kernels), a generated 20-kernel
module, or 6 kernels of matrix products and sorts, in a temporary directory. "cold"
starts from an empty ``AOTC_CACHE_DIR`` (a machine's first build: aotc's shared runtime
is compiled too); "new kernels" keeps the cache of a build of the *other* module (a new
project on a machine that built one before: the runtime is cached, its kernels and
wrapper are not); "warm" keeps the object cache of an earlier build of the same sources
(a fresh clone, CI with a cached ``~/.cache/aotc``). ``editable`` calls the PEP 660
hook that ``pip install -e . --no-build-isolation`` calls. The size of the generated C
is reported too. Builds run as in a user's shell: Python caches bytecode
(``PYTHONDONTWRITEBYTECODE`` is dropped).
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


#: Matrix products and sorts: what the library functions (the GEMM, the sorts, compiled
#: once per target, not once per kernel) change.
PRODUCTS = "\n".join(["import numpy as np", "import aotc", "from aotc import f32, f64", ""] + [
    f"@aotc.export\ndef {name}({params}):\n    return {body}\n" for name, params, body in [
        ("product", "a: f64[:, :], b: f64[:, :]", "a @ b"),
        ("gram", "a: f64[:, :]", "a.T @ a"),
        ("layer", "x: f32[:, :], w: f32[:, :], b: f32[:]", "np.maximum(x @ w + b, 0)"),
        ("scores", "x: f32[:, :], w: f32[:, :]", "np.tanh(x @ w)"),
        ("ordered", "x: f64[:]", "np.sort(x)"),
        ("middle", "x: f64[:]", "np.median(x)")]])
#: Each module's source (None: the quickstart's own 6 kernels), the module whose cache
#: a "new kernels" case starts from, and an edit of one kernel.
SOURCES: dict[str | None, tuple[str | None, tuple[str, str]]] = {
    None: (TWENTY, ("return a * x", "return x * a")),
    TWENTY: (None, ("np.sqrt(x) * 1", "np.sqrt(x) * 1.0")),
    PRODUCTS: (None, ("return a @ b", "return (a @ b) * 1.0")),
}


def _project(where: Path, source: str | None) -> Path:
    project = where / "project"
    shutil.copytree(QUICKSTART, project, ignore=shutil.ignore_patterns(
        "build", ".aotc-build", "*.so", "*.pyi", "__pycache__", "*.egg-info"))
    if source is not None:
        (project / "quickstart" / "kernels.py").write_text(source)
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


def _case(runs: int, source: str | None, cache: str,
          prepare: Callable[[Path, dict[str, str]], None], command: list[str]) -> float:
    times = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            env = {**os.environ, "AOTC_CACHE_DIR": str(Path(tmp) / "cache")}
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            if cache != COLD:  # a module built once elsewhere: the cache holds its objects
                earlier = source if cache == SAME else SOURCES[source][0]
                _timed(BUILD, _project(Path(tmp) / "earlier", earlier), env)
            project = _project(Path(tmp), source)
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
    text = kernels.read_text()
    for old, new in (edit for _, edit in SOURCES.values()):
        if old in text:
            kernels.write_text(text.replace(old, new, 1))
            return
    raise SystemExit("no kernel to edit")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    cases = [
        ("6-kernel module, clean, cold cache", None, COLD, _nothing, BUILD),
        ("6-kernel module, clean, new kernels", None, OTHER, _nothing, BUILD),
        ("6-kernel module, clean, warm cache", None, SAME, _nothing, BUILD),
        ("20-kernel module, clean, cold cache", TWENTY, COLD, _nothing, BUILD),
        ("20-kernel module, clean, new kernels", TWENTY, OTHER, _nothing, BUILD),
        ("20-kernel module, clean, warm cache", TWENTY, SAME, _nothing, BUILD),
        ("no change", None, COLD, _built, BUILD),
        ("one kernel changed", None, COLD, _built_then_edited, BUILD),
        ("6 products and sorts, clean, cold cache", PRODUCTS, COLD, _nothing, BUILD),
        ("6 products and sorts, clean, new kernels", PRODUCTS, OTHER, _nothing, BUILD),
        ("6 products and sorts, one product changed", PRODUCTS, COLD, _built_then_edited,
         BUILD),
        ("editable (PEP 660 hook), cold cache", None, COLD, _nothing, EDITABLE),
        ("editable (PEP 660 hook), new kernels", None, OTHER, _nothing, EDITABLE),
    ]
    print(f"| case | seconds (median of {runs}) |\n| --- | --- |")
    for name, source, cache, prepare, command in cases:
        print(f"| {name} | {_case(runs, source, cache, prepare, command):.2f} |", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        project = _project(Path(tmp), None)
        _timed(BUILD, project, {**os.environ, "AOTC_CACHE_DIR": str(Path(tmp) / "c")})
        for name, what in (("kernels.c", "wrapper C for 6 kernels"),
                           ("_aotc_runtime.c", "shared runtime C (compiled once, cached)")):
            (c_file,) = (project / ".aotc-build").rglob(name)
            print(f"\n{what}: {c_file.stat().st_size / 1e6:.2f} MB", end="")
        print()


if __name__ == "__main__":
    main()
