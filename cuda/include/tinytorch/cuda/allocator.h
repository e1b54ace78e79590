#pragma once
// The CUDA caching allocator: blocks rounded to 512 bytes, small requests (<= 1 MiB) carved from
// 2 MiB segments and large ones from their own segments (rounded to 2 MiB), best-fit reuse of
// freed blocks per (device, stream), splitting of oversized blocks and merging of free
// neighbours. A steady-state training step therefore calls no cudaMalloc.
#include <cstddef>
#include <cstdint>
#include <cuda_runtime.h>

namespace tt::cuda {

struct MemoryStats {
  int64_t allocated = 0;       // bytes in blocks handed out
  int64_t max_allocated = 0;
  int64_t reserved = 0;        // bytes held from cudaMalloc (segments)
  int64_t max_reserved = 0;
  int64_t num_mallocs = 0;     // cudaMalloc calls so far
  int64_t num_frees = 0;       // cudaFree calls so far (empty_cache, OOM retry)
};

MemoryStats memory_stats(int device);
void reset_peak_memory_stats(int device);
void empty_cache();                                  // returns unused segments to the driver
void record_stream(void* ptr, cudaStream_t stream);  // ptr is also used on `stream`
// Destroys a stream that tensors may still be recorded on (record_stream) or allocated on: waits
// for its work (unless `wait` is false: an aborted NCCL stream), makes the allocator forget it
// (a later free must not record an event on a destroyed stream), then destroys it. Never throws.
void destroy_stream(cudaStream_t stream, bool wait = true);
void install_caching_allocator();                    // registers it for DeviceType::CUDA

// Private memory pools of CUDA graphs (graph.cu). A pool is created with one use; graphs and
// pool handles sharing it retain/release it. While (device, stream) captures into a pool, every
// allocation on that stream comes from the pool and its blocks never serve other tensors; blocks
// of the general cache freed meanwhile are held until the pool dies. A dead pool's free segments
// are returned to the driver by empty_cache().
uint64_t create_graph_pool();
void retain_graph_pool(uint64_t id);   // raises if the pool no longer exists
void release_graph_pool(uint64_t id);
bool graph_pool_is_live(uint64_t id);
void begin_allocate_to_pool(int device, cudaStream_t stream, uint64_t pool);
void end_allocate_to_pool(int device, cudaStream_t stream);

}  // namespace tt::cuda
