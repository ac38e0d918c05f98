"""``fusion``: a group of equations that becomes one loop nest.

``fusion[body, shape, axes](*inputs)`` evaluates ``body`` (a nested program over the
inputs) as one loop over ``shape``, the iteration space. Inside the body:

- every value is a function of the loop index: elementwise equations apply at the
  index, view equations (broadcast, transpose, slice, unit reshapes) move the index,
  so no intermediate array exists;
- outputs are values of shape ``shape`` (written at each index) or reductions of such
  values over ``axes`` (accumulated; the loop runs the kept axes outside, ``axes``
  inside).

With fusion off, no ``fusion`` equations exist and every equation is its own loop:
the baseline the benchmarks compare against.
"""

from __future__ import annotations

from typing import Any

from .control import NESTED
from .core import impl_rules, primitive, type_rules

fusion_p = primitive("fusion", NESTED)


def _fusion_type(*ins: Any, body: Any, shape: Any, axes: tuple[int, ...]) -> tuple[Any, ...]:
    got = tuple(a for a in ins)
    want = tuple(v.type for v in body.inputs)
    if got != want:
        raise ValueError(f"fusion: inputs {', '.join(map(str, got))} do not match the body's "
                         f"{', '.join(map(str, want))}")
    kept = tuple(d for i, d in enumerate(shape) if i not in axes)
    for out in body.outputs:
        if out.type.shape not in (tuple(shape), kept):
            raise ValueError(f"fusion: output {out.type} is neither the loop shape nor a "
                             "reduction of it")
    return tuple(o.type for o in body.outputs)


def _fusion_impl(*ins: Any, body: Any, shape: Any, axes: Any, run: Any, env: Any
                 ) -> tuple[Any, ...]:
    return tuple(run(body, *ins))


type_rules[fusion_p] = _fusion_type
impl_rules[fusion_p] = _fusion_impl
