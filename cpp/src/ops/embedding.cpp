// Embedding ops: argument checks, output shapes, then the kernels.
#include "tinytorch/ops/embedding.h"

namespace tt {

TT_DEFINE_KERNEL(embedding)
TT_DEFINE_KERNEL(embedding_backward)

Tensor embedding(const Tensor& weight, const Tensor& indices) {
  TT_CHECK(weight.defined() && indices.defined(), "embedding: undefined tensor argument");
  check_same_device("embedding", weight, indices);
  TT_CHECK(weight.dim() == 2, "embedding: 'weight' must be 2-D (num_embeddings, embedding_dim), got ",
           weight.describe());
  TT_CHECK(indices.dtype() == DType::Int64 || indices.dtype() == DType::Int32,
           "embedding: Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, "
           "Int; but got ", indices.describe(), " instead");
  Shape shape = indices.shape();
  shape.push_back(weight.size(1));
  Tensor out = Tensor::empty(shape, weight.dtype(), weight.device());
  if (out.numel() == 0 && indices.numel() == 0) return out;
  embedding_kernel[weight.device()](weight.contiguous(), indices.contiguous().view({-1}),
                                    out.view({indices.numel(), weight.size(1)}));
  return out;
}

Tensor embedding_backward(const Tensor& grad, const Tensor& indices, int64_t num_weights,
                          std::optional<int64_t> padding_idx) {
  TT_CHECK(grad.defined() && indices.defined(), "embedding_backward: undefined tensor argument");
  check_same_device("embedding_backward", grad, indices);
  TT_CHECK(indices.dtype() == DType::Int64 || indices.dtype() == DType::Int32,
           "embedding_backward: indices must be int64 or int32, got ", indices.describe());
  TT_CHECK(num_weights >= 0, "embedding_backward: negative num_weights ", num_weights);
  TT_CHECK(grad.dim() == indices.dim() + 1 &&
               Shape(grad.shape().begin(), grad.shape().end() - 1) == indices.shape(),
           "embedding_backward: grad ", grad.describe(), " should have shape indices.shape + (D,), indices ",
           indices.describe());
  if (!is_floating(grad.dtype())) throw_unsupported_dtype("embedding_backward", grad.dtype());
  int64_t pad = -1;
  if (padding_idx) {
    pad = *padding_idx < 0 ? *padding_idx + num_weights : *padding_idx;
    TT_CHECK_INDEX(pad >= 0 && pad < num_weights, "embedding_backward: padding_idx ", *padding_idx,
                   " must be within num_embeddings ", num_weights);
  }
  int64_t D = grad.size(grad.dim() - 1);
  Tensor gw = Tensor::empty({num_weights, D}, grad.dtype(), grad.device());
  embedding_backward_kernel[gw.device()](grad.contiguous().view({indices.numel(), D}),
                                         indices.contiguous().view({-1}), gw, pad);
  return gw;
}

}  // namespace tt
