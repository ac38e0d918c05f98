"""CPU features: what each target's code needs, and how a built module checks the CPU.

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
    base = LEVELS.get(cpu) or CPUS.get(cpu) or ()
    wanted = set(base)
    for item in filter(None, features.split(",")):
        name = item[1:]
        if item[0] == "+":
            wanted.add(name)
        else:
            wanted.discard(name)
    return tuple(sorted(name for name in wanted if name in FEATURES))


def c_table(features: tuple[str, ...]) -> str:
    """The initializer of a C array of ``{leaf, subleaf, register, bit, xcr0}``, one row
    per feature in order (one dummy row when there are none: C has no empty arrays)."""
    rows = [f"{{{b.leaf:#x}, {b.subleaf}, {b.register}, {b.bit}, {b.xcr0:#x}}}"
            for b in (FEATURES[name] for name in features)]
    return "{" + ", ".join(rows or ["{0, 0, 0, 0, 0}"]) + "}"
