"""How each loop primitive wires its operands to its body, in one table.

The buffer planner (:mod:`.inplace`), the layout and the lowering of loops all need the
same answer to "which operand feeds which body input, and which body output becomes
which result", so it lives here: ``LOOP_FORMS[prim](eqn) -> LoopForm``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ...ir import Atom, Eqn, Program, Var
from ...ops.control import for_loop_p, scan_p, while_loop_p
from ...ops.core import Primitive

Pairs = tuple[tuple[Atom, Var], ...]


@dataclass(frozen=True)
class LoopForm:
    """A loop's dataflow: operands read every iteration, and the carried state."""

    body: Program
    #: (outer operand, body input) pairs the body reads on every iteration.
    consts: Pairs
    #: The body inputs holding the carried state, and the body outputs that replace them.
    carry_in: tuple[Var, ...]
    carry_out: tuple[Atom, ...]
    #: The operands the state starts from, and the loop results that hold it at the end.
    init: tuple[Atom, ...]
    results: tuple[Var, ...]
    #: ``scan``: (stacked operand, body input receiving one row of it) pairs.
    rows: Pairs = ()
    #: ``while_loop``: the condition and its (operand, input) consts; it also reads the carry.
    cond: Program | None = None
    cond_consts: Pairs = ()


def _pairs(atoms: tuple[Atom, ...], inputs: tuple[Var, ...]) -> Pairs:
    return tuple(zip(atoms, inputs, strict=True))


def _for_loop(eqn: Eqn) -> LoopForm:
    body, n = eqn.params["body"], eqn.params["n_consts"]  # body: consts, i, carry
    consts, init = eqn.inputs[2:2 + n], eqn.inputs[2 + n:]
    return LoopForm(body, _pairs(consts, body.inputs[:n]), body.inputs[n + 1:],
                    body.outputs, init, eqn.outs)


def _while_loop(eqn: Eqn) -> LoopForm:
    body, cond = eqn.params["body"], eqn.params["cond"]
    nc, nb = eqn.params["n_cond_consts"], eqn.params["n_body_consts"]
    cond_consts, body_consts = eqn.inputs[:nc], eqn.inputs[nc:nc + nb]
    return LoopForm(body, _pairs(body_consts, body.inputs[:nb]), body.inputs[nb:],
                    body.outputs, eqn.inputs[nc + nb:], eqn.outs, cond=cond,
                    cond_consts=_pairs(cond_consts, cond.inputs[:nc]))


def _scan(eqn: Eqn) -> LoopForm:
    body, n, c = eqn.params["body"], eqn.params["n_consts"], eqn.params["n_carry"]
    consts, init, xs = eqn.inputs[:n], eqn.inputs[n:n + c], eqn.inputs[n + c:]
    return LoopForm(body, _pairs(consts, body.inputs[:n]), body.inputs[n:n + c],
                    body.outputs[:c], init, eqn.outs[:c],
                    rows=_pairs(xs, body.inputs[n + c:]))


LOOP_FORMS: dict[Primitive, Callable[[Eqn], LoopForm]] = {
    for_loop_p: _for_loop, while_loop_p: _while_loop, scan_p: _scan,
}
