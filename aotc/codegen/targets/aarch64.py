"""AArch64 (64-bit Arm): its feature levels, how a built module checks the CPU, and the
answers of :class:`~.isa.InstructionSet` for it (:data:`AARCH64`).

Every AArch64 CPU that runs Linux has NEON (Advanced SIMD: 32 registers of 16 bytes, FMA,
saturating float-to-int conversion), so NEON is the portable baseline. SVE's registers
are 16 to 256 bytes wide, a width known only at run time: code generated for the
``aarch64-sve`` levels lets LLVM's vectorizer use SVE's scalable vectors and predicated
loops, while aotc's own explicit vector code (GEMM micro-kernels, vector math) keeps the
16 bytes every SVE CPU has. Graviton 3 and Neoverse V1 have SVE; Graviton 4, Neoverse
V2/N2 and Armv9 CPUs SVE2.

A module checks the running CPU at import through Linux's ``getauxval(AT_HWCAP)`` and
``getauxval(AT_HWCAP2)`` (the kernel's word on what the CPU has and the OS enables),
as the x86-64 check reads CPUID and XGETBV.

The levels are aotc's names, not LLVM CPU names (LLVM's named CPUs bring features such
as LSE atomics or dot products that the import check would also have to see): each is
LLVM's ``generic`` CPU with exactly the features the check tests.
"""

from __future__ import annotations

from dataclasses import dataclass

from .isa import InstructionSet, LanePermute, level_features

AT_HWCAP, AT_HWCAP2 = 16, 26


@dataclass(frozen=True)
class HwcapBit:
    """Feature present when ``getauxval(word)`` has ``bit`` set."""

    word: int  #: AT_HWCAP or AT_HWCAP2
    bit: int


#: LLVM feature name -> where Linux reports it (arch/arm64/include/uapi/asm/hwcap.h).
FEATURES: dict[str, HwcapBit] = {
    "fp-armv8": HwcapBit(AT_HWCAP, 0),
    "neon": HwcapBit(AT_HWCAP, 1),
    "sve": HwcapBit(AT_HWCAP, 22),
    "sve2": HwcapBit(AT_HWCAP2, 1),
}

_NEON = ("fp-armv8", "neon")

#: aotc's AArch64 levels -> the features their code may use.
LEVELS: dict[str, tuple[str, ...]] = {
    "aarch64": _NEON,
    "aarch64-sve": _NEON + ("sve",),
    "aarch64-sve2": _NEON + ("sve", "sve2"),
}

#: The import-time check: ``$table`` is one ``{word, bit}`` row per feature.
_FEATURE_CHECK = """\
#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
typedef struct { unsigned long word, bit; } aotc_feature;
static const aotc_feature AOTC_FEATURES[] = $table;
static int aotc_cpu_has(int k) {
    return (int)((getauxval(AOTC_FEATURES[k].word) >> AOTC_FEATURES[k].bit) & 1ul);
}
#else
static int aotc_cpu_has(int k) { (void)k; return 0; }
#endif
"""


def required(cpu: str, features: str = "") -> tuple[str, ...]:
    """The features code for level ``cpu`` with LLVM ``features`` may use, as far as the
    HWCAP words show them (sorted)."""
    return level_features(LEVELS.get(cpu, ()), features, FEATURES)


class AArch64(InstructionSet):
    """AArch64 with NEON (32 registers of 16 bytes, FMA, min/max below 64-bit lanes,
    unsigned compares of every width), optionally SVE/SVE2."""

    arch = "aarch64"
    triple = "aarch64-unknown-linux-gnu"
    default_levels = ("aarch64", "aarch64-sve")
    oldest = "aarch64"
    float_to_int = "saturate"
    zero_ordered_max = True

    def known_cpu(self, cpu: str) -> bool:
        return cpu in LEVELS

    def cpu_names(self) -> tuple[str, ...]:
        return tuple(LEVELS)

    def llvm_cpu(self, cpu: str) -> tuple[str, str]:
        if cpu not in LEVELS:  # "native" on an AArch64 host: LLVM's own name
            return cpu, ""
        return "generic", ",".join(f"+{name}" for name in LEVELS[cpu])

    def features(self, cpu: str, llvm_features: str = "") -> tuple[str, ...]:
        return required(cpu, llvm_features)

    def tuning(self, cpu: str, llvm_features: str = "") -> str:
        return ""

    def vector_bytes(self, features: tuple[str, ...]) -> int:
        return 16  # SVE's width is a run-time value; explicit vector code keeps NEON's

    def vector_widths(self) -> tuple[int, ...]:
        return (16,)

    def vector_registers(self, vector_bytes: int) -> int:
        return 32

    def has_fma(self, features: tuple[str, ...]) -> bool:
        return True  # FMLA is part of NEON

    def lane_min_max(self, lane_bits: int, vector_bytes: int) -> bool:
        return lane_bits < 64  # NEON's SMIN/UMIN stop at 32-bit lanes

    def unsigned_compare(self, lane_bits: int, vector_bytes: int) -> bool:
        return True  # CMHI/CMHS, every lane width

    def lane_permute(self, lane_bits: int, vector_bytes: int) -> LanePermute | None:
        return None  # TBL permutes bytes only: vector partitions stay scalar for now

    def feature_check(self, features: tuple[str, ...]) -> str:
        rows = [f"{{{FEATURES[name].word}, {FEATURES[name].bit}}}" for name in features]
        return _FEATURE_CHECK.replace("$table", "{" + ", ".join(rows or ["{0, 0}"]) + "}")


AARCH64 = AArch64()
