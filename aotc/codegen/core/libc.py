"""The C library functions kernels call: declared once per LLVM module.

Kernels call few of them (``aligned_alloc``/``free`` for the scratch and packing
buffers, ``fetestexcept``/``feclearexcept`` around NumPy's LAPACK loops); the extension
links them from the C library, and ``aotc.jit`` from the running process.
"""

from __future__ import annotations

from llvmlite import ir

from .dtypes import I64, PTR, i64


def libc_function(module: ir.Module, name: str, ftype: ir.FunctionType) -> ir.Function:
    """``name`` declared in ``module`` (once)."""
    found = module.globals.get(name)
    if isinstance(found, ir.Function):
        return found
    return ir.Function(module, ftype, name)


def aligned_buffer(b: ir.IRBuilder, nbytes: ir.Value) -> ir.Value:
    """``aligned_alloc(64, nbytes rounded up to 64)``: packing buffers are read with
    aligned vector loads."""
    fn = libc_function(b.module, "aligned_alloc", ir.FunctionType(PTR, [I64, I64]))
    rounded = b.and_(b.add(nbytes, i64(63)), i64(-64))
    return b.call(fn, [i64(64), b.select(b.icmp_signed(">", rounded, i64(0)), rounded, i64(64))])
