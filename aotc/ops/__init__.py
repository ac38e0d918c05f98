"""The primitive table, one file per family; importing this registers them all."""

from . import control, elementwise, fusion, index, linalg, reduce, shape, sorting  # noqa: F401
from .core import ALL_PRIMITIVES, Primitive, impl_rules, type_rules

__all__ = ["ALL_PRIMITIVES", "Primitive", "impl_rules", "type_rules"]
