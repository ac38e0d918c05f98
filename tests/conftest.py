"""Suite-wide settings and reporting.

Hypothesis profiles (``tests/test_properties.py``): ``ci``, the default, is derandomized
(the same examples on every run and machine, no example database) with a fixed budget;
``HYPOTHESIS_PROFILE=random pytest ...`` (alias ``dev``) draws new, and more, examples
on each run. A failure prints the example and a ``@reproduce_failure`` blob either way.
At the end, the summary says how many generated kernels the property tests checked.

Objects the suite compiles go to an object cache of its own (``AOTC_CACHE_DIR``, unless
set): it neither reuses what earlier runs compiled, so every run starts cold as CI does,
nor fills the user's cache.

``c_compiler``: tests that build extension modules use it, and fail without a compiler.

Files run longest first (:data:`LONGEST`): ``scripts/test.sh`` hands whole files to the
workers in collection order (``--dist loadfile --no-loadscope-reorder``), and xdist's
own order, most tests first, left few-test files that build for a minute (test_fft,
test_e2e) for the end, running alone on one core.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from collections import Counter
from typing import Any

import pytest
from hypothesis import settings

if "AOTC_CACHE_DIR" not in os.environ:
    _CACHE = tempfile.mkdtemp(prefix="aotc-test-cache-")
    os.environ["AOTC_CACHE_DIR"] = _CACHE
    atexit.register(shutil.rmtree, _CACHE, ignore_errors=True)

settings.register_profile("ci", derandomize=True, database=None, max_examples=300,
                          deadline=None, print_blob=True)
settings.register_profile("random", max_examples=1000, deadline=None, print_blob=True)
settings.register_profile("dev", settings.get_profile("random"))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


#: The files that take longest, longest first (cold object cache, 2 workers, measured
#: 2026-12-02: 30 to 160 s each; test_cross 170 s on 2026-12-06). The rest follow in
#: collection order.
LONGEST = ("test_cross.py", "test_compiled.py", "test_e2e.py", "test_fft.py", "test_properties.py",
           "test_elementwise.py", "test_parallel.py", "test_sorting.py", "test_hostile.py",
           "test_python_constructs.py", "test_numpy_more.py", "test_linalg_svd.py",
           "test_trace.py", "test_epilogue.py", "test_inplace.py", "test_linalg_qr.py",
           "test_dev_loop.py", "test_gemm.py", "test_cli.py", "test_examples.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: k for k, name in enumerate(LONGEST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(LONGEST)))  # stable


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
    terminalreporter.write_line(f"host: {_host()}")
    counts = _property_counts() + _WORKER_COUNTS
    if not counts:
        return
    tried = counts["interpreted"] + counts["compiled"]
    details = ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))
    terminalreporter.write_line(f"property tests: {tried} generated kernels checked "
                                f"against NumPy ({details})")


def _host() -> str:
    """The CPU the JIT-compiled tests ran for, as LLVM names it, and its vector features
    (a report read on another machine says which code paths it took)."""
    import llvmlite.binding as llvm

    from aotc.codegen.targets.spec import initialize_llvm

    initialize_llvm()
    features = llvm.get_host_cpu_features()
    vector = sorted(f for f, on in features.items() if on and f.startswith(("avx", "fma")))
    return f"{llvm.get_host_cpu_name()} ({' '.join(vector)})"
