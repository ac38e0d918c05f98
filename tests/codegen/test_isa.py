"""The instruction-set interface (:mod:`aotc.codegen.targets`): the answers code
generators get for each x86-64 and AArch64 level, checked against the manuals' facts by
hand."""

from __future__ import annotations

import pytest

from aotc import config
from aotc.codegen.targets import INSTRUCTION_SETS, X86_64, for_cpu, for_triple
from aotc.codegen.targets.aarch64 import AARCH64
from aotc.codegen.targets.spec import TargetSpec

#: level -> (widest vector bytes, vector registers of that width, FMA): SSE4.2 has 16
#: XMM registers and no FMA; AVX2 16 YMM with FMA3; AVX-512 32 ZMM.
X86_LEVELS = {"x86-64": (16, 16, False), "x86-64-v2": (16, 16, False),
              "x86-64-v3": (32, 16, True), "x86-64-v4": (64, 32, True)}


@pytest.mark.parametrize("level", sorted(X86_LEVELS))
def test_x86_levels(level):
    vector_bytes, registers, fma = X86_LEVELS[level]
    features = X86_64.features(level)
    assert X86_64.vector_bytes(features) == vector_bytes
    assert X86_64.vector_registers(vector_bytes) == registers
    assert X86_64.has_fma(features) is fma
    spec = TargetSpec.parse(level)
    assert spec.isa is X86_64
    assert (spec.vector_bytes, spec.has_fma) == (vector_bytes, fma)


def test_x86_vector_instructions():
    """64-bit integer min/max and unsigned compares exist from AVX-512 on only; SSE has
    no variable lane permutation, AVX2 permutes 32-bit lanes (``vpermd``), AVX-512
    64-bit lanes too (``vpermq``)."""
    assert X86_64.lane_min_max(32, 32) and not X86_64.lane_min_max(64, 32)
    assert X86_64.lane_min_max(64, 64)
    assert X86_64.unsigned_compare(32, 32) and not X86_64.unsigned_compare(64, 32)
    assert X86_64.lane_permute(32, 16) is None
    assert X86_64.lane_permute(64, 32).bits == 32
    assert X86_64.lane_permute(64, 64).bits == 64
    assert X86_64.sorts_in_registers(64, 32) and not X86_64.sorts_in_registers(16, 32)
    assert not X86_64.sorts_in_registers(32, 16)


def test_feature_check_lists_the_features():
    """The import check's C table has one CPUID row per feature, in order."""
    text = X86_64.feature_check(("avx", "avx2"))
    assert "{0x1, 0, 2, 28, 0x6}, {0x7, 0, 1, 5, 0x6}" in text
    assert "aotc_cpu_has" in text


def test_lookup():
    assert for_triple("x86_64-unknown-linux-gnu") is X86_64
    assert for_cpu("znver4") is X86_64
    assert X86_64.known_cpu("skylake") and not X86_64.known_cpu("pentium4")
    assert for_triple("aarch64-unknown-linux-gnu") is AARCH64
    assert for_cpu("aarch64-sve") is AARCH64
    with pytest.raises(ValueError, match="'riscv64'"):
        for_triple("riscv64-unknown-linux-gnu")
    assert X86_64.baseline == "x86-64-v2" and X86_64.oldest == "x86-64"


def test_aarch64_levels():
    """NEON: 32 registers of 16 bytes, FMA in every level; SVE's run-time width is not
    assumed by explicit vector code; each level is LLVM's generic CPU with exactly the
    features the import check tests (Linux's HWCAP bits)."""
    for level, wanted in (("aarch64", ()), ("aarch64-sve", ("sve",)),
                          ("aarch64-sve2", ("sve", "sve2"))):
        features = AARCH64.features(level)
        assert features == tuple(sorted(("fp-armv8", "neon", *wanted)))
        assert AARCH64.vector_bytes(features) == 16 and AARCH64.vector_registers(16) == 32
        assert AARCH64.has_fma(features)
        assert AARCH64.llvm_cpu(level) == ("generic", ",".join(
            f"+{f}" for f in ("fp-armv8", "neon", *wanted)))
        spec = TargetSpec.parse(level)
        assert spec.isa is AARCH64 and spec.cpu_features == features
    assert AARCH64.lane_min_max(32, 16) and not AARCH64.lane_min_max(64, 16)
    assert AARCH64.unsigned_compare(64, 16)
    assert not AARCH64.sorts_in_registers(32, 16)
    assert AARCH64.float_to_int == "saturate"


def test_aarch64_feature_check_reads_hwcap():
    """One ``{AT_HWCAP or AT_HWCAP2, bit}`` row per feature: SVE is HWCAP bit 22, SVE2
    HWCAP2 bit 1 (Linux's arch/arm64/include/uapi/asm/hwcap.h)."""
    text = AARCH64.feature_check(("neon", "sve", "sve2"))
    assert "{16, 1}, {16, 22}, {26, 1}" in text and "getauxval" in text


def test_the_config_defaults_are_the_levels():
    """config names each architecture's default targets without importing LLVM; they
    are the instruction sets' own default levels."""
    levels = {arch: isa.default_levels for arch, isa in INSTRUCTION_SETS.items()}
    assert levels == config.DEFAULT_TARGETS_BY_ARCH
