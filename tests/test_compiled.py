"""The differential catalog compiled to machine code (in-process JIT) against NumPy.

Same kernels and inputs as ``test_trace.py``, but through codegen: loops, strides,
scalar lowering rules, fused loop nests. The JIT calls the same C entry points as the
wrapper. Every case runs fused (the default) and unfused (the baseline the benchmarks
compare against). Kernels are compiled many to a library: one LLVM module and one link
per chunk is much faster than one per kernel.
"""

from __future__ import annotations

from typing import Any

import pytest
from numpy_cases import CASES, Case, check_against_numpy
from numpy_cases_extended import EXTENDED_CASES

from aotc.codegen import jit
from aotc.frontend import trace_kernel
from aotc.passes import optimize
from aotc.types import parse_signature_string

ALL_CASES = CASES + EXTENDED_CASES
CHUNK = 48


class Kernels:
    """Compiles catalog kernels on first use, ``CHUNK`` at a time (in catalog order).

    A chunk that fails to build is retried one kernel at a time, so a broken kernel
    fails its own test and no other.
    """

    def __init__(self) -> None:
        self.built: dict[tuple[str, bool], Any] = {}  # a JitKernel or the exception

    def get(self, case: Case, fuse: bool) -> jit.JitKernel:
        if (case.name, fuse) not in self.built:
            start = ALL_CASES.index(case)
            chunk = [c for c in ALL_CASES[start:] if (c.name, fuse) not in self.built][:CHUNK]
            self._build(chunk, fuse)
        kernel = self.built[(case.name, fuse)]
        if isinstance(kernel, Exception):
            raise kernel
        return kernel

    def _build(self, chunk: list[Case], fuse: bool) -> None:
        programs = {}
        for case in chunk:
            try:
                traced = trace_kernel(case.fn, parse_signature_string(case.signature),
                                      name=case.name)
                programs[case.name] = optimize(traced.program, fuse=fuse)
            except Exception as error:  # reported by the case's own test
                self.built[(case.name, fuse)] = error
        try:
            library = jit.JitLibrary(list(programs.values()))
            self.built.update({(name, fuse): k
                               for name, k in zip(programs, library.kernels, strict=True)})
        except Exception:
            for name, program in programs.items():
                try:
                    self.built[(name, fuse)] = jit.JitKernel(program)
                except Exception as error:
                    self.built[(name, fuse)] = error


@pytest.fixture(scope="module")
def kernels() -> Kernels:
    return Kernels()


@pytest.mark.parametrize("fuse", [True, False], ids=["fused", "unfused"])
@pytest.mark.parametrize("case", ALL_CASES, ids=lambda c: c.name)
def test_compiled_matches_numpy(kernels, case, fuse):
    kernel = kernels.get(case, fuse)
    for args in case.inputs:
        # Only kernels that write into arguments get copies: the others must see the
        # catalog's own strided, reversed and transposed views.
        check_against_numpy(case, kernel, args, copy="writes" in case.tags)
