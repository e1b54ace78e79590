// The one definition of every kernel table (see tinytorch/dispatch.h).
#include "tinytorch/kernels/elementwise.h"

namespace tt {

TT_DEFINE_KERNEL(unary)
TT_DEFINE_KERNEL(binary)
TT_DEFINE_KERNEL(where)
TT_DEFINE_KERNEL(clamp_tensor)
TT_DEFINE_KERNEL(copy)
TT_DEFINE_KERNEL(copy_across_devices)
TT_DEFINE_KERNEL(fill)

}  // namespace tt
