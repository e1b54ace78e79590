// Page-locked host memory for fast and asynchronous host<->device copies (Tensor.pin_memory()).
#include "tinytorch/cuda/pinned.h"
#include "tinytorch/cuda/common.h"

namespace tt::cuda {
namespace {

struct PinnedAllocator final : Allocator {
  void* allocate(size_t nbytes, Device) override {
    if (nbytes == 0) return nullptr;
    TT_CHECK(device_count() > 0, "pin_memory: no CUDA GPU is available on this machine");
    void* p = nullptr;
    TT_CUDA_CHECK(cudaHostAlloc(&p, nbytes, cudaHostAllocDefault));
    return p;
  }
  void deallocate(void* p, Device) override { cudaFreeHost(p); }
};

PinnedAllocator pinned_allocator;

}  // namespace

Tensor pin_memory(const Tensor& t) {
  TT_CHECK(t.device().is_cpu(), "pin_memory: cannot pin '", t.describe(), "': only dense CPU tensors can be pinned");
  auto storage = std::make_shared<Storage>(static_cast<size_t>(t.numel()) * t.itemsize(), Device(), &pinned_allocator);
  Tensor out(std::move(storage), t.shape(), contiguous_strides(t.shape()), 0, t.dtype());
  out.copy_(t);
  return out;
}

bool is_pinned(const Tensor& t) {
  if (!t.device().is_cpu() || device_count() == 0 || !t.storage()->data()) return false;
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, t.storage()->data()) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attr.type == cudaMemoryTypeHost;
}

}  // namespace tt::cuda
