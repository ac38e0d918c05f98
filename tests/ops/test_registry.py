"""Every primitive has every rule: a missing table entry is a test failure, not a crash.

Asking ``has_lowering(prim)`` is not enough: a family's rule can exist while its
per-dtype implementation (``SCALAR_RULES``'s kinds, a reduction's accumulator...) is
missing. So every primitive is actually lowered here, through the codegen entry point
(``emit_llvm``: LLVM IR built, parsed and verified), in a tiny program per dtype it
accepts: each elementwise primitive at every dtype NumPy has a loop for, the others at
every dtype (their type rules accept them all). All programs go into one LLVM module (fast); only
when that fails is each lowered alone, to name the broken ones. The complex loops NumPy has
that aotc does not (``NO_COMPLEX_KERNEL``) must be refused with an error naming them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from codegen.data import DTYPES, has_numpy_loop
from codegen.programs import ProgramBuilder, binary, unary

from aotc import lax
from aotc.codegen import TargetSpec, emit_llvm
from aotc.errors import AotcError, UnsupportedError
from aotc.ir import Program
from aotc.ops import ALL_PRIMITIVES, impl_rules, type_rules
from aotc.ops.containers import (
    BOX_PRIMITIVES,
    box_clear_p,
    box_copy_p,
    box_escape_p,
    box_item_p,
    box_len_p,
    box_new_p,
    box_sort_p,
    list_find_p,
    list_insert_p,
    list_pop_p,
    list_push_p,
    list_put_p,
    map_delete_p,
    map_find_p,
    map_put_p,
)
from aotc.ops.elementwise import NO_COMPLEX_KERNEL, UFUNC_OF
from aotc.ops.numpy_loops import LOOPS
from aotc.ops.random import DISTRIBUTIONS, GENERATORS
from aotc.passes import optimize
from aotc.shapes import DimExpr, ceil_div, relu
from aotc.tracing.kernel import trace_kernel
from aotc.types import parse_signature_string

ELEMENTWISE = {p.name: u for p, u in UFUNC_OF.items()}
A, B, N = DimExpr.sym("a"), DimExpr.sym("b"), DimExpr.sym("n")
ZERO, ONE = DimExpr.const(0), DimExpr.const(1)
CODE = {np.dtype(c): s for c, s in [("?", "b1"), ("i1", "i1"), ("i2", "i2"), ("i4", "i4"),
                                    ("i8", "i8"), ("u1", "u1"), ("u2", "u2"), ("u4", "u4"),
                                    ("u8", "u8"), ("f4", "f4"), ("f8", "f8"), ("c8", "c8"),
                                    ("c16", "c16")]}

# Each builder makes the program for one dtype, exercising the primitives it names (or
# None for a dtype its primitives do not take).
Builder = Callable[[np.dtype], Program | None]


def lowered_here(prim: str, dtype: np.dtype) -> bool:
    """NumPy has the loop, and aotc lowers it (not a complex loop it refuses)."""
    return has_numpy_loop(prim, dtype) and not (dtype.kind == "c" and prim in NO_COMPLEX_KERNEL)


def numpy_computes(ufunc: np.ufunc, dtype: np.dtype) -> bool:
    """NumPy computes ``ufunc`` on arrays of ``dtype`` without casting them, i.e. it has
    a loop of exactly that dtype: found by calling it (NumPy's own dispatch), not by
    reading ``ufunc.types`` as :func:`has_numpy_loop` does."""
    try:
        with np.errstate(all="ignore"):
            ufunc(*[np.ones(2, dtype)] * ufunc.nin, casting="no")
    except TypeError:  # no such loop (NumPy's UFuncTypeError is a TypeError)
        return False
    return True


def _select(dtype: np.dtype) -> Program:
    pb = ProgramBuilder()
    c, x, y, s = pb.array("?", "n"), pb.array(dtype, "n"), pb.array(dtype, "n"), pb.scalar("?")
    t = pb.scalar(dtype)
    return pb.build(pb.apply("select", c, x, y), pb.apply("select", s, x, t),
                    pb.apply("select", s, t, t))


def _convert_from(dtype: np.dtype) -> Program:
    pb = ProgramBuilder()
    x, s = pb.array(dtype, "n"), pb.scalar(dtype)
    return pb.build(*(pb.apply("convert", v, dtype=d) for d in DTYPES for v in (x, s)))


def _reductions(name: str) -> Builder:
    def build(dtype: np.dtype) -> Program:
        pb = ProgramBuilder()
        x = pb.array(dtype, "a", "b", "c")
        return pb.build(*(pb.apply(name, x, axes=axes) for axes in ((1,), (0, 2), (0, 1, 2))))
    return build


def _along_axis(name: str) -> Builder:  # argmax, argmin, cumsum, cumprod
    def build(dtype: np.dtype) -> Program:
        pb = ProgramBuilder()
        x = pb.array(dtype, "a", "b")
        return pb.build(pb.apply(name, x, axis=0), pb.apply(name, x, axis=1))
    return build


def _dot_general(dtype: np.dtype) -> Program:
    pb = ProgramBuilder()
    m, v, t = pb.array(dtype, "a", "b"), pb.array(dtype, "b"), pb.array(dtype, "c", "b", "a")
    dot = lambda x, y, c, b: pb.apply("dot_general", x, y, contracting=c, batch=b)  # noqa: E731
    return pb.build(dot(m, v, ((1,), (0,)), ((), ())), dot(v, v, ((0,), (0,)), ((), ())),
                    dot(m, v, ((), ()), ((), ())), dot(t, m, ((1,), (1,)), ((2,), (0,))))


def _views(dtype: np.dtype) -> Program:
    pb = ProgramBuilder()
    x, s = pb.array(dtype, "a", "b"), pb.scalar(dtype)
    return pb.build(
        pb.apply("broadcast_in_dim", x, shape=(DimExpr.const(3), A, B),
                 broadcast_dimensions=(1, 2)),
        pb.apply("broadcast_in_dim", s, shape=(A,), broadcast_dimensions=()),
        pb.apply("reshape", x, new_sizes=(A * B,)),
        pb.apply("transpose", x, permutation=(1, 0)),
        pb.apply("slice", x, start=(A - 1, ONE), step=(-1, 2), shape=(A, ceil_div(relu(B - 1), 2))),
        pb.apply("refine_shape", x, shape=(A, B)))


def _indexing(dtype: np.dtype) -> Program:
    pb = ProgramBuilder()
    x, y, i = pb.array(dtype, "a", "b"), pb.array(dtype, "n"), pb.array("i8", "k")
    j = pb.scalar("i8")
    part = pb.apply("slice", y, start=(ZERO,), step=(1,), shape=(N // 2,))
    keep = pb.apply("ne", pb.apply("convert", x, dtype=np.dtype(bool)), True)  # x's nonzeros
    count = pb.apply("reduce_sum", pb.apply("convert", keep, dtype=np.dtype(np.int64)),
                     axes=(0, 1))
    pb.apply("bind_dim", count, symbol="@kept", upper=A * B)
    return pb.build(
        pb.apply("take", x, i, axis=1), pb.apply("take", x, j, axis=0),
        pb.apply("update_slice", y, part, start=(ONE,), step=(2,)),
        pb.apply("concatenate", x, x, axis=1),
        pb.apply("compress", x, keep, size=DimExpr.sym("@kept")))


def _parts(dtype: np.dtype) -> Program | None:
    """``real`` and ``imag`` of a complex value."""
    if dtype.kind != "c":
        return None
    pb = ProgramBuilder()
    x, s = pb.array(dtype, "n"), pb.scalar(dtype)
    return pb.build(*(pb.apply(p, v) for p in ("real", "imag") for v in (x, s)))


def _complex(dtype: np.dtype) -> Program | None:
    """``complex(re, im)`` of two floats."""
    if dtype.kind != "f":
        return None
    pb = ProgramBuilder()
    x, s = pb.array(dtype, "n"), pb.scalar(dtype)
    return pb.build(pb.apply("complex", x, s), pb.apply("complex", s, s))


def _iota(dtype: np.dtype) -> Program:
    pb = ProgramBuilder()
    pb.array("f8", "a", "b")
    return pb.build(*(pb.apply("iota", dtype=dtype, shape=(A, B), dimension=d) for d in (0, 1)))


def _sorting(dtype: np.dtype) -> Program | None:
    """``sort`` and ``argsort`` along each axis (a row helper per dtype), and
    ``searchsorted`` either side; complex values are not ordered."""
    if dtype.kind == "c":
        return None
    pb = ProgramBuilder()
    x, a, v = pb.array(dtype, "a", "b"), pb.array(dtype, "n"), pb.array(dtype, "a", "b")
    s = pb.scalar(dtype)
    return pb.build(*(pb.apply(p, x, axis=k) for p in ("sort", "argsort") for k in (0, 1)),
                    *(pb.apply("searchsorted", a, keys, side=side)
                      for side in ("left", "right") for keys in (v, s)))


def _numpy_loops(dtype: np.dtype) -> Program | None:
    """Every registered NumPy gufunc loop whose first input is ``dtype``, over a batch
    axis (an output dimension no input has takes an input's)."""
    loops = [entry for entry in LOOPS if np.dtype(entry.types[0]) == dtype]
    if not loops:
        return None
    pb = ProgramBuilder()
    outputs = []
    for entry in loops:
        ins, _ = entry.types.split("->")
        cores = entry.operands
        named = [name for core in cores[:entry.nin] for name in core]
        atoms = [pb.array(code, "b", *core) if core else pb.scalar(code)
                 for code, core in zip(ins, cores, strict=False)]
        shapes = tuple((DimExpr.sym("b"), *(DimExpr.sym(n if n in named else named[0])
                                            for n in core)) for core in cores[entry.nin:])
        outputs.append(pb.apply("numpy_loop", *atoms, loop=str(entry), shapes=shapes,
                                flag=entry.module.endswith("linalg"))
                       )
    return pb.build(*outputs)


def _misc(dtype: np.dtype) -> Program:  # these take no dtype of their own
    pb = ProgramBuilder()
    x, k = pb.array(dtype, "n"), pb.scalar("i8")
    pb.apply("raise_if", pb.apply("ne", x, x), error="ZeroDivisionError", message="zero")
    pb.apply("check", op=">=", lhs=N, rhs=DimExpr.const(2), error="ValueError",
             message="{lhs} < {rhs}")
    bound = pb.apply("bind_dim", k, symbol="@k", upper=N)  # k clamped into [0, n]
    return pb.build(pb.apply("dim_value", expr=N * 2 + 1), bound,
                    pb.apply("python_number", k, argument=1),
                    pb.apply("c_contiguous", x, argument=0),
                    pb.apply("dim_value", expr=DimExpr.sym("@k") * 3 - N),
                    pb.apply("clock"))


def _random(dtype: np.dtype) -> Program:  # these take no dtype of their own
    """A seed of each generator and every distribution, as arrays (n of them, n from x)
    and scalars: CPython's four draws of the python generator, the rest of numpy's."""
    pb = ProgramBuilder()
    pb.array(dtype, "n")
    scalars = {np.dtype("i8"): pb.scalar("i8"), np.dtype("f8"): pb.scalar("f8")}
    for generator in GENERATORS:
        pb.apply("random_seed", scalars[np.dtype("i8")], generator=generator)
    python = ("double", "exponential", "below", "pygauss")
    draws = [pb.apply("random_draw", *(scalars[t] for t in takes), generator=g,
                      distribution=name, shape=shape)
             for name, (_, takes) in DISTRIBUTIONS.items()
             for g in GENERATORS if (g == "python") == (name in python) or name in python[:2]
             for shape in ((N,), ())]
    return pb.build(*draws)


def _traced(fn: Callable[..., Any], signature: str, fuse: bool = False) -> Program:
    traced = trace_kernel(fn, parse_signature_string(signature), name="k")
    return optimize(traced.program, fuse=fuse)


def _control(dtype: np.dtype) -> Program:
    """for_loop, while_loop, cond and scan with carries of ``dtype``."""
    def kernel(x, k):
        looped = lax.fori_loop(0, k, lambda i, v: v[::-1], x)
        waited, _ = lax.while_loop(lambda s: s[1] < k, lambda s: (s[0][::-1], s[1] + 1), (x, 0))
        chosen = lax.cond(k > 0, lambda v: v, lambda v: v[::-1], x)
        last, stacked = lax.scan(lambda c, r: (r, c), x[0], x)
        return looped, waited, chosen, last, stacked
    return _traced(kernel, f"({CODE[dtype]}[:, :], i8)")


def _fusion(dtype: np.dtype) -> Program:
    """A fused group of elementwise ops with a reduction (every dtype has max and min)."""
    return _traced(lambda x, y: (np.maximum(np.minimum(x, y), x[::-1]),
                                 np.max(np.minimum(x, y), axis=0)),
                   f"({CODE[dtype]}[:, :], {CODE[dtype]}[:, :])", fuse=True)


def _counted_down(x, n):  # type: ignore[no-untyped-def]
    return x if n <= 0 else x + _counted_down(x, n - 1)


def _calls(dtype: np.dtype) -> Program:
    """A recursive function of ``dtype`` (aotc.ops.calls), called in a loop."""
    def kernel(x, n):
        total = x
        for i in range(n):
            total = total + _counted_down(x, i)
        return total
    return _traced(kernel, f"({CODE[dtype]}, i8)")


def _boxes(dtype: np.dtype) -> Program | None:
    """A list and a set of ``dtype`` items and a dict of ``dtype`` values (their lanes
    are bool, integer or float: no complex), every operation on each."""
    if dtype.kind not in "biuf":
        return None
    code = dtype.str.lstrip("<>=|")

    def kernel(v, k):  # type: ignore[no-untyped-def]
        outs = []
        for kind, key, value in (("list", (code,), ()), ("set", (code,), ()),
                                 ("dict", ("i8",), (code,))):
            params = {"kind": kind, "key": key, "value": value}
            h = lax.bind1(box_new_p, **params).atom
            item = (k.atom, v.atom) if kind == "dict" else (v.atom,)
            if kind == "list":
                lax.bind(list_push_p, h, v.atom, **params)
                lax.bind(list_insert_p, h, k.atom, v.atom, **params)
                lax.bind(list_put_p, h, k.atom, v.atom, **params)
                outs += lax.bind(list_pop_p, h, k.atom, **params)
                outs += lax.bind(list_find_p, h, v.atom, **params)
                lax.bind(box_sort_p, h, **params, reverse=True)
            else:
                outs += lax.bind(map_put_p, h, *item, **params)
                outs += lax.bind(map_find_p, h, *item[:1], **params)
                outs += lax.bind(map_delete_p, h, *item[:1], **params)
            outs += lax.bind(box_item_p, h, k.atom, **params)
            copy = lax.bind1(box_copy_p, h, **params)
            lax.bind(box_clear_p, h, **params)
            lax.bind(box_escape_p, h, **params)
            outs += lax.bind(box_len_p, copy.atom, **params)
        return tuple(outs)
    return _traced(kernel, f"({CODE[dtype]}, i8)")


#: name -> (the primitives it is there to lower, its builder per dtype)
BUILDERS: dict[str, tuple[tuple[str, ...], Builder]] = {
    "select": (("select",), _select),
    "convert": (("convert",), _convert_from),
    **{name: ((name,), _reductions(name)) for name in
       ("reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and", "reduce_or")},
    **{name: ((name,), _along_axis(name)) for name in ("argmax", "argmin", "cumsum", "cumprod")},
    "dot_general": (("dot_general",), _dot_general),
    "views": (("broadcast_in_dim", "reshape", "transpose", "slice", "refine_shape"), _views),
    "indexing": (("take", "update_slice", "concatenate", "compress"), _indexing),
    "iota": (("iota",), _iota),
    "parts": (("real", "imag"), _parts),
    "complex": (("complex",), _complex),
    "misc": (("dim_value", "raise_if", "check", "bind_dim", "python_number", "c_contiguous",
              "clock"),
             _misc),
    "sorting": (("sort", "argsort", "searchsorted"), _sorting),
    "random": (("random_seed", "random_draw"), _random),
    "control": (("for_loop", "while_loop", "cond", "scan"), _control),
    "fusion": (("fusion",), _fusion),
    "calls": (("call",), _calls),
    "boxes": (tuple(p.name for p in BOX_PRIMITIVES), _boxes),
    "numpy_loops": (("numpy_loop",), _numpy_loops),
}


def _programs() -> Iterator[tuple[str, tuple[str, ...], np.dtype, Program]]:
    """(entry name, the primitives it exercises, dtype, program) for every case."""
    for prim, ufunc in ELEMENTWISE.items():
        for dtype in DTYPES:
            if lowered_here(prim, dtype):
                program = unary(prim, dtype) if ufunc.nin == 1 else binary(prim, dtype)
                yield f"{prim}_{CODE[dtype]}", (prim,), dtype, program
    for family, (prims, build) in BUILDERS.items():
        for dtype in DTYPES:
            try:
                program = build(dtype)
            except Exception as error:  # reported by test_every_family_builds_every_dtype
                BUILD_ERRORS[f"{family}_{CODE[dtype]}"] = error
                continue
            if program is None:
                continue
            yield f"{family}_{CODE[dtype]}", prims, dtype, program


BUILD_ERRORS: dict[str, Exception] = {}
CASES = list(_programs())


def _prims_in(program: Program) -> Iterator[str]:
    for eqn in program.eqns:
        yield eqn.prim.name
        for _, value in eqn.params:
            nested = value if isinstance(value, tuple) else (value,)
            for p in nested:
                if isinstance(p, Program):
                    yield from _prims_in(p)


@pytest.fixture(scope="module")
def lowered() -> dict[str, Exception | None]:
    """Each entry's error (None: it lowered). One module for all; if that fails, each
    entry alone, so a broken rule fails its own primitive's test and no other."""
    entries = [(name, program) for name, _, _, program in CASES]
    target = TargetSpec()
    try:
        emit_llvm(entries, target, optimized=False)
        return dict.fromkeys((name for name, _ in entries), None)
    except Exception:
        errors: dict[str, Exception | None] = {}
        for name, program in entries:
            try:
                emit_llvm([(name, program)], target, optimized=False)
                errors[name] = None
            except Exception as error:
                errors[name] = error
        return errors


@pytest.mark.parametrize("name", sorted(ALL_PRIMITIVES))
def test_front_end_rules_exist(name):
    prim = ALL_PRIMITIVES[name]
    assert prim in type_rules, f"{name} has no type rule"
    assert prim in impl_rules, f"{name} has no NumPy reference rule"


@pytest.mark.parametrize("name", sorted(ALL_PRIMITIVES))
def test_lowers_at_every_dtype(lowered, name):
    """``name`` is lowered by some program here, at every dtype it should support, and
    every such program lowers."""
    mine = [(entry, dtype) for entry, prims, dtype, _ in CASES if name in prims]
    assert mine, (f"no program lowers '{name}': add one to {__name__}.BUILDERS "
                  "(or the elementwise tables)")
    dtypes = {dtype for _, dtype in mine}
    if name in ELEMENTWISE:
        # Not lowered_here again (the programs were chosen by it): NumPy itself is asked
        # which dtypes it computes the ufunc at, less the complex loops aotc refuses
        # (test_refused_complex_loops_name_the_function checks those are refused).
        want = {d for d in DTYPES if numpy_computes(ELEMENTWISE[name], d)
                and not (d.kind == "c" and name in NO_COMPLEX_KERNEL)}
        assert dtypes == want, (f"{name}: lowered at {sorted(map(str, dtypes))}, NumPy "
                                f"computes it at {sorted(map(str, want))}")
    for entry, prims, _, program in CASES:
        if name in prims:
            assert name in set(_prims_in(program)), f"{entry} does not contain '{name}'"
    failed = {entry: lowered[entry] for entry, _ in mine if lowered[entry] is not None}
    assert not failed, f"'{name}' does not lower: " + "; ".join(
        f"{entry}: {type(e).__name__}: {e}" for entry, e in failed.items())


def test_every_family_builds_every_dtype():
    """Shape, index, reduction and control primitives take every dtype (their type
    rules accept them all): a program that cannot be built shrinks the coverage above."""
    assert not BUILD_ERRORS, "programs not built: " + "; ".join(
        f"{entry}: {type(e).__name__}: {e}" for entry, e in BUILD_ERRORS.items())


@pytest.mark.parametrize("name", sorted(NO_COMPLEX_KERNEL))
def test_refused_complex_loops_name_the_function(name):
    """A complex loop NumPy has and aotc does not: tracing stops at the call with the
    ufunc's name, and codegen (reached only by hand-built IR) names the primitive."""
    ufunc = ELEMENTWISE[name]
    with pytest.raises(AotcError, match=f"np.{ufunc.__name__} of complex values is not "
                                        "supported yet") as info:
        _traced(lambda z: ufunc(z) + 1, "(c16[:])")
    assert "<lambda>" in str(info.value) or "test_registry.py" in str(info.value)
    with pytest.raises(UnsupportedError, match=f"'{name}' of complex values"):
        emit_llvm([("k", unary(name, np.dtype("c8")))], TargetSpec(), optimized=False)

