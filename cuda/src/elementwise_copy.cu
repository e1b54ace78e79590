// CUDA copy/cast (any dtypes and layouts), fill, and copies between devices.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cstring>
#include <optional>
#include "tinytorch/cuda/graph.h"
#include "tinytorch/cuda/loops.cuh"
#include "tinytorch/cuda/pinned.h"
#include "tinytorch/host_wait.h"
#include "tinytorch/kernels/elementwise.h"

namespace tt::cuda {
namespace {

template <class Dst, class Src>
struct CastOp {
  __device__ __forceinline__ Dst operator()(Src v) const {
    using M = opmath_t<Src>;
    M m = static_cast<M>(v);
    if constexpr (std::is_same_v<Dst, bool>) return m != M(0);
    else if constexpr (!std::is_same_v<opmath_t<Dst>, Dst>) return Dst(static_cast<float>(m));  // 16-/8-bit floats
    else return static_cast<Dst>(m);
  }
};

// A bool source is loaded as its byte and read as byte != 0 (loaded as bool, a byte of 2 would
// cast to 2): storage from outside (numpy, files) may hold bytes other than 0 and 1.
template <class Dst>
struct BoolByteCastOp {
  __device__ __forceinline__ Dst operator()(uint8_t v) const { return CastOp<Dst, bool>{}(v != 0); }
};

void cuda_copy(const Tensor& src, const Tensor& dst) {
  TT_DISPATCH_STORAGE(dst.dtype(), "copy_", [&] {
    using Dst = scalar_t;
    if (src.dtype() == DType::Bool) {
      gpu_unary<Dst, uint8_t>(src, dst, BoolByteCastOp<Dst>{});
      return;
    }
    TT_DISPATCH_STORAGE(src.dtype(), "copy_", [&] { gpu_unary<Dst, scalar_t>(src, dst, CastOp<Dst, scalar_t>{}); });
  });
}

template <class T>
struct FillOp {
  T v;
  __device__ __forceinline__ T operator()(T) const { return v; }
};

void cuda_fill(const Tensor& out, double value) {
  TT_DISPATCH_STORAGE(out.dtype(), "fill_", [&] {
    const scalar_t v = static_cast<scalar_t>(static_cast<opmath_t<scalar_t>>(value));
    gpu_unary<scalar_t, scalar_t>(out, out, FillOp<scalar_t>{v});
  });
}

// Copies between host and device, or between two GPUs. The fast path is one cudaMemcpyAsync of
// a dense block; other layouts or dtypes are staged through a dense temporary on one side.
void cuda_copy_across_devices(const Tensor& src, const Tensor& dst, bool non_blocking) {
  if (dst.numel() == 0) return;  // empty tensors may have all-zero strides: nothing to stage
  const Device gpu = dst.device().is_cuda() ? dst.device() : src.device();
  DeviceGuard guard(gpu);
  cudaStream_t stream = current_stream(gpu.index);
  bool dense = src.dtype() == dst.dtype() && src.is_contiguous() && dst.is_contiguous() &&
               src.shape() == dst.shape();
  if (!dense) {
    // Make src dense in dst's dtype on its own device, then copy, then scatter into dst's layout.
    Tensor s = src.shape() == dst.shape() ? src : src.expand(dst.shape());
    s = s.to(dst.dtype()).contiguous();
    Tensor tmp = Tensor::empty(dst.shape(), dst.dtype(), dst.device());
    cuda_copy_across_devices(s, tmp, false);
    dst.device().is_cuda() ? cuda_copy(tmp, dst) : copy_kernel[dst.device()](tmp, dst);
    return;
  }
  size_t bytes = static_cast<size_t>(src.numel()) * src.itemsize();
  if (bytes == 0) return;
  cudaMemcpyKind kind = src.device().is_cpu() ? cudaMemcpyHostToDevice
                        : dst.device().is_cpu() ? cudaMemcpyDeviceToHost
                                                : cudaMemcpyDeviceToDevice;
  if (kind != cudaMemcpyDeviceToDevice)
    check_not_capturing(gpu.index, kind == cudaMemcpyDeviceToHost
                                       ? "copying a CUDA tensor to the CPU (.item(), .cpu(), .numpy(), .tolist(), print)"
                                       : "copying a CPU tensor to the GPU");
  // Pageable host memory may be freed or reused right after we return: wait unless the caller
  // asked for an asynchronous copy (which is only safe from pinned memory). The wait may be
  // behind a collective that needs a peer, so it must not hold the GIL (tinytorch/host_wait.h).
  const bool wait = !non_blocking || kind == cudaMemcpyDeviceToHost;
  std::optional<HostWait> nogil;
  if (wait) nogil.emplace();
  if (kind == cudaMemcpyDeviceToDevice && src.device() != dst.device()) {
    TT_CUDA_CHECK(cudaMemcpyPeerAsync(dst.data_ptr(), dst.device().index, src.data_ptr(), src.device().index, bytes,
                                      stream));
  } else {
    TT_CUDA_CHECK(cudaMemcpyAsync(dst.data_ptr(), src.data_ptr(), bytes, kind, stream));
  }
  if (!wait && kind == cudaMemcpyHostToDevice) record_host_use(src, stream);  // src may be freed now
  if (wait) TT_CUDA_CHECK(cudaStreamSynchronize(stream));
}

}  // namespace

TT_REGISTER_KERNELS(CUDA, cuda, copy, fill, copy_across_devices)

}  // namespace tt::cuda
