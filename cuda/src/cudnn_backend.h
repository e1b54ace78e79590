#pragma once
// Small RAII helpers over cuDNN's graph (backend) API, for conv_cudnn.cpp: the status check, one
// handle per (thread, device), a backend descriptor, and CUDA-event timing of candidate plans.
// Built only where the build found cuDNN (TINYTORCH_WITH_CUDNN).
#include <cudnn.h>
#include <algorithm>
#include <limits>
#include <stdexcept>
#include <unordered_map>
#include "tinytorch/cuda/common.h"

namespace tt::cuda {

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

inline cudnnHandle_t handle_for(int device) {
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

// A backend descriptor (RAII). set() takes one value or an array; finalize() may be tried.
class Desc {
 public:
  explicit Desc(cudnnBackendDescriptorType_t type) { TT_CUDNN_CHECK(cudnnBackendCreateDescriptor(type, &d_)); }
  ~Desc() {
    if (d_) cudnnBackendDestroyDescriptor(d_);
  }
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;
  cudnnBackendDescriptor_t get() const { return d_; }

  template <class V>
  Desc& set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, const V* values, int64_t n = 1) {
    TT_CUDNN_CHECK(cudnnBackendSetAttribute(d_, name, type, n, values));
    return *this;
  }
  Desc& set_desc(cudnnBackendAttributeName_t name, const Desc& other) {
    cudnnBackendDescriptor_t o = other.get();
    return set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, &o);
  }
  void finalize() { TT_CUDNN_CHECK(cudnnBackendFinalize(d_)); }
  bool try_finalize() { return cudnnBackendFinalize(d_) == CUDNN_STATUS_SUCCESS; }

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
};

// A CUDA event (RAII), for timing candidate plans.
struct Event {
  cudaEvent_t e = nullptr;
  Event() { TT_CUDA_CHECK(cudaEventCreate(&e)); }
  ~Event() {
    if (e) cudaEventDestroy(e);
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
};

// Milliseconds per call of run() (one warm-up call, then the best of three), +inf if it fails.
template <class Run>
float time_ms(cudaStream_t stream, Run&& run) {
  constexpr float kFailed = std::numeric_limits<float>::infinity();
  if (!run()) return kFailed;
  float best = kFailed;
  Event start, stop;
  for (int i = 0; i < 3; ++i) {
    TT_CUDA_CHECK(cudaEventRecord(start.e, stream));
    if (!run()) return kFailed;
    TT_CUDA_CHECK(cudaEventRecord(stop.e, stream));
    TT_CUDA_CHECK(cudaEventSynchronize(stop.e));
    float ms = 0;
    TT_CUDA_CHECK(cudaEventElapsedTime(&ms, start.e, stop.e));
    best = std::min(best, ms);
  }
  return best;
}

// Whether work queued on `stream` is being captured into a CUDA graph (nothing can be timed then).
inline bool capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus s = cudaStreamCaptureStatusNone;
  return cudaStreamIsCapturing(stream, &s) == cudaSuccess && s != cudaStreamCaptureStatusNone;
}

}  // namespace tt::cuda
