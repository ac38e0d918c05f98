"""The compiled wrapper, cached by everything that decides its bytes, and made aside.

Cython and the C compiler take most of a build whose kernels' objects are already in the
object cache (:mod:`aotc.packaging.object_cache`). The wrapper of a module whose kernels
did not change is the same C every time, in any checkout: a fresh clone, an isolated
``python -m build``, a second ``pip install -e .``. So its object is kept in the same
cache, verified on load as the kernels' objects are, under a key made of the generated
sources and the toolchain that compiles them: Cython's version, the C compiler's command
and version, the flags, and the Python and NumPy headers.

When neither the build's folder nor the cache has it, a helper process (:class:`Worker`,
one per build) runs Cython and the C compiler on it (:func:`start`) while the build
goes on (tracing and compiling the kernels), and the link takes the object
(:meth:`Job.result`).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.metadata
import json
import os
import subprocess
import sys
import sysconfig
from collections.abc import Callable, Sequence
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


#: The helper process: it readies Cython (imports, and the lexer it builds at its first
#: parse: most of a run's time) before the first wrapper arrives, then, for each line of
#: stdin (``[module, pyx, compile command]``), runs Cython on the ``.pyx`` (the module's
#: name is its functions' ``__module__``) and starts the C compiler on the C it wrote.
#: Once stdin closes it prints each wrapper's number and exit status.
_WORKER = """\
import json, subprocess, sys
from Cython.Build import cythonize
from Cython.Compiler import Pipeline, ParseTreeTransforms  # (imported now: ready sooner)
from Cython.Compiler.Errors import CompileError
from Cython.Compiler.TreeFragment import parse_from_strings
from distutils.extension import Extension
parse_from_strings("ready", "x = 1\\n")
running = []
for n, line in enumerate(sys.stdin):
    module, pyx, command = json.loads(line)
    try:
        cythonize([Extension(module, [pyx])], quiet=True, force=True,
                  compiler_directives={"language_level": 3})
    except CompileError as exc:
        print(f"Cython could not compile the generated {pyx}: {exc}", file=sys.stderr)
        print("aotc-wrapper", n, 1, flush=True)
        continue
    running.append((n, subprocess.Popen(command, stdout=subprocess.DEVNULL)))
for n, process in running:
    print("aotc-wrapper", n, process.wait(), flush=True)
"""


class Worker:
    """The helper process that makes a build's missing wrapper objects (:data:`_WORKER`),
    started before it is needed so that it is ready when the first wrapper is."""

    def __init__(self) -> None:
        self._process = subprocess.Popen([sys.executable, "-c", _WORKER],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE)
        self._submitted = 0
        self._outcome: tuple[dict[int, int], str] | None = None

    def submit(self, module: str, pyx: Path, command: Sequence[str]) -> int:
        """Queue a wrapper; returns its number, for :meth:`succeeded`."""
        assert self._process.stdin is not None and self._outcome is None
        with contextlib.suppress(OSError):  # (a worker that died says why at the end)
            self._process.stdin.write((json.dumps([module, str(pyx), list(command)])
                                       + "\n").encode())
            self._process.stdin.flush()
        self._submitted += 1
        return self._submitted - 1

    def succeeded(self, number: int) -> tuple[bool, str]:
        """Whether wrapper ``number`` compiled, and the worker's messages; waits for every
        wrapper queued (no more can be queued after)."""
        if self._outcome is None:
            out, err = self._process.communicate()
            codes = {int(n): int(rc) for tag, n, rc in
                     (line.split() for line in out.decode().splitlines()
                      if line.startswith("aotc-wrapper "))}
            self._outcome = codes, err.decode(errors="replace").strip()
        codes, messages = self._outcome
        return codes.get(number) == 0, messages

    def close(self) -> None:
        """Stop the worker unless its wrappers were collected: nothing was queued (every
        object was there), or the build failed."""
        if self._outcome is None:
            self._process.kill()
            self._process.communicate()
            self._outcome = {}, "stopped"


@dataclass
class Job:
    """A wrapper's object at ``obj``: there already, or number ``queued`` of ``worker``."""

    obj: Path
    key: str
    worker: Worker | None = None
    queued: int = -1

    @property
    def pending(self) -> bool:
        return self.worker is not None

    def result(self) -> Path:
        """The object, once made (and then cached under the key)."""
        if self.worker is not None:
            ok, messages = self.worker.succeeded(self.queued)
            if not ok:
                raise BuildError(f"compiling the generated {self.obj.stem} wrapper failed "
                                 "(a bug in aotc, or a broken C toolchain):\n" + messages,
                                 hint="aotc needs a C compiler (gcc or clang); report the "
                                      "error with the generated .pyx if the toolchain works")
            self.worker = None
            data = self.obj.read_bytes()
            object_cache.store(self.key, data)
            object_cache.stamp(self.obj, self.key, data)
        return self.obj


def made(obj: Path) -> bool:
    """Whether the build made ``obj`` before (not whether it is current)."""
    return object_cache.was_placed(obj)


def start(module: str, pyx: Path, obj: Path, compile_command: Sequence[str],
          flags: Sequence[str], key_flags: Sequence[str], sources: Sequence[Path],
          worker: Callable[[], Worker], *, force: bool = False) -> Job:
    """The object ``obj`` of the wrapper ``pyx`` of extension module ``module``: there
    already (made from the same inputs), from the cache, or queued on ``worker()``.
    ``compile_command`` is the C compiler with the include options, ``flags`` the rest of
    its command; the key is made of ``sources`` (the ``.pyx`` and what it reads), the
    command and ``key_flags`` (the flags that decide the object's bytes)."""
    name = key(sources, compile_command, [module, *key_flags])
    if not force and object_cache.placed(obj, name):
        return Job(obj, name)  # made here before, and unchanged since
    obj.parent.mkdir(parents=True, exist_ok=True)
    data = None if force else object_cache.load(name)
    if data is not None:
        object_cache.place(obj, name, data)
        return Job(obj, name)
    object_cache.unplace(obj)
    command = [*compile_command, "-c", str(pyx.with_suffix(".c")), "-o", str(obj), *flags]
    helper = worker()
    return Job(obj, name, helper, helper.submit(module, pyx, command))
