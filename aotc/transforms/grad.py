"""Reverse-mode gradients of kernels: ``grad``, ``value_and_grad`` and ``vjp``.

The kernel is traced once; :func:`gradient_program` emits its forward sweep and reverse
sweep (:mod:`.reverse`) as one new program, which the optimizer then fuses and
buffer-plans like any other kernel. Uncompiled, a gradient kernel evaluates that same
program with the NumPy reference interpreter, so both paths compute the same thing.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np

from ..interpret import eval_program
from ..ir import Atom, Check, DimSource, Lit, Program, Var, verify
from ..ops.index import KernelError, check_p
from ..ops.shape import refine_shape_p
from ..packaging.slow_paths import kernel_exception
from ..shapes import DimExpr, bound_symbols
from ..tracing.avals import AType
from ..tracing.kernel import TracedKernel
from ..types import ArrayType, Signature
from . import vjp_control  # noqa: F401  (fills the control-flow rules)
from .api import Transform, kernel_signatures
from .core import Emitter, TransformError, or_zeros
from .reverse import vjp_eqns
from .vjp_rules import is_float

Mode = Literal["grad", "value_and_grad", "vjp"]


def _cotangents(program: Program, first: int, sources: list[DimSource],
                checks: list[Check]) -> tuple[list[Var], list[tuple[str, DimExpr, str]]]:
    """One cotangent parameter per result (parameters ``first``, ...), each of its
    result's shape: sizes known before the kernel runs are checked with the arguments;
    those bound while it runs are returned, to be checked after the forward sweep."""
    cts, late = [], []
    for j, out in enumerate(program.outputs):
        shape = []
        for axis, dim in enumerate(out.type.shape):
            symbol = f"ct{j}.{axis}"
            sources.append(DimSource(symbol, first + j, axis))
            message = (f"cotangent {j} axis {axis} has size {{lhs}}, expected {{rhs}} "
                       "(the result's)")
            if bound_symbols(dim):
                shape.append(DimExpr.sym(symbol))
                late.append((symbol, dim, message))
            else:
                shape.append(dim)
                checks.append(Check("==", DimExpr.sym(symbol), dim, "ValueError", message))
        cts.append(Var(AType(out.type.dtype, tuple(shape))))
    return cts, late


def gradient_program(program: Program, names: Sequence[str], argnums: Sequence[int],
                     mode: Mode) -> Program:
    """``mode`` ``grad``: the gradients of the scalar result with respect to the
    arguments ``argnums``; ``value_and_grad``: the result first; ``vjp``: the program
    also takes one cotangent per result, after the arguments."""
    if program.writebacks:
        raise TransformError(f"{mode}: the kernel writes into its arguments",
                             kernel=program.name, hint="return the new values instead")
    for k in argnums:
        if not is_float(program.inputs[k].type):
            raise TransformError(f"{mode}: argument '{names[k]}' is {program.inputs[k].type}; "
                                 "gradients are taken with respect to float arguments",
                                 kernel=program.name)
    em = Emitter()
    inputs = [Var(v.type) for v in program.inputs]
    sources, checks = list(program.dim_sources), list(program.checks)
    if mode == "vjp":
        cts, late = _cotangents(program, len(inputs), sources, checks)

        def seeds() -> list[Atom | None]:
            """The cotangents, as the results' types once the forward sweep has bound
            the sizes known only while the kernel runs (``x[mask]``), checked then."""
            for symbol, dim, message in late:
                em.emit(check_p, op="==", lhs=DimExpr.sym(symbol), rhs=dim,
                        error="ValueError", message=message)
            return [ct if ct.type == out.type else
                    em.one(refine_shape_p, ct, shape=out.type.shape)
                    for ct, out in zip(cts, program.outputs, strict=True)]
    else:
        if len(program.outputs) != 1 or program.outputs[0].type.shape \
                or not is_float(program.outputs[0].type):
            got = ", ".join(str(a.type) for a in program.outputs) or "nothing"
            raise TransformError(f"{mode}: the kernel must return one float scalar, it "
                                 f"returns {got}", kernel=program.name,
                                 hint="reduce the result (np.sum) or use aotc.vjp")
        def seeds() -> list[Atom | None]:
            return [Lit(1.0, program.outputs[0].type.dtype)]

        cts = []
    outs, in_cts = vjp_eqns(program, inputs, seeds, em, argnums)
    grads = [or_zeros(em, in_cts[k], inputs[k].type) for k in argnums]
    results = [outs[0], *grads] if mode == "value_and_grad" else grads
    made = Program((*inputs, *cts), tuple(em.eqns), tuple(results), tuple(sources),
                   tuple(checks), program.name)
    verify(made)
    return made


def _argnums(argnums: int | Sequence[int], count: int) -> tuple[int, ...]:
    found = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not found or any(not -count <= k < count for k in found):
        raise TransformError(f"argnums {argnums} out of range for {count} arguments")
    return tuple(k % count for k in found)


def _with_cotangents(spec: inspect.Signature, fn: Callable[..., Any]) -> inspect.Signature:
    """A vjp's parameters: the kernel's, every one given (a cotangent follows them), then
    one cotangent per declared result (what calls bind to, through aotc.jit too)."""
    signatures = kernel_signatures(fn)
    count = len(signatures[0].results or ()) if signatures else 1
    names = ["cotangent"] if count == 1 else [f"cotangent{j}" for j in range(count)]
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    return spec.replace(parameters=[
        *(p.replace(default=inspect.Parameter.empty) for p in spec.parameters.values()),
        *(inspect.Parameter(n, kind) for n in names)])


class Gradient(Transform):
    """``aotc.grad`` / ``value_and_grad`` / ``vjp`` of a kernel."""

    def __init__(self, fn: Callable[..., Any], argnums: int | Sequence[int], mode: Mode) -> None:
        super().__init__(fn, mode)
        self.argnums, self.mode = argnums, mode
        self._programs: dict[int, tuple[Program, TracedKernel]] = {}
        if mode == "vjp":
            self.__signature__ = _with_cotangents(self.__signature__, fn)

    def transform_signature(self, signature: Signature) -> Signature:
        nums = _argnums(self.argnums, len(signature.params))
        grads = tuple(ArrayType(signature.params[k].dtype, signature.params[k].dims)
                      for k in nums)
        params = signature.params
        results = signature.results
        if self.mode == "vjp":
            if results is None:
                raise TransformError("vjp: the kernel must declare its result types (the "
                                     "cotangents' types)")
            params = params + tuple(ArrayType(r.dtype, r.dims) for r in results)
            return Signature(params, grads, returns_tuple=not isinstance(self.argnums, int))
        if self.mode == "value_and_grad":
            value = results if results is not None else (ArrayType(grads[0].dtype, ()),)
            return Signature(params, value + grads, returns_tuple=True)
        return Signature(params, grads, returns_tuple=not isinstance(self.argnums, int))

    def transform_program(self, traced: TracedKernel, signature: Signature
                          ) -> tuple[Program, str]:
        nums = _argnums(self.argnums, len(traced.program.inputs))
        program = gradient_program(traced.program, traced.param_names, nums, self.mode)
        single = isinstance(self.argnums, int)
        kind = "single" if single and self.mode != "value_and_grad" else "tuple"
        return program, kind

    def __aotc_trace__(self, signature: Signature, *, name: str) -> TracedKernel:
        traced = super().__aotc_trace__(signature, name=name)
        if self.mode == "value_and_grad" and not isinstance(self.argnums, int):
            grads = ", ".join(f"@{k}@" for k in range(1, len(traced.program.outputs)))
            tree = f"(@0@, ({grads},))" if len(traced.program.outputs) == 2 \
                else f"(@0@, ({grads}))"
            return TracedKernel(traced.name, traced.program, traced.param_names,
                                traced.signature, "tree", traced.defaults, tree)
        return traced

    # -- uncompiled: the gradient program on the reference interpreter ----------------
    def _program(self, args: Sequence[Any]) -> Program:
        signatures = self.signatures()
        index = _matching(signatures, args)
        if index not in self._programs:
            traced = self.__aotc_trace__(signatures[index], name=self.__name__)
            self._programs[index] = (traced.program, traced)
        return self._programs[index][0]

    def __call__(self, *args: Any) -> Any:
        # as the compiled call: byte-swapped arrays taken in native order, and a kernel's
        # error raised as the exception it names (not the interpreter's KernelError)
        args = tuple(np.require(a, a.dtype.newbyteorder("=")) if isinstance(a, np.ndarray)
                     and not a.dtype.isnative else a for a in args)
        try:
            values = eval_program(self._program(args), *args)
        except KernelError as err:
            raise kernel_exception(err.error, str(err)) from None
        outs = [o[()] if o.ndim == 0 else o for o in values]
        single = isinstance(self.argnums, int)
        if self.mode == "value_and_grad":
            return (outs[0], outs[1] if single else tuple(outs[1:]))
        return outs[0] if single else tuple(outs)


def _matching(signatures: Sequence[Signature], args: Sequence[Any]) -> int:
    """The first signature whose parameters take these arguments (dtype and rank)."""
    for k, sig in enumerate(signatures):
        if len(sig.params) == len(args) and all(
                np.ndim(a) == t.ndim and (np.asarray(a).dtype == t.dtype
                                          or (t.ndim == 0 and isinstance(a, (int, float))))
                for a, t in zip(args, sig.params, strict=True)):
            return k
    raise TypeError(f"no signature of the kernel takes {len(args)} argument(s) of these "
                    f"types; it has {', '.join(map(str, signatures))}")


def grad(fn: Callable[..., Any], argnums: int | Sequence[int] = 0) -> Gradient:
    """The gradient of a kernel returning a float scalar, as ``jax.grad``: a kernel with
    the same parameters returning d result / d argument ``argnums`` (a tuple of them
    for a tuple of argnums)."""
    return Gradient(fn, argnums, "grad")


def value_and_grad(fn: Callable[..., Any], argnums: int | Sequence[int] = 0) -> Gradient:
    """``(result, gradient)`` in one kernel, as ``jax.value_and_grad``."""
    return Gradient(fn, argnums, "value_and_grad")


def vjp(fn: Callable[..., Any], argnums: int | Sequence[int] = 0) -> Gradient:
    """The vector-Jacobian product as a kernel: it takes the arguments of ``fn`` and then
    one cotangent per result of ``fn`` (its declared result types), and returns the
    cotangents of arguments ``argnums``. (``jax.vjp`` returns a closure instead, which
    cannot be a compiled kernel.)"""
    return Gradient(fn, argnums, "vjp")


__all__ = ["Gradient", "grad", "gradient_program", "kernel_signatures", "value_and_grad",
           "vjp"]
