"""``@aotc.export``: mark a function for compilation without changing what it does.

The decorated function stays an ordinary Python function (so the module runs on plain
NumPy during development) that checks its arguments as the compiled kernel will
(:mod:`aotc.packaging.checks`); the build finds it through ``__aotc_export__`` and traces the
function underneath.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import numpy as np

from .errors import Loc, SignatureError
from .ops.ufunc_signature import CoreSignature, check_kernel_types, parse_core_signature
from .packaging.checks import checked
from .packaging.gufunc import Gufunc
from .types import Signature, parse_signature_string, signature_from_annotations

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class ExportInfo:
    """What the build needs to know about one exported function."""

    signatures: tuple[Signature, ...]
    loc: Loc
    #: Signature strings as written, kept so errors can quote them.
    sources: tuple[str, ...] = ()
    #: Core dims of a generalized (or, all ``()``, elementwise) ufunc export.
    ufunc: CoreSignature | None = None
    #: ``export(parallel=...)``: overrides ``[tool.aotc] parallel`` for this kernel.
    parallel: bool | None = None


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


def _mark(fn: F, strings: tuple[str, ...], ufunc: str | bool | None = None,
          parallel: bool | None = None) -> F:
    loc = _decorator_loc(fn)
    try:
        if strings:
            signatures = tuple(parse_signature_string(s) for s in strings)
        else:
            signatures = (signature_from_annotations(fn),)
        core = _core(ufunc, signatures)
    except SignatureError as err:
        raise err.with_context(loc=loc, kernel=fn.__name__) from None
    info = ExportInfo(signatures, loc, strings, core, parallel)
    fn.__aotc_export__ = info  # type: ignore[attr-defined]
    kernel = checked(fn, signatures)
    if core is None:
        return cast(F, kernel)
    outs = [tuple(np.dtype(r.dtype) for r in s.results or ()) for s in signatures]
    made = Gufunc(kernel, core, signatures, outs)
    made.__aotc_export__ = info  # type: ignore[attr-defined]
    return cast(F, made)


def _core(ufunc: str | bool | None, signatures: tuple[Signature, ...]) -> CoreSignature | None:
    """The core signature asked for (checked against every overload), or None."""
    if ufunc is None or ufunc is False:
        return None
    if ufunc is True:
        first = signatures[0]
        core = CoreSignature.elementwise(len(first.params), len(first.results or ()))
    else:
        try:
            core = parse_core_signature(ufunc)
        except ValueError as err:
            raise SignatureError(str(err)) from None
    for s in signatures:
        if s.results is None:
            raise SignatureError("a ufunc export needs its result types declared (its "
                                 "loops are typed): annotate the return, e.g. '-> f64'")
        why = check_kernel_types(core, s)
        if why is not None:
            what = "ufunc=True needs scalar parameters and results" if core.text is None \
                else f"gufunc signature {core.text!r} does not fit {s}"
            raise SignatureError(f"{what}: {why}")
    return core


def export(*args: Any, name: str | None = None, gufunc: str | None = None,
           ufunc: bool = False, parallel: bool | None = None) -> Any:
    """Mark a kernel for ahead-of-time compilation.

    ``@export`` reads the signature from annotations; ``@export("f8[:](f8[:], f8)", …)``
    takes Numba-style strings, each an overload tried in order at call time.
    ``export(aotc.vmap(f), name="f_batch")`` exports a transformed kernel, with the
    signatures of ``f`` transformed, and binds it as ``f_batch`` in the calling module.
    ``gufunc="(n),(n)->()"`` makes the export a NumPy generalized ufunc (each overload
    one typed loop; NumPy broadcasts over the other dims), ``ufunc=True`` a scalar
    kernel an elementwise ufunc: ``np.ufunc`` objects once built (:mod:`aotc.packaging.gufunc`).
    ``parallel=False`` (or ``True``) overrides ``[tool.aotc] parallel`` for this kernel.
    """
    if parallel is not None and not isinstance(parallel, bool):
        raise SignatureError(f"export(parallel=...) takes True or False, got {parallel!r}")
    if gufunc is not None and ufunc:
        raise SignatureError("export takes gufunc='(...)->(...)' or ufunc=True, not both")
    shape = gufunc if gufunc is not None else (True if ufunc else None)
    if gufunc is not None:
        _core(gufunc, ())  # a malformed signature is an error here, not at decoration
    if len(args) == 1 and getattr(args[0], "__aotc_transform__", False):
        if shape is not None:
            raise SignatureError("a transformed kernel cannot be exported as a ufunc yet; "
                                 "export the kernel it transforms with gufunc=...")
        return args[0].exported_from_caller(name)
    if name is not None:
        raise SignatureError("export(name=...) names a transformed kernel (aotc.vmap, "
                             "aotc.grad…); a function is exported under its own name")
    if len(args) == 1 and callable(args[0]) and not isinstance(args[0], str):
        return _mark(args[0], (), shape, parallel)
    for a in args:
        if not isinstance(a, str):
            raise SignatureError(f"@aotc.export takes signature strings, got {a!r}")
    return lambda fn: _mark(fn, tuple(args), shape, parallel)
