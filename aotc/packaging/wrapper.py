"""Render a module's Cython wrapper, C header and ``.pyi`` stub from its traced kernels.

The wrapper is the only code between a Python call and the object code, so it is built
for call overhead: each exported function is a ``def`` with the kernel's own parameter
names (keywords work) that hands its arguments to one call path shared by the module.
That path tries the overloads in order with NumPy C-API checks (type number, rank,
fixed dims; no Python calls on the happy path), builds ``aotc_array`` structs on the
stack, and calls the entry points of :mod:`aotc.abi`. It reads what differs per overload
from tables (:mod:`aotc.packaging.call_tables`), so a kernel adds rows of data, not C code.

All text lives in ``templates/`` as :class:`string.Template` files; this module only
computes the values that fill them. ``render_module`` is the entry point.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from string import Template

import numpy as np

from .. import abi
from ..errors import BuildError
from ..ir import Program, runtime_errors
from ..ops import numpy_loops
from ..ops.ufunc_signature import CoreSignature
from ..types import ArrayType
from . import call_tables
from .alias_twins import described
from .loop_calls import numpy_loops_called
from .objects import Target
from .slow_paths import short_names, template_dir
from .ufunc_loops import loop_code, signature_literal
from .wrapper_model import (
    BOOL_KIND,
    COMPLEX_KIND,
    DTYPES,
    FLOAT_KIND,
    INT_KIND,
    Function,
    Overload,
    StringChoice,
    dtype_info,
    exception_name,
    rank_text,
    shown,
    signature_text,
    value_outputs,
)

__all__ = ["Function", "Overload", "Rendered", "StringChoice", "literal_default",
           "render_module", "signature_text", "template_dir"]

#: The C header's spelling where C and Cython differ: C99's complex types (the layout of
#: NumPy's complex64/complex128, real part first).
_C_SPELLING = {np.dtype("c8"): "float _Complex", np.dtype("c16"): "double _Complex"}

#: Valid Python parameter names that Cython reads as C types or keywords in a ``def``.
CYTHON_RESERVED = frozenset({
    "NULL", "bint", "char", "const", "cdef", "cimport", "cpdef", "ctypedef", "DEF", "double",
    "float", "IF", "include", "int", "long", "Py_hash_t", "Py_ssize_t", "Py_UCS4", "short",
    "signed", "size_t", "sizeof", "ssize_t", "unsigned", "void", "volatile",
})


@dataclass(frozen=True)
class Rendered:
    pyx: str
    header: str
    pyi: str


# -- templates ---------------------------------------------------------------------------

@cache
def _template(name: str) -> Template:
    return Template((template_dir() / name).read_text(encoding="utf-8"))


def _indent(c_source: str) -> str:
    """C source indented into a Cython ``cdef extern from *`` docstring."""
    return "\n".join("    " + line if line else line for line in c_source.splitlines())


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


def declarations() -> dict[str, bytes]:
    """The files a wrapper and the runtime read beside their ``.pyx``, by name: the part of
    NumPy's C API they use (``templates/numpy_c.pxd``) and their shared interface, in C
    (``aotc_runtime.h``) and for Cython (``templates/abi.pxd``)."""
    return {"_aotc_numpy.pxd": _template("numpy_c.pxd").template.encode(),
            "_aotc_abi.pxd": _template("abi.pxd").template.encode(),
            "aotc_runtime.h": _fill("runtime.h.in", abi_types=_abi_types()).encode()}


# -- the Cython wrapper ------------------------------------------------------------------

def literal_default(value: object) -> str | None:
    """The Python literal of a parameter default the wrapper can declare, or None."""
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or type(value) in (bool, int, float, complex):
        return repr(value)
    return None


def _render_ufunc(fn: Function, core: CoreSignature, first: int) -> str:
    """An ``np.ufunc`` with one inner loop per overload (:mod:`aotc.packaging.ufunc_loops`);
    ``first`` is the index of its first overload in the call tables."""
    parts, fill = [], []
    nargs = len(core.inputs) + len(core.outputs)
    for k, ov in enumerate(fn.overloads):
        outs = [o.type.dtype for o in ov.program.outputs]
        code = loop_code(fn.name, core, outs)
        parts.append(_fill(
            "ufunc_loop.pyx.in", fn=fn.name, k=k, index=first + k,
            signature=signature_text(fn, ov),
            nargs=max(1, len(ov.signature.params)), nouts=max(1, len(outs)),
            ndims=max(1, sum(o.type.ndim for o in ov.program.outputs)),
            declare=code.declare, setup=code.setup, element=code.element,
            dimcheck=code.dimcheck, copyout=code.copyout, cleanup=code.cleanup))
        fill.append(f"_LOOPS_{fn.name}[{k}] = <cnp.PyUFuncGenericFunction>_loop_{fn.name}_{k}")
        fill.append(f"_DATA_{fn.name}[{k}] = NULL")
        types = [p.dtype for p in ov.signature.params] + outs
        fill += [f"_TYPES_{fn.name}[{k * nargs + a}] = cnp.{dtype_info(t, fn.name).npy}"
                 for a, t in enumerate(types)]
    parts.append(_fill(
        "ufunc.pyx.in", name=fn.name, count=len(fn.overloads), ntypes=nargs * len(fn.overloads),
        fill="\n".join(fill), nin=len(core.inputs), nout=len(core.outputs),
        name_bytes=repr(fn.name.encode()), doc_bytes=repr((fn.doc or "").encode()),
        signature=signature_literal(core)))
    return "".join(parts)


def _render_function(f: int, fn: Function, first: int) -> str:
    """The ``def`` of function ``f`` of the call tables (its first overload ``first``):
    it passes its arguments to the shared ``_dispatch``. Trailing parameters some
    overloads do not take default to their literal default, else to ``_MISSING``. A
    ufunc export is the ufunc object instead."""
    if fn.ufunc is not None:
        return _render_ufunc(fn, fn.ufunc, first)
    defaults = dict(fn.defaults)
    fewest = min(len(ov.signature.params) for ov in fn.overloads)
    for n in fn.param_names[fewest:]:
        defaults.setdefault(n, "_MISSING")
    params = ", ".join(f"{n}={defaults[n]}" if n in defaults else n for n in fn.param_names)
    argv = "_arguments"  # the C array of the arguments: a name no parameter has
    while argv in fn.param_names:
        argv += "_"
    store = "\n".join(f"    {argv}[{i}] = <PyObject *>{n}" for i, n in enumerate(fn.param_names))
    return _fill("function.pyx.in", name=fn.name, params=params, index=f, store=store,
                 argv=argv, nparams=max(1, len(fn.param_names)),
                 docstring=repr(fn.doc) if fn.doc else "")


def _render_choice(choice: StringChoice) -> str:
    """The exported function of a ``str`` parameter: it calls the hidden function
    compiled for the string given (``_string_call`` in the runtime)."""
    table = "{" + ", ".join(f"{value!r}: {made}" for value, made in choice.table) + "}"
    doc = f"\n    {choice.stub.doc!r}" if choice.stub.doc else ""
    return (f"\n\n_CHOICES_{choice.name} = {table}\n\n\n"
            f"def {choice.name}(*args, **kwargs):{doc}\n"
            f"    return _string_call({choice.name!r}, {choice.param!r}, {choice.position}, "
            f"_CHOICES_{choice.name}, args, kwargs)\n")


def _visible_names(functions: Sequence[Function], choices: Sequence[StringChoice]
                   ) -> list[str]:
    """The module's ``__all__``: its exports, not the functions hidden behind a choice."""
    hidden = {name for c in choices for name in c.hidden}
    return [fn.name for fn in functions if fn.name not in hidden] + [c.name for c in choices]


def _render_functions(functions: Sequence[Function]) -> str:
    parts, first = [], 0
    for f, fn in enumerate(functions):
        parts.append(_render_function(f, fn, first))
        first += len(fn.overloads)
    return "".join(parts)


def _convert_cases() -> str:
    """The body of the wrapper's ``_convert``: a scalar argument stored in the C type of
    its code (:data:`aotc.packaging.call_tables.SCALAR_CODES`)."""
    lines = []
    for code, info in enumerate(DTYPES.values()):
        value = "1 if o else 0" if info.kind == BOOL_KIND else "o"
        lines += [f"    {'if' if code == 0 else 'elif'} code == {code}:",
                  f"        (<{info.ctype} *>slot)[0] = {value}"]
    return "\n".join(lines)


#: Module-level names of the wrapper template that an exported function must not replace.
TEMPLATE_NAMES = CYTHON_RESERVED | {
    "np", "cnp", "_aotc_numpy", "free", "posix_memalign", "aotc_array", "PyBool_Check",
    "PyComplex_Check", "PyFloat_Check", "PyLong_Check", "int8_t", "int16_t", "int32_t",
    "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
}


@cache
def _private_template_names() -> frozenset[str]:
    """Every ``_name`` the generated module's own code uses (templates and runtime): a
    kernel of that name would replace it. Other private names (SciPy's ``_lombscargle``)
    are exported as they are."""
    names: set[str] = {"_arguments"}  # (the argument array of each function)
    for template in template_dir().iterdir():
        if template.suffix in (".in", ".py"):
            names.update(re.findall(r"\b_\w+", template.read_text(encoding="utf-8")))
    return frozenset(names)


def _check(functions: Sequence[Function]) -> None:
    for fn in functions:
        if not fn.overloads:
            raise BuildError(f"kernel '{fn.name}' has no signature")
        if fn.name in TEMPLATE_NAMES or fn.name in _private_template_names() \
                or (fn.name.startswith("__") and fn.name.endswith("__")):
            raise BuildError(f"'{fn.name}' cannot be the name of an exported kernel: the "
                             "generated module uses it itself", kernel=fn.name,
                             hint="rename the function")
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


def _ufunc_runtime(functions: Sequence[Function]) -> str:
    """The helpers ufunc loops share, in modules that export a ufunc."""
    if all(fn.ufunc is None for fn in functions):
        return ""
    return _fill("ufunc_runtime.pyx.in", scratch_align=abi.SCRATCH_ALIGN)


def render_pyx(module: str, functions: Sequence[Function], *, source: str, header: str,
               targets: Sequence[Target], doc: str | None = None,
               choices: Sequence[StringChoice] = ()) -> str:
    """The Cython source of the extension module ``module``, which carries object code
    for each of ``targets`` and runs the best one the CPU has (checked at import)."""
    _check(functions)
    tables = call_tables.build(functions, targets)
    features = tuple(sorted({f for t in targets for f in t.features}))
    return _fill(
        "module.pyx.in", source=source, docstring=repr(doc) if doc else "",
        source_name=source.rpartition("/")[2], header=header,
        tables_c=_indent(tables.c), tables_py=repr(tables.python),
        max_params=tables.max_params, max_args=tables.max_args, max_outs=tables.max_outs,
        max_dims=tables.max_dims,
        cpu_check=_indent(targets[0].spec.isa.feature_check(features)),
        cpu_features=repr(features),
        targets=repr(tuple((t.name, t.features) for t in targets)),
        functions=_ufunc_runtime(functions) + _render_functions(functions)
        + "".join(map(_render_choice, choices)),
        all=repr(_visible_names(functions, choices)),
        numpy_loops=repr(_loop_spec([ov.program for fn in functions for ov in fn.overloads])),
    )


@cache
def render_runtime() -> str:
    """The Cython source of the runtime every module links (``templates/runtime.pyx.in``):
    the same text for every module of this aotc, so its object is compiled once."""
    errors = {code: (exception_name(exc, "abi.KERNEL_ERRORS"), message)
              for code, (exc, message) in sorted(abi.KERNEL_ERRORS.items())}
    errors_text = "{" + ", ".join(f"{c}: ({e}, {m!r})" for c, (e, m) in errors.items()) + "}"
    shape_errors = "{" + ", ".join(f"{c}: ({exception_name(e, 'abi.SHAPE_ERRORS')}, {m!r})"
                                   for c, (e, m) in sorted(abi.SHAPE_ERRORS.items())) + "}"
    return _fill("runtime.pyx.in", short_names=repr(short_names()),
                 kernel_errors=errors_text, shape_errors=shape_errors,
                 first_program_error=abi.FIRST_PROGRAM_ERROR, runtime=_runtime_source(),
                 scratch_align=abi.SCRATCH_ALIGN, interrupted=abi.INTERRUPTED,
                 convert_cases=_convert_cases())


def _abi_types() -> str:
    """``templates/abi_types.h``: the ABI's types, in the module's header and the runtime's."""
    return _template("abi_types.h").template


def _loop_spec(programs: Sequence[Program]) -> list[tuple[str, str, str] | None]:
    """The NumPy loops the module resolves at import: those its kernels call (none: the
    module imports no more of NumPy than before)."""
    used = set().union(*map(numpy_loops_called, programs))
    return numpy_loops.table_spec(used) if used else []


# -- the C header ------------------------------------------------------------------------

def _c_comment(text: str) -> str:
    return text.replace("*/", "* /")


def _entry_doc(fn: Function, ov: Overload) -> str:
    lines = []
    if ov.signature.stretches:
        lines.append("The broadcast twin of the entry above: where that one's _shapes "
                     "fails, call this one (it stretches sizes that are 1, as NumPy does).")
    if ov.signature.aliases is not None:
        lines.append("An alias twin: call it instead of the first entry of this signature "
                     f"when {described(ov.signature.aliases, fn.param_names)}, one array "
                     "(its reads see the writes through either name, as Python's do).")
    for i, (name, p) in enumerate(zip(fn.param_names, ov.signature.params, strict=False)):
        c = "aotc_array" if not p.is_scalar else \
            _C_SPELLING.get(p.dtype, dtype_info(p.dtype, name).ctype)
        lines.append(f"argv[{i}]  {name}: {p}  ({c})")
    for j, out in enumerate(ov.program.outputs):
        elem = _C_SPELLING.get(out.type.dtype, dtype_info(out.type.dtype, f"output {j}").ctype)
        lines.append(f"outv[{j}]  {rank_text(out.type.dtype, out.type.ndim)}  ({elem} elements)")
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
        if not (k and ov.signature.fallback)  # (twins: the first target's only)
    )
    guard = "AOTC_" + "".join(c if c.isalnum() else "_" for c in module.upper()) + "_H"
    others = ", ".join(t.name for t in targets[1:]) or "no other target"
    return _fill("module.h.in", source=source, module=module, object=object_name, guard=guard,
                 abi_types=_abi_types(), scratch_align=abi.SCRATCH_ALIGN, entries=entries,
                 baseline=targets[0].name, others=others)


# -- the .pyi stub -----------------------------------------------------------------------

def _doc_literal(doc: str) -> str:
    """A docstring as it was written (triple quotes) when that is exact, else ``repr``."""
    if '"""' in doc or "\\" in doc or doc.endswith('"'):
        return repr(doc)
    return f'"""{doc}"""'


#: A scalar parameter's stub type, by the kinds it takes (the aliases of
#: ``templates/module.pyi.in``): Python numbers and NumPy scalars of that kind or lower,
#: as the call takes them (``scale(x, np.float32(2))`` type-checks).
_PYI_SCALARS = {BOOL_KIND: "_Bool", INT_KIND: "_Int", FLOAT_KIND: "_Float",
                COMPLEX_KIND: "_Complex"}


def _pyi_type(t: ArrayType) -> str:
    if t.is_str:
        return "str"
    info = dtype_info(t.dtype, str(t))
    return _PYI_SCALARS[info.kind] if t.is_scalar else f"NDArray[{info.scalar}]"


def _pyi_result(ov: Overload) -> str:
    outs = [(o.type.dtype, o.type.ndim) for o in value_outputs(ov)]
    scalars = [dtype_info(d, "result").scalar for d, _ in outs]
    types = [s if n == 0 else f"NDArray[{s}]" for s, (_, n) in zip(scalars, outs, strict=True)]
    return shown(ov.result_kind, types, "tuple[{}]" if types else "tuple[()]")


def render_pyi(module: str, functions: Sequence[Function], *, source: str,
               doc: str | None = None, choices: Sequence[StringChoice] = ()) -> str:
    """A typed stub: one ``def`` per distinct Python-level signature, with docstrings."""
    parts = []
    visible = _visible_names(functions, choices)
    for fn in [f for f in functions if f.name in visible] + [c.stub for c in choices]:
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
                 all=repr(visible), functions="".join(parts))


def render_module(module: str, functions: Sequence[Function], *, source: str, header: str,
                  object_name: str, targets: Sequence[Target], doc: str | None = None,
                  choices: Sequence[StringChoice] = ()) -> Rendered:
    """Everything the build writes for one module: ``.pyx``, ``.h`` and ``.pyi`` text."""
    return Rendered(
        pyx=render_pyx(module, functions, source=source, header=header, doc=doc,
                       targets=targets, choices=choices),
        header=render_header(module, functions, source=source, object_name=object_name,
                             targets=targets),
        pyi=render_pyi(module, functions, source=source, doc=doc, choices=choices),
    )
