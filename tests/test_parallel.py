"""``parallel = true``: kernels split over the module's thread pool give NumPy's results,
the same for every thread count, and survive fork.

Each run happens in a fresh interpreter (the pool reads ``AOTC_NUM_THREADS`` once) that
saves its results; the test compares them with NumPy and with a serial build's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from projects import build_project

KERNELS = '''
import numpy as np
import aotc
from aotc import f32, f64, i64


@aotc.export
def triad(b: f64["n"], c: f64["n"], s: f64) -> f64["n"]:
    return b + s * c


@aotc.export
def big_sum(x: f64["n"], y: f64["n"], z: f64["n"]) -> f64:
    return np.sum(x + y * z)


@aotc.export
def plain_sum(b: f64["n"]) -> f64:
    return np.sum(b)


@aotc.export
def softmax(x: f32["n", "m"]) -> f32["n", "m"]:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@aotc.export
def matmul(a: f64["m", "k"], b: f64["k", "n"]) -> f64["m", "n"]:
    return a @ b


@aotc.export
def dense(x: f64["m", "k"], w: f64["k", "n"], bias: f64["n"]) -> f64["m", "n"]:
    return np.maximum(x @ w + bias, 0.0)


@aotc.export
def steps(x: f64["n"], count: i64) -> f64["n"]:
    for _ in range(count):
        x = 0.5 * np.cos(x) + 0.25 * x
    return x


@aotc.export
def ramps(b: f64["n"], x: f32["r", "m"]) -> tuple[f64["n"], f32["r", "m"]]:
    # iota fused into the split loops: each chunk counts from its own start
    return (b + np.arange(b.shape[0])[::-1],
            x * np.arange(x.shape[1], dtype=np.float32)
            + np.arange(x.shape[0], dtype=np.float32)[:, None])


@aotc.export(parallel=False)
def serial_triad(b: f64["n"], c: f64["n"], s: f64) -> f64["n"]:
    return b + s * c
'''

#: The inputs, made the same way here and in the child.
INPUTS = """
rng = np.random.default_rng(7)
n = 3_000_001
b, c, z = rng.random(n), rng.random(n), rng.random(n)
x = rng.standard_normal((2048, 515)).astype(np.float32)
a, m = rng.random((300, 200)), rng.random((200, 250))
w, bias = rng.standard_normal((200, 250)), rng.standard_normal(250)
# several panels of B along both the contracted axis (KC = 256) and the columns, and
# more row slabs (SLAB_ROWS = 128) than two or three threads: slabs share the panels
a2, m2 = rng.random((520, 600)), rng.random((600, 1700))
"""

#: Run in a child: every kernel on fixed inputs, results saved to argv[2].
RUN = '''
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import par.kernels as k
''' + INPUTS + '''
out = dict(triad=k.triad(b, c, 3.0), big_sum=k.big_sum(b, c, z), plain_sum=k.plain_sum(b),
           softmax=k.softmax(x), matmul=k.matmul(a, m), steps=k.steps(b, 3),
           dense=k.dense(a - 0.5, w, bias), ramp=k.ramps(b, x)[0], ramp2d=k.ramps(b, x)[1],
           matmul_panels=k.matmul(a2, m2), dense_panels=k.dense(a2, m2, m2[0]),
           serial_triad=k.serial_triad(b, c, 3.0), small=k.triad(b[:100], c[:100], 3.0))
np.savez(sys.argv[2], **out)
'''

FORK = '''
import os, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import par.kernels as k
b = np.arange(2_000_000, dtype=np.float64)
first = k.plain_sum(b)
pid = os.fork()
if pid == 0:
    ok = k.plain_sum(b) == first and np.array_equal(k.triad(b, b, 2.0), 3 * b)
    os._exit(0 if ok else 1)
_, status = os.waitpid(pid, 0)
assert os.waitstatus_to_exitcode(status) == 0, status
assert k.plain_sum(b) == first
print("forked")
'''


def _inputs() -> dict[str, object]:
    names: dict[str, object] = {"np": np}
    exec(INPUTS, names)
    return names


def _expected() -> dict[str, np.ndarray]:
    i = _inputs()
    b, c, z, x = i["b"], i["c"], i["z"], i["x"]
    e = np.exp(x - x.max(axis=1, keepdims=True))
    y = b
    for _ in range(3):
        y = 0.5 * np.cos(y) + 0.25 * y
    return dict(triad=b + 3.0 * c, big_sum=np.sum(b + c * z), plain_sum=np.sum(b),
                softmax=e / e.sum(axis=1, keepdims=True), matmul=i["a"] @ i["m"], steps=y,
                dense=np.maximum((i["a"] - 0.5) @ i["w"] + i["bias"], 0.0),
                matmul_panels=i["a2"] @ i["m2"],
                dense_panels=np.maximum(i["a2"] @ i["m2"] + i["m2"][0], 0.0),
                serial_triad=b + 3.0 * c, small=b[:100] + 3.0 * c[:100],
                ramp=b + np.arange(len(b))[::-1],
                ramp2d=x * np.arange(x.shape[1], dtype=np.float32)
                + np.arange(x.shape[0], dtype=np.float32)[:, None])


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    roots = {}
    for name, extra in (("parallel", "parallel = true\n"), ("serial", "")):
        root = tmp_path_factory.mktemp(name)
        build_project(root, "par", KERNELS, extra)
        roots[name] = root
    return roots


def _run(root: Path, out: Path, threads: str | None) -> dict[str, np.ndarray]:
    env = dict(os.environ)
    env.pop("AOTC_NUM_THREADS", None)
    if threads is not None:
        env["AOTC_NUM_THREADS"] = threads
    subprocess.run([sys.executable, "-c", RUN, str(root), str(out)], check=True, env=env,
                   timeout=300)
    with np.load(out) as data:
        return {k: data[k] for k in data.files}


def test_results_match_numpy_and_every_thread_count(builds: dict[str, Path],
                                                    tmp_path: Path) -> None:
    expected = _expected()
    serial = _run(builds["serial"], tmp_path / "serial.npz", None)
    runs = {t: _run(builds["parallel"], tmp_path / f"t{t}.npz", t) for t in ("1", "2", "3", "8")}
    runs["default"] = _run(builds["parallel"], tmp_path / "default.npz", None)
    for name, want in expected.items():
        rtol = 1e-5 if name in ("softmax", "ramp2d") else 1e-12  # float32 results
        for threads, got in runs.items():
            np.testing.assert_allclose(got[name], want, rtol=rtol, err_msg=f"{name} {threads}")
            # Deterministic: the chunks depend on the sizes, never on the threads.
            assert np.array_equal(got[name], runs["1"][name]), (name, threads)
        if name in ("big_sum", "plain_sum"):  # partial sums combined: within rounding
            np.testing.assert_allclose(runs["2"][name], serial[name], rtol=1e-14)
        else:  # elementwise, row-wise, products: bit-identical to one thread
            assert np.array_equal(runs["2"][name], serial[name]), name


def test_fork_then_call_in_child(builds: dict[str, Path]) -> None:
    env = dict(os.environ, AOTC_NUM_THREADS="2")
    done = subprocess.run([sys.executable, "-c", FORK, str(builds["parallel"])], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "forked" in done.stdout


def test_interrupt_polling_still_works(builds: dict[str, Path]) -> None:
    """A pending signal stops a parallel kernel: the caller polls between chunks."""
    script = textwrap.dedent('''
        import signal, sys, threading, time, os
        import numpy as np
        sys.path.insert(0, sys.argv[1])
        import par.kernels as k
        b = np.random.default_rng(0).random(4_000_000)
        signal.signal(signal.SIGINT, signal.default_int_handler)  # even if started ignored
        threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        start = time.monotonic()
        try:
            k.steps(b, 100_000)
        except KeyboardInterrupt:
            print("interrupted", time.monotonic() - start)
    ''')
    env = dict(os.environ, AOTC_NUM_THREADS="2")
    done = subprocess.run([sys.executable, "-c", script, str(builds["parallel"])], env=env,
                          capture_output=True, text=True, timeout=120)
    assert "interrupted" in done.stdout, done.stdout + done.stderr


# -- the thread policies -------------------------------------------------------------------

def _child(script: str, roots: list[Path], threads: str = "3") -> str:
    """Run ``script`` in a fresh interpreter with ``roots`` importable; its stdout."""
    env = dict(os.environ, AOTC_NUM_THREADS=threads)
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(script),
                           *map(str, roots)], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _pool_threads(cpus: int, files: dict[str, str], tmp_path: Path,
                  environ: dict[str, str] | None = None) -> int:
    from aotc.packaging.slow_paths import runtime

    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return runtime()["_default_threads"](environ or {}, str(tmp_path), cpus)


@pytest.mark.parametrize(("files", "environ", "want"), [
    ({}, None, 64),                                              # no quota: the CPUs
    ({"cpu.max": "200000 100000\n"}, None, 2),                   # docker --cpus=2
    ({"cpu.max": "150000 100000\n"}, None, 2),                   # 1.5 CPUs: rounded up
    ({"cpu.max": "max 100000\n"}, None, 64),                     # v2, unlimited
    ({"cpu/cpu.cfs_quota_us": "300000", "cpu/cpu.cfs_period_us": "100000"}, None, 3),
    ({"cpu/cpu.cfs_quota_us": "-1", "cpu/cpu.cfs_period_us": "100000"}, None, 64),
    ({"cpu.max": "200000 100000\n"}, {"AOTC_NUM_THREADS": "5"}, 5),  # asked for: given
    ({}, {"AOTC_NUM_THREADS": "0"}, 1),
], ids=["none", "v2-two", "v2-fraction", "v2-max", "v1-three", "v1-none", "env", "env-0"])
def test_pool_size_follows_affinity_quota_and_environment(files, environ, want, tmp_path):
    assert _pool_threads(64, files, tmp_path, environ) == want


def test_pool_size_refuses_a_bad_environment_value(tmp_path):
    with pytest.raises(ValueError, match="AOTC_NUM_THREADS='many'"):
        _pool_threads(4, {}, tmp_path, {"AOTC_NUM_THREADS": "many"})


#: Threads of this process, from /proc (Linux).
THREADS = "import os; threads = lambda: len(os.listdir('/proc/self/task'))\n"


def test_threadpoolctl_sees_and_limits_the_pool(builds: dict[str, Path]) -> None:
    """threadpool_limits(1) caps aotc's pool as it caps BLAS: the call stays on the
    caller's thread (no worker is started), and the limit is undone on exit."""
    out = _child('''
        import sys, json
        import numpy as np
        sys.path.insert(0, sys.argv[1])
        import par.kernels as k
        from threadpoolctl import threadpool_info, threadpool_limits
        ''' + THREADS + '''
        ours = lambda: [i["num_threads"] for i in threadpool_info() if i["user_api"] == "aotc"]
        b = np.arange(3_000_001.0)
        report = {"default": ours(), "before": threads()}
        with threadpool_limits(1):
            report["limited"] = ours()
            same = np.array_equal(k.triad(b, b, 3.0), b + 3.0 * b)
            report["limited_threads"] = threads()
        report["after"] = ours()
        k.triad(b, b, 3.0)
        report["pooled_threads"] = threads()
        print(json.dumps(dict(report, same=bool(same))))
    ''', [builds["parallel"]])
    report = json.loads(out)
    assert report["default"] == [3] and report["limited"] == [1] and report["after"] == [3]
    assert report["same"]
    assert report["limited_threads"] == report["before"]  # no worker started
    assert report["pooled_threads"] == report["before"] + 2  # three threads: two workers


def test_modules_and_python_threads_share_one_pool(builds: dict[str, Path],
                                                   tmp_path: Path) -> None:
    """Two parallel modules called from eight Python threads at once: one pool of
    AOTC_NUM_THREADS - 1 workers in the process, not one per module or per caller (a
    call finding the pool busy runs on its own thread), and NumPy's results."""
    other = tmp_path / "other"
    other.mkdir()
    build_project(other, "par2", '''
import numpy as np
import aotc
from aotc import f64


@aotc.export
def scaled(b: f64["n"], c: f64["n"]) -> f64["n"]:
    return 2.0 * b - c
''', "parallel = true\n")
    out = _child('''
        import sys, json, threading
        from concurrent.futures import ThreadPoolExecutor
        import numpy as np
        sys.path[:0] = sys.argv[1:]
        import par.kernels as k
        import par2.kernels as k2
        ''' + THREADS + '''
        b = np.random.default_rng(1).random(3_000_001)
        # native threads: the OS's threads of the process less Python's own
        native = lambda: threads() - threading.active_count()
        before = native()
        with ThreadPoolExecutor(8) as pool:
            jobs = [pool.submit(k.triad if i % 2 else k2.scaled, b, b, *([3.0] if i % 2 else []))
                    for i in range(64)]
            results = [j.result() for j in jobs]
            callers, during = len(pool._threads), native()
        ok = all(np.array_equal(r, b + 3.0 * b if i % 2 else 2.0 * b - b)
                 for i, r in enumerate(results))
        print(json.dumps({"before": before, "during": during, "callers": callers, "ok": ok}))
    ''', [builds["parallel"], other])
    report = json.loads(out)
    assert report["ok"]
    assert report["callers"] > 2, report  # calls did overlap
    assert report["during"] - report["before"] == 2, report  # one pool: two workers
