"""Library functions: big functions many kernels call (the GEMM, its micro-kernels and
packing, the sorts), compiled once per build and target instead of once per kernel.

A build lowers each kernel to an LLVM module of its own (its object is cached by its
program), so a function every matrix product calls was optimized and compiled again in
every kernel that multiplies: about 3 s of LLVM per kernel and target for the GEMM,
most of a module's build. A kernel module lowered with a :class:`Library`
(:func:`~aotc.codegen.build_llvm_module`) only declares what a maker marked
:func:`library_function` makes; the function is defined in a module of its own
(:meth:`Library.text`), hidden, under a name that also names the target
(:data:`PREFIX`, the maker's name, the target's digest). The build compiles each such
module once, caches its object, and links it beside its target's kernels
(:mod:`aotc.packaging.objects`).

A maker's name decides its code: the makers already define a name once per module and
reuse it. So a library object's cache key is its symbol (with LLVM's version and aotc's
own code), and a kernel's object names what it needs (:func:`needed_symbols`).

A module lowered without a library (``aotc.jit``, ``python -m aotc inspect``) defines
the functions itself, as before: internal, where LLVM may inline them.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable
from typing import Any, TypeVar

from llvmlite import ir

from .builder import existing

#: Every library symbol starts with it (what :func:`needed_symbols` looks for).
PREFIX = "aotc.lib."
_SYMBOL = re.compile(rb"aotc\.lib\.[A-Za-z0-9_.]+")
#: The attribute of a kernel module that holds its :class:`Library`.
_ATTRIBUTE = "aotc_library"

Maker = TypeVar("Maker", bound=Callable[..., ir.Function])


class Library:
    """The library functions of one target: each maker's function (for its arguments) in
    a module of its own, made on first request."""

    def __init__(self, spec: Any) -> None:
        self.spec = spec
        self._digest = hashlib.sha256(repr(spec).encode()).hexdigest()[:12]
        self._made: dict[tuple[Any, ...], ir.Function] = {}
        self._modules: dict[str, ir.Module] = {}

    def attach(self, module: ir.Module) -> None:
        """Lower ``module`` (a kernel module for this target) against the library."""
        setattr(module, _ATTRIBUTE, self)

    def function(self, module: ir.Module, maker: Callable[..., ir.Function],
                 args: tuple[Any, ...], kwargs: dict[str, Any]) -> ir.Function:
        """The library's definition of ``maker(…, *args, **kwargs)``, made in a module
        like ``module`` (its triple and data layout) the first time."""
        key = (maker, args, tuple(sorted(kwargs.items())))
        fn = self._made.get(key)
        if fn is None:
            home = ir.Module(name="aotc.lib")
            home.triple, home.data_layout = module.triple, module.data_layout
            self.attach(home)  # the library functions it calls are declared in turn
            fn = maker(home, *args, **kwargs)
            fn.name = f"{PREFIX}{fn.name.removeprefix('aotc.')}.{self._digest}"
            fn.linkage = "hidden"  # external, and not exported from the extension
            self._modules[fn.name] = home
            self._made[key] = fn
        return fn

    def symbols(self) -> list[str]:
        """The library functions made so far."""
        return sorted(self._modules)

    def text(self, symbol: str) -> str | None:
        """The LLVM IR of the module defining ``symbol``; None when not made here."""
        home = self._modules.get(symbol)
        return None if home is None else str(home)


def library_function(maker: Maker) -> Maker:
    """Mark ``maker(module, *args) -> ir.Function`` (which defines its function in
    ``module`` once, by a name its arguments decide) as making a library function."""
    @functools.wraps(maker)
    def made(module: ir.Module, *args: Any, **kwargs: Any) -> ir.Function:
        library = getattr(module, _ATTRIBUTE, None)
        if library is None:
            return maker(module, *args, **kwargs)
        defined = library.function(module, maker, args, kwargs)
        found = existing(module, defined.name)
        if found is not None:
            return found
        declared = ir.Function(module, defined.function_type, defined.name)
        declared.linkage = "hidden"
        return declared
    return made  # type: ignore[return-value]


def needed_symbols(code: bytes | str) -> set[str]:
    """The library symbols an object (or a module's IR text) refers to."""
    data = code.encode() if isinstance(code, str) else code
    return {m.decode() for m in _SYMBOL.findall(data)}
