"""Tracing a kernel: from a Python function and a signature to a :class:`Program`.

The entry point of the front end, above every layer of it: parameters become tracers
(:mod:`aotc.tracing.tracer`), the function is converted (:mod:`aotc.autograph`) and run with
NumPy's API on tracers (:mod:`aotc.numpy_api`), and what it recorded, its outputs and
its writes into arguments become the program.
"""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType
from typing import Any, Literal

import numpy as np

from .. import numpy_api  # noqa: F401  (registers NumPy's API into the tracer's tables)
from ..autograph import convert, optional
from ..autograph.formatted import Formatted
from ..autograph.optional import Optional
from ..autograph.runtime import KernelRaises
from ..autograph.texts import Text
from ..errors import AotcError, Loc, TraceError, internal_errors, tracing_failure
from ..ir import Atom, Check, DimSource, Eqn, Lit, Params, Program, Var, verify
from ..ops.containers import is_box
from ..ops.elementwise import convert_p
from ..ops.index import PYTHON_NUMBER_BITS, python_number_p
from ..ops.shape import broadcast_in_dim_p
from ..shapes import DimExpr, upper_bound
from ..types import ArrayType, Signature
from ..value_bounds import exact_interval
from .avals import AType
from .bind import bind1
from .tracer import TraceContext, Tracer, as_atom, current, tracing

ResultKind = Literal["single", "tuple", "none", "optional", "optional_tuple", "tree"]
#: What a kernel that may return None returns where it does not: its first output is
#: the flag (the wrapper returns None where it is false).
OPTIONAL_KINDS: dict[str, ResultKind] = {"single": "optional", "tuple": "optional_tuple"}


@dataclass(frozen=True)
class TracedKernel:
    name: str
    program: Program
    param_names: tuple[str, ...]
    signature: Signature
    result_kind: ResultKind
    #: Each parameter's default value (``inspect.Parameter.empty`` when it has none).
    defaults: tuple[Any, ...] = ()
    #: For a result of nested tuples, lists and dicts (kind "tree"): the Python
    #: expression that rebuilds it, output ``i`` written ``@i@``.
    result_tree: str = ""
    #: Sizes of the entry that broadcasting took to be equal, anywhere in the kernel
    #: (where NumPy would stretch one that is 1: aotc.packaging.broadcast_twins).
    equal_sizes: tuple[Check, ...] = ()


def _make_inputs(names: list[str], types: tuple[ArrayType, ...], ctx: TraceContext
                 ) -> tuple[list[Var], list[DimSource], dict[str, Tracer]]:
    inputs: list[Var] = []
    sources: list[DimSource] = []
    tracers: dict[str, Tracer] = {}
    named: dict[str, DimExpr] = {}
    scalar_ints = {n for n, t in zip(names, types, strict=True)
                   if t.is_scalar and t.dtype.kind in "iu"}
    for index, (name, typ) in enumerate(zip(names, types, strict=True)):
        shape = []
        for axis, dim in enumerate(typ.dims):
            # A named size is read (and printed) under its name where it first appears.
            first_named = isinstance(dim, str) and dim not in named and dim not in scalar_ints
            symbol = dim if first_named and isinstance(dim, str) else f"{name}.{axis}"
            sources.append(DimSource(symbol, index, axis))
            here = DimExpr.sym(symbol)
            if isinstance(dim, str):
                if dim in scalar_ints:
                    raise TraceError(f"dimension name '{dim}' is also a parameter name; "
                                     "rename one of them", kernel=ctx.kernel)
                if dim in named:
                    ctx.check("==", here, named[dim], "ValueError",
                              f"parameter '{name}' axis {axis} has size {{lhs}} but '{dim}' "
                              "is {rhs}")
                    shape.append(named[dim])
                else:
                    named[dim] = here
                    shape.append(here)
            elif isinstance(dim, int):
                ctx.check("==", here, DimExpr.const(dim), "ValueError",
                          f"parameter '{name}' axis {axis} has size {{lhs}}, expected {{rhs}}")
                shape.append(DimExpr.const(dim))
            else:
                shape.append(here)
        var = Var(AType(typ.dtype, tuple(shape)))
        inputs.append(var)
        size: DimExpr | None = None
        if name in scalar_ints:  # any value the caller passes, negative ones too
            sources.append(DimSource(name, index, None))
            size = DimExpr.sym(name, signed=True)
        tracers[name] = Tracer(var, size, weak=typ.weak)
        if not shape and index < PYTHON_NUMBER_BITS:  # the caller says if it is one
            (flag,) = ctx.emit(python_number_p, [var], argument=index)
            tracers[name].python_number = Tracer(flag)
    return inputs, sources, tracers


def _aliased(tracers: dict[str, Tracer], signature: Signature) -> dict[str, Tracer]:
    """``tracers`` with the parameter an alias twin takes to be another one replaced by
    that one's tracer (or its ``.T``): the kernel's writes through either name are then
    seen by reads through both, as Python sees them for one array passed twice."""
    if signature.aliases is None:
        return tracers
    first, second, transposed = signature.aliases
    names = list(tracers)
    kept = tracers[names[first]]
    return {**tracers, names[second]: kept.T if transposed else kept}


def _tree(result: Any, leaves: list[Any]) -> str:
    """The expression rebuilding ``result`` (tuples, lists, dicts of values) from its
    leaves, which it appends to ``leaves``: leaf ``i`` is ``@i@``."""
    if isinstance(result, (tuple, list)):
        parts = [_tree(v, leaves) for v in result]
        if isinstance(result, list):
            return "[" + ", ".join(parts) + "]"
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
    if isinstance(result, dict):
        if not all(isinstance(k, (str, int, float, bool)) for k in result):
            raise current().error("the kernel returns a dict whose keys are not constants")
        return "{" + ", ".join(f"{k!r}: {_tree(v, leaves)}" for k, v in result.items()) + "}"
    if isinstance(result, str):  # a string of the build
        return repr(result)
    if isinstance(result, Text):  # one chosen at run time
        leaves.append(result.index)
        return f"{result.options!r}[@{len(leaves) - 1}@]"
    if isinstance(result, Formatted):  # formatted from runtime values, by the caller
        return result.code(leaves)
    if is_box(result):  # a list, set or dict grown at run time
        leaves.append(result.escaped())
        return f"_box_value(@{len(leaves) - 1}@, {result.described()})"
    leaves.append(result)
    return f"@{len(leaves) - 1}@"


def rebuilt(kernel: TracedKernel, values: list[Any], box_value: Any = None) -> Any:
    """A call's value from the kernel's outputs, as its source returned it: one value, a
    tuple, None, or its nested result (:func:`_tree`); for a kernel that may return
    None, the first output is the flag (the outputs are NumPy's values then). A list,
    set or dict the kernel grew is read by ``box_value`` (the compiled caller's)."""
    kind: str = kernel.result_kind
    present: dict[str, str] = {v: k for k, v in OPTIONAL_KINDS.items()}  # optional -> single
    if kind in present:
        if not values[0]:
            return None
        values, kind = values[1:], present[kind]
    if kind == "tree":
        if "_box_value(" in kernel.result_tree and box_value is None:
            raise TraceError("a transform's kernel returns a list, set or dict grown at "
                             "run time: return an array or numbers from it")
        return eval(re.sub(r"@(\d+)@", r"_v[\1]", kernel.result_tree),  # noqa: S307 - ours
                    {"_v": values, "_box_value": box_value})
    by_kind: dict[str, Callable[[], Any]] = {
        "single": lambda: values[0], "tuple": lambda: tuple(values), "none": lambda: None}
    return by_kind[kind]()


#: Values only a result tree describes (strings too: the wrapper picks one by an index).
_NESTED = (tuple, list, dict, str, Text, Formatted)


def is_tree(result: Any) -> bool:
    """A result only a nested structure describes (a list, a dict, a string, one grown
    at run time, a tuple holding one)."""
    def nested(v: Any) -> bool:
        return isinstance(v, _NESTED) or is_box(v)
    return (nested(result) and not isinstance(result, tuple)) or (
        isinstance(result, tuple) and any(nested(v) for v in result))


def _output_atoms(result: Any, ctx: TraceContext) -> tuple[list[Atom], ResultKind]:
    if result is None:
        return [], "none"
    if is_tree(result):
        leaves: list[Any] = []
        _tree(result, leaves)
        atoms, _ = _output_atoms(tuple(leaves), ctx)
        return atoms, "tree"
    if isinstance(result, Optional) and result.unbound is not None:
        return _output_atoms(result.get(), ctx)  # UnboundLocalError where it has no value
    if isinstance(result, Optional):  # None on some paths: a leading flag says which
        atoms, kind = _output_atoms(result.value, ctx)
        return [as_atom(result.present), *atoms], OPTIONAL_KINDS[kind]
    items, kind = (list(result), "tuple") if isinstance(result, tuple) else ([result], "single")
    atoms = []
    for item in items:
        if isinstance(item, Optional):
            if item.unbound is None:
                raise ctx.error("the kernel returns a tuple with an item that is None on "
                                "some paths", hint="return None or the whole tuple")
            item = item.get()
        if isinstance(item, (Tracer, int, float, bool, complex, np.generic)) \
                or type(item).__name__ == "MaskedValue":
            atoms.append(as_atom(item))
            if any(upper_bound(d, ctx.uppers()) is None for d in atoms[-1].type.shape):
                raise ctx.error("the kernel returns an array whose size cannot be bounded "
                                "from its arguments' sizes")
        else:
            raise ctx.error(f"the kernel returns {type(item).__name__}, which is not an array "
                            "or number")
    return atoms, kind


def _copies_made(result: Any, params: dict[str, Tracer]) -> Any:
    """``result`` with each copy of an argument made a new array.

    ``x.copy()``, ``np.array(x)`` or ``x.astype(x.dtype)`` trace to the argument's own
    value (SSA values are never written), and an output that is an argument's value is
    returned as that argument object (``return x``). Only the parameter's own tracer is
    ``x`` itself; any other tracer holding its value is a copy, and gets one, or the
    caller would get an alias of its argument where Python gives a new array."""
    own = {id(t) for t in params.values()}
    values = {t.atom for t in params.values() if t.ndim}

    def fresh(item: Any) -> Any:
        if isinstance(item, Tracer) and id(item) not in own and item.atom in values:
            return bind1(convert_p, item.atom, dtype=item.dtype)
        if isinstance(item, tuple):
            return tuple(fresh(i) for i in item)
        if isinstance(item, list):
            return [fresh(i) for i in item]
        if isinstance(item, dict):
            return {k: fresh(v) for k, v in item.items()}
        return item

    return fresh(result)


def _check_results(atoms: list[Atom], sig: Signature, ctx: TraceContext, loc: Loc | None) -> None:
    if sig.results is None:
        return
    declared = sig.results
    if len(declared) != len(atoms):
        raise TraceError(f"the kernel returns {len(atoms)} value(s) but its signature "
                         f"declares {len(declared)}", loc=loc, kernel=ctx.kernel)
    for i, (atom, want) in enumerate(zip(atoms, declared, strict=True)):
        got = atom.type
        fixed_ok = got.ndim == want.ndim and all(
            not isinstance(w, int) or (g.is_const and g.value == w)
            for w, g in zip(want.dims, got.shape, strict=True))
        if got.dtype != want.dtype or got.ndim != want.ndim or not fixed_ok:
            raise TraceError(
                f"result {i} is {got} but the signature declares {want}", loc=loc,
                kernel=ctx.kernel,
                hint="change the declared result type, or convert with .astype(...)",
            )


def _call_noting_return(fn: Callable[..., Any], kwargs: dict[str, Any]) -> tuple[Any, Loc]:
    """Call the kernel and note the line of the ``return`` it left through."""
    code = getattr(fn, "__code__", None)
    where = Loc(code.co_filename, code.co_firstlineno) if code else Loc("<unknown>", 0)

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal where
        if event == "return" and frame.f_code is code:
            where = Loc(code.co_filename, frame.f_lineno)

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        result = fn(**kwargs)
    finally:
        sys.setprofile(previous)
    return result, where


def _return_loc(fn: Callable[..., Any], name: str, names: list[str], signature: Signature
                ) -> Loc | None:
    """Where the kernel returned, for an error about its results: found by tracing it
    again under a profile hook (not the first time: the hook slowed every trace 6x)."""
    ctx = TraceContext(name, stretches=signature.stretches)
    optional.forget()
    try:
        with tracing(ctx), np.errstate(all="ignore"):
            _, _, tracers = _make_inputs(names, signature.params, ctx)
            tracers = _aliased(tracers, signature)
            return _call_noting_return(convert(fn), tracers)[1]
    except Exception:  # noqa: BLE001 - it raised the first time too: no return to point at
        return None


def trace_kernel(fn: Callable[..., Any], signature: Signature, *,
                 name: str | None = None) -> TracedKernel:
    """Run ``fn`` on tracers for ``signature`` and return its program.

    A transformed kernel (``aotc.vmap(f)``, ``aotc.grad(f)``) traces itself: its
    ``__aotc_trace__`` traces the kernel it wraps and rewrites that program.
    """
    name = name or fn.__name__
    transformed = getattr(fn, "__aotc_trace__", None)
    if transformed is not None:
        return transformed(signature, name=name)  # type: ignore[no-any-return]
    info = getattr(fn, "__aotc_export__", None)
    loc = info.loc if info is not None else None
    if any(p.is_str for p in signature.params):
        raise TraceError("a str parameter is compiled once per string it selects: trace "
                         "the functions aotc.packaging.string_choices.bound_variants makes",
                         loc=loc, kernel=name)
    params = runtime_parameters(fn, len(signature.params), name, loc)
    names = [p.name for p in params]
    defaults = tuple(p.default for p in params)
    ctx = TraceContext(name, stretches=signature.stretches)
    optional.forget()
    try:
        with tracing(ctx):
            inputs, sources, tracers = _make_inputs(names, signature.params, ctx)
            tracers = _aliased(tracers, signature)
            ctx.kernel_inputs = tuple(inputs)
            ctx.argument_ids = frozenset(id(t) for t in tracers.values())
            for k, t in reversed(list(enumerate(tracers.values()))):
                ctx.argument_index[id(t)] = k  # (the first, of one passed twice)
            for var, t in zip(inputs, tracers.values(), strict=True):
                if t.dim is not None:  # an integer argument is its size symbol
                    ctx.known[var] = exact_interval(t.dim)
            ctx.defined.update(inputs)
            try:
                with np.errstate(all="ignore"):
                    result = convert(fn)(**tracers)
            except KernelRaises as always:
                return _always_raising(name, inputs, sources, names, defaults, signature,
                                       always)
            result = _copies_made(result, tracers)
            try:
                atoms, kind = _output_atoms(result, ctx)
                tree = _tree(result, []) if kind == "tree" else ""
            except AotcError as err:
                # the return statement, not the caller of the kernel
                err.loc = _return_loc(fn, name, names, signature)
                raise
            _check_results(atoms[kind in OPTIONAL_KINDS.values():], signature, ctx, loc)
            alias = signature.aliases[1] if signature.aliases else -1
            writebacks = tuple((i, tracers[n].atom) for i, n in enumerate(names)
                               if tracers[n].version and i != alias)
    except AotcError as err:
        raise err.with_context(loc=loc, kernel=name) from None
    except Exception as exc:  # the kernel's own exception, or a bug in aotc
        raise tracing_failure(exc, name).with_context(loc=loc) from exc
    program = Program(tuple(inputs), tuple(ctx.eqns), tuple(atoms),
                      tuple(sources) + tuple(ctx.derived), tuple(ctx.checks), name, writebacks)
    with internal_errors("tracing", kernel=name):  # whatever the kernel does, a malformed
        verify(program)                            # program is a bug in aotc
    entry = {source.symbol for source in program.dim_sources}
    equal_sizes = tuple(c for c in ctx.equal_sizes  # (not sizes bound in loops, or later)
                        if (c.lhs - c.rhs).symbols() <= entry)
    return TracedKernel(name, program, tuple(names), signature, kind, defaults, tree,
                        equal_sizes)


def runtime_parameters(fn: Callable[..., Any], count: int, name: str, loc: Loc | None
                       ) -> list[inspect.Parameter]:
    """The parameters the compiled kernel takes. With annotations, the annotated ones and
    those without a default (unannotated ones with a default are build-time constants);
    with signature strings, the first ``count`` (the rest must have defaults)."""
    every = list(inspect.signature(fn).parameters.values())
    empty = inspect.Parameter.empty
    if any(p.annotation is not empty for p in every):
        params = [p for p in every if not (p.annotation is empty and p.default is not empty)]
    else:
        params = every[:count]
        fixed = [p.name for p in every[count:] if p.default is empty]
        if fixed:
            raise TraceError(f"the signature has {count} parameter(s) but the function also "
                             f"takes '{fixed[0]}' without a default", loc=loc, kernel=name)
    if len(params) != count:
        raise TraceError(f"the signature has {count} parameter(s) but the function takes "
                         f"{len(params)} without defaults", loc=loc, kernel=name)
    return params


def _always_raising(name: str, inputs: list[Var], sources: list[DimSource], names: list[str],
                    defaults: tuple[Any, ...], signature: Signature, always: KernelRaises
                    ) -> TracedKernel:
    """A kernel that raises ``always`` for every input of this signature (a ``raise``
    reached on build-time values): a check that cannot hold, before anything runs."""
    fails = Check(">=", DimExpr.const(0), DimExpr.const(1), always.error,
                  always.message.replace("{", "{{").replace("}", "}}"))
    declared = signature.results or ()
    atoms: list[Atom] = [Var(AType(t.dtype, (DimExpr.const(0),) * t.ndim)) for t in declared]
    zeros = [Eqn(broadcast_in_dim_p, (Lit(0, v.type.dtype),),
                 Params.of({"shape": v.type.shape, "broadcast_dimensions": ()}), (v,))
             for v in atoms if isinstance(v, Var)]
    kind: ResultKind = "tuple" if signature.returns_tuple else "single" if declared else "none"
    program = Program(tuple(inputs), tuple(zeros), tuple(atoms), tuple(sources), (fails,),
                      name)
    return TracedKernel(name, program, tuple(names), signature, kind, defaults)
