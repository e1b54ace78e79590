// conv2d forward/backward through cuDNN where the build found it (TINYTORCH_WITH_CUDNN); the op
// layer falls back to im2col + cuBLAS otherwise. Registers conv2d_direct(_backward) for CUDA.
//   x: (B, C, H, W), w: (O, C/groups, kh, kw), out/go: (B, O, Ho, Wo), all contiguous, one dtype.
// Algorithms come from cuDNN's heuristics (no benchmarking), cached per problem; as PyTorch's,
// backward ones may use atomics unless tinytorch.backends.cudnn.deterministic. float32 may use TF32 per
// tinytorch.backends.cudnn.allow_tf32; 16-bit types accumulate in float32.
#include <atomic>
#include "tinytorch/cuda/blas.h"

namespace tt::cuda {
namespace {
std::atomic<bool> g_cudnn_enabled{true};         // tinytorch.backends.cudnn.enabled
std::atomic<bool> g_cudnn_deterministic{false};  // tinytorch.backends.cudnn.deterministic
}  // namespace
void set_cudnn_enabled(bool enabled) { g_cudnn_enabled.store(enabled); }
bool get_cudnn_enabled() { return g_cudnn_enabled.load(); }
void set_cudnn_deterministic(bool deterministic) { g_cudnn_deterministic.store(deterministic); }
bool get_cudnn_deterministic() { return g_cudnn_deterministic.load(); }
}  // namespace tt::cuda

#ifdef TINYTORCH_WITH_CUDNN
#include <cudnn.h>
#include <climits>
#include <map>
#include <mutex>
#include <sstream>
#include <tuple>
#include <unordered_map>
#include "tinytorch/cuda/blas.h"
#include "tinytorch/cuda/common.h"
#include "tinytorch/kernels/conv.h"

namespace tt::cuda {
namespace {

#define TT_CUDNN_CHECK(EXPR)                                                                       \
  do {                                                                                             \
    cudnnStatus_t tt_s_ = (EXPR);                                                                  \
    if (tt_s_ != CUDNN_STATUS_SUCCESS)                                                             \
      throw std::runtime_error(str_cat("cuDNN error in ", #EXPR, ": ", cudnnGetErrorString(tt_s_))); \
  } while (0)

// One handle per (thread, device), destroyed with the thread.
struct Handles {
  std::unordered_map<int, cudnnHandle_t> by_device;
  ~Handles() {
    for (auto& [d, h] : by_device) cudnnDestroy(h);
  }
};

cudnnHandle_t handle_for(int device) {
  thread_local Handles handles;
  auto it = handles.by_device.find(device);
  if (it == handles.by_device.end()) {
    cudnnHandle_t h = nullptr;
    TT_CUDNN_CHECK(cudnnCreate(&h));
    it = handles.by_device.emplace(device, h).first;
  }
  TT_CUDNN_CHECK(cudnnSetStream(it->second, current_stream(device)));
  return it->second;
}

cudnnDataType_t cudnn_dtype(DType d) {
  switch (d) {
    case DType::Float32: return CUDNN_DATA_FLOAT;
    case DType::Float64: return CUDNN_DATA_DOUBLE;
    case DType::Float16: return CUDNN_DATA_HALF;
    case DType::BFloat16: return CUDNN_DATA_BFLOAT16;
    default: throw_unsupported_dtype("conv2d (cuDNN)", d);
  }
}

// The descriptors of one convolution problem (RAII).
struct Problem {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;

  Problem(const Tensor& xt, const Tensor& wt, const Tensor& yt, const Conv2dParams& p, int64_t groups) {
    const cudnnDataType_t dt = cudnn_dtype(xt.dtype());
    const cudnnDataType_t compute = dt == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    auto i32 = [](int64_t v) { return static_cast<int>(v); };
    TT_CUDNN_CHECK(cudnnCreateTensorDescriptor(&x));
    TT_CUDNN_CHECK(cudnnCreateTensorDescriptor(&y));
    TT_CUDNN_CHECK(cudnnCreateTensorDescriptor(&bias));
    TT_CUDNN_CHECK(cudnnCreateFilterDescriptor(&w));
    TT_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&conv));
    TT_CUDNN_CHECK(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, dt, i32(xt.size(0)), i32(xt.size(1)),
                                              i32(xt.size(2)), i32(xt.size(3))));
    TT_CUDNN_CHECK(cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, dt, i32(yt.size(0)), i32(yt.size(1)),
                                              i32(yt.size(2)), i32(yt.size(3))));
    TT_CUDNN_CHECK(cudnnSetTensor4dDescriptor(bias, CUDNN_TENSOR_NCHW, dt, 1, i32(yt.size(1)), 1, 1));
    TT_CUDNN_CHECK(cudnnSetFilter4dDescriptor(w, dt, CUDNN_TENSOR_NCHW, i32(wt.size(0)), i32(wt.size(1)),
                                              i32(wt.size(2)), i32(wt.size(3))));
    TT_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(conv, i32(p.ph), i32(p.pw), i32(p.sh), i32(p.sw), i32(p.dh),
                                                   i32(p.dw), CUDNN_CROSS_CORRELATION, compute));
    TT_CUDNN_CHECK(cudnnSetConvolutionGroupCount(conv, i32(groups)));
    // As PyTorch: exact float32 unless TF32 is allowed; tensor cores for 16-bit types.
    const bool fp32_exact = dt == CUDNN_DATA_FLOAT && !get_conv_allow_tf32();
    TT_CUDNN_CHECK(cudnnSetConvolutionMathType(conv, fp32_exact || dt == CUDNN_DATA_DOUBLE ? CUDNN_FMA_MATH
                                                                                            : CUDNN_TENSOR_OP_MATH));
  }
  ~Problem() {
    if (conv) cudnnDestroyConvolutionDescriptor(conv);
    if (w) cudnnDestroyFilterDescriptor(w);
    if (bias) cudnnDestroyTensorDescriptor(bias);
    if (y) cudnnDestroyTensorDescriptor(y);
    if (x) cudnnDestroyTensorDescriptor(x);
  }
  Problem(const Problem&) = delete;
  Problem& operator=(const Problem&) = delete;
};

// Algorithm cache: the problem's sizes, dtype, parameters, math mode and which pass.
using Key = std::tuple<int, int, std::array<int64_t, 8>, std::array<int64_t, 8>, std::array<int64_t, 8>, int64_t,
                       bool, bool>;

Key key_of(int pass, const Tensor& x, const Tensor& w, const Conv2dParams& p, int64_t groups) {
  return {pass,
          static_cast<int>(x.dtype()),
          {x.size(0), x.size(1), x.size(2), x.size(3), w.size(0), w.size(1), w.size(2), w.size(3)},
          {p.kh, p.kw, p.sh, p.sw, p.ph, p.pw, p.dh, p.dw},
          {x.device().index, 0, 0, 0, 0, 0, 0, 0},
          groups,
          get_conv_allow_tf32(),
          pass > 0 && get_cudnn_deterministic()};
}

std::mutex g_cache_mu;
std::map<Key, int> g_algo_cache;  // the algorithm enum value

// Picks the first heuristic algorithm that is supported, fits the memory we allow and, where
// asked, is deterministic; caches it.
template <class Perf, class Query>
int pick_algo(const Key& key, bool need_deterministic, const Query& query) {
  {
    std::lock_guard<std::mutex> lk(g_cache_mu);
    auto it = g_algo_cache.find(key);
    if (it != g_algo_cache.end()) return it->second;
  }
  constexpr int kMax = 16;
  Perf perf[kMax];
  int n = 0;
  query(kMax, &n, perf);
  int algo = -1;
  for (int i = 0; i < n && algo < 0; ++i) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS) continue;
    if (need_deterministic && perf[i].determinism != CUDNN_DETERMINISTIC) continue;
    if (perf[i].memory > (size_t(1) << 31)) continue;  // 2 GiB of workspace at most
    algo = static_cast<int>(perf[i].algo);
  }
  TT_CHECK(algo >= 0, "conv2d (cuDNN): no suitable algorithm for this problem");
  std::lock_guard<std::mutex> lk(g_cache_mu);
  g_algo_cache[key] = algo;
  return algo;
}

Tensor workspace(size_t bytes, Device dev) {
  return Tensor::empty({static_cast<int64_t>(bytes > 0 ? bytes : 1)}, DType::UInt8, dev);
}

bool fits_int(std::initializer_list<int64_t> vs) {
  for (int64_t v : vs)
    if (v > INT_MAX) return false;
  return true;
}

// out = conv(x, w) (+ bias). Sets handled = false (and does nothing) where cuDNN can't take it.
void cudnn_conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dParams& p, int64_t groups,
                  const Tensor& out, bool& handled) {
  handled = false;
  if (!get_cudnn_enabled() || !fits_int({x.numel(), out.numel(), w.numel()})) return;
  const Device dev = x.device();
  DeviceGuard guard(dev);
  cudnnHandle_t h = handle_for(dev.index);
  Problem pr(x, w, out, p, groups);
  int algo = pick_algo<cudnnConvolutionFwdAlgoPerf_t>(
      key_of(0, x, w, p, groups), false, [&](int mx, int* n, cudnnConvolutionFwdAlgoPerf_t* perf) {
        TT_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(h, pr.x, pr.w, pr.conv, pr.y, mx, n, perf));
      });
  auto a = static_cast<cudnnConvolutionFwdAlgo_t>(algo);
  size_t ws_bytes = 0;
  TT_CUDNN_CHECK(cudnnGetConvolutionForwardWorkspaceSize(h, pr.x, pr.w, pr.conv, pr.y, a, &ws_bytes));
  Tensor ws = workspace(ws_bytes, dev);
  const double one_d = 1.0, zero_d = 0.0;
  const float one_f = 1.f, zero_f = 0.f;
  const bool dbl = x.dtype() == DType::Float64;
  const void* one = dbl ? static_cast<const void*>(&one_d) : static_cast<const void*>(&one_f);
  const void* zero = dbl ? static_cast<const void*>(&zero_d) : static_cast<const void*>(&zero_f);
  TT_CUDNN_CHECK(cudnnConvolutionForward(h, one, pr.x, x.data_ptr(), pr.w, w.data_ptr(), pr.conv, a, ws.data_ptr(),
                                         ws_bytes, zero, pr.y, out.data_ptr()));
  if (bias.defined())
    TT_CUDNN_CHECK(cudnnAddTensor(h, one, pr.bias, bias.data_ptr(), one, pr.y, out.data_ptr()));
  handled = true;
}

// gx = conv2d's input gradient, gw = its weight gradient, each only where defined.
void cudnn_conv2d_backward(const Tensor& go, const Tensor& x, const Tensor& w, const Conv2dParams& p,
                           int64_t groups, const Tensor& gx, const Tensor& gw, bool& handled) {
  handled = false;
  if (!get_cudnn_enabled() || !fits_int({x.numel(), go.numel(), w.numel()})) return;
  const Device dev = x.device();
  DeviceGuard guard(dev);
  cudnnHandle_t h = handle_for(dev.index);
  Problem pr(x, w, go, p, groups);
  const double one_d = 1.0, zero_d = 0.0;
  const float one_f = 1.f, zero_f = 0.f;
  const bool dbl = x.dtype() == DType::Float64;
  const void* one = dbl ? static_cast<const void*>(&one_d) : static_cast<const void*>(&one_f);
  const void* zero = dbl ? static_cast<const void*>(&zero_d) : static_cast<const void*>(&zero_f);
  if (gx.defined()) {
    int algo = pick_algo<cudnnConvolutionBwdDataAlgoPerf_t>(
        key_of(1, x, w, p, groups), get_cudnn_deterministic(), [&](int mx, int* n, cudnnConvolutionBwdDataAlgoPerf_t* perf) {
          TT_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, pr.w, pr.y, pr.conv, pr.x, mx, n, perf));
        });
    auto a = static_cast<cudnnConvolutionBwdDataAlgo_t>(algo);
    size_t ws_bytes = 0;
    TT_CUDNN_CHECK(cudnnGetConvolutionBackwardDataWorkspaceSize(h, pr.w, pr.y, pr.conv, pr.x, a, &ws_bytes));
    Tensor ws = workspace(ws_bytes, dev);
    TT_CUDNN_CHECK(cudnnConvolutionBackwardData(h, one, pr.w, w.data_ptr(), pr.y, go.data_ptr(), pr.conv, a,
                                                ws.data_ptr(), ws_bytes, zero, pr.x, gx.data_ptr()));
  }
  if (gw.defined()) {
    int algo = pick_algo<cudnnConvolutionBwdFilterAlgoPerf_t>(
        key_of(2, x, w, p, groups), get_cudnn_deterministic(), [&](int mx, int* n, cudnnConvolutionBwdFilterAlgoPerf_t* perf) {
          TT_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, pr.x, pr.y, pr.conv, pr.w, mx, n, perf));
        });
    auto a = static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo);
    size_t ws_bytes = 0;
    TT_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterWorkspaceSize(h, pr.x, pr.y, pr.conv, pr.w, a, &ws_bytes));
    Tensor ws = workspace(ws_bytes, dev);
    TT_CUDNN_CHECK(cudnnConvolutionBackwardFilter(h, one, pr.x, x.data_ptr(), pr.y, go.data_ptr(), pr.conv, a,
                                                  ws.data_ptr(), ws_bytes, zero, pr.w, gw.data_ptr()));
  }
  handled = true;
}

}  // namespace

TT_REGISTER_KERNEL(conv2d_direct, CUDA, cudnn_conv2d)
TT_REGISTER_KERNEL(conv2d_direct_backward, CUDA, cudnn_conv2d_backward)

int cudnn_version() { return static_cast<int>(cudnnGetVersion()); }

}  // namespace tt::cuda
#else
namespace tt::cuda {
int cudnn_version() { return 0; }
}  // namespace tt::cuda
#endif  // TINYTORCH_WITH_CUDNN
