#pragma once
#include <string>
#include <vector>
// cuBLAS settings shared by the GEMM kernel and the Python module.
namespace tt::cuda {

// Whether float32 GEMMs may run on TF32 tensor cores (CUBLAS_COMPUTE_32F_FAST_TF32): ~8x the
// throughput, inputs rounded to 10 mantissa bits. Process-wide, default false (exact float32),
// what tinytorch.backends.cuda.matmul.allow_tf32 sets.
void set_allow_tf32(bool allow);
bool get_allow_tf32();
// what tinytorch.backends.cudnn.allow_tf32 sets: TF32 in convolutions' GEMMs (default on, as PyTorch).
void set_conv_allow_tf32(bool allow);
bool get_conv_allow_tf32();
// cuDNN's version where conv2d goes through it (tinytorch.backends.cudnn), else 0.
int cudnn_version();
// tinytorch.backends.cudnn.enabled: off sends conv2d to im2col + cuBLAS even where cuDNN is built in.
void set_cudnn_enabled(bool enabled);
bool get_cudnn_enabled();
// tinytorch.backends.cudnn.deterministic: cuDNN's backward passes only with deterministic algorithms.
void set_cudnn_deterministic(bool deterministic);
bool get_cudnn_deterministic();
// tinytorch.backends.cudnn.benchmark: time cuDNN's candidate engines once per problem, keep the fastest.
void set_cudnn_benchmark(bool benchmark);
bool get_cudnn_benchmark();
// conv2d's bias in cuDNN's graph: 0 never (added after), 1 where timed faster (default), 2 always
// where an engine takes it (tests; benchmarks' A/B).
void set_cudnn_fuse_bias(int mode);
// The calling thread's cached cuDNN plans, one line each: pass, dtype, shapes, engine (for benchmarks).
std::vector<std::string> cudnn_plans();

}  // namespace tt::cuda
