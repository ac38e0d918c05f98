"""Fresh buffers that take another's place, so that nothing is copied between them.

Two decisions of :mod:`.inplace`, each about a buffer a nested program made for itself
alone: a ``cond`` branch's fresh result lives in the ``cond`` result's own buffer
(:func:`build_in_place`), and a loop carry made anew each iteration trades buffers with
the carry's slot at the back edge (:func:`swappable`, ``Move.SWAP``).
"""

from __future__ import annotations

from ...ir import Eqn, Program, Var
from ..core.carries import LoopForm
from .planner import Planner


def swappable(planner: Planner, eqn: Eqn, form: LoopForm, k: int, before: set[Var]) -> bool:
    """Whether the ``k``-th carry's new value, instead of being copied into the carry's
    slot, may trade buffers with it: ``u = new`` in a time-stepping loop, where ``new``
    is made each iteration in a buffer of the body's own. Both buffers must be ours and
    C-contiguous (the slot not a caller's array it took over), and hold nothing else
    another carry reads."""
    value, slot = form.carry_out[k], form.results[k]
    if not planner.is_version(value):
        return False
    mine, theirs = planner.find(value), planner.find(slot)
    carried = planner.values[slot]
    if mine in before or mine not in planner.owned or theirs not in planner.owned \
            or carried.caller or not carried.contiguous:
        return False
    return not any(planner.find(r) in (mine, theirs)
                   for j, atom in enumerate(form.carry_out) if j != k
                   for r in planner.roots(atom))


def build_in_place(planner: Planner, branch: Program, k: int, out: Var,
                    before: set[Var]) -> None:
    """Let the branch make its ``k``-th result in the ``cond`` result's own buffer when
    it is a whole buffer the branch made for it alone (a loop's carry, an update chain
    on a fresh array): then no branch copies its result out. Loop versioning makes such
    a ``cond`` of every loop with checks; without this, each of its runs copied the
    loop's array once more."""
    result = branch.outputs[k]
    if not planner.is_version(result):
        return
    rep = planner.find(result)
    if rep in before or rep not in planner.owned:
        return  # a buffer from outside the branch, or one it does not own
    others = [a for j, a in enumerate(branch.outputs) if j != k and isinstance(a, Var)
              and any(planner.find(r) is rep for r in planner.roots(a))]
    if others:
        return  # another result reads the same bytes
    planner.owned.remove(rep)
    planner.join(rep, out)
