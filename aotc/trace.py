"""Tracers and the tracing entry point.

The kernel runs once on :class:`Tracer` objects. Each carries an abstract type
(dtype and symbolic shape) and records every NumPy operation applied to it through
NumPy's own protocols (``__array_ufunc__``, ``__array_function__``), operators,
indexing and methods, as equations in the current :class:`TraceContext`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from .errors import AotcError, Loc, TraceError
from .ir import Atom, AType, Check, DimSource, Eqn, Params, Program, Var
from .ops import Primitive, type_rules
from .ops.index import check_p
from .shapes import DimExpr
from .types import ArrayType, Signature

_AOTC_DIR = os.path.dirname(os.path.abspath(__file__))
_NUMPY_DIR = os.path.dirname(os.path.abspath(np.__file__))


def user_loc() -> Loc | None:
    """The innermost stack frame outside aotc and NumPy: where the user wrote the op."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if not path.startswith((_AOTC_DIR, _NUMPY_DIR)) and "<frozen" not in path:
            positions = list(frame.f_code.co_positions())
            index = frame.f_lasti // 2
            if 0 <= index < len(positions) and positions[index][0] is not None:
                line, _, col, end_col = positions[index]
                assert line is not None
                end = end_col if positions[index][1] == line and end_col is not None else -1
                return Loc(frame.f_code.co_filename, line, -1 if col is None else col, end)
            return Loc(frame.f_code.co_filename, frame.f_lineno)
        frame = frame.f_back
    return None


@dataclass
class TraceContext:
    """Collects equations and size checks while one kernel (or loop body) runs.

    A nested context (a loop body) captures values of enclosing contexts it uses: each
    becomes an extra input of the body, as a closure does.
    """

    kernel: str
    eqns: list[Eqn] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    parent: TraceContext | None = None
    defined: set[Var] = field(default_factory=set)
    #: Outer var -> the body's input standing for it, in order of first use.
    captures: dict[Var, Var] = field(default_factory=dict)

    def local(self, atom: Atom) -> Atom:
        if not isinstance(atom, Var) or atom in self.defined or self.parent is None:
            return atom
        if atom not in self.captures:
            self.parent.local(atom)  # capture through every enclosing body
            self.captures[atom] = Var(atom.type)
        return self.captures[atom]

    def emit(self, prim: Primitive, inputs: list[Atom], **params: Any) -> list[Var]:
        inputs = [self.local(a) for a in inputs]
        try:
            out_types = type_rules[prim](*(a.type for a in inputs), **params)
        except AotcError:
            raise
        except (ValueError, TypeError) as err:
            raise TraceError(str(err), loc=user_loc(), kernel=self.kernel) from None
        outs = [Var(t) for t in out_types]
        self.eqns.append(Eqn(prim, tuple(inputs), Params.of(params), tuple(outs), user_loc()))
        self.defined.update(outs)
        return outs

    def check(self, op: str, lhs: DimExpr, rhs: DimExpr, error: str, message: str) -> None:
        """Record a runtime size check, unless it is decided at build time.

        At the top of a kernel the check runs before anything else (``P_shapes``); in a
        loop body or branch it must hold only where that code runs, so it becomes a
        ``check`` equation there."""
        diff = lhs - rhs
        if diff.is_const:
            if Check(op, lhs, rhs, error, message).holds(diff.value, 0):
                return
            if self.parent is None:
                raise TraceError(message.format(lhs=lhs, rhs=rhs), loc=user_loc(),
                                 kernel=self.kernel)
        elif op == ">=" and diff.is_nonneg():
            return
        if self.parent is not None:
            self.emit(check_p, [], op=op, lhs=lhs, rhs=rhs, error=error, message=message)
            return
        new = Check(op, lhs, rhs, error, message)
        if new not in self.checks:
            self.checks.append(new)

    def error(self, message: str, hint: str | None = None) -> TraceError:
        return TraceError(message, loc=user_loc(), kernel=self.kernel, hint=hint)


_STACK: list[TraceContext] = []


def current() -> TraceContext:
    if not _STACK:
        raise RuntimeError("no kernel is being traced")
    return _STACK[-1]


class Tracer:
    """A traced array or scalar: NumPy calls on it become IR equations."""

    __array_priority__ = 1000

    def __init__(self, atom: Atom, dim: DimExpr | None = None, weak: bool = False) -> None:
        self._atom = atom
        #: For a view: the array it looks into and where (see ``numpy_api.writes``).
        self.base: Tracer | None = None
        self.window: Any = None
        self.seen_version = 0
        #: For a base: how many writes it has seen.
        self.version = 0
        #: The trace (kernel or loop body) that made this value.
        self.context = _STACK[-1] if _STACK else None
        #: Weakly typed, like a Python scalar: it takes the other operand's dtype.
        self.weak = weak
        #: For an integer scalar that is a size expression (a shape entry or an
        #: integer argument): that expression, so it can size new arrays.
        self.dim = dim

    @property
    def atom(self) -> Atom:
        """The current value; a view re-reads its base after the base was written."""
        if self.base is not None and self.seen_version != self.base.version:
            from .numpy_api.writes import refresh

            refresh(self)
        return self._atom

    def set_atom(self, atom: Atom) -> None:
        self._atom = atom

    @property
    def aval(self) -> AType:
        return self.atom.type

    @property
    def dtype(self) -> np.dtype:
        return self.aval.dtype

    @property
    def ndim(self) -> int:
        return self.aval.ndim

    @property
    def shape(self) -> tuple[Any, ...]:
        from . import lax

        return tuple(d.value if d.is_const else lax.dim_value(d) for d in self.aval.shape)

    @property
    def size(self) -> Any:
        from . import lax
        from .shapes import size

        total = size(self.aval.shape)
        return total.value if total.is_const else lax.dim_value(total)

    def __repr__(self) -> str:
        return f"Tracer({self.aval})"

    # Python control flow and conversions need concrete values.
    def __bool__(self) -> bool:
        raise current().error(
            "a traced value is used where Python needs a concrete bool (and, or, not, "
            "a conditional expression, or a statement aotc leaves as Python)",
            hint="combine conditions with & | ~, select values with np.where(cond, a, b), "
                 "or write an if statement (those compile on runtime values)",
        )

    def _concrete(self, what: str) -> Any:
        raise current().error(
            f"{what}() of a traced value: its value is only known when the kernel runs",
            hint="keep it an array operation, or make it a build-time constant",
        )

    def __int__(self) -> int:
        return self._concrete("int")

    def __float__(self) -> float:
        return self._concrete("float")

    def __index__(self) -> int:
        return self._concrete("index")

    def __len__(self) -> int:
        if not self.aval.shape:
            raise current().error("len() of a scalar")
        first = self.aval.shape[0]
        if first.is_const:
            return first.value
        raise current().error(
            "len() of an axis whose size is only known at run time",
            hint="use x.shape[0], which stays symbolic",
        )

    def __iter__(self) -> Any:
        raise current().error(
            "iterating over a traced array outside a for statement (in a comprehension, "
            "unpacking or a call)",
            hint="write a for loop over it (that compiles), or use array operations",
        )

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise current().error(
            "a traced value was converted to a NumPy array (np.asarray, np.array, or a "
            "function aotc does not know)",
            hint="use the supported NumPy functions on it directly",
        )

    if TYPE_CHECKING:
        # Installed at import time as numpy_api.indexing.getitem (_install_operators).
        def __getitem__(self, key: Any) -> Any: ...

    def __setitem__(self, key: Any, value: Any) -> None:
        from .numpy_api.writes import write

        write(self, key, value)

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        from .numpy_api.ufuncs import array_ufunc

        return array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Callable[..., Any], types: Any, args: Any,
                           kwargs: Any) -> Any:
        from .numpy_api.functions import array_function

        return array_function(func, args, kwargs)

    def __getattr__(self, name: str) -> Any:
        # Array methods (x.sum(), x.reshape(...), x.T, ...) come from one table.
        if name.startswith("__"):
            raise AttributeError(name)
        from .numpy_api.methods import get_method

        return get_method(self, name)


def _install_operators() -> None:
    from .numpy_api.indexing import getitem
    from .numpy_api.ufuncs import _BINARY_OPERATORS, OPERATORS
    from .numpy_api.writes import inplace

    for dunder, fn in OPERATORS.items():
        setattr(Tracer, dunder, fn)
    for name, ufunc in _BINARY_OPERATORS.items():
        setattr(Tracer, f"__i{name}__", inplace(ufunc))
    Tracer.__getitem__ = getitem  # type: ignore[method-assign]


# -- the entry point ---------------------------------------------------------------------

ResultKind = Literal["single", "tuple", "none"]


@dataclass(frozen=True)
class TracedKernel:
    name: str
    program: Program
    param_names: tuple[str, ...]
    signature: Signature
    result_kind: ResultKind


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
    return inputs, sources, tracers


def _output_atoms(result: Any, ctx: TraceContext) -> tuple[list[Atom], ResultKind]:
    from .numpy_api.ufuncs import as_atom

    if result is None:
        return [], "none"
    items, kind = (list(result), "tuple") if isinstance(result, tuple) else ([result], "single")
    atoms = []
    for item in items:
        if isinstance(item, (Tracer, int, float, bool, complex, np.generic)) \
                or type(item).__name__ == "MaskedValue":
            atoms.append(as_atom(item))
        else:
            raise ctx.error(f"the kernel returns {type(item).__name__}, which is not an array "
                            "or number")
    return atoms, kind  # type: ignore[return-value]


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


def trace_kernel(fn: Callable[..., Any], signature: Signature, *,
                 name: str | None = None) -> TracedKernel:
    """Run ``fn`` on tracers for ``signature`` and return its program."""
    import inspect

    name = name or fn.__name__
    info = getattr(fn, "__aotc_export__", None)
    loc = info.loc if info is not None else None
    params = [p for p in inspect.signature(fn).parameters.values()
              if not (p.annotation is inspect.Parameter.empty
                      and p.default is not inspect.Parameter.empty)]
    if len(params) != len(signature.params):
        raise TraceError(f"the signature has {len(signature.params)} parameter(s) but the "
                         f"function takes {len(params)} without defaults", loc=loc, kernel=name)
    names = [p.name for p in params]
    ctx = TraceContext(name)
    _STACK.append(ctx)
    try:
        inputs, sources, tracers = _make_inputs(names, signature.params, ctx)
        ctx.defined.update(inputs)
        from .autograph import convert
        with np.errstate(all="ignore"):
            result, return_loc = _call_noting_return(convert(fn), tracers)
        try:
            atoms, kind = _output_atoms(result, ctx)
        except AotcError as err:
            err.loc = return_loc  # the return statement, not the caller of the kernel
            raise
        _check_results(atoms, signature, ctx, loc)
        writebacks = tuple((i, tracers[n].atom) for i, n in enumerate(names)
                           if tracers[n].version)
    except AotcError as err:
        raise err.with_context(loc=loc, kernel=name) from None
    finally:
        _STACK.pop()
    program = Program(tuple(inputs), tuple(ctx.eqns), tuple(atoms), tuple(sources),
                      tuple(ctx.checks), name, writebacks)
    return TracedKernel(name, program, tuple(names), signature, kind)


_install_operators()
