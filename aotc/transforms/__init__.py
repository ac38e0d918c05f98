"""Build-time function transforms: ``vmap`` (batching) and reverse-mode gradients.

A transform rewrites the traced program of a kernel with rules kept in tables keyed by
primitive (``batching.batch_rules``, ``vjp_rules.vjp_rules``), beside the type, NumPy
and lowering tables; the result is an ordinary program that the optimizer fuses and the
code generator compiles like any other kernel.
"""

from __future__ import annotations

from .api import Transform, Vmapped, vmap
from .core import TransformError
from .grad import Gradient, grad, value_and_grad, vjp
from .inline import inline  # (it registers itself: a transform called inside a kernel)

__all__ = ["Gradient", "Transform", "TransformError", "Vmapped", "grad", "inline",
           "value_and_grad", "vjp", "vmap"]
