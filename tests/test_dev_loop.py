"""The development loop: an extension built in place (or by ``pip install -e .``) never
runs stale machine code after its kernel source is edited, and rebuilding is quick."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from projects import build_project

PACKAGE = "devloop_pkg"
KERNELS = """
import numpy as np
import aotc
from aotc import f64


@aotc.export
def total(x: f64[:]) -> f64:
    return np.sum(x)
"""
PROBE = (f"import numpy as np, {PACKAGE}.kernels as k; "
         "print(k.__file__.rsplit('.', 1)[-1], k.total(np.arange(4.0)))")


def _probe(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                          cwd=root)


def test_an_edited_source_runs_instead_of_the_stale_extension(tmp_path: Path) -> None:
    root = build_project(tmp_path, PACKAGE, KERNELS, target=None)
    done = _probe(root)
    assert done.stdout.split() == ["so", "6.0"] and not done.stderr, done.stderr
    source = root / PACKAGE / "kernels.py"
    source.write_text(source.read_text().replace("np.sum(x)", "np.sum(x) * 10"))
    done = _probe(root)
    assert done.stdout.split() == ["py", "60.0"], done.stdout + done.stderr
    assert "RuntimeWarning" in done.stderr and "changed since" in done.stderr
    assert "python -m aotc build" in done.stderr
    rebuilt = subprocess.run([sys.executable, "-m", "aotc", "build", str(root)],
                             capture_output=True, text=True)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "compiled 3 of 3 entry point(s)" not in rebuilt.stderr  # quiet without -v
    done = _probe(root)
    assert done.stdout.split() == ["so", "60.0"] and not done.stderr, done.stderr


def test_a_rebuild_compiles_only_what_changed(tmp_path: Path) -> None:
    root = build_project(tmp_path, PACKAGE, KERNELS + """

@aotc.export
def peak(x: f64[:]) -> f64:
    return np.max(x)
""", target=None)
    source = root / PACKAGE / "kernels.py"
    # Lines added above both kernels move them, which changes no object.
    source.write_text("# Kernels.\n# (two lines more)\n" + source.read_text()
                      .replace("np.max(x)", "np.max(x) + 1"))
    rebuilt = subprocess.run([sys.executable, "-m", "aotc", "build", "-v", str(root)],
                             capture_output=True, text=True)
    assert rebuilt.returncode == 0, rebuilt.stderr
    # Three targets: 'total' is reused for each, 'peak' compiled again for each.
    assert "compiled 3 of 6 entry point(s)" in rebuilt.stderr, rebuilt.stderr
    assert "(3 unchanged)" in rebuilt.stderr
    lines = [ln for ln in rebuilt.stderr.splitlines() if ln.startswith(f"aotc: built {PACKAGE}")]
    assert len(lines) == 1 and "codegen" in lines[0] and "cc" in lines[0], rebuilt.stderr


def test_a_fresh_checkout_reuses_the_shared_object_cache(tmp_path: Path) -> None:
    """The build and aotc.jit share one object cache (``AOTC_CACHE_DIR``): the same
    project built again elsewhere, without its build directory, compiles nothing: no
    kernel, and no wrapper (neither Cython nor the C compiler runs)."""
    (tmp_path / "first").mkdir()
    root = build_project(tmp_path / "first", PACKAGE, KERNELS, target=None)
    copy = tmp_path / "second"
    copy.mkdir()
    shutil.copy(root / "pyproject.toml", copy)
    shutil.copytree(root / PACKAGE, copy / PACKAGE,
                    ignore=shutil.ignore_patterns("*.so", "*.pyx", "*.c", "__pycache__"))
    rebuilt = subprocess.run([sys.executable, "-m", "aotc", "build", "-v", str(copy)],
                             capture_output=True, text=True)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "compiled 0 of 3 entry point(s)" in rebuilt.stderr, rebuilt.stderr
    assert "cythonizing" not in rebuilt.stderr and "wrapper 0.00 s" in rebuilt.stderr
    assert not list((copy / ".aotc-build").rglob("*.c")), "the wrapper was cythonized"
    done = _probe(copy)
    assert done.stdout.split() == ["so", "6.0"] and not done.stderr, done.stderr


def test_an_edit_that_changes_no_kernel_still_rebuilds_in_place(tmp_path: Path) -> None:
    """A comment edited in the kernel source: the rebuild links nothing new, and the
    extension it leaves must still be the one that runs (not the source, as stale)."""
    root = build_project(tmp_path, PACKAGE, KERNELS, target=None)
    source = root / PACKAGE / "kernels.py"
    source.write_text(source.read_text() + "\n# a comment\n")
    rebuilt = subprocess.run([sys.executable, "-m", "aotc", "build", str(root)],
                             capture_output=True, text=True)
    assert rebuilt.returncode == 0, rebuilt.stderr
    done = _probe(root)
    assert done.stdout.split() == ["so", "6.0"] and not done.stderr, done.stderr


def test_damaged_stamps_in_the_build_folder_are_made_again(tmp_path: Path) -> None:
    """Every ``.key`` stamp beside the build folder's objects (kernels, wrapper, runtime)
    overwritten with bytes that are not text: the rebuild makes those objects again
    rather than failing on them, and the extension gives the edited kernel's result."""
    root = build_project(tmp_path, PACKAGE, KERNELS, target=None)
    stamps = [p for p in root.rglob("*.key") if p.with_suffix(".o").is_file()]
    assert len(stamps) >= 5  # three kernel objects, the wrapper's, the runtime's
    for stamp in stamps:
        stamp.write_bytes(b"\xff\xfe not a stamp")
    source = root / PACKAGE / "kernels.py"
    source.write_text(source.read_text().replace("np.sum(x)", "np.sum(x) * 10"))
    rebuilt = subprocess.run([sys.executable, "-m", "aotc", "build", str(root)],
                             capture_output=True, text=True)
    assert rebuilt.returncode == 0, rebuilt.stderr
    done = _probe(root)
    assert done.stdout.split() == ["so", "60.0"] and not done.stderr, done.stderr
