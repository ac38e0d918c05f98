"""Reverse-mode rules of structured control flow: ``scan``, ``for_loop`` and ``cond``.

Loops store their carries: the forward sweep runs the scan with each iteration's
incoming carry as an extra stacked output (memory ``length * carry``), and the reverse
sweep is a scan the other way whose body recomputes one iteration's internals from its
stored carry and applies that body's own reverse sweep (so a body's temporaries are
recomputed, never stored). A ``for_loop`` whose trip count is a size expression is
differentiated as the scan over its indices. ``while_loop`` has no reverse rule, as in
JAX: its trip count is not known before it runs, so there is nowhere to store carries.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ir import Atom, Eqn, Lit, Params, Program, Var
from ..ops.control import cond_p, for_loop_p, scan_p
from ..ops.core import ALL_PRIMITIVES
from ..ops.shape import iota_p
from ..shapes import DimExpr, ceil_div, relu
from .core import Emitter, or_zeros, zeros
from .reverse import Sweep, forward_rules, inline, vjp_eqns
from .vjp_rules import is_float, vjp_rules

I64 = np.dtype(np.int64)
_add, _mul = ALL_PRIMITIVES["add"], ALL_PRIMITIVES["mul"]


@dataclass(frozen=True)
class ScanResiduals:
    """What the reverse rule of a scan needs: the scan's inputs and stacked carries."""

    ins: tuple[Atom, ...]
    carries: tuple[Atom, ...]


def _scan_forward(sweep: Sweep, eqn: Eqn, ins: Sequence[Atom]) -> tuple[Sequence[Atom], Any]:
    body: Program = eqn.params["body"]
    nc, nk = eqn.params["n_consts"], eqn.params["n_carry"]
    # Each iteration also outputs the carry it started from: stacked, the stored carries.
    stored = body.replace(outputs=body.outputs + body.inputs[nc:nc + nk])
    params = {**dict(eqn.params), "body": stored}
    outs = sweep.em.emit(scan_p, *ins, **params)
    n = len(body.outputs)
    return outs[:n], ScanResiduals(tuple(ins), tuple(outs[n:]))


def _scan_vjp(em: Emitter, cts: list[Atom | None], ins: list[Atom], outs: list[Atom], *,
              body: Program, n_consts: int, n_carry: int, length: DimExpr, reverse: bool,
              residuals: ScanResiduals) -> list[Atom | None]:
    nc, nk = n_consts, n_carry
    consts, xs = ins[:nc], ins[nc + nk:]
    ny = len(body.outputs) - nk
    fc = [i for i in range(nc) if is_float(consts[i].type)]
    fk = [i for i in range(nk) if is_float(body.inputs[nc + i].type)]
    fx = [j for j in range(len(xs)) if is_float(xs[j].type)]
    fy = [j for j in range(ny) if is_float(body.outputs[nk + j].type)]
    ct_c0 = [zeros(em, consts[i].type) for i in fc]
    ct_k0 = [or_zeros(em, cts[i], outs[i].type) for i in fk]
    ct_ys = [or_zeros(em, cts[nk + j], outs[nk + j].type) for j in fy]

    # The reverse body: (consts, ct_consts, ct_carry, carry_i, x_i, ct_y_i)
    #                -> (ct_consts + this iteration's, ct of carry_i, ct of x_i)
    v_consts = [Var(a.type) for a in consts]
    v_ctc = [Var(consts[i].type) for i in fc]
    v_ctk = [Var(body.inputs[nc + i].type) for i in fk]
    v_carry = [Var(v.type) for v in body.inputs[nc:nc + nk]]
    v_x = [Var(v.type) for v in body.inputs[nc + nk:]]
    v_cty = [Var(body.outputs[nk + j].type) for j in fy]
    inner = Emitter(em.loc)
    seed: list[Atom | None] = [None] * (nk + ny)
    for i, v in zip(fk, v_ctk, strict=True):
        seed[i] = v
    for j, v in zip(fy, v_cty, strict=True):
        seed[nk + j] = v
    _, in_cts = vjp_eqns(body, [*v_consts, *v_carry, *v_x], seed, inner)
    new_ctc: list[Atom] = []
    for i, acc in zip(fc, v_ctc, strict=True):
        got = in_cts[i]
        new_ctc.append(acc if got is None else inner.one(_add, acc, got))
    new_ctk = [or_zeros(inner, in_cts[nc + i], v_carry[i].type) for i in fk]
    ct_x = [or_zeros(inner, in_cts[nc + nk + j], v_x[j].type) for j in fx]
    back = Program((*v_consts, *v_ctc, *v_ctk, *v_carry, *v_x, *v_cty), tuple(inner.eqns),
                   (*new_ctc, *new_ctk, *ct_x), name=body.name)
    swept = em.emit(scan_p, *consts, *ct_c0, *ct_k0, *residuals.carries, *xs, *ct_ys,
                    body=back, n_consts=nc, n_carry=len(fc) + len(fk), length=length,
                    reverse=not reverse)
    found: list[Atom | None] = [None] * len(ins)
    for i, a in zip(fc, swept[:len(fc)], strict=True):
        found[i] = a
    for i, a in zip(fk, swept[len(fc):len(fc) + len(fk)], strict=True):
        found[nc + i] = a
    for j, a in zip(fx, swept[len(fc) + len(fk):], strict=True):
        found[nc + nk + j] = a
    return found


@dataclass(frozen=True)
class LoopAsScan:
    """A for_loop differentiated as the scan over its indices."""

    params: dict[str, Any]
    scan: ScanResiduals


def _for_forward(sweep: Sweep, eqn: Eqn, ins: Sequence[Atom]) -> tuple[Sequence[Atom], Any]:
    body: Program = eqn.params["body"]
    nc, step = eqn.params["n_consts"], eqn.params["step"]
    lower, upper = sweep.static_int(eqn.inputs[0]), sweep.static_int(eqn.inputs[1])
    if lower is None or upper is None:
        return sweep.em.copy(eqn, tuple(ins)), None  # the reverse rule says why not
    em = sweep.em
    length = relu(ceil_div(upper - lower, step) if step > 0 else ceil_div(lower - upper, -step))
    index = em.one(iota_p, dtype=I64, shape=(length,), dimension=0)
    index = em.one(_add, em.one(_mul, index, Lit(step, I64)), ins[0])
    consts, carry = ins[2:2 + nc], ins[2 + nc:]
    v_consts = [Var(v.type) for v in body.inputs[:nc]]
    v_i = Var(body.inputs[nc].type)
    v_carry = [Var(v.type) for v in body.inputs[nc + 1:]]
    inner = Emitter(em.loc)
    outs = inline(inner, body, [*v_consts, v_i, *v_carry])
    as_scan = Program((*v_consts, *v_carry, v_i), tuple(inner.eqns), tuple(outs), name=body.name)
    params = {"body": as_scan, "n_consts": nc, "n_carry": len(carry), "length": length,
              "reverse": False}
    scan_eqn = Eqn(scan_p, (), Params.of(params), (), eqn.loc)
    got, res = _scan_forward(sweep, scan_eqn, [*consts, *carry, index])
    return got, LoopAsScan(params, res)


def _for_vjp(em: Emitter, cts: list[Atom | None], ins: list[Atom], outs: list[Atom], *,
             body: Program, n_consts: int, step: int, residuals: LoopAsScan | None
             ) -> list[Atom | None]:
    if residuals is None:
        raise em.error("grad: a loop whose trip count is computed at run time (not from "
                       "sizes) has no reverse rule",
                       hint="loop over range(n) with n an argument size or integer "
                            "argument, or use aotc.lax.scan")
    p = residuals.params
    got = _scan_vjp(em, cts, list(residuals.scan.ins), outs, body=p["body"],
                    n_consts=p["n_consts"], n_carry=p["n_carry"], length=p["length"],
                    reverse=False, residuals=residuals.scan)
    return [None, None, *got[:-1]]  # bounds and the index have no cotangent


def _cond_vjp(em: Emitter, cts: list[Atom | None], ins: list[Atom], outs: list[Atom], *,
              branches: tuple[Program, ...]) -> list[Atom | None]:
    """Each branch's reverse sweep becomes a branch of a cond on the same index."""
    index, ops = ins[0], ins[1:]
    fo = [i for i in range(len(ops)) if is_float(ops[i].type)]
    fy = [j for j in range(len(outs)) if is_float(outs[j].type)]
    ct_in = [or_zeros(em, cts[j], outs[j].type) for j in fy]
    reversed_branches = []
    for branch in branches:
        v_ops = [Var(a.type) for a in ops]
        v_ct = [Var(outs[j].type) for j in fy]
        inner = Emitter(em.loc)
        seed: list[Atom | None] = [None] * len(outs)
        for j, v in zip(fy, v_ct, strict=True):
            seed[j] = v
        _, got = vjp_eqns(branch, v_ops, seed, inner)
        results = [or_zeros(inner, got[i], ops[i].type) for i in fo]
        reversed_branches.append(Program((*v_ops, *v_ct), tuple(inner.eqns), tuple(results),
                                         name=branch.name))
    chosen = em.emit(cond_p, index, *ops, *ct_in, branches=tuple(reversed_branches))
    found: list[Atom | None] = [None] * len(ins)
    for i, a in zip(fo, chosen, strict=True):
        found[1 + i] = a
    return found


forward_rules.update({scan_p: _scan_forward, for_loop_p: _for_forward})
vjp_rules.update({scan_p: _scan_vjp, for_loop_p: _for_vjp, cond_p: _cond_vjp})
