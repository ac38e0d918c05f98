"""The build's pipeline in this process: ``aotc.jit`` and the staged form.

``aotc.jit(f)`` compiles an ``@aotc.export`` function on its first call with llvmlite's
in-process linker (no C compiler, no Cython) and calls it through the same C ABI the
extension uses, for the instruction-set level a default wheel would run on this CPU, so
notebooks and tests run the machine code a wheel ships. Object code is cached on disk by
the hash of its LLVM IR (:mod:`aotc.packaging.object_cache`: ``AOTC_CACHE_DIR``, else
``~/.cache/aotc``; verified on load, bounded), so a new process compiles nothing it
compiled before.

The staged form mirrors ``jax.jit(f).lower(x).compile()``, one object per stage::

    traced = aotc.trace(f, "f8[:](f8[:])")   # the IR as traced (print it)
    optimized = traced.optimize()            # after the passes (fusion groups...)
    lowered = optimized.lower()              # LLVM IR text: lowered.as_text()
    kernel = lowered.compile()               # a callable
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..export import export
from ..tracing.argtypes import signature_of
from ..types import Signature, parse_signature_string
from . import object_cache
from .checks import Matcher
from .weak_scalars import Traces, with_strong_twins

if TYPE_CHECKING:
    from ..ir import Program
    from ..tracing.kernel import TracedKernel


def best_target() -> str:
    """``AOTC_CPU`` when set, else the default wheel's best level this CPU has."""
    forced = os.environ.get("AOTC_CPU", "").strip()
    if forced:
        return forced
    import llvmlite.binding as llvm

    from ..codegen.targets import for_triple, host_arch
    from ..codegen.targets.spec import initialize_llvm

    initialize_llvm()
    host, isa = llvm.get_host_cpu_features(), for_triple(host_arch())
    usable = [t for t in isa.default_levels
              if all(host.get(f, False) for f in isa.features(t))]
    return usable[-1] if usable else isa.oldest


def _cached_object(entries: list[tuple[str, Program]], target: Any) -> bytes:
    """``compile_object`` through the one object cache (:mod:`.object_cache`)."""
    from ..codegen import build_llvm_module

    return object_cache.compiled(str(build_llvm_module(entries, target)), target)


def _target_spec(name: str | None, opt_level: int = 3, fast_math: bool = False) -> Any:
    from ..codegen import TargetSpec

    return TargetSpec.parse(name or best_target(), opt_level=opt_level, fast_math=fast_math)


def _result(outputs: list[Any], kernel: TracedKernel) -> Any:
    """The outputs as the extension returns them (scalars, tuples, None, optionals)."""
    values = [o[()] if o.ndim == 0 else o for o in outputs]
    kind: str = kernel.result_kind
    if kind.startswith("optional"):
        if not values[0]:
            return None
        values, kind = values[1:], {"optional": "single", "optional_tuple": "tuple"}[kind]
    if kind == "tree":
        return eval(re.sub(r"@(\d+)@", r"_v[\1]", kernel.result_tree), {"_v": values})  # noqa: S307 - our own expression
    return {"single": lambda: values[0], "tuple": lambda: tuple(values),
            "none": lambda: None}[kind]()


def _symbol(kernel: TracedKernel, k: int) -> str:
    digest = hashlib.sha256(str(kernel.program).encode()).hexdigest()[:16]
    name = re.sub(r"\W", "_", kernel.name)
    return f"aotc_jit_{name}_{k}_{digest}"


class _Linked:
    """Programs compiled and linked into this process, callable by overload index."""

    def __init__(self, kernels: Sequence[TracedKernel], programs: Sequence[Program],
                 target: Any) -> None:
        from ..codegen.core.jit import JitLibrary

        self.kernels = list(kernels)
        names = [_symbol(kernel, k) for k, kernel in enumerate(kernels)]
        self.library = JitLibrary(list(programs), target, names=names,
                                  make_object=_cached_object)
        for kernel, linked in zip(self.kernels, self.library.kernels, strict=True):
            linked.checks_arguments, linked.param_names = True, list(kernel.param_names)

    def call(self, k: int, values: Sequence[Any]) -> Any:
        return _result(self.library.kernels[k](*values), self.kernels[k])


class Jitted:
    """An exported function compiled on its first call (see :func:`jit`)."""

    def __init__(self, fn: Callable[..., Any], target: str | None, fuse: bool) -> None:
        info = getattr(fn, "__aotc_export__", None)
        if info is not None:
            self._signatures = info.signatures
        elif getattr(fn, "__aotc_transform__", False):  # aotc.grad(f), aotc.vmap(f)...
            self._signatures = tuple(fn.signatures())  # type: ignore[attr-defined]
        else:
            raise TypeError(f"aotc.jit({getattr(fn, '__name__', fn)!r}): mark the function "
                            "with @aotc.export (its signatures say what to compile)")
        self.__wrapped__ = getattr(fn, "__aotc_unchecked__", fn)
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self._target, self._fuse = target, fuse
        self._linked: _Linked | None = None
        self._traces: Traces[Traced] = Traces(lambda s: trace(self.__wrapped__, s))

    @functools.cached_property
    def _matcher(self) -> Matcher:
        """The signatures with their strong twins, as the build makes them
        (:mod:`aotc.packaging.weak_scalars`), traced on the first call."""
        twins = with_strong_twins(self._signatures, lambda s: str(self._traces(s).program))
        return Matcher(self.__wrapped__, twins)

    @property
    def target(self) -> str:
        """The instruction-set level the code is compiled for."""
        return self._target or best_target()

    def compile(self) -> Jitted:
        """Compile every overload now (the first call does it otherwise)."""
        if self._linked is None:
            stages = [self._traces(s).optimize(fuse=self._fuse)
                      for s in self._matcher.signatures]
            self._linked = _Linked([s.kernel for s in stages], [s.program for s in stages],
                                   _target_spec(self.target))
        return self

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        k, _, _, arrays = self._matcher.match(args, kwargs)
        linked = self.compile()._linked
        assert linked is not None
        return linked.call(k, arrays[:len(self._matcher.signatures[k].params)])


class Specializing:
    """``aotc.jit`` of a function without signatures: compiled once per distinct
    argument signature (:mod:`aotc.tracing.argtypes`), as Numba's ``@njit``; each compiled
    signature kept in memory, its object code in the disk cache."""

    def __init__(self, fn: Callable[..., Any], target: str | None, fuse: bool) -> None:
        self.__wrapped__ = fn
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self._target, self._fuse = target, fuse
        self._compiled: dict[str, Jitted] = {}

    @property
    def signatures(self) -> list[str]:
        """The signature strings compiled so far, in the order first called."""
        return list(self._compiled)

    def exports(self) -> str:
        """The ``@aotc.export`` line that ships what was compiled here: paste it above
        the function, list its module in ``[tool.aotc]``, and the wheel has it."""
        return f"@aotc.export({', '.join(map(repr, self.signatures))})"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        text = signature_of(self.__wrapped__, args, kwargs)
        jitted = self._compiled.get(text)
        if jitted is None:
            jitted = Jitted(export(text)(_fresh_copy(self.__wrapped__)), self._target,
                            self._fuse)
            self._compiled[text] = jitted
        return jitted(*args, **kwargs)


def _fresh_copy(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A copy of a plain function (export marks the function it is given: each
    signature gets a copy of its own, and the user's function stays unmarked)."""
    if not isinstance(fn, types.FunctionType):
        raise TypeError(f"aotc.jit({fn!r}): a Python function, or a kernel marked with "
                        "@aotc.export, is what it compiles")
    copy = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__,
                              fn.__closure__)
    copy.__kwdefaults__, copy.__doc__ = fn.__kwdefaults__, fn.__doc__
    copy.__module__, copy.__qualname__ = fn.__module__, fn.__qualname__
    copy.__dict__.update(fn.__dict__)
    return copy


def jit(fn: Callable[..., Any] | None = None, *, target: str | None = None,
        fuse: bool = True) -> Any:
    """Compile a function in this process on its first call.

    An ``@aotc.export`` function (or a transform of one: ``aotc.jit(aotc.grad(f))``) is
    compiled for its signatures; any other function for
    the types of each call (a new compile per new signature, as Numba's ``@njit``; see
    ``.signatures`` and ``.exports()``). ``target`` defaults to what a default wheel runs
    on this CPU (``AOTC_CPU`` forces one). Usable as ``aotc.jit(f)`` or ``@aotc.jit``.
    """
    def make(f: Callable[..., Any]) -> Jitted | Specializing:
        if getattr(f, "__aotc_export__", None) is None \
                and not getattr(f, "__aotc_transform__", False):
            return Specializing(f, target, fuse)
        return Jitted(f, target, fuse)
    return make if fn is None else make(fn)


# -- the staged form ---------------------------------------------------------------------

@dataclass(frozen=True)
class Traced:
    """A kernel traced for one signature: ``str()`` prints its IR."""

    kernel: TracedKernel

    @property
    def program(self) -> Program:
        return self.kernel.program

    def __str__(self) -> str:
        return str(self.program)

    def optimize(self, fuse: bool = True) -> Optimized:
        from ..passes import optimize

        return Optimized(self.kernel, optimize(self.program, fuse=fuse))


@dataclass(frozen=True)
class Optimized:
    """After constant folding, CSE, DCE and fusion: ``str()`` prints the IR."""

    kernel: TracedKernel
    program: Program

    def __str__(self) -> str:
        return str(self.program)

    def lower(self, target: str | None = None, *, opt_level: int = 3,
              fast_math: bool = False) -> Lowered:
        from ..codegen import build_llvm_module

        spec = _target_spec(target, opt_level, fast_math)
        name = _symbol(self.kernel, 0)
        return Lowered(self.kernel, self.program, spec,
                       str(build_llvm_module([(name, self.program)], spec)))


@dataclass(frozen=True)
class Lowered:
    """LLVM IR for one target, before LLVM's own optimization."""

    kernel: TracedKernel
    program: Program
    target: Any
    text: str

    def as_text(self, optimized: bool = False) -> str:
        """The LLVM IR; ``optimized=True`` after LLVM's ``-O`` pipeline."""
        if not optimized:
            return self.text
        from ..codegen.core.module import optimized_text

        return str(optimized_text(self.text, self.target))

    def compile(self) -> Compiled:
        return Compiled(self.kernel, _Linked([self.kernel], [self.program], self.target))


class Compiled:
    """A compiled kernel for one signature; calls check arguments as the extension."""

    def __init__(self, kernel: TracedKernel, linked: _Linked) -> None:
        self.kernel, self._linked = kernel, linked
        self._matcher = Matcher(_parameters(kernel), [kernel.signature])

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        _, _, _, arrays = self._matcher.match(args, kwargs)
        return self._linked.call(0, arrays[:len(self.kernel.signature.params)])


def _parameters(kernel: TracedKernel) -> Callable[..., Any]:
    """A function with the kernel's parameters, for the Matcher to bind calls against."""
    import inspect

    def params(*args: Any, **kwargs: Any) -> None: ...

    params.__name__ = kernel.name
    params.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD)
         for n in kernel.param_names])
    return params


def trace(fn: Callable[..., Any], signature: str | Signature | None = None) -> Traced:
    """Trace ``fn`` for one signature (a Numba-style string, a Signature, or, for an
    ``@aotc.export`` function, its first one)."""
    from ..tracing.kernel import trace_kernel

    if signature is None:
        info = getattr(fn, "__aotc_export__", None)
        if info is None:
            raise TypeError("aotc.trace(f): give a signature, or mark f with @aotc.export")
        signature = info.signatures[0]
    parsed = parse_signature_string(signature) if isinstance(signature, str) else signature
    return Traced(trace_kernel(fn, parsed, name=fn.__name__))
