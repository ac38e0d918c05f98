"""``np.array_split``, ``np.split`` and ``hsplit``/``vsplit``/``dsplit``: lists of views.

NumPy's rule for ``array_split(x, sections)`` along an axis of length ``N``: the first
``N % sections`` pieces have ``N // sections + 1`` items, the others ``N // sections``
(``split`` requires ``N % sections == 0``). Piece ``k`` is the view ``x[start:stop]``
with ``start = k * (N // sections) + min(k, N % sections)``, runtime integers when ``N``
or the count are. With a build-time count the result is a Python list of the views;
with a runtime count it is a runtime sequence (indexed, measured with ``len`` and
iterated like a list, one view per item). Explicit split points (a list of indices)
give the views between them.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any, cast

import numpy as np

from ..tracing.tracer import DISPATCH, Tracer, as_tracer, current
from .histograms import raise_if


def _axis(x: Tracer, axis: Any) -> int:
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise current().error(f"axis {axis} is out of bounds for array of dimension {x.ndim}")
    return int(axis) % x.ndim


def _along(x: Tracer, axis: int, start: Any, stop: Any) -> Tracer:
    index = (slice(None),) * axis + (slice(start, stop),)
    return cast(Tracer, x[index])


def _pieces(x: Tracer, sections: Any, axis: int, equal: bool) -> Any:
    n = x.shape[axis]
    if not isinstance(sections, Tracer):
        if sections <= 0:
            raise current().error("number sections must be larger than 0.")
    else:
        none: Any = np.less_equal(sections, 0)
        raise_if(none, "number sections must be larger than 0.")
    each, extras = np.floor_divide(n, sections), np.remainder(n, sections)
    if equal:
        if isinstance(extras, Tracer):
            unequal: Any = np.not_equal(extras, 0)
            raise_if(unequal, "array split does not result in an equal division")
        elif extras:
            raise current().error("array split does not result in an equal division")

    def piece(k: Any) -> Tracer:
        start = np.add(np.multiply(k, each), np.minimum(k, extras))
        size = np.add(each, np.less(k, extras).astype(np.int64))
        return _along(x, axis, start, np.add(start, size))

    if not isinstance(sections, Tracer):
        return [piece(k) for k in range(int(sections))]
    return DISPATCH.get("runtime_sequence")(as_tracer(sections), piece)


def _at_points(x: Tracer, points: Any, axis: int) -> list[Tracer]:
    bounds = [0, *points, x.shape[axis]]
    return [_along(x, axis, a, b) for a, b in itertools.pairwise(bounds)]


def _split(ary: Any, indices_or_sections: Any, axis: Any, equal: bool) -> Any:
    x = as_tracer(ary)
    ax = _axis(x, axis)
    if isinstance(indices_or_sections, (list, tuple)) or \
            (isinstance(indices_or_sections, Tracer) and indices_or_sections.ndim == 1):
        return _at_points(x, list(indices_or_sections), ax)
    return _pieces(x, indices_or_sections, ax, equal)


def array_split(ary: Any, indices_or_sections: Any, axis: Any = 0) -> Any:
    return _split(ary, indices_or_sections, axis, equal=False)


def split(ary: Any, indices_or_sections: Any, axis: Any = 0) -> Any:
    return _split(ary, indices_or_sections, axis, equal=True)


def _split_on(axis: int, least: int, name: str) -> Any:
    def split_axis(ary: Any, indices_or_sections: Any) -> Any:
        x = as_tracer(ary)
        if x.ndim < least:
            raise current().error(f"{name} only works on arrays of {least} or more "
                                  "dimensions")
        return split(x, indices_or_sections, axis if x.ndim > 1 or axis != 1 else 0)
    return split_axis


FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.array_split: array_split, np.split: split,
    np.hsplit: _split_on(1, 1, "hsplit"), np.vsplit: _split_on(0, 2, "vsplit"),
    np.dsplit: _split_on(2, 3, "dsplit"),
}
