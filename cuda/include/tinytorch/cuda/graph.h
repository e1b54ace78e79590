#pragma once
// CUDA graphs (torch.cuda.CUDAGraph): capture of the work launched on the current stream into a
// cudaGraph, replayed with one launch. Allocations during a capture come from the graph's private
// memory pool (allocator.h); random kernels captured read their Philox (seed, offset) from a
// device buffer that every replay refreshes from the default generator, so each replay draws new
// numbers as eager code would; host synchronizations and host copies raise a RuntimeError naming
// the operation.
#include <cuda_runtime.h>
#include <cstdint>
#include <string>
#include "tinytorch/kernels/random.h"
#include "tinytorch/tensor.h"

namespace tt::cuda {

class CudaGraph {
 public:
  CudaGraph() = default;
  ~CudaGraph();
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;

  // Starts capturing the current stream (not the legacy default stream) into this graph. pool:
  // a pool id to share (0: a new private pool); mode: "global", "thread_local" or "relaxed".
  void capture_begin(uint64_t pool, const std::string& mode);
  void capture_end();
  // Ends a capture that an exception interrupted, discarding it (never throws).
  void abort_capture() noexcept;
  void replay();                // launches the graph on the current stream
  void reset();                 // frees the graph; its pool is released
  uint64_t pool() const;        // the private pool's id (after capture_begin)
  bool capturing() const { return capturing_; }

 private:
  void unregister() noexcept;

  int device_ = -1;
  cudaStream_t stream_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  uint64_t pool_ = 0;
  bool capturing_ = false;
  Tensor rng_state_;            // int64 (2,): the Philox (seed, offset) a replay draws from
  uint64_t rng_base_ = 0;       // the default generator's offset when the capture began
  uint64_t rng_increment_ = 0;  // counters the captured random kernels use per replay
};

// A random kernel about to launch with state st (n counters) on `device`: where the current
// stream is capturing, the device buffer its kernel must read (seed, base offset) from and the
// offset within the graph (st.offset - base); buffer is null otherwise. Raises when the draw is
// not from the device's default generator (its offsets could not advance per replay).
struct GraphPhilox {
  const uint64_t* state = nullptr;
  uint64_t intragraph_offset = 0;
};
GraphPhilox graph_philox(int device, const PhiloxState& st, uint64_t n, const char* op);

// True when the current stream of `device` is being captured.
bool is_current_stream_capturing(int device);
// Raises a RuntimeError naming `what` when the current stream of `device` is being captured; the
// reason defaults to "a host synchronization or a copy between host and device".
void check_not_capturing(int device, const char* what, const char* reason = nullptr);

}  // namespace tt::cuda
