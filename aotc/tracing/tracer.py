"""The tracer core: tracers, the trace they record into, and where the user's code is.

A kernel runs once on :class:`Tracer` objects. Each carries an abstract type (dtype and
symbolic shape) and turns what is done to it into IR equations in the current
:class:`TraceContext`. The core knows nothing of NumPy's API: ``__array_ufunc__``,
``__array_function__``, methods, indexing and operators go through :data:`DISPATCH`,
the table :mod:`aotc.numpy_api` fills when it is imported. The current trace is held in
a :class:`~contextvars.ContextVar`, so builds may trace in several threads.
"""

from __future__ import annotations

import functools
import itertools
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import FrameType
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np

from ..errors import AotcError, Loc, TraceError
from ..ir import Atom, Check, Eqn, Lit, Params, Var
from ..ops import Primitive, type_rules
from ..ops.index import check_p
from ..ops.shape import bind_dim_p, dim_value_p
from ..shapes import BOUND_PREFIX, DimExpr, bound_symbols, size, upper_bound
from .avals import AType
from .guards import Guards
from .messages import SLOTS, token

_AOTC_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_NUMPY_DIR = os.path.dirname(os.path.abspath(np.__file__))


@functools.lru_cache(maxsize=4096)
def _internal(filename: str) -> bool:
    """Whether code of ``filename`` is aotc's or NumPy's (asked for every frame of every
    traced operation: cached)."""
    path = os.path.abspath(filename)
    return path.startswith((_AOTC_DIR, _NUMPY_DIR)) or "<frozen" in path


def user_loc() -> Loc | None:
    """The innermost stack frame outside aotc and NumPy: where the user wrote the op."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if not _internal(frame.f_code.co_filename):
            index = frame.f_lasti // 2
            position = next(itertools.islice(frame.f_code.co_positions(), index, None), None) \
                if index >= 0 else None
            if position is not None and position[0] is not None:
                line, _, col, end_col = position
                assert line is not None
                end = end_col if position[1] == line and end_col is not None else -1
                return Loc(frame.f_code.co_filename, line, -1 if col is None else col, end)
            return Loc(frame.f_code.co_filename, frame.f_lineno)
        frame = frame.f_back
    return None


def user_stack() -> tuple[tuple[Any, int], ...]:
    """Each stack frame outside aotc and NumPy, as (code, instruction): where the user's
    code is, through the helpers it called, down to the expression."""
    frame: FrameType | None = sys._getframe(1)
    frames = []
    while frame is not None:
        if not _internal(frame.f_code.co_filename):
            frames.append((frame.f_code, frame.f_lasti))
        frame = frame.f_back
    return tuple(frames)


#: While an exception's message is made (autograph's ``raise``/``assert``): the runtime
#: values formatted into it, which the kernel stores for the message (aotc.tracing.messages).
MESSAGE_VALUES: ContextVar[list[Tracer] | None] = ContextVar("MESSAGE_VALUES", default=None)


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
    #: Size symbols bound here (``bind_dim``) -> the var holding the value, and its
    #: upper bound; and what was bound for a key (so ``M[i, i:]`` and ``M[j, i:]`` share
    #: the sizes of ``i:``).
    bound: dict[str, tuple[Var, DimExpr]] = field(default_factory=dict)
    bound_for: dict[Any, Any] = field(default_factory=dict)
    #: The kernel's inputs, and sizes computed from its scalar arguments (aotc.tracing.derived;
    #: the kernel's own context only).
    kernel_inputs: tuple[Var, ...] = ()
    #: ``id()`` of the argument tracers: a write into one is seen by the caller.
    argument_ids: frozenset[int] = frozenset()
    #: ``id()`` of each argument tracer -> its parameter's position.
    argument_index: dict[int, int] = field(default_factory=dict)
    derived: list[Any] = field(default_factory=list)
    derived_for: dict[Var, DimExpr] = field(default_factory=dict)
    #: Raises on sizes, which run before the checks after them (aotc.tracing.guards).
    guards: Guards = field(default_factory=Guards)
    #: Intervals of values not made by equations here (integer arguments, loop indices):
    #: var -> a function giving its interval (see aotc.value_bounds).
    known: dict[Var, Callable[[], Any]] = field(default_factory=dict)
    #: The kernel's context only: whether broadcasting stretches a size that is 1 at run
    #: time (a broadcast twin's trace); and, without that, the sizes of its entry that
    #: broadcasting took to be equal anywhere (the broadcast twin runs where one is not:
    #: aotc.packaging.broadcast_twins).
    stretches: bool = False
    equal_sizes: list[Check] = field(default_factory=list)
    #: A function compiled once (recursion on runtime values, aotc.tracing.functions):
    #: a program of its own, whose checks and raises run where its code runs.
    function: bool = False
    #: The kernel's compiled functions so far, by the kinds of their calls (one table
    #: the kernel and its functions share).
    callees: dict[Any, Any] = field(default_factory=dict)
    #: The kernel's context only: the outer arrays each construct wrote into, by the user
    #: stack where it was traced (:func:`user_stack`; see aotc.tracing.bodies).
    written_at: dict[Any, list[Any]] = field(default_factory=dict)

    @property
    def at_top(self) -> bool:
        """Whether this is the kernel's own top level (not a loop body, branch or
        compiled function), where code runs once per call, first."""
        return self.parent is None and not self.function

    @property
    def root(self) -> TraceContext:
        """The kernel's own context (this one outside any loop body)."""
        return self if self.parent is None else self.parent.root

    def find_bound(self, name: str) -> tuple[Var, DimExpr] | None:
        """The binding of a size symbol here or in an enclosing trace."""
        found = self.bound.get(name)
        if found is None and self.parent is not None:
            return self.parent.find_bound(name)
        return found

    def find_known(self, var: Var) -> Callable[[], Any] | None:
        found = self.known.get(var)
        if found is None and self.parent is not None:
            return self.parent.find_known(var)
        return found

    def uppers(self) -> dict[str, DimExpr]:
        """Every size symbol bound so far and visible here, with its upper bound."""
        outer = self.parent.uppers() if self.parent is not None else {}
        return {**outer, **{name: upper for name, (_, upper) in self.bound.items()}}

    def remembered(self, key: Any) -> Any:
        """What :meth:`remember` stored for ``key`` here or in an enclosing trace."""
        if key in self.bound_for:
            return self.bound_for[key]
        return self.parent.remembered(key) if self.parent is not None else None

    def remember(self, key: Any, value: Any) -> None:
        self.bound_for[key] = value

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
            if self.at_top:
                raise TraceError(message.format(lhs=lhs, rhs=rhs), loc=user_loc(),
                                 kernel=self.kernel)
        elif (op == ">=" and diff.is_nonneg()) or (op == "<=" and (-diff).is_nonneg()):
            return
        if self.at_top and not bound_symbols(diff):
            self.guards.before_check(self.eqns, self.checks)
        # In a body, on a size bound while the kernel runs, or after a raise that is no
        # size check (its test reads values, or its message does), the check must hold
        # only where the code runs: hoisted, it would pre-empt that raise. A size's
        # ``e >= 0`` stays first all the same: ``P_shapes`` refuses a negative size
        # before the kernel runs anyway, and the check's message is the better one.
        sign_check = op == ">=" and rhs.is_const and rhs.value == 0
        if not self.at_top or bound_symbols(diff) \
                or (self.guards.blocked and not sign_check):
            self.emit(check_p, [], op=op, lhs=lhs, rhs=rhs, error=error, message=message)
            return
        new = Check(op, lhs, rhs, error, message)
        if new not in self.checks:
            self.checks.append(new)

    def assume_equal(self, lhs: DimExpr, rhs: DimExpr, error: str, message: str) -> None:
        """Broadcasting takes two sizes to be equal here: a size check as any other
        (:meth:`check`), also noted on the kernel's context, so a call where they differ
        can run the broadcast twin instead (where both are sizes of the kernel's entry:
        see ``aotc.tracing.kernel``)."""
        noted = Check("==", lhs, rhs, error, message)
        if noted not in self.root.equal_sizes:
            self.root.equal_sizes.append(noted)
        self.check("==", lhs, rhs, error, message)

    def error(self, message: str, hint: str | None = None) -> TraceError:
        return TraceError(message, loc=user_loc(), kernel=self.kernel, hint=hint)


_CURRENT: ContextVar[TraceContext | None] = ContextVar("aotc_trace", default=None)


def current() -> TraceContext:
    ctx = _CURRENT.get()
    if ctx is None:
        raise RuntimeError("no kernel is being traced")
    return ctx


def python_number(value: Any) -> Any:
    """Whether ``value`` is a Python number here (see ``numpy_api.pynumbers``): False,
    True, or a traced bool (of this trace or one it is nested in)."""
    if isinstance(value, (bool, int, float, complex)):
        return not isinstance(value, np.generic)
    if not isinstance(value, Tracer) or value.ndim:
        return False
    flag = value.python_number
    if flag is False:
        return value.weak
    return flag if flag is True or encloses(flag.context, _CURRENT.get()) else False


def encloses(outer: TraceContext | None, ctx: TraceContext | None) -> bool:
    """``outer`` is ``ctx`` or a trace ``ctx`` is nested in."""
    while ctx is not None:
        if ctx is outer:
            return True
        ctx = ctx.parent
    return False


def tracing_now() -> bool:
    """Whether a kernel is being traced (outside, ``aotc.lax`` runs eagerly on NumPy)."""
    return _CURRENT.get() is not None


@contextmanager
def tracing(ctx: TraceContext) -> Iterator[TraceContext]:
    """Make ``ctx`` the current trace for the ``with`` block."""
    token = _CURRENT.set(ctx)
    try:
        yield ctx
    finally:
        _CURRENT.reset(token)


@dataclass
class Dispatch:
    """NumPy's API on tracers, filled in by :mod:`aotc.numpy_api` when it is imported (the
    core calls through here, so it never imports the layer above it)."""

    array_ufunc: Callable[..., Any] | None = None
    array_function: Callable[..., Any] | None = None
    method: Callable[[Tracer, str], Any] | None = None
    getitem: Callable[[Tracer, Any], Any] | None = None
    setitem: Callable[[Tracer, Any, Any], None] | None = None
    #: ``del x[k]``: of an array standing for a Python list, its item.
    delitem: Callable[[Tracer, Any], None] | None = None
    #: Re-derives a view whose base was written (see ``numpy_api.views``).
    refresh: Callable[[Tracer], None] | None = None
    #: Turns a non-scalar constant (an ndarray, a lazy selection) into a tracer.
    constant: Callable[[Any], Tracer] | None = None
    #: Calls a function the kernel gave a NumPy function (``np.piecewise``'s) as
    #: converted code: set by :mod:`aotc.autograph`, the layer above NumPy's API.
    call_user: Callable[..., Any] | None = None
    #: A Python sequence of a length known at run time, ``item(k)`` its items
    #: (``np.array_split`` into a traced number of pieces): set by :mod:`aotc.autograph`.
    runtime_sequence: Callable[[Tracer, Callable[[Any], Any]], Any] | None = None
    #: A transformed kernel (``aotc.grad(f)``) called on tracers inside a kernel: its
    #: program inlined there (set by :mod:`aotc.transforms`).
    inline_transform: Callable[..., Any] | None = None

    def get(self, name: str) -> Callable[..., Any]:
        handler = getattr(self, name)
        if handler is None:
            raise RuntimeError(f"aotc.numpy_api is not loaded (no {name} handler)")
        return handler  # type: ignore[no-any-return]


DISPATCH = Dispatch()


#: The window of a view that control flow chose among windows or arrays no one window
#: describes (a loop that rebinds ``cur = y[i]``, a branch's ``y[1:] if c else z``):
#: writing into it, or reading it after its base was written later, is a located error
#: (``numpy_api.views.refuse_detached``), never values that miss the write.
DETACHED = "a view chosen at run time"


class CarriedApart(TraceError):
    """A loop body wrote into a view it carries apart from its base: Python's write
    reaches the base, the loop's would not (autograph traces the body two trips at a
    time, which hands such swapped views back as they came, before it refuses)."""


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
        self.context = _CURRENT.get()
        #: Weakly typed, like a Python scalar: it takes the other operand's dtype.
        self.weak = weak
        #: For an integer scalar that is a size expression (a shape entry or an
        #: integer argument): that expression, so it can size new arrays.
        self.dim = dim
        #: A Python list's values (``[0] * n``, a list comprehension): writing a float
        #: item makes it hold floats, as the list would, instead of truncating.
        self.list_like = False
        #: A tuple of runtime length (``tuple(x)`` of an array): an index of that many
        #: axes, which no build-time index can be (``x[t]`` is refused, not fancy).
        self.tuple_like = False
        #: Arrays this one is the very same array as on some paths (``out = x`` in one
        #: branch of an ``if``), each with the predicate of those paths: a write into
        #: either reaches the other there (see ``aliases.path_aliased``).
        self.path_aliases: list[tuple[Tracer, Tracer]] = []
        #: Whether this scalar is a Python number (see ``numpy_api.pynumbers``): False,
        #: True (a range's item), or a traced bool (a scalar argument, as the caller
        #: passed it, and what operators make of such values alone).
        self.python_number: Any = False
        #: A reshape/ravel of the whole of an array the kernel made (C-contiguous, so
        #: NumPy's reshape is a view of it): writes and reads see each other.
        self.whole_reshape = False
        #: For a whole reshape of an argument: that argument's position, whose being
        #: C-contiguous (read as the kernel runs: ``numpy_api.views.contiguous``) makes
        #: NumPy's reshape a view; and whether it is a copy otherwise (a ravel), rather
        #: than perhaps a view (a reshape, whose writes are then a ValueError). None: a
        #: view, always.
        self.contiguous_arg: int | None = None
        self.copies_otherwise = False
        #: A view a loop carries as a value of its own, apart from its base (a body that
        #: swaps it with another view, ``a, b = b, a``): a write into it is
        #: :class:`CarriedApart` (see ``aliases.Views.expand``).
        self.carried_apart = False

    @property
    def atom(self) -> Atom:
        """The current value; a view re-reads its base after the base was written."""
        if self.base is not None and self.seen_version != self.base.version:
            DISPATCH.get("refresh")(self)
        return self._atom

    def set_atom(self, atom: Atom) -> None:
        self._atom = atom

    def view_of(self, base: Tracer, window: Any) -> Tracer:
        """Mark this value a view of ``base`` through ``window`` (or :data:`DETACHED`),
        having seen ``base``'s writes so far; return it."""
        self.base, self.window, self.seen_version = base, window, base.version
        return self

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
    def shape(self) -> ShapeTuple:
        return ShapeTuple(d.value if d.is_const else dim_value(d) for d in self.aval.shape)

    @property
    def size(self) -> Any:
        total = size(self.aval.shape)
        return total.value if total.is_const else dim_value(total)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> Any:
        total = size(self.aval.shape) * self.dtype.itemsize
        return total.value if total.is_const else dim_value(total)

    def __repr__(self) -> str:
        text = self._in_message("", as_repr=True)
        return text if text is not None else f"Tracer({self.aval})"

    # Python control flow and conversions need concrete values.
    def __bool__(self) -> bool:
        raise current().error(
            "a traced value is used where Python needs a concrete bool (and, or, not, "
            "a conditional expression, or a statement aotc leaves as Python)",
            hint="combine conditions with & | ~, select values with np.where(cond, a, b), "
                 "or write an if statement (those compile on runtime values)",
        )

    def _concrete(self, what: str) -> NoReturn:
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
        """Rows, when there are a known few of them (``a, b = v`` with ``v: f64[2]``)."""
        n = self.aval.shape[0] if self.aval.shape else None
        if n is not None and n.is_const and n.value <= _ITERATION_LIMIT:
            return iter([self[i] for i in range(n.value)])
        raise current().error(
            "iterating over an array whose length is only known at run time (or is large) "
            "where Python needs all its items at build time",
            hint="write a for loop or a comprehension over it (those compile), or use array "
                 "operations",
        )

    def _in_message(self, spec: str, as_repr: bool = False) -> str | None:
        """A token for this value in an exception's message being made (None if none
        is, or it cannot be shown at run time)."""
        values = MESSAGE_VALUES.get()
        if values is None or self.ndim != 0 or self.dtype.kind not in "biuf" \
                or len(values) >= len(SLOTS):
            return None
        values.append(self)
        # A Python int or float reprs as it prints; a NumPy scalar as ``np.int64(3)``.
        as_repr = as_repr and python_number(self) is not True
        return token(len(values) - 1, self.dtype, spec, as_repr)

    def __str__(self) -> str:
        text = self._in_message("")
        return text if text is not None else repr(self)

    def __format__(self, spec: str) -> str:
        text = self._in_message(spec)
        if text is not None:
            return text
        raise current().error(
            "a runtime value formatted into a string by code aotc does not convert (a "
            "library's own formatting)",
            hint="format it in the kernel's own code: f-strings, str(), % and .format() of "
                 "runtime values compile (aotc.autograph.formatted)")

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise current().error(
            "a traced value was converted to a NumPy array (np.asarray, np.array, or a "
            "function aotc does not know)",
            hint="use the supported NumPy functions on it directly",
        )

    def __getitem__(self, key: Any) -> Any:
        return DISPATCH.get("getitem")(self, key)

    def __setitem__(self, key: Any, value: Any) -> None:
        DISPATCH.get("setitem")(self, key, value)

    def __delitem__(self, key: Any) -> None:
        DISPATCH.get("delitem")(self, key)

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        return DISPATCH.get("array_ufunc")(ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Callable[..., Any], types: Any, args: Any,
                           kwargs: Any) -> Any:
        return DISPATCH.get("array_function")(func, args, kwargs)

    def __getattr__(self, name: str) -> Any:
        # Array methods (x.sum(), x.reshape(...), x.T, ...) come from one table.
        if name.startswith("__"):
            raise AttributeError(name)
        return DISPATCH.get("method")(self, name)

    # Python operators (+, *, <, +=...) are installed by aotc.numpy_api as it loads.
    if TYPE_CHECKING:
        def __add__(self, other: Any) -> Any: ...
        def __mul__(self, other: Any) -> Any: ...
        def __sub__(self, other: Any) -> Any: ...
        def __lt__(self, other: Any) -> Any: ...
        def __le__(self, other: Any) -> Any: ...
        def __gt__(self, other: Any) -> Any: ...
        def __ge__(self, other: Any) -> Any: ...
        def __eq__(self, other: Any) -> Any: ...  # elementwise: a traced bool
        def __ne__(self, other: Any) -> Any: ...
        def __hash__(self) -> int: ...  # (still object's: __eq__ is set after the class)
        def __neg__(self) -> Any: ...
        def __truediv__(self, other: Any) -> Any: ...
        def __floordiv__(self, other: Any) -> Any: ...
        def __mod__(self, other: Any) -> Any: ...
        def __radd__(self, other: Any) -> Any: ...
        def __rmul__(self, other: Any) -> Any: ...
        def __rsub__(self, other: Any) -> Any: ...
        def __rtruediv__(self, other: Any) -> Any: ...


class ShapeTuple(tuple):  # type: ignore[type-arg]
    """``x.shape``: sizes, some known only at run time. ``==`` compares them as Python
    compares tuples, giving a traced bool where a size is only known at run time (so
    ``if a.shape == b.shape:`` compiles)."""

    def __eq__(self, other: object) -> Any:
        if not isinstance(other, tuple) or len(other) != len(self):
            return False
        result: Any = True
        for a, b in zip(self, other, strict=True):
            if isinstance(a, Tracer) and isinstance(b, Tracer) and a.dim is not None \
                    and a.dim == b.dim:
                continue  # the same size expression
            same = a == b
            if not isinstance(same, Tracer):
                if not same:
                    return False
                continue
            result = same if result is True else result & same
        return result

    def __ne__(self, other: object) -> Any:
        same = self.__eq__(other)
        return np.logical_not(same) if isinstance(same, Tracer) else not same

    __hash__ = tuple.__hash__


def dim_value(expr: DimExpr) -> Tracer:
    """A size expression as an i64 scalar that still knows its expression (``x.shape[0]``
    is a Python int in NumPy: weak, and usable as a size)."""
    if expr.is_const:
        return Tracer(Lit(expr.value, I64), expr, weak=True)
    ctx = current()
    for name in bound_symbols(expr):
        binding = ctx.find_bound(name)
        if binding is not None and expr == DimExpr.sym(name):  # the value it was bound to
            return Tracer(binding[0], expr, weak=True)
    (var,) = ctx.emit(dim_value_p, [], expr=expr)
    return Tracer(var, expr, weak=True)


_BOUND_COUNT = itertools.count()


def new_bound_symbol() -> str:
    """A size symbol name no other binding in this process has (see :func:`bind_dim`)."""
    return f"{BOUND_PREFIX}{next(_BOUND_COUNT)}"


def bind_dim(value: Tracer, upper: DimExpr) -> DimExpr:
    """A runtime integer as a new size symbol, clamped into ``[0, upper]`` (the caller
    makes sure it is there already). ``upper`` may itself use bound sizes: it is replaced
    by a bound in the kernel's entry sizes, which plan the buffers."""
    ctx = current()
    entry_upper = upper_bound(upper, ctx.uppers())
    if entry_upper is None:
        raise ctx.error(f"cannot bound the size {upper}, which is only known while the "
                        "kernel runs")
    name = new_bound_symbol()
    (var,) = ctx.emit(bind_dim_p, [value.atom], symbol=name, upper=entry_upper)
    ctx.bound[name] = (var, entry_upper)
    return DimExpr.sym(name)


I64 = np.dtype(np.int64)
#: Iterating over a tracer in Python unrolls up to this many rows.
_ITERATION_LIMIT = 1024
#: Python scalars: weakly typed, as in NumPy 2 (NEP 50).
WEAK_TYPES = (bool, int, float, complex)


def as_atom(value: Any, dtype: np.dtype | None = None, wrap: bool = False) -> Atom:
    """An IR atom for a tracer or a constant (a scalar converted to ``dtype`` if given).

    Python integers that do not fit ``dtype`` raise OverflowError as in NumPy's ufuncs,
    or wrap around with ``wrap=True`` (what ``np.where`` does). Other constants (arrays)
    become tracers through :attr:`Dispatch.constant`."""
    if isinstance(value, Tracer):
        return value.atom
    if isinstance(value, (np.generic, np.ndarray)) and np.ndim(value) == 0:
        value = np.asarray(value)[()]
        return Lit(value, dtype or value.dtype)
    if isinstance(value, WEAK_TYPES):
        target = np.dtype(dtype) if dtype is not None else np.asarray(value).dtype
        if wrap:
            with np.errstate(all="ignore"):
                return Lit(np.array(value).astype(target), target)
        try:
            return Lit(np.array(value, dtype=target), target)
        except OverflowError as err:
            raise current().error(str(err)) from None
    constant: Tracer = DISPATCH.get("constant")(value)
    return constant.atom


def as_tracer(value: Any, dtype: np.dtype | None = None, wrap: bool = False) -> Tracer:
    """A tracer for ``value``; a Python number stays weakly typed unless given a dtype."""
    if isinstance(value, Tracer):
        return value
    weak = dtype is None and isinstance(value, WEAK_TYPES)
    return Tracer(as_atom(value, dtype, wrap), weak=weak)
