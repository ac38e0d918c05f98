"""The tables that the wrapper's one call path reads. They hold every overload's
parameters, outputs and entry points as C arrays, and the Python objects of its slow
paths as Python source that the module runs at import.

Why tables: the call path used to be rendered as Cython code for each overload. That was
about 20 KB of C per kernel, and Cython and gcc on that C were most of a module's
build (25 s for 100 kernels). The generic path in ``templates/module.pyx.in`` does the
same checks in the same order; per kernel, the module now has a few table rows and its
``def``. The structs' fields are declared in that template; this module fills them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import BuildError
from ..ir import returned_arguments, runs_loops, runtime_errors
from ..shapes import bound_symbols
from .alias_twins import SAME, TRANSPOSED, alias_twin
from .argument_order import order_conflicts
from .broadcast_twins import twin_of
from .objects import Target
from .wrapper_model import (
    DTYPES,
    OPTIONAL_OF,
    RESULT_KINDS,
    Function,
    Overload,
    dtype_info,
    errors_literal,
    planted,
    signature_text,
    written_params,
)

#: ``aotc_overload.result``: how a call's outputs become its value.
RESULT_CODES = {"single": 0, "tuple": 1, "none": 2, "tree": 3}
#: ``AOTC_SEQUENCES``: a parameter takes no sequences, lists and tuples, or lists only
#: (a kernel writes into it, and a tuple cannot take the writes).
NO_SEQUENCE, ANY_SEQUENCE, LIST_ONLY = range(3)
#: Each scalar parameter's C type, by index (``aotc_param.code``; ``_convert`` switches on it).
SCALAR_CODES = {dtype: k for k, dtype in enumerate(DTYPES)}


@dataclass(frozen=True)
class CallTables:
    """The text of a module's call tables, and the stack space a call needs."""

    c: str  #: C definitions, for the wrapper's verbatim C block
    python: str  #: Python source defining the slow paths' objects
    max_params: int
    max_args: int
    max_outs: int
    max_dims: int


def _checked(dtype: np.dtype, where: str) -> str:
    """The dtype's string (``'<f8'``), once it is one that crosses the C boundary."""
    dtype_info(dtype, where)
    return np.dtype(dtype).str


def _row(values: Sequence[object], note: str = "") -> str:
    comment = f"  /* {note.replace('*/', '* /')} */" if note else ""
    return "    {" + ", ".join(map(str, values)) + "}," + comment


def _array(ctype: str, name: str, rows: list[str]) -> str:
    """A C array; a zero row ends it, so that it is never empty."""
    return f"static const {ctype} {name}[] = {{\n" + "\n".join(rows + ["    {0}"]) + "\n};\n"


class _Builder:
    """Rows of every table, appended overload by overload."""

    def __init__(self) -> None:
        self.params: list[str] = []
        self.fixed: list[str] = []
        self.orders: list[str] = []
        self.outputs: list[str] = []
        self.overloads: list[str] = []
        self.functions: list[str] = []
        self.sequences: list[str] = []
        self.checks: list[str] = []
        self.errors: list[str] = []
        self.trees: list[str] = []
        self.faces: list[str] = []
        self.candidates: list[str] = []

    def overload(self, f: int, fn: Function, ov: Overload, twin: int,
                 alias_twins: Callable[[int, int, int], int]) -> None:
        """Rows of overload ``ov`` of function ``fn`` (number ``f``); ``twin`` is the
        module-wide index of its broadcast twin, or -1, and ``alias_twins(written, read,
        how)`` that of its alias twin for a pair of parameters, or -1."""
        k = len(self.overloads)
        written = written_params(ov)
        first_param, first_output, first_order = len(self.params), len(self.outputs), \
            len(self.orders)
        for i, p in enumerate(ov.signature.params):
            info = dtype_info(p.dtype, f"parameter {i}")
            fixed = [(axis, d) for axis, d in enumerate(p.dims) if isinstance(d, int)]
            row = (int(p.is_scalar), info.kind, SCALAR_CODES[np.dtype(p.dtype)],
                   int(i in written), int(p.defers_wide), info.npy, p.ndim, len(self.fixed),
                   len(fixed))
            self.params.append(_row(row, f"{fn.name}: {fn.param_names[i]}"))
            self.fixed += [_row(pair) for pair in fixed]
        conflicts = order_conflicts(ov.program)
        self.orders += [_row((written, read, alias_twins(written, read, SAME),
                              alias_twins(written, read, TRANSPOSED)))
                        for written, read in conflicts]
        returned = returned_arguments(ov.program)
        ndims = 0
        for j, out in enumerate(ov.program.outputs):
            info = dtype_info(out.type.dtype, f"output {j}")
            dynamic = any(bound_symbols(d) for d in out.type.shape)
            self.outputs.append(_row((info.npy, out.type.ndim, returned.get(j, -1),
                                      int(dynamic))))
            ndims += out.type.ndim
        kind = OPTIONAL_OF.get(ov.result_kind, ov.result_kind)
        if ov.result_kind not in RESULT_KINDS:
            raise BuildError(f"kernel '{fn.name}': unknown result kind {ov.result_kind!r}")
        optional = int(ov.result_kind in OPTIONAL_OF)
        if kind == "single" and len(ov.program.outputs) - optional != 1:
            raise BuildError(f"kernel '{fn.name}': a single result but "
                             f"{len(ov.program.outputs) - optional} outputs")
        self.overloads.append(_row(
            (f, len(ov.signature.params), len(ov.program.outputs), ndims, first_param,
             first_output, first_order, len(conflicts), int(runs_loops(ov.program)),
             RESULT_CODES[kind], optional, twin), f"{k}: {signature_text(fn, ov)}"))
        self.checks.append(errors_literal(fn, [(c.error, c.message)
                                               for c in ov.program.checks]))
        self.errors.append(errors_literal(fn, runtime_errors(ov.program)))
        if kind == "tree":
            values = [f"o[{j}]" for j in range(len(ov.program.outputs))]
            self.trees.append(f"{k}: lambda o: {planted(ov.result_tree, values)}")

    def function(self, fn: Function) -> None:
        f = len(self.functions)
        first = len(self.overloads)
        signatures = [ov.signature for ov in fn.overloads]
        for j, ov in enumerate(fn.overloads):
            twin = twin_of(signatures, j)

            def alias_twins(written: int, read: int, how: int, j: int = j) -> int:
                found = alias_twin(signatures, j, written, read, how)
                return first + found if found >= 0 else -1

            self.overload(f, fn, ov, first + twin if twin >= 0 else -1, alias_twins)
        fewest = min(len(ov.signature.params) for ov in fn.overloads)
        kinds, candidates = [], []
        for i, name in enumerate(fn.param_names):
            types = [ov.signature.params[i] for ov in fn.overloads
                     if i < len(ov.signature.params)]
            if not types or any(p.is_scalar for p in types):
                kinds.append(NO_SEQUENCE)
                candidates.append("None")
                continue
            writes = any(i in written_params(ov) for ov in fn.overloads)
            kinds.append(LIST_ONLY if writes else ANY_SEQUENCE)
            pairs = "".join(f"(_np.dtype({_checked(p.dtype, name)!r}), {p.ndim}), "
                            for p in types)
            candidates.append(f"({pairs.rstrip(' ')})")
        takes_sequences = any(kind != NO_SEQUENCE for kind in kinds)
        self.functions.append(_row(
            (first, len(fn.overloads), len(fn.param_names), fewest,
             len(self.sequences) if takes_sequences else -1), fn.name))
        if takes_sequences:
            self.sequences += [f"    {kind}," for kind in kinds]
        # (a twin reads as the overload it follows)
        sigs = tuple(dict.fromkeys(signature_text(fn, ov) for ov in fn.overloads))
        self.faces.append(f"({fn.name!r}, {sigs!r}, {tuple(fn.param_names)!r})")
        self.candidates.append("(" + "".join(f"{c}, " for c in candidates).rstrip(" ") + ")")


def _entry_points(functions: Sequence[Function], targets: Sequence[Target]) -> str:
    """Each target's shapes and kernel functions, overload by overload (``_use_target``
    points at one target's row)."""
    overloads = [ov for fn in functions for ov in fn.overloads]
    shapes, kernels = [], []
    for target in targets:
        # (a twin is compiled for the first target only: objects.compile_targets)
        symbols = [(targets[0] if ov.signature.fallback else target).symbol(ov.prefix)
                   for ov in overloads]
        shapes += [f"    {s}_shapes," for s in symbols]
        kernels += [f"    {s}," for s in symbols]
    return (f"#define AOTC_NOVERLOADS {len(overloads)}\n"
            "static aotc_shapes_fn const AOTC_SHAPES[] = {\n" + "\n".join(shapes + ["    0"])
            + "\n};\nstatic aotc_kernel_fn const AOTC_KERNELS[] = {\n"
            + "\n".join(kernels + ["    0"]) + "\n};\n")


def _python_tuple(items: list[str]) -> str:
    return "(\n" + "".join(f"    {item},\n" for item in items) + ")"


def build(functions: Sequence[Function], targets: Sequence[Target]) -> CallTables:
    """The call tables of a module exporting ``functions``, with code for ``targets``."""
    b = _Builder()
    for fn in functions:
        b.function(fn)
    c = "".join([
        _array("aotc_param", "AOTC_PARAMS", b.params),
        _array("aotc_fixed", "AOTC_FIXED", b.fixed),
        _array("aotc_order", "AOTC_ORDERS", b.orders),
        _array("aotc_output", "AOTC_OUTPUTS", b.outputs),
        _array("aotc_overload", "AOTC_OVERLOADS", b.overloads),
        _array("aotc_function", "AOTC_FUNCTIONS", b.functions),
        "static const int8_t AOTC_SEQUENCES[] = {\n" + "\n".join(b.sequences + ["    0"])
        + "\n};\n",
        _entry_points(functions, targets),
    ])
    python = "\n".join([
        f"_CHECKS = {_python_tuple(b.checks)}",
        f"_ERRORS = {_python_tuple(b.errors)}",
        "_TREES = {" + "".join(f"\n    {tree}," for tree in b.trees) + "}",
        f"_FUNCTIONS = {_python_tuple(b.faces)}",
        f"_CANDIDATES = {_python_tuple(b.candidates)}",
    ]) + "\n"
    overloads = [ov for fn in functions for ov in fn.overloads]
    return CallTables(
        c=c, python=python,
        max_params=max([1] + [len(fn.param_names) for fn in functions]),
        max_args=max([1] + [len(ov.signature.params) for ov in overloads]),
        max_outs=max([1] + [len(ov.program.outputs) for ov in overloads]),
        max_dims=max([1] + [sum(o.type.ndim for o in ov.program.outputs) for ov in overloads]),
    )
