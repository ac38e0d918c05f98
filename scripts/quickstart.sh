#!/usr/bin/env bash
# README command 1: from a fresh clone (Python 3.11+ and a C compiler) to the quickstart
# demo running on an interpreter that has NumPy and nothing else.
#
#   1. .venv with aotc (editable) and the test dependencies
#   2. aotc's own wheel in dist/
#   3. python -m build examples/quickstart  (sdist, then the wheel from the sdist, in an
#      isolated environment that installs aotc from dist/)
#   4. .venv-runtime with only numpy, the quickstart wheel installed with --no-deps
#   5. python -m quickstart.demo
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
PYTHON=${PYTHON:-python3}

[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test]'

rm -f dist/aotc-*.whl
.venv/bin/python -m build --wheel --outdir dist . >/dev/null
echo "aotc wheel: $(ls dist/aotc-*.whl)"

# The isolated build environment must find aotc in dist/; keep the configured links too.
existing=${PIP_FIND_LINKS:-$(.venv/bin/python -m pip config get global.find-links 2>/dev/null || true)}
export PIP_FIND_LINKS="$ROOT/dist${existing:+ $existing}"

rm -rf examples/quickstart/dist
start=$(date +%s%N)
.venv/bin/python -m build --outdir examples/quickstart/dist examples/quickstart >/dev/null
end=$(date +%s%N)
wheel=$(ls examples/quickstart/dist/quickstart-*.whl)
ms=$(( (end - start) / 1000000 ))
printf 'quickstart wheel: %s (built in %d.%03d s)\n' "$wheel" $((ms / 1000)) $((ms % 1000))

rm -rf .venv-runtime
"$PYTHON" -m venv .venv-runtime
.venv-runtime/bin/python -m pip install --quiet --disable-pip-version-check numpy
.venv-runtime/bin/python -m pip install --quiet --disable-pip-version-check --no-deps "$wheel"

cd /  # import the installed wheel, not the source tree
"$ROOT/.venv-runtime/bin/python" -m quickstart.demo
