"""The loop kernels of the numpy_tour example (``examples/numpy_tour/tour/loops.py``) as
plain functions, for the IR and JIT tests that also check them: one source for the
example, its benchmark and those tests."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

_SOURCE = Path(__file__).resolve().parent.parent / "examples" / "numpy_tour" / "tour" / "loops.py"


def _load() -> Any:
    spec = importlib.util.spec_from_file_location("numpy_tour_loops", _SOURCE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_LOOPS = _load()
#: What the tracer runs of each (``aotc.export`` keeps it as ``__aotc_unchecked__``).
box_blur = _LOOPS.box_blur.__aotc_unchecked__
knapsack = _LOOPS.knapsack.__aotc_unchecked__
convolve_valid = _LOOPS.convolve_valid.__aotc_unchecked__
