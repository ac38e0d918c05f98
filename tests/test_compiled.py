"""The differential catalog compiled to machine code (in-process JIT) against NumPy.

Same kernels and inputs as ``test_trace.py``, but through codegen: loops, strides,
scalar lowering rules, fused loop nests. The JIT calls the same C entry points as the
wrapper. Every case runs fused (the default); the core catalog also runs unfused (the
baseline the benchmarks compare against, ``fusion = false``), which lowers each
primitive as its own loop nest. The extended catalog composes the same primitives:
unfused, it took twice its fused LLVM time (392 s against 207 s, a fifth of the suite)
for no primitive the core catalog does not already lower unfused. Where fusion changes
nothing (493 of the 636 core cases), the unfused test runs the fused kernel instead of
compiling the same program twice. Kernels are compiled many to a library: one LLVM
module and one link per chunk is much faster than one per kernel.
"""

from __future__ import annotations

import multiprocessing
import os
import re
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

import pytest
from numpy_cases import CASES, Case, check_against_numpy
from numpy_cases_extended import EXTENDED_CASES

from aotc.codegen import build_llvm_module
from aotc.codegen.core import jit
from aotc.codegen.core.module import object_from_text
from aotc.codegen.targets.spec import TargetSpec
from aotc.ir import print_program
from aotc.passes import optimize
from aotc.tracing.kernel import trace_kernel
from aotc.types import parse_signature_string

ALL_CASES = CASES + EXTENDED_CASES
CHUNK = 48
#: A program that sorts, as :func:`print_program` prints it.
SORTS = re.compile(r"= (arg)?sort\[")


class Kernels:
    """Compiles the catalog, ``CHUNK`` kernels to a library (in catalog order, those that
    sort apart).

    Tracing a chunk is quick; LLVM's optimization and code generation of it take most of
    the time (tens of seconds for some chunks), so on first use every chunk of both
    variants is traced here and its object code compiled in a pool of processes, one per
    CPU, while the tests run on the chunks already done. A chunk that fails to build is
    retried one kernel at a time, so a broken kernel fails its own test and no other.
    """

    def __init__(self, pool: ProcessPoolExecutor, wanted: set[tuple[str, bool]]) -> None:
        self.pool = pool
        self.wanted = wanted  # (case, fuse) of the tests this run selected
        self.built: dict[tuple[str, bool], Any] = {}  # a JitKernel or the exception
        self.pending: dict[tuple[str, bool], _Chunk] = {}
        self.fused_text: dict[str, str] = {}  # each fused program, printed
        #: Cases whose unfused program is their fused one (most of the core catalog: one
        #: operation, or nothing fusion groups): its unfused test runs the fused kernel.
        self.same: set[str] = set()
        self.chunks = 0  # libraries submitted so far

    def get(self, case: Case, fuse: bool) -> jit.JitKernel:
        if not self.pending and not self.built:
            self._plan()
        if not fuse and case.name in self.same:
            return self.get(case, True)
        if (case.name, fuse) not in self.built and (case.name, fuse) not in self.pending:
            self.wanted = {(case.name, fuse)}  # (selected after all: plan its chunk)
            self._plan()
        if (case.name, fuse) not in self.built:
            self._link(self.pending[(case.name, fuse)])
        kernel = self.built[(case.name, fuse)]
        if isinstance(kernel, Exception):
            raise kernel
        return kernel

    def _plan(self) -> None:
        for fuse in (True, False):
            # Kernels that sort go to libraries of their own: a library defines its sorting
            # functions once, which LLVM then compiles once per chunk, not in most chunks.
            pending: dict[bool, dict[str, Any]] = {False: {}, True: {}}
            for case in ALL_CASES:
                if (case.name, fuse) not in self.wanted:
                    continue
                try:
                    traced = trace_kernel(case.fn, parse_signature_string(case.signature),
                                          name=case.name)
                    program = optimize(traced.program, fuse=fuse)
                except Exception as error:  # reported by the case's own test
                    self.built[(case.name, fuse)] = error
                    continue
                text = print_program(program)
                if not fuse and self.fused_text.get(case.name) == text:
                    self.same.add(case.name)  # fusion changed nothing: same kernel
                    continue
                if fuse:
                    self.fused_text[case.name] = text
                group = pending[SORTS.search(text) is not None]
                group[case.name] = program
                if len(group) == CHUNK:
                    self._submit(fuse, dict(group))
                    group.clear()
            for group in pending.values():
                if group:
                    self._submit(fuse, group)

    def _submit(self, fuse: bool, programs: dict[str, Any]) -> None:
        """Start compiling one library of ``programs`` in the pool."""
        target = TargetSpec.parse("native")
        self.chunks += 1
        names = [f"aotc_catalog_{int(fuse)}_{self.chunks}_{k}" for k in range(len(programs))]
        try:
            text = str(build_llvm_module(list(zip(names, programs.values(), strict=True)),
                                         target))
            job = _Chunk(fuse, programs, names, self.pool.submit(object_from_text, text,
                                                                 target))
        except Exception:
            job = _Chunk(fuse, programs, names, None)
        for name in programs:
            self.pending[(name, fuse)] = job

    def _link(self, chunk: _Chunk) -> None:
        try:
            assert chunk.object is not None
            obj = chunk.object.result()
            library = jit.JitLibrary(list(chunk.programs.values()), names=chunk.names,
                                     make_object=lambda entries, target: obj)
            self.built.update({(name, chunk.fuse): k for name, k in
                               zip(chunk.programs, library.kernels, strict=True)})
        except Exception:
            for name, program in chunk.programs.items():
                try:
                    self.built[(name, chunk.fuse)] = jit.JitKernel(program)
                except Exception as error:
                    self.built[(name, chunk.fuse)] = error


@dataclass
class _Chunk:
    """Kernels compiled into one library: their programs, entry names and object code
    (being compiled in another process; None when the module could not be made)."""

    fuse: bool
    programs: dict[str, Any]
    names: list[str]
    object: Future[bytes] | None


@pytest.fixture(scope="module")
def kernels(request: pytest.FixtureRequest) -> Iterator[Kernels]:
    wanted = {(item.callspec.params["case"].name, item.callspec.params["fuse"])
              for item in request.session.items
              if item.module is request.module and hasattr(item, "callspec")}
    workers = max(1, min(2, len(os.sched_getaffinity(0))))
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        yield Kernels(pool, wanted)
        pool.shutdown(cancel_futures=True)


VARIANTS = [(case, True) for case in ALL_CASES] + [(case, False) for case in CASES]


@pytest.mark.parametrize(("case", "fuse"), VARIANTS,
                         ids=[f"{c.name}-{'fused' if f else 'unfused'}" for c, f in VARIANTS])
def test_compiled_matches_numpy(kernels, case, fuse):
    kernel = kernels.get(case, fuse)
    for args in case.inputs:
        # Copies in the catalog's own strided, reversed and transposed layouts, and
        # every argument compared afterwards: one NumPy only reads must be untouched.
        check_against_numpy(case, kernel, args)
