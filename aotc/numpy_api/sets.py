"""Set operations on 1-D arrays (``intersect1d``, ``setdiff1d``, ``union1d``,
``setxor1d``) and NumPy 2's ``unique_values``/``unique_counts``/``unique_inverse``/
``unique_all``, as NumPy's ``_arraysetops_impl`` defines them on top of ``np.unique``,
sorting and masks (their sizes depend on the data: bound while the kernel runs, as for
``x[mask]``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np
from numpy.lib import _arraysetops_impl as numpy_sets

from ..tracing.tracer import Tracer, as_tracer, current
from .joining import concatenate
from .membership import isin
from .shaping import ravel
from .sorting import sort
from .ufuncs import apply_ufunc
from .unique import unique


def _flat_unique(a: Any, assume_unique: bool) -> Tracer:
    x = ravel(as_tracer(a))
    return x if assume_unique else unique(x)


def intersect1d(ar1: Any, ar2: Any, assume_unique: bool = False,
                return_indices: bool = False) -> Tracer:
    """Sorted values in both: neighbours equal in the sorted union of the two sets."""
    if return_indices:
        raise current().error("np.intersect1d: return_indices=True is not supported yet")
    both = sort(concatenate([_flat_unique(ar1, assume_unique),
                             _flat_unique(ar2, assume_unique)]))
    return cast(Tracer, both[:-1][apply_ufunc(np.equal, both[1:], both[:-1])])


def setdiff1d(ar1: Any, ar2: Any, assume_unique: bool = False) -> Tracer:
    values = _flat_unique(ar1, assume_unique)
    return cast(Tracer, values[isin(values, ravel(as_tracer(ar2)), assume_unique=True,
                                    invert=True)])


def union1d(ar1: Any, ar2: Any) -> Tracer:
    return cast(Tracer, unique(concatenate([ravel(as_tracer(ar1)), ravel(as_tracer(ar2))])))


def setxor1d(ar1: Any, ar2: Any, assume_unique: bool = False) -> Tracer:
    """Values in exactly one: those of the sorted union equal to neither neighbour."""
    both = sort(concatenate([_flat_unique(ar1, assume_unique),
                             _flat_unique(ar2, assume_unique)]))
    differ = apply_ufunc(np.not_equal, both[1:], both[:-1])
    edge = as_tracer(np.array([True]))
    flags = concatenate([edge, differ, edge])
    return cast(Tracer, both[apply_ufunc(np.logical_and, flags[1:], flags[:-1])])


def unique_values(x: Any) -> Tracer:
    return cast(Tracer, unique(x, equal_nan=False))


def unique_counts(x: Any) -> Any:
    return numpy_sets.UniqueCountsResult(*unique(x, return_counts=True, equal_nan=False))


def unique_inverse(x: Any) -> Any:
    return numpy_sets.UniqueInverseResult(*unique(x, return_inverse=True, equal_nan=False))


def unique_all(x: Any) -> Any:
    return numpy_sets.UniqueAllResult(*unique(x, return_index=True, return_inverse=True,
                                              return_counts=True, equal_nan=False))


FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.intersect1d: intersect1d, np.setdiff1d: setdiff1d, np.union1d: union1d,
    np.setxor1d: setxor1d, np.unique_values: unique_values, np.unique_counts: unique_counts,
    np.unique_inverse: unique_inverse, np.unique_all: unique_all,
}
