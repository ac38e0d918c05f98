"""Build IR programs by hand for codegen tests, with types from the primitives' rules.

    pb = ProgramBuilder()
    x = pb.array("f8", "n")          # f64[n], n read from x.shape[0]
    y = pb.apply("sin", x)
    program = pb.build(y)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from aotc.ir import Atom, AType, Check, DimSource, Eqn, Lit, Params, Program, Var, verify
from aotc.ops import ALL_PRIMITIVES, type_rules
from aotc.shapes import DimExpr, as_dim

Dim = int | str | DimExpr


class ProgramBuilder:
    def __init__(self, name: str = "kernel") -> None:
        self.name = name
        self.inputs: list[Var] = []
        self.eqns: list[Eqn] = []
        self.sources: dict[str, DimSource] = {}
        self.checks: list[Check] = []

    def _dim(self, dim: Dim, index: int, axis: int) -> DimExpr:
        if isinstance(dim, str):
            self.sources.setdefault(dim, DimSource(dim, index, axis))
            return DimExpr.sym(dim)
        return as_dim(dim)

    def array(self, dtype: Any, *dims: Dim) -> Var:
        """An array input; a string dim names a size symbol (first use defines it)."""
        index = len(self.inputs)
        shape = tuple(self._dim(d, index, axis) for axis, d in enumerate(dims))
        var = Var(AType(np.dtype(dtype), shape))
        self.inputs.append(var)
        return var

    def scalar(self, dtype: Any, symbol: str | None = None) -> Var:
        """A scalar input; with ``symbol``, its integer value is that size symbol."""
        var = Var(AType(np.dtype(dtype), ()))
        if symbol is not None:
            self.sources[symbol] = DimSource(symbol, len(self.inputs), None)
        self.inputs.append(var)
        return var

    def check(self, op: str, lhs: Dim, rhs: Dim, error: str = "ValueError",
              message: str = "sizes {lhs} and {rhs} differ") -> None:
        self.checks.append(Check(op, _expr(lhs), _expr(rhs), error, message))

    def apply(self, prim: str, *inputs: Atom | Any, **params: Any) -> Var | None:
        """Append ``prim[params](inputs)``; plain Python/NumPy scalars become literals.

        Returns the first result (None for an effect without results)."""
        p = ALL_PRIMITIVES[prim]
        atoms = tuple(a if isinstance(a, (Var, Lit)) else lit(a) for a in inputs)
        out_types = type_rules[p](*(a.type for a in atoms), **params)
        outs = tuple(Var(t) for t in out_types)
        self.eqns.append(Eqn(p, atoms, Params.of(params), outs))
        return outs[0] if outs else None

    def build(self, *outputs: Atom) -> Program:
        program = Program(tuple(self.inputs), tuple(self.eqns), tuple(outputs),
                          tuple(self.sources.values()), tuple(self.checks), self.name)
        verify(program)
        return program


def _expr(dim: Dim) -> DimExpr:
    return DimExpr.sym(dim) if isinstance(dim, str) else as_dim(dim)


def lit(value: Any, dtype: Any = None) -> Lit:
    if dtype is None:
        dtype = value.dtype if isinstance(value, np.generic) else np.asarray(value).dtype
    return Lit(value, np.dtype(dtype))


def unary(prim: str, dtype: Any, /, **params: Any) -> Program:
    """``prim(x)`` on a 1-d array and on a scalar: outputs (array result, scalar result)."""
    pb = ProgramBuilder(prim)
    x, s = pb.array(dtype, "n"), pb.scalar(dtype)
    return pb.build(pb.apply(prim, x, **params), pb.apply(prim, s, **params))


def binary(prim: str, dtype: Any, /) -> Program:
    """``prim`` on (array, array), (array, scalar), (scalar, array), (scalar, scalar)."""
    pb = ProgramBuilder(prim)
    x, y = pb.array(dtype, "n"), pb.array(dtype, "n")
    s, t = pb.scalar(dtype), pb.scalar(dtype)
    return pb.build(pb.apply(prim, x, y), pb.apply(prim, x, t), pb.apply(prim, s, y),
                    pb.apply(prim, s, t))
