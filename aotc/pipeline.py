"""The pipeline every compiled kernel goes through: trace, optimize, lower, object code.

One object per stage, as ``jax.jit(f).lower(x).compile()``::

    traced = aotc.trace(f, "f8[:](f8[:])")   # the IR as traced (print it)
    optimized = traced.optimize()            # after the passes (fusion groups...)
    lowered = optimized.lower()              # LLVM IR text: lowered.as_text()
    kernel = lowered.compile()               # a callable

The build (:mod:`aotc.packaging.build`: every overload of every export, for every
target), ``aotc.jit`` (:mod:`aotc.packaging.staging`) and ``aotc.trace`` all run these
stages: :class:`Overloads` traces a function's signatures and their strong twins
(:mod:`aotc.packaging.weak_scalars`) once each, and object code comes from the one object
cache (:func:`aotc.packaging.object_cache.compiled`), so what one of them compiled the
others reuse.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .packaging import object_cache
from .packaging.alias_twins import SAME, TRANSPOSED, alias_twin, with_alias_twins
from .packaging.argument_order import order_conflicts
from .packaging.broadcast_twins import dispatching, twin_of, with_broadcast_twins
from .packaging.checks import Matcher
from .packaging.weak_scalars import Traces, with_strong_twins
from .types import Signature, parse_signature_string

if TYPE_CHECKING:
    from .ir import Program
    from .tracing.kernel import TracedKernel


def trace(fn: Callable[..., Any], signature: str | Signature | None = None, *,
          name: str | None = None) -> Traced:
    """Trace ``fn`` for one signature (a Numba-style string, a Signature, or, for an
    ``@aotc.export`` function, its first one), under ``name`` (``fn``'s by default)."""
    from .tracing.kernel import trace_kernel

    if signature is None:
        info = getattr(fn, "__aotc_export__", None)
        if info is None:
            raise TypeError("aotc.trace(f): give a signature, or mark f with @aotc.export")
        signature = info.signatures[0]
    parsed = parse_signature_string(signature) if isinstance(signature, str) else signature
    return Traced(trace_kernel(fn, parsed, name=name or fn.__name__))


class Overloads:
    """A function's signatures, each followed by its strong twins, and each of those by
    its broadcast twin where it has one, then the alias twins of them all (``twins``:
    not for a ufunc export, whose loops NumPy calls and broadcasts itself); each traced
    once."""

    def __init__(self, fn: Callable[..., Any], signatures: Sequence[Signature],
                 name: str | None = None, *, twins: bool = True) -> None:
        self._declared = tuple(signatures)
        self._traces: Traces[Traced] = Traces(lambda s: trace(fn, s, name=name))
        self._twins = twins

    @functools.cached_property
    def _compiled(self) -> tuple[list[Signature], frozenset[Signature]]:
        """Every signature compiled, and those of them that have a broadcast twin."""
        every = with_strong_twins(self._declared, lambda s: str(self._traces(s).program))
        if self._twins:
            every = with_broadcast_twins(every, lambda s: self._traces(s).kernel)
            every = with_alias_twins(every, lambda s: self._traces(s).program)
        return every, frozenset(every[k] for k in range(len(every)) if twin_of(every, k) >= 0)

    @property
    def signatures(self) -> list[Signature]:
        """What is compiled: the declared signatures and their strong, broadcast and
        alias twins (tracing each, to see which are needed; raises AotcError)."""
        return list(self._compiled[0])

    def __call__(self, signature: Signature) -> Traced:
        """The trace of ``signature``; of one with a broadcast twin, with the checks that
        dispatch to the twin."""
        traced = self._traces(signature)
        if signature in self._compiled[1]:
            return Traced(dispatching(traced.kernel))
        return traced


# -- the stages ----------------------------------------------------------------------------

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
        from .passes import optimize

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
        from .codegen import build_llvm_module

        spec = jit_target(target, opt_level, fast_math)
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
        from .codegen.core.module import optimized_text

        return str(optimized_text(self.text, self.target))

    def compile(self) -> Compiled:
        return Compiled(self.kernel, Linked([self.kernel], [self.program], self.target))


class Compiled:
    """A compiled kernel for one signature; calls check arguments as the extension."""

    def __init__(self, kernel: TracedKernel, linked: Linked) -> None:
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


# -- compiled in this process --------------------------------------------------------------

def best_target() -> str:
    """``AOTC_CPU`` when set, else the default wheel's best level this CPU has."""
    forced = os.environ.get("AOTC_CPU", "").strip()
    if forced:
        return forced
    import llvmlite.binding as llvm

    from .codegen.targets import for_triple, host_arch
    from .codegen.targets.spec import initialize_llvm

    initialize_llvm()
    host, isa = llvm.get_host_cpu_features(), for_triple(host_arch())
    usable = [t for t in isa.default_levels
              if all(host.get(f, False) for f in isa.features(t))]
    return usable[-1] if usable else isa.oldest


def _cached_object(entries: list[tuple[str, Program]], target: Any) -> bytes:
    """``compile_object`` through the one object cache (:mod:`aotc.packaging.object_cache`)."""
    from .codegen import build_llvm_module

    return object_cache.compiled(str(build_llvm_module(entries, target)), target)


def jit_target(name: str | None, opt_level: int = 3, fast_math: bool = False) -> Any:
    from .codegen import TargetSpec

    return TargetSpec.parse(name or best_target(), opt_level=opt_level, fast_math=fast_math)


def _result(outputs: list[Any], kernel: TracedKernel) -> Any:
    """The outputs as the extension returns them (scalars, tuples, None, optionals, and
    lists, sets and dicts grown at run time, read by the extension's own reader)."""
    from .packaging.slow_paths import runtime
    from .tracing.kernel import rebuilt

    box_value = runtime()["_box_value"] if "_box_value(" in kernel.result_tree else None
    return rebuilt(kernel, [o[()] if o.ndim == 0 else o for o in outputs], box_value)


def _symbol(kernel: TracedKernel, k: int) -> str:
    digest = hashlib.sha256(str(kernel.program).encode()).hexdigest()[:16]
    name = re.sub(r"\W", "_", kernel.name)
    return f"aotc_jit_{name}_{k}_{digest}"


class Linked:
    """Programs compiled and linked into this process, callable by overload index."""

    def __init__(self, kernels: Sequence[TracedKernel], programs: Sequence[Program],
                 target: Any) -> None:
        from .codegen.core.jit import JitLibrary

        self.kernels = list(kernels)
        names = [_symbol(kernel, k) for k, kernel in enumerate(kernels)]
        self.library = JitLibrary(list(programs), target, names=names,
                                  make_object=_cached_object)
        signatures = [kernel.signature for kernel in self.kernels]
        for k, (kernel, linked) in enumerate(zip(self.kernels, self.library.kernels,
                                                 strict=True)):
            linked.checks_arguments, linked.param_names = True, list(kernel.param_names)
            twin = twin_of(signatures, k)
            linked.twin = self.library.kernels[twin] if twin >= 0 else None
            linked.alias_twins = {
                (written, read, how): self.library.kernels[found]
                for written, read in order_conflicts(linked.program)
                for how in (SAME, TRANSPOSED)
                if (found := alias_twin(signatures, k, written, read, how)) >= 0}

    def call(self, k: int, values: Sequence[Any]) -> Any:
        return _result(self.library.kernels[k](*values), self.kernels[k])


