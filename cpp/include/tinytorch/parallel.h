#pragma once
// Intra-op parallelism for CPU kernels (OpenMP), honoring tinytorch.set_num_threads.
#include <cstdint>
#include <exception>
#include <mutex>
#include "tinytorch/error.h"
#ifdef _OPENMP
#include <omp.h>
#endif

namespace tt {

int get_num_threads();
void set_num_threads(int n);

// Calls f(b, e) on disjoint chunks covering [begin, end), in parallel when the range is
// larger than `grain`. An exception thrown by any chunk is rethrown on the calling thread.
template <class F>
void parallel_for(int64_t begin, int64_t end, int64_t grain, const F& f) {
  int64_t n = end - begin;
  if (n <= 0) return;
  int nt = get_num_threads();
#ifdef _OPENMP
  if (n > grain && nt > 1 && !omp_in_parallel()) {
    int64_t max_chunks = (n + grain - 1) / grain;
    if (max_chunks < nt) nt = static_cast<int>(max_chunks);
    std::exception_ptr error;
    std::mutex error_mutex;
#pragma omp parallel num_threads(nt)
    {
      int tid = omp_get_thread_num(), count = omp_get_num_threads();
      int64_t chunk = (n + count - 1) / count;
      int64_t b = begin + tid * chunk, e = b + chunk < end ? b + chunk : end;
      if (b < e) {
        try {
          f(b, e);
        } catch (...) {
          std::lock_guard<std::mutex> lock(error_mutex);
          if (!error) error = std::current_exception();
        }
      }
    }
    if (error) std::rethrow_exception(error);
    return;
  }
#endif
  (void)nt;
  f(begin, end);
}

// Elements per task below which threading costs more than it saves.
constexpr int64_t kGrainSize = 32768;

}  // namespace tt
