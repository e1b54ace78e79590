// Device queries, the device guard, per-thread current streams, and CUDA error reporting.
#include <unordered_map>
#include "tinytorch/cuda/common.h"

namespace tt::cuda {

void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line) {
  std::string msg = str_cat("CUDA error: ", cudaGetErrorString(err), " (", cudaGetErrorName(err), ") in ", expr,
                            " at ", file, ":", line);
  if (err == cudaErrorAssert)
    msg += ". A device-side check failed (e.g. an index out of range); this CUDA context is now unusable, "
           "CPU work is unaffected.";
  if (err == cudaErrorMemoryAllocation) throw OutOfMemoryError(msg);
  throw std::runtime_error(msg);
}

int device_count() {
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      cudaGetLastError();  // clear the sticky "no driver" error
      return 0;
    }
    return n;
  }();
  return count;
}

void check_device_index(int index, const char* what) {
  int n = device_count();
  TT_CHECK(n > 0, what, ": no CUDA GPU is available on this machine (", Device(DeviceType::CUDA, index).str(),
           " was requested)");
  TT_CHECK(index >= 0 && index < n, what, ": invalid device ordinal cuda:", index, " (", n, " GPU(s) present)");
}

int current_device() {
  int d = 0;
  TT_CUDA_CHECK(cudaGetDevice(&d));
  return d;
}

void set_device(int index) {
  check_device_index(index, "set_device");
  TT_CUDA_CHECK(cudaSetDevice(index));
}

DeviceGuard::DeviceGuard(Device device) : DeviceGuard(device.index) {}

DeviceGuard::DeviceGuard(int index) {
  check_device_index(index, "cuda");
  TT_CUDA_CHECK(cudaGetDevice(&prev_));
  if (prev_ != index) TT_CUDA_CHECK(cudaSetDevice(index));
  else prev_ = -1;
}

DeviceGuard::~DeviceGuard() {
  if (prev_ >= 0) cudaSetDevice(prev_);
}

namespace {
thread_local std::unordered_map<int, cudaStream_t> current_streams;
}

cudaStream_t current_stream(int device) {
  auto it = current_streams.find(device);
  return it == current_streams.end() ? cudaStreamLegacy : it->second;
}

void set_current_stream(int device, cudaStream_t stream) { current_streams[device] = stream; }

}  // namespace tt::cuda
