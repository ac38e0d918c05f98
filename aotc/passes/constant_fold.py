"""Constant folding: evaluate scalar equations whose inputs are all literals.

Before::                              After::

    b:f64[] = mul 2.0:f64 3.0:f64         c:f64[x.0] = add a 6.0:f64
    c:f64[x.0] = add a b

Values come from the NumPy reference rules, so folding is exact NumPy arithmetic
(integer wrap-around included).
"""

from __future__ import annotations

import numpy as np

from ..interpret import concrete_params
from ..ir import Eqn, Lit, Program, has_effect, nested_programs
from ..ops import impl_rules
from .rewrite import Renamer, map_nested


def _foldable(eqn: Eqn) -> bool:
    return (all(isinstance(a, Lit) for a in eqn.inputs)
            and all(v.type.shape == () for v in eqn.outs)
            and not any(isinstance(v, tuple) and v and not isinstance(v[0], int)
                        for _, v in eqn.params)
            and eqn.prim in impl_rules and not has_effect(eqn)
            and not nested_programs(eqn))  # a loop of constants still runs at run time


def constant_fold(program: Program) -> Program:
    rename = Renamer()
    eqns: list[Eqn] = []
    for eqn in program.eqns:
        eqn = map_nested(rename.eqn(eqn), constant_fold)
        if _foldable(eqn):
            args = [a.value for a in eqn.inputs if isinstance(a, Lit)]
            assert len(args) == len(eqn.inputs)  # _foldable: every input is a literal
            try:
                params = {k: concrete_params(v, {}) for k, v in eqn.params}
                with np.errstate(all="ignore"):
                    values = impl_rules[eqn.prim](*args, **params)
            except (KeyError, ValueError, ArithmeticError):
                eqns.append(eqn)  # e.g. a size symbol, or an error kept for run time
                continue
            for var, value in zip(eqn.outs, values, strict=True):
                rename.env[var] = Lit(np.asarray(value, var.type.dtype)[()], var.type.dtype)
            continue
        eqns.append(eqn)
    return rename.finish(program, eqns)
