"""``@aotc.export``: mark a function for compilation without changing what it does.

The decorated function stays an ordinary Python function (so the module runs on plain
NumPy during development) that checks its arguments as the compiled kernel will
(:mod:`aotc.checks`); the build finds it through ``__aotc_export__`` and traces the
function underneath.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from .checks import checked
from .errors import Loc, SignatureError
from .types import Signature, parse_signature_string, signature_from_annotations

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class ExportInfo:
    """What the build needs to know about one exported function."""

    signatures: tuple[Signature, ...]
    loc: Loc
    #: Signature strings as written, kept so errors can quote them.
    sources: tuple[str, ...] = ()


def _decorator_loc(fn: Callable[..., Any]) -> Loc:
    try:
        lines, first = inspect.getsourcelines(fn)
        file = inspect.getsourcefile(fn) or "<unknown>"
    except (OSError, TypeError):
        code = fn.__code__
        return Loc(code.co_filename, code.co_firstlineno)
    for offset, text in enumerate(lines):
        stripped = text.lstrip()
        if stripped.startswith("@") and "export" in stripped:
            col = len(text) - len(stripped)
            return Loc(file, first + offset, col, len(text.rstrip()))
    return Loc(file, first)


def _mark(fn: F, strings: tuple[str, ...]) -> F:
    loc = _decorator_loc(fn)
    try:
        if strings:
            signatures = tuple(parse_signature_string(s) for s in strings)
        else:
            signatures = (signature_from_annotations(fn),)
    except SignatureError as err:
        raise err.with_context(loc=loc, kernel=fn.__name__) from None
    fn.__aotc_export__ = ExportInfo(signatures, loc, strings)  # type: ignore[attr-defined]
    return cast(F, checked(fn, signatures))


def export(*args: Any, name: str | None = None) -> Any:
    """Mark a kernel for ahead-of-time compilation.

    ``@export`` reads the signature from annotations; ``@export("f8[:](f8[:], f8)", …)``
    takes Numba-style strings, each an overload tried in order at call time.
    ``export(aotc.vmap(f), name="f_batch")`` exports a transformed kernel, with the
    signatures of ``f`` transformed, and binds it as ``f_batch`` in the calling module.
    """
    if len(args) == 1 and getattr(args[0], "__aotc_transform__", False):
        return args[0].exported_from_caller(name)
    if name is not None:
        raise SignatureError("export(name=...) names a transformed kernel (aotc.vmap, "
                             "aotc.grad…); a function is exported under its own name")
    if len(args) == 1 and callable(args[0]) and not isinstance(args[0], str):
        return _mark(args[0], ())
    for a in args:
        if not isinstance(a, str):
            raise SignatureError(f"@aotc.export takes signature strings, got {a!r}")
    return lambda fn: _mark(fn, tuple(args))
