"""``python -m aotc convert`` and ``annotate``, as a user drives them: a Pythran module,
a numba.pycc module and a prototype run under ``aotc.jit`` get their ``@aotc.export``
lines, then compile (``aotc.jit``: no C compiler) and match the uncompiled functions of
the very same rewritten file."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import aotc
from aotc.migrate import convert_source

PYTHRAN = '''
"""A Pythran module."""
import numpy as np

#pythran export rosen(float64[])
#pythran export scale(float32[:,:] or float64[:,:] order(F), float)
#pythran export shift(int[][], int?)
#pythran export total(int list), pair((int, float))
def rosen(x):
    return np.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def scale(a, s):
    return a * s


def shift(m, k=3):
    return m + k


def total(v):
    return np.sum(np.asarray(v))


def pair(t):
    return t[0] + t[1]
'''

PYCC = '''
import numpy as np
from numba.pycc import CC
from numba import float64

cc = CC("my_module")
cc.verbose = True


@cc.export("mult", "f8(f8, f8)")
@cc.export("multi", "i4(i4, i4)")
def mult(a, b):
    return a * b


@cc.export("square", float64[:](float64[:]))
def square(a):
    return a ** 2


if __name__ == "__main__":
    cc.compile()
'''


def _convert(tmp_path: Path, name: str, source: str) -> tuple[ModuleType, str]:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    done = subprocess.run([sys.executable, "-m", "aotc", "convert", "-i", str(path)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module, done.stderr


def test_pythran_exports_become_overloads_that_compile(tmp_path: Path) -> None:
    module, notes = _convert(tmp_path, "pythran_kernels", PYTHRAN)
    text = (tmp_path / "pythran_kernels.py").read_text()
    assert '@aotc.export("(float64[:])")\ndef rosen' in text
    assert '@aotc.export("(float32[:, :], float)", "(float64[:, :], float)")' in text
    assert '@aotc.export("(int64[:, :], int)", "(int64[:, :])")' in text
    assert "#pythran export rosen" not in text and "import aotc\n" in text
    # the tuple parameter has no signature: its line stays and is reported with its number
    assert "#pythran export total(int list), pair((int, float))" in text
    assert "line 8: pair((int, float)): type '(int, float)' has no aotc signature" in notes
    x = np.linspace(-1, 2, 9)
    assert aotc.jit(module.rosen)(x) == pytest.approx(module.rosen(x), rel=1e-15)
    a32 = np.arange(6, dtype=np.float32).reshape(2, 3)
    got = aotc.jit(module.scale)(a32, 0.5)
    assert got.dtype == np.float32 and np.array_equal(got, module.scale(a32, 0.5))
    m = np.arange(4).reshape(2, 2)
    shift = aotc.jit(module.shift)
    assert np.array_equal(shift(m, 5), m + 5) and np.array_equal(shift(m), m + 3)
    assert aotc.jit(module.total)([1, 2, 3]) == 6
    with pytest.raises(TypeError, match="no signature matches"):
        aotc.jit(module.rosen)(np.ones((2, 2)))


def test_pycc_exports_become_aotc_exports_without_numba(tmp_path: Path) -> None:
    module, notes = _convert(tmp_path, "pycc_kernels", PYCC)
    text = (tmp_path / "pycc_kernels.py").read_text()
    assert '@aotc.export("f8(f8, f8)", "i4(i4, i4)")\ndef mult' in text
    assert '@aotc.export("float64[:](float64[:])")\ndef square' in text
    assert "numba" not in text and "cc." not in text and "__main__" not in text
    assert "pycc exported 'mult' as 'multi'; aotc exports it as 'mult'" in notes
    mult = aotc.jit(module.mult)
    assert mult(1.5, 2.0) == 3.0
    assert mult(np.int32(7), np.int32(6)) == 42
    x = np.array([1.0, -2.0, 3.0])
    assert np.array_equal(aotc.jit(module.square)(x), x ** 2)


@pytest.mark.parametrize(("pythran", "signatures"), [
    ("f(complex128[:, :, :])", ["(complex128[:, :, :])"]),
    ("f(float[:, ::1], uint8)", ["(float64[:, :], uint8)"]),
    ("f(int or float, bool?)", ["(int, bool)", "(float, bool)", "(int)", "(float)"]),
    ("f(intc[], float32 list)", ["(int32[:], float32[:])"]),
    ("f(float[][] list)", ["(float64[:, :, :])"]),
    ("f(float64[][][3])", ["(float64[:, :, 3])"]),  # Pythran's lapl3d: a fixed last axis
    ("f(float[,], float[,,], int[])", ["(float64[:, :], float64[:, :, :], int64[:])"]),
    ("f(float array 2, int array)", ["(float64[:, :], int64[:])"]),  # Pythran's oldest
    ("f()", ["()"]),
    ("f(float[:], str)", ["(float64[:], str)"]),
    ("f((int, int) list, intp)", ["(int64[:, 2], int64)"]),  # SciPy's start/stop pairs
])
def test_pythran_types(pythran: str, signatures: list[str]) -> None:
    source = f"#pythran export {pythran}\ndef f(*args):\n    pass\n"
    converted = convert_source(source)
    assert converted.text.splitlines()[1] == \
        "@aotc.export(" + ", ".join(f'"{s}"' for s in signatures) + ")", converted.text


def test_an_export_continued_on_later_comment_lines() -> None:
    source = ("# pythran export f(float[:, :],\n#                  int[:],\n"
              "        #  float)\nimport numpy as np\ndef f(a, b, c):\n    pass\n")
    converted = convert_source(source)
    assert converted.functions == ["f"] and "pythran" not in converted.text
    assert '@aotc.export("(float64[:, :], int64[:], float)")' in converted.text


@pytest.mark.parametrize("pythran", ["f(str list)", "f((int, float) list)",
                                     "f(int:float dict)", "f(int set)", "f((int, int))",
                                     "f(float128[])"])
def test_pythran_types_without_a_signature_are_reported(pythran: str) -> None:
    converted = convert_source(f"#pythran export {pythran}\ndef f(a):\n    pass\n")
    assert converted.functions == [] and f"#pythran export {pythran}" in converted.text
    assert converted.notes and converted.notes[0].startswith("line 1: f(")


def test_nothing_to_convert_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "plain.py"
    path.write_text("def f(x):\n    return x\n")
    done = subprocess.run([sys.executable, "-m", "aotc", "convert", str(path)],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "no '#pythran export' comment" in done.stderr
    assert path.read_text() == "def f(x):\n    return x\n"


PROTOTYPE = '''
import numpy as np
import aotc


@aotc.jit
def norm(x):
    return np.sqrt(np.sum(x * x))


def axpy(a, x, y):
    return a * x + y


def untouched(x):
    return x
'''

PROGRAM = '''
import sys
import numpy as np
import aotc
from proto import norm, axpy

fast_axpy = aotc.jit(axpy)
print(norm(np.ones(4)), norm(np.ones((2, 2), np.float32)), sys.argv[1:])
print(fast_axpy(2.0, np.ones(3), np.zeros(3)))
'''


def _annotate(tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "proto.py").write_text(textwrap.dedent(PROTOTYPE))
    (tmp_path / "run.py").write_text(textwrap.dedent(PROGRAM))
    return subprocess.run([sys.executable, "-m", "aotc", "annotate", *flags, "run.py", "x"],
                          capture_output=True, text=True, cwd=tmp_path)


def test_annotate_writes_what_aotc_jit_compiled(tmp_path: Path) -> None:
    done = _annotate(tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "2.0 2.0 ['x']"  # the program ran, with its argv
    text = (tmp_path / "proto.py").read_text()
    assert '\n\n@aotc.export("(f8[:])", "(f4[:, :])")\ndef norm(x):' in text
    assert "@aotc.jit" not in text
    assert '\n\n@aotc.export("(float, f8[:], f8[:])")\ndef axpy(a, x, y):' in text
    assert "\n\n\ndef untouched(x):" in text
    spec = importlib.util.spec_from_file_location("proto", tmp_path / "proto.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert [str(s) for s in module.norm.__aotc_export__.signatures] == \
        ["(f64[:])", "(f32[:, :])"]  # (printed with the annotation objects' names)
    x = np.array([3.0, 4.0])
    assert aotc.jit(module.norm)(x) == 5.0
    got = aotc.jit(module.axpy)(2.0, x, x)
    assert np.array_equal(got, 3 * x)


def test_annotate_dry_run_prints_the_diff_only(tmp_path: Path) -> None:
    done = _annotate(tmp_path, "--dry-run")
    assert done.returncode == 0, done.stderr
    assert '-@aotc.jit\n+@aotc.export("(f8[:])", "(f4[:, :])")' in done.stdout
    assert (tmp_path / "proto.py").read_text() == textwrap.dedent(PROTOTYPE)
    assert "norm, axpy would be @aotc.export" in done.stderr
