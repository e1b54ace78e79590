// NCCL communicators (see tinytorch/cuda/nccl.h). Compiled to nothing without NCCL.
#ifdef TINYTORCH_WITH_NCCL
#include "tinytorch/cuda/nccl.h"

#include <nccl.h>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include "tinytorch/cuda/allocator.h"
#include "tinytorch/cuda/common.h"

namespace tt::cuda {

namespace {

[[noreturn]] void throw_nccl(ncclResult_t r, const char* expr, ncclComm_t comm) {
  std::ostringstream os;
  os << "NCCL error in " << expr << ": " << ncclGetErrorString(r);
  const char* last = ncclGetLastError(comm);
  if (last && *last) os << " (" << last << ")";
  throw std::runtime_error(os.str());
}

#define TT_NCCL_CHECK(EXPR, COMM)                                   \
  do {                                                              \
    ncclResult_t tt_r_ = (EXPR);                                    \
    if (tt_r_ != ncclSuccess && tt_r_ != ncclInProgress)            \
      throw_nccl(tt_r_, #EXPR, COMM);                               \
  } while (0)

ncclDataType_t nccl_dtype(DType d) {
  switch (d) {
    case DType::Bool: return ncclUint8;
    case DType::UInt8: return ncclUint8;
    case DType::Int8: return ncclInt8;
    case DType::UInt32: return ncclUint32;
    case DType::UInt64: return ncclUint64;
    case DType::Int16: case DType::UInt16: break;  // NCCL has no 16-bit integers
    case DType::Int32: return ncclInt32;
    case DType::Int64: return ncclInt64;
    case DType::Float16: return ncclFloat16;
    case DType::BFloat16: return ncclBfloat16;
    case DType::Float32: return ncclFloat32;
    case DType::Float64: return ncclFloat64;
  }
  throw std::invalid_argument("NCCL: unsupported dtype");
}

ncclRedOp_t nccl_op(int op, DType d) {
  TT_CHECK_VALUE(op >= 0 && op <= 4, "NCCL: unknown reduce op ", op);
  if (d == DType::Bool) {   // logical or / and on 0-1 bytes, as PyTorch
    TT_CHECK_VALUE(op != 4, "ReduceOp.AVG is not supported for bool tensors");
    return (op == 0 || op == 2) ? ncclMax : ncclMin;
  }
  return static_cast<ncclRedOp_t>(op);
}

}  // namespace

std::string nccl_unique_id() {
  ncclUniqueId id;
  TT_NCCL_CHECK(ncclGetUniqueId(&id), nullptr);
  return std::string(id.internal, sizeof(id.internal));
}

int nccl_version() {
  int v = 0;
  ncclGetVersion(&v);
  return v;
}

NcclWork::~NcclWork() {
  if (done_) cudaEventDestroy(done_);
}

bool NcclWork::query() const {
  cudaError_t e = cudaEventQuery(done_);
  if (e == cudaErrorNotReady) {
    cudaGetLastError();
    return false;
  }
  TT_CUDA_CHECK(e);
  return true;
}

void NcclWork::wait() const {
  DeviceGuard g(device_);
  TT_CUDA_CHECK(cudaStreamWaitEvent(current_stream(device_), done_, 0));
}

void NcclWork::synchronize() const { TT_CUDA_CHECK(cudaEventSynchronize(done_)); }

struct NcclComm::Impl {
  ncclComm_t comm = nullptr;
};

NcclComm::NcclComm(const std::string& unique_id, int nranks, int rank, int device)
    : impl_(new Impl), nranks_(nranks), rank_(rank), device_(device) {
  TT_CHECK_VALUE(unique_id.size() == NCCL_UNIQUE_ID_BYTES, "NCCL: the unique id must have ", NCCL_UNIQUE_ID_BYTES,
                 " bytes, got ", unique_id.size());
  TT_CHECK_VALUE(rank >= 0 && rank < nranks, "NCCL: rank ", rank, " out of range for ", nranks, " ranks");
  check_device_index(device, "NcclComm");
  DeviceGuard g(device);
  ncclUniqueId id;
  std::memcpy(id.internal, unique_id.data(), NCCL_UNIQUE_ID_BYTES);
  // NVLink SHARP / multicast stays at NCCL's default: NCCL_NVLS_ENABLE is never set here.
  TT_NCCL_CHECK(ncclCommInitRank(&impl_->comm, nranks, id, rank), nullptr);
  int lo = 0, hi = 0;
  TT_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
  TT_CUDA_CHECK(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking, hi));
  TT_CUDA_CHECK(cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming));
}

NcclComm::~NcclComm() {
  try {
    destroy();
  } catch (...) {
  }
  if (ready_) cudaEventDestroy(ready_);
  // Tensors the collectives used may outlive the communicator (a rank crashed at exit when their
  // free recorded an event on the destroyed stream).
  destroy_stream(stream_, !aborted_);
}

void NcclComm::destroy() {
  std::lock_guard<std::mutex> lk(mu_);
  if (impl_->comm && !aborted_) {
    DeviceGuard g(device_);
    ncclCommDestroy(impl_->comm);
  }
  impl_->comm = nullptr;
}

void NcclComm::abort() {
  // Not under mu_: a launch may be blocked inside NCCL waiting for peers, and abort unblocks it.
  ncclComm_t c = impl_->comm;
  if (c && !aborted_) {
    aborted_ = true;
    ncclCommAbort(c);
  }
}

std::string NcclComm::async_error() {
  if (aborted_) return "communicator aborted";
  if (!impl_->comm) return "";
  ncclResult_t r = ncclSuccess;
  if (ncclCommGetAsyncError(impl_->comm, &r) != ncclSuccess) return "ncclCommGetAsyncError failed";
  if (r == ncclSuccess || r == ncclInProgress) return "";
  std::string s = ncclGetErrorString(r);
  const char* last = ncclGetLastError(impl_->comm);
  if (last && *last) s += std::string(" (") + last + ")";
  return s;
}

cudaStream_t NcclComm::begin(const Tensor& t, const char* what) {
  TT_CHECK_VALUE(!aborted_, "NCCL ", what, ": the communicator was aborted (timeout or a failed peer)");
  TT_CHECK_VALUE(impl_->comm != nullptr, "NCCL ", what, ": the communicator was destroyed");
  TT_CHECK_VALUE(t.device().is_cuda() && t.device().index == device_, "NCCL ", what,
                 ": the tensor must be on cuda:", device_, ", got ", t.device().str());
  TT_CHECK_VALUE(t.is_contiguous(), "NCCL ", what, ": tensors must be contiguous");
  // One event serves every launch: cudaStreamWaitEvent takes the event's state when called.
  TT_CUDA_CHECK(cudaEventRecord(ready_, current_stream(device_)));
  TT_CUDA_CHECK(cudaStreamWaitEvent(stream_, ready_, 0));
  return stream_;
}

std::shared_ptr<NcclWork> NcclComm::end(cudaStream_t s, std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts)
    if (t->numel() > 0) record_stream(t->storage()->data(), s);
  cudaEvent_t done;
  TT_CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  TT_CUDA_CHECK(cudaEventRecord(done, s));
  return std::make_shared<NcclWork>(device_, done);
}

std::shared_ptr<NcclWork> NcclComm::all_reduce(Tensor& t, int op) {
  std::lock_guard<std::mutex> lk(mu_);
  DeviceGuard g(device_);
  cudaStream_t s = begin(t, "all_reduce");
  TT_NCCL_CHECK(ncclAllReduce(t.data_ptr(), t.data_ptr(), t.numel(), nccl_dtype(t.dtype()), nccl_op(op, t.dtype()),
                              impl_->comm, s), impl_->comm);
  return end(s, {&t});
}

std::shared_ptr<NcclWork> NcclComm::broadcast(Tensor& t, int root) {
  std::lock_guard<std::mutex> lk(mu_);
  DeviceGuard g(device_);
  cudaStream_t s = begin(t, "broadcast");
  TT_NCCL_CHECK(ncclBroadcast(t.data_ptr(), t.data_ptr(), t.numel(), nccl_dtype(t.dtype()), root, impl_->comm, s),
                impl_->comm);
  return end(s, {&t});
}

std::shared_ptr<NcclWork> NcclComm::reduce(Tensor& t, int root, int op) {
  std::lock_guard<std::mutex> lk(mu_);
  DeviceGuard g(device_);
  cudaStream_t s = begin(t, "reduce");
  TT_NCCL_CHECK(ncclReduce(t.data_ptr(), t.data_ptr(), t.numel(), nccl_dtype(t.dtype()), nccl_op(op, t.dtype()), root,
                           impl_->comm, s), impl_->comm);
  return end(s, {&t});
}

std::shared_ptr<NcclWork> NcclComm::all_gather(const Tensor& in, Tensor& out) {
  std::lock_guard<std::mutex> lk(mu_);
  DeviceGuard g(device_);
  TT_CHECK_VALUE(out.numel() == in.numel() * nranks_ && out.dtype() == in.dtype(),
                 "NCCL all_gather: the output needs world_size x the input's elements and its dtype");
  begin(out, "all_gather");
  cudaStream_t s = begin(in, "all_gather");
  TT_NCCL_CHECK(ncclAllGather(in.data_ptr(), out.data_ptr(), in.numel(), nccl_dtype(in.dtype()), impl_->comm, s),
                impl_->comm);
  return end(s, {&in, &out});
}

std::shared_ptr<NcclWork> NcclComm::reduce_scatter(const Tensor& in, Tensor& out, int op) {
  std::lock_guard<std::mutex> lk(mu_);
  DeviceGuard g(device_);
  TT_CHECK_VALUE(in.numel() == out.numel() * nranks_ && out.dtype() == in.dtype(),
                 "NCCL reduce_scatter: the input needs world_size x the output's elements and its dtype");
  begin(out, "reduce_scatter");
  cudaStream_t s = begin(in, "reduce_scatter");
  TT_NCCL_CHECK(ncclReduceScatter(in.data_ptr(), out.data_ptr(), out.numel(), nccl_dtype(in.dtype()),
                                  nccl_op(op, in.dtype()), impl_->comm, s), impl_->comm);
  return end(s, {&in, &out});
}

std::shared_ptr<NcclWork> NcclComm::send(const Tensor& t, int peer) {
  std::lock_guard<std::mutex> lk(mu_);
  DeviceGuard g(device_);
  TT_CHECK_VALUE(peer >= 0 && peer < nranks_ && peer != rank_, "NCCL send: invalid peer ", peer);
  cudaStream_t s = begin(t, "send");
  TT_NCCL_CHECK(ncclSend(t.data_ptr(), t.numel(), nccl_dtype(t.dtype()), peer, impl_->comm, s), impl_->comm);
  return end(s, {&t});
}

std::shared_ptr<NcclWork> NcclComm::recv(Tensor& t, int peer) {
  std::lock_guard<std::mutex> lk(mu_);
  DeviceGuard g(device_);
  TT_CHECK_VALUE(peer >= 0 && peer < nranks_ && peer != rank_, "NCCL recv: invalid peer ", peer);
  cudaStream_t s = begin(t, "recv");
  TT_NCCL_CHECK(ncclRecv(t.data_ptr(), t.numel(), nccl_dtype(t.dtype()), peer, impl_->comm, s), impl_->comm);
  return end(s, {&t});
}

}  // namespace tt::cuda
#endif  // TINYTORCH_WITH_NCCL
