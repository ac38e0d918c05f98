"""Where every materialized value lives: an output buffer, a scratch slot, or the caller's
array.

Planning is static and symbolic, so ``P_shapes`` (which reports the scratch size in
``info[0]``) and ``P`` (which uses the slots) compute the same layout from the same
:class:`Layout`. :mod:`.inplace` groups the values that share one buffer over time into
classes (an update written in place, a loop carry and the value it started from); here
each class of our own gets one home: output buffer ``j`` when one of its values is
output ``j`` (its first occurrence), else the next scratch slot. Values inside nested
programs (loop bodies, branches) get slots too, reused by every iteration. Slots are
64-byte aligned and never shared between classes. Rank-0 results are registers and need
no home; views need none either; classes of caller arrays live in the caller's memory.

Staging slots hold copies that could overlap their destination (see :class:`Layout`).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field

from ...abi import SCRATCH_ALIGN
from ...errors import UnsupportedError
from ...ir import Program, Var, bound_uppers, nested_programs, returned_arguments
from ...ops.control import cond_p
from ...shapes import DimExpr, relu, size, upper_bound
from ...tracing.avals import AType
from ..core.carries import LOOP_FORMS
from ..core.dtypes import check_supported
from .inplace import BufferPlan, Move, Update, plan_buffers
from .workspace import workspace


@dataclass(frozen=True)
class OutputHome:
    index: int


@dataclass(frozen=True)
class ScratchHome:
    offset: DimExpr


Home = OutputHome | ScratchHome


@dataclass(frozen=True)
class Layout:
    #: Every value living in a buffer of our own (all values of a class share a home).
    homes: Mapping[Var, Home]
    #: Values (rank >= 1) statically known to be C-contiguous.
    contiguous: frozenset[Var]
    scratch_bytes: DimExpr
    #: Scratch slots for copies that could overlap their destination, keyed
    #: ``("writeback", k)`` (writes into arguments), ``(loop, k)`` (back edges),
    #: ``(cond, branch, k)`` (branch results), ``(update, "operand")`` (staged update
    #: operands), and ``("argument", index)`` (the fallback for an argument written in
    #: place whose array overlaps itself or another argument); ``(eqn, "work", k)``
    #: are the work buffers of an equation's lowering (see :mod:`.workspace`).
    staging: Mapping[Hashable, ScratchHome] = field(default_factory=dict)
    plan: BufferPlan | None = None


def _round_up(nbytes: DimExpr) -> DimExpr:
    return (nbytes + (SCRATCH_ALIGN - 1)) // SCRATCH_ALIGN * SCRATCH_ALIGN


class _Slots:
    """Hands out 64-byte aligned scratch slots in order."""

    def __init__(self, uppers: Mapping[str, DimExpr]) -> None:
        self.offset = DimExpr.const(0)
        #: Size symbols bound while the kernel runs, with their upper bounds.
        self.uppers = uppers

    def take(self, atype: AType) -> ScratchHome:
        """A slot for ``atype``. A value in a loop body or branch may have a negative size
        where that code does not run (it fails where it does), so each dim counts as
        ``relu(d)``: the same where the code runs, never negative. A size bound while the
        kernel runs counts as its upper bound."""
        home = ScratchHome(self.offset)
        dims = []
        for d in atype.shape:
            bound = upper_bound(relu(d), self.uppers)
            if bound is None:
                raise UnsupportedError(f"cannot bound the size {d} of a value made while the "
                                       "kernel runs, to plan its buffer")
            dims.append(bound)
        nbytes = size(tuple(dims)) * atype.dtype.itemsize
        self.offset = self.offset + _round_up(nbytes)
        return home


def _check_dtypes(program: Program) -> None:
    for v in program.inputs:
        check_supported(v.type.dtype)
    for atom in program.outputs:
        check_supported(atom.type.dtype)
    for eqn in program.eqns:
        for v in eqn.outs:
            check_supported(v.type.dtype)
        for nested in nested_programs(eqn):
            _check_dtypes(nested)


def _staged_types(program: Program, plan: BufferPlan) -> list[tuple[Hashable, AType]]:
    """Every staging slot the plan asks for, in program order."""
    found: list[tuple[Hashable, AType]] = []
    for eqn in program.eqns:
        for nested in nested_programs(eqn):
            found.extend(_staged_types(nested, plan))
        found.extend(((eqn, "work", k), atype) for k, atype in enumerate(workspace(eqn)))
        if plan.updates.get(eqn) is Update.STAGED:
            found.append(((eqn, "operand"), eqn.inputs[1].type))
        if eqn.prim in LOOP_FORMS:
            values = LOOP_FORMS[eqn.prim](eqn).carry_out
            found.extend(((eqn, k), a.type) for k, (a, m)
                         in enumerate(zip(values, plan.moves[(eqn,)], strict=True))
                         if m is Move.STAGE)
        for b, branch in enumerate(eqn.params["branches"] if eqn.prim is cond_p else ()):
            found.extend(((eqn, b, k), a.type) for k, (a, m)
                         in enumerate(zip(branch.outputs, plan.moves[(eqn, b)], strict=True))
                         if m is Move.STAGE)
    return found


def plan_layout(program: Program, private_arguments: bool = False) -> Layout:
    """Assign homes to buffer classes and staging slots; also rejects unsupported dtypes
    up front. ``private_arguments``: no array argument overlaps another (a compiled
    function's, see ``aotc.codegen.core.calls``), so one written in place needs no
    fallback slot."""
    _check_dtypes(program)
    plan = plan_buffers(program)
    first_output: dict[Var, int] = {}
    returned = returned_arguments(program)  # the caller returns the argument: no buffer
    for j, atom in enumerate(program.outputs):
        if j in returned:
            continue
        if isinstance(atom, Var) and atom in plan.buffer:
            first_output.setdefault(plan.buffer[atom], j)
    slots = _Slots(bound_uppers(program))
    class_home: dict[Var, Home] = {}
    for rep in plan.owned:
        class_home[rep] = (OutputHome(first_output[rep]) if rep in first_output
                           else slots.take(rep.type))
    homes = {v: class_home[rep] for v, rep in plan.buffer.items()}
    staging: dict[Hashable, ScratchHome] = {}
    for key, atype in _staged_types(program, plan):
        staging[key] = slots.take(atype)
    writeback_moves = plan.moves[("writeback",)]
    for k, ((_, atom), move) in enumerate(zip(program.writebacks, writeback_moves, strict=True)):
        if move is Move.STAGE:
            staging[("writeback", k)] = slots.take(atom.type)
    if not private_arguments:
        for index in sorted(plan.inplace_args):
            staging[("argument", index)] = slots.take(program.inputs[index].type)
    return Layout(homes, plan.contiguous, slots.offset, staging, plan)
