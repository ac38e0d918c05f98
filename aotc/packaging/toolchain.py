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

zig also carries every architecture's C library, so the same driver cross-builds:
``platform = "linux-aarch64"`` compiles the wrappers and links the extensions for
AArch64 Linux (glibc 2.17 unless ``glibc`` says otherwise). LLVM has already generated
the kernels for that architecture. The
wrappers compile against the build interpreter's own headers: CPython's public headers
describe the same ABI on every 64-bit Linux (LP64, one struct layout); its ``pyconfig.h``
differs between x86-64 and AArch64 only in how the interpreter itself was built (x87
control-word macros, optional modules), which no extension reads. So a wheel is built for
the build interpreter's Python version, on the other platform.
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import sys
import sysconfig
from dataclasses import dataclass

from ..config import Config, platform_arch
from ..errors import BuildError


def host_arch() -> str:
    """This machine's architecture (``x86_64``, ``aarch64``), as Python names it: reading
    a project's metadata needs no code generator."""
    return platform_arch("")


@dataclass(frozen=True)
class Platform:
    """What the extensions run on: an architecture and the oldest glibc."""

    arch: str  #: ``x86_64``, ``aarch64``
    #: The oldest glibc they load on (``2.17``), linked through zig; empty: the build
    #: machine's own, with its own compiler (never so for another architecture).
    glibc: str

    @property
    def cross(self) -> bool:
        """Whether the extensions are for another architecture."""
        return self.arch != host_arch()


#: The glibc a cross build links for unless ``glibc`` says otherwise (manylinux2014).
CROSS_GLIBC = "2.17"


def platform(cfg: Config) -> Platform:
    """The platform of ``cfg``'s extensions (``platform`` and ``glibc``)."""
    arch = platform_arch(cfg.platform)
    return Platform(arch, cfg.glibc or (CROSS_GLIBC if arch != host_arch() else ""))


def c_compiler(cfg: Config) -> list[str]:
    """The C compiler (and linker) command: ``zig cc`` for another platform or a pinned
    glibc, else ``CC`` or the one Python was built with."""
    target = platform(cfg)
    if not target.glibc:
        return shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")
    if importlib.util.find_spec("ziglang") is None:
        setting = f'platform = "{cfg.platform}"' if cfg.platform else f'glibc = "{cfg.glibc}"'
        raise BuildError(f"{setting} links through zig, and the ziglang package is "
                         "not installed",
                         hint='pip install ziglang, or add "ziglang" to [build-system] '
                              "requires in pyproject.toml")
    return [sys.executable, "-m", "ziglang", "cc", "-target",
            f"{target.arch}-linux-gnu.{target.glibc}"]


#: The flags of Python's own compile command a cross build keeps: the build machine's
#: Python may carry flags for its own architecture only (``-fcf-protection``, ``-march``).
CROSS_CFLAGS = ("-fPIC", "-fwrapv", "-DNDEBUG", "-fno-strict-aliasing")


def wheel_platform(cfg: Config) -> str | None:
    """The wheel's platform tag (``manylinux_2_17_aarch64``), or None for setuptools'
    own (``linux_x86_64``)."""
    target = platform(cfg)
    return f"manylinux_{target.glibc.replace('.', '_')}_{target.arch}" if target.glibc else None


def extension_suffix(cfg: Config) -> str | None:
    """The file suffix of an extension for another architecture, as its CPython (the
    build's version) names it (``.cpython-311-aarch64-linux-gnu.so``); None for this
    machine's."""
    target = platform(cfg)
    if not target.cross:
        return None
    return f".cpython-{sys.version_info[0]}{sys.version_info[1]}-{target.arch}-linux-gnu.so"
