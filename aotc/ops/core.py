"""Primitives and the tables that interpret them.

A primitive is a name plus a set of properties; everything else about it lives in
tables keyed by the primitive, in the manner of JAX's Autodidax:

- ``type_rules[p](*in_types, **params) -> tuple[AType, ...]``  (shape and dtype)
- ``impl_rules[p](*arrays, **params) -> tuple[np.ndarray, ...]``  (NumPy reference)

Codegen keeps its own tables in ``aotc.codegen``. Adding an op adds entries; a
missing entry is caught by ``tests/ops/test_registry.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

ELEMENTWISE = "elementwise"
COMMUTATIVE = "commutative"
REDUCTION = "reduction"
#: Output is a view of the first input (a different index map over the same data).
VIEW = "view"
COMPARISON = "comparison"
#: Runs a nested program a number of times only known at run time.
LOOP = "loop"
#: Its nested programs run only on some paths (loop bodies, branches): sizes and checks
#: in them hold only where they run.
GUARDED = "guarded"
#: Has an effect beyond its outputs (it may raise): DCE never removes it.
EFFECT = "effect"
#: Reads and advances state outside its operands (the random generator): two equal
#: equations are two effects, never merged, and run in program order.
STATEFUL = "stateful"

#: The comparisons of size checks (``ir.Check`` at a kernel's entry, ``check`` in a body).
COMPARE: dict[str, Callable[[int, int], bool]] = {
    "==": lambda a, b: a == b, ">=": lambda a, b: a >= b, "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b}


@dataclass(frozen=True)
class Primitive:
    name: str
    properties: frozenset[str] = frozenset()

    def __repr__(self) -> str:
        return self.name

    def has(self, prop: str) -> bool:
        return prop in self.properties


ALL_PRIMITIVES: dict[str, Primitive] = {}


def primitive(name: str, *properties: str) -> Primitive:
    """Create and register a primitive (names are unique)."""
    if name in ALL_PRIMITIVES:
        raise ValueError(f"primitive {name} defined twice")
    prim = Primitive(name, frozenset(properties))
    ALL_PRIMITIVES[name] = prim
    return prim


TypeRule = Callable[..., tuple[Any, ...]]
ImplRule = Callable[..., tuple[Any, ...]]

type_rules: dict[Primitive, TypeRule] = {}
impl_rules: dict[Primitive, ImplRule] = {}
