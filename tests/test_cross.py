"""Cross-built extensions run on the platform they are for: AArch64 Linux, under qemu-user.

Projects are built here with ``platform = "linux-aarch64"``. Their extensions are run by
Debian's arm64 CPython 3.11 with NumPy's aarch64 wheel, in a sysroot
(``scripts/cross_sysroot.sh``, which ``scripts/test.sh`` runs first) under
``qemu-aarch64``, on two CPUs:

- ``cortex-a72``, NEON only: the module must pick its ``aarch64`` code;
- ``max``, with SVE and SVE2: the module must pick ``aarch64-sve``.

What runs there is checked against that platform's own NumPy:
- the core differential catalog (``numpy_cases.CASES``, through ``catalog_cases.py``);
- the hostile calls (``hostile_cases.py``);
- sorting, matrix products and vector math at sizes the catalog does not reach
  (``cross_cases.py``).

Without qemu or the sysroot these tests fail, saying how to set them up: they never skip.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import catalog_cases
import cross_cases
import hostile_cases
import numpy_cases
import pytest
from projects import copy_quickstart, run_cases

TESTS = Path(__file__).parent
REPO = TESTS.parent
SYSROOT = Path(os.environ.get("AOTC_QEMU_SYSROOT",
                              Path.home() / ".cache" / "aotc-qemu" / "aarch64"))
PYTHON = SYSROOT / "usr" / "bin" / "python3.11"
#: qemu's CPU model -> the level a module built with the default targets runs there.
CPUS = {"cortex-a72": "aarch64", "max": "aarch64-sve"}
PLATFORM = 'platform = "linux-aarch64"\n'

pytestmark = pytest.mark.usefixtures("c_compiler")


@pytest.fixture(scope="module")
def qemu() -> list[str]:
    binary = shutil.which("qemu-aarch64-static") or shutil.which("qemu-aarch64")
    if binary is None or not PYTHON.exists() or not (SYSROOT / "site" / "numpy").is_dir():
        pytest.fail(f"no qemu-aarch64 or no arm64 sysroot at {SYSROOT}: run "
                    "scripts/cross_sysroot.sh .venv/bin/python (scripts/test.sh does)")
    return [binary, "-L", str(SYSROOT)]


def _python(qemu: list[str], cpu: str) -> list[str]:
    return [*qemu, "-cpu", cpu, str(PYTHON)]


def _build(root: Path, modules: dict[str, str], config: str = PLATFORM) -> Path:
    """A project of ``modules`` (dotted name -> source) under ``root``, built in place
    with ``config`` (the kernel sources may import the test helpers)."""
    for name, source in modules.items():
        path = root.joinpath(*name.split(".")).with_suffix(".py")
        path.parent.mkdir(parents=True, exist_ok=True)
        (path.parent / "__init__.py").touch()
        path.write_text(textwrap.dedent(source).lstrip())
    listed = ", ".join(f'"{m}"' for m in modules)
    packages = ", ".join(sorted({f'"{m.rpartition(".")[0]}"' for m in modules}))
    (root / "pyproject.toml").write_text(
        f'[project]\nname = "crossed"\nversion = "0.1"\n[tool.setuptools]\n'
        f'packages = [{packages}]\n[tool.aotc]\nmodules = [{listed}]\n' + config)
    done = subprocess.run([sys.executable, "-m", "aotc", "build", str(root)],
                          capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(TESTS)})
    assert done.returncode == 0, done.stdout + done.stderr
    return root


def _path(root: Path) -> list[Path]:
    """What the sysroot's Python imports from: its NumPy, the project, the test helpers
    and aotc's pure-Python source (numpy_cases reads aotc's tables; nothing is compiled)."""
    return [SYSROOT / "site", root, TESTS, REPO]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The catalog, the hostile kernels and the extra kernels, one extension each, built
    once for the default AArch64 levels."""
    return _build(tmp_path_factory.mktemp("cross"), {
        f"{catalog_cases.PACKAGE}.kernels": catalog_cases.KERNELS,
        "aotc_hostile.kernels": hostile_cases.KERNELS,
        f"{cross_cases.PACKAGE}.kernels": cross_cases.KERNELS})


def test_the_extensions_are_aarch64_objects(project: Path) -> None:
    """Named for the AArch64 CPython, and AArch64 ELF files (e_machine 183)."""
    built = sorted(project.glob("*/*.so"))
    assert [p.name for p in built] == [f"kernels.cpython-{sys.version_info[0]}"
                                       f"{sys.version_info[1]}-aarch64-linux-gnu.so"] * 3
    for path in built:
        head = path.read_bytes()[:20]
        assert head[:4] == b"\x7fELF" and int.from_bytes(head[18:20], "little") == 183


@pytest.fixture(scope="module", params=sorted(CPUS))
def cpu(request: pytest.FixtureRequest) -> str:
    return str(request.param)


#: Random hostile calls per CPU, each CPU drawing its own (test_hostile makes 20,000
#: natively: emulated, each takes about 15 times as long).
FUZZ_CALLS = 2000
FUZZ_SEEDS = {"cortex-a72": 20261206, "max": 20261207}
#: Each runner (a script speaking ``projects.run_cases``' protocol) and its cases.
RUNNERS = {"catalog_cases.py": [c.name for c in numpy_cases.CASES],
           "hostile_cases.py": list(hostile_cases.CASES),
           "cross_cases.py": list(cross_cases.CASES)}


@pytest.fixture(scope="module")
def results(project: Path, qemu: list[str], cpu: str) -> dict[str, dict[str, dict]]:
    """Every runner's results on ``cpu``, each case's record by name."""
    return {script: run_cases(TESTS / script, names, _path(project), _python(qemu, cpu),
                              timeout=900, env={"AOTC_FUZZ_CALLS": str(FUZZ_CALLS),
                                                 "AOTC_FUZZ_SEED": str(FUZZ_SEEDS[cpu])})
            for script, names in RUNNERS.items()}


@pytest.mark.parametrize(("script", "name"),
                         [(script, name) for script, names in RUNNERS.items()
                          for name in names])
def test_case(results: dict[str, dict[str, dict]], script: str, name: str) -> None:
    record = results[script][name]
    assert record["status"] == "pass", record.get("detail", record)


def _target(project: Path, qemu: list[str], cpu: str, forced: str = ""
            ) -> subprocess.CompletedProcess:
    env = {"PYTHONPATH": ":".join(map(str, _path(project))), "PATH": "/usr/bin:/bin"}
    if forced:
        env["AOTC_CPU"] = forced
    return subprocess.run([*_python(qemu, cpu), "-c", f"import {cross_cases.PACKAGE}.kernels"
                           " as k; print(k.__aotc_target__)"],
                          capture_output=True, text=True, env=env, timeout=120)


def test_each_cpu_runs_its_level(project: Path, qemu: list[str]) -> None:
    """The import check reads HWCAP: NEON-only CPUs run the baseline, SVE CPUs the SVE
    code; AOTC_CPU forces a level the CPU has, and asking for SVE on a CPU without it is
    an ImportError naming what is missing, never an illegal instruction."""
    for cpu, level in CPUS.items():
        done = _target(project, qemu, cpu)
        assert done.stdout.strip() == level, done.stderr
    done = _target(project, qemu, "max", forced="aarch64")
    assert done.stdout.strip() == "aarch64", done.stderr
    done = _target(project, qemu, "cortex-a72", forced="aarch64-sve")
    assert done.returncode == 1 and "ImportError" in done.stderr, done.stderr
    assert "lacks sve" in done.stderr


def test_an_sve2_level_runs_where_the_cpu_has_it(tmp_path: Path, qemu: list[str]) -> None:
    """targets = [..., "aarch64-sve2"]: chosen on an SVE2 CPU, and right there."""
    root = _build(tmp_path, {"sve2.kernels": """
        import numpy as np
        import aotc
        from aotc import f32, f64

        @aotc.export
        def blend(x: f32[:], y: f64[:]) -> f64[:]:
            return np.tanh(x) * y + np.sqrt(np.abs(y))
        """}, PLATFORM + 'targets = ["aarch64", "aarch64-sve2"]\n')
    script = ("import numpy as np; import sve2.kernels as k; x = np.linspace(-3, 3, 1001, "
              "dtype=np.float32); y = np.linspace(-1, 5, 1001); got = k.blend(x, y); "
              "want = np.tanh(x) * y + np.sqrt(np.abs(y)); "
              "print(k.__aotc_target__, np.max(np.abs(got - want) / (np.abs(want) + 1e-30)))")
    done = subprocess.run([*_python(qemu, "max"), "-c", script], capture_output=True,
                          text=True, env={"PYTHONPATH": f"{SYSROOT / 'site'}:{root}"})
    level, error = done.stdout.split()
    assert level == "aarch64-sve2", done.stderr
    assert float(error) < 1e-6  # float32 tanh times a float64: a few float32 ulps


def test_the_wheel_is_manylinux2014_aarch64(tmp_path: Path, qemu: list[str]) -> None:
    """``python -m build -C platform=linux-aarch64`` gives a manylinux_2_17_aarch64 wheel
    (zig links for glibc 2.17) that the arm64 Python installs and runs."""
    project = copy_quickstart(tmp_path / "quickstart")
    done = subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "-C",
                           "platform=linux-aarch64", "--outdir", str(tmp_path / "out"),
                           str(project)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (wheel,) = (tmp_path / "out").glob("*.whl")
    tag = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    assert wheel.name == f"quickstart-0.1.0-{tag}-{tag}-manylinux_2_17_aarch64.whl"
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    script = ("import numpy as np; from quickstart import kernels as k; "
              "x = np.arange(6.0); print(k.scale(x, 1.5).tolist())")
    done = subprocess.run([*_python(qemu, "cortex-a72"), "-c", script], capture_output=True,
                          text=True, env={"PYTHONPATH": f"{SYSROOT / 'site'}:{site}"})
    assert done.stdout.strip() == str((1.5 * numpy_cases.np.arange(6.0)).tolist()), done.stderr
