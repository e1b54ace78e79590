#pragma once
// Device-side checks (index out of range in gather/embedding/nll targets...). A failed check
// stops the kernel with "device-side assert triggered"; the next CUDA call raises it in Python.
// Release builds define NDEBUG, so this does not rely on assert().
#include <cassert>

#define TT_CUDA_KERNEL_ASSERT(cond)                                             \
  do {                                                                          \
    if (!(cond)) __assertfail(#cond, __FILE__, __LINE__, __func__, sizeof(char)); \
  } while (0)
