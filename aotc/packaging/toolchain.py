"""The C toolchain a build links with, and the platform tag its wheel gets.

Why: an extension linked on a new Linux references the glibc symbol versions of the build
machine (``pthread_create@GLIBC_2.34`` on any glibc from 2.34), so its wheel does not load
on RHEL 8, Ubuntu 20.04 or Amazon Linux 2, and ``auditwheel`` tags it
``manylinux_2_34``. ``[tool.aotc] glibc = "2.17"`` links through ``zig cc`` instead
(the ``ziglang`` package on PyPI, as ``maturin --zig`` does): zig carries the headers
and symbol-version stubs of every glibc, so the extension references only what glibc
2.17 had, and the wheel is tagged ``manylinux_2_17_<arch>`` (manylinux2014) directly,
ready to upload without ``auditwheel repair`` (aotc modules need nothing but libc, libm
and NumPy). Without the setting, the host's compiler (``CC``) and glibc are used, as
setuptools does.
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import sys
import sysconfig

from ..errors import BuildError


def host_arch() -> str:
    """This machine's architecture (``x86_64``), from LLVM, imported only when asked:
    reading a project's metadata needs no code generator."""
    from ..codegen import targets

    return targets.host_arch()


def c_compiler(glibc: str) -> list[str]:
    """The C compiler (and linker) command: ``zig cc`` for ``glibc`` when given, else
    ``CC`` or the one Python was built with."""
    if not glibc:
        return shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")
    if importlib.util.find_spec("ziglang") is None:
        raise BuildError(f'glibc = "{glibc}" links through zig, and the ziglang package is '
                         "not installed",
                         hint='pip install ziglang, or add "ziglang" to [build-system] '
                              "requires in pyproject.toml")
    return [sys.executable, "-m", "ziglang", "cc", "-target",
            f"{host_arch()}-linux-gnu.{glibc}"]


def wheel_platform(glibc: str) -> str | None:
    """The wheel's platform tag for ``glibc`` (``manylinux_2_17_x86_64``), or None for
    setuptools' own (``linux_x86_64``)."""
    return f"manylinux_{glibc.replace('.', '_')}_{host_arch()}" if glibc else None
