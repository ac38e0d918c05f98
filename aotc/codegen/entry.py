"""The two C entry points of one program: ``P_shapes`` and ``P`` (see :mod:`aotc.abi`).

``P_shapes`` runs the size checks, writes the output dims and the scratch size.
``P`` is the same short loop as the reference interpreter (:meth:`Lowering.run`): read
the operands, apply the equation's rule from :data:`EQN_RULES`, write the results; then
copy every output that was not computed in place into its buffer, and perform the
writes into arguments.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir

from ..errors import AotcError
from ..ir import Program, Var
from ..ops.core import Primitive
from . import control, indexing, linalg, nests, reductions
from .args import Args
from .builder import KernelBuilder
from .context import Lowering
from .dims import DimEvaluator
from .dtypes import I64, PTR, i64
from .layout import Layout, OutputHome
from .nests import EqnRule, copy_into
from .values import Scalar, View, contiguous_view, store_memory
from .views import VIEW_RULES

_ENTRY_TYPE = ir.FunctionType(I64, [PTR, PTR, PTR])


def _eqn_rules() -> dict[Primitive, EqnRule]:
    """One rule per primitive, merged from the family modules' tables."""
    rules: dict[Primitive, EqnRule] = {}
    for prim, view_rule in VIEW_RULES.items():
        rules[prim] = lambda ctx, eqn, args, r=view_rule: [r(ctx, eqn, *args)]
    for table in (nests.RULES, reductions.RULES, indexing.RULES, linalg.RULES, control.RULES):
        rules.update(table)
    return rules


EQN_RULES: dict[Primitive, EqnRule] = _eqn_rules()


def has_lowering(prim: Primitive) -> bool:
    """Whether codegen can lower ``prim`` (the registry test asks this of every one)."""
    return prim in EQN_RULES


def _declare(module: ir.Module, name: str, arg_names: tuple[str, ...]) -> ir.Function:
    fn = ir.Function(module, _ENTRY_TYPE, name)
    for arg, arg_name in zip(fn.args, arg_names):
        arg.name = arg_name
    fn.attributes.add("nounwind")
    return fn


def _start(fn: ir.Function, fp_flags: tuple[str, ...]) -> KernelBuilder:
    """A builder positioned after the entry block, which holds only allocas (and is
    closed by :func:`_finish`)."""
    fn.append_basic_block("entry")
    return KernelBuilder(fn.append_basic_block("start"), fp_flags)


def _finish(b: KernelBuilder) -> None:
    b.ret(i64(0))
    entry, start = b.function.basic_blocks[:2]
    with b.goto_block(entry):
        b.branch(start)


def emit_shapes(module: ir.Module, name: str, program: Program, layout: Layout) -> None:
    """``int64_t name(void *const *argv, int64_t *out_dims, int64_t *info)``."""
    fn = _declare(module, name, ("argv", "out_dims", "info"))
    argv, out_dims, info = fn.args
    b = _start(fn, ())
    dims = DimEvaluator(b, Args(b, argv, program).symbols())

    def put(base: ir.Value, k: int, value: ir.Value) -> None:
        b.store(value, b.gep(base, [i64(k)], source_etype=I64), align=8)

    for k, check in enumerate(program.checks, start=1):
        lhs, rhs = dims(check.lhs), dims(check.rhs)
        holds = b.icmp_signed(check.op, lhs, rhs)
        failed = fn.append_basic_block(f"check{k}.failed")
        passed = fn.append_basic_block(f"check{k}.ok")
        b.cbranch(holds, passed, failed)
        b.position_at_end(failed)
        put(info, 1, lhs)
        put(info, 2, rhs)
        b.ret(i64(k))
        b.position_at_end(passed)
    slot = 0
    for atom in program.outputs:
        for d in atom.type.shape:
            put(out_dims, slot, dims(d))
            slot += 1
    put(info, 0, dims(layout.scratch_bytes))
    _finish(b)


def emit_kernel(module: ir.Module, name: str, program: Program, layout: Layout,
                fp_flags: tuple[str, ...]) -> None:
    """``int64_t name(void *const *argv, void *const *outv, void *scratch)``."""
    fn = _declare(module, name, ("argv", "outv", "scratch"))
    argv, outv, scratch = fn.args
    b = _start(fn, fp_flags)
    args = Args(b, argv, program)
    ctx = Lowering(b, DimEvaluator(b, args.symbols()), layout, outv, scratch, EQN_RULES)
    inputs = [args.scalar(index) if var.type.ndim == 0 else args.view(index, var, ctx.shape(var))
              for index, var in enumerate(program.inputs)]
    try:
        ctx.run(program, inputs)
    except AotcError as error:
        error.with_context(kernel=program.name)
        raise
    for j, atom in enumerate(program.outputs):
        if isinstance(atom, Var) and layout.homes.get(atom) == OutputHome(j):
            continue  # computed in place
        _copy_output(ctx, j, atom.type.dtype, ctx.read(atom))
    _write_back(ctx, args, program)
    _finish(b)


def _write_back(ctx: Lowering, args: Args, program: Program) -> None:
    """Writes into arguments, after the outputs are copied (they read the old values).

    Sources that could read an argument are staged in scratch first (see the layout),
    so the writes cannot affect each other.
    """
    writes = []
    for k, (index, atom) in enumerate(program.writebacks):
        var = program.inputs[index]
        if var.type.ndim == 0 or atom is var:
            continue  # a scalar argument is passed by value; x = x is nothing to do
        value = ctx.read(atom)
        if ("writeback", k) in ctx.layout.staging:
            staged = ctx.buffer(ctx.layout.staging[("writeback", k)], atom.type)
            copy_into(ctx, value, staged)
            value = staged
        writes.append((args.view(index, var, ctx.shape(var)), value))
    for dest, value in writes:
        copy_into(ctx, value, dest)


def _copy_output(ctx: Lowering, j: int, dtype: np.dtype, value: Scalar | View) -> None:
    data = ctx.output_pointer(j)
    if isinstance(value, Scalar):
        store_memory(ctx.b, value.value, data, dtype, dtype.itemsize)
    else:
        copy_into(ctx, value, contiguous_view(ctx.b, data, value.dims, dtype))
