"""Build small programs by hand for before/after pass tests; trace and optimize
functions, and find equations in the result."""

from __future__ import annotations

from typing import Any

import numpy as np

from aotc.ir import Atom, AType, Eqn, Lit, Params, Program, Var, nested_programs
from aotc.ops import ALL_PRIMITIVES, type_rules
from aotc.passes import optimize
from aotc.shapes import DimExpr
from aotc.tracing.kernel import trace_kernel
from aotc.types import parse_signature_string

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


def optimized(fn: Any, signature: str) -> Program:
    """``fn`` traced for ``signature`` and optimized, checked after every pass."""
    program = trace_kernel(fn, parse_signature_string(signature)).program
    return optimize(program, verify_each=True)


def eqns_named(program: Program, name: str) -> list[Eqn]:
    """Every equation of that primitive, nested programs included."""
    found = []
    for eqn in program.eqns:
        if eqn.prim.name == name:
            found.append(eqn)
        for nested in nested_programs(eqn):
            found += eqns_named(nested, name)
    return found
