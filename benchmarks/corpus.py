"""Differential run of third-party kernels: each exported function, compiled, against
the same source run by Python.

The kernels come from a folder of modules written for another compiler: Pythran's
``#pythran export`` comments (with ``#runas`` example calls, as Pythran's own test
cases have them) or numba.pycc's ``@cc.export``. Each module is converted as a user
would convert it (``python -m aotc convert``), its exports compiled with ``aotc.jit``,
and every ``#runas`` line run twice on fresh inputs: uncompiled and compiled. A module
passes when every call gives the same results (values to a relative 1e-7, dtypes, and
the arguments a kernel writes into). Each module runs in a subprocess of its own, so a
crash or a hang is reported as one, not lost::

    python benchmarks/corpus.py FOLDER [-k NAME] [--timeout 300] [-v]

The corpora themselves stay outside this repository (they are other projects' code).
"""

from __future__ import annotations

import argparse
import ast
import copy
import importlib.util
import json
import random
import re
import subprocess
import sys
import tempfile
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

_RUNAS = re.compile(r"^\s*#\s*runas\s*:?\s+(.*)$")
RTOL, ATOL = 1e-7, 1e-12


def _load(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _calls(expr: ast.expr, exported: set[str]) -> list[ast.Call]:
    """The calls of exported functions a ``#runas`` expression makes at its top."""
    items = expr.elts if isinstance(expr, ast.Tuple) else [expr]
    return [e for e in items if isinstance(e, ast.Call) and isinstance(e.func, ast.Name)
            and e.func.id in exported]


def _run(line: str, namespace: dict[str, Any], exported: set[str]) -> list[Any]:
    """The results of one ``#runas`` line, each with the arguments after the call."""
    tree = ast.parse(line)
    *setup, last = tree.body
    np.random.seed(0)  # the same random inputs for the plain and the compiled run
    random.seed(0)
    exec(compile(ast.Module(body=setup, type_ignores=[]), "<runas>", "exec"), namespace)
    if not isinstance(last, ast.Expr):
        raise ValueError("the #runas line ends in a statement, not a call")
    results = []
    for call in _calls(last.value, exported) or [last.value]:
        if isinstance(call, ast.Call) and not call.keywords:
            args = [eval(compile(ast.Expression(a), "<runas>", "eval"), namespace)
                    for a in call.args]
            fn = eval(compile(ast.Expression(call.func), "<runas>", "eval"), namespace)
            results.append((fn(*args), [a for a in args if isinstance(a, np.ndarray)]))
        else:
            results.append((eval(compile(ast.Expression(call), "<runas>", "eval"),
                                 namespace), []))
    return results


def _difference(want: Any, got: Any, where: str = "") -> str | None:
    """Why ``got`` is not ``want`` (None when they agree)."""
    if isinstance(want, (list, tuple)) and not isinstance(got, np.ndarray):
        if not isinstance(got, (list, tuple)) or len(got) != len(want):
            return f"{where}: {type(got).__name__} of {_length(got)} for " \
                   f"{type(want).__name__} of {len(want)}"
        for i, (w, g) in enumerate(zip(want, got, strict=True)):
            found = _difference(w, g, f"{where}[{i}]")
            if found:
                return found
        return None
    if want is None or isinstance(want, (str, bytes, set, frozenset, dict)):
        return None if want == got else f"{where}: {got!r} for {want!r}"
    w, g = np.asarray(want), np.asarray(got)
    if w.shape != g.shape:
        return f"{where}: shape {g.shape} for {w.shape}"
    if w.dtype != g.dtype and not (isinstance(want, (list, tuple, int, float, complex))):
        return f"{where}: dtype {g.dtype} for {w.dtype}"
    if w.dtype.kind in "fc" or g.dtype.kind in "fc":
        ok = np.allclose(g.astype(complex), w.astype(complex), rtol=RTOL, atol=ATOL,
                         equal_nan=True)
    else:
        ok = bool(np.array_equal(w, g))
    return None if ok else f"{where}: values differ (max {np.max(np.abs(w - g))!r})"


def _length(value: Any) -> Any:
    return len(value) if hasattr(value, "__len__") else "-"


def _ported(text: str) -> str:
    """Python 2's ``xrange`` and builtin ``reduce``, which many older kernels use, as
    Python 3 spells them (the least port that lets the examples run at all)."""
    text = re.sub(r"\bxrange\b", "range", text)
    if re.search(r"(?<![.\w])reduce\(", text) and "import reduce" not in text:
        text = "from functools import reduce\n" + text
    return text


def check_one(path: Path) -> dict[str, Any]:
    """Convert, compile and compare one module; a dict saying how it went."""
    import aotc
    from aotc.migrate import convert_source

    text = _ported(path.read_text())
    runs = [m.group(1) for line in text.splitlines() if (m := _RUNAS.match(line))]
    if not runs:
        return {"status": "no-inputs"}
    try:
        converted = convert_source(text)
    except SyntaxError as err:
        return {"status": "python2", "detail": f"{err.msg} (line {err.lineno})"}
    work = Path(tempfile.mkdtemp(prefix="aotc_corpus_"))
    (work / f"{path.stem}_compiled.py").write_text(converted.text)
    (work / f"{path.stem}.py").write_text(text)
    plain = _load(work / f"{path.stem}.py", f"corpus_plain_{path.stem}")
    marked = _load(work / f"{path.stem}_compiled.py", f"corpus_compiled_{path.stem}")
    exported = {name for name in vars(marked)
                if hasattr(getattr(marked, name), "__aotc_export__")}
    if not exported:
        return {"status": "no-exports", "detail": "; ".join(converted.notes)}
    try:
        jitted = {name: aotc.jit(getattr(marked, name)) for name in exported}
    except Exception as err:
        return {"status": "build", "detail": f"{type(err).__name__}: {err}"}
    for line in runs:
        try:
            want = _run(line, dict(vars(plain)), exported)
        except Exception as err:  # the example itself fails under Python 3
            return {"status": "python-fails", "detail": f"{type(err).__name__}: {err}"}
        try:
            got = _run(line, {**vars(marked), **jitted}, exported)
        except Exception as err:
            kind = "build" if type(err).__module__.startswith("aotc") else "call"
            message = str(err).splitlines()[0] if str(err) else type(err).__name__
            return {"status": kind, "detail": f"{type(err).__name__}: {message}",
                    "line": line, "trace": traceback.format_exc(limit=-3)}
        found = _difference(copy.deepcopy(want), got)
        if found:
            return {"status": "wrong", "detail": found, "line": line}
    return {"status": "pass"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("-k", default="", help="only modules whose name contains this")
    parser.add_argument("--timeout", type=int, default=300)
    parser.add_argument("-v", action="store_true", help="print the failing calls' traces")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.one:
        print(json.dumps(check_one(options.folder), default=str))
        return
    tally: Counter[str] = Counter()
    for path in sorted(options.folder.glob("*.py")):
        if options.k not in path.stem:
            continue
        try:
            done = subprocess.run([sys.executable, __file__, str(path), "--one"],
                                  capture_output=True, text=True, timeout=options.timeout)
            lines = done.stdout.strip().splitlines()
            result = json.loads(lines[-1]) if done.returncode == 0 and lines else \
                {"status": "crash", "detail": f"exit {done.returncode}: "
                 + (done.stderr.strip().splitlines() or [""])[-1]}
        except subprocess.TimeoutExpired:
            result = {"status": "hang", "detail": f"over {options.timeout} s"}
        tally[result["status"]] += 1
        print(f"{result['status']:13} {path.stem:32} {result.get('detail', '')[:150]}")
        if options.v and "trace" in result:
            print(result["trace"])
    runnable = sum(n for s, n in tally.items() if s not in ("no-inputs", "python2",
                                                            "python-fails", "no-exports"))
    print(f"\n{tally['pass']}/{runnable} pass;", dict(sorted(tally.items())))


if __name__ == "__main__":
    main()
