"""``np.einsum`` for named axes, as transposes, diagonals, sums and ``dot_general``.

Subscripts are NumPy's: explicit (``'ij,jk->ik'``) or implicit (the letters that appear
once, in alphabetical order), any number of operands, and the sublist form
``einsum(a, [0, 1], b, [1, 2])``. Each operand first takes its diagonals (a letter
repeated within it, ``'ii->i'``, ``'ii'``, by a gather from the flattened pair of axes)
and sums out the letters nobody else needs; the operands are then contracted left to
right: letters shared and needed later are batch axes, shared and not needed are
contracted (``dot_general``), the others are kept; a pair with nothing to contract is
an elementwise product. A size-1 axis broadcasts against its letter's size, as in NumPy.

The result dtype is NumPy's (the operands' result type, or ``dtype=`` with the
``casting`` rule checked); integers wrap around, bool is any-of-and. Like NumPy, a
result that sums or multiplies is accumulated from +0.0 (so it is never -0.0), while a
single operand that is only transposed or diagonalized is a view in NumPy and keeps its
values exactly. Float sums run in another order than NumPy's SIMD loops, so they can
differ in the last bits where terms cancel. ``...`` (ellipsis) is not supported yet;
``optimize`` may be False, True, 'greedy' or 'optimal' (the order of contractions
changes only rounding), not an explicit path.
"""

from __future__ import annotations

import string
from collections import Counter
from typing import Any

import numpy as np

from .. import lax
from ..ops.index import take_p
from ..shapes import DimExpr
from ..tracing.tracer import Tracer, as_tracer, current
from .creation import iota
from .linalg import dot_general
from .reductions import any_, sum_
from .shaping import transpose
from .ufuncs import apply_ufunc

I64 = np.dtype(np.int64)
ONE = DimExpr.const(1)
_LETTERS = set(string.ascii_letters)
_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")


def _sublist_letters(sublist: Any) -> str:
    letters = []
    for s in sublist:
        if s is Ellipsis:
            raise _ellipsis()
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool) or not 0 <= s < 52:
            raise current().error("subscript is not within the valid range [0, 52)")
        letters.append(chr(ord("A") + s) if s < 26 else chr(ord("a") + s - 26))
    return "".join(letters)


def _ellipsis() -> Exception:
    return current().error("np.einsum with '...' (ellipsis) is not supported yet",
                           hint="name every axis with a letter: 'bij,bjk->bik'")


def _parse(args: tuple[Any, ...]) -> tuple[list[str], str | None, list[Any]]:
    """(input subscripts, output subscripts or None when implicit, operands)."""
    ctx = current()
    if not args:
        raise ctx.error("einsum(): must specify the subscripts string and at least one "
                        "operand")
    if not isinstance(args[0], str):  # einsum(op0, sublist0, op1, sublist1, ..., [out])
        operands = list(args[0::2])
        subs = [_sublist_letters(s) for s in args[1::2]]
        output = None
        if len(args) % 2:
            output = _sublist_letters(args[-1])
            operands = operands[:-1]
        return subs, output, operands
    spec = args[0].replace(" ", "")
    operands = list(args[1:])
    if "." in spec:
        raise _ellipsis()
    output = None
    if "->" in spec:
        spec, output = spec.split("->", 1)
        if "-" in output or ">" in output:
            raise ctx.error("einstein sum subscript string does not contain proper '->' "
                            "output specified")
    if "-" in spec or ">" in spec:
        raise ctx.error("einstein sum subscript string does not contain proper '->' output "
                        "specified")
    subs = spec.split(",")
    for c in "".join(subs) + (output or ""):
        if c not in _LETTERS:
            raise ctx.error(f"invalid subscript '{c}' in einstein sum subscripts string, "
                            "subscripts must be letters")
    if len(subs) < len(operands):
        raise ctx.error("more operands provided to einstein sum function than specified in "
                        "the subscripts string")
    if len(subs) > len(operands):
        raise ctx.error("fewer operands provided to einstein sum function than specified in "
                        "the subscripts string")
    return subs, output, operands


def _output(subs: list[str], output: str | None) -> str:
    counts = Counter("".join(subs))
    if output is None:
        return "".join(sorted(c for c, k in counts.items() if k == 1))
    for c in output:
        if c not in counts:
            raise current().error(f"einstein sum subscripts string included output subscript "
                                  f"'{c}' which never appeared in an input")
        if output.count(c) > 1:
            raise current().error(f"einstein sum subscripts string includes output subscript "
                                  f"'{c}' multiple times")
    return output


class _Term:
    """An operand and the letter of each of its axes."""

    def __init__(self, value: Tracer, letters: str) -> None:
        self.value, self.letters = value, letters

    def size(self, letter: str) -> DimExpr:
        return self.value.aval.shape[self.letters.index(letter)]


def _diagonal(term: _Term, letter: str, index: int) -> _Term:
    """The diagonal over the first two axes named ``letter``."""
    x, letters = term.value, term.letters
    p = letters.index(letter)
    q = letters.index(letter, p + 1)
    n, other = x.aval.shape[p], x.aval.shape[q]
    if n != other:
        if n.is_const and other.is_const:
            raise current().error(f"dimensions in operand {index} for collapsing index "
                                  f"'{letter}' don't match ({n.value} != {other.value})")
        current().check("==", n, other, "ValueError",
                        f"dimensions in operand {index} for collapsing index '{letter}' "
                        "don't match ({lhs} != {rhs})")
        x = lax.refine_shape(x, tuple(n if i == q else d for i, d in enumerate(x.aval.shape)))
    rest = [i for i in range(x.ndim) if i not in (p, q)]
    moved = lax.transpose(x, tuple(rest) + (p, q))
    flat = lax.reshape(moved, tuple(x.aval.shape[i] for i in rest) + (n * n,))
    positions = apply_ufunc(np.multiply, iota(I64, (n,), 0), apply_ufunc(np.add, lax.dim_value(n),
                                                                          1))
    diag = lax.bind1(take_p, flat.atom, positions.atom, axis=len(rest))
    return _Term(diag, "".join(letters[i] for i in rest) + letter)


def _sum_out(term: _Term, letters: set[str], dtype: np.dtype) -> _Term:
    axes = tuple(i for i, c in enumerate(term.letters) if c in letters)
    if not axes:
        return term
    value = any_(term.value, axis=axes) if dtype == np.bool_ else \
        sum_(term.value, axis=axes, dtype=dtype)
    return _Term(value, "".join(c for c in term.letters if c not in letters))


def _broadcast_letters(a: _Term, b: _Term) -> tuple[_Term, _Term]:
    """Shared letters of size 1 on one side take the other side's size (NumPy
    broadcasts them); other sizes must match, and ``b`` then takes ``a``'s size
    expression for them (so ``ij,kj->ikj`` has one size for ``j``)."""
    sizes_a, sizes_b = list(a.value.aval.shape), list(b.value.aval.shape)
    checked_b = list(sizes_b)
    for c in set(a.letters) & set(b.letters):
        i, j = a.letters.index(c), b.letters.index(c)
        da, db = sizes_a[i], sizes_b[j]
        if da == db:
            continue
        if da.is_const and da.value == 1:
            sizes_a[i] = db
        elif db.is_const and db.value == 1:
            sizes_b[j] = da
        elif da.is_const and db.is_const:
            raise current().error(f"operands could not be broadcast together: subscript "
                                  f"'{c}' has sizes {da.value} and {db.value}")
        else:
            current().check("==", da, db, "ValueError",
                            f"operands could not be broadcast together: subscript '{c}' has "
                            "sizes {lhs} and {rhs}")
            sizes_b[j] = checked_b[j] = da
    value_b = lax.refine_shape(b.value, tuple(checked_b)) \
        if checked_b != list(b.value.aval.shape) else b.value
    return (_Term(lax.broadcast_in_dim(a.value, tuple(sizes_a), tuple(range(a.value.ndim))),
                  a.letters),
            _Term(lax.broadcast_in_dim(value_b, tuple(sizes_b), tuple(range(b.value.ndim))),
                  b.letters))


def _expand(term: _Term, letters: str, sizes: dict[str, DimExpr]) -> Tracer:
    """``term`` with its axes in the order of ``letters`` and size-1 axes for the rest."""
    own = [c for c in letters if c in term.letters]
    moved = lax.transpose(term.value, tuple(term.letters.index(c) for c in own))
    return lax.reshape(moved, tuple(sizes[c] if c in term.letters else ONE for c in letters))


def _pair(a: _Term, b: _Term, needed: set[str], dtype: np.dtype) -> _Term:
    a, b = _broadcast_letters(a, b)
    shared = [c for c in a.letters if c in b.letters]
    batch = [c for c in shared if c in needed]
    contract = [c for c in shared if c not in needed]
    free_a = [c for c in a.letters if c not in shared]
    free_b = [c for c in b.letters if c not in shared]
    letters = "".join(batch + free_a + free_b)
    if not contract:
        sizes = {c: a.size(c) for c in a.letters} | {c: b.size(c) for c in b.letters}
        ufunc = np.logical_and if dtype == np.bool_ else np.multiply
        return _Term(apply_ufunc(ufunc, _expand(a, letters, sizes), _expand(b, letters, sizes)),
                     letters)
    value = dot_general(a.value, b.value,
                        (tuple(a.letters.index(c) for c in contract),
                         tuple(b.letters.index(c) for c in contract)),
                        (tuple(a.letters.index(c) for c in batch),
                         tuple(b.letters.index(c) for c in batch)))
    return _Term(value, letters)


def _optimize_ok(optimize: Any) -> bool:
    return optimize is False or optimize is True or optimize in ("greedy", "optimal")


def einsum(*args: Any, out: Any = None, dtype: Any = None, order: Any = "K",
           casting: Any = "safe", optimize: Any = False, **kwargs: Any) -> Tracer:
    ctx = current()
    if kwargs:
        raise ctx.error(f"einsum() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if out is not None:
        raise ctx.error("np.einsum: out= is not supported",
                        hint="use the returned array: buf[...] = np.einsum(...)")
    if not isinstance(optimize, (bool, str)) or not _optimize_ok(optimize):
        raise ctx.error("np.einsum: only optimize=False, True, 'greedy' or 'optimal' are "
                        "supported (an explicit contraction path is not)",
                        hint="aotc picks its own contraction order; drop the path")
    if casting not in _CASTINGS:
        raise ctx.error("casting must be one of 'no', 'equiv', 'safe', 'same_kind', or "
                        f"'unsafe' (got {casting!r})")
    subs, output, operands = _parse(args)
    values = [as_tracer(o, None) for o in operands]
    values = [v if not v.weak else Tracer(v.atom) for v in values]  # NumPy makes arrays
    for i, (v, s) in enumerate(zip(values, subs, strict=True)):
        if len(s) > v.ndim:
            raise ctx.error(f"einstein sum subscripts string contains too many subscripts for "
                            f"operand {i}")
        if len(s) < v.ndim:
            raise ctx.error("operand has more dimensions than subscripts given in einstein "
                            "sum, but no '...' ellipsis provided to broadcast the extra "
                            "dimensions.")
    result_dtype = np.result_type(*(v.dtype for v in values))
    if dtype is not None:
        result_dtype = np.dtype(dtype)
        for i, v in enumerate(values):
            if not np.can_cast(v.dtype, result_dtype, casting):
                raise ctx.error(f"Iterator operand {i} dtype could not be cast from "
                                f"dtype('{v.dtype}') to dtype('{result_dtype}') according to "
                                f"the rule '{casting}'")
    if result_dtype not in (np.dtype(c) for c in "?bhilqBHILQfdFD"):
        raise ctx.error(f"np.einsum computing in {result_dtype} is not supported")
    out_letters = _output(subs, output)
    terms = []
    for i, (v, s) in enumerate(zip(values, subs, strict=True)):
        term = _Term(lax.convert(v, result_dtype), s)
        while len(set(term.letters)) < len(term.letters):
            repeated = next(c for c in term.letters if term.letters.count(c) > 1)
            term = _diagonal(term, repeated, i)
        terms.append(term)
    summed = False
    for i, term in enumerate(terms):  # sum out the letters only this operand has
        others = set(out_letters).union(*(t.letters for j, t in enumerate(terms) if j != i))
        alone = set(term.letters) - others
        summed |= bool(alone)
        terms[i] = _sum_out(term, alone, result_dtype)
    acc = terms[0]
    for k, term in enumerate(terms[1:], start=1):
        needed = set(out_letters).union(*(t.letters for t in terms[k + 1:]))
        acc = _pair(acc, term, needed, result_dtype)
        summed = True
    result = transpose(acc.value, tuple(acc.letters.index(c) for c in out_letters)) \
        if acc.letters != out_letters else acc.value
    if not summed:
        return result  # NumPy returns a view of the single operand
    if result_dtype.kind in "fc":  # NumPy accumulates into a zeroed output: never -0.0
        return apply_ufunc(np.add, result, np.zeros((), result_dtype)[()])
    return result
