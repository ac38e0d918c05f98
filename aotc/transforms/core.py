"""What every IR transform needs: an emitter of typed equations and a located error.

A transform rewrites a traced :class:`~aotc.ir.Program` into another one by re-emitting
equations; the emitter computes each new equation's output types with the primitive's
type rule, so a rule cannot build an ill-typed program without failing right there, and
stamps each equation with the user's source line of the equation it came from.
"""

from __future__ import annotations

from typing import Any

from ..errors import AotcError, Loc
from ..ir import Atom, Eqn, Lit, Params, Var
from ..ops.core import Primitive, type_rules
from ..ops.shape import broadcast_in_dim_p
from ..tracing.avals import AType


class TransformError(AotcError, TypeError):
    """A transform cannot handle the kernel (a primitive without a rule, a size that would
    depend on a batched value…): a build error located at the user's source line."""


class NoBatchingRule(TransformError):
    """vmap met a primitive it cannot batch on a batched value: ``aotc.vmap`` then loops
    over the lanes instead (:mod:`aotc.transforms.lanes`)."""


class Emitter:
    """Collects equations for a program under construction."""

    def __init__(self, loc: Loc | None = None) -> None:
        self.eqns: list[Eqn] = []
        #: The source line new equations are attributed to (the equation being rewritten).
        self.loc = loc

    def emit(self, prim: Primitive, *inputs: Atom, **params: Any) -> tuple[Var, ...]:
        """Append ``prim[params](inputs)``; returns its fresh output variables."""
        packed = Params.of(params)
        types = type_rules[prim](*(a.type for a in inputs), **dict(packed))
        outs = tuple(Var(t) for t in types)
        self.eqns.append(Eqn(prim, tuple(inputs), packed, outs, self.loc))
        return outs

    def one(self, prim: Primitive, *inputs: Atom, **params: Any) -> Var:
        """:meth:`emit` for a primitive with a single output."""
        (out,) = self.emit(prim, *inputs, **params)
        return out

    def copy(self, eqn: Eqn, inputs: tuple[Atom, ...]) -> tuple[Var, ...]:
        """``eqn`` again on other inputs of the same types, with fresh outputs."""
        outs = tuple(Var(v.type) for v in eqn.outs)
        self.eqns.append(Eqn(eqn.prim, inputs, eqn.params, outs, eqn.loc))
        return outs

    def error(self, message: str, hint: str | None = None) -> TransformError:
        return TransformError(message, loc=self.loc, hint=hint)


def zeros(em: Emitter, atype: AType) -> Atom:
    """A zero of ``atype``: a literal for a scalar, a broadcast literal otherwise."""
    zero = Lit(0, atype.dtype)
    if not atype.shape:
        return zero
    return em.one(broadcast_in_dim_p, zero, shape=atype.shape, broadcast_dimensions=())


def or_zeros(em: Emitter, ct: Atom | None, atype: AType) -> Atom:
    """A cotangent, with None (zero) made an actual zero of ``atype``."""
    return ct if ct is not None else zeros(em, atype)
