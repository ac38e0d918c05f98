"""Shared plumbing for passes: renaming atoms while rebuilding a program."""

from __future__ import annotations

from dataclasses import replace

from ..ir import Atom, Eqn, Program, Var


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
