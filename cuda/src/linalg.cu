// CUDA GEMM: cuBLAS (cublasGemmStridedBatchedEx) for the floating types, float32 accumulation
// for float16/bfloat16 (tensor cores) and float32 (TF32 only when allowed); a plain kernel
// accumulating in int64 for integers. Row-major C = A @ B is computed as the column-major
// C^T = B^T @ A^T, i.e. cuBLAS gets (B, A) swapped and m/n exchanged: no copies.
#include <cublas_v2.h>
#include <array>
#include <atomic>
#include <climits>
#include <mutex>
#include "tinytorch/cuda/blas.h"
#include "tinytorch/cuda/loops.cuh"
#include "linalg_lt.h"
#include "tinytorch/kernels/linalg.h"

namespace tt::cuda {

namespace {
std::atomic<bool> g_allow_tf32{false};
std::atomic<bool> g_conv_allow_tf32{true};
}
void set_allow_tf32(bool allow) { g_allow_tf32.store(allow); }
bool get_allow_tf32() { return g_allow_tf32.load(); }
void set_conv_allow_tf32(bool allow) { g_conv_allow_tf32.store(allow); }
bool get_conv_allow_tf32() { return g_conv_allow_tf32.load(); }

namespace {

const char* cublas_status_str(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    default: return "CUBLAS_STATUS_UNKNOWN";
  }
}

#define TT_CUBLAS_CHECK(EXPR)                                                                          \
  do {                                                                                                 \
    cublasStatus_t tt_st_ = (EXPR);                                                                    \
    if (tt_st_ != CUBLAS_STATUS_SUCCESS)                                                               \
      throw std::runtime_error(::tt::str_cat("cuBLAS error ", cublas_status_str(tt_st_), " in ", #EXPR, \
                                             " at ", __FILE__, ":", __LINE__));                        \
  } while (0)

// cuBLAS's recommended workspace on Hopper.
constexpr int64_t kWorkspaceBytes = int64_t(32) << 20;
constexpr int kMaxDevices = 64;

// One handle per device, created on first use and never destroyed: destroying handles from a
// static destructor races the CUDA runtime's own teardown at exit. The workspace comes from the
// caching allocator once and is likewise kept for the process (a leaked Tensor, for the same
// reason). `mu` serializes set-stream + launch on the shared handle (the launch is async, so
// the lock is held for microseconds).
struct DeviceBlas {
  std::mutex mu;
  cublasHandle_t handle = nullptr;
  Tensor* workspace = nullptr;
};

DeviceBlas& blas_for(int device) {
  static std::array<DeviceBlas, kMaxDevices> all;
  TT_CHECK(device >= 0 && device < kMaxDevices, "gemm: device index ", device, " out of range");
  return all[static_cast<size_t>(device)];
}

// Locks the device's handle, points it at the current stream and our workspace.
class HandleLease {
 public:
  explicit HandleLease(Device dev) : b_(blas_for(dev.index)), lock_(b_.mu) {
    if (!b_.handle) {
      TT_CUBLAS_CHECK(cublasCreate(&b_.handle));
      // Sums of products stay in float32 for 16-bit inputs (no fp16 split-K reductions).
      TT_CUBLAS_CHECK(cublasSetMathMode(b_.handle, CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION));
      b_.workspace = new Tensor(Tensor::empty({kWorkspaceBytes}, DType::UInt8, dev));
    }
    // cublasSetStream resets the workspace to cuBLAS's own pool, so set ours after it.
    TT_CUBLAS_CHECK(cublasSetStream(b_.handle, current_stream(dev.index)));
    TT_CUBLAS_CHECK(cublasSetWorkspace(b_.handle, b_.workspace->data_ptr(), static_cast<size_t>(kWorkspaceBytes)));
  }
  cublasHandle_t get() const { return b_.handle; }

 private:
  DeviceBlas& b_;
  std::lock_guard<std::mutex> lock_;
};

// C_i = beta * C_i for every batch item (k == 0 or alpha == 0); beta == 0 writes zeros, so
// NaNs in C don't propagate. c: (batch, m, n) rows ldc apart, items stride_c apart.
template <class T>
__global__ void scale_c_kernel(T* c, int64_t batch, int64_t m, int64_t n, int64_t ldc, int64_t stride_c,
                               double beta) {
  int64_t total = batch * m * n;
  TT_GRID_STRIDE(i, total) {
    int64_t j = i % n, r = (i / n) % m, b = i / (n * m);
    T& v = c[b * stride_c + r * ldc + j];
    v = beta == 0 ? T(0) : static_cast<T>(static_cast<double>(static_cast<opmath_t<T>>(v)) * beta);
  }
}

template <class T>
__device__ __forceinline__ T at(const T* p, bool trans, int64_t ld, int64_t r, int64_t c) {
  return trans ? p[c * ld + r] : p[r * ld + c];
}

// Integer GEMM, one output element per thread, int64 accumulation (wraps like the CPU loop).
// a: op(A_i) (m, k), b: op(B_i) (k, n) -> c: C_i (m, n). Integer matmul is rare: simple is fine.
struct IntGemmDims {
  bool trans_a, trans_b;
  int64_t m, n, k, lda, ldb, ldc, batch, stride_a, stride_b, stride_c;
  double alpha, beta;
};

template <class T>
__global__ void int_gemm_kernel(IntGemmDims g, const T* a, const T* b, T* c) {
  int64_t total = g.batch * g.m * g.n;
  TT_GRID_STRIDE(idx, total) {
    int64_t j = idx % g.n, i = (idx / g.n) % g.m, bt = idx / (g.n * g.m);
    const T* ai = a + bt * g.stride_a;
    const T* bi = b + bt * g.stride_b;
    int64_t acc = 0;
    for (int64_t p = 0; p < g.k; ++p)
      acc += static_cast<int64_t>(at(ai, g.trans_a, g.lda, i, p)) * static_cast<int64_t>(at(bi, g.trans_b, g.ldb, p, j));
    T& out = c[bt * g.stride_c + i * g.ldc + j];
    if (g.alpha == 1 && g.beta == 0) out = static_cast<T>(acc);
    else out = static_cast<T>(g.alpha * static_cast<double>(acc) + (g.beta == 0 ? 0.0 : g.beta * static_cast<double>(out)));
  }
}

template <class T> struct CudaType;
template <> struct CudaType<float> { static constexpr cudaDataType_t value = CUDA_R_32F; };
template <> struct CudaType<double> { static constexpr cudaDataType_t value = CUDA_R_64F; };
template <> struct CudaType<Half> { static constexpr cudaDataType_t value = CUDA_R_16F; };
template <> struct CudaType<BFloat16> { static constexpr cudaDataType_t value = CUDA_R_16BF; };

// cuBLAS takes batchCount as int and some kernels index batches with gridDim.y/z: stay under both.
constexpr int64_t kMaxBatchPerCall = 65535;

template <class T>
void cublas_gemm(const GemmArgs& g) {
  const T* a = g.a.data<T>();
  const T* b = g.b.data<T>();
  T* c = g.c.data<T>();
  constexpr cudaDataType_t dt = CudaType<T>::value;
  constexpr bool is_double = std::is_same_v<T, double>;
  const bool tf32 = std::is_same_v<T, float> && (g.conv ? get_conv_allow_tf32() : get_allow_tf32());
  cublasComputeType_t compute = is_double ? CUBLAS_COMPUTE_64F : tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  // Scalars match the compute type: double for 64F, float otherwise.
  double alpha_d = g.alpha, beta_d = g.beta;
  float alpha_f = static_cast<float>(g.alpha), beta_f = static_cast<float>(g.beta);
  const void* alpha = is_double ? static_cast<const void*>(&alpha_d) : static_cast<const void*>(&alpha_f);
  const void* beta = is_double ? static_cast<const void*>(&beta_d) : static_cast<const void*>(&beta_f);
  // Column-major view: C^T (n, m) = op(B)^T (n, k) @ op(A)^T (k, m). A row-major operand with
  // trans=false is its column-major transpose, so the cuBLAS op flags equal ours.
  cublasOperation_t opb = g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opa = g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  HandleLease h(g.c.device());
  for (int64_t b0 = 0; b0 < g.batch; b0 += kMaxBatchPerCall) {
    int64_t nb = std::min(kMaxBatchPerCall, g.batch - b0);
    TT_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
        h.get(), opb, opa, static_cast<int>(g.n), static_cast<int>(g.m), static_cast<int>(g.k), alpha,
        b + b0 * g.stride_b, dt, static_cast<int>(g.ldb), g.stride_b, a + b0 * g.stride_a, dt,
        static_cast<int>(g.lda), g.stride_a, beta, c + b0 * g.stride_c, dt, static_cast<int>(g.ldc), g.stride_c,
        static_cast<int>(nb), compute, CUBLAS_GEMM_DEFAULT));
  }
}

void cuda_gemm(const GemmArgs& g) {
  if (g.m == 0 || g.n == 0 || g.batch == 0) return;
  for (int64_t v : {g.m, g.n, g.k, g.lda, g.ldb, g.ldc})
    TT_CHECK(v <= INT_MAX, "gemm: dimension ", v, " exceeds the 32-bit cuBLAS limit");
  DeviceGuard guard(g.c.device());
  cudaStream_t stream = current_stream(g.c.device().index);
  if (g.bias.defined()) {
    if (gemm_bias_lt(g, stream)) return;
    return cuda_gemm(bias_into_c(g));  // no cuBLASLt epilogue for this problem
  }
  TT_DISPATCH_NUMERIC(g.c.dtype(), "gemm", [&] {
    using T = scalar_t;
    if (g.k == 0 || g.alpha == 0) {
      int64_t total = g.batch * g.m * g.n;
      scale_c_kernel<T><<<grid_for(total), kThreads, 0, stream>>>(g.c.data<T>(), g.batch, g.m, g.n, g.ldc,
                                                                 g.stride_c, g.beta);
      TT_CUDA_KERNEL_CHECK();
      return;
    }
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, Half> ||
                  std::is_same_v<T, BFloat16>) {
      cublas_gemm<T>(g);
    } else {
      int64_t total = g.batch * g.m * g.n;
      IntGemmDims d{g.trans_a, g.trans_b, g.m, g.n, g.k, g.lda, g.ldb, g.ldc,
                    g.batch, g.stride_a, g.stride_b, g.stride_c, g.alpha, g.beta};
      int_gemm_kernel<T><<<grid_for(total), kThreads, 0, stream>>>(d, g.a.data<T>(), g.b.data<T>(), g.c.data<T>());
      TT_CUDA_KERNEL_CHECK();
    }
  });
}

}  // namespace

TT_REGISTER_KERNEL(gemm, CUDA, cuda_gemm)

}  // namespace tt::cuda
