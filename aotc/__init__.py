"""aotc: ahead-of-time compilation of NumPy kernels into plain extension modules.

Mark kernels with :func:`export`; list their module under ``[tool.aotc]`` in
``pyproject.toml``; build with ``python -m build``. Undecorated by a build, the same
module runs on NumPy as ordinary Python.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .export import ExportInfo, export
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

if TYPE_CHECKING:
    from . import lax
    from .packaging.staging import jit
    from .pipeline import trace
    from .transforms.api import vmap
    from .transforms.grad import grad, value_and_grad, vjp

__version__ = "0.1.0"

#: Loaded when first used, each from its module: an uncompiled kernel module imports
#: aotc for ``export`` and the dtypes, and ``python -m aotc`` for its command line.
_LAZY = {"jit": ("packaging.staging", "jit"), "trace": ("pipeline", "trace"),
         "lax": ("lax", None), "grad": ("transforms.grad", "grad"),
         "value_and_grad": ("transforms.grad", "value_and_grad"),
         "vjp": ("transforms.grad", "vjp"), "vmap": ("transforms.api", "vmap")}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'aotc' has no attribute {name!r}")
    import importlib

    module, attribute = _LAZY[name]
    loaded = importlib.import_module(f"{__name__}.{module}")
    value = loaded if attribute is None else getattr(loaded, attribute)
    globals()[name] = value
    return value

__all__ = [
    "ArrayType", "ExportInfo", "Signature", "export", "grad", "lax",
    "value_and_grad", "vjp", "vmap",
    "bool_", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64",
    "f32", "f64", "c64", "c128", "jit", "trace",
]
