"""The state of lowering one program into its ``P`` function.

Every lowering rule gets a :class:`Lowering`: the builder, the size evaluator, the
layout, and the environment mapping IR variables to :class:`~.values.Value` s. It is
the ``read``/``write`` environment of Autodidax's interpreters, plus the few services
rules share (where a result must be written, and a pointer to a register value).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from llvmlite import ir

from ...abi import NEGATIVE_IN_KERNEL
from ...errors import AotcError, UnsupportedError
from ...ir import Atom, Eqn, Lit, Program, Var
from ...ops.core import Primitive
from ...shapes import bound_symbols
from ...tracing.avals import AType
from ..memory.layout import Home, Layout, OutputHome
from .builder import KernelBuilder
from .dims import DimEvaluator
from .dtypes import I64, PTR, constant, i64, mem_type
from .values import (
    Scalar,
    Value,
    View,
    contiguous_view,
    step_value,
    store_memory,
    sub_view,
    unit_axes_changed,
)


class Lowering:
    def __init__(self, b: KernelBuilder, dims: DimEvaluator, layout: Layout,
                 outv: ir.Value, scratch: ir.Value, runtime: ir.Value,
                 rules: Mapping[Primitive, Any],
                 errors: Mapping[tuple[str, str], int] | None = None,
                 parallel_rules: Mapping[Primitive, Any] | None = None,
                 outline: bool = False) -> None:
        self.b = b
        self.dims = dims
        self.layout = layout
        self.outv = outv
        self.scratch = scratch
        #: The caller's ``aotc_runtime *`` (may be NULL): loops poll it.
        self.runtime = runtime
        self.rules = rules
        #: The program's own errors -> the codes ``P`` returns for them.
        self.errors = errors or {}
        self.env: dict[Var, Value] = {}
        #: Buffer classes whose buffer changes while a loop runs (a carry trading buffers
        #: with the body's new value, :class:`.control.Slots`) -> the slot holding its
        #: current address.
        self.indirect: dict[Var, ir.Value] = {}
        #: How many nested regions (loop bodies, branches) lowering is inside.
        self.depth = 0
        #: Rules that split a large equation over the runtime's threads; each returns
        #: None to leave the equation to its ordinary rule (:mod:`.parallel`).
        self.parallel_rules = parallel_rules or {}
        #: Whether equations may run in parallel here (not inside an outlined chunk).
        self.parallel = bool(self.parallel_rules)
        #: Whether big top-level loops and branches get functions of their own
        #: (:mod:`.outline`: a big kernel's compile time).
        self.outline = outline
        #: Entry-block slots of values fetched once per call, at their first use (the
        #: random state): (function, what) -> the slot.
        self.slots: dict[tuple[ir.Function, str], ir.Value] = {}
        #: In a compiled function (:mod:`.calls`): how deep its call is; None in a kernel.
        self.call_depth: ir.Value | None = None

    def run(self, program: Program, inputs: Sequence[Value]) -> list[Value]:
        """Lower ``program``'s equations here, with its inputs bound to ``inputs``.

        The same loop serves the kernel and every nested program (loop bodies, branches).
        """
        for var, value in zip(program.inputs, inputs, strict=True):
            self.write(var, value)
        for eqn in program.eqns:
            rule = self.rules.get(eqn.prim)
            if rule is None:
                raise UnsupportedError(
                    f"no code generation rule for primitive '{eqn.prim.name}'", loc=eqn.loc)
            self._check_sizes(eqn)
            try:
                args = [self.read(a) for a in eqn.inputs]
                split = self.parallel_rules.get(eqn.prim) if self.parallel else None
                results = split(self, eqn, args) if split is not None else None
                if results is None:
                    results = rule(self, eqn, args)
            except AotcError as error:
                error.with_context(loc=eqn.loc)
                raise
            for var, value in zip(eqn.outs, results, strict=True):
                self.write(var, value)
        return [self.read(a) for a in program.outputs]

    def _check_sizes(self, eqn: Eqn) -> None:
        """In a loop body or branch, and where sizes are bound while the kernel runs, they
        were not proven valid at the kernel's entry (the code may not run for every input):
        a negative one fails here, before use."""
        for var in eqn.outs:
            for d in var.type.shape:
                if not d.is_nonneg() and (self.depth or bound_symbols(d)):
                    self.b.fail_if(self.b.icmp_signed("<", self.dims(d), i64(0)),
                                   NEGATIVE_IN_KERNEL)

    def error_code(self, error: str, message: str) -> int:
        """The code ``P`` returns to raise ``error(message)`` (see ``abi``)."""
        return self.errors[(error, message)]

    @contextmanager
    def region(self) -> Iterator[None]:
        """Lower a nested region (a loop body or a branch): sizes computed inside it stay
        inside it, so no later code uses a value its block does not dominate."""
        outer = self.dims
        self.dims = outer.child()
        self.depth += 1
        try:
            yield
        finally:
            self.dims = outer
            self.depth -= 1

    def read(self, atom: Atom) -> Value:
        if isinstance(atom, Lit):
            return Scalar(constant(atom.dtype, atom.value), atom.dtype)
        return self.env[atom]

    def write(self, var: Var, value: Value) -> None:
        self.env[var] = value

    def shape(self, var: Var) -> tuple[ir.Value, ...]:
        """The i64 dims of ``var``'s type (evaluated at the top level)."""
        return tuple(self.dims(d) for d in var.type.shape)

    def output_pointer(self, index: int) -> ir.Value:
        slot = self.b.gep(self.outv, [i64(index)], source_etype=PTR)
        return self.b.load(slot, typ=PTR, name=f"out{index}")

    def home(self, var: Var) -> View:
        """Where ``var`` is materialized: its C-contiguous buffer (from the layout), or
        a destination the buffer plan passes it: the block of the update consuming it
        (``BufferPlan.direct``, a strided sub-view of the update's base), or the buffer
        of the argument version it takes over (``BufferPlan.overwrite``)."""
        plan = self.layout.plan
        if plan is not None and var in plan.overwrite:
            into = self.read(plan.overwrite[var])
            assert isinstance(into, View)
            return into
        if plan is not None and var in plan.direct:
            update = plan.direct[var]
            base = self.read(update.inputs[0])
            assert isinstance(base, View)
            starts = [self.dims(s) for s in update.params["start"]]
            operand = update.inputs[1].type.shape  # var, maybe with size-1 axes changed
            steps = [step_value(self.dims, s) for s in update.params["step"]]
            block = sub_view(self.b, base, starts, steps,
                             [self.dims(d) for d in operand])
            return unit_axes_changed(block, operand, var.type.shape, self.shape(var))
        rep = plan.buffer.get(var) if plan is not None else None
        if rep is not None and rep in self.indirect:
            data = self.b.load(self.indirect[rep], typ=PTR)
            return contiguous_view(self.b, data, self.shape(var), var.type.dtype)
        return self.buffer(self.layout.homes[var], var.type)

    def buffer(self, where: Home, atype: AType) -> View:
        """A C-contiguous View of ``atype`` over an output buffer or a scratch slot."""
        if isinstance(where, OutputHome):
            data = self.output_pointer(where.index)
        else:
            data = self._separate_slot(where.offset)
        return contiguous_view(self.b, data, tuple(self.dims(d) for d in atype.shape),
                               atype.dtype)

    def _separate_slot(self, offset: Any) -> ir.Value:
        """A scratch slot LLVM sees as an object of its own (an address, not a GEP of
        ``scratch``). Slots of one ``scratch`` object accessed with different strides in
        one loop (a bool mask beside a complex array) defeat LLVM's dependence analysis:
        it then checks every pair of pointers at run time, also the real and imaginary
        parts of one complex array, which always "overlap", so the vector loop never
        ran. Distinct objects are only checked against each other, and that passes."""
        base = self.b.ptrtoint(self.scratch, I64)
        return self.b.inttoptr(self.b.add(base, self.dims(offset)), PTR)

    def pointer_to(self, scalar: Scalar) -> ir.Value:
        """Memory holding a register value (an entry-block alloca), for rank-0 views."""
        slot = self.b.entry_alloca(mem_type(scalar.dtype), name="rank0")
        store_memory(self.b, scalar.value, slot, scalar.dtype, scalar.dtype.itemsize)
        return slot

    def as_view(self, value: Value) -> View:
        """A Value as a View (a Scalar becomes a rank-0 View of its alloca)."""
        if isinstance(value, View):
            return value
        return View(self.pointer_to(value), (), (), value.dtype, align=value.dtype.itemsize)


#: A lowering rule: the equation's result values from its operands'.
EqnRule = Callable[[Lowering, Eqn, Sequence[Value]], list[Value]]
