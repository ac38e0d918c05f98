"""The compiled wrapper, cached by everything that decides its bytes, and made aside.

Cython and the C compiler take most of a build whose kernels' objects are already in the
object cache (:mod:`aotc.packaging.object_cache`). The wrapper of a module whose kernels
did not change is the same C every time, in any checkout: a fresh clone, an isolated
``python -m build``, a second ``pip install -e .``. So its object is kept in the same
cache, verified on load as the kernels' objects are, under a key made of the generated
sources and the toolchain that compiles them: Cython's version, the C compiler's command
and version, the flags, and the Python and NumPy headers.

When neither the build's folder nor the cache has it, a process of its own runs Cython
and the C compiler on it (:func:`start`) while the build goes on (tracing and compiling
the kernels), and the link takes the object (:meth:`Job.result`).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.metadata
import os
import subprocess
import sys
import sysconfig
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import BuildError
from . import object_cache

#: What the environment may add to setuptools' compile command.
_FLAG_VARIABLES = ("CC", "CFLAGS", "CPPFLAGS", "CCSHARED", "OPT")


@functools.cache
def _compiler_version(command: tuple[str, ...]) -> str:
    try:
        done = subprocess.run([*command, "--version"], capture_output=True, text=True,
                              timeout=60, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"unknown: {exc}"
    return done.stdout + done.stderr


def key(sources: Sequence[Path], compiler: Sequence[str], flags: Sequence[str]) -> str:
    """The cache key of the wrapper object compiled from ``sources`` (the ``.pyx``, the
    header and the declarations it reads) with ``compiler`` and ``flags``."""
    digest = hashlib.sha256(b"aotc wrapper object v1\n")
    toolchain = [
        importlib.metadata.version("Cython"), np.__version__, np.get_include(),
        sys.version, sysconfig.get_paths()["include"], *compiler, *flags,
        _compiler_version(tuple(compiler)),
        *(f"{v}={os.environ.get(v, sysconfig.get_config_var(v))}" for v in _FLAG_VARIABLES),
    ]
    digest.update("\n".join(map(str, toolchain)).encode())
    for path in sources:
        digest.update(f"\n{path.name}\n".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


#: Run in the helper process: Cython on the ``.pyx`` (argv[2]) of module argv[1] (its
#: functions' ``__module__``), then the C compiler (argv[3:], which names the C file and
#: the object).
_MAKE = """\
import subprocess, sys
from Cython.Build import cythonize
from Cython.Compiler.Errors import CompileError
from distutils.extension import Extension
try:
    cythonize([Extension(sys.argv[1], [sys.argv[2]])], quiet=True, force=True,
              compiler_directives={"language_level": 3})
except CompileError as exc:
    sys.exit(f"Cython could not compile the generated {sys.argv[2]}: {exc}")
sys.exit(subprocess.run(sys.argv[3:]).returncode)
"""


@dataclass
class Job:
    """A wrapper's object at ``obj``: there already, or being made by ``process``."""

    obj: Path
    key: str
    process: subprocess.Popen[bytes] | None = None

    def result(self) -> Path:
        """The object, once made (and then cached under the key)."""
        if self.process is not None:
            _, err = self.process.communicate()
            if self.process.returncode != 0:
                raise BuildError(f"compiling the generated {self.obj.stem} wrapper failed "
                                 "(a bug in aotc, or a broken C toolchain):\n"
                                 + err.decode(errors="replace").strip(),
                                 hint="aotc needs a C compiler (gcc or clang); report the "
                                      "error with the generated .pyx if the toolchain works")
            self.process = None
            data = self.obj.read_bytes()
            object_cache.store(self.key, data)
            _stamp(self.obj).write_text(_stamped(self.key, data))
        return self.obj

    def cancel(self) -> None:
        """Stop making the object (the build failed elsewhere)."""
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None


def _stamp(obj: Path) -> Path:
    return obj.with_suffix(".key")


def _stamped(key: str, data: bytes) -> str:
    """What ``.key`` beside an object holds: its key and its bytes' digest."""
    return f"{key}\n{hashlib.sha256(data).hexdigest()}"


def start(module: str, pyx: Path, obj: Path, compile_command: Sequence[str],
          flags: Sequence[str], key_flags: Sequence[str], sources: Sequence[Path], *,
          force: bool = False) -> Job:
    """Start making the object ``obj`` of the wrapper ``pyx`` of extension module
    ``module`` unless it is there (made
    from the same inputs) or in the cache. ``compile_command`` is the C compiler with the
    include options, ``flags`` the rest of its command; the key is made of ``sources``
    (the ``.pyx`` and what it reads), the command and ``key_flags`` (the flags that
    decide the object's bytes)."""
    name = key(sources, compile_command, [module, *key_flags])
    if not force:
        with contextlib.suppress(OSError):
            if _stamp(obj).read_text() == _stamped(name, obj.read_bytes()):
                return Job(obj, name)  # made here before, and unchanged since
    obj.parent.mkdir(parents=True, exist_ok=True)
    data = None if force else object_cache.load(name)
    if data is not None:
        obj.write_bytes(data)
        _stamp(obj).write_text(_stamped(name, data))
        return Job(obj, name)
    _stamp(obj).unlink(missing_ok=True)
    command = [*compile_command, "-c", str(pyx.with_suffix(".c")), "-o", str(obj), *flags]
    process = subprocess.Popen([sys.executable, "-c", _MAKE, module, str(pyx), *command],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return Job(obj, name, process)
