"""The compiled wrapper, cached by everything that decides its bytes.

Cython and the C compiler take most of a build whose kernels' objects are already in the
object cache (:mod:`aotc.packaging.object_cache`). The wrapper of a module whose kernels
did not change is the same C every time, in any checkout: a fresh clone, an isolated
``python -m build``, a second ``pip install -e .``. So its object is kept in the same
cache, verified on load as the kernels' objects are, under a key made of the generated
sources and the toolchain that compiles them: Cython's version, the C compiler's command
and version, the flags, and the Python and NumPy headers.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import os
import subprocess
import sys
import sysconfig
from collections.abc import Sequence
from pathlib import Path

import numpy as np

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
