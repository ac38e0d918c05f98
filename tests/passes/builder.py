"""Build small programs by hand for before/after pass tests."""

from __future__ import annotations

from typing import Any

import numpy as np

from aotc.ir import Atom, AType, Eqn, Lit, Params, Program, Var
from aotc.ops import ALL_PRIMITIVES, type_rules
from aotc.shapes import DimExpr

F64 = np.dtype("f8")
N = DimExpr.sym("x.0")


class Builder:
    def __init__(self, *input_types: AType) -> None:
        self.inputs = [Var(t) for t in input_types]
        self.eqns: list[Eqn] = []

    def __call__(self, prim: str, *inputs: Atom, **params: Any) -> Var:
        p = ALL_PRIMITIVES[prim]
        (out_type,) = type_rules[p](*(a.type for a in inputs), **params)
        out = Var(out_type)
        self.eqns.append(Eqn(p, tuple(inputs), Params.of(params), (out,)))
        return out

    def program(self, *outputs: Atom) -> Program:
        from aotc.ir import DimSource

        return Program(tuple(self.inputs), tuple(self.eqns), tuple(outputs),
                       (DimSource("x.0", 0, 0),))


def vec() -> AType:
    return AType(F64, (N,))


def lit(value: float) -> Lit:
    return Lit(value, F64)
