"""Render a module's Cython wrapper, C header and ``.pyi`` stub from its traced kernels.

The wrapper is the only code between a Python call and the object code, so it is built
for call overhead: each exported function is a ``def`` with the kernel's own parameter
names (keywords work) that tries its overloads in order with NumPy C-API checks (type
number, rank, fixed dims; no Python calls on the happy path), builds ``aotc_array``
structs on the stack, and calls the entry points of :mod:`aotc.abi`.

All text lives in ``templates/`` as :class:`string.Template` files; this module only
computes the values that fill them. ``render_module`` is the entry point.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from string import Template

import numpy as np

from . import abi, cpu
from .argument_order import order_conflicts
from .errors import BuildError
from .ir import Atom, Program, returned_arguments, runs_loops, runtime_errors
from .objects import Target
from .shapes import bound_symbols
from .types import SHORT_NAMES, ArrayType, Signature
from .ufunc_loops import loop_code, signature_literal
from .ufunc_signature import CoreSignature


@dataclass(frozen=True)
class DTypeInfo:
    """How one dtype appears in the wrapper, the header and the stub."""

    npy: str  #: NumPy C type number (a ``cnp`` constant)
    ctype: str  #: Cython type of a scalar argument held on the stack
    kind: int  #: which Python scalars a parameter accepts: 0 bool, 1 int, 2 float, 3 complex
    py: str  #: ``.pyi`` type of a scalar parameter
    scalar: str  #: ``.pyi`` NumPy scalar type (results and array elements)


_BOOL, _INT, _FLOAT, _COMPLEX = range(4)

DTYPES: dict[np.dtype, DTypeInfo] = {
    np.dtype(code): DTypeInfo(npy, ctype, kind, py, scalar)
    for code, npy, ctype, kind, py, scalar in [
        ("?", "NPY_BOOL", "uint8_t", _BOOL, "bool", "np.bool_"),
        ("i1", "NPY_INT8", "int8_t", _INT, "int", "np.int8"),
        ("i2", "NPY_INT16", "int16_t", _INT, "int", "np.int16"),
        ("i4", "NPY_INT32", "int32_t", _INT, "int", "np.int32"),
        ("i8", "NPY_INT64", "int64_t", _INT, "int", "np.int64"),
        ("u1", "NPY_UINT8", "uint8_t", _INT, "int", "np.uint8"),
        ("u2", "NPY_UINT16", "uint16_t", _INT, "int", "np.uint16"),
        ("u4", "NPY_UINT32", "uint32_t", _INT, "int", "np.uint32"),
        ("u8", "NPY_UINT64", "uint64_t", _INT, "int", "np.uint64"),
        ("f4", "NPY_FLOAT32", "float", _FLOAT, "float", "np.float32"),
        ("f8", "NPY_FLOAT64", "double", _FLOAT, "float", "np.float64"),
        ("c8", "NPY_COMPLEX64", "float complex", _COMPLEX, "complex", "np.complex64"),
        ("c16", "NPY_COMPLEX128", "double complex", _COMPLEX, "complex", "np.complex128"),
    ]
}

#: Scalar-argument conversion for a kind; bool is normalized to one byte 0/1 (the ABI).
#: Cython converts to ``double complex`` as ``complex()`` does (``__complex__``, else
#: ``__float__`` or ``__index__``), so ints, floats and NumPy scalars all arrive.
_CONVERT = {_BOOL: "1 if {arg} else 0", _INT: "{arg}", _FLOAT: "{arg}", _COMPLEX: "{arg}"}
#: The C header's spelling where C and Cython differ: C99's complex types (the layout of
#: NumPy's complex64/complex128, real part first).
_C_SPELLING = {np.dtype("c8"): "float _Complex", np.dtype("c16"): "double _Complex"}

RESULT_KINDS = ("single", "tuple", "none", "optional", "optional_tuple", "tree")
#: Kernels that may return None: the value's kind (their first output is the flag).
_OPTIONAL_OF = {"optional": "single", "optional_tuple": "tuple"}

#: Valid Python parameter names that Cython reads as C types or keywords in a ``def``.
CYTHON_RESERVED = frozenset({
    "NULL", "bint", "char", "const", "cdef", "cimport", "cpdef", "ctypedef", "DEF", "double",
    "float", "IF", "include", "int", "long", "Py_hash_t", "Py_ssize_t", "Py_UCS4", "short",
    "signed", "size_t", "sizeof", "ssize_t", "unsigned", "void", "volatile",
})


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
class Rendered:
    pyx: str
    header: str
    pyi: str


# -- templates ---------------------------------------------------------------------------

def template_dir() -> Path:
    """``aotc/templates`` in an installed wheel, ``templates/`` in a source checkout."""
    installed = Path(__file__).parent / "templates"
    return installed if installed.is_dir() else Path(__file__).parent.parent / "templates"


@cache
def _template(name: str) -> Template:
    return Template((template_dir() / name).read_text(encoding="utf-8"))


def _fill(template: str, /, **values: object) -> str:
    return _template(template).substitute({k: str(v) for k, v in values.items()})


@cache
def _runtime_source() -> str:
    """``templates/runtime.py`` as the module runs it: without its docstring (which would
    become the module's) and comments, as a Python string literal."""
    tree = ast.parse((template_dir() / "runtime.py").read_text(encoding="utf-8"))
    if tree.body and isinstance(tree.body[0], ast.Expr) and isinstance(
            getattr(tree.body[0], "value", None), ast.Constant):
        tree.body.pop(0)
    return repr(ast.unparse(tree))


# -- types as text -------------------------------------------------------------------------

def _dtype(dtype: np.dtype, where: str) -> DTypeInfo:
    info = DTYPES.get(np.dtype(dtype))
    if info is None:
        raise BuildError(f"{where}: dtype {dtype} cannot cross the C boundary")
    return info


def _rank_text(dtype: np.dtype, ndim: int) -> str:
    name = SHORT_NAMES[np.dtype(dtype)]
    return f"{name}[{', '.join([':'] * ndim)}]" if ndim else name


def _result_types(ov: Overload) -> list[str]:
    declared = ov.signature.results
    if declared:
        return [str(t) for t in declared]
    return [_rank_text(out.type.dtype, out.type.ndim) for out in _value_outputs(ov)]


def _value_outputs(ov: Overload) -> tuple[Atom, ...]:
    """The outputs that are the kernel's value (without an optional's flag)."""
    return ov.program.outputs[ov.result_kind in _OPTIONAL_OF:]


def _planted(tree: str, items: list[str]) -> str:
    """``tree`` (see :attr:`Overload.result_tree`) with its outputs replaced by ``items``."""
    return re.sub(r"@(\d+)@", lambda m: items[int(m[1])], tree)


def _shown(kind: str, items: list[str], tuple_text: str) -> str:
    """How results of ``kind`` combine ``items`` (``tuple_text`` formats a tuple's
    joined items); ``X | None`` for an optional."""
    base = _OPTIONAL_OF.get(kind, kind)
    if base == "tree":  # nested tuples, lists and dicts: a stub says only that
        return "object"
    text = {"single": items[0] if items else "None", "none": "None",
            "tuple": tuple_text.format(", ".join(items))}[base]
    return f"{text} | None" if kind in _OPTIONAL_OF else text


def _param_text(t: ArrayType) -> str:
    """``f64[:]``, ``f32``, or ``float`` for a weakly typed Python scalar parameter."""
    return _dtype(t.dtype, str(t)).py if getattr(t, "weak", False) else str(t)


def signature_text(fn: Function, ov: Overload) -> str:
    """``scale(x: f64[:], a: f64) -> f64[:]``: how errors and docs show an overload."""
    params = ", ".join(f"{n}: {_param_text(t)}"
                       for n, t in zip(fn.param_names, ov.signature.params, strict=False))
    results = _result_types(ov)
    shown = _planted(ov.result_tree, results) if ov.result_kind == "tree" else \
        _shown(ov.result_kind, results, "({})")
    return f"{fn.name}({params}) -> {shown}"


# -- the Cython wrapper ------------------------------------------------------------------

def _match_expr(ov: Overload) -> str:
    tests: list[str] = []
    for i, p in enumerate(ov.signature.params):
        info = _dtype(p.dtype, f"parameter {i}")
        if p.is_scalar:
            low = "" if info.kind == _BOOL else "0 <= "
            op = "==" if info.kind == _BOOL else "<="
            tests.append(f"{low}_scalar_kind(a{i}) {op} {info.kind}")
            continue
        tests.append(f"_array_is(a{i}, cnp.{info.npy}, {p.ndim})")
        tests += [f"cnp.PyArray_DIMS(<cnp.ndarray>a{i})[{axis}] == {d}"
                  for axis, d in enumerate(p.dims) if isinstance(d, int)]
    return "\n        and ".join(tests) or "1"


def _written(ov: Overload) -> set[int]:
    """Array parameters the kernel writes into."""
    return {i for i, _ in ov.program.writebacks if not ov.signature.params[i].is_scalar}


def _argument_lines(fn: Function, ov: Overload) -> str:
    parts = []
    written = _written(ov)
    for i, p in enumerate(ov.signature.params):
        if p.is_scalar:
            info = _dtype(p.dtype, f"parameter {i}")
            parts.append(_fill("arg_scalar.pyx.in", i=i, ctype=info.ctype,
                               convert=_CONVERT[info.kind].format(arg=f"a{i}")))
        else:
            check = f"    _check_written(a{i}, {fn.param_names[i]!r})\n" if i in written else ""
            parts.append(_fill("arg_array.pyx.in", i=i, written=check))
    for w, r in order_conflicts(ov.program):
        parts.append(f"    _check_order(a{w}, a{r}, {fn.param_names[w]!r}, "
                     f"{fn.param_names[r]!r})\n")
    return "".join(parts).rstrip("\n")


def _writeback_lines(ov: Overload) -> str:
    """Copies back into arguments the kernel wrote through an aligned native-order copy
    (a byte-swapped, unaligned or packed-record array): NumPy converts on the way."""
    return "".join(f"    if _r{i} is not a{i}:\n        _np.copyto(a{i}, _r{i})\n"
                   for i in sorted(_written(ov)))


def _shrink_lines(ov: Overload) -> str:
    """Outputs whose sizes were only known while the kernel ran: their buffers were
    allocated at the upper bound, and the kernel wrote the actual dims back."""
    lines, offset = [], 0
    for j, out in enumerate(ov.program.outputs):
        if any(bound_symbols(d) for d in out.type.shape):
            lines.append(f"    _o{j} = _shrink(_o{j}, &dims[{offset}], {out.type.ndim})\n")
        offset += out.type.ndim
    return "".join(lines)


def _output_lines(ov: Overload) -> tuple[str, list[str], int]:
    """Allocation code, the Python value of each output, and the dims slots used."""
    parts, values, offset = [], [], 0
    returned = returned_arguments(ov.program)
    for j, out in enumerate(ov.program.outputs):
        info = _dtype(out.type.dtype, f"output {j}")
        ndim = out.type.ndim
        if j in returned:  # ``return a``: the caller's own array, as uncompiled
            parts.append(f"    outv[{j}] = NULL\n")
            values.append(f"a{returned[j]}")
        elif ndim:
            parts.append(_fill("out_array.pyx.in", j=j, ndim=ndim, offset=offset,
                               typenum=f"cnp.{info.npy}"))
            values.append(f"_o{j}")
        else:
            parts.append(_fill("out_scalar.pyx.in", j=j))
            values.append(f"PyArray_Scalar(_o{j}, cnp.PyArray_DescrFromType(cnp.{info.npy}), None)")
        offset += ndim
    return "".join(parts).rstrip("\n"), values, offset


def _result_expr(fn: Function, ov: Overload, values: list[str]) -> str:
    if ov.result_kind not in RESULT_KINDS:
        raise BuildError(f"kernel '{fn.name}': unknown result kind {ov.result_kind!r}")
    flag = values[0] if ov.result_kind in _OPTIONAL_OF else None
    values = values[flag is not None:]
    kind = _OPTIONAL_OF.get(ov.result_kind, ov.result_kind)
    if kind == "single" and len(values) != 1:
        raise BuildError(f"kernel '{fn.name}': a single result but {len(values)} outputs")
    if kind == "tree":
        return _planted(ov.result_tree, values)
    value = {"single": values[0] if values else "None",
             "tuple": f"({', '.join(values)}{',' if len(values) == 1 else ''})",
             "none": "None"}[kind]
    return value if flag is None else f"({value} if {flag} else None)"


def _exception(name: str, where: str) -> str:
    """The name of a builtin exception class (what ``raise`` in a kernel may raise)."""
    cls = getattr(builtins, name, None)
    if not (isinstance(cls, type) and issubclass(cls, BaseException)):
        raise BuildError(f"{where}: runtime error type {name!r} is not a builtin exception")
    return name


def _errors_literal(fn: Function, pairs: Sequence[tuple[str, str]]) -> str:
    """A Python tuple of ``(exception, message)``; messages may hold {lhs} and {rhs}."""
    items = [f"({_exception(error, f'kernel {fn.name!r}')}, {message!r})"
             for error, message in pairs]
    return "(" + "".join(f"{item}, " for item in items).rstrip(" ") + ")"


def _render_overload(fn: Function, k: int, ov: Overload) -> str:
    params = ", ".join(f"object a{i}" for i in range(len(ov.signature.params)))
    outputs, values, ndims = _output_lines(ov)
    return _fill(
        "overload.pyx.in", fn=fn.name, k=k, prefix=ov.prefix, params=params,
        signature=signature_text(fn, ov), match=_match_expr(ov),
        checks=_errors_literal(fn, [(c.error, c.message) for c in ov.program.checks]),
        errors=_errors_literal(fn, runtime_errors(ov.program)),
        nargs=max(1, len(ov.signature.params)), nouts=max(1, len(values)),
        ndims=max(1, ndims), arguments=_argument_lines(fn, ov), outputs=outputs,
        result=_result_expr(fn, ov, values), writebacks=_writeback_lines(ov),
        shrink=_shrink_lines(ov),
        # A kernel with runtime loops may run long whatever its arrays' sizes.
        work="_NOGIL_WORK" if runs_loops(ov.program) else "0",
    )


def _given(fn: Function, ov: Overload) -> str:
    """The test that the caller gave exactly the parameters overload ``ov`` takes."""
    n = len(ov.signature.params)
    fewest = min(len(o.signature.params) for o in fn.overloads)
    tests = [f"{p} is not _MISSING" for p in fn.param_names[fewest:n]]
    tests += [f"{p} is _MISSING" for p in fn.param_names[n:]]
    return " and ".join(tests) + " and " if tests else ""


def literal_default(value: object) -> str | None:
    """The Python literal of a parameter default the wrapper can declare, or None."""
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or type(value) in (bool, int, float, complex):
        return repr(value)
    return None


def _sequence_lines(fn: Function) -> str:
    """Lists and tuples passed where every overload takes an array become the arrays
    NumPy makes of them (NumPy's functions take them too), in the first overload's dtype
    they fit by 'same_kind' casting. Where an overload writes into the array, only a
    list is taken (a tuple cannot change), and the writes go back into it (Numba's
    reflected lists): see :func:`_dispatch_lines`."""
    lines = []
    for i, name in enumerate(fn.param_names):
        types = [ov.signature.params[i] for ov in fn.overloads if i < len(ov.signature.params)]
        if not types or any(p.is_scalar for p in types):
            continue
        candidates = ", ".join(f"(cnp.{_dtype(p.dtype, name).npy}, {p.ndim})" for p in types)
        if any(i in _written(ov) for ov in fn.overloads):
            lines.append(f"    _{name}_given = {name}\n")
            lines.append(f"    {name} = _list_arg({name}, ({candidates},))\n")
        else:
            lines.append(f"    {name} = _sequence_arg({name}, ({candidates},))\n")
    return "".join(lines)


def _dispatch_lines(fn: Function, k: int, ov: Overload) -> str:
    """Try overload ``k``; after a call that wrote into arrays made from lists, put the
    arrays' items back into the lists."""
    args = ", ".join(fn.param_names[:len(ov.signature.params)])
    names = [fn.param_names[i] for i in sorted(_written(ov))]
    if not names:
        return _fill("dispatch.pyx.in", fn=fn.name, k=k, guard=_given(fn, ov), args=args)
    back = "".join(f"        _list_back(_{n}_given, {n})\n" for n in names)
    return (f"    if {_given(fn, ov)}_match_{fn.name}_{k}({args}):\n"
            f"        _result = _call_{fn.name}_{k}({args})\n{back}        return _result\n")


def _render_ufunc(fn: Function, core: CoreSignature) -> str:
    """An ``np.ufunc`` with one inner loop per overload (:mod:`aotc.ufunc_loops`)."""
    parts, fill = [], []
    nargs = len(core.inputs) + len(core.outputs)
    for k, ov in enumerate(fn.overloads):
        outs = [o.type.dtype for o in ov.program.outputs]
        code = loop_code(fn.name, core, outs)
        parts.append(_fill(
            "ufunc_loop.pyx.in", fn=fn.name, k=k, prefix=ov.prefix,
            signature=signature_text(fn, ov),
            checks=_errors_literal(fn, [(c.error, c.message) for c in ov.program.checks]),
            errors=_errors_literal(fn, runtime_errors(ov.program)),
            nargs=max(1, len(ov.signature.params)), nouts=max(1, len(outs)),
            ndims=max(1, sum(o.type.ndim for o in ov.program.outputs)),
            declare=code.declare, setup=code.setup, element=code.element,
            dimcheck=code.dimcheck, copyout=code.copyout, cleanup=code.cleanup))
        fill.append(f"_LOOPS_{fn.name}[{k}] = <cnp.PyUFuncGenericFunction>_loop_{fn.name}_{k}")
        fill.append(f"_DATA_{fn.name}[{k}] = NULL")
        types = [p.dtype for p in ov.signature.params] + outs
        fill += [f"_TYPES_{fn.name}[{k * nargs + a}] = cnp.{_dtype(t, fn.name).npy}"
                 for a, t in enumerate(types)]
    parts.append(_fill(
        "ufunc.pyx.in", name=fn.name, count=len(fn.overloads), ntypes=nargs * len(fn.overloads),
        fill="\n".join(fill), nin=len(core.inputs), nout=len(core.outputs),
        name_bytes=repr(fn.name.encode()), doc_bytes=repr((fn.doc or "").encode()),
        signature=signature_literal(core)))
    return "".join(parts)


def _render_function(fn: Function) -> str:
    """The ``def``: trailing parameters some overloads do not take default to their
    literal default, else to ``_MISSING``; an overload is tried only when exactly its own
    parameters are given. A ufunc export is the ufunc object instead."""
    if fn.ufunc is not None:
        return _render_ufunc(fn, fn.ufunc)
    args = ", ".join(fn.param_names)
    defaults = dict(fn.defaults)
    fewest = min(len(ov.signature.params) for ov in fn.overloads)
    for n in fn.param_names[fewest:]:
        defaults.setdefault(n, "_MISSING")
    params = ", ".join(f"{n}={defaults[n]}" if n in defaults else n for n in fn.param_names)
    dispatch = "".join(_dispatch_lines(fn, k, ov) for k, ov in enumerate(fn.overloads))
    names = tuple(fn.param_names)
    dispatch = _sequence_lines(fn) + dispatch
    body = _fill(
        "function.pyx.in", name=fn.name, params=params,
        args=args + ("," if len(names) == 1 else ""),
        docstring=repr(fn.doc) if fn.doc else "", dispatch=dispatch.rstrip("\n"),
        names=repr(names), signatures=repr(tuple(signature_text(fn, ov) for ov in fn.overloads)),
    )
    return "".join(_render_overload(fn, k, ov) for k, ov in enumerate(fn.overloads)) + body


#: Module-level names of the wrapper template that an exported function must not replace.
TEMPLATE_NAMES = CYTHON_RESERVED | {
    "np", "cnp", "free", "posix_memalign", "PyArray_Scalar", "aotc_array", "PyBool_Check",
    "PyComplex_Check", "PyFloat_Check", "PyLong_Check", "int8_t", "int16_t", "int32_t",
    "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
}


def _check(functions: Sequence[Function]) -> None:
    for fn in functions:
        if not fn.overloads:
            raise BuildError(f"kernel '{fn.name}' has no signature")
        if fn.name in TEMPLATE_NAMES or fn.name.startswith("_"):
            raise BuildError(f"'{fn.name}' cannot be the name of an exported kernel",
                             kernel=fn.name, hint="rename the function; names starting with "
                             "'_' are private and are not exported")
        reserved = [n for n in fn.param_names if n in CYTHON_RESERVED]
        if reserved:
            raise BuildError(f"parameter '{reserved[0]}' cannot be a parameter name of a "
                             "compiled kernel (Cython reads it as a C type or keyword)",
                             kernel=fn.name, hint=f"rename '{reserved[0]}'")
        for ov in fn.overloads:
            if len(ov.signature.params) > len(fn.param_names):
                raise BuildError(
                    f"kernel '{fn.name}': signature {ov.signature} has "
                    f"{len(ov.signature.params)} parameters but the function takes "
                    f"{len(fn.param_names)} ({', '.join(fn.param_names)})"
                )


def _selection(functions: Sequence[Function], targets: Sequence[Target]) -> str:
    """``_use_target(t)``: point every overload's entry pointers at target t's code."""
    prefixes = [ov.prefix for fn in functions for ov in fn.overloads]
    pointers = ", ".join(f"_{kind}_{p}" for p in prefixes for kind in "SK")
    lines = ["cdef void _use_target(int t) noexcept:", f"    global {pointers}"]
    for k, target in enumerate(targets):
        lines.append(f"    {'if' if k == 0 else 'elif'} t == {k}:  # {target.name}")
        for p in prefixes:
            symbol = target.symbol(p)
            lines += [f"        _S_{p} = {symbol}_shapes", f"        _K_{p} = {symbol}"]
    return "\n".join(lines)


def _ufunc_runtime(functions: Sequence[Function]) -> str:
    """The helpers ufunc loops share, in modules that export a ufunc."""
    if all(fn.ufunc is None for fn in functions):
        return ""
    return _fill("ufunc_runtime.pyx.in", scratch_align=abi.SCRATCH_ALIGN)


def render_pyx(module: str, functions: Sequence[Function], *, source: str, header: str,
               targets: Sequence[Target], doc: str | None = None) -> str:
    """The Cython source of the extension module ``module``, which carries object code
    for each of ``targets`` and runs the best one the CPU has (checked at import)."""
    _check(functions)
    externs = "".join(_fill("extern.pyx.in", prefix=t.symbol(ov.prefix))
                      for t in targets for fn in functions for ov in fn.overloads)
    features = tuple(sorted({f for t in targets for f in t.features}))
    short = {dt.str: name for dt, name in SHORT_NAMES.items()}
    errors = {code: (_exception(exc, "abi.KERNEL_ERRORS"), message)
              for code, (exc, message) in sorted(abi.KERNEL_ERRORS.items())}
    errors_text = "{" + ", ".join(f"{c}: ({e}, {m!r})" for c, (e, m) in errors.items()) + "}"
    shape_errors = "{" + ", ".join(f"{c}: ({_exception(e, 'abi.SHAPE_ERRORS')}, {m!r})"
                                   for c, (e, m) in sorted(abi.SHAPE_ERRORS.items())) + "}"
    return _fill(
        "module.pyx.in", source=source, docstring=repr(doc) if doc else "",
        source_name=source.rpartition("/")[2],
        header=header, externs=externs.rstrip("\n"), short_names=repr(short),
        kernel_errors=errors_text, shape_errors=shape_errors, interrupted=abi.INTERRUPTED,
        first_program_error=abi.FIRST_PROGRAM_ERROR,
        cpu_table=cpu.c_table(features), cpu_features=repr(features),
        targets=repr(tuple((t.name, t.features) for t in targets)),
        scratch_align=abi.SCRATCH_ALIGN, runtime=_runtime_source(),
        functions=_ufunc_runtime(functions) + "".join(_render_function(fn) for fn in functions),
        selection=_selection(functions, targets),
        all=repr([fn.name for fn in functions]),
    )


# -- the C header ------------------------------------------------------------------------

def _c_comment(text: str) -> str:
    return text.replace("*/", "* /")


def _entry_doc(fn: Function, ov: Overload) -> str:
    lines = []
    for i, (name, p) in enumerate(zip(fn.param_names, ov.signature.params, strict=False)):
        c = "aotc_array" if not p.is_scalar else \
            _C_SPELLING.get(p.dtype, _dtype(p.dtype, name).ctype)
        lines.append(f"argv[{i}]  {name}: {p}  ({c})")
    for j, out in enumerate(ov.program.outputs):
        elem = _C_SPELLING.get(out.type.dtype, _dtype(out.type.dtype, f"output {j}").ctype)
        lines.append(f"outv[{j}]  {_rank_text(out.type.dtype, out.type.ndim)}  ({elem} elements)")
    for n, chk in enumerate(ov.program.checks, 1):
        lines.append(f"check {n}: {chk.lhs} {chk.op} {chk.rhs} else {chk.error}: {chk.message}")
    for k, (error, message) in enumerate(runtime_errors(ov.program)):
        lines.append(f"error {abi.FIRST_PROGRAM_ERROR + k}: {error}: {message}")
    return "\n".join(" *   " + _c_comment(line) for line in lines)


def render_header(module: str, functions: Sequence[Function], *, source: str,
                  object_name: str, targets: Sequence[Target]) -> str:
    """The C header declaring ``aotc_array`` and every entry point of the module, for
    every target (the baseline's under the plain prefixes)."""
    entries = "".join(
        _fill("entry.h.in", prefix=t.symbol(ov.prefix),
              signature=_c_comment(signature_text(fn, ov) + (f" [{t.name}]" if k else "")),
              doc=_entry_doc(fn, ov), nargs=len(ov.signature.params),
              nouts=len(ov.program.outputs),
              ndims=sum(out.type.ndim for out in ov.program.outputs))
        for k, t in enumerate(targets) for fn in functions for ov in fn.overloads
    )
    guard = "AOTC_" + "".join(c if c.isalnum() else "_" for c in module.upper()) + "_H"
    others = ", ".join(t.name for t in targets[1:]) or "no other target"
    return _fill("module.h.in", source=source, module=module, object=object_name, guard=guard,
                 scratch_align=abi.SCRATCH_ALIGN, entries=entries,
                 baseline=targets[0].name, others=others)


# -- the .pyi stub -----------------------------------------------------------------------

def _doc_literal(doc: str) -> str:
    """A docstring as it was written (triple quotes) when that is exact, else ``repr``."""
    if '"""' in doc or "\\" in doc or doc.endswith('"'):
        return repr(doc)
    return f'"""{doc}"""'


def _pyi_type(t: ArrayType) -> str:
    info = _dtype(t.dtype, str(t))
    return info.py if t.is_scalar else f"NDArray[{info.scalar}]"


def _pyi_result(ov: Overload) -> str:
    outs = [(o.type.dtype, o.type.ndim) for o in _value_outputs(ov)]
    types = [_dtype(d, "result").scalar if n == 0 else f"NDArray[{_dtype(d, 'result').scalar}]"
             for d, n in outs]
    return _shown(ov.result_kind, types, "tuple[{}]" if types else "tuple[()]")


def render_pyi(module: str, functions: Sequence[Function], *, source: str,
               doc: str | None = None) -> str:
    """A typed stub: one ``def`` per distinct Python-level signature, with docstrings."""
    parts = []
    for fn in functions:
        if fn.ufunc is not None:
            parts.append(f"\n\n{fn.name}: np.ufunc\n")
            continue
        stubs: dict[tuple[str, str], None] = {}
        optional = dict(fn.defaults)
        # Narrow element types first: numpy's typing makes float32 arrays match an
        # NDArray[float64] parameter, so the float64 overload would shadow the float32 one.
        for ov in sorted(fn.overloads, key=lambda ov: [np.dtype(p.dtype).itemsize
                                                       for p in ov.signature.params]):
            params = ", ".join(f"{n}: {_pyi_type(t)}" + (" = ..." if n in optional else "")
                               for n, t in zip(fn.param_names, ov.signature.params, strict=False))
            stubs[(params, _pyi_result(ov))] = None
        decorator = "@overload\n" if len(stubs) > 1 else ""
        results = [result for _, result in stubs]
        for k, (params, result) in enumerate(stubs):
            # NDArray[Any] matches every overload, so mypy calls overloads with different
            # results overlapping (NumPy's own stubs say the same); the first match wins.
            ignore = "  # type: ignore[overload-overlap]" \
                if any(r != result for r in results[k + 1:]) else ""
            parts.append(_fill("function.pyi.in", decorator=decorator, name=fn.name,
                               params=params, result=result, ignore=ignore,
                               body=_doc_literal(fn.doc) if fn.doc else "..."))
    return _fill("module.pyi.in", source=source, docstring=_doc_literal(doc) if doc else "",
                 all=repr([fn.name for fn in functions]), functions="".join(parts))


def render_module(module: str, functions: Sequence[Function], *, source: str, header: str,
                  object_name: str, targets: Sequence[Target], doc: str | None = None
                  ) -> Rendered:
    """Everything the build writes for one module: ``.pyx``, ``.h`` and ``.pyi`` text."""
    return Rendered(
        pyx=render_pyx(module, functions, source=source, header=header, doc=doc,
                       targets=targets),
        header=render_header(module, functions, source=source, object_name=object_name,
                             targets=targets),
        pyi=render_pyi(module, functions, source=source, doc=doc),
    )
