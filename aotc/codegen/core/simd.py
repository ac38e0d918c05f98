"""Vector instructions the kernels share: broadcasts, zeros, fused multiply-adds and
masked loads and stores, as LLVM intrinsics (GEMM, the sorting networks, partitions).

They live apart from any one kernel so that sorting does not import the GEMM for them;
each takes the builder's target facts (``b.fma``) rather than testing an ISA itself.
"""

from __future__ import annotations

from llvmlite import ir

from .builder import KernelBuilder, existing
from .dtypes import I1, PTR

I32 = ir.IntType(32)


def splat(b: ir.IRBuilder, value: ir.Value, lanes: int) -> ir.Value:
    """``<lanes x T>`` with every lane ``value`` (a broadcast)."""
    vty = ir.VectorType(value.type, lanes)
    one = b.insert_element(ir.Constant(vty, ir.Undefined), value, ir.Constant(I32, 0))
    return b.shuffle_vector(one, ir.Constant(vty, ir.Undefined),
                            ir.Constant(ir.VectorType(I32, lanes), [0] * lanes))


def zeros(ty: ir.Type) -> ir.Constant:
    element = ty.element if isinstance(ty, ir.VectorType) else ty
    zero = ir.Constant(element, 0 if isinstance(element, ir.IntType) else 0.0)
    return ir.Constant(ty, [zero] * ty.count) if isinstance(ty, ir.VectorType) else zero


def fused_multiply_add(b: KernelBuilder, x: ir.Value, y: ir.Value, acc: ir.Value) -> ir.Value:
    """``x * y + acc``: one rounding with FMA hardware, two without."""
    if not b.fma:
        return b.fadd(b.fmul(x, y), acc)
    ty = x.type
    suffix = (f"v{ty.count}{_scalar_name(ty.element)}" if isinstance(ty, ir.VectorType)
              else _scalar_name(ty))
    name = f"llvm.fma.{suffix}"
    fn = existing(b.module, name) or ir.Function(b.module, ir.FunctionType(ty, [ty] * 3), name)
    return b.call(fn, [x, y, acc])


def _masked(b: KernelBuilder, op: str, vty: ir.VectorType) -> ir.Function:
    suffix = f"v{vty.count}{_scalar_name(vty.element)}.p0"
    name = f"llvm.masked.{op}.{suffix}"
    mty = ir.VectorType(I1, vty.count)
    args = [PTR, I32, mty, vty] if op == "load" else [vty, PTR, I32, mty]
    ret = vty if op == "load" else ir.VoidType()
    return existing(b.module, name) or ir.Function(b.module, ir.FunctionType(ret, args), name)


def masked_load(b: KernelBuilder, at: ir.Value, vty: ir.VectorType, mask: ir.Value | None
                ) -> ir.Value:
    """A vector load (alignment 1), of the lanes in ``mask`` only (the others 0)."""
    if mask is None:
        return b.load(at, typ=vty, align=1)
    return b.call(_masked(b, "load", vty), [at, ir.Constant(I32, 1), mask, zeros(vty)])


def masked_store(b: KernelBuilder, value: ir.Value, at: ir.Value, mask: ir.Value | None
                 ) -> None:
    """A vector store (alignment 1), of the lanes in ``mask`` only."""
    if mask is None:
        b.store(value, at, align=1)
    else:
        b.call(_masked(b, "store", value.type), [value, at, ir.Constant(I32, 1), mask])


def _scalar_name(ty: ir.Type) -> str:
    """LLVM's name of a scalar type in overloaded intrinsics' names."""
    if isinstance(ty, ir.IntType):
        return f"i{ty.width}"
    return "f64" if isinstance(ty, ir.DoubleType) else "f32"
