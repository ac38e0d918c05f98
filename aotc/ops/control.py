"""Structured control flow: primitives whose params hold nested programs.

Each nested program takes its captured outer values ("consts") first, then its own
arguments, as in JAX's ``jaxpr`` closures. The forms and their inputs:

- ``for_loop[body, n_consts, step](lower, upper, *consts, *carry)``;
  ``body(*consts, i, *carry) -> carry``.
- ``while_loop[cond, body, n_cond_consts, n_body_consts](*cond_consts, *body_consts, *carry)``;
  ``cond(*cond_consts, *carry) -> bool``, ``body(*body_consts, *carry) -> carry``.
- ``cond[branches](index, *operands)``: ``branches[index](*operands)``; every branch takes
  the same operands (the union of their consts) and returns the same types.
- ``scan[body, n_consts, n_carry, length, reverse](*consts, *init, *xs)``;
  ``body(*consts, *carry, *x_slices) -> (*carry, *y)``; outputs ``(*carry, *stacked_ys)``.

Reference rules receive ``run(program, *args)``, which evaluates a nested program in
the kernel's size environment ``env``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..tracing.avals import AType
from .core import GUARDED, LOOP, impl_rules, primitive, type_rules

NESTED = "nested"
I64 = np.dtype(np.int64)
BOOL = np.dtype(bool)

for_loop_p = primitive("for_loop", NESTED, LOOP, GUARDED)
while_loop_p = primitive("while_loop", NESTED, LOOP, GUARDED)
cond_p = primitive("cond", NESTED, GUARDED)
scan_p = primitive("scan", NESTED, LOOP, GUARDED)


def _types(atoms: Any) -> tuple[Any, ...]:
    return tuple(a.type for a in atoms)


def _expect(what: str, got: tuple[Any, ...], want: tuple[Any, ...]) -> None:
    if got != want:
        raise ValueError(f"{what}: types {', '.join(map(str, got))} but expected "
                         f"{', '.join(map(str, want))}")


def _scalar(t: Any, dtype: np.dtype, what: str) -> None:
    if t.shape != () or t.dtype != dtype:
        raise ValueError(f"{what} must be a {dtype} scalar, got {t}")


def _for_loop_type(lower: Any, upper: Any, *rest: Any, body: Any, n_consts: int,
                   step: int) -> tuple[Any, ...]:

    _scalar(lower, I64, "for_loop lower bound")
    _scalar(upper, I64, "for_loop upper bound")
    if step == 0:
        raise ValueError("for_loop step cannot be zero")
    consts, carry = rest[:n_consts], rest[n_consts:]
    _expect("for_loop body inputs", _types(body.inputs),
            tuple(consts) + (AType(I64, ()),) + tuple(carry))
    _expect("for_loop body outputs", _types(body.outputs), tuple(carry))
    return tuple(carry)


def _for_loop_impl(lower: np.ndarray, upper: np.ndarray, *rest: np.ndarray, body: Any,
                   n_consts: int, step: int, run: Callable[..., list[np.ndarray]],
                   env: dict[str, int]) -> tuple[np.ndarray, ...]:
    consts, carry = list(rest[:n_consts]), list(rest[n_consts:])
    for i in range(int(lower), int(upper), step):
        carry = run(body, *consts, np.int64(i), *carry)
    return tuple(carry)


def _while_type(*ins: Any, cond: Any, body: Any, n_cond_consts: int,
                n_body_consts: int) -> tuple[Any, ...]:
    cc, bc = ins[:n_cond_consts], ins[n_cond_consts:n_cond_consts + n_body_consts]
    carry = ins[n_cond_consts + n_body_consts:]
    _expect("while_loop cond inputs", _types(cond.inputs), tuple(cc) + tuple(carry))
    (pred,) = _types(cond.outputs)
    _scalar(pred, BOOL, "while_loop condition")
    _expect("while_loop body inputs", _types(body.inputs), tuple(bc) + tuple(carry))
    _expect("while_loop body outputs", _types(body.outputs), tuple(carry))
    return tuple(carry)


def _while_impl(*ins: np.ndarray, cond: Any, body: Any, n_cond_consts: int, n_body_consts: int,
                run: Callable[..., list[np.ndarray]], env: dict[str, int]
                ) -> tuple[np.ndarray, ...]:
    cc, bc = ins[:n_cond_consts], ins[n_cond_consts:n_cond_consts + n_body_consts]
    carry = list(ins[n_cond_consts + n_body_consts:])
    while bool(run(cond, *cc, *carry)[0]):
        carry = run(body, *bc, *carry)
    return tuple(carry)


def _cond_type(index: Any, *operands: Any, branches: tuple[Any, ...]) -> tuple[Any, ...]:
    _scalar(index, I64, "cond index")
    outs = None
    for branch in branches:
        _expect("cond branch inputs", _types(branch.inputs), tuple(operands))
        got = _types(branch.outputs)
        if outs is not None:
            _expect("cond branch outputs", got, outs)
        outs = got
    return tuple(outs or ())


def _cond_impl(index: np.ndarray, *operands: np.ndarray, branches: tuple[Any, ...],
               run: Callable[..., list[np.ndarray]], env: dict[str, int]
               ) -> tuple[np.ndarray, ...]:
    chosen = branches[min(max(int(index), 0), len(branches) - 1)]
    return tuple(run(chosen, *operands))


def _scan_type(*ins: Any, body: Any, n_consts: int, n_carry: int, length: Any,
               reverse: bool) -> tuple[Any, ...]:

    consts, init, xs = ins[:n_consts], ins[n_consts:n_consts + n_carry], ins[n_consts + n_carry:]
    for x in xs:
        if not x.shape or x.shape[0] != length:
            raise ValueError(f"scan: every xs must have leading size {length}, got {x}")
    slices = tuple(AType(x.dtype, x.shape[1:]) for x in xs)
    _expect("scan body inputs", _types(body.inputs), tuple(consts) + tuple(init) + slices)
    outs = _types(body.outputs)
    _expect("scan body carry", outs[:n_carry], tuple(init))
    ys = tuple(AType(y.dtype, (length,) + y.shape) for y in outs[n_carry:])
    return tuple(init) + ys


def _scan_impl(*ins: np.ndarray, body: Any, n_consts: int, n_carry: int, length: int,
               reverse: bool, run: Callable[..., list[np.ndarray]], env: dict[str, int]
               ) -> tuple[np.ndarray, ...]:
    consts, carry = ins[:n_consts], list(ins[n_consts:n_consts + n_carry])
    xs = ins[n_consts + n_carry:]
    ys: list[list[np.ndarray]] = []
    order = range(length - 1, -1, -1) if reverse else range(length)
    for i in order:
        outs = run(body, *consts, *carry, *(x[i] for x in xs))
        carry = list(outs[:n_carry])
        ys.append(list(outs[n_carry:]))
    if reverse:
        ys.reverse()
    n_ys = len(body.outputs) - n_carry
    stacked = []
    for k in range(n_ys):
        y_type = body.outputs[n_carry + k].type
        if ys:
            stacked.append(np.stack([y[k] for y in ys]))
        else:
            shape = tuple(d.evaluate(env) for d in y_type.shape)
            stacked.append(np.zeros((0,) + shape, y_type.dtype))
    return tuple(carry) + tuple(stacked)


type_rules.update({for_loop_p: _for_loop_type, while_loop_p: _while_type,
                   cond_p: _cond_type, scan_p: _scan_type})
impl_rules.update({for_loop_p: _for_loop_impl, while_loop_p: _while_impl,
                   cond_p: _cond_impl, scan_p: _scan_impl})
