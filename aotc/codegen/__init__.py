"""Code generation: IR programs to native object code through llvmlite.

Each program becomes the two C entry points of :mod:`aotc.abi` (``P_shapes`` and ``P``),
built in :mod:`.core.entry`. Lowering is per equation and table-driven, one table per
family, merged into :data:`.core.entry.EQN_RULES`. The families, one folder each:

- :mod:`.core` — the driver, the builder, values, loops, the C ABI and runtime, the JIT;
- :mod:`.memory` — buffer planning: homes, in-place updates, views, work buffers;
- :mod:`.elementwise` — one element at a time (with :mod:`.vecmath`, the vector math
  kernels), and the nests that map them;
- :mod:`.nests` — fusion groups, reductions, indexing and structured control flow;
- :mod:`.linalg` — ``dot_general`` (GEMM and its small cases) and NumPy's own
  LAPACK/pocketfft loops;
- :mod:`.sorting`, :mod:`.random`, :mod:`.parallel` — sorts, random draws, threads;
- :mod:`.targets` — the target spec and the instruction set behind one interface.
"""
from __future__ import annotations

from .core.entry import has_lowering
from .core.module import build_llvm_module, compile_object, emit_asm, emit_llvm
from .targets.spec import TargetSpec

__all__ = ["TargetSpec", "build_llvm_module", "compile_object", "emit_asm", "emit_llvm",
           "has_lowering"]
