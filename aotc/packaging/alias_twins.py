"""One array passed for two parameters, computed as Python computes it.

A kernel that writes one argument and later reads another (``argument_order``) is
compiled with value semantics: each argument read as it was when the call began. When a
caller passes one array for both (``one_time_step(r, r)``), or an array and its
transpose (``lapl2d(x, x.T)``, a ping-pong stencil), Python's reads see the writes, and
the compiled kernel's would not. Those are the two ways of passing one array twice that
real code uses, so for each such pair the build traces the signature again with one
parameter *being* the other (:attr:`aotc.types.Signature.aliases`): the *alias twin*.
There, as for one array under two names inside a kernel, reads see the writes.

The call path runs a twin instead of its overload when the two arguments are that exact
array (same data, shape and strides) or its exact transpose (:func:`aliasing`); any
other overlap of such a pair stays the ValueError naming the two parameters. Twins come
after every declared signature, so the dispatch never picks one by its types: the
overload it follows matches first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from ..types import Signature
from .argument_order import order_conflicts
from .broadcast_twins import traces

if TYPE_CHECKING:
    from ..ir import Program

#: Pairs of one signature that get twins, at most (each twin is compiled code).
MAX_PAIRS = 3
#: :func:`aliasing`'s answers.
SAME, TRANSPOSED = 0, 1


def _pairs(sig: Signature, program: Program) -> list[tuple[int, int, bool]]:
    """The ``aliases`` of ``sig``'s twins: each conflicting pair of parameters of one
    dtype and rank, as itself and, from rank 2, transposed."""
    found: list[tuple[int, int, bool]] = []
    for written, read in order_conflicts(program):
        first, second = sorted((written, read))
        a, b = sig.params[first], sig.params[second]
        if a.dtype != b.dtype or a.ndim != b.ndim:
            continue
        for transposed in (False, True)[:1 + (a.ndim >= 2)]:
            if (first, second, transposed) not in found:
                found.append((first, second, transposed))
    return found[:2 * MAX_PAIRS]


def with_alias_twins(signatures: Sequence[Signature],
                     program: Callable[[Signature], Program]) -> list[Signature]:
    """``signatures``, then the alias twins of each that traces (``program`` traces; a
    twin that cannot be traced is left out, and its pair stays a ValueError)."""
    twins: list[Signature] = []
    for sig in signatures:
        if sig.fallback:
            continue
        candidates = [replace(sig, aliases=aliases) for aliases in _pairs(sig, program(sig))]
        twins += [twin for twin in candidates if traces(program, twin)]
    return [*signatures, *twins]


def alias_twin(signatures: Sequence[Signature], k: int, written: int, read: int,
               how: int) -> int:
    """The index in ``signatures`` of overload ``k``'s twin for parameters ``written``
    and ``read`` being one array (``how``: :data:`SAME` or :data:`TRANSPOSED`), or -1."""
    first, second = sorted((written, read))
    twin = replace(signatures[k], aliases=(first, second, how == TRANSPOSED))
    return signatures.index(twin) if twin in signatures else -1


def described(aliases: tuple[int, int, bool], names: Sequence[str]) -> str:
    """``"out is inp.T"``: which parameter a twin takes to be which."""
    first, second, transposed = aliases
    return f"{names[second]} is {names[first]}{'.T' if transposed else ''}"


def aliasing(a: object, b: object) -> int:
    """:data:`SAME` when ``a`` and ``b`` are one array (its data, shape and strides),
    :data:`TRANSPOSED` when ``b`` is ``a.T``, else -1 (the C runtime's
    ``_aliasing`` answers the same for a built module's calls)."""
    if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)) or a.ndim != b.ndim \
            or a.ctypes.data != b.ctypes.data:
        return -1
    if a.shape == b.shape and a.strides == b.strides:
        return SAME
    if a.shape == b.shape[::-1] and a.strides == b.strides[::-1]:
        return TRANSPOSED
    return -1
