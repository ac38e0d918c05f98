"""Reading the C ABI's ``argv``: array structs, scalar arguments and size symbols.

``argv[i]`` points at ``aotc_array {void *data; const int64_t *shape, *strides;}`` for
an array parameter, or at the value of a scalar parameter in its dtype (see
:mod:`aotc.abi`). Both entry points read the size symbols the same way, here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from llvmlite import ir

from ... import abi
from ...ir import Atom, DimSource, Lit, Program, Var, nested_programs, runtime_errors
from ...ops.core import Primitive
from ...ops.index import python_number_p
from ...ops.shape import dim_value_p
from ...shapes import SYMBOL_LIMIT
from ..elementwise.convert import convert
from ..elementwise.scalar import rule_params, scalar_rule
from ..memory.layout import plan_layout
from ..parallel.loops import Outline
from .builder import KernelBuilder
from .context import Lowering
from .dims import DimEvaluator
from .dtypes import I64, INT64, PTR, constant, i64
from .libc import aligned_buffer, libc_function
from .runtime import RUNTIME_STRUCT
from .values import Scalar, Value, View, load_memory

UINT64 = np.dtype(np.uint64)

#: ``aotc_array`` field indices (each field is one pointer).
DATA, SHAPE, STRIDES = 0, 1, 2
ARRAY_STRUCT = ir.LiteralStructType([PTR, PTR, PTR])


class Args:
    """Lazily loaded pieces of ``argv`` (each loaded once, at the top of the function)."""

    def __init__(self, b: KernelBuilder, argv: ir.Value, program: Program,
                 rules: Mapping[Primitive, Any], info: ir.Value | None = None) -> None:
        self.b = b
        self.argv = argv
        self.program = program
        #: ``P_shapes``'s ``info``: an error computing a derived size fails the function
        #: with its check (see ``aotc.tracing.derived``); None in the kernel, where it cannot
        #: happen after ``P_shapes`` passed.
        self.info = info
        #: The lowering rules a derived size's program runs with (the kernel's own, given
        #: by :mod:`.entry`, which builds on this module).
        self.rules = rules
        self._ptrs: dict[int, ir.Value] = {}
        self._fields: dict[tuple[int, int], ir.Value] = {}

    def pointer(self, index: int) -> ir.Value:
        """``argv[index]``."""
        if index not in self._ptrs:
            slot = self.b.gep(self.argv, [i64(index)], source_etype=PTR)
            self._ptrs[index] = self.b.load(slot, typ=PTR, name=f"arg{index}")
        return self._ptrs[index]

    def field(self, index: int, field: int) -> ir.Value:
        """One pointer field of the ``aotc_array`` at ``argv[index]``."""
        key = (index, field)
        if key not in self._fields:
            addr = self.b.gep(self.pointer(index), [i64(0), ir.Constant(ir.IntType(32), field)],
                              source_etype=ARRAY_STRUCT)
            self._fields[key] = self.b.load(addr, typ=PTR)
        return self._fields[key]

    def shape_entry(self, index: int, axis: int, which: int = SHAPE) -> ir.Value:
        addr = self.b.gep(self.field(index, which), [i64(axis)], source_etype=I64)
        return self.b.load(addr, typ=I64)

    def scalar(self, index: int) -> Scalar:
        dtype = self.program.inputs[index].type.dtype
        return Scalar(load_memory(self.b, self.pointer(index), dtype, dtype.itemsize), dtype)

    def symbols(self) -> dict[str, ir.Value]:
        """Every size symbol of the program, from its :class:`~aotc.ir.DimSource`."""
        values: dict[str, ir.Value] = {}
        for src in self.program.dim_sources:
            if src.program is not None:  # after the symbols it may use (aotc.tracing.derived)
                value = self._derived(src, values)
                values[src.symbol] = self._clamped(value)
            elif src.axis is not None:
                values[src.symbol] = self.shape_entry(src.index, src.axis)
            else:
                values[src.symbol] = self._integer_symbol(src.index)
        return values

    def _derived(self, src: DimSource, symbols: dict[str, ir.Value]) -> ir.Value:
        """A size computed from the arguments: the source program's scalar equations (its
        whole reductions and loops of array arguments lowered as in the kernel)."""
        program = src.program
        assert program is not None
        if any(nested_programs(eqn) or any(v.type.ndim for v in (*eqn.inputs, *eqn.outs))
               for eqn in program.eqns):
            return self._lowered(src, program, symbols)
        env: dict[Var, Scalar] = {}

        def read(atom: Atom) -> Scalar:
            if isinstance(atom, Lit):
                return Scalar(constant(atom.type.dtype, atom.value), atom.type.dtype)
            if atom not in env:
                env[atom] = self.scalar(self.program.inputs.index(atom))
            return env[atom]

        dims = DimEvaluator(self.b, symbols)
        for eqn in program.eqns:
            out = eqn.outs[0]
            if eqn.prim is dim_value_p:
                env[out] = Scalar(dims(eqn.params["expr"]), INT64)
                continue
            if eqn.prim is python_number_p:  # sizes are computed as for NumPy scalars
                env[out] = Scalar(ir.Constant(ir.IntType(1), 0), out.type.dtype)
                continue
            args = [read(a).value for a in eqn.inputs]
            rule = scalar_rule(eqn.prim)
            value = rule(self.b, eqn.inputs[-1].type.dtype, *args, **rule_params(eqn))
            env[out] = Scalar(value, out.type.dtype)
        result = read(program.outputs[0])
        return convert(self.b, result.value, result.dtype, INT64)

    def _lowered(self, src: DimSource, program: Program, symbols: dict[str, ir.Value]
                 ) -> ir.Value:
        """``program`` lowered with the kernel's rules (its reductions and loops need
        them), in a function of its own, which an error it meets (an index out of range)
        leaves: ``P_shapes`` then fails with that error's check, its values from the
        runtime's ``detail``."""
        b = self.b
        dims = DimEvaluator(b, symbols)
        null = ir.Constant(PTR, None)
        runtime = b.entry_alloca(RUNTIME_STRUCT, name="derived.rt")
        b.store(ir.Constant(RUNTIME_STRUCT, None), runtime)  # no hooks: details only
        errors = {key: abi.FIRST_PROGRAM_ERROR + k
                  for k, key in enumerate(runtime_errors(program))}
        layout = plan_layout(program)
        arrays = not layout.scratch_bytes.is_const or bool(layout.scratch_bytes.value)
        inputs: list[Value] = [  # loaded here, where later code may use them again
            self.scalar(i) if var.type.ndim == 0 else
            self.view(i, var, tuple(dims(d) for d in var.type.shape))
            for i, var in enumerate(self.program.inputs)]
        value = b.entry_alloca(I64, name="derived", zero=True)
        code_slot = b.entry_alloca(I64, name="derived.code", zero=True)
        # Its arrays' windows hold where the kernel's checks do (``prev[0] = -1`` needs
        # ``0 < p.0``): run it only then (else ``P_shapes`` fails that check next).
        with b.if_then(self._checks_hold(symbols) if arrays else ir.Constant(ir.IntType(1), 1)):
            scratch = null
            if arrays:
                scratch = aligned_buffer(b, dims(layout.scratch_bytes))
                with b.if_then(b.icmp_unsigned("==", scratch, null), likely=False):
                    b.ret(i64(abi.TOO_BIG if self.info is not None else abi.OUT_OF_MEMORY))
            ctx = Lowering(b, dims, layout, null, scratch, runtime, self.rules, errors)
            region = Outline(ctx, "derived", serial=True)
            with region:
                (result,) = ctx.run(program, inputs)
                assert isinstance(result, Scalar)
                b.store(convert(b, result.value, result.dtype, INT64), value)
            b.store(region.code_of_call(), code_slot)
            if arrays:
                b.call(libc_function(b.module, "free",
                                     ir.FunctionType(ir.VoidType(), [PTR])), [scratch])
        code = b.load(code_slot, typ=I64)
        if self.info is not None:
            self._report(code, runtime, src.errors)
        return b.select(b.icmp_signed("!=", code, i64(0)), i64(0), b.load(value, typ=I64))

    def _checks_hold(self, symbols: dict[str, ir.Value]) -> ir.Value:
        """Whether the kernel's checks on the sizes known so far hold."""
        b, dims = self.b, DimEvaluator(self.b, symbols)
        holds: ir.Value = ir.Constant(ir.IntType(1), 1)
        for check in self.program.checks:
            if (check.lhs.symbols() | check.rhs.symbols()) <= symbols.keys():
                holds = b.and_(holds, b.icmp_signed(check.op, dims(check.lhs),
                                                    dims(check.rhs)))
        return holds

    def _report(self, code: ir.Value, runtime: ir.Value, checks: tuple[int, ...]) -> None:
        """Fail ``P_shapes`` with the check standing for error ``code`` (if nonzero)."""
        b, info = self.b, self.info
        for k, check in enumerate(checks):
            with b.if_then(b.icmp_signed("==", code, i64(abi.FIRST_PROGRAM_ERROR + k)),
                           likely=False):
                for slot in (1, 2):  # the message's {lhs} and {rhs}
                    detail = b.gep(runtime, [i64(0), ir.Constant(ir.IntType(32), 1),
                                             ir.Constant(ir.IntType(32), slot - 1)],
                                   source_etype=RUNTIME_STRUCT)
                    b.store(b.load(detail, typ=I64),
                            b.gep(info, [i64(slot)], source_etype=I64), align=8)
                b.ret(i64(check))

    def _integer_symbol(self, index: int) -> ir.Value:
        """An integer argument as an i64 size symbol, clamped to ``±SYMBOL_LIMIT`` (see
        :data:`aotc.shapes.SYMBOL_LIMIT`); a uint64 above int64's range reads as the limit."""
        s = self.scalar(index)
        b = self.b
        value = convert(b, s.value, s.dtype, INT64)
        if s.dtype == UINT64:
            value = b.select(b.icmp_signed("<", value, i64(0)), i64(SYMBOL_LIMIT), value)
        return self._clamped(value)

    def _clamped(self, value: ir.Value) -> ir.Value:
        b, limit = self.b, i64(SYMBOL_LIMIT)
        value = b.select(b.icmp_signed(">", value, limit), limit, value)
        return b.select(b.icmp_signed("<", value, i64(-SYMBOL_LIMIT)), i64(-SYMBOL_LIMIT), value)

    def view(self, index: int, var: Var, dims: tuple[ir.Value, ...]) -> View:
        """Input ``index`` as a View: its dims from the type, its strides from the caller."""
        strides = tuple(self.shape_entry(index, k, STRIDES) for k in range(var.type.ndim))
        return View(self.field(index, DATA), dims, strides, var.type.dtype, align=1)
