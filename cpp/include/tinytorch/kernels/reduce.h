#pragma once
// Reduction and scan kernel families. The op layer (cpp/src/ops/reduce.cpp) brings every call
// to one of the simple shapes below: inputs contiguous, outputs freshly allocated and
// contiguous, dtypes already chosen.
#include "tinytorch/dispatch.h"
#include "tinytorch/tensor.h"

namespace tt {

#define TT_REDUCE_OPS(X)                                                        \
  X(Sum, sum) X(Prod, prod) X(Mean, mean) X(Amax, amax) X(Amin, amin)           \
  X(All, all) X(Any, any) X(Norm, norm) /* arg = p (inf/-inf/0 included) */    \
  X(Var, var) /* arg = correction */ X(Std, std) /* arg = correction */        \
  X(LogSumExp, logsumexp)

#define TT_ENUM_ENTRY(Name, name) Name,
enum class ReduceOp { TT_REDUCE_OPS(TT_ENUM_ENTRY) };
#undef TT_ENUM_ENTRY
const char* op_name(ReduceOp op);
// Ops that read each row twice (mean or max first); the kernel needs I == 1 for them.
inline bool is_two_pass(ReduceOp op) { return op == ReduceOp::Var || op == ReduceOp::Std || op == ReduceOp::LogSumExp; }

// x: (O, R, I) contiguous -> out: (O, I) contiguous; reduces over R.
// out dtype: Sum/Prod: int64 for integral/bool x, else x's; All/Any: bool; others: x's.
// Mean/Var/Std/Norm/LogSumExp need floating x; two-pass ops need I == 1.
TT_DECLARE_KERNEL(reduce, ReduceOp op, const Tensor& x, const Tensor& out, double arg)
// x: (N, R) contiguous -> values: (N) x's dtype (may be undefined), indices: (N) int64.
// The first max (is_max) or min; NaN counts as the extreme (first NaN wins). R > 0.
TT_DECLARE_KERNEL(reduce_index, bool is_max, const Tensor& x, const Tensor& values, const Tensor& indices)

// x: (O, L, I) contiguous -> out: (O, L, I); inclusive cumulative sum (or product) over L.
// out dtype: x's for floating x, int64 otherwise.
TT_DECLARE_KERNEL(cumulative, bool is_prod, const Tensor& x, const Tensor& out)

}  // namespace tt
