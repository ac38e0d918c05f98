"""``call`` equations: each callee a function of the module, emitted once.

A callee (:mod:`aotc.ops.calls`) becomes ``internal i64 f(rt, result*, depth, args...)``:
scalar arguments in registers, the result stored through the pointer, and the error
code returned as the kernel's own (0, or a code of the kernel's table: the callee's
errors are in it, see :func:`aotc.ir.runtime_errors`). ``depth`` counts the calls
under the kernel; past :data:`~aotc.ops.calls.DEPTH_LIMIT` the call fails with
RecursionError rather than overflowing the C stack. Its body is lowered with the
kernel's rules by a :class:`~.context.Lowering` of its own; its declaration is in the
module before that, so a call to itself finds it.

Its program makes scalars only: a callee that would need scratch buffers (arrays of
its own) is refused at build time.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from llvmlite import ir

from ...abi import RECURSION_TOO_DEEP
from ...errors import UnsupportedError
from ...ir import Eqn
from ...ops.calls import DEPTH_LIMIT, Callee, call_p
from ...ops.core import Primitive
from ..memory.layout import plan_layout
from .builder import finish_function, start_function
from .context import EqnRule, Lowering
from .dims import DimEvaluator
from .dtypes import I64, PTR, i64, mem_type, reg_type
from .values import Scalar, Value, load_memory, store_memory


def _function_name(callee: Callee) -> str:
    """A name for the callee's code: the same program, the same function (two kernels of
    a module calling one helper share it), wherever it is called from."""
    digest = hashlib.sha256(str(callee.optimized or callee.program).encode()).hexdigest()[:12]
    return f"aotc.fn.{callee.name.replace('$', '.')}.{digest}"


def _function(ctx: Lowering, callee: Callee) -> ir.Function:
    module = ctx.b.module
    name = _function_name(callee)
    if name in module.globals:
        found: ir.Function = module.globals[name]
        return found
    program = callee.optimized or callee.program  # (a program lowered without the passes)
    params = [reg_type(v.type.dtype) for v in program.inputs]
    fn = ir.Function(module, ir.FunctionType(I64, [PTR, PTR, I64, *params]), name)
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    layout = plan_layout(program)
    if not (layout.scratch_bytes.is_const and layout.scratch_bytes.value == 0):
        raise UnsupportedError(f"'{callee.name.split('$')[0]}' calls itself on runtime "
                               "values and makes arrays: a compiled recursive function "
                               "takes and makes scalars only")
    b = start_function(fn, ctx.b.fp_flags, ctx.b.vector_bytes, ctx.b.fma)
    runtime, result, depth, *args = fn.args
    b.fail_if(b.icmp_signed(">", depth, i64(DEPTH_LIMIT)), RECURSION_TOO_DEEP)
    inner = Lowering(b, DimEvaluator(b, {}), layout, ir.Constant(PTR, None),
                     ir.Constant(PTR, None), runtime, ctx.rules, ctx.errors)
    inner.call_depth = depth
    (value,) = inner.run(program, [Scalar(a, v.type.dtype)
                                   for a, v in zip(args, program.inputs, strict=True)])
    out = program.outputs[0].type.dtype
    assert isinstance(value, Scalar)
    store_memory(b, value.value, result, out, out.itemsize)
    finish_function(b)
    return fn


def lower_call(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
    """Call the callee's function; a nonzero code returns from this function too."""
    callee: Callee = eqn.params["callee"]
    fn = _function(ctx, callee)
    b = ctx.b
    dtype = eqn.outs[0].type.dtype
    slot = b.entry_alloca(mem_type(dtype))
    depth = b.add(ctx.call_depth, i64(1)) if ctx.call_depth is not None else i64(1)
    values = [a.value for a in args if isinstance(a, Scalar)]
    code = b.call(fn, [ctx.runtime, slot, depth, *values])
    with b.if_then(b.icmp_signed("!=", code, i64(0)), likely=False):
        b.ret(code)
    return [Scalar(load_memory(b, slot, dtype, dtype.itemsize), dtype)]


RULES: dict[Primitive, EqnRule] = {
    call_p: lower_call}
