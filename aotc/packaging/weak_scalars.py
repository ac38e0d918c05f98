"""NumPy scalars passed for Python scalar parameters: strong, as NumPy's promotion has it.

A parameter written ``float``, ``int`` or ``complex`` takes a Python number, which is weak
in NumPy 2 (NEP 50): ``x_f32 * 2.5`` stays float32. A NumPy scalar passed for it is not:
``x_f32 * np.float64(2.5)`` is float64, and ``np.complex128(1e300)`` times a complex64
array is complex128 (in complex64 it overflows). So the build compiles, after a
signature with such parameters whose program would change were they strong, *twins*:
the same signature with some of those parameters strong at their own dtype (float64,
int64, complex128), one per combination (a NumPy scalar for one, a Python number for
another). Where such a parameter is weak it defers a NumPy scalar of 8-byte components
(float64, complex128, int64, uint64, or a 0-d array of one) to the next signature;
narrower NumPy scalars (float32 for ``float``) promote exactly as a Python number does
there, and stay.
A twin whose results contradict the declared ones (``"f4[:](f4[:], float)"`` says
float32 whatever is passed) is not made: the declaration decides.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Generic, TypeVar

from ..errors import AotcError
from ..types import ArrayType, Signature

#: Trace a signature: its program's text, to compare twins by (raises AotcError).
Tracer = Callable[[Signature], str]
T = TypeVar("T")


def _unmarked(sig: Signature) -> Signature:
    """``sig`` without its defer marks, which change nothing that is traced."""
    return replace(sig, params=tuple(replace(p, defers_wide=False) for p in sig.params))


class Traces(Generic[T]):
    """Each signature traced once (by ``trace``), whatever its defer marks: the twins'
    comparison and the compilation of every overload share the traces."""

    def __init__(self, trace: Callable[[Signature], T]) -> None:
        self._trace = trace
        self._done: dict[Signature, T] = {}

    def __call__(self, sig: Signature) -> T:
        key = _unmarked(sig)
        if key not in self._done:
            self._done[key] = self._trace(key)
        return self._done[key]


def _weak(p: ArrayType) -> bool:
    return p.weak and p.is_scalar and p.dtype.kind in "iufc"


#: Weak parameters that matter, up to which every combination of them gets a twin (past
#: it, only the one with all of them strong: each twin is compiled code).
MAX_COMBINED = 2


def with_strong_twins(signatures: Sequence[Signature], trace: Tracer) -> list[Signature]:
    """``signatures``, each followed by its strong twins: one per combination of its
    weak parameters made strong, among those whose strength changes the program (their
    weak versions then defer wide NumPy scalars to the twins)."""
    trace = Traces(trace)  # (the original is compared with each of its twins)
    out: list[Signature] = []
    for sig in signatures:
        matter = [i for i, p in enumerate(sig.params)
                  if _weak(p) and _differs(trace, sig, _strong(sig, {i}))]
        if not matter:
            out.append(sig)
            continue
        chosen = [set(c) for n in range(1, len(matter) + 1)
                  for c in itertools.combinations(matter, n)]
        if len(matter) > MAX_COMBINED:
            chosen = [set(matter)]
        for strong in [set(), *chosen]:
            variant = _strong(sig, strong)
            out.append(replace(variant, params=tuple(
                replace(p, defers_wide=True) if i in matter and i not in strong else p
                for i, p in enumerate(variant.params))))
    return out


def _strong(sig: Signature, which: set[int]) -> Signature:
    return replace(sig, params=tuple(replace(p, weak=False) if i in which else p
                                     for i, p in enumerate(sig.params)))


def _differs(trace: Tracer, sig: Signature, twin: Signature) -> bool:
    try:
        return trace(sig) != trace(twin)
    except AotcError:  # the twin contradicts the declared results
        return False

