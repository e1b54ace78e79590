#include "tinytorch/parallel.h"
#include <algorithm>
#include <thread>

extern "C" void scipy_openblas_set_num_threads(int);

namespace tt {
namespace {
int default_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}
int num_threads = [] {
  scipy_openblas_set_num_threads(1);
  return default_threads();
}();
}  // namespace

int get_num_threads() { return num_threads; }

void set_num_threads(int n) {
  TT_CHECK_VALUE(n > 0, "set_num_threads: Expected positive number of threads, got ", n);
  num_threads = n;
  // OpenBLAS stays single-threaded: our GEMM kernel splits work over the OpenMP threads
  // itself (OpenBLAS's own pool beside OpenMP oversubscribes and can hang).
  scipy_openblas_set_num_threads(1);
}

}  // namespace tt
