"""The two C entry points of one program: ``P_shapes`` and ``P`` (see :mod:`aotc.abi`).

``P_shapes`` runs the size checks, writes the output dims and the scratch size.
``P`` is the same short loop as the reference interpreter (:meth:`Lowering.run`): read
the operands, apply the equation's rule from :data:`EQN_RULES`, write the results; then
copy every output that was not computed in place into its buffer, and perform the
writes into arguments that the buffer plan did not already do in place.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir

from ... import abi
from ...errors import AotcError
from ...ir import (
    Program,
    Var,
    bound_uppers,
    returned_arguments,
    runs_loops,
    runtime_errors,
    size_expressions,
    value_types,
)
from ...ops.core import Primitive
from ...shapes import DimExpr, bound_symbols, size, upper_bound
from ..elementwise import nests
from ..elementwise.nests import copy_into
from ..linalg import dot_general as linalg
from ..linalg import external
from ..memory.layout import Layout, OutputHome
from ..memory.views import VIEW_RULES, ViewRule
from ..nests import control, epilogue, indexing, reductions
from ..parallel.gemm import RULES as PARALLEL_GEMM
from ..parallel.nest import RULES as PARALLEL_NESTS
from ..random import lowering as random_draws
from ..sorting import lowering as sorting
from ..targets.spec import TargetSpec
from . import boxes, calls
from .args import Args
from .builder import KernelBuilder, finish_function, start_function
from .context import EqnRule, Lowering
from .dims import DimEvaluator
from .dtypes import I64, PTR, i64
from .outline import KERNEL_EQUATIONS, equation_count
from .specialize import as_contiguous, contiguous
from .values import Scalar, View, contiguous_view, store_memory
from .writeback import Private, own_argument, write_back


def _view_eqn_rule(rule: ViewRule) -> EqnRule:
    return lambda ctx, eqn, args: [rule(ctx, eqn, *args)]


def _eqn_rules() -> dict[Primitive, EqnRule]:
    """One rule per primitive, merged from the family modules' tables."""
    rules: dict[Primitive, EqnRule] = {}
    for prim, view_rule in VIEW_RULES.items():
        rules[prim] = _view_eqn_rule(view_rule)
    for table in (nests.RULES, reductions.RULES, indexing.RULES, linalg.RULES, control.RULES,
                  epilogue.RULES, sorting.RULES, random_draws.RULES, external.RULES,
                  calls.RULES, boxes.RULES):
        rules.update(table)
    return rules


EQN_RULES: dict[Primitive, EqnRule] = _eqn_rules()
#: Rules that split large equations over threads (``parallel``; :mod:`.parallel`).
PARALLEL_RULES = {**PARALLEL_NESTS, **PARALLEL_GEMM}


def has_lowering(prim: Primitive) -> bool:
    """Whether codegen can lower ``prim`` (the registry test asks this of every one)."""
    return prim in EQN_RULES


def _declare(module: ir.Module, name: str, arg_names: tuple[str, ...]) -> ir.Function:
    fn = ir.Function(module, ir.FunctionType(I64, [PTR] * len(arg_names)), name)
    for arg, arg_name in zip(fn.args, arg_names, strict=True):
        arg.name = arg_name
    fn.attributes.add("nounwind")
    return fn


def _start(fn: ir.Function, fp_flags: tuple[str, ...], target: TargetSpec | None = None
           ) -> KernelBuilder:
    """:func:`start_function`, knowing the target's vector registers, if given."""
    if target is None:
        return start_function(fn, fp_flags)
    return start_function(fn, fp_flags, target.vector_bytes, target.has_fma)


def emit_shapes(module: ir.Module, name: str, program: Program, layout: Layout) -> None:
    """``int64_t name(void *const *argv, int64_t *out_dims, int64_t *info)``.

    Runs the program's checks, then proves every size the kernel will use valid: no
    size expression, element count or byte count overflows int64 (else
    :data:`~aotc.abi.TOO_BIG`) and no dim is negative (else
    :data:`~aotc.abi.NEGATIVE_DIMENSION`). An overflow is reported before the check it
    corrupted, so a wrapped-around value never yields a misleading message.
    """
    fn = _declare(module, name, ("argv", "out_dims", "info"))
    argv, out_dims, info = fn.args
    b = _start(fn, ())
    dims = DimEvaluator(b, Args(b, argv, program, EQN_RULES, info).symbols(), checked=True)

    def put(base: ir.Value, k: int, value: ir.Value) -> None:
        b.store(value, b.gep(base, [i64(k)], source_etype=I64), align=8)

    for k, check in enumerate(program.checks, start=1):
        lhs, rhs = dims(check.lhs), dims(check.rhs)
        b.fail_if(dims.overflow, abi.TOO_BIG)
        with b.if_then(b.not_(b.icmp_signed(check.op, lhs, rhs)), likely=False):
            put(info, 1, lhs)
            put(info, 2, rhs)
            b.ret(i64(k))
    # Sizes bound while the kernel runs are checked where they are bound (Lowering).
    for expr in size_expressions(program, guarded=False):  # starts, sizes: overflow?
        if not bound_symbols(expr):
            dims(expr)
    uppers = bound_uppers(program)
    work: DimExpr = DimExpr.const(0)
    for atype in value_types(program, guarded=False):
        elements = upper_bound(size(atype.shape), uppers)
        if atype.shape and elements is not None:
            dims(elements * atype.dtype.itemsize)
            work = work + elements
    scratch = dims(layout.scratch_bytes)
    b.fail_if(dims.overflow, abi.TOO_BIG)
    touched = DimEvaluator(b, dims.symbols)(work)  # an estimate: wrapping is harmless
    # Values in loop bodies and branches are checked where they are made (Lowering).
    shape_dims = dict.fromkeys(d for atype in value_types(program, guarded=False)
                               for d in atype.shape
                               if not d.is_nonneg() and not bound_symbols(d))
    for d in shape_dims:
        b.fail_if(b.icmp_signed("<", dims(d), i64(0)), abi.NEGATIVE_DIMENSION)
    slot = 0
    for atom in program.outputs:  # a size known only while running: its upper bound
        for d in atom.type.shape:
            bound = upper_bound(d, uppers)
            assert bound is not None  # tracing refuses results it cannot bound
            put(out_dims, slot, dims(bound))
            slot += 1
    put(info, 0, scratch)
    put(info, 3, touched)
    finish_function(b)


def emit_kernel(module: ir.Module, name: str, program: Program, layout: Layout,
                fp_flags: tuple[str, ...], target: TargetSpec | None = None) -> None:
    """``int64_t name(void *const *argv, void *const *outv, int64_t *out_dims,
    void *scratch, aotc_runtime *rt)``.

    A kernel with traced loops gets its body twice: once for C-contiguous arguments
    (constant strides, see :mod:`.specialize`), once generic. One that grows lists,
    sets or dicts is a wrapper around its body that frees them (:mod:`.boxes`).
    """
    wrapped = boxes.uses_boxes(program)
    fn = _declare(module, f"{name}.body" if wrapped else name,
                  ("argv", "outv", "out_dims", "scratch", "rt"))
    if wrapped:
        fn.linkage = "internal"
        boxes.emit_wrapper(module, name, fn)
    argv, outv, out_dims, scratch, runtime = fn.args
    b = _start(fn, fp_flags, target)
    args = Args(b, argv, program, EQN_RULES)
    dims = DimEvaluator(b, args.symbols())
    errors = {e: abi.FIRST_PROGRAM_ERROR + k for k, e in enumerate(runtime_errors(program))}
    split = PARALLEL_RULES if target is not None and target.parallel else None
    ctx = Lowering(b, dims, layout, outv, scratch, runtime, EQN_RULES, errors, split)
    callers = {index: args.view(index, var, ctx.shape(var))
               for index, var in enumerate(program.inputs) if var.type.ndim}
    inputs: list[Scalar | View] = []
    private: Private = {}
    for index, var in enumerate(program.inputs):
        if var.type.ndim == 0:
            inputs.append(args.scalar(index))
        elif layout.plan is not None and index in layout.plan.inplace_args:
            view, private[index] = own_argument(ctx, callers, program, index)
            inputs.append(view)
        else:
            inputs.append(callers[index])

    def body(values: list[Scalar | View], dests: dict[int, View]) -> None:
        version = Lowering(b, dims.child(), layout, outv, scratch, runtime, EQN_RULES, errors,
                           split, outline=big)
        _emit_body(version, program, values, dests, private)
        _report_runtime_sizes(version, program, out_dims)

    big = equation_count(program) >= KERNEL_EQUATIONS
    fast = contiguous(b, [*inputs, *callers.values()]) if runs_loops(program) else None
    if fast is None:
        body(inputs, callers)
    else:
        with b.if_else(fast, likely=True) as (then, otherwise):
            with then:
                body([as_contiguous(b, v) for v in inputs],
                     {k: as_contiguous(b, v) for k, v in callers.items()})  # type: ignore[misc]
            with otherwise:
                body(inputs, callers)
    finish_function(b)


def _emit_body(ctx: Lowering, program: Program, inputs: list[Scalar | View],
               dests: dict[int, View], private: Private) -> None:
    """The equations, then the output copies, then the writes into arguments."""
    try:
        ctx.run(program, inputs)
    except AotcError as error:
        error.with_context(kernel=program.name)
        raise
    returned = returned_arguments(program)
    for j, atom in enumerate(program.outputs):
        if j in returned or (isinstance(atom, Var) and ctx.layout.homes.get(atom) == \
                OutputHome(j)):
            continue  # the caller returns the argument itself, or computed in place
        _copy_output(ctx, j, atom.type.dtype, ctx.read(atom))
    write_back(ctx, dests, program, private)


def _report_runtime_sizes(ctx: Lowering, program: Program, out_dims: ir.Value) -> None:
    """The actual dims of outputs whose sizes were bound while the kernel ran (the
    caller allocated their upper bounds and keeps the front of each buffer)."""
    slot = 0
    for atom in program.outputs:
        for d in atom.type.shape:
            if bound_symbols(d):
                ctx.b.store(ctx.dims(d), ctx.b.gep(out_dims, [i64(slot)], source_etype=I64),
                            align=8)
            slot += 1


def _copy_output(ctx: Lowering, j: int, dtype: np.dtype, value: Scalar | View) -> None:
    data = ctx.output_pointer(j)
    if isinstance(value, Scalar):
        store_memory(ctx.b, value.value, data, dtype, dtype.itemsize)
    else:
        copy_into(ctx, value, contiguous_view(ctx.b, data, value.dims, dtype))
