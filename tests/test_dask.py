"""Past one machine: a compiled gufunc on Dask's distributed scheduler.

aotc ships no scheduler: kernels and ufuncs pickle by reference (module and name), so a
worker process that can import the compiled module runs them. A LocalCluster of two
worker processes maps a compiled gufunc over a chunked dask array, both through
``dask.array.apply_gufunc`` and by calling the ufunc on the dask array (NumPy's
``__array_ufunc__`` protocol hands it to dask), and the result is compared with NumPy.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import dask.array as da
import numpy as np
import pytest
import xarray as xr
from distributed import Client, LocalCluster, wait
from projects import build_project, imported

PACKAGE = "dask_pkg"
KERNELS = '''
import numpy as np
import aotc


@aotc.export("f8(f8[:], f8[:])", "f4(f4[:], f4[:])", gufunc="(n),(n)->()")
def wdot(x, w):
    """Weighted sum of each row."""
    return np.sum(x * w)


@aotc.export("f8(f8)", ufunc=True)
def checked_sqrt(x):
    if x < 0:
        raise ValueError("checked_sqrt: negative input")
    return np.sqrt(x)
'''


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, ModuleType]]:
    root = build_project(tmp_path_factory.mktemp("dask"), PACKAGE, KERNELS)
    with imported(root, PACKAGE) as module:
        yield root, module


@pytest.fixture(scope="module")
def client(compiled: tuple[Path, ModuleType]) -> Iterator[Client]:
    """Two worker processes that import the built project from their PYTHONPATH."""
    root, _ = compiled
    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), before) if p)
    try:
        with LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                          dashboard_address=None) as cluster, Client(cluster) as c:
            yield c
    finally:
        if before is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = before


def _timed(f: Callable[[], object]) -> float:
    start = time.perf_counter()
    f()
    return time.perf_counter() - start


def test_gufunc_on_a_local_cluster(compiled: tuple[Path, ModuleType], client: Client) -> None:
    _, m = compiled
    w = np.random.default_rng(3).normal(size=16)
    # The data lives on the workers (made there, kept there), as on a real cluster.
    dx = da.random.default_rng(4).normal(size=(1_000_000, 16), chunks=(125_000, 16))
    dx = client.persist(dx)
    wait(dx)
    x = dx.compute()  # the same data, here, for NumPy

    start = time.perf_counter()
    mapped = da.apply_gufunc(m.wdot, "(n),(n)->()", dx, w, output_dtypes=np.float64)
    result = mapped.compute()
    on_cluster = time.perf_counter() - start
    start = time.perf_counter()
    expected = x @ w
    in_numpy = time.perf_counter() - start
    np.testing.assert_allclose(result, expected, rtol=1e-12, atol=1e-12)
    print(f"\nwdot over {x.nbytes / 1e6:.0f} MB in {dx.npartitions} chunks: LocalCluster "
          f"(2 processes) {on_cluster * 1e3:.1f} ms, NumPy x @ w {in_numpy * 1e3:.1f} ms, "
          f"the compiled ufunc here {_timed(lambda: m.wdot(x, w)) * 1e3:.1f} ms")

    called = m.wdot(dx, w)  # the ufunc called on a dask array: dask maps it per chunk
    assert isinstance(called, da.Array)
    np.testing.assert_allclose(called.compute(), expected, rtol=1e-12, atol=1e-12)

    workers = client.run(lambda: __import__(f"{PACKAGE}.kernels", fromlist=["x"]).__file__)
    assert len(workers) == 2 and all(f.endswith(".so") for f in workers.values())


def test_kernel_errors_reach_the_client(compiled: tuple[Path, ModuleType],
                                        client: Client) -> None:
    _, m = compiled
    values = np.linspace(1.0, 4.0, 100_000)
    values[77_777] = -1.0
    dv = da.from_array(values, chunks=25_000)
    np.testing.assert_allclose(m.checked_sqrt(dv[:70_000]).compute(), np.sqrt(values[:70_000]))
    with pytest.raises(ValueError, match="checked_sqrt: negative input"):
        m.checked_sqrt(dv).compute()


def test_xarray_apply_ufunc_parallelized(compiled: tuple[Path, ModuleType],
                                         client: Client) -> None:
    """xarray's way: named core dims, dask="parallelized" over the chunked loop dims."""
    _, m = compiled
    rng = np.random.default_rng(5)
    values, weights = rng.normal(size=(40_000, 8)), rng.normal(size=8)
    x = xr.DataArray(values, dims=("time", "feature")).chunk({"time": 10_000})
    w = xr.DataArray(weights, dims=("feature",))
    mapped = xr.apply_ufunc(m.wdot, x, w, input_core_dims=[["feature"], ["feature"]],
                            dask="parallelized", output_dtypes=[np.float64])
    assert mapped.dims == ("time",) and mapped.chunks == ((10_000,) * 4,)
    np.testing.assert_allclose(mapped.compute().values, values @ weights, rtol=1e-12,
                               atol=1e-12)
