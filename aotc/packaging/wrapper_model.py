"""What the wrapper renders: exported functions, their overloads, and how their types
read as text (in errors, docs, the C header and the ``.pyi`` stub).

:mod:`.wrapper` renders these into the module's files and :mod:`.call_tables`
into the tables of the one call path every function shares; both read them from here.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import BuildError
from ..ir import Atom, Program
from ..ops.ufunc_signature import CoreSignature
from ..types import SHORT_NAMES, ArrayType, Signature


@dataclass(frozen=True)
class DTypeInfo:
    """How one dtype appears in the wrapper, the header and the stub."""

    npy: str  #: NumPy C type number (a ``cnp`` constant)
    ctype: str  #: Cython type of a scalar argument held on the stack
    kind: int  #: which Python scalars a parameter accepts: 0 bool, 1 int, 2 float, 3 complex
    py: str  #: ``.pyi`` type of a scalar parameter
    scalar: str  #: ``.pyi`` NumPy scalar type (results and array elements)


BOOL_KIND, INT_KIND, FLOAT_KIND, COMPLEX_KIND = range(4)

DTYPES: dict[np.dtype, DTypeInfo] = {
    np.dtype(code): DTypeInfo(npy, ctype, kind, py, scalar)
    for code, npy, ctype, kind, py, scalar in [
        ("?", "NPY_BOOL", "uint8_t", BOOL_KIND, "bool", "np.bool_"),
        ("i1", "NPY_INT8", "int8_t", INT_KIND, "int", "np.int8"),
        ("i2", "NPY_INT16", "int16_t", INT_KIND, "int", "np.int16"),
        ("i4", "NPY_INT32", "int32_t", INT_KIND, "int", "np.int32"),
        ("i8", "NPY_INT64", "int64_t", INT_KIND, "int", "np.int64"),
        ("u1", "NPY_UINT8", "uint8_t", INT_KIND, "int", "np.uint8"),
        ("u2", "NPY_UINT16", "uint16_t", INT_KIND, "int", "np.uint16"),
        ("u4", "NPY_UINT32", "uint32_t", INT_KIND, "int", "np.uint32"),
        ("u8", "NPY_UINT64", "uint64_t", INT_KIND, "int", "np.uint64"),
        ("f4", "NPY_FLOAT32", "float", FLOAT_KIND, "float", "np.float32"),
        ("f8", "NPY_FLOAT64", "double", FLOAT_KIND, "float", "np.float64"),
        ("c8", "NPY_COMPLEX64", "float complex", COMPLEX_KIND, "complex", "np.complex64"),
        ("c16", "NPY_COMPLEX128", "double complex", COMPLEX_KIND, "complex", "np.complex128"),
    ]
}

RESULT_KINDS = ("single", "tuple", "none", "optional", "optional_tuple", "tree")
#: Kernels that may return None: the value's kind (their first output is the flag).
OPTIONAL_OF = {"optional": "single", "optional_tuple": "tuple"}


@dataclass(frozen=True)
class Overload:
    """One compiled signature of an exported function."""

    prefix: str  #: C symbol prefix, :func:`aotc.abi.symbol_prefix`
    signature: Signature
    #: The program exactly as compiled: its checks are what ``P_shapes`` numbers.
    program: Program
    result_kind: str  #: one of RESULT_KINDS
    #: For kind "tree": the expression rebuilding the result, output ``i`` as ``@i@``.
    result_tree: str = ""


@dataclass(frozen=True)
class Function:
    """An exported function: its Python face and its overloads, tried in order."""

    name: str
    param_names: tuple[str, ...]
    doc: str | None
    overloads: tuple[Overload, ...]
    #: Default values of trailing parameters, by name (``def project(v, z=1.0)``).
    defaults: tuple[tuple[str, object], ...] = ()
    #: Exported as an ``np.ufunc`` with these core dims (each overload one loop).
    ufunc: CoreSignature | None = None


@dataclass(frozen=True)
class StringChoice:
    """An exported function with a ``str`` parameter (:mod:`.string_choices`): for each
    string, the Python expression of what a call with it gets (the hidden function
    compiled for it, the exception every such call raises, or why it did not build),
    picked by the argument's value; ``stub`` is the first hidden function with the
    ``str`` parameter put back (its docs and types)."""

    name: str
    param: str
    position: int
    table: tuple[tuple[str, str], ...]
    hidden: tuple[str, ...]  #: the hidden functions' names
    stub: Function


def dtype_info(dtype: np.dtype, where: str) -> DTypeInfo:
    info = DTYPES.get(np.dtype(dtype))
    if info is None:
        raise BuildError(f"{where}: dtype {dtype} cannot cross the C boundary")
    return info


def rank_text(dtype: np.dtype, ndim: int) -> str:
    name = SHORT_NAMES[np.dtype(dtype)]
    return f"{name}[{', '.join([':'] * ndim)}]" if ndim else name


def value_outputs(ov: Overload) -> tuple[Atom, ...]:
    """The outputs that are the kernel's value (without an optional's flag)."""
    return ov.program.outputs[ov.result_kind in OPTIONAL_OF:]


def _result_types(ov: Overload) -> list[str]:
    declared = ov.signature.results
    if declared:
        return [str(t) for t in declared]
    return [rank_text(out.type.dtype, out.type.ndim) for out in value_outputs(ov)]


def planted(tree: str, items: list[str]) -> str:
    """``tree`` (see :attr:`Overload.result_tree`) with its outputs replaced by ``items``."""
    return re.sub(r"@(\d+)@", lambda m: items[int(m[1])], tree)


def shown(kind: str, items: list[str], tuple_text: str) -> str:
    """How results of ``kind`` combine ``items`` (``tuple_text`` formats a tuple's
    joined items); ``X | None`` for an optional."""
    base = OPTIONAL_OF.get(kind, kind)
    if base == "tree":  # nested tuples, lists and dicts: a stub says only that
        return "object"
    text = {"single": items[0] if items else "None", "none": "None",
            "tuple": tuple_text.format(", ".join(items))}[base]
    return f"{text} | None" if kind in OPTIONAL_OF else text


def _param_text(t: ArrayType) -> str:
    """``f64[:]``, ``f32``, or ``float`` for a weakly typed Python scalar parameter."""
    return dtype_info(t.dtype, str(t)).py if getattr(t, "weak", False) else str(t)


def signature_line(name: str, param_names: Sequence[str], params: Sequence[ArrayType],
                   results: str | None) -> str:
    """``scale(x: f64[:], a: f64) -> f64[:]``: how errors and docs show a signature (no
    arrow when the results are not known)."""
    text = ", ".join(f"{n}: {_param_text(t)}" for n, t in zip(param_names, params,
                                                              strict=False))
    return f"{name}({text})" + (f" -> {results}" if results is not None else "")


def signature_text(fn: Function, ov: Overload) -> str:
    """An overload as errors and docs show it, with its traced results."""
    results = _result_types(ov)
    text = planted(ov.result_tree, results) if ov.result_kind == "tree" else \
        shown(ov.result_kind, results, "({})")
    return signature_line(fn.name, fn.param_names, ov.signature.params, text)


def written_params(ov: Overload) -> set[int]:
    """Array parameters the kernel writes into."""
    return {i for i, _ in ov.program.writebacks if not ov.signature.params[i].is_scalar}


def exception_name(name: str, where: str) -> str:
    """The name of a builtin exception class (what ``raise`` in a kernel may raise)."""
    cls = getattr(builtins, name, None)
    if not (isinstance(cls, type) and issubclass(cls, BaseException)):
        raise BuildError(f"{where}: runtime error type {name!r} is not a builtin exception")
    return name


def errors_literal(fn: Function, pairs: Sequence[tuple[str, str]]) -> str:
    """A Python tuple of ``(exception, message)``; messages may hold {lhs} and {rhs}."""
    items = [f"({exception_name(error, f'kernel {fn.name!r}')}, {message!r})"
             for error, message in pairs]
    return "(" + "".join(f"{item}, " for item in items).rstrip(" ") + ")"
