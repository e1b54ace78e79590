#!/usr/bin/env bash
# Links the extensions built in build/dev into the source tree, for quick iteration without
# reinstalling: cmake -S . -B build/dev -G Ninja && ninja -C build/dev && scripts/dev_link.sh
set -euo pipefail
cd "$(dirname "$0")/.."
b=${1:-build/dev}
ln -sf "$PWD/$b/cpp/libtinytorch_core.so" tinytorch/
# the CUDA backend's module (built where nvcc is found) is in the cuda/ build folder
for so in "$b"/cuda/_cuda.*.so; do [ -e "$so" ] && ln -sf "$PWD/$so" tinytorch/; done
for so in $(find "$b/tinytorch" -name '*.so'); do
  rel=${so#$b/tinytorch/}
  name=$(basename "$so")
  # Cython outputs are flat in the build dir; place each by its module path
  case "$name" in
    _C.*) ln -sf "$PWD/$so" tinytorch/ ;;
    *) mod=${name%%.*}; dest=$(cd tinytorch && find . -name "$mod.pyx" -printf '%h\n' | head -1); ln -sf "$PWD/$so" "tinytorch/$dest/" ;;
  esac
done
