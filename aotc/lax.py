"""Primitive-level operations and structured control flow on tracers, as ``jax.lax``.

The public namespace (``aotc.lax.fori_loop``...): the primitive binders of
:mod:`aotc.tracing.bind`, which NumPy's decompositions in :mod:`aotc.numpy_api` are written in,
and the control flow of :mod:`aotc.tracing.control`, which runs as plain Python outside a trace.
"""

from __future__ import annotations

from .tracing.bind import (
    as_dim,
    bind,
    bind1,
    broadcast_in_dim,
    broadcast_to,
    convert,
    dim_value,
    fresh,
    reduce,
    refine_shape,
    reshape,
    select,
    size_value,
    slice_,
    transpose,
)
from .tracing.control import cond, fori_loop, scan, switch, while_loop

__all__ = ["as_dim", "bind", "bind1", "broadcast_in_dim", "broadcast_to", "cond", "convert",
           "dim_value", "fori_loop", "fresh", "reduce", "refine_shape", "reshape", "scan",
           "select", "size_value", "slice_", "switch", "transpose", "while_loop"]
