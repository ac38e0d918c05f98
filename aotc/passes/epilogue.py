"""Epilogue fusion: a matrix product joins the elementwise work on its result.

Before::                                     After::

    p:f32[m,n] = dot_general a w                 r:f32[m,n] = fusion[shape=(m,n) axes=()] a w b
    r:f32[m,n] = fusion[shape=(m,n)] b p           { lambda c d e . p = dot_general c d
      { ... q = add p bias; r = max q 0 }                            q = add p bias(e)
                                                                     r = max q 0  in (r) }

so ``relu(x @ W + b)`` writes its result once: the lowering
(:mod:`aotc.codegen.gemm_epilogue`) applies the rest of the body to each tile of the
product as soon as the tile is final, while it is still in the first-level cache, and
stores into the same buffer. A fusion body headed by a ``dot_general`` is that and
nothing else: the pass only builds it for a 2-D float product (``A @ B``, any layout)
whose result is used by one equation only, read there at its own index only (no
slice, transpose or broadcast of the product) and of the type of that equation's one
result. The consumer is a fusion group of elementwise work, or one elementwise
equation (``x @ W + b``), which the fusion pass leaves as it is.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import numpy as np

from ..errors import UnsupportedError
from ..ir import Eqn, Params, Program, Var
from ..ops.core import ELEMENTWISE
from ..ops.fusion import fusion_p
from ..ops.indexmaps import Affine, read_indices
from ..ops.linalg import dot_general_p
from .rewrite import Renamer, map_nested

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def is_dot_epilogue(eqn: Eqn) -> bool:
    """Is ``eqn`` a fusion this pass built (a body headed by its matrix product)?"""
    if eqn.prim is not fusion_p:
        return False
    body = eqn.params["body"]
    return bool(body.eqns) and body.eqns[0].prim is dot_general_p


def _plain_product(eqn: Eqn) -> bool:
    """``A @ B`` of two float matrices: what the tiled GEMM takes."""
    if eqn.prim is not dot_general_p:
        return False
    (lc, rc), (lb, _) = eqn.params["contracting"], eqn.params["batch"]
    lt, rt = eqn.inputs[0].type, eqn.inputs[1].type
    return (lt.dtype in _FLOATS and rt.dtype == lt.dtype and lt.ndim == 2 and rt.ndim == 2
            and not lb and len(lc) == 1 and len(rc) == 1)


def _body(eqn: Eqn) -> tuple[Program, tuple[Var, ...]] | None:
    """The consumer as a loop body over its result and its outer operands, or None."""
    if eqn.prim is fusion_p:
        if eqn.params["axes"] or is_dot_epilogue(eqn):
            return None
        return eqn.params["body"], tuple(a for a in eqn.inputs if isinstance(a, Var))
    if not eqn.prim.has(ELEMENTWISE) or len(eqn.outs) != 1:
        return None
    outer = tuple(dict.fromkeys(a for a in eqn.inputs if isinstance(a, Var)))
    params = {v: Var(v.type) for v in outer}
    rename = Renamer()
    rename.env.update(params)
    result = Var(eqn.outs[0].type)  # the outer one stays the fusion's result
    inner = replace(rename.eqn(eqn), outs=(result,))
    body = Program(tuple(params[v] for v in outer), (inner,), (result,), name="fusion")
    return body, outer


def _read_at_own_index(body: Program, var: Var) -> bool:
    ndim = body.outputs[0].type.ndim
    try:
        wanted = read_indices(body, list(body.outputs), ndim, ())
    except UnsupportedError:
        return False
    return list(wanted.get(var, {})) == [tuple(Affine(a) for a in range(ndim))]


def _fuse(product: Eqn, consumer: Eqn) -> Eqn | None:
    """The consumer with ``product`` at the head of its body, if it qualifies."""
    found = _body(consumer)
    if found is None:
        return None
    body, outer = found
    (p,) = product.outs
    out = consumer.outs
    if len(out) != 1 or out[0].type != p.type or len(body.outputs) != 1 \
            or Counter(outer)[p] != 1:
        return None
    inner = body.inputs[outer.index(p)]
    if not _read_at_own_index(body, inner):
        return None
    operands = tuple(dict.fromkeys(a for a in product.inputs if isinstance(a, Var)))
    fresh = {v: Var(v.type) for v in operands}
    rename = Renamer()
    rename.env.update(fresh)
    head = Eqn(dot_general_p, tuple(rename(a) for a in product.inputs), product.params,
               (inner,), product.loc)
    others = [(v, b) for v, b in zip(outer, body.inputs, strict=True) if v is not p]
    inputs = tuple(fresh[v] for v in operands) + tuple(b for _, b in others)
    fused = Program(inputs, (head, *body.eqns), body.outputs, name="fusion")
    params = Params.of({"body": fused, "shape": p.type.shape, "axes": ()})
    return Eqn(fusion_p, operands + tuple(v for v, _ in others), params, out, consumer.loc)


def dot_epilogue(program: Program) -> Program:
    program = program.replace(eqns=tuple(map_nested(e, dot_epilogue) for e in program.eqns))
    eqns = list(program.eqns)
    producer = {v: i for i, e in enumerate(eqns) for v in e.outs}
    uses: Counter[Var] = Counter(a for e in eqns for a in e.inputs if isinstance(a, Var))
    uses.update(a for a in program.outputs if isinstance(a, Var))
    uses.update(a for _, a in program.writebacks if isinstance(a, Var))
    dropped: set[int] = set()
    for i, eqn in enumerate(eqns):
        for a in eqn.inputs:
            k = producer.get(a) if isinstance(a, Var) else None
            if k is None or k in dropped or uses[eqns[k].outs[0]] != 1 \
                    or not _plain_product(eqns[k]):
                continue
            fused = _fuse(eqns[k], eqn)
            if fused is not None:
                eqns[i] = fused
                dropped.add(k)
                break
    if not dropped:
        return program
    return program.replace(eqns=tuple(e for i, e in enumerate(eqns) if i not in dropped))
