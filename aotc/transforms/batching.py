"""The batching interpreter: re-emit a program with one more (leading) axis on some values.

Autodidax's ``BatchTrace``, over the IR instead of over tracers: each value of the
unbatched program maps to an atom of the batched program and a flag saying whether that
atom carries the batch axis. The batch axis of a batched value is always axis 0 (inputs
are moved there first and outputs moved to their ``out_axes`` last), so every rule sees
one layout. Equations with no batched input are copied unchanged; the others go through
``batch_rules[prim]``, the table of batching rules keyed by primitive, filled by
:mod:`.batching_rules` and :mod:`.batching_control`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..ir import Atom, Lit, Program, Var, is_stateful
from ..ops.containers import BOX_PRIMITIVES
from ..ops.core import Primitive
from ..ops.shape import broadcast_in_dim_p, transpose_p
from ..shapes import DimExpr
from ..tracing.avals import AType
from .core import Emitter, NoBatchingRule

#: ``rule(ctx, args, batched, **params) -> (outs, outs_batched)``: ``args`` are atoms of
#: the batched program, ``batched[i]`` whether ``args[i]`` has the batch axis (at 0).
BatchRule = Callable[..., tuple[list[Atom], list[bool]]]
batch_rules: dict[Primitive, BatchRule] = {}


_HINT = ("keep this value out of the batch (in_axes=None for the arguments it depends on), "
         "or loop in Python over the batch")
#: Why some primitives can have no batching rule, said where the user meets them.
NO_RULE_HINTS = {
    "bind_dim": "a size here depends on a batched value (each lane would need arrays of "
                "its own size); " + _HINT,
    "compress": "boolean-mask indexing gives each lane its own length; use np.where(mask, "
                "x, 0) and a reduction instead",
    # Never copied unbatched either: the lanes would share the draws a loop over them
    # would draw one by one.
    "call": "a recursive function takes scalars, one call each; loop over the batch in "
            "the kernel (for i in range(n): out[i] = f(x[i])) instead",
    **dict.fromkeys(("random_seed", "random_draw"),
                    "random draws are not batched (the lanes would share them); draw the "
                    "numbers outside and pass them in with a batch axis"),
    # A list, set or dict grown at run time is each lane's own: the kernel runs lane by
    # lane (aotc.transforms.lanes) where it makes one result.
    **dict.fromkeys((p.name for p in BOX_PRIMITIVES),
                    "a list, set or dict grown at run time belongs to one lane; return one "
                    "result (vmap then runs the kernel lane by lane) or loop over the batch "
                    "in the kernel"),
}


@dataclass
class BatchCtx:
    """Where batched equations go, and what the batch is."""

    em: Emitter
    size: DimExpr
    #: Lanes still running (a bool of shape ``(size,)``) inside a loop whose predicate is
    #: batched: effects (``raise_if``) apply to those lanes only. None: every lane.
    mask: Atom | None = None

    def nested(self, mask: Atom | None = None) -> BatchCtx:
        """A context for a nested program (its own equations, the same batch)."""
        return BatchCtx(Emitter(self.em.loc), self.size, mask)

    # -- layout helpers shared by the rules ------------------------------------------
    def bcast(self, atom: Atom) -> Atom:
        """``atom`` with a batch axis in front (a broadcast view: no copy)."""
        shape = (self.size, *atom.type.shape)
        return self.em.one(broadcast_in_dim_p, atom, shape=shape,
                           broadcast_dimensions=tuple(range(1, len(shape))))

    def batched(self, atom: Atom, is_batched: bool) -> Atom:
        return atom if is_batched else self.bcast(atom)

    def to_shape(self, atom: Atom, shape: tuple[DimExpr, ...]) -> Atom:
        """A batched value of shape ``(size,)`` stretched to ``(size, *shape)``."""
        if tuple(atom.type.shape[1:]) == tuple(shape):
            return atom
        return self.em.one(broadcast_in_dim_p, atom, shape=(self.size, *shape),
                           broadcast_dimensions=tuple(range(atom.type.ndim)))

    def moveaxis(self, atom: Atom, src: int, dst: int) -> Atom:
        if src == dst:
            return atom
        order = [i for i in range(atom.type.ndim) if i != src]
        order.insert(dst, src)
        return self.em.one(transpose_p, atom, permutation=tuple(order))


def batch_eqns(program: Program, args: Sequence[Atom], batched: Sequence[bool],
               ctx: BatchCtx) -> tuple[list[Atom], list[bool]]:
    """Emit ``program`` on ``args`` into ``ctx.em``; its outputs and their flags."""
    env: dict[Var, tuple[Atom, bool]] = {}
    for var, atom, flag in zip(program.inputs, args, batched, strict=True):
        env[var] = (atom, flag)

    def read(atom: Atom) -> tuple[Atom, bool]:
        return (atom, False) if isinstance(atom, Lit) else env[atom]

    for eqn in program.eqns:
        ins = [read(a) for a in eqn.inputs]
        atoms = [a for a, _ in ins]
        flags = [f for _, f in ins]
        # Equations of aotc's own decompositions (``<string>``) or with no line at all
        # keep the last user line seen: that is what an error should point at.
        if eqn.loc is not None and not eqn.loc.file.startswith("<"):
            ctx.em.loc = eqn.loc
        if not any(flags) and not is_stateful(eqn):
            outs: Sequence[Atom] = ctx.em.copy(eqn, tuple(atoms))
            out_flags = [False] * len(outs)
        else:
            rule = batch_rules.get(eqn.prim)
            if rule is None:
                raise NoBatchingRule(
                    f"vmap: primitive '{eqn.prim.name}' has no batching rule",
                    loc=ctx.em.loc, hint=NO_RULE_HINTS.get(eqn.prim.name, _HINT))
            outs, out_flags = rule(ctx, atoms, flags, **dict(eqn.params))
        for var, atom, flag in zip(eqn.outs, outs, out_flags, strict=True):
            env[var] = (atom, flag)
    results = [read(a) for a in program.outputs]
    return [a for a, _ in results], [f for _, f in results]


def batch_body(body: Program, batched: Sequence[bool], ctx: BatchCtx,
               force: Sequence[bool] | None = None) -> tuple[Program, list[bool]]:
    """``body`` as a program of its own over batched inputs (a loop body, a branch).

    ``force[j]`` gives output ``j`` a batch axis even where the rules left it unbatched
    (a loop carry must keep one type across iterations).
    """
    inputs = [Var(batched_type(v.type, ctx.size) if flag else v.type)
              for v, flag in zip(body.inputs, batched, strict=True)]
    inner = ctx.nested()
    outs, flags = batch_eqns(body, inputs, batched, inner)
    if force is not None:
        outs = [inner.batched(a, f) if want else a
                for a, f, want in zip(outs, flags, force, strict=True)]
        flags = [f or want for f, want in zip(flags, force, strict=True)]
    program = Program(tuple(inputs), tuple(inner.em.eqns), tuple(outs), name=body.name)
    return program, flags


def batched_type(atype: AType, size: DimExpr) -> AType:
    """``atype`` with the batch axis in front."""
    return AType(atype.dtype, (size, *atype.shape))
