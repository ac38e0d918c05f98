#!/usr/bin/env bash
# The test command (README command 2; .ci/run calls exactly this).
#
# Makes sure .venv holds aotc (editable) and its test dependencies, and that qemu-user and
# an arm64 sysroot are there for the cross-built tests (scripts/cross_sysroot.sh; apt, so
# root or sudo the first time), then runs with it the
# static checks (ruff, then mypy; both configured in pyproject.toml), builds the API
# reference (docs/api, generated from the code; a Sphinx warning fails) and the whole pytest
# suite, a test file per CPU at a time (pytest-xdist: most of the suite's time is LLVM,
# and one file's kernels share fixtures, so files are the unit; the longest go first, see
# tests/conftest.py). Extra arguments go to pytest (scripts/test.sh -k wrapper -x; -n 0
# runs in this process).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
PYTHON=${PYTHON:-python3}
VENV=${AOTC_VENV:-$ROOT/.venv}

if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e '.[test]'
# qemu-user and an arm64 CPython for tests/test_cross.py (cached after the first run)
"$ROOT/scripts/cross_sysroot.sh" "$VENV/bin/python"
"$VENV/bin/ruff" check .
"$VENV/bin/mypy"
"$VENV/bin/python" -m sphinx -W --keep-going -q -b html docs/api build/api-docs
exec "$VENV/bin/python" -m pytest -n auto --dist loadfile --no-loadscope-reorder "$@"
