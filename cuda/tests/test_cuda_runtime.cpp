// CUDA runtime and caching allocator. Skips where no GPU is present.
#include <gtest/gtest.h>
#include <vector>
#include "tinytorch/cuda/allocator.h"
#include "tinytorch/cuda/common.h"
#include "tinytorch/cuda/int_divider.h"
#include "tinytorch/ops/elementwise.h"

using namespace tt;

// A macro, not a function: GTEST_SKIP() returns from the function it is written in.
#define REQUIRE_GPU()                                                          \
  do {                                                                         \
    if (cuda::device_count() == 0) GTEST_SKIP() << "no CUDA GPU on this machine"; \
    cuda::install_caching_allocator();                                         \
  } while (0)

TEST(CudaRuntime, DeviceCountNeverThrows) { EXPECT_GE(cuda::device_count(), 0); }

TEST(CudaRuntime, NoGpuGivesClearError) {
  if (cuda::device_count() > 0) GTEST_SKIP() << "a GPU is present";
  cuda::install_caching_allocator();
  EXPECT_THROW(Tensor::empty({4}, DType::Float32, Device(DeviceType::CUDA, 0)), std::runtime_error);
}

TEST(CudaAllocator, ReusesFreedBlocksWithoutCudaMalloc) {
  REQUIRE_GPU();
  Device gpu(DeviceType::CUDA, 0);
  {  // one large and one small segment, then the loop below must reuse them
    Tensor warm_large = Tensor::empty({1 << 20}, DType::Float32, gpu);
    Tensor warm_small = Tensor::empty({1000}, DType::Float32, gpu);
  }
  int64_t mallocs = cuda::memory_stats(0).num_mallocs;
  for (int i = 0; i < 10; ++i) {
    Tensor a = Tensor::empty({1 << 20}, DType::Float32, gpu);
    Tensor b = Tensor::empty({1000}, DType::Float32, gpu);
  }
  EXPECT_EQ(cuda::memory_stats(0).num_mallocs, mallocs);
}

TEST(CudaAllocator, StatsTrackAllocatedAndReserved) {
  REQUIRE_GPU();
  Device gpu(DeviceType::CUDA, 0);
  int64_t before = cuda::memory_stats(0).allocated;
  {
    Tensor a = Tensor::empty({1000}, DType::Float32, gpu);  // 4000 bytes -> one 4096-byte block
    EXPECT_EQ(cuda::memory_stats(0).allocated, before + 4096);
    EXPECT_GE(cuda::memory_stats(0).reserved, cuda::memory_stats(0).allocated);
  }
  EXPECT_EQ(cuda::memory_stats(0).allocated, before);
}

TEST(CudaCopy, RoundTripThroughDevice) {
  REQUIRE_GPU();
  Tensor x = full({3, 5}, 2.5, DType::Float32);
  Tensor y = x.to(Device(DeviceType::CUDA, 0)).to(DType::Float16).to(Device());
  EXPECT_EQ(y.dtype(), DType::Float16);
  for (int64_t i = 0; i < 15; ++i) EXPECT_EQ(float(y.data<Half>()[i]), 2.5f);
}

// Host side of the same arithmetic the strided GPU loops use: needs no GPU.
TEST(IntDivider, MatchesIntegerDivision) {
  uint64_t state = 12345;
  auto next = [&] {  // xorshift: a spread of dividends and divisors below 2^31
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return static_cast<uint32_t>(state >> 33);
  };
  std::vector<uint32_t> divisors = {1, 2, 3, 5, 7, 24, 26, 576, 1000, 65535, 65536, (1u << 31) - 1};
  for (int i = 0; i < 200; ++i) divisors.push_back(next() % 5000 + 1), divisors.push_back(next() | 1);
  for (uint32_t d : divisors) {
    cuda::IntDivider div(d);
    for (uint32_t n : {0u, 1u, d - 1, d, d + 1, 2 * d - 1, (1u << 31) - 1}) {
      if (n >= (1u << 31)) continue;
      ASSERT_EQ(div.div(n), n / d) << n << " / " << d;
    }
    for (int k = 0; k < 200; ++k) {
      uint32_t n = next();
      ASSERT_EQ(div.div(n), n / d) << n << " / " << d;
    }
  }
}
