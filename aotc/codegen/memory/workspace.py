"""Temporary buffers a primitive's lowering needs beyond its results, keyed by primitive.

Generated code never allocates: a rule that needs work memory (a radix sort's ping-pong
key buffers and digit counters, a matrix product's packing buffers) declares it here as
array types, and the buffer plan (:mod:`.layout`) gives each one a scratch slot of its own,
keyed ``(eqn, "work", k)`` in :attr:`.layout.Layout.staging`, sized like any other value
(a size bound at run time counts as its upper bound). The lowering rule reads them back
with :func:`work_buffers`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...ir import Eqn
from ...ops.core import Primitive
from ...ops.fusion import fusion_p
from ...ops.linalg import dot_general_p
from ...ops.sorting import argsort_p, sort_p
from ...shapes import DimExpr
from ...tracing.avals import AType
from ..linalg import gemm
from ..sorting.radix import histogram_size

WorkspaceRule = Callable[[Eqn], list[AType]]
I64 = np.dtype(np.int64)


def _keys(x: AType, length: DimExpr) -> AType:
    """A row of keys: unsigned integers as wide as the values."""
    return AType(np.dtype(f"u{x.dtype.itemsize}"), (length,))


def _sort(eqn: Eqn) -> list[AType]:
    """Key buffers A and B (B is the output row itself when the sorted axis is the last,
    contiguous one of the result), then the digit counters."""
    x, axis = eqn.inputs[0].type, eqn.params["axis"]
    length = x.shape[axis]
    second = [_keys(x, length)] if axis != x.ndim - 1 else []
    return [_keys(x, length), *second, AType(I64, (DimExpr.const(histogram_size(x.dtype)),))]


def _argsort(eqn: Eqn) -> list[AType]:
    """Key buffers A and B, index buffers A and B (B is the output row when it is
    contiguous), then the digit counters."""
    x, axis = eqn.inputs[0].type, eqn.params["axis"]
    length = x.shape[axis]
    second = [AType(I64, (length,))] if axis != x.ndim - 1 else []
    return [_keys(x, length), _keys(x, length), AType(I64, (length,)), *second,
            AType(I64, (DimExpr.const(histogram_size(x.dtype, indices=True)),))]


def _fused(eqn: Eqn) -> list[AType]:
    """A fusion headed by a matrix product (an epilogue) packs as the product does."""
    body = eqn.params["body"]
    return gemm.workspace(body.eqns[0]) if body.eqns and body.eqns[0].prim is dot_general_p \
        else []


WORKSPACE: dict[Primitive, WorkspaceRule] = {sort_p: _sort, argsort_p: _argsort,
                                             dot_general_p: gemm.workspace, fusion_p: _fused}


def workspace(eqn: Eqn) -> list[AType]:
    """The work buffers equation ``eqn``'s lowering needs (none for most)."""
    rule = WORKSPACE.get(eqn.prim)
    return rule(eqn) if rule is not None else []
