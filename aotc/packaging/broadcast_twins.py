"""Broadcasting decided at run time, as NumPy decides it, with no cost to the common case.

NumPy stretches any size that is 1 at run time: ``x + y`` with ``y`` of shape (n, 1)
passed for an ``f8[:, :]`` parameter, or ``x * x[:, :1]``. A kernel traced for
``f8[:, :]`` cannot know which sizes will be 1, and code that reads every operand
through ``min(i, size - 1)`` would be slow for the case that is almost always the one
called: equal sizes. So each signature is traced as before, taking two sizes of
different symbols to be equal (a size check that ``P_shapes`` runs before the kernel),
and, when that trace took any so, traced again with every such size free to be 1
(:attr:`aotc.types.Signature.stretches`): the *broadcast twin*, compiled right after
it. A call whose sizes fail the first overload's checks runs the twin instead, which
gives NumPy's result or NumPy's error. That is loop versioning at the level of the
kernel: the equal-size version is today's loop; the twin reads a size-1 operand again
and again along that axis.

Only ``P_shapes`` failures fall back: they come before the kernel touches anything, so
the retry has no side effects. A broadcast in a loop body or after a guard checks its
sizes where it runs, so the first overload also gets those equalities among its
``P_shapes`` checks (:func:`dispatching`): a call that would fail one of them runs the
twin from the start, which raises or stretches in the source's order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from ..errors import AotcError
from ..types import Signature

if TYPE_CHECKING:
    from ..tracing.kernel import TracedKernel


def with_broadcast_twins(signatures: Sequence[Signature],
                         traced: Callable[[Signature], TracedKernel]) -> list[Signature]:
    """``signatures``, each followed by its broadcast twin where its trace took two
    sizes to be equal and the twin traces (a twin that cannot be traced is left out:
    the plain overload then raises NumPy's ValueError for sizes it cannot take)."""
    out: list[Signature] = []
    for sig in signatures:
        out.append(sig)
        if sig.stretches or not traced(sig).equal_sizes:
            continue
        twin = replace(sig, stretches=True)
        if traces(traced, twin):
            out.append(twin)
    return out


def traces(trace: Callable[[Signature], object], twin: Signature) -> bool:
    """Whether ``twin`` traces (one that cannot is left out: the overload it follows then
    raises for the calls it would have taken)."""
    try:
        trace(twin)
    except AotcError:
        return False
    return True


def twin_of(signatures: Sequence[Signature], k: int) -> int:
    """The index of overload ``k``'s broadcast twin in ``signatures``, or -1."""
    following = k + 1
    if following < len(signatures) and signatures[following].stretches \
            and not signatures[k].stretches:
        return following
    return -1


def dispatching(kernel: TracedKernel) -> TracedKernel:
    """``kernel`` (one with a broadcast twin) with every size equality broadcasting
    assumed also among the checks ``P_shapes`` runs, so that a call where one fails goes
    to the twin before the kernel runs (the checks it has already stay in place)."""
    program = kernel.program
    extra = tuple(c for c in kernel.equal_sizes if c not in program.checks)
    if not extra:
        return kernel
    return replace(kernel, program=replace(program, checks=program.checks + extra))
