"""Uncompiled and compiled kernels accept and refuse the same calls, with the same
exceptions and messages (aotc/packaging/checks.py against the Cython wrapper)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from projects import build_project, imported, source_module

PACKAGE = "checks_pkg"
KERNELS = '''
import numpy as np
import aotc
from aotc import bool_, f32, f64, i32, i64


@aotc.export
def ar1_filter(x: f64[:], a: f64) -> f64[:]:
    y = np.empty_like(x)
    y[0] = x[0]
    for i in range(1, x.shape[0]):
        y[i] = a * y[i - 1] + x[i]
    return y


@aotc.export("f8[:](f8[:], f8)", "f4[:](f4[:], f4)")
def scale(x, a):
    return a * x


@aotc.export
def dot(x: f64["n"], y: f64["n"]) -> f64:
    return np.sum(x * y)


@aotc.export
def corners(p: f64[:, 3], flag: bool_, k: i32) -> f64:
    return np.sum(p) * k if flag else 0.0


@aotc.export
def bump(x: i64[:]) -> i64[:]:
    x += 1
    return x
'''

#: name -> calls, each a function of the module giving the call's result.
CALLS: dict[str, Callable[[Any], Any]] = {
    "ok": lambda m: m.ar1_filter(np.arange(4.0), 0.5),
    "int_array_for_f64": lambda m: m.ar1_filter(np.arange(3), 0.5),
    "int_scalar_for_f64": lambda m: m.ar1_filter(np.ones(3), 2),
    "keywords": lambda m: m.ar1_filter(a=0.25, x=np.ones(3)),
    "list_for_array": lambda m: m.scale([1, 2, 3], 2.0),
    "tuple_of_floats": lambda m: m.scale((1.5, 2.5), 2.0),
    "second_overload": lambda m: m.scale(np.ones(2, np.float32), np.float32(3)),
    "complex_scalar": lambda m: m.scale(np.ones(2), 1j),
    "ragged_list": lambda m: m.scale([[1.0], [1.0, 2.0]], 1.0),
    "named_dims_disagree": lambda m: m.dot(np.ones(3), np.ones(4)),
    "named_dims_agree": lambda m: m.dot(np.arange(3.0), np.arange(3.0)),
    "fixed_dim_wrong": lambda m: m.corners(np.ones((2, 4)), True, 2),
    "fixed_dim_right": lambda m: m.corners(np.ones((2, 3)), True, 2),
    "int_for_bool": lambda m: m.corners(np.ones((2, 3)), 1, 2),
    "float_for_int": lambda m: m.corners(np.ones((2, 3)), True, 2.0),
    "i32_overflow": lambda m: m.corners(np.ones((2, 3)), True, 2**40),
    "i32_overflow_numpy": lambda m: m.corners(np.ones((2, 3)), True, np.int64(-2**40)),
    "numpy_scalars": lambda m: m.corners(np.ones((2, 3)), np.True_, np.int8(3)),
    "masked_array": lambda m: m.scale(np.ma.ones(3), 1.0),
    "matrix": lambda m: m.dot(np.asmatrix(np.ones(3)), np.ones(3)),
    "big_endian": lambda m: m.dot(np.ones(3, ">f8"), np.ones(3)),
    "wrong_rank": lambda m: m.dot(np.ones((3, 1)), np.ones(3)),
    "none": lambda m: m.dot(None, np.ones(3)),
    "written_list": lambda m: _written_list(m),
}


def _written_list(m: Any) -> Any:
    values = [1, 2, 3]
    result = m.bump(values)
    return values, result


def _outcome(call: Callable[[Any], Any], module: Any) -> tuple[str, Any]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PendingDeprecationWarning)  # np.matrix
            return "ok", call(module)
    except Exception as exc:  # noqa: BLE001 - the exception is the result compared
        return type(exc).__name__, str(exc)


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Any, Any]]:
    root = build_project(tmp_path_factory.mktemp("checks"), PACKAGE, KERNELS)
    source = source_module(root, PACKAGE)
    with imported(root, PACKAGE) as compiled:
        return {name: (_outcome(call, source), _outcome(call, compiled))
                for name, call in CALLS.items()}


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.asarray(a).dtype == np.asarray(b).dtype and np.array_equal(a, b)
    return bool(a == b) and type(a) is type(b)


@pytest.mark.parametrize("name", list(CALLS))
def test_uncompiled_checks_as_compiled(outcomes: dict[str, tuple[Any, Any]], name: str) -> None:
    (source_kind, source_value), (compiled_kind, compiled_value) = outcomes[name]
    assert source_kind == compiled_kind, (source_value, compiled_value)
    if source_kind == "OverflowError":  # the compiled one says Cython's words
        assert "out of range for i32" in source_value
        return
    assert _same(source_value, compiled_value), (source_value, compiled_value)


def test_refusals_are_refused(outcomes: dict[str, tuple[Any, Any]]) -> None:
    """The table above is not all successes: these calls are errors in both."""
    kinds = {name: outcome[0][0] for name, outcome in outcomes.items()}
    assert kinds["int_array_for_f64"] == kinds["complex_scalar"] == "TypeError"
    assert kinds["named_dims_disagree"] == "ValueError"
    assert kinds["i32_overflow"] == "OverflowError"
    assert kinds["ok"] == kinds["list_for_array"] == "ok"
