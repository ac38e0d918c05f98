"""The primitive table, one file per family; importing this registers them all."""

from . import (  # noqa: F401
    calls,
    containers,
    control,
    elementwise,
    external,
    fusion,
    index,
    linalg,
    random,
    reduce,
    shape,
    sorting,
)
from .core import ALL_PRIMITIVES, Primitive, impl_rules, type_rules

__all__ = ["ALL_PRIMITIVES", "Primitive", "impl_rules", "type_rules"]
