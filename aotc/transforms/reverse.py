"""The reverse sweep: a program's primal equations, then their VJP rules in reverse.

:func:`vjp_eqns` emits, into one emitter, the forward computation (each equation copied,
or changed by its ``forward_rules`` entry to also keep what its reverse rule needs, such
as a loop's carries at every iteration) and then walks the equations backwards,
accumulating cotangents with ``add``. Zero cotangents stay ``None`` and cost nothing;
the optimizer's DCE removes primal work no cotangent reads, and fusion fuses the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..ir import Atom, Eqn, Lit, Program, Var, is_stateful, nested_programs
from ..ops.containers import BOX_PRIMITIVES
from ..ops.core import ALL_PRIMITIVES, Primitive
from ..ops.shape import dim_value_p
from ..shapes import DimExpr
from .core import Emitter
from .vjp_rules import is_float, vjp_rules

#: ``forward_rules[prim](sweep, eqn, ins) -> (outs, residuals)``: the primal equation as
#: emitted for differentiation; the reverse rule then gets ``residuals=...``.
ForwardRule = Callable[..., tuple[Sequence[Atom], Any]]
forward_rules: dict[Primitive, ForwardRule] = {}

_add = ALL_PRIMITIVES["add"]


class Sweep:
    """One reverse sweep's state: the emitter, primal values, and where they came from."""

    def __init__(self, em: Emitter) -> None:
        self.em = em
        self.values: dict[Var, Atom] = {}
        self.made_by: dict[Var, Eqn] = {}
        #: Integer inputs that are size symbols (a kernel's integer arguments).
        self.sizes: dict[Var, DimExpr] = {}

    def read(self, atom: Atom) -> Atom:
        return atom if isinstance(atom, Lit) else self.values[atom]

    def static_int(self, atom: Atom) -> DimExpr | None:
        """An integer known as a size expression (a literal or ``dim_value``), or None."""
        if isinstance(atom, Lit):
            return DimExpr.const(int(atom.value))
        if atom in self.sizes:
            return self.sizes[atom]
        eqn = self.made_by.get(atom)
        return eqn.params["expr"] if eqn is not None and eqn.prim is dim_value_p else None


def inline(em: Emitter, program: Program, args: Sequence[Atom]) -> list[Atom]:
    """Emit ``program``'s equations on ``args``; its outputs."""
    env: dict[Var, Atom] = dict(zip(program.inputs, args, strict=True))
    for eqn in program.eqns:
        outs = em.copy(eqn, tuple(a if isinstance(a, Lit) else env[a] for a in eqn.inputs))
        env.update(zip(eqn.outs, outs, strict=True))
    return [a if isinstance(a, Lit) else env[a] for a in program.outputs]


#: Primitives whose results move with their float inputs in a way no rule gives: a
#: gradient through them that reaches such an input is refused (zero would be wrong).
NOT_DIFFERENTIABLE = {
    ALL_PRIMITIVES["random_draw"]: (
        "a random draw whose parameters depend on the differentiated arguments has no "
        "derivative aotc can give (for a fixed seed the draws move with the parameters)",
        "write the draw from standard ones that take no parameters, e.g. "
        "np.exp(mean + sigma * np.random.standard_normal(n)) for lognormal(mean, sigma, n), "
        "or make the parameters constants"),
    ALL_PRIMITIVES["call"]: (
        "a recursive function (compiled as a call of its own) has no derivative rule yet",
        "write the recursion as a loop to take its gradient"),
}


def _depends_on(program: Program, inputs: Sequence[int]) -> set[Var]:
    """The variables computed from the program's ``inputs`` (through any equation)."""
    active = {program.inputs[k] for k in inputs}
    for eqn in program.eqns:
        if any(isinstance(a, Var) and a in active for a in eqn.inputs):
            active.update(eqn.outs)
    return active


Seeds = Sequence[Atom | None]


def vjp_eqns(program: Program, args: Sequence[Atom],
             out_cts: Seeds | Callable[[], Seeds], em: Emitter,
             wrt: Sequence[int] | None = None) -> tuple[list[Atom], list[Atom | None]]:
    """Emit ``program`` on ``args`` and its reverse sweep from ``out_cts`` (or from what
    ``out_cts()`` emits after the forward sweep: checks of sizes known only then);
    returns the primal outputs and each input's cotangent (None: zero, or not a float).
    ``wrt``: the inputs whose cotangents are wanted (all by default)."""
    sweep = Sweep(em)
    sweep.values.update(zip(program.inputs, args, strict=True))
    for src in program.dim_sources:  # an integer argument's value is a size symbol
        if src.axis is None and src.program is None:
            sweep.sizes[program.inputs[src.index]] = DimExpr.sym(src.symbol, signed=True)
    residuals: dict[int, Any] = {}
    for k, eqn in enumerate(program.eqns):
        if eqn.loc is not None and not eqn.loc.file.startswith("<"):
            em.loc = eqn.loc
        ins = tuple(sweep.read(a) for a in eqn.inputs)
        forward = forward_rules.get(eqn.prim)
        if forward is None:
            outs: Sequence[Atom] = em.copy(eqn, ins)
        else:
            outs, residuals[k] = forward(sweep, eqn, ins)
        for var, out in zip(eqn.outs, outs, strict=True):
            sweep.values[var] = out
            sweep.made_by[var] = eqn
    primal_outs = [sweep.read(a) for a in program.outputs]
    if callable(out_cts):
        out_cts = out_cts()

    cts: dict[Var, Atom] = {}
    active = _depends_on(program, range(len(program.inputs)) if wrt is None else wrt)

    def accumulate(var: Var, ct: Atom) -> None:
        cts[var] = ct if var not in cts else em.one(_add, cts[var], ct)

    for out, ct in zip(program.outputs, out_cts, strict=True):
        if isinstance(out, Var) and ct is not None and is_float(out.type):
            accumulate(out, ct)
    for k in range(len(program.eqns) - 1, -1, -1):
        eqn = program.eqns[k]
        out_cts_k = [cts.get(v) for v in eqn.outs]
        if all(c is None for c in out_cts_k):
            continue  # nothing downstream depends on it (effects included)
        if eqn.loc is not None and not eqn.loc.file.startswith("<"):
            em.loc = eqn.loc
        if nested_programs(eqn) and is_stateful(eqn):
            boxed = _holds_boxes(eqn)  # (else random draws: the other stateful kind)
            raise em.error(
                f"grad: a list, set or dict changed at run time inside a {eqn.prim.name} on "
                "the gradient's path: values kept in one carry no gradient" if boxed else
                f"grad: random draws inside a {eqn.prim.name} on the gradient's path would "
                "be drawn again by the reverse sweep",
                hint="keep the values in an array (preallocated, written by index), or "
                     "compute this part outside the differentiated kernel" if boxed else
                     "draw the numbers as an array before the loop or branch, or outside "
                     "the kernel")
        refused = NOT_DIFFERENTIABLE.get(eqn.prim)
        if refused and any(isinstance(a, Var) and a in active and is_float(a.type)
                           for a in eqn.inputs):
            raise em.error(f"grad: {refused[0]}", hint=refused[1])
        rule = vjp_rules.get(eqn.prim)
        if rule is None:
            raise em.error(f"grad: primitive '{eqn.prim.name}' has no differentiation rule",
                           hint="compute this value outside the differentiated kernel, or "
                                "write it with operations aotc can differentiate")
        extra = {"residuals": residuals[k]} if k in residuals else {}
        in_cts = rule(em, out_cts_k, [sweep.read(a) for a in eqn.inputs],
                      [sweep.values[v] for v in eqn.outs], **dict(eqn.params), **extra)
        for atom, ct in zip(eqn.inputs, in_cts, strict=True):
            if isinstance(atom, Var) and ct is not None and is_float(atom.type):
                accumulate(atom, ct)
    return primal_outs, [cts.get(v) for v in program.inputs]


def _holds_boxes(eqn: Eqn) -> bool:
    """Whether ``eqn`` (or a body in it) works on a box (:mod:`aotc.ops.containers`)."""
    return eqn.prim in BOX_PRIMITIVES or any(_holds_boxes(e) for p in nested_programs(eqn)
                                             for e in p.eqns)

