"""``@aotc.export(gufunc=...)`` and ``ufunc=True``: a real ``np.ufunc`` once built, and the
same behaviour uncompiled (aotc/packaging/gufunc.py against templates/ufunc*.pyx.in)."""

from __future__ import annotations

import pickle
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from projects import build_project, imported, source_module

import aotc
from aotc.errors import SignatureError

PACKAGE = "ufunc_pkg"
KERNELS = '''
import numpy as np
import aotc
from aotc import f32, f64, i64


@aotc.export("f8(f8[:], f8[:])", "f4(f4[:], f4[:])", gufunc="(n),(n)->()")
def wdot(x, w):
    """Weighted sum of x."""
    return np.sum(x * w)


@aotc.export(ufunc=True)
def selu(x: f64) -> f64:
    return 1.0507 * (x if x > 0 else 1.6733 * (np.exp(x) - 1.0))


@aotc.export(ufunc=True)
def safe_log(x: f64) -> f64:
    if x <= 0:
        raise ValueError("safe_log: x must be positive")
    return np.log(x)


@aotc.export(gufunc="(n)->(n)")
def cumnorm(x: f64["n"]) -> f64["n"]:
    s = np.sum(np.abs(x))
    if s == 0:
        raise ZeroDivisionError("cumnorm: all zeros")
    return np.cumsum(x) / s


@aotc.export(gufunc="(n)->(),()")
def minmax(x: f64["n"]) -> tuple[f64, i64]:
    return np.min(x), np.argmax(x)


@aotc.export(gufunc="(m,n),(n)->(m)")
def matvec(a: f64["m", "n"], v: f64["n"]) -> f64["m"]:
    return a @ v


@aotc.export(gufunc="(n)->()")
def pairsum(x: f64["n"]) -> f64:
    return np.sum(x.reshape(-1, 2)[:, 0])


@aotc.export
def plain_dot(x: f64["n"], y: f64["n"]) -> f64:
    return np.sum(x * y)
'''

rng = np.random.default_rng(5)
X = rng.normal(size=(5, 4))
W = rng.normal(size=4)
BIG = np.abs(rng.normal(size=50_000)) + 0.5

#: name -> a call of the module; the result (or exception) is compared.
CALLS: dict[str, Callable[[Any], Any]] = {
    "wdot": lambda m: m.wdot(X, W),
    "wdot_broadcast": lambda m: m.wdot(X[:2, None, :], rng.normal(size=(3, 4))),
    "wdot_f32": lambda m: m.wdot(X.astype(np.float32), W.astype(np.float32)),
    "wdot_ints": lambda m: m.wdot(np.arange(6).reshape(2, 3), np.ones(3, np.int16)),
    "wdot_mixed": lambda m: m.wdot(X.astype(np.float32), W),
    "wdot_scalar": lambda m: m.wdot(W, W),
    "wdot_lists": lambda m: m.wdot([[1.0, 2.0], [3.0, 4.0]], [0.5, 0.25]),
    "wdot_out": lambda m: _with_out(m.wdot, (X, W), np.empty(5)),
    "wdot_out_f32": lambda m: _with_out(m.wdot, (X, W), np.empty(5, np.float32)),
    "wdot_axes": lambda m: m.wdot(X, np.ones(5), axes=[0, 0, ()]),
    "wdot_axes_short": lambda m: m.wdot(X, np.ones(5), axes=[0, 0]),
    "wdot_axis": lambda m: m.wdot(X, np.ones(5), axis=0),
    "wdot_empty_loop": lambda m: m.wdot(np.ones((0, 4)), W),
    "wdot_empty_core": lambda m: m.wdot(np.ones((3, 0)), np.ones(0)),
    "wdot_mismatch": lambda m: m.wdot(X, np.ones(3)),
    "wdot_too_few_dims": lambda m: m.wdot(1.0, W),
    "wdot_complex": lambda m: m.wdot(X + 1j, W),
    "selu": lambda m: m.selu(np.linspace(-2, 2, 9)),
    "selu_scalar": lambda m: m.selu(0.5),
    "selu_int": lambda m: m.selu(np.arange(-3, 3)),
    "selu_strided": lambda m: m.selu(X.T[::2]),
    "selu_out": lambda m: _with_out(m.selu, (X,), np.empty_like(X)),
    "safe_log": lambda m: m.safe_log(BIG),
    "safe_log_raises": lambda m: m.safe_log(np.concatenate([BIG, [-1.0], BIG])),
    "safe_log_raises_small": lambda m: m.safe_log(np.array([1.0, 0.0])),
    "cumnorm": lambda m: m.cumnorm(X),
    "cumnorm_axes": lambda m: m.cumnorm(X.T, axes=[0, 0]),
    "cumnorm_out_strided": lambda m: _with_out(m.cumnorm, (X,), np.empty((4, 5)).T),
    "cumnorm_raises": lambda m: m.cumnorm(np.vstack([X, np.zeros(4)])),
    "minmax": lambda m: m.minmax(X),
    "matvec": lambda m: m.matvec(rng.normal(size=(2, 3, 4)), W),
    "matvec_mismatch": lambda m: m.matvec(np.ones((3, 4)), np.ones(3)),
    "pairsum": lambda m: m.pairsum(X),
    "pairsum_check_fails": lambda m: m.pairsum(np.ones((2, 3))),
}

#: Calls whose exception comes from the kernel itself: its message must be the same too.
KERNEL_ERRORS = {"safe_log_raises", "safe_log_raises_small", "cumnorm_raises"}


def _with_out(f: Any, args: tuple[Any, ...], out: np.ndarray) -> Any:
    result = f(*args, out=out)
    return result is out, out


def _outcome(call: Callable[[Any], Any], module: Any) -> tuple[str, Any]:
    state = rng.bit_generator.state
    try:
        return "ok", call(module)
    except Exception as exc:  # noqa: BLE001 - the exception is the result compared
        # NumPy's own exception classes (_UFuncNoLoopError, AxisError) by builtin base
        builtin = next(c for c in type(exc).__mro__ if c.__module__ == "builtins")
        return builtin.__name__, str(exc)
    finally:
        rng.bit_generator.state = state


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_project(tmp_path_factory.mktemp("ufunc"), PACKAGE, KERNELS)


@pytest.fixture(scope="module")
def compiled(built: Path) -> Iterator[ModuleType]:
    with imported(built, PACKAGE) as module:
        yield module


@pytest.fixture(scope="module")
def outcomes(built: Path, compiled: ModuleType) -> dict[str, tuple[Any, Any]]:
    source = source_module(built, PACKAGE)
    return {name: (_outcome(call, source), _outcome(call, compiled))
            for name, call in CALLS.items()}


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, (np.ndarray, np.generic)) or isinstance(b, (np.ndarray, np.generic)):
        return (type(a) is type(b) and np.asarray(a).dtype == np.asarray(b).dtype
                and np.shape(a) == np.shape(b) and np.allclose(a, b, rtol=1e-6))
    return bool(a == b) and type(a) is type(b)


@pytest.mark.parametrize("name", list(CALLS))
def test_uncompiled_as_compiled(outcomes: dict[str, tuple[Any, Any]], name: str) -> None:
    (source_kind, source_value), (compiled_kind, compiled_value) = outcomes[name]
    assert source_kind == compiled_kind, (source_value, compiled_value)
    if source_kind == "ok":
        assert _same(source_value, compiled_value), (source_value, compiled_value)
    elif name in KERNEL_ERRORS:
        assert source_value == compiled_value


def test_outcomes_are_not_all_successes(outcomes: dict[str, tuple[Any, Any]]) -> None:
    kinds = {name: outcome[1][0] for name, outcome in outcomes.items()}
    assert kinds["wdot_mismatch"] == kinds["pairsum_check_fails"] == "ValueError"
    assert kinds["wdot_complex"] == "TypeError"
    assert kinds["cumnorm_raises"] == "ZeroDivisionError"
    assert kinds["wdot"] == kinds["cumnorm_out_strided"] == "ok"


def test_is_a_numpy_ufunc(compiled: ModuleType) -> None:
    assert isinstance(compiled.wdot, np.ufunc) and isinstance(compiled.selu, np.ufunc)
    assert compiled.wdot.signature == "(n),(n)->()" and compiled.selu.signature is None
    assert compiled.wdot.types == ["dd->d", "ff->f"]
    assert (compiled.minmax.nin, compiled.minmax.nout) == (1, 2)
    assert "Weighted sum of x." in (compiled.wdot.__doc__ or "")


def test_matches_numpy(compiled: ModuleType) -> None:
    x, w = rng.normal(size=(300, 7)), rng.normal(size=7)
    np.testing.assert_allclose(compiled.wdot(x, w), x @ w)
    a = rng.normal(size=(4, 5, 6))
    np.testing.assert_allclose(compiled.matvec(a, w[:6]), a @ w[:6])
    np.testing.assert_allclose(compiled.cumnorm(x[:, ::2]),
                               np.cumsum(x[:, ::2], -1) / np.abs(x[:, ::2]).sum(-1)[:, None])


def test_errors_from_threads_and_repeated(compiled: ModuleType) -> None:
    """A failing kernel in a loop NumPy runs without the GIL, many times, from threads:
    always the kernel's exception, never a crash or a SystemError."""
    bad = np.concatenate([BIG, [-1.0]])
    caught: list[str] = []

    def run() -> None:
        for _ in range(20):
            try:
                compiled.safe_log(bad)
            except ValueError as exc:
                caught.append(str(exc))

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert caught == ["safe_log: x must be positive"] * 40
    np.testing.assert_allclose(compiled.safe_log(BIG), np.log(BIG))  # fine afterwards


def test_pickle_by_reference(compiled: ModuleType) -> None:
    for kernel in (compiled.wdot, compiled.selu, compiled.plain_dot):
        assert pickle.loads(pickle.dumps(kernel)) is kernel


def test_uncompiled_pickles_by_reference(built: Path) -> None:
    source = source_module(built, PACKAGE)
    sys.modules[source.__name__] = source
    try:
        for name in ("wdot", "selu", "plain_dot"):
            kernel = getattr(source, name)
            assert pickle.loads(pickle.dumps(kernel)) is kernel
    finally:
        del sys.modules[source.__name__]


def test_ufunc_export_refused_when_types_disagree() -> None:
    with pytest.raises(SignatureError, match="parameter 0 is f64 but its core dims are"):
        @aotc.export("f8(f8, f8[:])", gufunc="(n),(n)->()")
        def bad(x: Any, w: Any) -> Any:
            return x

    with pytest.raises(SignatureError, match="ufunc=True needs scalar"):
        @aotc.export("f8(f8[:])", ufunc=True)
        def bad2(x: Any) -> Any:
            return x[0]

    with pytest.raises(SignatureError, match="not of the form"):
        aotc.export("f8(f8[:])", gufunc="(n)->")
