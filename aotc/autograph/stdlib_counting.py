"""The standard library's counting functions over runtime values, as Python source that
kernels compile (converted as a user's own helpers are, see :mod:`.pymodules`).

``math.comb``, ``math.perm`` and ``math.factorial`` are exact in int64, with Python's
ValueError for negative arguments and an OverflowError where Python's int would grow
past int64 (a kernel's integers are int64). ``comb`` multiplies and divides in a way
that keeps each partial product exact while the result fits: ``r * m // i`` as
``(r // i) * m + (r % i) * m // i``. ``math.prod`` multiplies left to right, as Python
does. ``itertools.accumulate`` is the running total (or ``func``'s running result) as a
list, and ``collections.Counter(iterable)`` counts in a dict grown while the kernel
runs.
"""

from __future__ import annotations

import operator
from collections import Counter
from typing import Any

#: The largest int64.
_LARGEST = 2**63 - 1


def _times(r: Any, m: Any, what: str) -> Any:
    if m != 0 and r > _LARGEST // m:
        raise OverflowError(f"{what} is beyond int64's range (a compiled kernel's "
                            "integers are int64)")
    return r * m


def _check_choice(n: Any, k: Any) -> None:
    """Python's errors for ``comb(n, k)`` and ``perm(n, k)``."""
    if n < 0:
        raise ValueError("n must be a non-negative integer")
    if k < 0:
        raise ValueError("k must be a non-negative integer")


def comb(n: Any, k: Any) -> Any:
    _check_choice(n, k)
    if k > n:
        return 0
    k = min(k, n - k)
    r = 1
    for i in range(1, k + 1):
        m = n - k + i
        r = _times(r // i, m, "math.comb()") + (r % i) * m // i
    return r


def perm(n: Any, k: Any = None) -> Any:
    if k is None:
        return factorial(n)
    _check_choice(n, k)
    if k > n:
        return 0
    r = 1
    for i in range(n - k + 1, n + 1):
        r = _times(r, i, "math.perm()")
    return r


def factorial(n: Any) -> Any:
    if n < 0:
        raise ValueError("factorial() not defined for negative values")
    r = 1
    for i in range(2, n + 1):
        r = _times(r, i, "math.factorial()")
    return r


def prod(iterable: Any, *, start: Any = 1) -> Any:
    r = start
    for v in iterable:
        r = r * v
    return r


def accumulate(iterable: Any, func: Any = None, *, initial: Any = None) -> Any:
    add = operator.add if func is None else func
    out = []
    if initial is not None:
        out.append(initial)
    for v in iterable:
        if len(out) == 0:
            out.append(v)
        else:
            out.append(add(out[-1], v))
    return out


def counted(iterable: Any) -> Any:
    """``Counter(iterable)``."""
    counts: Counter[Any] = Counter()
    for item in iterable:
        counts[item] += 1
    return counts
