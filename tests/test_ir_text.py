"""IR text (:mod:`aotc.ir_text`): printed programs parse back to the same programs.

For every kernel of the differential catalogs, traced and optimized: the parsed program
prints the very same text, holds the same contents and verifies; the parsed traced
program optimizes to the same text as the original, and on the catalog's inputs the
interpreter gives the parsed optimized program's results the same bits (results,
arguments written into, errors raised). Every primitive's params (the
registry's programs), sizes and literals whose naive text is ambiguous, and malformed
text, which raises a ValueError naming the line and column. IR only: no compiler.
"""

from __future__ import annotations

import inspect
import itertools
import math
import struct
from dataclasses import dataclass
from typing import Any

import constructs_kernels
import jam_kernels
import numpy as np
import pytest
from numpy_cases import CASES, interpreted_outcome
from numpy_cases_extended import EXTENDED_CASES
from ops.test_registry import CASES as REGISTRY
from test_python_constructs import CALLS

from aotc.errors import Loc
from aotc.ir import (
    DimSource,
    Eqn,
    Lit,
    Params,
    Program,
    Var,
    called_functions,
    nested_programs,
    verify,
)
from aotc.ir_text import IRSyntaxError, parse_program
from aotc.ops import ALL_PRIMITIVES, containers
from aotc.ops.calls import Callee
from aotc.packaging.string_choices import STAND_IN, bound_variants, choices, string_position
from aotc.passes import optimize
from aotc.shapes import DimExpr, if_neg, relu
from aotc.tracing.avals import AType
from aotc.tracing.kernel import trace_kernel
from aotc.types import Signature, parse_signature_string

F64 = np.dtype("f8")


@dataclass
class Kernel:
    name: str
    fn: Any
    signature: Signature
    inputs: list[tuple[Any, ...]]


def _kernels() -> list[Kernel]:
    found = [Kernel(f"numpy/{c.name}", c.fn, parse_signature_string(c.signature), c.inputs)
             for c in CASES + EXTENDED_CASES]
    for name in sorted(vars(constructs_kernels)):
        fn = getattr(constructs_kernels, name)
        export = getattr(fn, "__aotc_export__", None)
        at = string_position(export.signatures) if export else None
        if at is not None:  # one program per string, as the build makes them
            for value, bound in bound_variants(fn, choices(fn, at)):
                calls = [(*c[:at], *c[at + 1:]) for c in CALLS.get(name, [])
                         if c[at] == value or (value == STAND_IN and isinstance(c[at], str)
                                               and c[at] not in choices(fn, at).values)]
                for k, signature in enumerate(bound.__aotc_export__.signatures):
                    found.append(Kernel(f"constructs/{name}/{value!r}/{k}", bound, signature,
                                        calls))
            continue
        for k, signature in enumerate(export.signatures if export else ()):
            found.append(Kernel(f"constructs/{name}/{k}", fn, signature, CALLS.get(name, [])))
    rng = np.random.default_rng(7)
    for name, (fn, signature, make) in jam_kernels.CASES.items():
        found.append(Kernel(f"jam/{name}", fn, parse_signature_string(signature),
                            [make(rng, n) for n in (1, 6, 13)]))
    return found


KERNELS = _kernels()
#: Round-tripped and replayed, but not interpreted: too slow in the interpreter.
NOT_INTERPRETED = {"constructs/descend/0": "100,000 loop iterations, 12 s a run"}


def _round_trip(program: Program) -> Program:
    text = str(program)
    parsed = parse_program(text)
    verify(parsed)
    assert str(parsed) == text
    assert _contents(parsed) == _contents(program)
    assert [(c.name, _contents(c.program)) for c in called_functions(parsed)] == \
        [(c.name, _contents(c.program)) for c in called_functions(program)]
    return parsed


def _contents(program: Program, numbers: dict[Var, int] | None = None) -> Any:
    """All of a program as comparable values, not text: types (sizes with their
    signedness), params by type and bits, literals' bits, each variable numbered where
    first met (so shared variables are shared again), checks, sizes' sources, writes."""
    numbers = {} if numbers is None else numbers

    def value(v: Any) -> Any:
        if isinstance(v, Var):
            return "var", numbers.setdefault(v, len(numbers)), v.type
        if isinstance(v, Lit):
            return "lit", v.dtype, v.value.tobytes()
        if isinstance(v, Program):
            return _contents(v, numbers)
        if isinstance(v, Callee):  # (its program is compared on its own: it calls itself)
            return "callee", v.name, v.results
        if isinstance(v, tuple):
            return tuple(value(x) for x in v)
        if isinstance(v, float):
            return "float", struct.pack("<d", v)
        return type(v).__name__, v

    return (program.name, value(program.inputs),
            [(s.symbol, s.index, s.axis, s.errors, value(s.program)) for s in program.dim_sources],
            program.checks,
            [(e.prim, value(e.outs), [(k, value(v)) for k, v in e.params], value(e.inputs),
              e.loc and (e.loc.file, e.loc.line)) for e in program.eqns],
            value(program.outputs), value(program.writebacks), program.orders)


def _with_defaults(args: tuple[Any, ...], defaults: tuple[Any, ...]) -> tuple[Any, ...]:
    """The call's arguments, those it leaves out that have defaults included."""
    missing = defaults[len(args):]
    return args if inspect.Parameter.empty in missing else args + missing


def _numbered_boxes(program: Program, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """The interpreter's outcome, its boxes' handles counted from 1 (a returned list
    grown at run time is a handle: the two runs compared make their boxes in the same
    order, so equal programs give equal handles)."""
    containers._HANDLES = itertools.count(1)
    return interpreted_outcome(program, args)


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.name)
def test_catalog_programs_round_trip(kernel: Kernel) -> None:
    traced = trace_kernel(kernel.fn, kernel.signature, name=kernel.name.split("/")[1])
    optimized = optimize(traced.program)
    parsed_traced = _round_trip(traced.program)
    parsed_optimized = _round_trip(optimized)
    assert str(optimize(parsed_traced)) == str(optimized)  # a replay gives the same
    ran = 0
    for args in [] if kernel.name in NOT_INTERPRETED else kernel.inputs:
        args = _with_defaults(tuple(args), traced.defaults)
        if len(args) != len(traced.program.inputs):
            continue
        ran += 1
        # The optimized pair only: _round_trip compares both pairs' whole contents, and
        # the traced pair's replay is the optimized text (interpreting it too was a
        # third of this file's time for no check the others lack).
        want = _numbered_boxes(optimized, args)
        assert _numbered_boxes(parsed_optimized, args) == want, args
    assert ran or not kernel.inputs or kernel.name in NOT_INTERPRETED, \
        "no input fits the kernel's parameters"


def test_every_primitive_round_trips():
    """The registry's programs hold every primitive with every kind of its params."""
    seen: set[str] = set()
    for name, _, _, program in REGISTRY:
        try:
            _round_trip(program)
        except Exception as err:
            raise AssertionError(f"registry program {name}: {err}") from err
        seen |= _primitives(program)
    assert seen == set(ALL_PRIMITIVES)


def _primitives(program: Program) -> set[str]:
    return {e.prim.name for e in program.eqns} | {
        name for e in program.eqns for p in nested_programs(e) for name in _primitives(p)}


def _same(a: Any, b: Any) -> bool:
    """Equal values of the same types, floats bit for bit (NaN too)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return struct.pack("<d", a) == struct.pack("<d", b)
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Program):
        return str(a) == str(b)
    return bool(a == b)


N, M = DimExpr.sym("n"), DimExpr.sym("m")
K = DimExpr.sym("k", signed=True)
#: Sizes whose plain ``str`` reads two ways, or as another kind of param.
SIZES = [N, -N, N * M - 3, relu(N - 1), (N + 1) // 2, (N * M) // 2, 3 * (N // 2),
         -(N // 2), (-N) // 2, N // 2 // 3, M * (N // 2) + N, -((N + 1) // 2) + M,
         2 * (relu(N - 5) // 4), if_neg(K, N + K, M - 1), if_neg(K - N, (N - K) // 3, N) * M,
         DimExpr.sym("f64"), DimExpr.sym("True"), DimExpr.sym("dim"), DimExpr.sym("relu"),
         DimExpr.sym("n m") + 1, DimExpr.sym("@0") * DimExpr.sym("$1"), K * K - K,
         DimExpr.sym("nan") + 1, -DimExpr.sym("inf"), 2 * DimExpr.sym("None")]


def _program(params: dict[str, Any], shape: tuple[DimExpr, ...] = (N,)) -> Program:
    x = Var(AType(F64, shape))
    out = Var(AType(F64, shape))
    eqn = Eqn(ALL_PRIMITIVES["neg"], (x,), Params.of(params), (out,))
    return Program((x,), (eqn,), (out,), (DimSource("n", 0, 0),))


def test_params_of_every_kind_come_back_equal():
    nested = _program({})
    params = {
        "ints": (0, -7, 2**70), "flags": (True, False, None),
        "floats": (1.5, -0.0, 0.0, math.nan, -math.nan, math.inf, -math.inf, 1e-300, 5e-324),
        "strings": ("it's \"quoted\"\n\t", "", "x y=z] # no comment", "ünïcode"),
        "dtypes": (np.dtype("f4"), np.dtype("c16"), np.dtype("?"), np.dtype("u8")),
        "tuples": ((), (1,), ((1, 2), (3,)), ((),)), "sizes": tuple(SIZES),
        "constant_sizes": (DimExpr.const(0), DimExpr.const(1), DimExpr.const(-3)),
        "mixed": (1, DimExpr.const(1), N, 1.0, "1"), "body": nested, "bodies": (nested, nested),
        "one_size": N * 2, "one_constant": DimExpr.const(2), "none": None}
    program = _program(params)
    parsed = parse_program(str(program))
    assert str(parsed) == str(program)
    got = dict(parsed.eqns[0].params)
    for key, value in params.items():
        assert _same(got[key], value), (key, got[key], value)


@pytest.mark.parametrize("size", SIZES, ids=str)
def test_sizes_come_back_structurally(size):
    """The same atoms and terms (and signedness), not just an equal-looking text."""
    program = _program({}, (size, N))
    parsed = parse_program(str(program))
    assert parsed.inputs[0].type.shape == (size, N)
    assert str(parsed) == str(program)


def test_signedness_the_size_lines_do_not_imply_is_spelled_out():
    k = Var(AType(np.dtype("i8"), ()))
    x = Var(AType(F64, (N, K)))
    program = Program((x, k), (), (x,), (DimSource("n", 1, None),))  # n unsigned, k signed
    text = str(program)
    assert "  signed k\n" in text and "  unsigned n\n" in text
    parsed = parse_program(text)
    assert parsed.inputs[0].type.shape == (N, K) and str(parsed) == text


@pytest.mark.parametrize("dtype", ["?", "i1", "i8", "u8", "f4", "f8", "c8", "c16"])
def test_literals_come_back_bit_for_bit(dtype):
    dt = np.dtype(dtype)
    values: list[Any] = [0, 1, True]
    if dt.kind in "iu":
        values += [np.iinfo(dt).min, np.iinfo(dt).max]
    if dt.kind in "fc":
        part = np.dtype(f"f{dt.itemsize // (2 if dt.kind == 'c' else 1)}")
        odd_nan = np.frombuffer(np.asarray(np.nan, part).tobytes()[:-1] + b"\xff", part)[0]
        special = [-0.0, np.nan, -np.nan, odd_nan, np.inf, -np.inf, 0.1,
                   np.finfo(part).max, np.finfo(part).tiny, np.finfo(part).smallest_subnormal]
        values += special if dt.kind == "f" else [
            complex(a) + 1j * b for a in special for b in special[:7]]
    for value in values:
        lit = Lit(np.asarray(value).astype(dt)[()], dt)
        program = _program({})
        out = Var(AType(dt, ()))
        eqn = Eqn(ALL_PRIMITIVES["neg"], (lit,), Params(), (out,))
        parsed = parse_program(str(program.replace(eqns=(eqn,), outputs=(out, lit))))
        assert parsed.eqns[0].inputs[0].value.tobytes() == lit.value.tobytes(), str(lit)
        assert parsed.outputs[1] == lit


def test_shared_variables_stay_shared():
    """A size computed by a program over the kernel's own inputs and equations: the
    parsed program shares them with the kernel, as the traced one does."""
    traced = trace_kernel(constructs_kernels.time_grid,
                          constructs_kernels.time_grid.__aotc_export__.signatures[0]).program
    parsed = parse_program(str(traced))
    for program in (traced, parsed):
        (source,) = [s for s in program.dim_sources if s.program is not None]
        assert source.program.inputs == program.inputs
        made = {v for e in program.eqns for v in e.outs}
        assert {v for e in source.program.eqns for v in e.outs} <= made
    assert str(parsed) == str(traced)


def test_comments_and_blank_lines_are_allowed():
    text = """
# a hand-written program
{ lambda a:f64[n] .
  size n = a.shape[0]

  # its one equation
  b:f64[n] = neg a  # here.py:3
  in (b) }
"""
    program = parse_program(text)
    assert str(program) == ("{ lambda a:f64[n] .\n  size n = a.shape[0]\n"
                            "  b:f64[n] = neg a  # here.py:3\n  in (b) }")
    assert program.eqns[0].loc == Loc("here.py", 3)


GOOD = """{ lambda a:f64[n] b:i64[] .
  size n = a.shape[0]
  c:f64[n] = mul a 2.0:f64
  d:f64[] = reduce_sum[axes=(0,)] c
  in (d) }"""


@pytest.mark.parametrize("bad, line, column, message", [
    (GOOD.replace("mul a", "mull a"), 3, 14, "unknown primitive 'mull'"),
    (GOOD.replace("mul a", "mul z"), 3, 18, "'z' is not defined in this program"),
    (GOOD.replace("reduce_sum[axes=(0,)] c", "reduce_sum[axes=(0,)] d"),
     4, 35, "'d' is not defined in this program"),
    (GOOD.replace("a:f64[n]", "a:f65[n]"), 1, 12, "unknown dtype 'f65'"),
    (GOOD.replace("[axes=(0,)]", "[axes=(0,)"), 4, 34, "expected ']', found 'c'"),
    (GOOD.replace("[axes=(0,)]", "[axes=(0,) axes=(0,)]"), 4, 34, "param 'axes' given twice"),
    (GOOD.replace("2.0:f64", "2.0:i64"), 3, 20, "'2.0' is not a i64 value"),
    (GOOD.replace("2.0:f64", "300:i8"), 3, 20, "'300' is not a i8 value (out of range"),
    (GOOD.replace("2.0:f64", "2.0:f64 ;"), 3, 28, "unexpected character ';'"),
    (GOOD.replace("f64[n] = mul", "f64[n +] = mul"), 3, 12, "expected a size, found ']'"),
    (GOOD.replace("d:f64[] = reduce_sum[axes=(0,)] c", "c:f64[] = reduce_sum[axes=(0,)] c"),
     4, 3, "'c' was declared f64[n] before, here f64[]"),
    (GOOD.replace("d:f64[]", "c:f64[n]"), 4, 3, "'c' is defined twice"),
    (GOOD.replace("mul a 2.0:f64", "mul a 2.0:f64  # nowhere"), 3, 29,
     "expected a source location 'file:line' after '#'"),
    (GOOD.replace("  in (d) }", "  write c <- d\n  in (d) }"), 5, 9,
     "write into c, which is not an input of this program"),
    (GOOD.replace("size n = a.shape[0]", "size n = c.shape[0]"), 2, 12,
     "expected an input of this program, found 'c.shape'"),
    (GOOD.replace("size n = a.shape[0]", "check n = 2 else ValueError('no')"), 2, 11,
     "expected one of ==, >=, <, <=, found '='"),
    (GOOD.replace("  in (d) }", ""), 5, 1, "the program ends without 'in (...) }'"),
    (GOOD.replace("a:f64[n]", "a:f64[(n + 1)*2]"), 1, 16,
     "a parenthesized sum must be floor-divided"),
    (GOOD + "\n}", 6, 1, "expected the end of the text, found '}'"),
    ("", 1, 1, "expected '{', found 'end of text'"),
])
def test_malformed_text_names_the_line_and_column(bad, line, column, message):
    with pytest.raises(ValueError, match=f"^line {line}, column {column}: ") as info:
        parse_program(bad)
    assert message in str(info.value)
    assert isinstance(info.value, IRSyntaxError)
    assert (info.value.line, info.value.column) == (line, column)
    source_line, caret = str(info.value).splitlines()[1:3]
    assert source_line.strip() == bad.split("\n")[line - 1].strip()
    assert caret.index("^") - 4 == column - 1
