// Tensor core: strides, views aliasing storage, promotion, dispatch, half types, elementwise.
#include <gtest/gtest.h>
#include <cmath>
#include <vector>
#include "tinytorch/ops/elementwise.h"

using namespace tt;

namespace {

Tensor arange_f32(int64_t n) {
  Tensor t = Tensor::empty({n}, DType::Float32);
  for (int64_t i = 0; i < n; ++i) t.data<float>()[i] = static_cast<float>(i);
  return t;
}

template <class T> double at(const Tensor& t, const Shape& idx) {
  int64_t off = 0;
  for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * t.strides()[d];
  return static_cast<double>(static_cast<opmath_t<T>>(t.data<T>()[off]));
}

}  // namespace

TEST(Tensor, ContiguousStrides) {
  EXPECT_EQ(contiguous_strides({2, 3, 4}), (Shape{12, 4, 1}));
  Tensor t = Tensor::empty({2, 3, 4}, DType::Float32);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.numel(), 24);
}

TEST(Tensor, ViewsAliasStorage) {
  Tensor base = arange_f32(24).view({2, 3, 4});
  Tensor tr = base.transpose(0, 2);
  EXPECT_EQ(tr.shape(), (Shape{4, 3, 2}));
  EXPECT_EQ(tr.strides(), (Shape{1, 4, 12}));
  EXPECT_FALSE(tr.is_contiguous());
  EXPECT_EQ(tr.storage(), base.storage());
  Tensor sl = base.slice(2, 1, std::nullopt, 2);  // base[:, :, 1::2]
  EXPECT_EQ(sl.shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(sl.offset(), 1);
  sl.data<float>()[0] = 100.f;  // write through the view
  EXPECT_EQ(base.data<float>()[1], 100.f);
  Tensor sel = base.select(1, 2);
  EXPECT_EQ(sel.shape(), (Shape{2, 4}));
  EXPECT_EQ(sel.offset(), 8);
  Tensor ex = Tensor::empty({3, 1}, DType::Float32).expand({3, 5});
  EXPECT_EQ(ex.strides(), (Shape{1, 0}));
  Tensor uf = arange_f32(10).unfold(0, 4, 2);
  EXPECT_EQ(uf.shape(), (Shape{4, 4}));
  EXPECT_EQ(uf.strides(), (Shape{2, 1}));
}

TEST(Tensor, ViewFailsWhereStridesCannotExpressIt) {
  Tensor t = arange_f32(24).view({4, 6}).transpose(0, 1);
  EXPECT_THROW(t.view({24}), std::runtime_error);
  Tensor r = t.reshape({24});
  EXPECT_TRUE(r.is_contiguous());
  EXPECT_NE(r.storage(), t.storage());
  EXPECT_EQ(r.data<float>()[1], 6.f);  // column-major walk of the original
}

TEST(Tensor, ContiguousCopiesOnlyWhenNeeded) {
  Tensor t = arange_f32(6).view({2, 3});
  EXPECT_EQ(t.contiguous().storage(), t.storage());
  Tensor c = t.transpose(0, 1).contiguous();
  EXPECT_NE(c.storage(), t.storage());
  EXPECT_EQ(c.data<float>()[1], 3.f);
}

TEST(Tensor, BadIndicesThrow) {
  Tensor t = arange_f32(6).view({2, 3});
  EXPECT_THROW(t.select(1, 3), std::out_of_range);
  EXPECT_THROW(t.transpose(0, 2), std::out_of_range);
  EXPECT_THROW(t.view({4, 2}), std::runtime_error);
  EXPECT_THROW(t.expand({4, 3}), std::runtime_error);
}

TEST(DType, PromotionMatchesPyTorch) {
  EXPECT_EQ(promote_types(DType::Int32, DType::Float16), DType::Float16);
  EXPECT_EQ(promote_types(DType::Float16, DType::BFloat16), DType::Float32);
  EXPECT_EQ(promote_types(DType::Bool, DType::UInt8), DType::UInt8);
  EXPECT_EQ(promote_types(DType::UInt8, DType::Int32), DType::Int32);
  EXPECT_EQ(promote_types(DType::Int64, DType::Float32), DType::Float32);
  Tensor i = Tensor::empty({2}, DType::Int32);
  Tensor s = scalar_tensor(1.5, DType::Float64);
  EXPECT_EQ(result_type({&i, &s}), DType::Float32);  // wrapped float -> default dtype
  Tensor z = Tensor::empty({}, DType::Float64);
  EXPECT_EQ(result_type({&i, &z}), DType::Float64);  // 0-dim of higher category
  Tensor h = Tensor::empty({2}, DType::Float16);
  EXPECT_EQ(result_type({&h, &z}), DType::Float16);
}

TEST(DType, HalfAndBFloat16RoundTrip) {
  for (float f : {0.f, 1.f, -2.5f, 65504.f, 6.1035156e-05f, 3.14159f}) {
    EXPECT_NEAR(float(Half(f)), f, std::abs(f) * 1e-3f) << f;
    EXPECT_NEAR(float(BFloat16(f)), f, std::abs(f) * 8e-3f) << f;
  }
  EXPECT_TRUE(std::isinf(float(Half(1e5f))));
  EXPECT_TRUE(std::isnan(float(BFloat16(NAN))));
  EXPECT_EQ(float(BFloat16(1.01171875f)), 1.015625f);  // ties round to even
}

TEST(Dispatch, CpuKernelsAreRegistered) {
  EXPECT_TRUE(unary_kernel.has(DeviceType::CPU));
  EXPECT_TRUE(binary_kernel.has(DeviceType::CPU));
  EXPECT_TRUE(copy_kernel.has(DeviceType::CPU));
}

// Meta tensors: shapes flow through ops, data never exists, reading it throws.
TEST(Dispatch, MetaTensorsHaveShapesButNoData) {
  const Device meta("meta");
  EXPECT_EQ(meta.str(), "meta");
  Tensor a = Tensor::empty({4, 1}, DType::Float32, meta), b = Tensor::empty({3}, DType::Float32, meta);
  Tensor c = binary(BinaryOp::Add, a, b);
  EXPECT_TRUE(c.device().is_meta());
  EXPECT_EQ(c.shape(), (Shape{4, 3}));
  EXPECT_EQ(c.storage()->data(), nullptr);
  EXPECT_THROW(c.data<float>(), NotImplementedError);
  EXPECT_THROW(c.to(Device()), NotImplementedError);
  Tensor host = Tensor::empty({4, 3}, DType::Float32, Device());
  EXPECT_NO_THROW(c.copy_(host));  // into meta: nothing to write
}

template <class T>
class ElementwiseTyped : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double, Half, BFloat16>;
TYPED_TEST_SUITE(ElementwiseTyped, FloatTypes);

TYPED_TEST(ElementwiseTyped, BroadcastAddNonContiguous) {
  DType dt = dtype_of<TypeParam>::value;
  Tensor a = arange_f32(12).view({3, 4}).to(dt).transpose(0, 1);  // (4, 3), strided
  Tensor b = arange_f32(3).to(dt);                                // (3,) broadcast over rows
  Tensor out = binary(BinaryOp::Add, a, b, {2.0, 0});             // a + 2 b
  ASSERT_EQ(out.shape(), (Shape{4, 3}));
  ASSERT_EQ(out.dtype(), dt);
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 3; ++j) EXPECT_NEAR(at<TypeParam>(out, {i, j}), (j * 4 + i) + 2.0 * j, 1e-2);
}

TYPED_TEST(ElementwiseTyped, UnaryExpMatchesDouble) {
  DType dt = dtype_of<TypeParam>::value;
  Tensor x = arange_f32(8).to(dt);
  Tensor y = unary(UnaryOp::Exp, unary(UnaryOp::Neg, x));
  double tol = (dt == DType::BFloat16) ? 8e-3 : (dt == DType::Float16 ? 1e-3 : 1e-6);
  for (int64_t i = 0; i < 8; ++i) {
    double xi = at<TypeParam>(x, {i});
    EXPECT_NEAR(at<TypeParam>(y, {i}), std::exp(-xi), tol * std::exp(-xi) + 1e-7);
  }
}

TEST(Elementwise, CopyCastsBetweenAllDtypes) {
  Tensor x = arange_f32(5);
  for (int d = 0; d < kNumDTypes; ++d) {
    Tensor y = x.to(static_cast<DType>(d)).to(DType::Float64);
    for (int64_t i = 0; i < 5; ++i) {
      double expected = static_cast<DType>(d) == DType::Bool ? (i != 0) : i;
      EXPECT_EQ(y.data<double>()[i], expected) << dtype_name(static_cast<DType>(d));
    }
  }
}

TEST(Elementwise, ComparisonWritesBool) {
  Tensor a = arange_f32(4);
  Tensor b = full({}, 1.5, DType::Float32);
  Tensor c = binary(BinaryOp::Gt, a, b);
  EXPECT_EQ(c.dtype(), DType::Bool);
  EXPECT_EQ(std::vector<bool>(c.data<bool>(), c.data<bool>() + 4), (std::vector<bool>{false, false, true, true}));
}

TEST(Elementwise, MismatchedShapesThrow) {
  EXPECT_THROW(binary(BinaryOp::Add, arange_f32(3), arange_f32(4)), std::runtime_error);
}

// Size overflow: shape -> numel -> bytes is checked once, in Tensor::empty (every allocation).
TEST(Tensor, EmptyRejectsOverflowingSizes) {
  EXPECT_THROW(Tensor::empty({int64_t(1) << 31, int64_t(1) << 31}, DType::Float32), std::runtime_error);
  EXPECT_THROW(Tensor::empty({int64_t(1) << 62}, DType::Int32), std::runtime_error);
  EXPECT_THROW(Tensor::empty({INT64_MAX, 2}, DType::UInt8), std::runtime_error);
  EXPECT_THROW(Tensor::empty({int64_t(1) << 48}, DType::Float32), std::runtime_error);  // out of memory
  EXPECT_EQ(storage_nbytes({0, int64_t(1) << 40}, DType::Float64), 0u);
  EXPECT_EQ(storage_nbytes({3, 5}, DType::Float64), 120u);
  Tensor one = Tensor::empty({1}, DType::Float32);
  EXPECT_THROW(one.expand({int64_t(1) << 62}).contiguous(), std::runtime_error);
}
