"""Where every materialized value lives: an output buffer or a slot in scratch.

Planning is static and symbolic, so ``P_shapes`` (which reports the scratch size in
``info[0]``) and ``P`` (which uses the slots) compute the same layout from the same
:class:`Layout`. A value of rank >= 1 made by a loop (elementwise, reduction, or a
reshape that cannot be a view) gets a home: output buffer ``j`` when it is output ``j``
(its first occurrence), else the next scratch slot; values inside nested programs (loop
bodies, branches) get slots too, reused by every iteration. Slots are 64-byte aligned
and never shared between values (liveness-based reuse is the buffer pass's job,
later). Rank-0 results are registers and need no home; views need none either.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field

from ..abi import SCRATCH_ALIGN
from ..ir import Eqn, Program, Var
from ..ops.core import ALL_PRIMITIVES, VIEW
from ..ops.index import dynamic_slice_p
from ..ops.shape import broadcast_in_dim_p, refine_shape_p, reshape_p, transpose_p
from ..shapes import DimExpr, Shape, size
from .carries import LOOP_CARRIES, nested_programs
from .dtypes import check_supported


@dataclass(frozen=True)
class OutputHome:
    index: int


@dataclass(frozen=True)
class ScratchHome:
    offset: DimExpr


Home = OutputHome | ScratchHome


@dataclass(frozen=True)
class Layout:
    homes: Mapping[Var, Home]
    #: Values (rank >= 1) statically known to be C-contiguous.
    contiguous: frozenset[Var]
    scratch_bytes: DimExpr
    #: Scratch slots staging copies that could overlap their destination: writes into
    #: arguments (key ``("writeback", k)``) and loop carries (key ``(eqn, k)``).
    staging: Mapping[Hashable, ScratchHome] = field(default_factory=dict)


def _nonunit(shape: Shape) -> tuple[DimExpr, ...]:
    return tuple(d for d in shape if not (d.is_const and d.value == 1))


def reshape_is_view(eqn: Eqn, contiguous: bool) -> bool:
    """A reshape is a view of contiguous data, or when it only adds/drops size-1 axes."""
    (x,), (out,) = eqn.inputs, eqn.outs
    return contiguous or _nonunit(x.type.shape) == _nonunit(out.type.shape)


#: Primitives whose result is a new index map over their first operand's bytes.
VIEW_PRIMITIVES = frozenset(p for p in ALL_PRIMITIVES.values() if p.has(VIEW)) | {
    dynamic_slice_p}


def _materializes(eqn: Eqn, contiguous: frozenset[Var] | set[Var]) -> bool:
    """Everything but views (and rank-0 results, which are registers) is a loop's output."""
    if all(v.type.ndim == 0 for v in eqn.outs):
        return False
    if eqn.prim is reshape_p:
        x = eqn.inputs[0]
        return not reshape_is_view(eqn, x.type.ndim == 0 or x in contiguous)
    return eqn.prim not in VIEW_PRIMITIVES


def _view_keeps_contiguity(eqn: Eqn) -> bool:
    """Views whose result is C-contiguous whenever their input is."""
    params = dict(eqn.params)
    if eqn.prim in (reshape_p, refine_shape_p):
        return True
    if eqn.prim is transpose_p:
        return tuple(params["permutation"]) == tuple(range(eqn.outs[0].type.ndim))
    if eqn.prim is broadcast_in_dim_p:
        dims = tuple(params["broadcast_dimensions"])
        out, x = eqn.outs[0].type.shape, eqn.inputs[0].type.shape
        added = [d for k, d in enumerate(out) if k not in dims]
        return (list(dims) == sorted(dims) and all(d.is_const and d.value == 1 for d in added)
                and all(x[i] == out[a] for i, a in enumerate(dims)))
    return False


def _round_up(nbytes: DimExpr) -> DimExpr:
    return (nbytes + (SCRATCH_ALIGN - 1)) // SCRATCH_ALIGN * SCRATCH_ALIGN


class _Planner:
    """Hands out 64-byte aligned scratch slots in program order."""

    def __init__(self) -> None:
        self.offset = DimExpr.const(0)
        self.homes: dict[Var, Home] = {}
        self.contiguous: set[Var] = set()
        self.staging: dict[Hashable, ScratchHome] = {}

    def slot(self, shape: Shape, itemsize: int) -> ScratchHome:
        home = ScratchHome(self.offset)
        self.offset = self.offset + _round_up(size(shape) * itemsize)
        return home

    def eqns(self, program: Program, first_output: Mapping[Var, int]) -> None:
        for eqn in program.eqns:
            for v in eqn.outs:
                check_supported(v.type.dtype)
            for nested in nested_programs(eqn):
                for v in nested.inputs:
                    check_supported(v.type.dtype)
                self.eqns(nested, {})
            if eqn.prim in LOOP_CARRIES:
                self._stage_carries(eqn)
            if _materializes(eqn, self.contiguous):
                for out in eqn.outs:
                    if out.type.ndim == 0:
                        continue
                    self.homes[out] = (OutputHome(first_output[out]) if out in first_output
                                       else self.slot(out.type.shape, out.type.dtype.itemsize))
                    self.contiguous.add(out)
            elif eqn.outs and eqn.outs[0].type.ndim and _view_keeps_contiguity(eqn):
                x = eqn.inputs[0]
                if not isinstance(x, Var) or x.type.ndim == 0 or x in self.contiguous:
                    self.contiguous.add(eqn.outs[0])


    def _stage_carries(self, eqn: Eqn) -> None:
        """A carried array the body returns as a view (of a carry, say) is copied to a
        staging slot before any carry buffer is overwritten."""
        _, carry_in, carry_out = LOOP_CARRIES[eqn.prim](eqn)
        for k, (var, atom) in enumerate(zip(carry_in, carry_out)):
            if (isinstance(atom, Var) and atom.type.ndim and atom not in self.homes
                    and atom is not var):
                self.staging[(eqn, k)] = self.slot(atom.type.shape, atom.type.dtype.itemsize)


def plan_layout(program: Program) -> Layout:
    """Assign homes to materialized values; also rejects unsupported dtypes up front.

    A write into an argument whose new value is not in a buffer of our own (it is an
    input or a view of one) is staged through a scratch slot, so no write into an
    argument can change what another write (or an output copy) reads.
    """
    for v in program.inputs:
        check_supported(v.type.dtype)
    first_output: dict[Var, int] = {}
    for j, atom in enumerate(program.outputs):
        check_supported(atom.type.dtype)
        if isinstance(atom, Var) and atom not in first_output:
            first_output[atom] = j
    planner = _Planner()
    planner.eqns(program, first_output)
    for k, (index, atom) in enumerate(program.writebacks):
        if (isinstance(atom, Var) and atom.type.ndim and atom not in planner.homes
                and atom is not program.inputs[index]):
            planner.staging[("writeback", k)] = planner.slot(atom.type.shape,
                                                             atom.type.dtype.itemsize)
    return Layout(planner.homes, frozenset(planner.contiguous), planner.offset,
                  planner.staging)
