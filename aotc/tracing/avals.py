"""Abstract values: what tracing and type rules know of a value (a dtype and a shape).

It sits below both the IR (whose variables have one) and the primitive tables (whose
type rules compute them), so neither needs the other to describe a value.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..shapes import Shape, shape_str
from ..types import SHORT_NAMES


@dataclass(frozen=True)
class AType:
    """Abstract value: a dtype and a symbolic shape (``()`` for scalars)."""

    dtype: np.dtype
    shape: Shape

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __str__(self) -> str:
        return f"{SHORT_NAMES[self.dtype]}[{shape_str(self.shape)}]"
