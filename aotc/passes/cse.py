"""Common subexpression elimination: an equation seen before is replaced by its outputs.

Before::                                   After::

    b:f64[n] = slice[...] a                    b:f64[n] = slice[...] a
    c:f64[n] = slice[...] a                    d:f64[n] = mul b b
    d:f64[n] = mul b c

Primitives are pure functions of their inputs, so equal primitive, inputs and params
mean equal outputs (a repeated ``raise_if`` is redundant too), except for the random
draws (``STATEFUL``): two of them are two draws.
"""

from __future__ import annotations

from ..ir import Eqn, Program, Var, is_stateful
from ..ops.core import COMMUTATIVE
from .rewrite import Renamer, map_nested


def cse(program: Program) -> Program:
    rename = Renamer()
    seen: dict[tuple, tuple[Var, ...]] = {}
    eqns: list[Eqn] = []
    for eqn in program.eqns:
        eqn = map_nested(rename.eqn(eqn), cse)
        inputs = eqn.inputs
        if eqn.prim.has(COMMUTATIVE):
            inputs = tuple(sorted(inputs, key=repr))
        key = (eqn.prim, inputs, eqn.params)
        if is_stateful(eqn):
            eqns.append(eqn)
            continue
        if key in seen:
            for old, new in zip(eqn.outs, seen[key], strict=True):
                rename.env[old] = new
            continue
        seen[key] = eqn.outs
        eqns.append(eqn)
    return rename.finish(program, eqns)
