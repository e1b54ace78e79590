// CUDA graphs: capture, replay and graph-safe random numbers (see tinytorch/cuda/graph.h).
#include "tinytorch/cuda/graph.h"
#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>
#include "tinytorch/cuda/allocator.h"
#include "tinytorch/cuda/common.h"
#include "tinytorch/ops/random.h"

namespace tt::cuda {
namespace {

// The captures under way, for the random kernels and the host-sync checks.
struct CaptureRecord {
  int device;
  cudaStream_t stream;
  uint64_t* rng_state;
  uint64_t seed, base;
};

std::atomic<int> captures_under_way{0};
std::mutex records_mutex;
std::vector<CaptureRecord>& records() {
  static std::vector<CaptureRecord> r;
  return r;
}

// state: (seed, offset) of the replay about to launch
__global__ void set_philox_state_kernel(uint64_t* state, uint64_t seed, uint64_t offset) {
  state[0] = seed;
  state[1] = offset;
}

bool is_default_stream(cudaStream_t s) { return s == nullptr || s == cudaStreamLegacy || s == cudaStreamPerThread; }

Generator& cuda_generator(int device) { return default_generator(Device(DeviceType::CUDA, device)); }

}  // namespace

CudaGraph::~CudaGraph() {
  abort_capture();
  try {
    reset();
  } catch (...) {  // destructors never throw
  }
}

void CudaGraph::capture_begin(uint64_t pool, const std::string& mode) {
  TT_CHECK(!capturing_ && !exec_, "CUDAGraph.capture_begin: this graph already holds a capture; call reset() first");
  cudaStreamCaptureMode m = cudaStreamCaptureModeGlobal;
  if (mode == "global") m = cudaStreamCaptureModeGlobal;
  else if (mode == "thread_local") m = cudaStreamCaptureModeThreadLocal;
  else if (mode == "relaxed") m = cudaStreamCaptureModeRelaxed;
  else TT_CHECK_VALUE(false, "CUDAGraph.capture_begin: capture_error_mode must be 'global', 'thread_local' or "
                      "'relaxed', got '", mode, "'");
  device_ = current_device();
  stream_ = current_stream(device_);
  TT_CHECK(!is_default_stream(stream_), "CUDAGraph.capture_begin: cannot capture the default stream; capture "
           "inside `with tinytorch.cuda.graph(g):` (which uses a side stream) or `with tinytorch.cuda.stream(s):`");
  // The replay's RNG state lives outside the pool (allocated before routing starts).
  rng_state_ = Tensor::empty({2}, DType::Int64, Device(DeviceType::CUDA, device_));
  auto [seed, offset] = cuda_generator(device_).get_state();
  rng_base_ = offset;
  if (pool == 0) {
    pool_ = create_graph_pool();
  } else {
    retain_graph_pool(pool);
    pool_ = pool;
  }
  begin_allocate_to_pool(device_, stream_, pool_);
  {
    std::lock_guard<std::mutex> lock(records_mutex);
    records().push_back({device_, stream_, reinterpret_cast<uint64_t*>(rng_state_.data_ptr()), seed, offset});
  }
  captures_under_way += 1;
  capturing_ = true;
  cudaError_t err = cudaStreamBeginCapture(stream_, m);
  if (err != cudaSuccess) {
    cudaGetLastError();
    abort_capture();
    TT_CUDA_CHECK(err);
  }
}

void CudaGraph::unregister() noexcept {
  end_allocate_to_pool(device_, stream_);
  {
    std::lock_guard<std::mutex> lock(records_mutex);
    auto& r = records();
    r.erase(std::remove_if(r.begin(), r.end(),
                           [&](const CaptureRecord& c) { return c.device == device_ && c.stream == stream_; }),
            r.end());
  }
  captures_under_way -= 1;
  capturing_ = false;
}

void CudaGraph::capture_end() {
  TT_CHECK(capturing_, "CUDAGraph.capture_end: no capture is under way (call capture_begin first)");
  DeviceGuard guard(device_);
  cudaGraph_t graph = nullptr;
  cudaError_t err = cudaStreamEndCapture(stream_, &graph);
  unregister();
  rng_increment_ = cuda_generator(device_).get_state().second - rng_base_;
  if (err != cudaSuccess || graph == nullptr) {
    cudaGetLastError();
    if (graph) cudaGraphDestroy(graph);
    release_graph_pool(pool_);
    pool_ = 0;
    throw std::runtime_error(str_cat(
        "CUDA graph capture failed (", cudaGetErrorString(err), "): an operation that is not allowed during "
        "capture ran while this stream was capturing: a host synchronization (.item(), .cpu(), .numpy(), "
        "print(tensor), tinytorch.cuda.synchronize()), a blocking copy, work on the legacy default stream, or a "
        "capture_error_mode='global' violation from another thread. See docs/cuda_graphs.md."));
  }
  err = cudaGraphInstantiate(&exec_, graph, 0);
  cudaGraphDestroy(graph);
  if (err != cudaSuccess) {
    exec_ = nullptr;
    release_graph_pool(pool_);
    pool_ = 0;
    TT_CUDA_CHECK(err);
  }
}

void CudaGraph::abort_capture() noexcept {
  if (!capturing_) return;
  cudaGraph_t graph = nullptr;
  cudaStreamEndCapture(stream_, &graph);
  if (graph) cudaGraphDestroy(graph);
  cudaGetLastError();
  unregister();
  release_graph_pool(pool_);
  pool_ = 0;
}

void CudaGraph::replay() {
  TT_CHECK(!capturing_, "CUDAGraph.replay: the graph is still being captured (call capture_end first)");
  TT_CHECK(exec_, "CUDAGraph.replay: the graph holds no capture (capture it first; reset() discards it)");
  DeviceGuard guard(device_);
  cudaStream_t stream = current_stream(device_);
  if (rng_increment_ > 0) {  // this replay's random numbers: the next counters of the generator
    PhiloxState st = cuda_generator(device_).reserve(rng_increment_);
    set_philox_state_kernel<<<1, 1, 0, stream>>>(reinterpret_cast<uint64_t*>(rng_state_.data_ptr()), st.seed,
                                                 st.offset);
    TT_CUDA_KERNEL_CHECK();
  }
  TT_CUDA_CHECK(cudaGraphLaunch(exec_, stream));
}

void CudaGraph::reset() {
  TT_CHECK(!capturing_, "CUDAGraph.reset: the graph is being captured (end the capture first)");
  if (exec_) {
    DeviceGuard guard(device_);
    if (captures_under_way == 0) cudaDeviceSynchronize();  // in-flight replays still use the pool
    cudaGraphExecDestroy(exec_);
    exec_ = nullptr;
  }
  if (pool_) {
    release_graph_pool(pool_);
    pool_ = 0;
  }
  rng_increment_ = 0;
  rng_state_ = Tensor();
}

uint64_t CudaGraph::pool() const {
  TT_CHECK(pool_ != 0, "CUDAGraph.pool: the graph has no memory pool (call it after capture_begin)");
  return pool_;
}

GraphPhilox graph_philox(int device, const PhiloxState& st, uint64_t n, const char* op) {
  if (captures_under_way.load(std::memory_order_relaxed) == 0) return {};
  cudaStream_t stream = current_stream(device);
  std::lock_guard<std::mutex> lock(records_mutex);
  for (const CaptureRecord& r : records()) {
    if (r.device != device || r.stream != stream) continue;
    auto [seed, offset] = cuda_generator(device).get_state();
    TT_CHECK(seed == r.seed && st.seed == r.seed && offset == st.offset + n && st.offset >= r.base, op,
             ": random numbers inside a CUDA graph capture must come from the device's default generator, unseeded "
             "during the capture (a generator= argument or manual_seed inside the capture is not graph-safe)");
    return {r.rng_state, st.offset - r.base};
  }
  return {};
}

bool is_current_stream_capturing(int device) {
  if (captures_under_way.load(std::memory_order_relaxed) == 0) return false;
  cudaStream_t stream = current_stream(device);
  if (is_default_stream(stream)) return false;
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return status != cudaStreamCaptureStatusNone;
}

void check_not_capturing(int device, const char* what, const char* reason) {
  if (!is_current_stream_capturing(device)) return;
  if (reason) throw std::runtime_error(str_cat(what, " is not supported inside a CUDA graph capture: ", reason,
                                               " (see docs/cuda_graphs.md)"));
  throw std::runtime_error(str_cat(
      what, " is not allowed while a CUDA graph is being captured: a graph holds GPU work only, not host "
      "synchronizations or copies between host and device memory. Move it out of the captured region, or keep its "
      "data in device tensors (see docs/cuda_graphs.md)"));
}

}  // namespace tt::cuda
