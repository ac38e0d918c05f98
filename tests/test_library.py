"""Library functions (the GEMM, the sorts): a build declares them in each kernel and
compiles each once per target (``aotc/codegen/core/library.py``), where every kernel that
multiplied matrices used to carry, and LLVM to compile, a GEMM of its own."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from projects import build_project

from aotc.codegen import TargetSpec, build_llvm_module
from aotc.codegen.core.library import PREFIX, Library, needed_symbols
from aotc.codegen.core.module import object_from_text
from aotc.pipeline import trace


def product(a, b):
    return a @ b


def shifted_product(a, b):
    return np.tanh(a @ b) + 1.0


def ordered(x):
    return np.sort(x)


def _program(fn, signature: str):
    return trace(fn, signature).optimize().program


MATRICES = "(f64[:, :], f64[:, :])"


def test_a_kernel_declares_what_its_target_library_defines() -> None:
    spec = TargetSpec.parse("x86-64-v3")
    library = Library(spec)
    text = str(build_llvm_module([("k", _program(product, MATRICES))], spec, library))
    needed = needed_symbols(text)
    gemm = [s for s in needed if s.startswith(PREFIX + "gemm.float64")]
    assert gemm, needed
    assert not re.search(r'^define[^\n]*@"aotc\.(lib\.)?gemm', text, re.MULTILINE)
    for symbol in needed:
        assert re.search(rf'^declare hidden [^\n]*@"{re.escape(symbol)}"\(', text,
                         re.MULTILINE), symbol
        defined = library.text(symbol)
        assert defined is not None
        assert re.search(rf'^define hidden [^\n]*@"{re.escape(symbol)}"\(', defined,
                         re.MULTILINE), symbol
    # The object names what it needs as its text does (how a reused object tells).
    assert needed_symbols(object_from_text(text, spec)) == needed


def test_each_function_is_made_once_and_named_for_its_target() -> None:
    spec = TargetSpec.parse("x86-64-v3")
    library = Library(spec)
    build_llvm_module([("a", _program(product, MATRICES))], spec, library)
    first = library.symbols()
    build_llvm_module([("b", _program(shifted_product, MATRICES))], spec, library)
    assert library.symbols() == first  # the second product made nothing new
    wider = Library(TargetSpec.parse("x86-64-v4"))
    build_llvm_module([("a", _program(product, MATRICES))], TargetSpec.parse("x86-64-v4"),
                      wider)
    assert not set(wider.symbols()) & set(first)  # one object may link both targets'


def test_without_a_library_the_module_defines_them_itself() -> None:
    """aotc.jit and ``inspect`` lower a kernel alone: everything it calls is inside."""
    spec = TargetSpec.parse("x86-64-v3")
    for fn, signature in ((product, MATRICES), (ordered, "(f64[:],)")):
        text = str(build_llvm_module([("k", _program(fn, signature))], spec))
        assert PREFIX not in text
        assert re.search(r'^define internal [^\n]*@"aotc\.(gemm|sort)\.', text, re.MULTILINE)


KERNELS = """
import numpy as np
import aotc
from aotc import f32, f64


@aotc.export
def product(a: f64[:, :], b: f64[:, :]) -> f64[:, :]:
    return a @ b


@aotc.export
def layer(x: f32[:, :], w: f32[:, :], bias: f32[:]) -> f32[:, :]:
    return np.maximum(x @ w + bias, 0)


@aotc.export
def gram(a: f64[:, :]) -> f64[:, :]:
    return a.T @ a


@aotc.export
def ordered(x: f64[:]) -> f64[:]:
    return np.sort(x)
"""
PACKAGE = "library_pkg"


def _library_objects(root: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns
            for p in (root / ".aotc-build").rglob(f"{PREFIX}*.o")}


def _rebuild(root: Path) -> str:
    done = subprocess.run([sys.executable, "-m", "aotc", "build", "-v", str(root)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stderr


#: Run in a child (an extension rebuilt in place cannot be imported again here).
CHECK = f"""
import ctypes, sys
import numpy as np
import {PACKAGE}.kernels as k

rng = np.random.default_rng(3)
for n in (1, 7, 40, 300):
    a, b = rng.standard_normal((n, n)), rng.standard_normal((n, n + 3))
    # float64 products: each element a sum of n products, in another order
    np.testing.assert_allclose(k.product(a, b), a @ b, rtol=1e-12, atol=1e-12 * n)
    np.testing.assert_allclose(k.gram(a), a.T @ a, rtol=1e-12, atol=1e-12 * n)
    x, w = a.astype(np.float32), b.astype(np.float32)
    np.testing.assert_allclose(k.layer(x, w, w[0]), np.maximum(x @ w + w[0], 0),
                               rtol=1e-4, atol=1e-5 * n)  # float32: about n * eps
    v = rng.standard_normal(n * 50)
    assert np.array_equal(k.ordered(v), np.sort(v))
# The library functions stay inside the extension: it exports none of them.
lib = ctypes.CDLL(k.__file__)
for name in sys.argv[1:]:
    assert not hasattr(lib, name), name
print("ok")
"""


def _check(root: Path) -> None:
    symbols = [name.removesuffix(".o") for name in _library_objects(root)]
    done = subprocess.run([sys.executable, "-c", CHECK, *symbols], capture_output=True,
                          text=True, cwd=root)
    assert done.stdout.strip() == "ok", done.stdout + done.stderr


def test_a_build_compiles_each_library_function_once_and_reuses_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, c_compiler: str) -> None:
    monkeypatch.setenv("AOTC_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "project").mkdir()
    root = build_project(tmp_path / "project", PACKAGE, KERNELS)
    made = _library_objects(root)
    gemms = [n for n in made if n.startswith(PREFIX + "gemm.float")
             and not n.startswith(PREFIX + "gemm.kernel")]
    # one GEMM per dtype (and its narrow variant), for the three products together
    assert sorted(re.sub(r"\.[0-9a-f]{12}\.o$", "", n).split(".")[3] for n in gemms) == \
        ["float32", "float32", "float64", "float64"], gemms
    assert any(n.startswith(PREFIX + "sort.values.float64") for n in made), made
    _check(root)

    # An edited kernel is compiled again; the library is not.
    source = root / PACKAGE / "kernels.py"
    source.write_text(source.read_text().replace("return a @ b", "return (a @ b) * 1.0"))
    log = _rebuild(root)
    assert re.search(r"compiled 1 of \d+ entry point", log), log
    assert _library_objects(root) == made
    _check(root)

    # Library objects lost from the build and from the shared cache are made again,
    # though no kernel changed (a line added above them moves them, which changes no
    # object): by lowering a kernel that calls them.
    for path in (root / ".aotc-build").rglob(f"{PREFIX}*"):
        path.unlink()
    for path in (tmp_path / "cache").iterdir():
        path.unlink()
    source.write_text("# Kernels.\n" + source.read_text())
    log = _rebuild(root)
    assert re.search(r"compiled 0 of \d+ entry point", log), log
    assert set(_library_objects(root)) == set(made)
    _check(root)

