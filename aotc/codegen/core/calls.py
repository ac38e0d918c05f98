"""``call`` equations: each callee a function of the module, emitted once.

A callee (:mod:`aotc.ops.calls`) becomes ``internal i64 f(rt, results*, depth, args...)``:
a scalar argument in a register, an array as its data pointer, dims and byte strides
(a View, as NumPy's own representation); the scalar results stored through the
pointer (a struct of them in the caller's frame), and the error code returned as the
kernel's own (0, or a code of the kernel's table: the callee's errors are in it, see
:func:`aotc.ir.runtime_errors`). ``depth`` counts the calls under the kernel; past
:data:`~aotc.ops.calls.DEPTH_LIMIT` the call fails with
RecursionError rather than overflowing the C stack. Its body is lowered with the
kernel's rules by a :class:`~.context.Lowering` of its own, with its array arguments'
sizes as its size symbols; its declaration is in the module before that, so a call to
itself finds it.

A callee writes into its array arguments as a kernel does (:mod:`.writeback`), with
no overlap check: each array it is given is private (the kernel's entry made its own
arguments so, the caller's other arrays are buffers of their own, and a call with two
views of one array is inlined instead, see ``aotc.tracing.functions.kinds``). One
whose program needs scratch (arrays of its own) allocates it on each call: ``f`` is
then a wrapper that allocates, calls ``f.body`` and frees, whatever it returned.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence

from llvmlite import ir

from ... import abi
from ...ir import Atom, Eqn, Program, Var
from ...ops.calls import DEPTH_LIMIT, Callee, call_p, first_written, written
from ...ops.core import Primitive
from ..elementwise.nests import copy_into
from ..memory.layout import Layout, OutputHome, plan_layout
from .builder import finish_function, start_function
from .context import EqnRule, Lowering
from .dims import DimEvaluator
from .dtypes import I64, PTR, i32, i64, mem_type, reg_type
from .libc import aligned_buffer, libc_function
from .values import Scalar, Value, View, load_memory, store_memory
from .writeback import write_back

_NULL = ir.Constant(PTR, None)


def _function_name(callee: Callee) -> str:
    """A name for the callee's code: the same program, the same function (two kernels of
    a module calling one helper share it), wherever it is called from."""
    digest = hashlib.sha256(str(callee.optimized or callee.program).encode()).hexdigest()[:12]
    return f"aotc.fn.{callee.name.replace('$', '.')}.{digest}"


def _parameter_types(program: Program) -> list[ir.Type]:
    """A scalar's register type; an array's data pointer, dims and strides: each input,
    then each array output (the caller's buffer for it)."""
    types: list[ir.Type] = []
    for v in program.inputs:
        ndim = v.type.ndim
        types.extend([PTR, *[I64] * (2 * ndim)] if ndim else [reg_type(v.type.dtype)])
    for out in program.outputs:
        if out.type.ndim:
            types.extend([PTR, *[I64] * (2 * out.type.ndim)])
    return types


def _views(atoms: Sequence[Atom], rest: Iterator[ir.Value]) -> list[Value]:
    """Values of ``atoms`` from the function's parameters ``rest``, as
    :func:`_parameter_types` lays them out."""
    values: list[Value] = []
    for v in atoms:
        ndim, dtype = v.type.ndim, v.type.dtype
        if not ndim:
            values.append(Scalar(next(rest), dtype))
            continue
        data = next(rest)
        dims = tuple(next(rest) for _ in range(ndim))
        values.append(View(data, dims, tuple(next(rest) for _ in range(ndim)), dtype))
    return values


def _buffers(outputs: Sequence[Atom], rest: Iterator[ir.Value]) -> dict[int, View]:
    """The caller's buffers for the arrays among ``outputs``, by output position."""
    arrays = [j for j, v in enumerate(outputs) if v.type.ndim]
    views = _views([outputs[j] for j in arrays], rest)
    return {j: v for j, v in zip(arrays, views, strict=True) if isinstance(v, View)}


def _arguments(program: Program, flat: Sequence[ir.Value]) -> list[Value]:
    """The inputs of ``program`` from its function's parameters."""
    return _views(program.inputs, iter(flat))


def _symbols(program: Program, values: Sequence[Value]) -> dict[str, ir.Value]:
    """The program's size symbols: its array arguments' dims."""
    symbols: dict[str, ir.Value] = {}
    for src in program.dim_sources:
        value = values[src.index]
        assert isinstance(value, View) and src.axis is not None
        symbols[src.symbol] = value.dims[src.axis]
    return symbols


def _function(ctx: Lowering, callee: Callee) -> ir.Function:
    module = ctx.b.module
    name = _function_name(callee)
    if name in module.globals:
        found: ir.Function = module.globals[name]
        return found
    program = callee.optimized or callee.program  # (a program lowered without the passes)
    ftype = ir.FunctionType(I64, [PTR, PTR, I64, *_parameter_types(program)])
    fn = ir.Function(module, ftype, name)
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    layout = plan_layout(program, private_arguments=True)
    scratch_free = layout.scratch_bytes.is_const and layout.scratch_bytes.value == 0
    if scratch_free:
        _body(ctx, fn, program, layout, scratch=None)
        return fn
    body = ir.Function(module, ir.FunctionType(I64, [PTR, *ftype.args]), f"{name}.body")
    body.linkage = "internal"
    body.attributes.add("nounwind")
    _body(ctx, body, program, layout, scratch=0)
    _allocating(ctx, fn, body, program, layout)
    return fn


def _allocating(ctx: Lowering, fn: ir.Function, body: ir.Function, program: Program,
                layout: Layout) -> None:
    """``fn``: scratch for ``body`` allocated for its arguments' sizes, ``body`` called
    with it, and freed, whatever ``body`` returned."""
    b = start_function(fn, ctx.b.fp_flags, ctx.b.vector_bytes, ctx.b.fma)
    runtime, result, depth, *flat = fn.args
    dims = DimEvaluator(b, _symbols(program, _arguments(program, flat)))
    scratch = aligned_buffer(b, dims(layout.scratch_bytes))
    with b.if_then(b.icmp_unsigned("==", scratch, _NULL), likely=False):
        b.ret(i64(abi.OUT_OF_MEMORY))
    code = b.call(body, [scratch, runtime, result, depth, *flat])
    b.call(libc_function(b.module, "free", ir.FunctionType(ir.VoidType(), [PTR])), [scratch])
    b.ret(code)
    entry, start = fn.basic_blocks[:2]
    with b.goto_block(entry):
        b.branch(start)


def _body(ctx: Lowering, fn: ir.Function, program: Program, layout: Layout,
          scratch: int | None) -> None:
    """The callee's code in ``fn`` (its parameter ``scratch``, if given, is the scratch
    pointer): the program, its result stored, its writes into arguments done."""
    b = start_function(fn, ctx.b.fp_flags, ctx.b.vector_bytes, ctx.b.fma)
    params = list(fn.args)
    scratch_ptr = params.pop(scratch) if scratch is not None else _NULL
    runtime, result, depth, *flat = params
    b.fail_if(b.icmp_signed(">", depth, i64(DEPTH_LIMIT)), abi.RECURSION_TOO_DEEP)
    rest = iter(flat)
    callers = _views(program.inputs, rest)
    buffers = _buffers(program.outputs, rest)
    # The caller's buffers are the program's output buffers: computed in place there.
    outv = b.entry_alloca(ir.ArrayType(PTR, max(len(program.outputs), 1)))
    for j, buffer in buffers.items():
        b.store(buffer.data, b.gep(outv, [i64(0), i64(j)], source_etype=outv.allocated_type))
    inner = Lowering(b, DimEvaluator(b, _symbols(program, callers)), layout, outv,
                     scratch_ptr, runtime, ctx.rules, ctx.errors)
    inner.call_depth = depth
    values = inner.run(program, callers)
    slots = _results_type(program.outputs)
    field = 0
    for j, (atom, value) in enumerate(zip(program.outputs, values, strict=True)):
        if isinstance(value, View):  # an array it makes: into the caller's buffer
            if not (isinstance(atom, Var) and layout.homes.get(atom) == OutputHome(j)):
                copy_into(inner, value, buffers[j])
            continue
        assert isinstance(value, Scalar)
        at = b.gep(result, [i32(0), i32(field)], source_etype=slots)
        store_memory(b, value.value, at, value.dtype, value.dtype.itemsize)
        field += 1
    write_back(inner, {k: v for k, v in enumerate(callers) if isinstance(v, View)}, program,
               private={})
    finish_function(b)


def _results_type(outputs: Sequence[Atom]) -> ir.LiteralStructType:
    """Where a callee stores its scalar results: a struct in the caller's frame."""
    return ir.LiteralStructType([mem_type(v.type.dtype) for v in outputs if not v.type.ndim])


def _passed(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    """The operands as the callee gets them: an array it writes into is the buffer its
    new version has (the operand's own, when the plan lets the call take it over, else
    a fresh one holding a copy of it)."""
    plan = ctx.layout.plan
    assert plan is not None
    passed = list(args)
    for k, position in enumerate(written(eqn), start=first_written(eqn)):
        if (eqn, k) in plan.reuse:
            continue
        home = ctx.home(eqn.outs[k])
        copy_into(ctx, args[position], home)
        passed[position] = home
    return passed


def lower_call(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    """Call the callee's function; a nonzero code returns from this function too."""
    callee: Callee = eqn.params["callee"]
    fn = _function(ctx, callee)
    b = ctx.b
    results = eqn.outs[:first_written(eqn)]
    slots = _results_type(results)
    slot = b.entry_alloca(slots)
    depth = b.add(ctx.call_depth, i64(1)) if ctx.call_depth is not None else i64(1)
    passed = _passed(ctx, eqn, args)
    made = {k: ctx.home(out) for k, out in enumerate(results) if out.type.ndim}
    flat: list[ir.Value] = []
    for a in [*passed, *made.values()]:
        flat.extend([a.data, *a.dims, *a.strides] if isinstance(a, View) else [a.value])
    code = b.call(fn, [ctx.runtime, slot, depth, *flat])
    with b.if_then(b.icmp_signed("!=", code, i64(0)), likely=False):
        b.ret(code)
    values: list[Value] = []
    field = 0
    for k, out in enumerate(results):
        if k in made:
            values.append(made[k])
            continue
        dtype = out.type.dtype
        at = b.gep(slot, [i32(0), i32(field)], source_etype=slots)
        values.append(Scalar(load_memory(b, at, dtype, dtype.itemsize), dtype))
        field += 1
    return [*values, *(passed[position] for position in written(eqn))]


RULES: dict[Primitive, EqnRule] = {
    call_p: lower_call}
