#!/usr/bin/env bash
# The test command (README command 2; .ci/run calls exactly this).
#
# Makes sure .venv holds aotc (editable) and its test dependencies, then runs with it the
# static checks (ruff, then mypy; both configured in pyproject.toml) and the whole pytest
# suite. Extra arguments go to pytest (scripts/test.sh -k wrapper -x).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
PYTHON=${PYTHON:-python3}
VENV=${AOTC_VENV:-$ROOT/.venv}

if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e '.[test]'
"$VENV/bin/ruff" check .
"$VENV/bin/mypy"
exec "$VENV/bin/python" -m pytest "$@"
