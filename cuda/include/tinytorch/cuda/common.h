#pragma once
// Host-side CUDA helpers: error checks that throw with context, the device guard, the current
// stream per device, and launch sizing.
#include <cuda_runtime.h>
#include <stdexcept>
#include "tinytorch/device.h"
#include "tinytorch/error.h"

namespace tt::cuda {

// RuntimeError subclass raised when the caching allocator cannot satisfy a request.
struct OutOfMemoryError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line);

int device_count();          // 0 where there is no driver or GPU
int current_device();
void set_device(int index);
void check_device_index(int index, const char* what);

// Makes `device` current for the scope; restores the previous device after.
class DeviceGuard {
 public:
  explicit DeviceGuard(Device device);
  explicit DeviceGuard(int index);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int prev_ = -1;
};

// The stream kernels on `device` launch into (thread-local; the legacy default stream at first).
cudaStream_t current_stream(int device);
void set_current_stream(int device, cudaStream_t stream);

// Blocks of 256 threads; enough blocks to cover n with `per_thread` elements each, capped.
inline unsigned grid_for(int64_t n, int per_thread = 1, int threads = 256) {
  int64_t blocks = (n + int64_t(threads) * per_thread - 1) / (int64_t(threads) * per_thread);
  if (blocks < 1) blocks = 1;
  if (blocks > 65535LL * 8) blocks = 65535LL * 8;
  return static_cast<unsigned>(blocks);
}

}  // namespace tt::cuda

#define TT_CUDA_CHECK(EXPR)                                                               \
  do {                                                                                    \
    cudaError_t tt_err_ = (EXPR);                                                         \
    if (tt_err_ != cudaSuccess) ::tt::cuda::throw_cuda_error(tt_err_, #EXPR, __FILE__, __LINE__); \
  } while (0)

// After every kernel launch: configuration errors surface here, with the launch site.
#define TT_CUDA_KERNEL_CHECK() TT_CUDA_CHECK(cudaGetLastError())
