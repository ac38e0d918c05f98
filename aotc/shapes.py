"""Symbolic dimensions and broadcasting.

A dimension is an integer polynomial over atoms: input dims and integer scalar
arguments (symbols), ``relu(e) = max(e, 0)``, ``e // k`` and ``if_neg(c, a, b)`` (``a``
when ``c < 0``, else ``b``: Python's reading of a signed index). Input dims are >= 0;
an integer argument is a *signed* symbol, since a caller may pass any value, so nothing
derived from it is assumed non-negative until a runtime check says so. The form is
canonical, so two dimensions are equal exactly when their expressions are equal:
``len(x[1:])`` and ``len(x[:-1])`` both become ``relu(n - 1)``, and broadcasting them
needs no runtime check. ``max`` and ``min`` are written with ``relu``::

    max(a, b) = b + relu(a - b)        min(a, b) = a - relu(a - b)
    relu(-e)  = relu(e) - e            # keeps the leading coefficient positive
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

Monomial = tuple["Atom", ...]

#: Integer arguments enter size arithmetic clamped to ``[-SYMBOL_LIMIT, SYMBOL_LIMIT]``.
#: No array has 2**61 elements, so a slice bound or size reads the same (a bigger size is
#: too big either way), and sums of a few such values cannot overflow int64 on the way.
SYMBOL_LIMIT = 2**61


def within_limit(value: int) -> int:
    """A Python integer clamped to ``[-SYMBOL_LIMIT, SYMBOL_LIMIT]``, as compiled code
    reads integer arguments: beyond every axis, a size, slice bound or step means the
    same there (``x[1::2**70]`` is ``x[1:2]``), and arithmetic on it stays inside int64."""
    return max(-SYMBOL_LIMIT, min(value, SYMBOL_LIMIT))


@dataclass(frozen=True)
class Sym:
    """A named runtime size: an input dimension, or an integer scalar argument
    (``signed``: any int64 value, as the caller passes it)."""

    name: str
    signed: bool = False

    def key(self) -> tuple[int, str]:
        return (0, self.name)

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Relu:
    expr: DimExpr

    def key(self) -> tuple[int, str]:
        return (1, str(self.expr))

    def __str__(self) -> str:
        return f"relu({self.expr})"


@dataclass(frozen=True)
class FloorDiv:
    expr: DimExpr
    divisor: int

    def key(self) -> tuple[int, str, int]:
        return (2, str(self.expr), self.divisor)

    def __str__(self) -> str:
        inner = str(self.expr)
        if len(self.expr.terms) > 1:
            inner = f"({inner})"
        return f"{inner} // {self.divisor}"


@dataclass(frozen=True)
class IfNeg:
    """``neg`` when ``cond < 0``, else ``nonneg``: build with :func:`if_neg`."""

    cond: DimExpr
    neg: DimExpr
    nonneg: DimExpr

    def key(self) -> tuple[int, str, str, str]:
        return (3, str(self.cond), str(self.neg), str(self.nonneg))

    def __str__(self) -> str:
        return f"({self.neg} if {self.cond} < 0 else {self.nonneg})"


Atom = Sym | Relu | FloorDiv | IfNeg


def _atom_nonneg(atom: Atom) -> bool:
    if isinstance(atom, Sym):
        return not atom.signed
    if isinstance(atom, FloorDiv):
        return atom.expr.is_nonneg()
    if isinstance(atom, IfNeg):
        return atom.neg.is_nonneg() and atom.nonneg.is_nonneg()
    return True


@dataclass(frozen=True)
class DimExpr:
    """A canonical integer polynomial; ``terms`` pairs each monomial with its coefficient."""

    terms: tuple[tuple[Monomial, int], ...]

    # -- construction ------------------------------------------------------------------
    @staticmethod
    def const(value: int) -> DimExpr:
        return DimExpr(((( ), int(value)),) if value else ())

    @staticmethod
    def sym(name: str, signed: bool = False) -> DimExpr:
        return DimExpr((((Sym(name, signed),), 1),))

    @staticmethod
    def _from_dict(coeffs: dict[Monomial, int]) -> DimExpr:
        items = [(m, c) for m, c in coeffs.items() if c != 0]
        items.sort(key=lambda mc: (len(mc[0]) == 0, [a.key() for a in mc[0]]))
        return DimExpr(tuple(items))

    # -- queries -----------------------------------------------------------------------
    @property
    def is_const(self) -> bool:
        return all(not m for m, _ in self.terms)

    @property
    def value(self) -> int:
        """The integer value of a constant expression."""
        if not self.is_const:
            raise ValueError(f"dimension {self} is not a constant")
        return self.terms[0][1] if self.terms else 0

    def is_nonneg(self) -> bool:
        """True when the expression is provably >= 0 for every runtime size."""
        return all(c >= 0 and all(_atom_nonneg(a) for a in m) for m, c in self.terms)

    def is_negative(self) -> bool:
        """True when the expression is provably < 0 for every runtime size."""
        return (-self - 1).is_nonneg()

    def symbols(self) -> set[str]:
        found: set[str] = set()
        for atom in self.atoms():
            if isinstance(atom, Sym):
                found.add(atom.name)
        return found

    def atoms(self) -> list[Atom]:
        """Every atom, nested ones included (an atom before the atoms inside it)."""
        found: list[Atom] = []
        for mono, _ in self.terms:
            for atom in mono:
                found.append(atom)
                for inner in _inner(atom):
                    found += inner.atoms()
        return found

    def evaluate(self, env: Mapping[str, int]) -> int:
        total = 0
        for mono, coeff in self.terms:
            term = coeff
            for atom in mono:
                term *= evaluate_atom(atom, env)
            total += term
        return total

    # -- arithmetic --------------------------------------------------------------------
    def __add__(self, other: DimLike) -> DimExpr:
        other = as_dim(other)
        coeffs = dict(self.terms)
        for mono, c in other.terms:
            coeffs[mono] = coeffs.get(mono, 0) + c
        return DimExpr._from_dict(coeffs)

    __radd__ = __add__

    def __neg__(self) -> DimExpr:
        return DimExpr(tuple((m, -c) for m, c in self.terms))

    def __sub__(self, other: DimLike) -> DimExpr:
        return self + (-as_dim(other))

    def __rsub__(self, other: DimLike) -> DimExpr:
        return as_dim(other) - self

    def __mul__(self, other: DimLike) -> DimExpr:
        other = as_dim(other)
        coeffs: dict[Monomial, int] = {}
        for m1, c1 in self.terms:
            for m2, c2 in other.terms:
                mono = tuple(sorted(m1 + m2, key=lambda a: a.key()))
                coeffs[mono] = coeffs.get(mono, 0) + c1 * c2
        return DimExpr._from_dict(coeffs)

    __rmul__ = __mul__

    def __floordiv__(self, divisor: int) -> DimExpr:
        if not isinstance(divisor, int) or divisor <= 0:
            raise ValueError("dimensions divide only by positive integer constants")
        if divisor == 1:
            return self
        if all(c % divisor == 0 for _, c in self.terms):
            return DimExpr(tuple((m, c // divisor) for m, c in self.terms))
        if self.is_const:
            return DimExpr.const(self.value // divisor)
        return DimExpr((((FloorDiv(self, divisor),), 1),))

    def __str__(self) -> str:
        return self.format_terms(lambda atom, alone: str(atom))

    def format_terms(self, atom_text: Callable[[Any, bool], str]) -> str:
        """The sum of terms with each atom written by ``atom_text(atom, alone)``
        (``alone``: the atom is its term's whole product, coefficient 1)."""
        out = ""
        for i, (mono, coeff) in enumerate(self.terms):
            body = "*".join(atom_text(a, len(mono) == 1 and coeff == 1) for a in mono)
            mag = abs(coeff)
            text = body if mag == 1 and body else (f"{mag}*{body}" if body else str(mag))
            if i == 0:
                out = text if coeff > 0 else f"-{text}"
            else:
                out += f" + {text}" if coeff > 0 else f" - {text}"
        return out or "0"

    __repr__ = __str__


DimLike = DimExpr | int


def as_dim(value: DimLike) -> DimExpr:
    if isinstance(value, DimExpr):
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{value!r} is not a dimension")
    return DimExpr.const(value)


def _inner(atom: Atom) -> tuple[DimExpr, ...]:
    if isinstance(atom, Sym):
        return ()
    if isinstance(atom, IfNeg):
        return (atom.cond, atom.neg, atom.nonneg)
    return (atom.expr,)


def evaluate_atom(atom: Atom, env: Mapping[str, int]) -> int:
    if isinstance(atom, Sym):
        return env[atom.name]
    if isinstance(atom, Relu):
        return max(atom.expr.evaluate(env), 0)
    if isinstance(atom, IfNeg):
        return (atom.neg if atom.cond.evaluate(env) < 0 else atom.nonneg).evaluate(env)
    return atom.expr.evaluate(env) // atom.divisor


def if_neg(cond: DimLike, neg: DimLike, nonneg: DimLike) -> DimExpr:
    """``neg if cond < 0 else nonneg`` in canonical form (decided when the sign is known)."""
    c, a, b = as_dim(cond), as_dim(neg), as_dim(nonneg)
    if c.is_nonneg() or a == b:
        return b
    if c.is_negative():
        return a
    return DimExpr((((IfNeg(c, a, b),), 1),))


def relu(value: DimLike) -> DimExpr:
    """``max(value, 0)`` in canonical form."""
    e = as_dim(value)
    if e.is_const:
        return DimExpr.const(max(e.value, 0))
    if e.is_nonneg():
        return e
    if (-e).is_nonneg():
        return DimExpr.const(0)
    leading = next(c for m, c in e.terms if m)
    if leading < 0:  # relu(e) = relu(-e) + e
        return relu(-e) + e
    return DimExpr((((Relu(e),), 1),))


def maximum(a: DimLike, b: DimLike) -> DimExpr:
    return as_dim(b) + relu(as_dim(a) - as_dim(b))


def minimum(a: DimLike, b: DimLike) -> DimExpr:
    return as_dim(a) - relu(as_dim(a) - as_dim(b))


def ceil_div(a: DimLike, k: int) -> DimExpr:
    return (as_dim(a) + (k - 1)) // k


Shape = tuple[DimExpr, ...]


def shape_str(shape: Shape) -> str:
    return ",".join(str(d) for d in shape)


def size(shape: Shape) -> DimExpr:
    total = DimExpr.const(1)
    for d in shape:
        total = total * d
    return total


def axis_span(shape: Shape, start: Shape, size: Shape, axis: int) -> tuple[int, int] | None:
    """``[low, high)`` along ``axis`` of the block (``start``, ``size``) of an array of
    ``shape``, when the block is the whole array along every other axis and constant
    along ``axis``; else None (a write of such blocks fills slabs of the array)."""
    whole = all(start[k].is_const and start[k].value == 0 and size[k] == shape[k]
                for k in range(len(shape)) if k != axis)
    if not (whole and start[axis].is_const and size[axis].is_const):
        return None
    return start[axis].value, start[axis].value + size[axis].value


@dataclass(frozen=True)
class DimEquality:
    """Two dims that broadcasting found different in form; they must agree at run time."""

    lhs: DimExpr
    rhs: DimExpr


def broadcast_shapes(*shapes: Shape) -> tuple[Shape, list[DimEquality]]:
    """NumPy broadcasting over symbolic shapes.

    A dim that is literally 1 stretches. Two different symbolic dims are taken to be
    equal and returned as a runtime check: a runtime size of 1 against another size is
    rejected by that check (with NumPy's message) rather than stretched. Where one of
    them is computed from integer values (:func:`from_values`: a slice ``x[k:k + 1]``
    with a runtime ``k``) and the other is not, the other is the result's: the caller
    may stretch the first when it is 1 (see ``numpy_api.ufuncs.broadcast_all``).
    """
    ndim = max((len(s) for s in shapes), default=0)
    padded = [(DimExpr.const(1),) * (ndim - len(s)) + tuple(s) for s in shapes]
    out: list[DimExpr] = []
    checks: list[DimEquality] = []
    for axis in range(ndim):
        dim = DimExpr.const(1)
        for shape in padded:
            d = shape[axis]
            if d == dim or (d.is_const and d.value == 1):
                continue
            if dim.is_const and dim.value == 1:
                dim = d
            elif from_values(dim) and not from_values(d):
                checks.append(DimEquality(d, dim))
                dim = d
            elif d.is_const and dim.is_const:
                raise ValueError(
                    "operands could not be broadcast together with shapes "
                    + " ".join(f"({shape_str(s)})" for s in shapes)
                )
            else:
                checks.append(DimEquality(dim, d))
        out.append(dim)
    return tuple(out), checks


def exact_div(a: DimExpr, b: DimExpr) -> DimExpr | None:
    """``a / b`` when ``b`` is one term dividing every term of ``a``; else None."""
    if len(b.terms) != 1:
        return None
    (bmono, bcoeff), = b.terms
    out: dict[Monomial, int] = {}
    for mono, coeff in a.terms:
        rest = list(mono)
        for atom in bmono:
            if atom not in rest:
                return None
            rest.remove(atom)
        if coeff % bcoeff:
            return None
        out[tuple(rest)] = out.get(tuple(rest), 0) + coeff // bcoeff
    return DimExpr._from_dict(out)


# -- sizes bound while the kernel runs ---------------------------------------------------

#: Names of symbols bound while the kernel runs (a slice with runtime bounds): ``@k``.
#: Each is clamped into ``[0, upper]`` where it is bound, ``upper`` a size of the kernel's
#: entry, so buffers for values of such sizes are planned from the upper bounds.
BOUND_PREFIX = "@"


def is_bound_symbol(name: str) -> bool:
    return name.startswith(BOUND_PREFIX)


def from_values(d: DimExpr) -> bool:
    """Whether a size is computed from integer values (scalar arguments, or values bound
    while the kernel runs: ``x[k:k + 1]``), not from array shapes alone. Broadcasting
    stretches such a size when it is 1, where two shapes' sizes are taken to be equal."""
    return any(isinstance(a, Sym) and (a.signed or is_bound_symbol(a.name))
               for a in d.atoms())


def from_arguments(d: DimExpr) -> bool:
    """Whether a size reads an integer argument (which sizes read clamped to
    ``±SYMBOL_LIMIT``)."""
    return any(isinstance(a, Sym) and a.signed for a in d.atoms())


#: A slice step: a build-time integer, or an expression of sizes bound while the kernel
#: runs (``x[::k]`` with a runtime ``k``, see ``numpy_api.indexing``).
Step = int | DimExpr


def bound_symbols(expr: DimExpr) -> set[str]:
    return {name for name in expr.symbols() if is_bound_symbol(name)}


def rename_symbols(expr: DimExpr, names: Mapping[str, str]) -> DimExpr:
    """``expr`` with each symbol in ``names`` renamed (a copy of code that binds sizes of
    its own binds them under new names)."""
    return substitute_symbols(expr, {old: named_symbol(new) for old, new in names.items()})


def named_symbol(new: str) -> Callable[[Sym], DimExpr]:
    """A symbol under the name ``new``, signed as it was."""
    return lambda s: DimExpr.sym(new, s.signed)


def substitute_symbols(expr: DimExpr, values: Mapping[str, Callable[[Sym], DimExpr]]
                       ) -> DimExpr:
    """``expr`` with each symbol in ``values`` replaced by what its function makes of it
    (a new name, or a size of the code a program is inlined into)."""
    if not expr.symbols() & values.keys():
        return expr
    total = DimExpr.const(0)
    for mono, coeff in expr.terms:
        term = DimExpr.const(coeff)
        for atom in mono:
            term = term * _substituted_atom(atom, values)
        total = total + term
    return total


def _substituted_atom(atom: Atom, values: Mapping[str, Callable[[Sym], DimExpr]]) -> DimExpr:
    if isinstance(atom, Sym):
        make = values.get(atom.name)
        return make(atom) if make is not None else DimExpr.sym(atom.name, atom.signed)
    if isinstance(atom, Relu):
        return relu(substitute_symbols(atom.expr, values))
    if isinstance(atom, FloorDiv):
        return substitute_symbols(atom.expr, values) // atom.divisor
    return if_neg(*(substitute_symbols(e, values) for e in (atom.cond, atom.neg, atom.nonneg)))


Interval = tuple[DimExpr | None, DimExpr | None]  # (low, high); None: unbounded


def upper_bound(expr: DimExpr, uppers: Mapping[str, DimExpr]) -> DimExpr | None:
    """An expression ``>= expr`` whatever values in ``[0, uppers[s]]`` the bound symbols
    ``s`` take, in the other symbols only; None when interval arithmetic cannot find one
    (a bound symbol multiplied by a size of unknown sign)."""
    return _interval(expr, uppers)[1]


def _interval(expr: DimExpr, uppers: Mapping[str, DimExpr]) -> Interval:
    low: DimExpr | None = DimExpr.const(0)
    high: DimExpr | None = DimExpr.const(0)
    for mono, coeff in expr.terms:
        lo, hi = _monomial_interval(mono, uppers)
        if coeff < 0:
            lo, hi = hi, lo
        low = None if low is None or lo is None else low + lo * coeff
        high = None if high is None or hi is None else high + hi * coeff
    return low, high


def _monomial_interval(mono: Monomial, uppers: Mapping[str, DimExpr]) -> Interval:
    exact = DimExpr(((mono, 1),))
    if not exact.symbols() & uppers.keys():
        return exact, exact
    if len(mono) == 1:
        return _atom_interval(mono[0], uppers)
    low: DimExpr | None = DimExpr.const(1)
    high: DimExpr | None = DimExpr.const(1)
    for atom in mono:  # a product of intervals is simple only when every factor is >= 0
        lo, hi = _atom_interval(atom, uppers)
        if lo is None or not lo.is_nonneg():
            return None, None
        low = low * lo if low is not None else None
        high = None if high is None or hi is None else high * hi
    return low, high


def _atom_interval(atom: Atom, uppers: Mapping[str, DimExpr]) -> Interval:
    if isinstance(atom, Sym):
        exact = DimExpr((((atom,), 1),))
        return (DimExpr.const(0), uppers[atom.name]) if atom.name in uppers else (exact, exact)
    if isinstance(atom, IfNeg):  # either arm, whichever way the condition goes
        (lo_a, hi_a), (lo_b, hi_b) = (_interval(e, uppers) for e in (atom.neg, atom.nonneg))
        return (None if lo_a is None or lo_b is None else minimum(lo_a, lo_b),
                None if hi_a is None or hi_b is None else maximum(hi_a, hi_b))
    lo, hi = _interval(atom.expr, uppers)
    if isinstance(atom, Relu):  # its low end as a form provably >= 0, or else 0
        low = None if lo is None else relu(lo)
        return (low if low is not None and low.is_nonneg() else DimExpr.const(0),
                None if hi is None else relu(hi))
    return (None if lo is None else lo // atom.divisor,
            None if hi is None else hi // atom.divisor)
