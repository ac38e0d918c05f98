"""Python's comparison of tuples that hold runtime values.

``(d, v) < (e, w)`` is how a priority queue orders its entries. Python compares tuples
field by field: the first pair of fields that are not equal decides, and if every field
of the shorter tuple equals the other's, the shorter is smaller. Asking that of runtime
fields would need each ``==`` as a build-time bool. Here the answer is one runtime
bool, built from the last field forwards::

    decided_n = len(a) < len(b)
    decided_k = a[k] < b[k] or (a[k] == b[k] and decided_k+1)

(``<=``, ``>`` and ``>=`` the same with their own length test and field order; ``==``
is every field equal, with equal lengths). A field that is a tuple compares the same
way. Fields that are NaN are unequal and unordered, as Python finds two NaN objects.

Lists laid out as arrays (``Tracer.list_like``) compare the same way, item by item,
where NumPy would compare them elementwise (:func:`lists_compared`).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from ..tracing.tracer import Tracer, as_tracer, current

#: For each ordering, the comparison of lengths that decides between equal prefixes, and
#: the strict comparison of fields that decides at the first unequal pair.
_ORDERINGS: dict[str, tuple[Callable[[Any, Any], bool], Callable[..., Any]]] = {
    "Lt": (operator.lt, np.less), "LtE": (operator.le, np.less),
    "Gt": (operator.gt, np.greater), "GtE": (operator.ge, np.greater),
}


def is_tuple_pair(left: Any, right: Any) -> bool:
    return isinstance(left, tuple) and isinstance(right, tuple)


def _field_equal(a: Any, b: Any) -> Any:
    return tuples_equal(a, b) if is_tuple_pair(a, b) else np.equal(a, b)


def tuples_equal(left: tuple[Any, ...], right: tuple[Any, ...]) -> Any:
    """``left == right``: equal lengths and every field equal."""
    if len(left) != len(right):
        return False
    result: Any = True
    for a, b in zip(left, right, strict=True):
        result = np.logical_and(result, _field_equal(a, b))
    return result


def tuples_compared(op: str, left: tuple[Any, ...], right: tuple[Any, ...]) -> Any:
    """``left op right`` for ``op`` one of Lt, LtE, Gt, GtE, Eq, NotEq (the AST's names)."""
    if op in ("Eq", "NotEq"):
        equal = tuples_equal(left, right)
        return equal if op == "Eq" else np.logical_not(equal)
    by_length, strictly = _ORDERINGS[op]
    result: Any = by_length(len(left), len(right))
    for a, b in reversed(list(zip(left, right, strict=False))):
        first = tuples_compared("Lt" if strictly is np.less else "Gt", a, b) \
            if is_tuple_pair(a, b) else strictly(a, b)
        result = np.logical_or(first, np.logical_and(_field_equal(a, b), result))
    return result


def tuples_chosen(test: Any, then: Any, orelse: Any) -> Any:
    """``then if test else orelse`` for a runtime ``test``, of tuples field by field."""
    if not is_tuple_pair(then, orelse):
        return np.where(test, then, orelse)
    if len(then) != len(orelse):
        raise current().error(f"a choice at run time between tuples of {len(then)} and "
                              f"{len(orelse)} fields: the result's length would depend on "
                              "the data", hint="compare tuples of one length")
    return tuple(tuples_chosen(test, a, b) for a, b in zip(then, orelse, strict=True))


# -- lists laid out as arrays ----------------------------------------------------------------

def _laid_out(value: Any) -> bool:
    return isinstance(value, Tracer) and value.list_like and value.ndim > 0


def is_list_pair(left: Any, right: Any) -> bool:
    """Two lists, one of them laid out as an array (its ``==`` would be NumPy's)."""
    return (_laid_out(left) or _laid_out(right)) \
        and all(_laid_out(v) or isinstance(v, list) for v in (left, right))


def _first(differ: Any, axis: int) -> Any:
    """Where ``differ`` is true for the first time along ``axis`` (none where it never
    is; safe on empty prefixes, where an argmax would fail)."""
    return np.logical_and(differ, np.equal(np.cumsum(differ, axis=axis), 1))


def lists_compared(op: str, left: Any, right: Any) -> Any:
    """``left op right`` of two lists as Python compares them: item by item (a list of
    tuples, rows, field by field), the first unequal pair deciding, else the lengths."""
    a, b = as_tracer(np.asarray(left) if isinstance(left, list) else left), \
        as_tracer(np.asarray(right) if isinstance(right, list) else right)
    n, m = a.shape[0], b.shape[0]
    if a.aval.shape[0] == b.aval.shape[0]:
        head_a, head_b = a, b
    else:
        common = np.minimum(n, m)
        head_a, head_b = a[:common], b[:common]
    fields = np.not_equal(head_a, head_b)
    rows = np.any(fields, axis=tuple(range(1, fields.ndim))) if fields.ndim > 1 else fields
    any_differ = np.any(rows)
    if op in ("Eq", "NotEq"):
        equal = np.logical_and(np.equal(n, m), np.logical_not(any_differ))
        return equal if op == "Eq" else np.logical_not(equal)
    by_length, strictly = _ORDERINGS[op]
    wins = strictly(head_a, head_b)
    if fields.ndim > 1:  # a row decides at its first unequal field
        wins = np.any(np.logical_and(_first(fields, 1), wins), axis=1)
    decided = np.any(np.logical_and(_first(rows, 0), wins))
    return np.where(any_differ, decided, by_length(n, m))
