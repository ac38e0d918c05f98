"""Hostile calls: no input a caller can pass corrupts memory, loses a write or kills Python.

The kernels and cases live in ``hostile_cases.py``. The module is built once; the cases
run in child processes, so a segfault or an abort fails the cases it hit (a crash
reruns the remaining ones in a fresh child) instead of taking the test run down.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hostile_cases import CASES, KERNELS
from projects import build_project, run_cases

from aotc.codegen.targets import x86

PACKAGE = "aotc_hostile"
TESTS = Path(__file__).parent


def _build(root: Path, target: str = "native") -> None:
    build_project(root, PACKAGE, KERNELS, target=target)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile")
    _build(root)
    return root


@pytest.fixture(scope="module")
def results(project: Path) -> dict[str, dict]:
    return run_cases(TESTS / "hostile_cases.py", list(CASES), [project, TESTS])


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_case(results: dict[str, dict], name: str) -> None:
    record = results[name]
    assert record["status"] == "pass", record.get("detail", record)


def _cpuinfo_flags() -> set[str]:
    text = Path("/proc/cpuinfo").read_text()
    line = next(ln for ln in text.splitlines() if ln.startswith("flags"))
    return set(line.split(":", 1)[1].split())


#: LLVM's feature names where Linux's /proc/cpuinfo spells them differently.
CPUINFO_NAMES = {"sse3": "pni", "sse4.1": "sse4_1", "sse4.2": "sse4_2", "sahf": "lahf_lm",
                 "lzcnt": "abm", "bmi": "bmi1", "pclmul": "pclmulqdq", "crc32": "sse4_2",
                 "sha": "sha_ni", "avx512vnni": "avx512_vnni", "avx512bitalg": "avx512_bitalg",
                 "avx512vpopcntdq": "avx512_vpopcntdq", "avx512vp2intersect":
                 "avx512_vp2intersect", "avx512bf16": "avx512_bf16", "avx512fp16":
                 "avx512_fp16", "avx512vbmi2": "avx512_vbmi2", "avxvnni": "avx_vnni",
                 "avxifma": "avx_ifma", "prfchw": "3dnowprefetch"}


def test_the_import_guard_matches_the_cpu(tmp_path: Path) -> None:
    """A module built for x86-64-v4 imports where the CPU has AVX-512 and raises an
    ImportError naming what is missing where it does not: never Illegal instruction."""
    _build(tmp_path, "x86-64-v4")
    flags = _cpuinfo_flags()
    needed = x86.LEVELS["x86-64-v4"]
    missing = [f for f in needed if f in x86.FEATURES
               and CPUINFO_NAMES.get(f, f) not in flags]
    done = subprocess.run([sys.executable, "-c", f"import {PACKAGE}.kernels as k; "
                           "import numpy as np; print(k.total(np.ones(4)))"],
                          capture_output=True, text=True, cwd=tmp_path)
    if missing:
        assert done.returncode == 1, done.stdout + done.stderr
        assert "ImportError" in done.stderr and "x86-64-v4" in done.stderr
        assert all(f in done.stderr for f in missing), done.stderr
    else:
        assert done.returncode == 0 and done.stdout.strip() == "4.0", done.stderr


def test_cpu_detection_agrees_with_the_kernel(project: Path, tmp_path: Path) -> None:
    """For every feature aotc can check, its CPUID/XGETBV test answers as Linux does
    (/proc/cpuinfo), so a module never runs code the CPU lacks nor refuses a good CPU."""
    names = sorted(x86.FEATURES)
    source = (project / ".aotc-build" / PACKAGE / "kernels.c").read_text()
    start = source.index("#if defined(__x86_64__) || defined(_M_X64)")
    end = source.index("#endif", start) + len("#endif")
    probe = source[start:end].replace("AOTC_FEATURES[] = ",
                                      "AOTC_FEATURES[] = TABLE; //", 1)
    program = tmp_path / "probe.c"
    program.write_text(
        "#include <stdio.h>\n"
        f"#define TABLE {x86.c_table(tuple(names))}\n" + probe +
        f"\nint main(void) {{ for (int k = 0; k < {len(names)}; k++) "
        'printf("%d\\n", aotc_cpu_has(k)); return 0; }\n')
    exe = tmp_path / "probe"
    subprocess.run(["cc", "-O1", "-o", str(exe), str(program)], check=True)
    answers = subprocess.run([str(exe)], capture_output=True, text=True,
                             check=True).stdout.split()
    flags = _cpuinfo_flags()
    # The features code generation can use; others (pku, shstk...) the kernel may hide.
    used = {f for table in (x86.LEVELS, x86.CPUS) for fs in table.values() for f in fs}
    disagree = [n for n, a in zip(names, answers, strict=True)
                if n in used and (a == "1") != (CPUINFO_NAMES.get(n, n) in flags)]
    assert not disagree, disagree
    assert np.mean([a == "1" for a in answers]) > 0.2  # this is an x86-64 machine
