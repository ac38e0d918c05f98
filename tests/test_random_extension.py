"""``numpy.random`` through the built extension: the wrapper's per-thread generators.

The wrapper hands each calling thread a state of its own (``rt->random``), seeded from
the OS at its first draw and again in a forked child; a C caller passing no runtime gets
the object's own state, seeded with MT19937's default 5489.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np
import pytest
from projects import build_project, imported, run_c_caller

from aotc import abi

pytestmark = pytest.mark.usefixtures("c_compiler")

PACKAGE = "aotc_rand"
KERNELS = '''
"""Random kernels."""
import numpy as np
import aotc
from aotc import f64, i64


@aotc.export
def seeded(s: i64, n: i64) -> f64[:]:
    np.random.seed(s)
    return np.random.normal(0.0, 1.0, n) + np.random.rand(n)


@aotc.export
def unseeded(n: i64) -> f64[:]:
    return np.random.rand(n)


@aotc.export
def pi(n: i64) -> f64:
    inside = 0
    for _ in range(n):
        x = np.random.random()
        y = np.random.random()
        if x * x + y * y < 1.0:
            inside += 1
    return 4.0 * inside / n
'''


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    return build_project(tmp_path_factory.mktemp("random"), PACKAGE, KERNELS)


@pytest.fixture(scope="module")
def k(project):
    with imported(project, PACKAGE) as module:
        yield module


def _reference(s: int, n: int) -> np.ndarray:
    state = np.random.RandomState(s)
    return state.normal(0.0, 1.0, n) + state.rand(n)


def test_seeded_calls_draw_numpys_sequence(k):
    for s in (0, 99, 2**32 - 1):
        np.testing.assert_array_equal(k.seeded(s, 1000), _reference(s, 1000), strict=True)
    with pytest.raises(ValueError, match="Seed must be between"):
        k.seeded(-1, 3)


def test_unseeded_calls_continue_the_stream(k):
    a, b = k.unseeded(500), k.unseeded(500)
    assert not np.array_equal(a, b) and a.min() >= 0.0 and a.max() < 1.0
    assert abs(k.pi(200_000) - np.pi) < 0.02  # the estimate's sd is 0.0037


def test_threads_draw_independently(k):
    """Seeded in each thread at once, every thread sees its own seed's sequence."""
    results: dict[int, list[np.ndarray]] = {}

    def run(s: int) -> None:
        results[s] = [k.seeded(s, 20_000) for _ in range(5)]

    threads = [threading.Thread(target=run, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for s in range(4):
        for got in results[s]:
            np.testing.assert_array_equal(got, _reference(s, 20_000))


def test_a_forked_child_draws_a_stream_of_its_own(k):
    k.unseeded(10)  # the parent's state is made before the fork
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its next draws, to the parent
        try:
            os.write(write, k.unseeded(8).tobytes())
        finally:
            os._exit(0)
    os.close(write)
    child = np.frombuffer(os.read(read, 64), dtype=np.float64)
    os.close(read)
    os.waitpid(pid, 0)
    assert child.shape == (8,) and not np.array_equal(child, k.unseeded(8))


C_MAIN = r"""
#include <stdio.h>
#include "kernels.h"

int main(void) {
    int64_t n = 3, dims[1], info[4];
    double out[3];
    void *argv[1] = {&n}, *outv[1] = {out};
    if (P_shapes(argv, dims, info) != 0 || P(argv, outv, dims, NULL, NULL) != 0) return 1;
    printf("%.17g %.17g %.17g\n", out[0], out[1], out[2]);
    return 0;
}
"""


def test_c_callers_without_a_runtime_draw_from_5489(project, tmp_path):
    prefix = abi.symbol_prefix(f"{PACKAGE}.kernels", "unseeded", 0)
    words = run_c_caller(project / ".aotc-build" / PACKAGE, prefix, C_MAIN, tmp_path)
    np.testing.assert_array_equal([float(w) for w in words],
                                  np.random.RandomState(5489).rand(3))
