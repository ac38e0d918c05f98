"""The buffer planner's state: what is known about each value, buffer classes, liveness.

:mod:`.inplace` holds the policy (one rule per primitive); this module holds the
bookkeeping the rules share. A *buffer version* is a value that is a whole buffer (not
a view); versions that share one buffer over time (an update written in place and its
base, a loop carry and its initial value) form a *class*, kept as a union-find. A
version may be overwritten when it is writable and dead: neither it nor any value
reading its bytes (its views) is read by a later equation of the same program.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import TypeGuard

from ...ir import Atom, Eqn, Program, Var
from ...ops.core import Primitive


class Move(Enum):
    """How a value reaches the buffer it must end up in (a carry slot, an argument)."""

    SKIP = "skip"    # it already lives there
    COPY = "copy"    # copy it straight in
    STAGE = "stage"  # copy it to scratch first: it may live in a buffer being overwritten
    SWAP = "swap"    # a loop carry: the slot and the body's buffer of the value trade places


class Update(Enum):
    INPLACE = "inplace"  # write the block into the base's buffer
    STAGED = "staged"    # the same, after copying the update operand to scratch
    DIRECT = "direct"    # the operand's producer already wrote into the block


@dataclass(frozen=True)
class BufferPlan:
    #: Every buffer version (rank >= 1, not a view) -> the representative of its buffer
    #: class: all versions that share one buffer over time.
    buffer: Mapping[Var, Var]
    #: The representatives of the classes that need a buffer of our own, in program order.
    owned: tuple[Var, ...]
    #: Class representatives that are caller arrays (top-level inputs), not our buffers.
    caller: frozenset[Var]
    #: Values (rank >= 1) statically known to be C-contiguous.
    contiguous: frozenset[Var]
    updates: Mapping[Eqn, Update]
    #: (loop or cond, result k) -> index into ``eqn.inputs`` of the operand whose
    #: buffer result k takes over (its initial value, for a loop carry).
    reuse: Mapping[tuple[Eqn, int], int]
    #: One Move per output of a region: ``(loop,)`` back edges, ``(cond, branch)``
    #: branch ends, ``("writeback",)`` writes into arguments.
    moves: Mapping[Hashable, tuple[Move, ...]]
    #: Top-level inputs whose caller array is written in place.
    inplace_args: frozenset[int]
    #: Values computed straight into the block of the (``Update.DIRECT``) update that
    #: consumes them, instead of a buffer of their own.
    direct: Mapping[Var, Eqn]
    #: Values computed into the buffer of a dying version of an argument, which they
    #: take over (see :mod:`.argwrites`).
    overwrite: Mapping[Var, Var]


@dataclass(frozen=True)
class Value:
    """What the planner knows about a value of rank >= 1."""

    roots: frozenset[Var]  # the buffer versions whose bytes it may read
    writable: bool = False  # a buffer version that may be overwritten
    contiguous: bool = False
    caller: bool = False  # may read a caller's array


@dataclass(frozen=True)
class Input:
    """How a program input may be used (its roots are the input itself)."""

    writable: bool = False
    contiguous: bool = False
    caller: bool = True

    @staticmethod
    def reading(value: Value | None) -> Input:
        if value is None:
            return Input()
        return Input(False, value.contiguous, value.caller)


class Scope:
    """Liveness within one program: where each variable is made and read."""

    def __init__(self, program: Program) -> None:
        self.eqns = program.eqns
        self.inputs = program.inputs
        self.made: dict[Var, int] = dict.fromkeys(program.inputs, -1)
        self.uses: dict[Var, list[int]] = defaultdict(list)
        for p, eqn in enumerate(program.eqns):
            self.made.update((v, p) for v in eqn.outs)
            for atom in eqn.inputs:
                if isinstance(atom, Var):
                    self.uses[atom].append(p)
        end = len(program.eqns)
        for atom in [*program.outputs, *(a for _, a in program.writebacks)]:
            if isinstance(atom, Var):
                self.uses[atom].append(end)
        self.last = {v: max(ps) for v, ps in self.uses.items()}
        #: buffer version -> every variable that may read its bytes (itself, views).
        self.members: dict[Var, list[Var]] = defaultdict(list)

    def dead_after(self, version: Var, p: int) -> bool:
        return all(self.last.get(v, -1) <= p for v in self.members[version])


Rule = Callable[["Planner", "Scope", int, Eqn], None]


@dataclass
class Planner:
    #: What each primitive does to buffers, and the rule for every other one.
    rules: Mapping[Primitive, Rule]
    default: Rule
    parent: dict[Var, Var] = field(default_factory=dict)
    values: dict[Var, Value] = field(default_factory=dict)
    updates: dict[Eqn, Update] = field(default_factory=dict)
    reuse: dict[tuple[Eqn, int], int] = field(default_factory=dict)
    moves: dict[Hashable, tuple[Move, ...]] = field(default_factory=dict)
    written: set[Var] = field(default_factory=set)  # classes written in place
    owned: list[Var] = field(default_factory=list)  # classes needing a buffer of our own
    direct: dict[Var, Eqn] = field(default_factory=dict)
    #: Values written into an argument -> the argument's index (see :mod:`.argwrites`).
    targets: dict[Var, int] = field(default_factory=dict)
    overwrite: dict[Var, Var] = field(default_factory=dict)

    # -- buffer classes ----------------------------------------------------------------

    def find(self, v: Var) -> Var:
        while self.parent[v] is not v:
            v = self.parent[v]
        return v

    def join(self, newer: Var, older: Var) -> None:
        """``newer`` lives in ``older``'s buffer (the older representative stays)."""
        self.parent[self.find(newer)] = self.find(older)

    def is_version(self, atom: Atom) -> TypeGuard[Var]:
        """A whole buffer version (not a view of one)."""
        return isinstance(atom, Var) and self.values.get(atom, Value(frozenset())).roots == {atom}

    # -- definitions -------------------------------------------------------------------

    def define(self, scope: Scope, var: Var, value: Value) -> None:
        self.values[var] = value
        for root in value.roots:
            scope.members[root].append(var)

    def version(self, scope: Scope, var: Var, *, contiguous: bool = True,
                caller: bool = False, writable: bool = True, like: Var | None = None) -> None:
        """``var`` is a whole buffer: a fresh one of our own, or ``like``'s taken over."""
        if like is not None:
            self.parent[var] = var
            self.join(var, like)
        elif var not in self.parent:
            self.parent[var] = var
            self.owned.append(var)
        self.define(scope, var, Value(frozenset({var}), writable, contiguous, caller))

    def disown(self, var: Var) -> None:
        """``var`` (a fresh buffer nothing else shares) needs no buffer after all."""
        self.owned.remove(var)
        self.values[var] = replace(self.values[var], contiguous=False)

    def bind(self, scope: Scope, var: Var, spec: Input) -> None:
        """A program input: a buffer version the program did not make (its class may
        have been joined to the buffer behind it already)."""
        self.parent.setdefault(var, var)
        self.define(scope, var, Value(frozenset({var}), spec.writable, spec.contiguous,
                                       spec.caller))

    def eligible(self, scope: Scope, atom: Atom, p: int) -> bool:
        """Whether equation ``p`` may overwrite ``atom``'s buffer."""
        if not (isinstance(atom, Var) and atom.type.ndim and self.is_version(atom)):
            return False
        return self.values[atom].writable and scope.dead_after(atom, p)

    def exclusive(self, eqn: Eqn, atom: Var) -> bool:
        """``atom``'s bytes reach ``eqn`` through one operand only."""
        return sum(1 for a in eqn.inputs if isinstance(a, Var) and atom in self.roots(a)) == 1

    def roots(self, atom: Atom) -> frozenset[Var]:
        value = self.values.get(atom) if isinstance(atom, Var) else None
        return value.roots if value is not None else frozenset()

    # -- programs ----------------------------------------------------------------------

    def program(self, program: Program, inputs: Sequence[Input | None],
                views: Mapping[int, int] | None = None) -> None:
        """Plan ``program``; ``views``: inputs that are views of other inputs (by index),
        whose bytes they read."""
        scope = Scope(program)
        for var, spec in zip(program.inputs, inputs, strict=True):
            if var.type.ndim:
                self.bind(scope, var, spec or Input())
        for view, base in (views or {}).items():
            var = program.inputs[view]
            spec = inputs[view] or Input()
            self.define(scope, var, Value(frozenset({program.inputs[base]}), False,
                                          spec.contiguous, spec.caller))
        for p, eqn in enumerate(program.eqns):
            self.rules.get(eqn.prim, self.default)(self, scope, p, eqn)

    def region_moves(self, values: Sequence[Atom], slots: Sequence[Var]) -> tuple[Move, ...]:
        """Moves that assign ``values[k]`` to the buffer of ``slots[k]``, all at once."""
        skip = [v is s or (bool(s.type.ndim) and self.is_version(v)
                           and self.find(v) is self.find(s))
                for v, s in zip(values, slots, strict=True)]
        overwritten = {self.find(s) for s, sk in zip(slots, skip, strict=True)
                       if s.type.ndim and not sk}
        moves = []
        for value, sk in zip(values, skip, strict=True):
            if sk:
                moves.append(Move.SKIP)
            elif any(self.find(r) in overwritten for r in self.roots(value)):
                moves.append(Move.STAGE)
            else:
                moves.append(Move.COPY)
        return tuple(moves)


