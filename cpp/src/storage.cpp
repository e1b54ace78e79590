#include "tinytorch/storage.h"
#include <cstdlib>
#include <new>
#include "tinytorch/error.h"
#ifdef __linux__
#include <sys/mman.h>
#endif

namespace tt {
namespace {

// 64-byte aligned host memory: whole cache lines, AVX-512 friendly.
struct CpuAllocator final : Allocator {
  void* allocate(size_t nbytes, Device) override {
    if (nbytes == 0) return nullptr;
    size_t rounded = (nbytes + 63) / 64 * 64;
#ifdef __linux__
    // Large buffers: 2 MiB-aligned and backed by transparent huge pages where the kernel
    // allows (as numpy does); first-touch faults on 4 KiB pages otherwise cost more than
    // most kernels writing them.
    constexpr size_t kHuge = size_t(2) << 20;
    if (rounded >= 2 * kHuge) {
      rounded = (rounded + kHuge - 1) / kHuge * kHuge;
      void* p = std::aligned_alloc(kHuge, rounded);
      if (!p) throw std::runtime_error(str_cat("cpu: out of memory allocating ", nbytes, " bytes"));
      madvise(p, rounded, MADV_HUGEPAGE);  // advisory: failure is harmless
      return p;
    }
#endif
    void* p = std::aligned_alloc(64, rounded);
    if (!p) throw std::runtime_error(str_cat("cpu: out of memory allocating ", nbytes, " bytes"));
    return p;
  }
  void deallocate(void* p, Device) override { std::free(p); }
};

CpuAllocator cpu_allocator;
Allocator* allocators[kNumDeviceTypes] = {&cpu_allocator, nullptr};

}  // namespace

void set_allocator(DeviceType type, Allocator* allocator) { allocators[static_cast<int>(type)] = allocator; }

Allocator* get_allocator(DeviceType type) {
  Allocator* a = allocators[static_cast<int>(type)];
  if (!a) throw std::runtime_error(str_cat("no allocator for device ", Device(type).str(),
                                           ": tinytorch was built without it, or no such device is present"));
  return a;
}

Storage::Storage(size_t nbytes, Device device)
    : nbytes_(nbytes), device_(device), allocator_(get_allocator(device.type)) {
  data_ = allocator_->allocate(nbytes, device);
}

Storage::Storage(size_t nbytes, Device device, Allocator* allocator)
    : nbytes_(nbytes), device_(device), allocator_(allocator) {
  data_ = allocator_->allocate(nbytes, device);
}

Storage::Storage(void* data, size_t nbytes, Device device, std::shared_ptr<void> owner)
    : data_(data), nbytes_(nbytes), device_(device), owner_(std::move(owner)) {}

Storage::~Storage() {
  if (allocator_ && data_) allocator_->deallocate(data_, device_);
}

}  // namespace tt
