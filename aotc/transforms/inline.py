"""A transformed kernel called inside another kernel: ``aotc.grad(f)(x)`` in a kernel.

``jax.grad`` composes inside ``jax.jit`` because the gradient is itself traced code.
Here the transform's program, traced for the signature the call's arguments have, is
inlined into the kernel being traced, as a call of a helper function would be: its
sizes become the caller's (a symbol read from argument ``i``'s axis ``a`` is the
caller's size there), sizes it binds get new names, its checks are the caller's
checks, and each equation is emitted again on the caller's values.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import lax
from ..ir import Atom, Lit, Program, bound_uppers
from ..ops.shape import bind_dim_p
from ..passes.rewrite import Copier
from ..shapes import DimExpr, Sym, named_symbol, substitute_symbols
from ..tracing.kernel import rebuilt
from ..tracing.tracer import DISPATCH, Tracer, as_tracer, current, new_bound_symbol
from ..types import Signature


@dataclass
class _Inlining(Copier):
    """A :class:`Copier` whose sizes become the caller's (``sizes``)."""

    sizes: dict[str, DimExpr] = field(default_factory=dict)

    def dim(self, d: Any) -> Any:
        if not isinstance(d, DimExpr):
            return d
        values: dict[str, Callable[[Sym], DimExpr]] = {
            name: _constant(v) for name, v in self.sizes.items()}
        values.update({old: named_symbol(new) for old, new in self.symbols.items()})
        return substitute_symbols(d, values)


def _constant(value: DimExpr) -> Callable[[Sym], DimExpr]:
    return lambda _: value


def inline(transform: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``transform(*args)`` on tracers: its program emitted into the current trace."""
    ctx = current()
    name = getattr(transform, "__name__", "transform")
    if kwargs:
        raise ctx.error(f"{name}(...) inside a kernel takes its arguments by position")
    values = [as_tracer(a) for a in args]
    traced = transform.__aotc_trace__(_matching(transform, values, name), name=name)
    program: Program = traced.program
    if program.writebacks or traced.result_kind.startswith("optional") \
            or any(s.program is not None for s in program.dim_sources):
        raise ctx.error(f"{name}(...) inside a kernel: its kernel writes into its arguments, "
                        "may return None, or computes sizes from its arguments",
                        hint="export it and call the compiled one from Python")
    sizes = {s.symbol: values[s.index].aval.shape[s.axis] if s.axis is not None
             else lax.as_dim(values[s.index]) for s in program.dim_sources}
    copier = _Inlining({old: new_bound_symbol() for old in bound_uppers(program)},
                       sizes=sizes)
    for check in program.checks:
        ctx.check(check.op, copier.dim(check.lhs), copier.dim(check.rhs), check.error,
                  check.message)
    copier.env.update(zip(program.inputs, (v.atom for v in values), strict=True))
    for eqn in program.eqns:
        params = {k: copier.param(k, v) for k, v in eqn.params}
        outs = ctx.emit(eqn.prim, [copier(a) for a in eqn.inputs], **params)
        copier.env.update(zip(eqn.outs, outs, strict=True))
        if eqn.prim is bind_dim_p:  # a size the caller's later code may need to bound
            ctx.bound[params["symbol"]] = (outs[0], params["upper"])
    return rebuilt(traced, [_value(copier(a)) for a in program.outputs])


def _matching(transform: Any, values: list[Tracer], name: str) -> Signature:
    """The transform's first signature that takes these values (dtype and rank)."""
    for sig in transform.signatures():
        if len(sig.params) == len(values) and all(
                p.dtype == v.dtype and p.ndim == v.ndim for p, v in zip(sig.params, values,
                                                                        strict=True)):
            return sig  # type: ignore[no-any-return]
    got = ", ".join(f"{v.dtype}[{v.ndim}-d]" for v in values)
    raise current().error(f"{name}(...) inside a kernel: no signature of it takes ({got})",
                          hint="call it with arrays of the dtypes and ranks its kernel "
                               "declares")


def _value(atom: Atom) -> Tracer:
    return as_tracer(atom.value, atom.type.dtype) if isinstance(atom, Lit) else Tracer(atom)


__all__ = ["inline"]
DISPATCH.inline_transform = inline
