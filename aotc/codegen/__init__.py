"""Code generation: IR programs to native object code through llvmlite.

Each program becomes the two C entry points of :mod:`aotc.abi` (``P_shapes`` and ``P``),
built in :mod:`.entry`. Lowering is per equation and table-driven, one table per family,
merged into :data:`.entry.EQN_RULES`:

- :mod:`.scalar` — elementwise primitives on one element (with :mod:`.division`,
  :mod:`.convert`, :mod:`.mathlib` for the cases NumPy defines unusually, and
  :mod:`.complexarith`, :mod:`.complexmath`, :mod:`.complexfuncs` for complex values);
- :mod:`.views` — index maps without loops; :mod:`.nests` — elementwise loops, ``iota``;
- :mod:`.reductions`, :mod:`.indexing`, :mod:`.linalg`, :mod:`.control`;
- :mod:`.external` — calls of NumPy's own gufunc loops (LAPACK, pocketfft).

:mod:`.libc` declares the C library functions kernels call, :mod:`.simd` the vector
instructions the GEMM, sorting networks and partitions share.

:mod:`.inplace` (with :mod:`.planner`) decides which updates write in place and which
buffers loops and branches share; :mod:`.layout` turns that into homes (outputs, 64-byte
scratch slots); :mod:`.overlap` guards in-place writes into caller arrays;
:mod:`.loops` emits nests with a unit-stride copy of the innermost loop and
:mod:`.specialize` a C-contiguous copy of kernels with traced loops. :mod:`.target`
describes the machine, :mod:`.module` runs LLVM, and :mod:`.jit` calls the same object
in-process through the C ABI (for tests).
"""

from __future__ import annotations

from .entry import has_lowering
from .module import build_llvm_module, compile_object, emit_asm, emit_llvm
from .target import TargetSpec

__all__ = ["TargetSpec", "build_llvm_module", "compile_object", "emit_asm", "emit_llvm",
           "has_lowering"]
