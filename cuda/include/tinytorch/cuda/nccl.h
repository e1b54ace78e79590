#pragma once
// NCCL communicators for tinytorch.distributed's nccl backend (built only where CMake finds NCCL,
// which defines TINYTORCH_WITH_NCCL). Each communicator owns one stream on its device; a
// collective waits for the current compute stream (CUDA event), runs on that stream, records a
// completion event, and marks its tensors as used on the stream (record_stream) so the caching
// allocator does not hand their memory out before the collective is done.
#ifdef TINYTORCH_WITH_NCCL
#include <cuda_runtime.h>
#include <memory>
#include <mutex>
#include <string>
#include "tinytorch/tensor.h"

namespace tt::cuda {

std::string nccl_unique_id();   // ncclGetUniqueId: 128 opaque bytes to share through the store
int nccl_version();

// Completion of one collective.
class NcclWork {
 public:
  NcclWork(int device, cudaEvent_t done) : device_(device), done_(done) {}
  ~NcclWork();
  NcclWork(const NcclWork&) = delete;
  NcclWork& operator=(const NcclWork&) = delete;
  bool query() const;   // true once the collective finished on the GPU
  void wait() const;    // the current stream of the device waits for the collective (no host sync)
  void synchronize() const;   // host waits

 private:
  int device_;
  cudaEvent_t done_;
};

// ops: 0 sum, 1 product, 2 max, 3 min, 4 avg (ncclRedOp_t values). Peers/roots are group ranks.
class NcclComm {
 public:
  NcclComm(const std::string& unique_id, int nranks, int rank, int device);
  ~NcclComm();
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;

  std::shared_ptr<NcclWork> all_reduce(Tensor& t, int op);
  std::shared_ptr<NcclWork> broadcast(Tensor& t, int root);
  std::shared_ptr<NcclWork> reduce(Tensor& t, int root, int op);
  std::shared_ptr<NcclWork> all_gather(const Tensor& in, Tensor& out);
  std::shared_ptr<NcclWork> reduce_scatter(const Tensor& in, Tensor& out, int op);
  std::shared_ptr<NcclWork> send(const Tensor& t, int peer);
  std::shared_ptr<NcclWork> recv(Tensor& t, int peer);

  void abort();                     // ncclCommAbort: unblocks kernels stuck waiting for peers
  void destroy();                   // ncclCommDestroy (no-op after abort)
  std::string async_error();        // "" while healthy
  int device() const { return device_; }
  int rank() const { return rank_; }
  int size() const { return nranks_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int nranks_, rank_, device_;
  std::mutex mu_;
  bool aborted_ = false;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t ready_ = nullptr;   // compute stream -> NCCL stream ordering, re-recorded per launch
  cudaStream_t begin(const Tensor& t, const char* what);       // checks, orders after compute
  std::shared_ptr<NcclWork> end(cudaStream_t s, std::initializer_list<const Tensor*> ts);
};

}  // namespace tt::cuda
#endif  // TINYTORCH_WITH_NCCL
