"""What machine code is generated for: CPU, features, optimization level, fast math.

A :class:`TargetSpec` is plain frozen data so it can be hashed, compared, printed in
build logs and read from ``[tool.aotc]``. The LLVM target machine made from it uses the
AOT settings (``reloc="pic"``, ``codemodel="default"``, explicit CPU and features), never
the JIT defaults, so the in-process JIT tests run the very object code a wheel ships.
"""

from __future__ import annotations

import functools
import re
import subprocess
import sys
from dataclasses import dataclass, field

import llvmlite.binding as llvm

from . import for_cpu, for_triple, host_arch
from .isa import InstructionSet

_CPU_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")


def tuning(cpu_name: str, features: str = "") -> str:
    """The tuning features aotc adds for ``cpu_name`` with LLVM ``features``."""
    return for_cpu(cpu_name).tuning(cpu_name, features)


_PROBE = r"""
import sys
import llvmlite.binding as llvm
llvm.initialize_all_targets()
llvm.initialize_all_asmprinters()
target = llvm.Target.from_triple(sys.argv[3] or llvm.get_process_triple())
tm = target.create_target_machine(cpu=sys.argv[1], features=sys.argv[2], reloc="pic",
                                  codemodel="default")
tm.emit_object(llvm.parse_assembly("define i64 @f(i64 %x) {\n  ret i64 %x\n}"))
"""


@functools.cache
def initialize_llvm() -> None:
    """Initialize the native target once (``llvm.initialize()`` is deprecated in 0.50)."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()


@dataclass(frozen=True)
class TargetSpec:
    """A code generation target; ``features`` is LLVM's ``+avx2,-fma`` syntax."""

    #: A level or CPU name; by default the baseline of the host's architecture.
    cpu: str = field(default_factory=lambda: for_triple(host_arch()).baseline)
    features: str = ""
    opt_level: int = 3
    fast_math: bool = False
    #: Split large loop nests, matrix products and reductions over the runtime's
    #: threads (``[tool.aotc] parallel``; see :mod:`.parallel`).
    parallel: bool = False

    def __post_init__(self) -> None:
        if not _CPU_NAME.match(self.cpu):
            raise ValueError(f"target cpu {self.cpu!r} is not a CPU name")
        if self.opt_level not in (0, 1, 2, 3):
            raise ValueError(f"opt_level must be 0..3, got {self.opt_level}")

    @classmethod
    def parse(cls, name: str, *, opt_level: int = 3, fast_math: bool = False,
              parallel: bool = False) -> TargetSpec:
        """``"native"`` (this host's CPU and features) or a CPU name (a level like ``"x86-64-v3"``).

        Raises ``ValueError`` for a name LLVM does not know as a 64-bit CPU.
        """
        if name == "native":
            initialize_llvm()
            return cls(llvm.get_host_cpu_name(), _native_features(), opt_level, fast_math,
                       parallel)
        isa = for_cpu(name)
        if not isa.known_cpu(name):
            raise ValueError(
                f"aotc does not know which instruction sets CPU {name!r} has, so a module "
                "built for it could not check the CPU it runs on; use 'native' or one of "
                + ", ".join(f"'{n}'" for n in isa.cpu_names()))
        spec = cls(name, tuning(name), opt_level, fast_math, parallel)
        check_target(spec)
        return spec

    @property
    def isa(self) -> InstructionSet:
        """The instruction set of the target's CPU."""
        return for_cpu(self.cpu)

    @property
    def cpu_features(self) -> tuple[str, ...]:
        """The instruction-set features code for this target may use (checked at import)."""
        return self.isa.features(self.cpu, self.features)

    @property
    def vector_bytes(self) -> int:
        """The width of the widest vector registers the target has."""
        return self.isa.vector_bytes(self.cpu_features)

    @property
    def has_fma(self) -> bool:
        """Whether ``llvm.fma`` is one instruction for the target, not a call."""
        return self.isa.has_fma(self.cpu_features)

    @property
    def fp_flags(self) -> tuple[str, ...]:
        """LLVM fast-math flags for float arithmetic.

        ``fast_math`` allows reassociation (vectorized sums), contraction (FMA),
        reciprocals and ignoring the sign of zero, but never ``nnan``/``ninf``: NaN and
        inf still behave, so ``isnan`` and NaN-propagating ``max`` keep their meaning.
        """
        if not self.fast_math:
            return ()
        return ("reassoc", "nsz", "arcp", "contract", "afn")


def check_target(spec: TargetSpec) -> None:
    """Raise ``ValueError`` unless LLVM can generate 64-bit code for ``spec``."""
    error = _probe(spec.cpu, spec.features)
    if error:
        raise ValueError(error)


@functools.cache
def _probe(cpu: str, features: str) -> str | None:
    """Try the CPU in a child process: LLVM only warns about an unknown CPU name, then
    *aborts the process* when it generates code for it ("64-bit code requested on a
    subtarget that doesn't support it"), and a 32-bit CPU aborts the same way."""
    isa = for_cpu(cpu)
    if cpu in (*isa.default_levels, isa.oldest) and features == tuning(cpu):
        return None
    initialize_llvm()
    if cpu == llvm.get_host_cpu_name() and features == _native_features():
        return None  # "native"
    llvm_cpu, level = isa.llvm_cpu(cpu)
    triple = "" if isa.arch == host_arch() else isa.triple
    done = subprocess.run([sys.executable, "-c", _PROBE, llvm_cpu,
                           ",".join(filter(None, (level, features))), triple],
                          capture_output=True, text=True, timeout=120)
    if "not a recognized processor" in done.stderr:
        return f"LLVM does not know the CPU {cpu!r}"
    if done.returncode != 0:
        lines = (done.stderr.strip() or "it crashed").splitlines()
        return f"LLVM cannot generate 64-bit code for CPU {cpu!r}: {lines[-1]}"
    return None


def _native_features() -> str:
    """This host's features, and the :func:`tuning` aotc adds for its CPU."""
    host = llvm.get_host_cpu_features().flatten()
    extra = tuning(llvm.get_host_cpu_name(), host)
    return f"{host},{extra}" if extra else host


@functools.cache
def target_machine(spec: TargetSpec) -> llvm.TargetMachine:
    """The LLVM target machine for ``spec`` (cached: specs are hashable).

    The spec is checked first, so a bad CPU is a ``ValueError``, not a dead process.
    """
    check_target(spec)
    return _new_target_machine(spec)


def _new_target_machine(spec: TargetSpec) -> llvm.TargetMachine:
    initialize_llvm()
    isa = spec.isa
    if isa.arch == host_arch():
        triple = llvm.get_process_triple()
    else:  # cross-compiling (a wheel for another platform)
        _initialize_every_target()
        triple = isa.triple
    cpu, features = isa.llvm_cpu(spec.cpu)
    return llvm.Target.from_triple(triple).create_target_machine(
        cpu=cpu, features=",".join(filter(None, (features, spec.features))),
        opt=spec.opt_level, reloc="pic", codemodel="default")


@functools.cache
def _initialize_every_target() -> None:
    """Every architecture LLVM was built with, not just the host's (once)."""
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()


def jit_target_machine(spec: TargetSpec) -> llvm.TargetMachine:
    """A fresh target machine to hand to an LLJIT session (which may take it over)."""
    return _new_target_machine(spec)
