"""x86-64: its CPU features and levels, how a built module checks the CPU, and the answers
of :class:`~.isa.InstructionSet` for it (:data:`X86_64`).

A module compiled for ``x86-64-v4`` would die with ``Illegal instruction`` on an AVX2
machine, so each module checks the running CPU once, at import, and raises
``ImportError`` naming the missing features instead. The check reads CPUID and XGETBV
(an instruction set the OS does not save registers for is as missing as one the CPU
lacks) from C code rendered into the wrapper: no run-time dependency.

:data:`FEATURES` maps LLVM's feature names to their CPUID bits; :func:`required` gives
the features a target needs. ``x86-64-vN`` are the psABI levels; ``native`` is every
feature LLVM reports for the build machine that CPUID can show; other CPU names resolve
through :data:`CPUS` to a level plus the extras LLVM may use for them.
"""

from __future__ import annotations

from dataclasses import dataclass

from .isa import InstructionSet, LanePermute, level_features


@dataclass(frozen=True)
class CpuidBit:
    """Feature present when ``cpuid(leaf, subleaf).register`` has ``bit`` set (and the
    OS enables the register state in ``xcr0``, for AVX and AVX-512)."""

    leaf: int
    subleaf: int
    register: int  #: 0 eax, 1 ebx, 2 ecx, 3 edx
    bit: int
    xcr0: int = 0


EAX, EBX, ECX, EDX = range(4)
XCR0_AVX = 0x6  # SSE and AVX (YMM) state
XCR0_AVX512 = 0xE6  # ... and the opmask, ZMM_Hi256 and Hi16_ZMM state


def _bits(leaf: int, subleaf: int, register: int, xcr0: int = 0, **bits: int
          ) -> dict[str, CpuidBit]:
    return {name.replace("_", "."): CpuidBit(leaf, subleaf, register, bit, xcr0)
            for name, bit in bits.items()}


#: LLVM feature name -> where CPUID reports it.
FEATURES: dict[str, CpuidBit] = {
    **_bits(1, 0, EDX, cx8=8, cmov=15, mmx=23, fxsr=24, sse=25, sse2=26),
    **_bits(1, 0, ECX, sse3=0, pclmul=1, ssse3=9, cx16=13, sse4_1=19, sse4_2=20, crc32=20,
            movbe=22, popcnt=23, aes=25, xsave=26, rdrnd=30),
    **_bits(1, 0, ECX, XCR0_AVX, fma=12, avx=28, f16c=29),
    **_bits(7, 0, EBX, fsgsbase=0, bmi=3, bmi2=8, invpcid=10, rdseed=18, adx=19,
            clflushopt=23, clwb=24, sha=29),
    **_bits(7, 0, EBX, XCR0_AVX, avx2=5),
    **_bits(7, 0, EBX, XCR0_AVX512, avx512f=16, avx512dq=17, avx512ifma=21, avx512cd=28,
            avx512bw=30, avx512vl=31),
    **_bits(7, 0, ECX, pku=3, waitpkg=5, shstk=7, gfni=8, rdpid=22, movdiri=27,
            movdir64b=28),
    **_bits(7, 0, ECX, XCR0_AVX, vaes=9, vpclmulqdq=10),
    **_bits(7, 0, ECX, XCR0_AVX512, avx512vbmi=1, avx512vbmi2=6, avx512vnni=11,
            avx512bitalg=12, avx512vpopcntdq=14),
    **_bits(7, 0, EDX, serialize=14),
    **_bits(7, 0, EDX, XCR0_AVX512, avx512vp2intersect=8, avx512fp16=23),
    **_bits(7, 1, EAX, XCR0_AVX, avxvnni=4, avxifma=23),
    **_bits(7, 1, EAX, XCR0_AVX512, avx512bf16=5),
    **_bits(0x80000001, 0, ECX, sahf=0, lzcnt=5, sse4a=6, prfchw=8, tbm=21),
    **_bits(0x80000001, 0, ECX, XCR0_AVX, xop=11, fma4=16),
    **_bits(0x80000008, 0, EBX, clzero=0),
    **_bits(0xD, 1, EAX, xsaveopt=0, xsavec=1, xsaves=3),
}

_V1 = ("cmov", "cx8", "fxsr", "mmx", "sse", "sse2")
_V2 = _V1 + ("cx16", "sahf", "popcnt", "sse3", "sse4.1", "sse4.2", "ssse3")
_V3 = _V2 + ("avx", "avx2", "bmi", "bmi2", "f16c", "fma", "lzcnt", "movbe", "xsave")
_V4 = _V3 + ("avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl")
_ICELAKE = ("avx512vbmi", "avx512vbmi2", "avx512vnni", "avx512bitalg", "avx512vpopcntdq",
            "avx512ifma", "gfni", "vaes", "vpclmulqdq")

#: Feature levels of the x86-64 psABI.
LEVELS: dict[str, tuple[str, ...]] = {
    "x86-64": _V1, "x86-64-v2": _V2, "x86-64-v3": _V3, "x86-64-v4": _V4,
}

#: Other CPU names aotc accepts, with the features their code may use.
CPUS: dict[str, tuple[str, ...]] = {
    "nehalem": _V2, "westmere": _V2, "sandybridge": _V2 + ("avx",),
    "ivybridge": _V2 + ("avx", "f16c"), "haswell": _V3, "broadwell": _V3, "skylake": _V3,
    "alderlake": _V3 + ("avxvnni",), "znver1": _V3, "znver2": _V3, "znver3": _V3,
    "skylake-avx512": _V4, "cascadelake": _V4 + ("avx512vnni",),
    "icelake-client": _V4 + _ICELAKE, "icelake-server": _V4 + _ICELAKE,
    "tigerlake": _V4 + _ICELAKE, "sapphirerapids": _V4 + _ICELAKE + ("avx512bf16",),
    "znver4": _V4 + _ICELAKE + ("avx512bf16",), "znver5": _V4 + _ICELAKE + ("avx512bf16",),
}


def known_cpu(cpu: str) -> bool:
    return cpu in LEVELS or cpu in CPUS


def required(cpu: str, features: str = "") -> tuple[str, ...]:
    """The features code for ``cpu`` with LLVM feature string ``features`` may use, as far
    as CPUID can show them (sorted, without duplicates)."""
    return level_features(LEVELS.get(cpu) or CPUS.get(cpu) or (), features, FEATURES)


def c_table(features: tuple[str, ...]) -> str:
    """The initializer of a C array of ``{leaf, subleaf, register, bit, xcr0}``, one row
    per feature in order (one dummy row when there are none: C has no empty arrays)."""
    rows = [f"{{{b.leaf:#x}, {b.subleaf}, {b.register}, {b.bit}, {b.xcr0:#x}}}"
            for b in (FEATURES[name] for name in features)]
    return "{" + ", ".join(rows or ["{0, 0, 0, 0, 0}"]) + "}"


#: Tuning beyond LLVM's own for a CPU. LLVM tunes x86-64-v4 and Intel's AVX-512 CPUs
#: (skylake-avx512 to sapphirerapids, and rocketlake, which a VM's CPUID may look like)
#: to prefer 256-bit vectors, a choice made for early AVX-512 CPUs that slowed their
#: clocks: exp/log loops then ran at AVX2 speed, 0.55x a full-width build on a Zen 5 and
#: 0.5x on a Sapphire Rapids (selu, softmax), where NumPy's own AVX-512 loops are 512 bits
#: wide. Every CPU with AVX-512 gets :data:`FULL_WIDTH`.
FULL_WIDTH = "-prefer-256-bit"
#: AMD's Zen 4 and Zen 5 run AVX-512 gathers and scatters far slower than the scalar
#: loads and stores they replace (a stride-3 fill of an (N, N, 3) array ran at 0.53x
#: NumPy through vscatterqpd on a Zen 5), and LLVM's tuning for them does not say so.
CPU_TUNING = dict.fromkeys(("znver4", "znver5"), "+prefer-no-gather,+prefer-no-scatter")

#: The import-time check: CPUID for the CPU, XGETBV for the register state the OS saves
#: (AVX, AVX-512); ``$table`` is :func:`c_table`'s initializer.
_FEATURE_CHECK = """\
#if defined(__x86_64__) || defined(_M_X64)
#include <cpuid.h>
typedef struct { unsigned leaf, subleaf, reg, bit, xcr0; } aotc_feature;
static const aotc_feature AOTC_FEATURES[] = $table;
static unsigned long long aotc_xcr0(void) {
    unsigned a, b, c, d, lo, hi;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) return 0;
    __asm__ __volatile__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((unsigned long long)hi << 32) | lo;
}
static int aotc_cpu_has(int k) {
    const aotc_feature *f = &AOTC_FEATURES[k];
    unsigned r[4] = {0, 0, 0, 0};
    if (!__get_cpuid_count(f->leaf, f->subleaf, &r[0], &r[1], &r[2], &r[3])) return 0;
    if (!((r[f->reg] >> f->bit) & 1u)) return 0;
    return (aotc_xcr0() & f->xcr0) == f->xcr0;
}
#else
static int aotc_cpu_has(int k) { (void)k; return 0; }
#endif
"""


class X86(InstructionSet):
    """x86-64: SSE2 in every CPU (16 registers of 16 bytes), AVX/AVX2 (16 of 32 bytes,
    FMA3 from AVX2 on), AVX-512 (32 of 64 bytes, 64-bit min/max and unsigned compares,
    ``vpermq``)."""

    arch = "x86_64"
    triple = "x86_64-unknown-linux-gnu"
    default_levels = ("x86-64-v2", "x86-64-v3", "x86-64-v4")
    oldest = "x86-64"
    float_to_int = "indefinite"

    def known_cpu(self, cpu: str) -> bool:
        return known_cpu(cpu)

    def cpu_names(self) -> tuple[str, ...]:
        return tuple(LEVELS) + tuple(sorted(CPUS))

    def features(self, cpu: str, llvm_features: str = "") -> tuple[str, ...]:
        return required(cpu, llvm_features)

    def tuning(self, cpu: str, llvm_features: str = "") -> str:
        wide = "avx512f" in required(cpu, llvm_features)
        return ",".join(filter(None, (FULL_WIDTH if wide else "", CPU_TUNING.get(cpu, ""))))

    def vector_bytes(self, features: tuple[str, ...]) -> int:
        return 64 if "avx512f" in features else 32 if "avx" in features else 16

    def vector_widths(self) -> tuple[int, ...]:
        return (16, 32, 64)

    def vector_registers(self, vector_bytes: int) -> int:
        return 32 if vector_bytes == 64 else 16

    def has_fma(self, features: tuple[str, ...]) -> bool:
        return "fma" in features

    def lane_min_max(self, lane_bits: int, vector_bytes: int) -> bool:
        return lane_bits < 64 or vector_bytes == 64  # vpminsq/vpminuq: AVX-512 only

    def unsigned_compare(self, lane_bits: int, vector_bytes: int) -> bool:
        return lane_bits < 64 or vector_bytes == 64  # vpcmpuq: AVX-512 only

    def lane_permute(self, lane_bits: int, vector_bytes: int) -> LanePermute | None:
        if vector_bytes < 32:
            return None  # SSE has no variable permutation across lanes
        if lane_bits == 64 and vector_bytes == 64:
            return LanePermute("llvm.x86.avx512.permvar.di.512", 64)
        return LanePermute("llvm.x86.avx2.permd", 32)  # 64-bit keys as pairs of halves

    def feature_check(self, features: tuple[str, ...]) -> str:
        return _FEATURE_CHECK.replace("$table", c_table(features))


X86_64 = X86()
