"""Internal compiler errors: a bug in aotc reaches the user located, never as a bare trace.

An exception that is not an ``AotcError`` raised while tracing, optimizing or generating
code for a kernel becomes an :class:`~aotc.errors.InternalError`::

    aotc: error: <file>:<line>: in kernel '<name>': internal compiler error: <Type>: <msg>
        <the source line>
        ^^^^
    this is a bug in aotc: please report it with the kernel

with the Python traceback only in verbose mode. The bugs are forced here: the kernel
module replaces a lowering rule or a pass when the build imports it.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from aotc import f64, i64
from aotc.errors import REPORT_BUG, InternalError, TraceError, diagnostic
from aotc.passes import optimize
from aotc.tracing.kernel import trace_kernel
from aotc.types import signature_from_annotations

KERNEL = '''
import numpy as np
import aotc
from aotc import f64, i64

{sabotage}


@aotc.export
def wobble(x: f64[:]) -> f64[:]:
    y = x * 2.0
    return np.sin(y) + 1.0
'''

#: A lowering rule that looks a value up wrongly: the KeyError class of bug.
BROKEN_RULE = '''
import aotc.codegen.core.entry as _entry
from aotc.ops.core import ALL_PRIMITIVES as _PRIMS


def _broken_sin(ctx, eqn, args):
    return [ctx.env[eqn.outs[0]]]


_entry.EQN_RULES[_PRIMS["sin"]] = _broken_sin  # the project builds unfused: sin alone
'''

#: A pass that fails on one equation.
BROKEN_PASS = '''
import aotc.passes as _passes


def _broken_cse(program):
    for eqn in program.eqns:
        if eqn.prim.name == "mul":
            raise IndexError("tuple index out of range")
    return program


_passes.PIPELINE[:] = [(n, _broken_cse if n == "cse" else p) for n, p in _passes.PIPELINE]
'''

SIN_LINE, MUL_LINE = "    return np.sin(y) + 1.0", "    y = x * 2.0"


def _project(root: Path, sabotage: str) -> Path:
    (root / "ice_pkg").mkdir(parents=True)
    (root / "ice_pkg" / "__init__.py").write_text("")
    (root / "ice_pkg" / "kernels.py").write_text(KERNEL.format(sabotage=sabotage))
    (root / "pyproject.toml").write_text(textwrap.dedent("""
        [project]
        name = "ice-pkg"
        version = "0.1"
        [tool.setuptools]
        packages = ["ice_pkg"]
        [tool.aotc]
        modules = ["ice_pkg.kernels"]
        fusion = false
    """))
    return root


def _line(root: Path, text: str) -> int:
    lines = (root / "ice_pkg" / "kernels.py").read_text().splitlines()
    return lines.index(text) + 1


def _aotc(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "aotc", *args], cwd=cwd, capture_output=True,
                          text=True)


def _hook(project: Path, code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "import build_backend as b\n" + code],
                          cwd=project, capture_output=True, text=True)


def _assert_internal(stderr: str, root: Path, line_text: str, exc_type: str, verbose: bool,
                     phase: str) -> None:
    line = _line(root, line_text)
    head = (f"aotc: error: {root / 'ice_pkg' / 'kernels.py'}:{line}: in kernel 'wobble': "
            f"internal compiler error: {exc_type}: ")
    assert head in stderr, stderr
    after = stderr[stderr.index(head):].splitlines()
    assert after[1] == "    " + line_text.strip()  # the source line, then a caret under it
    assert re.fullmatch(r" {4}\s*\^+", after[2]), after[2]
    assert after[3] == REPORT_BUG
    assert f"note: raised during {phase} at aotc/" in stderr
    if verbose:
        assert "Traceback (most recent call last)" in stderr
    else:
        assert "Traceback" not in stderr and "run with -v" in stderr


@pytest.mark.parametrize("verbose", [False, True], ids=["quiet", "verbose"])
def test_codegen_bug_through_the_cli_build(tmp_path, verbose):
    root = _project(tmp_path, BROKEN_RULE)
    done = _aotc("build", ".", *(["-v"] if verbose else []), cwd=root)
    assert done.returncode == 2, done.stdout + done.stderr
    _assert_internal(done.stderr, root, SIN_LINE, "KeyError", verbose, "code generation")
    assert "Var#" in done.stderr  # the original message is kept


@pytest.mark.parametrize("verbose", [False, True], ids=["quiet", "verbose"])
def test_pass_bug_through_the_cli_build_and_inspect(tmp_path, verbose):
    root = _project(tmp_path, BROKEN_PASS)
    flags = ["-v"] if verbose else []
    done = _aotc("build", ".", *flags, cwd=root)
    assert done.returncode == 2, done.stdout + done.stderr
    _assert_internal(done.stderr, root, MUL_LINE, "IndexError", verbose, "pass 'cse'")
    done = _aotc("inspect", "ice_pkg.kernels:wobble", *flags, cwd=root)
    assert done.returncode == 2, done.stdout + done.stderr
    _assert_internal(done.stderr, root, MUL_LINE, "IndexError", verbose, "pass 'cse'")


@pytest.mark.parametrize("verbose", [False, True], ids=["quiet", "verbose"])
def test_codegen_bug_through_the_build_backend(tmp_path, verbose):
    root = _project(tmp_path, BROKEN_RULE)
    settings = "{'verbose': 'true'}" if verbose else "None"
    done = _hook(root, f"b.build_wheel('out', {settings})")
    assert done.returncode == 1, done.stdout + done.stderr
    _assert_internal(done.stderr, root, SIN_LINE, "KeyError", verbose, "code generation")


# -- in process --------------------------------------------------------------------------

def scaled(x: f64[:]):
    y = x * 3.0
    return y + 1.0


def stale_view_in_a_loop(x: f64[:], k: i64):
    X = np.zeros(x.shape[0] + 2)
    u = X[1:-1]
    X[1:-1] = x  # u is stale now: it is first read again inside the loop
    s = 0.0
    for _ in range(k):
        s += u.sum()
    return u * s


def uses_a_typo(x: f64[:]):
    return x * undefined_name  # noqa: F821


def bins_of_lists(bins: i64[:], values: f64[:]):  # SciPy's _create_binned_data
    bin_map = dict()
    for i in np.unique(bins):
        bin_map[i] = []
    for i in range(len(bins)):
        bin_map[bins[i]].append(values[i])
    return bin_map


def missing_key(x: f64[:], key="b"):  # a build-time key, as a str parameter's choice
    table = {"a": 1.0}
    return x * table[key]


def test_a_dict_of_lists_read_at_a_runtime_key_is_the_kernels_error():
    """Not an internal KeyError of a tracer: a located error saying what dicts hold."""
    with pytest.raises(TraceError) as info:
        trace_kernel(bins_of_lists, signature_from_annotations(bins_of_lists))
    assert not isinstance(info.value, InternalError)
    assert "read at a key known only at run time" in str(info.value)
    assert f":{bins_of_lists.__code__.co_firstlineno + 5}:" in str(info.value)


def test_a_missing_key_of_a_build_time_dict_raises_as_python_does():
    """Every call raises Python's KeyError, as the source does (not a build error)."""
    with pytest.raises(KeyError, match="'b'"):
        missing_key(np.ones(2))
    traced = trace_kernel(missing_key, signature_from_annotations(missing_key))
    assert """check 0 >= 1 else KeyError("'b'")""" in str(traced.program)  # always fails


def test_tracing_bug_is_located_at_the_kernel_line(monkeypatch):
    """An exception raised inside aotc while the kernel runs on tracers: internal,
    located at the user's line being traced."""
    from aotc.numpy_api import ufuncs

    def broken(*args, **kwargs):
        raise AssertionError("broadcast bookkeeping went wrong")

    broken.__code__ = broken.__code__.replace(co_filename=ufuncs.__file__)  # "inside aotc"
    monkeypatch.setattr(ufuncs, "apply_ufunc", broken)
    with pytest.raises(InternalError) as info:
        trace_kernel(scaled, signature_from_annotations(scaled))
    err = info.value
    assert err.phase == "tracing" and err.kernel == "scaled"
    assert err.loc is not None and err.loc.line == scaled.__code__.co_firstlineno + 1
    text = diagnostic(err)
    assert "internal compiler error: AssertionError: broadcast bookkeeping went wrong" in text
    assert "    y = x * 3.0" in text and REPORT_BUG in text and "Traceback" not in text
    assert "Traceback" in diagnostic(err, verbose=True)


def test_the_kernels_own_exception_is_not_internal():
    with pytest.raises(TraceError) as info:
        trace_kernel(uses_a_typo, signature_from_annotations(uses_a_typo))
    assert not isinstance(info.value, InternalError)
    text = str(info.value)
    assert "NameError: name 'undefined_name' is not defined" in text
    assert f"test_internal_errors.py:{uses_a_typo.__code__.co_firstlineno + 1}:" in text
    assert REPORT_BUG not in text


def test_a_malformed_traced_program_is_caught_where_it_is_made(monkeypatch):
    """The class of the Gray-Scott KeyError: a value of a loop body used after it. The
    program is verified after tracing, so the bug is reported at the loop, not as a
    KeyError deep in code generation."""
    from aotc.numpy_api import views
    from aotc.tracing.tracer import DISPATCH

    def refresh_where_read(view):  # the old bug: derive the view in the current trace
        view.set_atom(view.window.read(view.base).atom)
        view.seen_version = view.base.version

    monkeypatch.setattr(DISPATCH, "refresh", refresh_where_read)
    monkeypatch.setattr(views, "refresh", refresh_where_read)
    kernel = stale_view_in_a_loop
    with pytest.raises(InternalError) as info:
        trace_kernel(kernel, signature_from_annotations(kernel))
    err = info.value
    assert "VerifyError" in err.message and "used before definition" in err.message
    assert err.loc is not None and err.loc.file == __file__


def test_a_pass_bug_names_the_pass_and_the_equation(monkeypatch):
    import aotc.passes as passes

    def broken(program):
        for eqn in program.eqns:
            if eqn.prim.name == "add":
                raise KeyError(eqn.outs[0])
        return program

    monkeypatch.setattr(passes, "PIPELINE", [("dce", broken)])
    program = trace_kernel(scaled, signature_from_annotations(scaled)).program
    with pytest.raises(InternalError) as info:
        optimize(program)
    err = info.value
    assert err.phase == "pass 'dce'" and err.kernel == "scaled"
    assert err.loc is not None and err.loc.line == scaled.__code__.co_firstlineno + 2
    assert str(err).startswith(f"{err.loc}: in kernel 'scaled': internal compiler error: "
                               "KeyError: Var#")


def test_llvm_rejecting_our_module_is_internal(monkeypatch):
    import llvmlite.binding as llvm

    from aotc.codegen import TargetSpec, compile_object

    def refuse(text):
        raise RuntimeError("LLVM ERROR: invalid IR")

    monkeypatch.setattr(llvm, "parse_assembly", refuse)
    program = optimize(trace_kernel(scaled, signature_from_annotations(scaled)).program)
    with pytest.raises(InternalError, match="internal compiler error: RuntimeError: LLVM "
                                            "ERROR: invalid IR"):
        compile_object([("scaled", program)], TargetSpec.parse("x86-64"))
