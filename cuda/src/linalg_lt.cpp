// cuBLASLt GEMM with the bias added in the epilogue (linear's forward, GemmArgs::bias): one
// kernel, where cublasGemmEx would need the bias broadcast into C first and read back (two passes
// over the output). As cublas_gemm in linalg.cu, row-major C = A @ B runs as the column-major
// C^T = B^T @ A^T, so the bias runs along the rows of cuBLASLt's D. Each problem's descriptors
// and the heuristic's algorithm are built once and cached; a call binds pointers and launches.
#include "linalg_lt.h"
#include <cublasLt.h>
#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include "tinytorch/cuda/blas.h"
#include "tinytorch/cuda/common.h"

namespace tt::cuda {
namespace {

#define TT_LT_CHECK(EXPR)                                                                             \
  do {                                                                                                \
    cublasStatus_t tt_st_ = (EXPR);                                                                   \
    if (tt_st_ != CUBLAS_STATUS_SUCCESS)                                                              \
      throw std::runtime_error(str_cat("cuBLASLt error ", int(tt_st_), " in ", #EXPR, " at ", __FILE__, \
                                       ":", __LINE__));                                               \
  } while (0)

constexpr int64_t kWorkspaceBytes = int64_t(32) << 20;  // as cuBLAS's on Hopper
constexpr int kMaxDevices = 64;

// What selects a plan: the problem, the types and every pointer's alignment (the heuristic
// picks kernels that rely on it).
struct PlanKey {
  int device, dtype;
  bool trans_a, trans_b, tf32;
  int64_t m, n, k, lda, ldb, ldc;
  int align_a, align_b, align_c, align_bias;
  auto tie() const {
    return std::tie(device, dtype, trans_a, trans_b, tf32, m, n, k, lda, ldb, ldc, align_a, align_b, align_c,
                    align_bias);
  }
  bool operator<(const PlanKey& o) const { return tie() < o.tie(); }
};

// The descriptors of one problem (RAII) and the algorithm the heuristic chose; ok = false when
// the heuristic found none (the caller falls back to cuBLAS).
struct Plan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo{};
  bool ok = false;
  Plan() = default;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  ~Plan() {
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

// One handle and workspace per device, kept for the process (destroying them from a static
// destructor races the CUDA runtime's teardown, as in linalg.cu); `mu` guards the plan cache and
// the bias pointer written into a cached descriptor until its launch is enqueued.
struct DeviceLt {
  std::mutex mu;
  cublasLtHandle_t handle = nullptr;
  Tensor* workspace = nullptr;
  std::map<PlanKey, std::unique_ptr<Plan>> plans;
};

DeviceLt& lt_for(int device) {
  static std::array<DeviceLt, kMaxDevices> all;
  TT_CHECK(device >= 0 && device < kMaxDevices, "gemm: device index ", device, " out of range");
  return all[static_cast<size_t>(device)];
}

int alignment(const void* p) {
  auto v = reinterpret_cast<uintptr_t>(p);
  int a = 256;
  while (a > 1 && v % uintptr_t(a) != 0) a /= 2;
  return a;
}

cudaDataType_t lt_dtype(DType d) {
  switch (d) {
    case DType::Float32: return CUDA_R_32F;
    case DType::Float16: return CUDA_R_16F;
    default: return CUDA_R_16BF;
  }
}

template <class T>
void set_attr(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr, const T& value) {
  TT_LT_CHECK(cublasLtMatmulDescSetAttribute(d, attr, &value, sizeof(value)));
}
template <class T>
void set_pref(cublasLtMatmulPreference_t p, cublasLtMatmulPreferenceAttributes_t attr, const T& value) {
  TT_LT_CHECK(cublasLtMatmulPreferenceSetAttribute(p, attr, &value, sizeof(value)));
}

std::unique_ptr<Plan> build_plan(cublasLtHandle_t h, const GemmArgs& g, const PlanKey& key) {
  auto plan = std::make_unique<Plan>();
  const cudaDataType_t dt = lt_dtype(g.c.dtype());
  TT_LT_CHECK(cublasLtMatmulDescCreate(&plan->op, key.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
                                       CUDA_R_32F));
  // column-major: D^T (n, m) = op(B)^T (n, k) @ op(A)^T (k, m); our B is cuBLASLt's A
  const cublasOperation_t opa = g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, opb = g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  set_attr(plan->op, CUBLASLT_MATMUL_DESC_TRANSA, opa);
  set_attr(plan->op, CUBLASLT_MATMUL_DESC_TRANSB, opb);
  set_attr(plan->op, CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_BIAS);
  set_attr(plan->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, g.bias.data_ptr());
  TT_LT_CHECK(cublasLtMatrixLayoutCreate(&plan->a, dt, opa == CUBLAS_OP_N ? g.n : g.k, opa == CUBLAS_OP_N ? g.k : g.n,
                                         g.ldb));
  TT_LT_CHECK(cublasLtMatrixLayoutCreate(&plan->b, dt, opb == CUBLAS_OP_N ? g.k : g.m, opb == CUBLAS_OP_N ? g.m : g.k,
                                         g.lda));
  TT_LT_CHECK(cublasLtMatrixLayoutCreate(&plan->c, dt, g.n, g.m, g.ldc));
  cublasLtMatmulPreference_t pref = nullptr;
  TT_LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  std::unique_ptr<std::remove_pointer_t<cublasLtMatmulPreference_t>, decltype(&cublasLtMatmulPreferenceDestroy)> guard(
      pref, cublasLtMatmulPreferenceDestroy);
  set_pref(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, uint64_t(kWorkspaceBytes));
  set_pref(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, uint32_t(key.align_b));
  set_pref(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, uint32_t(key.align_a));
  set_pref(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, uint32_t(key.align_c));
  set_pref(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, uint32_t(key.align_c));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  cublasStatus_t st =
      cublasLtMatmulAlgoGetHeuristic(h, plan->op, plan->a, plan->b, plan->c, plan->c, pref, 1, &result, &found);
  plan->ok = st == CUBLAS_STATUS_SUCCESS && found > 0;
  if (plan->ok) plan->algo = result.algo;
  return plan;
}

}  // namespace

bool gemm_bias_lt(const GemmArgs& g, cudaStream_t stream) {
  const DType d = g.c.dtype();
  if (d != DType::Float32 && d != DType::Float16 && d != DType::BFloat16) return false;
  if (g.batch != 1 || g.beta != 0 || g.k == 0) return false;
  const int dev = g.c.device().index;
  PlanKey key{dev,       int(d),   g.trans_a, g.trans_b,
              d == DType::Float32 && get_allow_tf32(),
              g.m,       g.n,      g.k,       g.lda,
              g.ldb,     g.ldc,    alignment(g.a.data_ptr()),
              alignment(g.b.data_ptr()), alignment(g.c.data_ptr()), alignment(g.bias.data_ptr())};
  if (key.align_bias < 16) return false;
  DeviceLt& lt = lt_for(dev);
  std::lock_guard<std::mutex> lock(lt.mu);
  if (!lt.handle) {
    TT_LT_CHECK(cublasLtCreate(&lt.handle));
    lt.workspace = new Tensor(Tensor::empty({kWorkspaceBytes}, DType::UInt8, g.c.device()));
  }
  auto it = lt.plans.find(key);
  if (it == lt.plans.end()) it = lt.plans.emplace(key, build_plan(lt.handle, g, key)).first;
  Plan& plan = *it->second;
  if (!plan.ok) return false;
  set_attr(plan.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, g.bias.data_ptr());
  const float alpha = static_cast<float>(g.alpha), beta = 0.f;
  TT_LT_CHECK(cublasLtMatmul(lt.handle, plan.op, &alpha, g.b.data_ptr(), plan.a, g.a.data_ptr(), plan.b, &beta,
                             g.c.data_ptr(), plan.c, g.c.data_ptr(), plan.c, &plan.algo, lt.workspace->data_ptr(),
                             static_cast<size_t>(kWorkspaceBytes), stream));
  return true;
}

}  // namespace tt::cuda
