"""Pass tests as text: each ``ir/*.ir`` file holds a program, passes and the result.

A file is a ``# passes: a,b`` line and comment lines saying what the passes should do,
the input program as :func:`aotc.ir.print_program` prints it, a ``# expect:`` line, and
the program expected. The passes (their names in :data:`aotc.passes.PIPELINE`) run in
order on the parsed input, which is verified after each; the result must print as the
expected text. Both programs must be in printed form (they parse and print back
unchanged), and the interpreter must give the same bits for both on generated
arguments. A new test can start from ``python -m aotc inspect MOD:FN --save-ir FILE``
and ``python -m aotc opt FILE -p PASSES``; its expectation is then checked by hand.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numpy_cases import interpreted_outcome

from aotc.ir import Program, verify
from aotc.ir_text import parse_program
from aotc.passes import PIPELINE

FILES = sorted(Path(__file__).with_name("ir").glob("*.ir"))
PASSES = dict(PIPELINE)


def _read(path: Path) -> tuple[list[str], str, str]:
    """(passes, input text, expected text)."""
    lines = path.read_text().splitlines()
    (header,) = [line for line in lines if line.startswith("# passes:")]
    start = next(k for k, line in enumerate(lines) if line.startswith("{"))
    split = lines.index("# expect:")
    passes = [name.strip() for name in header.removeprefix("# passes:").split(",")]
    return passes, "\n".join(lines[start:split]), "\n".join(lines[split + 1:])


def _arguments(program: Program, base: int, rng: np.random.Generator) -> tuple[Any, ...]:
    """Arrays of sizes ``base``, ``base + 1``... (sizes checked equal made equal), and
    scalars, for the program's inputs."""
    symbols = [s for v in program.inputs for d in v.type.shape for s in sorted(d.symbols())]
    env = {s: base + k for k, s in enumerate(dict.fromkeys(symbols))}
    for check in program.checks:
        if check.op == "==" and str(check.lhs) in env and str(check.rhs) in env:
            env[str(check.lhs)] = env[str(check.rhs)]
    args: list[Any] = []
    for var in program.inputs:
        shape = tuple(d.evaluate(env) for d in var.type.shape)
        dtype = var.type.dtype
        if dtype.kind == "b":
            value = rng.random(shape) > 0.5
        elif dtype.kind in "iu":
            value = rng.integers(-9, 10, shape).astype(dtype)
        else:
            value = (rng.standard_normal(shape) * 3).astype(dtype)
        args.append(value if shape else value[()])
    return tuple(args)


def test_the_files_cover_the_passes():
    covered = {name for path in FILES for name in _read(path)[0]}
    assert {"constant_fold", "cse", "dce", "fusion", "interleave", "snapshots"} <= covered


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_ir_file(path: Path) -> None:
    passes, source, expected = _read(path)
    unknown = set(passes) - PASSES.keys()
    assert not unknown, f"unknown passes {unknown}; the passes: {', '.join(PASSES)}"
    program = parse_program(source)
    assert str(program) == source, "the input is not as print_program prints it"
    assert str(parse_program(expected)) == expected, "the expected text is not printed form"
    verify(program)
    result = program
    for name in passes:
        result = PASSES[name](result)
        verify(result)
    assert str(result) == expected
    rng = np.random.default_rng(0)
    outcomes = []
    for base in (3, 4, 7):
        args = _arguments(program, base, rng)
        outcomes.append(interpreted_outcome(program, args))
        assert interpreted_outcome(result, args) == outcomes[-1], f"sizes from {base}"
    assert any(kind == "value" for kind, *_ in outcomes), outcomes
