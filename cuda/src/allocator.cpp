// The CUDA caching allocator (see tinytorch/cuda/allocator.h).
#include "tinytorch/cuda/allocator.h"
#include <algorithm>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <unordered_map>
#include <vector>
#include "tinytorch/cuda/common.h"
#include "tinytorch/storage.h"

namespace tt::cuda {
namespace {

constexpr size_t kRound = 512;                  // every block is a multiple of this
constexpr size_t kSmallLimit = size_t(1) << 20; // <= 1 MiB: a small request
constexpr size_t kSmallSegment = size_t(2) << 20;
constexpr size_t kLargeRound = size_t(2) << 20;

struct PrivatePool;

struct Block {
  int device;
  cudaStream_t stream;
  size_t size;
  void* ptr;
  bool allocated = false;
  bool small;
  PrivatePool* pool = nullptr;  // a CUDA graph's private pool, or null: the general cache
  Block* prev = nullptr;  // neighbours within the same cudaMalloc segment
  Block* next = nullptr;
  std::vector<cudaStream_t> other_streams;  // record_stream: used there too
};

struct PendingFree {  // a freed block waiting for work on other streams
  Block* block;       // still marked allocated, so neighbours don't merge into it
  std::vector<cudaEvent_t> events;
};

struct BlockLess {  // best fit: by stream, size, then address
  bool operator()(const Block* a, const Block* b) const {
    if (a->stream != b->stream) return a->stream < b->stream;
    if (a->size != b->size) return a->size < b->size;
    return a->ptr < b->ptr;
  }
};

using FreeSet = std::set<Block*, BlockLess>;

struct DeviceState {
  FreeSet small_free, large_free;
  MemoryStats stats;
};

// The memory of CUDA graphs (graph.cu): every allocation made on a capturing stream comes from
// its capture's pool, and its blocks (freed or not) only ever serve that pool, so a replay finds
// its addresses untouched by other tensors. Blocks of the general cache freed during a capture
// (the graph may read them) are held until the pool dies. A pool lives while graphs or handles
// use it; a dead pool's free segments go back to the driver at empty_cache().
struct PrivatePool {
  int use_count = 1;
  int64_t segments = 0;
  FreeSet small_free, large_free;
  std::vector<Block*> held;  // general blocks freed during a capture into this pool
};

struct CaptureRoute {  // allocations on (device, stream) go to pool while it captures
  int device;
  cudaStream_t stream;
  uint64_t pool;
};

// Makes potentially unsafe calls (cudaMalloc) legal while a capture runs in global mode, as
// PyTorch's allocator does: the graph keeps the addresses, replays allocate nothing.
class RelaxedCaptureMode {
 public:
  explicit RelaxedCaptureMode(bool active) : active_(active) {
    if (active_) cudaThreadExchangeStreamCaptureMode(&mode_);
  }
  ~RelaxedCaptureMode() {
    if (active_) cudaThreadExchangeStreamCaptureMode(&mode_);
  }
  RelaxedCaptureMode(const RelaxedCaptureMode&) = delete;
  RelaxedCaptureMode& operator=(const RelaxedCaptureMode&) = delete;

 private:
  bool active_;
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
};

class CachingAllocator final : public Allocator {
 public:
  void* allocate(size_t nbytes, Device device) override {
    if (nbytes == 0) return nullptr;
    check_device_index(device.index, "cuda allocate");
    std::lock_guard<std::mutex> lock(mutex_);
    // Events recorded during a capture must not be queried: pending frees wait until it ends.
    if (!pending_.empty() && captures_.empty()) process_pending(false);
    DeviceState& st = state(device.index);
    cudaStream_t stream = current_stream(device.index);
    size_t size = round_size(nbytes);
    bool small = size <= kSmallLimit;
    PrivatePool* priv = capture_pool(device.index, stream);
    FreeSet& pool = priv ? (small ? priv->small_free : priv->large_free) : (small ? st.small_free : st.large_free);
    Block key{device.index, stream, size, nullptr};
    auto it = pool.lower_bound(&key);
    Block* block = nullptr;
    if (it != pool.end() && (*it)->stream == stream) {
      block = *it;
      pool.erase(it);
    } else {
      size_t seg = small ? kSmallSegment : (size + kLargeRound - 1) / kLargeRound * kLargeRound;
      void* ptr = malloc_segment(device.index, seg, nbytes, st);
      block = new_block(device.index, stream, seg, ptr, small);
      block->pool = priv;
      if (priv) priv->segments += 1;
    }
    // split off the unused tail when it is worth keeping
    size_t remaining = block->size - size;
    if ((small && remaining >= kRound) || (!small && remaining > kSmallLimit)) {
      Block* rest = new_block(device.index, stream, remaining, static_cast<char*>(block->ptr) + size, small);
      rest->pool = block->pool;
      rest->prev = block;
      rest->next = block->next;
      if (block->next) block->next->prev = rest;
      block->next = rest;
      block->size = size;
      pool.insert(rest);
    }
    block->allocated = true;
    active_[block->ptr] = block;
    st.stats.allocated += static_cast<int64_t>(block->size);
    st.stats.max_allocated = std::max(st.stats.max_allocated, st.stats.allocated);
    return block->ptr;
  }

  void deallocate(void* ptr, Device) override {
    if (!ptr) return;
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = active_.find(ptr);
    if (it == active_.end()) return;
    Block* block = it->second;
    active_.erase(it);
    DeviceState& st = state(block->device);
    st.stats.allocated -= static_cast<int64_t>(block->size);
    if (!block->pool && !captures_.empty()) {
      // A graph being captured may read this block at replay: keep it until the graph dies.
      pools_.at(holding_pool(block->device))->held.push_back(block);
      return;
    }
    if (block->other_streams.empty() || !captures_.empty()) {
      // (during a capture, events on other streams can't be recorded or queried: the block is
      // one of the capture's own, reused only by that capture's stream-ordered work)
      block->other_streams.clear();
      free_block(block);
      return;
    }
    // Used on other streams too (e.g. an NCCL stream): the memory may be reused only once that
    // work is done. Record an event on each stream and keep the block out of the pools until the
    // events complete, rather than blocking the host here (which could wait on a peer process).
    DeviceGuard guard(block->device);
    PendingFree pf{block, {}};
    for (cudaStream_t s : block->other_streams) {  // called from destructors: never throw
      cudaEvent_t e = nullptr;
      if (cudaEventCreateWithFlags(&e, cudaEventDisableTiming) == cudaSuccess && cudaEventRecord(e, s) == cudaSuccess) {
        pf.events.push_back(e);
      } else {
        cudaGetLastError();
        if (e) cudaEventDestroy(e);
        cudaStreamSynchronize(s);
      }
    }
    block->other_streams.clear();
    pending_.push_back(std::move(pf));
  }

  void record_stream(void* ptr, cudaStream_t stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = active_.find(ptr);
    if (it == active_.end() || it->second->stream == stream) return;
    auto& others = it->second->other_streams;   // a long-lived buffer is recorded every step: keep one entry
    if (std::find(others.begin(), others.end(), stream) == others.end()) others.push_back(stream);
  }

  // `stream` is about to be destroyed and its work is done: no block may wait on it any more (an
  // event recorded on a destroyed stream is undefined behaviour).
  void forget_stream(cudaStream_t stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [ptr, block] : active_) {
      auto& others = block->other_streams;
      others.erase(std::remove(others.begin(), others.end(), stream), others.end());
    }
  }

  void empty_cache() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!captures_.empty()) return;  // cudaFree would invalidate the capture; nothing is lost
    process_pending(true);
    for (auto& [dev, st] : states_) release_free_segments(dev, *st);
  }

  // ---- private pools of CUDA graphs (graph.cu)
  uint64_t create_pool() {
    std::lock_guard<std::mutex> lock(mutex_);
    uint64_t id = next_pool_id_++;
    pools_.emplace(id, std::make_unique<PrivatePool>());
    return id;
  }

  void retain_pool(uint64_t id) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = pools_.find(id);
    TT_CHECK(it != pools_.end() && it->second->use_count > 0, "CUDA graph memory pool ", id,
             " does not exist (or every graph and handle using it was released)");
    it->second->use_count += 1;
  }

  void release_pool(uint64_t id) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = pools_.find(id);
    if (it == pools_.end() || it->second->use_count == 0) return;
    PrivatePool& p = *it->second;
    if (--p.use_count > 0) return;
    for (Block* b : p.held) free_block(b);  // the graph is gone: the general cache may reuse these
    p.held.clear();
    if (p.segments == 0) pools_.erase(it);
  }

  void begin_capture(int device, cudaStream_t stream, uint64_t pool) {
    std::lock_guard<std::mutex> lock(mutex_);
    TT_CHECK(pools_.count(pool), "begin_capture: unknown memory pool ", pool);
    for (const CaptureRoute& r : captures_)
      TT_CHECK(!(r.device == device && r.stream == stream), "CUDA graph capture: stream is already capturing");
    captures_.push_back({device, stream, pool});
  }

  void end_capture(int device, cudaStream_t stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    captures_.erase(std::remove_if(captures_.begin(), captures_.end(),
                                   [&](const CaptureRoute& r) { return r.device == device && r.stream == stream; }),
                    captures_.end());
  }

  bool pool_is_live(uint64_t id) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = pools_.find(id);
    return it != pools_.end() && it->second->use_count > 0;
  }

  MemoryStats stats(int device) {
    std::lock_guard<std::mutex> lock(mutex_);
    return state(device).stats;
  }

  void reset_peak(int device) {
    std::lock_guard<std::mutex> lock(mutex_);
    DeviceState& st = state(device);
    st.stats.max_allocated = st.stats.allocated;
    st.stats.max_reserved = st.stats.reserved;
  }

 private:
  static size_t round_size(size_t n) { return (n + kRound - 1) / kRound * kRound; }

  PrivatePool* capture_pool(int device, cudaStream_t stream) {
    for (const CaptureRoute& r : captures_)
      if (r.device == device && r.stream == stream) return pools_.at(r.pool).get();
    return nullptr;
  }

  // The pool of the capture a block freed now belongs to: the current stream's capture on the
  // block's device, else that device's first.
  uint64_t holding_pool(int device) {
    cudaStream_t cur = current_stream(device);
    for (const CaptureRoute& r : captures_)
      if (r.device == device && r.stream == cur) return r.pool;
    for (const CaptureRoute& r : captures_)
      if (r.device == device) return r.pool;
    return captures_.front().pool;
  }

  DeviceState& state(int device) {
    auto& p = states_[device];
    if (!p) p = std::make_unique<DeviceState>();
    return *p;
  }

  // Returns a block to its pool, merged with free neighbours of the same stream.
  void free_block(Block* block) {
    DeviceState& st = state(block->device);
    block->allocated = false;
    PrivatePool* priv = block->pool;
    FreeSet& pool = priv ? (block->small ? priv->small_free : priv->large_free)
                         : (block->small ? st.small_free : st.large_free);
    for (Block* nb : {block->prev, block->next}) {
      if (nb && !nb->allocated && nb->stream == block->stream) {
        pool.erase(nb);
        if (nb == block->prev) {
          nb->size += block->size;
          nb->next = block->next;
          if (block->next) block->next->prev = nb;
          blocks_.erase(block);
          block = nb;
        } else {
          block->size += nb->size;
          block->next = nb->next;
          if (nb->next) nb->next->prev = block;
          blocks_.erase(nb);
        }
      }
    }
    pool.insert(block);
  }

  // Frees the deferred blocks whose other-stream work has finished (all of them if `wait`).
  void process_pending(bool wait) {
    for (auto it = pending_.begin(); it != pending_.end();) {
      bool done = true;
      for (cudaEvent_t e : it->events) {
        cudaError_t r = wait ? cudaEventSynchronize(e) : cudaEventQuery(e);
        if (r == cudaErrorNotReady) {
          cudaGetLastError();
          done = false;
          break;
        }
      }
      if (!done) {
        ++it;
        continue;
      }
      for (cudaEvent_t e : it->events) cudaEventDestroy(e);
      free_block(it->block);
      it = pending_.erase(it);
    }
  }

  Block* new_block(int device, cudaStream_t stream, size_t size, void* ptr, bool small) {
    auto b = std::make_unique<Block>(Block{device, stream, size, ptr});
    b->small = small;
    Block* raw = b.get();
    blocks_.emplace(raw, std::move(b));
    return raw;
  }

  void* malloc_segment(int device, size_t size, size_t requested, DeviceState& st) {
    DeviceGuard guard(device);
    void* ptr = nullptr;
    cudaError_t err;
    {
      RelaxedCaptureMode relaxed(!captures_.empty());
      err = cudaMalloc(&ptr, size);
    }
    if (err == cudaErrorMemoryAllocation && captures_.empty()) {  // free the cache, retry once
      cudaGetLastError();
      process_pending(true);
      release_free_segments(device, st);
      err = cudaMalloc(&ptr, size);
    }
    if (err == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      size_t free_b = 0, total_b = 0;
      cudaMemGetInfo(&free_b, &total_b);
      throw OutOfMemoryError(str_cat(
          "CUDA out of memory. Tried to allocate ", mib(requested), " (segment ", mib(size), "). GPU ", device,
          " has a total capacity of ", mib(total_b), " of which ", mib(free_b), " is free. tinytorch has ",
          mib(st.stats.allocated), " allocated and ", mib(st.stats.reserved - st.stats.allocated),
          " reserved but unallocated (cached). Free tensors, then tinytorch.cuda.empty_cache() and retry."));
    }
    TT_CUDA_CHECK(err);
    st.stats.reserved += static_cast<int64_t>(size);
    st.stats.max_reserved = std::max(st.stats.max_reserved, st.stats.reserved);
    st.stats.num_mallocs += 1;
    return ptr;
  }

  // Frees every segment that is entirely one free block: the general cache's, and those of
  // dead graph pools (no graph or handle uses them any more).
  void release_free_segments(int device, DeviceState& st) {
    DeviceGuard guard(device);
    cudaDeviceSynchronize();
    auto release = [&](FreeSet& pool, PrivatePool* priv) {
      for (auto it = pool.begin(); it != pool.end();) {
        Block* b = *it;
        if (b->device == device && !b->prev && !b->next) {
          cudaFree(b->ptr);
          st.stats.reserved -= static_cast<int64_t>(b->size);
          st.stats.num_frees += 1;
          if (priv) priv->segments -= 1;
          it = pool.erase(it);
          blocks_.erase(b);
        } else {
          ++it;
        }
      }
    };
    release(st.small_free, nullptr);
    release(st.large_free, nullptr);
    for (auto it = pools_.begin(); it != pools_.end();) {
      PrivatePool& p = *it->second;
      if (p.use_count == 0) {
        release(p.small_free, &p);
        release(p.large_free, &p);
      }
      it = (p.use_count == 0 && p.segments == 0) ? pools_.erase(it) : std::next(it);
    }
  }

  static std::string mib(size_t bytes) { return str_cat(static_cast<double>(bytes) / (1 << 20), " MiB"); }

  std::mutex mutex_;
  std::unordered_map<int, std::unique_ptr<DeviceState>> states_;
  std::unordered_map<void*, Block*> active_;
  std::list<PendingFree> pending_;
  std::unordered_map<Block*, std::unique_ptr<Block>> blocks_;
  std::map<uint64_t, std::unique_ptr<PrivatePool>> pools_;
  std::vector<CaptureRoute> captures_;
  uint64_t next_pool_id_ = 1;
};

CachingAllocator& allocator() {
  static CachingAllocator* a = new CachingAllocator();  // never destroyed: outlives every tensor
  return *a;
}

}  // namespace

MemoryStats memory_stats(int device) { return allocator().stats(device); }
void reset_peak_memory_stats(int device) { allocator().reset_peak(device); }
void empty_cache() { allocator().empty_cache(); }
void record_stream(void* ptr, cudaStream_t stream) { allocator().record_stream(ptr, stream); }
void destroy_stream(cudaStream_t stream, bool wait) {
  if (!stream) return;
  if (wait) cudaStreamSynchronize(stream);
  allocator().forget_stream(stream);
  cudaStreamDestroy(stream);
}
void install_caching_allocator() { set_allocator(DeviceType::CUDA, &allocator()); }
uint64_t create_graph_pool() { return allocator().create_pool(); }
void retain_graph_pool(uint64_t id) { allocator().retain_pool(id); }
void release_graph_pool(uint64_t id) { allocator().release_pool(id); }
bool graph_pool_is_live(uint64_t id) { return allocator().pool_is_live(id); }
void begin_allocate_to_pool(int device, cudaStream_t stream, uint64_t pool) {
  allocator().begin_capture(device, stream, pool);
}
void end_allocate_to_pool(int device, cudaStream_t stream) { allocator().end_capture(device, stream); }

}  // namespace tt::cuda
