"""Reading the C ABI's ``argv``: array structs, scalar arguments and size symbols.

``argv[i]`` points at ``aotc_array {void *data; const int64_t *shape, *strides;}`` for
an array parameter, or at the value of a scalar parameter in its dtype (see
:mod:`aotc.abi`). Both entry points read the size symbols the same way, here.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir

from ..ir import Atom, Lit, Program, Var
from ..ops.shape import dim_value_p
from ..shapes import SYMBOL_LIMIT
from . import nests, reductions
from .builder import KernelBuilder
from .context import Lowering
from .convert import convert
from .dims import DimEvaluator
from .dtypes import I64, INT64, PTR, constant, i64
from .layout import plan_layout
from .scalar import rule_params, scalar_rule
from .values import Scalar, Value, View, load_memory

UINT64 = np.dtype(np.uint64)

#: ``aotc_array`` field indices (each field is one pointer).
DATA, SHAPE, STRIDES = 0, 1, 2
ARRAY_STRUCT = ir.LiteralStructType([PTR, PTR, PTR])


class Args:
    """Lazily loaded pieces of ``argv`` (each loaded once, at the top of the function)."""

    def __init__(self, b: KernelBuilder, argv: ir.Value, program: Program) -> None:
        self.b = b
        self.argv = argv
        self.program = program
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
            if src.program is not None:  # after the symbols it may use (aotc.derived)
                value = self._derived(src.program, values)
                values[src.symbol] = self._clamped(value)
            elif src.axis is not None:
                values[src.symbol] = self.shape_entry(src.index, src.axis)
            else:
                values[src.symbol] = self._integer_symbol(src.index)
        return values

    def _derived(self, program: Program, symbols: dict[str, ir.Value]) -> ir.Value:
        """A size computed from the arguments: ``program``'s scalar equations (and whole
        reductions of array arguments, lowered as in the kernel)."""
        if any(eqn.outs[0].type.ndim != eqn.inputs[0].type.ndim for eqn in program.eqns
               if eqn.inputs):
            return self._lowered(program, symbols)
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
            args = [read(a).value for a in eqn.inputs]
            rule = scalar_rule(eqn.prim)
            value = rule(self.b, eqn.inputs[-1].type.dtype, *args, **rule_params(eqn))
            env[out] = Scalar(value, out.type.dtype)
        result = read(program.outputs[0])
        return convert(self.b, result.value, result.dtype, INT64)

    def _lowered(self, program: Program, symbols: dict[str, ir.Value]) -> ir.Value:
        """``program`` lowered with the kernel's rules (its reductions need loops)."""
        dims = DimEvaluator(self.b, symbols)
        null = ir.Constant(PTR, None)
        ctx = Lowering(self.b, dims, plan_layout(program), null, null, null,
                       {**nests.RULES, **reductions.RULES})
        inputs: list[Value] = [
            self.scalar(i) if var.type.ndim == 0 else
            self.view(i, var, tuple(dims(d) for d in var.type.shape))
            for i, var in enumerate(self.program.inputs)]
        (result,) = ctx.run(program, inputs)
        assert isinstance(result, Scalar)
        return convert(self.b, result.value, result.dtype, INT64)

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
