"""The optimization pipeline: each pass is a pure ``Program -> Program`` in its own file.

The pipeline is this list; ``optimize`` runs it and, with ``verify=True``, checks
the program after every pass (tests always do). An exception a pass raises (or a
program it leaves malformed) is an :class:`~aotc.errors.InternalError` located at the
equation it was working on.
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import internal_errors
from ..ir import Program, called_functions, verify
from ..packaging.argument_order import record_orders
from .constant_fold import constant_fold
from .cse import cse
from .dce import dce
from .epilogue import dot_epilogue
from .fusion import fusion
from .interleave import interleave
from .jam import jam
from .loop_versioning import version_loops
from .snapshots import snapshots

Pass = Callable[[Program], Program]

PIPELINE: list[tuple[str, Pass]] = [
    # (first: CSE merges reads of an argument that Python makes on either side of a
    # write into another, which may be the same array)
    ("argument_order", record_orders),
    ("constant_fold", constant_fold),
    ("cse", cse),
    ("dce", dce),
    ("interleave", interleave),
    ("fusion", fusion),
    ("dot_epilogue", dot_epilogue),
    ("dce_after_fusion", dce),
    ("loop_versioning", version_loops),
    ("jam", jam),
    ("snapshots", snapshots),
]
#: Passes that only reorganize loops; without them every equation is its own loop.
FUSION_PASSES = {"interleave", "fusion", "dot_epilogue", "dce_after_fusion"}


def optimize(program: Program, *, verify_each: bool = False, fuse: bool = True,
             trace: Callable[[str, Program], None] | None = None) -> Program:
    """Run the pipeline; ``trace(name, program)`` sees the program after each pass.

    ``fuse=False`` (``[tool.aotc] fusion = false``) skips the fusion passes: every
    equation is its own loop, the unfused baseline the benchmarks compare against.
    """
    for name, run in PIPELINE:
        if not fuse and name in FUSION_PASSES:
            continue
        with internal_errors(f"pass '{name}'", kernel=program.name):
            program = run(program)
            if verify_each:
                verify(program)
        if trace is not None:
            trace(name, program)
    _optimize_callees(program, fuse)
    return program


def _optimize_callees(program: Program, fuse: bool) -> None:
    """Each function the program calls (:mod:`aotc.ops.calls`) through the same passes,
    once: its ``optimized`` program is what code generation emits."""
    for callee in called_functions(program):
        if callee.optimized is None:
            callee.optimized = callee.program  # (a call to itself finds it in progress)
            callee.optimized = optimize(callee.program, fuse=fuse)


__all__ = ["PIPELINE", "constant_fold", "cse", "dce", "dot_epilogue", "fusion", "jam",
           "optimize", "snapshots", "version_loops"]
