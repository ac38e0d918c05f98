"""``python -m aotc`` and the build backend's error paths: messages, not tracebacks.

Everything here stops before a C compiler runs, so it is quick: tracing and LLVM are
in-process, and the failing builds fail while tracing.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

GOOD = '''
import numpy as np
import aotc
from aotc import f64


@aotc.export
def rosen(x: f64["n"]) -> f64:
    """Rosenbrock."""
    t0 = 100 * (x[1:] - x[:-1] ** 2) ** 2
    return np.sum(t0 + (1 - x[:-1]) ** 2)
'''

BAD = '''
import numpy as np
import aotc
from aotc import f64


@aotc.export
def clip(x: f64[:]) -> f64[:]:
    if x[0] > 0:
        return x
    return 0.0
'''


def _aotc(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "aotc", *args], cwd=cwd, capture_output=True,
                          text=True)


def _project(root: Path, kernels: str, extra: str = "") -> Path:
    (root / "cli_pkg").mkdir(parents=True)
    (root / "cli_pkg" / "__init__.py").write_text("")
    (root / "cli_pkg" / "kernels.py").write_text(kernels)
    (root / "pyproject.toml").write_text(textwrap.dedent("""
        [project]
        name = "cli-pkg"
        version = "0.1"
        [tool.setuptools]
        packages = ["cli_pkg"]
        [tool.aotc]
        modules = ["cli_pkg.kernels"]
    """) + extra)
    return root


def test_inspect_ir_and_passes(tmp_path):
    _project(tmp_path, GOOD)
    done = _aotc("inspect", "cli_pkg.kernels:rosen", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert ";; ---- rosen :: f64(f64['n']): traced" in done.stdout
    assert ";; ---- rosen :: f64(f64['n']): optimized" in done.stdout
    assert "reduce_sum" in done.stdout and "kernels.py:11" in done.stdout
    done = _aotc("inspect", "cli_pkg/kernels.py:rosen", "--passes", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    for name in ("constant_fold", "cse", "dce", "fusion"):
        assert f": after {name} " in done.stdout
    optimized = done.stdout.split(": after dce_after_fusion ")[1]
    assert "fusion[axes=(0,)" in optimized  # the whole kernel is one fused loop


CHOOSING = '''
import numpy as np
import aotc
from aotc import f64


@aotc.export
def spread(x: f64[:], method: str) -> f64:
    if method == "range":
        return np.max(x) - np.min(x)
    return np.std(x)
'''


def test_inspect_shows_each_string_a_str_parameter_selects(tmp_path):
    _project(tmp_path, CHOOSING)
    done = _aotc("inspect", "cli_pkg.kernels:spread", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert ";; ---- spread [method='range'] :: f64(f64[:]): optimized" in done.stdout
    assert ";; ---- spread [method=any other string] :: f64(f64[:]): optimized" in done.stdout
    ranged, other = done.stdout.split("any other string]")[:2]
    assert "reduce_max" in ranged and "reduce_max" not in other  # each its own program


def test_inspect_without_fusion_shows_the_unfused_baseline(tmp_path):
    _project(tmp_path, GOOD)
    done = _aotc("inspect", "cli_pkg.kernels:rosen", "--no-fusion", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "= fusion[" not in done.stdout.split(": optimized")[1]
    (tmp_path / "pyproject.toml").write_text(
        (tmp_path / "pyproject.toml").read_text() + "fusion = false\n")
    done = _aotc("inspect", "cli_pkg.kernels:rosen", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "= fusion[" not in done.stdout.split(": optimized")[1]


def test_inspect_llvm_and_asm(tmp_path):
    _project(tmp_path, GOOD)
    done = _aotc("inspect", "cli_pkg.kernels:rosen", "--llvm", "--asm", "--target",
                 "x86-64-v3", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "define" in done.stdout and "aotc_cli_pkg_kernels_rosen_0_shapes" in done.stdout
    assert ";; ---- assembly (x86-64-v3)" in done.stdout and "ret" in done.stdout


@pytest.mark.parametrize("args, message", [
    (["inspect", "cli_pkg.kernels"], "is not module:function"),
    (["inspect", "cli_pkg.kernels:nope"], "'nope' is not an @aotc.export function"),
    (["inspect", "no_such.module:f"], "kernel module 'no_such.module' not found"),
    (["inspect", "missing.py:f"], "missing.py: no such file"),
    (["build", "does-not-exist"], "has no pyproject.toml"),
    (["opt", "missing.ir"], "missing.ir: No such file or directory"),
    (["opt", "missing.ir", "-p", "cse,fuse"], "unknown pass 'fuse' (the passes: argument_order, "
                                              "constant_fold, cse, dce, interleave, fusion,"),
])
def test_usage_errors(tmp_path, args, message):
    _project(tmp_path, GOOD)
    done = _aotc(*args, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("aotc: error: ") and message in done.stderr
    assert "Traceback" not in done.stderr


def _sections(stdout: str) -> dict[str, str]:
    """``inspect``'s output by section title (``traced``, ``after cse``...)."""
    found: dict[str, list[str]] = {}
    for line in stdout.splitlines():
        if line.startswith(";; ---- "):
            title = line.split("): ", 1)[1].rstrip("- ")
            found[title] = []
        else:
            found[title].append(line)
    return {title: "\n".join(lines) for title, lines in found.items()}


def test_saved_ir_replays_through_opt(tmp_path):
    """``inspect --save-ir`` writes the traced IR and ``opt`` runs passes on it: the
    whole pipeline gives the IR ``inspect`` shows after the last pass, the first four
    passes the IR after the fourth."""
    _project(tmp_path, GOOD)
    done = _aotc("inspect", "cli_pkg.kernels:rosen", "--passes", "--save-ir", "rosen.ir",
                 cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "aotc: saved the traced IR of rosen :: f64(f64['n']) to rosen.ir" in done.stderr
    sections = _sections(done.stdout)
    assert (tmp_path / "rosen.ir").read_text() == sections["traced"] + "\n"
    replay = _aotc("opt", "rosen.ir", cwd=tmp_path)
    assert replay.returncode == 0, replay.stderr
    assert replay.stdout == sections["after snapshots"] + "\n"
    assert "= fusion[" in replay.stdout
    replay = _aotc("opt", "rosen.ir", "-p", "argument_order,constant_fold,cse,dce",
                   cwd=tmp_path)
    assert replay.returncode == 0, replay.stderr
    assert replay.stdout == sections["after dce"] + "\n"
    assert "= fusion[" not in replay.stdout


def test_opt_reports_malformed_and_invalid_ir(tmp_path):
    (tmp_path / "bad.ir").write_text("{ lambda a:f64[n] .\n  b:f64[n] = frob a\n  in (b) }\n")
    done = _aotc("opt", "bad.ir", cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith("aotc: error: bad.ir: line 2, column 14: unknown primitive "
                                  "'frob'\n      b:f64[n] = frob a\n")
    (tmp_path / "wrong.ir").write_text("{ lambda a:f64[n] .\n  b:f64[] = neg a\n  in (b) }\n")
    done = _aotc("opt", "wrong.ir", "-p", "cse", cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "aotc: error: wrong.ir: neg at None: outputs f64[] but the type rule gives f64[n]" \
        in done.stderr


def test_build_error_is_located(tmp_path):
    _project(tmp_path, BAD)
    done = _aotc("build", ".", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "aotc: error: " in done.stderr
    assert "kernels.py:11" in done.stderr and "in kernel 'clip'" in done.stderr
    assert "the kernel returns values of different types" in done.stderr
    assert "    return 0.0" in done.stderr and "^" in done.stderr


def test_syntax_error_in_a_kernel_module_is_located(tmp_path):
    _project(tmp_path, "import aotc\n\n\ndef f(x):\n    return x +* 2\n")
    done = _aotc("build", ".", cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "kernels.py:5: importing 'cli_pkg.kernels' failed: SyntaxError: invalid syntax" \
        in done.stderr
    assert "    return x +* 2\n              ^" in done.stderr  # the caret at the '*'


def test_a_build_its_config_stops_keeps_the_earlier_extension(tmp_path):
    """A bad setting found during the build (a CPU name) is not a changed source: the
    extension an earlier build left still matches the kernels, so it stays."""
    _project(tmp_path, GOOD, 'targets = ["bogus-cpu"]\n')
    built = tmp_path / "cli_pkg" / "kernels.cpython-311-x86_64-linux-gnu.so"
    built.write_text("left by an earlier build")
    done = _aotc("build", ".", cwd=tmp_path)
    assert done.returncode == 2
    assert "target = 'bogus-cpu'" in done.stderr and "removed" not in done.stderr
    assert built.read_text() == "left by an earlier build"


def test_failed_build_removes_the_stale_extension(tmp_path):
    """After a failed in-place build, the edited source runs, not an old extension."""
    _project(tmp_path, BAD)
    package = tmp_path / "cli_pkg"
    stale = [package / "kernels.cpython-311-x86_64-linux-gnu.so", package / "kernels.abi3.so",
             package / "kernels.pyi"]
    for path in stale:
        path.write_text("left by an earlier build")
    keep = package / "kernels_extra.so"
    keep.write_text("another module's extension")
    done = _aotc("build", ".", cwd=tmp_path)
    assert done.returncode == 2
    assert not any(path.exists() for path in stale) and keep.exists()
    assert "removed kernels.abi3.so, kernels.cpython-311-x86_64-linux-gnu.so, kernels.pyi" \
        in done.stderr
    assert "'import cli_pkg.kernels' runs the Python source" in done.stderr


def test_bad_config_is_reported(tmp_path):
    _project(tmp_path, GOOD, "opt-levle = 1\n")
    done = _aotc("build", ".", cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "unknown [tool.aotc] key 'opt-levle'" in done.stderr
    assert "did you mean 'opt-level'?" in done.stderr


# -- the PEP 517 backend, called the way a frontend calls it ----------------------------------

def _hook(project: Path, code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "import build_backend as b\n" + code],
                          cwd=project, capture_output=True, text=True)


def test_metadata_and_sdist_do_not_trace(tmp_path):
    # Importing these kernels fails: the hooks must not import them at all.
    _project(tmp_path, "raise RuntimeError('imported at metadata time')\n")
    (tmp_path / "out").mkdir()
    done = _hook(tmp_path, "print(b.get_requires_for_build_wheel())\n"
                           "print(b.prepare_metadata_for_build_wheel('out'))\n"
                           "print(b.build_sdist('out'))\n")
    assert done.returncode == 0, done.stderr
    assert "cli_pkg-0.1.dist-info" in done.stdout and "cli_pkg-0.1.tar.gz" in done.stdout


def test_backend_build_error_has_no_traceback(tmp_path):
    _project(tmp_path, BAD)
    done = _hook(tmp_path, "b.build_wheel('out')")
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "aotc: error: " in done.stderr and "in kernel 'clip'" in done.stderr


def test_backend_config_settings_override_pyproject(tmp_path):
    _project(tmp_path, GOOD)
    done = _hook(tmp_path, "b.build_wheel('out', {'opt-level': '7'})")
    assert done.returncode == 3 and "Traceback" not in done.stderr
    assert "aotc: error: -C opt-level must be an integer from 0 to 3, got 7" in done.stderr
    done = _hook(tmp_path, "b.build_wheel('out', {'opt-levl': '1'})")
    assert done.returncode == 3 and "did you mean 'opt-level'?" in done.stderr


def test_backend_builds_a_wheel(tmp_path):
    _project(tmp_path, GOOD)
    done = _hook(tmp_path, "print(b.build_wheel('out', {'target': 'x86-64'}))")
    assert done.returncode == 0, done.stderr
    wheel = tmp_path / "out" / done.stdout.split()[-1]
    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.startswith("cli_pkg/kernels.cpython-") for n in names)
    assert "cli_pkg/kernels.pyi" in names and "cli_pkg/kernels.py" not in names


def test_backend_editable_install_is_typed(tmp_path):
    """PEP 660's hook (what ``pip install -e .`` runs) builds the extension next to its
    source, with the stub and the PEP 561 marker that make type checkers read it."""
    _project(tmp_path, GOOD)
    done = _hook(tmp_path, "print(b.build_editable('out', {'target': 'x86-64'}))")
    assert done.returncode == 0, done.stderr
    package = tmp_path / "cli_pkg"
    assert list(package.glob("kernels.cpython-*.so")), sorted(p.name for p in package.iterdir())
    assert (package / "kernels.pyi").is_file() and (package / "py.typed").is_file()
