"""``np.isin`` (and ``np.in1d`` where NumPy still has it): membership by comparison.

Every element is compared with every test element (``a.ravel()[:, None] == b.ravel()``,
then ``any`` along the second axis): ``O(len(a) * len(b))`` work with no sort and no
size known only at run time, the right trade for the short test lists kernels use.
Equality is NumPy's ``==`` after NumPy's promotion, so NaN is in no list (NumPy's
``isin`` says the same).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import lax
from ..tracing.tracer import Tracer, as_tracer, current
from .reductions import any_
from .shaping import ravel
from .ufuncs import apply_ufunc


def isin(element: Any, test_elements: Any, assume_unique: bool = False, invert: bool = False,
         *, kind: Any = None) -> Tracer:
    if kind not in (None, "sort", "table"):
        raise current().error(f"Invalid kind: '{kind}'. Please use None, 'sort' or 'table'.")
    x, tests = as_tracer(element), ravel(as_tracer(test_elements))
    flat = ravel(x)
    hits = any_(apply_ufunc(np.equal, flat[:, None], tests[None, :]), axis=1)
    if invert:
        hits = apply_ufunc(np.logical_not, hits)
    return lax.reshape(hits, x.aval.shape)


def in1d(ar1: Any, ar2: Any, assume_unique: bool = False, invert: bool = False,
         *, kind: Any = None) -> Tracer:
    return ravel(isin(ar1, ar2, assume_unique, invert, kind=kind))


_IN1D = getattr(np, "in1d", None)  # removed in NumPy 2.4
FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.isin: isin, **({_IN1D: in1d} if _IN1D is not None else {}),
}
