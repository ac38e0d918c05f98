"""Kernels built the way users build them, for tests that need the real extension:
a throwaway project with ``[tool.aotc]``, ``python -m aotc build`` in place, then the
compiled module imported (and forgotten again afterwards)."""

from __future__ import annotations

import importlib
import importlib.util
import json
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator, Sequence
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


#: The example project the packaging tests build.
QUICKSTART = Path(__file__).resolve().parents[1] / "examples" / "quickstart"


def copy_quickstart(dest: Path) -> Path:
    """A clean copy of the quickstart example at ``dest`` (no build outputs)."""
    ignore = shutil.ignore_patterns("build", "dist", ".aotc-build", "*.egg-info", "*.so",
                                    "*.pyi", "__pycache__")
    shutil.copytree(QUICKSTART, dest, ignore=ignore)
    return dest


def run_cases(script: Path, names: list[str], path: Sequence[Path | str],
              interpreter: Sequence[str] = (sys.executable,), timeout: float = 240,
              env: dict[str, str] | None = None) -> dict[str, dict]:
    """Results of the named cases of ``script`` (``hostile_cases.py``,
    ``catalog_cases.py``: a JSON line per case, ``start`` first), run by ``interpreter``
    (a Python, or qemu running one) with ``path`` as its PYTHONPATH and ``env`` added to
    a bare environment, in child processes.
    A case whose child died gets status ``crash`` with the child's exit status (or that it
    hung) and output, and the rest run in a fresh child."""
    results: dict[str, dict] = {}
    todo = list(names)
    while todo:
        try:
            done = subprocess.run(
                [*interpreter, str(script), *todo], capture_output=True, text=True,
                timeout=timeout,
                env={"PYTHONPATH": ":".join(map(str, path)), "PATH": "/usr/bin:/bin",
                     **(env or {})})
            stdout, stderr, status = done.stdout, done.stderr, f"exit status {done.returncode}"
        except subprocess.TimeoutExpired as hung:  # the case that was running hangs
            stdout, stderr = (_text(hung.stdout), _text(hung.stderr))
            status = f"killed after {timeout} s"
        started = None
        for line in stdout.splitlines():
            if not line.startswith("{"):
                continue
            record = json.loads(line)
            if record["status"] == "start":
                started = record["case"]
            else:
                results[record["case"]] = record
                started = None
        remaining = [n for n in todo if n not in results]
        crashed = started or (remaining[0] if remaining else None)
        if crashed is not None:
            results[crashed] = {"case": crashed, "status": "crash",
                                "detail": f"{status}\n{stdout}\n{stderr}"}
        todo = [n for n in todo if n not in results]
    return results


def _text(output: bytes | str | None) -> str:
    return output.decode(errors="replace") if isinstance(output, bytes) else output or ""


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
