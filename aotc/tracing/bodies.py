"""Tracing loop bodies and branches into nested programs (the machinery of ``control``).

A body is traced in a child :class:`~aotc.tracing.tracer.TraceContext` on fresh tracers for its
arguments; outer values it reads become its leading inputs ("consts"), as a closure's
cells. Its state may be any nesting of tuples and lists of arrays and scalars.

Two things a body may do to values made outside it:

- *write into them* (``y[i] = v``, ``u += 1`` through a view, ``np.copyto``): the write
  raises :class:`OuterWrite`, and the construct is traced again carrying that array
  through its state (:func:`with_outer_writes`, :func:`rebound`), so the write is seen
  after it, as in NumPy;
- *leave a variable without a value* (:data:`UNDEFINED`), on the paths that do not
  assign it: :func:`probe` traces a body once, aside, to learn what type a value gets.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from ..errors import TraceError
from ..ir import Atom, Program, Var, bound_uppers
from ..shapes import DimExpr, Shape, bound_symbols
from .avals import AType
from .bind import convert, refine_shape
from .tracer import (
    DETACHED,
    WEAK_TYPES,
    TraceContext,
    Tracer,
    as_tracer,
    current,
    encloses,
    python_number,
    tracing,
    user_loc,
    user_stack,
)

Tree = Any


class _Undefined:
    """A variable that has no value (yet) on this path: using it is Python's
    UnboundLocalError, at build time (every run would raise it)."""

    def __repr__(self) -> str:
        return "<undefined>"

    def _used(self, *args: Any) -> Any:
        raise current().error("a local variable is used before it has a value on this "
                              "path (Python raises UnboundLocalError here)",
                              hint="give it a value before the loop or branch")

    __array_ufunc__ = None
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _used
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = _used
    __pow__ = __rpow__ = __neg__ = __abs__ = __getitem__ = __lt__ = __gt__ = _used
    __le__ = __ge__ = __and__ = __rand__ = __or__ = __ror__ = __matmul__ = _used
    __rmatmul__ = __bool__ = __float__ = __int__ = __index__ = __len__ = __iter__ = _used


UNDEFINED = _Undefined()


class OuterWrite(Exception):
    """A body wrote into ``base``, an array made outside the body."""

    def __init__(self, base: Tracer) -> None:
        super().__init__("a body wrote into an outer array")
        self.base = base


def flatten(tree: Tree) -> tuple[list[Any], Tree]:
    """Leaves of nested tuples/lists (and of objects with ``tree_flatten``, as JAX's
    pytrees), and a structure to rebuild them with. None has no leaves, as in JAX: a
    variable that is None on every path passes through a construct as it is."""
    if tree is None:
        return [], _NONE
    if hasattr(type(tree), "tree_flatten"):  # the class: a Tracer answers any attribute
        children, meta = tree.tree_flatten()
        return list(children), (_Node, (type(tree), meta))
    if isinstance(tree, dict):  # its values, in key order
        keys = tuple(tree)
        values, shape = flatten(tuple(tree[k] for k in keys))
        return values, (_Dict, (keys, shape))
    if isinstance(tree, (tuple, list)):
        leaves: list[Any] = []
        shapes = []
        for item in tree:
            sub, shape = flatten(item)
            leaves += sub
            shapes.append((len(sub), shape))
        return leaves, (type(tree), shapes)
    return [tree], None


def sequence_of(cls: type, items: Any) -> Any:
    """A tuple or list of class ``cls`` holding ``items``: a namedtuple takes them as its
    fields (``cls._make``), not as one argument."""
    make = getattr(cls, "_make", None)
    return make(items) if make is not None else cls(items)


class _Node:
    """The structure tag of a ``tree_flatten`` object."""


class _Dict:
    """The structure tag of a dict."""


def structure_kinds(structure: Any) -> Any:
    """``structure`` (:func:`flatten`'s) with each object only by its class: what kinds
    of values it holds and how they nest, not their other records."""
    if not isinstance(structure, tuple) or len(structure) != 2:
        return structure
    tag, data = structure
    if tag is _Node:
        return tag, data[0]
    if isinstance(tag, type) and issubclass(tag, (tuple, list)):
        return tag, tuple((n, structure_kinds(s)) for n, s in data)
    return structure


def kind_name(kind: Any) -> str:
    """A :func:`structure_kinds` result (or a part of one) in words: a class's ``KIND``
    where it has one."""
    if kind is None:
        return "a number or an array"
    if _is_object(kind):
        return getattr(kind[1], "KIND", f"a {kind[1].__name__}")
    if isinstance(kind, tuple) and isinstance(kind[0], type):
        return f"a {kind[0].__name__} of {len(kind[1])}"
    return str(kind)


def kind_conflict(a: Any, b: Any) -> tuple[Any, Any] | None:
    """Where two :func:`structure_kinds` results hold an object of one class and
    something else (a number, an array, another class): those parts. Lists of different
    lengths, which a branch join lays out, are no conflict."""
    if a == b:
        return None
    if _is_object(a) or _is_object(b):
        return a, b
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) == 2 \
            and a[0] is b[0] and isinstance(a[0], type) and len(a[1]) == len(b[1]):
        for (_, x), (_, y) in zip(a[1], b[1], strict=True):
            found = kind_conflict(x, y)
            if found is not None:
                return found
    return None


def _is_object(kind: Any) -> bool:
    """Whether a :func:`structure_kinds` part is an object (a ``tree_flatten`` class's)."""
    return isinstance(kind, tuple) and len(kind) == 2 and kind[0] is _Node


#: The structure of None (no leaves).
_NONE = ("None",)


def unflatten(structure: Tree, leaves: list[Any]) -> Tree:
    if structure is None:
        return leaves[0]
    if structure is _NONE:
        return None
    kind, shapes = structure
    if kind is _Node:
        cls, meta = shapes
        return cls.tree_unflatten(meta, leaves)
    if kind is _Dict:
        keys, shape = shapes
        return dict(zip(keys, unflatten(shape, leaves), strict=True))
    out, pos = [], 0
    for count, shape in shapes:
        out.append(unflatten(shape, leaves[pos:pos + count]))
        pos += count
    return sequence_of(kind, out)


def trace_body(fn: Callable[..., Any], arg_tracers: list[list[Any]], structures: list[Tree],
               what: str, identity: list[int | None] | None = None,
               allow_undefined: bool = False) -> tuple[Program, list[Atom], list[Any], Tree]:
    """Trace ``fn(*args)`` where each argument is rebuilt from ``arg_tracers``' types.

    Returns the body program (inputs: consts, then the arguments' leaves), the outer
    atoms to pass as consts, the body's output leaves and their structure. If given,
    ``identity`` is filled with, per output leaf, the index of the argument leaf that is
    the very same object (an array the body updated in place), or None. With
    ``allow_undefined``, :data:`UNDEFINED` leaves pass in and out as they are (a probe).
    """
    outer = current()
    ctx = TraceContext(outer.kernel, parent=outer)
    with tracing(ctx):
        params: list[Var] = []
        args = []
        every: list[Any] = []
        for leaves_in, structure in zip(arg_tracers, structures, strict=True):
            inner: list[Any] = []
            for t in leaves_in:
                if allow_undefined and t is UNDEFINED:
                    inner.append(UNDEFINED)
                    continue
                var = Var(t.aval)
                params.append(var)
                known = outer.find_known(t.atom)  # a loop index's range
                if known is not None:
                    ctx.known[var] = known
                inner.append(Tracer(var, weak=t.weak))
                inner[-1].python_number = python_number(t)
                inner[-1].list_like = t.list_like  # (a list's + and methods in the body)
            every += inner
            args.append(None if structure is None and not inner else unflatten(structure, inner))
        ctx.defined.update(params)
        result = fn(*args)
        leaves, out_structure = flatten(result)
        if identity is not None:
            identity[:] = [next((j for j, t in enumerate(every) if t is leaf), None)
                           for leaf in leaves]
        outs = [ctx.local(as_tracer(v).atom) for v in leaves
                if not (allow_undefined and v is UNDEFINED)]
    consts: list[Atom] = list(ctx.captures)
    program = Program(tuple(ctx.captures.values()) + tuple(params), tuple(ctx.eqns),
                      tuple(outs), name=what)
    return program, consts, leaves, out_structure


def probe(fn: Callable[..., Any], arg_tracers: list[list[Any]], structures: list[Tree]
          ) -> Tree:
    """What ``fn`` returns when traced aside (its equations are dropped): the types the
    values it assigns get. Writes into outer arrays are absorbed, not carried."""
    return probe_sizes(fn, arg_tracers, structures)[0]


def probe_sizes(fn: Callable[..., Any], arg_tracers: list[list[Any]], structures: list[Tree]
                ) -> tuple[Tree, dict[str, DimExpr]]:
    """:func:`probe`, and the upper bounds of the size symbols ``fn`` binds (its values'
    sizes may be in them)."""
    arrays: list[Tracer] = []

    def absorbing(*args: Any) -> Any:
        with rebound(arrays, [Tracer(t.atom) for t in arrays]):
            return fn(*args)

    while True:
        try:
            program, _, leaves, structure = trace_body(absorbing, arg_tracers, structures,
                                                       "probe", allow_undefined=True)
            return unflatten(structure, leaves), bound_uppers(program)
        except OuterWrite as write:
            if any(write.base is t for t in arrays):  # identity: == is traced
                raise
            arrays.append(write.base)


def match_carry(before: list[Tracer], after: list[Any], what: str) -> None:
    """The loop state must keep its dtypes and shapes from one iteration to the next."""
    ctx = current()
    if len(before) != len(after):
        raise ctx.error(
            f"{what}: the body returns {len(after)} state values but the loop started with "
            f"{len(before)}: a dict, list or set that gains or loses items in a loop is not "
            "a fixed loop state",
            hint="keep counts and tables in arrays sized before the loop (counts = "
                 "np.zeros(n, np.int64); counts[v] += 1), or use np.bincount / "
                 "np.unique(..., return_counts=True)")
    for i, (b, a) in enumerate(zip(before, after, strict=True)):
        got = a.type if hasattr(a, "type") else a
        if b.aval != got:
            same_rank = b.aval.dtype == got.dtype and b.aval.ndim == got.ndim
            error = CarryShapes if same_rank else TraceError
            raise error(
                f"{what}: state value {i} starts as {b.aval} but the body makes it {got}",
                hint="the loop swaps arrays whose sizes are not known to be equal: give "
                     "them the same size names in the signature, e.g. f64['n', 'm']"
                if same_rank else
                "start the state with the dtype and shape it keeps, e.g. 0.0 instead "
                "of 0 for a float accumulator, or convert with .astype()",
                loc=user_loc(), kernel=ctx.kernel)


class CarryShapes(TraceError):
    """A loop's body gives a state array other sizes than it starts with (autograph
    carries such arrays resized, see ``autograph.resizing``)."""


def trace_loop_body(fn: Callable[..., Any], lead: list[list[Tracer]], lead_structures: list[Tree],
                    init: list[Tracer], structure: Tree, what: str,
                    identity: list[int | None] | None = None
                    ) -> tuple[Program, list[Atom], list[Tracer], list[Any]]:
    """Trace a body taking ``(*lead, state)`` and returning the state; also returns the
    body's state leaves as it made them.

    A weak scalar in the initial state (``0.0``, ``0``) takes the dtype the body gives it,
    as in JAX: the body is traced again with that dtype.
    """
    for _ in range(3):
        program, consts, leaves, _out_structure = trace_body(
            fn, lead + [init], lead_structures + [structure], what, identity)
        outs = [o.type for o in program.outputs]
        if len(outs) != len(init):
            break  # match_carry reports it
        sizes = _shared_sizes(init, outs)
        promoted = [_settled(t, o, sizes) for t, o in zip(init, outs, strict=True)]
        for p, t in zip(promoted, init, strict=True):
            p.list_like = t.list_like  # (still a list in the body traced again)
        if all(p is t for p, t in zip(promoted, init, strict=True)):
            break
        init = promoted
    match_carry(init, list(program.outputs), what)
    return program, consts, init, leaves


def carried_numbers(results: list[Any], paths: list[list[Any]], ran: Any = None) -> None:
    """A scalar result of a loop or branch that is a Python number on every path into it
    (the loop's start and its body's result; each branch's) is one afterwards: weak
    (NumPy 2 promotes it so: ``c = 0.0``, a loop of ``c += 1.0``, then ``x32 * c`` is
    float32) and dividing by it by zero raises (``numpy_api.pynumbers``). A loop's
    result that starts as one and is a NumPy number after an iteration is one where the
    loop ran no time (``ran``, a traced bool, false): ``s = 0.0``, ``s += x[d]`` over an
    empty range, then ``s / 0`` raises as in Python."""
    for k, result in enumerate(results):
        if not isinstance(result, Tracer) or result.ndim:
            continue
        values = [path[k] for path in paths]
        if all(isinstance(v, WEAK_TYPES) or (isinstance(v, Tracer) and v.weak) for v in values):
            result.weak = True
        flags = [python_number(v) for v in values]
        if ran is not None and flags[0] is not False and flags[1] is False:
            start = as_tracer(True) if flags[0] is True else flags[0]
            result.python_number = np.logical_and(start, np.logical_not(ran))
            continue
        if any(f is False for f in flags):
            continue
        joint: Any = True
        for f in flags:
            joint = f if joint is True else joint if f is True or f is joint else joint & f
        result.python_number = joint


def _shared_sizes(init: list[Tracer], outs: list[AType]) -> dict[Shape, Shape]:
    """Shapes a loop's state moves between (``In, Out = Out, In``), each mapped to the
    first of its group in state order: the one shape the group's arrays will have."""
    parent: dict[Shape, Shape] = {}

    def find(shape: Shape) -> Shape:
        while parent.get(shape, shape) != shape:
            shape = parent[shape]
        return shape

    for start, made in zip(init, outs, strict=True):
        if start.dtype == made.dtype and start.ndim == made.ndim and start.ndim \
                and not any(bound_symbols(d) for d in made.shape):
            a, b = find(start.aval.shape), find(made.shape)
            if a != b:
                parent[b] = a  # the earlier slot's shape leads
    return {shape: find(shape) for shape in parent}


def _settled(start: Tracer, made: AType, sizes: dict[Shape, Shape]) -> Tracer:
    """The loop state ``start`` as the body makes it: a weak scalar takes the body's
    dtype; an array the body swaps with one of other symbolic sizes (``In, Out = Out,
    In``) is checked, before the loop, to have its group's sizes, and takes them."""
    if _weak_takes(start, made.dtype) or _widened(start, made):
        return convert(start, made.dtype)
    want = sizes.get(start.aval.shape)
    if want is None or want == start.aval.shape:
        return start
    ctx = current()
    for axis, (have, other) in enumerate(zip(start.aval.shape, want, strict=True)):
        ctx.check("==", have, other, "ValueError",
                  f"a loop swaps arrays of different sizes: {{lhs}} against {{rhs}} on axis "
                  f"{axis}")
    return refine_shape(start, want)


_KINDS = "biufc"


def _weak_takes(value: Tracer, dtype: np.dtype) -> bool:
    """A weak scalar (a Python number) or a Python list's values take ``dtype`` when that
    is of their kind or a higher one (0 -> 0.0, as NumPy would compute; never 5 -> True)."""
    return ((value.weak and value.ndim == 0) or value.list_like) and value.dtype != dtype \
        and _KINDS.index(value.dtype.kind) <= _KINDS.index(dtype.kind)


def _widened(start: Tracer, made: AType) -> bool:
    """A scalar the body makes of a wider dtype (``acc = np.float32(0)`` then ``acc +=
    x32 * k64``): carried in that dtype from the start, as Numba unifies it (Python's
    value has the wider dtype after one iteration; after none it keeps its own)."""
    return start.ndim == 0 and made.shape == () and start.dtype != made.dtype \
        and np.promote_types(start.dtype, made.dtype) == made.dtype


def keep_identity(before: list[Any], after: list[Tracer], identity: list[int | None],
                  offset: int = 0, loop: bool = True) -> list[Any]:
    """Arrays the body updated in place are the caller's same arrays after the loop.

    In NumPy, ``u[1:] = ...`` inside a loop mutates the array object ``u`` names, so an
    array passed in (or a view of one) must see the final value; a name rebound to a new
    array (``u = u + 1``) must not change the old one.
    """
    out = list(after)
    for k, j in enumerate(identity):
        # In a loop only a slot that hands back its own array is a fixed point over any
        # number of iterations; a swap (x, y = y, x) moves names, not contents.
        if j is None or j < offset or (loop and j - offset != k):
            continue
        original = before[j - offset]
        if isinstance(original, Tracer) and original.ndim > 0:
            original[...] = after[k]
            out[k] = original
    return out


# -- carrying the outer arrays a body writes into ---------------------------------------

@contextmanager
def rebound(arrays: list[Tracer], values: list[Any]) -> Iterator[None]:
    """While a body is traced, each outer array in ``arrays`` *is* the body's own value in
    ``values`` (its state), so reads see it and writes update it."""
    saved = [(t.atom, t.context) for t in arrays]
    for t, v in zip(arrays, values, strict=True):
        t.set_atom(as_tracer(v).atom)
        t.context = current()
        t.version += 1
    try:
        yield
    finally:
        for t, (atom, context) in zip(arrays, saved, strict=True):
            t.set_atom(atom)
            t.context = context
            t.version += 1


#: Arrays whose writes are not repeated into their path aliases now (see
#: ``numpy_api.writes``): those a write is being repeated from and into, and the arrays
#: a construct writes back once its bodies are traced. Those bodies repeated each write
#: into every alias visible there, and carry those aliases too; repeating the write-back
#: again traced every repetition once more per enclosing construct.
UNREPEATED: list[Tracer] = []


@contextmanager
def unrepeated(arrays: list[Tracer]) -> Iterator[None]:
    """Writes into ``arrays`` inside are not repeated into their path aliases."""
    UNREPEATED.extend(arrays)
    try:
        yield
    finally:
        del UNREPEATED[len(UNREPEATED) - len(arrays):]


class Carried(list[Tracer]):
    """The outer arrays a construct carries, and which of them its bodies wrote (ids):
    an array carried because it was expected to be written, and was not, is not
    written back."""

    def __init__(self, arrays: list[Tracer]) -> None:
        super().__init__(arrays)
        self.written: set[int] = set()


#: Per trace context, the outer arrays the next construct traced in it is expected to
#: write (:func:`expect_writes`).
_EXPECTED: list[tuple[Any, list[Tracer]]] = []


def expect_writes(arrays: list[Tracer]) -> None:
    """The next construct traced in the current context writes into ``arrays`` (known
    from its source: ``res[m] = v`` in a branch). It carries them from its first trace:
    discovering each by :class:`OuterWrite` retraced the construct once per array, and
    every enclosing construct again, which nested branches made exponential."""
    roots: list[Tracer] = []
    for t in arrays:
        while t.base is not None:
            t = t.base
        if not any(t is r for r in roots):
            roots.append(t)
    if roots:
        _EXPECTED[:] = [e for e in _EXPECTED if e[0] is not current()][-32:]
        _EXPECTED.append((current(), roots))


def _expected() -> Carried:
    here = current()
    for k, (context, roots) in enumerate(_EXPECTED):
        if context is here:
            del _EXPECTED[k]
            return Carried([t for t in roots if t.context is not None
                            and encloses(t.context, here)])
    return Carried([])


def with_outer_writes(run: Callable[[list[Tracer]], tuple[Any, list[Any]]]) -> Any:
    """``run(arrays)``, again with every outer array a body turns out to write into (see
    :class:`OuterWrite`) until none is new; ``run`` carries ``arrays`` and returns its
    result and their final values, which are then written back into them (in an
    enclosing body, that write may raise the enclosing construct's OuterWrite)."""
    here = current()
    arrays = _expected()
    key = user_stack()  # the same construct, traced again (its enclosing body retraced)
    learned = here.root.written_at.setdefault(key, [])
    arrays += [t for t in learned if encloses(t.context, here)
               and not any(t is a for a in arrays)]
    expected = {id(t) for t in arrays}
    while True:
        try:
            result, values = run(arrays)
            break
        except OuterWrite as write:
            if any(write.base is t for t in arrays) \
                    or not encloses(write.base.context, current()):
                raise current().error(
                    "writing into an array made in another loop body or branch, which "
                    "has ended", hint="return the array from that body (as loop state) "
                                      "and write into what it returns") from None
            arrays.append(write.base)
            learned.append(write.base)
    back = [(t, v) for t, v in zip(arrays, values, strict=True)
            if id(t) in arrays.written or id(t) not in expected]
    with unrepeated([t for t, _ in back]):  # (the bodies repeated them: see UNREPEATED)
        for t, v in back:
            t[...] = v
    for leaf in flatten(result)[0]:  # (views it chose have seen those writes)
        if isinstance(leaf, Tracer) and leaf.window is DETACHED and leaf.base is not None:
            leaf.seen_version = leaf.base.version
    return result


I64 = np.dtype(np.int64)
SCALAR_I64 = AType(I64, ())
