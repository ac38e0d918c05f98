"""The generated modules' slow paths (``templates/runtime.py``) run in this process, so
that ``aotc.jit`` and the uncompiled transforms raise exactly what a wheel's call raises,
and resolve NumPy's loops as a wheel's import does. The templates' folder is found here
too: ``aotc/templates`` in an installed wheel, ``templates/`` in a source checkout."""

from __future__ import annotations

import builtins
import functools
from pathlib import Path
from typing import Any

from ..types import SHORT_NAMES


def template_dir() -> Path:
    """``aotc/templates`` in an installed wheel, ``templates/`` in a source checkout."""
    package = Path(__file__).resolve().parents[1]
    installed = package / "templates"
    return installed if installed.is_dir() else package.parent / "templates"


def short_names() -> dict[str, str]:
    """The runtime's ``_SHORT_NAMES``: ``f64`` for the dtype string ``'<f8'``."""
    return {dt.str: name for dt, name in SHORT_NAMES.items()}


@functools.cache
def runtime() -> dict[str, Any]:
    """``templates/runtime.py``'s functions, run once in a namespace of their own."""
    path = template_dir() / "runtime.py"
    namespace: dict[str, Any] = {"__name__": "aotc_jit_runtime",
                                 "_SHORT_NAMES": short_names()}
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), namespace)
    return namespace


def kernel_exception(name: str, message: str) -> Exception:
    """What a compiled call raises for a kernel's error ``name(message)``: that builtin
    exception, or the NumPy error the message names (``"LinAlgError: ..."``)."""
    exception: Exception = runtime()["_exception"](getattr(builtins, name), message)
    return exception
