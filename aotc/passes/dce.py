"""Dead code elimination: drop equations none of whose outputs is used.

Runs backwards from the outputs, as a liveness analysis. Equations whose primitive
has an effect (``raise_if``, or a body that raises) are always kept.
"""

from __future__ import annotations

from ..ir import Eqn, Program, Var, has_effect
from .rewrite import map_nested


def dce(program: Program) -> Program:
    roots = list(program.outputs) + [a for _, a in program.writebacks]
    live: set[Var] = {a for a in roots if isinstance(a, Var)}
    kept: list[Eqn] = []
    for eqn in reversed(program.eqns):
        if has_effect(eqn) or any(v in live for v in eqn.outs):
            kept.append(map_nested(eqn, dce))
            live.update(a for a in eqn.inputs if isinstance(a, Var))
    kept.reverse()
    return program.replace(eqns=tuple(kept))
