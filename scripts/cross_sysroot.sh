#!/usr/bin/env bash
# An AArch64 Linux to run cross-built wheels in, for tests/test_cross.py (scripts/test.sh
# calls this before pytest). Idempotent and cached: it does nothing when the sysroot is
# there already.
#
#   qemu-user-static     Debian's user-mode emulator (apt): runs AArch64 Linux programs
#                        here, with any CPU model (-cpu cortex-a72: NEON only; -cpu max:
#                        SVE and SVE2).
#   the sysroot          Debian's arm64 CPython 3.11 and the libraries it loads, extracted
#                        with `apt-get download` + `dpkg -x` (nothing is installed over
#                        this machine's own Python), plus NumPy's aarch64 wheel unpacked
#                        into site/.
#
# Usage: scripts/cross_sysroot.sh PYTHON   (the test venv's python: its NumPy version is
# the one fetched). The sysroot goes to $AOTC_QEMU_SYSROOT (default
# ~/.cache/aotc-qemu/aarch64).
set -euo pipefail
PYTHON=${1:-python3}
SYSROOT=${AOTC_QEMU_SYSROOT:-$HOME/.cache/aotc-qemu/aarch64}
NUMPY=$("$PYTHON" -c 'import numpy; print(numpy.__version__)')
MARK="$SYSROOT/.ready-numpy-$NUMPY"
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo

if ! command -v qemu-aarch64-static >/dev/null; then
    echo "cross_sysroot: installing qemu-user-static (apt)" >&2
    $SUDO apt-get update -qq -o Acquire::Languages=none
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq qemu-user-static >/dev/null
fi
[ -e "$MARK" ] && exit 0

echo "cross_sysroot: building an arm64 CPython 3.11 sysroot in $SYSROOT" >&2
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    $SUDO dpkg --add-architecture arm64
fi
$SUDO apt-get update -qq -o Acquire::Languages=none
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
# apt writes downloads as its own user: a folder it can write to
chmod 777 "$WORK"
PACKAGES="libc6 libgcc-s1 libstdc++6 libpython3.11-minimal libpython3.11-stdlib
python3.11-minimal libexpat1 zlib1g libffi8 libbz2-1.0 liblzma5 libssl3 libcrypt1 libuuid1"
(cd "$WORK" && apt-get download -qq $(for p in $PACKAGES; do echo "$p:arm64"; done))
rm -rf "$SYSROOT" && mkdir -p "$SYSROOT/site"
for deb in "$WORK"/*.deb; do dpkg -x "$deb" "$SYSROOT"; done
"$PYTHON" -m pip download --quiet --disable-pip-version-check --only-binary=:all: \
    --no-deps --python-version 3.11 --platform manylinux_2_28_aarch64 \
    --platform manylinux2014_aarch64 -d "$WORK/wheels" "numpy==$NUMPY"
"$PYTHON" -m zipfile -e "$WORK"/wheels/numpy-*.whl "$SYSROOT/site"
touch "$MARK"
