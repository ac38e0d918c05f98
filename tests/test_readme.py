"""The README's Python blocks run, and give what the README says they give.

Each block becomes a module in a temporary directory (blocks without their own imports
get NumPy's and aotc's), is imported, and its functions are called uncompiled and
through ``aotc.jit`` (llvmlite in-process: no C compiler) against NumPy. The error
example is traced by ``python -m aotc inspect`` and must print the README's message.
Every block must be claimed by a check below, so a new block cannot go untested; the
Dask block alone is not run here (it needs a cluster: ``tests/test_dask.py`` runs the
same calls on a ``LocalCluster``).
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import aotc

README = Path(__file__).resolve().parent.parent / "README.md"
PREAMBLE = "import numpy as np\n\nimport aotc\nfrom aotc import f32, f64, i64\n\n"
_BLOCK = re.compile(r"```(python|text)\n(.*?)```", re.DOTALL)


def _blocks() -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in _BLOCK.finditer(README.read_text())]


def _module(tmp_path: Path, name: str, code: str) -> ModuleType:
    source = code if "import aotc" in code else PREAMBLE + code
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _kernels(m: ModuleType) -> None:
    x = np.linspace(-1.0, 2.0, 7)
    expected = np.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
    for rosen in (m.rosen, aotc.jit(m.rosen)):
        assert rosen(x) == pytest.approx(expected, rel=1e-14)
    x32 = x.astype(np.float32)
    for scale in (m.scale, aotc.jit(m.scale)):
        got = scale(x32, np.float32(3))
        assert got.dtype == np.float32 and np.array_equal(got, 3 * x32)


def _selu(x: np.ndarray) -> np.ndarray:
    return 1.0507 * np.where(x > 0, x, 1.6733 * (np.exp(x) - 1))


def _transforms(m: ModuleType) -> None:
    rng = np.random.default_rng(3)
    X, y, w = rng.standard_normal((5, 3)), rng.standard_normal(5), rng.standard_normal(3)
    x = np.linspace(-2, 2, 9)
    grad = 2 / 5 * X.T @ (X @ w - y)  # d/dw of mean((Xw - y)^2)
    Xs, ys = rng.standard_normal((4, 5, 3)), rng.standard_normal((4, 5))  # 4 batches
    per_batch = np.stack([2 / 5 * Xb.T @ (Xb @ w - yb) for Xb, yb in zip(Xs, ys, strict=True)])
    for compiled in (False, True):
        run = aotc.jit if compiled else (lambda f: f)
        np.testing.assert_allclose(run(m.selu_batch)(x), _selu(x), rtol=1e-15)
        np.testing.assert_allclose(run(m.loss_grad)(w, X, y), grad, rtol=1e-12)
        value, (gw, gy) = run(m.loss_vg)(w, X, y)
        assert value == pytest.approx(np.mean((X @ w - y) ** 2), rel=1e-14)
        np.testing.assert_allclose(gw, grad, rtol=1e-12)
        np.testing.assert_allclose(gy, -2 / 5 * (X @ w - y), rtol=1e-12)
        np.testing.assert_allclose(run(m.per_example_grads)(w, Xs, ys), per_batch,
                                   rtol=1e-12)


def _gufuncs(m: ModuleType) -> None:
    X, w = np.arange(12.0).reshape(4, 3), np.array([1.0, -2.0, 0.5])
    np.testing.assert_array_equal(m.wdot(X, w), X @ w)  # uncompiled: NumPy broadcasting
    np.testing.assert_array_equal(m.wdot(X[:, None], np.stack([w, 2 * w])), X @ np.stack(
        [w, 2 * w]).T)
    x = np.linspace(-2, 2, 9)
    np.testing.assert_allclose(m.selu(x), _selu(x), rtol=1e-15)


#: What each runnable block is recognised by, and its check.
CHECKS: dict[str, Callable[[ModuleType], None]] = {
    "def rosen": _kernels,
    "selu_batch = ": _transforms,
    'gufunc="(n),(n)->()"': _gufuncs,
}


def test_every_python_block_is_checked() -> None:
    blocks = [code for kind, code in _blocks() if kind == "python"]
    unclaimed = [code for code in blocks if not any(key in code for key in CHECKS)
                 and "Client(" not in code and "def pick" not in code]
    assert not unclaimed, "README blocks without a check in tests/test_readme.py"
    assert sum(any(key in code for code in blocks) for key in CHECKS) == len(CHECKS)


@pytest.mark.parametrize("key", list(CHECKS))
def test_block_runs_and_matches_numpy(tmp_path: Path, key: str) -> None:
    (code,) = [code for kind, code in _blocks() if kind == "python" and key in code]
    name = "readme_" + re.sub(r"\W", "", key)[:12]
    CHECKS[key](_module(tmp_path, name, code))


def test_the_error_example_prints_the_readme_message(tmp_path: Path) -> None:
    blocks = _blocks()
    (at,) = [i for i, (kind, code) in enumerate(blocks) if "def pick" in code]
    code, (kind, message) = blocks[at][1], blocks[at + 1]
    assert kind == "text" and code.startswith("# mypkg/kernels.py\n")
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "kernels.py").write_text(code)
    done = subprocess.run([sys.executable, "-m", "aotc", "inspect", "mypkg/kernels.py:pick"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 2
    printed = done.stderr.replace(str(tmp_path) + "/", "")
    assert printed == message, printed
