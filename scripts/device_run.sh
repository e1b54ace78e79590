#!/usr/bin/env bash
# Builds tinytorch with CUDA on the GPU machine and runs the GPU test suites and benchmarks,
# writing logs under $OUT. Usage (from the repo root there): bash scripts/device_run.sh [stages]
# stages: build ctest pytest pytestcpu demo bench gpt2 llm dist ddpbench attn (default: build ctest pytest)
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
stages=${*:-build ctest pytest}
export PYTHONUNBUFFERED=1
log() { echo "== $*" | tee -a "$OUT/summary.log"; }
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; python3 --version; } 2>&1 | tee -a "$OUT/summary.log"

# The machine's default CXX (/opt/gcc) links libstdc++ statically into each shared library, so
# _C, libtinytorch_core and _cuda would each get their own copy and crash passing std types
# between them: build with the system compiler.
if [ -x /usr/bin/g++ ]; then export CC=/usr/bin/gcc CXX=/usr/bin/g++ CUDAHOSTCXX=/usr/bin/g++; fi

# Wheels and debs carried in .whl/ (the machine has no network).
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>&1 | tail -2
  export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
  for d in .whl/*.deb; do [ -f "$d" ] && dpkg -x "$d" /tmp/debroot; done
fi

if [[ " $stages " == *" build "* ]]; then
  log "build"
  start=$(date +%s)
  cmake -S . -B build/gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE="$(command -v python3)" \
        -DTINYTORCH_CUDA=ON -DTINYTORCH_BUILD_TESTS=${TINYTORCH_BUILD_TESTS:-ON} -DGTest_ROOT=/tmp/debroot/usr \
        -DCMAKE_PREFIX_PATH=/tmp/debroot/usr > "$OUT/cmake.log" 2>&1 || { tail -30 "$OUT/cmake.log"; exit 1; }
  grep "tinytorch:" "$OUT/cmake.log" | tee -a "$OUT/summary.log"
  ninja -C build/gpu -j16 > "$OUT/build.log" 2>&1 || { grep -E "error" -A3 "$OUT/build.log" | head -60; exit 1; }
  log "built in $(( $(date +%s) - start )) s"
  scripts/dev_link.sh build/gpu
  ln -sf "$PWD"/build/gpu/cuda/*.so tinytorch/
fi
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}

if [[ " $stages " == *" ctest "* ]]; then
  log "ctest"
  ctest --test-dir build/gpu -j8 --output-on-failure > "$OUT/ctest.log" 2>&1
  tail -3 "$OUT/ctest.log" | tee -a "$OUT/summary.log"
fi
if [[ " $stages " == *" pytest "* ]]; then
  # every test marked cuda, wherever its concern's folder is (the multi-process ones: the dist stage)
  log "pytest -m 'cuda and not dist' tests"
  (cd tests && timeout 540 python3 -m pytest -q -p no:cacheprovider -m "cuda and not dist" --maxfail=300 -rf . \
    ${PYTEST_ARGS:-}) > "$OUT/pytest_cuda.log" 2>&1
  grep -E "^FAILED|^ERROR|passed|failed" "$OUT/pytest_cuda.log" | tail -60 | tee -a "$OUT/summary.log"
fi
if [[ " $stages " == *" pytestcpu "* ]]; then
  log "pytest -m 'not cuda and not dist' tests"
  (cd tests && timeout 600 python3 -m pytest -q -p no:cacheprovider -m "not cuda and not dist" .) \
    > "$OUT/pytest_cpu.log" 2>&1
  tail -5 "$OUT/pytest_cpu.log" | tee -a "$OUT/summary.log"
fi
if [[ " $stages " == *" demo "* ]]; then
  log "demo/mnist.py --device cuda"
  timeout 600 python3 demo/mnist.py --device cuda > "$OUT/mnist_cuda.log" 2>&1
  grep -E "Accuracy|epoch\(s\)" "$OUT/mnist_cuda.log" | tee -a "$OUT/summary.log"
fi
if [[ " $stages " == *" bench "* ]]; then
  log "bench"
  timeout 900 python3 bench/gpu_bench.py > "$OUT/gpu_bench.log" 2>&1
  for b in 64 512; do
    timeout 600 python3 bench/mnist_bench.py --device cuda --only cnn --batch $b --steps 100 >> "$OUT/gpu_bench.log" 2>&1
  done
  cat "$OUT/gpu_bench.log" | tee -a "$OUT/summary.log"
fi
if [[ " $stages " == *" gpt2 "* ]]; then
  log "bench/gpt_bench.py --preset gpt2 (GPT-2 small, vocabulary 50304, 8 x 1024, bf16): tinytorch, torch, torch.compile"
  timeout ${GPT2_BENCH_TIMEOUT:-420} python3 bench/gpt_bench.py --device cuda --preset gpt2 --graphs \
    ${GPT2_BENCH_ARGS:---rounds 3 --steps 10} > "$OUT/gpt2_bench.log" 2>&1
  tail -20 "$OUT/gpt2_bench.log" | tee -a "$OUT/summary.log"
fi
if [[ " $stages " == *" llm "* ]]; then
  log "bench/llm_bench.py --device cuda ${LLM_BENCH_ARGS:---decode 64 --rounds 3} (SmolLM2-135M-shaped decode)"
  timeout ${LLM_BENCH_TIMEOUT:-300} python3 bench/llm_bench.py --device cuda ${LLM_BENCH_ARGS:---decode 64 --rounds 3} \
    > "$OUT/llm_bench.log" 2>&1
  grep -E "tok/s|device|Error" "$OUT/llm_bench.log" | tail -20 | tee -a "$OUT/summary.log"
fi
if [[ " $stages " == *" dist "* ]]; then
  log "pytest -m 'cuda and dist' tests/distributed"
  (cd tests && timeout 420 python3 -m pytest -q -p no:cacheprovider -m "cuda and dist" -rf distributed) \
    > "$OUT/pytest_dist.log" 2>&1
  grep -E "^FAILED|^ERROR|passed|failed" "$OUT/pytest_dist.log" | tail -20 | tee -a "$OUT/summary.log"
  log "DDP MNIST demo on 2 GPUs"
  timeout 120 python3 -m tinytorch.distributed.run --nproc-per-node 2 demo/ddp_mnist.py > "$OUT/ddp_demo.log" 2>&1
  grep -E "Accuracy|epoch\(s\)|Error|timed out" "$OUT/ddp_demo.log" | tail -5 | tee -a "$OUT/summary.log"
fi
if [[ " $stages " == *" ddpbench "* ]]; then
  log "bench/ddp_bench.py: 1 and 2 GPUs, tinytorch and torch alternating"
  timeout ${DDP_BENCH_TIMEOUT:-500} python3 bench/ddp_bench.py ${DDP_BENCH_ARGS:-} > "$OUT/ddp_bench.log" 2>&1
  grep -av "^rounds:" "$OUT/ddp_bench.log" | tail -40 | tee -a "$OUT/summary.log"
fi
if [[ " $stages " == *" attn "* ]]; then
  log "pytest tests/ops/attention/test_cuda_attention_fused.py"
  (cd tests && timeout ${ATTN_TEST_TIMEOUT:-240} python3 -m pytest -q -p no:cacheprovider -rf \
    ops/attention/test_cuda_attention_fused.py) > "$OUT/pytest_attn.log" 2>&1
  grep -E "^FAILED|^ERROR|passed|failed" "$OUT/pytest_attn.log" | tail -40 | tee -a "$OUT/summary.log"
  log "bench/attention_bench.py (fused vs composed vs torch SDPA)"
  timeout ${ATTN_BENCH_TIMEOUT:-200} python3 bench/attention_bench.py --device cuda ${ATTN_BENCH_ARGS:-} \
    > "$OUT/attention_bench.log" 2>&1
  tail -20 "$OUT/attention_bench.log" | tee -a "$OUT/summary.log"
fi
