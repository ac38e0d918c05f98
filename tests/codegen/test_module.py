"""The public API: targets, deterministic IR text, object code, assembly, fast math."""

from __future__ import annotations

import re

import numpy as np
import pytest

from aotc.codegen import (
    TargetSpec,
    build_llvm_module,
    compile_object,
    emit_asm,
    emit_llvm,
    has_lowering,
)
from aotc.codegen.core.jit import JitKernel, JitLibrary
from aotc.codegen.targets import x86
from aotc.ops import ALL_PRIMITIVES
from aotc.passes import optimize
from aotc.tracing.kernel import trace_kernel
from aotc.types import parse_signature_string

from .programs import ProgramBuilder


def saxpy():
    """A fresh program each call: new Var ids, same structure."""
    pb = ProgramBuilder("saxpy")
    a, x, y = pb.scalar("f4"), pb.array("f4", "n"), pb.array("f4", "n")
    s = pb.apply("add", pb.apply("mul", a, x), y)
    return pb.build(s, pb.apply("reduce_max", s, axes=(0,)), pb.apply("sin", a))


def test_target_spec_parse():
    native = TargetSpec.parse("native")
    assert native.cpu and native.cpu != "native" and native.features.startswith(("+", "-"))
    v3 = TargetSpec.parse("x86-64-v3", opt_level=2, fast_math=True)
    assert v3 == TargetSpec("x86-64-v3", "", 2, True)
    assert TargetSpec() == TargetSpec("x86-64-v2", "", 3, False)
    with pytest.raises(ValueError):
        TargetSpec.parse("not a cpu; rm -rf")
    # LLVM would abort the process on these when emitting code: they must be errors.
    # Only CPUs whose instruction sets aotc knows: a module must be able to check its CPU.
    with pytest.raises(ValueError, match="does not know which instruction sets CPU 'skylake-foo'"):
        TargetSpec.parse("skylake-foo")
    with pytest.raises(ValueError, match="'pentium4'"):
        TargetSpec.parse("pentium4")
    assert TargetSpec.parse("skylake").cpu_features == tuple(sorted(x86.LEVELS["x86-64-v3"]))
    with pytest.raises(ValueError):
        compile_object([("k", saxpy())], TargetSpec("i486"))
    with pytest.raises(ValueError):
        TargetSpec(opt_level=7)


def test_llvm_text_is_deterministic():
    """Same program structure -> byte-identical IR, whatever the Var ids or run."""
    first = str(build_llvm_module([("aotc_m_saxpy_0", saxpy())], TargetSpec()))
    second = str(build_llvm_module([("aotc_m_saxpy_0", saxpy())], TargetSpec()))
    assert first == second
    assert "Var" not in first and " at 0x" not in first  # no reprs of Python objects
    assert 'define i64 @"aotc_m_saxpy_0_shapes"(ptr %"argv"' in first
    assert 'define i64 @"aotc_m_saxpy_0"(ptr %"argv", ptr %"outv", ptr %"out_dims", ' \
        'ptr %"scratch", ptr %"rt")' in first
    assert "i64*" not in first and "float*" not in first  # opaque pointers only


def test_object_code_for_several_targets():
    entries = [("aotc_m_saxpy_0", saxpy()), ("aotc_m_saxpy_1", saxpy())]
    for target in (TargetSpec(), TargetSpec("x86-64-v3"), TargetSpec("skylake", opt_level=1)):
        obj = compile_object(entries, target)
        assert obj[:4] == b"\x7fELF"
        for name in (b"aotc_m_saxpy_0", b"aotc_m_saxpy_0_shapes", b"aotc_m_saxpy_1"):
            assert name in obj
    assert compile_object(entries, TargetSpec()) == compile_object(entries, TargetSpec())


def test_text_outputs():
    entries = [("k", saxpy())]
    optimized = emit_llvm(entries, TargetSpec("x86-64-v3"))
    # sin is an inlined vector kernel; only its huge-argument fallback calls libm
    assert "define" in optimized and "aotc.vecmath.libm.sin" in optimized
    assert "alloca" not in optimized  # accumulators were promoted to registers
    raw = emit_llvm(entries, TargetSpec(), optimized=False)
    assert "alloca" in raw
    asm = emit_asm(entries, TargetSpec("x86-64-v3"))
    assert "k_shapes:" in asm and "ymm" in asm  # AVX2 vector code for x86-64-v3


@pytest.mark.parametrize("target", [TargetSpec(opt_level=0), TargetSpec(fast_math=True),
                                    TargetSpec("x86-64-v3")], ids=["O0", "fast", "v3"])
def test_other_targets_run(target):
    """-O0 and fast math still give NumPy's results (fast math keeps NaN semantics)."""
    kernel = JitKernel(saxpy(), target)
    x = np.array([1.0, np.nan, -2.0, np.inf], np.float32)
    y = np.array([0.5, 1.0, np.nan, 1.0], np.float32)
    s, top, sine = kernel(np.float32(2.0), x, y)
    np.testing.assert_array_equal(s, np.float32(2.0) * x + y)
    assert np.isnan(top)
    assert sine == pytest.approx(np.sin(np.float32(2.0)), rel=1e-6)


def test_every_primitive_has_a_lowering():
    missing = [name for name, p in ALL_PRIMITIVES.items() if not has_lowering(p)]
    assert not missing


def test_many_kernels_share_one_library():
    library = JitLibrary([saxpy() for _ in range(3)])
    x = np.arange(4, dtype=np.float32)
    results = [k(np.float32(1.0), x, x)[0] for k in library.kernels]
    for r in results:
        np.testing.assert_array_equal(r, 2 * x)


def test_wrong_arguments_are_rejected_before_the_call():
    kernel = JitKernel(saxpy())
    x = np.zeros(3, np.float32)
    with pytest.raises(TypeError):
        kernel(np.float32(1.0), x.astype(np.float64), x)
    with pytest.raises(TypeError):
        kernel(np.float32(1.0), x)
    with pytest.raises(ValueError, match="axis 0"):
        kernel(np.float32(1.0), x, np.zeros(4, np.float32))


def _runtime_unrolled(program, target: str) -> bool:
    """Whether LLVM runtime-unrolled some loop: it names the remainder loop's blocks
    ``<loop>.epil`` or ``<loop>.prol`` (the vectorizer's are ``vec.epilog``)."""
    text = emit_llvm([("k", program)], TargetSpec.parse(target))
    return re.search(r"\.(epil|prol)[.:\s]", text) is not None


def test_runtime_unrolling_only_where_asked():
    """Elementwise loops are vectorized (the vector loop is interleaved already), and
    unrolling their scalar remainder or a strided fallback only costs compile time; the
    radix sort's passes over a row are scalar and keep LLVM's runtime unrolling. The
    radix sort is what an SSE target (``x86-64-v2``) sorts with; AVX2 and AVX-512 targets
    sort 8-byte keys with the vectorized quicksort instead."""
    for target in ("x86-64-v2", "x86-64-v3", "x86-64-v4"):
        pb = ProgramBuilder("add")
        x, y = pb.array("f8", "n"), pb.array("f8", "n")
        assert not _runtime_unrolled(pb.build(pb.apply("add", x, y)), target)
    pb = ProgramBuilder("sort")
    assert _runtime_unrolled(pb.build(pb.apply("sort", pb.array("f8", "n"), axis=0)),
                             "x86-64-v2")


def test_zen_avx512_targets_store_strided_elements_without_scatters():
    """A fill of every third element (the last axis of an ``(n, 3)`` array) is scalar
    stores for Zen 4/5, whose AVX-512 scatters ran it at half NumPy's speed; the tuning
    flags that say so are not instruction sets a module must check for."""
    def thirds(x):
        out = np.empty((x.shape[0], 3))
        out[:, 0] = x
        out[:, 1] = 2.0 * x
        out[:, 2] = 1.0
        return out

    program = optimize(trace_kernel(thirds, parse_signature_string("(f8[:])"),
                                    name="thirds").program)
    for cpu in ("znver4", "znver5"):
        spec = TargetSpec.parse(cpu)
        assert "+prefer-no-scatter" in spec.features.split(",")
        assert spec.cpu_features == tuple(sorted(x86.CPUS[cpu]))
        asm = emit_asm([("k", program)], spec)
        assert "zmm" in asm or "ymm" in asm
        assert "vscatter" not in asm and "vgather" not in asm


def test_avx512_targets_use_full_width_registers():
    """LLVM tunes x86-64-v4 and Intel's AVX-512 CPUs to prefer 256-bit vectors, which
    ran exp loops at AVX2 speed (0.5x a full-width build); every AVX-512 target is
    tuned back to 512 bits, AVX2 targets are left as LLVM tunes them."""
    pb = ProgramBuilder("exp")
    program = pb.build(pb.apply("exp", pb.array("f8", "n")))
    for cpu in ("x86-64-v4", "skylake-avx512", "sapphirerapids", "znver4"):
        spec = TargetSpec.parse(cpu)
        assert "-prefer-256-bit" in spec.features.split(","), cpu
        assert "zmm" in emit_asm([("k", program)], spec), cpu
    for cpu in ("x86-64-v3", "znver3"):
        assert "prefer-256-bit" not in TargetSpec.parse(cpu).features
        assert "zmm" not in emit_asm([("k", program)], TargetSpec.parse(cpu)), cpu
