"""The instruction-set interface: what code generators may ask about the machine.

Why: a code generator that writes explicit vector code (the GEMM micro-kernel, sorting
networks, vectorized partitions) must size itself by the target's registers and use
only the instructions it has. Those facts differ per architecture: x86-64's AVX2 has 16
registers of 32 bytes but no 64-bit integer min/max; AArch64's NEON has 32 registers of
16 bytes; SVE's width is known only at run time. So every such question goes through
one :class:`InstructionSet` object per architecture (:mod:`.x86` is x86-64's), chosen
by the LLVM module's target triple, and no generator names an instruction set itself.

The answers are plain data about a register width, not builder state, so the planners
that size buffers before a target is chosen (the GEMM's packing workspace) can ask
every known architecture (:data:`aotc.codegen.targets.INSTRUCTION_SETS`) for its largest
needs.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class LanePermute:
    """A variable permutation of the lanes of one register: ``intrinsic(values, index)``
    with ``bits``-wide lanes (64-bit keys may be moved as pairs of 32-bit halves)."""

    intrinsic: str
    bits: int


class InstructionSet(ABC):
    """One architecture as the code generators see it: its CPU names and feature levels,
    its vector registers, and the instructions that vector code may rely on."""

    #: The architecture's name in LLVM target triples (``x86_64``, ``aarch64``).
    arch: ClassVar[str]
    #: The LLVM target triple of its Linux objects, when it is not the build machine's.
    triple: ClassVar[str]
    #: The feature levels a portable module carries, the baseline first: each module
    #: picks the best one the running CPU has when it is imported.
    default_levels: ClassVar[tuple[str, ...]]
    #: The level every CPU of the architecture has (older than the portable baseline).
    oldest: ClassVar[str]
    #: How a float that does not fit the integer type converts (``astype``), as NumPy
    #: built for this architecture does it: ``"indefinite"`` (x86: the integer
    #: ``INT_MIN`` for NaN and anything out of range).
    float_to_int: ClassVar[str]
    #: Whether NumPy's ``maximum``/``minimum`` here order -0.0 below +0.0 and are IEEE
    #: ``maximum``/``maxNum`` (AArch64's ``fmax``/``fmaxnm``), not "the second of equal
    #: operands" (x86's ``maxps``).
    zero_ordered_max: ClassVar[bool] = False

    @property
    def baseline(self) -> str:
        """The level a portable module's plain entry points are built for."""
        return self.default_levels[0]

    @abstractmethod
    def known_cpu(self, cpu: str) -> bool:
        """Whether ``cpu`` is a level or CPU name whose features aotc knows."""

    @abstractmethod
    def cpu_names(self) -> tuple[str, ...]:
        """Every level and CPU name :meth:`known_cpu` accepts (for messages)."""

    def llvm_cpu(self, cpu: str) -> tuple[str, str]:
        """The LLVM CPU name and the LLVM features (``+a,+b``) that ``cpu`` stands for
        (aotc's levels may be names of its own)."""
        return cpu, ""

    @abstractmethod
    def features(self, cpu: str, llvm_features: str = "") -> tuple[str, ...]:
        """The features code for ``cpu`` with LLVM's ``+a,-b`` ``llvm_features`` may use,
        as far as the import-time check can see them (sorted)."""

    @abstractmethod
    def tuning(self, cpu: str, llvm_features: str = "") -> str:
        """LLVM features aotc adds to tune code for ``cpu`` (not new instructions)."""

    @abstractmethod
    def vector_bytes(self, features: tuple[str, ...]) -> int:
        """The width of the widest vector registers ``features`` give."""

    @abstractmethod
    def vector_widths(self) -> tuple[int, ...]:
        """Every register width code may be generated for, narrowest first."""

    @abstractmethod
    def vector_registers(self, vector_bytes: int) -> int:
        """How many vector registers of ``vector_bytes`` the architecture has."""

    @abstractmethod
    def has_fma(self, features: tuple[str, ...]) -> bool:
        """Whether ``llvm.fma`` is one instruction (not a libm call) with ``features``."""

    @abstractmethod
    def lane_min_max(self, lane_bits: int, vector_bytes: int) -> bool:
        """Whether integer lanes of ``lane_bits`` have min and max instructions in
        registers of ``vector_bytes`` (else: a compare and a blend)."""

    @abstractmethod
    def unsigned_compare(self, lane_bits: int, vector_bytes: int) -> bool:
        """Whether unsigned integer lanes compare in one instruction (else keys are
        made signed first)."""

    @abstractmethod
    def lane_permute(self, lane_bits: int, vector_bytes: int) -> LanePermute | None:
        """The variable lane permutation vector partitions compress keys with, or None
        where there is none (then sorting stays scalar)."""

    @abstractmethod
    def feature_check(self, features: tuple[str, ...]) -> str:
        """C source defining ``int aotc_cpu_has(int k)``: whether the running CPU (and
        OS) has ``features[k]``; rendered into every module's import check."""

    def sorts_in_registers(self, lane_bits: int, vector_bytes: int) -> bool:
        """Whether keys of ``lane_bits`` sort in vector registers of ``vector_bytes``."""
        return lane_bits in (32, 64) and self.lane_permute(lane_bits, vector_bytes) is not None


def level_features(level: tuple[str, ...], llvm_features: str, checkable: Iterable[str]
                   ) -> tuple[str, ...]:
    """A level's features with LLVM's ``+a,-b`` ``llvm_features`` applied, keeping those
    in ``checkable`` (the ones the import-time check can see), sorted."""
    wanted = set(level)
    for item in filter(None, llvm_features.split(",")):
        if item[0] == "+":
            wanted.add(item[1:])
        else:
            wanted.discard(item[1:])
    return tuple(sorted(wanted.intersection(checkable)))
