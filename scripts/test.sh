#!/usr/bin/env bash
# Installs tinytorch with its test extras and runs every test: the C++ GoogleTest suite
# (ctest) and the Python suite (pytest). Usage: bash scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${TINYTORCH_JOBS:-2}

# GoogleTest for the C++ suite (Debian/Ubuntu package), when missing and we may install it.
if [ ! -f /usr/include/gtest/gtest.h ] && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libgtest-dev >/dev/null
fi

echo "== pip install .[test]"
start=$(date +%s)
python3 -m pip install -q ".[test]"
echo "   installed in $(( $(date +%s) - start )) s"

echo "== C++ tests (ctest)"
python3 -m pip install -q scipy-openblas32 cmake ninja pybind11
cmake -S . -B build/ctest -G Ninja -DCMAKE_BUILD_TYPE=Release -DTINYTORCH_BUILD_TESTS=ON \
      -DTINYTORCH_BUILD_PYTHON=OFF -DPython_EXECUTABLE="$(command -v python3)" >/dev/null
cmake --build build/ctest -j "$jobs"
ctest --test-dir build/ctest --output-on-failure -j "$jobs"

echo "== Python tests (pytest)"
# Run from outside the source tree so the installed package is what gets tested.
set +e
(cd tests && python3 -m pytest -q -p no:cacheprovider "$@" .)
rc=$?
set -e
if [ "$rc" = 5 ]; then
  echo "pytest collected no tests: failing" >&2
  exit 1
fi
exit "$rc"
