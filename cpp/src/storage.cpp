#include "tinytorch/storage.h"
#include <cstdlib>
#include <new>
#include "tinytorch/error.h"

namespace tt {
namespace {

// 64-byte aligned host memory: whole cache lines, AVX-512 friendly.
struct CpuAllocator final : Allocator {
  void* allocate(size_t nbytes, Device) override {
    if (nbytes == 0) return nullptr;
    size_t rounded = (nbytes + 63) / 64 * 64;
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

Storage::Storage(void* data, size_t nbytes, Device device, std::shared_ptr<void> owner)
    : data_(data), nbytes_(nbytes), device_(device), owner_(std::move(owner)) {}

Storage::~Storage() {
  if (allocator_ && data_) allocator_->deallocate(data_, device_);
}

}  // namespace tt
