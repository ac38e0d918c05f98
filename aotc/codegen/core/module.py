"""From programs to an LLVM module, and from the module to object code or text.

``build_llvm_module`` is pure construction with ``llvmlite.ir`` (deterministic text:
names come from the entry names and fixed labels, never from ids). The other functions
run LLVM: parse, verify, optimize with the new pass manager, emit. An unexpected
exception in either is an :class:`~aotc.errors.InternalError` (a bug in aotc), located at
the equation being lowered when there is one.
"""

from __future__ import annotations

from collections.abc import Sequence

import llvmlite.binding as llvm
from llvmlite import ir

from ...errors import internal_errors
from ...ir import Program
from ..memory.layout import plan_layout
from ..targets.spec import TargetSpec, target_machine
from .entry import emit_kernel, emit_shapes
from .library import Library

Entries = Sequence[tuple[str, Program]]


def build_llvm_module(entries: Entries, target: TargetSpec, library: Library | None = None
                      ) -> ir.Module:
    """Unoptimized IR defining ``P_shapes`` and ``P`` for each ``(P, program)``; with a
    ``library`` (for ``target``), declaring its functions instead of defining them."""
    tm = target_machine(target)
    module = ir.Module(name="aotc")
    module.triple = tm.triple
    module.data_layout = str(tm.target_data)
    if library is not None:
        library.attach(module)
    for name, program in entries:
        # Any exception here is a bug in aotc: reported at the equation being lowered.
        with internal_errors("code generation", kernel=program.name):
            layout = plan_layout(program)
            emit_shapes(module, f"{name}_shapes", program, layout)
            emit_kernel(module, name, program, layout, target.fp_flags, target)
    return module


def optimized_module(entries: Entries, target: TargetSpec, optimize: bool = True
                     ) -> llvm.ModuleRef:
    """Parse and verify the module, then run the ``-O<opt_level>`` pipeline."""
    return optimized_text(str(build_llvm_module(entries, target)), target, optimize)


def optimized_text(text: str, target: TargetSpec, optimize: bool = True) -> llvm.ModuleRef:
    """:func:`optimized_module` of the module's IR text (what the object cache keys on)."""
    tm = target_machine(target)
    with internal_errors("LLVM verification and optimization"):  # we emitted invalid IR
        mod = llvm.parse_assembly(text)
        mod.verify()
        if optimize:
            pto = llvm.create_pipeline_tuning_options(speed_level=target.opt_level)
            pto.loop_vectorization = True
            pto.slp_vectorization = True
            pb = llvm.create_pass_builder(tm, pto)
            pb.getModulePassManager().run(mod, pb)
    return mod


def compile_object(entries: Entries, target: TargetSpec) -> bytes:
    """A relocatable (PIC) object file defining every entry point."""
    return object_from_text(str(build_llvm_module(entries, target)), target)


def object_from_text(text: str, target: TargetSpec) -> bytes:
    """The object file of a module's unoptimized IR text."""
    obj: bytes = target_machine(target).emit_object(optimized_text(text, target))
    return obj


def emit_llvm(entries: Entries, target: TargetSpec, optimized: bool = True) -> str:
    """LLVM IR text, after optimization unless ``optimized=False``."""
    return str(optimized_module(entries, target, optimize=optimized))


def emit_asm(entries: Entries, target: TargetSpec, optimized: bool = True) -> str:
    """Target assembly text."""
    asm: str = target_machine(target).emit_assembly(
        optimized_module(entries, target, optimize=optimized))
    return asm
