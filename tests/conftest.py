"""Suite-wide settings and reporting.

Hypothesis profiles (``tests/test_properties.py``): ``ci``, the default, is derandomized
(the same examples on every run and machine, no example database) with a fixed budget;
``HYPOTHESIS_PROFILE=random pytest ...`` (alias ``dev``) draws new, and more, examples
on each run. A failure prints the example and a ``@reproduce_failure`` blob either way.
At the end, the summary says how many generated kernels the property tests checked.

``c_compiler``: tests that build extension modules use it, and fail without a compiler.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections import Counter
from typing import Any

import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None, max_examples=300,
                          deadline=None, print_blob=True)
settings.register_profile("random", max_examples=1000, deadline=None, print_blob=True)
settings.register_profile("dev", settings.get_profile("random"))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session")
def c_compiler() -> str:
    """The C compiler that builds extension modules. Tests that build one require it:
    without it they fail (never skip), since a suite that silently skips the wrapper
    and the wheels is no evidence they work."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.fail("a C compiler is required: neither cc nor gcc is on PATH (these tests "
                    "build extension modules; install gcc, e.g. apt-get install gcc)",
                    pytrace=False)
    return cc


#: Property-test counts that pytest-xdist's workers sent back (see pytest_testnodedown).
_WORKER_COUNTS: Counter[str] = Counter()


def _property_counts() -> Counter[str]:
    module = sys.modules.get("test_properties")
    return Counter(module.CASES) if module is not None else Counter()


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: hand the counts to the controller
        workeroutput["property_counts"] = dict(_property_counts())


def pytest_testnodedown(node: Any, error: Any) -> None:
    _WORKER_COUNTS.update(getattr(node, "workeroutput", {}).get("property_counts", {}))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    counts = _property_counts() + _WORKER_COUNTS
    if not counts:
        return
    tried = counts["interpreted"] + counts["compiled"]
    details = ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))
    terminalreporter.write_line(f"property tests: {tried} generated kernels checked "
                                f"against NumPy ({details})")
