"""``numpy_loop``: a call of NumPy's own gufunc loop (:mod:`aotc.ops.numpy_loops`), as
NumPy's ufunc machinery makes it.

The loop gets ``args`` (each operand's first element), ``dimensions`` (the repetitions,
then each distinct core dimension in order of first appearance) and ``steps`` (each
operand's stride between repetitions, then every operand's core strides in operand
order): Views are NumPy's own layout, so operands go in place, whatever their strides.
The repetitions are the last batch axis; a loop nest runs over the batch axes before it.
A rank-0 result goes through a stack slot. The loop's function and data pointers come
from the table the module fills at import (``aotc_numpy_loops``); with the equation's
``flag``, the floating-point invalid flag the loop leaves says whether it failed (any
repetition), and is cleared.
"""

from __future__ import annotations

from collections.abc import Sequence

from llvmlite import ir

from ...ir import Eqn
from ...ops.core import Primitive
from ...ops.external import BY_NAME, numpy_loop_p
from ...ops.numpy_loops import LOOPS, TABLE_SYMBOL
from ...ops.ufunc_signature import CoreDim
from ..core.context import EqnRule, Lowering
from ..core.dtypes import BOOL, I64, PTR, i64, mem_type
from ..core.libc import libc_function
from ..core.loops import loop_nest
from ..core.values import Scalar, Value, View, element_ptr, load

I32 = ir.IntType(32)
LOOP_TYPE = ir.FunctionType(ir.VoidType(), [PTR, PTR, PTR, PTR])
#: ``FE_INVALID`` on x86-64 and aarch64 alike.
FE_INVALID = 1


def _table(module: ir.Module) -> ir.Value:
    found = module.globals.get(TABLE_SYMBOL)
    if found is None:
        found = ir.GlobalVariable(module, PTR, TABLE_SYMBOL)  # defined by the module
    return found


def lower_numpy_loop(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    b = ctx.b
    entry = BY_NAME[eqn.params["loop"]]
    cores = entry.operands
    results = eqn.outs[:len(cores) - entry.nin]
    homes = [ctx.home(v) if v.type.ndim else
             View(b.entry_alloca(mem_type(v.type.dtype), name="rank0"), (), (),
                  v.type.dtype, v.type.dtype.itemsize) for v in results]
    operands = [ctx.as_view(a) for a in args] + homes
    batch = next((v.dims[:v.ndim - len(core)] for v, core in zip(operands, cores, strict=True)
                  if v.ndim > len(core)), ())
    sizes: dict[CoreDim, ir.Value] = {}
    for view, core in zip(operands, cores, strict=True):
        for axis, name in enumerate(core):
            sizes.setdefault(name, view.dims[view.ndim - len(core) + axis])
    core_steps = [view.strides[view.ndim - len(core) + axis]
                  for view, core in zip(operands, cores, strict=True)
                  for axis in range(len(core))]

    nargs = len(operands)
    argv = b.entry_alloca(ir.ArrayType(PTR, nargs), name="loop_args")
    dims = b.entry_alloca(ir.ArrayType(I64, 1 + len(sizes)), name="loop_dims")
    steps = b.entry_alloca(ir.ArrayType(I64, nargs + len(core_steps)), name="loop_steps")

    def put(array: ir.Value, etype: ir.Type, k: int, value: ir.Value) -> None:
        b.store(value, b.gep(array, [i64(k)], source_etype=etype))

    table = b.load(_table(b.module), typ=PTR)
    slot = LOOPS.index(entry)
    function = b.load(b.gep(table, [i64(2 * slot)], source_etype=PTR),
                      typ=ir.PointerType(LOOP_TYPE))
    data = b.load(b.gep(table, [i64(2 * slot + 1)], source_etype=PTR), typ=PTR)
    for k, size in enumerate(sizes.values()):
        put(dims, I64, 1 + k, size)
    for k, step in enumerate(core_steps):
        put(steps, I64, nargs + k, step)
    put(dims, I64, 0, batch[-1] if batch else i64(1))
    for k, (view, core) in enumerate(zip(operands, cores, strict=True)):
        put(steps, I64, k, view.strides[len(batch) - 1] if batch and view.ndim > len(core)
            else i64(0))
    flagged = eqn.params["flag"]
    failed = b.entry_alloca(I32, name="loop_failed", zero=True) if flagged else None
    with loop_nest(b, batch[:-1], "batch", vectorize=False) as index:
        for k, (view, core) in enumerate(zip(operands, cores, strict=True)):
            first = [*index, i64(0)] if view.ndim > len(core) else []
            at = element_ptr(b, View(view.data, view.dims[:len(first)],
                                     view.strides[:len(first)], view.dtype), first) \
                if first else view.data
            put(argv, PTR, k, at)
        if failed is None:
            b.call(function, [argv, dims, steps, data])
        else:
            flag = b.call(_flagged_call(b.module), [function, argv, dims, steps, data])
            b.store(b.or_(b.load(failed, typ=I32), flag), failed)
    values: list[Value] = [h if v.type.ndim else Scalar(load(b, h, []), v.type.dtype)
                           for v, h in zip(results, homes, strict=True)]
    if failed is not None:
        values.append(Scalar(b.icmp_signed("!=", b.load(failed, typ=I32),
                                           ir.Constant(I32, 0)), BOOL))
    return values


def _flagged_call(module: ir.Module) -> ir.Function:
    """``aotc_numpy_loop_flagged(loop, args, dimensions, steps, data)``: the call, then
    the invalid flag it leaves (cleared). A function of its own, never inlined, so that
    LLVM cannot schedule the caller's own floating-point code (a comparison with a NaN
    raises the flag too) between the call and the test."""
    name = "aotc_numpy_loop_flagged"
    found = module.globals.get(name)
    if isinstance(found, ir.Function):
        return found
    fn = ir.Function(module, ir.FunctionType(I32, [ir.PointerType(LOOP_TYPE), PTR, PTR, PTR,
                                                   PTR]), name)
    fn.linkage = "internal"
    fn.attributes.add("noinline")
    fn.attributes.add("nounwind")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    loop_fn, argv, dims, steps, data = fn.args
    test = libc_function(module, "fetestexcept", ir.FunctionType(I32, [I32]))
    clear = libc_function(module, "feclearexcept", ir.FunctionType(I32, [I32]))
    invalid = ir.Constant(I32, FE_INVALID)
    b.call(clear, [invalid])
    b.call(loop_fn, [argv, dims, steps, data])
    failed = b.call(test, [invalid])
    b.call(clear, [invalid])
    b.ret(failed)
    return fn


RULES: dict[Primitive, EqnRule] = {numpy_loop_p: lower_numpy_loop}
