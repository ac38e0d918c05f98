"""The NumPy reference interpreter of the IR.

It runs a :class:`~aotc.ir.Program` with each primitive's ``impl_rule``: the ground
truth that passes and codegen are tested against, and what constant folding evaluates.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .ir import Atom, Lit, Program, Var
from .ops import impl_rules
from .ops.control import NESTED
from .ops.index import KernelError
from .ops.shape import bind_dim_p
from .shapes import DimExpr, within_limit
from .tracing.messages import fill

#: A failed size check or a raising equation: ``error`` names the exception type the
#: compiled kernel raises with the same message.
RuntimeCheckError = KernelError


def bind_dims(program: Program, args: tuple[Any, ...]) -> dict[str, int]:
    """Read every size symbol from the runtime arguments."""
    env: dict[str, int] = {}
    for src in program.dim_sources:
        if src.program is not None:  # computed from the scalar arguments (aotc.tracing.derived)
            with np.errstate(all="ignore"):  # (its errors are the kernel's: raised)
                (value,) = eval_program(src.program, *args, env=env)
            env[src.symbol] = within_limit(int(value))
            continue
        arg = args[src.index]
        # Integer arguments are clamped, as compiled code reads them (see SYMBOL_LIMIT).
        env[src.symbol] = int(np.shape(arg)[src.axis]) if src.axis is not None \
            else within_limit(int(arg))
    return env


def run_checks(program: Program, env: dict[str, int]) -> None:
    for check in program.checks:
        lhs, rhs = check.lhs.evaluate(env), check.rhs.evaluate(env)
        if not check.holds(lhs, rhs):
            raise RuntimeCheckError(check.error, fill(check.message, lhs, rhs, bits=False))


def concrete_params(value: Any, env: dict[str, int]) -> Any:
    """Replace size expressions inside params by their values."""
    if isinstance(value, DimExpr):
        return value.evaluate(env)
    if isinstance(value, tuple):
        return tuple(concrete_params(v, env) for v in value)
    return value


def eval_program(program: Program, *args: Any, env: dict[str, int] | None = None
                 ) -> list[np.ndarray]:
    """Run ``program`` on NumPy arrays and scalars; returns one array per output.

    A nested program (a loop body) is run with its kernel's size environment ``env``.
    """
    if env is None:
        env = bind_dims(program, args)
        run_checks(program, env)
    values: dict[Var, Any] = {}

    def run(nested: Program, *nested_args: Any, fresh: bool = False) -> list[np.ndarray]:
        """A nested program with the kernel's sizes, or (``fresh``: a compiled function,
        aotc.ops.calls) with its own, read from its arguments."""
        return eval_program(nested, *nested_args, env=None if fresh else env)

    def read(atom: Atom) -> Any:
        return np.asarray(atom.value) if isinstance(atom, Lit) else values[atom]

    for var, arg in zip(program.inputs, args, strict=True):
        values[var] = np.asarray(arg, dtype=var.type.dtype)
    for eqn in program.eqns:
        params = {k: concrete_params(v, env) for k, v in eqn.params}
        if eqn.prim.has(NESTED):
            params.update(run=run, env=env)
        outs = impl_rules[eqn.prim](*(read(a) for a in eqn.inputs), **params)
        for var, out in zip(eqn.outs, outs, strict=True):
            values[var] = np.asarray(out, dtype=var.type.dtype)
        if eqn.prim is bind_dim_p:  # a size symbol from here on
            env[eqn.params["symbol"]] = int(outs[0])
    # Results are taken before arguments are written: an output may alias an argument.
    results = [np.array(read(a), copy=True) for a in program.outputs]
    for index, atom in program.writebacks:  # writes into arguments, as NumPy would
        np.copyto(args[index], read(atom))
    return results
