#include "tinytorch/storage.h"
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <unordered_map>
#include "tinytorch/error.h"
#ifdef __linux__
#include <sys/mman.h>
#endif

namespace tt {
namespace {

[[noreturn]] void throw_oom(size_t nbytes) {
  throw std::runtime_error(str_cat("DefaultCPUAllocator: can't allocate memory: you tried to allocate ", nbytes,
                                   " bytes (", static_cast<double>(nbytes) / double(1 << 30), " GiB): out of memory"));
}

// 64-byte aligned host memory: whole cache lines, AVX-512 friendly.
// Buffers >= 4 MiB are 2 MiB-aligned and backed by transparent huge pages where the kernel
// allows (as numpy does). Buffers >= 128 KiB (which glibc would mmap and unmap each time) are
// kept in a small cache when freed: a training step
// allocates the same activation sizes every iteration, and fresh pages cost a page fault per
// 4 KiB (or a huge-page clear) on first touch, more than most kernels spend writing them.
class CpuAllocator final : public Allocator {
 public:
  void* allocate(size_t nbytes, Device) override {
    if (nbytes == 0) return nullptr;
    size_t rounded = (nbytes + 63) / 64 * 64;
#ifdef __linux__
    if (rounded >= kCacheMin) {
      const bool huge = rounded >= 2 * kHuge;
      const size_t align = huge ? kHuge : 4096;
      rounded = (rounded + align - 1) / align * align;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = cache_.find(rounded);
        if (it != cache_.end()) {
          void* p = it->second;
          cache_.erase(it);
          cached_bytes_ -= rounded;
          large_[p] = rounded;
          return p;
        }
      }
      void* p = std::aligned_alloc(align, rounded);
      if (!p) throw_oom(nbytes);
      if (huge) madvise(p, rounded, MADV_HUGEPAGE);  // advisory: failure is harmless
      std::lock_guard<std::mutex> lock(mutex_);
      large_[p] = rounded;
      return p;
    }
#endif
    void* p = std::aligned_alloc(64, rounded);
    if (!p) throw_oom(nbytes);
    return p;
  }

  void deallocate(void* p, Device) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = large_.find(p);
      if (it != large_.end()) {
        size_t size = it->second;
        large_.erase(it);
        if (cached_bytes_ + size <= kCacheLimit) {
          cache_.emplace(size, p);
          cached_bytes_ += size;
          return;
        }
      }
    }
    std::free(p);
  }

 private:
  static constexpr size_t kHuge = size_t(2) << 20;
  static constexpr size_t kCacheMin = size_t(128) << 10;  // glibc mmaps blocks this large
  static constexpr size_t kCacheLimit = size_t(512) << 20;
  std::mutex mutex_;
  std::unordered_map<void*, size_t> large_;   // live large blocks and their rounded sizes
  std::multimap<size_t, void*> cache_;        // freed large blocks by size
  size_t cached_bytes_ = 0;
};

// The meta device's tensors have no memory: their storage's data is null.
class MetaAllocator final : public Allocator {
 public:
  void* allocate(size_t, Device) override { return nullptr; }
  void deallocate(void*, Device) override {}
};

// Never destroyed: tensors freed during interpreter shutdown may still reach it.
CpuAllocator& cpu_allocator = *new CpuAllocator();
MetaAllocator meta_allocator;
Allocator* allocators[kNumDeviceTypes] = {&cpu_allocator, nullptr, &meta_allocator};

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
