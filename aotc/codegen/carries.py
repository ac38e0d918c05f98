"""Which values a loop carries from one iteration to the next, per loop primitive.

Both the layout (which stages carried arrays that a body returns as views) and the
lowering of loops need the same answer, so it lives in one table:
``LOOP_CARRIES[prim](eqn) -> (body, carry inputs of the body, carry outputs of the body)``.
"""

from __future__ import annotations

from collections.abc import Callable

from ..ir import Atom, Eqn, Program, Var
from ..ops.control import for_loop_p, scan_p, while_loop_p
from ..ops.core import Primitive

Carries = tuple[Program, tuple[Var, ...], tuple[Atom, ...]]


def _for_loop(eqn: Eqn) -> Carries:
    body, n = eqn.params["body"], eqn.params["n_consts"]
    return body, body.inputs[n + 1:], body.outputs  # inputs: consts, i, carry


def _while_loop(eqn: Eqn) -> Carries:
    body, n = eqn.params["body"], eqn.params["n_body_consts"]
    return body, body.inputs[n:], body.outputs


def _scan(eqn: Eqn) -> Carries:
    body, n, c = eqn.params["body"], eqn.params["n_consts"], eqn.params["n_carry"]
    return body, body.inputs[n:n + c], body.outputs[:c]


LOOP_CARRIES: dict[Primitive, Callable[[Eqn], Carries]] = {
    for_loop_p: _for_loop, while_loop_p: _while_loop, scan_p: _scan,
}


def nested_programs(eqn: Eqn) -> list[Program]:
    """Every program in ``eqn``'s params (bodies, conditions, branches)."""
    found: list[Program] = []
    for _, value in eqn.params:
        values = value if isinstance(value, tuple) else (value,)
        found.extend(v for v in values if isinstance(v, Program))
    return found
