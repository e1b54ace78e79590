#pragma once
// Device-side checks (index out of range in gather/embedding/nll targets...). A failed check
// stops the kernel with "device-side assert triggered"; the next CUDA call raises it in Python.
// Release builds define NDEBUG, so this does not rely on assert(): it calls the device assert
// handler directly (__assert_fail with glibc, as PyTorch does; __assertfail is NVRTC-only).
#include <cassert>

#if defined(__CUDACC_RTC__)
#define TT_CUDA_ASSERT_FAIL_(msg) __assertfail(msg, __FILE__, __LINE__, __func__, sizeof(char))
#else
#define TT_CUDA_ASSERT_FAIL_(msg) __assert_fail(msg, __FILE__, static_cast<unsigned int>(__LINE__), __func__)
#endif

#define TT_CUDA_KERNEL_ASSERT(cond)               \
  do {                                            \
    if (!(cond)) TT_CUDA_ASSERT_FAIL_(#cond);     \
  } while (0)
