"""Suite-wide reporting: how many generated cases the property tests tried."""

from __future__ import annotations

import sys
from typing import Any


def pytest_terminal_summary(terminalreporter: Any) -> None:
    module = sys.modules.get("test_properties")
    if module is None or not module.CASES:
        return
    counts = module.CASES
    tried = counts["interpreted"] + counts["compiled"]
    details = ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))
    terminalreporter.write_line(f"property tests: {tried} generated kernels checked "
                                f"against NumPy ({details})")
