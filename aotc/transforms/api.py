"""Transformed kernels as Python objects: callable on NumPy, exportable, traceable.

A :class:`Transform` wraps a kernel (or another transform) and is three things at once:

- a Python callable that runs on NumPy without a build (vmap loops over the batch and
  stacks; grad evaluates the transformed IR with the reference interpreter);
- a source of signatures: the wrapped kernel's, changed as the transform changes types
  (vmap adds a named batch dimension);
- a tracer hook, ``__aotc_trace__(signature, name)``: :func:`aotc.tracing.kernel.trace_kernel`
  traces the wrapped kernel with *its* signature and the transform rewrites the program.

``aotc.export(t, name="k")`` marks one for the build and binds it as ``k`` in the calling
module, so the module reads the same compiled or not.
"""

from __future__ import annotations

import copy
import inspect
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..errors import Loc
from ..export import ExportInfo
from ..ir import Program
from ..shapes import bound_symbols
from ..tracing.kernel import TracedKernel, trace_kernel
from ..types import ArrayType, Signature, signature_from_annotations
from .core import NoBatchingRule, TransformError
from .lanes import lane_loop
from .vmap import vmap_program

Axes = int | None | Sequence[int | None]


def kernel_signatures(fn: Any) -> tuple[Signature, ...]:
    """The signatures a kernel (exported, transformed or only annotated) is traced with."""
    if isinstance(fn, Transform):
        return fn.signatures()
    info = getattr(fn, "__aotc_export__", None)
    return info.signatures if info is not None else (signature_from_annotations(fn),)


class Transform:
    """Base of transformed kernels; subclasses say how signatures and programs change."""

    __aotc_transform__ = True
    __aotc_export__: ExportInfo | None = None

    def __init__(self, fn: Callable[..., Any], kind: str) -> None:
        self.fn = fn
        inner = getattr(fn, "__name__", "kernel")
        self.__name__ = self.__qualname__ = f"{kind}_{inner}"
        self.__module__ = getattr(fn, "__module__", "__main__")
        self.__doc__ = f"{kind} of {inner}." + (f"\n\n{fn.__doc__}" if fn.__doc__ else "")
        # The wrapped kernel's parameters (names and defaults, not its types, which the
        # transform changes): what calls bind to, compiled by aotc.jit or not.
        spec = inspect.signature(fn)
        self.__signature__ = spec.replace(
            parameters=[p.replace(annotation=inspect.Parameter.empty)
                        for p in spec.parameters.values()],
            return_annotation=inspect.Signature.empty)

    # -- what subclasses define ------------------------------------------------------
    def transform_signature(self, signature: Signature) -> Signature:
        raise NotImplementedError

    def transform_program(self, traced: TracedKernel, signature: Signature
                          ) -> tuple[Program, str]:
        """The transformed program and its result kind (``"single"``, ``"tuple"``…)."""
        raise NotImplementedError

    def __call__(self, *args: Any) -> Any:
        raise NotImplementedError

    # -- shared ----------------------------------------------------------------------
    def signatures(self) -> tuple[Signature, ...]:
        return tuple(self.transform_signature(s) for s in kernel_signatures(self.fn))

    def __aotc_trace__(self, signature: Signature, *, name: str) -> TracedKernel:
        """Trace the wrapped kernel with the signature this one came from, transform it."""
        mine = self.signatures()
        if signature not in mine:
            raise TransformError(f"{self.__name__}: no signature {signature}", kernel=name)
        inner = kernel_signatures(self.fn)[mine.index(signature)]
        traced = trace_kernel(self.fn, inner, name=name)
        info = self.__aotc_export__
        try:
            program, kind = self.transform_program(traced, signature)
        except TransformError as err:
            raise err.with_context(kernel=name, loc=info.loc if info else None) from None
        return TracedKernel(name, program.replace(name=name), traced.param_names, signature,
                            kind, traced.defaults, traced.result_tree)  # type: ignore[arg-type]

    def exported_from_caller(self, name: str | None) -> Transform:
        """``aotc.export(t, name=...)``: a marked copy, bound as ``name`` in the module
        that called ``export`` (so the module has that attribute compiled or not)."""
        frame = sys._getframe(2)  # this method <- aotc.export <- the kernel module
        module = frame.f_globals.get("__name__", "__main__")
        marked = self.exported(name, Loc(frame.f_code.co_filename, frame.f_lineno), module)
        if name is not None:
            frame.f_globals[name] = marked
        return marked

    def exported(self, name: str | None, loc: Loc, module: str) -> Transform:
        """A copy marked for the build as ``name`` in ``module``."""
        marked = copy.copy(self)
        if name is not None:
            marked.__name__ = marked.__qualname__ = name
        marked.__module__ = module
        marked.__aotc_export__ = ExportInfo(self.signatures(), loc)
        return marked


# -- vmap --------------------------------------------------------------------------------

def _lane_sized(traced: TracedKernel) -> bool:
    """Whether a result's size is known only while the kernel runs (``x[x > 0]``): each
    lane would have its own, which no stacked array holds."""
    return any(bound_symbols(d) for out in traced.program.outputs for d in out.type.shape)


def _per_item(axes: Axes, count: int, what: str) -> tuple[int | None, ...]:
    if axes is None or isinstance(axes, int):
        return (axes,) * count
    axes = tuple(axes)
    if len(axes) != count:
        raise TransformError(f"vmap: {what} has {len(axes)} entries for {count} values")
    return axes


def _normal(axis: int | None, ndim: int, what: str) -> int | None:
    """``axis`` of an array of rank ``ndim`` (the batched one), negative from the end."""
    if axis is None:
        return None
    if not -ndim <= axis < ndim:
        raise TransformError(f"vmap: {what} axis {axis} is out of range for rank {ndim}")
    return axis % ndim


def _insert(t: ArrayType, axis: int | None, name: str) -> ArrayType:
    if axis is None:
        return t
    dims = list(t.dims)
    dims.insert(axis, name)
    return ArrayType(t.dtype, tuple(dims))


class Vmapped(Transform):
    """``aotc.vmap(f, in_axes, out_axes)``: ``f`` mapped over a batch axis."""

    def __init__(self, fn: Callable[..., Any], in_axes: Axes = 0, out_axes: Axes = 0,
                 axis_name: str | None = None) -> None:
        super().__init__(fn, "vmap")
        self.in_axes, self.out_axes, self.axis_name = in_axes, out_axes, axis_name

    def size_name(self) -> str:
        """The batch axis's named dimension: ``axis_name`` or the first of ``batch``,
        ``batch2``… that no wrapped signature uses."""
        if self.axis_name is not None:
            return self.axis_name
        taken = {d for s in kernel_signatures(self.fn)
                 for t in (*s.params, *(s.results or ())) for d in t.dims}
        k = 1
        while (name := "batch" if k == 1 else f"batch{k}") in taken:
            k += 1
        return name

    def _axes(self, signature: Signature) -> tuple[int | None, ...]:
        axes = _per_item(self.in_axes, len(signature.params), "in_axes")
        found = tuple(_normal(a, t.ndim + 1, "in_axes")
                      for a, t in zip(axes, signature.params, strict=True))
        if all(a is None for a in found):
            raise TransformError("vmap: in_axes must batch at least one argument")
        return found

    def _out_axes(self, ranks: Sequence[int]) -> tuple[int | None, ...]:
        axes = _per_item(self.out_axes, len(ranks), "out_axes")
        return tuple(_normal(a, r + 1, "out_axes") for a, r in zip(axes, ranks, strict=True))

    def transform_signature(self, signature: Signature) -> Signature:
        name = self.size_name()
        params = tuple(_insert(t, a, name)
                       for t, a in zip(signature.params, self._axes(signature), strict=True))
        results = signature.results
        if results is not None:
            outs = self._out_axes([t.ndim for t in results])
            results = tuple(_insert(t, a, name) for t, a in zip(results, outs, strict=True))
        return Signature(params, results, signature.returns_tuple)

    def transform_program(self, traced: TracedKernel, signature: Signature
                          ) -> tuple[Program, str]:
        """Batched; or, where a primitive cannot be batched, a loop over the lanes
        (:mod:`.lanes`) for a kernel of one result batched along axis 0."""
        if traced.result_kind in ("optional", "optional_tuple"):
            raise TransformError("vmap: a kernel that returns None on some paths")
        program = traced.program
        outs = self._out_axes([a.type.ndim for a in program.outputs])
        axes = self._axes(traced.signature)
        try:
            batched = vmap_program(program, traced.param_names, axes, outs, self.size_name())
        except NoBatchingRule:
            inner = traced.signature
            single = inner.results is not None and len(inner.results) == 1 \
                and not inner.returns_tuple
            if not single or outs != (0,) or _lane_sized(traced):
                raise
            looped = lane_loop(self.fn, traced.param_names, axes)
            return trace_kernel(looped, signature, name=traced.name).program, traced.result_kind
        return batched, traced.result_kind

    # -- uncompiled: a loop over the batch, stacked ----------------------------------
    def __call__(self, *args: Any) -> Any:
        axes = [_normal(a, np.ndim(x), "in_axes")
                for a, x in zip(_per_item(self.in_axes, len(args), "in_axes"), args,
                                strict=True)]
        sizes = {np.shape(x)[a] for x, a in zip(args, axes, strict=True) if a is not None}
        if len(sizes) != 1:
            raise ValueError(f"vmap: batched arguments have sizes {sorted(sizes)}; "
                             "they must have one batch size")
        (n,) = sizes
        if n == 0:
            raise ValueError("vmap: an empty batch (run the compiled kernel for that)")
        lanes = [self.fn(*(_lane(x, a, i) for x, a in zip(args, axes, strict=True)))
                 for i in range(n)]
        single = not isinstance(lanes[0], tuple)
        columns = [[r] if single else list(r) for r in lanes]
        outs = _per_item(self.out_axes, len(columns[0]), "out_axes")
        stacked = tuple(col[0] if a is None else np.stack(col, axis=a)
                        for a, col in zip(outs, zip(*columns, strict=True), strict=True))
        return stacked[0] if single else stacked


def _lane(x: Any, axis: int | None, i: int) -> Any:
    """Lane ``i`` of ``x``: a view for arrays (so writes reach the caller), else a scalar."""
    if axis is None:
        return x
    if np.ndim(x) > 1:
        return np.take(x, [i], axis=axis).squeeze(axis) if not isinstance(x, np.ndarray) \
            else x[(slice(None),) * axis + (i,)]
    return np.asarray(x)[i]


def vmap(fn: Callable[..., Any], in_axes: Axes = 0, out_axes: Axes = 0, *,
         axis_name: str | None = None) -> Vmapped:
    """Map ``fn`` over an axis of its arguments, as ``jax.vmap``.

    ``in_axes``: the batch axis of each positional argument (an int for all, or one entry
    per argument; None broadcasts the argument to every lane). ``out_axes``: where the
    batch axis goes in each result (None: the result does not depend on the batch). At
    build time the kernel is traced once, unbatched, and its program rewritten with a
    batching rule per primitive, so the batched kernel is one fused kernel, not a loop
    of calls. ``axis_name`` names the batch dimension in the exported signature.
    """
    return Vmapped(fn, in_axes, out_axes, axis_name)
