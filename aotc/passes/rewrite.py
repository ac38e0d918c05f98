"""Shared plumbing for passes: renaming atoms while rebuilding a program, copying
programs with fresh variables, and new equations typed by their primitives' rules."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from ..ir import Atom, Eqn, Params, Program, Var
from ..ops.core import Primitive, type_rules
from ..shapes import DimExpr, rename_symbols
from ..tracing.avals import AType


class Renamer:
    """Maps vars to their replacements while a pass rebuilds the equation list."""

    def __init__(self) -> None:
        self.env: dict[Var, Atom] = {}

    def __call__(self, atom: Atom) -> Atom:
        return self.env.get(atom, atom) if isinstance(atom, Var) else atom

    def eqn(self, eqn: Eqn) -> Eqn:
        inputs = tuple(self(a) for a in eqn.inputs)
        return eqn if inputs == eqn.inputs else replace(eqn, inputs=inputs)

    def finish(self, program: Program, eqns: list[Eqn]) -> Program:
        return program.replace(eqns=tuple(eqns), outputs=tuple(self(a) for a in program.outputs),
                               writebacks=tuple((i, self(a)) for i, a in program.writebacks))


def map_nested(eqn: Eqn, run: Callable[[Program], Program]) -> Eqn:
    """Apply a pass to the programs nested in an equation's params (loop bodies)."""
    changed = False
    params = []
    for key, value in eqn.params:
        if isinstance(value, Program):
            value, changed = run(value), True
        elif isinstance(value, tuple) and value and all(isinstance(v, Program) for v in value):
            value, changed = tuple(run(v) for v in value), True
        params.append((key, value))
    return replace(eqn, params=Params(params)) if changed else eqn


class Emitter:
    """Equations a pass adds (index arithmetic, tests), at ``loc``, in order."""

    def __init__(self, loc: Any) -> None:
        self.loc = loc
        self.eqns: list[Eqn] = []

    def emit(self, prim: Primitive, *inputs: Atom, **params: Any) -> Var:
        """``prim(*inputs, **params)``'s one output, typed by its rule."""
        (out_type,) = type_rules[prim](*(a.type for a in inputs), **params)
        out = Var(out_type)
        self.eqns.append(Eqn(prim, inputs, Params.of(params), (out,), self.loc))
        return out


@dataclass
class Copier:
    """Copies equations with fresh variables, renaming the sizes the copied code binds."""

    symbols: dict[str, str]
    env: dict[Var, Atom] = field(default_factory=dict)

    def __call__(self, atom: Atom) -> Atom:
        return self.env.get(atom, atom) if isinstance(atom, Var) else atom

    def type(self, t: AType) -> AType:
        return AType(t.dtype, tuple(self.dim(d) for d in t.shape))

    def dim(self, d: Any) -> Any:
        return rename_symbols(d, self.symbols) if isinstance(d, DimExpr) else d

    def fresh(self, v: Var) -> Var:
        new = Var(self.type(v.type))
        self.env[v] = new
        return new

    def param(self, key: str, value: Any) -> Any:
        if isinstance(value, Program):
            return self.program(value)
        if isinstance(value, tuple):
            return tuple(self.param(key, v) for v in value)
        if key == "symbol" and isinstance(value, str):
            return self.symbols.get(value, value)
        return self.dim(value)

    def eqn(self, eqn: Eqn) -> Eqn:
        inputs = tuple(self(a) for a in eqn.inputs)
        params = Params((k, self.param(k, v)) for k, v in eqn.params)
        return replace(eqn, inputs=inputs, params=params,
                       outs=tuple(self.fresh(v) for v in eqn.outs))

    def program(self, program: Program) -> Program:
        inner = replace(self, env=dict(self.env))  # (a subclass's own fields kept)
        inputs = tuple(inner.fresh(v) for v in program.inputs)
        eqns = tuple(inner.eqn(e) for e in program.eqns)
        return program.replace(inputs=inputs, eqns=eqns,
                               outputs=tuple(inner(a) for a in program.outputs))
