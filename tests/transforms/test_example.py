"""examples/transforms runs uncompiled (its build is the same path test_vmap and
test_grad compile through the JIT)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

from aotc.packaging.build import exported_functions

PROJECT = Path(__file__).resolve().parents[2] / "examples" / "transforms"


def test_demo_checks_pass_uncompiled(monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(PROJECT))
    for name in [m for m in sys.modules if m.startswith("transforms_demo")]:
        monkeypatch.delitem(sys.modules, name)
    demo = importlib.import_module("transforms_demo.demo")
    assert demo.main() == 0
    kernels = importlib.import_module("transforms_demo.kernels")
    assert [n for n, _ in exported_functions(kernels)] == [
        "selu", "loss", "selu_batch", "loss_grad", "loss_vg", "per_example_grads", "wdot"]
