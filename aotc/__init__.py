"""aotc: ahead-of-time compilation of NumPy kernels into plain extension modules.

Mark kernels with :func:`export`; list their module under ``[tool.aotc]`` in
``pyproject.toml``; build with ``python -m build``. Undecorated by a build, the same
module runs on NumPy as ordinary Python.
"""

from __future__ import annotations

from typing import Any

from . import lax
from .export import ExportInfo, export
from .transforms import grad, value_and_grad, vjp, vmap
from .types import (
    ArrayType,
    Signature,
    bool_,
    c64,
    c128,
    f32,
    f64,
    i8,
    i16,
    i32,
    i64,
    u8,
    u16,
    u32,
    u64,
)

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """``aotc.jit`` and ``aotc.trace`` load the compiler only when first used: the
    uncompiled kernel modules import aotc for ``export`` alone."""
    if name == "jit":
        from .packaging import staging

        return staging.jit
    if name == "trace":
        from . import pipeline

        return pipeline.trace
    raise AttributeError(f"module 'aotc' has no attribute {name!r}")

__all__ = [
    "ArrayType", "ExportInfo", "Signature", "export", "grad", "lax",
    "value_and_grad", "vjp", "vmap",
    "bool_", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64",
    "f32", "f64", "c64", "c128", "jit", "trace",
]
