"""Unroll and jam: a loop around a reduction loop runs several of its iterations at once.

Why: ``acc += x[i + j] * k[j]`` is one chain of dependent adds per output. Python's
order (and NumPy's, and Numba's without ``fastmath``) forbids reassociating it, so each
add waits for the one before, and an explicit convolution, stencil or distance loop runs
at the adder's latency, not its throughput. Running :data:`UNROLL` outputs' chains in the
same inner loop keeps each chain's order (every result is bit for bit the uncompiled
one) while the CPU overlaps them: an ``np.correlate`` of two loops ran 3.6x faster, a
5x5 box blur of four 7x (eight chains measured faster than four: 22 against 38 us).

::

    out = for_loop[body](lo, hi, *consts, *carry)

becomes, with ``q = max(hi - lo, 0) // UNROLL``::

    part = for_loop[jammed](0, q, *consts, lo, *carry)
    out = for_loop[body](lo + UNROLL * q, hi, *consts, *part)    # the rest, unchanged

``jammed`` runs iterations ``i = lo + UNROLL * t + u`` (``u < UNROLL``): every copy's
equations before its inner loop, then the inner loops as one loop (their bounds are the
same in every copy) whose body is the copies' bodies in turn, fused the same way down the
nest, then every copy's equations after it, in order.

That order is the original one except between copies, so the copies must not talk to
each other but through the outer loop's carries, which only the equations after the
inner loop may read (``out[i] = acc``, in order): the body has no effects (no
``raise_if``: loop versioning removed the checks of a nest it proved; a size binding is
fine, each copy binds sizes of its own) and its inner loop carries scalars only (each
copy's accumulators).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ..ir import Atom, Eqn, Lit, Params, Program, Var, bound_uppers, nested_programs
from ..ops.control import for_loop_p
from ..ops.core import ALL_PRIMITIVES, EFFECT, STATEFUL
from ..ops.shape import bind_dim_p
from ..tracing.avals import AType
from .rewrite import Copier, Emitter, map_nested

#: Iterations of the outer loop per iteration of the jammed loop.
UNROLL = 8
#: Equations (nested ones included) of a body this pass copies, at most.
MAX_BODY = 300

I64 = np.dtype(np.int64)
_P = ALL_PRIMITIVES
ADD, SUB, MUL, MAX, FLOOR_DIVIDE = (_P[n] for n in ("add", "sub", "mul", "max",
                                                     "floor_divide"))


def jam(program: Program) -> Program:
    """Jam every loop that :func:`_inner_loop` accepts (the outermost of a nest)."""
    eqns: list[Eqn] = []
    for eqn in program.eqns:
        if eqn.prim is for_loop_p and _inner_loop(eqn) is not None:
            eqns += _jammed(eqn)
        else:
            eqns.append(map_nested(eqn, jam))
    return program.replace(eqns=tuple(eqns))


# -- which loops ---------------------------------------------------------------------------

def _count(program: Program) -> int:
    return sum(1 + sum(_count(p) for p in nested_programs(e)) for e in program.eqns)


def _pure(program: Program) -> bool:
    """No equation (nested ones included) has an effect but binding a size."""
    return all((e.prim is bind_dim_p or not (e.prim.has(EFFECT) or e.prim.has(STATEFUL)))
               and all(_pure(p) for p in nested_programs(e)) for e in program.eqns)


def _inner_loop(loop: Eqn) -> int | None:
    """The position of the inner loop in the body of ``loop`` when ``loop`` can be jammed:
    a pure body of one inner ``for_loop``, whose bounds are the same in every copy, whose
    carries are scalars, and before which nothing reads the outer loop's carries."""
    body, n = loop.params["body"], loop.params["n_consts"]
    if loop.params["step"] != 1 or _count(body) > MAX_BODY or not _pure(body):
        return None
    nests = [k for k, e in enumerate(body.eqns) if nested_programs(e)]
    if len(nests) != 1 or body.eqns[nests[0]].prim is not for_loop_p:
        return None
    p = nests[0]
    inner = body.eqns[p]
    bound = bound_uppers(body).keys()
    if any(d.symbols() & bound for v in (*body.inputs, *body.outputs) for d in v.type.shape):
        return None  # a carry sized while the loop runs: each copy would size it anew
    same = _shared(body, n)
    carries = set(body.inputs[n + 1:])
    if inner.params["step"] != 1 or any(v.type.shape for v in inner.outs) \
            or not all(isinstance(a, Lit) or a in same for a in inner.inputs[:2]) \
            or any(a in carries for e in body.eqns[:p + 1] for a in e.inputs):
        return None
    return p


def _shared(program: Program, n: int) -> set[Var]:
    """The values of ``program`` (and of the programs nested in it) that every copy has
    alike: those computed from its first ``n`` inputs (the loop's constants) alone,
    through loops whose bounds are such values too (their indices are alike)."""
    same = set(program.inputs[:n])

    def visit(body: Program) -> None:
        for eqn in body.eqns:
            alike = [isinstance(a, Lit) or a in same for a in eqn.inputs]
            if eqn.prim is for_loop_p:
                inner, m = eqn.params["body"], eqn.params["n_consts"]
                same.update(v for v, a in zip(inner.inputs[:m], alike[2:2 + m], strict=True)
                            if a)
                if alike[0] and alike[1] and eqn.params["step"] == 1:
                    same.add(inner.inputs[m])
                visit(inner)
            elif not nested_programs(eqn) and all(alike):
                same.update(eqn.outs)
    visit(program)
    return same


# -- copies of a body ----------------------------------------------------------------------

def _copiers(body: Program) -> list[Copier]:
    """One copier per copy; copy 0 keeps the size names (its code replaces the body's)."""
    bound = bound_uppers(body)
    return [Copier({s: f"{s}~{u}" for s in bound} if u else {}) for u in range(UNROLL)]


def _segments(program: Program, same: set[Var]) -> list[list[Eqn] | Eqn]:
    """``program``'s equations as runs of plain ones and the loops the copies share."""
    found: list[list[Eqn] | Eqn] = [[]]
    for eqn in program.eqns:
        if eqn.prim is for_loop_p and eqn.params["step"] == 1 \
                and all(isinstance(a, Lit) or a in same for a in eqn.inputs[:2]):
            found += [eqn, []]
        else:
            run = found[-1]
            assert isinstance(run, list)
            run.append(eqn)
    return found


def _interleaved(program: Program, copiers: list[Copier], same: set[Var]) -> list[Eqn]:
    """Every copy of ``program``'s equations: each run of plain equations copy by copy,
    each loop the copies share as one loop."""
    return _interleaved_parts(_segments(program, same), copiers, same)


def _interleaved_parts(parts: Iterable[list[Eqn] | Eqn], copiers: list[Copier],
                       same: set[Var]) -> list[Eqn]:
    """:func:`_interleaved` of the segments ``parts``."""
    eqns: list[Eqn] = []
    for part in parts:
        if isinstance(part, list):
            eqns += [c.eqn(e) for c in copiers for e in part]
        else:
            eqns.append(_fused(part, copiers, same))
    return eqns


def _fused(loop: Eqn, copiers: list[Copier], same: set[Var]) -> Eqn:
    """The copies of ``loop`` as one loop: every copy's constants and carries, one index."""
    body, m = loop.params["body"], loop.params["n_consts"]
    index = Var(body.inputs[m].type)
    inner = [Copier(c.symbols, dict(c.env)) for c in copiers]
    consts = [c.fresh(v) for c in inner for v in body.inputs[:m]]
    for c in inner:
        c.env[body.inputs[m]] = index
    carries = [c.fresh(v) for c in inner for v in body.inputs[m + 1:]]
    eqns = _interleaved(body, inner, same)
    fused = body.replace(inputs=(*consts, index, *carries), eqns=tuple(eqns),
                         outputs=tuple(c(a) for c in inner for a in body.outputs))
    first = copiers[0]
    inputs = (first(loop.inputs[0]), first(loop.inputs[1]),
              *(c(a) for c in copiers for a in loop.inputs[2:2 + m]),
              *(c(a) for c in copiers for a in loop.inputs[2 + m:]))
    outs = tuple(c.fresh(v) for c in copiers for v in loop.outs)
    params = Params.of({**dict(loop.params), "body": fused, "n_consts": m * len(copiers)})
    return Eqn(for_loop_p, inputs, params, outs, loop.loc)


# -- the jammed loop -----------------------------------------------------------------------

def _jammed(loop: Eqn) -> list[Eqn]:
    body, n = loop.params["body"], loop.params["n_consts"]
    lo, hi = loop.inputs[:2]
    consts, inits = loop.inputs[2:2 + n], loop.inputs[2 + n:]
    emitter = Emitter(loop.loc)
    emit = emitter.emit
    count = emit(FLOOR_DIVIDE, emit(MAX, emit(SUB, hi, lo), Lit(0, I64)), Lit(UNROLL, I64))
    rest = emit(ADD, lo, emit(MUL, count, Lit(UNROLL, I64)))
    part = tuple(Var(v.type) for v in loop.outs)
    jammed = Eqn(for_loop_p, (Lit(0, I64), count, *consts, lo, *inits),
                 Params.of({**dict(loop.params), "body": _jammed_body(body, n),
                            "n_consts": n + 1}), part, loop.loc)
    remainder = Eqn(for_loop_p, (rest, hi, *consts, *part), loop.params, loop.outs, loop.loc)
    return [*emitter.eqns, jammed, remainder]


def _jammed_body(body: Program, n: int) -> Program:
    """``lambda *consts, lo, t, *carry``: :data:`UNROLL` iterations of ``body``."""
    consts = tuple(Var(v.type) for v in body.inputs[:n])
    lo, t = Var(AType(I64, ())), Var(AType(I64, ()))
    carries = tuple(Var(v.type) for v in body.inputs[n + 1:])
    emitter = Emitter(None)
    emit = emitter.emit
    first = emit(ADD, lo, emit(MUL, t, Lit(UNROLL, I64)))
    copiers = _copiers(body)
    for u, c in enumerate(copiers):
        c.env.update(zip(body.inputs[:n], consts, strict=True))
        c.env[body.inputs[n]] = first if u == 0 else emit(ADD, first, Lit(u, I64))
    same = _shared(body, n)
    segments = _segments(body, same)
    *before, last = segments
    eqns = [*emitter.eqns, *_interleaved_parts(before, copiers, same)]
    assert isinstance(last, list)
    threaded: Iterable[Atom] = carries
    for c in copiers:  # the carries pass from copy to copy, in order
        c.env.update(zip(body.inputs[n + 1:], threaded, strict=True))
        eqns += [c.eqn(e) for e in last]
        threaded = [c(a) for a in body.outputs]
    return body.replace(inputs=(*consts, lo, t, *carries), eqns=tuple(eqns),
                        outputs=tuple(threaded))
