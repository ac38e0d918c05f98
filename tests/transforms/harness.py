"""Run a transformed kernel three ways: compiled (in-process JIT), on the reference
interpreter, and uncompiled (its Python ``__call__``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from aotc.codegen.core.jit import JitLibrary
from aotc.interpret import eval_program
from aotc.ir import Program
from aotc.passes import optimize
from aotc.tracing.kernel import trace_kernel
from aotc.transforms.api import Transform


def program_of(t: Transform, index: int = 0) -> Program:
    """The transformed program of ``t``'s ``index``-th signature, as the build traces it."""
    return trace_kernel(t, t.signatures()[index], name=t.__name__).program


def compile_all(transforms: list[Transform]) -> list[Any]:
    """One JIT library for all (linking once keeps the tests fast)."""
    programs = [optimize(program_of(t), verify_each=True) for t in transforms]
    return JitLibrary(programs).kernels


def results(out: Any) -> list[np.ndarray]:
    return [np.asarray(o) for o in (out if isinstance(out, (tuple, list)) else [out])]


def interpreted(t: Transform, *args: Any) -> list[np.ndarray]:
    return eval_program(program_of(t), *args)
