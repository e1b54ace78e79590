#pragma once
// The scalar formulas moved to tinytorch/math.h (shared with the CUDA kernels); this name stays
// for CPU files that include "math.h".
#include "tinytorch/math.h"

namespace tt::cpu::math {
using namespace ::tt::math;
}  // namespace tt::cpu::math
