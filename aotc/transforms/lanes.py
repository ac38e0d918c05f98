"""``aotc.vmap`` of a kernel that cannot be batched: a loop over the lanes.

Batching rewrites each primitive for a batch axis; some cannot be (an early ``return``
in a loop binds a size that would differ from lane to lane, a random draw...). Rather
than refuse, the vmapped kernel is then traced as the loop its uncompiled form runs:
each lane's arguments taken at the batch index, the kernel called on them (inlined, as
any helper), its results written into arrays with the batch axis first. It is slower
than a batched loop nest, and gives the same values lane by lane. One result, batched
along axis 0 (``out_axes=0``), is what it makes; others keep the batching error.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import lax
from ..numpy_api.creation import full_from_dims
from ..tracing.bind import size_value
from ..tracing.tracer import Tracer, as_tracer


def lane_loop(fn: Callable[..., Any], names: Sequence[str], axes: Sequence[int | None]
              ) -> Callable[..., Any]:
    """A kernel of parameters ``names`` that calls ``fn`` on each lane of its arguments
    (``axes``: each one's batch axis, or None) and stacks the results."""
    fn = getattr(fn, "__aotc_unchecked__", fn)  # (the kernel itself, not its argument checks)

    def looped(**given: Any) -> Any:
        args = [given[name] for name in names]
        batch = _lanes(args, axes)
        if _count(batch) == 0:  # (as the uncompiled vmap says)
            raise ValueError("vmap: an empty batch (run the compiled kernel for that)")
        first = fn(*_lane(batch, 0))
        out = _stacked(first, _count(batch))
        out[0] = first
        for i in range(1, _count(batch)):
            out[i] = fn(*_lane(batch, i))
        return out
    looped.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY) for n in names])
    return looped


def _lanes(args: list[Any], axes: Sequence[int | None]) -> list[tuple[Any, bool]]:
    """Each argument with its batch axis moved to the front, and whether it is batched."""
    return [(a, False) if ax is None else (np.moveaxis(a, ax, 0), True)
            for a, ax in zip(args, axes, strict=True)]


def _count(batch: list[tuple[Any, bool]]) -> Any:
    """The batch size (a size: a Python int where the build knows it)."""
    return next(lax.dim_value(a.aval.shape[0]) for a, batched in batch if batched)


def _lane(batch: list[tuple[Any, bool]], i: Any) -> list[Any]:
    return [a[i] if batched else a for a, batched in batch]


def _stacked(first: Any, n: Any) -> Tracer:
    """An array of ``n`` rows shaped as ``first`` (a lane's result), to write them into."""
    value = as_tracer(first)
    return full_from_dims((size_value(n), *value.aval.shape), 0, value.dtype)
