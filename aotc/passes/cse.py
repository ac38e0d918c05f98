"""Common subexpression elimination: an equation seen before is replaced by its outputs.

Before::                                   After::

    b:f64[n] = slice[...] a                    b:f64[n] = slice[...] a
    c:f64[n] = slice[...] a                    d:f64[n] = mul b b
    d:f64[n] = mul b c

Primitives are pure functions of their inputs, so equal primitive, inputs and params
mean equal outputs (a repeated ``raise_if`` is redundant too), except for the random
draws (``STATEFUL``): two of them are two draws.

An update that writes back the very block it reads (``a[s] -= x`` is ``t = a[s]; t -=
x; a[s] = t``, whose last write stores ``t`` where it already is) is its base.
"""

from __future__ import annotations

from ..ir import Atom, Eqn, Params, Program, Var, is_stateful
from ..ops.core import COMMUTATIVE, Primitive
from ..ops.shape import reshape_p, slice_p, update_slice_p
from .rewrite import Renamer, map_nested


def cse(program: Program) -> Program:
    rename = Renamer()
    seen: dict[tuple[Primitive, tuple[Atom, ...], Params], tuple[Var, ...]] = {}
    eqns: list[Eqn] = []
    defs: dict[Var, Eqn] = {}
    for eqn in program.eqns:
        eqn = map_nested(rename.eqn(eqn), cse)
        if _writes_back_its_block(eqn, defs):
            rename.env[eqn.outs[0]] = eqn.inputs[0]
            continue
        defs.update((v, eqn) for v in eqn.outs)
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


def _writes_back_its_block(eqn: Eqn, defs: dict[Var, Eqn]) -> bool:
    """``update_slice(x, slice(x))`` of the same block (through reshapes that come back
    to the block's shape, which keep the elements' order)."""
    if eqn.prim is not update_slice_p:
        return False
    base, atom = eqn.inputs[0], eqn.inputs[1]
    shape = atom.type.shape
    source: Atom = atom
    while isinstance(source, Var) and source in defs and defs[source].prim is reshape_p:
        source = defs[source].inputs[0]
    made = defs.get(source) if isinstance(source, Var) else None
    if made is None or made.prim is not slice_p or made.inputs[0] is not base:
        return False
    params = dict(made.params)
    return (tuple(params["shape"]) == tuple(shape)
            and tuple(params["start"]) == tuple(eqn.params["start"])
            and tuple(params["step"]) == tuple(eqn.params["step"]))
