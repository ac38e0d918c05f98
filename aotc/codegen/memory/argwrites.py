"""Values written into an argument, computed straight into the caller's array.

``x += 1`` on an argument traces to ``y = add(x, 1)`` and a write of ``y`` into ``x``
(``Program.writebacks``). Planned like any value, ``y`` gets a buffer of its own and is
copied into the caller's array at the end: a second pass over the data. When the
argument is dead once ``y`` is computed, and the producer reads it only element by
element at the position it writes (an elementwise equation, or a fusion whose body
reads it only through elementwise equations), ``y`` can be written into the argument's
own buffer: each element is read before the same element is overwritten. The update
chain starting at ``y`` then runs in place in the caller's array and the write at the
end has nothing left to do (the entry point's overlap check still applies, see
:mod:`.overlap`).
"""

from __future__ import annotations

from ...ir import Atom, Eqn, Program, Var
from ...ops.calls import call_p, first_written, written
from ...ops.core import ELEMENTWISE, Primitive
from ...ops.fusion import fusion_p
from ...ops.linalg import dot_general_p
from ..core.carries import LOOP_FORMS
from ..nests.fusion_plan import plan_fusion, reads_only_at_own_index
from .planner import Planner, Scope


def chain_start(program: Program, atom: Atom, updates: frozenset[Primitive]) -> Var | None:
    """The first version of the update chain that ends in ``atom``: follow update bases,
    the arrays calls write into and loop initial values back to a value made some other
    way (or an input)."""
    made = {out: eqn for eqn in program.eqns for out in eqn.outs}
    while isinstance(atom, Var):
        eqn = made.get(atom)
        if eqn is None:
            return atom
        if eqn.prim in updates:
            atom = eqn.inputs[0]
        elif eqn.prim is call_p:  # a compiled function writing into an array it is given
            k = eqn.outs.index(atom) - first_written(eqn)
            if k < 0:  # a scalar result
                return atom
            atom = eqn.inputs[written(eqn)[k]]
        elif eqn.prim in LOOP_FORMS:
            form = LOOP_FORMS[eqn.prim](eqn)
            if atom not in form.results:
                return None
            atom = form.init[form.results.index(atom)]
        else:
            return atom
    return None


def targets(program: Program, updates: frozenset[Primitive]) -> dict[Var, int]:
    """Values that could be computed into argument ``index``'s array: the start of the
    update chain of each write into an argument."""
    found: dict[Var, int] = {}
    for index, atom in program.writebacks:
        start = chain_start(program, atom, updates)
        if start is not None and start not in program.inputs and start.type.ndim:
            found[start] = index
    return found


def _reads_aligned(eqn: Eqn, var: Var) -> bool:
    """``eqn`` reads ``var`` only at the index it writes."""
    if eqn.prim.has(ELEMENTWISE):
        return True
    if eqn.prim is not fusion_p:
        return False
    body = eqn.params["body"]
    if body.eqns and body.eqns[0].prim is dot_general_p:
        return False  # a product reads whole rows and columns
    plan = plan_fusion(body, eqn.params["shape"], eqn.params["axes"])
    # Through elementwise ops alone is not enough: a view after them (x += (x*2)[::-1])
    # reads other elements, so the plan's index for every read must be the loop index.
    return all(reads_only_at_own_index(plan, body.inputs[k])
               for k, a in enumerate(eqn.inputs) if a is var)


def overwrites_argument(planner: Planner, scope: Scope, p: int, eqn: Eqn, out: Var,
                        argument: Var) -> Var | None:
    """The version of ``argument``'s buffer that ``eqn`` may compute ``out`` into, if
    any (see the module docstring)."""
    cls = planner.find(argument)
    current = []
    for a in eqn.inputs:
        if not isinstance(a, Var) or a not in planner.values:
            continue
        if a in planner.parent:
            if planner.find(a) is cls:
                current.append(a)
        elif any(r in planner.parent and planner.find(r) is cls
                 for r in planner.values[a].roots):
            return None  # reads the argument through a view: not at the index written
    if len(current) > 1:
        return None
    version = current[0] if current else argument
    if not (planner.is_version(version) and planner.eligible(scope, version, p)
            and version.type.shape == out.type.shape):
        return None
    readers_at_p = [m for m in scope.members[version] if p in scope.uses.get(m, ())]
    if any(m is not version for m in readers_at_p):
        return None  # read through a view: not at the index written
    if readers_at_p and not _reads_aligned(eqn, version):
        return None
    return version
