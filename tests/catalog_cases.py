"""The core differential catalog (``numpy_cases.CASES``) as one built kernel module, and
the runner that checks it against NumPy in a child process.

``KERNELS`` exports every case's kernel as ``case<k>`` (its index in ``CASES``: case
names are not all identifiers). ``tests/test_cross.py`` builds it for another platform
and runs :func:`main` there under qemu-user, so the reference is that platform's own
NumPy. The protocol is ``hostile_cases.main``'s: one JSON line per case, ``start``
first, so the parent knows which case a crash interrupted
(:func:`projects.run_cases`).
"""

from __future__ import annotations

import importlib
import json
import platform
import sys
import traceback

from numpy_cases import CASES, check_against_numpy, outputs_of

PACKAGE = "aotc_catalog"

KERNELS = '''
"""The core differential catalog (tests/numpy_cases.py), one exported kernel per case."""
import types

import numpy_cases

import aotc


def _exported(k, fn, signature):
    name = f"case{k}"
    copy = types.FunctionType(fn.__code__, fn.__globals__, name, fn.__defaults__,
                              fn.__closure__)
    copy.__module__, copy.__qualname__ = __name__, name
    return aotc.export(signature)(copy)


for _k, _case in enumerate(numpy_cases.CASES):
    globals()[f"case{_k}"] = _exported(_k, _case.fn, _case.signature)
'''


#: Cases with inputs whose NumPy result is C's undefined behaviour, which NumPy's own
#: AArch64 loops resolve differently by array length (vector body or scalar tail): the
#: integer reciprocal of 0, ``(int32)(1.0 / 0)``, is -1 in one and INT32_MAX in the
#: other. Those elements are left out here (x86-64's NumPy resolves it one way, which
#: test_compiled compares bit for bit).
UNDEFINED_ON_AARCH64 = {"reciprocal_i4": lambda x: x[x != 0]}


def main(names: list[str]) -> None:
    """Check the named cases, each on all its inputs, against NumPy in this process."""
    kernels = importlib.import_module(f"{PACKAGE}.kernels")
    assert kernels.__file__ is not None and kernels.__file__.endswith(".so")
    index = {case.name: k for k, case in enumerate(CASES)}
    for name in names:
        print(json.dumps({"case": name, "status": "start"}), flush=True)
        case = CASES[index[name]]
        fn = getattr(kernels, f"case{index[name]}")
        try:
            for args in case.inputs:
                if name in UNDEFINED_ON_AARCH64 and platform.machine() == "aarch64":
                    args = tuple(map(UNDEFINED_ON_AARCH64[name], args))
                check_against_numpy(case, lambda *a, fn=fn: outputs_of(fn(*a)), args)
            result = {"case": name, "status": "pass"}
        except BaseException:
            result = {"case": name, "status": "fail", "detail": traceback.format_exc()}
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:] or [case.name for case in CASES])
