"""Kernels built the way users build them, for tests that need the real extension:
a throwaway project with ``[tool.aotc]``, ``python -m aotc build`` in place, then the
compiled module imported (and forgotten again afterwards)."""

from __future__ import annotations

import importlib
import importlib.util
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType


def build_project(root: Path, package: str, kernels: str, extra_config: str = "",
                  target: str | None = "native") -> Path:
    """Write ``package/kernels.py`` holding ``kernels`` under ``root`` and build it.

    For one target, this CPU's, unless told otherwise: a test of what kernels compute or
    how they are called runs one object anyway, and the default build compiles every
    level (three times the LLVM time). ``target=None`` keeps the default levels, for
    the tests of choosing among them (test_targets, test_dev_loop)."""
    if target is not None:
        extra_config = f'target = "{target}"\n' + extra_config
    (root / package).mkdir()
    (root / package / "__init__.py").write_text("")
    (root / package / "kernels.py").write_text(kernels.lstrip())
    (root / "pyproject.toml").write_text(textwrap.dedent(f"""
        [project]
        name = "{package}"
        version = "0.1"
        [tool.aotc]
        modules = ["{package}.kernels"]
    """) + extra_config)
    done = subprocess.run([sys.executable, "-m", "aotc", "build", str(root)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return root


def source_module(root: Path, package: str) -> ModuleType:
    """``package/kernels.py`` of a built project run as Python (the uncompiled module),
    under a name of its own so the extension can be imported beside it."""
    spec = importlib.util.spec_from_file_location(f"{package}_source",
                                                  root / package / "kernels.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@contextmanager
def imported(root: Path, package: str) -> Iterator[ModuleType]:
    """``package.kernels`` from the built project: the extension, not the source."""
    sys.path.insert(0, str(root))
    try:
        module = importlib.import_module(f"{package}.kernels")
        assert module.__file__ is not None and module.__file__.endswith(".so"), module.__file__
        yield module
    finally:
        sys.path.remove(str(root))
        for name in [n for n in sys.modules if n.split(".")[0] == package]:
            del sys.modules[name]


def run_c_caller(build_dir: Path, prefix: str, source: str, tmp_path: Path) -> list[str]:
    """``source`` (C calling ``P_shapes`` and ``P``) compiled against the object and
    header in ``build_dir`` for the overload with symbol ``prefix``, run: its words."""
    (tmp_path / "main.c").write_text(source.replace("P_shapes", f"{prefix}_shapes")
                                     .replace("P(", f"{prefix}("))
    cc = shutil.which("gcc") or shutil.which("cc")
    assert cc is not None, "a C compiler is needed"
    subprocess.run([cc, "-std=c11", "-Wall", "-Werror", f"-I{build_dir}",
                    str(tmp_path / "main.c"), str(build_dir / "_aotc_kernels.o"), "-lm", "-o",
                    str(tmp_path / "main")], check=True)
    done = subprocess.run([str(tmp_path / "main")], capture_output=True, text=True, check=True)
    return done.stdout.split()
