#pragma once
// Reference-counted memory block. Views share one Storage (and so one version counter).
#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include "tinytorch/device.h"

namespace tt {

// One allocator per device type; the CUDA library installs its caching allocator here.
struct Allocator {
  virtual ~Allocator() = default;
  virtual void* allocate(size_t nbytes, Device device) = 0;
  virtual void deallocate(void* ptr, Device device) = 0;
};
void set_allocator(DeviceType type, Allocator* allocator);
Allocator* get_allocator(DeviceType type);

class Storage {
 public:
  // Owns nbytes from the device's allocator (or from `allocator`, e.g. pinned host memory).
  Storage(size_t nbytes, Device device);
  Storage(size_t nbytes, Device device, Allocator* allocator);
  // Borrows memory kept alive by `owner` (e.g. a numpy array); released with it.
  Storage(void* data, size_t nbytes, Device device, std::shared_ptr<void> owner);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  // Bumped by every in-place write; autograd compares it with the value saved at record time.
  int64_t version() const { return version_.load(std::memory_order_relaxed); }
  void bump_version() { version_.fetch_add(1, std::memory_order_relaxed); }

 private:
  void* data_ = nullptr;
  size_t nbytes_ = 0;
  Device device_;
  Allocator* allocator_ = nullptr;    // null when borrowed
  std::shared_ptr<void> owner_;
  std::atomic<int64_t> version_{0};
};

}  // namespace tt
