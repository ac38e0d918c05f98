"""What machine code is generated for, and what the machine it runs on must have.

:mod:`.spec` is the :class:`~.spec.TargetSpec` (CPU, features, optimization level, fast
math) and the LLVM target machine made from it; :mod:`.isa` is the interface code
generators ask about the instruction set; :mod:`.x86` and :mod:`.aarch64` are the
answers of x86-64 and AArch64, their feature levels and the import-time CPU check. This
module picks the instruction set for a triple, an LLVM module or a CPU name.
"""

from __future__ import annotations

from llvmlite import ir

from .aarch64 import AARCH64
from .isa import InstructionSet, LanePermute
from .x86 import X86_64

#: Every architecture aotc generates code for, by its name in LLVM triples.
INSTRUCTION_SETS: dict[str, InstructionSet] = {isa.arch: isa for isa in (X86_64, AARCH64)}


def host_arch() -> str:
    import llvmlite.binding as llvm

    return str(llvm.get_process_triple()).split("-")[0]


def for_triple(triple: str) -> InstructionSet:
    """The instruction set of LLVM target ``triple`` (an unset triple means the host's)."""
    arch = triple.split("-", maxsplit=1)[0]
    if arch not in INSTRUCTION_SETS and triple.startswith("unknown"):
        arch = host_arch()
    try:
        return INSTRUCTION_SETS[arch]
    except KeyError:
        raise ValueError(f"aotc cannot generate code for {arch!r} yet; it knows "
                         + ", ".join(sorted(INSTRUCTION_SETS))) from None


def for_module(module: ir.Module) -> InstructionSet:
    """The instruction set the LLVM ``module`` is generated for."""
    return for_triple(str(module.triple))


def for_cpu(cpu: str) -> InstructionSet:
    """The instruction set that knows ``cpu`` by name, else the host's."""
    return next((isa for isa in INSTRUCTION_SETS.values() if isa.known_cpu(cpu)),
                for_triple(host_arch()))


__all__ = ["INSTRUCTION_SETS", "InstructionSet", "LanePermute", "for_cpu", "for_module",
           "for_triple"]
