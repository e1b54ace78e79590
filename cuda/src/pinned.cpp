// Page-locked host memory for fast and asynchronous host<->device copies (Tensor.pin_memory()),
// cached as PyTorch's CachingHostAllocator: cudaHostAlloc is slow and cudaFreeHost synchronizes
// the device, while DataLoader(pin_memory=True) pins every batch. A freed block is reused for a
// request of the same size class (the next power of two) once the asynchronous copies that read
// it have finished: each non_blocking copy from a block records an event on its stream.
#include "tinytorch/cuda/pinned.h"
#include <algorithm>
#include <deque>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>
#include "tinytorch/cuda/common.h"

namespace tt::cuda {
namespace {

struct HostBlock {
  size_t size = 0;
  bool in_use = false;
  std::vector<cudaEvent_t> events;  // copies still reading it (recorded by record_host_use)
};

class PinnedCache final : public Allocator {
 public:
  void* allocate(size_t nbytes, Device) override {
    if (nbytes == 0) return nullptr;
    const size_t size = size_class(nbytes);
    std::lock_guard<std::mutex> lock(mutex_);
    retire_pending();
    auto it = free_.find(size);
    if (it != free_.end()) {
      void* p = it->second;
      free_.erase(it);
      blocks_[p].in_use = true;
      return p;
    }
    TT_CHECK(device_count() > 0, "pin_memory: no CUDA GPU is available on this machine");
    void* p = nullptr;
    cudaError_t e = cudaHostAlloc(&p, size, cudaHostAllocDefault);
    if (e != cudaSuccess) {  // out of page-locked memory: give the cached blocks back, then retry
      cudaGetLastError();
      release_free();
      TT_CUDA_CHECK(cudaHostAlloc(&p, size, cudaHostAllocDefault));
    }
    blocks_[p] = HostBlock{size, true, {}};
    return p;
  }

  void deallocate(void* p, Device) override {  // called from destructors: never throws
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = blocks_.find(p);
    if (it == blocks_.end()) return;
    it->second.in_use = false;
    if (it->second.events.empty()) {
      free_.emplace(it->second.size, p);
    } else {
      pending_.push_back(p);
    }
  }

  // A copy on `stream` reads the block at `p` (the start of a pinned storage): it must not be
  // handed out again before that copy is done.
  void record_use(void* p, cudaStream_t stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = blocks_.find(p);
    if (it == blocks_.end() || !it->second.in_use) return;  // not ours (e.g. pageable memory)
    cudaEvent_t e = nullptr;
    TT_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    cudaError_t err = cudaEventRecord(e, stream);
    if (err != cudaSuccess) {
      cudaEventDestroy(e);
      TT_CUDA_CHECK(err);
    }
    it->second.events.push_back(e);
  }

  bool owns(void* p) {
    std::lock_guard<std::mutex> lock(mutex_);
    return blocks_.count(p) > 0;
  }

 private:
  static size_t size_class(size_t n) {
    size_t s = 512;
    while (s < n) s <<= 1;
    return s;
  }

  // Freed blocks whose copies have all finished become reusable.
  void retire_pending() {
    for (auto it = pending_.begin(); it != pending_.end();) {
      HostBlock& b = blocks_[*it];
      auto done = [](cudaEvent_t e) {
        cudaError_t q = cudaEventQuery(e);
        if (q == cudaErrorNotReady) {
          cudaGetLastError();
          return false;
        }
        cudaGetLastError();  // an error ends the wait too: the copy will never read the block again
        cudaEventDestroy(e);
        return true;
      };
      b.events.erase(std::remove_if(b.events.begin(), b.events.end(), done), b.events.end());
      if (b.events.empty()) {
        free_.emplace(b.size, *it);
        it = pending_.erase(it);
      } else {
        ++it;
      }
    }
  }

  void release_free() {
    for (auto& [size, p] : free_) {
      cudaFreeHost(p);
      blocks_.erase(p);
    }
    free_.clear();
  }

  std::mutex mutex_;
  std::unordered_map<void*, HostBlock> blocks_;  // every block cudaHostAlloc gave us
  std::multimap<size_t, void*> free_;            // size class -> reusable block
  std::deque<void*> pending_;                    // freed, waiting for their copies
};

PinnedCache& cache() {
  static PinnedCache* c = new PinnedCache();  // never destroyed: outlives every tensor
  return *c;
}

}  // namespace

Tensor pin_memory(const Tensor& t) {
  TT_CHECK(t.device().is_cpu(), "pin_memory: cannot pin '", t.describe(), "': only dense CPU tensors can be pinned");
  auto storage = std::make_shared<Storage>(static_cast<size_t>(t.numel()) * t.itemsize(), Device(), &cache());
  Tensor out(std::move(storage), t.shape(), contiguous_strides(t.shape()), 0, t.dtype());
  out.copy_(t);
  return out;
}

bool is_pinned(const Tensor& t) {
  if (!t.device().is_cpu() || device_count() == 0 || !t.storage()->data()) return false;
  if (cache().owns(t.storage()->data())) return true;
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, t.storage()->data()) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attr.type == cudaMemoryTypeHost;
}

void record_host_use(const Tensor& t, cudaStream_t stream) {
  if (t.device().is_cpu() && t.storage()->data()) cache().record_use(t.storage()->data(), stream);
}

}  // namespace tt::cuda
