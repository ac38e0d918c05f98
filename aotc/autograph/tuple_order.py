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
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

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
