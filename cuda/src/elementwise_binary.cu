// CUDA binary ops: arithmetic, comparisons and logical ops (writing bool), bitwise ops, and the
// fused activation backwards. The formulas are the CPU's (tinytorch/math.h). A 0-dim CPU
// operand (a Python number) is read on the host and captured in the functor, so `x * 2`
// costs one kernel launch and no host-to-device copy.
#include "tinytorch/cuda/loops.cuh"
#include "tinytorch/kernels/elementwise.h"
#include "tinytorch/kernels/elementwise_dispatch.h"
#include "tinytorch/math.h"

namespace tt::cuda {
namespace {

// f(x, c) and f(c, y) with the scalar operand c held in the functor.
template <class F, class T>
struct BindRight {
  F f;
  T y;
  __device__ __forceinline__ typename F::Out operator()(T x) const { return f(x, y); }
};
template <class F, class T>
struct BindLeft {
  F f;
  T x;
  __device__ __forceinline__ typename F::Out operator()(T y) const { return f(x, y); }
};

bool is_host_scalar(const Tensor& t) { return t.dim() == 0 && t.device().is_cpu(); }

// The loop under the shared binary dispatch (kernels/elementwise_dispatch.h): a, b:
// broadcastable to out (one of them may be a 0-dim CPU tensor) -> out = f(a, b).
struct GpuBinaryLoop {
  template <class Out, class T, class F>
  static void binary(const Tensor& a, const Tensor& b, const Tensor& out, const F& f) {
    if (is_host_scalar(b)) {  // CPU memory: a plain host read, nothing to synchronize
      gpu_unary<Out, T>(a, out, BindRight<F, T>{f, *static_cast<const T*>(b.data_ptr())});
    } else if (is_host_scalar(a)) {
      gpu_unary<Out, T>(b, out, BindLeft<F, T>{f, *static_cast<const T*>(a.data_ptr())});
    } else {
      gpu_binary<Out, T, T>(a, b, out, f);
    }
  }
};

void cuda_binary(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out, OpScalars s) {
  elementwise_dispatch::binary<GpuBinaryLoop>(op, a, b, out, s);
}

}  // namespace

TT_REGISTER_KERNEL(binary, CUDA, cuda_binary)

}  // namespace tt::cuda
