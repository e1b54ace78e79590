// CPU embedding lookup and its deterministic backward.
#include <cstring>
#include <vector>
#include "tinytorch/kernels/embedding.h"
#include "tinytorch/parallel.h"

namespace tt::cpu {
namespace {

template <class I>
void check_index(I v, int64_t V) {
  TT_CHECK_INDEX(v >= 0 && static_cast<int64_t>(v) < V, "embedding: index ", static_cast<int64_t>(v),
                 " is out of range for num_embeddings ", V);
}

// weight: (V, D), idx: (N) -> out: (N, D); rows are copied as bytes, so any dtype works.
template <class I>
void embedding_typed(const Tensor& weight, const Tensor& idx, const Tensor& out) {
  int64_t V = weight.size(0), N = idx.size(0);
  size_t row = static_cast<size_t>(weight.size(1)) * weight.itemsize();
  const char* wp = static_cast<const char*>(weight.data_ptr());
  char* op = static_cast<char*>(out.data_ptr());
  const I* ip = idx.data<I>();
  for (int64_t n = 0; n < N; ++n) check_index(ip[n], V);  // before writing anything
  if (row == 0) return;
  parallel_for(0, N, std::max<int64_t>(1, kGrainSize / static_cast<int64_t>(row)), [&](int64_t b, int64_t e) {
    for (int64_t n = b; n < e; ++n) std::memcpy(op + n * row, wp + static_cast<int64_t>(ip[n]) * row, row);
  });
}

// grad: (N, D), idx: (N) -> gw: (V, D). Each thread owns a range of rows of gw and scans all
// indices in order, so every row's sum has the same order whatever the thread count.
template <class T, class I>
void embedding_backward_typed(const Tensor& grad, const Tensor& idx, const Tensor& gw, int64_t pad) {
  using A = opmath_t<T>;
  int64_t V = gw.size(0), D = gw.size(1), N = idx.size(0);
  const T* gp = grad.data<T>();
  const I* ip = idx.data<I>();
  T* wp = gw.data<T>();
  for (int64_t n = 0; n < N; ++n) check_index(ip[n], V);
  int64_t grain = std::max<int64_t>(1, V / 64 + 1);
  int64_t work = N * D;
  if (work < kGrainSize) grain = V;  // small: one thread
  parallel_for(0, V, grain, [&](int64_t v0, int64_t v1) {
    std::vector<A> acc(static_cast<size_t>((v1 - v0) * D), A(0));
    for (int64_t n = 0; n < N; ++n) {
      int64_t v = static_cast<int64_t>(ip[n]);
      if (v < v0 || v >= v1 || v == pad) continue;
      A* dst = acc.data() + (v - v0) * D;
      const T* src = gp + n * D;
      for (int64_t d = 0; d < D; ++d) dst[d] += static_cast<A>(src[d]);
    }
    for (int64_t k = 0; k < (v1 - v0) * D; ++k) wp[v0 * D + k] = static_cast<T>(acc[k]);
  });
}

void cpu_embedding(const Tensor& weight, const Tensor& idx, const Tensor& out) {
  if (idx.dtype() == DType::Int32) embedding_typed<int32_t>(weight, idx, out);
  else embedding_typed<int64_t>(weight, idx, out);
}

void cpu_embedding_backward(const Tensor& grad, const Tensor& idx, const Tensor& gw, int64_t pad) {
  TT_DISPATCH_FLOATING(grad.dtype(), "embedding_backward", [&] {
    if (idx.dtype() == DType::Int32) embedding_backward_typed<scalar_t, int32_t>(grad, idx, gw, pad);
    else embedding_backward_typed<scalar_t, int64_t>(grad, idx, gw, pad);
  });
}

}  // namespace

TT_REGISTER_KERNEL(embedding, CPU, cpu_embedding)
TT_REGISTER_KERNEL(embedding_backward, CPU, cpu_embedding_backward)

}  // namespace tt::cpu
